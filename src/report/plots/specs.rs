//! What each section of the report plots: [`specs`], a pure function of the metrics, and the
//! panels it builds from each arm's figures. How a plot looks is the parent module's `draw`.

use super::*;

/// Every plot the metrics support, in report order. Pure.
pub fn specs(m: &Metrics) -> Vec<Spec> {
    let mut out = Vec::new();
    if let Some(review) = &m.review {
        out.extend(review_plots(review));
    }
    if let Some(q) = &m.queries {
        out.extend(query_plots(q));
    }
    if let Some(sc) = &m.scores {
        out.extend(score_plots(sc));
    }
    if let Some(h) = m.humans.as_ref().filter(|h| h.judges >= 2) {
        out.push(judge_errors_plot(h));
    }
    if let (Some(l), Some(judge)) = (&m.lift_human, &m.lift) {
        out.extend(lift_human_plot(l, judge));
    }
    if let Some(seq) = &m.sequential {
        out.push(sequence_plot(seq));
    }
    if let Some(rows) = alpha_rows(m) {
        out.push(Spec {
            name: "alpha",
            title: "Krippendorff's α with 95% bootstrap intervals".into(),
            alt: "Agreement (α) among the judges, among corroborating reviewers per arm, and across runs per arm, with intervals; 0.667 and 0.8 are the usual tentative and reliable marks.".into(),
            kind: Kind::Alpha(rows),
        });
    }
    out
}

/// The review section's plots: confidence values, tiers, rates, and with the controls the
/// funnel, with anchor calibration the reliability diagram.
fn review_plots(review: &crate::model::ReviewSection) -> Vec<Spec> {
    let mut out = Vec::new();
    let arms = &review.arms;
    out.push(Spec {
        name: "review-values",
        title: "Raw confidence values (anchor dispersion)".into(),
        alt: format!(
            "How many findings carried each raw confidence value: {} distinct values per target in the baseline, {} in the treatment.",
            one(arms.baseline.figure(DISTINCT_VALUES.mean())),
            one(arms.treatment.figure(DISTINCT_VALUES.mean()))
        ),
        kind: Kind::Values(per_arm(arms, review_values_panel)),
    });
    out.push(Spec {
        name: "review-tiers",
        title: "Where merged findings went, per target (mean over runs)".into(),
        alt: "Stacked counts of actionable, FYI, dropped, demoted and pre-existing findings per target, baseline beside treatment.".into(),
        kind: Kind::Tiers(per_arm(arms, |label, a| tier_panel(label, &a.per_target))),
    });
    out.push(Spec {
        name: "review-rates",
        title: "Corroboration and promotion rates (95% Wilson intervals)".into(),
        alt: format!(
            "Corroboration rate {} → {}; promotion rate {} → {}.",
            pct(arms.baseline.corroboration_rate),
            pct(arms.treatment.corroboration_rate),
            pct(arms.baseline.promotion_rate),
            pct(arms.treatment.promotion_rate)
        ),
        kind: Kind::Rates(
            vec![
                rate_group(arms, "corroborated / merged", |a| {
                    (a.corroboration_rate, a.rate_ci.corroboration_rate)
                }),
                rate_group(arms, "promoted / merged", |a| {
                    (a.promotion_rate, a.rate_ci.promotion_rate)
                }),
            ],
            "rate",
        ),
    });
    if arms.baseline.controls.is_some() && arms.treatment.controls.is_some() {
        out.push(Spec {
            name: "review-funnel",
            title: "The validation pass: from actionable to externalized".into(),
            alt: format!(
                "Actionable findings, those selected for validation, those the pass dropped (over budget, rejected, failed, missing) and those externalized: {} of {} in the baseline, {} of {} in the treatment.",
                one(arms.baseline.figure(EXTERNALIZED.sum())),
                one(arms.baseline.figure(ACTIONABLE.sum())),
                one(arms.treatment.figure(EXTERNALIZED.sum())),
                one(arms.treatment.figure(ACTIONABLE.sum())),
            ),
            kind: Kind::Funnel(per_arm(arms, funnel_panel)),
        });
    }
    let calibrated = !arms.baseline.anchor_calibration.is_empty()
        || !arms.treatment.anchor_calibration.is_empty();
    if calibrated {
        out.push(Spec {
            name: "review-calibration",
            title: "Judged quality by confidence (reliability diagram)".into(),
            alt: "Mean judge composite of the findings at each confidence, against the confidence itself; the diagonal is perfect calibration.".into(),
            kind: Kind::Reliability(per_arm(arms, |label, a| {
                let scale = scale_max(a.scale);
                ReliabilityPanel {
                    label,
                    points: a
                        .anchor_calibration
                        .iter()
                        .map(|c| (c.mean_confidence / scale, c.mean_composite, c.count))
                        .collect(),
                    y_desc: "mean judge composite".into(),
                }
            })),
        });
    }
    out
}

/// The query section's plots: final confidence with bands and gates, and calibration.
fn query_plots(q: &crate::model::QuerySection) -> Vec<Spec> {
    let mut out = Vec::new();
    let arms = &q.arms;
    let panels = PerArm {
        baseline: query_values_panel("baseline", &arms.baseline),
        treatment: query_values_panel("treatment", &arms.treatment),
    };
    out.push(Spec {
        name: "query-confidence",
        title: "Final confidence per query, with bands and gates".into(),
        alt: format!(
            "Final confidence of each query: {} distinct values in the baseline, {} in the treatment; the recovery gate fired on {} and {} queries.",
            arms.baseline.distinct_values,
            arms.treatment.distinct_values,
            arms.baseline.recovery_fired,
            arms.treatment.recovery_fired
        ),
        kind: Kind::Values(panels),
    });
    if arms.baseline.calibration.is_some() || arms.treatment.calibration.is_some() {
        let panel =
            |arm: &str, a: &crate::replay::query_metrics::QueryArmMetrics| ReliabilityPanel {
                label: format!("{arm} · {}", a.policy),
                points: a
                    .calibration
                    .iter()
                    .flat_map(|c| &c.calibration.bins)
                    .filter_map(|b| Some((b.mean_confidence?, b.accuracy?, b.count)))
                    .collect(),
                y_desc: "share answered correctly".into(),
            };
        out.push(Spec {
            name: "query-reliability",
            title: "Reliability diagram: confidence against final correctness".into(),
            alt: "Share of queries answered correctly in each confidence bin, against the bin's mean confidence, with the bin counts; the diagonal is perfect calibration.".into(),
            kind: Kind::Reliability(PerArm {
                baseline: panel("baseline", &arms.baseline),
                treatment: panel("treatment", &arms.treatment),
            }),
        });
    }
    out
}

/// The judges' error correlations as a heat map.
fn judge_errors_plot(h: &crate::humans::HumansSection) -> Spec {
    let names: Vec<String> = h.error_correlation.keys().cloned().collect();
    Spec {
        name: "judge-errors",
        title: "The judges' errors against the annotators: pairwise correlation".into(),
        alt: "Pearson correlation of each pair of judges' errors (judge score minus the mean human label) over the units both judged: red cells are judges that err together, blue ones that err in opposite directions.".into(),
        kind: Kind::HeatMap(HeatMap {
            cells: names
                .iter()
                .map(|a| names.iter().map(|b| h.error_correlation[a][b]).collect())
                .collect(),
            names,
        }),
    }
}

/// The three lifts (judge, PPI++, labels alone) as intervals, when two of them exist.
fn lift_human_plot(l: &crate::human_units::LiftHuman, judge: &crate::trust::Lift) -> Option<Spec> {
    let mut rows = Vec::new();
    if let Some(v) = judge.value {
        rows.push(("judge lift".to_string(), 0u8, v, judge.ci));
    }
    if let Some(v) = l.ppi.value {
        rows.push((format!("PPI++ (λ {:.2})", l.ppi.lambda), 2, v, l.ppi.ci));
    }
    if let Some(v) = l.classical.value {
        rows.push(("labels alone".to_string(), 1, v, l.classical.ci));
    }
    (rows.len() >= 2).then(|| Spec {
        name: "lift-human",
        title: "The lift: in judge units, in human units (PPI++), and from the labels alone".into(),
        alt: "Treatment − baseline with 95% intervals: the judges' composite over every item judged in both arms; PPI++, the labelled items and the judges' scores together, in human units; and the labelled items alone.".into(),
        kind: Kind::Intervals(IntervalRows {
            rows,
            x_desc: "treatment − baseline composite".into(),
            marks: vec![(0.0, "no change".into())],
        }),
    })
}

/// Scores plots: each scorer's mean per arm (scorers scoring on [0, 1], the first
/// [`MAX_SCORERS`]), and the reliability diagram of the first scorer with confidences.
fn score_plots(sc: &crate::model::ScoresSection) -> Vec<Spec> {
    use crate::replay::scores::ScorerFigures;
    let mut out = Vec::new();
    let (b, t) = (&sc.arms.baseline, &sc.arms.treatment);
    let unit = |f: &ScorerFigures| f.range.is_some_and(|[lo, hi]| lo >= 0.0 && hi <= 1.0);
    let groups: Vec<RateGroup> = b
        .scorers
        .iter()
        .filter_map(|(name, fb)| {
            let ft = t.scorers.get(name)?;
            if !(unit(fb) && unit(ft)) {
                return None;
            }
            let d = sc.delta.get(name);
            let wilson = d.and_then(|d| d.wilson.as_ref());
            Some(RateGroup {
                name: name.clone(),
                baseline: (fb.mean?, wilson.and_then(|w| w.baseline)),
                treatment: (ft.mean?, wilson.and_then(|w| w.treatment)),
            })
        })
        .take(MAX_SCORERS)
        .collect();
    if !groups.is_empty() {
        out.push(Spec {
            name: "scores-means",
            title: "Mean score per scorer (95% Wilson intervals for 0/1 scorers)".into(),
            alt: format!(
                "Mean score of each scorer scoring on 0 to 1, {} (baseline) beside {} (treatment): {}.",
                b.source,
                t.source,
                groups
                    .iter()
                    .map(|g| format!("{} {:.3} → {:.3}", g.name, g.baseline.0, g.treatment.0))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            kind: Kind::Rates(groups, "mean score"),
        });
    }
    let calibrated = b
        .scorers
        .iter()
        .chain(&t.scorers)
        .find(|(_, f)| f.calibration.is_some())
        .map(|(name, _)| name.clone());
    if let Some(name) = calibrated {
        let panel = |a: &crate::replay::scores::ScoreArm, arm: &str| {
            let points: Vec<(f64, f64, usize)> = a
                .scorers
                .get(&name)
                .and_then(|f| f.calibration.as_ref())
                .iter()
                .flat_map(|c| &c.bins)
                .filter_map(|b| Some((b.mean_confidence?, b.accuracy?, b.count)))
                .collect();
            ReliabilityPanel {
                label: format!(
                    "{arm} · {} · {name}{}",
                    a.source,
                    if points.is_empty() {
                        " (no confidences)"
                    } else {
                        ""
                    }
                ),
                points,
                y_desc: "share answered correctly".into(),
            }
        };
        out.push(Spec {
            name: "scores-reliability",
            title: format!("Reliability diagram: the model's confidence against {name}"),
            alt: "Share of scored lines answered correctly in each confidence bin, against the bin's mean confidence, with the bin counts; the diagonal is perfect calibration.".into(),
            kind: Kind::Reliability(PerArm {
                baseline: panel(b, "baseline"),
                treatment: panel(t, "treatment"),
            }),
        });
    }
    out
}

/// Scorers shown in the scores' means plot; more would not be readable.
pub const MAX_SCORERS: usize = 8;

fn per_arm<T>(arms: &PerArm<ArmMetrics>, f: impl Fn(String, &ArmMetrics) -> T) -> PerArm<T> {
    PerArm {
        baseline: f(
            format!("baseline · {}", arms.baseline.policy),
            &arms.baseline,
        ),
        treatment: f(
            format!("treatment · {}", arms.treatment.policy),
            &arms.treatment,
        ),
    }
}

fn one(x: f64) -> String {
    format!("{x:.1}")
}

fn pct(x: f64) -> String {
    format!("{:.0}%", 100.0 * x)
}

fn scale_max(scale: Scale) -> f64 {
    match scale {
        Scale::Anchor => 100.0,
        Scale::Float => 1.0,
    }
}

fn review_values_panel(label: String, a: &ArmMetrics) -> ValuesPanel {
    ValuesPanel {
        label: format!(
            "{label}: {} distinct per target",
            one(a.figure(DISTINCT_VALUES.mean()))
        ),
        bars: bars(&a.values),
        x_max: scale_max(a.scale),
        x_desc: match a.scale {
            Scale::Anchor => "confidence (anchor)".into(),
            Scale::Float => "confidence".into(),
        },
        y_desc: "findings (all targets and runs)".into(),
        markers: Vec::new(),
    }
}

/// One rate of both arms, each with its interval.
fn rate_group(
    arms: &PerArm<ArmMetrics>,
    name: &str,
    of: fn(&ArmMetrics) -> (f64, Option<[f64; 2]>),
) -> RateGroup {
    RateGroup {
        name: name.into(),
        baseline: of(&arms.baseline),
        treatment: of(&arms.treatment),
    }
}

fn bars(values: &[ValueCount]) -> Vec<(f64, f64)> {
    values.iter().map(|v| (v.value, v.count as f64)).collect()
}

fn query_values_panel(arm: &str, a: &crate::replay::query_metrics::QueryArmMetrics) -> ValuesPanel {
    let b = &a.band_thresholds;
    let mut markers = vec![
        Marker::band("weak", b.weak),
        Marker::band("adequate", b.adequate),
        Marker::band("strong", b.strong),
        Marker::gate("recovery gate", a.recovery_threshold),
    ];
    if a.stop_threshold > 0.0 {
        markers.push(Marker::gate("stop", a.stop_threshold));
    }
    ValuesPanel {
        label: format!(
            "{arm} · {}: gate fired on {} of {}",
            a.policy, a.recovery_fired, a.queries
        ),
        bars: bars(&a.values),
        x_max: 1.0,
        x_desc: "final confidence".into(),
        y_desc: "queries".into(),
        markers,
    }
}

/// One arm's validation funnel: each stage one bar, the arm's figure (summed over targets,
/// mean over runs).
fn funnel_panel(label: String, a: &ArmMetrics) -> TierPanel {
    let figures = [
        ACTIONABLE,
        VALIDATION_SELECTED,
        OVER_BUDGET,
        REJECTED,
        VALIDATOR_FAILED,
        VALIDATOR_MISSING,
        EXTERNALIZED,
    ];
    // Rows are drawn from the bottom up: the last stage first, so the funnel reads downwards.
    let n = STAGES.len();
    let targets: Vec<String> = STAGES.iter().rev().map(|(s, _)| s.to_string()).collect();
    let tiers = STAGES
        .iter()
        .zip(figures)
        .enumerate()
        .map(|(i, ((stage, _), name))| {
            let mut counts = vec![0.0; n];
            counts[n - 1 - i] = a.figure(name.sum());
            (*stage, counts)
        })
        .collect();
    TierPanel {
        label,
        targets,
        tiers,
    }
}

fn tier_panel(label: String, per_target: &[TargetMetrics]) -> TierPanel {
    let columns = [
        ("actionable", ACTIONABLE),
        ("fyi", FYI),
        ("dropped", DROPPED),
        ("demoted", DEMOTED),
        ("pre-existing", PRE_EXISTING),
    ];
    let merged = by_target_of(per_target, MERGED);
    // The targets with the most findings, in their first-appearance order.
    let mut keep: Vec<(usize, f64)> = merged.iter().map(|(_, v)| *v).enumerate().collect();
    keep.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    keep.truncate(MAX_TARGETS);
    keep.sort_by_key(|k| k.0);
    let targets: Vec<String> = keep.iter().map(|(i, _)| merged[*i].0.clone()).collect();
    let tiers = columns
        .iter()
        .map(|(label, id)| {
            let all = by_target_of(per_target, *id);
            (*label, keep.iter().map(|(i, _)| all[*i].1).collect())
        })
        .collect();
    TierPanel {
        label,
        targets,
        tiers,
    }
}

fn alpha_rows(m: &Metrics) -> Option<AlphaRows> {
    let a = m.agreement.as_ref()?;
    let mut rows = Vec::new();
    let mut push = |label: String, arm: u8, g: &Agreement| {
        if let Some(alpha) = g.alpha {
            let ci = g.ci.as_ref().and_then(|c| Some([c.lower?, c.upper?]));
            rows.push((label, arm, alpha, ci));
        }
    };
    if let Some(j) = &a.judges {
        push("judges".into(), 0, j);
    }
    if let Some(r) = &a.reviewers {
        push("reviewers · baseline".into(), 1, &r.baseline);
        push("reviewers · treatment".into(), 2, &r.treatment);
    }
    if let Some(r) = &a.runs {
        push("run to run · baseline".into(), 1, &r.baseline);
        push("run to run · treatment".into(), 2, &r.treatment);
    }
    if let Some(r) = &a.repeats {
        push("repeats · baseline".into(), 1, &r.baseline);
        push("repeats · treatment".into(), 2, &r.treatment);
    }
    (!rows.is_empty()).then(|| AlphaRows {
        rows,
        floor: m.trust.as_ref().map(|t| t.thresholds.irr_floor),
    })
}

/// The sequential decision's plot: each metric's sequence against units arrived (the first
/// three), with 0, a guard's margin and the stopping point.
fn sequence_plot(seq: &crate::sequential::Sequential) -> Spec {
    let panels = seq
        .metrics
        .iter()
        .take(3)
        .map(|(name, m)| {
            let mut lines = vec![(0.0, "no change".to_string())];
            if let Some(margin) = m.margin {
                let edge = -m.want.good_sign() * margin;
                lines.push((edge, format!("margin {}", crate::text::fmt_num(edge))));
            }
            SequencePanel {
                name: name.clone(),
                bounds: m
                    .t
                    .iter()
                    .zip(m.lower.iter().zip(&m.upper))
                    .map(|(&t, (&lo, &hi))| (t as f64, lo, hi))
                    .collect(),
                lines,
                units: seq.units,
                stopped_at: seq.stopped_at,
            }
        })
        .collect();
    Spec {
        name: "sequential",
        title: format!(
            "Anytime-valid 95% confidence sequences (each metric at α {}) as {} arrive",
            crate::text::fmt_num(seq.alpha),
            seq.unit_name
        ),
        alt: format!(
            "For each decision metric, the lower and upper bounds of the treatment − baseline mean as {} arrive in {} order; {}.",
            seq.unit_name,
            seq.order_from,
            match seq.stopped_at {
                Some(at) => format!("the decision ({}) was reached after {at} of {}", seq.verdict.name(), seq.units),
                None => format!("no decision was reached in {} {}", seq.units, seq.unit_name),
            }
        ),
        kind: Kind::Sequences(panels),
    }
}
