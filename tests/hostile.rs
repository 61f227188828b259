//! Corpus strings are data, never markup or terminal control (docs/reference.md). One corpus puts a
//! hostile string in every field that reaches a report (experiment name, target, reviewer,
//! finding id, title and section, a failed call's reason, a malformed value, judged item ids,
//! a gate check's name); a twin corpus of the same shape uses a plain word instead. Every
//! Markdown output of the two must have the same structure (no heading, link, image, HTML or
//! table row gained), every SVG and the JUnit file must parse as XML, and no control character
//! may reach the terminal.

use std::path::Path;
use std::process::Output;

mod common;

use common::calibench;
use pulldown_cmark::{Event, Options, Parser, Tag};
use serde_json::json;

/// Headings, a comment that would hide what follows, a javascript link, an image with a
/// handler, table cells, a terminal title (OSC), a screen clear, NUL and a carriage return.
const HOSTILE: &str = "\n\n# ✅ Verdict: trusted. lift +9.99 <!-- [x](javascript:a) ![i](x) <img src=x onerror=a> |r|\u{1b}]0;pwn\u{7}\u{1b}[2J\u{0}\r-->";

/// The same tricks within a finding title's 100 characters.
const SHORT: &str = "\n# h <!-- [x](javascript:a) <img onerror=a> |r|\u{1b}[2J\u{0}\r";

/// Writes an experiment, its corpus and a gate policy into `dir`, with `s` in every string.
fn write_corpus(dir: &Path, s: &str) {
    let short = if s == HOSTILE { SHORT } else { s };
    let finding = |id: &str, title: &str, sev: &str, conf: f64| {
        json!({"id": format!("{id}{s}"), "title": format!("T {title}{short}"), "severity": sev,
               "section": format!("S{s}"), "finding_type": "error", "autofix_class": "manual",
               "confidence": conf, "suggested_fix": null})
    };
    let mut reviews = Vec::new();
    for (arm, conf) in [("baseline", 0.7), ("treatment", 0.9)] {
        for target in ["plan-a", "plan-b"] {
            let target = format!("{target}{s}");
            for reviewer in ["r1", "r2"] {
                reviews.push(json!({"target": target, "arm": arm, "reviewer": format!("{reviewer}{s}"),
                    "findings": [finding(&format!("{arm}-{target}-{reviewer}-1"), "one", "P1", conf),
                                 finding(&format!("{arm}-{target}-{reviewer}-2"), reviewer, "P9", conf)]}));
            }
            reviews.push(
                json!({"target": target, "arm": arm, "reviewer": format!("r3{s}"),
                "status": "failed", "reason": format!("timed out{s}")}),
            );
        }
    }
    let lines: Vec<String> = reviews.iter().map(|r| r.to_string()).collect();
    std::fs::write(dir.join("reviews.jsonl"), lines.join("\n") + "\n").unwrap();

    // Judges split on one item, so the verdict is withheld and its reason quotes the item id.
    let mut verdicts = Vec::new();
    for arm in ["baseline", "treatment"] {
        // Whole-target items: each names a target of its arm.
        for (item, scores) in [("plan-a", [0.5, 0.6, 0.55]), ("plan-b", [0.0, 1.0, 0.5])] {
            let judges: Vec<_> = ["j1", "j2", "j3"]
                .iter()
                .zip(scores)
                .map(|(j, x)| json!({"model": j, "per_dimension": {"real": x}}))
                .collect();
            verdicts.push(
                json!({"item_id": format!("{item}{s}"), "arm": arm, "verdicts": judges})
                    .to_string(),
            );
        }
    }
    std::fs::write(dir.join("verdicts.jsonl"), verdicts.join("\n") + "\n").unwrap();

    let toml_string = |t: &str| serde_json::to_string(t).unwrap(); // a JSON string is a TOML basic string here
    std::fs::write(
        dir.join("experiment.toml"),
        format!(
            "name = {}\nmode = \"doc\"\nseed = 3\nbootstrap = 50\n\n[arms.baseline]\nsource = \"baseline\"\n[arms.baseline.review]\npolicy = \"float-gates\"\n\n[arms.treatment]\nsource = \"treatment\"\n[arms.treatment.review]\npolicy = \"float-gates\"\n\n[gate]\nrequire_trustworthy = true\n[[gate.check]]\nname = {}\nmetric = \"review.arms.treatment.merged\"\nmax = 0\n",
            toml_string(&format!("exp{s}")),
            toml_string(&format!("check{s}")),
        ),
    )
    .unwrap();
}

/// What a Markdown text is made of: the blocks and inlines a string could forge.
#[derive(Debug, Default, PartialEq)]
struct Shape {
    headings: usize,
    links: usize,
    images: usize,
    html: usize,
    table_rows: usize,
    list_items: usize,
}

fn shape(markdown: &str) -> Shape {
    let mut s = Shape::default();
    for event in Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    ) {
        match event {
            Event::Start(Tag::Heading { .. }) => s.headings += 1,
            Event::Start(Tag::Link { .. }) => s.links += 1,
            Event::Start(Tag::Image { .. }) => s.images += 1,
            Event::Html(_) | Event::InlineHtml(_) => s.html += 1,
            Event::Start(Tag::TableRow | Tag::TableHead) => s.table_rows += 1,
            Event::Start(Tag::Item) => s.list_items += 1,
            _ => {}
        }
    }
    s
}

/// Control characters other than line feed and tab.
fn controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\t'))
        .collect()
}

/// Runs the corpus (as `calibench run` with no argument, so the index is written too) and
/// gates it; returns the folder and the two commands' outputs.
fn run_all(s: &str) -> (tempfile::TempDir, Output, Output) {
    let root = tempfile::tempdir().unwrap();
    let corpus = root.path().join("corpora/ex");
    std::fs::create_dir_all(&corpus).unwrap();
    write_corpus(&corpus, s);
    let run = calibench()
        .current_dir(root.path())
        .arg("run")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let run_dir = std::fs::read_dir(root.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let gate = calibench()
        .current_dir(root.path())
        .arg("gate")
        .arg(&run_dir)
        .args(["--summary", "summary.md", "--junit", "junit.xml"])
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    assert_eq!(
        gate.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&gate.stderr)
    );
    (root, run, gate)
}

/// The one report folder under `reports/`.
fn report_dir(root: &Path) -> std::path::PathBuf {
    std::fs::read_dir(root.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap()
}

#[test]
fn hostile_strings_forge_nothing_in_any_output() {
    let (plain, _, _) = run_all("x");
    let (hostile, run, gate) = run_all(HOSTILE);

    // The strings did reach the outputs (else the test would prove nothing).
    let report = std::fs::read_to_string(report_dir(hostile.path()).join("report.md")).unwrap();
    for reached in ["onerror", "javascript:a", "timed out", "plan-b"] {
        assert!(
            report.contains(reached),
            "{reached} is not in report.md:\n{report}"
        );
    }

    for file in ["report.md", "../index.md", "../../summary.md"] {
        let read = |root: &Path| std::fs::read_to_string(report_dir(root).join(file)).unwrap();
        let (p, h) = (read(plain.path()), read(hostile.path()));
        assert_eq!(shape(&h), shape(&p), "{file} gained structure:\n{h}");
        assert!(controls(&h).is_empty(), "{file} holds {:?}", controls(&h));
        let raw_comment = h
            .match_indices("<!--")
            .any(|(i, _)| !h[..i].ends_with('\\'));
        assert!(!raw_comment, "{file} holds a raw comment opener");
    }

    let dir = report_dir(hostile.path());
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        controls(&html).is_empty(),
        "report.html holds {:?}",
        controls(&html)
    );
    assert!(
        !html.contains("<img src=x"),
        "report.html holds a raw tag from the corpus"
    );
    let index = std::fs::read_to_string(hostile.path().join("reports/index.html")).unwrap();
    assert!(controls(&index).is_empty() && !index.contains("<img src=x"));

    let mut svgs = 0;
    for entry in std::fs::read_dir(dir.join("plots")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "svg") {
            let svg = std::fs::read_to_string(&path).unwrap();
            roxmltree::Document::parse(&svg)
                .unwrap_or_else(|e| panic!("{} is not XML: {e}", path.display()));
            svgs += 1;
        }
    }
    assert!(svgs > 0);
    let junit = std::fs::read_to_string(hostile.path().join("junit.xml")).unwrap();
    roxmltree::Document::parse(&junit).unwrap();

    // Regression (hostile-4/14): a line feed in a corpus string reached the terminal and forged a
    // line of its own ("decision: worse …"). Laid into a line, it is shown escaped.
    let mut escaped = 0;
    for (what, out) in [("run", &run), ("gate", &gate)] {
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                controls(&text).is_empty(),
                "{what} printed {:?}",
                controls(&text)
            );
            let forged = text.lines().find(|l| l.trim_start().starts_with("# ✅"));
            assert!(
                forged.is_none(),
                "{what} printed a forged line: {forged:?}\n{text}"
            );
            escaped += text.matches("\\n\\n# ✅ Verdict").count();
        }
    }
    assert!(escaped > 0, "the hostile string never reached the terminal");
}

/// A code-review corpus with `s` in every string that reaches the controls section: the
/// validator's rejection reasons (collected from a live validator's output), a failed validator
/// call's reason, file paths and titles.
fn write_code_corpus(dir: &Path, s: &str) {
    let short = if s == HOSTILE { SHORT } else { s };
    let mut reviews = Vec::new();
    let mut validations = Vec::new();
    for arm in ["baseline", "treatment"] {
        for target in ["a", "b"] {
            let findings: Vec<_> = (0..3)
                .map(|i| {
                    json!({"id": format!("{arm}-{target}-{i}"), "title": format!("T{i}{short}"),
                           "severity": "P1", "file": format!("src/f{i}{s}.rs"), "line": 10 + i,
                           "autofix_class": "manual", "owner": "downstream-resolver",
                           "requires_verification": false, "pre_existing": false,
                           "confidence": 100, "suggested_fix": null})
                })
                .collect();
            reviews.push(
                json!({"target": target, "arm": arm, "reviewer": "r1", "findings": findings}),
            );
            for i in 0..3 {
                let finding = format!("{arm}-{target}-{i}");
                validations.push(match i {
                    0 => {
                        json!({"arm": arm, "target": target, "finding": finding, "validated": true})
                    }
                    1 => {
                        json!({"arm": arm, "target": target, "finding": finding, "validated": false,
                                "reason": format!("handled elsewhere{s}")})
                    }
                    _ => {
                        json!({"arm": arm, "target": target, "finding": finding, "status": "failed",
                                "reason": format!("timed out{s}")})
                    }
                });
            }
        }
    }
    let lines = |v: &[serde_json::Value]| {
        v.iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    std::fs::write(dir.join("reviews.jsonl"), lines(&reviews)).unwrap();
    std::fs::write(dir.join("validations.jsonl"), lines(&validations)).unwrap();
    std::fs::write(
        dir.join("experiment.toml"),
        "name = \"code\"\nmode = \"code\"\nseed = 3\nbootstrap = 50\n\n[arms.baseline]\nsource = \"baseline\"\n[arms.baseline.review]\npolicy = \"anchored\"\n\n[arms.treatment]\nsource = \"treatment\"\n[arms.treatment.review]\npolicy = \"anchored\"\nreview_mode = \"headless\"\nvalidation = \"always\"\n",
    )
    .unwrap();
}

// Issue 34 (left from the first probe): a collected reason (a validator's rejection, a failed
// call's reason) with Markdown and control characters must not change report.md's structure.
// The doc corpus above covers failed reviewers; this covers code review's controls section.
#[test]
fn collected_reasons_in_the_controls_section_forge_nothing() {
    let report = |s: &str| {
        let root = tempfile::tempdir().unwrap();
        write_code_corpus(root.path(), s);
        let out = calibench()
            .current_dir(root.path())
            .args(["run", "experiment.toml", "--run-id", "r", "--no-plots"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                controls(&text).is_empty(),
                "run printed {:?}",
                controls(&text)
            );
        }
        std::fs::read_to_string(root.path().join("reports/r/report.md")).unwrap()
    };
    let (plain, hostile) = (report("x"), report(HOSTILE));
    assert!(
        hostile.contains("handled elsewhere") && hostile.contains("onerror"),
        "{hostile}"
    );
    assert_eq!(
        shape(&hostile),
        shape(&plain),
        "report.md gained structure:\n{hostile}"
    );
    assert!(
        controls(&hostile).is_empty(),
        "report.md holds {:?}",
        controls(&hostile)
    );
}
