//! Helpers the integration test binaries share.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::Path;

use assert_cmd::Command;

pub fn calibench() -> Command {
    Command::cargo_bin("calibench").unwrap()
}

/// `calibench run EXPERIMENT` writing its run directories to `runs` and its reports to a
/// `reports` folder beside it, so that no test writes into the checkout.
pub fn run_into(runs: impl AsRef<Path>, experiment: impl AsRef<Path>) -> Command {
    let runs = runs.as_ref();
    let mut cmd = calibench();
    cmd.arg("run")
        .arg(experiment.as_ref())
        .arg("--runs-dir")
        .arg(runs)
        .arg("--reports-dir")
        .arg(runs.with_file_name("reports"));
    cmd
}

/// Runs `cmd`, which must succeed (its stderr is the failure message), and reads its stdout
/// as JSON.
pub fn json_of(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `cmd`, whatever its outcome: (exit status, stdout, stderr).
pub fn outcome(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `cmd`, which must succeed, and returns its stdout as text.
pub fn stdout_of(cmd: &mut Command) -> String {
    String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
}

/// Copies the folder `from` into `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Every example corpus (each `corpora/*/` with an experiment.toml), by name, sorted: what the
/// main job runs and CI gates.
pub fn examples_names() -> Vec<&'static str> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("experiment.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.into_iter().map(|n| &*n.leak()).collect()
}
