use super::*;
use crate::corpus::verdicts::Verdict;
use crate::stats::rng::Rng;

/// What a simulated panel plants.
#[derive(Clone, Copy, Default)]
struct Planted {
    /// Added to every judge's score of a treatment copy.
    arm: f64,
    /// Added per 100 characters above 400.
    per_100_chars: f64,
    /// Treatment texts are this much longer (0.4: 40%).
    longer: f64,
    /// Added by judge `j0` to the findings of reviewer `r0`, which runs its model.
    own: f64,
    /// Added per place in the judge's call.
    per_place: f64,
}

/// The quality gap between the arms' own findings (treatment − baseline); one in five of each
/// target's findings is its arm's own, so the bias-free lift is a fifth of it.
const OWN_GAP: f64 = 0.15;
const TRUE_LIFT: f64 = OWN_GAP / 5.0;

/// One study: 30 targets, 5 findings per target and arm (4 found by both arms, 1 by each arm
/// alone), each judged by 3 judges — 300 judged items. Returns the items and, per item, its
/// target, characters, fingerprint and reviewer's model.
struct Study {
    items: Vec<Item>,
    meta: Vec<(bool, String, f64, Option<u32>, &'static str)>,
}

fn study(seed: u64, planted: Planted) -> Study {
    let mut rng = Rng::for_replicate(seed, 0);
    let models = ["m0", "m1", "m2"];
    let mut items = Vec::new();
    let mut meta = Vec::new();
    for target in 0..30u32 {
        let shared: Vec<f64> = (0..4).map(|_| 0.4 + 0.3 * rng.unit_f64()).collect();
        for treatment in [false, true] {
            for f in 0..5u32 {
                let quality = if f < 4 {
                    shared[f as usize]
                } else {
                    0.4 + 0.3 * rng.unit_f64() + if treatment { OWN_GAP } else { 0.0 }
                };
                // The treatment's reviewers: r0 writes half its findings, a third of the
                // baseline's.
                let reviewer = if treatment {
                    usize::from(rng.unit_f64() >= 0.5) * (1 + rng.below(2) as usize)
                } else {
                    rng.below(3) as usize
                };
                let base = 200.0 + 400.0 * rng.unit_f64();
                let chars = if treatment {
                    base * (1.0 + planted.longer)
                } else {
                    base
                };
                let copy = 0.05 * rng.normal();
                let place = rng.below(5);
                let verdicts = (0..3)
                    .map(|j| {
                        let mut s = quality + copy + 0.15 * rng.normal();
                        if treatment {
                            s += planted.arm;
                        }
                        s += planted.per_100_chars * (chars - 400.0) / 100.0;
                        s += planted.per_place * place as f64;
                        if j == 0 && reviewer == 0 {
                            s += planted.own;
                        }
                        Verdict {
                            model: format!("j{j}"),
                            scores: Some([("q".to_string(), s.clamp(0.0, 1.0))].into()),
                            reported_model: Some(if j == 0 { "m0" } else { "judge-x" }.into()),
                            position: (planted.per_place != 0.0).then_some(place),
                            ..Verdict::default()
                        }
                    })
                    .collect();
                let arm = if treatment { "t" } else { "b" };
                items.push(Item {
                    line: 0,
                    item_id: format!("{arm}/{target}/{f}"),
                    arm: arm.into(),
                    verdicts,
                });
                // The arms' own findings are different findings.
                let fingerprint = if f < 4 { f } else { 4 + u32::from(treatment) };
                meta.push((
                    treatment,
                    format!("target-{target}"),
                    chars,
                    Some(fingerprint),
                    models[reviewer],
                ));
            }
        }
    }
    Study { items, meta }
}

fn audited(s: &Study) -> Bias {
    let judged: Vec<Judged> = s
        .items
        .iter()
        .zip(&s.meta)
        .map(|(item, (t, target, chars, fp, model))| Judged {
            item,
            treatment: *t,
            target,
            chars: Some(*chars),
            fingerprint: *fp,
            reviewer_model: Some(model),
        })
        .collect();
    audit(&judged, &BTreeMap::new())
}

/// Over `studies` seeded studies: the share in which each check was significant, the share in
/// which each failed, and the share in which the length-adjusted lift covered the true lift.
fn rates(planted: Planted, studies: u64) -> ([f64; 4], [f64; 4], f64, f64) {
    let mut significant = [0.0; 4];
    let mut failed = [0.0; 4];
    let (mut any, mut covered) = (0.0, 0.0);
    for seed in 0..studies {
        let b = audited(&study(9_000 + seed, planted));
        for (i, (_, c)) in b.checks().iter().enumerate() {
            significant[i] += f64::from(u8::from(c.significant()));
            failed[i] += f64::from(u8::from(c.failed));
        }
        any += f64::from(u8::from(b.failed()));
        let ci = b.adjusted_lift.unwrap().ci;
        covered += f64::from(u8::from(ci[0] <= TRUE_LIFT && TRUE_LIFT <= ci[1]));
    }
    let n = studies as f64;
    (
        significant.map(|x| x / n),
        failed.map(|x| x / n),
        any / n,
        covered / n,
    )
}

// Issue 66: each planted bias is detected (significant) in at least 80% of studies of 300
// judged items; an unbiased panel fails each check in at most 5%; the length-adjusted lift's
// interval covers the bias-free lift in at least 94%.
#[test]
fn planted_biases_are_found_and_a_fair_panel_passes() {
    const STUDIES: u64 = 400;
    let fair = rates(Planted::default(), STUDIES);
    let arm = rates(
        Planted {
            arm: 0.05,
            ..Planted::default()
        },
        STUDIES,
    );
    let length = rates(
        Planted {
            per_100_chars: 0.02,
            longer: 0.4,
            ..Planted::default()
        },
        STUDIES,
    );
    let own = rates(
        Planted {
            own: 0.09,
            ..Planted::default()
        },
        STUDIES,
    );
    let fair_long = rates(
        Planted {
            longer: 0.4,
            ..Planted::default()
        },
        STUDIES,
    );
    println!(
        "fair panel: significant {:?}, failed {:?}, any failed {:.3}, adjusted lift covers {:.3}",
        fair.0, fair.1, fair.2, fair.3
    );
    println!("fair panel, treatment 40% longer: significant {:?}, failed {:?}, any failed {:.3}, covers {:.3}", fair_long.0, fair_long.1, fair_long.2, fair_long.3);
    println!(
        "arm shift 0.05: detected {:.3}, failed {:.3}",
        arm.0[0], arm.1[0]
    );
    println!("length 0.02/100 chars, 40% longer: detected {:.3}, failed {:.3}, adjusted lift covers {:.3}", length.0[1], length.1[1], length.3);
    println!(
        "self-preference 0.09: detected {:.3}, failed {:.3}",
        own.0[3], own.1[3]
    );
    assert!(arm.0[0] >= 0.80, "arm shift detected in {}", arm.0[0]);
    assert!(length.0[1] >= 0.80, "length detected in {}", length.0[1]);
    assert!(own.0[3] >= 0.80, "self-preference detected in {}", own.0[3]);
    for (name, r) in [("fair", &fair), ("fair, longer", &fair_long)] {
        for (i, f) in r.1.iter().enumerate() {
            assert!(*f <= 0.05, "{name}: check {i} failed in {f}");
        }
        assert!(r.3 >= 0.94, "{name}: adjusted lift covers in {}", r.3);
    }
    assert!(
        length.3 >= 0.94,
        "length: adjusted lift covers in {}",
        length.3
    );
    // The arm's +0.05 is 62% of the lift (+0.05 of +0.08): its check fails. The length's
    // +0.032 is about half of its lift (+0.032 of +0.062), so its check fails in about half the
    // studies, as the rule says it should; a self-preference moves the lift by
    // 0.09 × 1/3 × (1/2 − 1/3) = 0.005 of 0.035 and passes.
    assert!(arm.1[0] >= 0.80, "arm shift failed in {}", arm.1[0]);
    assert!(
        (0.3..0.75).contains(&length.1[1]),
        "length failed in {}",
        length.1[1]
    );
    assert!(own.1[3] <= 0.05, "self-preference failed in {}", own.1[3]);
}

// Hand-worked: 10 shared findings, each scored 0.05 higher in the treatment copy, but for two
// that are +0.03 and +0.07: mean +0.05, and the lift (the arms' mean composite difference) is
// that same +0.05, so the arm alone accounts for all of it and the check fails; a lift of
// +0.2 leaves it significant but explaining a quarter, and it passes.
#[test]
fn the_arm_check_fails_when_the_arm_alone_could_give_half_the_lift() {
    let item = |arm: &str, id: u32, s: f64| Item {
        line: 0,
        item_id: format!("{arm}{id}"),
        arm: arm.into(),
        verdicts: vec![Verdict {
            model: "j".into(),
            scores: Some([("q".to_string(), s)].into()),
            ..Verdict::default()
        }],
    };
    let mut items = Vec::new();
    for i in 0..10u32 {
        let bump = match i {
            0 => 0.03,
            1 => 0.07,
            _ => 0.05,
        };
        let q = 0.3 + 0.04 * f64::from(i);
        items.push(item("b", i, q));
        items.push(item("t", i, q + bump));
    }
    let judged = |items: &[Item]| -> Bias {
        let j: Vec<Judged> = items
            .iter()
            .map(|it| Judged {
                item: it,
                treatment: it.arm == "t",
                target: "one",
                chars: None,
                fingerprint: it.item_id[1..].parse().ok(),
                reviewer_model: None,
            })
            .collect();
        audit(&j, &BTreeMap::new())
    };
    // Item ids differ per arm ("b3", "t3"): the effect is the arms' mean difference.
    let b = judged(&items);
    assert_eq!(b.effect_of, "mean composite");
    assert!((b.effect.unwrap() - 0.05).abs() < 1e-12);
    assert_eq!(b.arm.n, 10);
    assert!((b.arm.estimate.unwrap() - 0.05).abs() < 1e-12);
    // sd of the differences: √(2·0.02²/9) = 0.009428; t = 0.05/(0.009428/√10) = 16.77.
    assert!(b.arm.p.unwrap() < 1e-6);
    let half = t_upper(0.025, 9.0) * (2.0f64 * 0.0004 / 9.0).sqrt() / 10f64.sqrt();
    assert!((b.arm.ci.unwrap()[0] - (0.05 - half)).abs() < 1e-9);
    assert!((b.arm.explains.unwrap() - 1.0).abs() < 1e-9);
    assert!(b.arm.failed);
    assert!(b.failures()[0].starts_with(
        "the judges score the same finding +0.050 higher under the treatment (10 shared findings): that alone could give +0.050 (100%) of the arms' difference of +0.050"
    ));
    // Nothing records lengths, positions or models.
    assert!(b.length.note.as_deref().unwrap().starts_with("not checked"));
    assert_eq!(
        b.position.note.as_deref(),
        Some("not applicable: no verdict records its position in a judge call")
    );
    assert_eq!(
        b.self_preference.note.as_deref(),
        Some("not applicable: no judge reports its model")
    );
    // Four more treatment findings scored 1.0 raise the arms' difference to well above twice
    // the arm's shift: significant, but it explains less than half.
    for i in 10..14u32 {
        items.push(item("t", i, 1.0));
    }
    let b = judged(&items);
    assert!(b.arm.significant());
    assert!(b.arm.explains.unwrap() < 0.5, "{:?}", b.arm.explains);
    assert!(!b.arm.failed);
    // Nine shared findings are not enough.
    let nine: Vec<Item> = items
        .iter()
        .filter(|i| {
            !i.item_id.ends_with('9')
                && !i.item_id.ends_with("10")
                && !i.item_id.ends_with("11")
                && !i.item_id.ends_with("12")
                && !i.item_id.ends_with("13")
        })
        .cloned()
        .collect();
    let b = judged(&nine);
    assert_eq!(
        b.arm.note.as_deref(),
        Some("not checked (9 shared findings judged in both arms; needs 10)")
    );
    assert!(!b.failed());
}
