//! Inputs that once gave a wrong result with exit 0 (issue 21), each run through `run` and
//! `validate`: both must refuse it, with the same message, and nothing may be written. Because
//! both commands read through one corpus loader, a case that `run` refuses and `validate`
//! passes would show here.

use std::path::{Path, PathBuf};

mod common;

use common::{calibench, json_of, run_into};
use serde_json::Value;

/// A copy of the doc-review example (experiment, corpus and accepted run) in a temporary folder.
fn example_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-ab");
    for file in ["experiment.toml", "reviews.jsonl", "verdicts.jsonl"] {
        std::fs::copy(from.join(file), dir.path().join(file)).unwrap();
    }
    std::fs::create_dir(dir.path().join("accepted")).unwrap();
    for file in ["metrics.json", "manifest.json"] {
        std::fs::copy(
            from.join("accepted").join(file),
            dir.path().join("accepted").join(file),
        )
        .unwrap();
    }
    dir
}

fn edit_text(path: PathBuf, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, f(text)).unwrap();
}

/// Rewrites the first line of a JSON Lines file through `f`.
fn edit_first_line(path: PathBuf, f: impl FnOnce(&mut Value)) {
    edit_text(path, |text| {
        let (first, rest) = text.split_once('\n').unwrap();
        let mut v: Value = serde_json::from_str(first).unwrap();
        f(&mut v);
        format!("{v}\n{rest}")
    });
}

/// Each case: what it does to the copy, and a phrase both commands must print.
type Case = (&'static str, fn(&Path), &'static str);

fn cases() -> Vec<Case> {
    vec![
        (
            "one judge listed three times on an item",
            |d| {
                edit_first_line(d.join("verdicts.jsonl"), |v| {
                    for i in 1..3 {
                        v["verdicts"][i]["model"] = "judge-a".into();
                    }
                })
            },
            "judge `judge-a` is listed a second time",
        ),
        (
            "a judge score on a 1-5 scale",
            |d| {
                edit_first_line(d.join("verdicts.jsonl"), |v| {
                    v["verdicts"][0]["per_dimension"]["real"] = 2.0.into()
                })
            },
            "2.0 is outside [0, 1]",
        ),
        (
            "a judge score of 1e308",
            |d| {
                edit_first_line(d.join("verdicts.jsonl"), |v| {
                    v["verdicts"][0]["per_dimension"]["real"] = 1e308.into()
                })
            },
            "is outside [0, 1]",
        ),
        (
            "a review return repeated, as `cat a.jsonl b.jsonl` gives",
            |d| {
                edit_text(d.join("reviews.jsonl"), |text| {
                    let first = text.lines().next().unwrap().to_string();
                    format!("{text}{first}\n")
                })
            },
            "the first is on line 1",
        ),
        (
            "a key repeated in one object",
            |d| {
                edit_text(d.join("reviews.jsonl"), |text| {
                    text.replacen(
                        "{\"arm\":\"baseline\",",
                        "{\"arm\":\"baseline\",\"arm\":\"treatment\",",
                        1,
                    )
                })
            },
            "the key `arm` appears twice in one object",
        ),
        (
            "an arm source that matches no recorded label",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("source = \"treatment\"", "source = \"treatmnet\"")
                })
            },
            "arm `treatment` reads recorded arm `treatmnet`, but no return carries that label",
        ),
        (
            "no mode with a reviews.jsonl",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("mode = \"doc\"\n", "")
                })
            },
            "field `mode`: is missing",
        ),
        (
            "an experiment that is not UTF-8",
            |d| {
                let mut bytes = std::fs::read(d.join("experiment.toml")).unwrap();
                bytes.extend_from_slice(b"# caf\xe9\n");
                std::fs::write(d.join("experiment.toml"), bytes).unwrap();
            },
            "is not valid UTF-8",
        ),
        (
            "a bootstrap count that cannot be allocated",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("bootstrap = 2000", "bootstrap = 9223372036854775807")
                })
            },
            "more than the 1000000 allowed",
        ),
        (
            "a corpus that names a file",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("corpus = \".\"", "corpus = \"reviews.jsonl\"")
                })
            },
            "names a file, but a corpus is a folder",
        ),
        (
            "PR metadata beside a doc-mode experiment, which would read past it",
            |d| {
                std::fs::write(
                    d.join("targets.jsonl"),
                    "{\"target\": \"plan\", \"pr\": {\"state\": \"MERGED\"}}\n",
                )
                .unwrap()
            },
            "targets.jsonl: is read in code mode only, but the experiment's mode is doc",
        ),
        (
            "a misspelt primary metric, which would leave the headline's family without it",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("primary = [\"distinct_values\", \"precision\"]", "primary = [\"distinct_values\", \"precison\"]")
                })
            },
            "experiment.toml:10: `primary.1`: `precison` is not a compared metric; did you mean `precision`?",
        ),
        (
            "a primary metric named twice, which would count twice in its family",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("\"precision\"]", "\"precision\", \"precision\"]")
                })
            },
            "`primary.2`: `precision` is named twice",
        ),
        (
            "a primary query metric over a corpus without queries",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("\"precision\"]", "\"final_accuracy\"]")
                })
            },
            "experiment.toml:10: `primary`: primary metric `final_accuracy` needs queries.jsonl, which the corpus does not have",
        ),
    ]
}

/// A copy of the code-review example's experiment and corpus in a temporary folder.
fn code_example_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/code-review-ab");
    for file in ["experiment.toml", "reviews.jsonl", "verdicts.jsonl"] {
        std::fs::copy(from.join(file), dir.path().join(file)).unwrap();
    }
    dir
}

const FIRST_TARGET: &str = "pr-1841-auth-token-refresh";
const FIRST_ID: &str = "baseline-pr-1841-auth-token-refresh-r0-correctness-0";

/// The files of code review's precision controls (SPEC §2.5, §2.6), each broken one way.
fn code_cases() -> Vec<Case> {
    vec![
        (
            "a validator call naming a finding no return holds",
            |d| {
                let line = format!(
                    "{{\"arm\": \"baseline\", \"target\": \"{FIRST_TARGET}\", \"finding\": \"{FIRST_ID}\", \"validated\": true}}\n{{\"arm\": \"baseline\", \"target\": \"{FIRST_TARGET}\", \"run\": 7, \"finding\": \"{FIRST_ID}\", \"validated\": true}}\n"
                );
                std::fs::write(d.join("validations.jsonl"), line).unwrap();
            },
            "validations.jsonl:2: field `finding`: names finding",
        ),
        (
            "a pull request in a state GitHub does not have",
            |d| {
                let line = format!(
                    "{{\"target\": \"{FIRST_TARGET}\", \"pr\": {{\"state\": \"DONE\"}}}}\n"
                );
                std::fs::write(d.join("targets.jsonl"), line).unwrap();
            },
            "targets.jsonl:1: field `pr.state`: `DONE` is not one of OPEN, CLOSED, MERGED",
        ),
        (
            "a finding's file that would lead out of its source snapshot",
            |d| {
                std::fs::create_dir_all(d.join("sources").join(FIRST_TARGET)).unwrap();
                edit_first_line(d.join("reviews.jsonl"), |v| {
                    v["findings"][0]["file"] = "../../../etc/passwd".into();
                });
            },
            "reviews.jsonl:1: field `findings[0].file`: `../../../etc/passwd` would lead outside",
        ),
    ]
}

#[test]
fn run_and_validate_refuse_bad_precision_control_files() {
    for (what, edit, phrase) in code_cases() {
        refused_by_both(code_example_copy(), what, edit, phrase);
    }
}

#[test]
fn run_and_validate_refuse_the_same_inputs_with_the_same_message() {
    for (what, edit, phrase) in cases() {
        refused_by_both(example_copy(), what, edit, phrase);
    }
}

/// `run` and `validate` both refuse the folder once `edit` has broken it, printing `phrase`,
/// and `run` writes nothing.
fn refused_by_both(dir: tempfile::TempDir, what: &str, edit: fn(&Path), phrase: &str) {
    {
        edit(dir.path());
        let run = run_into(dir.path().join("out/runs"), dir.path())
            .arg("--no-plots")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{what}: run exit\n{stderr}");
        assert!(stderr.contains(phrase), "{what}: run says\n{stderr}");
        assert!(
            !dir.path().join("out").exists(),
            "{what}: run wrote something"
        );

        let validate = calibench()
            .arg("validate")
            .arg(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&validate.stdout);
        let all = format!("{stdout}{}", String::from_utf8_lossy(&validate.stderr));
        assert_eq!(
            validate.status.code(),
            Some(2),
            "{what}: validate exit\n{all}"
        );
        assert!(all.contains(phrase), "{what}: validate says\n{all}");
    }
}

// Regression (issue 21): a byte-order mark made the first line "not a JSON object", although
// the CSV readers skip one.
#[test]
fn a_byte_order_mark_on_a_corpus_file_is_accepted() {
    let dir = example_copy();
    for file in ["reviews.jsonl", "verdicts.jsonl"] {
        edit_text(dir.path().join(file), |text| format!("\u{feff}{text}"));
    }
    // The example carries malformed findings on purpose, so a run (which drops and counts
    // them) is the check: it reads every line.
    let m =
        json_of(run_into(dir.path().join("out/runs"), dir.path()).args(["--no-plots", "--json"]));
    assert!(m["trust"]["trustworthy"].is_boolean());
    assert!(
        m["review"]["arms"]["baseline"]["findings_raw"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}
