//! Query metrics (docs/guides/capacity-review.md): per arm over its replayed queries, and treatment − baseline paired
//! over the queries both arms replayed. Intervals: Wilson for rates, a percentile bootstrap over
//! queries for means and calibration; the paired deltas resample queries, keeping each query's
//! two arms together.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::query::{replay, Outcome};
use super::usage::QUERY_USAGE;
use super::{value_counts, Comparison, UnitPair, ValueCount};
use crate::corpus::queries::Query;
use crate::policy::{Bands, ConfidencePolicy};
use crate::stats::bootstrap::{multinomial, parallel, Plan, UNITS_PER_PATTERN};
use crate::stats::calibration::{bin_index, calibrate, ece, round9, BinSums, Calibration, BINS};
use crate::stats::paired::{wilson, PairedDelta};
use crate::stats::patterns::patterns_of;
use crate::stats::quantile::percentile;
use crate::stats::test::{p_value as p_value_of, Test};

// Bins and outcomes are packed into a byte in the bootstrap loops.
const _: () = assert!(2 * BINS < u8::MAX as usize);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Band {
    Strong,
    Adequate,
    Weak,
    Failed,
}

impl Band {
    /// Decided on the confidence rounded to 9 decimal places.
    pub fn of(confidence: f64, bands: &Bands) -> Band {
        let c = round9(confidence);
        if c >= round9(bands.strong) {
            Band::Strong
        } else if c >= round9(bands.adequate) {
            Band::Adequate
        } else if c >= round9(bands.weak) {
            Band::Weak
        } else {
            Band::Failed
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Band::Strong => "strong",
            Band::Adequate => "adequate",
            Band::Weak => "weak",
            Band::Failed => "failed",
        }
    }
}

/// One query replayed by one arm: a row of the `queries` table.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryRow {
    pub arm: String,
    pub query_id: String,
    pub run: u32,
    pub outcome: Outcome,
    pub band: Band,
    /// The query recorded an `error`, or no tool that counted ran successfully.
    pub error: bool,
    pub recovery_recorded: bool,
    pub first_pass_correct: Option<bool>,
    /// Counterfactual: `correct` when the gate fired and recovery was recorded, else the
    /// first-pass answer.
    pub final_correct: Option<bool>,
    /// What the recorded query spent, if its line says.
    pub spent: Option<crate::corpus::usage::Spent>,
}

impl QueryRow {
    /// Fired although the first pass was already right.
    pub fn unnecessary(&self) -> bool {
        unnecessary(&self.outcome, self.first_pass_correct)
    }

    /// What the query spent, as the usage figures read it.
    pub fn spending(&self) -> super::usage::Spending<'_> {
        (self.query_id.as_str(), self.run, self.spent)
    }
}

/// A recovery that fired although the first pass was already right.
pub fn unnecessary(outcome: &Outcome, first_pass_correct: Option<bool>) -> bool {
    outcome.fired && first_pass_correct == Some(true)
}

/// The first-pass answer: `first_pass_correct`, or `correct` when the trace holds no recovery
/// (then the recorded answer is the first-pass answer).
fn first_pass(q: &Query) -> Option<bool> {
    q.first_pass_correct
        .or_else(|| (!q.recovery_recorded()).then_some(q.correct).flatten())
}

/// What a replayed query is judged by: whether its trace recorded recovery, its first-pass
/// answer and its counterfactual final answer (`correct` when the gate fired and recovery
/// was recorded, else the first-pass answer).
pub struct Answers {
    pub recovery_recorded: bool,
    pub first_pass_correct: Option<bool>,
    pub final_correct: Option<bool>,
}

/// [`Answers`] of `q` replayed to `outcome`.
pub fn answers(q: &Query, outcome: &Outcome) -> Answers {
    let recovery_recorded = q.recovery_recorded();
    let first_pass_correct = first_pass(q);
    let final_correct = if outcome.fired && recovery_recorded {
        q.correct
    } else {
        first_pass_correct
    };
    Answers {
        recovery_recorded,
        first_pass_correct,
        final_correct,
    }
}

/// Replays every query under `policy`, in the given order.
pub fn replay_all(arm: &str, policy: &ConfidencePolicy, queries: &[&Query]) -> Vec<QueryRow> {
    let bands = policy.bands();
    queries
        .iter()
        .map(|q| {
            let outcome = replay(policy, q);
            let a = answers(q, &outcome);
            QueryRow {
                arm: arm.to_string(),
                query_id: q.query_id.clone(),
                run: q.run,
                band: Band::of(outcome.confidence, &bands),
                error: q.error.is_some() || !outcome.usable,
                recovery_recorded: a.recovery_recorded,
                first_pass_correct: a.first_pass_correct,
                final_correct: a.final_correct,
                spent: q.spent,
                outcome,
            }
        })
        .collect()
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BandCounts {
    pub strong: usize,
    pub adequate: usize,
    pub weak: usize,
    pub failed: usize,
}

/// Calibration of final confidence against final correctness, with bootstrap intervals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueryCalibration {
    #[serde(flatten)]
    pub calibration: Calibration,
    pub ece_ci: Option<[f64; 2]>,
    pub brier_ci: Option<[f64; 2]>,
}

/// docs/guides/capacity-review.md's query metrics of one arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueryArmMetrics {
    pub policy: String,
    pub stop_threshold: f64,
    pub recovery_threshold: f64,
    pub band_thresholds: Bands,
    pub queries: usize,
    pub errors: usize,
    pub stopped: usize,
    pub recovery_fired: usize,
    pub recovery_gate_rate: f64,
    /// Recovery attempts that counted, summed over queries.
    pub recovery_attempts: u64,
    pub primary_confidence_mean: f64,
    pub confidence_mean: f64,
    pub confidence_median: f64,
    pub distinct_values: usize,
    /// Every final confidence value (9 decimal places) with its count, ascending.
    pub values: Vec<ValueCount>,
    pub bands: BandCounts,
    /// Share of queries answered right before any recovery, over queries with that label.
    pub first_pass_success: Option<f64>,
    pub final_accuracy: Option<f64>,
    /// Fired with recovery recorded: share right after recovery.
    pub recovery_success: Option<f64>,
    pub recovered: usize,
    pub unnecessary_recovery_rate: f64,
    /// Queries with a final outcome, the denominator of `final_accuracy` and `calibration`.
    pub labelled: usize,
    pub calibration: Option<QueryCalibration>,
    /// 95% intervals: Wilson for the rates, a percentile bootstrap over queries for
    /// `confidence_mean`, order statistics for `query_latency_p95_ms`.
    pub ci: BTreeMap<String, [f64; 2]>,
    /// What the queries spent, where their traces say (docs/reference.md, "Cost and latency").
    #[serde(
        flatten,
        default,
        skip_serializing_if = "super::usage::UsageFigures::is_empty"
    )]
    pub usage: super::usage::UsageFigures<super::usage::Queries>,
}

/// The arm metrics of `rows`.
pub fn arm_metrics(policy: &ConfidencePolicy, rows: &[QueryRow], plan: Plan) -> QueryArmMetrics {
    let n = rows.len();
    let nf = n.max(1) as f64;
    let count = |f: &dyn Fn(&QueryRow) -> bool| rows.iter().filter(|r| f(r)).count();
    let conf: Vec<f64> = rows.iter().map(|r| r.outcome.confidence).collect();
    let mut sorted = conf.clone();
    sorted.sort_unstable_by(f64::total_cmp);
    let values = value_counts(sorted.iter().copied());
    let mut bands = BandCounts::default();
    for r in rows {
        *match r.band {
            Band::Strong => &mut bands.strong,
            Band::Adequate => &mut bands.adequate,
            Band::Weak => &mut bands.weak,
            Band::Failed => &mut bands.failed,
        } += 1;
    }
    let share = |hits: usize, of: usize| (of > 0).then(|| hits as f64 / of as f64);
    let fp_labelled = count(&|r| r.first_pass_correct.is_some());
    let fp_right = count(&|r| r.first_pass_correct == Some(true));
    let labelled = count(&|r| r.final_correct.is_some());
    let right = count(&|r| r.final_correct == Some(true));
    let recovered_rows: Vec<&QueryRow> = rows
        .iter()
        .filter(|r| r.outcome.fired && r.recovery_recorded && r.final_correct.is_some())
        .collect();
    let recovered_right = recovered_rows
        .iter()
        .filter(|r| r.final_correct == Some(true))
        .count();
    let fired = count(&|r| r.outcome.fired);
    let unnecessary = count(&|r| r.unnecessary());

    let (with_label, outcomes): (Vec<f64>, Vec<bool>) = rows
        .iter()
        .filter_map(|r| Some((r.outcome.confidence, r.final_correct?)))
        .unzip();
    let boot = arm_bootstrap(rows, plan);
    let calibration = calibrate(&with_label, &outcomes, BINS)
        .ok()
        .map(|calibration| QueryCalibration {
            calibration,
            ece_ci: boot.ece,
            brier_ci: boot.brier,
        });

    let mut ci = BTreeMap::new();
    for (figure, interval) in [
        (CiFigure::ConfidenceMean, boot.mean),
        (CiFigure::RecoveryGateRate, wilson(fired as f64, n as f64)),
        (
            CiFigure::FirstPassSuccess,
            wilson(fp_right as f64, fp_labelled as f64),
        ),
        (
            CiFigure::FinalAccuracy,
            wilson(right as f64, labelled as f64),
        ),
        (
            CiFigure::RecoverySuccess,
            wilson(recovered_right as f64, recovered_rows.len() as f64),
        ),
        (
            CiFigure::UnnecessaryRecoveryRate,
            wilson(unnecessary as f64, n as f64),
        ),
    ] {
        if let Some(interval) = interval {
            ci.insert(figure.name().to_string(), interval);
        }
    }
    let (usage, usage_ci) =
        super::usage::arm_figures::<super::usage::Queries>(rows.iter().map(|r| r.spending().2));
    ci.extend(usage_ci);

    QueryArmMetrics {
        policy: policy.name().to_string(),
        stop_threshold: policy.stop_threshold(),
        recovery_threshold: policy.recovery_threshold(),
        band_thresholds: policy.bands(),
        queries: n,
        errors: count(&|r| r.error),
        stopped: count(&|r| r.outcome.stopped),
        recovery_fired: fired,
        recovery_gate_rate: fired as f64 / nf,
        recovery_attempts: rows.iter().map(|r| u64::from(r.outcome.attempts)).sum(),
        primary_confidence_mean: rows.iter().map(|r| r.outcome.primary).sum::<f64>() / nf,
        confidence_mean: conf.iter().sum::<f64>() / nf,
        confidence_median: percentile(&sorted, 0.5).unwrap_or(0.0),
        distinct_values: values.len(),
        values,
        bands,
        first_pass_success: share(fp_right, fp_labelled),
        final_accuracy: share(right, labelled),
        recovery_success: share(recovered_right, recovered_rows.len()),
        recovered: recovered_rows.len(),
        unnecessary_recovery_rate: unnecessary as f64 / nf,
        labelled,
        calibration,
        ci,
        usage,
    }
}

/// Per-bin sums for ECE over a resample.
#[derive(Clone)]
struct Bins {
    count: [f64; BINS],
    conf: [f64; BINS],
    hits: [f64; BINS],
    n: f64,
    brier: f64,
}

impl Bins {
    fn new() -> Self {
        Bins {
            count: [0.0; BINS],
            conf: [0.0; BINS],
            hits: [0.0; BINS],
            n: 0.0,
            brier: 0.0,
        }
    }

    /// One query counted `w` times (w = 1 leaves every sum as a plain addition would).
    fn add(&mut self, bin: usize, p: f64, y: bool, w: f64) {
        let y = f64::from(u8::from(y));
        self.count[bin] += w;
        self.conf[bin] += p * w;
        self.hits[bin] += y * w;
        self.n += w;
        self.brier += (p - y) * (p - y) * w;
    }

    /// (ECE, Brier); `None` without outcomes.
    fn finish(&self) -> Option<(f64, f64)> {
        (self.n > 0.0).then(|| {
            let sums = (0..BINS).map(|b| BinSums {
                count: self.count[b],
                confidence: self.conf[b],
                hits: self.hits[b],
            });
            (ece(sums, self.n), self.brier / self.n)
        })
    }
}

struct ArmIntervals {
    mean: Option<[f64; 2]>,
    ece: Option<[f64; 2]>,
    brier: Option<[f64; 2]>,
}

/// 95% percentile interval of the replicates that are defined (not NaN).
fn interval(mut draws: Vec<f64>) -> Option<[f64; 2]> {
    draws.retain(|x| !x.is_nan());
    draws.sort_unstable_by(f64::total_cmp);
    Some([percentile(&draws, 0.025)?, percentile(&draws, 0.975)?])
}

/// One bootstrap over the arm's queries for its mean confidence, ECE and Brier score.
fn arm_bootstrap(rows: &[QueryRow], plan: Plan) -> ArmIntervals {
    let n = rows.len();
    if n == 0 || plan.replicates == 0 {
        return ArmIntervals {
            mean: None,
            ece: None,
            brier: None,
        };
    }
    // Per query: its confidence, and its bin and outcome packed as 2·bin + y (NONE without).
    const NONE: u8 = u8::MAX;
    let cells: Vec<(f64, u8)> = rows
        .iter()
        .map(|r| {
            let p = r.outcome.confidence;
            let code = r
                .final_correct
                .map_or(NONE, |y| (2 * bin_index(p, BINS) + usize::from(y)) as u8);
            (p, code)
        })
        .collect();
    // Mean, ECE and Brier of queries drawn with multiplicities.
    let stats = |drawn: &mut dyn Iterator<Item = ((f64, u8), u32)>| {
        let mut sum = 0.0;
        let mut bins = Bins::new();
        for ((p, code), w) in drawn {
            let w = f64::from(w);
            sum += p * w;
            if code != NONE {
                bins.add(usize::from(code / 2), p, code % 2 == 1, w);
            }
        }
        let (ece, brier) = bins.finish().unwrap_or((f64::NAN, f64::NAN));
        [sum / n as f64, ece, brier]
    };
    let keys = cells.iter().map(|&(p, code)| (p.to_bits(), code));
    let draws: Vec<[f64; 3]> = match patterns_of(keys, n / UNITS_PER_PATTERN) {
        Some((first, multiplicity)) => {
            let reps: Vec<(f64, u8)> = first.iter().map(|&i| cells[i]).collect();
            parallel(
                plan,
                || vec![0u32; reps.len()],
                |weights, rng| {
                    multinomial(&multiplicity, n as u64, rng, weights);
                    stats(&mut reps.iter().copied().zip(weights.iter().copied()))
                },
            )
        }
        None => parallel(
            plan,
            || (),
            |_, rng| stats(&mut (0..n).map(|_| (cells[rng.below(n as u64) as usize], 1))),
        ),
    };
    let column = |i: usize| interval(draws.iter().map(|d| d[i]).collect());
    ArmIntervals {
        mean: column(0),
        ece: column(1),
        brier: column(2),
    }
}

/// One query's values in both arms: confidences, and flags (bit 0: both arms have a final
/// outcome; per arm from bit 1 + 3·arm: fired, unnecessary, right).
#[derive(Clone, Copy)]
struct PairCell {
    conf: [f64; 2],
    primary: [f64; 2],
    flags: u16,
    bin: [u8; 2],
}

/// Per arm, the [`DELTA_METRICS`] of one resample of `n` pairs, each drawn pair with how many
/// times it was drawn; NaN where no drawn pair has outcomes in both arms.
fn pair_stats<'a>(n: usize, drawn: impl Iterator<Item = (&'a PairCell, u32)>) -> [[f64; 7]; 2] {
    let mut sums = [[0.0f64; 4]; 2];
    let mut count = [[0u32; BINS]; 2];
    let mut conf = [[0.0f64; BINS]; 2];
    let mut hits = [[0u32; BINS]; 2];
    let mut brier = [0.0f64; 2];
    let mut labelled = 0u32;
    // A pair counted `k` times; with k = 1 every sum is the plain addition.
    for (c, k) in drawn {
        let w = f64::from(k);
        let both = c.flags & 1 == 1;
        labelled += u32::from(both) * k;
        for arm in 0..2 {
            let bits = c.flags >> (1 + 3 * arm);
            let p = c.conf[arm];
            let s = &mut sums[arm];
            s[0] += p * w;
            s[1] += c.primary[arm] * w;
            s[2] += f64::from(bits & 1) * w;
            s[3] += f64::from((bits >> 1) & 1) * w;
            if both {
                let y = (bits >> 2) & 1;
                let b = usize::from(c.bin[arm]);
                count[arm][b] += k;
                conf[arm][b] += p * w;
                hits[arm][b] += u32::from(y) * k;
                brier[arm] += (p - f64::from(y)).powi(2) * w;
            }
        }
    }
    let mut out = [[f64::NAN; 7]; 2];
    for arm in 0..2 {
        for m in 0..4 {
            out[arm][m] = sums[arm][m] / n as f64;
        }
        if labelled > 0 {
            let l = f64::from(labelled);
            out[arm][4] = hits[arm].iter().map(|&h| f64::from(h)).sum::<f64>() / l;
            out[arm][5] = brier[arm] / l;
            let sums = (0..BINS).map(|b| BinSums {
                count: f64::from(count[arm][b]),
                confidence: conf[arm][b],
                hits: f64::from(hits[arm][b]),
            });
            out[arm][6] = ece(sums, l);
        }
    }
    out
}

/// A figure of a query arm with a 95% interval: Wilson for the rates, a percentile bootstrap
/// over queries for the mean confidence. Its name is its key in the arm's `ci` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CiFigure {
    ConfidenceMean,
    RecoveryGateRate,
    FirstPassSuccess,
    FinalAccuracy,
    RecoverySuccess,
    UnnecessaryRecoveryRate,
}

impl CiFigure {
    /// Every one, in `ci` table order.
    pub const ALL: [CiFigure; 6] = [
        CiFigure::ConfidenceMean,
        CiFigure::RecoveryGateRate,
        CiFigure::FirstPassSuccess,
        CiFigure::FinalAccuracy,
        CiFigure::RecoverySuccess,
        CiFigure::UnnecessaryRecoveryRate,
    ];

    /// Its key in the arm's `ci` table (and the arm figure it bounds).
    pub const fn name(self) -> &'static str {
        match self {
            CiFigure::ConfidenceMean => "confidence_mean",
            CiFigure::RecoveryGateRate => "recovery_gate_rate",
            CiFigure::FirstPassSuccess => "first_pass_success",
            CiFigure::FinalAccuracy => "final_accuracy",
            CiFigure::RecoverySuccess => "recovery_success",
            CiFigure::UnnecessaryRecoveryRate => "unnecessary_recovery_rate",
        }
    }
}

/// The keys of each arm's `ci` table (the gate's `<ci-figure>` paths): the figures above, then
/// the usage percentiles.
pub const CI_METRICS: [&str; CiFigure::ALL.len() + super::usage::QUERY_P95.len()] = {
    let p95 = super::usage::QUERY_P95;
    let mut names = [""; CiFigure::ALL.len() + super::usage::QUERY_P95.len()];
    let mut i = 0;
    while i < CiFigure::ALL.len() {
        names[i] = CiFigure::ALL[i].name();
        i += 1;
    }
    while i < names.len() {
        names[i] = p95[i - CiFigure::ALL.len()];
        i += 1;
    }
    names
};

impl QueryArmMetrics {
    /// The 95% interval of `figure`, where it is defined.
    pub fn interval(&self, figure: CiFigure) -> Option<[f64; 2]> {
        self.ci.get(figure.name()).copied()
    }
}

/// One query metric compared between the arms (docs/guides/capacity-review.md), declared once: its key in
/// `queries.delta`, its row in the report's delta table and a gate's `<query-delta>` path.
#[derive(Clone, Copy)]
pub struct QueryDelta {
    pub name: &'static str,
    /// Its value on one pair cell in one arm (0 baseline, 1 treatment), whose per-query
    /// differences the test of the mean compares and whose mean is the arm's figure; `None` for
    /// a figure that is not a mean over queries (ECE), whose p-value is the bootstrap's.
    per_query: Option<fn(&PairCell, usize) -> f64>,
    /// Over the pairs with a final outcome in both arms only.
    pub labelled: bool,
    /// Its row in the report's summary table: (rank, label).
    pub summary: Option<(u8, &'static str)>,
    /// Which way it gets better, where it has one.
    pub better: Option<super::Better>,
    /// How the report's tables name it: the summary row's label when it has one.
    pub label: Option<&'static str>,
}

impl QueryDelta {
    /// Whether the delta is a mean of per-query values (every one but `ece`).
    pub fn has_per_query(&self) -> bool {
        self.per_query.is_some()
    }
}

const fn delta(
    name: &'static str,
    labelled: bool,
    per_query: Option<fn(&PairCell, usize) -> f64>,
    summary: Option<(u8, &'static str)>,
) -> QueryDelta {
    QueryDelta {
        name,
        per_query,
        labelled,
        summary,
        better: None,
        label: match summary {
            Some((_, l)) => Some(l),
            None => None,
        },
    }
}

impl QueryDelta {
    const fn better(mut self, b: super::Better) -> Self {
        self.better = Some(b);
        self
    }
    /// Its label where it has no summary row.
    const fn labelled(mut self, label: &'static str) -> Self {
        self.label = Some(label);
        self
    }
}

/// Bit `k` of a pair cell's flags for `arm`: 0 the gate fired, 1 recovery was unnecessary,
/// 2 the final answer is right.
fn bit(c: &PairCell, arm: usize, k: usize) -> f64 {
    f64::from((c.flags >> (1 + 3 * arm + k)) & 1)
}

/// Every query delta, in output order. `pair_stats` computes them in one packed pass over
/// the pairs, in this order; a test checks it against each entry's `per_query` mean.
pub const QUERY_DELTAS: [QueryDelta; 7] = [
    delta(
        "confidence_mean",
        false,
        Some(|c, a| c.conf[a]),
        Some((0, "mean final confidence")),
    ),
    delta(
        "primary_confidence_mean",
        false,
        Some(|c, a| c.primary[a]),
        None,
    )
    .labelled("mean primary-phase confidence"),
    delta(
        "recovery_gate_rate",
        false,
        Some(|c, a| bit(c, a, 0)),
        Some((1, "recovery gate rate")),
    ),
    delta(
        "unnecessary_recovery_rate",
        false,
        Some(|c, a| bit(c, a, 1)),
        Some((2, "unnecessary recovery rate")),
    )
    .better(super::Better::Lower),
    delta(
        "final_accuracy",
        true,
        Some(|c, a| bit(c, a, 2)),
        Some((3, "final accuracy")),
    )
    .better(super::Better::Higher),
    delta(
        "brier",
        true,
        Some(|c, a| (c.conf[a] - bit(c, a, 2)).powi(2)),
        Some((5, "Brier score")),
    )
    .better(super::Better::Lower),
    delta("ece", true, None, Some((4, "calibration error (ECE)"))).better(super::Better::Lower),
];

/// The keys of `queries.delta`: the names of [`QUERY_DELTAS`], then of the usage figures
/// (`super::usage::QUERY_USAGE`).
pub const DELTA_METRICS: [&str; QUERY_DELTAS.len() + QUERY_USAGE.len()] = {
    let mut names = [""; QUERY_DELTAS.len() + QUERY_USAGE.len()];
    let mut i = 0;
    while i < QUERY_DELTAS.len() {
        names[i] = QUERY_DELTAS[i].name;
        i += 1;
    }
    while i < names.len() {
        names[i] = QUERY_USAGE[i - QUERY_DELTAS.len()].name;
        i += 1;
    }
    names
};

/// treatment − baseline over the (query, run) pairs both arms replayed. Every metric but `ece`
/// is a mean of per-query values, with the test of that mean over the per-query differences
/// (McNemar's for pass/fail figures, else the paired t-test);
/// `ece` is not, so its p-value is the bootstrap's (twice the smaller share of replicate
/// deltas on either side of 0). `final_accuracy`, `brier` and `ece` use the pairs with a final
/// outcome in both arms.
pub fn deltas(baseline: &[QueryRow], treatment: &[QueryRow], plan: Plan) -> Vec<Comparison> {
    let index: HashMap<(&str, u32), usize> = baseline
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.query_id.as_str(), r.run), i))
        .collect();
    let pairs: Vec<(&QueryRow, &QueryRow)> = treatment
        .iter()
        .filter_map(|t| Some((&baseline[*index.get(&(t.query_id.as_str(), t.run))?], t)))
        .collect();
    let n = pairs.len();
    if n == 0 {
        return Vec::new();
    }
    // Per pair: both arms' values, packed so the resampling loop stays in cache.
    let cells: Vec<PairCell> = pairs
        .iter()
        .map(|(b, t)| {
            let labelled = b.final_correct.is_some() && t.final_correct.is_some();
            let mut flags = u16::from(labelled);
            let mut bin = [0u8; 2];
            for (arm, r) in [b, t].into_iter().enumerate() {
                let shift = 1 + 3 * arm;
                flags |= u16::from(r.outcome.fired) << shift;
                flags |= u16::from(r.unnecessary()) << (shift + 1);
                flags |= u16::from(r.final_correct == Some(true)) << (shift + 2);
                bin[arm] = bin_index(r.outcome.confidence, BINS) as u8;
            }
            PairCell {
                conf: [b.outcome.confidence, t.outcome.confidence],
                primary: [b.outcome.primary, t.outcome.primary],
                flags,
                bin,
            }
        })
        .collect();
    let point = pair_stats(n, cells.iter().map(|c| (c, 1)));
    let delta = |s: [[f64; 7]; 2]| -> [f64; 7] { std::array::from_fn(|m| s[1][m] - s[0][m]) };
    let keys = cells.iter().map(|c| {
        let bits = [c.conf[0], c.conf[1], c.primary[0], c.primary[1]].map(f64::to_bits);
        (bits, c.flags, c.bin)
    });
    let draws: Vec<[f64; 7]> = match patterns_of(keys, n / UNITS_PER_PATTERN) {
        Some((first, multiplicity)) => {
            let reps: Vec<PairCell> = first.iter().map(|&i| cells[i]).collect();
            parallel(
                plan,
                || vec![0u32; reps.len()],
                |weights, rng| {
                    multinomial(&multiplicity, n as u64, rng, weights);
                    delta(pair_stats(n, reps.iter().zip(weights.iter().copied())))
                },
            )
        }
        None => parallel(
            plan,
            || (),
            |_, rng| {
                let drawn = (0..n).map(|_| (&cells[rng.below(n as u64) as usize], 1));
                delta(pair_stats(n, drawn))
            },
        ),
    };
    // Per-query values for the tests of the mean and the pairs table; outcomes only where both arms
    // have one.
    let labelled: Vec<usize> = (0..n).filter(|&i| cells[i].flags & 1 == 1).collect();
    let all: Vec<usize> = (0..n).collect();
    let per_query: Vec<Option<Vec<UnitPair>>> = QUERY_DELTAS
        .iter()
        .map(|d| {
            let of = if d.labelled { &labelled } else { &all };
            d.per_query.map(|f| {
                of.iter()
                    .map(|&i| UnitPair {
                        unit: pairs[i].1.query_id.clone(),
                        run: Some(pairs[i].1.run),
                        baseline: f(&cells[i], 0),
                        treatment: f(&cells[i], 1),
                    })
                    .collect()
            })
        })
        .collect();

    let mut out = Vec::new();
    for (m, (name, units)) in DELTA_METRICS.iter().zip(per_query).enumerate() {
        let (b, t) = (point[0][m], point[1][m]);
        if b.is_nan() || t.is_nan() {
            continue; // no pair with an outcome in both arms
        }
        let column: Vec<f64> = draws.iter().map(|d| d[m]).filter(|x| !x.is_nan()).collect();
        let pairs = if QUERY_DELTAS[m].labelled {
            labelled.len()
        } else {
            n
        };
        // A per-query figure is tested by its mean difference (McNemar's on 0/1 outcomes,
        // else the paired t-test); ECE, a figure of the whole set, by its bootstrap.
        let (test, p_value, diffs) = match &units {
            Some(u) => {
                let (bs, ts): (Vec<f64>, Vec<f64>) =
                    u.iter().map(|p| (p.baseline, p.treatment)).unzip();
                let diffs: Vec<f64> = ts.iter().zip(&bs).map(|(t, b)| t - b).collect();
                let test = Test::of(&bs, &ts);
                (test, p_value_of(test, &diffs), Some(diffs))
            }
            None => {
                let p = if column.is_empty() {
                    1.0
                } else {
                    let below = column.iter().filter(|&&d| d <= 0.0).count() as f64;
                    let above = column.iter().filter(|&&d| d >= 0.0).count() as f64;
                    (2.0 * below.min(above) / column.len() as f64).min(1.0)
                };
                (Test::Bootstrap, (pairs >= 2).then_some(p), None)
            }
        };
        out.push(Comparison {
            name,
            delta: PairedDelta {
                baseline: b,
                treatment: t,
                delta: t - b,
                ci: interval(column),
                p_value,
                test,
                mde: diffs
                    .as_deref()
                    .and_then(|d| crate::stats::power::mde_for(test, d)),
                sd: diffs.as_deref().and_then(crate::stats::test::sd),
                discordant: diffs
                    .as_deref()
                    .filter(|_| test == Test::Mcnemar)
                    .map(|d| d.iter().filter(|&&x| x != 0.0).count()),
                pairs,
            },
            units: units.unwrap_or_default(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::queries::parse;
    use crate::policy::{CategoryMax, FlatMean};
    use crate::stats::bootstrap::Method;

    fn plan(replicates: usize, threads: usize) -> Plan {
        Plan {
            method: Method::Units,
            replicates,
            seed: 7,
            threads,
        }
    }

    /// Four queries with worked outcomes under both default models.
    const TRACES: &str = r#"
{"query_id": "a", "first_pass_correct": true, "correct": true, "tools": [{"tool": "find", "target": "Foo", "hits": 5}, {"tool": "read", "target": "src/foo.h", "files": 1, "relevant": true}, {"tool": "grep", "target": "foo", "hits": 6}, {"tool": "read", "target": "src/foo.cpp", "files": 1, "relevant": true}, {"tool": "grep", "phase": "recovery", "target": "foo", "hits": 2}]}
{"query_id": "b", "first_pass_correct": false, "correct": true, "tools": [{"tool": "find", "target": "Bar", "hits": 0}, {"tool": "read", "target": "README.md", "files": 1, "relevant": true}, {"tool": "grep", "phase": "recovery", "target": "bar", "hits": 4}, {"tool": "read", "phase": "recovery", "target": "bar.rs", "files": 1, "relevant": true}]}
{"query_id": "c", "error": "timeout", "first_pass_correct": false, "correct": false, "tools": []}
{"query_id": "d", "correct": true, "tools": [{"tool": "discovery", "target": "baz", "factors": 4}]}
"#;

    fn rows(policy: &ConfidencePolicy) -> Vec<QueryRow> {
        let (qs, problems) = parse("q.jsonl", TRACES.as_bytes());
        assert!(problems.is_empty(), "{problems:?}");
        let refs: Vec<&Query> = qs.iter().collect();
        replay_all("arm", policy, &refs)
    }

    #[test]
    fn rows_carry_counterfactual_outcomes() {
        let flat = rows(&ConfidencePolicy::FlatMean(FlatMean::default()));
        // a: (0.8+0.55+0.8+0.55)/4 = 0.675 fires; one attempt: 3.2/5 = 0.64; correct after
        //    recovery (recorded).
        // b: (0.1 + 0.55)/2 = 0.325 fires → (0.65 + 0.5)/3 = 0.383333.
        // c: no tools → 0, stops; an error.
        // d: discovery 4/4 = 1.0 → no recovery; no first_pass_correct, no recovery recorded
        //    → `correct` is the first-pass answer.
        let conf: Vec<f64> = flat.iter().map(|r| r.outcome.confidence).collect();
        assert_eq!(conf, [0.64, round9(1.15 / 3.0), 0.0, 1.0]);
        assert_eq!(
            flat.iter().map(|r| r.final_correct).collect::<Vec<_>>(),
            [Some(true), Some(true), Some(false), Some(true)]
        );
        assert_eq!(flat[3].first_pass_correct, Some(true));
        assert_eq!(
            flat.iter().map(|r| r.band).collect::<Vec<_>>(),
            [Band::Adequate, Band::Weak, Band::Failed, Band::Strong]
        );
        assert!(flat[2].error && !flat[0].error);

        let cmax = rows(&ConfidencePolicy::CategoryMax(CategoryMax::default()));
        // a: 0.92 (see replay::query tests) → no recovery: the first-pass answer stands.
        // b: search 0.10, read 0.55 → 0.345455 fires; after recovery search 0.65, read 0.80,
        //    grep and read confirm "bar" (k = 2, search+read) → 0.731818 × 1.15 = 0.841591.
        // d: discovery alone 0.85.
        let conf: Vec<f64> = cmax.iter().map(|r| r.outcome.confidence).collect();
        assert_eq!(conf, [0.92, round9(4.025 / 5.5 * 1.15), 0.0, 0.85]);
        assert!(!cmax[0].outcome.fired && cmax[1].outcome.fired);
        assert_eq!(cmax[1].final_correct, Some(true));
    }

    #[test]
    fn arm_metrics_by_hand() {
        let policy = ConfidencePolicy::FlatMean(FlatMean::default());
        let m = arm_metrics(&policy, &rows(&policy), plan(200, 1));
        assert_eq!(
            (m.queries, m.errors, m.stopped, m.recovery_fired),
            (4, 1, 1, 2)
        );
        assert_eq!(m.recovery_gate_rate, 0.5);
        assert_eq!(m.recovery_attempts, 2);
        let b = round9(1.15 / 3.0);
        assert!((m.confidence_mean - (0.64 + b + 1.0) / 4.0).abs() < 1e-12);
        // median of 0, 0.383, 0.64, 1.0
        assert!((m.confidence_median - (b + 0.64) / 2.0).abs() < 1e-12);
        assert_eq!(m.distinct_values, 4);
        assert_eq!(
            m.bands,
            BandCounts {
                strong: 1,
                adequate: 1,
                weak: 1,
                failed: 1
            }
        );
        // first pass: a right, b wrong, c wrong, d right (from `correct`) → 2/4.
        assert_eq!(m.first_pass_success, Some(0.5));
        // final: a, b right after recorded recovery; c wrong; d right → 3/4.
        assert_eq!(m.final_accuracy, Some(0.75));
        assert_eq!((m.recovery_success, m.recovered), (Some(1.0), 2));
        // a fired although its first pass was right.
        assert_eq!(m.unnecessary_recovery_rate, 0.25);
        let cal = m.calibration.as_ref().unwrap();
        // Brier: (0.64−1)² + (0.3833−1)² + 0 + 0 = 0.1296 + 0.380278 → /4
        let brier = ((0.64f64 - 1.0).powi(2) + (b - 1.0).powi(2)) / 4.0;
        assert!((cal.calibration.brier - brier).abs() < 1e-12);
        // ECE: bins 1 (0 → 0), 4 (0.383 → 1), 7 (0.64 → 1), 10 (1.0 → 1):
        let ece = ((1.0 - b) + (1.0 - 0.64)) / 4.0;
        assert!((cal.calibration.ece - ece).abs() < 1e-12);
        assert_eq!(cal.calibration.auroc, Some(1.0));
        let [lo, hi] = cal.ece_ci.unwrap();
        assert!(lo <= hi && hi <= 1.0);
        let [lo, hi] = m.ci["confidence_mean"];
        assert!(lo <= m.confidence_mean && m.confidence_mean <= hi);
        assert!(m.ci.contains_key("recovery_success"));
    }

    #[test]
    fn deltas_pair_queries_and_are_seeded() {
        let b = rows(&ConfidencePolicy::FlatMean(FlatMean::default()));
        let t = rows(&ConfidencePolicy::CategoryMax(CategoryMax::default()));
        let one = deltas(&b, &t, plan(300, 1));
        let two = deltas(&b, &t, plan(300, 2));
        assert_eq!(one, two);
        let get = |name: &str| &one.iter().find(|c| c.name == name).unwrap().delta;
        let c = get("confidence_mean");
        assert_eq!(c.pairs, 4);
        let want_b = (0.64 + round9(1.15 / 3.0) + 1.0) / 4.0;
        let want_t = (0.92 + round9(4.025 / 5.5 * 1.15) + 0.85) / 4.0;
        assert!((c.baseline - want_b).abs() < 1e-12 && (c.treatment - want_t).abs() < 1e-12);
        // diffs: +0.28, +0.458258, 0, −0.15: mean 0.147064, sd 0.273490, t = 1.075469 on 3 df,
        // the paired t-test's p = 0.360958 (mpmath's regularized incomplete beta).
        assert_eq!(c.test, Test::PairedT);
        assert!((c.p_value.unwrap() - 0.360_958).abs() < 1e-6);
        let fired = get("recovery_gate_rate");
        assert_eq!((fired.baseline, fired.treatment), (0.5, 0.25));
        let acc = get("final_accuracy");
        // treatment: a's first pass was right, b recovered, c wrong, d right.
        assert_eq!((acc.baseline, acc.treatment), (0.75, 0.75));
        let [lo, hi] = get("ece").ci.unwrap();
        assert!(lo <= hi);
        assert_eq!(one.len(), QUERY_DELTAS.len());
        // Queries only one arm has are left out.
        let fewer = deltas(&b[..2], &t, plan(50, 1));
        assert_eq!(fewer[0].delta.pairs, 2);
        assert!(deltas(&b[..0], &t, plan(50, 1)).is_empty());
    }

    #[test]
    fn repeated_queries_are_resampled_as_patterns_with_the_same_intervals() {
        // 4 queries repeated 200 times fall into 4 patterns; nudging every confidence by a
        // different 1e-12 makes each copy its own, so the second set is drawn query by query.
        let copies = |rows: &[QueryRow], nudge: bool| -> Vec<QueryRow> {
            (0..200)
                .flat_map(|c| {
                    rows.iter().enumerate().map(move |(i, r)| {
                        let mut r = r.clone();
                        r.query_id = format!("{}-{c}", r.query_id);
                        if nudge {
                            r.outcome.confidence += (4 * c + i) as f64 * 1e-12;
                        }
                        r
                    })
                })
                .collect()
        };
        let b = rows(&ConfidencePolicy::FlatMean(FlatMean::default()));
        let t = rows(&ConfidencePolicy::CategoryMax(CategoryMax::default()));
        let grouped = deltas(&copies(&b, false), &copies(&t, false), plan(2000, 2));
        let drawn = deltas(&copies(&b, true), &copies(&t, true), plan(2000, 2));
        for (g, d) in grouped.iter().zip(&drawn) {
            let (Some([gl, gh]), Some([dl, dh])) = (g.delta.ci, d.delta.ci) else {
                panic!("{}: no interval", g.name);
            };
            // Two independent 2,000-replicate estimates of one interval, some 0.05 to 0.1 wide.
            assert!(
                (gl - dl).abs() < 0.01 && (gh - dh).abs() < 0.01,
                "{}: [{gl}, {gh}] against [{dl}, {dh}]",
                g.name
            );
        }
        let again = deltas(&copies(&b, false), &copies(&t, false), plan(2000, 1));
        assert_eq!(grouped, again, "seeded, whatever the threads");
        let (gb, db) = (
            arm_metrics_ci(&copies(&b, false)),
            arm_metrics_ci(&copies(&b, true)),
        );
        for (g, d) in gb.iter().zip(&db) {
            assert!(
                (g[0] - d[0]).abs() < 0.01 && (g[1] - d[1]).abs() < 0.01,
                "{gb:?} {db:?}"
            );
        }
    }

    /// Each arm's mean confidence, ECE and Brier intervals, in that order.
    fn arm_metrics_ci(rows: &[QueryRow]) -> Vec<[f64; 2]> {
        let a = arm_bootstrap(rows, plan(2000, 2));
        vec![a.mean.unwrap(), a.ece.unwrap(), a.brier.unwrap()]
    }

    /// The packed pass computes each catalogued delta: its point estimate in each arm is the
    /// mean of the entry's per-query value over the pairs the entry counts.
    #[test]
    fn the_packed_pass_agrees_with_every_catalogued_delta() {
        let b = rows(&ConfidencePolicy::FlatMean(FlatMean::default()));
        let t = rows(&ConfidencePolicy::CategoryMax(CategoryMax::default()));
        let out = deltas(&b, &t, plan(20, 1));
        let names: Vec<&str> = out.iter().map(|c| c.name).collect();
        assert_eq!(names, DELTA_METRICS[..QUERY_DELTAS.len()]);
        let cells: Vec<PairCell> = b
            .iter()
            .zip(&t)
            .map(|(b, t)| {
                let mut flags = u16::from(b.final_correct.is_some() && t.final_correct.is_some());
                for (arm, r) in [b, t].into_iter().enumerate() {
                    let shift = 1 + 3 * arm;
                    flags |= u16::from(r.outcome.fired) << shift;
                    flags |= u16::from(r.unnecessary()) << (shift + 1);
                    flags |= u16::from(r.final_correct == Some(true)) << (shift + 2);
                }
                PairCell {
                    conf: [b.outcome.confidence, t.outcome.confidence],
                    primary: [b.outcome.primary, t.outcome.primary],
                    flags,
                    bin: [0, 0],
                }
            })
            .collect();
        let mut checked = 0;
        for (d, c) in QUERY_DELTAS.iter().zip(&out) {
            let got = &c.delta;
            let Some(f) = d.per_query else {
                assert!(c.units.is_empty());
                continue;
            };
            // The pairs table's rows are the pairs the delta counts, with their values.
            assert_eq!(c.units.len(), got.pairs, "{}", d.name);
            let of: Vec<&PairCell> = cells
                .iter()
                .filter(|c| !d.labelled || c.flags & 1 == 1)
                .collect();
            assert_eq!(got.pairs, of.len(), "{}", d.name);
            for (arm, value) in [(0, got.baseline), (1, got.treatment)] {
                let mean = of.iter().map(|c| f(c, arm)).sum::<f64>() / of.len() as f64;
                assert!(
                    (mean - value).abs() < 1e-12,
                    "{} arm {arm}: {mean} ≠ {value}",
                    d.name
                );
            }
            checked += 1;
        }
        assert_eq!(checked, QUERY_DELTAS.len() - 1, "every mean but ECE");
    }

    #[test]
    fn bands_use_rounded_confidences_and_configured_bounds() {
        let d = Bands::default();
        assert_eq!(Band::of(0.75, &d), Band::Strong);
        assert_eq!(Band::of(0.749_999_999_9, &d), Band::Strong); // 0.75 at 9 decimals
        assert_eq!(Band::of(0.549, &d), Band::Weak);
        assert_eq!(Band::of(0.2499, &d), Band::Failed);
        let custom = Bands {
            strong: 0.9,
            adequate: 0.6,
            weak: 0.3,
        };
        assert_eq!(Band::of(0.85, &custom), Band::Adequate);
    }
}
