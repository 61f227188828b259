//! A collection is an input too (docs/guides/live-collection.md, "Failed calls", "Partial
//! collections", "Provenance and drift"): live collections made here with a small fake
//! reviewer, each with one thing wrong — an arm whose every call failed, a reviewer failing in
//! one arm, a flaky reviewer, a script edited mid-collection, a prompt passed as `--prompt=FILE`
//! and a program found on `PATH`, a shard replayed alone, an interrupted shard resumed by the
//! command collect printed — and what `collect` and `run` say of each.

mod common;

use std::path::Path;
use std::process::{Command as Std, Output, Stdio};

use common::calibench;
use serde_json::Value;

/// The fake reviewer: one finding per return, its confidence on the arm's scale (a float for
/// `float`, an anchor for `anchored`). `BROKEN` says what goes wrong: `percent` writes the
/// float arm's confidences as percentages (every one of its calls fails on arrival); `one`
/// makes reviewer `b` fail in the float arm; `flaky` makes reviewer `a` exit 3 on `beta` in the
/// float arm; `edit` appends a line to this script when it reviews `gamma` for the anchored
/// arm. `SLOW` sleeps that many seconds first.
const REVIEWER: &str = r##"#!/bin/sh
persona=$1 target=$2 arm=$3 run=$4
cat > /dev/null
[ -n "$SLOW" ] && sleep "$SLOW"
if [ "$arm" = float ]; then conf=0.6; else conf=75; fi
case "$BROKEN:$persona:$arm:$target" in
  percent:*:float:*) conf=68 ;;
  one:b:float:*) echo "quota exceeded" >&2; exit 4 ;;
  flaky:a:float:beta) echo "model overloaded" >&2; exit 3 ;;
  edit:a:anchored:gamma) echo "# edited while collecting" >> "$0" ;;
esac
printf '{"findings": [{"id": "f1", "title": "Rollback is unspecified", "severity": "P1", "section": "Plan", "finding_type": "omission", "autofix_class": "manual", "confidence": %s, "suggested_fix": null}]}\n' "$conf"
"##;

/// A folder with four documents, the fake reviewer and an experiment that collects both arms
/// with reviewers `a` and `b`; `command` is the `[collect]` command.
struct Live {
    dir: tempfile::TempDir,
}

impl Live {
    fn new(command: &str) -> Live {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        for (name, text) in [
            ("alpha", "# Plan\nShip the parser.\n"),
            ("beta", "# Plan\nRewrite storage in two weeks.\n"),
            ("gamma", "# Plan\nMove the queue.\nTBD.\n"),
            ("delta", "# Plan\nDrop the cache.\n"),
        ] {
            std::fs::write(root.join(format!("docs/{name}.md")), text).unwrap();
        }
        let script = root.join("rev.sh");
        std::fs::write(&script, REVIEWER).unwrap();
        chmod_x(&script);
        std::fs::write(
            root.join("experiment.toml"),
            format!(
                r#"name = "live"
mode = "doc"
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

[decision]
distinct_values = "decrease"

[collect]
command = {command}
reviewers = ["a", "b"]
targets = "docs/*.md"
retries = 0
concurrency = 1
"#
            ),
        )
        .unwrap();
        Live { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn cmd(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = calibench();
        c.current_dir(self.root()).args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// `collect experiment.toml --runs-dir runs --run-id ID` with `env`.
    fn collect(&self, id: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let mut args = vec![
            "collect",
            "experiment.toml",
            "--runs-dir",
            "runs",
            "--run-id",
            id,
        ];
        args.extend_from_slice(extra);
        self.cmd(&args, env)
    }

    /// `run experiment.toml --corpus CORPUS` into `out/ID`, with `extra`.
    fn run(&self, corpus: &str, id: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "run",
            "experiment.toml",
            "--corpus",
            corpus,
            "--runs-dir",
            "out",
            "--reports-dir",
            "rep",
            "--run-id",
            id,
            "--no-plots",
        ];
        args.extend_from_slice(extra);
        self.cmd(&args, &[])
    }

    /// `merge ab --arm float=runs/B --arm anchored=runs/T`, then `run` of it: its stderr
    /// (both must succeed).
    fn merged_run(&self, baseline: &str, treatment: &str) -> String {
        let (b, t) = (
            format!("float=runs/{baseline}"),
            format!("anchored=runs/{treatment}"),
        );
        let out = self.cmd(&["merge", "ab", "--arm", &b, "--arm", &t], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let out = self.run("ab", "r", &[]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        stderr
    }

    fn metrics(&self, id: &str) -> Value {
        let path = self.root().join("out").join(id).join("metrics.json");
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    fn record(&self, id: &str) -> Value {
        let path = self.root().join("runs").join(id).join("collect.json");
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }
}

fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SCRIPT: &str = r#"["./rev.sh", "{reviewer}", "{target}", "{arm}", "{run}"]"#;

#[test]
fn an_arm_whose_every_call_failed_is_refused_naming_the_scale_fix() {
    let live = Live::new(SCRIPT);
    let out = live.collect("c", &[], &[("BROKEN", "percent")]);
    let said = text(&out.stdout);
    // Collected, and said: exit 1, an error line, and no "Replay it".
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("warning: 8 calls failed"), "{said}");
    assert!(
        said.contains("error: arm `baseline` has no successful reviewer call: all 8 failed"),
        "{said}"
    );
    assert!(!said.contains("Replay it"), "{said}");
    let out = live.run("runs/c", "r", &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("arm `baseline` has no successful reviewer call: all 8 failed, the commonest for invalid output — findings[0].confidence: 68 is off the float scale"),
        "{err}"
    );
    // The fix, as for a malformed finding: percentages.
    assert!(
        err.contains("look like percentages: divide them by 100"),
        "{err}"
    );
    assert!(!live.root().join("out/r").exists());
}

#[test]
fn a_reviewer_failing_in_one_arm_only_is_refused() {
    let live = Live::new(SCRIPT);
    let out = live.collect("c", &[], &[("BROKEN", "one")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout)
        .contains("error: reviewer `b` has no successful call in the baseline (all 4 failed) but 4 in the treatment"));
    let out = live.run("runs/c", "r", &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("reviewer `b` has no successful call in the baseline (all 4 failed) but 4 in the treatment, the commonest for exited non-zero — status 4; stderr: quota exceeded"), "{err}");
}

#[test]
fn a_flaky_reviewer_is_a_caveat_naming_count_reason_and_the_other_arm() {
    let live = Live::new(SCRIPT);
    let out = live.collect("c", &[], &[("BROKEN", "flaky")]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("warning: 1 call failed"), "{said}");
    let out = live.run("runs/c", "r", &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let sentence = "1 of 8 baseline reviewer calls failed: exited non-zero — status 3; stderr: model overloaded (first: float · beta · a · run 0); none of the treatment's failed, so the arms compare different sets of calls";
    assert!(stderr.contains(sentence), "{stderr}");
    assert!(stdout.contains("— with 1 caveat"), "{stdout}");
    let m = live.metrics("r");
    let a = &m["inputs"]["calls"]["baseline"]["reviewer"]["a"];
    assert_eq!(a["planned"], 4);
    assert_eq!(a["ok"], 3);
    assert_eq!(a["failed"]["exit"]["count"], 1);
    assert_eq!(m["inputs"]["calls"]["treatment"]["reviewer"]["a"]["ok"], 4);
    assert_eq!(m["decision"]["caveats"][0]["sentence"], sentence);
    assert_eq!(m["decision"]["caveats"][0]["kind"], "failed-calls");
    assert_eq!(m["decision"]["caveats"][0]["failure"], "exit");
    // --strict refuses it, naming the line.
    let out = live.run("runs/c", "strict", &["--strict"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("reviews.jsonl:"));
}

#[test]
fn a_script_edited_while_collecting_is_a_caveat_naming_the_calls_before_and_after() {
    let live = Live::new(SCRIPT);
    let out = live.collect("c", &[], &[("BROKEN", "edit")]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("warning: ./rev.sh changed while the reviewers stage ran"),
        "{said}"
    );
    let changed = &live.record("c")["stages"][0]["changed"][0];
    assert_eq!(changed["file"], "./rev.sh");
    assert_ne!(changed["before"], changed["after"]);
    let (before, after) = (
        changed["calls_before"].as_u64().unwrap(),
        changed["calls_after"].as_u64().unwrap(),
    );
    // One call at a time, in plan order (arm, then target, then reviewer): the edit came
    // with the anchored arm's gamma by `a`, the 15th call, which started with the old script.
    assert_eq!((before, after), (14, 2));
    let out = live.run("runs/c", "r", &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("./rev.sh changed while the reviewers stage ran: {before} calls were made before the change and {after} calls after")),
        "{stderr}"
    );
}

#[test]
fn a_prompt_flag_file_and_a_program_on_path_are_hashed_and_their_change_is_drift() {
    let live =
        Live::new(r#"["myrev", "--prompt=prompt.md", "{reviewer}", "{target}", "{arm}", "{run}"]"#);
    let root = live.root();
    std::fs::create_dir_all(root.join("bin")).unwrap();
    // The reviewer installed as a program on PATH, reading its prompt from --prompt=FILE.
    let program = REVIEWER.replace(
        "persona=$1 target=$2 arm=$3 run=$4",
        "shift; persona=$1 target=$2 arm=$3 run=$4",
    );
    std::fs::write(root.join("bin/myrev"), &program).unwrap();
    chmod_x(&root.join("bin/myrev"));
    std::fs::write(root.join("prompt.md"), "Review the plan.\n").unwrap();
    let path = format!(
        "{}:{}",
        root.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let out = live.collect("week1", &[], &[("PATH", &path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let files =
        &live.record("week1")["provenance"]["arms"]["float"]["roles"]["reviewer"]["a"]["files"];
    assert!(files["prompt.md"].is_string(), "{files}");
    assert!(files["myrev"].is_string(), "{files}");
    // The prompt and the program both change before the treatment is collected again.
    std::fs::write(root.join("prompt.md"), "Review the plan strictly.\n").unwrap();
    std::fs::write(root.join("bin/myrev"), format!("{program}# v2\n")).unwrap();
    let out = live.collect("week2", &[], &[("PATH", &path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = live.merged_run("week1", "week2");
    assert!(
        stderr.contains("reviewers `a` and `b` files differ between the arms"),
        "{stderr}"
    );
}

/// The words a line of `text` begins with `prefix`, up to its end.
fn printed_command(text: &str, prefix: &str) -> String {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no `{prefix}` in {text}"));
    text[at + prefix.len()..]
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_string()
}

/// Runs a command calibench printed, as a user pastes it into a shell, with calibench on PATH.
fn paste(root: &Path, command: &str) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("calibench");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    Std::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(root)
        .env("PATH", path)
        .output()
        .unwrap()
}

#[test]
fn an_interrupted_shard_resumes_by_the_command_it_printed_and_alone_is_partial() {
    let live = Live::new(SCRIPT);
    let root = live.root();
    // Interrupted after its first recorded call.
    let child = Std::new(assert_cmd::cargo::cargo_bin("calibench"))
        .current_dir(root)
        .args([
            "collect",
            "experiment.toml",
            "--runs-dir",
            "runs",
            "--run-id",
            "s1",
            "--shard",
            "1/2",
        ])
        .env("SLOW", "0.3")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let reviews = root.join("runs/s1/reviews.jsonl");
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&reviews)
        .unwrap_or_default()
        .lines()
        .count()
        < 1
    {
        assert!(started.elapsed().as_secs() < 60, "no call recorded");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = Std::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let said = text(&out.stdout);
    let resume = printed_command(&said, "Continue: ");
    assert!(resume.contains("--shard 1/2"), "{resume}");
    // `run` refuses the unfinished shard, printing the same command.
    let out = live.run("runs/s1", "early", &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let hint = printed_command(&err, "finish it first: ");
    let hint = hint.split("; or replay").next().unwrap().to_string();
    assert_eq!(hint, resume);
    // Pasted as printed, the resume finishes the shard.
    let out = paste(root, &resume);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
    let replay = printed_command(&said, "Replay it: ");
    assert!(replay.ends_with("--allow-partial"), "{replay}");
    // Alone, without the flag, the shard is refused as part of the plan.
    let out = live.run("runs/s1", "alone", &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let held = live.record("s1")["targets"].as_array().unwrap().len();
    assert_eq!(held, 4);
    assert!(err.contains("shard 1/2: "), "{err}");
    assert!(err.contains("targets of the plan"), "{err}");
    assert!(err.contains("merge the shards"), "{err}");
    // The printed replay runs, and every decision line says it is partial.
    let out = paste(
        root,
        &format!("{replay} --runs-dir out --reports-dir rep --run-id pasted --no-plots"),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("caveat"), "{stdout}");
    assert!(stderr.contains("replayed with --allow-partial"), "{stderr}");
}

#[test]
fn a_collection_with_a_target_s_lines_deleted_is_refused_as_partial() {
    let live = Live::new(SCRIPT);
    let out = live.collect("c", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let file = live.root().join("runs/c/reviews.jsonl");
    let kept: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"target\":\"delta\""))
        .map(str::to_string)
        .collect();
    std::fs::write(&file, kept.join("\n") + "\n").unwrap();
    let out = live.run("runs/c", "r", &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("arm label `float` holds 3 of 4 targets of the plan (first missing: `delta`)"),
        "{err}"
    );
}

// Regression (hostile-4/16): a sequential collection whose look failed after a paid batch
// was left `complete` with no looks, and `run` decided on it as if it were whole.
#[test]
fn a_sequential_look_that_fails_leaves_the_collection_incomplete_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let root = capacity_live(dir.path());
    // The agent's backend is down: every call fails, so the first look's replay is refused.
    std::fs::write(
        root.join("agent.sh"),
        "#!/bin/sh\ncat > /dev/null\necho 'backend down' >&2\nexit 1\n",
    )
    .unwrap();
    chmod_x(&root.join("agent.sh"));
    let out = collect_sequential(&root);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("has no successful agent call"), "{err}");
    let record: Value =
        serde_json::from_slice(&std::fs::read(root.join("runs/seq/collect.json")).unwrap())
            .unwrap();
    assert_eq!(record["status"], "incomplete");
    let reason = record["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("sequential: look 1 (after 10 targets) failed:"),
        "{reason}"
    );
    let out = calibench()
        .current_dir(&root)
        .args(["run", ".", "--corpus", "runs/seq", "--runs-dir", "out"])
        .args(["--reports-dir", "rep", "--no-plots"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is an unfinished collection (status `incomplete`: sequential: look 1 (after 10 targets) failed:"),
        "{err}"
    );
}

// Regression (hostile-4/09): the printed resume commands dropped --shard, --aa and
// --until-decided; run as printed they were refused, or collected every target and erased the
// sequential record. A resume without them is refused, printing the command that works.
#[test]
fn a_resume_without_the_flags_it_was_made_with_is_refused_printing_the_one_that_works() {
    let live = Live::new(SCRIPT);
    let out = live.collect("aa", &["--aa"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = live.cmd(
        &[
            "collect",
            "experiment.toml",
            "--runs-dir",
            "runs",
            "--resume",
            "aa",
        ],
        &[],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("field `arms`: was collected with --aa, but this resume has no --aa"),
        "{err}"
    );
    let hint = printed_command(&err, "continue it with: ");
    assert!(hint.ends_with("--aa"), "{hint}");
    let out = paste(live.root(), &hint);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The replay it prints needs no flag beyond --aa, and runs.
    let replay = printed_command(&text(&out.stdout), "Replay it: ");
    let out = paste(
        live.root(),
        &format!("{replay} --runs-dir out --reports-dir rep --run-id aa-run --no-plots"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // A sequential collection keeps its batch and budget in the command.
    let dir = tempfile::tempdir().unwrap();
    let root = capacity_live(dir.path());
    let out = collect_sequential(&root);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let before = std::fs::read(root.join("runs/seq/queries.jsonl")).unwrap();
    let out = calibench()
        .current_dir(&root)
        .args(["collect", ".", "--resume", "seq", "--runs-dir", "runs"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let hint = printed_command(&err, "continue it with: ");
    assert!(
        hint.contains("--until-decided --batch 10 --max-targets 120"),
        "{hint}"
    );
    let out = paste(&root, &hint);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Nothing more collected, and the record of the looks kept.
    assert_eq!(
        std::fs::read(root.join("runs/seq/queries.jsonl")).unwrap(),
        before
    );
    let record: Value =
        serde_json::from_slice(&std::fs::read(root.join("runs/seq/collect.json")).unwrap())
            .unwrap();
    assert!(record["sequential"]["stopped"].is_string());
    let replay = printed_command(&text(&out.stdout), "Replay it: ");
    assert!(replay.ends_with("--sequential"), "{replay}");
    let out = paste(
        &root,
        &format!("{replay} --runs-dir out --reports-dir rep --run-id seq-run --no-plots"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

// A sequential collection writes collect.json after a look at most once a second
// (docs/guides/stop-when-you-know.md, "What a look costs"): one killed after calls and looks
// it had not written yet resumes from the last look written, skips the calls it recorded, and
// makes the same looks again, ending as one never killed.
#[test]
fn a_sequential_collection_killed_before_writing_its_last_looks_resumes_without_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let root = capacity_live(dir.path());
    let out = collect_sequential(&root);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let record_path = root.join("runs/seq/collect.json");
    let whole: Value = serde_json::from_slice(&std::fs::read(&record_path).unwrap()).unwrap();
    let lines = std::fs::read(root.join("runs/seq/queries.jsonl")).unwrap();
    assert_eq!(whole["sequential"]["looks"].as_array().unwrap().len(), 3);
    // As a kill after the third batch's calls would leave it: one look written, running.
    let mut killed = whole.clone();
    killed["sequential"]["looks"]
        .as_array_mut()
        .unwrap()
        .truncate(1);
    killed["sequential"]["stopped"] = Value::Null;
    killed["status"] = Value::from("running");
    std::fs::write(&record_path, serde_json::to_string_pretty(&killed).unwrap()).unwrap();
    let out = calibench()
        .current_dir(&root)
        .args(["collect", ".", "--resume", "seq", "--runs-dir", "runs"])
        .args(["--until-decided"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.contains("0 calls recorded now"), "{stdout}");
    assert!(
        stdout.contains("stopped after 30 of 120 targets (decided: better)"),
        "{stdout}"
    );
    let again: Value = serde_json::from_slice(&std::fs::read(&record_path).unwrap()).unwrap();
    assert_eq!(again["sequential"], whole["sequential"]);
    assert_eq!(
        std::fs::read(root.join("runs/seq/queries.jsonl")).unwrap(),
        lines
    );
}

/// The capacity-live example's experiment and agent in `dir/q`, without its collection.
fn capacity_live(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("q");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/capacity-live"),
        &root,
    );
    for f in ["collect.json", "queries.jsonl"] {
        let _ = std::fs::remove_file(root.join(f));
    }
    root
}

/// `collect . --until-decided --batch 10` of the folder `root` as run `seq`.
fn collect_sequential(root: &Path) -> Output {
    calibench()
        .current_dir(root)
        .args(["collect", ".", "--until-decided", "--batch", "10"])
        .args(["--run-id", "seq", "--runs-dir", "runs"])
        .output()
        .unwrap()
}

// Regression (hostile-4/17 f): a baseline of one repeat merged beside a treatment of two was
// accepted without a word, and run-to-run agreement silently measured on one side.
#[test]
fn arms_with_different_repeats_are_a_caveat() {
    let live = Live::new(SCRIPT);
    let out = live.collect("once", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let exp = std::fs::read_to_string(live.root().join("experiment.toml")).unwrap();
    std::fs::write(
        live.root().join("experiment.toml"),
        exp.replace("concurrency = 1\n", "concurrency = 1\nruns = 2\n"),
    )
    .unwrap();
    let out = live.collect("twice", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = live.merged_run("once", "twice");
    assert!(
        stderr.contains(
            "the arms hold different repeats: 1 run per target in the baseline, 2 in the treatment"
        ),
        "{stderr}"
    );
}
