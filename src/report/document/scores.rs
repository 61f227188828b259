//! The imported-scores section: each arm's scorers and the paired deltas per scorer.

use super::*;

/// One delta row per scorer of the imported scores, in name order: withheld for a judge scorer
/// of an untrusted panel.
pub(super) fn scorer_rows(m: &Metrics, sc: &ScoresSection) -> Vec<Vec<Cell>> {
    let held = m.withheld(DeltaTable::Scores);
    let mut names: Vec<&String> = sc.scorer_deltas().map(|(k, _)| k).chain(held).collect();
    names.sort();
    names.dedup();
    // What the samples spent, where the logs say, after the scorers.
    let usage = sc.usage_deltas().map(|(name, d)| {
        let c = crate::replay::compared_key(name);
        delta_row(c.words(), d, c.places)
    });
    names
        .into_iter()
        .map(|name| {
            let kind = if sc.judges.contains(name) {
                "judge"
            } else {
                "scorer"
            };
            let label = format!("{name} ({kind})");
            match sc.delta.get(name) {
                Some(d) => delta_row(&label, d, 3),
                None => withheld_row(&label),
            }
        })
        .chain(usage)
        .collect()
}

/// Imported scores: the arms' scorers, the paired delta per scorer, and the
/// model's own calibration where the logs carry confidences.
pub(super) fn scores_section(m: &Metrics, sc: &ScoresSection, plots: Plots) -> Section {
    let (b, t) = (&sc.arms.baseline, &sc.arms.treatment);
    let mut scorers: Vec<&str> = b
        .scorers
        .keys()
        .chain(t.scorers.keys())
        .map(String::as_str)
        .collect();
    scorers.sort_unstable();
    scorers.dedup();
    let mut blocks = vec![Block::Table(lines_table(m, sc, &scorers))];
    if b.task != t.task {
        blocks.push(Block::Text(format!(
            "The arms ran different tasks ({} and {}): items are paired by id only, so check that the ids name the same questions.",
            b.task, t.task
        )));
    }
    blocks.extend(plots.get("scores-means"));
    let rows = scorer_rows(m, sc);
    if !rows.is_empty() {
        let lead = "Paired per scorer over the items both arms scored. p: a test of the mean difference, McNemar's exact test where every paired score is 0 or 1 (the binomial over the discordant items), else the paired t-test.";
        blocks.push(Block::Table(delta_table(m, &sc.delta, rows, lead)));
    }
    let discordant = discordant(sc);
    if !discordant.is_empty() {
        blocks.push(Block::Text("McNemar's discordant items:".into()));
        blocks.push(Block::List(discordant));
    }
    blocks.extend(big_enough(m, DeltaTable::Scores, &sc.delta));
    if let Some(table) = calibration_table(sc, &scorers) {
        blocks.push(Block::Table(table));
        blocks.extend(plots.get("scores-reliability"));
    }
    let unexplained: usize = [b, t]
        .iter()
        .flat_map(|a| a.scorers.values())
        .map(|f| f.confidence_without_outcome)
        .sum();
    if unexplained > 0 {
        blocks.push(Block::Text(format!(
            "{unexplained} scored lines carry a confidence but no correct field: they are left out of the calibration."
        )));
    }
    Section {
        id: "scores",
        title: "Imported scores".into(),
        reading: reading(m, sc),
        blocks,
    }
}

/// The section's plain reading: the first three scorers' changes, and what is withheld.
fn reading(m: &Metrics, sc: &ScoresSection) -> String {
    let (b, t) = (&sc.arms.baseline, &sc.arms.treatment);
    let scorers = sc.scorer_deltas().count();
    let mut parts: Vec<String> = sc
        .scorer_deltas()
        .take(3)
        .map(|(scorer, d)| {
            let p = &d.paired;
            let test = match p.test {
                crate::stats::test::Test::Mcnemar => "McNemar",
                _ => "paired t",
            };
            format!(
                "{scorer} {} over {} ({test} p {})",
                change(p.baseline, p.treatment, 3),
                count(p.pairs as u64, "item", "items"),
                p.p_value.map_or("—".into(), fmt_p)
            )
        })
        .collect();
    if scorers > 3 {
        let more = scorers - 3;
        parts.push(format!(
            "{more} more {} below",
            if more == 1 { "scorer" } else { "scorers" }
        ));
    }
    let held = m.withheld(DeltaTable::Scores);
    if !held.is_empty() {
        parts.push(format!(
            "the judge scorers' figures are withheld ({})",
            and_list(held)
        ));
    }
    if parts.is_empty() {
        format!(
            "No scorer scored an item in both arms: {} and {} share no scored item, so nothing is compared.",
            b.source, t.source
        )
    } else {
        format!("{} against {}: {}.", t.source, b.source, parts.join("; "))
    }
}

/// Each scorer's lines, missing lines and mean in both arms.
fn lines_table(m: &Metrics, sc: &ScoresSection, scorers: &[&str]) -> Table {
    let (b, t) = (&sc.arms.baseline, &sc.arms.treatment);
    let held = m.withheld(DeltaTable::Scores);
    let figures = |arm: &crate::replay::scores::ScoreArm, scorer: &str| {
        arm.scorers.get(scorer).map_or_else(
            || vec![numeric("—"), numeric("—"), numeric("—")],
            |f| {
                vec![
                    numeric(f.lines.to_string()),
                    numeric(f.missing.to_string()),
                    match f.mean {
                        Some(x) => num(x, 3),
                        None if held.iter().any(|h| h == scorer) => Cell::Withheld,
                        None => numeric("—"),
                    },
                ]
            },
        )
    };
    Table {
        caption: Some(format!(
            "Baseline {} ran task {} ({}, at most {} of one item); treatment {} ran {} ({}, at most {}). Lines are item × repeat; a missing line errored or was not scored and counts in no mean (never as 0). Means are over items, each item the mean of its scored repeats.",
            b.source,
            b.task,
            count(b.items as u64, "item", "items"),
            count(b.repeats as u64, "repeat", "repeats"),
            t.source,
            t.task,
            count(t.items as u64, "item", "items"),
            count(t.repeats as u64, "repeat", "repeats")
        )),
        header: header(&[
            "scorer",
            "baseline lines",
            "missing",
            "mean",
            "treatment lines",
            "missing",
            "mean",
        ]),
        rows: scorers
            .iter()
            .map(|s| per_arm_row(s, figures(b, s), figures(t, s)))
            .collect(),
    }
}

/// McNemar's discordant items, one line per scorer scored 0 or 1.
fn discordant(sc: &ScoresSection) -> Vec<String> {
    let (b, t) = (&sc.arms.baseline, &sc.arms.treatment);
    sc.delta
        .iter()
        .filter_map(|(scorer, d)| {
            d.mcnemar.as_ref().map(|c| {
                let items = |n: usize| format!("{n} {}", if n == 1 { "item" } else { "items" });
                format!(
                    "{scorer}: {} scored 1 only under {}, {} only under {}; the other {} agree",
                    items(c.treatment_only),
                    t.source,
                    items(c.baseline_only),
                    b.source,
                    d.paired.pairs - c.treatment_only - c.baseline_only
                )
            })
        })
        .collect()
}

/// The model's own calibration per scorer, where a log carries confidences and outcomes.
fn calibration_table(sc: &ScoresSection, scorers: &[&str]) -> Option<Table> {
    let (b, t) = (&sc.arms.baseline, &sc.arms.treatment);
    let calibrated: Vec<&str> = scorers
        .iter()
        .copied()
        .filter(|s| {
            [b, t]
                .iter()
                .any(|a| a.scorers.get(*s).is_some_and(|f| f.calibration.is_some()))
        })
        .collect();
    if calibrated.is_empty() {
        return None;
    }
    let cal = |a: &crate::replay::scores::ScoreArm, s: &str| {
        a.scorers
            .get(s)
            .and_then(|f| f.calibration.as_ref())
            .map_or_else(
                || vec![numeric("—"), numeric("—"), numeric("—"), numeric("—")],
                |c| {
                    vec![
                        numeric(c.n.to_string()),
                        num(c.ece, 3),
                        num(c.brier, 3),
                        opt(c.auroc, 3),
                    ]
                },
            )
    };
    Some(Table {
        caption: Some("The model's own confidence against whether it was right, over the scored lines that carry both (docs/guides/alpha-and-calibration.md).".into()),
        header: header(&[
            "scorer",
            "baseline n",
            "ECE",
            "Brier",
            "AUROC",
            "treatment n",
            "ECE",
            "Brier",
            "AUROC",
        ]),
        rows: calibrated
            .iter()
            .map(|s| per_arm_row(s, cal(b, s), cal(t, s)))
            .collect(),
    })
}

/// A scorer's row: its name, then its baseline and treatment cells.
fn per_arm_row(
    scorer: &str,
    b: impl IntoIterator<Item = Cell>,
    t: impl IntoIterator<Item = Cell>,
) -> Vec<Cell> {
    std::iter::once(text(scorer)).chain(b).chain(t).collect()
}
