//! The query section: the confidence models' deltas, arm figures and calibration bins.

use super::*;

pub(super) fn query_section(m: &Metrics, q: &crate::model::QuerySection, plots: Plots) -> Section {
    let (b, t) = (&q.arms.baseline, &q.arms.treatment);
    let mut reading = format!(
        "The recovery gate fires on {} of queries under {} against {} under {}",
        pct(t.recovery_gate_rate),
        t.policy,
        pct(b.recovery_gate_rate),
        b.policy
    );
    if let (Some(cb), Some(ct)) = (&b.calibration, &t.calibration) {
        reading += &format!(
            "; calibration error (ECE) {}",
            change(cb.calibration.ece, ct.calibration.ece, 3)
        );
    }
    if let (Some(ab), Some(at)) = (b.final_accuracy, t.final_accuracy) {
        reading += &format!("; final accuracy {}", change(ab, at, 3));
    }
    reading += ".";
    let mut blocks = Vec::new();
    blocks.push(Block::Table(query_arm_table(b, t)));
    blocks.extend(plots.get("query-confidence"));
    blocks.extend(catalogue_deltas(m, DeltaTable::Queries, &q.delta, |n| {
        format!("Paired over the {n} (query, run) pairs both arms replayed.")
    }));
    blocks.extend(plots.get("query-reliability"));
    if b.calibration.is_some() || t.calibration.is_some() {
        blocks.push(Block::Table(bins_table(b, t)));
    }
    Section {
        id: "queries",
        title: "Query replay (confidence models)".into(),
        reading,
        blocks,
    }
}

pub(super) fn query_arm_table(b: &QueryArmMetrics, t: &QueryArmMetrics) -> Table {
    let with_ci = |m: &QueryArmMetrics, x: Option<f64>, figure: CiFigure| {
        x.map_or("—".into(), |x| {
            format!("{x:.3} {}", interval(m.interval(figure), 2))
        })
    };
    let cal =
        |m: &QueryArmMetrics,
         f: &dyn Fn(&crate::replay::query_metrics::QueryCalibration) -> String| {
            m.calibration.as_ref().map_or("—".into(), f)
        };
    type Figure = Box<dyn Fn(&QueryArmMetrics) -> String>;
    let figures: Vec<(&str, Figure)> = vec![
        ("policy", Box::new(|m| m.policy.clone())),
        ("queries", Box::new(|m| m.queries.to_string())),
        (
            "mean confidence [95% CI]",
            Box::new(move |m| with_ci(m, Some(m.confidence_mean), CiFigure::ConfidenceMean)),
        ),
        (
            "median confidence",
            Box::new(|m| format!("{:.3}", m.confidence_median)),
        ),
        (
            "distinct values",
            Box::new(|m| m.distinct_values.to_string()),
        ),
        (
            "bands strong / adequate / weak / failed",
            Box::new(|m| {
                let k = &m.bands;
                format!("{} / {} / {} / {}", k.strong, k.adequate, k.weak, k.failed)
            }),
        ),
        (
            "recovery gate fired [95% Wilson]",
            Box::new(move |m| {
                format!(
                    "{} ({}) {}",
                    m.recovery_fired,
                    pct(m.recovery_gate_rate),
                    interval(m.interval(CiFigure::RecoveryGateRate), 2)
                )
            }),
        ),
        (
            "stopped below the stop threshold",
            Box::new(|m| m.stopped.to_string()),
        ),
        (
            "first-pass success",
            Box::new(move |m| with_ci(m, m.first_pass_success, CiFigure::FirstPassSuccess)),
        ),
        (
            "final accuracy",
            Box::new(move |m| with_ci(m, m.final_accuracy, CiFigure::FinalAccuracy)),
        ),
        (
            "recovery success",
            Box::new(move |m| with_ci(m, m.recovery_success, CiFigure::RecoverySuccess)),
        ),
        (
            "ECE [95% CI]",
            Box::new(move |m| {
                cal(m, &|c| {
                    format!("{:.3} {}", c.calibration.ece, interval(c.ece_ci, 3))
                })
            }),
        ),
        (
            "Brier [95% CI]",
            Box::new(move |m| {
                cal(m, &|c| {
                    format!("{:.3} {}", c.calibration.brier, interval(c.brier_ci, 3))
                })
            }),
        ),
        (
            "AUROC",
            Box::new(move |m| {
                cal(m, &|c| {
                    c.calibration
                        .auroc
                        .map_or("—".into(), |a| format!("{a:.3}"))
                })
            }),
        ),
    ];
    let rows = figures
        .iter()
        .map(|(label, f)| {
            let cell = |s: String| {
                if *label == "policy" {
                    text(s)
                } else {
                    numeric(s)
                }
            };
            vec![text(*label), cell(f(b)), cell(f(t))]
        })
        .collect();
    Table {
        caption: Some("Per arm.".into()),
        header: header(&["", "baseline", "treatment"]),
        rows,
    }
}

pub(super) fn bins_table(b: &QueryArmMetrics, t: &QueryArmMetrics) -> Table {
    let bins = |m: &QueryArmMetrics| {
        m.calibration
            .as_ref()
            .map(|c| c.calibration.bins.clone())
            .unwrap_or_default()
    };
    let (bb, tb) = (bins(b), bins(t));
    let rows = bb
        .iter()
        .zip(&tb)
        .filter(|(x, y)| x.count + y.count > 0)
        .map(|(x, y)| {
            let open = if x.lower == 0.0 { '[' } else { '(' };
            vec![
                text(format!("{open}{:.1}, {:.1}]", x.lower, x.upper)),
                numeric(x.count.to_string()),
                opt(x.mean_confidence, 3),
                opt(x.accuracy, 3),
                numeric(y.count.to_string()),
                opt(y.mean_confidence, 3),
                opt(y.accuracy, 3),
            ]
        })
        .collect();
    Table {
        caption: Some("Reliability bins (non-empty), baseline then treatment.".into()),
        header: header(&[
            "bin",
            "baseline n",
            "confidence",
            "accuracy",
            "treatment n",
            "confidence",
            "accuracy",
        ]),
        rows,
    }
}
