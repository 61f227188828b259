//! Run directories under real concurrent and killed processes (docs/guides/reports.md): default ids never
//! collide, a given id is never replaced, a killed run's litter is swept by the next run, and a
//! report can never be written over a run.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const EXPERIMENT: &str = "corpora/capacity-50/experiment.toml";

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_calibench"))
}

fn experiment() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(EXPERIMENT)
}

/// `calibench run` of the capacity example into `root/runs` and `root/reports`, not yet started.
fn run_cmd(root: &Path, extra: &[&str]) -> Command {
    run_of(&experiment(), root, extra)
}

/// A run kept slow by `--bootstrap 1000000` after it claims its id. The example's declared
/// sweep is made (and would take that long) before anything is claimed, so the slow run replays
/// a copy of the experiment without it.
fn slow_cmd(root: &Path, id: &str) -> Command {
    let text = std::fs::read_to_string(experiment()).unwrap();
    let corpus = experiment().parent().unwrap().display().to_string();
    let without_sweep = text
        .split("\n[[sweep]]")
        .next()
        .unwrap()
        .replace("corpus = \".\"", &format!("corpus = {corpus:?}"));
    let path = root.join(format!("{id}-slow.toml"));
    std::fs::write(&path, without_sweep).unwrap();
    run_of(&path, root, &["--run-id", id, "--bootstrap", "1000000"])
}

fn run_of(experiment: &Path, root: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(experiment)
        .arg("--runs-dir")
        .arg(root.join("runs"))
        .arg("--reports-dir")
        .arg(root.join("reports"))
        .args(["--no-plots", "--quiet"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn run_id_in(run_dir: &Path) -> String {
    let text = std::fs::read_to_string(run_dir.join("metrics.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["run_id"].as_str().unwrap().to_string()
}

/// Waits until `path` exists (a claim appearing), at most 30 s.
fn wait_for(path: &Path, child: &mut Child) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before {} appeared",
            path.display()
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until a run's claim names its owner: the claim is made first and names its owner a
/// moment later (a claim without one is left alone for a minute, in case it is that moment).
fn wait_for_claim(claim: &Path, child: &mut Child) {
    let owner = claim.join(".calibench-owner");
    wait_for(&owner, child);
    while std::fs::read_to_string(&owner).map_or(true, |t| t.trim().is_empty()) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

// Regression (issue 18): runs of one experiment started in the same second took the same
// default id, and all but one failed with "already exists".
#[test]
fn parallel_runs_with_default_ids_all_succeed_in_their_own_directories() {
    let root = tempfile::tempdir().unwrap();
    for round in 0..3 {
        let children: Vec<Child> = (0..3)
            .map(|_| run_cmd(root.path(), &[]).spawn().unwrap())
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {}", stderr(&out));
        }
    }
    let runs = names(&root.path().join("runs"));
    // Nine runs, each with the sweep its experiment declares ([[sweep]]) in its own directory.
    let sweeps = runs.iter().filter(|r| r.contains("-sweep-")).count();
    assert_eq!((runs.len(), sweeps), (18, 9), "{runs:?}");
    assert!(runs.iter().all(|r| !r.starts_with('.')), "litter: {runs:?}");
    for run in &runs {
        assert_eq!(&run_id_in(&root.path().join("runs").join(run)), run);
    }
    // Each run's report, and the index the last run to finish wrote.
    let mut reports = names(&root.path().join("reports"));
    reports.retain(|r| r != "index.html" && r != "index.md");
    assert_eq!(reports, runs);
}

// Regression (issue 21): two `run --run-id same` at once both exited 0, and the first finished
// run was deleted and replaced by the second.
#[test]
fn a_given_run_id_is_never_replaced_by_a_concurrent_run() {
    let root = tempfile::tempdir().unwrap();
    // One slowed run holds the id while a second, fast one asks for it.
    let mut slow = slow_cmd(root.path(), "same").spawn().unwrap();
    wait_for_claim(&root.path().join("runs/.same.partial"), &mut slow);
    let fast = run_cmd(root.path(), &["--run-id", "same"])
        .output()
        .unwrap();
    assert_eq!(fast.status.code(), Some(2), "{}", stderr(&fast));
    let message = stderr(&fast);
    assert!(
        message.contains("is being written by another calibench run (process"),
        "{message}"
    );
    let slow = slow.wait_with_output().unwrap();
    assert!(slow.status.success(), "{}", stderr(&slow));
    let manifest = root.path().join("runs/same/manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(
        text.contains("\"bootstrap\": 1000000"),
        "the slow run's manifest: {text}"
    );

    // Started together, many times: exactly one wins each round, and it is never replaced.
    for round in 0..8 {
        let id = format!("r{round}");
        let children: Vec<Child> = (0..3)
            .map(|_| run_cmd(root.path(), &["--run-id", &id]).spawn().unwrap())
            .collect();
        let outs: Vec<Output> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let won = outs.iter().filter(|o| o.status.success()).count();
        assert_eq!(
            won,
            1,
            "round {round}: {:?}",
            outs.iter().map(stderr).collect::<Vec<_>>()
        );
        for lost in outs.iter().filter(|o| !o.status.success()) {
            assert_eq!(lost.status.code(), Some(2), "{}", stderr(lost));
        }
        assert_eq!(run_id_in(&root.path().join("runs").join(&id)), id);
    }
    assert!(names(&root.path().join("runs"))
        .iter()
        .all(|r| !r.starts_with('.')));
}

// Regression (issue 18): a run killed with SIGKILL left a hidden partial directory forever.
#[test]
fn a_killed_runs_litter_is_swept_by_the_next_run_and_reported_once() {
    let root = tempfile::tempdir().unwrap();
    let mut doomed = slow_cmd(root.path(), "doomed").spawn().unwrap();
    let claim = root.path().join("runs/.doomed.partial");
    wait_for_claim(&claim, &mut doomed);
    doomed.kill().unwrap(); // SIGKILL: no handler runs
    doomed.wait().unwrap();
    assert!(claim.exists(), "a SIGKILL leaves the claim behind");
    assert!(!root.path().join("runs/doomed").exists());

    let next = run_cmd(root.path(), &["--run-id", "next"])
        .output()
        .unwrap();
    assert!(next.status.success(), "{}", stderr(&next));
    let message = stderr(&next);
    assert_eq!(
        message
            .matches("cleaned up after killed calibench processes")
            .count(),
        1,
        "{message}"
    );
    assert!(message.contains(".doomed.partial"), "{message}");
    assert_eq!(names(&root.path().join("runs")), ["next", "next-sweep-1"]);
    // The id the killed run held is free again.
    let again = run_cmd(root.path(), &["--run-id", "doomed"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!stderr(&again).contains("cleaned up"));
}

// Regression (issue 21): `--runs-dir D --reports-dir D` replaced the run with its report.
#[test]
fn runs_and_reports_in_one_folder_or_nested_are_refused_before_any_work() {
    let root = tempfile::tempdir().unwrap();
    let d = root.path().join("d");
    for (runs, reports) in [
        (d.clone(), d.clone()),
        (d.clone(), d.join("reports")),
        (d.join("runs"), d.clone()),
        (d.clone(), d.join("x/../.")),
    ] {
        let out = Command::new(bin())
            .arg("run")
            .arg(experiment())
            .arg("--runs-dir")
            .arg(&runs)
            .arg("--reports-dir")
            .arg(&reports)
            .arg("--no-plots")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{runs:?} {reports:?}");
        assert!(stderr(&out).contains("--reports-dir"), "{}", stderr(&out));
        assert!(!d.exists(), "nothing is written: {runs:?} {reports:?}");
    }
}

// Regression (issue 21): a 300-character run id failed only when the directory was written,
// after the whole replay, with an operating-system error; it is refused by length, naming it.
#[test]
fn an_overlong_run_id_is_refused_by_its_length() {
    let root = tempfile::tempdir().unwrap();
    let id = "x".repeat(300);
    let out = run_cmd(root.path(), &["--run-id", &id]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("300 characters long"),
        "{}",
        stderr(&out)
    );
    assert!(!root.path().join("runs").exists() || names(&root.path().join("runs")).is_empty());
}

/// `metrics.json` and the CSV tables of a run, with the run id taken out.
fn figures(run_dir: &Path) -> Vec<(String, String)> {
    let id = run_dir.file_name().unwrap().to_string_lossy().into_owned();
    ["metrics.json", "targets.csv", "findings.csv"]
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(run_dir.join(f)).unwrap();
            (f.to_string(), text.replace(&id, "<run-id>"))
        })
        .collect()
}

// Regression (issue 21): the doc example's `entropy_bits` delta came out
// −1.4278117814788327 or −1.4278117814788331 from run to run (a sum in hash-map order).
#[test]
fn same_inputs_and_seed_give_the_same_bytes_whatever_the_threads() {
    let root = tempfile::tempdir().unwrap();
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-ab");
    let mut first: Option<Vec<(String, String)>> = None;
    for (i, threads) in ["1", "3", "1", "2", "4", "1", "3", "2", "1", "4"]
        .iter()
        .enumerate()
    {
        let id = format!("t{i}");
        let out = Command::new(bin())
            .arg("run")
            .arg(&doc)
            .arg("--runs-dir")
            .arg(root.path().join("runs"))
            .arg("--reports-dir")
            .arg(root.path().join("reports"))
            .args([
                "--no-plots",
                "--quiet",
                "--run-id",
                &id,
                "--threads",
                threads,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let now = figures(&root.path().join("runs").join(&id));
        match &first {
            None => first = Some(now),
            Some(first) => {
                for ((file, a), (_, b)) in first.iter().zip(&now) {
                    assert!(a == b, "{file} differs with --threads {threads}");
                }
            }
        }
    }
}

// Regression (issue 21): a failed write must say it is a write failure; and a bad `run_id`
// inside metrics.json must be blamed on that file, not on `--run-id`.
#[test]
fn write_failures_and_forged_run_ids_are_named_for_what_they_are() {
    let root = tempfile::tempdir().unwrap();
    let blocker = root.path().join("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let out = Command::new(bin())
        .arg("run")
        .arg(experiment())
        .arg("--runs-dir")
        .arg(root.path().join("runs"))
        .arg("--reports-dir")
        .arg(blocker.join("reports"))
        .args(["--no-plots", "--run-id", "kept"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let message = stderr(&out);
    assert!(
        message.contains("error: cannot write the result:"),
        "{message}"
    );
    assert!(message.contains("calibench report"), "{message}");
    assert!(root.path().join("runs/kept/metrics.json").is_file());

    let metrics = root.path().join("runs/kept/metrics.json");
    let text = std::fs::read_to_string(&metrics).unwrap();
    std::fs::write(
        &metrics,
        text.replace("\"run_id\": \"kept\"", "\"run_id\": \"../../x\""),
    )
    .unwrap();
    let out = Command::new(bin())
        .arg("gate")
        .arg(root.path().join("runs/kept"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let message = stderr(&out);
    assert!(
        message.contains("metrics.json: `run_id`: `../../x` is not a usable run id"),
        "{message}"
    );
    assert!(!message.contains("--run-id"), "{message}");
}

/// A process id that is no longer alive: a child that has exited and been waited for.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

// Regression (issue 34): only `run` swept what killed processes left, and only in its runs and
// reports folders. Every command that replaces a file or a folder (import's scores.jsonl,
// report's re-rendered folder, accept's accepted run, the gate's summary) now removes a killed
// earlier attempt's `.<name>.partial-<pid>` beside it first, and says so in one line.
#[test]
fn every_writer_sweeps_what_a_killed_writer_of_the_same_name_left() {
    let root = tempfile::tempdir().unwrap();
    let out = run_cmd(root.path(), &["--run-id", "r"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dead = dead_pid();
    let litter = |dir: &Path, name: &str, as_dir: bool| -> std::path::PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(format!(".{name}.partial-{dead}"));
        if as_dir {
            std::fs::create_dir(&p).unwrap();
            std::fs::write(p.join("half.md"), "half").unwrap();
        } else {
            std::fs::write(&p, "half").unwrap();
        }
        p
    };
    let run_dir = root.path().join("runs/r");
    let cases: Vec<(std::path::PathBuf, Vec<String>)> = vec![
        (
            litter(&root.path().join("rerendered"), "r", true),
            vec![
                "report".into(),
                run_dir.display().to_string(),
                "--reports-dir".into(),
                root.path().join("rerendered").display().to_string(),
            ],
        ),
        (
            litter(&root.path().join("ci"), "summary.md", false),
            vec![
                "gate".into(),
                run_dir.display().to_string(),
                "--summary".into(),
                root.path().join("ci/summary.md").display().to_string(),
            ],
        ),
        (
            litter(&root.path().join("scores"), "scores.jsonl", false),
            {
                let csv = root.path().join("s.csv");
                std::fs::write(&csv, "item,score\na,1\n").unwrap();
                vec![
                    "import".into(),
                    "csv".into(),
                    csv.display().to_string(),
                    "--arm".into(),
                    "a".into(),
                    "--into".into(),
                    root.path().join("scores").display().to_string(),
                ]
            },
        ),
    ];
    for (left, args) in cases {
        let out = Command::new(bin())
            .args(&args)
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap();
        let message = stderr(&out);
        assert!(
            !left.exists(),
            "{args:?} left {}: {message}",
            left.display()
        );
        assert_eq!(
            message
                .matches("cleaned up after killed calibench processes")
                .count(),
            1,
            "{args:?}: {message}"
        );
        assert!(message.contains(&format!(".partial-{dead}")), "{message}");
    }
}
