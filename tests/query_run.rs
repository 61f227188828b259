//! End-to-end tests of query replay through `calibench run` and `calibench validate`: a small
//! trace file with hand-worked outcomes, the capacity-50 example corpus, and bad input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;

use common::{calibench, json_of, run_into};
use predicates::prelude::*;
use serde_json::Value;

const EXPERIMENT: &str = r#"name = "tiny-queries"
seed = 11
bootstrap = 300

[arms.baseline]
source = "recorded"
[arms.baseline.confidence]
policy = "flat-mean"

[arms.treatment]
source = "recorded"
[arms.treatment.confidence]
policy = "category-max"
"#;

/// Three queries; their outcomes are worked in `tiny_traces_replay_as_worked_by_hand`.
const TRACES: &str = concat!(
    r#"{"query_id": "located", "first_pass_correct": true, "correct": true, "tools": [{"tool": "find", "target": "Parser", "hits": 5}, {"tool": "read", "target": "src/parser.rs", "files": 1, "relevant": true}, {"tool": "grep", "target": "parser", "hits": 7}, {"tool": "read", "target": "src/Parser.h", "files": 1, "relevant": 1}, {"tool": "references", "phase": "recovery", "target": "Parser", "hits": 2}]}"#,
    "\n",
    r#"{"query_id": "weak", "first_pass_correct": false, "correct": true, "tools": [{"tool": "find", "target": "Lexer", "hits": 0}, {"tool": "read", "target": "README.md", "files": 1, "relevant": true}, {"tool": "grep", "phase": "recovery", "target": "lexer", "hits": 4}, {"tool": "read", "phase": "recovery", "target": "src/lexer.rs", "files": 1, "relevant": true}]}"#,
    "\n",
    r#"{"query_id": "failed", "error": "timeout", "first_pass_correct": false, "correct": false, "tools": []}"#,
    "\n",
);

fn corpus(dir: &Path, traces: &str) -> PathBuf {
    std::fs::write(dir.join("experiment.toml"), EXPERIMENT).unwrap();
    std::fs::write(dir.join("queries.jsonl"), traces).unwrap();
    dir.join("experiment.toml")
}

fn run_json(experiment: &Path, runs: &Path) -> Value {
    json_of(run_into(runs, experiment).args(["--run-id", "r", "--json"]))
}

fn n(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn tiny_traces_replay_as_worked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let exp = corpus(dir.path(), TRACES);
    let m = run_json(&exp, &dir.path().join("runs"));
    assert!(m.get("review").is_none());
    let b = &m["queries"]["arms"]["baseline"];
    let t = &m["queries"]["arms"]["treatment"];
    // flat-mean:
    //   located: (0.8 + 0.55 + 0.8 + 0.55)/4 = 0.675 < 0.7 fires; one recorded attempt:
    //            (2.7 + 0.5)/5 = 0.64.
    //   weak:    (0.1 + 0.55)/2 = 0.325 fires; (0.65 + 0.5)/3 = 0.383333333.
    //   failed:  no tool → 0 < 0.2 stops.
    assert_eq!(b["policy"], "flat-mean");
    assert_eq!(
        (b["recovery_fired"].as_u64(), b["stopped"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(b["errors"], 1);
    assert!(close(n(&b["confidence_mean"]), (0.64 + 0.383333333) / 3.0));
    // category-max:
    //   located: search 0.80 (find and grep agree on "parser"), read 0.80 → base 0.8; search
    //            and read confirm "parser" → × 1.15 = 0.92; no recovery.
    //   weak:    search 0.10, read 0.55 → 1.9/5.5 = 0.345454545 fires; with recovery search
    //            0.65, read 0.80, grep + read confirm "lexer" → 4.025/5.5 × 1.15 = 0.841590909.
    assert_eq!(
        (t["recovery_fired"].as_u64(), t["stopped"].as_u64()),
        (Some(1), Some(1))
    );
    let values: Vec<f64> = t["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| n(&v["value"]))
        .collect();
    assert_eq!(values, [0.0, 0.841590909, 0.92]);
    // Final answers: located right on the first pass in both; weak right after the recorded
    // recovery in both (both gates fired); failed wrong.
    assert!(close(n(&b["final_accuracy"]), 2.0 / 3.0));
    assert!(close(n(&t["final_accuracy"]), 2.0 / 3.0));
    assert!(close(n(&b["unnecessary_recovery_rate"]), 1.0 / 3.0));
    assert!(close(n(&t["unnecessary_recovery_rate"]), 0.0));
    assert_eq!(t["bands"]["strong"], 2);
    assert_eq!(t["bands"]["failed"], 1);
    let d = &m["queries"]["delta"]["recovery_gate_rate"];
    assert!(close(n(&d["delta"]), -1.0 / 3.0));
    assert_eq!(d["pairs"], 3);

    // The queries table: one row per arm and query, with the breakdown.
    let csv = std::fs::read_to_string(dir.path().join("runs/r/queries.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for col in [
        "arm",
        "query_id",
        "primary_confidence",
        "confidence",
        "fired",
        "stopped",
        "band",
        "final_correct",
        "read_score",
        "read_weight",
        "read_contribution",
        "recovery_contribution",
    ] {
        assert!(header.contains(&col), "{col}");
    }
    assert_eq!(csv.lines().count(), 7);
    let row = csv
        .lines()
        .find(|l| l.contains(",treatment,located,"))
        .unwrap();
    let cells: BTreeMap<&str, &str> = header.iter().copied().zip(row.split(',')).collect();
    assert_eq!(cells["confidence"], "0.92");
    assert_eq!(cells["read_score"], "0.8");
    assert_eq!(cells["search_read_converge"], "true");
    let parquet = std::fs::read(dir.path().join("runs/r/queries.parquet")).unwrap();
    use polars::prelude::SerReader;
    let df = polars::prelude::ParquetReader::new(std::io::Cursor::new(parquet))
        .finish()
        .unwrap();
    assert_eq!(df.height(), 6);
}

#[test]
fn bad_traces_refuse_the_run_with_file_line_and_field_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = TRACES.replace(r#""hits": 7"#, r#""hits": "seven""#);
    let exp = corpus(dir.path(), &bad);
    let runs = dir.path().join("runs");
    run_into(&runs, &exp)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "queries.jsonl:1: field `tools[2].hits`",
        ))
        .stderr(predicate::str::contains("whole number"));
    assert!(!runs.exists() || std::fs::read_dir(&runs).unwrap().next().is_none());

    // validate lists it too, with the duplicate id on line 4.
    let dup = format!("{bad}{}\n", TRACES.lines().nth(2).unwrap());
    corpus(dir.path(), &dup);
    calibench()
        .arg("validate")
        .arg(dir.path())
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            "queries.jsonl:1: field `tools[2].hits`",
        ))
        .stdout(predicate::str::contains(
            "queries.jsonl:4: field `query_id`",
        ));
}

#[test]
fn an_arm_reading_a_label_no_query_carries_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let exp = corpus(dir.path(), TRACES);
    std::fs::write(
        &exp,
        EXPERIMENT.replacen("source = \"recorded\"", "source = \"recordd\"", 1),
    )
    .unwrap();
    run_into(dir.path().join("runs"), &exp)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "arm `baseline` reads recorded arm `recordd`, but no query carries that label",
        ))
        .stderr(predicate::str::contains("the file's labels: recorded"));
    calibench()
        .arg("validate")
        .arg(&exp)
        .assert()
        .code(2)
        .stdout(predicate::str::contains("recordd"));
}

/// The example corpus: the recorded model reproduces the phase-1 review in REFERENCE.md, and
/// the new model behaves as seed 004 expects.
#[test]
fn capacity_50_reproduces_the_phase_one_review() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let m = run_json(
        &root.join("corpora/capacity-50/experiment.toml"),
        &dir.path().join("runs"),
    );
    let b = &m["queries"]["arms"]["baseline"];
    let t = &m["queries"]["arms"]["treatment"];
    assert_eq!(b["queries"], 50);
    // Only two values for answered queries: 0.617 × 38 and 0.562 × 11, and 0.000 × 1.
    let values: Vec<(f64, u64)> = b["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (n(&v["value"]), v["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(values, [(0.0, 1), (0.5625, 11), (0.616666667, 38)]);
    // Mean 0.592: the review printed 0.591, which no pair of values rounding to 0.617 and
    // 0.562 can give (38 × 0.6165 + 11 × 0.5615 is already 0.5921 × 50).
    assert!((n(&b["confidence_mean"]) - 0.591).abs() < 0.0015);
    assert_eq!(b["recovery_fired"], 49);
    assert_eq!(b["stopped"], 1);
    assert!(close(n(&b["first_pass_success"]), 0.98));
    // The redesign: recovery on at most 20% of queries, three bands above failed, a higher
    // mean, and no loss of first-pass or final accuracy.
    assert!(t["recovery_fired"].as_u64().unwrap() <= 10);
    for band in ["strong", "adequate", "weak"] {
        assert!(t["bands"][band].as_u64().unwrap() >= 1, "{band}");
    }
    assert!(n(&t["confidence_mean"]) > 0.75);
    assert!(n(&t["final_accuracy"]) >= n(&b["final_accuracy"]));
    // Confidence tracks correctness better: lower ECE and Brier, with intervals.
    let ece = |a: &Value| n(&a["calibration"]["ece"]);
    assert!(ece(t) < ece(b));
    let d = &m["queries"]["delta"]["ece"];
    assert!(n(&d["ci"][1]) < 0.0, "{d}");
    assert!(m["queries"]["delta"]["recovery_gate_rate"]["ci"].is_array());
}

/// The traces record the agent's per-tool scores; they are the docs/guides/capacity-review.md table applied to the
/// recorded evidence, so a replay without `score` fields gives the same figures.
#[test]
fn capacity_50_recorded_scores_follow_the_per_tool_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("corpora/capacity-50/queries.jsonl")).unwrap();
    let (queries, problems) = calibench::corpus::queries::parse("queries.jsonl", text.as_bytes());
    assert!(problems.is_empty());
    let mut checked = 0;
    for q in &queries {
        for t in &q.tools {
            let table = calibench::replay::query::table_score(t.kind, t.evidence);
            assert!(
                close(t.score.unwrap(), table),
                "{}: {:?} records {:?}, the table gives {table}",
                q.query_id,
                t.kind,
                t.score
            );
            checked += 1;
        }
    }
    assert!(checked > 200);
}
