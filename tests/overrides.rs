//! `--set KEY=VALUE` (docs/guides/ab-rubric-change.md, "Trying a setting without editing the
//! file"): a key of experiment.toml set for one run, read exactly as if the file said it, and
//! recorded in the manifest and the report; an override that the file could not say is refused
//! naming the override, with nothing written.

mod common;

use std::path::{Path, PathBuf};

use common::{calibench, json_of, run_into};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-ab/experiment.toml")
}

#[test]
fn an_override_gives_the_run_the_file_would_give_with_that_key() {
    let tmp = tempfile::tempdir().unwrap();
    // The experiment as a file that says the key itself.
    let edited = tmp.path().join("edited");
    common::copy_dir(example().parent().unwrap(), &edited);
    let text = std::fs::read_to_string(edited.join("experiment.toml")).unwrap();
    let text = text.replacen(
        "[arms.treatment.review]\n",
        "[arms.treatment.review]\nactionable_from = 50\n",
        1,
    );
    assert!(text.contains("actionable_from = 50"));
    std::fs::write(edited.join("experiment.toml"), text).unwrap();

    let by_file = json_of(
        run_into(tmp.path().join("a/runs"), edited.join("experiment.toml"))
            .args(["--json", "--no-plots"]),
    );
    let by_flag = json_of(
        run_into(tmp.path().join("b/runs"), example())
            .args(["--json", "--no-plots"])
            .args(["--set", "arms.treatment.review.actionable_from=50"]),
    );
    let plain =
        json_of(run_into(tmp.path().join("c/runs"), example()).args(["--json", "--no-plots"]));
    let actionable = |m: &serde_json::Value| m["review"]["arms"]["treatment"]["actionable"].clone();
    assert_eq!(actionable(&by_flag), actionable(&by_file));
    assert_ne!(
        actionable(&by_flag),
        actionable(&plain),
        "the override changed nothing"
    );
    assert_eq!(by_flag["review"], by_file["review"]);
}

#[test]
fn the_manifest_and_the_report_say_what_was_set() {
    let tmp = tempfile::tempdir().unwrap();
    run_into(tmp.path().join("runs"), example())
        .args(["--no-plots", "--quiet", "--run-id", "r"])
        .args(["--set", "arms.treatment.review.actionable_from=50"])
        .args(["--set", "bootstrap=500"])
        .assert()
        .success();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("runs/r/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["overrides"],
        serde_json::json!(["arms.treatment.review.actionable_from=50", "bootstrap=500"])
    );
    assert_eq!(manifest["bootstrap"], 500);
    let report = std::fs::read_to_string(tmp.path().join("reports/r/report.md")).unwrap();
    assert!(
        report.contains("| set on the command line | arms.treatment.review.actionable_from=50 |")
    );
    assert!(report.contains("| set on the command line | bootstrap=500 |"));
}

#[test]
fn a_bad_override_is_refused_naming_it_and_nothing_is_written() {
    for (set, expected) in [
        (
            "arms.treatment.review.actionable_from=abc",
            "experiment.toml (--set arms.treatment.review.actionable_from=abc): `arms.treatment.review.actionable_from`: must be a number, not string \"abc\"",
        ),
        (
            "arms.treatment.review.actionabl_from=50",
            "unknown key `actionabl_from` — did you mean `actionable_from`?",
        ),
        (
            "arms.treatmnt.review.gate=0.5",
            "unknown key `treatmnt` — did you mean `treatment`?",
        ),
        // The baseline's float-gates policy takes no anchored thresholds.
        (
            "arms.baseline.review.surface_from=50",
            "`arms.baseline.review.surface_from`: unknown key `surface_from`",
        ),
        (
            "name.x=1",
            "`name` is string, not a table: --set cannot set a key inside it",
        ),
        ("trust.irr_floor=inf", "`trust.irr_floor`: must be a finite number"),
        ("bootstrap=-1", "`bootstrap`"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path().join("runs");
        let out = run_into(&runs, example())
            .args(["--set", set])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{set}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{set}: {stderr}");
        assert!(!runs.exists() || std::fs::read_dir(&runs).unwrap().count() == 0);
        // validate says the same.
        let out = calibench()
            .args(["validate"])
            .arg(example())
            .args(["--set", set])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "validate {set}");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(all.contains(expected), "validate {set}: {all}");
    }
}

#[test]
fn a_set_that_is_not_key_equals_value_is_a_usage_error() {
    for set in ["foo", "=1", "a..b=1"] {
        let out = calibench()
            .args(["run"])
            .arg(example())
            .args(["--set", set])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{set}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--set"),
            "{set}"
        );
    }
}
