//! Review metrics (SPEC §4.2): per (arm, target, run) from the replayed findings, then per arm.
//!
//! Per arm, counts are summed over targets after averaging each target over its runs, and
//! per-target figures (dispersion) are averaged over runs first, so that a target reviewed three
//! times weighs as much as one reviewed once. Pure: judge composites come in as a lookup.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::review::{Merged, Queue, Route, Tier};
use super::{merge_counts, value_counts, ValueCount};
use crate::config::Scale;
use crate::stats::calibration::{bin_index, round9};
use crate::stats::paired::wilson;

/// Metrics of one (target, run).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetMetrics {
    pub target: String,
    pub run: u32,
    pub findings_raw: usize,
    pub malformed: usize,
    pub failed_reviewers: usize,
    pub distinct_values: usize,
    pub entropy_bits: f64,
    pub values_for_80pct: usize,
    pub merged: usize,
    pub corroborated: usize,
    pub promoted: usize,
    pub promotion_rate: f64,
    pub dropped: usize,
    pub fyi: usize,
    pub actionable: usize,
    pub decisions: usize,
    pub auto_apply: usize,
    pub demoted: usize,
    pub pre_existing: usize,
    /// Code mode's partition of actionable findings.
    pub fixer: usize,
    pub residual: usize,
    pub report_only: usize,
    /// Dropped findings per confidence value (anchor) or right-closed 0.05 bin (float).
    pub dropped_by_value: BTreeMap<String, usize>,
    /// Mean judge composite of the actionable findings that were judged; `None` when none were.
    pub precision: Option<f64>,
    /// Actionable findings with a judge composite.
    pub judged_actionable: usize,
    /// Sum of composites by final confidence value (anchor) or 0.1 bin (float); see
    /// [`CalibrationCell`]. Kept as sums so that arms can pool them exactly.
    #[serde(skip)]
    pub calibration_sums: BTreeMap<String, CalibrationSums>,
    /// The raw confidence values with their counts, pooled per arm into [`ArmMetrics::values`].
    #[serde(skip)]
    pub values: Vec<ValueCount>,
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

/// What one (target, run) contributed besides its merged findings.
pub struct TargetInput<'a> {
    pub target: &'a str,
    pub run: u32,
    /// Recorded confidences of the valid findings, before any policy touched them.
    pub raw_confidences: &'a [f64],
    pub malformed: usize,
    pub failed_reviewers: usize,
    pub merged: &'a [Merged],
}

/// Metrics of one (target, run). `composite` maps a finding id to its judge composite.
pub fn target_metrics(
    input: &TargetInput<'_>,
    scale: Scale,
    composite: &dyn Fn(&str) -> Option<f64>,
) -> TargetMetrics {
    let (distinct_values, entropy_bits, values_for_80pct) = dispersion(input.raw_confidences);
    let mut m = TargetMetrics {
        target: input.target.to_string(),
        run: input.run,
        findings_raw: input.raw_confidences.len(),
        malformed: input.malformed,
        failed_reviewers: input.failed_reviewers,
        distinct_values,
        entropy_bits,
        values_for_80pct,
        merged: input.merged.len(),
        values: value_counts(input.raw_confidences.iter().copied()),
        ..TargetMetrics::default()
    };
    let mut judged = Vec::new();
    for f in input.merged {
        m.corroborated += usize::from(f.corroborated);
        m.promoted += usize::from(f.promoted);
        match f.tier {
            Tier::Dropped => {
                m.dropped += 1;
                *m.dropped_by_value
                    .entry(value_label(f.confidence, scale, 0.05))
                    .or_default() += 1;
            }
            Tier::Fyi => m.fyi += 1,
            Tier::Actionable => m.actionable += 1,
            Tier::Soft | Tier::Suppressed => m.demoted += 1,
            Tier::PreExisting => m.pre_existing += 1,
        }
        match f.route {
            Some(Route::AutoApply) => m.auto_apply += 1,
            Some(Route::Decision) => m.decisions += 1,
            None => {}
        }
        match f.queue {
            Some(Queue::Fixer) => m.fixer += 1,
            Some(Queue::Residual) => m.residual += 1,
            Some(Queue::ReportOnly) => m.report_only += 1,
            None => {}
        }
        // A merged finding's composite: the mean over its judged contributions.
        let scores: Vec<f64> = f
            .contributions
            .iter()
            .filter_map(|c| c.id.as_deref().and_then(composite))
            .collect();
        if !scores.is_empty() {
            let c = scores.iter().sum::<f64>() / scores.len() as f64;
            let cell = m
                .calibration_sums
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
    m.promotion_rate = rate(m.promoted as f64, m.merged as f64);
    m.judged_actionable = judged.len();
    m.precision = (!judged.is_empty()).then(|| judged.iter().sum::<f64>() / judged.len() as f64);
    m
}

fn rate(num: f64, den: f64) -> f64 {
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// Arm-level review metrics (the names of SPEC §4.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArmMetrics {
    pub policy: String,
    pub scale: Scale,
    pub targets: usize,
    /// The most runs any target has.
    pub runs: usize,
    pub findings_raw: f64,
    pub malformed: f64,
    pub failed_reviewers: f64,
    pub merged: f64,
    pub corroborated: f64,
    pub promoted: f64,
    pub dropped: f64,
    pub fyi: f64,
    pub actionable: f64,
    pub decisions: f64,
    pub auto_apply: f64,
    pub demoted: f64,
    pub pre_existing: f64,
    pub fixer: f64,
    pub residual: f64,
    pub report_only: f64,
    pub distinct_values_mean: f64,
    pub distinct_values_max: f64,
    pub entropy_bits_mean: f64,
    pub values_for_80pct_mean: f64,
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
    pub per_target: Vec<TargetMetrics>,
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

/// Per-target values averaged over the target's runs, in target order of first appearance.
pub fn by_target(
    per_target: &[TargetMetrics],
    metric: fn(&TargetMetrics) -> Option<f64>,
) -> Vec<(String, f64)> {
    let mut order: Vec<String> = Vec::new();
    let mut sums: HashMap<&str, (f64, usize)> = HashMap::new();
    for t in per_target {
        if let Some(v) = metric(t) {
            let e = sums.entry(&t.target).or_insert_with(|| {
                order.push(t.target.clone());
                (0.0, 0)
            });
            e.0 += v;
            e.1 += 1;
        }
    }
    order
        .into_iter()
        .map(|t| {
            let (s, n) = sums[t.as_str()];
            (t, s / n as f64)
        })
        .collect()
}

/// Reads one per-target figure (`None` where it does not apply, as precision without verdicts).
pub type Metric = fn(&TargetMetrics) -> Option<f64>;

/// How a per-target figure is held in the targets table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number (a count of findings or returns).
    Count,
    /// A real number, always present.
    Real,
    /// A real number that may be absent (precision without verdicts).
    Optional,
}

/// One per-target review metric (SPEC §4.2), declared once. Its `name` is its key in each
/// `per_target` row of `metrics.json`, its column in the targets table, and, when it takes
/// part in A/B deltas, its key in `review.delta` (and so in the report's delta table and the
/// gate's `<review-delta>` paths).
#[derive(Clone, Copy, Debug)]
pub struct ReviewMetric {
    pub name: &'static str,
    pub kind: Kind,
    /// Gets a paired treatment − baseline delta over targets.
    pub delta: bool,
    pub read: Metric,
}

const fn metric(name: &'static str, kind: Kind, delta: bool, read: Metric) -> ReviewMetric {
    ReviewMetric {
        name,
        kind,
        delta,
        read,
    }
}

/// Every per-target review metric, in the order of the targets table's columns (after `arm`,
/// `target` and `run`) and of the delta table.
pub const REVIEW_METRICS: [ReviewMetric; 22] = [
    metric("findings_raw", Kind::Count, true, |t| {
        Some(t.findings_raw as f64)
    }),
    metric("malformed", Kind::Count, true, |t| Some(t.malformed as f64)),
    metric("failed_reviewers", Kind::Count, true, |t| {
        Some(t.failed_reviewers as f64)
    }),
    metric("distinct_values", Kind::Count, true, |t| {
        Some(t.distinct_values as f64)
    }),
    metric("entropy_bits", Kind::Real, true, |t| Some(t.entropy_bits)),
    metric("values_for_80pct", Kind::Count, true, |t| {
        Some(t.values_for_80pct as f64)
    }),
    metric("merged", Kind::Count, true, |t| Some(t.merged as f64)),
    metric("corroborated", Kind::Count, true, |t| {
        Some(t.corroborated as f64)
    }),
    metric("promoted", Kind::Count, true, |t| Some(t.promoted as f64)),
    metric("promotion_rate", Kind::Real, true, |t| {
        Some(t.promotion_rate)
    }),
    metric("dropped", Kind::Count, true, |t| Some(t.dropped as f64)),
    metric("fyi", Kind::Count, true, |t| Some(t.fyi as f64)),
    metric("actionable", Kind::Count, true, |t| {
        Some(t.actionable as f64)
    }),
    metric("decisions", Kind::Count, true, |t| Some(t.decisions as f64)),
    metric("auto_apply", Kind::Count, true, |t| {
        Some(t.auto_apply as f64)
    }),
    metric("demoted", Kind::Count, true, |t| Some(t.demoted as f64)),
    metric("pre_existing", Kind::Count, true, |t| {
        Some(t.pre_existing as f64)
    }),
    metric("fixer", Kind::Count, false, |t| Some(t.fixer as f64)),
    metric("residual", Kind::Count, false, |t| Some(t.residual as f64)),
    metric("report_only", Kind::Count, false, |t| {
        Some(t.report_only as f64)
    }),
    metric("precision", Kind::Optional, true, |t| t.precision),
    metric("judged_actionable", Kind::Count, false, |t| {
        Some(t.judged_actionable as f64)
    }),
];

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

/// The per-target metrics that take part in A/B deltas, by name: the catalogue's `delta`
/// entries, in its order.
pub const DELTA_METRICS: [(&str, Metric); DELTA_COUNT] = {
    let mut out = [("", REVIEW_METRICS[0].read); DELTA_COUNT];
    let (mut i, mut n) = (0, 0);
    while i < REVIEW_METRICS.len() {
        if REVIEW_METRICS[i].delta {
            out[n] = (REVIEW_METRICS[i].name, REVIEW_METRICS[i].read);
            n += 1;
        }
        i += 1;
    }
    out
};

/// The names of [`DELTA_METRICS`]: the keys of `review.delta` in `metrics.json`.
pub const DELTA_NAMES: [&str; DELTA_METRICS.len()] = {
    let mut names = [""; DELTA_METRICS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = DELTA_METRICS[i].0;
        i += 1;
    }
    names
};

/// Aggregates one arm's per-(target, run) metrics.
pub fn arm_metrics(
    policy: &str,
    scale: Scale,
    per_target: Vec<TargetMetrics>,
    malformed_reasons: BTreeMap<String, usize>,
) -> ArmMetrics {
    let sum = |f: Metric| {
        by_target(&per_target, f)
            .iter()
            .map(|(_, v)| v)
            .sum::<f64>()
    };
    let per = |f: Metric| by_target(&per_target, f);
    let mean = |v: &[(String, f64)]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().map(|(_, x)| x).sum::<f64>() / v.len() as f64
        }
    };
    let distinct = per(|t| Some(t.distinct_values as f64));
    let mut runs: HashMap<&str, usize> = HashMap::new();
    for t in &per_target {
        *runs.entry(&t.target).or_default() += 1;
    }
    let merged = sum(|t| Some(t.merged as f64));
    let promoted = sum(|t| Some(t.promoted as f64));
    let corroborated = sum(|t| Some(t.corroborated as f64));
    let values = merge_counts(per_target.iter().flat_map(|t| t.values.iter().cloned()));

    // Precision and anchor calibration pool every judged finding.
    let (judged, judged_sum) = per_target.iter().fold((0usize, 0.0), |(n, s), t| {
        (
            n + t.judged_actionable,
            s + t.precision.map_or(0.0, |p| p * t.judged_actionable as f64),
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
    let anchor_calibration = cells
        .into_iter()
        .map(|(value, s)| CalibrationCell {
            value,
            count: s.count,
            mean_confidence: s.confidence / s.count as f64,
            mean_composite: s.composite / s.count as f64,
        })
        .collect();
    let mut dropped_by_value: BTreeMap<String, f64> = BTreeMap::new();
    for t in &per_target {
        let n = runs[t.target.as_str()] as f64;
        for (k, &c) in &t.dropped_by_value {
            *dropped_by_value.entry(k.clone()).or_default() += c as f64 / n;
        }
    }

    ArmMetrics {
        policy: policy.to_string(),
        scale,
        targets: runs.len(),
        runs: runs.values().copied().max().unwrap_or(0),
        findings_raw: sum(|t| Some(t.findings_raw as f64)),
        malformed: sum(|t| Some(t.malformed as f64)),
        failed_reviewers: sum(|t| Some(t.failed_reviewers as f64)),
        merged,
        corroborated,
        promoted,
        dropped: sum(|t| Some(t.dropped as f64)),
        fyi: sum(|t| Some(t.fyi as f64)),
        actionable: sum(|t| Some(t.actionable as f64)),
        decisions: sum(|t| Some(t.decisions as f64)),
        auto_apply: sum(|t| Some(t.auto_apply as f64)),
        demoted: sum(|t| Some(t.demoted as f64)),
        pre_existing: sum(|t| Some(t.pre_existing as f64)),
        fixer: sum(|t| Some(t.fixer as f64)),
        residual: sum(|t| Some(t.residual as f64)),
        report_only: sum(|t| Some(t.report_only as f64)),
        distinct_values_mean: mean(&distinct),
        distinct_values_max: distinct.iter().map(|(_, v)| *v).fold(0.0, f64::max),
        entropy_bits_mean: mean(&per(|t| Some(t.entropy_bits))),
        values_for_80pct_mean: mean(&per(|t| Some(t.values_for_80pct as f64))),
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
        per_target,
    }
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
mod tests {
    use super::*;

    #[test]
    fn dispersion_counts_entropy_and_coverage() {
        assert_eq!(dispersion(&[]), (0, 0.0, 0));
        let (d, h, v) = dispersion(&[75.0, 75.0, 75.0, 75.0]);
        assert_eq!((d, h, v), (1, 0.0, 1));
        // Two values, half each: 1 bit; covering 80% needs both.
        let (d, h, v) = dispersion(&[50.0, 75.0, 50.0, 75.0]);
        assert_eq!((d, v), (2, 2));
        assert!((h - 1.0).abs() < 1e-12);
        // 8 of 10 on one value: one value covers 80%.
        let mut x = vec![0.6; 8];
        x.extend([0.65, 0.72]);
        assert_eq!(dispersion(&x).2, 1);
        // 0.55 + 0.10 and 0.65 are one value.
        assert_eq!(dispersion(&[0.55 + 0.10, 0.65]).0, 1);
    }

    #[test]
    fn value_labels() {
        assert_eq!(value_label(75.0, Scale::Anchor, 0.05), "75");
        assert_eq!(value_label(0.65, Scale::Float, 0.05), "(0.60, 0.65]");
        assert_eq!(value_label(0.0, Scale::Float, 0.05), "[0.00, 0.05]");
        assert_eq!(value_label(0.7, Scale::Float, 0.1), "(0.60, 0.70]");
    }

    fn target(
        name: &str,
        run: u32,
        merged: usize,
        corroborated: usize,
        raw: &[f64],
    ) -> TargetMetrics {
        TargetMetrics {
            target: name.to_string(),
            run,
            merged,
            corroborated,
            values: value_counts(raw.iter().copied()),
            ..TargetMetrics::default()
        }
    }

    #[test]
    fn arm_pools_raw_values_and_rates_over_targets_and_runs() {
        // Target a twice (runs average), target b once.
        let per_target = vec![
            target("a", 0, 4, 2, &[50.0, 75.0, 75.0]),
            target("a", 1, 6, 2, &[75.0]),
            target("b", 0, 5, 1, &[100.0, 50.0]),
        ];
        let arm = arm_metrics("anchored", Scale::Anchor, per_target, BTreeMap::new());
        // Every raw value of every run: the histogram counts findings, not means.
        let values: Vec<(f64, usize)> = arm.values.iter().map(|v| (v.value, v.count)).collect();
        assert_eq!(values, vec![(50.0, 2), (75.0, 3), (100.0, 1)]);
        // merged = 5 (a, mean of 4 and 6) + 5 (b); corroborated = 2 + 1.
        assert!((arm.corroboration_rate - 0.3).abs() < 1e-12);
        let [lo, hi] = arm.rate_ci.corroboration_rate.unwrap();
        assert!(lo < 0.3 && 0.3 < hi);
        assert_eq!(
            arm.rate_ci.promotion_rate,
            Some([0.0, wilson(0.0, 10.0).unwrap()[1]])
        );
        // Nothing merged: rates are 0 and have no interval.
        let empty = arm_metrics("anchored", Scale::Anchor, Vec::new(), BTreeMap::new());
        assert_eq!(empty.corroboration_rate, 0.0);
        assert_eq!(empty.rate_ci.corroboration_rate, None);
    }
}
