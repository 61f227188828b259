//! Messages that fit the mistake (hostile round 3, folder 16): each input is refused or
//! answered with words that say what is wrong and what to do, never serde's internals, a
//! misleading key or a command that cannot be pasted.

use std::path::{Path, PathBuf};

mod common;

use common::{calibench, copy_dir};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn out(cmd: &mut assert_cmd::Command) -> (i32, String, String) {
    let o = cmd.output().unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn scaffold(dir: &Path, kind: &str) -> PathBuf {
    let c = dir.join(kind);
    calibench()
        .arg("init")
        .arg(&c)
        .args(["--kind", kind])
        .assert()
        .success();
    c
}

// (i) require_decision's values are named, not "any variant of untagged enum".
#[test]
fn a_gate_policy_names_the_verdicts_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("gate.toml");
    for (text, says) in [
        ("require_decision = \"awesome\"\n", "`awesome` is not one of better, worse, inconclusive, withheld"),
        ("require_decision = \"Better\"\n", "`Better` is not one of better, worse, inconclusive, withheld; did you mean `better`?"),
        ("require_decision = 1\n", "must be a verdict (better, worse, inconclusive, withheld) or a list of them, not integer"),
        ("require_decision = [\"better\", \"meh\"]\n", "`meh` is not one of"),
    ] {
        std::fs::write(&policy, text).unwrap();
        let (code, _, err) = out(calibench()
            .arg("gate")
            .arg(root().join("corpora/capacity-50"))
            .arg("--policy")
            .arg(&policy));
        assert_eq!(code, 2, "{text}: {err}");
        assert!(err.contains(says), "{text}: {err}");
        assert!(!err.contains("untagged"), "{err}");
    }
}

// (j), (k) decision metrics the corpus cannot measure are refused in words that say why.
#[test]
fn decision_metrics_a_corpus_cannot_measure_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let doc = scaffold(dir.path(), "doc");
    let (code, stdout, _) = out(calibench()
        .args(["validate", "--set", "decision.rejected=\"decrease\""])
        .arg(&doc));
    assert_eq!(code, 2);
    assert!(
        stdout.contains("decision metric `rejected` is measured by code review's precision controls (the validation pass, skip rules, lint-ignore), but mode is doc"),
        "{stdout}"
    );
    // A scorer named like a catalogue metric: the catalogue's name would shadow it.
    let scores = scaffold(dir.path(), "scores");
    let path = scores.join("scores.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"accuracy\"", "\"precision\"");
    std::fs::write(&path, text).unwrap();
    let exp = scores.join("experiment.toml");
    let text = std::fs::read_to_string(&exp)
        .unwrap()
        .replace("accuracy = \"increase\"", "precision = \"increase\"");
    std::fs::write(&exp, text).unwrap();
    let (code, stdout, _) = out(calibench().arg("validate").arg(&scores));
    assert_eq!(code, 2);
    assert!(
        stdout.contains("`precision` is both a metric of the catalogue (which this corpus cannot measure) and a scorer of scores.jsonl"),
        "{stdout}"
    );
}

// (l) an empty name, or one that reads as a flag, is refused.
#[test]
fn an_empty_name_or_one_that_reads_as_a_flag_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let doc = scaffold(dir.path(), "doc");
    for (set, says) in [
        ("name=\"\"", "`name`: is empty"),
        ("name=\" \"", "`name`: is empty"),
        ("name=\"-x\"", "starts with `-`"),
    ] {
        let (code, stdout, _) = out(calibench().args(["validate", "--set", set]).arg(&doc));
        assert_eq!(code, 2, "{set}");
        assert!(stdout.contains(says), "{set}: {stdout}");
    }
}

// (m) init's hint names the kind asked for, and its commands paste back.
#[test]
fn init_hints_the_kind_asked_for_and_quotes_paths() {
    let dir = tempfile::tempdir().unwrap();
    let taken = dir.path().join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("x"), "").unwrap();
    let (code, _, err) = out(calibench()
        .arg("init")
        .arg(&taken)
        .args(["--kind", "queries"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("calibench init my-corpus --kind queries"),
        "{err}"
    );
    let spaced = dir.path().join("dir with spaces");
    let (code, stdout, _) = out(calibench().arg("init").arg(&spaced).args(["--kind", "doc"]));
    assert_eq!(code, 0);
    assert!(
        stdout.contains(&format!("calibench run '{}'", spaced.display())),
        "{stdout}"
    );
}

// (n) a sweep's run directory is not a run: report, plan, accept and gate refuse it (exit 2).
#[test]
fn a_sweeps_run_directory_is_refused_where_a_run_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let (runs, reports) = (dir.path().join("runs"), dir.path().join("reports"));
    let (code, _, err) = out(calibench()
        .arg("sweep")
        .arg(root().join("corpora/capacity-50"))
        .args([
            "--arm",
            "treatment",
            "--vary",
            "confidence.recovery_threshold=0.4,0.5",
            "--run-id",
            "s",
            "--no-plots",
            "--bootstrap",
            "50",
        ])
        .arg("--runs-dir")
        .arg(&runs)
        .arg("--reports-dir")
        .arg(&reports));
    assert_eq!(code, 0, "{err}");
    let sweep = runs.join("s");
    for args in [
        vec!["report"],
        vec!["plan", "--metric", "final_accuracy"],
        vec!["accept", "--to", "acc"],
        vec!["gate"],
    ] {
        let mut cmd = calibench();
        cmd.arg(args[0]).arg(&sweep).args(&args[1..]);
        if args[0] == "report" {
            cmd.arg("--reports-dir").arg(dir.path().join("again"));
        }
        cmd.current_dir(dir.path());
        let (code, _, err) = out(&mut cmd);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("is a threshold sweep's metrics.json, not a run's"),
            "{args:?}: {err}"
        );
    }
}

// (o) a run or a sweep never replaces the report of a run of another runs folder.
#[test]
fn a_report_of_another_runs_folder_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let capacity = dir.path().join("capacity");
    copy_dir(&root().join("corpora/capacity-50"), &capacity);
    let run = |runs: &str| {
        out(calibench()
            .arg("run")
            .arg(&capacity)
            .args(["--run-id", "X", "--no-plots", "--bootstrap", "50"])
            .arg("--runs-dir")
            .arg(dir.path().join(runs))
            .arg("--reports-dir")
            .arg(dir.path().join("rep")))
    };
    assert_eq!(run("r1").0, 0);
    let before = std::fs::read(dir.path().join("rep/X/report.md")).unwrap();
    let (code, _, err) = run("r2");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("already holds the report of a run `X` that is not in"),
        "{err}"
    );
    let (code, _, err) = out(calibench()
        .arg("sweep")
        .arg(&capacity)
        .args([
            "--arm",
            "treatment",
            "--vary",
            "confidence.recovery_threshold=0.4,0.5",
            "--run-id",
            "X",
            "--no-plots",
            "--bootstrap",
            "50",
        ])
        .arg("--runs-dir")
        .arg(dir.path().join("r3"))
        .arg("--reports-dir")
        .arg(dir.path().join("rep")));
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        std::fs::read(dir.path().join("rep/X/report.md")).unwrap(),
        before
    );
    assert!(!dir.path().join("r2/X").exists() && !dir.path().join("r3/X").exists());
}

// A judged item is looked up in the returns as read: without an experiment, or with one that is
// refused, a verdict naming a real target is not called unknown (one mistake, one message).
#[test]
fn judged_items_resolve_without_an_experiment_and_past_a_refused_one() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("c");
    copy_dir(&root().join("corpora/code-review-live"), &corpus);
    let exp = std::fs::read_to_string(corpus.join("experiment.toml")).unwrap();
    std::fs::remove_file(corpus.join("experiment.toml")).unwrap();
    let (code, stdout, err) = out(calibench().arg("validate").arg(&corpus));
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(!err.contains("no target or finding id"), "{err}");

    // A typo in one verdict's item is still found, with the id it likely meant.
    let verdicts = corpus.join("verdicts.jsonl");
    let text = std::fs::read_to_string(&verdicts).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let id = first["item_id"].as_str().unwrap().to_string();
    let typo = format!("{id}x");
    std::fs::write(&verdicts, text.replacen(&id, &typo, 1)).unwrap();
    let (code, stdout, err) = out(calibench().arg("validate").arg(&corpus));
    let err = stdout + &err;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1 of"), "{err}");
    assert!(err.contains(&format!("did you mean `{id}`")), "{err}");
    std::fs::write(&verdicts, text).unwrap();

    // An experiment refused for a typo in its decision: that one problem, nothing downstream.
    let broken = exp.replacen("= \"increase\"", "= \"increse\"", 1);
    assert_ne!(
        broken, exp,
        "the example decides on a metric that must increase"
    );
    std::fs::write(corpus.join("experiment.toml"), broken).unwrap();
    let (code, stdout, err) = out(calibench()
        .arg("validate")
        .arg(corpus.join("experiment.toml")));
    let err = stdout + &err;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`increse` is not one of"), "{err}");
    assert!(err.contains("1 problem:"), "{err}");
}

// Issue 50: confidences like 62 and 74 on the float scale are percentages, not anchors: the
// hint says to divide by 100 (setting scale = "anchor" would only fail again).
#[test]
fn percentages_on_the_float_scale_are_told_to_divide_by_100() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    copy_dir(&root().join("tests/fixtures/quickstart"), &c);
    let reviews = std::fs::read_to_string(c.join("reviews.jsonl")).unwrap();
    let mut n = 0;
    let changed: String = reviews
        .lines()
        .map(|l| {
            if l.contains("\"arm\": \"baseline\"") {
                // Every baseline confidence as a percentage: 0.62 → 62.
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                for f in v["findings"].as_array_mut().unwrap() {
                    n += 1;
                    f["confidence"] = (61 + n % 30).into();
                }
                format!("{v}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(c.join("reviews.jsonl"), changed).unwrap();
    let (code, _, err) = out(calibench()
        .arg("run")
        .arg(&c)
        .arg("--runs-dir")
        .arg(dir.path().join("runs"))
        .arg("--reports-dir")
        .arg(dir.path().join("reports")));
    assert_eq!(code, 2);
    assert!(
        err.contains("look like percentages: divide them by 100"),
        "{err}"
    );
    assert!(!err.contains("set scale = \"anchor\""), "{err}");
}

// Issue 50: a verdict withheld for item spread alone names that check and its item count, and
// says the agreement itself is above its floor (it read "do not agree enough (IRR 0.837 …)").
#[test]
fn a_withheld_verdict_names_the_check_that_failed() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = out(calibench()
        .arg("run")
        .arg(root().join("corpora/code-review-ab"))
        .arg("--runs-dir")
        .arg(dir.path().join("runs"))
        .arg("--reports-dir")
        .arg(dir.path().join("reports"))
        .args(["--no-plots", "--bootstrap", "50"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("check (2) failed: 1 item's judges spread more than 0.5 ([trust] spread_ceiling); their agreement, IRR 0.837, is above its floor 0.2"),
        "{out}"
    );
    assert!(!out.contains("do not agree enough"), "{out}");
}
