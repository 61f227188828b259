//! "Can a judge replace a human?": the alt-test of each judge and of the panel against the
//! annotators, and how alike the judges' mistakes are.

use super::*;
use crate::humans::{candidates, mean_correlation, HumansSection, PANEL};

pub(super) fn humans_section(
    m: &Metrics,
    h: &HumansSection,
    has: &dyn Fn(&'static str) -> bool,
) -> Section {
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
    blocks.extend(plot(has, "judge-errors"));
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
