//! The decision (docs/reference.md, "The decision") end to end: on the shipped examples, what
//! each decides and why; the decision metrics as one Holm family, the lift among them; `withheld`
//! when a judged metric meets an untrusted panel; the gate's `require_decision`; and the
//! refusals of a `[decision]` table the corpus cannot answer. The rules themselves are worked by
//! hand in `src/decision.rs`.

use std::path::{Path, PathBuf};

mod common;

use common::{calibench, copy_dir, json_of, run_into};
use serde_json::Value;

fn example(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpora")
            .join(name),
        dir.path(),
    );
    dir
}

/// Replaces the experiment's `[decision]` table with `table` (a TOML table body, or nothing to
/// drop it).
fn with_decision(dir: &Path, table: &str) -> PathBuf {
    let exp = dir.join("experiment.toml");
    let text = std::fs::read_to_string(&exp).unwrap();
    let start = text.find("[decision]\n").unwrap();
    let end = start + text[start..].find("\n\n").unwrap();
    let replaced = if table.is_empty() {
        format!("{}{}", &text[..start], &text[end..])
    } else {
        format!("{}[decision]\n{table}{}", &text[..start], &text[end..])
    };
    std::fs::write(&exp, replaced).unwrap();
    exp
}

fn run(exp: &Path, dir: &Path) -> Value {
    json_of(run_into(dir.join("out/runs"), exp).args(["--no-plots", "--json", "--run-id", "r"]))
}

#[test]
fn the_lift_joins_the_decision_family_and_holm_adjusts_it_with_the_others() {
    let dir = example("doc-review-ab");
    let exp = with_decision(
        dir.path(),
        "lift = \"increase\"\ndistinct_values = \"decrease\"\n",
    );
    let m = run(&exp, dir.path());
    // 4 items and 4 targets: both sign tests give 0.125; Holm over two makes both 0.25.
    assert_eq!(m["lift"]["paired"]["p_value"], 0.125);
    assert_eq!(m["lift"]["p_adjusted"], 0.25);
    assert_eq!(m["review"]["delta"]["distinct_values"]["p_adjusted"], 0.25);
    let d = &m["decision"];
    assert_eq!(d["metrics"]["lift"]["p_adjusted"], 0.25);
    assert_eq!(d["verdict"], "inconclusive");
    // Four pairs cannot reach 0.025 (Holm's first step over two) on the sign test: 7 can.
    for name in ["lift", "distinct_values"] {
        assert_eq!(d["metrics"][name]["outcome"], "underpowered", "{name}");
        assert_eq!(d["metrics"][name]["needed"], 7, "{name}");
    }
    // precision left the family: it is adjusted with the rest of its table again.
    assert_ne!(
        m["review"]["delta"]["precision"]["p_adjusted"],
        m["review"]["delta"]["precision"]["p_value"]
    );
}

#[test]
fn a_judged_metric_under_untrusted_judges_withholds_the_decision() {
    // code-review-ab's judges split on one item: precision, a decision metric, is withheld, and
    // so is the decision, though distinct values improved.
    let dir = example("code-review-ab");
    let m = run(&dir.path().join("experiment.toml"), dir.path());
    assert_eq!(m["trust"]["trustworthy"], false);
    let d = &m["decision"];
    assert_eq!(d["verdict"], "withheld");
    assert_eq!(d["metrics"]["precision"]["outcome"], "withheld");
    assert_eq!(d["metrics"]["distinct_values"]["outcome"], "improved");
    // Drop precision from the decision: the mechanical metric decides.
    let exp = with_decision(dir.path(), "distinct_values = \"decrease\"\n");
    let m = run(&exp, &dir.path().join("again"));
    assert_eq!(m["decision"]["verdict"], "better");
}

#[test]
fn the_gate_requires_a_decision_naming_the_verdict_and_its_reasons() {
    let dir = example("capacity-50");
    let m = run(&dir.path().join("experiment.toml"), dir.path());
    assert_eq!(m["decision"]["verdict"], "better");
    let policy = dir.path().join("gate.toml");
    let gate = |text: &str| {
        std::fs::write(&policy, text).unwrap();
        calibench()
            .arg("gate")
            .arg(dir.path().join("out/runs/r"))
            .arg("--policy")
            .arg(&policy)
            .args(["--summary"])
            .arg(dir.path().join("summary.md"))
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap()
    };
    let out = gate("require_trustworthy = false\nrequire_decision = \"better\"\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("decision: better. Unnecessary recovery rate fell 0.980 → 0.060"),
        "{text}"
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        summary.contains("**Decision:** better. Unnecessary recovery rate fell"),
        "{summary}"
    );

    let doc = example("doc-review-ab");
    let m = run(&doc.path().join("experiment.toml"), doc.path());
    assert_eq!(m["decision"]["verdict"], "inconclusive");
    std::fs::write(&policy, "require_decision = [\"better\", \"worse\"]\n").unwrap();
    let out = calibench()
        .arg("gate")
        .arg(doc.path().join("out/runs/r"))
        .arg("--policy")
        .arg(&policy)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL  decision"), "{text}");
    assert!(
        text.contains("the decision is inconclusive — with 2 caveats (better or worse required): distinct confidence values per target fell 11.67 → 3.50 but 4 targets cannot show it"),
        "{text}"
    );
    // A run without a decision fails the requirement as not found.
    let bare = example("doc-review-ab");
    let exp = with_decision(bare.path(), "");
    let text = std::fs::read_to_string(&exp)
        .unwrap()
        .replace("primary = [\"distinct_values\", \"precision\"]\n", "");
    std::fs::write(&exp, text).unwrap();
    let m = run(&exp, bare.path());
    assert!(m.get("decision").is_none());
    std::fs::write(
        &policy,
        "require_decision = \"better\"\nrequire_trustworthy = false\n",
    )
    .unwrap();
    let out = calibench()
        .arg("gate")
        .arg(bare.path().join("out/runs/r"))
        .arg("--policy")
        .arg(&policy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("not found: the run has no decision"));
}

#[test]
fn a_decision_the_corpus_cannot_answer_is_refused() {
    let dir = example("doc-review-ab");
    for (table, says) in [
        (
            "precison = \"increase\"\n",
            "`precison` is not a compared metric, `lift`, `lift_human`, or a scorer of the corpus; did you mean `precision`?",
        ),
        (
            "precision = \"no-decrease\"\n",
            "names no metric that must increase or decrease",
        ),
        (
            "precision = \"up\"\n",
            "`up` is not one of increase, decrease, no-decrease, no-increase",
        ),
        (
            "final_accuracy = \"increase\"\n",
            "decision metric `final_accuracy` needs queries.jsonl, which the corpus does not have",
        ),
    ] {
        let exp = with_decision(dir.path(), table);
        for cmd in ["run", "validate"] {
            let mut c = calibench();
            c.arg(cmd).arg(&exp);
            if cmd == "run" {
                c.arg("--runs-dir").arg(dir.path().join("runs"));
            }
            let out = c.output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{table}: {text}");
            assert!(text.contains(says), "{table} ({cmd}): {text}");
        }
        assert!(!dir.path().join("runs").exists());
    }
    // A scorer is a decision metric of an imported-scores corpus, by its name as written.
    let scores = example("arc-easy-import");
    let m = run(&scores.path().join("experiment.toml"), scores.path());
    assert_eq!(
        m["decision"]["metrics"]["choice"]["outcome"],
        "underpowered"
    );
}
