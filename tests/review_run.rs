//! End-to-end tests of `calibench run` and `calibench validate` on review corpora: a small
//! corpus whose metrics are worked out by hand below, the example corpora, and every way the
//! input can be bad.

use std::path::{Path, PathBuf};

mod common;

use common::{calibench, json_of, run_into};
use predicates::prelude::*;
use serde_json::{json, Value};

const EXPERIMENT: &str = r#"name = "tiny"
mode = "doc"
seed = 7
bootstrap = 200

[arms.baseline]
source = "b"
[arms.baseline.review]
policy = "float-gates"

[arms.treatment]
source = "t"
[arms.treatment.review]
policy = "anchored"
"#;

fn finding(id: &str, section: &str, title: &str, sev: &str, autofix: &str, conf: Value) -> Value {
    let fix = (autofix == "safe_auto").then_some("apply it");
    json!({"id": id, "title": title, "severity": sev, "section": section, "finding_type": "omission",
           "autofix_class": autofix, "confidence": conf, "suggested_fix": fix})
}

/// One plan, one run. Worked by hand:
///
/// baseline (float-gates, float scale)
/// * "Rollback missing" (coherence, P1 manual 0.60) + "rollback missing!" (feasibility, P2
///   safe_auto 0.55) merge: P1, manual, 0.60, corroborated → +0.10 = 0.70 ≥ P1 gate 0.60:
///   actionable, a decision (manual).
/// * "Metric has no baseline" P2 manual 0.50 < 0.65, manual ≥ 0.40: FYI.
/// * "Load ignores peak" P3 gated_auto 0.72 < 0.75, not manual: dropped, bin (0.70, 0.75].
/// * one finding at confidence 85 is off the float scale: malformed; security-lens failed.
///
/// Baseline totals: findings_raw 4, malformed 1, failed 1, distinct 4, merged 3, corroborated 1,
/// promoted 1, actionable 1, fyi 1, dropped 1, decisions 1.
///
/// treatment (anchored, anchor scale): the same issues at 75, 50, 75 (+100 for the last).
/// * merged rollback 75 → promoted 100: actionable decision; "Metric" 50: FYI;
///   "Load ignores peak" 100: actionable, a decision (gated_auto).
///
/// Treatment totals: findings_raw 4, distinct 3, merged 3, promoted 1, actionable 2, fyi 1,
/// dropped 0.
///
/// Verdicts: b1 composite 0.25 → baseline precision 0.25. t1 1.0 and t3 0.5 → the merged
/// rollback finding 0.75; t4 0.5 → treatment precision (0.75 + 0.5)/2 = 0.625.
fn tiny_corpus(dir: &Path) -> PathBuf {
    let reviews = [
        json!({"target": "plan", "arm": "b", "reviewer": "coherence", "findings": [
            finding("b1", "Deploy", "Rollback missing", "P1", "manual", json!(0.6)),
            finding("b2", "Goals", "Metric has no baseline", "P2", "manual", json!(0.5))]}),
        json!({"target": "plan", "arm": "b", "reviewer": "feasibility", "findings": [
            finding("b3", "deploy", "rollback missing!", "P2", "safe_auto", json!(0.55)),
            finding("b4", "Risks", "Load ignores peak", "P3", "gated_auto", json!(0.72)),
            finding("b5", "Risks", "Bad scale", "P3", "manual", json!(85))]}),
        json!({"target": "plan", "arm": "b", "reviewer": "security-lens", "status": "failed"}),
        json!({"target": "plan", "arm": "t", "reviewer": "coherence", "findings": [
            finding("t1", "Deploy", "Rollback missing", "P1", "manual", json!(75)),
            finding("t2", "Goals", "Metric has no baseline", "P2", "manual", json!(50))]}),
        json!({"target": "plan", "arm": "t", "reviewer": "feasibility", "findings": [
            finding("t3", "deploy", "rollback missing!", "P2", "safe_auto", json!(75)),
            finding("t4", "Risks", "Load ignores peak", "P3", "gated_auto", json!(100))]}),
    ];
    let judge = |id: &str, arm: &str, s: f64| {
        json!({"item_id": id, "arm": arm, "verdicts": [
            {"model": "a", "per_dimension": {"real": s, "important": s}},
            {"model": "b", "per_dimension": {"real": s, "important": s}},
            {"model": "c", "per_dimension": {"real": s, "important": s}}]})
    };
    let verdicts = [
        judge("b1", "b", 0.25),
        judge("t1", "t", 1.0),
        judge("t3", "t", 0.5),
        judge("t4", "t", 0.5),
    ];
    let lines = |v: &[Value]| {
        v.iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    std::fs::write(dir.join("experiment.toml"), EXPERIMENT).unwrap();
    std::fs::write(dir.join("reviews.jsonl"), lines(&reviews)).unwrap();
    std::fs::write(dir.join("verdicts.jsonl"), lines(&verdicts)).unwrap();
    dir.join("experiment.toml")
}

fn run_json(experiment: &Path, runs: &Path, extra: &[&str]) -> Value {
    json_of(run_into(runs, experiment).args(extra).arg("--json"))
}

fn n(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn tiny_corpus_metrics_match_the_hand_worked_values() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_corpus(dir.path());
    let m = run_json(&exp, &dir.path().join("runs"), &[]);
    let b = &m["review"]["arms"]["baseline"];
    let t = &m["review"]["arms"]["treatment"];
    let expect = |arm: &Value, pairs: &[(&str, f64)]| {
        for (k, v) in pairs {
            assert_eq!(n(&arm[k]), *v, "{k}");
        }
    };
    expect(
        b,
        &[
            ("findings_raw", 4.0),
            ("malformed", 1.0),
            ("failed_reviewers", 1.0),
            ("merged", 3.0),
            ("corroborated", 1.0),
            ("promoted", 1.0),
            ("actionable", 1.0),
            ("fyi", 1.0),
            ("dropped", 1.0),
            ("decisions", 1.0),
            ("auto_apply", 0.0),
            ("distinct_values_mean", 4.0),
            ("precision", 0.25),
        ],
    );
    expect(
        t,
        &[
            ("findings_raw", 4.0),
            ("malformed", 0.0),
            ("merged", 3.0),
            ("promoted", 1.0),
            ("actionable", 2.0),
            ("fyi", 1.0),
            ("dropped", 0.0),
            ("decisions", 2.0),
            ("distinct_values_mean", 3.0),
            ("precision", 0.625),
        ],
    );
    assert_eq!(n(&b["dropped_by_value"]["(0.70, 0.75]"]), 1.0);
    assert!((n(&b["promotion_rate"]) - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(b["malformed_reasons"]["confidence: off the float scale"], 1);
    assert_eq!(b["policy"], "float-gates");
    assert_eq!(t["scale"], "anchor");
    let d = &m["review"]["delta"]["distinct_values"];
    assert_eq!(
        (n(&d["baseline"]), n(&d["treatment"]), n(&d["delta"])),
        (4.0, 3.0, -1.0)
    );
    // One pair: no test of a mean has a p-value (no spread to test against).
    assert!(d["p_value"].is_null(), "{d}");
    assert!(m["review"]["delta"]["promotion_rate"]["wilson"]["baseline"].is_array());
    assert_eq!(m["experiment"], "tiny");
    assert!(m["agreement"]["reviewers"]["baseline"]
        .get("alpha")
        .is_some());
}

#[test]
fn run_directory_holds_every_file_and_no_partial_one() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_corpus(dir.path());
    let runs = dir.path().join("runs");
    run_into(&runs, &exp)
        .args(["--run-id", "first"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tiny →"))
        .stdout(predicate::str::contains("  verdict: trusted."))
        .stdout(predicate::str::contains(
            "distinct confidence values per target",
        ))
        .stdout(predicate::str::contains("report.html"));
    let names: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["first"]);
    let run = runs.join("first");
    for f in [
        "manifest.json",
        "metrics.json",
        "targets.csv",
        "targets.parquet",
        "findings.csv",
        "findings.parquet",
    ] {
        assert!(run.join(f).is_file(), "{f}");
    }
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["run_id"], "first");
    assert_eq!(manifest["seed"], 7);
    assert_eq!(manifest["inputs"].as_array().unwrap().len(), 3);
    assert_eq!(manifest["inputs"][0]["sha256"].as_str().unwrap().len(), 64);
    assert!(manifest["started_at"].as_str().unwrap().ends_with('Z'));

    let targets = std::fs::read_to_string(run.join("targets.csv")).unwrap();
    assert!(targets.starts_with("run_id,arm,target,run,findings_raw,malformed"));
    assert_eq!(targets.lines().count(), 3); // header + one row per arm
    let findings = std::fs::read_to_string(run.join("findings.csv")).unwrap();
    assert_eq!(findings.lines().count(), 7); // header + 3 merged findings per arm
    assert!(findings.contains("coherence;feasibility"));
    let parquet = std::fs::read(run.join("findings.parquet")).unwrap();
    assert!(parquet.starts_with(b"PAR1") && parquet.ends_with(b"PAR1"));
    use polars::prelude::SerReader;
    let df = polars::prelude::ParquetReader::new(std::io::Cursor::new(parquet))
        .finish()
        .unwrap();
    assert_eq!(df.height(), 6);

    // The same run id again is refused, and the first run is untouched.
    run_into(&runs, &exp)
        .args(["--run-id", "first"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
}

#[test]
fn same_seed_same_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_corpus(dir.path());
    let runs = dir.path().join("runs");
    let mut a = run_json(&exp, &runs, &["--run-id", "a"]);
    let mut b = run_json(&exp, &runs, &["--run-id", "b"]);
    a["run_id"] = Value::Null;
    b["run_id"] = Value::Null;
    assert_eq!(a, b);
    let mut c = run_json(&exp, &runs, &["--run-id", "c", "--seed", "8"]);
    c["run_id"] = Value::Null;
    assert_ne!(a["review"]["delta"]["merged"]["ci"], Value::Null);
    assert_eq!(a["review"]["arms"], c["review"]["arms"]); // the seed moves only intervals
}

#[test]
fn strict_refuses_a_malformed_finding_with_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_corpus(dir.path());
    let runs = dir.path().join("runs");
    run_into(&runs, &exp)
        .arg("--strict")
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "reviews.jsonl:2: field `confidence`: finding 2: 85 is off the float scale",
        ));
    assert!(
        !runs.exists() || std::fs::read_dir(&runs).unwrap().next().is_none(),
        "nothing written"
    );
}

#[test]
fn unreadable_records_refuse_the_run_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_corpus(dir.path());
    let mut text = std::fs::read_to_string(dir.path().join("reviews.jsonl")).unwrap();
    text.push_str("{\"target\": \"plan\", \"arm\": \"b\", \"findings\": []}\nnot json\n");
    std::fs::write(dir.path().join("reviews.jsonl"), text).unwrap();
    let runs = dir.path().join("runs");
    run_into(&runs, &exp)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("2 problems in the input"))
        .stderr(predicate::str::contains(
            "reviews.jsonl:6: field `reviewer`: is missing",
        ))
        .stderr(predicate::str::contains(
            "reviews.jsonl:7: not a JSON object",
        ));
    assert!(!runs.exists());
}

#[test]
fn experiment_typos_are_named_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_corpus(dir.path());
    let text = EXPERIMENT.replace(
        "policy = \"anchored\"",
        "policy = \"anchored\"\nsurface_form = 75",
    );
    std::fs::write(&exp, text).unwrap();
    run_into(dir.path().join("runs"), &exp)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "experiment.toml:15: `arms.treatment.review.surface_form`: unknown key `surface_form` — did you mean `surface_from`?",
        ))
        .stderr(predicate::str::contains("surface_from"));
}

// Regression (issue 22): an error in the treatment arm was placed on the first line in the
// file with a key of that name, the baseline's (`policy` on line 14 reported as line 9).
#[test]
fn an_error_in_the_treatment_arm_names_the_treatment_line() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_corpus(dir.path());
    let text = EXPERIMENT.replace("policy = \"anchored\"", "policy = \"anchord\"");
    std::fs::write(&exp, text).unwrap();
    run_into(dir.path().join("runs"), &exp)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "experiment.toml:14: `arms.treatment.review.policy`",
        ));
    let text = EXPERIMENT.replace("source = \"t\"", "source = \"t\"\nsorce = \"t\"");
    std::fs::write(&exp, text).unwrap();
    run_into(dir.path().join("runs"), &exp)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
        "experiment.toml:13: `arms.treatment.sorce`: unknown key `sorce` — did you mean `source`?",
    ));
}

#[test]
fn validate_lists_every_problem_and_passes_clean_corpora() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_corpus(dir.path());
    calibench()
        .arg("validate")
        .arg(&exp)
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            "reviews.jsonl:2: field `confidence`",
        ))
        .stdout(predicate::str::contains(
            "1 problem: 0 that refuse a run, 1 malformed finding that",
        ));
    let mut text = std::fs::read_to_string(dir.path().join("reviews.jsonl")).unwrap();
    text = text.replace("\"confidence\":85", "\"confidence\":0.85");
    text.push_str("{\"target\": 3}\n");
    std::fs::write(dir.path().join("reviews.jsonl"), &text).unwrap();
    let out = calibench()
        .arg("validate")
        .arg(dir.path())
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["problems"][0]["line"], 6);
    assert_eq!(v["problems"][0]["field"], "field `target`");
    // Clean once the bad line is gone.
    text.truncate(text.len() - "{\"target\": 3}\n".len());
    std::fs::write(dir.path().join("reviews.jsonl"), &text).unwrap();
    calibench()
        .arg("validate")
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("no problems in"));
}

#[test]
fn example_corpora_are_exactly_what_the_generator_makes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
    for (name, files) in calibench::generate::all(calibench::generate::SEED) {
        for (file, contents) in files {
            let on_disk = std::fs::read_to_string(root.join(name).join(&file))
                .unwrap_or_else(|e| panic!("corpora/{name}/{file}: {e}"));
            assert!(on_disk == contents, "corpora/{name}/{file} differs from the generator: run `cargo run --example generate_corpora`");
        }
    }
}

#[test]
fn example_corpora_validate_and_show_the_expected_effects() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(
        &root.join("doc-review-ab/experiment.toml"),
        &dir.path().join("runs"),
        &["--bootstrap", "100"],
    );
    let (b, t) = (
        &doc["review"]["arms"]["baseline"],
        &doc["review"]["arms"]["treatment"],
    );
    // The rubric change's intended effect: floats spread over many values, anchors over few.
    assert!(n(&b["distinct_values_mean"]) > n(&t["distinct_values_mean"]) + 3.0);
    assert!(n(&b["corroborated"]) > 0.0 && n(&t["promoted"]) > 0.0);
    assert!(n(&t["fyi"]) > 0.0 && n(&b["malformed"]) > 0.0);
    assert_eq!(n(&b["targets"]), 4.0);
    assert_eq!(n(&b["runs"]), 3.0);
    assert!(doc["agreement"]["runs"]["treatment"]["alpha"].is_number());
    let code = run_json(
        &root.join("code-review-ab/experiment.toml"),
        &dir.path().join("runs"),
        &["--bootstrap", "100"],
    );
    let t = &code["review"]["arms"]["treatment"];
    assert!(n(&t["pre_existing"]) > 0.0 && n(&t["demoted"]) > 0.0);
    // The treatment runs the bundle (docs/guides/ab-rubric-change.md): the queues hold what survives the validation
    // pass; the budget fires on the large change; the skip rules and lint-ignore each act.
    assert!(n(&t["fixer"]) + n(&t["residual"]) + n(&t["report_only"]) == n(&t["externalized"]));
    assert!(n(&t["externalized"]) < n(&t["actionable"]));
    assert!(n(&t["rejected"]) > 0.0 && n(&t["validator_failed"]) > 0.0);
    let over: Vec<&str> = t["per_target"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| n(&r["over_budget"]) > 0.0)
        .map(|r| r["target"].as_str().unwrap())
        .collect();
    assert_eq!(over, ["pr-1871-batch-export"]);
    assert_eq!(t["skipped_targets"], 3);
    // A skipped target counts nothing, its failed calls included.
    let skipped: Vec<&str> = t["per_target"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["skipped"].is_null())
        .map(|r| r["target"].as_str().unwrap())
        .collect();
    assert!(t["failed_calls"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| !skipped.contains(&c["target"].as_str().unwrap())));
    assert!(code["review"]["arms"]["baseline"]["failed_calls"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| skipped.contains(&c["target"].as_str().unwrap())));
    assert!(n(&t["lint_suppressed"]) > 0.0 && n(&t["lost_p0_p1"]) > 0.0);
    let b = &code["review"]["arms"]["baseline"];
    assert_eq!(b["externalized"], b["actionable"]);
    assert_eq!(b["skipped_targets"], 0);
}

/// docs/guides/ab-rubric-change.md: every control is off by default, and the files it reads change nothing while it
/// is: the code-review example with its controls taken out gives the same figures whether or
/// not its validator calls, PR metadata and source snapshots are beside it. With them, every
/// figure it had before is unchanged and the controls' own figures are added.
#[test]
fn precision_control_files_change_no_figure_while_the_controls_are_off() {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/code-review-ab");
    let experiment = std::fs::read_to_string(from.join("experiment.toml")).unwrap();
    let off: String = experiment
        .lines()
        .filter(|l| {
            !["validation", "validation_budget", "skip", "lint_ignore"]
                .iter()
                .any(|k| l.starts_with(&format!("{k} =")))
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(off, experiment);
    let run = |with_files: bool| {
        let dir = tempfile::tempdir().unwrap();
        for f in ["reviews.jsonl", "verdicts.jsonl"] {
            std::fs::copy(from.join(f), dir.path().join(f)).unwrap();
        }
        if with_files {
            for f in ["validations.jsonl", "targets.jsonl"] {
                std::fs::copy(from.join(f), dir.path().join(f)).unwrap();
            }
            common::copy_dir(&from.join("sources"), &dir.path().join("sources"));
        }
        // No [gate] table: this run is compared with itself, not with the accepted run.
        let text = off.split("\n[gate]").next().unwrap().to_string();
        std::fs::write(dir.path().join("experiment.toml"), text).unwrap();
        let m = run_json(
            &dir.path().join("experiment.toml"),
            &dir.path().join("runs"),
            &["--bootstrap", "200"],
        );
        (dir, m)
    };
    let (_a, without) = run(false);
    let (_b, with) = run(true);
    // Every leaf of the run without the files is in the run with them, with the same value.
    fn leaves(v: &Value, at: String, out: &mut Vec<(String, Value)>) {
        match v {
            Value::Object(o) => o
                .iter()
                .for_each(|(k, v)| leaves(v, format!("{at}.{k}"), out)),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, v)| leaves(v, format!("{at}.{i}"), out)),
            _ => out.push((at, v.clone())),
        }
    }
    let (mut before, mut after) = (Vec::new(), Vec::new());
    leaves(&without["review"], String::new(), &mut before);
    leaves(&with["review"], String::new(), &mut after);
    let after: std::collections::HashMap<String, Value> = after.into_iter().collect();
    assert!(before.len() > 500, "{} leaves", before.len());
    for (path, value) in &before {
        // An adjusted p-value is a figure of its family, and the files add the controls'
        // deltas to the table's family (docs/guides/ab-rubric-change.md): it may only grow.
        if path.ends_with(".p_adjusted") {
            let (b, a) = (value.as_f64().unwrap(), after[path].as_f64().unwrap());
            assert!(a >= b, "review{path}: {a} < {b}");
            continue;
        }
        assert_eq!(after.get(path), Some(value), "review{path}");
    }
    // The controls' figures are added, and with the controls off they change nothing.
    let t = &with["review"]["arms"]["treatment"];
    assert_eq!(t["skipped_targets"], 0);
    assert_eq!(t["validation_selected"], 0.0);
    assert_eq!(t["externalized"], t["actionable"]);
    assert!(t["on_suppressed_line"].as_f64().unwrap() > 0.0);
    assert!(without["review"]["arms"]["treatment"]
        .get("externalized")
        .is_none());
}

/// With trusted judges, the judges' ratings of what the validator rejected and validated are
/// reported; the example's validator rejects weak findings, so the rejected rate lower.
#[test]
fn trusted_judges_rate_what_the_validator_rejected_and_kept() {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/code-review-ab");
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&from, dir.path());
    // Loosen the spread ceiling so that the one contested item no longer distrusts the judges.
    let path = dir.path().join("experiment.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("spread_ceiling = 0.5", "spread_ceiling = 1.0");
    std::fs::write(&path, text).unwrap();
    let m = run_json(&path, &dir.path().join("runs"), &["--bootstrap", "100"]);
    assert_eq!(m["trust"]["trustworthy"], true, "{}", m["trust"]);
    let t = &m["review"]["arms"]["treatment"];
    let (rejected, validated) = (n(&t["rejected_composite"]), n(&t["validated_composite"]));
    assert!(rejected < validated, "{rejected} vs {validated}");
    assert!(m["review"]["arms"]["baseline"]["rejected_composite"].is_null());
    assert!(m["review"].get("withheld").is_none_or(Value::is_null));
}

/// A validator output that is not a verdict is not a refusal: `validate` lists it as a call a
/// run counts as failed, and `run` replays the corpus.
#[test]
fn validate_lists_a_malformed_validator_output_as_a_failed_call() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/code-review-ab");
    // Like a malformed finding, it is a problem: exit 2.
    let out = calibench()
        .arg("validate")
        .arg(&corpus)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{v}");
    assert_eq!(problems[0]["kind"], "failed_call");
    assert_eq!(problems[0]["field"], "field `validated`");
    assert!(problems[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("validations.jsonl"));
    calibench()
        .arg("validate")
        .arg(&corpus)
        .assert()
        .stdout(predicate::str::contains(
            "1 validator output that a run counts as failed",
        ));
}

// Issue 50: anchor calibration lists anchor values in their numeric order (50, 75, 100), not
// as their text sorts ("100" before "50").
#[test]
fn anchor_calibration_is_in_the_order_of_the_values() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
    let dir = tempfile::tempdir().unwrap();
    let m = run_json(
        &root.join("doc-review-live/experiment.toml"),
        &dir.path().join("runs"),
        &["--bootstrap", "50"],
    );
    let values: Vec<&str> = m["review"]["arms"]["treatment"]["anchor_calibration"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["50", "75", "100"]);
}
