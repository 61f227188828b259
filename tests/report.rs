//! Reports (docs/guides/reports.md): snapshots of the Markdown of every example, the HTML parsed strictly with
//! every plot embedded, the PNGs decoded, re-rendering from a run directory, the index page,
//! and the errors of `calibench report`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod common;

use base64::Engine;
use common::{calibench, copy_dir, examples_names, run_into};
use predicates::prelude::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every example run once for the whole file, with fixed run ids: `<dir>/runs/<name>` and
/// `<dir>/reports/<name>`.
fn examples() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-examples");
        let _ = std::fs::remove_dir_all(&dir);
        for name in examples_names() {
            run_into(
                dir.join("runs"),
                root().join(format!("corpora/{name}/experiment.toml")),
            )
            .args(["--run-id", name, "--bootstrap", "200", "-q"])
            .assert()
            .success();
        }
        dir
    })
}

/// The report's text with what changes from run to run (times, run ids) and machine to machine
/// (where the checkout is) redacted.
fn redacted(text: &str) -> String {
    text.replace(env!("CARGO_MANIFEST_DIR"), "[root]")
        .lines()
        .map(|l| {
            if l.starts_with("| started |") {
                "| started | [time] |".to_string()
            } else if l.starts_with("| finished |") {
                "| finished | [time] |".to_string()
            } else if l.starts_with("| run id |") {
                "| run id | [run id] |".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn markdown_reports_match_their_snapshots() {
    for name in examples_names() {
        let md =
            std::fs::read_to_string(examples().join(format!("reports/{name}/report.md"))).unwrap();
        insta::assert_snapshot!(name, redacted(&md));
    }
}

#[test]
fn each_report_opens_with_its_decision_then_its_verdict() {
    for (name, decision, verdict) in [
        ("capacity-50", "**Decision: better.** Unnecessary recovery rate fell 0.980 → 0.060 (p <0.001)", "**Verdict: no judges.**"),
        ("code-review-ab", "**Decision: withheld — with 5 caveats.** Precision", "**Verdict: withheld.**"),
        ("doc-review-ab", "**Decision: better — with 6 caveats.** Distinct confidence values per target fell 11.67 → 3.50 (p 0.018)", "**Verdict: trusted.**"),
    ] {
        let md =
            std::fs::read_to_string(examples().join(format!("reports/{name}/report.md"))).unwrap();
        let first = md.lines().nth(2).unwrap();
        assert!(first.starts_with(decision), "{name}: {first}");
        let verdict_line = md.lines().find(|l| l.contains("**Verdict:")).unwrap();
        assert!(verdict_line.contains(verdict), "{name}: {verdict_line}");
        // The baseline-vs-treatment table comes before any section.
        let table = md.find("## Baseline vs treatment").unwrap();
        let section = md.find("<a id=").unwrap();
        assert!(table < section, "{name}");
    }
    // The withheld run names why, and marks what it withheld.
    let md = std::fs::read_to_string(examples().join("reports/code-review-ab/report.md")).unwrap();
    assert!(md.contains("pr-1860-payment-retry (treatment) spread 0.60 > 0.5"));
    assert!(md.contains("| precision (mean judge composite of actionable) | *withheld* |"));
    assert!(md.contains("| lift | *withheld* | *withheld* |"));
}

/// Parses HTML strictly, as XML: the reports are written well-formed so that this can check
/// them.
fn parse_html(html: &str) -> Result<roxmltree::Document<'_>, roxmltree::Error> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(html, options)
}

fn plot_files(report: &Path) -> BTreeMap<String, PathBuf> {
    std::fs::read_dir(report.join("plots"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect()
}

#[test]
fn html_parses_and_embeds_every_plot() {
    for name in examples_names() {
        let report = examples().join(format!("reports/{name}"));
        let html = std::fs::read_to_string(report.join("report.html")).unwrap();
        let doc = parse_html(&html)
            .unwrap_or_else(|e| panic!("{name}: report.html is not well-formed: {e}"));
        // Self-contained: nothing is fetched.
        for node in doc.descendants().filter(|n| n.is_element()) {
            for attr in ["src", "href"] {
                if let Some(v) = node.attribute(attr) {
                    assert!(
                        v.starts_with("data:") || v.starts_with('#'),
                        "{name}: {attr}={v} would need a file or the network"
                    );
                }
            }
        }
        let embedded: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("img"))
            .map(|n| n.attribute("src").unwrap().to_string())
            .collect();
        let svgs: Vec<PathBuf> = plot_files(&report)
            .into_iter()
            .filter(|(f, _)| f.ends_with(".svg"))
            .map(|(_, p)| p)
            .collect();
        assert!(!svgs.is_empty(), "{name} has plots");
        assert_eq!(embedded.len(), svgs.len(), "{name}: one image per plot");
        for svg in svgs {
            let want = format!(
                "data:image/svg+xml;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(std::fs::read(&svg).unwrap())
            );
            assert!(
                embedded.contains(&want),
                "{name}: {} not embedded",
                svg.display()
            );
        }
        // The decision is the first thing after the title, then the trust verdict.
        let body = doc.descendants().find(|n| n.has_tag_name("body")).unwrap();
        let mut elements = body.children().filter(|n| n.is_element());
        assert!(elements.next().unwrap().has_tag_name("h1"));
        assert_eq!(elements.next().unwrap().attribute("id"), Some("decision"));
        assert_eq!(elements.next().unwrap().attribute("id"), Some("verdict"));
    }
}

#[test]
fn pngs_decode_to_the_stated_size_and_are_not_blank() {
    for name in examples_names() {
        let report = examples().join(format!("reports/{name}"));
        for (file, path) in plot_files(&report) {
            if !file.ends_with(".png") {
                continue;
            }
            let decoder = png::Decoder::new(std::fs::File::open(&path).unwrap());
            let mut reader = decoder.read_info().unwrap();
            let mut buf = vec![0; reader.output_buffer_size()];
            let info = reader.next_frame(&mut buf).unwrap();
            assert_eq!((info.width, info.height), (1000, 460), "{file}");
            let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(3).collect();
            let inked = pixels.iter().filter(|p| ***p != [255u8, 255, 255]).count();
            let share = inked as f64 / pixels.len() as f64;
            assert!(
                share > 0.02,
                "{name}/{file}: only {share:.3} of it is drawn"
            );
            let colours: std::collections::HashSet<&[u8]> = pixels.iter().copied().collect();
            assert!(
                colours.len() > 20,
                "{name}/{file}: {} colours",
                colours.len()
            );
            // Text is drawn: the title's row (the top 30 pixels) has dark, anti-aliased ink.
            let title_ink = buf[..1000 * 30 * 3]
                .chunks(3)
                .filter(|p| p.iter().all(|&c| c < 128))
                .count();
            assert!(title_ink > 200, "{name}/{file}: no title text");
        }
    }
}

#[test]
fn svgs_carry_their_titles_and_axis_labels_as_text() {
    let report = examples().join("reports/capacity-50");
    let svg = std::fs::read_to_string(report.join("plots/query-confidence.svg")).unwrap();
    roxmltree::Document::parse(&svg).unwrap();
    assert!(svg.contains("Final confidence per query, with bands and gates"));
    assert!(svg.contains("recovery gate &lt; 0.70") || svg.contains("recovery gate < 0.70"));
    assert!(svg.contains("final confidence"));
}

/// An SVG text element: its text, x, y and font size.
type SvgText = (String, f64, f64, f64);

/// The text elements of an SVG, and its filled rectangles' (fill, top y).
fn svg_texts_and_bars(svg: &str) -> (Vec<SvgText>, Vec<(String, f64)>) {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let num = |n: &roxmltree::Node, a: &str| n.attribute(a).and_then(|v| v.parse::<f64>().ok());
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            (
                n.text().unwrap_or_default().trim().to_string(),
                num(&n, "x").unwrap_or(0.0),
                num(&n, "y").unwrap_or(0.0),
                num(&n, "font-size").unwrap_or(0.0),
            )
        })
        .collect();
    let bars = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .filter_map(|n| Some((n.attribute("fill")?.to_string(), num(&n, "y")?)))
        .collect();
    (texts, bars)
}

#[test]
fn reference_labels_sit_above_the_bars_at_the_axis_labels_size() {
    // The capacity plot: every band and gate label sits above the tallest bar, none under one.
    let report = examples().join("reports/capacity-50");
    let svg = std::fs::read_to_string(report.join("plots/query-confidence.svg")).unwrap();
    let (texts, bars) = svg_texts_and_bars(&svg);
    let top = bars
        .iter()
        .filter(|(fill, _)| fill != "#FFFFFF")
        .map(|b| b.1)
        .fold(f64::INFINITY, f64::min);
    let tick = texts
        .iter()
        .find(|t| t.0 == "0.50")
        .expect("an axis tick label")
        .3;
    let mut labels = 0;
    for (text, _, y, size) in &texts {
        if ["weak", "adequate", "strong", "stop", "recovery gate"]
            .iter()
            .any(|w| text.starts_with(w))
        {
            labels += 1;
            assert!(
                *y < top,
                "`{text}` at y {y} is not above the bars (top {top})"
            );
            assert!(
                *size >= tick,
                "`{text}` is smaller ({size}) than a tick label ({tick})"
            );
        }
    }
    assert_eq!(labels, 10, "five marks in each of two panels");
    // The α plot: the trust floor's label is as legible as the axis's own labels, and no two
    // labels of the marks share a line where they would overlap.
    let report = examples().join("reports/code-review-ab");
    let svg = std::fs::read_to_string(report.join("plots/alpha.svg")).unwrap();
    let (texts, _) = svg_texts_and_bars(&svg);
    let tick = texts.iter().find(|t| t.0 == "0.5").expect("a tick").3;
    let floor = texts
        .iter()
        .find(|t| t.0.starts_with("trust floor"))
        .expect("the trust floor's label");
    assert!(floor.3 >= tick, "{floor:?} against ticks of {tick}");
    assert!(floor.0.contains("0.2"), "{floor:?} names its value");
}

#[test]
fn report_rerenders_the_same_report_from_the_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    for name in examples_names() {
        calibench()
            .arg("report")
            .arg(examples().join(format!("runs/{name}")))
            .arg("--reports-dir")
            .arg(dir.path())
            .assert()
            .success()
            .stdout(predicate::str::contains(format!("{name} → ")));
        let first = examples().join(format!("reports/{name}"));
        let again = dir.path().join(name);
        for file in ["report.md", "report.html"] {
            assert_eq!(
                std::fs::read(first.join(file)).unwrap(),
                std::fs::read(again.join(file)).unwrap(),
                "{name}/{file}"
            );
        }
        let (a, b) = (plot_files(&first), plot_files(&again));
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
        for (file, path) in a {
            assert_eq!(
                std::fs::read(path).unwrap(),
                std::fs::read(&b[&file]).unwrap(),
                "{name}/{file}"
            );
        }
    }
    // Rendering again over an existing report replaces it whole.
    calibench()
        .arg("report")
        .arg(examples().join("runs/capacity-50"))
        .arg("--reports-dir")
        .arg(dir.path())
        .arg("--no-plots")
        .assert()
        .success();
    assert!(!dir.path().join("capacity-50/plots").exists());
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn no_plots_writes_the_report_without_images() {
    let dir = tempfile::tempdir().unwrap();
    run_into(
        dir.path().join("runs"),
        root().join("corpora/doc-review-ab/experiment.toml"),
    )
    .args(["--run-id", "np", "--bootstrap", "50", "--no-plots", "-q"])
    .assert()
    .success();
    let report = dir.path().join("reports/np");
    assert!(!report.join("plots").exists());
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("**Verdict: trusted.**") && !md.contains("!["));
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    parse_html(&html).unwrap();
    assert!(!html.contains("<img"));
}

#[test]
fn the_main_job_runs_every_example_and_writes_an_index() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("corpora"), &dir.path().join("corpora"));
    let out = calibench()
        .current_dir(dir.path())
        .args(["run", "--bootstrap", "50"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("index of every report: reports/index.html"),
        "{out}"
    );
    let html = std::fs::read_to_string(dir.path().join("reports/index.html")).unwrap();
    let doc = parse_html(&html).unwrap();
    let links: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("a"))
        .filter_map(|n| n.attribute("href"))
        .collect();
    // One link per example, then one per sweep an example declares ([[sweep]]), each to a
    // report that exists.
    let sweeps = ["capacity-50-sweep-treatment"];
    assert_eq!(links.len(), examples_names().len() + sweeps.len());
    for (link, name) in links.iter().zip(examples_names().iter().chain(&sweeps)) {
        assert!(
            link.starts_with(name) && link.ends_with("/report.html"),
            "{link}"
        );
        assert!(dir.path().join("reports").join(link).is_file(), "{link}");
    }
    assert!(
        out.contains("sweep: Not confirmed for treatment: confidence.recovery_threshold ="),
        "{out}"
    );
    let md = std::fs::read_to_string(dir.path().join("reports/index.md")).unwrap();
    assert!(md.contains("| trusted | judges trusted · lift +"));
    // The input ledger's caveats are counted on the index's decision too.
    assert!(
        md.contains("| **better — with 6 caveats**: Distinct confidence values"),
        "{md}"
    );
    assert!(md.contains("| withheld | judges not trusted · lift withheld"));
    assert!(md.contains("| no judges | no judge verdicts · recovery gate 98% → 6%"));
    // Without a terminal there is no progress bar on stderr.
    let err = calibench()
        .current_dir(dir.path())
        .args(["run", "--bootstrap", "10", "-q"])
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    // Only the warnings of the examples' caveats: a caveat is said even under -q.
    let err = String::from_utf8_lossy(&err);
    assert!(
        err.lines()
            .all(|l| l.starts_with("warning: ") || l.starts_with("  ")),
        "{err}"
    );
    assert_eq!(err.matches("caveat").count() > 0, err.contains("warning: "));
}

#[test]
fn report_refuses_what_is_not_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("reports");
    let refused = |run: &Path, expect: &[&str]| {
        let assert = calibench()
            .arg("report")
            .arg(run)
            .arg("--reports-dir")
            .arg(&reports)
            .assert()
            .code(2)
            .stdout("");
        let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        for e in expect {
            assert!(err.contains(e), "{e:?} not in {err}");
        }
        assert!(!reports.exists(), "nothing is written");
    };
    refused(
        &dir.path().join("missing"),
        &["missing", "not a run directory"],
    );

    // A metrics.json whose field has the wrong type: file, line and field are named.
    let run = dir.path().join("broken");
    copy_dir(&examples().join("runs/capacity-50"), &run);
    let text = std::fs::read_to_string(run.join("metrics.json")).unwrap();
    let at = text
        .lines()
        .position(|l| l.trim_start().starts_with("\"recovery_gate_rate\": "))
        .unwrap();
    let bad: Vec<&str> = text
        .lines()
        .enumerate()
        .map(|(k, l)| {
            if k == at {
                "      \"recovery_gate_rate\": \"high\","
            } else {
                l
            }
        })
        .collect();
    std::fs::write(run.join("metrics.json"), bad.join("\n")).unwrap();
    let line = at + 1;
    refused(
        &run,
        &[
            "metrics.json",
            &format!("line {line}"),
            "queries.arms.baseline.recovery_gate_rate",
        ],
    );

    // A manifest from another run.
    let run = dir.path().join("mixed");
    copy_dir(&examples().join("runs/capacity-50"), &run);
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    std::fs::write(
        run.join("manifest.json"),
        manifest.replacen("\"run_id\": \"capacity-50\"", "\"run_id\": \"other\"", 1),
    )
    .unwrap();
    refused(&run, &["manifest.json", "run_id", "`other`"]);

    // No metrics at all.
    let run = dir.path().join("empty");
    std::fs::create_dir_all(&run).unwrap();
    refused(&run, &["metrics.json"]);
}

#[test]
fn each_example_has_the_plots_its_data_supports() {
    let names = |name: &str| -> Vec<String> {
        plot_files(&examples().join(format!("reports/{name}")))
            .into_keys()
            .filter_map(|f| f.strip_suffix(".png").map(str::to_string))
            .collect()
    };
    assert_eq!(
        names("capacity-50"),
        ["query-confidence", "query-reliability"]
    );
    // The judges split: the judged-quality diagram is withheld with the rest. Its treatment
    // runs the precision controls: the validation funnel.
    assert_eq!(
        names("code-review-ab"),
        [
            "alpha",
            "review-funnel",
            "review-rates",
            "review-tiers",
            "review-values"
        ]
    );
    assert_eq!(
        names("doc-review-ab"),
        [
            "alpha",
            "judge-errors",
            "lift-human",
            "review-calibration",
            "review-rates",
            "review-tiers",
            "review-values"
        ]
    );
}

/// The run files whose bytes are pinned: everything a run writes but the manifest (paths and
/// times) and the Parquet copies of the tables (their CSV twins hold the same rows).
fn pinned_files(run: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f != "manifest.json" && !f.ends_with(".parquet"))
        .collect();
    files.sort();
    files
}

// Every example's metrics, trust verdict and tables, byte for byte (run ids are fixed, and
// nothing else in them varies from run to run or machine to machine). This is what a
// refactoring must keep: the stored copies in tests/snapshots/outputs/ were taken before it.
// A change that means to move a figure rewrites them with CALIBENCH_BLESS=1 and says so in its
// commit.
#[test]
fn run_outputs_are_byte_identical_to_their_stored_copies() {
    let bless = std::env::var_os("CALIBENCH_BLESS").is_some();
    for name in examples_names() {
        let run = examples().join("runs").join(name);
        let stored = root().join("tests/snapshots/outputs").join(name);
        let files = pinned_files(&run);
        if bless {
            let _ = std::fs::remove_dir_all(&stored);
            std::fs::create_dir_all(&stored).unwrap();
        }
        let mut expected: Vec<String> = std::fs::read_dir(&stored)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        expected.sort();
        if !bless {
            assert_eq!(
                files, expected,
                "{name}: the run writes other files than stored"
            );
        }
        for file in &files {
            let now = std::fs::read(run.join(file)).unwrap();
            if bless {
                std::fs::write(stored.join(file), &now).unwrap();
                continue;
            }
            let then = std::fs::read(stored.join(file)).unwrap();
            assert!(
                now == then,
                "{name}/{file} differs from tests/snapshots/outputs/{name}/{file}: \
                 a figure moved (rerun with CALIBENCH_BLESS=1 only if it should)"
            );
        }
    }
}

// The metric catalogue is the one declaration of a per-target review metric: every entry must
// reach metrics.json, the targets table and the gate's metric paths, and every delta entry
// `review.delta`, the gate's `<review-delta>` keys and the report's delta table.
#[test]
fn every_catalogued_review_metric_reaches_every_output() {
    use calibench::gate::schema;
    use calibench::replay::review_metrics::{arm_figure_names, Kind, REVIEW_METRICS};
    let patterns = schema::number_patterns();
    let listed = String::from_utf8(
        calibench()
            .args(["gate", "--list-metrics"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let delta_keys = schema::key_sets()
        .into_iter()
        .find(|(label, _)| *label == "review-delta")
        .map(|(_, keys)| keys.to_vec())
        .unwrap();
    for name in ["code-review-ab", "doc-review-ab", "doc-review-live"] {
        let run = examples().join("runs").join(name);
        let metrics: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("metrics.json")).unwrap())
                .unwrap();
        let header = std::fs::read_to_string(run.join("targets.csv")).unwrap();
        let header: Vec<&str> = header.lines().next().unwrap().split(',').collect();
        let report =
            std::fs::read_to_string(examples().join(format!("reports/{name}/report.md"))).unwrap();
        // Only the code-review example replays the precision controls (docs/guides/ab-rubric-change.md): the others
        // must not write their figures, so their outputs stay what they were.
        let controls = name == "code-review-ab";
        // Only the live document review's reviewers report usage: the others have no cost.
        let usage = name == "doc-review-live";
        for m in &REVIEW_METRICS {
            let present = (controls || !m.precision) && (usage || !m.usage);
            for arm in ["baseline", "treatment"] {
                let row = &metrics["review"]["arms"][arm]["per_target"][0];
                assert_eq!(
                    row.get(m.name).is_some(),
                    present,
                    "{name}: per_target and {}",
                    m.name
                );
            }
            // A histogram is no column: one cell holds one number.
            assert_eq!(
                header.contains(&m.name),
                m.kind != Kind::ByValue && present,
                "{name}: targets.csv and {}",
                m.name
            );
            let path = format!("review.arms.<arm>.per_target.<i>.{}", m.name);
            let pattern = if m.kind == Kind::ByValue {
                format!("{path}.<key>")
            } else {
                path
            };
            // A label (the skip rule) is text: the gate names numbers only.
            if m.kind == Kind::Label {
                assert!(!patterns.contains(&pattern), "{pattern} is not a number");
            } else {
                assert!(
                    patterns.contains(&pattern),
                    "the gate cannot name {pattern}"
                );
                assert!(
                    listed.lines().any(|l| l == pattern),
                    "--list-metrics lacks {pattern}"
                );
            }
            if !present {
                continue;
            }
            // A metric with no value anywhere (precision without judges) has no pairs to delta.
            let valued = ["baseline", "treatment"].iter().any(|arm| {
                metrics["review"]["arms"][arm]["per_target"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|row| !row[m.name].is_null())
            });
            if m.delta && valued {
                assert!(
                    metrics["review"]["delta"].get(m.name).is_some()
                        || metrics["review"]["withheld"]["metrics"]
                            .as_array()
                            .is_some_and(|w| w.iter().any(|x| x == m.name)),
                    "{name}: review.delta lacks {}",
                    m.name
                );
                let label = m.label.unwrap_or(m.name);
                assert!(
                    report.contains(&format!("| {label} |")),
                    "{name}: report.md has no delta row for {} ({label})",
                    m.name
                );
            }
            if m.delta {
                assert!(
                    delta_keys.contains(&m.name),
                    "<review-delta> lacks {}",
                    m.name
                );
            }
            if let Some((_, label, _)) = m.summary.filter(|_| valued) {
                assert!(
                    report.contains(&format!("| {label} |")),
                    "{name}: the summary has no row {label}"
                );
            }
        }
        // Each arm figure the catalogue's aggregates make is in metrics.json and a gate path.
        for (figure, i, _) in arm_figure_names() {
            let m = &REVIEW_METRICS[*i];
            let present = (controls || !m.precision) && (usage || !m.usage);
            for arm in ["baseline", "treatment"] {
                let value = &metrics["review"]["arms"][arm][figure.as_str()];
                // A part of usage no call reported (wall time, in a corpus not collected with
                // it) is null: unknown, never 0.
                let unreported = m.usage
                    && metrics["review"]["arms"][arm]["per_target"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|row| row[m.name].is_null());
                assert_eq!(
                    value.is_number(),
                    present && !unreported,
                    "{name}: {arm} and {figure}"
                );
                assert_eq!(
                    metrics["review"]["arms"][arm]
                        .get(figure.as_str())
                        .is_some(),
                    present,
                    "{name}: {arm} and {figure}"
                );
            }
            let path = format!("review.arms.<arm>.{figure}");
            assert!(
                listed.lines().any(|l| l == path),
                "--list-metrics lacks {path}"
            );
        }
    }
}

// Issue 50: every table of every report (a sweep's included) sits in a box of its own that
// scrolls sideways, so that a wide table never widens the page (the sweep's "Every point" at
// 1400 px, captions clipped at 700 px).
#[test]
fn every_table_sits_in_a_scrolling_box() {
    let reports = examples().join("reports");
    let mut tables = 0;
    for entry in std::fs::read_dir(&reports).unwrap() {
        let page = entry.unwrap().path().join("report.html");
        if !page.is_file() {
            continue;
        }
        let html = std::fs::read_to_string(&page).unwrap();
        let doc = parse_html(&html).unwrap();
        for table in doc.descendants().filter(|n| n.has_tag_name("table")) {
            let parent = table.parent_element().unwrap();
            assert!(
                parent.has_tag_name("div") && parent.attribute("class") == Some("scroll"),
                "{}: a table outside a scrolling box",
                page.display()
            );
            tables += 1;
        }
        assert!(
            html.contains("div.scroll { overflow-x: auto"),
            "{}",
            page.display()
        );
    }
    assert!(tables > 50, "{tables} tables checked");
}
