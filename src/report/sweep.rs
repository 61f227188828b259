//! A sweep's outputs (docs/guides/threshold-sweep.md): its table (`sweep.csv`,
//! `sweep.parquet`), its report (`report.md`, `report.html`) with the trade-off plot, and its
//! terminal summary. All from the `Sweep` of `metrics.json`.

use polars::prelude::*;

use super::html::esc;
use super::plots::{self, Kind, Spec, TradeOff};
use crate::model::{Sweep, SweepPoint};
use crate::sweep::{Estimate, Side};
use crate::text::{self, fmt_p};

/// One row per grid point: the varied keys, then every figure with its interval.
pub fn table(s: &Sweep) -> PolarsResult<DataFrame> {
    let n = s.points.len();
    let mut columns: Vec<Column> = Vec::new();
    for v in &s.vary {
        let values: Vec<String> = s
            .points
            .iter()
            .map(|p| p.values.get(&v.key).map_or(String::new(), plain))
            .collect();
        columns.push(Column::new(v.key.as_str().into(), values));
    }
    for f in s.figures() {
        let get = |p: &SweepPoint| p.figures.get(f.name).cloned();
        let value: Vec<Option<f64>> = s
            .points
            .iter()
            .map(|p| get(p).and_then(|e| e.value))
            .collect();
        let ci = |k: usize| -> Vec<Option<f64>> {
            s.points
                .iter()
                .map(|p| get(p).and_then(|e| e.ci).map(|c| c[k]))
                .collect()
        };
        columns.push(Column::new(f.name.into(), value));
        columns.push(Column::new(format!("{}_lo", f.name).into(), ci(0)));
        columns.push(Column::new(format!("{}_hi", f.name).into(), ci(1)));
    }
    let recommended: Vec<bool> = (0..n)
        .map(|i| s.recommended.as_ref().is_some_and(|r| r.index == i))
        .collect();
    columns.push(Column::new("recommended".into(), recommended));
    DataFrame::new(n, columns)
}

/// A JSON value as a person writes it in `experiment.toml`: `0.5`, `anchored`,
/// `["closed", "reviewed"]`.
fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| match i {
                    serde_json::Value::String(s) => format!("\"{s}\""),
                    other => plain(other),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// `key = value, key = value`; a key the policy has no value for is "unset".
fn setting(values: &std::collections::BTreeMap<String, serde_json::Value>) -> String {
    values
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::Null => format!("{k} unset"),
            v => format!("{k} = {}", plain(v)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn figure(e: Option<&Estimate>, places: usize) -> String {
    match e {
        Some(Estimate {
            value: Some(x),
            ci: Some([lo, hi]),
        }) => format!("{x:.places$} [{lo:.places$}, {hi:.places$}]"),
        Some(Estimate { value: Some(x), .. }) => format!("{x:.places$}"),
        _ => "—".into(),
    }
}

/// The sweep's answer in one sentence, with the numbers; a second when the judges are not
/// trusted.
pub fn sentence(s: &Sweep) -> String {
    let answer = answer(s) + &frontier_sentence(s).unwrap_or_default();
    match &s.trust {
        Some(t) if !t.trustworthy => format!(
            "{answer} The judges are not trusted, so precision, judged actionable and recall are withheld at every point: {}.",
            t.reasons.join("; ")
        ),
        _ => answer,
    }
}

/// With `--frontier`: how many points are on it, and which.
fn frontier_sentence(s: &Sweep) -> Option<String> {
    let f = s.frontier.as_ref()?;
    let on: Vec<String> = s
        .points
        .iter()
        .filter(|p| p.on_frontier == Some(true))
        .map(|p| p.values.values().map(plain).collect::<Vec<_>>().join(" "))
        .collect();
    Some(format!(
        " On the {} × {} frontier (no other point beats them on both, judged on 95% intervals): {} of {} points{}.",
        f.x,
        f.y,
        on.len(),
        s.points.len(),
        if on.is_empty() {
            String::new()
        } else {
            format!(" ({})", on.join("; "))
        }
    ))
}

fn answer(s: &Sweep) -> String {
    let needs = if s.requirements.is_empty() {
        String::new()
    } else {
        format!(" meeting {}", s.requirements.join(" and "))
    };
    let units = s.side.units();
    let by = s.prefer.split_once(':').map_or("", |(_, m)| m);
    let of = if s.requirements.is_empty() {
        format!("the {} points", s.points.len())
    } else {
        format!("the {} of {} points", s.meeting, s.points.len())
    };
    if let Some(k) = &s.kept {
        let best = s.points.get(k.index);
        let places = s.figures().find(|f| f.name == by).map_or(3, |f| f.places);
        let value = |p: Option<&SweepPoint>| {
            p.and_then(|p| p.figures.get(by))
                .and_then(|e| e.value)
                .map_or("—".to_string(), |x| format!("{x:.places$}"))
        };
        let why = if k.all_tie {
            format!(
                "{} the figures it gives: the varied {} nothing a sweep measures",
                match s.points.len() {
                    1 => "the one point gives".to_string(),
                    2 => "both points give".to_string(),
                    n => format!("all {n} points give"),
                },
                if s.vary.len() == 1 {
                    "key moves"
                } else {
                    "keys move"
                }
            )
        } else {
            format!(
                "the best of {of}{needs}, {}, gives {} as it does",
                best.map_or(String::new(), |p| setting(&p.values)),
                value(best)
            )
        };
        return format!(
            "Keep {} for {}: no point does better on {by} ({} here; {why}).",
            setting(&s.current.values),
            s.arm,
            value(Some(&s.current))
        );
    }
    match (&s.recommended, &s.closest) {
        (Some(r), _) => {
            let held = match (&r.held_out, &s.holdout) {
                (Some(_), Some(h)) if r.held_out_misses.is_empty() => format!(
                    " (chosen on {} {units}, and met on the {} held out)",
                    h.choosing, h.held_out
                ),
                (Some(held), Some(h)) => {
                    let failed: Vec<String> = r
                        .held_out_misses
                        .iter()
                        .filter_map(|m| m.parse::<crate::sweep::Requirement>().ok())
                        .map(|req| {
                            let places = s
                                .figures()
                                .find(|f| f.name == req.metric)
                                .map_or(3, |f| f.places);
                            let (side, beyond) = if req.at_least {
                                ("lower", "below")
                            } else {
                                ("upper", "above")
                            };
                            format!(
                                "{} {}, its {side} bound {beyond} {}",
                                req.metric,
                                figure(held.figures.get(&req.metric), places),
                                text::fmt_num(req.bound)
                            )
                        })
                        .collect();
                    return format!(
                        "Not confirmed for {}: {} — the {} {by} of {of}{needs} on the {} {units} chosen on — fails on the {} held out: {}; the experiment sets {}.",
                        s.arm,
                        setting(&r.values),
                        if s.prefer.starts_with("max:") { "highest" } else { "lowest" },
                        h.choosing,
                        h.held_out,
                        failed.join("; "),
                        setting(&s.current.values)
                    );
                }
                _ if !s.requirements.is_empty() => format!(
                    " (chosen on all {} {units}; none held out, so unchecked: --holdout 0)",
                    s.units
                ),
                _ => String::new(),
            };
            format!(
                "Recommended for {}: {} — the {} {by} of {of}{needs}{held}; the experiment sets {}.",
                s.arm,
                setting(&r.values),
                if s.prefer.starts_with("max:") { "highest" } else { "lowest" },
                setting(&s.current.values)
            )
        }
        (None, Some(c)) => format!(
            "No point of {} meets {}: the closest, {}, misses {}.",
            s.points.len(),
            s.requirements.join(" and "),
            setting(&c.values),
            c.misses.join(" and ")
        ),
        (None, None) => format!(
            "No point of {} has a value of {by} to choose by (a judged figure needs verdicts; a rate, labelled queries).",
            s.points.len(),
        ),
    }
}

/// The trade-off plot's spec: review, actionable against precision; queries, recovery-gate rate
/// against final accuracy.
pub fn plot_spec(s: &Sweep) -> Spec {
    let (x, y) = match (&s.frontier, s.side) {
        (Some(f), _) => (f.x.as_str(), f.y.as_str()),
        (None, Side::Review) => ("actionable", "precision"),
        (None, Side::Queries) => ("recovery_gate_rate", "final_accuracy"),
    };
    let desc = |name: &str| {
        s.side
            .figures()
            .iter()
            .find(|f| f.name == name)
            .map_or(name.to_string(), |f| match name {
                "actionable" => "actionable findings (summed over targets)".to_string(),
                "precision" => "precision (mean judge composite)".to_string(),
                _ => f.label.to_string(),
            })
    };
    let (x_desc, y_desc) = (desc(x), desc(y));
    let at = |p: &std::collections::BTreeMap<String, Estimate>| {
        Some((p.get(x)?.value?, p.get(y)?.value?))
    };
    let frontier: Vec<(f64, f64)> = s
        .points
        .iter()
        .filter(|p| p.on_frontier == Some(true))
        .filter_map(|p| at(&p.figures))
        .collect();
    // Points at the same place share one dot, labelled with every setting that lands there.
    let mut points: Vec<(f64, f64, String)> = Vec::new();
    for p in &s.points {
        let Some((a, b)) = at(&p.figures) else {
            continue;
        };
        let label = p.values.values().map(plain).collect::<Vec<_>>().join(" ");
        match points.iter_mut().find(|q| q.0 == a && q.1 == b) {
            Some(q) => q.2 = format!("{}, {label}", q.2),
            None => points.push((a, b, label)),
        }
    }
    Spec {
        name: "sweep-tradeoff",
        title: format!("{}: {} against {} per grid point", s.experiment, y, x),
        alt: format!(
            "Each grid point of the {} arm's sweep at its {} and {}; the recommended point and the current setting are ringed.",
            s.arm, x, y
        ),
        kind: Kind::TradeOff(TradeOff {
            x_desc,
            y_desc,
            points,
            frontier,
            recommended: s.recommended.as_ref().and_then(|r| at(&r.choosing)),
            current: at(&s.current.figures),
        }),
    }
}

/// The report's files: `report.md`, `report.html` and, with plots, the trade-off plot.
pub fn render(s: &Sweep, with_plots: bool) -> Result<Vec<(String, Vec<u8>)>, String> {
    let plot = if with_plots {
        Some(plots::render(&plot_spec(s))?)
    } else {
        None
    };
    let mut files = vec![
        (
            "report.md".to_string(),
            markdown(s, plot.is_some()).into_bytes(),
        ),
        (
            "report.html".to_string(),
            html(s, plot.is_some()).into_bytes(),
        ),
    ];
    if let Some(p) = plot {
        files.push((format!("plots/{}.png", p.name), p.png));
        files.push((format!("plots/{}.svg", p.name), p.svg.into_bytes()));
    }
    Ok(files)
}

/// The rows of the report's tables, as text cells: (header, rows).
fn points_rows(s: &Sweep) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header: Vec<String> = vec!["".into()];
    header.extend(s.vary.iter().map(|v| v.key.clone()));
    header.extend(s.figures().map(|f| f.name.to_string()));
    if let Some(f) = &s.frontier {
        header.push(format!("frontier ({f})"));
    }
    let row = |mark: &str, p: &SweepPoint| {
        let mut r = vec![mark.to_string()];
        r.extend(
            s.vary
                .iter()
                .map(|v| p.values.get(&v.key).map_or(String::new(), plain)),
        );
        r.extend(s.figures().map(|f| figure(p.figures.get(f.name), f.places)));
        if s.frontier.is_some() {
            r.push(
                if p.on_frontier == Some(true) {
                    "on it"
                } else {
                    ""
                }
                .into(),
            );
        }
        r
    };
    let mut rows = vec![row("current", &s.current)];
    for (i, p) in s.points.iter().enumerate() {
        let mark = match (&s.recommended, &s.closest, &s.kept) {
            (Some(r), _, _) if r.index == i => "recommended",
            (_, Some(c), _) if c.index == i => "closest",
            (_, _, Some(k)) if k.index == i => "best (ties current)",
            _ => "",
        };
        rows.push(row(mark, p));
    }
    (header, rows)
}

fn versus_rows(s: &Sweep) -> Vec<Vec<String>> {
    s.figures()
        .filter_map(|f| {
            let d = s.versus_current.get(f.name)?;
            let places = f.places;
            Some(vec![
                f.label.to_string(),
                format!("{:.places$}", d.baseline),
                format!("{:.places$}", d.treatment),
                format!("{:+.places$}", d.delta),
                d.ci.map_or("—".into(), |[a, b]| {
                    format!("[{a:+.places$}, {b:+.places$}]")
                }),
                d.p_value.map_or("—".into(), fmt_p),
                d.pairs.to_string(),
            ])
        })
        .collect()
}

const VERSUS_HEADER: [&str; 7] = [
    "figure",
    "current",
    "recommended",
    "Δ",
    "95% CI",
    "p",
    "pairs",
];

fn held_out_rows(s: &Sweep) -> Vec<Vec<String>> {
    let Some(r) = &s.recommended else {
        return Vec::new();
    };
    let Some(held) = &r.held_out else {
        return Vec::new();
    };
    s.figures()
        .map(|f| {
            vec![
                f.label.to_string(),
                figure(r.choosing.get(f.name), f.places),
                figure(held.figures.get(f.name), f.places),
            ]
        })
        .collect()
}

fn caption(s: &Sweep) -> String {
    let confirm = s.confirm_at.map_or(String::new(), |c| {
        format!(" A finding is confirmed when its judge composite is at least {c}.")
    });
    let on = match &s.holdout {
        Some(h) => format!(
            "the {} {} the choice was made on ({} more held out)",
            h.choosing,
            s.side.units(),
            h.held_out
        ),
        None => format!("all {} {}", s.units, s.side.units()),
    };
    let counts = match s.side {
        Side::Review => " Counts are summed over targets (each a mean over its runs).",
        Side::Queries => " Rates are over (query, run) pairs.",
    };
    format!(
        "Each figure over {on}, with its 95% bootstrap interval ({} resamples, seed {}).{counts} A requirement is met when the interval's bound on the unsafe side reaches it.{confirm}",
        s.bootstrap, s.seed
    )
}

pub fn markdown(s: &Sweep, with_plot: bool) -> String {
    let mut page = Markdown(String::new());
    write_page(s, with_plot, &mut page);
    page.0
}

pub fn html(s: &Sweep, with_plot: bool) -> String {
    let mut page = Html(String::new());
    write_page(s, with_plot, &mut page);
    page.0
}

/// The page's parts, in order, written once for both formats.
fn write_page(s: &Sweep, with_plot: bool, page: &mut impl Page) {
    page.title(s);
    if with_plot {
        page.plot(
            "Each grid point at its two figures; the recommended and current points ringed",
            "plots/sweep-tradeoff.png",
        );
    }
    let held = held_out_rows(s);
    if !held.is_empty() {
        page.heading("The choice on data it was not made on");
        page.table(
            &["figure".into(), "where chosen".into(), "held out".into()],
            &held,
        );
    }
    let versus = versus_rows(s);
    if !versus.is_empty() {
        page.heading("Against the current setting");
        page.para(&format!(
            "Paired over the {} {}: per-unit values by the test of their mean; ECE, a figure of the whole set, by a paired bootstrap of the units.",
            if s.holdout.is_some() {
                "held-out"
            } else {
                "replayed"
            },
            s.side.units()
        ));
        page.table(&VERSUS_HEADER.map(String::from), &versus);
    }
    let (header, rows) = points_rows(s);
    page.heading("Every point");
    page.para(&caption(s));
    page.table(&header, &rows);
    page.footer(&s.run_id);
}

/// A format the sweep's page is written in.
trait Page {
    fn title(&mut self, s: &Sweep);
    fn plot(&mut self, alt: &str, src: &str);
    fn heading(&mut self, h: &str);
    fn para(&mut self, p: &str);
    fn table(&mut self, header: &[String], rows: &[Vec<String>]);
    fn footer(&mut self, run_id: &str);
}

struct Markdown(String);

impl Page for Markdown {
    fn title(&mut self, s: &Sweep) {
        self.0 += &format!(
            "# Sweep: {} ({} arm)\n\n**{}**\n\n",
            text::markdown(&s.experiment),
            text::markdown(&s.arm),
            text::markdown(&sentence(s))
        );
    }
    fn plot(&mut self, alt: &str, src: &str) {
        self.0 += &format!("![{alt}]({src})\n\n");
    }
    fn heading(&mut self, h: &str) {
        self.0 += &format!("## {h}\n\n");
    }
    fn para(&mut self, p: &str) {
        self.0 += &format!("{}\n\n", text::markdown(p));
    }
    fn table(&mut self, header: &[String], rows: &[Vec<String>]) {
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| text::markdown(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        self.0 += &line(header);
        self.0 += &format!("|{}|\n", vec!["---"; header.len()].join("|"));
        for r in rows {
            self.0 += &line(r);
        }
        self.0 += "\n";
    }
    fn footer(&mut self, run_id: &str) {
        self.0 += &format!(
            "Run `{}`; figures in `sweep.csv` and `metrics.json`.\n",
            text::markdown(run_id)
        );
    }
}

struct Html(String);

impl Page for Html {
    fn title(&mut self, s: &Sweep) {
        self.0 += &format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>Sweep: {}</title>\n<style>\nbody {{ font-family: system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }}\ntable {{ border-collapse: collapse; margin: 1em 0; }}\ndiv.scroll {{ overflow-x: auto; max-width: 100%; }}\nth, td {{ padding: 0.3em 0.7em; border-bottom: 1px solid #e5e5e5; text-align: left; font-variant-numeric: tabular-nums; }}\nth {{ background: #f6f6f6; }}\ntr.recommended {{ background: #e8f5e9; }}\n.answer {{ border-left: 6px solid #2e7d32; padding: 0.6em 1em; background: #f3faf3; }}\nimg {{ max-width: 100%; }}\n</style>\n</head>\n<body>\n<h1>Sweep: {} ({} arm)</h1>\n<p class=\"answer\"><strong>{}</strong></p>\n",
            esc(&s.experiment),
            esc(&s.experiment),
            esc(&s.arm),
            esc(&sentence(s))
        );
    }
    fn plot(&mut self, alt: &str, src: &str) {
        self.0 += &format!("<p><img src=\"{src}\" alt=\"{}\"/></p>\n", esc(alt));
    }
    fn heading(&mut self, h: &str) {
        self.0 += &format!("<h2>{}</h2>\n", esc(h));
    }
    fn para(&mut self, p: &str) {
        self.0 += &format!("<p>{}</p>\n", esc(p));
    }
    fn table(&mut self, header: &[String], rows: &[Vec<String>]) {
        self.0 += "<div class=\"scroll\">\n<table>\n<thead><tr>";
        for h in header {
            self.0 += &format!("<th>{}</th>", esc(h));
        }
        self.0 += "</tr></thead>\n<tbody>\n";
        for r in rows {
            let class = if r.first().is_some_and(|c| c == "recommended") {
                " class=\"recommended\""
            } else {
                ""
            };
            self.0 += &format!("<tr{class}>");
            for c in r {
                self.0 += &format!("<td>{}</td>", esc(c));
            }
            self.0 += "</tr>\n";
        }
        self.0 += "</tbody>\n</table>\n</div>\n";
    }
    fn footer(&mut self, run_id: &str) {
        self.0 += &format!(
            "<p>Run <code>{}</code>; figures in <code>sweep.csv</code> and <code>metrics.json</code>.</p>\n</body>\n</html>\n",
            esc(run_id)
        );
    }
}
