//! `report.html`: the [`Document`] as one self-contained page. Plots are embedded as SVG data
//! URIs and the style sheet is inline, so the file opens from disk with no server and no
//! network. The markup is well-formed XML (void elements self-closed, text escaped) so that
//! tests can parse it strictly.

use base64::Engine;

use super::document::{Block, Cell, Document, Table};
use super::plots::Plot;

const STYLE: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; max-width: 1060px; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.3em; }
h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.verdict, .decision { padding: 0.8em 1em; border-radius: 6px; margin: 1em 0; }
.decision { font-size: 1.08em; border: 1px solid #ccc; }
.decision.better { background: #e8f5e9; border-left: 8px solid #2e7d32; }
.decision.worse { background: #ffebee; border-left: 8px solid #c62828; }
.decision.inconclusive { background: #f5f5f5; border-left: 8px solid #757575; }
.decision.withheld { background: #fff3e0; border-left: 8px solid #e65100; }
.decision.undecided { background: #f5f5f5; border-left: 8px solid #9e9e9e; }
.verdict.trusted { background: #e8f5e9; border-left: 6px solid #2e7d32; }
.verdict.withheld { background: #fff3e0; border-left: 6px solid #e65100; }
.verdict.no-judges { background: #e3f2fd; border-left: 6px solid #1565c0; }
.verdict.suspect { background: #ffebee; border-left: 6px solid #c62828; }
.headline { font-size: 1.05em; }
.reading { font-style: italic; color: #444; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 0.92em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e5e5e5; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #f6f6f6; }
p.caption { color: #555; margin: 0.6em 0 0.3em; }
div.scroll { overflow-x: auto; max-width: 100%; }
.withheld-cell { color: #b45309; font-style: italic; }
figure { margin: 1em 0; }
figure img { width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
nav a { margin-right: 1em; }
.about td { font-size: 0.85em; word-break: break-all; }
";

/// Renders the document with every plot it names embedded.
pub fn render(doc: &Document, plots: &[Plot]) -> String {
    let mut s =
        String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
    s += &format!(
        "<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&doc.title)
    );
    s += &format!("<h1>{}</h1>\n", esc(&doc.title));
    for st in doc.statements() {
        s += &format!(
            "<div class=\"{id} {}\" id=\"{id}\">\n<p><strong>{}: {}.</strong> {}</p>\n",
            st.class,
            st.what,
            st.label,
            esc(st.sentence),
            id = st.id,
        );
        if !st.details.is_empty() {
            s += &list(st.details);
        }
        s += "</div>\n";
    }
    s += &format!(
        "<p class=\"headline\"><strong>Headline:</strong> {}</p>\n",
        esc(&doc.headline)
    );
    s += "<h2 id=\"summary\">Baseline vs treatment</h2>\n";
    s += &table(&doc.summary, "");
    s += "<nav>";
    for sec in &doc.sections {
        s += &format!("<a href=\"#{}\">{}</a>", sec.id, esc(&sec.title));
    }
    s += "</nav>\n";
    for sec in &doc.sections {
        s += &format!(
            "<section id=\"{}\">\n<h2>{}</h2>\n",
            sec.id,
            esc(&sec.title)
        );
        s += &format!("<p class=\"reading\">{}</p>\n", esc(&sec.reading));
        for block in &sec.blocks {
            match block {
                Block::Table(t) => s += &table(t, ""),
                Block::Plot(name) => {
                    if let Some(p) = plots.iter().find(|p| p.name == *name) {
                        let data = base64::engine::general_purpose::STANDARD.encode(&p.svg);
                        s += &format!(
                            "<figure id=\"plot-{name}\"><img src=\"data:image/svg+xml;base64,{data}\" alt=\"{}\"/><figcaption>{}</figcaption></figure>\n",
                            esc(&p.alt),
                            esc(&p.alt)
                        );
                    }
                }
                Block::Text(t) => s += &format!("<p>{}</p>\n", esc(t)),
                Block::List(items) => s += &list(items),
            }
        }
        s += "</section>\n";
    }
    s += "<h2 id=\"about\">About this run</h2>\n";
    let about = Table {
        caption: None,
        header: Vec::new(),
        rows: doc
            .about
            .iter()
            .map(|(k, v)| vec![Cell::Text(k.clone()), Cell::Text(v.clone())])
            .collect(),
    };
    s += &table(&about, "about");
    s += "</body>\n</html>\n";
    s
}

fn list(items: &[String]) -> String {
    let mut s = String::from("<ul>\n");
    for i in items {
        s += &format!("<li>{}</li>\n", esc(i));
    }
    s + "</ul>\n"
}

/// A table in a box of its own that scrolls sideways when the table is wider than the page
/// (a narrow window, a sweep's every point), its caption above the box so that it wraps to the
/// page's width instead of the table's.
fn table(t: &Table, class: &str) -> String {
    let mut s = String::new();
    if let Some(c) = &t.caption {
        s += &format!("<p class=\"caption\">{}</p>\n", esc(c));
    }
    s += "<div class=\"scroll\">\n";
    s += &if class.is_empty() {
        String::from("<table>\n")
    } else {
        format!("<table class=\"{class}\">\n")
    };
    if !t.header.is_empty() {
        s += "<thead><tr>";
        for h in &t.header {
            s += &format!("<th>{}</th>", esc(h));
        }
        s += "</tr></thead>\n";
    }
    s += "<tbody>\n";
    for row in &t.rows {
        s += "<tr>";
        for c in row {
            s += &match c {
                Cell::Text(x) => format!("<td>{}</td>", esc(x)),
                Cell::Num(x) => format!("<td class=\"num\">{}</td>", esc(x)),
                Cell::Withheld => "<td class=\"num withheld-cell\">withheld</td>".to_string(),
            };
        }
        s += "</tr>\n";
    }
    s + "</tbody>\n</table>\n</div>\n"
}

/// Escapes text for element content and attribute values ([`crate::text::html`]).
pub(crate) fn esc(s: &str) -> String {
    crate::text::html(s)
}
