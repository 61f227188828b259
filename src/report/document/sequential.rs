//! The report's sequential decision (docs/guides/stop-when-you-know.md): the sentence a
//! decision line carries, and the section with each metric's sequence and its plot.

use super::{capitalized, Block, Cell, Plots, Section, Table};
use crate::sequential::{Sequential, Verdict};
use crate::text::fmt_num;

/// "better — decided after 34 of 120 targets (86 a sequential collection would not have
/// collected)", or what was not decided.
pub(super) fn sentence(s: &Sequential) -> String {
    let level = format!("each metric at α {}", fmt_num(s.alpha));
    match (s.verdict, s.stopped_at) {
        (Verdict::Withheld, _) => format!(
            "withheld: {} judge-derived and the judges are not trusted, so no sequence decides on {}",
            s.withheld
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
                + if s.withheld.len() == 1 { " is" } else { " are" },
            if s.withheld.len() == 1 { "it" } else { "them" }
        ),
        (Verdict::Undecided, _) | (_, None) => format!(
            "undecided after all {} {}: no anytime-valid sequence ({level}) reached a decision; {}",
            s.units,
            s.unit_name,
            undecided_metrics(s)
        ),
        (v, Some(at)) => format!(
            "{} — decided after {at} of {} {} ({level}); a collection that stopped there would have saved {}",
            v.name(),
            s.units,
            s.unit_name,
            s.saved
        ),
    }
}

fn undecided_metrics(s: &Sequential) -> String {
    let names: Vec<String> = s
        .metrics
        .iter()
        .filter(|(_, m)| m.decided_at.is_none())
        .map(|(n, _)| format!("`{n}`"))
        .collect();
    match names.len() {
        0 => "every metric was decided, but not all favourably".into(),
        _ => format!("{} still undecided", names.join(", ")),
    }
}

/// The section: its reading is the sentence; a table per metric (want, range, decided at, its
/// outcome and bounds where the collection stopped); the plot.
pub(super) fn section(s: &Sequential, drawn: Plots<'_>) -> Section {
    let at = s.stopped_at.unwrap_or(s.units);
    let rows = s
        .metrics
        .iter()
        .map(|(name, m)| {
            let [lo, hi] = m.at(at);
            vec![
                Cell::Text(name.clone()),
                Cell::Text(match m.margin {
                    Some(margin) => format!("{} (margin {})", m.want.name(), fmt_num(margin)),
                    None => m.want.name().to_string(),
                }),
                Cell::Text(format!(
                    "[{}, {}]",
                    fmt_num(m.range[0]),
                    fmt_num(m.range[1])
                )),
                Cell::Num(m.units_at(at).to_string()),
                Cell::Num(format!("{lo:+.4}")),
                Cell::Num(format!("{hi:+.4}")),
                Cell::Num(m.decided_at.map_or("—".into(), |d| d.to_string())),
                Cell::Text(m.outcome.words().into()),
            ]
        })
        .collect();
    let mut blocks = vec![Block::Table(Table {
        caption: Some(format!(
            "Each decision metric's anytime-valid 95% sequence (Waudby-Smith & Ramdas, {}; α {} each, Bonferroni over {}), read where the collection {} — {} arriving in {} order.",
            match s.method {
                crate::sequential::Method::Hedged => "hedged capital",
                crate::sequential::Method::EmpiricalBernstein => "empirical Bernstein",
            },
            fmt_num(s.alpha),
            s.metrics.len(),
            if s.stopped_at.is_some() { "would have stopped" } else { "ended" },
            s.unit_name,
            s.order_from
        )),
        header: [
            "metric",
            "wanted",
            "unit range",
            "units",
            "lower",
            "upper",
            "decided at",
            "outcome",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })];
    blocks.extend(drawn.get("sequential"));
    blocks.push(Block::Text(
        "A sequence is valid at every look at once: a collection may look after every unit and stop when the decision is reached, and is still wrong at most 5% of the time. It is wider than the fixed-size interval at the same number of units; that is its price.".into(),
    ));
    Section {
        id: "sequential",
        title: "Sequential decision".into(),
        reading: capitalized(&sentence(s)) + ".",
        blocks,
    }
}
