//! Secrets never leave the machine (docs/guides/live-collection.md, "Secrets"): a
//! `provenance_env` variable whose name or value looks like a credential is recorded only as set
//! or unset. Two live collections of the doc-review example with credentials in five spellings
//! (by name, and by value under innocent names), joined by `merge --arm`, replayed and gated:
//! no output file and no stream of any command carries a credential's value.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::calibench;

/// The variables each collection is made with: (name, first value, second value); `None`: unset.
const VARIABLES: [(&str, Option<&str>, Option<&str>); 9] = [
    ("MODEL", Some("claude-x"), Some("claude-x")),
    ("PASSWORD", Some("hunter2-PW-1"), Some("hunter2-PW-2")),
    ("DB_PASS", Some("dbpass-1"), Some("dbpass-2")),
    ("AUTH", Some("Bearer auth-1"), Some("Bearer auth-2")),
    ("SESSION_COOKIE", Some("cookie-1"), None),
    ("api_key", Some("key-1"), Some("key-2")),
    // Innocent names, credential values: an OpenAI-style key, a JWT, a long hex token.
    ("MODEL_ALT", Some("sk-proj-alt-1"), Some("sk-proj-alt-2")),
    (
        "HEADER",
        Some("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"),
        Some("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIyIn0.c2lnbmF0dXJm"),
    ),
    (
        "BUILD",
        Some("0123456789abcdef0123456789abcdef01"),
        Some("fedcba9876543210fedcba9876543210fe"),
    ),
];

fn run(
    dir: &Path,
    args: &[&str],
    env: impl Fn(usize) -> Vec<(&'static str, &'static str)>,
    which: usize,
) -> Output {
    let mut cmd = calibench();
    cmd.current_dir(dir).args(args);
    for (name, _, _) in VARIABLES {
        cmd.env_remove(name);
    }
    for (name, value) in env(which) {
        cmd.env(name, value);
    }
    cmd.output().unwrap()
}

/// Every file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

// Regression (hostile-4/06): PASSWORD, AUTH, COOKIE and the like were recorded raw and printed by
// the drift caveat in metrics.json, the reports, stderr, the gate's summary and its JUnit; KEY
// and TOKEN values as an unsalted hash.
#[test]
fn no_credential_reaches_any_output() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-live"),
        &live,
    );
    let names: Vec<String> = VARIABLES.iter().map(|(n, ..)| format!("\"{n}\"")).collect();
    let exp = std::fs::read_to_string(live.join("experiment.toml"))
        .unwrap()
        .replace(
            "[collect.judges]",
            &format!(
                "provenance_env = [{}]\n\n[collect.judges]",
                names.join(", ")
            ),
        );
    std::fs::write(live.join("experiment.toml"), &exp).unwrap();
    let env = |which: usize| -> Vec<(&'static str, &'static str)> {
        VARIABLES
            .iter()
            .filter_map(|(n, a, b)| Some((*n, if which == 0 { (*a)? } else { (*b)? })))
            .collect()
    };
    let mut streams: Vec<(String, Output)> = Vec::new();
    for (which, id) in [(0, "week1"), (1, "today")] {
        let args = ["collect", ".", "--run-id", id, "--runs-dir", "runs"];
        streams.push((format!("collect {id}"), run(&live, &args, env, which)));
    }
    let args = [
        "merge",
        "ab",
        "--arm",
        "float=runs/week1",
        "--arm",
        "anchored=runs/today",
    ];
    streams.push(("merge".into(), run(&live, &args, env, 1)));
    let args = [
        "run",
        ".",
        "--corpus",
        "ab",
        "--runs-dir",
        "r",
        "--reports-dir",
        "rep",
        "--run-id",
        "ab",
    ];
    streams.push(("run".into(), run(&live, &args, env, 1)));
    std::fs::write(
        live.join("gate.toml"),
        "require_trustworthy = true\nrequire_decision = \"better\"\n",
    )
    .unwrap();
    let args = [
        "gate",
        "r/ab",
        "--policy",
        "gate.toml",
        "--summary",
        "summary.md",
        "--junit",
        "junit.xml",
    ];
    streams.push(("gate".into(), run(&live, &args, env, 1)));
    for (what, out) in &streams[..4] {
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The one credential set in one arm only is said so, by name.
    let err = String::from_utf8_lossy(&streams[3].1.stderr).into_owned();
    assert!(
        err.contains("environment variable SESSION_COOKIE was set in one arm only, the baseline"),
        "{err}"
    );
    let mut all = Vec::new();
    files(&live, &mut all);
    let secrets: Vec<&str> = VARIABLES
        .iter()
        .filter(|(n, ..)| *n != "MODEL")
        .flat_map(|(_, a, b)| [*a, *b])
        .flatten()
        .collect();
    let mut found = Vec::new();
    for path in &all {
        let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
        for s in &secrets {
            if text.contains(s) {
                found.push(format!("{}: {s}", path.display()));
            }
        }
    }
    for (what, out) in &streams {
        for s in &secrets {
            for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                if String::from_utf8_lossy(bytes).contains(s) {
                    found.push(format!("{what} {stream}: {s}"));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    // The check can fail: the innocent variable's value is recorded, and found.
    let record = std::fs::read_to_string(live.join("runs/week1/collect.json")).unwrap();
    assert!(record.contains("claude-x"), "{record}");
}
