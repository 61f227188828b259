//! The review section: the deltas per target, the arm figures and anchors, and code review's
//! precision controls.

use super::*;

pub(super) fn review_section(
    m: &Metrics,
    r: &crate::model::ReviewSection,
    plots: Plots,
) -> Section {
    let (b, t) = (&r.arms.baseline, &r.arms.treatment);
    let reading = format!(
        "Under {}, findings carry {:.1} distinct confidence values per target against {:.1} under {}; {} of merged findings are promoted against {}, and {} actionable findings per target reach the user against {}.",
        t.policy,
        t.figure(DISTINCT_VALUES.mean()),
        b.figure(DISTINCT_VALUES.mean()),
        b.policy,
        pct(t.promotion_rate),
        pct(b.promotion_rate),
        per_target(t.figure(ACTIONABLE.sum()), t.targets),
        per_target(b.figure(ACTIONABLE.sum()), b.targets),
    );
    // With the precision controls, what reaches the user is what survives the validation pass.
    let reading = match (&b.controls, &t.controls) {
        (Some(_), Some(_)) => {
            reading.replace(
                "actionable findings per target reach the user against",
                "actionable findings per target pass the gate against",
            ) + &format!(
                " After the validation pass, {} per target reach the user against {}.",
                per_target(t.figure(EXTERNALIZED.sum()), t.targets),
                per_target(b.figure(EXTERNALIZED.sum()), b.targets),
            )
        }
        _ => reading,
    };
    let mut blocks = Vec::new();
    blocks.extend(plots.get("review-values"));
    blocks.extend(catalogue_deltas(m, DeltaTable::Review, &r.delta, |n| {
        format!("Per target, mean over runs, paired over the {n} targets both arms reviewed.")
    }));
    blocks.extend(plots.get("review-tiers"));
    blocks.extend(plots.get("review-rates"));
    blocks.push(Block::Table(arm_table(b, t)));
    let calibration_withheld = withheld(m, "anchor_calibration");
    if calibration_withheld {
        blocks.push(Block::Text(
            "Anchor calibration (judged quality by confidence): withheld, because the judges are not trustworthy.".into(),
        ));
    } else if !b.anchor_calibration.is_empty() || !t.anchor_calibration.is_empty() {
        blocks.extend(plots.get("review-calibration"));
        blocks.push(Block::Table(anchor_table(b, t)));
    }
    Section {
        id: "review",
        title: format!(
            "Review replay ({} mode)",
            format!("{:?}", r.mode).to_lowercase()
        ),
        reading,
        blocks,
    }
}

/// Code review's precision controls: what the validation pass, the skip rules and lint-ignore
/// did in each arm, the funnel, and the targets skipped.
pub(super) fn controls_section(
    m: &Metrics,
    r: &crate::model::ReviewSection,
    plots: Plots,
) -> Option<Section> {
    let (b, t) = (&r.arms.baseline, &r.arms.treatment);
    let (cb, ct) = (b.controls.as_ref()?, t.controls.as_ref()?);
    let mut sentences: Vec<String> = [("baseline", b, cb), ("treatment", t, ct)]
        .into_iter()
        .filter_map(|(arm, a, c)| controls_reading(m, arm, a, c))
        .collect();
    if sentences.is_empty() {
        sentences.push("No precision control changed a finding in either arm.".into());
    } else {
        sentences.push("(Counts are summed over targets, mean over runs.)".into());
    }
    let mut blocks = Vec::new();
    blocks.extend(plots.get("review-funnel"));
    blocks.push(Block::Table(controls_table(m, (b, cb), (t, ct))));
    let skipped = skipped_targets(b, t);
    if !skipped.is_empty() {
        blocks.push(Block::Text(
            "Targets the skip rules kept from review:".into(),
        ));
        blocks.push(Block::List(skipped));
    }
    Some(Section {
        id: "controls",
        title: "Precision controls (validation pass, skip rules, lint-ignore)".into(),
        reading: sentences.join(" "),
        blocks,
    })
}

/// A count as a person writes it: `3`, `2.5`.
/// [`one`] and its noun: "1 finding", "2.5 findings".
fn ones(x: f64, singular: &str, plural: &str) -> String {
    format!("{} {}", one(x), if x == 1.0 { singular } else { plural })
}

fn one(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// What the controls did in one arm, in a sentence; `None` when they did nothing.
fn controls_reading(
    m: &Metrics,
    arm: &str,
    a: &ArmMetrics,
    c: &crate::replay::review_metrics::ControlsFigures,
) -> Option<String> {
    let mut parts = Vec::new();
    if a.figure(VALIDATION_SELECTED.sum()) > 0.0 {
        let judged = match (c.rejected_composite, c.validated_composite) {
            (Some(r), Some(v)) => {
                format!(" (judges rate the rejected {r:.2} against {v:.2} for the validated)")
            }
            _ if withheld(m, "rejected_composite") => {
                " (the judges' ratings of them are withheld)".into()
            }
            _ => String::new(),
        };
        let mut lost = Vec::new();
        for (id, what) in [
            (VALIDATOR_FAILED, "failed"),
            (VALIDATOR_MISSING, "had no recorded call"),
            (OVER_BUDGET, "were over budget"),
        ] {
            if a.figure(id.sum()) > 0.0 {
                lost.push(format!("{} {what}", one(a.figure(id.sum()))));
            }
        }
        let lost = if lost.is_empty() {
            String::new()
        } else {
            format!("; {}", and_list(&lost))
        };
        parts.push(format!(
            "the validator ran on {} ({}) and rejected {}{judged}{lost}: {} of {} actionable findings reached the user.",
            ones(a.figure(VALIDATION_SELECTED.sum()), "finding", "findings"),
            ones(a.figure(VALIDATOR_CALLS.sum()), "call", "calls"),
            one(a.figure(REJECTED.sum())),
            one(a.figure(EXTERNALIZED.sum())),
            one(a.figure(ACTIONABLE.sum())),
        ));
    }
    if c.skipped_targets > 0 {
        parts.push(format!(
            "Skip rules skipped {} target{}, saving {} reviewer calls and hiding {} actionable finding{} ({} at P0/P1).",
            c.skipped_targets,
            if c.skipped_targets == 1 { "" } else { "s" },
            one(c.skipped_calls),
            one(c.lost_actionable),
            if c.lost_actionable == 1.0 { "" } else { "s" },
            one(c.lost_p0_p1),
        ));
    }
    if a.figure(LINT_SUPPRESSED.sum()) > 0.0 {
        parts.push(format!(
            "Lint-ignore dropped {} on suppressed lines.",
            ones(a.figure(LINT_SUPPRESSED.sum()), "finding", "findings")
        ));
    }
    (!parts.is_empty()).then(|| format!("In the {arm} arm, {}", parts.join(" ")))
}

/// The controls' figures per arm: the funnel, the judges' view of what was rejected, lint and
/// skipping.
fn controls_table(
    m: &Metrics,
    (b, cb): (&ArmMetrics, &crate::replay::review_metrics::ControlsFigures),
    (t, ct): (&ArmMetrics, &crate::replay::review_metrics::ControlsFigures),
) -> Table {
    let composite = |x: Option<f64>, a: &str| {
        if withheld(m, a) {
            Cell::Withheld
        } else {
            opt(x, 2)
        }
    };
    let suppressed = |a: &ArmMetrics| {
        numeric(format!(
            "{} / {:.2}",
            a.figures
                .value(ON_SUPPRESSED_LINE.sum())
                .map_or("unknown".into(), |x| format!("{x:.2}")),
            a.figure(LINT_SUPPRESSED.sum())
        ))
    };
    let rows = vec![
        figures_row("actionable (the gate's count)", &[ACTIONABLE], b, t),
        figures_row("selected for validation", &[VALIDATION_SELECTED], b, t),
        figures_row("validator calls (the cost)", &[VALIDATOR_CALLS], b, t),
        figures_row("validated / rejected", &[VALIDATED, REJECTED], b, t),
        figures_row(
            "failed / missing / over budget",
            &[VALIDATOR_FAILED, VALIDATOR_MISSING, OVER_BUDGET],
            b,
            t,
        ),
        figures_row("externalized (reach the user)", &[EXTERNALIZED], b, t),
        vec![
            text("judge composite: rejected / validated"),
            pair(
                composite(cb.rejected_composite, "rejected_composite"),
                composite(cb.validated_composite, "validated_composite"),
            ),
            pair(
                composite(ct.rejected_composite, "rejected_composite"),
                composite(ct.validated_composite, "validated_composite"),
            ),
        ],
        vec![
            text("on a suppressed line / lint-suppressed"),
            suppressed(b),
            suppressed(t),
        ],
        vec![
            text("skipped targets / reviewer calls saved"),
            numeric(format!("{} / {:.2}", cb.skipped_targets, cb.skipped_calls)),
            numeric(format!("{} / {:.2}", ct.skipped_targets, ct.skipped_calls)),
        ],
        vec![
            text("hidden by skipping: actionable / P0–P1"),
            numeric(format!("{:.2} / {:.2}", cb.lost_actionable, cb.lost_p0_p1)),
            numeric(format!("{:.2} / {:.2}", ct.lost_actionable, ct.lost_p0_p1)),
        ],
    ];
    Table {
        caption: Some(
            "Per arm: counts summed over targets, mean over runs; skipped targets counted once."
                .into(),
        ),
        header: header(&["", "baseline", "treatment"]),
        rows,
    }
}

/// Each target a skip rule kept from review, once per arm, with the rule.
fn skipped_targets(b: &ArmMetrics, t: &ArmMetrics) -> Vec<String> {
    [("baseline", b), ("treatment", t)]
        .iter()
        .flat_map(|(arm, a)| {
            let mut seen: Vec<(String, String)> = Vec::new();
            for row in &a.per_target {
                if let Some(rule) = row.figure(SKIPPED).text() {
                    if !seen.iter().any(|(t, _)| *t == row.target) {
                        seen.push((row.target.clone(), rule.to_string()));
                    }
                }
            }
            seen.into_iter()
                .map(move |(target, rule)| format!("{arm}: {target}, by the rule {rule}"))
        })
        .collect()
}

/// Two cells in one: `0.31 / 0.74`, or withheld when either is.
pub(super) fn pair(a: Cell, b: Cell) -> Cell {
    match (&a, &b) {
        (Cell::Withheld, _) | (_, Cell::Withheld) => Cell::Withheld,
        _ => numeric(format!("{} / {}", a.text(), b.text())),
    }
}

pub(super) fn per_target(sum: f64, targets: usize) -> String {
    format!("{:.1}", sum / targets.max(1) as f64)
}

pub(super) fn arm_table(b: &ArmMetrics, t: &ArmMetrics) -> Table {
    let rate = |x: f64, c: Option<[f64; 2]>| numeric(format!("{x:.3} {}", interval(c, 2)));
    let rows: Vec<Vec<Cell>> = vec![
        vec![text("policy"), text(&b.policy), text(&t.policy)],
        vec![
            text("targets × runs"),
            numeric(format!("{} × {}", b.targets, b.runs)),
            numeric(format!("{} × {}", t.targets, t.runs)),
        ],
        figures_row("findings (raw)", &[FINDINGS_RAW], b, t),
        figures_row("merged", &[MERGED], b, t),
        vec![
            text("corroboration rate, pooled over targets [95% Wilson]"),
            rate(b.corroboration_rate, b.rate_ci.corroboration_rate),
            rate(t.corroboration_rate, t.rate_ci.corroboration_rate),
        ],
        vec![
            text("promotion rate, pooled over targets [95% Wilson]"),
            rate(b.promotion_rate, b.rate_ci.promotion_rate),
            rate(t.promotion_rate, t.rate_ci.promotion_rate),
        ],
        figures_row(
            "actionable / FYI / dropped",
            &[ACTIONABLE, FYI, DROPPED],
            b,
            t,
        ),
        figures_row("decisions / auto-apply", &[DECISIONS, AUTO_APPLY], b, t),
        figures_row("demoted / pre-existing", &[DEMOTED, PRE_EXISTING], b, t),
    ];
    Table {
        caption: Some("Per arm: counts summed over targets, mean over runs.".into()),
        header: header(&["", "baseline", "treatment"]),
        rows,
    }
}

/// A row of arm figures (sums over targets), each to 2 places and several joined by " / ": `1.50 / 0.25`.
pub(super) fn figures_row(label: &str, ids: &[Id], b: &ArmMetrics, t: &ArmMetrics) -> Vec<Cell> {
    let cell = |a: &ArmMetrics| {
        let parts: Vec<String> = ids
            .iter()
            .map(|id| format!("{:.2}", a.figure(id.sum())))
            .collect();
        numeric(parts.join(" / "))
    };
    vec![text(label), cell(b), cell(t)]
}

pub(super) fn anchor_table(b: &ArmMetrics, t: &ArmMetrics) -> Table {
    let mut rows = Vec::new();
    for (arm, a) in [("baseline", b), ("treatment", t)] {
        for c in &a.anchor_calibration {
            rows.push(vec![
                text(arm),
                text(&c.value),
                numeric(c.count.to_string()),
                num(
                    c.mean_confidence,
                    if a.scale == crate::policy::Scale::Anchor {
                        1
                    } else {
                        3
                    },
                ),
                num(c.mean_composite, 3),
            ]);
        }
    }
    Table {
        caption: Some("Anchor calibration: the judged findings after merging, at their final confidence (after promotion), counted over every target and run. The table in human units below counts another thing: each finding a judge scored, at the value its reviewer recorded.".into()),
        header: header(&[
            "arm",
            "confidence",
            "findings",
            "mean confidence",
            "mean judge composite",
        ]),
        rows,
    }
}
