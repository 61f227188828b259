//! `reports/index.html` and `index.md`: one line per report of a `calibench run`, with its
//! verdict and headline, linking to the report.

use super::document::{DecisionStatus, Document, Status};
use super::html::esc;
use crate::text;

/// One report on the index.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub experiment: String,
    pub run_id: String,
    pub decision: DecisionStatus,
    /// The decision's word with its caveats ("better — with 1 caveat").
    pub label: String,
    /// The decision in words.
    pub decided: String,
    pub status: Status,
    pub headline: String,
}

impl Entry {
    pub fn of(experiment: &str, doc: &Document) -> Self {
        Entry {
            experiment: experiment.to_string(),
            run_id: doc.run_id.clone(),
            decision: doc.decision.status,
            label: doc.decision.label(),
            decided: doc.decision.sentence.clone(),
            status: doc.verdict.status,
            headline: doc.headline.clone(),
        }
    }
}

/// One sweep on the index.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepEntry {
    pub title: String,
    pub run_id: String,
    /// Its answer in words.
    pub sentence: String,
}

impl SweepEntry {
    pub fn of(s: &crate::model::Sweep) -> Self {
        let keys: Vec<&str> = s.vary.iter().map(|v| v.key.as_str()).collect();
        SweepEntry {
            title: format!("{}: {} {}", s.experiment, s.arm, keys.join(" × ")),
            run_id: s.run_id.clone(),
            sentence: super::sweep::sentence(s),
        }
    }
}

const SWEEPS: &str = "Each sweep replays one arm over a grid of policy values and says which value meets its requirements, checked on targets (queries) the choice was not made on.";

const INTRO: &str = "Each report opens with its decision (is the treatment better, worse, or not yet knowable, on the metrics the experiment names?), then whether the judges agree enough to be believed, then the figures that decided it.";

pub fn markdown(entries: &[Entry], sweeps: &[SweepEntry]) -> String {
    let mut s = format!("# calibench reports\n\n{INTRO}\n\n| experiment | decision | judges | headline | run |\n|---|---|---|---|---|\n");
    for e in entries {
        s += &format!(
            "| [{}]({}/report.md) | **{}**: {} | {} | {} | {} |\n",
            text::markdown_link_text(&e.experiment),
            e.run_id,
            e.label,
            text::markdown(&e.decided),
            e.status.label(),
            text::markdown(&e.headline),
            text::markdown(&e.run_id)
        );
    }
    if !sweeps.is_empty() {
        s += &format!(
            "\n## Threshold sweeps\n\n{SWEEPS}\n\n| sweep | answer | run |\n|---|---|---|\n"
        );
        for w in sweeps {
            s += &format!(
                "| [{}]({}/report.md) | {} | {} |\n",
                text::markdown_link_text(&w.title),
                w.run_id,
                text::markdown(&w.sentence),
                text::markdown(&w.run_id)
            );
        }
    }
    s
}

pub fn html(entries: &[Entry], sweeps: &[SweepEntry]) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>calibench reports</title>\n<style>\nbody { font-family: system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; max-width: 1060px; margin: 2em auto; padding: 0 1em; color: #222; }\ntable { border-collapse: collapse; }\ndiv.scroll { overflow-x: auto; max-width: 100%; }\nth, td { padding: 0.4em 0.8em; border-bottom: 1px solid #e5e5e5; text-align: left; vertical-align: top; }\nth { background: #f6f6f6; }\n.trusted { color: #2e7d32; font-weight: bold; }\n.withheld { color: #e65100; font-weight: bold; }\n.no-judges { color: #1565c0; font-weight: bold; }\n.suspect { color: #c62828; font-weight: bold; }\ntd.trusted, td.withheld, td.no-judges, td.suspect { white-space: nowrap; }\n.run { font-size: 0.85em; color: #666; }\n.better { color: #2e7d32; font-weight: bold; }\n.worse { color: #c62828; font-weight: bold; }\n.inconclusive, .undecided { color: #555; font-weight: bold; }\n</style>\n</head>\n<body>\n<h1>calibench reports</h1>\n",
    );
    s += &format!("<p>{}</p>\n<div class=\"scroll\">\n<table>\n<thead><tr><th>experiment</th><th>decision</th><th>judges</th><th>headline</th></tr></thead>\n<tbody>\n", esc(INTRO));
    for e in entries {
        let class = e.status.class();
        s += &format!(
            "<tr><td><a href=\"{}/report.html\">{}</a><br/><span class=\"run\">{}</span></td><td><span class=\"{}\">{}</span><br/>{}</td><td class=\"{class}\">{}</td><td>{}</td></tr>\n",
            esc(&e.run_id),
            esc(&e.experiment),
            esc(&e.run_id),
            e.decision.class(),
            e.label,
            esc(&e.decided),
            e.status.label(),
            esc(&e.headline)
        );
    }
    s += "</tbody>\n</table>\n</div>\n";
    if !sweeps.is_empty() {
        s += &format!("<h2>Threshold sweeps</h2>\n<p>{}</p>\n<div class=\"scroll\">\n<table>\n<thead><tr><th>sweep</th><th>answer</th></tr></thead>\n<tbody>\n", esc(SWEEPS));
        for w in sweeps {
            s += &format!(
                "<tr><td><a href=\"{}/report.html\">{}</a><br/><span class=\"run\">{}</span></td><td>{}</td></tr>\n",
                esc(&w.run_id),
                esc(&w.title),
                esc(&w.run_id),
                esc(&w.sentence)
            );
        }
        s += "</tbody>\n</table>\n</div>\n";
    }
    s + "</body>\n</html>\n"
}
