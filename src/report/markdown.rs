//! `report.md`: the [`Document`] as GitHub-flavoured Markdown, with the PNG plots linked from
//! `plots/` (and their SVGs one click away).

use super::document::{Block, Cell, Document, Table};
use super::plots::Plot;
use crate::text;

/// Renders the document. `plots` supplies titles and alt text for the plots it names.
pub fn render(doc: &Document, plots: &[Plot]) -> String {
    let mut s = format!("# {}\n\n", escape(&doc.title));
    for st in doc.statements() {
        let mark = st.mark.map_or(String::new(), |m| format!("{m} "));
        s += &format!(
            "{mark}**{}: {}.** {}\n\n",
            st.what,
            st.label,
            escape(st.sentence)
        );
        for d in st.details {
            s += &format!("- {}\n", escape(d));
        }
        if !st.details.is_empty() {
            s += "\n";
        }
    }
    s += &format!("**Headline:** {}\n\n", escape(&doc.headline));
    s += "## Baseline vs treatment\n\n";
    s += &table(&doc.summary);
    s += "\nSections: ";
    s += &doc
        .sections
        .iter()
        .map(|sec| format!("[{}](#{})", sec.title, sec.id))
        .collect::<Vec<_>>()
        .join(" · ");
    s += "\n\n";
    for sec in &doc.sections {
        s += &format!("<a id=\"{}\"></a>\n\n## {}\n\n", sec.id, sec.title);
        s += &format!("_{}_\n\n", escape(&sec.reading));
        for block in &sec.blocks {
            match block {
                Block::Table(t) => s += &table(t),
                Block::Plot(name) => {
                    if let Some(p) = plots.iter().find(|p| p.name == *name) {
                        s += &format!(
                            "![{}](plots/{name}.png)\n\n{} ([SVG](plots/{name}.svg))\n",
                            escape(&p.alt),
                            escape(&p.title)
                        );
                    }
                }
                Block::Text(t) => s += &format!("{}\n", escape_line(t)),
                Block::List(items) => {
                    for i in items {
                        s += &format!("- {}\n", escape(i));
                    }
                }
            }
            s += "\n";
        }
    }
    s += "## About this run\n\n| | |\n|---|---|\n";
    for (k, v) in &doc.about {
        s += &format!("| {} | {} |\n", cell_text(k), cell_text(v));
    }
    s
}

fn table(t: &Table) -> String {
    let mut s = String::new();
    if let Some(c) = &t.caption {
        s += &format!("{}\n\n", escape_line(c));
    }
    if t.rows.is_empty() {
        return s + "(nothing to show)\n";
    }
    s += &format!(
        "| {} |\n",
        t.header
            .iter()
            .map(|h| cell_text(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    // A column is right-aligned when its cells are numbers.
    let numeric: Vec<bool> = (0..t.header.len())
        .map(|i| {
            t.rows
                .iter()
                .all(|r| matches!(r.get(i), Some(Cell::Num(_) | Cell::Withheld)))
        })
        .collect();
    s += &format!(
        "|{}|\n",
        numeric
            .iter()
            .map(|&n| if n { "---:" } else { "---" })
            .collect::<Vec<_>>()
            .join("|")
    );
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| match c {
                Cell::Withheld => "*withheld*".to_string(),
                other => cell_text(other.text()),
            })
            .collect();
        s += &format!("| {} |\n", cells.join(" | "));
    }
    s
}

/// Text inside a table cell: [`text::markdown`] escapes pipes and folds line breaks too.
fn cell_text(s: &str) -> String {
    text::markdown(s)
}

/// Every string of the document is text, never markup.
fn escape(s: &str) -> String {
    text::markdown(s)
}

/// The same for text that starts a line.
fn escape_line(s: &str) -> String {
    text::markdown_line(s)
}
