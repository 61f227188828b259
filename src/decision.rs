//! The decision (docs/reference.md, "The decision"): is the treatment better, worse, or not yet
//! knowable? "Trusted" says the judges agree; this says what the A/B shows. Pure: the metrics
//! go in, the decision comes out.
//!
//! The experiment names each decision metric with the way it must move (`[decision]`, or the
//! `primary` metrics whose catalogue entry declares a better direction). The decision metrics
//! are one Holm family (`analysis` adjusts their p-values together), and each p-value is of the
//! delta's mean (McNemar's exact test on 0/1 outcomes, else the paired t-test). Then, per
//! metric:
//! * **improved**: its delta lies the wanted way with `p_adjusted` < 0.05;
//! * **regressed**: it lies the other way with `p_adjusted` < 0.05;
//! * **held**: a guard with a margin whose 95% interval's unsafe bound lies within the margin
//!   (non-inferiority shown);
//! * **underpowered**: the A/B was too small to tell: the delta (or the metric's `min_effect`)
//!   is inside the minimum detectable effect, McNemar's test cannot reach the level with so few
//!   discordant units, a guard's margin is not shown, or the lift in human units has fewer than
//!   10 labelled pairs. It says how many units would tell, by the test that runs;
//! * **no effect detected**: the A/B was big enough to see the change (`min_effect`, else the
//!   observed delta) had it been real, nothing moved, or (without `min_effect`) it moved the
//!   other way from the one it must, not significantly: no improvement to size a study for;
//! * **withheld**: judge-derived while the judges are not trusted; **unmeasured**: no unit has
//!   it in both arms.
//!
//! The verdict: `withheld` when a decision metric is withheld; else `worse` when any
//! regressed; else `better` when every metric that must move improved and every guard with a
//! margin held; else `inconclusive`. A guard without a margin never blocks `better`, and its
//! words say it was not shown to hold.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::{Want, Wanted};
use crate::stats::holm::{pairs_for_floor, sign_test_floor};
use crate::stats::power::{needed_for, ALPHA, POWER};
use crate::stats::test::Test;

mod noise;
pub use noise::Noise;

/// The fewest labelled pairs the lift in human units decides on: fewer give an interval too
/// rough to call better or worse (hostile round 3: "better, p adj. <0.001" from two).
pub const MIN_LABELLED_PAIRS: usize = 10;

/// The largest count "needs ≈ N" states; beyond, "more than 10,000".
pub const MAX_STATED: u64 = 10_000;

/// The decision's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Better,
    Worse,
    Inconclusive,
    Withheld,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Withheld => "withheld",
        }
    }
}

/// What became of one decision metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Improved,
    Regressed,
    /// A guard with a margin, shown to stay within it.
    Held,
    /// A guard without a margin that did not move the wrong way significantly: not shown to
    /// hold, only not shown to fail.
    NoRegressionDetected,
    Underpowered,
    NoEffectDetected,
    Withheld,
    Unmeasured,
}

impl Outcome {
    pub fn words(self) -> &'static str {
        match self {
            Outcome::Improved => "improved",
            Outcome::Regressed => "regressed",
            Outcome::Held => "held",
            Outcome::NoRegressionDetected => "no regression detected",
            Outcome::Underpowered => "underpowered",
            Outcome::NoEffectDetected => "no effect detected",
            Outcome::Withheld => "withheld",
            Outcome::Unmeasured => "unmeasured",
        }
    }
}

/// One decision metric, its figures and its outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricDecision {
    pub want: Want,
    /// Both arms' means over the paired units, and treatment − baseline.
    pub baseline: Option<f64>,
    pub treatment: Option<f64>,
    pub delta: Option<f64>,
    pub ci: Option<[f64; 2]>,
    /// Holm over the decision metrics.
    pub p_adjusted: Option<f64>,
    pub mde: Option<f64>,
    /// The units paired.
    pub pairs: usize,
    pub outcome: Outcome,
    /// For an underpowered metric: the units an A/B needs, by the test that runs, at 80% power
    /// and Holm's first-step level over the decision metrics, to show `min_effect` (else the
    /// observed delta), or a guard's margin; null when no count can be stated.
    pub needed: Option<u64>,
    /// The test the p-value is of.
    #[serde(default)]
    pub test: Test,
    /// A guard's non-inferiority margin, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// For a guard with a margin: the 95% interval of the test that runs, whose unsafe bound
    /// the margin is checked against (the t-interval of the mean for the paired t-test,
    /// Newcombe's square-and-add interval for McNemar's); null when none can be drawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_ci: Option<[f64; 2]>,
    /// The smallest change that matters, when the metric names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_effect: Option<f64>,
    /// The harness's own run-to-run change of this metric, from the experiment's A/A run
    /// (`noise_floor`), when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
}

/// The decision: its verdict, every decision metric, and one sentence per metric saying what
/// became of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Decision {
    pub verdict: Verdict,
    pub metrics: BTreeMap<String, MetricDecision>,
    /// One sentence per metric, in `order`.
    pub reasons: Vec<String>,
    /// The decision metrics in the experiment's order: those that must move, then the guards.
    #[serde(default)]
    pub order: Vec<String>,
    /// What a pair is for each metric's sentences ("targets", "queries", "items").
    #[serde(default)]
    pub units: BTreeMap<String, String>,
    /// The input ledger's caveats (docs/reference.md, "The input ledger"): what the run read
    /// that could change this decision without being seen. Every decision line says how many.
    #[serde(default)]
    pub caveats: Vec<crate::corpus::ledger::Caveat>,
}

/// One decision metric's figures, as the run measured them.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub baseline: f64,
    pub treatment: f64,
    pub delta: f64,
    pub ci: Option<[f64; 2]>,
    pub p_adjusted: Option<f64>,
    pub mde: Option<f64>,
    pub pairs: usize,
    /// The test of the mean the p-value is of, and what sizes a study by it: the per-unit
    /// differences' standard deviation, and McNemar's discordant units.
    pub test: Test,
    pub sd: Option<f64>,
    pub discordant: Option<usize>,
    /// The fewest pairs the metric decides on (the lift in human units: 10 labelled pairs).
    pub min_pairs: usize,
}

/// What a study's size rests on: the pilot's test, the standard deviation of its per-unit
/// differences, its pairs and (McNemar's) discordant units, and the fewest pairs the metric
/// decides on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pilot {
    pub test: Test,
    pub sd: f64,
    pub pairs: usize,
    pub discordant: Option<usize>,
    pub min_pairs: usize,
}

/// What binds a study's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binds {
    /// The power asked for, by the test that runs.
    Power,
    /// McNemar's floor: enough discordant units for its p to reach the level at all.
    Floor,
}

impl Pilot {
    /// Units a study needs to detect a true change `effect` (≠ 0) at two-sided `level` with
    /// `power` by the pilot's test; for McNemar's, also enough discordant units (at the pilot's
    /// share of them) for its p to reach the level at all. The one count the decision's
    /// "needs ≈ N" and `calibench plan` both give. `None` when no count can be stated.
    pub fn needed(&self, effect: f64, level: f64, power: f64) -> Option<(u64, Binds)> {
        if effect == 0.0 || self.sd.is_nan() || self.sd <= 0.0 {
            return None;
        }
        let share = match (self.test, self.discordant) {
            (Test::Mcnemar, Some(d)) if self.pairs > 0 => Some(d as f64 / self.pairs as f64),
            _ => None,
        };
        // McNemar's power is summed exactly over the counts of changed units, which counts its
        // floor too; the others' by their test's approximation.
        let by_power = match share {
            Some(share) => crate::stats::power::mcnemar_needed(share, effect, level, power)?,
            None => needed_for(self.test, self.sd, effect, level, power)?,
        }
        .max(self.min_pairs as u64);
        // The floor's count: its fewest changed units at the share of units that change (at
        // least |effect|, as the power's model has it).
        let floor = match share {
            Some(share) if share > 0.0 => {
                let changing = share.max(effect.abs()).min(1.0);
                (pairs_for_floor(level) as f64 / changing).ceil() as u64
            }
            _ if self.test == Test::Mcnemar => pairs_for_floor(level) as u64,
            _ => 0,
        };
        // What binds: the floor, when it alone asks at least what the normal approximation of
        // the power asks.
        let by_normal = needed_for(self.test, self.sd, effect, level, power).unwrap_or(0);
        let binds = if floor >= by_normal && self.test == Test::Mcnemar {
            Binds::Floor
        } else {
            Binds::Power
        };
        Some((by_power.max(floor), binds))
    }
}

impl Measured {
    /// A paired delta as the decision reads it, with its p adjusted over the decision's family.
    pub fn of(d: &crate::stats::paired::PairedDelta, p_adjusted: Option<f64>) -> Measured {
        Measured {
            baseline: d.baseline,
            treatment: d.treatment,
            delta: d.delta,
            ci: d.ci,
            p_adjusted,
            mde: d.mde,
            pairs: d.pairs,
            test: d.test,
            sd: d.sd,
            discordant: d.discordant,
            min_pairs: 2,
        }
    }

    /// Units needed to detect a true change `effect` at two-sided `level` with 80% power:
    /// [`Pilot::needed`].
    pub fn needed(&self, effect: f64, level: f64) -> Option<u64> {
        let pilot = Pilot {
            test: self.test,
            sd: self.sd?,
            pairs: self.pairs,
            discordant: self.discordant,
            min_pairs: self.min_pairs,
        };
        pilot.needed(effect, level, POWER).map(|(n, _)| n)
    }

    /// The 95% interval of the test that runs, which a guard's margin is checked against: the
    /// t-interval of the mean for the paired t-test (`None` when the differences do not vary:
    /// no interval can be drawn from them), Newcombe's square-and-add interval for McNemar's
    /// (from the four cells the means and discordant units give), the metric's own interval
    /// for the rest (the z-interval of the lift in human units, the bootstrap's for ECE).
    pub fn test_interval(&self) -> Option<[f64; 2]> {
        match self.test {
            Test::PairedT => {
                let sd = self.sd.filter(|&s| s > 0.0)?;
                if self.pairs < 2 {
                    return None;
                }
                let n = self.pairs as f64;
                let half = crate::stats::power::t_upper(ALPHA / 2.0, n - 1.0) * sd / n.sqrt();
                Some([self.delta - half, self.delta + half])
            }
            Test::Mcnemar => {
                let n = self.pairs as f64;
                let d = self.discordant? as f64;
                let change = self.delta * n;
                let treatment_only = ((d + change) / 2.0).round();
                let baseline_only = ((d - change) / 2.0).round();
                let both = (self.baseline * n - baseline_only).round();
                let neither = n - both - treatment_only - baseline_only;
                crate::stats::paired::newcombe_paired(both, treatment_only, baseline_only, neither)
            }
            Test::ZTest | Test::Bootstrap => self.ci,
        }
    }

    /// Whether McNemar's p cannot reach `level` with these discordant units.
    fn below_floor(&self, level: f64) -> bool {
        self.test == Test::Mcnemar && sign_test_floor(self.discordant.unwrap_or(0)) > level
    }
}

/// What the decision reads of one metric.
#[derive(Clone, Debug, PartialEq)]
pub enum Reading {
    Measured(Measured),
    /// Judge-derived, and the judges are not trusted.
    Withheld,
    /// No unit has it in both arms.
    Unmeasured,
}

/// One metric's outcome from what the run measured, in a decision of `family` metrics. The
/// family's strictest Holm level, 0.05 / `family` (the level its smallest p must clear), is the
/// one a study is sized for.
pub fn outcome(w: &Wanted, reading: &Reading, family: usize) -> (Outcome, Option<u64>) {
    let m = match reading {
        Reading::Withheld => return (Outcome::Withheld, None),
        Reading::Unmeasured => return (Outcome::Unmeasured, None),
        Reading::Measured(m) => m,
    };
    let level = ALPHA / family.max(1) as f64;
    // Too few pairs to decide on at all.
    if m.pairs < m.min_pairs {
        return (Outcome::Underpowered, Some(m.min_pairs as u64));
    }
    let significant = m.p_adjusted.is_some_and(|p| p < ALPHA);
    let good = m.delta * w.want.good_sign();
    if significant && good < 0.0 {
        return (Outcome::Regressed, None);
    }
    if let Some(margin) = w.margin {
        // Non-inferiority: the unsafe bound within the margin, else not shown, with the units
        // that would show it (the distance from the observed change to the margin's edge).
        if holds(w.want, margin, m) {
            return (Outcome::Held, None);
        }
        let distance = margin + good;
        let needed = (distance > 0.0)
            .then(|| m.needed(distance, level))
            .flatten();
        return (Outcome::Underpowered, needed);
    }
    if significant && good > 0.0 {
        return (Outcome::Improved, None);
    }
    if !w.want.must_move() {
        return (Outcome::NoRegressionDetected, None);
    }
    // Nothing moved at all: there is no difference to size a bigger study for.
    if m.delta == 0.0 && w.min_effect.is_none() {
        return (Outcome::NoEffectDetected, None);
    }
    // Without a smallest change that matters, a change the wrong way is no improvement to size
    // a bigger study for: nothing was detected (a bigger study of it would show a regression,
    // not the improvement).
    if w.min_effect.is_none() && w.want.must_move() && good < 0.0 {
        return (Outcome::NoEffectDetected, None);
    }
    // The change the study must be able to see: the smallest that matters, else the one
    // observed.
    let target = w.min_effect.unwrap_or(m.delta.abs());
    let inside_mde = m.mde.is_some_and(|x| target < x);
    if inside_mde || m.below_floor(level) {
        return (Outcome::Underpowered, m.needed(target, level));
    }
    (Outcome::NoEffectDetected, None)
}

/// Whether a guard that wants `want` is shown to stay within `margin`: the unsafe bound of its
/// test's 95% interval ([`Measured::test_interval`]) lies within it.
pub fn holds(want: Want, margin: f64, m: &Measured) -> bool {
    m.test_interval()
        .map(|[lo, hi]| if want.good_sign() > 0.0 { lo } else { -hi })
        .is_some_and(|b| b > -margin)
}

/// The decision over `metrics`, each with its reading, its words and decimals for sentences,
/// and what a unit is.
pub fn decide(metrics: &[(Wanted, Reading, Words)]) -> Decision {
    let mut out = BTreeMap::new();
    let mut units = BTreeMap::new();
    let mut reasons = Vec::new();
    let mut order = Vec::new();
    for (w, reading, words) in metrics {
        let (o, needed) = outcome(w, reading, metrics.len());
        let m = match reading {
            Reading::Measured(m) => Some(m),
            _ => None,
        };
        let d = MetricDecision {
            want: w.want,
            baseline: m.map(|m| m.baseline),
            treatment: m.map(|m| m.treatment),
            delta: m.map(|m| m.delta),
            ci: m.and_then(|m| m.ci),
            p_adjusted: m.and_then(|m| m.p_adjusted),
            mde: m.and_then(|m| m.mde),
            pairs: m.map_or(0, |m| m.pairs),
            outcome: o,
            needed,
            test: m.map_or_else(Test::default, |m| m.test),
            margin: w.margin,
            margin_ci: w.margin.and(m.and_then(Measured::test_interval)),
            min_effect: w.min_effect,
            noise: None,
        };
        reasons.push(sentence(&d, words));
        units.insert(w.metric.clone(), words.units.to_string());
        order.push(w.metric.clone());
        out.insert(w.metric.clone(), d);
    }
    let any = |o: Outcome| out.values().any(|d| d.outcome == o);
    let verdict = if any(Outcome::Withheld) {
        Verdict::Withheld
    } else if any(Outcome::Regressed) {
        Verdict::Worse
    } else if out.values().all(|d| {
        if d.want.must_move() {
            d.outcome == Outcome::Improved
        } else {
            d.margin.is_none() || d.outcome == Outcome::Held
        }
    }) {
        Verdict::Better
    } else {
        Verdict::Inconclusive
    };
    Decision {
        verdict,
        metrics: out,
        reasons,
        order,
        units,
        caveats: Vec::new(),
    }
}

/// How a metric is written in sentences.
#[derive(Clone, Debug, PartialEq)]
pub struct Words {
    /// "distinct values", "precision".
    pub name: String,
    /// Decimals of its figures.
    pub places: usize,
    /// What a unit is: "targets", "queries", "items".
    pub units: &'static str,
}

/// "precision rose 0.61 → 0.74 (p adj. 0.004)": the metric, how it moved, and what that means
/// for the decision.
pub fn sentence(d: &MetricDecision, w: &Words) -> String {
    let name = &w.name;
    let (Some(b), Some(t), Some(delta)) = (d.baseline, d.treatment, d.delta) else {
        return match d.outcome {
            Outcome::Withheld => {
                format!("{name} is judge-derived, and the judges are not trusted: withheld")
            }
            _ => format!(
                "{name}: no {} has it in both arms, so it is unmeasured",
                singular(w.units)
            ),
        };
    };
    let change = moved(name, b, t, delta, w.places);
    let p = d
        .p_adjusted
        .map_or("no p-value".to_string(), |p| format!("p adj. {}", fmt_p(p)));
    let units = |n: usize| format!("{n} {}", if n == 1 { singular(w.units) } else { w.units });
    let num = |x: f64| crate::text::fmt_num(x);
    let needs = |why: &str| match d.needed {
        Some(n) if n > MAX_STATED => format!(
            "needs more than {}{why}",
            crate::text::thousands(MAX_STATED)
        ),
        Some(n) => format!("needs ≈ {}{why}", crate::text::thousands(n)),
        None => "no count of units could".to_string(),
    };
    match d.outcome {
        Outcome::Improved | Outcome::Regressed => format!("{change} ({p})"),
        Outcome::Held => {
            let margin = d.margin.unwrap_or_default();
            format!(
                "{change}: held within its margin of {} ({p}; {})",
                num(margin),
                margin_bound(d, w.places)
            )
        }
        Outcome::Underpowered if d.pairs < MIN_LABELLED_PAIRS && d.needed == Some(MIN_LABELLED_PAIRS as u64) && w.units == "labelled items" => format!(
            "{change} but {} are too few to decide on (needs ≥ {MIN_LABELLED_PAIRS} labelled pairs; has {})",
            units(d.pairs),
            d.pairs
        ),
        // A guard without a margin that neither improved nor regressed: what was and was not
        // shown, whether or not the A/B could have seen a regression.
        Outcome::NoRegressionDetected => {
            format!(
                "{change}: no regression detected ({p}; no margin given, so it is not shown to hold)"
            )
        }
        Outcome::Underpowered => match d.margin {
            Some(margin) => {
                let past = delta * d.want.good_sign() <= -margin;
                let count = match d.needed {
                    None if past => "no count of units could: the change observed is past it".to_string(),
                    None => "no count can be stated: the differences do not vary".to_string(),
                    Some(_) => needs(" to show it"),
                };
                format!(
                    "{change} but {} cannot show it stays within its margin of {} ({p}; {}; {count})",
                    units(d.pairs),
                    num(margin),
                    margin_bound(d, w.places)
                )
            }
            None => {
                let why = match d.min_effect {
                    Some(x) => format!(" to detect a change of {}, the smallest that matters", num(x)),
                    None => " if the true change is as large as observed".to_string(),
                };
                format!("{change} but {} cannot show it ({p}; {})", units(d.pairs), needs(&why))
            }
        },
        Outcome::NoEffectDetected => match d.min_effect {
            Some(x) => format!(
                "{change}, and {} would have shown a change of {}: no effect detected ({p})",
                units(d.pairs),
                num(x)
            ),
            None if delta == 0.0 => format!("{change}: no effect"),
            None if delta * d.want.good_sign() < 0.0 => format!(
                "{change}, the other way from the {} it must make, and not significantly: no effect detected ({p})",
                d.want.name()
            ),
            None => format!(
                "{change}, which {} can tell from no change: no effect detected ({p})",
                units(d.pairs)
            ),
        },
        Outcome::Withheld | Outcome::Unmeasured => change,
    }
}

/// Where a guard's interval ends on its unsafe side, against its margin: "the lower bound of its
/// 95% t-interval is −0.011, above −0.02".
fn margin_bound(d: &MetricDecision, places: usize) -> String {
    let margin = crate::text::fmt_num(d.margin.unwrap_or_default());
    let interval = match d.test {
        Test::PairedT => "t-interval",
        Test::Mcnemar => "score interval (Newcombe's, for paired proportions)",
        Test::Bootstrap => "bootstrap interval",
        Test::ZTest => "interval",
    };
    let Some([lo, hi]) = d.margin_ci else {
        return format!("its differences do not vary, so no {interval} can be drawn");
    };
    let places = places + 1;
    if d.want.good_sign() > 0.0 {
        let side = if lo > -d.margin.unwrap_or_default() {
            "above"
        } else {
            "not above"
        };
        format!(
            "the lower bound of its 95% {interval} is {}, {side} −{margin}",
            signed(lo, places)
        )
    } else {
        let side = if hi < d.margin.unwrap_or_default() {
            "below"
        } else {
            "not below"
        };
        format!(
            "the upper bound of its 95% {interval} is {}, {side} +{margin}",
            signed(hi, places)
        )
    }
}

/// "precision rose 0.61 → 0.74": the metric and how it moved, with enough decimals (up to
/// six) to show the two values apart; "stayed at" when they are equal.
fn moved(name: &str, b: f64, t: f64, delta: f64, places: usize) -> String {
    if delta == 0.0 {
        return format!("{name} stayed at {b:.places$}");
    }
    let how = if delta > 0.0 { "rose" } else { "fell" };
    let shown = (places..=6)
        .map(|p| (format!("{b:.p$}"), format!("{t:.p$}")))
        .find(|(bs, ts)| bs != ts);
    match shown {
        Some((bs, ts)) => format!("{name} {how} {bs} → {ts}"),
        None => format!("{name} {how} by less than 0.000001 from {b:.places$}"),
    }
}

/// A signed figure: `+0.031`, `−0.052`.
fn signed(x: f64, places: usize) -> String {
    if x < 0.0 {
        format!("−{:.places$}", -x)
    } else {
        format!("+{x:.places$}")
    }
}

/// Why the verdict is what it is, as one sentence without the verdict: "Precision rose 0.61 →
/// 0.74 (p adj. 0.004)". It names the metrics that decided it: the regressed ones when worse,
/// the withheld when withheld, every metric that must move otherwise (and a guard's only when
/// it did not hold).
pub fn reason(d: &Decision) -> String {
    let deciding: Vec<&str> = d
        .order
        .iter()
        .filter_map(|name| d.metrics.get(name))
        .zip(&d.reasons)
        .filter(|(m, _)| match d.verdict {
            Verdict::Worse => m.outcome == Outcome::Regressed,
            Verdict::Withheld => m.outcome == Outcome::Withheld,
            // Inconclusive: what must move, and any guard whose margin was not shown (each
            // blocks better).
            Verdict::Inconclusive => {
                m.want.must_move() || (m.margin.is_some() && m.outcome != Outcome::Held)
            }
            Verdict::Better => m.want.must_move(),
        })
        .map(|(_, r)| r.as_str())
        .collect();
    let mut s = capitalised(&deciding.join("; "));
    if d.verdict == Verdict::Better {
        let guards: Vec<&MetricDecision> =
            d.metrics.values().filter(|m| !m.want.must_move()).collect();
        // Shown to hold: within a margin, or improved outright; not shown: no margin, and no
        // significant move either way.
        let shown = guards
            .iter()
            .filter(|m| matches!(m.outcome, Outcome::Held | Outcome::Improved))
            .count();
        let unshown = guards
            .iter()
            .filter(|m| m.outcome == Outcome::NoRegressionDetected)
            .count();
        s += match (shown, unshown) {
            (0, 0) => "",
            (1, 0) => "; the guard held",
            (_, 0) => "; the guards held",
            (0, 1) => "; the guard did not regress, though with no margin given it is not shown to hold",
            (0, _) => "; no guard regressed, though with no margin given they are not shown to hold",
            _ => "; the guards with a margin or a significant improvement held, and the others did not regress (no margin given: not shown to hold)",
        };
    }
    s
}

/// The decision in words, verdict first: "better. Precision rose 0.61 → 0.74 (p adj. 0.004)";
/// "better — with 1 caveat. …" when the inputs carry caveats.
pub fn headline(d: &Decision) -> String {
    format!("{}. {}", label(d), reason(d))
}

/// The verdict's word with the count of caveats: "better", "better — with 2 caveats".
pub fn label(d: &Decision) -> String {
    format!(
        "{}{}",
        d.verdict.name(),
        crate::corpus::ledger::with_caveats(d.caveats.len())
    )
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

fn singular(units: &str) -> &str {
    units
        .strip_suffix("ies")
        .map_or_else(|| units.strip_suffix('s').unwrap_or(units), |_| "query")
}

fn fmt_p(p: f64) -> String {
    crate::text::fmt_p(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A delta tested by the paired t-test: its differences' sd, mean `delta`, `pairs` pairs,
    /// the mde those give, and `p` adjusted.
    fn measured(delta: f64, p: f64, sd: f64, pairs: usize) -> Measured {
        let mde =
            crate::stats::power::t_sum(ALPHA, POWER, pairs as u64) * sd / (pairs as f64).sqrt();
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
        assert!(said.ends_with("no regression detected (p adj. 0.700; no margin given, so it is not shown to hold)"), "{said}");
        assert_eq!(crate::text::thousands(2_701_403u64), "2,701,403");
    }
}
