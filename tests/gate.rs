//! The CI regression gate (docs/guides/ci-gate.md): every example passes its own policy; each kind of bound
//! fails on the wrong side with metric, value and bound named; missing metrics and untrusted
//! judges fail; bad policies exit 2 before anything runs; JUnit parses with the right counts;
//! `accept` stores a baseline; and the metric schema matches what runs write.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod common;

use calibench::gate::schema::{self, Leaf, MetricPath};
use common::{calibench, examples_names, run_into};
use predicates::prelude::*;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn experiment(name: &str) -> PathBuf {
    root().join(format!("corpora/{name}/experiment.toml"))
}

/// Every example run once for the whole file: `<dir>/runs/<name>`.
fn runs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gate-examples");
        let _ = std::fs::remove_dir_all(&dir);
        for name in examples_names() {
            run_into(dir.join("runs"), experiment(name))
                .args(["--run-id", name, "--bootstrap", "200", "--no-plots", "-q"])
                .assert()
                .success();
        }
        dir.join("runs")
    })
}

fn run_dir(name: &str) -> PathBuf {
    runs().join(name)
}

/// A policy file in a fresh temporary directory.
/// `calibench gate` of the doc-review example under the policy at `path`, its runs in `runs`,
/// its reports in `dir/reports` and its JUnit in `junit`.
fn gate_doc_review(path: &Path, dir: &Path, runs: &Path, junit: &Path) -> assert_cmd::Command {
    let mut cmd = calibench();
    cmd.arg("gate")
        .arg(experiment("doc-review-ab"))
        .arg("--policy")
        .arg(path)
        .arg("--runs-dir")
        .arg(runs)
        .arg("--reports-dir")
        .arg(dir.join("reports"))
        .arg("--junit")
        .arg(junit);
    cmd
}

fn policy(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gate.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// `calibench gate RUN --policy FILE`, returning exit code and stdout.
fn gate(run: &Path, policy: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = calibench()
        .arg("gate")
        .arg(run)
        .arg("--policy")
        .arg(policy)
        .args(extra)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn every_example_passes_its_own_gate() {
    let dir = tempfile::tempdir().unwrap();
    for name in examples_names() {
        let out = calibench()
            .arg("gate")
            .arg(root().join("corpora").join(name))
            .arg("--runs-dir")
            .arg(dir.path().join("runs"))
            .arg("--reports-dir")
            .arg(dir.path().join("reports"))
            .args(["--bootstrap", "200", "--no-plots"])
            .env_remove("GITHUB_STEP_SUMMARY")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with(&format!("gate passed: {name}-")), "{out}");
        assert!(
            out.contains(&format!(
                "policy: {}",
                root()
                    .join(format!("corpora/{name}/experiment.toml [gate]"))
                    .display()
            )),
            "{out}"
        );
        assert!(out.contains("(run now)"), "{out}");
        assert!(!out.contains("FAIL"), "{out}");
    }
    // Each gate run wrote its run directory and report.
    assert_eq!(
        std::fs::read_dir(dir.path().join("runs")).unwrap().count(),
        examples_names().len()
    );
}

#[test]
fn each_kind_of_bound_fails_on_the_wrong_side_and_names_it() {
    let doc = run_dir("doc-review-ab");
    let accepted = root().join("corpora/doc-review-ab/accepted/metrics.json");
    let accepted_value: Value =
        serde_json::from_str(&std::fs::read_to_string(&accepted).unwrap()).unwrap();
    let precision = accepted_value["review"]["arms"]["treatment"]["precision"]
        .as_f64()
        .unwrap();
    // A fake accepted run whose precision was 0.1 better and whose promotion rate was 0.2 lower.
    let (dir, _) = policy("");
    let mut better = accepted_value.clone();
    better["review"]["arms"]["treatment"]["precision"] = (precision + 0.1).into();
    let promotion = better["review"]["arms"]["treatment"]["promotion_rate"]
        .as_f64()
        .unwrap();
    better["review"]["arms"]["treatment"]["promotion_rate"] = (promotion - 0.2).into();
    std::fs::write(dir.path().join("accepted.json"), better.to_string()).unwrap();
    let path = dir.path().join("gate.toml");
    std::fs::write(
        &path,
        r#"baseline = "accepted.json"
[[check]]
name = "judges agree"
metric = "agreement.judges.alpha"
min = 0.95
[[check]]
metric = "review.arms.treatment.distinct_values_max"
max = 3
[[check]]
metric = "review.arms.treatment.precision"
max_decrease = 0.02
[[check]]
metric = "review.arms.treatment.promotion_rate"
max_increase = 0.05
[[check]]
metric = "review.arms.baseline.distinct_values_max"
min = 5
"#,
    )
    .unwrap();
    let (code, out, err) = gate(&doc, &path, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with("gate FAILED: doc-review-ab (4 of 6 checks failed)"),
        "{out}"
    );
    let line = |name: &str| {
        out.lines()
            .find(|l| l.get(8..).is_some_and(|rest| rest.starts_with(name)))
            .unwrap_or_else(|| panic!("no line for {name} in\n{out}"))
            .to_string()
    };
    assert!(
        line("trustworthy").trim_start().starts_with("pass"),
        "{out}"
    );
    let alpha = line("judges agree");
    assert!(
        alpha.trim_start().starts_with("FAIL") && alpha.contains("< min 0.95"),
        "{alpha}"
    );
    let dispersion = line("review.arms.treatment.distinct_values_max");
    assert!(dispersion.contains("4: > max 3"), "{dispersion}");
    let fall = line("review.arms.treatment.precision");
    assert!(
        fall.contains("change -0.1): fall 0.1 > max_decrease 0.02"),
        "{fall}"
    );
    let rise = line("review.arms.treatment.promotion_rate");
    assert!(
        rise.contains("change +0.2): rise 0.2 > max_increase 0.05"),
        "{rise}"
    );
    assert!(
        line("review.arms.baseline.distinct_values_max")
            .trim_start()
            .starts_with("pass"),
        "{out}"
    );
}

#[test]
fn a_missing_or_withheld_metric_fails_as_not_found() {
    let (_dir, path) = policy(
        "require_trustworthy = false\n\
         [[check]]\nmetric = \"queries.arms.treatment.recovery_gate_rate\"\nmax = 0.2\n\
         [[check]]\nmetric = \"lift.value\"\nmin = 0\n\
         [[check]]\nmetric = \"review.arms.treatment.per_target.99.merged\"\nmax = 100\n",
    );
    let (code, out, _) = gate(&run_dir("code-review-ab"), &path, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("3 of 3 checks failed"), "{out}");
    assert!(
        out.contains("not found: the run has no `queries` section"),
        "{out}"
    );
    assert!(
        out.contains(
            "not found: `lift.value` is null because the lift is withheld; (2) item pr-1860"
        ),
        "{out}"
    );
    assert!(
        out.contains("not found: `review.arms.treatment.per_target` has 12 entries, so no `99`"),
        "{out}"
    );
}

#[test]
fn untrusted_judges_fail_the_gate_with_their_reasons() {
    let (_dir, path) = policy("require_trustworthy = true\n");
    let (code, out, _) = gate(&run_dir("code-review-ab"), &path, &[]);
    assert_eq!(code, 1, "{out}");
    let line = out.lines().find(|l| l.contains("trustworthy")).unwrap();
    assert!(
        line.contains("FAIL") && line.contains("the judges are not trustworthy: "),
        "{line}"
    );
    // A run without judges has no verdict to trust: that fails too, and says what to do.
    let (code, out, _) = gate(&run_dir("capacity-50"), &path, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("set require_trustworthy = false"), "{out}");
}

#[test]
fn bad_policies_exit_2_before_anything_runs_or_is_written() {
    for (text, needle) in [
        (
            "[[check]]\nmetric = \"agreement.judges.alpha\"\nminimum = 0.6\n",
            "gate.toml:3: `check.0.minimum`: unknown key `minimum`",
        ),
        (
            "[[check]]\nmetric = \"queries.arms.treatment.calibration.eec\"\nmax = 0.2\n",
            "gate.toml:2: `check.metric`: `queries.arms.treatment.calibration` has no `eec`; did you mean `ece`?",
        ),
        (
            "[[check]]\nmetric = \"review.arms.treatment.distinct_values\"\nmax = 3\n",
            "has no `distinct_values`; did you mean `distinct_values_max` or `distinct_values_mean`?",
        ),
        ("require_trustworthy = false\n", "the gate checks nothing"),
    ] {
        let (dir, path) = policy(text);
        let junit = dir.path().join("junit.xml");
        let runs = dir.path().join("runs");
        let out = gate_doc_review(&path, dir.path(), &runs, &junit)
            .env_remove("GITHUB_STEP_SUMMARY")
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(needle), "{text:?}:\n{err}");
        assert!(out.stdout.is_empty());
        assert!(!runs.exists(), "{text:?} ran the experiment");
        assert!(!junit.exists(), "{text:?} wrote JUnit");
    }
}

// Issue 35: a check bounding a change against an accepted run that is not there yet refused the
// gate (exit 2) before the run was made, so a project's first run could never be made and
// accepted. The gate runs the experiment, fails those checks saying so, judges the others, and
// says how to accept the run.
#[test]
fn a_first_run_without_an_accepted_run_is_gated_and_says_how_to_accept_it() {
    let (dir, path) = policy(
        "[[check]]\nmetric = \"lift.value\"\nmax_decrease = 0.02\nbaseline = \"accepted/metrics.json\"\n[[check]]\nmetric = \"agreement.judges.alpha\"\nmin = 0.667\n",
    );
    let runs = dir.path().join("runs");
    let junit = dir.path().join("junit.xml");
    let out = gate_doc_review(&path, dir.path(), &runs, &junit)
        .args(["--run-id", "first"])
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        runs.join("first/metrics.json").is_file(),
        "the run was made"
    );
    assert!(text.contains("FAIL  lift.value"), "{text}");
    assert!(text.contains("no accepted run yet"), "{text}");
    assert!(text.contains("pass  agreement.judges.alpha"), "{text}");
    assert!(
        text.contains(&format!(
            "store it with `calibench accept {} --to {}`",
            runs.join("first").display(),
            dir.path().join("accepted").display()
        )),
        "{text}"
    );
    assert!(std::fs::read_to_string(&junit)
        .unwrap()
        .contains("no accepted run yet"));
    // Accepted as it says, the next gate compares against it and passes.
    calibench()
        .arg("accept")
        .arg(runs.join("first"))
        .arg("--to")
        .arg(dir.path().join("accepted"))
        .assert()
        .success();
    calibench()
        .arg("gate")
        .arg(runs.join("first"))
        .arg("--policy")
        .arg(&path)
        .env_remove("GITHUB_STEP_SUMMARY")
        .assert()
        .success();
}

#[test]
fn a_bad_gate_table_refuses_the_experiment_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("experiment.toml");
    let text = std::fs::read_to_string(experiment("doc-review-ab"))
        .unwrap()
        .replace("min = 0.667", "mini = 0.667")
        .replace(
            "corpus = \".\"",
            &format!(
                "corpus = {:?}",
                root().join("corpora/doc-review-ab").display().to_string()
            ),
        );
    let line = text.lines().position(|l| l.starts_with("mini")).unwrap() + 1;
    std::fs::write(&exp, text).unwrap();
    for args in [vec!["gate"], vec!["run"], vec!["validate"]] {
        let assert = calibench()
            .current_dir(dir.path())
            .args(&args)
            .arg(&exp)
            .assert()
            .code(2);
        // validate lists problems on stdout (they are its result); the others on stderr.
        let out = assert.get_output();
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains(&format!(
                "experiment.toml:{line}: `gate.check.0.mini`: unknown key `mini` — did you mean `min`?"
            )),
            "{args:?}: {text}"
        );
        assert!(!dir.path().join("runs").exists(), "{args:?} wrote a run");
    }
}

#[test]
fn junit_and_summary_carry_every_check() {
    let (dir, path) = policy(
        "[[check]]\nmetric = \"agreement.judges.alpha\"\nmin = 0.667\n\
         [[check]]\nname = \"dispersion <anchored> & \\\"quoted\\\"\"\nmetric = \"review.arms.treatment.distinct_values_max\"\nmax = 3\n",
    );
    let junit = dir.path().join("out/junit.xml");
    let summary = dir.path().join("out/summary.md");
    let step = dir.path().join("step-summary.md");
    std::fs::write(&step, "earlier step\n").unwrap();
    let out = calibench()
        .arg("gate")
        .arg(run_dir("doc-review-ab"))
        .arg("--policy")
        .arg(&path)
        .arg("--junit")
        .arg(&junit)
        .arg("--summary")
        .arg(&summary)
        .env("GITHUB_STEP_SUMMARY", &step)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(&format!("wrote:  {}", junit.display())),
        "{out}"
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites = doc.root_element();
    assert_eq!(suites.tag_name().name(), "testsuites");
    assert_eq!(suites.attribute("tests"), Some("3"));
    assert_eq!(suites.attribute("failures"), Some("1"));
    let suite = suites
        .children()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("name"), Some("doc-review-ab"));
    assert_eq!(suite.attribute("tests"), Some("3"));
    assert_eq!(suite.attribute("failures"), Some("1"));
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 3);
    let names: Vec<&str> = cases.iter().filter_map(|c| c.attribute("name")).collect();
    assert_eq!(
        names,
        [
            "trustworthy",
            "agreement.judges.alpha",
            "dispersion <anchored> & \"quoted\""
        ]
    );
    let failures: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .collect();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].attribute("type"), Some("bound"));
    assert_eq!(failures[0].attribute("message"), Some("4: > max 3"));
    assert!(failures[0]
        .text()
        .unwrap()
        .contains("review.arms.treatment.distinct_values_max"));

    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.starts_with("### calibench gate: doc-review-ab — **failed** (1 of 3 checks)"),
        "{md}"
    );
    assert_eq!(md.matches("\n| pass |").count(), 2, "{md}");
    assert_eq!(md.matches("\n| **FAIL** |").count(), 1, "{md}");
    let step = std::fs::read_to_string(&step).unwrap();
    assert_eq!(step, format!("earlier step\n{md}"));
}

#[test]
fn json_output_is_the_whole_answer() {
    let (_dir, path) = policy("[[check]]\nmetric = \"lift.ci.0\"\nmin = 0\n");
    let (code, out, _) = gate(&run_dir("doc-review-ab"), &path, &["--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["passed"], true);
    assert_eq!(v["failed"], 0);
    assert_eq!(v["run_id"], "doc-review-ab");
    assert_eq!(v["ran"], false);
    let checks = v["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2);
    assert_eq!(checks[1]["metric"], "lift.ci.0");
    assert!(checks[1]["value"].as_f64().unwrap() > 0.0);
    assert_eq!(checks[1]["bounds"][0]["kind"], "min");
}

#[test]
fn a_run_directory_is_gated_by_the_policy_of_its_experiment() {
    // The runs were made with absolute experiment paths, so the manifest points back at the
    // example and its [gate] table (whose accepted runs are the committed ones).
    let out = calibench()
        .arg("gate")
        .arg(run_dir("capacity-50"))
        .env_remove("GITHUB_STEP_SUMMARY")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("experiment.toml [gate]"), "{out}");
    assert!(!out.contains("(run now)"), "{out}");
}

// Regression (issue 21): after `run corpora/<name>` (a folder, not a file), `gate runs/<id>`
// failed: the manifest named the folder and the gate wanted a file.
#[test]
fn a_run_made_from_an_experiment_folder_is_gated_by_its_policy() {
    let dir = tempfile::tempdir().unwrap();
    let folder = root().join("corpora/capacity-50");
    run_into(dir.path().join("runs"), &folder)
        .args(["--run-id", "by-folder", "--no-plots"])
        .assert()
        .success();
    let run = dir.path().join("runs/by-folder");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["experiment_file"].as_str().unwrap(),
        folder.join("experiment.toml").display().to_string()
    );
    // A manifest written before the fix names the folder itself: still gated.
    let mut old = manifest.clone();
    old["experiment_file"] = folder.display().to_string().into();
    std::fs::write(run.join("manifest.json"), old.to_string()).unwrap();
    calibench()
        .arg("gate")
        .arg(&run)
        .env_remove("GITHUB_STEP_SUMMARY")
        .assert()
        .success()
        .stdout(predicate::str::contains("experiment.toml [gate]"));
}

#[test]
fn gate_refuses_what_is_neither_a_run_nor_an_experiment() {
    let dir = tempfile::tempdir().unwrap();
    calibench()
        .arg("gate")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "holds neither metrics.json (a run directory) nor experiment.toml",
        ));
    calibench()
        .arg("gate")
        .arg(dir.path().join("nope"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not exist"));
    // A metrics.json calibench did not write, or not JSON at all.
    let (_p, trust_only) = policy("");
    let metrics = dir.path().join("metrics.json");
    for (text, needle) in [
        (
            "{\"ece\": 0.1}",
            "metrics.json: `run_id`: is not a calibench metrics.json",
        ),
        ("{\"ece\": 0.1,\n", "metrics.json:2: is not valid JSON"),
    ] {
        std::fs::write(&metrics, text).unwrap();
        let (code, _, err) = gate(dir.path(), &trust_only, &[]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    std::fs::remove_file(&metrics).unwrap();
    // A corpus without a policy.
    let exp = dir.path().join("experiment.toml");
    std::fs::write(&exp, "[arms.baseline]\n[arms.treatment]\n").unwrap();
    calibench()
        .arg("gate")
        .arg(&exp)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "has no [gate] table, and no gate.toml is beside it",
        ));
}

#[test]
fn accept_stores_a_baseline_that_gates_compare_against() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let src = run_dir("capacity-50");
    let copy = runs.join("capacity-50");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["metrics.json", "manifest.json"] {
        std::fs::copy(src.join(f), copy.join(f)).unwrap();
    }
    calibench()
        .arg("accept")
        .arg(&copy)
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "accepted capacity-50 → {}",
            runs.join("accepted/metrics.json").display()
        )));
    assert_eq!(
        std::fs::read(runs.join("accepted/metrics.json")).unwrap(),
        std::fs::read(copy.join("metrics.json")).unwrap()
    );
    // Accepting again replaces it, and says so.
    calibench()
        .arg("accept")
        .arg(&copy)
        .assert()
        .success()
        .stdout(predicate::str::contains("(it replaces capacity-50)"));
    let (_p, path) = policy(&format!(
        "require_trustworthy = false\nbaseline = {:?}\n\
         [[check]]\nmetric = \"queries.arms.treatment.calibration.ece\"\nmax_increase = 0\n",
        runs.join("accepted/metrics.json").display().to_string()
    ));
    let (code, out, _) = gate(&copy, &path, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("change 0): rise 0 ≤ max_increase 0"), "{out}");

    // It never deletes what it did not write, and never accepts onto the run itself.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    calibench()
        .arg("accept")
        .arg(&copy)
        .arg("--to")
        .arg(&other)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "holds notes.txt, which accept would delete",
        ));
    assert!(other.join("notes.txt").is_file());
    calibench()
        .arg("accept")
        .arg(&copy)
        .arg("--to")
        .arg(&copy)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is the run directory itself"));
    calibench().arg("accept").arg(dir.path()).assert().code(2);
}

/// Every value in `v` under `path`, with the path.
fn leaves(v: &Value, path: &mut Vec<String>, out: &mut Vec<(MetricPath, Value)>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                path.push(k.clone());
                leaves(child, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                path.push(i.to_string());
                leaves(child, path, out);
                path.pop();
            }
        }
        leaf => out.push((
            MetricPath {
                parts: path.clone(),
            },
            leaf.clone(),
        )),
    }
}

#[test]
fn the_schema_accepts_every_value_runs_write_and_lists_nothing_they_never_write() {
    let mut all = Vec::new();
    for name in examples_names() {
        let text = std::fs::read_to_string(run_dir(name).join("metrics.json")).unwrap();
        let mut v: Value = serde_json::from_str(&text).unwrap();
        // Caveats are read by their own type (their kind and fields), not as metric paths:
        // every one a run writes must read back as a typed caveat.
        for at in ["/inputs/caveats", "/decision/caveats"] {
            if let Some(list) = v.pointer_mut(at) {
                let read = calibench::corpus::ledger::stored::read_list(list)
                    .unwrap_or_else(|e| panic!("{name} {at}: {e}"));
                assert!(read.iter().all(|c| c.kind() != "recorded"), "{name} {at}");
                *list = Value::Array(Vec::new());
            }
        }
        leaves(&v, &mut Vec::new(), &mut all);
    }
    let mut seen = BTreeSet::new();
    for (path, value) in &all {
        // A null may stand for a whole optional table or interval (`"ci": null`).
        if value.is_null() {
            schema::node(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            seen.insert(schema::pattern_of(path).unwrap());
            continue;
        }
        let leaf = schema::leaf(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let fits = match value {
            Value::Number(_) => leaf == Leaf::Number,
            Value::Bool(_) => leaf == Leaf::Bool,
            Value::String(_) => leaf == Leaf::Text,
            _ => false,
        };
        assert!(fits, "{path} holds {value} but the schema says {leaf:?}");
        seen.insert(schema::pattern_of(path).unwrap());
    }
    // Paths the examples never write: notes that explain an undefined figure, the note of a
    // replayed unfinished collection, and Wilson intervals on query deltas (the type is shared
    // with review deltas, where rates carry them). The tree is derived from the types, so it
    // cannot list a field they lack; this direction catches a type that grew a field no run
    // ever fills.
    let optional = [
        // Why a bias check was not made: every example with verdicts makes the arm and length
        // checks (the position and self notes are written).
        "bias.arm.note",
        "bias.length.note",
        // A relative change is a review or query delta's of cost and latency; the type is
        // shared with score deltas, which have no cost. A percentile's interval needs 72
        // targets that report their wall time: tests/cost.rs makes them.
        "review.arms.<arm>.ci.<key>.{0|1}",
        "scores.arms.<arm>.ci.<key>.{0|1}",
        // The imported example's Inspect logs record tokens and time but no cost;
        // tests/import.rs compares promptfoo cells, whose rows carry it.
        "scores.arms.<arm>.item_cost_usd_mean",
        "scores.delta.<key>.relative.ci.{0|1}",
        "scores.delta.<key>.relative.value",
        "queries.delta.<query-delta>.relative.p_edge",
        "scores.delta.<key>.relative.p_edge",
        // Checked by their own type above.
        "decision.caveats.<i>",
        "inputs.caveats.<i>",
        "incomplete",
        "queries.delta.<query-delta>.wilson.<arm>.{0|1}",
        "trust.irr_note",
        "lift.note",
        "agreement.judges.undefined_reason",
        "agreement.reviewers.<arm>.undefined_reason",
        "agreement.runs.<arm>.undefined_reason",
    ];
    // Imported scores: the example (two real single-epoch logs with one mechanical scorer) has
    // no repeats, confidences, missing samples or judge panel; tests/scores_run.rs runs a
    // corpus with all four and checks these figures by hand. McNemar counts belong to scorer
    // deltas only (the type is shared, as with Wilson intervals).
    let optional_under = [
        "agreement.repeats.",
        "scores.arms.<arm>.scorers.<key>.calibration.",
        "scores.arms.<arm>.scorers.<key>.confidence_without_outcome",
        "scores.arms.<arm>.scorers.<key>.missing_reasons.",
        "scores.judges.",
        "scores.withheld.",
        "queries.delta.<query-delta>.mcnemar.",
        "review.delta.<review-delta>.mcnemar.",
        // A run whose arm is mostly malformed; tests/refusals.rs makes one.
        "inputs_suspect.",
        // Every line of the examples is used; tests/ledger.rs excludes lines for each reason.
        "inputs.files.<key>.excluded.",
        // The lift as a decision metric, and margins and minimum effects: tests/decision.rs
        // decides with each. A pass/fail lift's discordant items: src/trust.rs's tests.
        "lift.p_adjusted",
        "lift.paired.discordant",
        "decision.metrics.<key>.min_effect",
        // Annotators with too few labelled units, and candidates the alt-test cannot run on:
        // tests/humans.rs labels a corpus that has both.
        "humans.alt_test.<key>.skipped_humans.",
        "humans.alt_test_notes.",
        // Estimates that fell back to the labels alone, and the lift in human units as a
        // decision metric: tests/humans.rs and src/stats/ppi.rs make both.
        "anchor_calibration_human.<i>.human.note",
        "lift_human.arms.<arm>.note",
        "lift_human.note",
        "lift_human.p_adjusted",
        // A sequential decision on a withheld judged figure: tests/sequential.rs makes one.
        "sequential.withheld.",
        // The harness's noise beside a decision metric: tests/noise.rs names an A/A run.
        "decision.metrics.<key>.noise",
        // The live example records no `provenance_env` variable: tests/secrets.rs and
        // tests/noise.rs collect with some.
        "inputs.harness.<key>.env.",
        "inputs.harness.<key>.secrets.",
    ];
    let unwritten: Vec<String> = schema::patterns()
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| !optional.contains(&p.as_str()) && !seen.contains(p))
        .filter(|p| !optional_under.iter().any(|o| p.starts_with(o)))
        .collect();
    assert!(
        unwritten.is_empty(),
        "the schema lists paths no example run writes: {unwritten:#?}"
    );
}

#[test]
fn list_metrics_prints_every_pattern() {
    let out = calibench()
        .args(["gate", "--list-metrics"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    for p in [
        "agreement.judges.alpha",
        "queries.arms.<arm>.calibration.ece",
        "review.arms.<arm>.dropped_by_value.<key>",
        "lift.ci.{0|1}",
        "queries.delta.<query-delta>.delta",
        "<arm>: baseline, treatment",
    ] {
        assert!(out.lines().any(|l| l == p), "{p} not in\n{out}");
    }
}

#[test]
fn a_scoring_change_that_worsens_calibration_fails_the_examples_own_gate() {
    // The capacity review's treatment with reads weighed as little as discovery: a change to
    // how confidence is combined, replayed over the same traces and gated by the example's own
    // policy against its committed accepted run.
    let dir = tempfile::tempdir().unwrap();
    let corpus = root().join("corpora/capacity-50");
    let text = std::fs::read_to_string(corpus.join("experiment.toml")).unwrap();
    let changed = text
        .replace(
            "corpus = \".\"",
            &format!("corpus = {:?}", corpus.display().to_string()),
        )
        .replace(
            "baseline = \"accepted/metrics.json\"",
            &format!(
                "baseline = {:?}",
                corpus.join("accepted/metrics.json").display().to_string()
            ),
        )
        .replace("read = 3.0,", "read = 1.0,");
    assert_ne!(changed, text);
    let exp = dir.path().join("experiment.toml");
    std::fs::write(&exp, changed).unwrap();
    let junit = dir.path().join("junit.xml");
    let out = calibench()
        .arg("gate")
        .arg(&exp)
        .arg("--runs-dir")
        .arg(dir.path().join("runs"))
        .arg("--reports-dir")
        .arg(dir.path().join("reports"))
        .args(["--bootstrap", "200", "--no-plots", "--junit"])
        .arg(&junit)
        .env_remove("GITHUB_STEP_SUMMARY")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    let failed: Vec<&str> = out.lines().filter(|l| l.starts_with("  FAIL")).collect();
    assert_eq!(failed.len(), 1, "{out}");
    assert!(
        failed[0].contains("queries.arms.treatment.calibration.ece")
            && failed[0].contains("> max_increase 0.02"),
        "{out}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(doc.root_element().attribute("failures"), Some("1"));
}

// Regression (hostile round 3, 11): an unwritable $GITHUB_STEP_SUMMARY turned every answer into
// exit 2 with nothing on stdout. It is a warning: the answer, its status and the files asked
// for stand.
#[test]
fn an_unwritable_step_summary_is_a_warning_and_the_answer_stands() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("pass.toml");
    std::fs::write(
        &policy,
        "require_trustworthy = false\n[[check]]\nmetric = \"queries.arms.treatment.recovery_gate_rate\"\nmax = 1\n",
    )
    .unwrap();
    let junit = dir.path().join("j.xml");
    let out = calibench()
        .arg("gate")
        .arg(run_dir("capacity-50"))
        .arg("--policy")
        .arg(&policy)
        .arg("--junit")
        .arg(&junit)
        .env("GITHUB_STEP_SUMMARY", "/proc/nope/s.md")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("gate passed"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: $GITHUB_STEP_SUMMARY (/proc/nope/s.md) could not be written"),
        "{err}"
    );
    assert!(junit.is_file());
}

// Issue 50: a check that bounds a change and names no baseline compares with the accepted run
// where `calibench accept` puts it (runs/accepted), instead of refusing the policy.
#[test]
fn a_change_bound_with_no_baseline_reads_the_runs_accepted_run() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("gate.toml");
    std::fs::write(
        &policy,
        "require_trustworthy = false\n[[check]]\nmetric = \"review.arms.treatment.distinct_values_mean\"\nmax_increase = 0\n",
    )
    .unwrap();
    let runs = dir.path().join("runs");
    let junit = dir.path().join("junit.xml");
    let first = gate_doc_review(&policy, dir.path(), &runs, &junit)
        .env_remove("GITHUB_STEP_SUMMARY")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let first = String::from_utf8(first).unwrap();
    assert!(
        first.contains("no accepted run yet (")
            && first.contains("accepted/metrics.json is not there"),
        "{first}"
    );
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join("metrics.json").is_file())
        .unwrap();
    calibench().arg("accept").arg(&run).assert().success();
    gate_doc_review(&policy, dir.path(), &runs, &junit)
        .env_remove("GITHUB_STEP_SUMMARY")
        .assert()
        .success();
}
