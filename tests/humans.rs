//! Human labels in a corpus (labels.jsonl): the alt-test of each judge and of the panel, the
//! judges' error correlations, `[trust] alt_test = "require"`, `calibench trust --labels`, the
//! gate paths, and every refusal, on a corpus `calibench init` writes with labels added by hand.

mod common;

use std::path::{Path, PathBuf};

use common::{calibench, json_of, run_into, stdout_of};
use serde_json::{json, Value};

/// A doc corpus from `calibench init`, and its verdict items.
fn corpus(root: &Path) -> (PathBuf, Vec<Value>) {
    let dir = root.join("corpus");
    calibench()
        .arg("init")
        .arg(&dir)
        .args(["--kind", "doc"])
        .assert()
        .success();
    let items = std::fs::read_to_string(dir.join("verdicts.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (dir, items)
}

/// One judge's score on an item's dimension.
fn score(item: &Value, judge: &str, dim: &str) -> f64 {
    item["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["model"] == judge)
        .unwrap()["per_dimension"][dim]
        .as_f64()
        .unwrap()
}

/// Labels on every item by ann-1..3, each the value `label(item, dimension)`, and ann-4's on
/// the first 5 items only.
fn labels(items: &[Value], label: impl Fn(&Value, &str) -> f64) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        for who in ["ann-1", "ann-2", "ann-3", "ann-4"] {
            if who == "ann-4" && i >= 5 {
                continue;
            }
            let line = json!({"item_id": item["item_id"], "arm": item["arm"], "annotator": who,
                "per_dimension": {"real": label(item, "real"), "important": label(item, "important")}});
            out += &format!("{line}\n");
        }
    }
    out
}

/// Replaces `from` by `to` in the file `path`; returns its text as it was.
fn edit(path: &Path, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, text.replace(from, to)).unwrap();
    text
}

/// Adds `lift_human = "increase"` to the experiment's `[decision]`; returns the experiment file
/// and its text as it was.
fn decide_on_lift_human(dir: &Path) -> (PathBuf, String) {
    let exp = dir.join("experiment.toml");
    let text = edit(
        &exp,
        "[decision]\n",
        "[decision]\nlift_human = \"increase\"\n",
    );
    (exp, text)
}

fn run(root: &Path, dir: &Path) -> Value {
    json_of(run_into(root.join("runs"), dir.join("experiment.toml")).args(["--no-plots", "--json"]))
}

fn refused(args: &[&Path]) -> String {
    let mut cmd = calibench();
    for a in args {
        cmd.arg(a);
    }
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_judge_the_annotators_agree_with_passes_and_the_section_is_reported() {
    let root = tempfile::tempdir().unwrap();
    let (dir, items) = corpus(root.path());
    // The annotators give judge-a's scores: leaving one out, judge-a ties it on every unit.
    std::fs::write(
        dir.join("labels.jsonl"),
        labels(&items, |i, d| score(i, "judge-a", d)),
    )
    .unwrap();
    let m = run(root.path(), &dir);
    let h = &m["humans"];
    assert_eq!(h["annotators"], 4);
    assert_eq!(h["items"], items.len());
    assert_eq!(h["units"], 2 * items.len());
    assert_eq!(h["epsilon"], 0.2);
    let a = &h["alt_test"]["judge-a"];
    assert_eq!(a["passed"], true, "{a}");
    assert_eq!(a["winning_rate"], 1.0);
    // ann-4 labelled 10 units, fewer than the 30 the test needs: listed, not tested.
    assert_eq!(a["skipped_humans"], json!(["ann-4"]));
    assert_eq!(a["humans"].as_array().unwrap().len(), 3);
    for who in ["judge-b", "judge-c", "panel"] {
        assert!(h["alt_test"][who]["winning_rate"].is_number(), "{who}: {h}");
    }
    // judge-a's errors are 0 everywhere: its correlations are undefined, the others' defined.
    assert_eq!(h["error_correlation"]["judge-a"]["judge-b"], Value::Null);
    assert!(h["error_correlation"]["judge-b"]["judge-c"].is_number());
    assert!(h["effective_judges"].as_f64().unwrap() >= 1.0);
    // Reported only: the verdict has its three checks.
    assert_eq!(m["trust"]["trustworthy"], true);

    let run_id = m["run_id"].as_str().unwrap();
    let report =
        std::fs::read_to_string(root.path().join("reports").join(run_id).join("report.md"))
            .unwrap();
    assert!(
        report.contains("## Can a judge replace a human?"),
        "{report}"
    );
    assert!(report.contains("drawn at random"), "{report}");
    assert!(report.contains("| judge-a | passes | 1.00 |"), "{report}");

    // The gate reads the section's paths.
    let policy = root.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[[check]]\nmetric = \"humans.alt_test.judge-a.winning_rate\"\nmin = 0.5\n[[check]]\nmetric = \"humans.effective_judges\"\nmin = 1\n",
    )
    .unwrap();
    let run_dir = root.path().join("runs").join(run_id);
    calibench()
        .arg("gate")
        .arg(&run_dir)
        .arg("--policy")
        .arg(&policy)
        .env_remove("GITHUB_STEP_SUMMARY")
        .assert()
        .success();
}

#[test]
fn require_makes_the_panels_alt_test_a_fourth_trust_check() {
    let root = tempfile::tempdir().unwrap();
    let (dir, items) = corpus(root.path());
    // The annotators say the opposite of the judges: no judge, and not the panel, can stand in.
    std::fs::write(
        dir.join("labels.jsonl"),
        labels(&items, |i, d| 1.0 - score(i, "judge-a", d)),
    )
    .unwrap();
    let exp = dir.join("experiment.toml");
    edit(&exp, "alt_test = \"report\"", "alt_test = \"require\"");
    let m = run(root.path(), &dir);
    assert_eq!(m["trust"]["trustworthy"], false);
    let reasons: Vec<&str> = m["trust"]["trust_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        ["(4) panel fails the alt-test: winning rate 0.00 < 0.5 (ε 0.2)"]
    );
    // Untrusted: the lift is withheld, as for any failed check.
    assert_eq!(m["lift"]["withheld"], true);
    // The report's verdict names the check that failed, though the first three passed.
    let run_id = m["run_id"].as_str().unwrap();
    let md = std::fs::read_to_string(root.path().join("reports").join(run_id).join("report.md"))
        .unwrap();
    let verdict = md
        .lines()
        .find(|l| l.contains("The judges are not trusted"))
        .unwrap();
    assert!(
        verdict.contains(
            "(4) panel fails the alt-test: winning rate 0.00 < 0.5 (ε 0.2); their agreement, IRR"
        ),
        "{verdict}"
    );

    // "require" without labels is refused, naming the key.
    std::fs::remove_file(dir.join("labels.jsonl")).unwrap();
    let e = refused(&[Path::new("run"), &exp]);
    assert!(
        e.contains("`trust.alt_test`") && e.contains("has no labels.jsonl"),
        "{e}"
    );
}

#[test]
fn bad_labels_are_refused_naming_file_line_and_field() {
    let root = tempfile::tempdir().unwrap();
    let (dir, items) = corpus(root.path());
    let good = labels(&items[..1], |i, d| score(i, "judge-a", d));
    let first = good.lines().next().unwrap().to_string();
    let exp = dir.join("experiment.toml");
    for (line, want) in [
        (
            first.replace("\"ann-1\"", "\"judge-b\""),
            "labels.jsonl:2: field `annotator`: `judge-b` is also a judge `model` in verdicts.jsonl",
        ),
        (
            first
                .replace("\"ann-1\"", "\"ann-9\"")
                .replace("\"important\"", "\"importance\""),
            "labels.jsonl:2: field `per_dimension.importance`: `importance` is not a dimension the judges score",
        ),
        (
            first.replace("\"arm\":\"baseline\"", "\"arm\":\"v9\""),
            "labels.jsonl:2: field `arm`: 1 of 2 label lines is filed under a label neither arm reads, and would silently leave the run: `v9` (1 line, first on line 2)",
        ),
        (
            first.clone(),
            "labels.jsonl:2: field `annotator`: `ann-1` labels item `plan-a` in arm `baseline` a second time (first on line 1)",
        ),
        (
            first
                .replace("\"ann-1\"", "\"ann-9\"")
                .replace("\"real\":", "\"real\":1.5,\"x\":"),
            "labels.jsonl:2: field `per_dimension.real`: 1.5 is outside [0, 1]",
        ),
    ] {
        std::fs::write(dir.join("labels.jsonl"), format!("{first}\n{line}\n")).unwrap();
        let e = refused(&[Path::new("run"), &exp]);
        assert!(e.contains(want), "want {want}\n got {e}");
        // validate lists the same problem, on stdout, and exits 2.
        let out = calibench().arg("validate").arg(&dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let listed = String::from_utf8(out.stdout).unwrap();
        assert!(listed.contains(want), "validate: {listed}");
    }
    // Labels without the verdicts they label.
    std::fs::write(dir.join("labels.jsonl"), format!("{first}\n")).unwrap();
    std::fs::remove_file(dir.join("verdicts.jsonl")).unwrap();
    let e = refused(&[Path::new("run"), &exp]);
    assert!(e.contains("human labels, but no verdicts.jsonl"), "{e}");
}

#[test]
fn trust_with_labels_prints_the_alt_test_and_the_error_correlation() {
    let root = tempfile::tempdir().unwrap();
    let (dir, items) = corpus(root.path());
    let labels_path = dir.join("labels.jsonl");
    std::fs::write(&labels_path, labels(&items, |i, d| score(i, "judge-a", d))).unwrap();
    let verdicts = dir.join("verdicts.jsonl");
    let out = calibench()
        .arg("trust")
        .arg(&verdicts)
        .arg("--labels")
        .arg(&labels_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Can a judge replace the annotators?"),
        "{text}"
    );
    assert!(
        text.contains("judge-a  passes  winning rate 1.00"),
        "{text}"
    );
    let j = json_of(
        calibench()
            .arg("trust")
            .arg(&verdicts)
            .arg("--labels")
            .arg(&labels_path)
            .args(["--epsilon", "0.1", "--json"]),
    );
    assert_eq!(j["trustworthy"], true);
    assert_eq!(j["humans"]["epsilon"], 0.1);
    assert!(j["humans"]["alt_test"]["panel"]["winning_rate"].is_number());
    // Without --labels the output is the verdict alone, as before.
    let j = json_of(calibench().arg("trust").arg(&verdicts).arg("--json"));
    assert!(j.get("humans").is_none());

    // Labels on items no verdict has.
    let stray = root.path().join("stray.jsonl");
    std::fs::write(
        &stray,
        "{\"item_id\": \"nowhere\", \"arm\": \"baseline\", \"annotator\": \"ann-1\", \"per_dimension\": {\"real\": 1}}\n",
    )
    .unwrap();
    let e = refused(&[Path::new("trust"), &verdicts, Path::new("--labels"), &stray]);
    assert!(
        e.contains("no label falls on an item of the verdicts"),
        "{e}"
    );
    let e = refused(&[
        Path::new("trust"),
        &verdicts,
        Path::new("--epsilon"),
        Path::new("0.1"),
    ]);
    assert!(e.contains("--labels"), "{e}");
}

// The experiment's humans section and `calibench alttest` on the same units are one procedure:
// each judge's and the panel's winning rate and advantage probability agree.
#[test]
fn the_experiment_and_the_alttest_command_agree_on_the_same_units() {
    let root = tempfile::tempdir().unwrap();
    let (dir, items) = corpus(root.path());
    // Each annotator echoes one judge, so every candidate meets real disagreement.
    let mut text = String::new();
    let mut csv = String::from("unit,rater,value\n");
    for item in &items {
        let judges: Vec<&str> = ["judge-a", "judge-b", "judge-c"].to_vec();
        let mut per_dim = Vec::new();
        for (who, echo) in [
            ("ann-1", "judge-c"),
            ("ann-2", "judge-a"),
            ("ann-3", "judge-b"),
        ] {
            let line = json!({"item_id": item["item_id"], "arm": item["arm"], "annotator": who,
                "per_dimension": {"real": score(item, echo, "real"), "important": score(item, echo, "important")}});
            text += &format!("{line}\n");
            per_dim.push((who, echo));
        }
        for dim in ["real", "important"] {
            let unit = format!(
                "{}/{}/{dim}",
                item["arm"].as_str().unwrap(),
                item["item_id"].as_str().unwrap()
            );
            for (who, echo) in &per_dim {
                csv += &format!("{unit},{who},{}\n", score(item, echo, dim));
            }
            let scores: Vec<f64> = judges.iter().map(|j| score(item, j, dim)).collect();
            for (j, s) in judges.iter().zip(&scores) {
                csv += &format!("{unit},{j},{s}\n");
            }
            csv += &format!("{unit},panel,{}\n", scores.iter().sum::<f64>() / 3.0);
        }
    }
    std::fs::write(dir.join("labels.jsonl"), text).unwrap();
    let table = root.path().join("units.csv");
    std::fs::write(&table, csv).unwrap();
    let m = run(root.path(), &dir);
    let out = calibench()
        .arg("alttest")
        .arg(&table)
        .args(["--level", "interval", "--json"])
        .args([
            "--llm", "judge-a", "--llm", "judge-b", "--llm", "judge-c", "--llm", "panel",
        ])
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    for l in &lines {
        let name = l["llm"].as_str().unwrap();
        let ours = &m["humans"]["alt_test"][name];
        for key in [
            "passed",
            "winning_rate",
            "advantage_probability",
            "items",
            "humans",
        ] {
            assert_eq!(ours[key], l[key], "{name} {key}");
        }
    }
}

/// Labels on the whole-plan items (judged in both arms): the annotators see `shift` more
/// lift than the judges on each plan, with a little noise by plan.
fn plan_labels(items: &[Value], plans: &[&str], one_arm: &[&str], shift: f64) -> String {
    let mut out = String::new();
    for item in items {
        let id = item["item_id"].as_str().unwrap();
        let arm = item["arm"].as_str().unwrap();
        let labelled = plans.contains(&id) || (one_arm.contains(&id) && arm == "baseline");
        if !labelled {
            continue;
        }
        let k = id.bytes().last().unwrap() as f64 - b'a' as f64;
        let bump = if arm == "treatment" {
            shift + 0.01 * k
        } else {
            0.0
        };
        for who in ["ann-1", "ann-2"] {
            let v = |d: &str| (score(item, "judge-a", d) + bump).clamp(0.0, 1.0);
            let line = json!({"item_id": id, "arm": arm, "annotator": who,
                "per_dimension": {"real": v("real"), "important": v("important")}});
            out += &format!("{line}\n");
        }
    }
    out
}

#[test]
fn the_lift_in_human_units_decides_and_sizes_the_next_labelling() {
    let root = tempfile::tempdir().unwrap();
    let (dir, items) = corpus(root.path());
    std::fs::write(
        dir.join("labels.jsonl"),
        plan_labels(
            &items,
            &["plan-a", "plan-b", "plan-c", "plan-d", "plan-e"],
            &["plan-f"],
            0.1,
        ),
    )
    .unwrap();
    let (exp, _) = decide_on_lift_human(&dir);
    edit(&exp, "[decision]\n", "[decision]\nlift = \"increase\"\n");
    let m = run(root.path(), &dir);
    let l = &m["lift_human"];
    // Both lifts join the decision's Holm family: each adjusted p is at least its own.
    let p = l["p"].as_f64().unwrap();
    let adjusted = l["p_adjusted"].as_f64().unwrap();
    assert!(adjusted >= p && adjusted <= 1.0, "{p} {adjusted}");
    let judge = &m["lift"];
    assert!(
        judge["p_adjusted"].as_f64().unwrap() >= judge["paired"]["p_value"].as_f64().unwrap(),
        "{judge}"
    );
    // Eight plans judged in both arms: five labelled in both, plan-f in one arm only.
    assert_eq!(
        (l["labelled"].as_u64(), l["unlabelled"].as_u64()),
        (Some(5), Some(3)),
        "{l}"
    );
    assert_eq!(l["labelled_one_arm"], 1);
    for key in ["value", "ci", "lambda", "classical", "arms", "moments", "p"] {
        assert!(!l[key].is_null(), "{key}: {l}");
    }
    let lam = l["lambda"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&lam));
    // The decision reads it, as one of its metrics.
    let d = &m["decision"]["metrics"]["lift_human"];
    assert!(d.is_object(), "{}", m["decision"]);
    // The report shows the three estimates side by side.
    let run_id = m["run_id"].as_str().unwrap();
    let report =
        std::fs::read_to_string(root.path().join("reports").join(run_id).join("report.md"))
            .unwrap();
    assert!(report.contains("## Lift in human units"), "{report}");
    for row in [
        "| judge lift |",
        "| PPI++ lift (human units) |",
        "| labels alone |",
    ] {
        assert!(report.contains(row), "{row}: {report}");
    }
    assert!(report.contains("drawn at random"));

    // plan --labels-for: a width the pilot reaches, and one no labelling reaches.
    let run_dir = root.path().join("runs").join(run_id);
    let wide =
        json_of(
            calibench()
                .arg("plan")
                .arg(&run_dir)
                .args(["--labels-for", "10", "--json"]),
        );
    // The pilot's own labels already reach it: no more needed.
    assert_eq!(wide["more"], 0, "{wide}");
    assert_eq!(wide["needed"], wide["labelled"], "{wide}");
    assert!(wide["half_width"].as_f64().unwrap() <= 10.0);
    let said = stdout_of(
        calibench()
            .arg("plan")
            .arg(&run_dir)
            .args(["--labels-for", "10"]),
    );
    assert!(
        said.starts_with("no more labels needed: the pilot's "),
        "{said}"
    );
    let out = calibench()
        .arg("plan")
        .arg(&run_dir)
        .args(["--labels-for", "1e-9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(
        e.contains("even labelling all 3 judged-only pairs (")
            && e.contains("labelled in all) gives ±"),
        "{e}"
    );
}

#[test]
fn lift_human_needs_labels_and_plans_need_labelled_pairs() {
    let root = tempfile::tempdir().unwrap();
    let (dir, items) = corpus(root.path());
    let (exp, text) = decide_on_lift_human(&dir);
    // No labels.jsonl: the decision metric is refused, naming the file it needs.
    let e = refused(&[Path::new("run"), &exp]);
    assert!(
        e.contains("decision metric `lift_human` needs labels.jsonl"),
        "{e}"
    );
    // Labels on findings only: no lift pair is labelled, the plan says so.
    std::fs::write(&exp, text).unwrap();
    std::fs::write(
        dir.join("labels.jsonl"),
        labels(&items[1..4], |i, d| score(i, "judge-a", d)),
    )
    .unwrap();
    let m = run(root.path(), &dir);
    assert_eq!(m["lift_human"]["labelled"], 0);
    assert_eq!(m["lift_human"]["value"], Value::Null);
    let run_dir = root.path().join("runs").join(m["run_id"].as_str().unwrap());
    let e = refused(&[
        Path::new("plan"),
        &run_dir,
        Path::new("--labels-for"),
        Path::new("0.1"),
    ]);
    assert!(e.contains("0 pairs labelled in both arms"), "{e}");
}
