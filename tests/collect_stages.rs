//! Live validators and judges (docs/guides/live-collection.md) with misbehaving fixtures (tests/fixtures/collect):
//! a validator or judge that hangs, prints garbage, exits non-zero, answers outside its
//! contract (a non-boolean `validated`, an extra or missing dimension, a score out of range),
//! each recorded as the spec says; an interrupted judges stage resumed to the bytes of an
//! uninterrupted one; `--stage` running the stages one at a time to the same corpus.

use std::path::{Path, PathBuf};
use std::process::{Command as Std, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::calibench;
use predicates::prelude::*;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A code-review folder: one diff per target name, the live example's reviewer, the fixture
/// validator and judge, and an experiment whose treatment validates every actionable finding.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(targets: &[&str], judges: &[&str], extra: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("diffs")).unwrap();
        let diff =
            std::fs::read(root().join("corpora/code-review-live/diffs/pr-304-upload-handler.diff"))
                .unwrap();
        for t in targets {
            std::fs::write(r.join(format!("diffs/{t}.diff")), &diff).unwrap();
        }
        std::fs::copy(
            root().join("corpora/code-review-live/reviewers/review.sh"),
            r.join("review.sh"),
        )
        .unwrap();
        for f in ["validator.sh", "judge.sh"] {
            std::fs::copy(root().join("tests/fixtures/collect").join(f), r.join(f)).unwrap();
        }
        let judges: Vec<String> = judges.iter().map(|j| format!("{j:?}")).collect();
        std::fs::write(
            r.join("experiment.toml"),
            format!(
                r#"name = "stages"
mode = "code"
corpus = "."
bootstrap = 200

[arms.baseline]
source = "float"
[arms.baseline.review]
policy = "float-gates"

[arms.treatment]
source = "anchored"
[arms.treatment.review]
policy = "anchored"
review_mode = "headless"
validation = "always"

[trust]
min_survivors = 1

[collect]
command = ["./review.sh", "{{reviewer}}", "{{target}}", "{{arm}}", "{{run}}"]
reviewers = ["correctness", "security"]
targets = "diffs/*.diff"
concurrency = 3
timeout_s = 20
retries = 0
backoff_s = 0

[collect.validators]
command = ["./validator.sh", "{{finding_id}}", "{{target}}"]
timeout_s = 1

[collect.judges]
command = ["./judge.sh", "{{judge}}", "{{item_id}}"]
judges = [{}]
items = "targets"
dimensions = ["real", "important"]
timeout_s = 1
{extra}
"#,
                judges.join(", ")
            ),
        )
        .unwrap();
        Setup { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn collect(&self, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = calibench();
        cmd.current_dir(self.root())
            .args(["collect", "experiment.toml", "--runs-dir", "runs"])
            .args(args);
        cmd
    }

    fn run_dir(&self, id: &str) -> PathBuf {
        self.root().join("runs").join(id)
    }

    fn lines(&self, id: &str, file: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.run_dir(id).join(file)).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn bytes(&self, id: &str, file: &str) -> Vec<u8> {
        std::fs::read(self.run_dir(id).join(file)).unwrap()
    }
}

#[test]
fn every_validator_failure_is_a_failed_call_with_its_reason() {
    let s = Setup::new(
        &["good", "hang", "garbage", "crash", "nobool", "other"],
        &["good"],
        "",
    );
    s.collect(&["--run-id", "v"])
        .assert()
        .success()
        .stdout(predicate::str::contains("validators"));
    let lines = s.lines("v", "validations.jsonl");
    assert!(!lines.is_empty());
    // Only the treatment validates; every line names a recorded finding of its return.
    assert!(lines.iter().all(|l| l["arm"] == "anchored"));
    for (target, reason) in [
        ("hang", "timed out: after 1 s"),
        ("garbage", "not one JSON object"),
        ("crash", "exited non-zero: status 3"),
        ("nobool", "field `validated`"),
        // Regression (issue 34): an answer about another finding is no verdict on this one.
        (
            "other",
            "the return names finding_id \"someone-else\", but the call was for",
        ),
    ] {
        let mine: Vec<&Value> = lines.iter().filter(|l| l["target"] == target).collect();
        assert!(!mine.is_empty(), "{target}");
        for l in mine {
            assert_eq!(l["status"], "failed", "{l}");
            assert!(l.get("validated").is_none(), "{l}");
            assert!(l["reason"].as_str().unwrap().contains(reason), "{l}");
        }
    }
    let good: Vec<&Value> = lines.iter().filter(|l| l["target"] == "good").collect();
    assert!(!good.is_empty());
    for l in good {
        assert_eq!(l["validated"], true);
        // The reason as printed: the fixture echoes the finding it was called for.
        assert_eq!(l["reason"], l["finding"]);
        assert!(l.get("reasoning").is_none());
    }
    // The corpus replays: failed calls are counted, never read as verdicts.
    let out = s.root().join("out");
    calibench()
        .current_dir(s.root())
        .args([
            "run",
            "experiment.toml",
            "--corpus",
            "runs/v",
            "--no-plots",
            "--run-id",
            "r",
        ])
        .arg("--runs-dir")
        .arg(out.join("runs"))
        .arg("--reports-dir")
        .arg(out.join("reports"))
        .assert()
        .success();
    let metrics: Value =
        serde_json::from_slice(&std::fs::read(out.join("runs/r/metrics.json")).unwrap()).unwrap();
    let t = &metrics["review"]["arms"]["treatment"];
    // Two findings per target are selected: ten failed calls, two verdicts.
    assert_eq!(t["validator_failed"].as_f64(), Some(10.0), "{t}");
    assert_eq!(t["validated"].as_f64(), Some(2.0), "{t}");
}

#[test]
fn every_judge_failure_is_a_null_verdict_with_its_reason_never_a_zero() {
    let s = Setup::new(
        &["good"],
        &[
            "good", "hang", "garbage", "extra", "missing", "range", "crash", "other", "echo",
        ],
        "",
    );
    s.collect(&["--run-id", "j"]).assert().success();
    let items = s.lines("j", "verdicts.jsonl");
    // One line per (item, arm): the target in each arm.
    assert_eq!(items.len(), 2);
    for item in &items {
        assert_eq!(item["item_id"], "good");
        let verdicts = item["verdicts"].as_array().unwrap();
        let models: Vec<&str> = verdicts
            .iter()
            .map(|v| v["model"].as_str().unwrap())
            .collect();
        assert_eq!(
            models,
            ["good", "hang", "garbage", "extra", "missing", "range", "crash", "other", "echo"]
        );
        assert_eq!(verdicts[0]["per_dimension"]["real"], 0.8);
        // A judge that names the item it was asked about is a verdict like any other.
        assert_eq!(verdicts[8]["per_dimension"]["real"], 0.5);
        for (v, reason) in verdicts[1..8].iter().zip([
            "timed out: after 1 s",
            "not one JSON object",
            "`novel` is not a declared dimension",
            "dimension `important` is missing",
            "1.5 is outside [0, 1]",
            "exited non-zero: status 4",
            // Regression (issue 34): an answer for another item was recorded as this item's.
            "the return names item_id \"NOT-ASKED\", but the call was for \"good\"",
        ]) {
            assert!(v["per_dimension"].is_null(), "{v}");
            assert!(v["reason"].as_str().unwrap().contains(reason), "{v}");
        }
    }
    // The stage's calls are in judges.jsonl, one line each.
    assert_eq!(s.lines("j", "judges.jsonl").len(), 18);
    let manifest: Value = serde_json::from_slice(&s.bytes("j", "collect.json")).unwrap();
    let judges = manifest["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["stage"] == "judges")
        .unwrap();
    assert_eq!(
        (judges["calls"].as_u64(), judges["failed"].as_u64()),
        (Some(18), Some(14))
    );
}

// Issue 66: a judge's own reported model (its stdout's `model`) is recorded beside its name, and
// a judge whose model differs between the arms is harness drift: a caveat on the decision.
#[test]
fn a_judges_reported_model_is_recorded_and_compared_between_the_arms() {
    let s = Setup::new(&["good"], &["reports", "good"], "");
    s.collect(&["--run-id", "m"]).assert().success();
    let items = s.lines("m", "verdicts.jsonl");
    for item in &items {
        let v = &item["verdicts"][0];
        assert_eq!(v["model"], "reports");
        let want = if item["arm"] == "anchored" {
            "model-2"
        } else {
            "model-1"
        };
        assert_eq!(v["reported_model"], want, "{item}");
        // A judge that reports none records none.
        assert!(
            item["verdicts"][1].get("reported_model").is_none(),
            "{item}"
        );
    }
    let out = calibench()
        .current_dir(s.root())
        .args(["run", "experiment.toml", "--corpus", "runs/m", "--no-plots"])
        .args(["--runs-dir", "out/runs", "--reports-dir", "out/reports"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("judge `reports` model differs between the arms: model-1 (baseline), model-2 (treatment) (first: verdicts.jsonl:1)"),
        "{err}"
    );
    // The judges' cost is the cost of evaluating, over both arms, never an arm's.
    let runs = s.root().join("out/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("metrics.json")).unwrap()).unwrap();
    let e = &m["evaluation"];
    assert_eq!(
        (e["judge_calls"].as_u64(), e["reported"].as_u64()),
        (Some(4), Some(2)),
        "{e}"
    );
    assert!(
        (e["cost_usd"].as_f64().unwrap() - 0.004).abs() < 1e-12,
        "{e}"
    );
    // The judges' cost is no arm's: the arm's is what its reviewers reported, nothing more.
    let arm = &m["review"]["arms"]["baseline"];
    let reviewers: f64 = s
        .lines("m", "reviews.jsonl")
        .iter()
        .filter(|l| l["arm"] == "float")
        .map(|l| l["usage"]["cost_usd"].as_f64().unwrap_or(0.0))
        .sum();
    let cost = arm["cost_usd_mean"].as_f64().unwrap_or(0.0);
    assert!(
        reviewers > 0.0,
        "the baseline's reviewers reported their cost"
    );
    assert!(
        (cost - reviewers).abs() < 1e-12,
        "{cost} against {reviewers}: {arm}"
    );
}

fn wait_for_lines(file: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let count = std::fs::read_to_string(file).map_or(0, |t| t.lines().count());
        if count >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never reached {n} lines", file.display());
}

#[test]
fn an_interrupted_judges_stage_resumes_to_the_same_verdicts() {
    let s = Setup::new(&["a", "b", "c"], &["slow", "good"], "");
    s.collect(&["--run-id", "whole"]).assert().success();
    let whole = s.bytes("whole", "verdicts.jsonl");
    let child = Std::new(assert_cmd::cargo::cargo_bin("calibench"))
        .current_dir(s.root())
        .args([
            "collect",
            "experiment.toml",
            "--runs-dir",
            "runs",
            "--run-id",
            "cut",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&s.run_dir("cut").join("judges.jsonl"), 2);
    let ok = Std::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("--resume cut"), "{stdout}");
    assert!(!s.run_dir("cut").join("verdicts.jsonl").exists());
    let manifest: Value = serde_json::from_slice(&s.bytes("cut", "collect.json")).unwrap();
    assert_eq!(manifest["status"], "interrupted");
    // A partial collection is not replayed as whole.
    calibench()
        .current_dir(s.root())
        .args([
            "run",
            "experiment.toml",
            "--corpus",
            "runs/cut",
            "--no-plots",
        ])
        .args(["--runs-dir", "out/runs", "--reports-dir", "out/reports"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unfinished collection"));
    s.collect(&["--resume", "cut"])
        .assert()
        .success()
        .stdout(predicate::str::contains("already recorded and skipped"));
    for file in [
        "reviews.jsonl",
        "validations.jsonl",
        "verdicts.jsonl",
        "judges.jsonl",
    ] {
        assert_eq!(s.bytes("cut", file), s.bytes("whole", file), "{file}");
    }
    assert_eq!(s.bytes("cut", "verdicts.jsonl"), whole);
}

#[test]
fn stages_run_one_at_a_time_make_the_same_corpus() {
    let s = Setup::new(&["a", "b"], &["good", "slow"], "");
    s.collect(&["--run-id", "all"]).assert().success();
    // Later stages need a collection to work over.
    s.collect(&["--stage", "validators"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--resume RUN_ID"));
    s.collect(&["--stage", "reviewers", "--run-id", "step"])
        .assert()
        .success()
        .stdout(predicate::str::contains("not run (--stage names another)"));
    assert!(!s.run_dir("step").join("validations.jsonl").exists());
    // Not complete until every stage is: `run` refuses it, naming the command that finishes it.
    let manifest: Value = serde_json::from_slice(&s.bytes("step", "collect.json")).unwrap();
    assert_eq!(manifest["status"], "partial");
    // The judges' dry run lists the calls it would make, over the collected returns.
    s.collect(&["--stage", "judges", "--resume", "step", "--dry-run"])
        .assert()
        .success()
        .stdout(predicate::str::contains("judges: 8 calls planned"))
        .stdout(predicate::str::contains("judge.sh slow a"));
    for stage in ["validators", "judges"] {
        s.collect(&["--stage", stage, "--resume", "step"])
            .assert()
            .success();
    }
    let manifest: Value = serde_json::from_slice(&s.bytes("step", "collect.json")).unwrap();
    assert_eq!(manifest["status"], "complete");
    for file in ["reviews.jsonl", "validations.jsonl", "verdicts.jsonl"] {
        assert_eq!(s.bytes("step", file), s.bytes("all", file), "{file}");
    }
    // A stage resumed with another command is refused.
    let exp = std::fs::read_to_string(s.root().join("experiment.toml")).unwrap();
    std::fs::write(
        s.root().join("experiment.toml"),
        exp.replace("judges = [\"good\", \"slow\"]", "judges = [\"good\"]"),
    )
    .unwrap();
    s.collect(&["--resume", "step"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "its judges stage was collected with",
        ));
}

#[test]
fn stage_tables_are_checked_before_anything_runs() {
    let s = Setup::new(&["a"], &["good"], "");
    let exp = std::fs::read_to_string(s.root().join("experiment.toml")).unwrap();
    for (from, to, needle) in [
        (
            "items = \"targets\"",
            "items = \"everything\"",
            "is not findings, targets or both",
        ),
        (
            "dimensions = [\"real\", \"important\"]",
            "dimensions = []",
            "`collect.judges.dimensions`: is empty",
        ),
        (
            "judges = [\"good\"]",
            "judges = [\"good\", \"good\"]",
            "`good` is listed twice",
        ),
        (
            "\"./judge.sh\", \"{judge}\"",
            "\"./judge.sh\", \"{reviewer}\"",
            "`{reviewer}` is not a placeholder here",
        ),
        (
            "\"./validator.sh\"",
            "\"./missing.sh\"",
            "`collect.validators.command`: `./missing.sh` does not exist",
        ),
        (
            "timeout_s = 1\n\n[collect.judges]",
            "timeout_s = 0\n\n[collect.judges]",
            "`collect.validators.timeout_s`",
        ),
    ] {
        assert!(exp.contains(from), "{from}");
        std::fs::write(s.root().join("experiment.toml"), exp.replace(from, to)).unwrap();
        s.collect(&["--run-id", "bad"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
        assert!(!s.root().join("runs").exists(), "{needle}");
    }
}

/// A sequential collection with a validator stage (docs/guides/stop-when-you-know.md, "What a
/// look costs"): each batch plans the validators from every return so far and puts the stage
/// files in plan order, so each look reads the whole run; the collection ends as a collection
/// of those targets all at once leaves it, and `run --sequential` reaches the decision it
/// stopped on.
#[test]
fn a_sequential_collection_with_validators_looks_at_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("c");
    common::copy_dir(&root().join("corpora/code-review-live"), &r);
    for f in [
        "reviews.jsonl",
        "validations.jsonl",
        "verdicts.jsonl",
        "collect.json",
    ] {
        let _ = std::fs::remove_file(r.join(f));
    }
    let exp = std::fs::read_to_string(r.join("experiment.toml")).unwrap();
    let cut = exp.find("[collect.judges]").unwrap();
    let end = exp.find("[trust]").unwrap();
    let exp = format!("{}{}", &exp[..cut], &exp[end..])
        .replace(
            "precision = \"increase\"\ndistinct_values = \"decrease\"\n",
            "distinct_values = \"decrease\"\n[sequential]\nrange = { distinct_values = [0, 30] }\n",
        )
        .replace("require_trustworthy = true", "require_trustworthy = false");
    std::fs::write(r.join("experiment.toml"), exp).unwrap();
    let collect = |extra: &[&str]| {
        calibench()
            .current_dir(&r)
            .args([
                "collect",
                ".",
                "--until-decided",
                "--batch",
                "1",
                "--runs-dir",
                "runs",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = collect(&["--run-id", "seq"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("sequential: stopped after 4 of 4 targets"),
        "{stdout}"
    );
    let record: Value =
        serde_json::from_slice(&std::fs::read(r.join("runs/seq/collect.json")).unwrap()).unwrap();
    assert_eq!(record["sequential"]["looks"].as_array().unwrap().len(), 4);
    // The same targets collected at once, with the order the sequential one took them in.
    let whole = calibench()
        .current_dir(&r)
        .args(["collect", ".", "--run-id", "all", "--runs-dir", "runs"])
        .output()
        .unwrap();
    assert_eq!(
        whole.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    for f in ["reviews.jsonl", "validations.jsonl"] {
        assert_eq!(
            std::fs::read(r.join("runs/seq").join(f)).unwrap(),
            std::fs::read(r.join("runs/all").join(f)).unwrap(),
            "{f}"
        );
    }
    let replay = calibench()
        .current_dir(&r)
        .args([
            "run",
            ".",
            "--corpus",
            "runs/seq",
            "--runs-dir",
            "out",
            "--reports-dir",
            "rep",
        ])
        .args(["--no-plots", "--json", "--bootstrap", "100", "--sequential"])
        .output()
        .unwrap();
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let m: Value = serde_json::from_slice(&replay.stdout).unwrap();
    let last = record["sequential"]["looks"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(m["sequential"]["verdict"], last["verdict"]);
    assert_eq!(m["sequential"]["order_from"], "collect.json");
}
