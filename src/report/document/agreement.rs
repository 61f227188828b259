//! The agreement, trust and coverage sections.

use super::*;

pub(super) fn agreement_section(a: &crate::model::AgreementSection, plots: Plots) -> Section {
    let mut rows = Vec::new();
    let row = |label: &str, g: &Agreement| {
        vec![
            text(label),
            text(format!("{:?}", g.level).to_lowercase()),
            g.alpha.map_or_else(
                || {
                    text(
                        g.undefined_reason
                            .clone()
                            .unwrap_or_else(|| "undefined".into()),
                    )
                },
                |x| num(x, 3),
            ),
            numeric(
                g.ci.as_ref()
                    .map_or("—".into(), |c| match (c.lower, c.upper) {
                        (Some(lo), Some(hi)) => format!("[{lo:.3}, {hi:.3}]"),
                        _ => "—".into(),
                    }),
            ),
            numeric(g.units.to_string()),
            numeric(g.raters.to_string()),
        ]
    };
    let mut parts = Vec::new();
    if let Some(j) = &a.judges {
        rows.push(row("judges", j));
        if let Some(x) = j.alpha {
            parts.push(format!("the judges agree at α = {x:.3}"));
        }
    }
    let compare = |what: &str, p: &PerArm<Agreement>| match (p.baseline.alpha, p.treatment.alpha) {
        (Some(b), Some(t)) => Some(format!(
            "{what} {} under the treatment (α {t:.3} against {b:.3})",
            if (t - b).abs() < 0.0005 {
                "is unchanged"
            } else if t > b {
                "is higher"
            } else {
                "is lower"
            }
        )),
        _ => None,
    };
    if let Some(r) = &a.reviewers {
        rows.push(row("reviewers · baseline", &r.baseline));
        rows.push(row("reviewers · treatment", &r.treatment));
        parts.extend(compare("agreement among corroborating reviewers", r));
    }
    if let Some(r) = &a.runs {
        rows.push(row("run to run · baseline", &r.baseline));
        rows.push(row("run to run · treatment", &r.treatment));
        parts.extend(compare("run-to-run stability", r));
    }
    if let Some(r) = &a.repeats {
        rows.push(row("repeats · baseline", &r.baseline));
        rows.push(row("repeats · treatment", &r.treatment));
        parts.extend(compare("repeat-to-repeat stability of the scores", r));
    }
    let reading = if parts.is_empty() {
        "No agreement could be computed.".to_string()
    } else {
        capitalized(&parts.join("; ")) + "."
    };
    let mut blocks = vec![Block::Table(Table {
        caption: Some("Krippendorff's α with 95% bootstrap intervals; 0.667 is the usual floor for tentative conclusions, 0.8 for reliable ones.".into()),
        header: header(&["units", "level", "α", "95% CI", "units", "raters"]),
        rows,
    })];
    blocks.extend(plots.get("alpha"));
    Section {
        id: "agreement",
        title: "Agreement".into(),
        reading,
        blocks,
    }
}

pub(super) fn trust_section(m: &Metrics) -> Section {
    let Some(v) = &m.trust else {
        return Section {
            id: "trust",
            title: "Trust".into(),
            reading: NoPanel::of(m).section.into(),
            blocks: Vec::new(),
        };
    };
    let reading = if v.trustworthy {
        if m.review.is_none() && m.scores.is_some() {
            "Every check passed: the judge scorers' figures and the lift can be believed."
                .to_string()
        } else {
            "Every check passed: the judges' figures (precision, anchor calibration, lift) can be believed.".to_string()
        }
    } else {
        format!(
            "{} {} failed, so every judge-derived figure is withheld.",
            v.trust_reasons.len(),
            if v.trust_reasons.len() == 1 {
                "check"
            } else {
                "checks"
            }
        )
    };
    let mut blocks = vec![Block::Table(checks_table(v))];
    if !v.trust_reasons.is_empty() {
        blocks.push(Block::List(v.trust_reasons.clone()));
    }
    if let Some(note) = &v.irr_note {
        blocks.push(Block::Text(note.clone()));
    }
    if let Some(b) = &m.bias {
        blocks.push(Block::Table(bias_table(b)));
    }
    let mut worst: Vec<_> = v.per_item_spread.iter().collect();
    worst.sort_by(|a, b| {
        b.spread
            .total_cmp(&a.spread)
            .then(a.item_id.cmp(&b.item_id))
    });
    let top: Vec<Vec<Cell>> = worst
        .iter()
        .take(5)
        .map(|s| {
            // The experiment's arm, with the recorded label where it differs.
            let arm = match &s.side {
                Some(side) if side != &s.arm => format!("{side} ({})", s.arm),
                Some(side) => side.clone(),
                None => s.arm.clone(),
            };
            vec![
                text(&arm),
                text(&s.item_id),
                num(s.spread, 2),
                text(s.dimension.clone().unwrap_or_else(|| "—".into())),
                numeric(format!("{} of {}", s.survivors, s.judges)),
            ]
        })
        .collect();
    if !top.is_empty() {
        blocks.push(Block::Table(Table {
            caption: Some("The items the judges split on most.".into()),
            header: header(&["arm", "item", "spread", "dimension", "surviving judges"]),
            rows: top,
        }));
    }
    if let Some(l) = &m.lift {
        let row = if l.withheld {
            vec![
                text(crate::replay::LIFT.name),
                Cell::Withheld,
                Cell::Withheld,
                numeric(l.items.to_string()),
            ]
        } else {
            vec![
                text(crate::replay::LIFT.name),
                l.value
                    .map_or_else(|| numeric("—"), |x| numeric(format!("{x:+.3}"))),
                numeric(ci(l.ci, 3)),
                numeric(l.items.to_string()),
            ]
        };
        let mut rows = vec![row];
        // The arms' difference with length regressed out, beside the lift.
        if let Some(a) = m.bias.as_ref().and_then(|b| b.adjusted_lift.as_ref()) {
            let n = m.bias.as_ref().map_or(0, |b| b.length.n);
            rows.push(if l.withheld {
                vec![
                    text("adjusted for length"),
                    Cell::Withheld,
                    Cell::Withheld,
                    numeric(n.to_string()),
                ]
            } else {
                vec![
                    text("adjusted for length"),
                    numeric(format!("{:+.3}", a.value)),
                    numeric(ci(Some(a.ci), 3)),
                    numeric(n.to_string()),
                ]
            });
        }
        blocks.push(Block::Table(Table {
            caption: Some("Treatment − baseline judge composite, paired by item; adjusted for length: the arms' difference with the length of the text judged regressed out (every judged item, clustered by target).".into()),
            header: header(&["", "value", "95% CI", "items"]),
            rows,
        }));
    }
    if let Some(e) = &m.evaluation {
        let cost = e
            .cost_usd
            .map_or_else(|| "no cost reported".to_string(), |c| format!("${c:.4}"));
        blocks.push(Block::Text(format!(
            "The cost of evaluating (every judge call, both arms; never part of an arm's cost): {cost}, {} of {} judge calls reporting usage.",
            e.reported, e.judge_calls
        )));
    }
    Section {
        id: "trust",
        title: "Trust".into(),
        reading,
        blocks,
    }
}

/// The bias audit: each check, what it asks, its figures and whether it failed.
fn bias_table(b: &crate::trust::bias::Bias) -> Table {
    let asks = |name: &str| match name {
        "arm" => "the same finding scored alike in both arms",
        "length" => "scores do not follow the length of the text (per 100 characters)",
        "position" => "scores do not follow an item's place in its judge call (per place)",
        _ => "a judge does not favour a reviewer running its own model",
    };
    let rows = b
        .checks()
        .iter()
        .map(|(name, c)| {
            let result = if c.failed {
                "fails".to_string()
            } else if c.made() {
                "passes".to_string()
            } else {
                c.note.clone().unwrap_or_default()
            };
            vec![
                text(*name),
                text(asks(name)),
                c.estimate
                    .map_or_else(|| numeric("—"), |x| numeric(format!("{x:+.3}"))),
                numeric(ci(c.ci, 3)),
                numeric(c.p.map_or("—".into(), crate::text::fmt_p)),
                numeric(c.n.to_string()),
                numeric(c.explains.map_or("—".into(), |s| {
                    format!("{:.0}%", (100.0 * s).round() + 0.0)
                })),
                text(result),
            ]
        })
        .collect();
    Table {
        caption: Some("Bias audit: judges that agree can still agree on a bias. A check fails when it is significant (p < 0.05) and could give at least half of the lift (docs/guides/trust.md, \"The bias audit\").".into()),
        header: header(&["check", "asks", "estimate", "95% CI", "p", "n", "share of the lift", "result"]),
        rows,
    }
}

pub(super) fn checks_table(v: &TrustVerdict) -> Table {
    let th = &v.thresholds;
    let worst = v
        .per_item_spread
        .iter()
        .map(|s| s.spread)
        .fold(0.0, f64::max);
    let fewest = v.per_item_spread.iter().map(|s| s.survivors).min();
    let mark = |ok: bool| text(if ok { "pass" } else { "fail" });
    // Pass or fail exactly as the verdict decided each check.
    let irr_ok = th.irr_passes(v.inter_rater_reliability);
    let spread_ok = v.per_item_spread.iter().all(|s| th.spread_passes(s.spread));
    let survivors_ok = v
        .per_item_spread
        .iter()
        .all(|s| th.survivors_pass(s.survivors));
    Table {
        caption: Some(format!(
            "The three checks of the trust verdict over {} and {}.",
            count(v.items as u64, "item", "items"),
            count(v.judges as u64, "judge", "judges")
        )),
        header: header(&["check", "value", "bound", "result"]),
        rows: vec![
            vec![
                text(format!(
                    "(1) inter-rater reliability (α, {} level)",
                    format!("{:?}", th.level).to_lowercase()
                )),
                opt(v.inter_rater_reliability, 3),
                numeric(format!("≥ {}", th.irr_floor)),
                mark(irr_ok),
            ],
            vec![
                text("(2) largest per-item spread"),
                num(worst, 2),
                numeric(format!("≤ {}", th.spread_ceiling)),
                mark(spread_ok),
            ],
            vec![
                text("(3) fewest surviving judges on an item"),
                numeric(fewest.map_or("—".into(), |f| f.to_string())),
                numeric(format!("≥ {}", th.min_survivors)),
                mark(survivors_ok),
            ],
        ],
    }
}

pub(super) fn coverage_section(m: &Metrics) -> Section {
    let mut blocks = Vec::new();
    let mut parts = Vec::new();
    if let Some(inputs) = &m.inputs {
        parts.push(ledger(inputs, &mut blocks));
    }
    if let Some(r) = &m.review {
        parts.push(review_coverage(r, &mut blocks));
    }
    if let Some(q) = &m.queries {
        parts.push(query_coverage(q, &mut blocks));
    }
    if let Some(sc) = &m.scores {
        parts.push(scores_coverage(sc, &mut blocks));
    }
    let reading = if parts.is_empty() {
        "Nothing was replayed.".to_string()
    } else {
        capitalized(&parts.join("; ")) + "."
    };
    Section {
        id: "coverage",
        title: "Coverage".into(),
        reading,
        blocks,
    }
}

/// The input ledger (docs/reference.md, "The input ledger"): each file's lines, used or
/// excluded by reason; each arm's findings; the unpaired units; the caveats. Its part of the
/// reading.
fn ledger(inputs: &crate::corpus::ledger::Inputs, blocks: &mut Vec<Block>) -> String {
    let mut rows = Vec::new();
    for (file, f) in &inputs.files {
        let excluded: Vec<String> = f
            .excluded
            .iter()
            .map(|(reason, e)| {
                format!(
                    "{reason}: {} (first line {}, {})",
                    e.count,
                    e.first_line,
                    crate::text::one_line(&e.example)
                )
            })
            .collect();
        rows.push(vec![
            text(file.clone()),
            numeric(f.lines.to_string()),
            numeric(f.used.to_string()),
            text(if excluded.is_empty() {
                "—".to_string()
            } else {
                excluded.join("; ")
            }),
        ]);
    }
    blocks.push(Block::Table(Table {
        caption: Some("Every input line: used, or excluded for a named reason (lines = used + excluded; blank lines are not lines).".into()),
        header: header(&["file", "lines", "used", "excluded (reason: count, first line, example)"]),
        rows,
    }));
    if !inputs.findings.is_empty() {
        let rows = inputs
            .findings
            .iter()
            .map(|(arm, f)| {
                let why: Vec<String> = f
                    .malformed
                    .iter()
                    .map(|(reason, n)| format!("{n} × {reason}"))
                    .collect();
                vec![
                    text(arm.clone()),
                    numeric(f.read.to_string()),
                    numeric(f.used.to_string()),
                    numeric((f.read - f.used).to_string()),
                    text(if why.is_empty() {
                        "—".into()
                    } else {
                        why.join("; ")
                    }),
                ]
            })
            .collect();
        blocks.push(Block::Table(Table {
            caption: Some("Every finding each arm read: used, or dropped as malformed.".into()),
            header: header(&["arm", "read", "used", "malformed", "why"]),
            rows,
        }));
    }
    if !inputs.usage.is_empty() {
        let rows = inputs
            .usage
            .iter()
            .map(|(arm, u)| {
                vec![
                    text(arm.clone()),
                    numeric(u.calls.to_string()),
                    numeric(u.reported.to_string()),
                    numeric((u.calls - u.reported).to_string()),
                ]
            })
            .collect();
        blocks.push(Block::Table(Table {
            caption: Some("Calls (reviewer calls, query traces, imported samples) that reported what they spent (`usage` or `elapsed_ms`): a target's, query's or item's cost counts only those that did.".into()),
            header: header(&["arm", "calls", "reported usage", "reported none"]),
            rows,
        }));
    }
    if !inputs.unpaired.is_empty() {
        let rows = inputs
            .unpaired
            .iter()
            .map(|(arm, u)| {
                vec![
                    text(arm.clone()),
                    numeric(u.count.to_string()),
                    text(u.what.clone()),
                    text(u.first.clone()),
                ]
            })
            .collect();
        blocks.push(Block::Table(Table {
            caption: Some(
                "Units one arm has and the other does not: they take no part in a paired delta."
                    .into(),
            ),
            header: header(&["arm", "unpaired", "of", "first"]),
            rows,
        }));
    }
    if !inputs.provenance {
        blocks.push(Block::Text(
            "No provenance: the corpus records no harness (it was written by hand, imported, or collected before calibench recorded one), so the arms' commands, prompt files, environment and calibench version were not compared; only the models the reviewers report were.".into(),
        ));
    }
    if !inputs.caveats.is_empty() {
        blocks.push(Block::Text(
            "Caveats: what the run read that could change its decision without being seen (the decision line counts them; `run --strict` refuses them):".into(),
        ));
        blocks.push(Block::List(
            inputs
                .caveats
                .iter()
                .map(|c| format!("{} ({}): {}", c.title(), c.kind(), c.sentence()))
                .collect(),
        ));
    }
    let lines: u64 = inputs.files.values().map(|f| f.lines).sum();
    let used: u64 = inputs.files.values().map(|f| f.used).sum();
    let caveats = match inputs.caveats.len() {
        0 => "no caveat".to_string(),
        n => crate::text::count(n as u64, "caveat", "caveats"),
    };
    if used == lines {
        format!("all {} input lines were used; {caveats}", lines)
    } else {
        format!(
            "{used} of {lines} input lines were used and {} excluded for a named reason; {caveats}",
            lines - used
        )
    }
}

/// The review's coverage: malformed findings, failed calls and the gate's drops, with their
/// reasons; its part of the reading.
fn review_coverage(r: &crate::model::ReviewSection, blocks: &mut Vec<Block>) -> String {
    let (b, t) = (&r.arms.baseline, &r.arms.treatment);
    blocks.push(Block::Table(Table {
        caption: Some("Counts summed over targets, mean over runs.".into()),
        header: header(&["", "baseline", "treatment"]),
        rows: vec![
            figures_row(
                "malformed findings (dropped by validation)",
                &[MALFORMED],
                b,
                t,
            ),
            figures_row("failed reviewer calls", &[FAILED_REVIEWERS], b, t),
            figures_row("findings dropped by the gate", &[DROPPED], b, t),
        ],
    }));
    let mut reasons = Vec::new();
    for (arm, a) in [("baseline", b), ("treatment", t)] {
        for (why, count) in &a.malformed_reasons {
            reasons.push(format!("{arm}: {count} × {why}"));
        }
    }
    if !reasons.is_empty() {
        blocks.push(Block::Text(
            "Why findings were malformed (all targets and runs):".into(),
        ));
        blocks.push(Block::List(reasons));
    }
    let rejections: Vec<String> = [("baseline", b), ("treatment", t)]
        .iter()
        .filter_map(|(arm, a)| a.controls.as_ref().map(|c| (arm, c)))
        .flat_map(|(arm, c)| {
            c.rejection_reasons
                .iter()
                .map(move |(why, n)| format!("{arm}: {n} × {why}"))
        })
        .collect();
    if !rejections.is_empty() {
        blocks.push(Block::Text(
            "Why the validator rejected findings (all targets and runs):".into(),
        ));
        blocks.push(Block::List(rejections));
    }
    if let Some(items) = failed_calls(b, t) {
        blocks.push(Block::Text(
            "Failed reviewer calls (a failed rater, never zero findings):".into(),
        ));
        blocks.push(Block::List(items));
    }
    blocks.extend(dropped_by_value(b, t).map(Block::Table));
    format!(
        "malformed findings per run: {}; failed reviewer calls per run: {} (baseline → treatment)",
        change(b.figure(MALFORMED.sum()), t.figure(MALFORMED.sum()), 2),
        change(
            b.figure(FAILED_REVIEWERS.sum()),
            t.figure(FAILED_REVIEWERS.sum()),
            2
        )
    )
}

/// The first failed reviewer calls of both arms, one line each; `None` without any.
fn failed_calls(b: &ArmMetrics, t: &ArmMetrics) -> Option<Vec<String>> {
    const SHOWN: usize = 12;
    let failed: Vec<(&str, &FailedCall)> = [("baseline", b), ("treatment", t)]
        .into_iter()
        .flat_map(|(arm, a)| a.failed_calls.iter().map(move |c| (arm, c)))
        .collect();
    if failed.is_empty() {
        return None;
    }
    let mut items: Vec<String> = failed
        .iter()
        .take(SHOWN)
        .map(|(arm, c)| {
            format!(
                "{arm}: {} · {} · run {}: {}",
                c.target,
                c.reviewer,
                c.run,
                c.reason.as_deref().unwrap_or("no reason recorded")
            )
        })
        .collect();
    if failed.len() > SHOWN {
        items.push(format!(
            "… and {} more (`failed_calls` in metrics.json lists them all)",
            failed.len() - SHOWN
        ));
    }
    Some(items)
}

/// The gate's dropped findings by confidence value; `None` when it dropped none.
fn dropped_by_value(b: &ArmMetrics, t: &ArmMetrics) -> Option<Table> {
    let mut labels: Vec<&String> = b
        .dropped_by_value
        .keys()
        .chain(t.dropped_by_value.keys())
        .collect();
    labels.sort();
    labels.dedup();
    if labels.is_empty() {
        return None;
    }
    let rows = labels
        .iter()
        .map(|l| {
            let get = |a: &ArmMetrics| {
                a.dropped_by_value
                    .get(*l)
                    .map_or_else(|| numeric("—"), |x| num(*x, 2))
            };
            vec![text(*l), get(b), get(t)]
        })
        .collect();
    Some(Table {
        caption: Some("Dropped findings by confidence (anchor value, or 0.05 bin on the float scale), summed over targets, mean over runs.".into()),
        header: header(&["confidence", "baseline", "treatment"]),
        rows,
    })
}

/// The queries' coverage: replayed, labelled, errored, stopped; its part of the reading.
fn query_coverage(q: &crate::model::QuerySection, blocks: &mut Vec<Block>) -> String {
    let (b, t) = (&q.arms.baseline, &q.arms.treatment);
    let row = |label: &str, f: fn(&QueryArmMetrics) -> usize| {
        vec![
            text(label),
            numeric(f(b).to_string()),
            numeric(f(t).to_string()),
        ]
    };
    blocks.push(Block::Table(Table {
        caption: None,
        header: header(&["", "baseline", "treatment"]),
        rows: vec![
            row("queries replayed", |a| a.queries),
            row("with a final outcome (labelled)", |a| a.labelled),
            row("ended in an error", |a| a.errors),
            row("stopped below the stop threshold", |a| a.stopped),
        ],
    }));
    format!(
        "{} of {} queries ended in an error and {} stopped below the stop threshold under the treatment ({} and {} under the baseline)",
        t.errors, t.queries, t.stopped, b.errors, b.stopped
    )
}

/// The imported scores' coverage: missing lines and why; its part of the reading.
fn scores_coverage(sc: &ScoresSection, blocks: &mut Vec<Block>) -> String {
    let (b, t) = (&sc.arms.baseline, &sc.arms.treatment);
    let total = |a: &crate::replay::scores::ScoreArm| -> (usize, usize) {
        a.scorers
            .values()
            .fold((0, 0), |(l, x), f| (l + f.lines, x + f.missing))
    };
    let ((bl, bm), (tl, tm)) = (total(b), total(t));
    let reasons: Vec<String> = [b, t]
        .iter()
        .flat_map(|a| {
            a.scorers.iter().flat_map(move |(scorer, f)| {
                f.missing_reasons
                    .iter()
                    .map(move |(why, n)| format!("{} · {scorer}: {n} × {why}", a.source))
            })
        })
        .collect();
    if !reasons.is_empty() {
        blocks.push(Block::Text("Why score lines are missing:".into()));
        blocks.push(Block::List(reasons));
    }
    format!(
        "{tm} of {tl} imported score lines are missing under {} ({bm} of {bl} under {}): errored or unscored samples, counted in no mean",
        t.source, b.source
    )
}
