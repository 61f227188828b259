//! The decision by hand, and the promises its figures make, by seeded simulation.

use super::*;

/// A delta tested by the paired t-test: its differences' sd, mean `delta`, `pairs` pairs,
/// the mde those give, and `p` adjusted.
fn measured(delta: f64, p: f64, sd: f64, pairs: usize) -> Measured {
    let mde = crate::stats::power::t_sum(ALPHA, POWER, pairs as u64) * sd / (pairs as f64).sqrt();
    Measured {
        baseline: 0.5,
        treatment: 0.5 + delta,
        delta,
        ci: None,
        p_adjusted: Some(p),
        mde: Some(mde),
        pairs,
        test: Test::PairedT,
        sd: Some(sd),
        discordant: None,
        min_pairs: 2,
    }
}

fn read(m: &Measured) -> Reading {
    Reading::Measured(m.clone())
}

fn wanted(metric: &str, want: Want) -> Wanted {
    Wanted::plain(metric, want)
}

#[test]
fn each_outcome_by_hand() {
    use Outcome::*;
    let up = wanted("m", Want::Increase);
    let o = |w: &Wanted, m: Measured, family| outcome(w, &read(&m), family);
    // Significant the wanted way: improved; the other way: regressed, for a guard too.
    assert_eq!(o(&up, measured(0.2, 0.01, 0.2, 40), 1).0, Improved);
    assert_eq!(o(&up, measured(-0.2, 0.01, 0.2, 40), 1).0, Regressed);
    let guard = wanted("g", Want::NoDecrease);
    assert_eq!(o(&guard, measured(-0.2, 0.01, 0.2, 40), 1).0, Regressed);
    assert_eq!(
        o(
            &wanted("m", Want::Decrease),
            measured(-0.2, 0.01, 0.2, 40),
            1
        )
        .0,
        Improved
    );
    // Not significant, inside the MDE (40 pairs, sd 0.2: (t₀.₉₇₅,₃₉ + t₀.₈,₃₉)·0.2/√40 =
    // 2.873626·0.0316228 = 0.090872): underpowered, needing the paired t-test's count for
    // the observed 0.05: the smallest n with (t₀.₉₇₅,ₙ₋₁ + t₀.₈,ₙ₋₁)·0.2/√n ≤ 0.05 is 128
    // (the normal approximation's 126, worked with mpmath).
    assert_eq!(
        o(&up, measured(0.05, 0.3, 0.2, 40), 1),
        (Underpowered, Some(128))
    );
    // In a family of two the count is for 0.025: 155.
    assert_eq!(
        o(&up, measured(0.05, 0.3, 0.2, 40), 2),
        (Underpowered, Some(155))
    );
    // Outside the MDE, not significant: no effect detected. Nothing moved: no effect.
    assert_eq!(
        o(&up, measured(0.1, 0.3, 0.2, 40), 1),
        (NoEffectDetected, None)
    );
    assert_eq!(
        o(&up, measured(0.0, 1.0, 0.2, 40), 1),
        (NoEffectDetected, None)
    );
    // The other way from the one it must, not significantly, inside the MDE: no effect
    // detected (a bigger study of that change would show a regression, not the increase).
    assert_eq!(
        o(&up, measured(-0.02, 0.4, 0.2, 40), 1),
        (NoEffectDetected, None)
    );
    // p exactly 0.05 is not below it.
    assert_eq!(o(&up, measured(0.2, 0.05, 0.2, 40), 1).0, NoEffectDetected);
    // The smallest change that matters decides what the study must see: 0.05 is inside the
    // MDE of 0.091 whatever was observed (underpowered, sized for 0.05: 128); 0.2 is not
    // (no effect detected).
    let small = Wanted {
        min_effect: Some(0.05),
        ..up.clone()
    };
    assert_eq!(
        o(&small, measured(0.15, 0.3, 0.2, 40), 1),
        (Underpowered, Some(128))
    );
    let large = Wanted {
        min_effect: Some(0.2),
        ..up.clone()
    };
    assert_eq!(
        o(&large, measured(0.01, 0.8, 0.2, 40), 1),
        (NoEffectDetected, None)
    );
    // McNemar's test with 4 discordant of 40 units cannot go below 2·0.5⁴ = 0.125: under-
    // powered however large the change, and the count holds at least 6 discordant units at
    // the pilot's share of them: 6 / 0.1 = 60.
    let mut mc = measured(0.1, 0.125, 0.3, 40);
    (mc.test, mc.discordant, mc.mde) = (Test::Mcnemar, Some(4), Some(0.05));
    let (out, needed) = o(&up, mc, 1);
    assert_eq!(out, Underpowered);
    assert!(needed.unwrap() >= 60, "{needed:?}");
    // Too few pairs to decide on at all (the lift in human units: 10 labelled pairs).
    let mut few = measured(0.26, 0.001, 0.01, 2);
    few.min_pairs = MIN_LABELLED_PAIRS;
    assert_eq!(o(&up, few, 1), (Underpowered, Some(10)));
}

#[test]
fn a_margin_holds_only_when_the_interval_shows_it() {
    use Outcome::*;
    let guard = Wanted {
        margin: Some(0.02),
        ..wanted("g", Want::NoDecrease)
    };
    // The paired t-test's interval over 40 pairs: delta ± t₀.₉₇₅,₃₉ · sd / √40, where
    // t₀.₉₇₅,₃₉ = 2.022691: ± 0.319818 · sd.
    let half = |sd: f64| 2.022_691 * sd / 40f64.sqrt();
    let m = measured(0.01, 0.5, 0.05, 40);
    let [lo, hi] = m.test_interval().unwrap();
    assert!((lo - (0.01 - half(0.05))).abs() < 1e-6 && (hi - (0.01 + half(0.05))).abs() < 1e-6);
    // The lower bound −0.006 is above −0.02: held.
    assert_eq!(outcome(&guard, &read(&m), 1), (Held, None));
    // sd 0.3: the lower bound 0.05 − 0.096 = −0.046 is below −0.02: not shown, with the
    // count that would show the margin: the observed +0.05 is 0.07 from the edge, and the
    // paired t-test's count for 0.07 at sd 0.3 is 147 (mpmath).
    assert_eq!(
        outcome(&guard, &read(&measured(0.05, 0.5, 0.3, 40)), 1),
        (Underpowered, Some(147))
    );
    // Significantly the wrong way: regressed, margin or not.
    assert_eq!(
        outcome(&guard, &read(&measured(-0.1, 0.001, 0.2, 40)), 1).0,
        Regressed
    );
    // A no-increase guard's unsafe bound is the upper one: −0.01 + 0.016 below +0.02 holds;
    // −0.01 + 0.032 does not.
    let ceiling = Wanted {
        margin: Some(0.02),
        ..wanted("g", Want::NoIncrease)
    };
    assert_eq!(
        outcome(&ceiling, &read(&measured(-0.01, 0.5, 0.05, 40)), 1).0,
        Held
    );
    assert_eq!(
        outcome(&ceiling, &read(&measured(-0.01, 0.5, 0.1, 40)), 1).0,
        Underpowered
    );
    // Observed beyond the margin's edge: no count of units can show it.
    assert_eq!(
        outcome(&guard, &read(&measured(-0.03, 0.5, 0.2, 40)), 1),
        (Underpowered, None)
    );
    // Differences that do not vary draw no interval: not shown, and nothing to size by.
    assert_eq!(
        outcome(&guard, &read(&measured(0.0, 1.0, 0.0, 40)), 1),
        (Underpowered, None)
    );
    // Pass/fail units where none changed (49 of 50 pass in both arms): the bootstrap's
    // interval would be [0, 0]; Newcombe's is ±0.0782, so a margin of 0.02 is not shown and
    // one of 0.1 is.
    let same = Measured {
        baseline: 0.98,
        treatment: 0.98,
        delta: 0.0,
        ci: Some([0.0, 0.0]),
        p_adjusted: Some(1.0),
        mde: Some(0.0),
        pairs: 50,
        test: Test::Mcnemar,
        sd: Some(0.0),
        discordant: Some(0),
        min_pairs: 2,
    };
    let [lo, _] = same.test_interval().unwrap();
    assert!((lo - -0.078_220).abs() < 1e-6, "{lo}");
    assert_eq!(outcome(&guard, &read(&same), 1), (Underpowered, None));
    let loose = Wanted {
        margin: Some(0.1),
        ..guard.clone()
    };
    assert_eq!(outcome(&loose, &read(&same), 1).0, Held);
    // Two of 50 changed, one each way, read back into the four cells: 48 pass in both.
    let split = Measured {
        discordant: Some(2),
        sd: Some((2.0f64 / 49.0).sqrt()),
        ..same.clone()
    };
    let [lo, hi] = split.test_interval().unwrap();
    let [rlo, rhi] = crate::stats::paired::newcombe_paired(48.0, 1.0, 1.0, 0.0).unwrap();
    assert_eq!((lo, hi), (rlo, rhi));
}

// What "held" promises: a guard whose true change sits exactly on its margin's edge (a real
// fall of 0.02) is called held in at most 2.5% of studies (the 95% interval's one side),
// for continuous differences by the t-interval and for pass/fail units by Newcombe's.
#[test]
fn a_guard_at_its_margins_edge_is_rarely_called_held() {
    use crate::stats::paired::paired_delta;
    use crate::stats::rng::Rng;
    let uniform = |rng: &mut Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let studies = 4000;
    for pass_fail in [false, true] {
        for n in [50, 400] {
            let mut held = 0;
            for s in 0..studies {
                let mut rng = Rng::for_replicate(20261127, s);
                let (mut xs, mut ys) = (Vec::new(), Vec::new());
                for _ in 0..n {
                    if pass_fail {
                        // 4% of units fail only under the treatment, 2% pass only under it
                        // (a true change of −0.02); the rest pass in both arms or in
                        // neither, 90:10.
                        let u = uniform(&mut rng);
                        let (x, y) = if u < 0.04 {
                            (1.0, 0.0)
                        } else if u < 0.06 {
                            (0.0, 1.0)
                        } else {
                            let v = if uniform(&mut rng) < 0.9 { 1.0 } else { 0.0 };
                            (v, v)
                        };
                        xs.push(x);
                        ys.push(y);
                    } else {
                        // Skewed differences with mean −0.02.
                        let x = uniform(&mut rng);
                        xs.push(x);
                        ys.push(x + (uniform(&mut rng).powi(3) - 0.25) * 0.4 - 0.02);
                    }
                }
                let d = paired_delta(&xs, &ys, 0, 1, 1).unwrap();
                let m = Measured::of(&d, d.p_value);
                // The rule `outcome` applies before it sizes anything.
                if holds(Want::NoDecrease, 0.02, &m) {
                    held += 1;
                }
            }
            let rate = held as f64 / studies as f64;
            eprintln!("true change −0.02, pass/fail {pass_fail}, {n} units: held in {rate}");
            assert!(
                rate <= 0.025 + 0.01,
                "pass/fail {pass_fail}, {n} units: held in {rate}"
            );
        }
    }
}

// And what "needs ≈ N to show it" promises: with no true change, a study of the N the
// decision states for a margin of 0.02 shows it held in 80% ± 4% of studies.
#[test]
fn a_guard_sized_by_its_margin_holds_in_80_percent_of_studies() {
    use crate::stats::paired::paired_delta;
    use crate::stats::rng::Rng;
    let uniform = |rng: &mut Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let guard = Wanted {
        margin: Some(0.02),
        ..wanted("g", Want::NoDecrease)
    };
    // Skewed differences with mean 0: (u³ − 1/4) · 0.4, sd 0.4 · √(1/7 − 1/16).
    let diff = |rng: &mut Rng| (uniform(rng).powi(3) - 0.25) * 0.4;
    let sd = 0.4 * (1.0f64 / 7.0 - 1.0 / 16.0).sqrt();
    let pilot = Measured {
        ci: None,
        ..measured(0.0, 1.0, sd, 40)
    };
    let (out, needed) = outcome(&guard, &read(&pilot), 1);
    assert_eq!(out, Outcome::Underpowered);
    let n = needed.unwrap() as usize;
    let studies = 2000;
    let mut held = 0;
    for s in 0..studies {
        let mut rng = Rng::for_replicate(11, s);
        let xs: Vec<f64> = (0..n).map(|_| uniform(&mut rng)).collect();
        let ys: Vec<f64> = xs.iter().map(|x| x + diff(&mut rng)).collect();
        let d = paired_delta(&xs, &ys, 0, 1, 1).unwrap();
        let m = Measured {
            delta: d.delta,
            sd: d.sd,
            pairs: d.pairs,
            ..pilot.clone()
        };
        if outcome(&guard, &read(&m), 1).0 == Outcome::Held {
            held += 1;
        }
    }
    let rate = held as f64 / studies as f64;
    eprintln!("no true change, {n} units for a margin of 0.02: held in {rate}");
    assert!((rate - 0.8).abs() <= 0.04, "{n} units: held in {rate}");
}

fn words(name: &str) -> Words {
    Words {
        name: name.replace('_', " "),
        places: 2,
        units: "targets",
    }
}

#[test]
fn each_verdict_by_hand() {
    let better = measured(0.2, 0.01, 0.2, 40);
    let flat = measured(0.005, 0.8, 0.2, 40);
    let worse = measured(-0.2, 0.01, 0.2, 40);
    let d = |rows: Vec<(Wanted, Reading)>| {
        decide(
            &rows
                .into_iter()
                .map(|(w, r)| {
                    let words = words(&w.metric);
                    (w, r, words)
                })
                .collect::<Vec<_>>(),
        )
    };
    use Want::*;
    let says = |rows, verdict, text: &str| {
        let v = d(rows);
        assert_eq!((v.verdict, headline(&v).as_str()), (verdict, text));
    };
    // A guard without a margin does not block better; the words say it was not shown.
    says(
        vec![
            (wanted("precision", Increase), read(&better)),
            (wanted("final_accuracy", NoDecrease), read(&flat)),
        ],
        Verdict::Better,
        "better. Precision rose 0.50 → 0.70 (p adj. 0.010); the guard did not regress, though with no margin given it is not shown to hold",
    );
    // A guard with a margin must hold: not shown, the decision is inconclusive.
    let margin = Wanted {
        margin: Some(0.02),
        ..wanted("final_accuracy", NoDecrease)
    };
    // sd 0.2 over 40 pairs: the t-interval's lower bound 0.005 − 0.064 is below −0.02.
    let unshown = flat.clone();
    let v = d(vec![
        (wanted("precision", Increase), read(&better)),
        (margin.clone(), read(&unshown)),
    ]);
    assert_eq!(v.verdict, Verdict::Inconclusive);
    assert!(
        v.reasons[1].contains("cannot show it stays within its margin of 0.02"),
        "{}",
        v.reasons[1]
    );
    // The headline names the guard that blocks better, not only what improved.
    assert!(
        headline(&v).contains("; final accuracy rose 0.50 → 0.51 but 40 targets cannot show it stays within its margin of 0.02"),
        "{}",
        headline(&v)
    );
    // Held: better, and the headline says so.
    // sd 0.02: 0.005 − 0.0064 is above it.
    let shown = measured(0.005, 0.8, 0.02, 40);
    let v = d(vec![
        (wanted("precision", Increase), read(&better)),
        (margin, read(&shown)),
    ]);
    assert_eq!(v.verdict, Verdict::Better);
    assert!(
        headline(&v).ends_with("; the guard held"),
        "{}",
        headline(&v)
    );
    assert!(
        v.reasons[1].contains("held within its margin of 0.02"),
        "{}",
        v.reasons[1]
    );
    // Any regression: worse, whatever improved.
    says(
        vec![
            (wanted("precision", Increase), read(&better)),
            (wanted("final_accuracy", NoDecrease), read(&worse)),
        ],
        Verdict::Worse,
        "worse. Final accuracy fell 0.50 → 0.30 (p adj. 0.010)",
    );
    // A judge-derived metric under untrusted judges: withheld, before worse.
    let v = d(vec![
        (wanted("precision", Increase), Reading::Withheld),
        (wanted("final_accuracy", NoDecrease), read(&worse)),
    ]);
    assert_eq!(v.verdict, Verdict::Withheld);
    // Unmeasured: inconclusive.
    let v = d(vec![(wanted("precision", Increase), Reading::Unmeasured)]);
    assert_eq!(v.verdict, Verdict::Inconclusive);
}

#[test]
fn sentences_say_what_was_and_was_not_shown() {
    let one = |w: Wanted, m: Measured, units: &'static str| {
        let mut words = words(&w.metric);
        words.units = units;
        let d = decide(&[(w, read(&m), words)]);
        d.reasons[0].clone()
    };
    // A change below the figures' decimals is shown with enough of them.
    let tiny = Measured {
        baseline: 0.82,
        treatment: 0.816,
        ..measured(-0.004, 0.8, 0.05, 400)
    };
    assert!(one(wanted("accuracy", Want::Increase), tiny, "items")
        .starts_with("accuracy fell 0.820 → 0.816"),);
    // A count past 10,000 is said as such.
    let far = measured(0.0005, 0.9, 0.5, 40);
    let said = one(wanted("x", Want::Increase), far, "targets");
    assert!(
        said.contains("needs more than 10,000 if the true change is as large as observed"),
        "{said}"
    );
    // The smallest change that matters is named.
    let small = Wanted {
        min_effect: Some(0.05),
        ..wanted("x", Want::Increase)
    };
    let said = one(small, measured(0.15, 0.3, 0.2, 40), "targets");
    assert!(
        said.contains("needs ≈ 128 to detect a change of 0.05, the smallest that matters"),
        "{said}"
    );
    // Too few labelled pairs.
    let mut few = measured(0.26, 0.001, 0.01, 2);
    few.min_pairs = MIN_LABELLED_PAIRS;
    let said = one(wanted("lift_human", Want::Increase), few, "labelled items");
    assert!(
        said.ends_with("are too few to decide on (needs ≥ 10 labelled pairs; has 2)"),
        "{said}"
    );
    // A guard with no margin that did not move significantly.
    let said = one(
        wanted("g", Want::NoDecrease),
        measured(-0.01, 0.7, 0.2, 400),
        "targets",
    );
    assert!(
        said.ends_with(
            "no regression detected (p adj. 0.700; no margin given, so it is not shown to hold)"
        ),
        "{said}"
    );
    assert_eq!(crate::text::thousands(2_701_403u64), "2,701,403");
}
