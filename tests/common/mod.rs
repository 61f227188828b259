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
