//! "Can a judge replace a human?": the alt-test of each judge and of the panel against the
//! annotators, and how alike the judges' mistakes are.

use super::*;
use crate::humans::{candidates, mean_correlation, HumansSection, PANEL};

pub(super) fn humans_section(m: &Metrics, h: &HumansSection, plots: Plots) -> Section {
    let judges: Vec<(&str, Result<&crate::humans::AltTestFigures, &str>)> = candidates(h);
    let named = |pass: bool| -> Vec<String> {
        judges
            .iter()
            .filter(|(n, t)| *n != PANEL && t.is_ok_and(|t| t.passed == pass))
            .map(|(n, t)| format!("{n} ({:.2})", t.map_or(0.0, |t| t.winning_rate)))
            .collect()
    };
    let (pass, fail) = (named(true), named(false));
    let annotators = crate::text::count(h.annotators as u64, "annotator", "annotators");
    let mut reading = match (pass.is_empty(), fail.is_empty()) {
        (false, true) => format!(
            "Every judge can stand in for the {annotators}: {} pass the alt-test (winning rate ≥ 0.5, ε {}).",
            and_list(&pass),
            h.epsilon
        ),
        (false, false) => format!(
            "The alt-test (ε {}) says {} can stand in for the {annotators}; {} cannot (winning rates in brackets, 0.5 to pass).",
            h.epsilon,
            and_list(&pass),
            and_list(&fail)
        ),
        (true, false) => format!(
            "No judge can yet stand in for the {annotators}: {} fail the alt-test (winning rate < 0.5, ε {}).",
            and_list(&fail),
            h.epsilon
        ),
        (true, true) => format!(
            "No judge could be alt-tested against the {annotators}: too few labelled units."
        ),
    };
    match h.alt_test.get(PANEL) {
        Some(p) => {
            reading += &format!(
                " The panel's composite {} (winning rate {:.2}).",
                if p.passed { "passes" } else { "fails" },
                p.winning_rate
            )
        }
        None => reading += " The panel's composite could not be tested.",
    }
    let alpha = m
        .agreement
        .as_ref()
        .and_then(|a| a.judges.as_ref())
        .and_then(|j| j.alpha);
    if let (Some(e), Some(r)) = (h.effective_judges, mean_correlation(h)) {
        reading += &match alpha {
            Some(a) => format!(
                " The judges agree with each other at α {a:.3}, yet their errors against the annotators correlate at r̄ {r:.2}: the {} judges are worth {e:.1} independent ones.",
                h.judges
            ),
            None => format!(
                " Their errors against the annotators correlate at r̄ {r:.2}: the {} judges are worth {e:.1} independent ones.",
                h.judges
            ),
        };
    }
    let mut blocks = vec![Block::Text(format!(
        "Over {} labelled units ({} judged items, by {annotators}). These figures hold only if the labelled items were drawn at random from the judged ones.",
        h.units, h.items
    ))];
    blocks.push(Block::Table(Table {
        caption: Some(format!(
            "The alt-test (Calderon, Reichart & Dror, 2025): leave one annotator out, ask whether the candidate or that annotator agrees better with the rest (negative RMSE); the candidate wins an annotator when a one-sided t-test shows it at most ε = {} worse (Benjamini–Yekutieli at q {}), and passes when it wins at least half of them.",
            h.epsilon, h.q
        )),
        header: header(&[
            "candidate",
            "alt-test",
            "winning rate",
            "advantage probability",
            "annotators tested",
            "units",
        ]),
        rows: judges
            .iter()
            .map(|(name, t)| match t {
                Ok(t) => vec![
                    text(*name),
                    text(if t.passed { "passes" } else { "fails" }),
                    num(t.winning_rate, 2),
                    num(t.advantage_probability, 2),
                    numeric(t.humans.len().to_string()),
                    numeric(t.items.to_string()),
                ],
                Err(note) => vec![
                    text(*name),
                    text(format!("not tested: {note}")),
                    numeric("—"),
                    numeric("—"),
                    numeric("—"),
                    numeric("—"),
                ],
            })
            .collect(),
    }));
    blocks.extend(plots.get("judge-errors"));
    let names: Vec<&String> = h.error_correlation.keys().collect();
    if names.len() >= 2 {
        let mut head = vec!["judge"];
        head.extend(names.iter().map(|n| n.as_str()));
        blocks.push(Block::Table(Table {
            caption: Some(format!(
                "Correlation of the judges' errors (score − mean label) over the units both judged. Effective number of judges k / (1 + (k − 1)·r̄), r̄ clipped to [0, 1]: {}.",
                h.effective_judges
                    .map_or("not computable".into(), |e| format!("{e:.2}"))
            )),
            header: header(&head),
            rows: names
                .iter()
                .map(|a| {
                    let mut row = vec![text(a.as_str())];
                    row.extend(names.iter().map(|b| opt(h.error_correlation[*a][*b], 2)));
                    row
                })
                .collect(),
        }));
    }
    Section {
        id: "humans",
        title: "Can a judge replace a human?".into(),
        reading,
        blocks,
    }
}

/// "Lift in human units": the judge lift, the PPI++ lift and the labels-only interval side by
/// side, each arm in human units, and anchor calibration in human units.
pub(super) fn lift_human_section(
    m: &Metrics,
    l: &crate::human_units::LiftHuman,
    plots: Plots,
) -> Section {
    let mut blocks = vec![Block::Table(lift_table(m, l))];
    blocks.extend(plots.get("lift-human"));
    let notes = lift_notes(l);
    if !notes.is_empty() {
        blocks.push(Block::List(notes));
    }
    blocks.push(Block::Table(arms_in_human_units(l)));
    blocks.extend(calibration_in_human_units(m).map(Block::Table));
    Section {
        id: "lift-human",
        title: "Lift in human units".into(),
        reading: lift_reading(m, l),
        blocks,
    }
}

/// A signed estimate with its interval, or that it has none.
fn signed(v: Option<f64>, c: Option<[f64; 2]>) -> String {
    match v {
        Some(v) => format!("{v:+.3} {}", signed_ci(c)),
        None => "not estimable".to_string(),
    }
}

/// The lift in human units beside the judge lift and the labels alone, in words, with the
/// assumption every estimate rests on.
fn lift_reading(m: &Metrics, l: &crate::human_units::LiftHuman) -> String {
    let judge = m.lift.as_ref();
    let mut reading = match l.ppi.value {
        Some(_) => format!(
            "In human units the lift is {} (PPI++ over {} labelled and {} judged-only pairs, λ {:.2}{}), against {} in judge units and {} from the labelled pairs alone.",
            signed(l.ppi.value, l.ppi.ci),
            l.ppi.labelled,
            l.ppi.unlabelled,
            l.ppi.lambda,
            l.ppi.note.as_ref().map_or(String::new(), |n| format!(": {n}")),
            judge.map_or("—".into(), |j| signed(j.value, j.ci)),
            signed(l.classical.value, l.classical.ci),
        ),
        None => format!(
            "The lift cannot be put in human units: {} of its {} pairs are labelled in both arms.",
            l.ppi.labelled,
            l.ppi.labelled + l.ppi.unlabelled
        ),
    };
    reading += " These estimates are unbiased only if the labelled items were drawn at random from the judged ones.";
    reading
}

/// The judge lift, the PPI++ lift and the labels-only interval side by side.
fn lift_table(m: &Metrics, l: &crate::human_units::LiftHuman) -> Table {
    let judge = m.lift.as_ref();
    let row = |name: &str,
               v: Option<f64>,
               c: Option<[f64; 2]>,
               n: String,
               big_n: String,
               lambda: String| {
        vec![
            text(name),
            v.map_or_else(|| numeric("—"), |x| numeric(format!("{x:+.3}"))),
            numeric(ci(c, 3)),
            numeric(n),
            numeric(big_n),
            numeric(lambda),
        ]
    };
    let mut rows = Vec::new();
    if let Some(j) = judge {
        if j.withheld {
            rows.push(vec![
                text("judge lift"),
                Cell::Withheld,
                Cell::Withheld,
                numeric("—"),
                numeric(j.items.to_string()),
                numeric("—"),
            ]);
        } else {
            rows.push(row(
                "judge lift",
                j.value,
                j.ci,
                "—".into(),
                format!("{} (every pair)", j.items),
                "—".into(),
            ));
        }
    }
    rows.push(row(
        "PPI++ lift (human units)",
        l.ppi.value,
        l.ppi.ci,
        l.ppi.labelled.to_string(),
        l.ppi.unlabelled.to_string(),
        format!("{:.2}", l.ppi.lambda),
    ));
    rows.push(row(
        "labels alone",
        l.classical.value,
        l.classical.ci,
        l.ppi.labelled.to_string(),
        "—".into(),
        "0".into(),
    ));
    Table {
        caption: Some("Treatment − baseline composite, paired by item, 95% intervals. n: pairs people labelled in both arms; N: pairs only the judges scored; λ: how much PPI++ leans on the judges (0 is the labels alone).".into()),
        header: header(&["estimate", "value", "95% CI", "n labelled", "N judged only", "λ"]),
        rows,
    }
}

/// What the reader should know of the labels behind the estimate.
fn lift_notes(l: &crate::human_units::LiftHuman) -> Vec<String> {
    let mut notes = Vec::new();
    notes.extend(l.ppi.note.clone());
    if l.labelled_one_arm > 0 {
        notes.push(format!(
            "{} labelled in one arm only: not a lift pair.",
            crate::text::count(l.labelled_one_arm as u64, "item is", "items are")
        ));
    }
    if l.labels_unused > 0 {
        notes.push(format!(
            "{} no judge scored: counted, not used.",
            crate::text::count(l.labels_unused as u64, "labelled item", "labelled items")
        ));
    }
    if l.ppi.labelled > 0 && l.ppi.labelled < 10 {
        notes.push(format!(
            "With {} labelled pairs the interval's own variance is rough: label more (calibench plan RUN_DIR --labels-for WIDTH says how many).",
            l.ppi.labelled
        ));
    }
    notes
}

/// Each arm's mean composite in human units.
fn arms_in_human_units(l: &crate::human_units::LiftHuman) -> Table {
    let arm_row = |name: &str, e: &crate::stats::ppi::Estimate| {
        vec![
            text(name),
            opt(e.value, 3),
            numeric(interval(e.ci, 3)),
            numeric(e.labelled.to_string()),
            numeric(e.unlabelled.to_string()),
            numeric(format!("{:.2}", e.lambda)),
        ]
    };
    Table {
        caption: Some(
            "Each arm's mean composite in human units (PPI++ over its judged items).".into(),
        ),
        header: header(&["arm", "mean", "95% CI", "n labelled", "N judged only", "λ"]),
        rows: vec![
            arm_row("baseline", &l.arms.baseline),
            arm_row("treatment", &l.arms.treatment),
        ],
    }
}

/// Per arm and recorded confidence value, the judges' mean composite beside the people's.
fn calibration_in_human_units(m: &Metrics) -> Option<Table> {
    if m.anchor_calibration_human.is_empty() {
        return None;
    }
    Some(Table {
        caption: Some("Anchor calibration in human units: each finding a judge scored, at the value its reviewer recorded (before merging and promotion, so counts differ from the anchor calibration table above, which counts merged findings at their final confidence), with its judges' mean composite and, PPI++, the people's; a value no person labelled is left out. Does a 75 hit 0.75? Cells with few labelled findings have rough intervals.".into()),
        header: header(&["arm", "value", "findings", "labelled", "judges", "human units", "95% CI", "λ"]),
        rows: m
            .anchor_calibration_human
            .iter()
            .map(|c| {
                vec![
                    text(&c.arm),
                    text(&c.value),
                    numeric(c.items.to_string()),
                    numeric(c.human.labelled.to_string()),
                    num(c.judge, 3),
                    opt(c.human.value, 3),
                    numeric(interval(c.human.ci, 3)),
                    numeric(format!("{:.2}", c.human.lambda)),
                ]
            })
            .collect(),
    })
}

/// An interval with signs: `[+0.083, +0.225]`.
fn signed_ci(c: Option<[f64; 2]>) -> String {
    c.map_or("(no interval)".into(), |[lo, hi]| {
        format!("[{lo:+.3}, {hi:+.3}]")
    })
}
