//! How many units a study needs (docs/guides/ab-rubric-change.md, "Planning"): from a pilot's
//! paired units on one metric, the size that detects an effect **by the test the decision
//! runs** (the paired t-test, McNemar's exact test on 0/1 outcomes, the z-test of the lift in
//! human units), checked by a seeded simulation of studies running that same test. For a
//! metric of a decision it speaks the decision's language: its level is Holm's first step over
//! the decision metrics and its effect the metric's `min_effect` or a guard's margin, so that it
//! gives the decision's own "needs ≈ N". Pure: `calibench plan` reads the pilot and prints the
//! plan.

use serde::Serialize;

use crate::decision::{Binds, Pilot};
use crate::policy::Wanted;
use crate::replay::{Compared, DeltaTable};
use crate::stats::holm::pairs_for_floor;
use crate::stats::power::{
    mcnemar_power, needed_for, power_for, simulated_power_for, ALPHA, MAX_COUNT,
    MAX_SIMULATED_PAIRS, STUDIES,
};
use crate::stats::test::{mean, sd, Test};

/// The plan for one metric: `{metric, effect, sd, pairs, power, alpha, needed,
/// simulated_power}` and what they rest on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanReport {
    pub metric: String,
    /// The true mean difference planned for, signed (treatment − baseline).
    pub effect: f64,
    /// Where `effect` came from: `--effect`, `min_effect`, `margin` or `observed`.
    pub effect_from: &'static str,
    /// The sample standard deviation of the pilot's differences.
    pub sd: f64,
    /// The pilot's pairs.
    pub pairs: usize,
    pub power: f64,
    pub alpha: f64,
    /// Why `alpha` is what it is: `--alpha`, Holm's first step over the decision's metrics, or
    /// the usual two-sided 0.05.
    pub alpha_why: String,
    /// The test the decision runs on this metric, which the counts and the simulation are for.
    pub test: Test,
    /// Units needed for `power` by `test`: by Student's t for the paired t-test; for
    /// McNemar's, the fewest whose exact power reaches it (which counts its floor: it cannot
    /// reach `alpha` with fewer than `floor_discordant` changed units).
    pub needed: u64,
    /// Units the power needs by the normal approximation, floor aside.
    pub power_needed: u64,
    /// `McNemar floor` when the floor alone asks at least what the normal approximation does
    /// (small studies of large effects), else `power`.
    pub binds: &'static str,
    /// The share of simulated studies of `needed` units, each running `test`, that detect the
    /// effect; null when the study is too large to simulate, or has no units to resample.
    pub simulated_power: Option<f64>,
    /// `review`, `queries`, `scores`, `lift` or `lift_human`.
    pub table: &'static str,
    /// What a pair is: targets, queries, items, labelled items.
    pub units: &'static str,
    /// The pilot's mean difference.
    pub observed: f64,
    pub run_id: String,
    /// The seed of the simulation: the run's.
    pub seed: u64,
    pub studies: usize,
    /// Power at other study sizes, beside the recommended one.
    pub sizes: Vec<SizePower>,
    /// McNemar's test: the fewest discordant units with which its p can reach `alpha`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floor_discordant: Option<usize>,
    /// Why `simulated_power` is null, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizePower {
    pub pairs: u64,
    /// By the test's approximation (Student's t); for McNemar's, exact (summed over the
    /// binomial counts of changed units).
    pub approximate_power: f64,
    pub simulated_power: Option<f64>,
}

/// What `plan` is asked.
#[derive(Clone, Debug)]
pub struct Settings {
    pub effect: Option<f64>,
    pub power: f64,
    /// `--alpha`, when given.
    pub alpha: Option<f64>,
    pub seed: u64,
    pub threads: usize,
    /// The metric as the run's decision names it, when it is one of its metrics.
    pub decided: Option<Decided>,
}

/// A decision metric: its way (with margin or smallest effect).
#[derive(Clone, Debug, PartialEq)]
pub struct Decided {
    pub wanted: Wanted,
}

/// The delta a plan is made for: a catalogue's metric, `lift`, `lift_human`, or an imported
/// scorer.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub name: String,
    pub table: DeltaTable,
}

impl From<Compared> for Planned {
    fn from(c: Compared) -> Self {
        Planned {
            name: c.name.to_string(),
            table: c.table,
        }
    }
}

/// A pilot's paired units on one metric, as a study would be sized from them.
#[derive(Clone, Debug, PartialEq)]
pub struct PilotPairs {
    /// treatment − baseline per unit (empty for the lift in human units, which has only its
    /// estimate's spread).
    pub diffs: Vec<f64>,
    /// The test the decision runs on them.
    pub test: Test,
    /// McNemar's test: the units whose outcome differs between the arms.
    pub discordant: Option<usize>,
    /// For the lift in human units: its labelled pairs, mean difference and the spread the
    /// z-test sees (standard error · √n).
    pub estimate: Option<(usize, f64, f64)>,
    /// What a unit is.
    pub units: &'static str,
}

impl PilotPairs {
    /// From each unit's (baseline, treatment) values: the decision's test of them.
    pub fn of(values: &[(f64, f64)], units: &'static str) -> PilotPairs {
        let (b, t): (Vec<f64>, Vec<f64>) = values.iter().copied().unzip();
        let test = Test::of(&b, &t);
        let diffs: Vec<f64> = values.iter().map(|(b, t)| t - b).collect();
        PilotPairs {
            discordant: (test == Test::Mcnemar)
                .then(|| diffs.iter().filter(|&&d| d != 0.0).count()),
            diffs,
            test,
            estimate: None,
            units,
        }
    }
}

/// Why a plan cannot be made from these differences.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The flag at fault: `--metric` or `--effect`.
    pub flag: &'static str,
    pub problem: String,
    pub hint: String,
}

/// The plan from a pilot's paired units. Pure.
pub fn plan(
    compared: &Planned,
    pilot: &PilotPairs,
    settings: Settings,
    run_id: &str,
) -> Result<PlanReport, Refusal> {
    let name = compared.name.as_str();
    let units = pilot.units;
    let diffs = &pilot.diffs;
    let (pairs, observed, s) = match pilot.estimate {
        Some((n, delta, spread)) => (n, delta, Some(spread)),
        None => (
            diffs.len(),
            if diffs.is_empty() { 0.0 } else { mean(diffs) },
            sd(diffs),
        ),
    };
    let Some(s) = s else {
        return Err(refuse(
            "`--metric`",
            format!("`{name}` has {pairs} paired {units} in this run; a standard deviation needs at least 2"),
            "plan from a pilot with at least 2 pairs",
        ));
    };
    if s == 0.0 {
        return Err(refuse(
            "`--metric`",
            format!(
                "`{name}`'s {pairs} differences do not vary (all {:+}): there is no spread to plan from",
                diffs.first().copied().unwrap_or(observed)
            ),
            "plan from a metric whose differences vary, or from a bigger pilot",
        ));
    }
    let (effect, effect_from) = effect(name, observed, &settings)?;
    let (alpha, alpha_why) = level(name, &settings);
    let power = settings.power;
    let study = Pilot {
        test: pilot.test,
        sd: s,
        pairs,
        discordant: pilot.discordant,
        min_pairs: if pilot.estimate.is_some() {
            crate::decision::MIN_LABELLED_PAIRS
        } else {
            2
        },
    };
    let (Some((k, binds)), Some(power_needed)) = (
        study.needed(effect, alpha, power),
        needed_for(pilot.test, s, effect, alpha, power),
    ) else {
        return Err(refuse(
            if settings.effect.is_some() {
                "`--effect`"
            } else {
                "`--alpha`"
            },
            format!(
                "detecting {effect:+e} at two-sided {} with {:.0}% power would take more than {MAX_COUNT} {units}: no study can",
                fmt_level(alpha),
                100.0 * power
            ),
            "plan for a larger effect (--effect) or a less strict level (--alpha)",
        ));
    };
    let at = Sized {
        pilot,
        sd: s,
        pairs,
        effect,
        alpha,
        settings: &settings,
    };
    let simulated = at.simulate(k);
    let note = if diffs.is_empty() {
        Some("the lift in human units has no per-unit differences to resample: its count is the z-test's, from the PPI++ estimate's standard error".to_string())
    } else {
        simulated.is_none().then(|| {
            format!(
                "{k} {units} is more than the {MAX_SIMULATED_PAIRS} a simulated study may draw; the approximation stands alone"
            )
        })
    };
    Ok(PlanReport {
        metric: name.to_string(),
        effect,
        effect_from,
        sd: s,
        pairs,
        power,
        alpha,
        alpha_why,
        test: pilot.test,
        needed: k,
        power_needed,
        binds: match binds {
            Binds::Power => "power",
            Binds::Floor => "McNemar floor",
        },
        simulated_power: simulated,
        table: compared.table.name(),
        units,
        observed,
        run_id: run_id.to_string(),
        seed: settings.seed,
        studies: STUDIES,
        sizes: at.sizes(k, simulated),
        floor_discordant: (pilot.test == Test::Mcnemar).then(|| pairs_for_floor(alpha)),
        note,
    })
}

/// A refusal of `flag`.
fn refuse(flag: &'static str, problem: String, hint: &str) -> Refusal {
    Refusal {
        flag,
        problem,
        hint: hint.to_string(),
    }
}

/// The effect to plan for, and where it came from: as given, else the decision's (its smallest
/// change that matters, or the distance from a guard's observed change to its margin's edge),
/// else the one observed.
fn effect(name: &str, observed: f64, settings: &Settings) -> Result<(f64, &'static str), Refusal> {
    let decided = settings.decided.as_ref();
    let sign = decided.map_or(1.0, |d| d.wanted.want.good_sign());
    let (effect, from) = match (settings.effect, decided) {
        (Some(x), _) => (x, "--effect"),
        (None, Some(d)) if d.wanted.min_effect.is_some() => {
            (sign * d.wanted.min_effect.unwrap_or_default(), "min_effect")
        }
        (None, Some(d)) if d.wanted.margin.is_some() => {
            let distance = d.wanted.margin.unwrap_or_default() + sign * observed;
            if distance <= 0.0 {
                return Err(refuse(
                    "`--effect`",
                    format!("`{name}`'s observed change ({observed:+.4}) lies beyond its margin: no study of this change can show it stays within it"),
                    "give the change to plan for with --effect",
                ));
            }
            (sign * distance, "margin")
        }
        (None, _) => (observed, "observed"),
    };
    if effect != 0.0 {
        return Ok((effect, from));
    }
    Err(match settings.effect {
        Some(_) => refuse(
            "`--effect`",
            "an effect of 0 cannot be detected: --effect must not be 0".into(),
            "give the smallest difference that would matter, e.g. --effect 0.05",
        ),
        None => refuse(
            "`--effect`",
            format!("`{name}`'s observed mean difference is 0, so there is no default effect"),
            "give the smallest difference that would matter with --effect",
        ),
    })
}

/// The level, and why: as given, else the level the decision's claim about the metric is judged
/// at (two-sided 0.05: improving and holding are parts of "better", an intersection-union claim
/// that needs no multiplicity adjustment), else the usual two-sided 0.05.
fn level(name: &str, settings: &Settings) -> (f64, String) {
    match (settings.alpha, settings.decided.as_ref()) {
        (Some(a), _) => (a, "--alpha".to_string()),
        (None, Some(_)) => (
            ALPHA,
            "the level the decision judges improving and holding at: each is a part of \"better\", which is wrong only if a part is, so no multiplicity adjustment; the level its \"needs ≈ N\" is for".to_string(),
        ),
        (None, None) => (
            ALPHA,
            format!("`{name}` is not a decision metric of the run: the usual level"),
        ),
    }
}

/// A study sized: the pilot, its spread and pairs, and the effect and level planned for.
struct Sized<'a> {
    pilot: &'a PilotPairs,
    sd: f64,
    pairs: usize,
    effect: f64,
    alpha: f64,
    settings: &'a Settings,
}

impl Sized<'_> {
    /// The simulated power of a study of `n` units, when it is small enough to simulate and
    /// there are differences to resample.
    fn simulate(&self, n: u64) -> Option<f64> {
        let diffs = &self.pilot.diffs;
        (n <= MAX_SIMULATED_PAIRS && !diffs.is_empty()).then(|| {
            simulated_power_for(
                self.pilot.test,
                diffs,
                self.effect,
                n,
                self.alpha,
                STUDIES,
                self.settings.seed,
                self.settings.threads,
            )
        })
    }

    /// Power at half, three quarters, one and one and a half times the needed `k` units (its
    /// own simulated power `at_k` already known).
    fn sizes(&self, k: u64, at_k: Option<f64>) -> Vec<SizePower> {
        let mut sizes: Vec<u64> = [0.5, 0.75, 1.0, 1.5]
            .iter()
            .map(|f| ((k as f64 * f).round() as u64).max(2))
            .collect();
        sizes.dedup();
        let (test, alpha, effect) = (self.pilot.test, self.alpha, self.effect);
        sizes
            .into_iter()
            .map(|n| SizePower {
                pairs: n,
                approximate_power: match (test, self.pilot.discordant) {
                    (Test::Mcnemar, Some(d)) => {
                        mcnemar_power(n, d as f64 / self.pairs.max(1) as f64, effect, alpha)
                    }
                    _ => power_for(test, self.sd, effect, n, alpha),
                },
                simulated_power: if n == k { at_k } else { self.simulate(n) },
            })
            .collect()
    }
}

/// A level as people write it: `0.05`, and `1e-16` rather than sixteen zeros.
pub fn fmt_level(alpha: f64) -> String {
    if alpha >= 1e-4 {
        // Three significant digits, trailing zeros dropped: 0.0167, 0.05, 0.001.
        let decimals = (2 - alpha.log10().floor() as i32).max(0) as usize;
        trim_zeros(&format!("{alpha:.decimals$}")).to_string()
    } else {
        let s = format!("{alpha:.2e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        format!("{}e{exponent}", trim_zeros(mantissa))
    }
}

/// "0.0500" → "0.05", "2.00" → "2".
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests;
