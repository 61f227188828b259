//! The summary `calibench run` prints: the report's [`Document`] as plain text. The verdict,
//! the headline, the baseline-vs-treatment table and each section's one-line reading. It is
//! rendered from the same document as `report.md` and `report.html`, so the terminal and the
//! report cannot disagree, and adding a figure to the document adds it here. The full tables
//! are in the report, whose path the summary ends with. Pure: returns the text; `output` makes
//! it terminal-safe and prints it.

use std::path::Path;

use super::document::{Cell, Document, Table};
use crate::text::inline;

/// The summary of one run of `experiment`, written to `run_dir`, with its report at `report`.
pub fn render(experiment: &str, doc: &Document, run_dir: &Path, report: &Path) -> String {
    // Each piece is one line: a corpus string quoted in it shows its line breaks escaped.
    let one = |s: &str| inline(s).into_owned();
    let mut s = format!(
        "{} → {}\n",
        one(experiment),
        one(&run_dir.display().to_string())
    );
    for st in doc.statements() {
        s += &format!("  {}: {}. {}\n", st.id, st.label, one(st.sentence));
        for d in st.details {
            s += &format!("    - {}\n", one(d));
        }
    }
    s += &format!("  headline: {}\n", one(&doc.headline));
    s += &table(&doc.summary, "  ");
    for section in &doc.sections {
        s += &format!("  {}: {}\n", one(&section.title), one(&section.reading));
    }
    s += &format!("  report: {}\n", report.display());
    s
}

/// A table as aligned columns: numbers (and withheld figures) to the right, text to the left.
fn table(t: &Table, indent: &str) -> String {
    if t.rows.is_empty() {
        return String::new();
    }
    let width = |s: &str| s.chars().count();
    let columns = t.header.len();
    let mut widths: Vec<usize> = t.header.iter().map(|h| width(h)).collect();
    let numeric: Vec<bool> = (0..columns)
        .map(|i| {
            t.rows
                .iter()
                .all(|r| matches!(r.get(i), Some(Cell::Num(_) | Cell::Withheld) | None))
        })
        .collect();
    for row in &t.rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(width(cell.text()));
        }
    }
    let line = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let pad = " ".repeat(widths[i].saturating_sub(width(c)));
                if numeric[i] && i > 0 {
                    format!("{pad}{c}")
                } else {
                    format!("{c}{pad}")
                }
            })
            .collect();
        format!("{indent}{}\n", parts.join("  ").trim_end())
    };
    let mut s = line(t.header.iter().map(String::as_str).collect());
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .take(columns)
            .map(|c| inline(c.text()).into_owned())
            .collect();
        s += &line(cells.iter().map(String::as_str).collect());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::{DecisionLine, DecisionStatus, Section, Status, Verdict};

    #[test]
    fn the_summary_is_the_documents_decision_verdict_headline_table_and_readings() {
        let doc = Document {
            title: "calibench report: t".into(),
            run_id: "r".into(),
            decision: DecisionLine {
                status: DecisionStatus::Decided(crate::decision::Verdict::Withheld),
                caveats: 0,
                sentence: "Precision is judge-derived.".into(),
                details: vec!["precision (increase): withheld".into()],
            },
            verdict: Verdict {
                status: Status::Withheld,
                sentence: "The judges do not agree.".into(),
                details: vec!["(1) IRR 0.12 < 0.2".into()],
            },
            headline: "judges not trusted".into(),
            summary: Table {
                caption: None,
                header: vec!["metric".into(), "baseline".into(), "treatment".into()],
                rows: vec![
                    vec![
                        Cell::Text("distinct values".into()),
                        Cell::Num("11.67".into()),
                        Cell::Num("3.50".into()),
                    ],
                    vec![
                        Cell::Text("precision".into()),
                        Cell::Withheld,
                        Cell::Withheld,
                    ],
                ],
            },
            sections: vec![Section {
                id: "review",
                title: "Review replay".into(),
                reading: "Fewer values.".into(),
                blocks: Vec::new(),
            }],
            about: Vec::new(),
        };
        let text = render(
            "t",
            &doc,
            Path::new("runs/r"),
            Path::new("reports/r/report.html"),
        );
        assert_eq!(
            text,
            "t → runs/r
  decision: withheld. Precision is judge-derived.
    - precision (increase): withheld
  verdict: withheld. The judges do not agree.
    - (1) IRR 0.12 < 0.2
  headline: judges not trusted
  metric           baseline  treatment
  distinct values     11.67       3.50
  precision        withheld   withheld
  Review replay: Fewer values.
  report: reports/r/report.html
"
        );
    }
}
