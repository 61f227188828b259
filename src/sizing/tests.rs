use super::*;
use crate::output::Render;
use crate::replay::compared_named;

fn settings(effect: Option<f64>) -> Settings {
    Settings {
        effect,
        power: 0.8,
        alpha: None,
        seed: 5,
        threads: 2,
        decided: None,
    }
}

fn metric(name: &str) -> Planned {
    compared_named(name).unwrap().into()
}

/// Paired values whose differences are `diffs` (continuous: the paired t-test).
fn pilot(diffs: &[f64]) -> PilotPairs {
    let values: Vec<(f64, f64)> = diffs.iter().map(|d| (0.5, 0.5 + d)).collect();
    PilotPairs::of(&values, "targets")
}

#[test]
fn needed_is_the_t_tests_count_and_the_simulation_runs_that_test() {
    // Differences 0.1, 0.3, −0.1, 0.5, 0.2: mean 0.2, squared deviations 0.01 + 0.01 +
    // 0.09 + 0.09 + 0 = 0.2, sd = √(0.2/4) = 0.223607. The smallest n with
    // (t₀.₉₇₅,ₙ₋₁ + t₀.₈,ₙ₋₁) · 0.223607 / √n ≤ 0.2 is 12 (3.076515 at n = 12, worked with
    // mpmath); the normal approximation would say 10.
    let diffs = [0.1, 0.3, -0.1, 0.5, 0.2];
    let p = plan(&metric("precision"), &pilot(&diffs), settings(None), "r").unwrap();
    assert_eq!(p.test, Test::PairedT);
    assert!((p.sd - 0.05f64.sqrt()).abs() < 1e-12);
    assert!((p.effect - 0.2).abs() < 1e-12 && p.effect_from == "observed");
    assert_eq!((p.needed, p.binds), (12, "power"));
    assert_eq!(p.pairs, 5);
    assert_eq!(
        (p.alpha, p.alpha_why.as_str()),
        (
            0.05,
            "`precision` is not a decision metric of the run: the usual level"
        )
    );
    let sim = p.simulated_power.unwrap();
    // Five values resampled: the simulation is near the target, not on it.
    assert!((sim - 0.8).abs() < 0.1, "{sim}");
    // A given effect, negative: the same needed as its size.
    let q = plan(
        &metric("precision"),
        &pilot(&diffs),
        settings(Some(-0.2)),
        "r",
    )
    .unwrap();
    assert_eq!(q.needed, 12);
    assert!(q.effect_from == "--effect" && q.effect == -0.2);
    // The sizes beside it include the needed one, with the same simulated power.
    let at = p.sizes.iter().find(|s| s.pairs == p.needed).unwrap();
    assert_eq!(at.simulated_power, p.simulated_power);
    assert!(p
        .sizes
        .windows(2)
        .all(|w| w[0].approximate_power < w[1].approximate_power));
}

// For a metric of the decision, plan speaks its language: the plain 0.05 its claim is judged
// at (whatever the number of decision metrics), the metric's min_effect or a guard's margin as
// the effect.
#[test]
fn a_decision_metric_is_planned_at_the_decisions_level_and_effect() {
    let diffs = [0.1, 0.3, -0.1, 0.5, 0.2];
    let decided = |wanted: Wanted| Settings {
        decided: Some(Decided { wanted }),
        ..settings(None)
    };
    let up = Wanted::plain("precision", crate::policy::Want::Increase);
    // 0.05, and 12 pairs for 0.2 there.
    let p = plan(
        &metric("precision"),
        &pilot(&diffs),
        decided(up.clone()),
        "r",
    )
    .unwrap();
    assert_eq!((p.alpha, p.needed), (0.05, 12));
    assert!(
        p.alpha_why.contains("no multiplicity adjustment"),
        "{}",
        p.alpha_why
    );
    // --alpha wins: 15 pairs at 0.025 (3.377624 at n = 15).
    let p = plan(
        &metric("precision"),
        &pilot(&diffs),
        Settings {
            alpha: Some(0.025),
            ..decided(up.clone())
        },
        "r",
    )
    .unwrap();
    assert_eq!((p.alpha, p.needed), (0.025, 15));
    // min_effect: the effect planned for.
    let small = Wanted {
        min_effect: Some(0.1),
        ..up
    };
    let p = plan(&metric("precision"), &pilot(&diffs), decided(small), "r").unwrap();
    assert_eq!((p.effect, p.effect_from), (0.1, "min_effect"));
    // A guard's margin: the distance from the observed change to its edge, 0.2 + 0.05.
    let guard = Wanted {
        margin: Some(0.05),
        ..Wanted::plain("precision", crate::policy::Want::NoDecrease)
    };
    let p = plan(&metric("precision"), &pilot(&diffs), decided(guard), "r").unwrap();
    assert_eq!(p.effect_from, "margin");
    assert!((p.effect - 0.25).abs() < 1e-12);
}

// McNemar's exact test on 0/1 outcomes: the fewest units whose exact power reaches 80%,
// and the floor of changed units when it binds.
#[test]
fn zero_one_outcomes_are_planned_for_mcnemars_test() {
    // 40 units, 10 discordant (8 up, 2 down): mean 0.15, variance (10 − 40 · 0.0225) / 39
    // = 0.233333, sd 0.483046. The normal approximation asks ((1.959964 + 0.841621) ·
    // 0.483046 / 0.15)² = 81.4 → 82; McNemar's exact power (a quarter of units changing,
    // summed over every count of them) first reaches 80% at 92.
    let mut values = vec![(0.0, 1.0); 8];
    values.extend([(1.0, 0.0); 2]);
    values.extend([(1.0, 1.0); 30]);
    let p = plan(
        &metric("final_accuracy"),
        &PilotPairs::of(&values, "queries"),
        settings(None),
        "r",
    )
    .unwrap();
    assert_eq!(p.test, Test::Mcnemar);
    assert_eq!((p.needed, p.power_needed, p.binds), (92, 82, "power"));
    assert_eq!(p.floor_discordant, Some(6));
    let sim = p.simulated_power.unwrap();
    assert!((sim - 0.8).abs() < 0.03, "{sim}");
    // A large effect (0.9: nine units in ten change, all for the treatment): the normal
    // approximation asks 3, but McNemar's p cannot go below 0.05 with fewer than 6 changed
    // units; 7 units hold 6 changed ones with 85% chance.
    let p = plan(
        &metric("final_accuracy"),
        &PilotPairs::of(&values, "queries"),
        settings(Some(0.9)),
        "r",
    )
    .unwrap();
    assert_eq!((p.needed, p.binds), (7, "McNemar floor"));
    assert!(p.simulated_power.unwrap() >= 0.8);
}

#[test]
fn refusals_name_the_metric_or_the_effect() {
    let c = metric("brier");
    let err = plan(&c, &pilot(&[0.1]), settings(None), "r").unwrap_err();
    assert!(err.problem.contains("at least 2"), "{err:?}");
    let err = plan(&c, &pilot(&[0.1, 0.1, 0.1]), settings(None), "r").unwrap_err();
    assert!(err.problem.contains("do not vary"), "{err:?}");
    let err = plan(&c, &pilot(&[0.1, -0.1]), settings(None), "r").unwrap_err();
    assert!(
        err.problem.contains("observed mean difference is 0"),
        "{err:?}"
    );
    let err = plan(&c, &pilot(&[0.1, 0.3]), settings(Some(0.0)), "r").unwrap_err();
    assert!(err.problem.contains("--effect must not be 0"), "{err:?}");
    assert_eq!(c.table, DeltaTable::Queries);
}

/// The reader and the writer of the pairs table agree, to the last bit of every value.
#[test]
fn tiny_levels_plan_a_real_count_and_unreachable_effects_are_refused() {
    let diffs = [0.5, -0.4, 0.3, -0.2, 0.6, 0.1];
    let with = |effect: Option<f64>, alpha: f64| {
        let mut s = settings(effect);
        s.alpha = Some(alpha);
        plan(&metric("confidence_mean"), &pilot(&diffs), s, "r")
    };
    let strict = with(Some(0.1), 1e-16).unwrap();
    let usual = with(Some(0.1), 0.05).unwrap();
    assert!(strict.needed > usual.needed && strict.needed < 100 * usual.needed);
    assert!(
        strict.human().contains("level: two-sided 1e-16 (--alpha)"),
        "{}",
        strict.human()
    );
    let e = with(Some(1e-300), 0.05).unwrap_err();
    assert_eq!(e.flag, "`--effect`");
    assert!(
        e.problem.contains("would take more than 9007199254740992"),
        "{}",
        e.problem
    );
}

#[test]
fn a_study_too_big_to_simulate_keeps_the_approximation() {
    let p = plan(
        &metric("confidence_mean"),
        &pilot(&[0.5, -0.4, 0.3, -0.2]),
        settings(Some(0.0001)),
        "r",
    )
    .unwrap();
    assert!(p.needed > MAX_SIMULATED_PAIRS);
    assert_eq!(p.simulated_power, None);
    assert!(p
        .note
        .as_deref()
        .unwrap()
        .contains("the approximation stands alone"));
}

// Levels print as people write them, never with a double's every digit.
#[test]
fn levels_print_to_three_significant_digits() {
    assert_eq!(fmt_level(0.05 / 3.0), "0.0167");
    assert_eq!(fmt_level(0.05), "0.05");
    assert_eq!(fmt_level(0.025), "0.025");
    assert_eq!(fmt_level(0.001), "0.001");
    assert_eq!(fmt_level(0.5), "0.5");
    assert_eq!(fmt_level(1e-16), "1e-16");
    assert_eq!(fmt_level(0.05 / 3000.0), "1.67e-5");
}
