//! The threshold sweep (docs/guides/threshold-sweep.md), pure: the grid of policy values, the
//! figures of one grid point from its units, the requirement rule, the choice and the hold-out
//! split. `analysis::sweep` replays each point into units; this module turns units into
//! figures and a recommendation. No files, no clock; every bootstrap is seeded, and no figure
//! depends on the thread count.
//!
//! A *unit* is a target (review: each figure's sums over its runs, averaged over runs) or a
//! query (its runs' sums). A unit is a vector of sums in the layout of [`review`] or
//! [`queries`]; every figure is a function of the sums over a set of units, so an interval is a
//! bootstrap over units and a paired comparison compares per-unit values.

use serde::Serialize;

use crate::stats::bootstrap::multinomial;
use crate::stats::calibration::{ece, round9, BinSums, BINS};
use crate::stats::paired::{paired_delta, PairedDelta};
use crate::stats::patterns::patterns_of;
use crate::stats::quantile::percentile;
use crate::stats::rng::Rng;

/// The most grid points one sweep replays.
pub const MAX_POINTS: usize = 10_000;

/// Names consecutive slots from 0: each name a `pub const` one past the one before it.
macro_rules! slots {
    ($($(#[$doc:meta])* $name:ident,)*) => { slots!(@ 0usize; $($(#[$doc])* $name,)*); };
    (@ $at:expr; $(#[$doc:meta])* $name:ident, $($rest:tt)*) => {
        $(#[$doc])*
        pub const $name: usize = $at;
        slots!(@ $at + 1; $($rest)*);
    };
    (@ $at:expr;) => {};
}

/// The layout of a review unit: one target's figures, each a mean over its runs.
pub mod review {
    slots! {
        /// Merged findings that reach the user: actionable or FYI.
        SURFACED,
        ACTIONABLE,
        FYI,
        DROPPED,
        /// Actionable merged findings with a judge composite.
        JUDGED_ACTIONABLE,
        /// Their composites, summed.
        COMPOSITE_SUM,
        /// Merged findings (any tier) whose composite is at least `--confirm-at`.
        CONFIRMED,
        /// Those of them that are actionable.
        CONFIRMED_ACTIONABLE,
        /// Merged findings the validator rejected.
        REJECTED,
        /// What the target's reviewer calls cost under the point's policy: a target the
        /// policy skips costs nothing.
        COST,
        /// 1 for a target whose cost is known (its calls reported one, or it was skipped).
        COSTED,
    }
    pub const LEN: usize = COSTED + 1;
}

/// The layout of a query unit: one query's sums over its runs.
pub mod queries {
    slots! {
        /// Replayed (query, run) pairs.
        N,
        /// The recovery gate fired.
        FIRED,
        /// It fired although the first pass was right.
        UNNECESSARY,
        /// First-pass outcome known, and right.
        FIRST_PASS_LABELLED,
        FIRST_PASS_RIGHT,
        /// Final outcome known, and right.
        LABELLED,
        RIGHT,
        /// Final confidences, summed.
        CONFIDENCE_SUM,
        /// Per calibration bin b: labelled count at `BIN + 3b`, confidence sum at `+1`, right
        /// at `+2`.
        BIN,
    }
    pub const LEN: usize = BIN + 3 * super::BINS;
}

/// What a sweep replays: reviewer returns (units are targets) or query traces (units are
/// queries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Review,
    Queries,
}

impl Side {
    /// What a unit is, for sentences.
    pub fn units(self) -> &'static str {
        match self {
            Side::Review => "targets",
            Side::Queries => "queries",
        }
    }

    /// The figures a sweep of this side reports, in table order.
    pub fn figures(self) -> &'static [Figure] {
        match self {
            Side::Review => &REVIEW_FIGURES,
            Side::Queries => &QUERY_FIGURES,
        }
    }

    /// `--prefer`'s default: the most actionable findings, or the best final accuracy.
    pub fn default_prefer(self) -> Prefer {
        let metric = match self {
            Side::Review => "actionable",
            Side::Queries => "final_accuracy",
        };
        Prefer {
            metric: metric.into(),
            max: true,
        }
    }
}

/// A figure of a sweep point, declared once: its name, its words and how it is computed from
/// summed unit vectors.
#[derive(Clone, Copy)]
pub struct Figure {
    pub name: &'static str,
    /// Its words in the report.
    pub label: &'static str,
    /// Decimals in the report.
    pub places: usize,
    /// Its value from the sums over some units; `None` where it is undefined (no judged
    /// finding, no labelled query).
    value: fn(&[f64]) -> Option<f64>,
    /// Whether one unit's own value is meaningful (every figure but ECE), so that the
    /// recommendation is compared with the current setting unit by unit.
    pub per_unit: bool,
    /// Whether it is measured by the judges (precision, judged actionable, recall): it needs
    /// verdicts, and the trust verdict withholds it.
    pub judged: bool,
    /// Which way it gets better: what `--frontier` judges points by.
    pub better: crate::replay::Better,
}

impl Figure {
    pub fn value(&self, sums: &[f64]) -> Option<f64> {
        (self.value)(sums).filter(|x| x.is_finite())
    }
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0).then(|| num / den)
}

const fn sum(name: &'static str, label: &'static str, at: usize) -> Figure {
    Figure {
        name,
        label,
        places: 2,
        value: match at {
            review::SURFACED => |s| Some(s[review::SURFACED]),
            review::ACTIONABLE => |s| Some(s[review::ACTIONABLE]),
            review::FYI => |s| Some(s[review::FYI]),
            review::DROPPED => |s| Some(s[review::DROPPED]),
            review::JUDGED_ACTIONABLE => |s| Some(s[review::JUDGED_ACTIONABLE]),
            _ => |s| Some(s[review::REJECTED]),
        },
        per_unit: true,
        judged: at == review::JUDGED_ACTIONABLE,
        better: match at {
            review::DROPPED | review::REJECTED => crate::replay::Better::Lower,
            _ => crate::replay::Better::Higher,
        },
    }
}

/// The review figures: counts summed over targets (mean over runs), precision and recall
/// pooled over them, and the cost per target where the calls report it.
pub const REVIEW_FIGURES: [Figure; 9] = [
    sum("surfaced", "surfaced (actionable + FYI)", review::SURFACED),
    sum("actionable", "actionable", review::ACTIONABLE),
    sum("fyi", "FYI", review::FYI),
    sum("dropped", "dropped", review::DROPPED),
    Figure {
        name: "precision",
        label: "precision (mean judge composite of actionable)",
        places: 3,
        value: |s| ratio(s[review::COMPOSITE_SUM], s[review::JUDGED_ACTIONABLE]),
        per_unit: true,
        judged: true,
        better: crate::replay::Better::Higher,
    },
    sum(
        "judged_actionable",
        "judged actionable",
        review::JUDGED_ACTIONABLE,
    ),
    Figure {
        name: "recall",
        label: "recall (confirmed findings that are actionable)",
        places: 3,
        value: |s| ratio(s[review::CONFIRMED_ACTIONABLE], s[review::CONFIRMED]),
        per_unit: true,
        judged: true,
        better: crate::replay::Better::Higher,
    },
    sum("rejected", "rejected by the validator", review::REJECTED),
    Figure {
        name: COST,
        label: "cost per target (USD)",
        places: 4,
        value: |s| ratio(s[review::COST], s[review::COSTED]),
        per_unit: true,
        judged: false,
        better: crate::replay::Better::Lower,
    },
];

/// The query figures, over the (query, run) pairs.
pub const QUERY_FIGURES: [Figure; 6] = [
    Figure {
        name: "recovery_gate_rate",
        label: "recovery gate rate",
        places: 3,
        value: |s| ratio(s[queries::FIRED], s[queries::N]),
        per_unit: true,
        judged: false,
        better: crate::replay::Better::Higher,
    },
    Figure {
        name: "unnecessary_recovery_rate",
        label: "unnecessary recovery rate",
        places: 3,
        value: |s| ratio(s[queries::UNNECESSARY], s[queries::N]),
        per_unit: true,
        judged: false,
        better: crate::replay::Better::Lower,
    },
    Figure {
        name: "first_pass_success",
        label: "first-pass success",
        places: 3,
        value: |s| {
            ratio(
                s[queries::FIRST_PASS_RIGHT],
                s[queries::FIRST_PASS_LABELLED],
            )
        },
        per_unit: true,
        judged: false,
        better: crate::replay::Better::Higher,
    },
    Figure {
        name: "final_accuracy",
        label: "final accuracy",
        places: 3,
        value: |s| ratio(s[queries::RIGHT], s[queries::LABELLED]),
        per_unit: true,
        judged: false,
        better: crate::replay::Better::Higher,
    },
    Figure {
        name: "confidence_mean",
        label: "mean final confidence",
        places: 3,
        value: |s| ratio(s[queries::CONFIDENCE_SUM], s[queries::N]),
        per_unit: true,
        judged: false,
        better: crate::replay::Better::Higher,
    },
    Figure {
        name: "ece",
        label: "calibration error (ECE)",
        places: 3,
        value: |s| {
            let n = s[queries::LABELLED];
            (n > 0.0).then(|| {
                let sums = (0..BINS).map(|b| {
                    let at = queries::BIN + 3 * b;
                    BinSums {
                        count: s[at],
                        confidence: s[at + 1],
                        hits: s[at + 2],
                    }
                });
                ece(sums, n)
            })
        },
        per_unit: false,
        judged: false,
        better: crate::replay::Better::Lower,
    },
];

/// The cost figure: what a target's reviewer calls cost, the review catalogue's metric of
/// that name. Measured only where the returns record a cost.
pub const COST: &str = crate::replay::review_metrics::COST_USD.metric().name;

/// What to sweep: `calibench sweep`'s flags, or a `[[sweep]]` table of the experiment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spec {
    /// `baseline` or `treatment`.
    pub arm: String,
    pub vary: Vec<Vary>,
    pub require: Vec<Requirement>,
    pub prefer: Option<Prefer>,
    /// The held-out share; `None`: 0.5 with requirements, else no hold-out; 0: none, said
    /// unchecked.
    pub holdout: Option<f64>,
    pub confirm_at: f64,
    /// Two figures whose trade-off the sweep marks: the points no other point beats on both.
    pub frontier: Option<Frontier>,
}

/// `--frontier X:Y`: the two figures of a trade-off, such as `cost_usd:precision`. A point is
/// on the frontier when no other point beats it on both, each judged on intervals: a point
/// beats another on a figure when its 95% interval lies wholly on the figure's better side of
/// the other's. The trade-off plot puts X across and Y up.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Frontier {
    pub x: String,
    pub y: String,
}

impl std::str::FromStr for Frontier {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            Some((x, y)) if !x.trim().is_empty() && !y.trim().is_empty() && x != y => {
                Ok(Frontier {
                    x: x.trim().to_string(),
                    y: y.trim().to_string(),
                })
            }
            _ => Err(format!(
                "`{s}` is not two different figures as X:Y, such as cost_usd:precision"
            )),
        }
    }
}

impl std::fmt::Display for Frontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.x, self.y)
    }
}

/// Which points are on the frontier of figures `x` and `y` (positions in `side`'s figures): a
/// point with both figures and no other point that beats it on both. `b` beats `a` on a figure
/// when `b`'s interval (its value, without one) lies wholly on the better side of `a`'s, so two
/// points the intervals cannot tell apart never dominate each other.
pub fn frontier(side: Side, points: &[Vec<Estimate>], [x, y]: [usize; 2]) -> Vec<bool> {
    let figures = side.figures();
    let span = |e: &Estimate| -> Option<[f64; 2]> { e.ci.or(e.value.map(|v| [v, v])) };
    let beats = |b: &Estimate, a: &Estimate, f: &Figure| -> bool {
        match (span(b), span(a)) {
            (Some([b_lo, b_hi]), Some([a_lo, a_hi])) => match f.better {
                crate::replay::Better::Lower => b_hi < a_lo,
                crate::replay::Better::Higher => b_lo > a_hi,
            },
            _ => false,
        }
    };
    let placed = |p: &[Estimate]| p[x].value.is_some() && p[y].value.is_some();
    points
        .iter()
        .enumerate()
        .map(|(i, a)| {
            placed(a)
                && !points.iter().enumerate().any(|(j, b)| {
                    j != i
                        && placed(b)
                        && beats(&b[x], &a[x], &figures[x])
                        && beats(&b[y], &a[y], &figures[y])
                })
        })
        .collect()
}

/// A merged finding counts as confirmed, for recall, from this judge composite up.
pub const CONFIRM_AT: f64 = 0.5;

/// The fewest units a part of a sweep may have when a requirement is judged on it: a 95%
/// bootstrap interval over fewer units has a handful of distinct resamples and nothing like
/// its coverage (two units give three).
pub const MIN_PART: usize = 10;

/// `confirm_at`, or why not: a judge composite, in [0, 1].
pub fn confirm_at(x: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(format!(
            "{} is not a judge composite in [0, 1]",
            crate::text::fmt_num(x)
        ))
    }
}

/// A `[[sweep]]` table of `experiment.toml`: a sweep `calibench run` makes beside the run, with
/// the flags of `calibench sweep` as keys.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    /// The arm to sweep: `baseline` or `treatment`.
    pub arm: String,
    /// Each policy key of the arm (`review.actionable_from`) with its values: a comma list
    /// (`"25,50,75"`) or an inclusive range `"START:STOP:STEP"`. Keys vary in name order.
    pub vary: std::collections::BTreeMap<String, String>,
    /// Requirements, each `METRIC>=X` or `METRIC<=X`.
    pub require: Option<Vec<String>>,
    /// `max:METRIC` or `min:METRIC`; default `max:actionable` (review) or
    /// `max:final_accuracy` (queries).
    pub prefer: Option<String>,
    /// The share of targets (queries) held out of the choice and used to check it; default
    /// 0.5 with requirements; 0 chooses on every unit, unchecked.
    pub holdout: Option<f64>,
    /// A merged finding is confirmed from this judge composite up, in [0, 1]. Default 0.5.
    pub confirm_at: Option<f64>,
    /// Two figures whose trade-off to mark, `X:Y` (`cost_usd:precision`).
    pub frontier: Option<String>,
}

impl RawSweep {
    /// The sweep, or the key that is wrong and why.
    pub fn check(self) -> Result<Spec, (String, String)> {
        if !matches!(self.arm.as_str(), "baseline" | "treatment") {
            return Err((
                "arm".into(),
                format!("`{}` is not baseline or treatment", self.arm),
            ));
        }
        if self.vary.is_empty() {
            return Err(("vary".into(), "names no key to vary".into()));
        }
        let vary = self
            .vary
            .iter()
            .map(|(k, v)| {
                format!("{k}={v}")
                    .parse::<Vary>()
                    .map_err(|e| (format!("vary.{k}"), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        grid(&vary).map_err(|e| ("vary".to_string(), e))?;
        let require = self
            .require
            .unwrap_or_default()
            .iter()
            .map(|r| r.parse().map_err(|e| ("require".to_string(), e)))
            .collect::<Result<Vec<_>, _>>()?;
        let prefer = self
            .prefer
            .map(|p| p.parse().map_err(|e| ("prefer".to_string(), e)))
            .transpose()?;
        if let Some(h) = self.holdout.filter(|h| !(*h >= 0.0 && *h < 1.0)) {
            return Err((
                "holdout".into(),
                format!(
                    "{} is not a share from 0 (no hold-out) up to but not including 1",
                    crate::text::fmt_num(h)
                ),
            ));
        }
        if let Some(c) = self.confirm_at {
            confirm_at(c).map_err(|e| ("confirm_at".to_string(), e))?;
        }
        Ok(Spec {
            arm: self.arm,
            vary,
            require,
            prefer,
            holdout: self.holdout,
            confirm_at: self.confirm_at.unwrap_or(CONFIRM_AT),
            frontier: self
                .frontier
                .map(|f| f.parse().map_err(|e| ("frontier".to_string(), e)))
                .transpose()?,
        })
    }
}

/// A figure of one grid point: its value and 95% bootstrap interval over units.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    pub value: Option<f64>,
    pub ci: Option<[f64; 2]>,
}

/// One `--vary KEY=VALUES`: the key inside the arm's tables and its values, as TOML text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Vary {
    pub key: String,
    pub values: Vec<String>,
}

impl std::str::FromStr for Vary {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (key, values) =
            crate::input::toml::assignment(s, "VALUES", "review.actionable_from", "25,50,75")?;
        let list = crate::input::toml::split_list(values);
        let ranged = list.len() == 1 && values.contains(':') && !values.starts_with(['[', '"']);
        let values = if ranged {
            range(values)?
        } else {
            if list.iter().any(|v| v.is_empty()) {
                return Err(format!(
                    "`{values}` has an empty value: write a comma list such as 25,50,75"
                ));
            }
            list.into_iter()
                .map(crate::input::toml::canonical)
                .collect::<Result<Vec<_>, _>>()?
        };
        Ok(Vary {
            key: key.to_string(),
            values,
        })
    }
}

/// A grid value as JSON: a whole number or a number where it reads as one, else the text.
pub fn json_value(text: &str) -> serde_json::Value {
    if let Ok(i) = text.parse::<i64>() {
        return serde_json::Value::from(i);
    }
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => serde_json::Number::from_f64(x)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        _ => serde_json::Value::String(text.trim_matches('"').to_string()),
    }
}

/// `START:STOP:STEP`, inclusive, each value rounded to 9 decimals.
fn range(text: &str) -> Result<Vec<String>, String> {
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    let [start, stop, step] = parts[..] else {
        return Err(format!(
            "`{text}` is not a range START:STOP:STEP (e.g. 0.30:0.80:0.05)"
        ));
    };
    let number = |what: &str, v: &str| -> Result<f64, String> {
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("the range's {what} `{v}` is not a number"))
    };
    let (a, b, d) = (
        number("start", start)?,
        number("stop", stop)?,
        number("step", step)?,
    );
    if d <= 0.0 {
        return Err(format!(
            "the range's step is {step}: it must be more than 0"
        ));
    }
    if a > b {
        return Err(format!(
            "the range {text} is inverted: its start is above its stop"
        ));
    }
    let count = ((b - a) / d + 1e-9).floor() + 1.0;
    if count > MAX_POINTS as f64 {
        return Err(format!(
            "the range {text} has {count} values; a sweep replays at most {MAX_POINTS} points"
        ));
    }
    let whole = [start, stop, step]
        .iter()
        .all(|v| !v.contains(['.', 'e', 'E']));
    Ok((0..count as usize)
        .map(|i| {
            let x = round9(a + i as f64 * d);
            if whole {
                format!("{x:.0}")
            } else {
                let s = format!("{x:.9}");
                let s = s.trim_end_matches('0');
                format!("{s}{}", if s.ends_with('.') { "0" } else { "" })
            }
        })
        .collect())
}

/// Every grid point, as the values of each `--vary` in order (the first varies slowest).
/// Refused: more than [`MAX_POINTS`] points, or one key varied twice.
pub fn grid(vary: &[Vary]) -> Result<Vec<Vec<String>>, String> {
    for (i, v) in vary.iter().enumerate() {
        if vary[..i].iter().any(|w| w.key == v.key) {
            return Err(format!("`{}` is varied twice", v.key));
        }
    }
    let count = vary
        .iter()
        .try_fold(1usize, |n, v| n.checked_mul(v.values.len()))
        .filter(|&n| n <= MAX_POINTS);
    if count.is_none() {
        let sizes: Vec<String> = vary.iter().map(|v| v.values.len().to_string()).collect();
        return Err(format!(
            "the grid has {} points; a sweep replays at most {MAX_POINTS}",
            sizes.join(" × ")
        ));
    }
    let mut points: Vec<Vec<String>> = vec![Vec::new()];
    for v in vary {
        points = points
            .into_iter()
            .flat_map(|p| {
                v.values.iter().map(move |x| {
                    let mut q = p.clone();
                    q.push(x.clone());
                    q
                })
            })
            .collect();
    }
    Ok(points)
}

/// `--require METRIC>=X` or `METRIC<=X`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Requirement {
    pub metric: String,
    /// `>=` (the interval's lower bound must reach `bound`) or `<=` (its upper bound).
    pub at_least: bool,
    pub bound: f64,
}

impl std::str::FromStr for Requirement {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (metric, at_least, bound) = if let Some((m, b)) = s.split_once(">=") {
            (m, true, b)
        } else if let Some((m, b)) = s.split_once("<=") {
            (m, false, b)
        } else {
            return Err(format!(
                "`{s}` is not METRIC>=X or METRIC<=X (e.g. final_accuracy>=0.8)"
            ));
        };
        let bound = bound
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("`{}` in `{s}` is not a number", bound.trim()))?;
        Ok(Requirement {
            metric: metric.trim().to_string(),
            at_least,
            bound,
        })
    }
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = if self.at_least { ">=" } else { "<=" };
        write!(f, "{}{op}{}", self.metric, self.bound)
    }
}

impl Requirement {
    /// Whether `e` meets it: the interval's bound on the unsafe side clears the requirement's
    /// (reaching it counts); a point without an interval meets nothing.
    pub fn met_by(&self, e: &Estimate) -> bool {
        match e.ci {
            Some([lo, _]) if self.at_least => lo >= self.bound,
            Some([_, hi]) => hi <= self.bound,
            None => false,
        }
    }

    /// How far the unsafe bound falls short (0 when met; the whole bound without an interval).
    fn shortfall(&self, e: &Estimate) -> f64 {
        match e.ci {
            Some([lo, _]) if self.at_least => (self.bound - lo).max(0.0),
            Some([_, hi]) => (hi - self.bound).max(0.0),
            None => f64::INFINITY,
        }
    }
}

/// `--prefer max:METRIC` or `min:METRIC`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prefer {
    pub metric: String,
    pub max: bool,
}

impl std::str::FromStr for Prefer {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (max, metric) = match s.split_once(':') {
            Some(("max", m)) => (true, m),
            Some(("min", m)) => (false, m),
            _ => return Err(format!("`{s}` is not max:METRIC or min:METRIC")),
        };
        Ok(Prefer {
            metric: metric.trim().to_string(),
            max,
        })
    }
}

impl std::fmt::Display for Prefer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = if self.max { "max" } else { "min" };
        write!(f, "{how}:{}", self.metric)
    }
}

/// The figure `metric` of `side`, or why not (listing the figures it has).
pub fn figure_index(side: Side, metric: &str, flag: &str) -> Result<usize, String> {
    side.figures()
        .iter()
        .position(|f| f.name == metric)
        .ok_or_else(|| {
            let names: Vec<&str> = side.figures().iter().map(|f| f.name).collect();
            format!(
                "{flag} names `{metric}`, which a sweep of {} does not measure; it has {}",
                side.units(),
                names.join(", ")
            )
        })
}

/// The figures of one grid point over `units` (those of `chosen`, every unit when `None`):
/// each with its 95% percentile interval from `replicates` resamples of the units, replicate
/// `i` seeded by `(seed, i)`. The same seed gives every point the same resamples.
pub fn estimate(
    side: Side,
    units: &[Vec<f64>],
    chosen: Option<&[usize]>,
    replicates: usize,
    seed: u64,
) -> Vec<Estimate> {
    let picked: Vec<&[f64]> = match chosen {
        Some(idx) => idx.iter().map(|&i| units[i].as_slice()).collect(),
        None => units.iter().map(Vec::as_slice).collect(),
    };
    let dim = units.first().map_or(0, Vec::len);
    let total = |rows: &mut dyn Iterator<Item = (&[f64], f64)>| {
        let mut s = vec![0.0; dim];
        for (row, w) in rows {
            for (acc, x) in s.iter_mut().zip(row) {
                *acc += x * w;
            }
        }
        s
    };
    let sums = total(&mut picked.iter().map(|r| (*r, 1.0)));
    let figures = side.figures();
    let n = picked.len();
    // Units alike contribute alike: a replicate draws how many it takes of each pattern.
    let keys = picked.iter().map(|r| Bits(r));
    let (first, sizes) = patterns_of(keys, usize::MAX).unwrap_or_default();
    // Each pattern's non-zero sums only: a query's calibration bins are mostly zeros.
    let sparse: Vec<Vec<(usize, f64)>> = first
        .iter()
        .map(|&i| {
            picked[i]
                .iter()
                .enumerate()
                .filter(|(_, x)| **x != 0.0)
                .map(|(k, x)| (k, *x))
                .collect()
        })
        .collect();
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(replicates); figures.len()];
    let mut weights = vec![0u32; first.len()];
    let mut s = vec![0.0; dim];
    for r in 0..replicates {
        if n == 0 {
            break;
        }
        let mut rng = Rng::for_replicate(seed, r as u64);
        multinomial(&sizes, n as u64, &mut rng, &mut weights);
        s.iter_mut().for_each(|x| *x = 0.0);
        for (row, &w) in sparse.iter().zip(&weights) {
            if w > 0 {
                let w = f64::from(w);
                for &(k, x) in row {
                    s[k] += x * w;
                }
            }
        }
        for (f, out) in figures.iter().zip(draws.iter_mut()) {
            if let Some(x) = f.value(&s) {
                out.push(x);
            }
        }
    }
    figures
        .iter()
        .zip(draws)
        .map(|(f, mut d)| {
            d.sort_unstable_by(f64::total_cmp);
            let ci = match (percentile(&d, 0.025), percentile(&d, 0.975)) {
                (Some(lo), Some(hi)) if n > 0 => Some([lo, hi]),
                _ => None,
            };
            // To 9 decimals, the resolution calibench compares at: no float noise in a table.
            Estimate {
                value: if n > 0 {
                    f.value(&sums).map(round9)
                } else {
                    None
                },
                ci: ci.map(|c| c.map(round9)),
            }
        })
        .collect()
}

/// A unit's sums compared bit for bit: units alike contribute alike.
struct Bits<'a>(&'a [f64]);

impl PartialEq for Bits<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(other.0)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl Eq for Bits<'_> {}

impl std::hash::Hash for Bits<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for x in self.0 {
            state.write_u64(x.to_bits());
        }
    }
}

/// What the sweep recommends.
#[derive(Clone, Debug, PartialEq)]
pub enum Choice {
    /// The point meeting every requirement that `--prefer` likes best.
    Recommended(usize),
    /// The arm's own setting meets every requirement and no point does better by `--prefer`
    /// (the best, given here, only ties it): keep it.
    Keep(usize),
    /// None meets them: the point closest to meeting them (fewest missed, then least short,
    /// then first in grid order), with the requirements it misses.
    Closest(usize, Vec<Requirement>),
}

/// How many of `points` meet every requirement.
pub fn meeting(side: Side, points: &[Vec<Estimate>], requirements: &[Requirement]) -> usize {
    points
        .iter()
        .filter(|p| misses(side, p, requirements).is_empty())
        .count()
}

/// The requirements a point's figures (`figures`, in the side's order) do not meet.
pub fn misses(side: Side, figures: &[Estimate], requirements: &[Requirement]) -> Vec<Requirement> {
    requirements
        .iter()
        .filter(|r| {
            figure_index(side, &r.metric, "")
                .ok()
                .is_some_and(|i| !r.met_by(&figures[i]))
        })
        .cloned()
        .collect()
}

/// Chooses among `points` (each point's figures, in the side's order), against `current`, the
/// arm's own setting on the same units: a point is recommended only when it does strictly
/// better by `prefer` than a current setting that meets the requirements.
pub fn choose(
    side: Side,
    points: &[Vec<Estimate>],
    current: &[Estimate],
    requirements: &[Requirement],
    prefer: &Prefer,
) -> Option<Choice> {
    let at = |name: &str| figure_index(side, name, "").ok();
    let needs: Vec<(usize, &Requirement)> = requirements
        .iter()
        .filter_map(|r| at(&r.metric).map(|i| (i, r)))
        .collect();
    let by = at(&prefer.metric)?;
    let meets = |p: &[Estimate]| needs.iter().all(|(i, r)| r.met_by(&p[*i]));
    let beats = |v: f64, b: f64| if prefer.max { v > b } else { v < b };
    let mut best: Option<(usize, f64)> = None;
    for (k, p) in points.iter().enumerate() {
        let Some(v) = p[by].value.filter(|_| meets(p)) else {
            continue;
        };
        if best.is_none_or(|(_, b)| beats(v, b)) {
            best = Some((k, v));
        }
    }
    if let Some((k, v)) = best {
        let kept = current
            .get(by)
            .and_then(|c| c.value)
            .is_some_and(|c| meets(current) && !beats(v, c));
        return Some(if kept {
            Choice::Keep(k)
        } else {
            Choice::Recommended(k)
        });
    }
    // Without requirements, nothing recommended means no point has the figure to prefer by:
    // there is nothing to be close to.
    if needs.is_empty() {
        return None;
    }
    let mut closest: Option<(usize, usize, f64)> = None;
    for (k, p) in points.iter().enumerate() {
        let missed = needs.iter().filter(|(i, r)| !r.met_by(&p[*i])).count();
        let short: f64 = needs.iter().map(|(i, r)| r.shortfall(&p[*i])).sum();
        if closest.is_none_or(|(_, m, s)| (missed, short) < (m, s)) {
            closest = Some((k, missed, short));
        }
    }
    closest.map(|(k, _, _)| Choice::Closest(k, misses(side, &points[k], requirements)))
}

/// Whether every point gives exactly the figures of the first: the varied keys move nothing
/// the sweep measures.
pub fn all_tie(points: &[Vec<Estimate>]) -> bool {
    points.windows(2).all(|w| w[0] == w[1])
}

/// Splits `ids` (targets or queries) at random, seeded, into a choosing part and a held-out
/// part of about `fraction`: indices into `ids`, each part ascending. Refused: a fraction
/// outside (0, 1), or a part with fewer than [`MIN_PART`] units.
pub fn split(ids: &[String], fraction: f64, seed: u64, units: &str) -> Result<Parts, String> {
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(format!(
            "--holdout {} is not a fraction between 0 and 1",
            crate::text::fmt_num(fraction)
        ));
    }
    // Shuffled by id order, not by the order the corpus lists them.
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by(|&a, &b| ids[a].cmp(&ids[b]));
    let mut rng = Rng::for_replicate(seed ^ 0x005E_ED0F_5EED, 0);
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let held = (ids.len() as f64 * fraction).round() as usize;
    let (mut held_out, mut choosing) = (order[..held].to_vec(), order[held..].to_vec());
    if held_out.len() < MIN_PART || choosing.len() < MIN_PART {
        return Err(format!(
            "--holdout {} of {} {units} leaves {} to choose on and {} held out: a requirement is judged on a 95% bootstrap interval, which needs at least {MIN_PART} {units} in each part",
            crate::text::fmt_num(fraction),
            ids.len(),
            choosing.len(),
            held_out.len()
        ));
    }
    held_out.sort_unstable();
    choosing.sort_unstable();
    Ok((choosing, held_out))
}

/// A split's unit indices: (choosing, held out), each in unit order.
pub type Parts = (Vec<usize>, Vec<usize>);

/// The split a sweep of `ids` makes: none without a hold-out (`fraction` 0 or none), else
/// [`split`]. With requirements every part they are judged on, the whole when nothing is held
/// out, needs [`MIN_PART`] units.
pub fn parts(
    ids: &[String],
    fraction: Option<f64>,
    requirements: bool,
    seed: u64,
    units: &str,
) -> Result<Option<Parts>, String> {
    match fraction.filter(|&f| f > 0.0) {
        Some(f) => split(ids, f, seed, units).map(Some),
        None if requirements && ids.len() < MIN_PART => Err(format!(
            "a requirement is judged on a 95% bootstrap interval over the {units}, and {} {units} are too few for one (at least {MIN_PART})",
            ids.len()
        )),
        None => Ok(None),
    }
}

/// The recommended point against the arm's own setting, figure by figure, paired over the
/// units both replayed (`units` of each, in the same unit order), as `run` compares arms: a
/// per-unit figure by the mean of per-unit values with its bootstrap interval and the test of
/// that mean; a figure of the whole set (ECE) by its difference over the units, with the
/// interval and p of a paired bootstrap that resamples units for both settings at once. A unit
/// where a ratio is undefined in either setting is not a pair.
pub fn versus(
    side: Side,
    current: &[Vec<f64>],
    recommended: &[Vec<f64>],
    chosen: Option<&[usize]>,
    replicates: usize,
    seed: u64,
) -> Vec<(&'static str, PairedDelta)> {
    let all: Vec<usize> = (0..current.len().min(recommended.len())).collect();
    let idx = chosen.unwrap_or(&all);
    side.figures()
        .iter()
        .filter_map(|f| {
            if !f.per_unit {
                return whole_set_delta(f, current, recommended, idx, replicates, seed)
                    .map(|d| (f.name, d));
            }
            let (xs, ys): (Vec<f64>, Vec<f64>) = idx
                .iter()
                .filter_map(|&i| Some((f.value(&current[i])?, f.value(&recommended[i])?)))
                .unzip();
            paired_delta(&xs, &ys, replicates, seed, 1).map(|d| (f.name, d))
        })
        .collect()
}

/// A figure of the whole set compared between two settings over the units `idx`: its value
/// from each setting's sums, and a paired bootstrap (replicate `r` seeded by `(seed, r)`) that
/// draws units once for both; the p-value is twice the smaller share of replicate differences
/// on either side of 0, as `run` tests ECE. `None` when the figure is undefined in either.
fn whole_set_delta(
    f: &Figure,
    current: &[Vec<f64>],
    recommended: &[Vec<f64>],
    idx: &[usize],
    replicates: usize,
    seed: u64,
) -> Option<PairedDelta> {
    let n = idx.len();
    let dim = current.first().map_or(0, Vec::len);
    let sums = |rows: &[Vec<f64>], picks: &mut dyn Iterator<Item = usize>| {
        let mut s = vec![0.0; dim];
        for i in picks {
            for (acc, x) in s.iter_mut().zip(&rows[i]) {
                *acc += x;
            }
        }
        s
    };
    let b = f.value(&sums(current, &mut idx.iter().copied()))?;
    let t = f.value(&sums(recommended, &mut idx.iter().copied()))?;
    let mut draws: Vec<f64> = Vec::with_capacity(replicates);
    for r in 0..replicates {
        if n == 0 {
            break;
        }
        let mut rng = Rng::for_replicate(seed, r as u64);
        let picks: Vec<usize> = (0..n).map(|_| idx[rng.below(n as u64) as usize]).collect();
        let (Some(x), Some(y)) = (
            f.value(&sums(current, &mut picks.iter().copied())),
            f.value(&sums(recommended, &mut picks.iter().copied())),
        ) else {
            continue;
        };
        draws.push(y - x);
    }
    draws.sort_unstable_by(f64::total_cmp);
    let ci = match (percentile(&draws, 0.025), percentile(&draws, 0.975)) {
        (Some(lo), Some(hi)) => Some([lo, hi]),
        _ => None,
    };
    let p_value = (!draws.is_empty() && n >= 2).then(|| {
        let below = draws.iter().filter(|&&d| d <= 0.0).count() as f64;
        let above = draws.iter().filter(|&&d| d >= 0.0).count() as f64;
        (2.0 * below.min(above) / draws.len() as f64).min(1.0)
    });
    Some(PairedDelta {
        baseline: b,
        treatment: t,
        delta: t - b,
        ci,
        p_value,
        test: crate::stats::test::Test::Bootstrap,
        mde: None,
        sd: None,
        discordant: None,
        pairs: n,
    })
}

#[cfg(test)]
mod tests;
