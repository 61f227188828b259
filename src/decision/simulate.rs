//! The decision's promises, each a seeded simulation of the claim itself: what an A/A says,
//! the power its sizes promise, and a noise floor that cannot contradict it. Each figure is in
//! its test's name and message.

use super::*;
use crate::policy::{Want, Wanted};
use crate::stats::rng::Rng;

/// What kind of per-unit value a simulated metric has.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// A score with per-unit differences of sd 0.25 (the paired t-test).
    Score,
    /// A pass/fail outcome, passing 70% of the time (McNemar's test).
    PassFail,
}

/// One study: `n` units, each metric's paired values with a true change `shift[k]` and
/// per-unit differences correlated `rho` across metrics.
fn study(rng: &mut Rng, n: usize, kinds: &[Kind], shift: &[f64], rho: f64) -> Vec<Measured> {
    let mut values: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); kinds.len()];
    // Pass/fail: each arm's pass rate as a normal quantile (70%, and 70% + the change).
    let quantiles: Vec<(f64, f64)> = shift
        .iter()
        .map(|s| {
            let q = crate::stats::power::z;
            (q(0.7), q((0.7 + s).clamp(1e-9, 1.0 - 1e-9)))
        })
        .collect();
    for _ in 0..n {
        let (shared_b, shared_t) = (rng.normal(), rng.normal());
        for (k, kind) in kinds.iter().enumerate() {
            let mix = |shared: f64, own: f64| rho.sqrt() * shared + (1.0 - rho).sqrt() * own;
            let (zb, zt) = (mix(shared_b, rng.normal()), mix(shared_t, rng.normal()));
            let (b, t) = match kind {
                // Differences of sd 0.25: each arm's noise sd 0.25/√2 around one unit's level.
                Kind::Score => {
                    let level = rng.unit_f64();
                    let s = 0.25 / 2f64.sqrt();
                    (level + s * zb, level + shift[k] + s * zt)
                }
                Kind::PassFail => {
                    // Each arm passes when its draw is below the quantile of its pass rate.
                    let pass = |z: f64, q: f64| if z < q { 1.0 } else { 0.0 };
                    (pass(zb, quantiles[k].0), pass(zt, quantiles[k].1))
                }
            };
            values[k].0.push(b);
            values[k].1.push(t);
        }
    }
    values.iter().map(|(b, t)| measure(b, t)).collect()
}

/// What the decision reads of paired values, as `paired_delta` measures them, without the
/// bootstrap and the MDE (neither changes whether a metric improved, regressed or held).
fn measure(b: &[f64], t: &[f64]) -> Measured {
    use crate::stats::test::{mean, p_value, sd, Test};
    let diffs: Vec<f64> = b.iter().zip(t).map(|(b, t)| t - b).collect();
    let test = Test::of(b, t);
    Measured {
        baseline: mean(b),
        treatment: mean(t),
        delta: mean(&diffs),
        ci: None,
        p_value: p_value(test, &diffs),
        mde: None,
        pairs: diffs.len(),
        test,
        sd: sd(&diffs),
        discordant: (test == Test::Mcnemar).then(|| diffs.iter().filter(|&&d| d != 0.0).count()),
        df: None,
        min_pairs: 2,
    }
}

fn rows(wanted: &[Wanted], measured: Vec<Measured>) -> Vec<Row> {
    wanted
        .iter()
        .zip(measured)
        .map(|(w, m)| Row {
            wanted: w.clone(),
            reading: Reading::Measured(m),
            words: Words {
                name: w.metric.clone(),
                places: 3,
                units: "targets",
                difference: false,
            },
            floor: None,
            relative: None,
        })
        .collect()
}

// A/A: with no true change, "better" (every part shown at the plain 0.05, an intersection-
// union claim) in at most 2.5% of studies, "worse" (any regression, Holm-adjusted) in at most
// 5%, for 1 to 3 decision metrics, independent and correlated, scores and pass/fail alike.
#[test]
fn an_aa_is_better_in_at_most_2_5_percent_and_worse_in_at_most_5_percent() {
    let studies = 4000;
    let all = [
        Wanted::plain("a", Want::Increase),
        Wanted::plain("b", Want::Increase),
        Wanted::plain("c", Want::NoDecrease),
    ];
    let kinds = [Kind::Score, Kind::PassFail, Kind::Score];
    for m in 1..=3 {
        for rho in [0.0, 0.8] {
            let (mut better, mut worse) = (0, 0);
            for s in 0..studies {
                let mut rng = Rng::for_replicate(20261205 + m as u64, s);
                let measured = study(&mut rng, 80, &kinds[..m], &[0.0; 3], rho);
                match decide(&rows(&all[..m], measured)).verdict {
                    Verdict::Better => better += 1,
                    Verdict::Worse => worse += 1,
                    _ => {}
                }
            }
            let (b, w) = (
                better as f64 / studies as f64,
                worse as f64 / studies as f64,
            );
            eprintln!("A/A, {m} metric(s), correlation {rho}: better {b:.4}, worse {w:.4}");
            // Two standard errors of the simulation above each promise.
            assert!(b <= 0.025 + 0.007, "{m} metrics, ρ {rho}: better in {b}");
            assert!(w <= 0.05 + 0.01, "{m} metrics, ρ {rho}: worse in {w}");
        }
    }
}

// The sizes the decision prints are for the rule that reads them: in a decision of three
// metrics, a study of the "needs ≈ N" it states shows an increase of `min_effect` improved,
// and a guard with no true change held within its margin, in 80% ± 4% of studies.
#[test]
fn a_study_of_the_printed_size_shows_increases_and_guards_in_80_percent() {
    let studies = 3000;
    let cases: [(&str, Kind, Wanted, f64); 3] = [
        (
            "score increase",
            Kind::Score,
            Wanted {
                min_effect: Some(0.1),
                ..Wanted::plain("a", Want::Increase)
            },
            0.1,
        ),
        (
            "pass/fail increase",
            Kind::PassFail,
            Wanted {
                min_effect: Some(0.1),
                ..Wanted::plain("a", Want::Increase)
            },
            0.1,
        ),
        (
            "score guard",
            Kind::Score,
            Wanted {
                margin: Some(0.08),
                ..Wanted::plain("a", Want::NoDecrease)
            },
            0.0,
        ),
    ];
    let others = [
        Wanted::plain("b", Want::NoDecrease),
        Wanted::plain("c", Want::NoDecrease),
    ];
    for (what, kind, wanted, truth) in cases {
        // A pilot whose observed change is the truth, so "needs ≈ N" is sized for it: the
        // pilot's spread is the one its kind draws.
        let mut rng = Rng::for_replicate(7, 0);
        let mut pilot = study(&mut rng, 2000, &[kind], &[truth], 0.0).remove(0);
        let unchanged = study(&mut rng, 400, &[Kind::Score, Kind::Score], &[0.0; 2], 0.0);
        // Not significant, and a large MDE: the pilot was too small to tell, so the decision
        // states the size a study needs.
        pilot.delta = truth;
        pilot.p_value = Some(0.5);
        pilot.mde = Some(1.0);
        if kind == Kind::Score {
            // A small pilot of the true spread: no margin can be shown from it.
            (pilot.sd, pilot.pairs) = (Some(0.25), 10);
        }
        let mut all = vec![wanted.clone()];
        all.extend(others.iter().cloned());
        let mut readings = vec![pilot];
        readings.extend(unchanged);
        let d = decide(&rows(&all, readings));
        let n = d.metrics["a"]
            .needed
            .unwrap_or_else(|| panic!("{what}: no size stated: {:?}", d.metrics["a"]))
            as usize;
        let wins = (0..studies)
            .filter(|&s| {
                let mut rng = Rng::for_replicate(99, s);
                let mut measured = study(&mut rng, n, &[kind], &[truth], 0.0);
                measured.extend(study(
                    &mut rng,
                    n,
                    &[Kind::Score, Kind::Score],
                    &[0.0; 2],
                    0.0,
                ));
                let o = decide(&rows(&all, measured)).metrics["a"].outcome;
                matches!(o, Outcome::Improved | Outcome::Held)
            })
            .count();
        let rate = wins as f64 / studies as f64;
        eprintln!("{what}: needs ≈ {n}; shown in {rate:.3} of studies of that size");
        assert!(
            (rate - 0.8).abs() <= 0.04,
            "{what}: {n} units shown in {rate}"
        );
    }
}

// A noise floor cannot contradict the decision: "improved" needs the change net of the
// harness to clear 0, and "inside the harness's noise" is said exactly when the net interval
// includes 0, so no metric is both, whether the A/A shares the A/B's units or covers fewer.
#[test]
fn net_of_the_harness_a_metric_is_never_both_improved_and_inside_its_noise() {
    let studies = 1500;
    let up = Wanted::plain("a", Want::Increase);
    let mut seen = [0usize; 2];
    for s in 0..studies {
        let mut rng = Rng::for_replicate(31, s);
        // A borderline true change, 60 A/B units; the A/A covers all of them, or 8 of them
        // (too few to pair: independent), or 30.
        let ab_n = 60;
        let aa_n = [60, 8, 30][s as usize % 3];
        let unit = |i: usize| format!("t{i}");
        let draw = |rng: &mut Rng, n: usize, shift: f64| -> Vec<f64> {
            (0..n).map(|_| shift + 0.25 * rng.normal()).collect()
        };
        let ab = draw(&mut rng, ab_n, 0.07);
        let aa = draw(&mut rng, aa_n, 0.0);
        let zeros = |n| vec![0.0; n];
        let ab_m = measure(&zeros(ab_n), &ab);
        let aa_d = measure(&zeros(aa_n), &aa);
        let floor = Floor {
            aa: Ok(AaFigure {
                delta: aa_d.delta,
                ci: None,
                sd: aa_d.sd,
                pairs: aa_d.pairs,
                units: aa.iter().enumerate().map(|(i, d)| (unit(i), *d)).collect(),
            }),
            differs: Vec::new(),
            ab_units: ab.iter().enumerate().map(|(i, d)| (unit(i), *d)).collect(),
        };
        let mut r = rows(std::slice::from_ref(&up), vec![ab_m]);
        r[0].floor = Some(floor);
        let d = decide(&r);
        let m = &d.metrics["a"];
        let noise = m.noise.as_ref().unwrap();
        let line = format!("{} {}", d.reasons[0], noise.words(3, "targets"));
        assert!(
            !(m.outcome == Outcome::Improved && noise.inside),
            "study {s}: improved and inside: {line}"
        );
        assert!(
            !(m.outcome == Outcome::Improved && line.contains("inside the harness's noise")),
            "{line}"
        );
        if m.outcome == Outcome::Improved {
            seen[0] += 1;
        }
        if noise.inside {
            seen[1] += 1;
        }
    }
    eprintln!(
        "{studies} borderline A/Bs with a noise floor: improved in {}, inside the harness's noise in {}, both in 0",
        seen[0], seen[1]
    );
    // Both outcomes occur, so the test can tell them apart.
    assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
}
