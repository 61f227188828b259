//! Review metrics (docs/guides/ab-rubric-change.md): per (arm, target, run) from the replayed findings, then per arm.
//!
//! Per arm, counts are summed over targets after averaging each target over its runs, and
//! per-target figures (dispersion) are averaged over runs first, so that a target reviewed three
//! times weighs as much as one reviewed once. Pure: judge composites come in as a lookup.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::review::{Check, Merged, Queue, Route, Tier};
use super::{merge_counts, value_counts, ValueCount};
use crate::policy::Scale;
use crate::stats::calibration::{bin_index, round9};
use crate::stats::paired::wilson;

mod figure;
mod written;

pub use figure::{Figure, OptionalCount, OptionalReal};

/// Metrics of one (target, run): its figures, one per [`REVIEW_METRICS`] entry and in its order.
///
/// In `metrics.json` a row is `target`, `run`, then each figure under its catalogue name.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetMetrics {
    pub target: String,
    pub run: u32,
    pub figures: Vec<Figure>,
    /// Sum of composites by final confidence value (anchor) or 0.1 bin (float); see
    /// [`CalibrationCell`]. Kept as sums so that arms can pool them exactly.
    pub calibration_sums: BTreeMap<String, CalibrationSums>,
    /// The raw confidence values with their counts, pooled per arm into [`ArmMetrics::values`].
    pub values: Vec<ValueCount>,
}

impl TargetMetrics {
    /// The figure of metric `id`.
    pub fn figure(&self, id: Id) -> &Figure {
        &self.figures[id.index()]
    }

    /// A scalar figure as a number (`None` for an absent optional figure).
    pub fn number(&self, id: Id) -> Option<f64> {
        self.figure(id).number()
    }
}

/// How a per-target figure is held: in `metrics.json`, the targets table and the JSON Schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number (a count of findings or returns).
    Count,
    /// A real number, always present.
    Real,
    /// A real number that may be absent (precision without verdicts).
    Optional,
    /// Counts by confidence value; not a column of the targets table, no delta.
    ByValue,
    /// A whole number that may be unknown (lint-ignore's measure without a source snapshot).
    OptionalCount,
    /// A name or nothing (the skip rule that kept a target from review); no delta.
    Label,
}

/// How a per-target figure becomes figures of the arm (each target first averaged over its
/// runs, so a target reviewed three times weighs as much as one reviewed once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// Summed over targets, under the metric's own name.
    Sum,
    /// Averaged over targets, as `<name>_mean`.
    Mean,
    /// The largest target's value, as `<name>_max`.
    Max,
    /// The 95th percentile over targets, a figure of the whole set, named with the percentile
    /// before the unit: `latency_ms` gives `latency_p95_ms`. Its distribution-free 95% interval
    /// is the arm's `ci` entry of that name.
    P95,
}

/// How a per-target figure is computed from one replayed (target, run).
#[derive(Clone, Copy)]
pub enum Compute {
    /// The number of merged findings for which this holds.
    Merged(fn(&Merged) -> bool),
    /// Anything else, from the (target, run)'s [`Facts`].
    Facts(fn(&Facts<'_>) -> Figure),
}

/// A row of the report's summary table: its rank there (rows are ordered by it), its label and
/// its decimals.
pub type SummaryRow = (u8, &'static str, usize);

/// One per-target review metric (docs/guides/ab-rubric-change.md), declared once. Its `name` is its key in each
/// `per_target` row of `metrics.json` and its column in the targets table; each of its `arm`
/// aggregates is a figure of the arm (`fyi`, `distinct_values_mean`); when it takes part in
/// A/B deltas, `name` is its key in `review.delta`, its row in the report's delta table and a
/// gate's `<review-delta>` path. Adding a count is adding an entry.
#[derive(Clone, Copy)]
pub struct ReviewMetric {
    pub name: &'static str,
    pub kind: Kind,
    /// Gets a paired treatment − baseline delta over targets.
    pub delta: bool,
    /// Decimals in the report's delta table.
    pub places: usize,
    /// The figures of the arm it yields.
    pub arm: &'static [Aggregate],
    /// Derived from judge verdicts: withheld, with its delta, when the judges are not trusted.
    pub judged: bool,
    /// Its row in the report's summary table, if it has one.
    pub summary: Option<SummaryRow>,
    /// How the report's tables name it ("merged findings per target"); the summary row's label
    /// when it has one.
    pub label: Option<&'static str>,
    /// Which way it gets better, where it has one (`primary` decides on it alone then).
    pub better: Option<super::Better>,
    /// A figure of code review's precision controls (docs/guides/ab-rubric-change.md): written only when the
    /// experiment replays them, and read back as absent from a run that does not.
    pub precision: bool,
    /// The range every per-target value lies in by construction, where it has one (a rate, a
    /// mean judge composite): what an anytime-valid sequence bounds its differences by.
    pub range: Option<[f64; 2]>,
    /// A figure of what the calls spent (docs/reference.md, "Cost and latency"): written only
    /// when the corpus records usage or wall time, and read back as absent from a run that
    /// does not.
    pub usage: bool,
    pub compute: Compute,
}

impl std::fmt::Debug for ReviewMetric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// A count of merged findings, summed per arm, with a delta.
const fn count(name: &'static str, holds: fn(&Merged) -> bool) -> ReviewMetric {
    ReviewMetric {
        name,
        kind: Kind::Count,
        delta: true,
        places: 2,
        arm: &[Aggregate::Sum],
        judged: false,
        summary: None,
        label: None,
        better: None,
        precision: false,
        range: None,
        usage: false,
        compute: Compute::Merged(holds),
    }
}

/// Any other figure: no arm aggregate, no delta, until the entry says so.
const fn figure(name: &'static str, kind: Kind, compute: fn(&Facts<'_>) -> Figure) -> ReviewMetric {
    ReviewMetric {
        name,
        kind,
        delta: false,
        places: 2,
        arm: &[],
        judged: false,
        summary: None,
        label: None,
        better: None,
        precision: false,
        range: None,
        usage: false,
        compute: Compute::Facts(compute),
    }
}

impl ReviewMetric {
    const fn summed(mut self) -> Self {
        self.arm = &[Aggregate::Sum];
        self
    }
    const fn arm(mut self, arm: &'static [Aggregate]) -> Self {
        self.arm = arm;
        self
    }
    const fn delta(mut self, places: usize) -> Self {
        self.delta = true;
        self.places = places;
        self
    }
    const fn no_delta(mut self) -> Self {
        self.delta = false;
        self
    }
    const fn judged(mut self) -> Self {
        self.judged = true;
        self
    }
    const fn summary(mut self, rank: u8, label: &'static str, places: usize) -> Self {
        self.summary = Some((rank, label, places));
        self.label = Some(label);
        self
    }
    const fn label(mut self, label: &'static str) -> Self {
        self.label = Some(label);
        self
    }
    const fn precision(mut self) -> Self {
        self.precision = true;
        self
    }
    const fn usage(mut self) -> Self {
        self.usage = true;
        self
    }
    /// Whether it may be absent from a run: a precision-control or usage figure.
    pub fn optional_in_run(&self) -> bool {
        self.precision || self.usage
    }
    const fn lower_is_better(mut self) -> Self {
        self.better = Some(super::Better::Lower);
        self
    }
    const fn higher_is_better(mut self) -> Self {
        self.better = Some(super::Better::Higher);
        self
    }
    /// Every per-target value lies in [0, 1].
    const fn unit_interval(mut self) -> Self {
        self.range = Some([0.0, 1.0]);
        self
    }
}

/// What one (target, run) contributed besides its merged findings.
pub struct TargetInput<'a> {
    pub target: &'a str,
    pub run: u32,
    /// Recorded confidences of the valid findings, before any policy touched them.
    pub raw_confidences: &'a [f64],
    pub malformed: usize,
    pub failed_reviewers: usize,
    pub merged: &'a [Merged],
    /// Whether the experiment replays the precision controls: their figures are absent if not.
    pub controls: bool,
    /// The skip rule that kept the arm from reviewing the target.
    pub skipped: Option<crate::policy::SkipRule>,
    /// Whether the corpus has a source snapshot of the target.
    pub has_sources: bool,
    /// What the (target, run)'s calls spent, summed, when any reported it.
    pub spent: Option<crate::corpus::usage::Spent>,
    /// Whether the corpus records usage or wall time: the usage figures are absent if not.
    pub usage: bool,
}

/// Everything a per-target figure is computed from.
pub struct Facts<'a> {
    pub input: &'a TargetInput<'a>,
    pub scale: Scale,
    /// [`dispersion`] of the raw confidences.
    pub dispersion: (usize, f64, usize),
    /// Judge composites of the actionable findings that were judged.
    pub judged: &'a [f64],
}

impl Facts<'_> {
    fn count(&self, holds: fn(&Merged) -> bool) -> usize {
        self.input.merged.iter().filter(|f| holds(f)).count()
    }

    /// A part of what the (target, run)'s calls spent: 0 for a target the arm skips (it makes
    /// no call), else the calls' sum, `None` where none reported the part.
    fn spent(&self, part: fn(&crate::corpus::usage::Spent) -> Option<f64>) -> Option<f64> {
        match self.input.skipped {
            Some(_) => Some(0.0),
            None => self.input.spent.as_ref().and_then(part),
        }
    }
}

fn tier(f: &Merged, t: Tier) -> bool {
    f.tier == t
}

/// Every per-target review metric, in the order of a `per_target` row, of the targets table's
/// columns (after `arm`, `target` and `run`) and of the delta table.
pub const REVIEW_METRICS: [ReviewMetric; 38] = [
    figure("findings_raw", Kind::Count, |x| {
        Figure::Count(x.input.raw_confidences.len())
    })
    .summed()
    .delta(2)
    .label("valid findings per target (before dedup)"),
    figure("malformed", Kind::Count, |x| {
        Figure::Count(x.input.malformed)
    })
    .summed()
    .delta(2)
    .lower_is_better()
    .label("malformed findings per target"),
    figure("failed_reviewers", Kind::Count, |x| {
        Figure::Count(x.input.failed_reviewers)
    })
    .summed()
    .delta(2)
    .lower_is_better()
    .label("failed reviewer calls per target"),
    figure("distinct_values", Kind::Count, |x| {
        Figure::Count(x.dispersion.0)
    })
    .arm(&[Aggregate::Mean, Aggregate::Max])
    .delta(2)
    .summary(0, "distinct confidence values per target", 2)
    // Anchor dispersion: a rubric that holds to its anchors spreads over fewer values.
    .lower_is_better(),
    figure("entropy_bits", Kind::Real, |x| Figure::Real(x.dispersion.1))
        .arm(&[Aggregate::Mean])
        .delta(2)
        .summary(1, "entropy of confidence values (bits)", 2)
        .lower_is_better(),
    figure("values_for_80pct", Kind::Count, |x| {
        Figure::Count(x.dispersion.2)
    })
    .arm(&[Aggregate::Mean])
    .delta(2)
    .label("values covering 80% of findings per target"),
    figure("merged", Kind::Count, |x| {
        Figure::Count(x.input.merged.len())
    })
    .summed()
    .delta(2)
    .label("merged findings per target"),
    count("corroborated", |f| f.corroborated).label("corroborated findings per target"),
    count("promoted", |f| f.promoted).label("promoted findings per target"),
    figure("promotion_rate", Kind::Real, |x| {
        Figure::Real(rate(
            x.count(|f| f.promoted) as f64,
            x.input.merged.len() as f64,
        ))
    })
    .delta(3)
    .summary(2, "promotion rate (mean per target)", 3)
    .unit_interval(),
    count("dropped", |f| tier(f, Tier::Dropped)).summary(5, "dropped findings per target", 2),
    count("fyi", |f| tier(f, Tier::Fyi)).summary(4, "FYI findings per target", 2),
    count("actionable", |f| tier(f, Tier::Actionable)).summary(
        3,
        "actionable findings per target",
        2,
    ),
    count("decisions", |f| f.route == Some(Route::Decision)).summary(
        6,
        "decisions asked of the user per target",
        2,
    ),
    count("auto_apply", |f| f.route == Some(Route::AutoApply))
        .label("auto-applied findings per target"),
    count("demoted", |f| {
        matches!(f.tier, Tier::Soft | Tier::Suppressed)
    })
    .label("demoted findings per target"),
    count("pre_existing", |f| tier(f, Tier::PreExisting)).label("pre-existing findings per target"),
    // Code mode's partition of actionable findings.
    count("fixer", |f| f.queue == Some(Queue::Fixer)).no_delta(),
    count("residual", |f| f.queue == Some(Queue::Residual)).no_delta(),
    count("report_only", |f| f.queue == Some(Queue::ReportOnly)).no_delta(),
    // Dropped findings per confidence value (anchor) or right-closed 0.05 bin (float).
    figure("dropped_by_value", Kind::ByValue, |x| {
        let mut by = BTreeMap::new();
        for f in x.input.merged.iter().filter(|f| f.tier == Tier::Dropped) {
            *by.entry(value_label(f.confidence, x.scale, 0.05))
                .or_default() += 1;
        }
        Figure::ByValue(Box::new(by))
    }),
    // Mean judge composite of the actionable findings that were judged; absent when none were.
    figure("precision", Kind::Optional, |x| {
        Figure::optional(
            (!x.judged.is_empty()).then(|| x.judged.iter().sum::<f64>() / x.judged.len() as f64),
        )
    })
    .delta(2)
    .judged()
    .summary(7, "precision (mean judge composite of actionable)", 3)
    .higher_is_better()
    .unit_interval(),
    // Actionable findings with a judge composite.
    figure("judged_actionable", Kind::Count, |x| {
        Figure::Count(x.judged.len())
    }),
    // Code review's precision controls (docs/guides/ab-rubric-change.md), written when the experiment replays them.
    // The validation pass: what it selected, what it cost, what became of each finding.
    count("validation_selected", |f| f.validation.is_some())
        .precision()
        .label("findings selected for validation per target"),
    count(
        "validator_calls",
        |f| matches!(&f.validation, Some(c) if *c != Check::OverBudget),
    )
    .precision()
    .label("validator calls per target"),
    count("validated", |f| f.validation == Some(Check::Validated))
        .precision()
        .label("validated findings per target"),
    count("rejected", |f| {
        matches!(f.validation, Some(Check::Rejected(_)))
    })
    .precision()
    .label("findings the validator rejected per target"),
    count("validator_failed", |f| f.validation == Some(Check::Failed))
        .precision()
        .label("failed validator calls per target"),
    count("validator_missing", |f| {
        f.validation == Some(Check::Missing)
    })
    .precision()
    .label("findings with no validator record per target"),
    count("over_budget", |f| f.validation == Some(Check::OverBudget))
        .precision()
        .label("findings over the validation budget per target"),
    // Actionable after the pass: what reaches the user.
    count("externalized", Merged::externalized)
        .precision()
        .label("findings reaching the user per target"),
    // Lint-ignore: merged findings on a line with a suppression comment (unknown without a
    // snapshot), and those dropped for it.
    figure("on_suppressed_line", Kind::OptionalCount, |x| {
        Figure::optional_count(
            x.input
                .has_sources
                .then(|| x.count(|f| f.on_suppressed_line == Some(true))),
        )
    })
    .summed()
    .delta(2)
    .precision()
    .label("findings on a lint-suppressed line per target"),
    count("lint_suppressed", |f| tier(f, Tier::LintSuppressed))
        .precision()
        .label("findings dropped for a lint suppression per target"),
    // The skip rule that kept the arm from reviewing the target, or null.
    figure("skipped", Kind::Label, |x| {
        Figure::label(x.input.skipped.map(|r| r.name()))
    })
    .precision(),
    // What the (target, run)'s reviewer calls spent (docs/reference.md, "Cost and latency"),
    // summed over its calls; written when the corpus records any usage. Null where none of its
    // calls reported the part; 0 for a target the arm skips (it makes no call).
    figure("cost_usd", Kind::Optional, |x| {
        Figure::optional(x.spent(|s| s.cost_usd))
    })
    .arm(&[Aggregate::Mean])
    .delta(4)
    .lower_is_better()
    .usage()
    .label("cost per target (USD)"),
    figure("input_tokens", Kind::Optional, |x| {
        Figure::optional(x.spent(|s| s.input_tokens.map(|n| n as f64)))
    })
    .arm(&[Aggregate::Mean])
    .delta(0)
    .lower_is_better()
    .usage()
    .label("input tokens per target"),
    figure("output_tokens", Kind::Optional, |x| {
        Figure::optional(x.spent(|s| s.output_tokens.map(|n| n as f64)))
    })
    .arm(&[Aggregate::Mean])
    .delta(0)
    .lower_is_better()
    .usage()
    .label("output tokens per target"),
    figure("latency_ms", Kind::Optional, |x| {
        Figure::optional(x.spent(|s| s.elapsed_ms))
    })
    .arm(&[Aggregate::Mean, Aggregate::P95])
    .delta(0)
    .lower_is_better()
    .usage()
    .label("reviewer wall time per target (ms)"),
];

/// A review metric: its place in [`REVIEW_METRICS`]. The constants below are looked up when
/// calibench is compiled, so a misspelt name fails the build rather than a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Id(usize);

/// One figure of an arm: a metric and one of the aggregates it declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArmId {
    metric: Id,
    aggregate: Aggregate,
}

/// The metric named `name`; a name the catalogue lacks stops the build (in a constant) or
/// panics (anywhere else: use a constant).
///
/// ```
/// use calibench::replay::review_metrics::{id, Id, MERGED};
/// const M: Id = id("merged");
/// assert_eq!(M, MERGED);
/// ```
///
/// ```compile_fail
/// use calibench::replay::review_metrics::{id, Id};
/// const M: Id = id("merge"); // misspelt: the build stops here
/// ```
pub const fn id(name: &str) -> Id {
    let mut i = 0;
    while i < REVIEW_METRICS.len() {
        if crate::text::same_bytes(REVIEW_METRICS[i].name.as_bytes(), name.as_bytes()) {
            return Id(i);
        }
        i += 1;
    }
    panic!("not a metric of REVIEW_METRICS")
}

impl Id {
    /// Its place in [`REVIEW_METRICS`] (and in a [`TargetMetrics`]' figures).
    pub const fn index(self) -> usize {
        self.0
    }

    pub const fn metric(self) -> &'static ReviewMetric {
        &REVIEW_METRICS[self.0]
    }

    /// The arm figure summed over targets (`merged`).
    pub const fn sum(self) -> ArmId {
        self.aggregate(Aggregate::Sum)
    }

    /// The arm figure averaged over targets (`distinct_values_mean`).
    pub const fn mean(self) -> ArmId {
        self.aggregate(Aggregate::Mean)
    }

    /// The metric's `aggregate` over the arm; one it does not declare stops the build.
    const fn aggregate(self, aggregate: Aggregate) -> ArmId {
        let declared = REVIEW_METRICS[self.0].arm;
        let mut i = 0;
        while i < declared.len() {
            if declared[i] as u8 == aggregate as u8 {
                return ArmId {
                    metric: self,
                    aggregate,
                };
            }
            i += 1;
        }
        panic!("the metric declares no such arm aggregate")
    }
}

/// Every metric with its id, in catalogue order.
pub fn catalogue() -> impl Iterator<Item = (Id, &'static ReviewMetric)> {
    REVIEW_METRICS.iter().enumerate().map(|(i, m)| (Id(i), m))
}

/// The metrics calibench's own code reads by name (the report, the plots, the lift).
pub const MERGED: Id = id("merged");
pub const CORROBORATED: Id = id("corroborated");
pub const PROMOTED: Id = id("promoted");
pub const ACTIONABLE: Id = id("actionable");
pub const EXTERNALIZED: Id = id("externalized");
pub const DISTINCT_VALUES: Id = id("distinct_values");
pub const MALFORMED: Id = id("malformed");
pub const FAILED_REVIEWERS: Id = id("failed_reviewers");
pub const JUDGED_ACTIONABLE: Id = id("judged_actionable");
pub const PRECISION: Id = id("precision");
pub const DROPPED_BY_VALUE: Id = id("dropped_by_value");
pub const LINT_SUPPRESSED: Id = id("lint_suppressed");
pub const ON_SUPPRESSED_LINE: Id = id("on_suppressed_line");
pub const REJECTED: Id = id("rejected");
pub const SKIPPED: Id = id("skipped");
pub const VALIDATION_SELECTED: Id = id("validation_selected");
pub const VALIDATOR_CALLS: Id = id("validator_calls");
pub const VALIDATOR_FAILED: Id = id("validator_failed");
pub const VALIDATOR_MISSING: Id = id("validator_missing");
pub const OVER_BUDGET: Id = id("over_budget");
pub const FYI: Id = id("fyi");
pub const DROPPED: Id = id("dropped");
pub const DEMOTED: Id = id("demoted");
pub const PRE_EXISTING: Id = id("pre_existing");
pub const COST_USD: Id = id("cost_usd");
pub const VALIDATED: Id = id("validated");
pub const DECISIONS: Id = id("decisions");
pub const AUTO_APPLY: Id = id("auto_apply");
pub const FINDINGS_RAW: Id = id("findings_raw");

const DELTA_COUNT: usize = {
    let (mut i, mut n) = (0, 0);
    while i < REVIEW_METRICS.len() {
        if REVIEW_METRICS[i].delta {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The keys of `review.delta` in `metrics.json`: the catalogue's `delta` entries, in its order.
pub const DELTA_NAMES: [&str; DELTA_COUNT] = {
    let mut names = [""; DELTA_COUNT];
    let (mut i, mut n) = (0, 0);
    while i < REVIEW_METRICS.len() {
        if REVIEW_METRICS[i].delta {
            names[n] = REVIEW_METRICS[i].name;
            n += 1;
        }
        i += 1;
    }
    names
};

/// The catalogue's entries that take part in A/B deltas, in its order.
pub fn delta_metrics() -> impl Iterator<Item = &'static ReviewMetric> {
    REVIEW_METRICS.iter().filter(|m| m.delta)
}

/// Metrics of one (target, run). `composite` maps a finding id to its judge composite.
pub fn target_metrics(
    input: &TargetInput<'_>,
    scale: Scale,
    composite: &dyn Fn(&str) -> Option<f64>,
) -> TargetMetrics {
    let mut calibration_sums: BTreeMap<String, CalibrationSums> = BTreeMap::new();
    let mut judged = Vec::new();
    for f in input.merged {
        if let Some(c) = finding_composite(f, composite) {
            let cell = calibration_sums
                .entry(value_label(f.confidence, scale, 0.1))
                .or_default();
            cell.count += 1;
            cell.confidence += f.confidence;
            cell.composite += c;
            if f.tier == Tier::Actionable {
                judged.push(c);
            }
        }
    }
    let facts = Facts {
        input,
        scale,
        dispersion: dispersion(input.raw_confidences),
        judged: &judged,
    };
    let figures = REVIEW_METRICS
        .iter()
        .map(|m| {
            if (m.precision && !input.controls) || (m.usage && !input.usage) {
                return Figure::Absent;
            }
            let figure = match m.compute {
                Compute::Merged(holds) => Figure::Count(facts.count(holds)),
                Compute::Facts(f) => f(&facts),
            };
            debug_assert_eq!(
                figure.kind(),
                Some(m.kind),
                "{} computes another kind",
                m.name
            );
            figure
        })
        .collect();
    TargetMetrics {
        target: input.target.to_string(),
        run: input.run,
        figures,
        calibration_sums,
        values: value_counts(input.raw_confidences.iter().copied()),
    }
}

/// A calibration cell's place on the scale: an anchor's value ("75" → 75), or a float bin's
/// lower edge ("(0.40, 0.50]" → 0.40).
pub fn cell_order(value: &str) -> f64 {
    value
        .trim_start_matches(['(', '['])
        .split(',')
        .next()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::INFINITY)
}

fn rate(num: f64, den: f64) -> f64 {
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// The arm's figures from the catalogue's `arm` aggregates: every sum in catalogue order, then
/// every mean and maximum. Their names and order are those of [`arm_figure_names`]. A figure is
/// `None` when it is absent (a precision-control figure of an experiment without them) or
/// unknown (lint-ignore's measure when no target has a snapshot).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArmFigures {
    pub values: Vec<Option<f64>>,
    /// Whether the precision-control figures are present (the experiment replays them).
    pub controls: bool,
    /// Whether the usage figures are present (the corpus records usage).
    pub usage: bool,
}

impl ArmFigures {
    /// Whether metric `m`'s figures are present in this arm.
    pub fn has(&self, m: &ReviewMetric) -> bool {
        (self.controls || !m.precision) && (self.usage || !m.usage)
    }
}

impl ArmFigures {
    /// The arm figure `id` (`fyi`, `distinct_values_max`); 0 when absent.
    pub fn get(&self, id: ArmId) -> f64 {
        self.value(id).unwrap_or(0.0)
    }

    /// The arm figure `id`, `None` when absent.
    pub fn value(&self, id: ArmId) -> Option<f64> {
        let i = arm_figure_names()
            .iter()
            .position(|&(_, m, a)| m == id.metric.index() && a == id.aggregate)
            .expect("an ArmId names an aggregate its metric declares");
        self.values[i]
    }
}

/// Each arm figure's name, catalogue position and aggregate, in `metrics.json` order.
pub fn arm_figure_names() -> &'static [(String, usize, Aggregate)] {
    static NAMES: std::sync::OnceLock<Vec<(String, usize, Aggregate)>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let of = |sums: bool| {
            REVIEW_METRICS.iter().enumerate().flat_map(move |(i, m)| {
                m.arm
                    .iter()
                    .filter(move |a| (**a == Aggregate::Sum) == sums)
                    .map(move |a| {
                        let name = match a {
                            Aggregate::Sum => m.name.to_string(),
                            Aggregate::Mean => format!("{}_mean", m.name),
                            Aggregate::Max => format!("{}_max", m.name),
                            Aggregate::P95 => match m.name.rsplit_once('_') {
                                Some((stem, unit)) => format!("{stem}_p95_{unit}"),
                                None => format!("{}_p95", m.name),
                            },
                        };
                        (name, i, *a)
                    })
            })
        };
        of(true).chain(of(false)).collect()
    })
}

/// Arm-level review metrics (the names of docs/guides/ab-rubric-change.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArmMetrics {
    pub policy: String,
    pub scale: Scale,
    pub targets: usize,
    /// The most runs any target has.
    pub runs: usize,
    /// Sums over targets and per-target means and maxima, as the catalogue declares them.
    #[serde(flatten)]
    pub figures: ArmFigures,
    /// promoted / merged over the arm.
    pub promotion_rate: f64,
    /// corroborated / merged over the arm.
    pub corroboration_rate: f64,
    /// 95% Wilson intervals of the two rates, on the arm's counts (mean over runs).
    pub rate_ci: RateIntervals,
    /// Every raw confidence value of the arm's valid findings with its count, over all targets
    /// and runs (the anchor-dispersion histogram).
    pub values: Vec<ValueCount>,
    /// Pooled over every (target, run); `None` when nothing actionable was judged.
    pub precision: Option<f64>,
    pub judged_actionable: usize,
    pub dropped_by_value: BTreeMap<String, f64>,
    pub anchor_calibration: Vec<CalibrationCell>,
    /// Malformed findings by reason, over all targets and runs.
    pub malformed_reasons: BTreeMap<String, usize>,
    /// Every failed reviewer call, in corpus order, with its reason when the corpus gives one.
    #[serde(default)]
    pub failed_calls: Vec<FailedCall>,
    /// Code review's precision controls over the arm (docs/guides/ab-rubric-change.md), when the experiment replays
    /// them.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub controls: Option<ControlsFigures>,
    /// 95% intervals of the arm's percentile figures (`latency_p95_ms`), where the targets are
    /// enough to bound them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ci: BTreeMap<String, [f64; 2]>,
    pub per_target: Vec<TargetMetrics>,
}

impl ArmMetrics {
    /// The arm figure `id`; 0 when absent.
    pub fn figure(&self, id: ArmId) -> f64 {
        self.figures.get(id)
    }
}

/// The arm-level figures of code review's precision controls (docs/guides/ab-rubric-change.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ControlsFigures {
    /// Targets a skip rule kept from review.
    pub skipped_targets: usize,
    /// Their recorded returns, failed ones included: the reviewer calls skipping saved.
    pub skipped_calls: f64,
    /// Findings that would have externalized on the skipped targets, all and at P0/P1.
    pub lost_actionable: f64,
    pub lost_p0_p1: f64,
    /// Each reason of a rejected finding with its count, over every target and run.
    pub rejection_reasons: BTreeMap<String, usize>,
    /// Mean judge composite of the findings the validator rejected, and of those it validated:
    /// does it reject what the judges think is wrong? Withheld when the judges are not trusted.
    pub rejected_composite: Option<f64>,
    pub validated_composite: Option<f64>,
}

/// A merged finding's judge composite: the mean over its judged contributions.
pub fn finding_composite(f: &Merged, composite: &dyn Fn(&str) -> Option<f64>) -> Option<f64> {
    let scores: Vec<f64> = f
        .contributions
        .iter()
        .filter_map(|c| c.id.as_deref().and_then(composite))
        .collect();
    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
}

/// A reviewer call recorded `status: failed`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailedCall {
    pub target: String,
    pub run: u32,
    pub reviewer: String,
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RateIntervals {
    pub promotion_rate: Option<[f64; 2]>,
    pub corroboration_rate: Option<[f64; 2]>,
}

/// The catalogue entry `id`'s per-target values averaged over each target's runs, by target, in
/// the order of each target's first value.
pub fn by_target_of(per_target: &[TargetMetrics], id: Id) -> Vec<(String, f64)> {
    let groups = TargetGroups::of(per_target);
    (groups.means_of(per_target, id).into_iter())
        .map(|(g, mean)| (groups.name(per_target, g).to_string(), mean))
        .collect()
}

/// Which target each of an arm's per-(target, run) entries belongs to, worked out once for all
/// the arm's metrics: their per-target means without a text or a hash per metric.
pub(crate) struct TargetGroups {
    /// Each entry's target, numbered by first appearance.
    group: Vec<usize>,
    /// Each target's first entry.
    first: Vec<usize>,
}

impl TargetGroups {
    pub(crate) fn of(per_target: &[TargetMetrics]) -> Self {
        let mut numbers: HashMap<&str, usize, foldhash::fast::RandomState> = HashMap::default();
        let mut first = Vec::new();
        let group = (per_target.iter().enumerate())
            .map(|(i, t)| {
                *numbers.entry(&t.target).or_insert_with(|| {
                    first.push(i);
                    first.len() - 1
                })
            })
            .collect();
        TargetGroups { group, first }
    }

    /// How many targets there are.
    pub(crate) fn len(&self) -> usize {
        self.first.len()
    }

    /// The name of target `g`.
    pub(crate) fn name<'a>(&self, per_target: &'a [TargetMetrics], g: usize) -> &'a str {
        &per_target[self.first[g]].target
    }

    /// Metric `id`'s mean over each target's runs, with the target's number, in the order of
    /// each target's first value (a target whose runs have none has no mean).
    pub(crate) fn means_of(&self, per_target: &[TargetMetrics], id: Id) -> Vec<(usize, f64)> {
        let mut place: Vec<Option<usize>> = vec![None; self.len()];
        let mut sums: Vec<(usize, f64, usize)> = Vec::new();
        for (t, &g) in per_target.iter().zip(&self.group) {
            if let Some(v) = t.figure(id).number() {
                let at = *place[g].get_or_insert_with(|| {
                    sums.push((g, 0.0, 0));
                    sums.len() - 1
                });
                sums[at].1 += v;
                sums[at].2 += 1;
            }
        }
        sums.into_iter()
            .map(|(g, s, n)| (g, s / n as f64))
            .collect()
    }

    /// The values of [`TargetGroups::means_of`].
    fn means(&self, per_target: &[TargetMetrics], id: Id) -> Vec<f64> {
        self.means_of(per_target, id)
            .into_iter()
            .map(|(_, m)| m)
            .collect()
    }
}

/// Aggregates one arm's per-(target, run) metrics.
pub fn arm_metrics(
    policy: &str,
    scale: Scale,
    mut per_target: Vec<TargetMetrics>,
    malformed_reasons: BTreeMap<String, usize>,
) -> ArmMetrics {
    let present = |of: fn(&ReviewMetric) -> bool| {
        per_target.iter().any(|t| {
            REVIEW_METRICS
                .iter()
                .zip(&t.figures)
                .any(|(m, f)| of(m) && *f != Figure::Absent)
        })
    };
    let (controls, usage) = (present(|m| m.precision), present(|m| m.usage));
    let groups = TargetGroups::of(&per_target);
    let shape = ArmFigures {
        controls,
        usage,
        values: Vec::new(),
    };
    let figures = ArmFigures {
        values: arm_figure_names()
            .iter()
            .map(|(_, i, aggregate)| {
                let m = &REVIEW_METRICS[*i];
                if !shape.has(m) {
                    return None;
                }
                let values = groups.means(&per_target, Id(*i));
                // An optional count known for no target, or a part of usage no call reported,
                // is unknown for the arm, never 0.
                if (m.kind == Kind::OptionalCount || m.usage) && values.is_empty() {
                    return None;
                }
                let all = values.iter().copied();
                Some(match aggregate {
                    Aggregate::Sum => all.sum::<f64>(),
                    Aggregate::Mean if values.is_empty() => 0.0,
                    Aggregate::Mean => all.sum::<f64>() / values.len() as f64,
                    Aggregate::Max => all.fold(0.0, f64::max),
                    Aggregate::P95 => {
                        let mut sorted = values.clone();
                        sorted.sort_unstable_by(f64::total_cmp);
                        crate::stats::quantile::percentile(&sorted, 0.95).unwrap_or(0.0)
                    }
                })
            })
            .collect(),
        ..shape
    };
    // A percentile's distribution-free interval (docs/reference.md, "Cost and latency").
    let ci: BTreeMap<String, [f64; 2]> = arm_figure_names()
        .iter()
        .filter(|(_, i, a)| *a == Aggregate::P95 && figures.has(&REVIEW_METRICS[*i]))
        .filter_map(|(name, i, _)| {
            let values = groups.means(&per_target, Id(*i));
            Some((
                name.clone(),
                crate::stats::quantile::interval(&values, 0.95)?,
            ))
        })
        .collect();
    let mut runs: HashMap<&str, usize, foldhash::fast::RandomState> = HashMap::default();
    for t in &per_target {
        *runs.entry(&t.target).or_default() += 1;
    }
    let merged = figures.get(MERGED.sum());
    let promoted = figures.get(PROMOTED.sum());
    let corroborated = figures.get(CORROBORATED.sum());
    let values = merge_counts(per_target.iter().flat_map(|t| t.values.iter().cloned()));

    // Precision and anchor calibration pool every judged finding.
    let (judged_i, precision_i) = (JUDGED_ACTIONABLE.index(), PRECISION.index());
    let (judged, judged_sum) = per_target.iter().fold((0usize, 0.0), |(n, s), t| {
        let count = t.figures[judged_i].number().unwrap_or(0.0) as usize;
        (
            n + count,
            s + t.figures[precision_i]
                .number()
                .map_or(0.0, |p| p * count as f64),
        )
    });
    let mut cells: BTreeMap<String, CalibrationSums> = BTreeMap::new();
    for t in &per_target {
        for (k, s) in &t.calibration_sums {
            let c = cells.entry(k.clone()).or_default();
            c.count += s.count;
            c.confidence += s.confidence;
            c.composite += s.composite;
        }
    }
    let mut anchor_calibration: Vec<CalibrationCell> = cells
        .into_iter()
        .map(|(value, s)| CalibrationCell {
            value,
            count: s.count,
            mean_confidence: s.confidence / s.count as f64,
            mean_composite: s.composite / s.count as f64,
        })
        .collect();
    // In the order of the values themselves (25, 50, 75, 100), not of their text.
    anchor_calibration.sort_by(|a, b| cell_order(&a.value).total_cmp(&cell_order(&b.value)));
    let mut dropped_by_value: BTreeMap<String, f64> = BTreeMap::new();
    let by_value_i = DROPPED_BY_VALUE.index();
    for t in &per_target {
        let n = runs[t.target.as_str()] as f64;
        if let Figure::ByValue(by) = &t.figures[by_value_i] {
            for (k, &c) in by.iter() {
                *dropped_by_value.entry(k.clone()).or_default() += c as f64 / n;
            }
        }
    }
    let (targets, most_runs) = (runs.len(), runs.values().copied().max().unwrap_or(0));
    drop(runs);
    // Pooled, each (target, run)'s sums and values go, as a run read back from `metrics.json`
    // has none (about ten megabytes at a million findings, held through the tables otherwise).
    for t in &mut per_target {
        t.calibration_sums = BTreeMap::new();
        t.values = Vec::new();
    }

    ArmMetrics {
        policy: policy.to_string(),
        scale,
        targets,
        runs: most_runs,
        figures,
        promotion_rate: rate(promoted, merged),
        corroboration_rate: rate(corroborated, merged),
        rate_ci: RateIntervals {
            promotion_rate: wilson(promoted, merged),
            corroboration_rate: wilson(corroborated, merged),
        },
        values,
        precision: (judged > 0).then(|| judged_sum / judged as f64),
        judged_actionable: judged,
        dropped_by_value,
        anchor_calibration,
        malformed_reasons,
        failed_calls: Vec::new(),
        controls: None,
        ci,
        per_target,
    }
}

/// Running sums behind one [`CalibrationCell`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CalibrationSums {
    pub count: usize,
    pub confidence: f64,
    pub composite: f64,
}

/// One row of anchor calibration: how the judges rated findings at one confidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CalibrationCell {
    pub value: String,
    pub count: usize,
    /// Mean final confidence of the cell's findings, on the arm's scale (anchor 0–100, float
    /// 0–1): where the cell sits on a reliability diagram.
    pub mean_confidence: f64,
    pub mean_composite: f64,
}

/// Label of a confidence value for `dropped_by_value` and anchor calibration: the anchor itself,
/// or the right-closed bin of width `width` on the float scale.
pub fn value_label(confidence: f64, scale: Scale, width: f64) -> String {
    match scale {
        Scale::Anchor => format!("{confidence:.0}"),
        Scale::Float => {
            let bins = (1.0 / width).round() as usize;
            let b = bin_index(confidence, bins);
            let lower = b as f64 * width;
            let open = if b == 0 { '[' } else { '(' };
            format!("{open}{lower:.2}, {:.2}]", lower + width)
        }
    }
}

/// Anchor dispersion of raw confidence values: (distinct values, Shannon entropy in bits, the
/// fewest distinct values covering at least 80% of the findings).
pub fn dispersion(values: &[f64]) -> (usize, f64, usize) {
    if values.is_empty() {
        return (0, 0.0, 0);
    }
    // Ordered by value: a floating-point sum depends on its order, and a hash map's order changes
    // from process to process (the same corpus gave entropies differing in the 16th digit).
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    for &v in values {
        *counts.entry(round9(v).to_bits()).or_default() += 1;
    }
    let n = values.len() as f64;
    let entropy = counts
        .values()
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum::<f64>()
        .max(0.0);
    let mut sorted: Vec<usize> = counts.values().copied().collect();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let mut covered = 0;
    let mut needed = 0;
    for c in sorted {
        if covered as f64 >= 0.8 * n {
            break;
        }
        covered += c;
        needed += 1;
    }
    (counts.len(), entropy, needed)
}

/// Reliability units for `agreement.reviewers`: one per corroborated merged finding, holding
/// each contributing reviewer's recorded confidence (the highest, if one reviewer contributed
/// twice).
pub fn reviewer_units(merged: &[Merged]) -> Vec<Vec<f64>> {
    merged
        .iter()
        .filter(|m| m.corroborated)
        .map(|m| {
            m.reviewers
                .iter()
                .map(|r| {
                    m.contributions
                        .iter()
                        .filter(|c| &c.reviewer == r)
                        .map(|c| c.confidence)
                        .fold(f64::MIN, f64::max)
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests;
