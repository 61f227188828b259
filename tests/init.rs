//! `calibench init`: every kind's corpus runs as written and validates clean, and a folder that
//! holds anything is refused with nothing written.

mod common;

use common::{calibench, json_of};

#[test]
fn every_kind_runs_as_written_and_validates_clean() {
    let root = tempfile::tempdir().unwrap();
    for kind in ["doc", "code", "queries", "scores"] {
        let dir = root.path().join(kind);
        calibench()
            .args(["init"])
            .arg(&dir)
            .args(["--kind", kind])
            .assert()
            .success();
        calibench().arg("validate").arg(&dir).assert().success();
        let m = json_of(
            calibench()
                .arg("run")
                .arg(&dir)
                .arg("--runs-dir")
                .arg(root.path().join("runs"))
                .arg("--reports-dir")
                .arg(root.path().join("reports"))
                .args(["--no-plots", "--json"]),
        );
        // The experiment is named after its folder.
        assert_eq!(m["experiment"], kind, "{kind}");
        // Every example decides something, as its experiment asks.
        let verdict = m["decision"]["verdict"].as_str().unwrap_or_default();
        assert!(!verdict.is_empty(), "{kind}: {m}");
        // The review kinds' judges are trusted, and the treatment is better on both metrics.
        if kind == "doc" || kind == "code" {
            assert_eq!(m["trust"]["trustworthy"], true, "{kind}");
            assert_eq!(verdict, "better", "{kind}");
        }
    }
}

#[test]
fn a_folder_that_holds_anything_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let out = calibench()
        .arg("init")
        .arg(dir.path())
        .args(["--kind", "doc"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not empty (it holds notes.txt)"), "{err}");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "nothing was written");
    // The current folder, when empty, is written into.
    let empty = tempfile::tempdir().unwrap();
    calibench()
        .current_dir(empty.path())
        .args(["init", "--kind", "scores"])
        .assert()
        .success();
    assert!(empty.path().join("experiment.toml").is_file());
    assert!(empty.path().join("scores.jsonl").is_file());
}
