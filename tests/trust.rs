//! `calibench trust` end to end, and the trust gate inside `calibench run`: the verdict, its
//! reasons, the exit statuses, and the withholding of every judge-derived figure.

use std::path::Path;

mod common;

use common::{calibench, json_of, run_into};
use predicates::prelude::*;
use serde_json::{json, Value};

/// One item judged by judges a, b, c… with one score each on `real` (None: a failed judge).
fn item(id: &str, arm: &str, scores: &[Option<f64>]) -> String {
    let verdicts: Vec<Value> = scores
        .iter()
        .enumerate()
        .map(|(j, s)| {
            let model = format!("judge-{}", (b'a' + j as u8) as char);
            match s {
                Some(x) => json!({"model": model, "per_dimension": {"real": x}}),
                None => json!({"model": model, "per_dimension": null}),
            }
        })
        .collect();
    json!({"item_id": id, "arm": arm, "verdicts": verdicts}).to_string() + "\n"
}

fn write(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("verdicts.jsonl");
    std::fs::write(&p, text).unwrap();
    p
}

fn agreeing() -> String {
    [
        item("i1", "b", &[Some(0.1), Some(0.1), Some(0.1)]),
        item("i2", "b", &[Some(0.9), Some(0.9), Some(0.9), None]),
        item("i3", "b", &[Some(0.5), Some(0.5), Some(0.5)]),
    ]
    .concat()
}

#[test]
fn agreeing_judges_are_trusted_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), &agreeing());
    let out = calibench()
        .arg("trust")
        .arg(&p)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["trustworthy"], true);
    assert_eq!(v["trust_reasons"], json!([]));
    assert_eq!(v["inter_rater_reliability"], 1.0);
    let spreads: Vec<f64> = v["per_item_spread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["spread"].as_f64().unwrap())
        .collect();
    assert_eq!(spreads, [0.0, 0.0, 0.0]);
    // The failed judge on i2 is dropped: 3 survivors of 4.
    assert_eq!(v["per_item_spread"][1]["survivors"], 3);
    calibench()
        .arg("trust")
        .arg(&p)
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("trustworthy"));
}

#[test]
fn a_contested_item_is_named_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let text = agreeing() + &item("i4", "b", &[Some(0.2), Some(1.0), Some(0.6)]);
    let p = write(dir.path(), &text);
    calibench()
        .arg("trust")
        .arg(&p)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("not trustworthy"))
        .stdout(predicate::str::contains(
            "(2) item i4 spread 0.80 > 0.5 — raters split",
        ));
    // Every threshold from the command line: a ceiling of 0.8 is not exceeded by 0.80.
    calibench()
        .arg("trust")
        .arg(&p)
        .args(["--spread-ceiling", "0.8"])
        .assert()
        .code(0);
    let out = calibench()
        .arg("trust")
        .arg(&p)
        .args(["--spread-ceiling", "0.8", "--irr-floor", "0.95"])
        .args(["--min-survivors", "4", "--level", "ordinal", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reasons: Vec<&str> = v["trust_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        reasons[0].starts_with("(1) IRR ") && reasons[0].ends_with(" < 0.95"),
        "{reasons:?}"
    );
    assert!(reasons.contains(&"(3) item i1: 3 surviving raters < 4"));
    assert_eq!(v["thresholds"]["level"], "ordinal");
}

#[test]
fn two_raters_and_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), &item("i1", "b", &[Some(0.5), Some(0.5)]));
    calibench()
        .arg("trust")
        .arg(&p)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "(3) item i1: 2 surviving raters < 3",
        ));
    let p = write(dir.path(), "\n");
    calibench()
        .arg("trust")
        .arg(&p)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("no evidence to trust"));
    let p = write(dir.path(), "{\"item_id\": \"x\", \"arm\": \"b\", \"verdicts\": [{\"model\": \"a\", \"per_dimension\": {\"real\": \"high\"}}]}\n");
    calibench()
        .arg("trust")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "verdicts.jsonl:1: field `verdicts[0].per_dimension.real`",
        ));
    calibench()
        .arg("trust")
        .arg(&p)
        .args(["--spread-ceiling", "-1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--spread-ceiling"));
}

#[test]
fn example_runs_show_the_lift_or_withhold_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |name: &str| -> (Value, Value) {
        let metrics = json_of(
            run_into(
                dir.path().join("runs"),
                root.join(format!("corpora/{name}/experiment.toml")),
            )
            .args(["--run-id", name, "--json"]),
        );
        let trust: Value = serde_json::from_slice(
            &std::fs::read(dir.path().join("runs").join(name).join("trust.json")).unwrap(),
        )
        .unwrap();
        (metrics, trust)
    };

    // Document review: the judges agree; the lift is reported with its interval, and so is
    // precision.
    let (m, t) = run("doc-review-ab");
    assert_eq!(m["trust"]["trustworthy"], true);
    assert_eq!(t["trustworthy"], true);
    let lift = &m["lift"];
    assert_eq!(lift["withheld"], false);
    assert_eq!(lift["items"], 4);
    let (v, lo, hi) = (
        lift["value"].as_f64().unwrap(),
        lift["ci"][0].as_f64().unwrap(),
        lift["ci"][1].as_f64().unwrap(),
    );
    assert!(lo <= v && v <= hi);
    assert!(m["review"]["arms"]["treatment"]["precision"].is_number());
    assert!(m["agreement"]["judges"]["alpha"].as_f64().unwrap() > 0.2);
    assert!(m["agreement"]["judges"]["ci"].is_object());

    // Code review: one judge split on one change; everything judge-derived is withheld, the
    // mechanical metrics stay.
    let (m, t) = run("code-review-ab");
    assert_eq!(m["trust"]["trustworthy"], false);
    let reasons = m["trust"]["trust_reasons"].as_array().unwrap();
    assert!(reasons
        .iter()
        .any(|r| r.as_str().unwrap().contains("item pr-1860-payment-retry")));
    assert_eq!(m["lift"]["withheld"], true);
    assert!(m["lift"]["value"].is_null() && m["lift"]["ci"].is_null());
    assert_eq!(m["lift"]["reasons"], m["trust"]["trust_reasons"]);
    assert_eq!(t["lift"]["withheld"], true);
    let arm = &m["review"]["arms"]["treatment"];
    assert!(arm["precision"].is_null());
    assert_eq!(arm["anchor_calibration"], json!([]));
    assert!(m["review"]["delta"].get("precision").is_none());
    // With the precision controls, the judges' ratings of what the validator rejected and
    // validated are judge-derived too.
    assert_eq!(
        m["review"]["withheld"]["metrics"],
        json!([
            "precision",
            "anchor_calibration",
            "rejected_composite",
            "validated_composite"
        ])
    );
    assert!(arm["rejected_composite"].is_null() && arm["validated_composite"].is_null());
    assert!(arm["distinct_values_mean"].is_number());
    assert!(m["review"]["delta"]["distinct_values"].is_object());
}

#[test]
fn verdicts_filed_under_no_arm_refuse_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("experiment.toml"),
        "name = \"t\"\n[arms.baseline]\nsource = \"v1\"\n[arms.treatment]\nsource = \"v2\"\n",
    )
    .unwrap();
    write(dir.path(), &agreeing());
    run_into(dir.path().join("runs"), dir.path().join("experiment.toml"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "verdict lines are filed under a label neither arm reads, and would silently leave the run: `b`",
        ))
        .stderr(predicate::str::contains("the file's labels: b"))
        // Verdicts alone replay nothing: refused for that too (issue 34).
        .stderr(predicate::str::contains("nothing would be replayed"));
    // An empty verdict set refuses the run too: no silent pass.
    write(dir.path(), "");
    run_into(dir.path().join("runs"), dir.path().join("experiment.toml"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no evidence to trust"));
    assert!(!dir.path().join("runs").exists());
}

// Regression (issue 21): one judge listed three times per item passed as "trustworthy, IRR
// 0.980": its agreement with itself was read as agreement between judges.
#[test]
fn a_judge_listed_twice_in_an_item_is_refused_by_trust() {
    let dir = tempfile::tempdir().unwrap();
    let v = |score: f64| json!({"model": "judge-a", "per_dimension": {"real": score}});
    let line = json!({"item_id": "i1", "arm": "b", "verdicts": [v(1.0), v(1.0), v(0.9)]});
    std::fs::write(dir.path().join("verdicts.jsonl"), format!("{line}\n")).unwrap();
    calibench()
        .arg("trust")
        .arg(dir.path().join("verdicts.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "judge `judge-a` is listed a second time",
        ));
}

// The report's table of the items the judges split on names each item's arm as the experiment
// does (baseline, treatment), with the recorded label beside it where the two differ.
#[test]
fn the_split_items_table_names_the_arms_and_their_labels() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quickstart");
    for file in ["experiment.toml", "reviews.jsonl", "verdicts.jsonl"] {
        let text = std::fs::read_to_string(fixture.join(file)).unwrap();
        let text = if file == "experiment.toml" {
            text.replace("source = \"baseline\"", "source = \"v1\"")
                .replace("source = \"treatment\"", "source = \"v2\"")
        } else {
            text.replace("\"arm\": \"baseline\"", "\"arm\": \"v1\"")
                .replace("\"arm\": \"treatment\"", "\"arm\": \"v2\"")
        };
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    let m = json_of(
        run_into(dir.path().join("runs"), dir.path().join("experiment.toml")).args([
            "--json",
            "--no-plots",
            "--run-id",
            "r",
        ]),
    );
    let spread = &m["trust"]["per_item_spread"][0];
    assert!(
        spread["side"] == "baseline" || spread["side"] == "treatment",
        "{spread}"
    );
    let md = std::fs::read_to_string(dir.path().join("reports/r/report.md")).unwrap();
    let table = md
        .split("The items the judges split on most.")
        .nth(1)
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        table.contains("| baseline (v1) |") || table.contains("| treatment (v2) |"),
        "{table}"
    );
}
