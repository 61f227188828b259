//! `reports/index.html` and `index.md`: one line per report of a `calibench run`, with its
//! verdict and headline, linking to the report.

use super::document::{Document, Status};
use super::html::esc;
use crate::text;

/// One report on the index.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub experiment: String,
    pub run_id: String,
    pub status: Status,
    pub headline: String,
}

impl Entry {
    pub fn of(experiment: &str, doc: &Document) -> Self {
        Entry {
            experiment: experiment.to_string(),
            run_id: doc.run_id.clone(),
            status: doc.verdict.status,
            headline: doc.headline.clone(),
        }
    }
}

const INTRO: &str = "Each report opens with its verdict (are the judges trustworthy enough for judge-derived figures to be believed?), then compares baseline and treatment with intervals.";

pub fn markdown(entries: &[Entry]) -> String {
    let mut s = format!("# calibench reports\n\n{INTRO}\n\n| experiment | verdict | headline | run |\n|---|---|---|---|\n");
    for e in entries {
        s += &format!(
            "| [{}]({}/report.md) | {} | {} | {} |\n",
            text::markdown_link_text(&e.experiment),
            e.run_id,
            e.status.label(),
            text::markdown(&e.headline),
            text::markdown(&e.run_id)
        );
    }
    s
}

pub fn html(entries: &[Entry]) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>calibench reports</title>\n<style>\nbody { font-family: system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; max-width: 1060px; margin: 2em auto; padding: 0 1em; color: #222; }\ntable { border-collapse: collapse; }\nth, td { padding: 0.4em 0.8em; border-bottom: 1px solid #e5e5e5; text-align: left; vertical-align: top; }\nth { background: #f6f6f6; }\n.trusted { color: #2e7d32; font-weight: bold; }\n.withheld { color: #e65100; font-weight: bold; }\n.no-judges { color: #1565c0; font-weight: bold; }\n.suspect { color: #c62828; font-weight: bold; }\ntd.trusted, td.withheld, td.no-judges, td.suspect { white-space: nowrap; }\n.run { font-size: 0.85em; color: #666; }\n</style>\n</head>\n<body>\n<h1>calibench reports</h1>\n",
    );
    s += &format!("<p>{}</p>\n<table>\n<thead><tr><th>experiment</th><th>verdict</th><th>headline</th></tr></thead>\n<tbody>\n", esc(INTRO));
    for e in entries {
        let class = e.status.class();
        s += &format!(
            "<tr><td><a href=\"{}/report.html\">{}</a><br/><span class=\"run\">{}</span></td><td class=\"{class}\">{}</td><td>{}</td></tr>\n",
            esc(&e.run_id),
            esc(&e.experiment),
            esc(&e.run_id),
            e.status.label(),
            esc(&e.headline)
        );
    }
    s + "</tbody>\n</table>\n</body>\n</html>\n"
}
