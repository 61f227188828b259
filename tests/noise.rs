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
    // The A/B's change net of the harness's: the A/A shares the A/B's 6 targets, fewer than
    // the 10 the net change pairs on, so the two deltas are taken as independent; "inside" is
    // exactly whether its interval includes 0.
    let net = &noise["net"];
    assert_eq!(net["paired"], false, "{net}");
    let ab_delta = ab["decision"]["metrics"]["precision"]["delta"]
        .as_f64()
        .unwrap();
    assert!(
        (net["delta"].as_f64().unwrap() - (ab_delta - aa_delta)).abs() < 1e-12,
        "{net}"
    );
    let [lo, hi] = [0, 1].map(|i| net["ci"][i].as_f64().unwrap());
    assert_eq!(
        noise["inside"].as_bool().unwrap(),
        lo <= 0.0 && hi >= 0.0,
        "{noise}"
    );
    assert!(text.contains("; net of it "), "{text}");
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
    // Renamed to pass for the A/A by its name (hostile-4/12): the name is not enough.
    common::copy_dir(&live.join("out/ab"), &live.join("out/fake"));
    let metrics = live.join("out/fake/metrics.json");
    let text = std::fs::read_to_string(&metrics).unwrap().replace(
        "\"experiment\": \"doc-review-live\"",
        "\"experiment\": \"doc-review-live-aa\"",
    );
    std::fs::write(&metrics, text).unwrap();
    std::fs::write(
        live.join("experiment.toml"),
        exp.replace("noise_floor = \"out/aa-run\"", "noise_floor = \"out/fake\""),
    )
    .unwrap();
    let out = calibench()
        .current_dir(&live)
        .args(["run", ".", "--run-id", "ab3", "--runs-dir", "out"])
        .args(["--reports-dir", "rep", "--no-plots"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("./out/fake is not an A/A run: its treatment reads `anchored`, not the baseline's second copy `float-again`"),
        "{err}"
    );
    // An A/A without a figure for a decision metric says so on that metric's line
    // (hostile-4/12 N04, N05), never nothing.
    common::copy_dir(&live.join("out/aa-run"), &live.join("out/aa-thin"));
    let metrics = live.join("out/aa-thin/metrics.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&metrics).unwrap()).unwrap();
    m["review"]["delta"]
        .as_object_mut()
        .unwrap()
        .remove("precision");
    std::fs::write(&metrics, m.to_string()).unwrap();
    std::fs::write(
        live.join("experiment.toml"),
        exp.replace(
            "noise_floor = \"out/aa-run\"",
            "noise_floor = \"out/aa-thin\"",
        ),
    )
    .unwrap();
    let text = ok(&[
        "run",
        ".",
        "--run-id",
        "ab4",
        "--runs-dir",
        "out",
        "--reports-dir",
        "rep",
        "--no-plots",
    ]);
    assert!(
        text.contains("the harness's own noise is not known: the A/A run ./out/aa-thin has no figure for `precision`"),
        "{text}"
    );
}

// Regression (hostile-4/12): a noise floor was accepted on the experiment's name alone, so an
// A/A of another harness passed. It is compared with the A/B's baseline harness by what the
// collections recorded; and `run` knows an A/A collection without `--aa`.
#[test]
fn a_noise_floor_of_another_harness_says_so_on_every_noise_line() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-live"),
        &live,
    );
    std::fs::remove_file(live.join("collect.json")).unwrap();
    let exp = std::fs::read_to_string(live.join("experiment.toml"))
        .unwrap()
        .replace(
            "backoff_s = 0.2\n",
            "backoff_s = 0.2\nprovenance_env = [\"MODEL_VERSION\"]\n",
        );
    std::fs::write(live.join("experiment.toml"), &exp).unwrap();
    let ok = |args: &[&str], version: &str| {
        stdout_of(
            calibench()
                .current_dir(&live)
                .env("MODEL_VERSION", version)
                .args(args),
        )
    };
    let out_args = ["--runs-dir", "out", "--reports-dir", "rep", "--no-plots"];
    ok(
        &[
            "collect",
            ".",
            "--aa",
            "--run-id",
            "aa",
            "--runs-dir",
            "runs",
        ],
        "1",
    );
    // No --aa: the collection says it is an A/A.
    let mut args = vec![
        "run", ".", "--corpus", "runs/aa", "--run-id", "aa-run", "-q",
    ];
    args.extend_from_slice(&out_args);
    ok(&args, "1");
    let aa: Value = serde_json::from_str(
        &std::fs::read_to_string(live.join("out/aa-run/metrics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(aa["experiment"], "doc-review-live-aa");
    assert_eq!(
        aa["inputs"]["harness"]["baseline"]["env"]["MODEL_VERSION"],
        "1"
    );
    // The A/B, collected with another model version, read against that floor.
    ok(
        &["collect", ".", "--run-id", "ab", "--runs-dir", "runs"],
        "2",
    );
    std::fs::write(
        live.join("experiment.toml"),
        exp.replace(
            "bootstrap = 2000\n",
            "bootstrap = 2000\nnoise_floor = \"out/aa-run\"\n",
        ),
    )
    .unwrap();
    let mut args = vec!["run", ".", "--corpus", "runs/ab", "--run-id", "ab-run"];
    args.extend_from_slice(&out_args);
    let text = ok(&args, "2");
    assert!(
        text.contains("caveat: the A/A was collected by another harness (environment variable MODEL_VERSION: 2 (this run), 1 (A/A)), so this may not be this harness's noise"),
        "{text}"
    );
    let ab: Value = serde_json::from_str(
        &std::fs::read_to_string(live.join("out/ab-run/metrics.json")).unwrap(),
    )
    .unwrap();
    for (name, m) in ab["decision"]["metrics"].as_object().unwrap() {
        if m["noise"].is_object() {
            assert_eq!(
                m["noise"]["differs"][0],
                "environment variable MODEL_VERSION: 2 (this run), 1 (A/A)",
                "{name}"
            );
        }
    }
}

// Net of the harness, paired: an A/A of the capacity-live example (its fake agent answers the
// same each time) shares the A/B's 30 queries among its 120, so the net change pairs them, and a
// change far outside the harness's noise still improves.
#[test]
fn a_noise_floor_sharing_the_units_nets_the_change_unit_by_unit() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/capacity-live"),
        &live,
    );
    let ok = |args: &[&str]| stdout_of(calibench().current_dir(&live).args(args));
    ok(&[
        "collect",
        ".",
        "--aa",
        "--run-id",
        "aa",
        "--runs-dir",
        "runs",
    ]);
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
    let ab: Value =
        serde_json::from_str(&std::fs::read_to_string(live.join("out/ab/metrics.json")).unwrap())
            .unwrap();
    let m = &ab["decision"]["metrics"]["unnecessary_recovery_rate"];
    let net = &m["noise"]["net"];
    assert_eq!(net["paired"], true, "{net}");
    assert_eq!(net["units"], 30, "{net}");
    // The A/A moved nothing, so the net change is the A/B's own.
    assert_eq!(m["noise"]["delta"], 0.0, "{m}");
    assert!((net["delta"].as_f64().unwrap() - m["delta"].as_f64().unwrap()).abs() < 1e-12);
    assert_eq!(m["outcome"], "improved", "{m}");
    assert_eq!(m["noise"]["inside"], false, "{m}");
    assert!(text.contains("(paired over 30 shared queries)"), "{text}");
    // Improved and "inside the harness's noise" never share a line; the guard, which did not
    // move, is inside it (and held, which it may be).
    let line = |name: &str| {
        text.lines()
            .find(|l| l.contains(&format!("- {name} (")))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
    };
    assert!(!line("unnecessary_recovery_rate").contains("inside the harness's noise"));
    assert!(
        line("final_accuracy").contains("held")
            && line("final_accuracy").contains("inside the harness's noise")
    );
}
