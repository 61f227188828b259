//! The decision by hand, and the promises its figures make, by seeded simulation.

use super::*;

/// A delta tested by the paired t-test: its differences' sd, mean `delta`, `pairs` pairs,
/// the mde those give, and its p `p`.
fn measured(delta: f64, p: f64, sd: f64, pairs: usize) -> Measured {
    let mde = crate::stats::power::t_sum(ALPHA, POWER, pairs as u64) * sd / (pairs as f64).sqrt();
    Measured {
        baseline: 0.5,
        treatment: 0.5 + delta,
        delta,
        ci: None,
        p_value: Some(p),
        mde: Some(mde),
        pairs,
        test: Test::PairedT,
        sd: Some(sd),
        discordant: None,
        df: None,
        min_pairs: 2,
    }
}

fn read(m: &Measured) -> Reading {
    Reading::Measured(m.clone())
}

/// One metric's outcome as a decision of it alone reads it: its regression test's p is its
/// own (a family of one).
fn alone(w: &Wanted, r: &Reading) -> (Outcome, Option<u64>) {
    let p_worse = match r {
        Reading::Measured(m) => m.p_against(regression_null(w)),
        _ => None,
    };
    outcome(w, r, p_worse, None)
}

fn wanted(metric: &str, want: Want) -> Wanted {
    Wanted::plain(metric, want)
}

#[test]
fn each_outcome_by_hand() {
    use Outcome::*;
    let up = wanted("m", Want::Increase);
    let o = |w: &Wanted, m: Measured, _family: usize| alone(w, &read(&m));
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
    // In a decision of two metrics the count is the same: improving is judged at the plain
    // 0.05 whatever else is decided (an intersection-union claim), so it is sized there.
    let two = decide(&[
        row(up.clone(), read(&measured(0.05, 0.3, 0.2, 40))),
        row(
            wanted("n", Want::Increase),
            read(&measured(0.05, 0.3, 0.2, 40)),
        ),
    ]);
    assert_eq!(two.metrics["m"].needed, Some(128));
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
    assert_eq!(alone(&guard, &read(&m)), (Held, None));
    // sd 0.3: the lower bound 0.05 − 0.096 = −0.046 is below −0.02: not shown, with the
    // count that would show the margin: the observed +0.05 is 0.07 from the edge, and the
    // paired t-test's count for 0.07 at sd 0.3 is 147 (mpmath).
    assert_eq!(
        alone(&guard, &read(&measured(0.05, 0.5, 0.3, 40))),
        (Underpowered, Some(147))
    );
    // Significantly the wrong way: regressed, margin or not.
    assert_eq!(
        alone(&guard, &read(&measured(-0.1, 0.001, 0.2, 40))).0,
        Regressed
    );
    // A no-increase guard's unsafe bound is the upper one: −0.01 + 0.016 below +0.02 holds;
    // −0.01 + 0.032 does not.
    let ceiling = Wanted {
        margin: Some(0.02),
        ..wanted("g", Want::NoIncrease)
    };
    assert_eq!(
        alone(&ceiling, &read(&measured(-0.01, 0.5, 0.05, 40))).0,
        Held
    );
    assert_eq!(
        alone(&ceiling, &read(&measured(-0.01, 0.5, 0.1, 40))).0,
        Underpowered
    );
    // Observed beyond the margin's edge: no count of units can show it.
    assert_eq!(
        alone(&guard, &read(&measured(-0.03, 0.5, 0.2, 40))),
        (Underpowered, None)
    );
    // Differences that do not vary draw no interval: not shown, and nothing to size by.
    assert_eq!(
        alone(&guard, &read(&measured(0.0, 1.0, 0.0, 40))),
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
        p_value: Some(1.0),
        mde: Some(0.0),
        pairs: 50,
        test: Test::Mcnemar,
        sd: Some(0.0),
        discordant: Some(0),
        df: None,
        min_pairs: 2,
    };
    let [lo, _] = same.test_interval().unwrap();
    assert!((lo - -0.078_220).abs() < 1e-6, "{lo}");
    assert_eq!(alone(&guard, &read(&same)), (Underpowered, None));
    let loose = Wanted {
        margin: Some(0.1),
        ..guard.clone()
    };
    assert_eq!(alone(&loose, &read(&same)).0, Held);
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
                let m = Measured::of(&d);
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
    let (out, needed) = alone(&guard, &read(&pilot));
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
        if alone(&guard, &read(&m)).0 == Outcome::Held {
            held += 1;
        }
    }
    let rate = held as f64 / studies as f64;
    eprintln!("no true change, {n} units for a margin of 0.02: held in {rate}");
    assert!((rate - 0.8).abs() <= 0.04, "{n} units: held in {rate}");
}

fn row(wanted: Wanted, reading: Reading) -> Row {
    Row {
        words: words(&wanted.metric),
        wanted,
        reading,
        floor: None,
        relative: None,
    }
}

fn words(name: &str) -> Words {
    Words {
        name: name.replace('_', " "),
        places: 2,
        units: "targets",
        difference: false,
    }
}

#[test]
fn each_verdict_by_hand() {
    let better = measured(0.2, 0.01, 0.2, 40);
    let flat = measured(0.005, 0.8, 0.2, 40);
    let worse = measured(-0.2, 0.01, 0.2, 40);
    let d = |rows: Vec<(Wanted, Reading)>| {
        decide(&rows.into_iter().map(|(w, r)| row(w, r)).collect::<Vec<_>>())
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
        "better. Precision rose 0.50 → 0.70 (p 0.010); the guard did not regress, though with no margin given it is not shown to hold",
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
    // Any regression: worse, whatever improved. "worse" is a union claim: its p is Holm-adjusted
    // over the two metrics (0.01 · 2 = 0.02).
    says(
        vec![
            (wanted("precision", Increase), read(&better)),
            (wanted("final_accuracy", NoDecrease), read(&worse)),
        ],
        Verdict::Worse,
        "worse. Final accuracy fell 0.50 → 0.30 (p adj. 0.020)",
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
        let d = decide(&[Row {
            wanted: w,
            reading: read(&m),
            words,
            floor: None,
            relative: None,
        }]);
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

// The rule for a margin, by hand: a significant loss smaller than the margin is held;
// a loss shown to go past the margin's edge regresses; in between, nothing is shown.
#[test]
fn a_margin_says_how_much_loss_is_acceptable() {
    use Outcome::*;
    let guard = Wanted {
        margin: Some(0.05),
        ..wanted("g", Want::NoDecrease)
    };
    // −0.025 with sd 0.05 over 40 pairs: t = −3.162 (p 0.003 against no change), and the
    // t-interval −0.025 ± 2.022691 · 0.05/√40 = [−0.041, −0.009]: its lower bound is above
    // −0.05, so the guard held, significant loss or not.
    let m = measured(-0.025, 0.003, 0.05, 40);
    assert_eq!(alone(&guard, &read(&m)), (Held, None));
    // The same loss without a margin regresses.
    assert_eq!(
        alone(&wanted("g", Want::NoDecrease), &read(&m)).0,
        Regressed
    );
    // −0.1 with sd 0.1: [−0.132, −0.068], whose upper bound is below −0.05: regressed, by the
    // test against −0.05: t = −0.05/(0.1/√40) = −3.162 on 39 df, p = 0.00302 (mpmath).
    let past = measured(-0.1, 0.0001, 0.1, 40);
    let p = past.p_against(-0.05).unwrap();
    assert!((p - 0.003_023).abs() < 2e-5, "{p}");
    assert_eq!(alone(&guard, &read(&past)), (Regressed, None));
    // −0.06 with sd 0.1: [−0.092, −0.028] straddles −0.05: neither held nor regressed, and
    // no count of units can show a change observed past the edge.
    let between = measured(-0.06, 0.001, 0.1, 40);
    assert_eq!(alone(&guard, &read(&between)), (Underpowered, None));
    // The words name the bound that decided it.
    let d = decide(&[row(guard.clone(), read(&past))]);
    assert!(
        d.reasons[0].contains("a loss beyond its margin of 0.05 (p adj. 0.003, against the margin's edge; the upper bound of its 95% t-interval is −0.068, below −0.05)"),
        "{}",
        d.reasons[0]
    );
    let d = decide(&[row(guard, read(&m))]);
    assert!(
        d.reasons[0].contains("held within its margin of 0.05 (the lower bound of its 95% t-interval is −0.041, above −0.05)"),
        "{}",
        d.reasons[0]
    );
}

// The test against a margin's edge inverts the test's own interval: at the 95% interval's
// bound its p is 0.05, for the t-interval and for Newcombe's.
#[test]
fn the_test_against_a_margin_inverts_the_interval() {
    let t = measured(-0.03, 0.01, 0.08, 60);
    let [lo, hi] = t.test_interval().unwrap();
    assert!((t.p_against(hi).unwrap() - 0.05).abs() < 1e-9);
    assert!((t.p_against(lo).unwrap() - 0.05).abs() < 1e-9);
    // 200 pass/fail units: 150 pass in both, 6 in the treatment only, 18 in the baseline only.
    let mc = Measured {
        baseline: 168.0 / 200.0,
        treatment: 156.0 / 200.0,
        test: Test::Mcnemar,
        discordant: Some(24),
        ..measured(-0.06, 0.02, 0.3, 200)
    };
    let [lo, hi] = mc.test_interval().unwrap();
    let [rlo, rhi] = crate::stats::paired::newcombe_paired(150.0, 6.0, 18.0, 26.0).unwrap();
    assert_eq!((lo, hi), (rlo, rhi));
    assert!((mc.p_against(hi).unwrap() - 0.05).abs() < 1e-6);
    assert!((mc.p_against(lo).unwrap() - 0.05).abs() < 1e-6);
    // Nearer the delta than the bound: p above 0.05; further: below.
    assert!(mc.p_against(hi - 0.01).unwrap() > 0.05);
    assert!(mc.p_against(hi + 0.01).unwrap() < 0.05);
}

// A margin or smallest effect written as a percentage is said as one, and a percentage guard
// is judged on the relative change's interval: held inside the margin, regressed beyond it with
// its test against the edge, else not shown.
#[test]
fn a_percentage_is_said_and_read_as_a_share_of_the_baseline() {
    use crate::stats::ratio::Relative;
    let mut must = wanted("cost_usd", Want::Decrease);
    must.min_effect = Some(0.05);
    must.relative = true;
    // Not significant: "would have shown a change of 5%" (0.05 × the baseline 0.5, in units).
    let d = decide(&[row(must, read(&measured(-0.004, 0.4, 0.01, 40)))]);
    assert!(d.reasons[0].contains("a change of 5%"), "{}", d.reasons[0]);
    assert!(!d.reasons[0].contains("0.05"), "{}", d.reasons[0]);
    let mut guard = wanted("cost_usd", Want::NoIncrease);
    guard.margin = Some(0.10);
    guard.relative = true;
    let rel = |value: f64, ci: [f64; 2], p_edge: f64| Relative {
        value,
        ci: Some(ci),
        p_edge: Some(p_edge),
    };
    let with = |r: Relative| {
        let mut row = row(guard.clone(), read(&measured(0.01, 0.3, 0.05, 40)));
        row.relative = Some(r);
        decide(&[row]).metrics["cost_usd"].outcome
    };
    assert_eq!(with(rel(0.02, [-0.03, 0.07], 0.001)), Outcome::Held);
    assert_eq!(with(rel(0.16, [0.15, 0.17], 0.001)), Outcome::Regressed);
    assert_eq!(with(rel(0.08, [0.01, 0.15], 0.4)), Outcome::Underpowered);
}
