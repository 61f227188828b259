//! The harness's own noise (docs/guides/live-collection.md): `collect --aa` collects the
//! baseline configuration twice, `run --aa` measures the run-to-run change of every metric, and
//! `noise_floor` shows it beside each decision metric's delta of the A/B.

mod common;

use std::path::Path;

use common::{calibench, stdout_of};
use serde_json::Value;

#[test]
fn an_a_a_collection_measures_the_noise_the_a_b_is_read_against() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-live"),
        &live,
    );
    std::fs::remove_file(live.join("collect.json")).unwrap();
    let ok = |args: &[&str]| stdout_of(calibench().current_dir(&live).args(args));
    let out = ok(&[
        "collect",
        ".",
        "--aa",
        "--run-id",
        "aa",
        "--runs-dir",
        "runs",
    ]);
    assert!(out.contains("--corpus runs/aa --aa"), "{out}");
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(live.join("runs/aa/collect.json")).unwrap())
            .unwrap();
    assert_eq!(m["arms"], serde_json::json!(["float", "float-again"]));
    // The second copy ran the baseline's own command: its returns are the baseline's (the
    // reviewer script is deterministic), under the `-again` label.
    let reviews = std::fs::read_to_string(live.join("runs/aa/reviews.jsonl")).unwrap();
    let of = |label: &str| -> Vec<String> {
        reviews
            .lines()
            .filter(|l| l.contains(&format!("\"arm\":\"{label}\"")))
            .map(|l| {
                l.replace(&format!("\"arm\":\"{label}\""), "ARM")
                    .replace(label, "ARM")
            })
            .collect()
    };
    assert_eq!(of("float").len(), 18);
    assert_eq!(of("float"), of("float-again"));
    ok(&[
        "run",
        ".",
        "--aa",
        "--corpus",
        "runs/aa",
        "--run-id",
        "aa-run",
        "--runs-dir",
        "out",
        "--reports-dir",
        "rep",
        "--no-plots",
        "-q",
    ]);
    let aa: Value = serde_json::from_str(
        &std::fs::read_to_string(live.join("out/aa-run/metrics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(aa["experiment"], "doc-review-live-aa");
    assert_eq!(aa["review"]["delta"]["distinct_values"]["delta"], 0.0);
    // The A/B, read against it.
    let exp = std::fs::read_to_string(live.join("experiment.toml"))
        .unwrap()
        .replace(
            "bootstrap = 2000\n",
            "bootstrap = 2000\nnoise_floor = \"out/aa-run\"\n",
        );
    std::fs::write(live.join("experiment.toml"), &exp).unwrap();
    let text = ok(&[
        "run",
        ".",
        "--run-id",
        "ab",
        "--runs-dir",
        "out",
        "--reports-dir",
        "rep",
        "--no-plots",
    ]);
    assert!(
        text.contains("the harness's own noise (A/A) +0.000 [+0.000, +0.000]"),
        "{text}"
    );
    let ab: Value =
        serde_json::from_str(&std::fs::read_to_string(live.join("out/ab/metrics.json")).unwrap())
            .unwrap();
    let noise = &ab["decision"]["metrics"]["precision"]["noise"];
    let aa_delta = aa["review"]["delta"]["precision"]["delta"]
        .as_f64()
        .unwrap();
    assert_eq!(noise["delta"].as_f64().unwrap(), aa_delta);
    assert!(noise["inside"].is_boolean());
    // A run that is not this experiment's A/A is refused, naming the key.
    std::fs::write(
        live.join("experiment.toml"),
        exp.replace("noise_floor = \"out/aa-run\"", "noise_floor = \"out/ab\""),
    )
    .unwrap();
    let out = calibench()
        .current_dir(&live)
        .args([
            "run",
            ".",
            "--run-id",
            "ab2",
            "--runs-dir",
            "out",
            "--reports-dir",
            "rep",
            "--no-plots",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "`noise_floor`: ./out/ab is a run of `doc-review-live`, not of this experiment's A/A"
        ),
        "{err}"
    );
    assert!(!live.join("out/ab2").exists());
}
