//! Harness drift between the arms (docs/guides/live-collection.md, "Drift"): a reviewer whose
//! reported `model` differs between the arms is a caveat on every decision line, unless the
//! treatment declares it (`[arms.treatment] differs = ["model"]`); `differs` is checked.

mod common;

use std::path::Path;

use common::{calibench, outcome, run_into};

/// The quickstart corpus with each return reporting `model`: `baseline_model` in the baseline,
/// `treatment_model` in the treatment, and `extra` appended to the treatment's arm table.
fn corpus(dir: &Path, treatment_model: &str, extra: &str) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quickstart");
    common::copy_dir(&from, dir);
    let reviews = std::fs::read_to_string(dir.join("reviews.jsonl")).unwrap();
    let with_models: String = reviews
        .lines()
        .map(|l| {
            let model = if l.contains("\"arm\": \"baseline\"") {
                "claude-x"
            } else {
                treatment_model
            };
            format!(
                "{}, \"model\": \"{model}\"}}\n",
                l.trim_end().trim_end_matches('}')
            )
        })
        .collect();
    std::fs::write(dir.join("reviews.jsonl"), with_models).unwrap();
    let exp = std::fs::read_to_string(dir.join("experiment.toml")).unwrap();
    let exp = exp.replace(
        "[arms.treatment.review]",
        &format!("{extra}[arms.treatment.review]"),
    );
    std::fs::write(dir.join("experiment.toml"), exp).unwrap();
}

fn run(dir: &Path) -> (i32, String, String) {
    outcome(run_into(dir.join("runs"), dir).args(["--no-plots", "--bootstrap", "100"]))
}

#[test]
fn a_reviewer_model_that_changes_between_the_arms_is_a_caveat_unless_declared() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    corpus(&c, "claude-y", "");
    let (code, out, err) = run(&c);
    assert_eq!(code, 0, "{err}");
    // One cause, one caveat: both reviewers report the same change of model.
    assert!(
        err.contains("reviewers `feasibility` and `scope` model differ between the arms: claude-x (baseline), claude-y (treatment) (first: reviews.jsonl:1)"),
        "{err}"
    );
    assert!(out.contains("— with 1 caveat"), "{out}");
    // --strict refuses it, naming the line and field.
    let strict = calibench()
        .arg("run")
        .arg(&c)
        .args(["--strict", "--no-plots"])
        .arg("--runs-dir")
        .arg(c.join("runs2"))
        .arg("--reports-dir")
        .arg(c.join("reports2"))
        .output()
        .unwrap();
    assert_eq!(strict.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("reviews.jsonl:1: field `model`"));

    // Declared as the change, it is no caveat.
    let d = dir.path().join("d");
    corpus(&d, "claude-y", "differs = [\"model\"]\n");
    let (code, out, err) = run(&d);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("between the arms:"), "{err}");
    assert!(!out.contains("— with"), "{out}");

    // The same model in both arms: nothing to say.
    let e = dir.path().join("e");
    corpus(&e, "claude-x", "");
    let (_, out, err) = run(&e);
    assert!(
        !err.contains("differs") && !out.contains("— with"),
        "{err}{out}"
    );
}

#[test]
fn differs_is_the_treatments_and_names_what_a_collection_records() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    corpus(&c, "claude-y", "differs = [\"modle\"]\n");
    let (code, _, err) = run(&c);
    assert_eq!(code, 2);
    assert!(
        err.contains("arms.treatment.differs.0")
            && err.contains("`modle` is not something an arm's collection records"),
        "{err}"
    );
    let exp = std::fs::read_to_string(c.join("experiment.toml"))
        .unwrap()
        .replace("differs = [\"modle\"]\n", "")
        .replace(
            "[arms.baseline.review]",
            "differs = [\"model\"]\n[arms.baseline.review]",
        );
    std::fs::write(c.join("experiment.toml"), exp).unwrap();
    let (code, _, err) = run(&c);
    assert_eq!(code, 2);
    assert!(
        err.contains("arms.baseline.differs") && err.contains("is the treatment's"),
        "{err}"
    );
}

/// `collect` records each arm's harness (commands, the files they name, the `provenance_env`
/// variables with secrets hashed, calibench's version), and `run` compares the arms' records:
/// what differs and the treatment does not declare is a caveat naming it.
#[test]
fn collect_records_the_harness_and_run_names_what_differs_between_the_arms() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-live"),
        &live,
    );
    let exp = std::fs::read_to_string(live.join("experiment.toml"))
        .unwrap()
        .replace(
            "[collect.judges]",
            "provenance_env = [\"MODEL\", \"OPENAI_API_KEY\"]\n\n[collect.judges]",
        );
    // Regression (hostile-4/17 l): a misspelt variable in `differs` declared nothing, silently.
    std::fs::write(
        live.join("experiment.toml"),
        exp.replace(
            "source = \"anchored\"\n",
            "source = \"anchored\"\ndiffers = [\"env.MDOEL\"]\n",
        ),
    )
    .unwrap();
    let out = calibench()
        .current_dir(&live)
        .args(["validate", "."])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`arms.treatment.differs.0`: `env.MDOEL` names no variable [collect] provenance_env records: did you mean `env.MODEL`?"),
        "{err}"
    );
    std::fs::write(live.join("experiment.toml"), &exp).unwrap();
    let out = calibench()
        .current_dir(&live)
        .args(["collect", ".", "--run-id", "c", "--runs-dir", "runs"])
        .env("MODEL", "claude-x")
        .env("OPENAI_API_KEY", "sk-do-not-write-me")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = live.join("runs/c/collect.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        !text.contains("sk-do-not-write-me"),
        "a secret in collect.json"
    );
    let mut manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    let anchored = &manifest["provenance"]["arms"]["anchored"];
    assert_eq!(anchored["env"]["MODEL"], "claude-x");
    // A credential is recorded as set or unset: neither its value nor a hash of it.
    assert_eq!(anchored["secrets"]["OPENAI_API_KEY"], true);
    assert!(anchored["env"].get("OPENAI_API_KEY").is_none());
    assert_eq!(anchored["calibench"], env!("CARGO_PKG_VERSION"));
    let reviewer = &anchored["roles"]["reviewer"]["coherence"];
    assert_eq!(reviewer["argv"][0], "./reviewers/review.sh");
    assert_eq!(reviewer["argv"][2], "{target}");
    assert_eq!(
        reviewer["files"]["./reviewers/review.sh"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    assert!(manifest["provenance"]["arms"]["float"]["roles"]["judge"]["strict"].is_object());
    // One collection, one harness: replayed, no drift.
    let replay = |extra: &[&str]| {
        calibench()
            .current_dir(&live)
            .args([
                "run",
                ".",
                "--corpus",
                "runs/c",
                "--runs-dir",
                "out",
                "--reports-dir",
                "rep",
            ])
            .args(["--no-plots", "--bootstrap", "50"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = replay(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("between the arms:"));
    // The treatment's lines made with another model and an edited reviewer script (as a
    // treatment collected on another day would be): both named.
    manifest["provenance"]["arms"]["anchored"]["env"]["MODEL"] = "claude-y".into();
    manifest["provenance"]["arms"]["anchored"]["roles"]["reviewer"]["coherence"]["files"]
        ["./reviewers/review.sh"] = "0".repeat(64).into();
    std::fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    let out = replay(&[]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("environment variable MODEL differs between the arms: claude-x (baseline), claude-y (treatment) (first: collect.json)")
            && err.contains("[arms.treatment] differs = [\"env.MODEL\"]"),
        "{err}"
    );
    assert!(
        err.contains("reviewer `coherence` files differs between the arms"),
        "{err}"
    );
    // Declared as the change, they are not drift.
    let declared = exp.replace(
        "[arms.treatment.review]",
        "differs = [\"env.MODEL\", \"files\"]\n[arms.treatment.review]",
    );
    std::fs::write(live.join("experiment.toml"), declared).unwrap();
    let out = replay(&[]);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("between the arms:"));
    // Regression (issue 63): a harness record that did not read was dropped without a word,
    // and the drift check with it. It is refused, naming the file and the field.
    let mut broken = manifest.clone();
    broken["provenance"]["arms"]["anchored"]["env"] = 5.into();
    std::fs::write(&path, serde_json::to_string_pretty(&broken).unwrap()).unwrap();
    let out = replay(&[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("collect.json: `provenance.arms.anchored.env`: is not a collect.json calibench can read"),
        "{err}"
    );
    std::fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    // A resume with the harness changed since is refused.
    std::fs::write(live.join("experiment.toml"), &exp).unwrap();
    let out = calibench()
        .current_dir(&live)
        .args(["collect", ".", "--resume", "c", "--runs-dir", "runs"])
        .env("MODEL", "claude-z")
        .env("OPENAI_API_KEY", "sk-do-not-write-me")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the harness changed since"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_corpus_without_provenance_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    corpus(&c, "claude-x", "");
    let (code, _, err) = run(&c);
    assert_eq!(code, 0, "{err}");
    let report = std::fs::read_dir(c.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    // The run leaves an index that lists it.
    let index = std::fs::read_to_string(c.join("reports/index.md")).unwrap();
    let id = report.file_name().unwrap().to_string_lossy().into_owned();
    assert!(index.contains(&id), "{index}");
    assert_eq!(
        md.matches("No provenance: the corpus records no harness")
            .count(),
        1
    );
}
