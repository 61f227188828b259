//! The decision (docs/reference.md, "The decision"): is the treatment better, worse, or not yet
//! knowable? "Trusted" says the judges agree; this says what the A/B shows. Pure: the metrics
//! go in, the decision comes out.
//!
//! The experiment names each decision metric with the way it must move (`[decision]`, or the
//! `primary` metrics whose catalogue entry declares a better direction). Each p-value is of the
//! delta's mean (McNemar's exact test on 0/1 outcomes, else the paired t-test). "Better" is an
//! intersection-union claim (wrong only if one of its parts is), so each part is judged at the
//! plain level; "worse" is a union claim (any one regression), so its tests are Holm-adjusted
//! over the decision metrics. Per metric:
//! * **improved**: its delta lies the wanted way with its own two-sided p < 0.05 (and, with a
//!   noise floor, the change net of the harness clears 0 too);
//! * **regressed**: without a margin, it lies the other way with `p_adjusted` < 0.05; with a
//!   margin, the test against the margin's edge (the safe-side bound beyond it) is the one
//!   adjusted;
//! * **held**: a guard with a margin whose 95% interval's unsafe bound lies within the margin
//!   (non-inferiority shown; a significant loss smaller than the margin is held);
//! * **inside the harness's noise**: its own test shows the change, but net of the harness's
//!   run-to-run change (an A/A noise floor) the interval includes 0;
//! * **underpowered**: the A/B was too small to tell: the delta (or the metric's `min_effect`)
//!   is inside the minimum detectable effect, McNemar's test cannot reach the level with so few
//!   discordant units, a guard's margin is not shown, or the lift in human units has fewer than
//!   10 labelled pairs. It says how many units would tell, by the rule that reads it;
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
mod words;
pub use noise::{AaFigure, Floor, Net, Noise};
use words::signed;
pub use words::{headline, label, reason, sentence};

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
    /// Shown by its own test, but not net of the harness's own run-to-run change (the noise
    /// floor's interval of the net change includes 0).
    InsideNoise,
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
            Outcome::InsideNoise => "inside the harness's noise",
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
    /// The test's own two-sided p against no change: what "improved" is judged by ("better"
    /// is an intersection-union claim, each part at the plain level).
    #[serde(default)]
    pub p_value: Option<f64>,
    /// The regression test's p — against no change, or against the margin's edge for a guard
    /// with one — Holm-adjusted over the decision metrics: what "regressed" is judged by
    /// ("worse" is a union claim).
    pub p_adjusted: Option<f64>,
    pub mde: Option<f64>,
    /// The units paired.
    pub pairs: usize,
    pub outcome: Outcome,
    /// For an underpowered metric: the units an A/B needs, by the test that runs, at 80% power
    /// and the two-sided 0.05 its claim is judged at, to show `min_effect` (else the observed
    /// delta), or a guard's margin; null when no count can be stated.
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
    /// The margin and the smallest effect are shares of the baseline (`"10%"`): `margin_ci` is
    /// then the relative change's interval (docs/reference.md, "Cost and latency").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub relative: bool,
    /// The relative change (treatment ÷ baseline − 1), when the margin is a percentage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_change: Option<f64>,
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
    #[serde(default, with = "crate::corpus::ledger::stored")]
    #[schemars(with = "Vec<crate::corpus::ledger::Caveat>")]
    pub caveats: Vec<crate::corpus::ledger::Caveat>,
}

/// One decision metric's figures, as the run measured them.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub baseline: f64,
    pub treatment: f64,
    pub delta: f64,
    pub ci: Option<[f64; 2]>,
    /// The test's own two-sided p against no change.
    pub p_value: Option<f64>,
    pub mde: Option<f64>,
    pub pairs: usize,
    /// The test of the mean the p-value is of, and what sizes a study by it: the per-unit
    /// differences' standard deviation, and McNemar's discordant units.
    pub test: Test,
    pub sd: Option<f64>,
    pub discordant: Option<usize>,
    /// The t-test's degrees of freedom, when not pairs − 1 (the lift in human units: its
    /// estimate's).
    pub df: Option<f64>,
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
    /// A paired delta as the decision reads it.
    pub fn of(d: &crate::stats::paired::PairedDelta) -> Measured {
        Measured {
            baseline: d.baseline,
            treatment: d.treatment,
            delta: d.delta,
            ci: d.ci,
            p_value: d.p_value,
            mde: d.mde,
            pairs: d.pairs,
            test: d.test,
            sd: d.sd,
            discordant: d.discordant,
            df: None,
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

    /// The 95% interval of the test that runs, which a guard's margin is checked against:
    /// [`Measured::interval_at`] at z₀.₉₇₅ (the t quantile on its degrees of freedom).
    pub fn test_interval(&self) -> Option<[f64; 2]> {
        self.interval_at(ALPHA)
    }

    /// The test's two-sided interval at level 1 − `alpha`: the t-interval of the mean for the
    /// paired t-test (on n − 1 degrees of freedom) and for the lift in human units (its
    /// standard error on its estimate's degrees of freedom, `df`); `None` when the differences
    /// do not vary: no interval can be drawn from them;
    /// Newcombe's square-and-add interval for McNemar's (from the four cells the means and
    /// discordant units give), the bootstrap's own 95% interval for ECE.
    pub fn interval_at(&self, alpha: f64) -> Option<[f64; 2]> {
        match self.test {
            Test::PairedT | Test::PpiT => {
                let sd = self.sd.filter(|&s| s > 0.0)?;
                if self.pairs < 2 {
                    return None;
                }
                let n = self.pairs as f64;
                let df = self.df.unwrap_or(n - 1.0);
                let half = crate::stats::power::t_upper(alpha / 2.0, df) * sd / n.sqrt();
                Some([self.delta - half, self.delta + half])
            }
            Test::Mcnemar => crate::stats::paired::newcombe_paired_at(
                self.cells()?,
                crate::stats::power::z_upper(alpha / 2.0),
            ),
            Test::Bootstrap => self.ci.filter(|_| alpha == ALPHA),
        }
    }

    /// McNemar's four cells, read back from the means and discordant units: units passing in
    /// both arms, in the treatment only, in the baseline only, in neither.
    fn cells(&self) -> Option<[f64; 4]> {
        let n = self.pairs as f64;
        let d = self.discordant? as f64;
        let change = self.delta * n;
        let treatment_only = ((d + change) / 2.0).round();
        let baseline_only = ((d - change) / 2.0).round();
        let both = (self.baseline * n - baseline_only).round();
        let neither = n - both - treatment_only - baseline_only;
        Some([both, treatment_only, baseline_only, neither])
    }

    /// The two-sided p of the test that the true mean difference is `null`: the test's own p
    /// at 0; at a margin's edge the test whose interval it inverts — the t-test of the shifted
    /// mean, or the level at which Newcombe's interval just reaches `null` (found by
    /// bisection on its quantile). `None` when no such test can be drawn (the bootstrap, away
    /// from 0; fewer than 2 pairs).
    pub fn p_against(&self, null: f64) -> Option<f64> {
        if null == 0.0 {
            return self.p_value;
        }
        if self.pairs < 2 {
            return None;
        }
        let n = self.pairs as f64;
        match self.test {
            Test::PairedT | Test::PpiT => {
                let sd = self.sd?;
                if sd == 0.0 {
                    // Every difference equal: evidence only as far as their count goes.
                    return Some(if self.delta == null {
                        1.0
                    } else {
                        (2.0 * 0.5f64.powf(n)).min(1.0)
                    });
                }
                let t = (self.delta - null) / (sd / n.sqrt());
                let df = self.df.unwrap_or(n - 1.0);
                Some((2.0 * crate::stats::power::t_upper_tail(t.abs(), df)).min(1.0))
            }
            Test::Mcnemar => {
                let cells = self.cells()?;
                // The bound on null's side, at normal quantile z: it moves away from the delta
                // as z grows.
                let bound = |z: f64| {
                    crate::stats::paired::newcombe_paired_at(cells, z).map(|[lo, hi]| {
                        if null < self.delta {
                            lo
                        } else {
                            hi
                        }
                    })
                };
                let excludes = |z: f64| {
                    bound(z).is_some_and(|b| {
                        if null < self.delta {
                            b > null
                        } else {
                            b < null
                        }
                    })
                };
                if !excludes(1e-9) {
                    return Some(1.0);
                }
                let (mut lo, mut hi) = (1e-9, 40.0);
                if excludes(hi) {
                    return Some(0.0);
                }
                for _ in 0..100 {
                    let mid = (lo + hi) / 2.0;
                    if excludes(mid) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                Some((2.0 * crate::stats::power::normal_upper_tail(lo)).min(1.0))
            }
            Test::Bootstrap => None,
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

/// Where a metric's regression test is drawn: 0 without a margin; with one, the margin's edge
/// on the unsafe side (−m for a metric that must not fall, +m for one that must not rise).
pub fn regression_null(w: &Wanted) -> f64 {
    w.margin.map_or(0.0, |m| -m * w.want.good_sign())
}

/// One metric's outcome from what the run measured. `p_worse` is its regression test's p
/// (against [`regression_null`]), Holm-adjusted over the decision metrics; `net` is the
/// change net of the harness's noise, when the experiment names a noise floor. Every size is
/// for the rule that reads it: improving and holding are each judged at the plain two-sided
/// 0.05, so a study is sized at that level.
pub fn outcome(
    w: &Wanted,
    reading: &Reading,
    p_worse: Option<f64>,
    net: Option<&noise::Net>,
) -> (Outcome, Option<u64>) {
    let m = match reading {
        Reading::Withheld => return (Outcome::Withheld, None),
        Reading::Unmeasured => return (Outcome::Unmeasured, None),
        Reading::Measured(m) => m,
    };
    let level = ALPHA;
    // Too few pairs to decide on at all.
    if m.pairs < m.min_pairs {
        return (Outcome::Underpowered, Some(m.min_pairs as u64));
    }
    let good = m.delta * w.want.good_sign();
    // A regression: shown to lose more than the margin allows (any loss, without one), with
    // family-wise control over the decision metrics.
    if p_worse.is_some_and(|p| p < ALPHA) && good + w.margin.unwrap_or(0.0) < 0.0 {
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
    if m.p_value.is_some_and(|p| p < ALPHA) && good > 0.0 {
        // Shown by its own test; with a noise floor, only if it clears the harness's noise too.
        return match net {
            Some(net) if !net.clears(w.want.good_sign()) => (Outcome::InsideNoise, None),
            _ => (Outcome::Improved, None),
        };
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
    if w.min_effect.is_none() && good < 0.0 {
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

/// One decision metric as the decision takes it: what must become of it, what the run
/// measured, how its sentences name it, and the harness's noise when a noise floor is named.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub wanted: Wanted,
    pub reading: Reading,
    pub words: Words,
    pub floor: Option<noise::Floor>,
    /// The relative change, for a metric whose margin is a percentage.
    pub relative: Option<crate::stats::ratio::Relative>,
}

/// A guard whose margin is a share of the baseline: held when the relative change's 95%
/// interval has its unsafe bound within the margin; regressed when the test against the
/// margin's edge (Holm-adjusted) is significant and the change lies beyond it; else not shown
/// (no count of units is stated for a ratio).
fn relative_outcome(
    w: &Wanted,
    rel: Option<&crate::stats::ratio::Relative>,
    p_worse: Option<f64>,
) -> (Outcome, Option<u64>) {
    let (Some(rel), Some(margin)) = (rel, w.margin) else {
        return (Outcome::Underpowered, None);
    };
    let good = rel.value * w.want.good_sign();
    if p_worse.is_some_and(|p| p < ALPHA) && good + margin < 0.0 {
        return (Outcome::Regressed, None);
    }
    let unsafe_bound = rel
        .ci
        .map(|[lo, hi]| if w.want.good_sign() > 0.0 { lo } else { -hi });
    if unsafe_bound.is_some_and(|b| b > -margin) {
        return (Outcome::Held, None);
    }
    (Outcome::Underpowered, None)
}

/// The decision over `rows`.
pub fn decide(rows: &[Row]) -> Decision {
    // The regression tests, one per metric, Holm-adjusted as one family: "worse" is a union
    // claim.
    let worse: Vec<Option<f64>> = rows
        .iter()
        .map(|r| match &r.reading {
            // A percentage margin: the test of the ratio against its edge.
            Reading::Measured(_) if r.wanted.relative && r.wanted.margin.is_some() => {
                r.relative.and_then(|x| x.p_edge)
            }
            Reading::Measured(m) => m.p_against(regression_null(&r.wanted)),
            _ => None,
        })
        .collect();
    let worse = crate::stats::holm::holm(&worse);
    let mut out = BTreeMap::new();
    let mut units = BTreeMap::new();
    let mut reasons = Vec::new();
    let mut order = Vec::new();
    for (row, p_worse) in rows.iter().zip(worse) {
        let (w, reading, words) = (&row.wanted, &row.reading, &row.words);
        let m = match reading {
            Reading::Measured(m) => Some(m),
            _ => None,
        };
        let noise = row.floor.as_ref().map(|f| f.noise(m));
        let net = noise.as_ref().and_then(|n| n.net.as_ref());
        let relative_guard = w.relative && w.margin.is_some();
        let (o, needed) = match reading {
            Reading::Measured(_) if relative_guard => {
                relative_outcome(w, row.relative.as_ref(), p_worse)
            }
            _ if w.relative => {
                // A smallest effect given as a share: the baseline's share, in its units.
                let mut absolute = w.clone();
                absolute.min_effect = w
                    .min_effect
                    .zip(m.map(|m| m.baseline.abs()))
                    .map(|(x, b)| x * b);
                outcome(&absolute, reading, p_worse, net)
            }
            _ => outcome(w, reading, p_worse, net),
        };
        let d = MetricDecision {
            want: w.want,
            baseline: m.map(|m| m.baseline),
            treatment: m.map(|m| m.treatment),
            delta: m.map(|m| m.delta),
            ci: m.and_then(|m| m.ci),
            p_value: m.and_then(|m| m.p_value),
            p_adjusted: p_worse,
            mde: m.and_then(|m| m.mde),
            pairs: m.map_or(0, |m| m.pairs),
            outcome: o,
            needed,
            test: m.map_or_else(Test::default, |m| m.test),
            margin: w.margin,
            margin_ci: if relative_guard {
                row.relative.and_then(|r| r.ci)
            } else {
                w.margin.and(m.and_then(Measured::test_interval))
            },
            min_effect: w.min_effect,
            relative: w.relative,
            relative_change: row.relative.filter(|_| w.relative).map(|r| r.value),
            noise,
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
    /// Whether the metric is itself a treatment − baseline difference (the lifts): its
    /// sentence says where it went ("rose to +0.046"), not its arms' means, which would read
    /// as if the lift were one of them.
    pub difference: bool,
}

#[cfg(test)]
mod simulate;
#[cfg(test)]
mod tests;
