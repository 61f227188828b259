//! Live collection (docs/guides/live-collection.md) with fixture commands (tests/fixtures/collect): a well-behaved
//! reviewer whose corpus `run` replays; one that hangs and is killed with its process group;
//! one that prints garbage; one that exits non-zero; one that emits an invalid enum; a reviewer
//! named `../../escape`; retries; an interrupted collection resumed to the same bytes as an
//! uninterrupted one; concurrency that is bounded; query collection; and bad input refused
//! with exit 2 before anything is created.

use std::path::{Path, PathBuf};
use std::process::{Command as Std, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::calibench;
use predicates::prelude::*;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/collect")
        .join(name)
}

/// A folder with two documents, the fixture commands and an experiment whose `[collect]`
/// table ends with `extra`.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(reviewers: &[&str], extra: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(
            root.join("docs/alpha.md"),
            "# Plan\nShip the parser in two weeks.\n",
        )
        .unwrap();
        std::fs::write(
            root.join("docs/beta.md"),
            "# Plan\nRewrite storage.\nTBD.\n",
        )
        .unwrap();
        for f in ["reviewer.sh", "agent.sh"] {
            std::fs::copy(fixture(f), root.join(f)).unwrap();
        }
        let reviewers: Vec<String> = reviewers.iter().map(|r| format!("{r:?}")).collect();
        std::fs::write(
            root.join("experiment.toml"),
            format!(
                r#"name = "fixture"
mode = "doc"
corpus = "."
bootstrap = 200

[arms.baseline]
source = "baseline"
[arms.baseline.review]
policy = "anchored"

[arms.treatment]
source = "treatment"
[arms.treatment.review]
policy = "anchored"

[collect]
command = ["./reviewer.sh", "{{reviewer}}", "{{target}}", "{{arm}}", "{{run}}"]
reviewers = [{}]
targets = "docs/*.md"
backoff_s = 0.05
{extra}
"#,
                reviewers.join(", ")
            ),
        )
        .unwrap();
        Setup { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn collect(&self, id: &str) -> assert_cmd::Command {
        let mut cmd = calibench();
        cmd.current_dir(self.root()).args([
            "collect",
            "experiment.toml",
            "--runs-dir",
            "runs",
            "--run-id",
            id,
        ]);
        cmd
    }

    /// `calibench collect experiment.toml --runs-dir runs --resume <id>`.
    fn resume(&self, id: &str) -> assert_cmd::Command {
        let mut cmd = calibench();
        cmd.current_dir(self.root()).args([
            "collect",
            "experiment.toml",
            "--runs-dir",
            "runs",
            "--resume",
            id,
        ]);
        cmd
    }

    /// `calibench collect experiment.toml --runs-dir runs` with `args`, started in the
    /// background with its output captured.
    fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.spawn_with(args, &[])
    }

    /// [`Setup::spawn`] with `env` set.
    fn spawn_with(&self, args: &[&str], env: &[(&str, &Path)]) -> std::process::Child {
        let mut c = Std::new(assert_cmd::cargo::cargo_bin("calibench"));
        c.current_dir(self.root())
            .args(["collect", "experiment.toml", "--runs-dir", "runs"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        c.spawn().unwrap()
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
}

fn by_reviewer<'a>(lines: &'a [Value], reviewer: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["reviewer"] == reviewer).collect()
}

#[test]
fn a_well_behaved_reviewer_is_collected_and_replayed() {
    let s = Setup::new(&["coherence", "feasibility"], "runs = 2\nconcurrency = 3");
    s.collect("live")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "16 calls recorded now, 16 ok, 0 failed",
        ))
        .stdout(predicate::str::contains("--corpus runs/live"));
    let lines = s.lines("live", "reviews.jsonl");
    assert_eq!(lines.len(), 2 * 2 * 2 * 2);
    // Plan order once complete: arm, target, reviewer, run.
    let keys: Vec<(String, String, String, u64)> = lines
        .iter()
        .map(|l| {
            (
                l["arm"].as_str().unwrap().into(),
                l["target"].as_str().unwrap().into(),
                l["reviewer"].as_str().unwrap().into(),
                l["run"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(
        lines[0]["findings"][0]["id"],
        "baseline/alpha/coherence/r0/f1"
    );
    // The target went in on stdin: alpha has 8 words.
    assert_eq!(lines[0]["residual_risks"][0], "coherence read 8 words");
    // The artifact is the command's full-detail return, written where CALIBENCH_ARTIFACT said.
    let artifact: Value = serde_json::from_slice(
        &std::fs::read(
            s.run_dir("live")
                .join("artifacts/treatment/beta/feasibility-r1.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(artifact["run_id"], "live");
    assert_eq!(artifact["why_it_matters"], "because");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(s.run_dir("live").join("collect.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["status"], "complete");
    assert_eq!(manifest["calls"], 16);

    // `run` replays what was collected.
    calibench()
        .current_dir(s.root())
        .args([
            "run",
            "experiment.toml",
            "--corpus",
            "runs/live",
            "--runs-dir",
            "out",
        ])
        .args([
            "--reports-dir",
            "reports",
            "--run-id",
            "replayed",
            "--no-plots",
            "--json",
        ])
        .assert()
        .success();
    let metrics: Value =
        serde_json::from_slice(&std::fs::read(s.root().join("out/replayed/metrics.json")).unwrap())
            .unwrap();
    let arm = &metrics["review"]["arms"]["treatment"];
    assert_eq!(arm["targets"].as_f64(), Some(2.0), "targets");
    assert_eq!(arm["runs"].as_f64(), Some(2.0), "runs");
    assert_eq!(
        arm["failed_reviewers"].as_f64(),
        Some(0.0),
        "failed_reviewers"
    );
    assert_eq!(arm["malformed"].as_f64(), Some(0.0), "malformed");
    // Two reviewers, one finding each per target and run, merged into one corroborated finding.
    assert_eq!(arm["findings_raw"].as_f64(), Some(4.0), "findings_raw");
    assert_eq!(arm["corroborated"].as_f64(), Some(2.0), "corroborated");
}

/// Whether a process is gone (or a zombie waiting to be reaped).
fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn every_failure_is_recorded_failed_with_its_reason_never_as_an_empty_review() {
    let s = Setup::new(
        &["hang", "garbage", "crash", "bad-enum"],
        "timeout_s = 1\nretries = 0\nconcurrency = 4",
    );
    let pids = s.root().join("pids");
    let started = Instant::now();
    s.collect("bad")
        .env("PIDS", &pids)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "16 calls recorded now, 0 ok, 16 failed (4 exited non-zero, 4 timed out, 8 invalid output)",
        ))
        .stdout(predicate::str::contains("warning: 16 calls failed"))
        .stdout(predicate::str::contains(
            "error: arm `baseline` has no successful reviewer call: all 8 failed: `run` refuses this corpus",
        ))
        .stdout(predicate::str::contains("Replay it").not());
    // Four hangs of 1 s each, four at a time: the timeout, not the 60 s sleep, ended them.
    assert!(started.elapsed() < Duration::from_secs(30));
    let lines = s.lines("bad", "reviews.jsonl");
    assert_eq!(lines.len(), 16);
    for line in &lines {
        assert_eq!(line["status"], "failed", "{line}");
        assert!(line.get("findings").is_none(), "{line}");
    }
    let reason = |reviewer: &str| {
        let all = by_reviewer(&lines, reviewer);
        assert_eq!(all.len(), 4);
        all[0]["reason"].as_str().unwrap().to_string()
    };
    assert!(reason("hang").starts_with("timed out: after 1 s; its process group was killed"));
    assert!(
        reason("garbage").starts_with("invalid output: stdout is not one JSON object"),
        "{}",
        reason("garbage")
    );
    assert!(reason("garbage").contains("Sure! Here are my findings"));
    assert_eq!(
        reason("crash"),
        "exited non-zero: status 3; stderr: model overloaded"
    );
    assert!(
        reason("bad-enum").starts_with("invalid output: findings[0].severity: `P9` is not"),
        "{}",
        reason("bad-enum")
    );
    // The hang's own child was killed with it: nothing a timed-out call started outlives it.
    let pids = std::fs::read_to_string(pids).unwrap();
    assert_eq!(pids.lines().count(), 4);
    for pid in pids.lines() {
        assert!(dead(pid.trim()), "process {pid} outlived its call");
    }
    // Every call of both arms failed: `run` refuses the corpus (the arms would compare
    // different harnesses), naming the commonest reason and the first call.
    calibench()
        .current_dir(s.root())
        .args([
            "run",
            "experiment.toml",
            "--corpus",
            "runs/bad",
            "--runs-dir",
            "out",
        ])
        .args([
            "--reports-dir",
            "reports",
            "--run-id",
            "r",
            "--no-plots",
            "-q",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "field `status`: arm `baseline` has no successful reviewer call: all 8 failed, the commonest for invalid output",
        ));
    assert!(!s.root().join("out/r").exists());
}

// Regression (issue 34): a reviewer that printed a valid return and exited 0, leaving a child
// that held its stdout, was recorded "timed out" after the whole timeout and its return lost.
// Once the command has exited, its pipes get a short grace, then its group is ended and the
// return recorded; the child does not outlive the call.
#[test]
fn a_return_is_recorded_when_the_command_exits_though_a_child_holds_stdout() {
    let s = Setup::new(&["background"], "timeout_s = 30\nretries = 0\nruns = 1");
    let pids = s.root().join("pids");
    let started = Instant::now();
    s.collect("bg")
        .env("PIDS", &pids)
        .assert()
        .success()
        .stdout(predicate::str::contains("4 ok, 0 failed"));
    // Four calls, each held 2 s at most past its exit, not 30 s.
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    let lines = s.lines("bg", "reviews.jsonl");
    assert_eq!(lines.len(), 4);
    for line in &lines {
        assert!(line.get("status").is_none(), "{line}");
        assert_eq!(
            line["findings"][0]["title"],
            "Returned before the child let go"
        );
    }
    let pids = std::fs::read_to_string(pids).unwrap();
    assert_eq!(pids.lines().count(), 4);
    for pid in pids.lines() {
        assert!(dead(pid.trim()), "process {pid} outlived its call");
    }
}

#[test]
fn a_failed_attempt_is_retried_with_backoff() {
    let s = Setup::new(&["flaky"], "retries = 1");
    s.collect("retry").assert().success();
    let lines = s.lines("retry", "reviews.jsonl");
    assert!(lines
        .iter()
        .all(|l| l["findings"][0]["title"] == "Second try works"));
    let s = Setup::new(&["flaky"], "retries = 0");
    // Every call failed: collected, and exit 1 (`run` would refuse both arms).
    s.collect("once").assert().code(1);
    let lines = s.lines("once", "reviews.jsonl");
    assert!(lines
        .iter()
        .all(|l| l["reason"] == "exited non-zero: status 1; stderr: rate limited"));
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_reviewer_named_to_escape_writes_inside_the_run() {
    let s = Setup::new(&["../../escape"], "");
    let before = files_under(s.root());
    s.collect("esc").assert().success();
    let lines = s.lines("esc", "reviews.jsonl");
    assert_eq!(lines.len(), 4);
    // The corpus keeps the name; only its path component is reduced.
    assert!(lines
        .iter()
        .all(|l| l["reviewer"] == "../../escape" && l["status"].is_null()));
    let run = s.run_dir("esc").canonicalize().unwrap();
    for file in files_under(s.root()) {
        if before.contains(&file) {
            continue;
        }
        let file = file.canonicalize().unwrap();
        assert!(
            file.starts_with(&run),
            "{} is outside the run",
            file.display()
        );
    }
    assert!(run
        .join("artifacts/baseline/alpha/___.__escape-r0.json")
        .is_file());
    assert_eq!(files_under(&run.join("artifacts")).len(), 4);
}

#[test]
fn concurrency_is_bounded() {
    let s = Setup::new(&["slow"], "runs = 2\nconcurrency = 3");
    let log = s.root().join("log");
    s.collect("bounded").env("LOG", &log).assert().success();
    let log = std::fs::read_to_string(log).unwrap();
    let (mut running, mut most) = (0i32, 0i32);
    for line in log.lines() {
        if line.starts_with("start") {
            running += 1;
        } else {
            running -= 1;
        }
        most = most.max(running);
    }
    assert_eq!(log.lines().count(), 2 * 8);
    assert_eq!(running, 0);
    assert_eq!(most, 3, "{log}");
}

/// Waits until `file` holds at least `n` lines.
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

fn interrupt(pid: u32) {
    let ok = Std::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

#[test]
fn an_interrupted_collection_resumes_to_the_same_corpus() {
    let s = Setup::new(&["slow", "coherence"], "runs = 3\nconcurrency = 2");
    // Uninterrupted, for comparison.
    s.collect("whole").assert().success();
    let whole = untimed(&std::fs::read(s.run_dir("whole").join("reviews.jsonl")).unwrap());
    assert_eq!(whole.iter().filter(|&&b| b == b'\n').count(), 24);

    let child = s.spawn(&["--run-id", "cut"]);
    let file = s.run_dir("cut").join("reviews.jsonl");
    wait_for_lines(&file, 3);
    interrupt(child.id());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("stopping: no new calls"), "{stderr}");
    assert!(stdout.contains("--resume cut"), "{stdout}");
    let partial = s.lines("cut", "reviews.jsonl");
    assert!(
        partial.len() >= 3 && partial.len() < 24,
        "{}",
        partial.len()
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(s.run_dir("cut").join("collect.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["status"], "interrupted");
    // Every recorded line is whole; a torn line from a hard kill is dropped on resume.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"arm\": \"treatment\", \"tar").unwrap();
    drop(f);

    s.resume("cut")
        .assert()
        .success()
        .stderr(predicate::str::contains("dropped an incomplete last line"))
        .stdout(predicate::str::contains(format!(
            "{} were already recorded and skipped",
            partial.len()
        )));
    assert_eq!(untimed(&std::fs::read(&file).unwrap()), whole);
    // Resuming a complete collection runs nothing more.
    s.resume("cut")
        .assert()
        .success()
        .stdout(predicate::str::contains("0 calls recorded now"));
    assert_eq!(untimed(&std::fs::read(&file).unwrap()), whole);
}

/// A collection's lines without the wall time `collect` measured (`elapsed_ms`, the one thing
/// two collections of the same calls may differ in), every line checked to carry one.
fn untimed(bytes: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(bytes).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        let o = v.as_object_mut().unwrap();
        if o.get("status").and_then(Value::as_str) != Some("failed") {
            assert!(o.remove("elapsed_ms").is_some_and(|e| e.is_u64()), "{line}");
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

#[test]
fn a_second_interrupt_kills_running_calls_and_records_nothing_for_them() {
    let s = Setup::new(&["coherence", "hang"], "timeout_s = 120\nconcurrency = 8");
    let bin = assert_cmd::cargo::cargo_bin("calibench");
    let started = Instant::now();
    let child = Std::new(&bin)
        .current_dir(s.root())
        .args([
            "collect",
            "experiment.toml",
            "--runs-dir",
            "runs",
            "--run-id",
            "k",
        ])
        .env("PIDS", s.root().join("pids"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The four coherence calls finish; the four hangs run until killed.
    wait_for_lines(&s.run_dir("k").join("reviews.jsonl"), 4);
    wait_for_lines(&s.root().join("pids"), 4);
    interrupt(child.id());
    std::thread::sleep(Duration::from_millis(300));
    interrupt(child.id());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(String::from_utf8_lossy(&out.stderr).contains("killing 4 running calls"));
    let lines = s.lines("k", "reviews.jsonl");
    assert_eq!(lines.len(), 4);
    assert!(by_reviewer(&lines, "hang").is_empty());
    for pid in std::fs::read_to_string(s.root().join("pids"))
        .unwrap()
        .lines()
    {
        assert!(dead(pid.trim()), "process {pid} outlived its call");
    }
}

#[test]
fn query_traces_are_collected_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("queries")).unwrap();
    for (name, text) in [
        ("parser", "where is the parser?"),
        ("broken", "x"),
        ("lexer", "who calls lex?"),
    ] {
        std::fs::write(root.join(format!("queries/{name}.txt")), text).unwrap();
    }
    std::fs::copy(fixture("agent.sh"), root.join("agent.sh")).unwrap();
    std::fs::write(
        root.join("experiment.toml"),
        r#"name = "agent"
corpus = "."
bootstrap = 200
[arms.baseline]
source = "recorded"
[arms.baseline.confidence]
policy = "flat-mean"
[arms.treatment]
source = "recorded"
[arms.treatment.confidence]
policy = "category-max"
[collect]
kind = "queries"
command = ["./agent.sh", "{target}", "{run}"]
targets = "queries/*.txt"
runs = 2
retries = 0
"#,
    )
    .unwrap();
    calibench()
        .current_dir(root)
        .args(["collect", ".", "--runs-dir", "runs", "--run-id", "q"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "6 calls recorded now, 4 ok, 2 failed (2 invalid output)",
        ));
    let text = std::fs::read_to_string(root.join("runs/q/queries.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // One recorded label: both arms read it, so each query is collected once per run.
    assert_eq!(lines.len(), 6);
    let parser: Vec<&Value> = lines.iter().filter(|l| l["query_id"] == "parser").collect();
    assert_eq!(parser[1]["tools"][0]["hits"], 3);
    assert_eq!(parser[0]["query"], "where is the parser?");
    let broken = lines.iter().find(|l| l["query_id"] == "broken").unwrap();
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["error"].as_str().unwrap().contains("phase"),
        "{broken}"
    );
    calibench()
        .current_dir(root)
        .args([
            "run",
            ".",
            "--corpus",
            "runs/q",
            "--runs-dir",
            "out",
            "--reports-dir",
            "rep",
        ])
        .args(["--run-id", "r", "--no-plots", "-q"])
        .assert()
        .success();
    let metrics: Value =
        serde_json::from_slice(&std::fs::read(root.join("out/r/metrics.json")).unwrap()).unwrap();
    assert_eq!(metrics["queries"]["arms"]["baseline"]["queries"], 6);
    assert_eq!(metrics["queries"]["arms"]["baseline"]["errors"], 2);
}

#[test]
fn dry_run_lists_the_calls_and_runs_none() {
    let s = Setup::new(&["coherence", "crash"], "runs = 2");
    s.collect("dry")
        .arg("--dry-run")
        .assert()
        .success()
        .stdout(predicate::str::contains("16 calls planned"))
        .stdout(predicate::str::contains(
            "reviewer.sh crash beta treatment 1",
        ));
    assert!(!s.root().join("runs").exists());
}

#[test]
fn bad_input_exits_2_before_anything_is_created() {
    let refuse = |s: &Setup, args: &[&str], needle: &str| {
        calibench()
            .current_dir(s.root())
            .arg("collect")
            .args(args)
            .args(["--runs-dir", "runs"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(needle));
        assert!(!s.root().join("runs").exists(), "{args:?} created runs/");
    };
    let s = Setup::new(&["coherence"], "");
    let exp = std::fs::read_to_string(s.root().join("experiment.toml")).unwrap();
    let write = |text: String| std::fs::write(s.root().join("experiment.toml"), text).unwrap();

    write(exp[..exp.find("[collect]").unwrap()].to_string());
    refuse(
        &s,
        &["experiment.toml"],
        "experiment.toml: `collect`: has no [collect] table",
    );
    write(exp.replace("docs/*.md", "documents/*.md"));
    refuse(
        &s,
        &["experiment.toml"],
        "experiment.toml:19: `collect.targets`: `documents/*.md` matches no file",
    );
    write(exp.replace("./reviewer.sh", "./missing.sh"));
    refuse(
        &s,
        &["experiment.toml"],
        "experiment.toml:17: `collect.command`: `./missing.sh` does not exist",
    );
    write(exp.replace("./reviewer.sh", "no-such-program-anywhere"));
    refuse(&s, &["experiment.toml"], "is not a program on PATH");
    std::fs::write(s.root().join("plain.sh"), "echo {}").unwrap();
    write(exp.replace("./reviewer.sh", "./plain.sh"));
    refuse(&s, &["experiment.toml"], "is not an executable file");
    write(exp.replace("[\"coherence\"]", "[\"a/b\", \"a_b\"]"));
    refuse(
        &s,
        &["experiment.toml"],
        "would share the artifact name `a_b`",
    );
    std::fs::write(s.root().join("docs/alpha.txt"), "x").unwrap();
    write(exp.replace("docs/*.md", "docs/*"));
    refuse(&s, &["experiment.toml"], "are both target `alpha`");
    write(exp.replace("backoff_s = 0.05", "backoff_s = -1"));
    refuse(&s, &["experiment.toml"], "`collect.backoff_s`");
    write(exp.clone());
    refuse(
        &s,
        &["experiment.toml", "--resume", "nothing"],
        "is not a collection",
    );
    refuse(
        &s,
        &["experiment.toml", "--run-id", "../up"],
        "is not a usable run id",
    );

    // A resume must collect what the run began collecting.
    s.collect("one").assert().success();
    write(exp.replace("[\"coherence\"]", "[\"coherence\", \"feasibility\"]"));
    s.resume("one")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "collect.json: field `reviewers`: was collected with reviewers [\"coherence\"]",
        ));
    write(exp.clone());
    std::fs::write(s.root().join("docs/beta.md"), "changed").unwrap();
    s.resume("one")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("its content changed"));
    s.collect("one")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"))
        .stderr(predicate::str::contains("--resume one"));
}

// A flag that needs another (`--max-targets` and `--batch` need `--until-decided`, `--shards`
// needs `--shard`, `--or-resume` needs `--run-id`) is refused beside a flag that the one it
// needs cannot be used with, as it is alone: clap checks no requirement on a flag that conflicts
// with one given, and `--max-targets 5 --dry-run` made a dry run that ignored the budget.
#[test]
fn a_flag_that_needs_another_is_never_ignored() {
    let s = Setup::new(&["coherence"], "");
    for args in [
        &["--max-targets", "5"][..],
        &["--max-targets", "5", "--dry-run"],
        &["--max-targets", "5", "--aa"],
        &["--max-targets", "5", "--stage", "reviewers"],
        &["--batch", "5", "--dry-run"],
        &["--batch", "5", "--shard", "1/2"],
        &["--shards", "3"],
        &["--shards", "3", "--until-decided"],
        &["--or-resume"],
        &["--or-resume", "--resume", "one"],
    ] {
        calibench()
            .current_dir(s.root())
            .args(["collect", "experiment.toml", "--runs-dir", "runs"])
            .args(args)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains("error: the"));
        assert!(!s.root().join("runs").exists(), "{args:?} created runs/");
    }
}

/// Collects a live example again into a temporary runs folder; its printed summary.
fn collect_example(name: &str, runs: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = calibench()
        .current_dir(root)
        .args(["collect", &format!("corpora/{name}"), "--run-id", "again"])
        .arg("--runs-dir")
        .arg(runs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Each file the example commits is what collecting it again records, byte for byte.
fn same_as_committed(name: &str, runs: &Path, files: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in files {
        let again = std::fs::read(runs.join("again").join(file)).unwrap();
        let committed = std::fs::read(root.join("corpora").join(name).join(file)).unwrap();
        assert!(
            again == committed,
            "corpora/{name}/{file} is not what collect records now; collect it again (its experiment.toml says how)"
        );
    }
}

#[test]
fn the_live_example_is_what_collect_records() {
    let runs = tempfile::tempdir().unwrap();
    let summary = collect_example("doc-review-live", runs.path());
    assert!(
        summary.contains("36 calls recorded now, 35 ok, 1 failed (1 invalid output)"),
        "{summary}"
    );
    same_as_committed(
        "doc-review-live",
        runs.path(),
        &["reviews.jsonl", "verdicts.jsonl"],
    );
    // Its collect.json records the harness that made it, as collecting again does.
    let provenance = |path: &Path| -> Value {
        let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        v["provenance"].clone()
    };
    let committed = provenance(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-live/collect.json"),
    );
    assert!(committed["arms"]["anchored"]["roles"]["judge"]["strict"].is_object());
    assert_eq!(
        committed,
        provenance(&runs.path().join("again/collect.json"))
    );
    let again = std::fs::read(runs.path().join("again/reviews.jsonl")).unwrap();
    // The rate-limited call was retried and recorded ok; the prose answer is a failed call.
    let text = String::from_utf8(again).unwrap();
    let failed: Vec<&str> = text.lines().filter(|l| l.contains("\"failed\"")).collect();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0].contains("\"reviewer\":\"feasibility\"")
            && failed[0].contains("(after 2 attempts)")
    );
    assert!(runs
        .path()
        .join("again/artifacts/anchored/pricing/product-lens-r1.json")
        .is_file());
    // The flaky judge's failures are failed judges with a reason, never zeros.
    let verdicts = std::fs::read_to_string(runs.path().join("again/verdicts.jsonl")).unwrap();
    let mut failed_judges = 0;
    for line in verdicts.lines() {
        let item: Value = serde_json::from_str(line).unwrap();
        let models: Vec<&str> = item["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["model"].as_str().unwrap())
            .collect();
        assert_eq!(models, ["lenient", "strict", "flaky"], "{line}");
        for v in item["verdicts"].as_array().unwrap() {
            if v["per_dimension"].is_null() {
                failed_judges += 1;
                assert_eq!(v["model"], "flaky");
                assert!(v["reason"].as_str().unwrap().contains("after 2 attempts"));
            } else {
                let scores = v["per_dimension"].as_object().unwrap();
                assert_eq!(scores.keys().collect::<Vec<_>>(), ["important", "real"]);
            }
        }
    }
    assert!(failed_judges > 0);
}

#[test]
fn the_live_code_review_is_what_collect_records_and_replays_its_controls() {
    let runs = tempfile::tempdir().unwrap();
    let summary = collect_example("code-review-live", runs.path());
    // A line per stage: the hung validator was killed at its 2 s timeout, the prose one failed.
    assert!(
        summary.contains("reviewers   64 calls recorded now, 64 ok"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "validators  8 calls recorded now, 6 ok, 2 failed (1 timed out, 1 invalid output)"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("judges      168 calls recorded now"),
        "{summary}"
    );
    same_as_committed(
        "code-review-live",
        runs.path(),
        &[
            "reviews.jsonl",
            "validations.jsonl",
            "verdicts.jsonl",
            "targets.jsonl",
        ],
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(runs.path().join("again/collect.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["status"], "complete");
    let stages: Vec<(&str, &str)> = manifest["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["stage"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        stages,
        [
            ("reviewers", "complete"),
            ("validators", "complete"),
            ("judges", "complete")
        ]
    );
    // The collection replays on its own: skip rules read the copied targets.jsonl.
    let out = tempfile::tempdir().unwrap();
    calibench()
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args([
            "run",
            "corpora/code-review-live",
            "--no-plots",
            "--run-id",
            "live",
        ])
        .arg("--corpus")
        .arg(runs.path().join("again"))
        .arg("--runs-dir")
        .arg(out.path().join("runs"))
        .arg("--reports-dir")
        .arg(out.path().join("reports"))
        .assert()
        .success();
    let metrics: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("runs/live/metrics.json")).unwrap())
            .unwrap();
    assert_eq!(metrics["trust"]["trustworthy"], true);
    let treatment = &metrics["review"]["arms"]["treatment"];
    assert_eq!(treatment["skipped_targets"], 1.0, "{treatment}");
    // Four reviewers, mean over the two runs.
    assert_eq!(treatment["skipped_calls"], 4.0, "{treatment}");
    assert_eq!(treatment["validator_calls"], 4.0, "{treatment}");
    assert_eq!(treatment["rejected"], 1.0, "{treatment}");
    assert_eq!(treatment["validator_failed"], 1.0, "{treatment}");
}

/// The process ids the fixture personas wrote to `pids`, once each call had started them.
fn pids(s: &Setup) -> Vec<String> {
    std::fs::read_to_string(s.root().join("pids"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

// Regression (issue 21): a reviewer's grandchild that called `setsid` left the call's process
// group and survived the timeout kill; a double-forked daemon outlived a call that returned.
#[test]
fn nothing_a_call_starts_outlives_it_even_in_a_session_of_its_own() {
    // The timeout leaves each grandchild ample time to start and record its pid under load.
    let s = Setup::new(
        &["escape", "daemon"],
        "timeout_s = 3\nconcurrency = 4\nretries = 0",
    );
    s.collect("e")
        .env("PIDS", s.root().join("pids"))
        .assert()
        .success();
    let lines = s.lines("e", "reviews.jsonl");
    assert_eq!(by_reviewer(&lines, "daemon").len(), 4);
    assert!(by_reviewer(&lines, "daemon")
        .iter()
        .all(|l| l["status"] != "failed"));
    assert!(by_reviewer(&lines, "escape")
        .iter()
        .all(|l| l["reason"].as_str().unwrap().contains("timed out")));
    let started = pids(&s);
    assert_eq!(started.len(), 8, "{started:?}");
    for pid in &started {
        assert!(dead(pid), "process {pid} outlived its call");
    }
}

// Regression (issue 21): a call printing far more than the cap was recorded as "killed by
// signal 9", which hid why.
#[test]
fn a_call_that_floods_stdout_is_recorded_as_over_the_cap() {
    let s = Setup::new(&["flood"], "");
    s.collect("f").assert().code(1);
    let lines = s.lines("f", "reviews.jsonl");
    assert_eq!(lines.len(), 4);
    for l in &lines {
        assert_eq!(l["status"], "failed");
        let reason = l["reason"].as_str().unwrap();
        assert!(
            reason.contains("printed more than the cap of 16 MiB"),
            "{reason}"
        );
        assert!(!reason.contains("signal"), "{reason}");
    }
}

// Regression (issue 21): SIGHUP (a closed terminal) killed calibench and left collect.json
// "running"; the printed resume command dropped --runs-dir; and `run --corpus` replayed the
// partial arms with exit 0.
#[test]
fn a_hangup_interrupts_resumably_and_a_partial_collection_is_not_replayed_as_whole() {
    let s = Setup::new(&["slow", "coherence"], "runs = 3\nconcurrency = 2");
    let child = s.spawn(&["--run-id", "hup"]);
    wait_for_lines(&s.run_dir("hup").join("reviews.jsonl"), 3);
    let ok = Std::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(s.run_dir("hup").join("collect.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["status"], "interrupted");
    let resume = "calibench collect experiment.toml --resume hup --runs-dir runs";
    assert!(stdout.contains(resume), "{stdout}");

    // Replaying the partial collection is refused with the command that finishes it…
    let replay = |extra: &[&str]| {
        let mut cmd = calibench();
        cmd.current_dir(s.root())
            .args(["run", "experiment.toml", "--corpus", "runs/hup"])
            .args([
                "--runs-dir",
                "out/runs",
                "--reports-dir",
                "out/reports",
                "--no-plots",
            ])
            .args(extra);
        cmd
    };
    replay(&[])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is an unfinished collection (status `interrupted`)",
        ))
        .stderr(predicate::str::contains("--resume hup --runs-dir runs"))
        .stderr(predicate::str::contains("--allow-partial"));
    assert!(!s.root().join("out").exists());
    // …unless asked for, and then the report says so first.
    replay(&["--allow-incomplete", "--run-id", "partial"])
        .assert()
        .success();
    let report = std::fs::read_to_string(s.root().join("out/reports/partial/report.md")).unwrap();
    let verdict_block: String = report.lines().take(6).collect::<Vec<_>>().join("\n");
    assert!(verdict_block.contains("Incomplete:"), "{report}");
    assert!(
        report.contains("**Headline:** INCOMPLETE collection"),
        "{report}"
    );

    // The printed command, run as printed, finishes the collection; then it replays.
    let args: Vec<&str> = resume.split(' ').skip(1).collect();
    calibench()
        .current_dir(s.root())
        .args(&args)
        .assert()
        .success();
    replay(&["--run-id", "whole"]).assert().success();
}

// Regression (issue 21): two `collect --resume` of one run at once both ran, calling every
// missing reviewer twice and writing 63 lines for 36 calls.
#[test]
fn one_collection_writes_a_run_at_a_time() {
    let s = Setup::new(&["slow", "coherence"], "runs = 2\nconcurrency = 1");
    let first = s.spawn(&["--run-id", "one"]);
    wait_for_lines(&s.run_dir("one").join("reviews.jsonl"), 1);
    let second = s.resume("one").output().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "is being collected into by another calibench process (process {})",
            first.id()
        )),
        "{stderr}"
    );
    let out = first.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(s.lines("one", "reviews.jsonl").len(), 16);
    // Once it is done, the run can be resumed (and has nothing left to do).
    s.resume("one")
        .assert()
        .success()
        .stdout(predicate::str::contains("0 calls recorded now"));
}

/// `collect --until-decided` of the sequential live example (docs/guides/stop-when-you-know.md):
/// the same lines and the same looks as committed, a stop the summary states with the calls it
/// saved, a replay that reaches the same decision, a resume after the stop that runs nothing,
/// and a budget that stops it undecided.
#[test]
fn the_sequential_live_example_stops_when_it_knows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runs = tempfile::tempdir().unwrap();
    let collect = |extra: &[&str]| {
        calibench()
            .current_dir(root)
            .args(["collect", "corpora/capacity-live", "--until-decided"])
            .args(extra)
            .arg("--runs-dir")
            .arg(runs.path())
            .output()
            .unwrap()
    };
    let out = collect(&["--batch", "10", "--run-id", "again"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(
        summary.contains(
            "sequential: stopped after 30 of 120 targets (decided: better): 30 calls instead of about 120 for all 120; 3 looks"
        ),
        "{summary}"
    );
    assert!(summary.contains("--sequential"), "{summary}");
    same_as_committed("capacity-live", runs.path(), &["queries.jsonl"]);
    let log = |path: &Path| -> Value {
        let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        v["sequential"].clone()
    };
    let again = log(&runs.path().join("again/collect.json"));
    assert_eq!(again, log(&root.join("corpora/capacity-live/collect.json")));
    assert_eq!(again["stopped"], "better");
    assert_eq!(again["looks"].as_array().unwrap().len(), 3);
    assert_eq!(again["order"].as_array().unwrap().len(), 120);
    // Replayed in the order it was collected, the decision is the one it stopped on, reached
    // within its last batch.
    let replay = calibench()
        .current_dir(root)
        .args(["run", "corpora/capacity-live", "--corpus"])
        .arg(runs.path().join("again"))
        .arg("--runs-dir")
        .arg(runs.path().join("out"))
        .arg("--reports-dir")
        .arg(runs.path().join("rep"))
        .args(["--no-plots", "--json", "--bootstrap", "100"])
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let m: Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(m["sequential"]["verdict"], "better");
    assert_eq!(m["sequential"]["order_from"], "collect.json");
    assert_eq!(m["sequential"]["method"], "hedged");
    // The order it ran on is the collection's, cut to the units collected.
    let recorded: Vec<Value> = again["order"].as_array().unwrap()[..30].to_vec();
    assert_eq!(m["sequential"]["order"], Value::Array(recorded));
    let at = m["sequential"]["stopped_at"].as_u64().unwrap();
    assert!((21..=30).contains(&at), "{at}");
    // A resume after the stop has nothing to run.
    let out = collect(&["--resume", "again"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("0 calls recorded now"), "{text}");
    assert!(text.contains("stopped after 30 of 120 targets"), "{text}");
    // A budget stops it undecided.
    let out = collect(&["--batch", "10", "--max-targets", "20", "--run-id", "small"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("stopped after 20 of 120 targets (undecided at its budget of 20 targets): 20 calls instead of about 120 for all 120; 2 looks"),
        "{text}"
    );
    // Resumed, it keeps its budget; a larger one goes on from its last look, and stops where
    // the decision is reached.
    let out = collect(&["--resume", "small"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("0 calls recorded now") && text.contains("stopped after 20 of 120 targets"),
        "{text}"
    );
    let out = collect(&["--resume", "small", "--max-targets", "50"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("10 calls recorded now")
            && text.contains("stopped after 30 of 120 targets (decided: better): 30 calls instead of about 120 for all 120; 3 looks"),
        "{text}"
    );
    // A collection made without --until-decided cannot be resumed with it.
    let plain = calibench()
        .current_dir(root)
        .args(["collect", "corpora/capacity-live", "--run-id", "plain"])
        .arg("--runs-dir")
        .arg(runs.path())
        .output()
        .unwrap();
    assert!(plain.status.success());
    let out = collect(&["--resume", "plain"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not a sequential collection"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// Regression (hostile-4/17 h): after `kill -9` of `collect`, the calls it had running lived on
// (reparented to init) and the next resume did not end them. A resume kills what a dead
// collection of its run left running before it collects again.
#[test]
fn a_resume_ends_what_a_killed_collection_left_running() {
    let s = Setup::new(&["hang"], "timeout_s = 30\nretries = 0\nconcurrency = 4");
    let pids = s.root().join("pids");
    let mut child = s.spawn_with(&["--run-id", "k"], &[("PIDS", &pids)]);
    let started = Instant::now();
    while std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .lines()
        .count()
        < 4
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no call started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let left: Vec<String> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert!(left.iter().any(|p| !dead(p)), "nothing was left running");
    // The resume (with a short timeout, which a resume may change) ends them first.
    let exp = std::fs::read_to_string(s.root().join("experiment.toml")).unwrap();
    std::fs::write(
        s.root().join("experiment.toml"),
        exp.replace("timeout_s = 30", "timeout_s = 1"),
    )
    .unwrap();
    let _ = s.resume("k").env("PIDS", s.root().join("pids2")).output();
    for pid in &left {
        assert!(
            dead(pid),
            "process {pid} of the killed collection outlived it"
        );
    }
}

/// A harness file that changes between two batches of a sequential collection is recorded
/// once, with the calls of the whole collection before and after it, and `run` says so as a
/// caveat: the batches share one watch of the harness, as they share one plan.
#[test]
fn a_harness_change_during_a_sequential_collection_is_one_caveat_counting_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let live = dir.path().join("live");
    common::copy_dir(&root.join("corpora/capacity-live"), &live);
    // The agent edits its prompt file while answering its 12th query (in the second batch).
    std::fs::write(
        live.join("agent.sh"),
        "#!/bin/sh\nn=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count\n[ \"$n\" = 12 ] && echo v2 > prompt.txt\ncat\n",
    )
    .unwrap();
    std::fs::write(live.join("prompt.txt"), "v1\n").unwrap();
    let exp = std::fs::read_to_string(live.join("experiment.toml"))
        .unwrap()
        .replace(
            r#"command = ["./agent.sh", "{target}"]"#,
            r#"command = ["./agent.sh", "--prompt=prompt.txt"]"#,
        )
        .replace("concurrency = 4", "concurrency = 1");
    std::fs::write(live.join("experiment.toml"), exp).unwrap();
    let out = Std::new(assert_cmd::cargo::cargo_bin("calibench"))
        .current_dir(&live)
        .args(["collect", ".", "--until-decided", "--batch", "10"])
        .args(["--run-id", "u", "--runs-dir", "runs"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value =
        serde_json::from_slice(&std::fs::read(live.join("runs/u/collect.json")).unwrap()).unwrap();
    assert_eq!(m["sequential"]["looks"].as_array().unwrap().len(), 3);
    let changed = m["stages"][0]["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "recorded once: {changed:?}");
    assert_eq!(changed[0]["calls_before"], 11);
    let out = Std::new(assert_cmd::cargo::cargo_bin("calibench"))
        .current_dir(&live)
        .args([
            "run",
            "experiment.toml",
            "--corpus",
            "runs/u",
            "--sequential",
            "--no-plots",
        ])
        .args(["--runs-dir", "out", "--reports-dir", "rep"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("prompt.txt changed while the reviewers stage ran: 11 calls were made before the change and 19 calls after"),
        "{stderr}"
    );
}
