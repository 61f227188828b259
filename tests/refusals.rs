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
            "a bootstrap count of u64::MAX, which validate once passed",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("bootstrap = 2000", "bootstrap = 18446744073709551615")
                })
            },
            "`bootstrap`: 18446744073709551615 replicates is more than the 1000000 allowed",
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
        // Issue 34: what a new user's ordinary mistakes did. Each gave exit 0, a trusted
        // verdict and a headline that read like a result.
        (
            "a doc corpus read in code mode, so that every finding is malformed",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("mode = \"doc\"", "mode = \"code\"")
                })
            },
            "arm `baseline` has no valid finding: all 327 of the findings it reads are malformed, 319 of them for file: is missing\n  hint: these look like document findings (section, finding_type): set mode = \"doc\"",
        ),
        (
            "a whole arm written as 0.75 on the anchor scale",
            |d| {
                edit_text(d.join("reviews.jsonl"), |text| {
                    let lines: Vec<String> = text
                        .lines()
                        .map(|line| {
                            let mut v: Value = serde_json::from_str(line).unwrap();
                            if v["arm"] == "treatment" {
                                for f in v["findings"].as_array_mut().into_iter().flatten() {
                                    f["confidence"] = 0.75.into();
                                }
                            }
                            v.to_string()
                        })
                        .collect();
                    lines.join("\n") + "\n"
                })
            },
            "arm `treatment` has no valid finding: all 323 of the findings it reads are malformed, 323 of them for confidence: off the anchor scale\n  hint: confidences in [0, 1] are on the float scale: set scale = \"float\" in [arms.treatment.review]",
        ),
        (
            "a misnamed corpus file, which would be ignored",
            |d| std::fs::rename(d.join("reviews.jsonl"), d.join("review.jsonl")).unwrap(),
            "review.jsonl: is not a corpus file calibench reads, so it would be ignored: did you mean `reviews.jsonl`?",
        ),
        (
            "a corpus file named in capitals",
            |d| std::fs::rename(d.join("verdicts.jsonl"), d.join("Verdicts.jsonl")).unwrap(),
            "Verdicts.jsonl: is not a corpus file calibench reads, so it would be ignored: did you mean `verdicts.jsonl`?",
        ),
        (
            "a corpus that holds verdicts and nothing to replay",
            |d| std::fs::remove_file(d.join("reviews.jsonl")).unwrap(),
            "holds none of reviews.jsonl, queries.jsonl or scores.jsonl: nothing would be replayed\n  hint: a corpus replays reviews.jsonl, queries.jsonl or scores.jsonl; to check a judge panel alone, run `calibench trust verdicts.jsonl`",
        ),
        (
            "verdicts filed under a misspelt arm label, which would halve the panel",
            |d| {
                edit_text(d.join("verdicts.jsonl"), |text| {
                    text.replace("\"arm\":\"treatment\"", "\"arm\":\"tretment\"")
                })
            },
            "verdicts.jsonl:328: field `arm`: 327 of 658 verdict lines are filed under a label neither arm reads, and would silently leave the run: `tretment` (327 lines, first on line 328); did you mean `treatment`?",
        ),
        (
            "a misspelt policy key, once reported as the policy missing",
            |d| {
                edit_text(d.join("experiment.toml"), |text| {
                    text.replace("policy = \"anchored\"", "polciy = \"anchored\"")
                })
            },
            "experiment.toml:20: `arms.treatment.review.polciy`: unknown key `polciy` — did you mean `policy`?",
        ),
    ]
}

// Issue 34: more than half of an arm's findings malformed (the treatment's anchors read on the
// float scale leave only its 0s and 100s) completes the run, warns on stderr with the share and
// the reason, and the report's verdict says its inputs are suspect, whatever the judges say.
#[test]
fn most_findings_of_an_arm_malformed_complete_the_run_as_inputs_suspect() {
    let dir = example_copy();
    edit_text(dir.path().join("experiment.toml"), |text| {
        // The example's sweep of the anchored thresholds does not fit the float scale.
        let text = text.split("\n[[sweep]]").next().unwrap();
        text.replace(
            "policy = \"anchored\"",
            "policy = \"anchored\"\nscale = \"float\"",
        )
    });
    let out = run_into(dir.path().join("runs"), dir.path())
        .args(["--no-plots", "--run-id", "r"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: ") && stderr.contains("98% (317 of 323) of arm `treatment`'s findings are malformed, 317 of them for confidence: off the float scale"),
        "{stderr}"
    );
    assert!(
        stderr.contains("set scale = \"anchor\" in [arms.treatment.review]"),
        "{stderr}"
    );
    let m: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("runs/r/metrics.json")).unwrap())
            .unwrap();
    let suspect = &m["inputs_suspect"][0];
    assert_eq!(suspect["arm"], "treatment");
    assert_eq!(
        (suspect["malformed"].as_u64(), suspect["findings"].as_u64()),
        (Some(317), Some(323))
    );
    // The judges are trusted, but the verdict box leads with the inputs, and the decision
    // (first) says they are suspect before anything else.
    assert_eq!(m["trust"]["trustworthy"], true);
    let report = std::fs::read_to_string(dir.path().join("reports/r/report.md")).unwrap();
    let lines: Vec<&str> = report.lines().collect();
    assert!(lines[2].starts_with("**Decision: "), "{}", lines[2]);
    assert!(
        lines[4].starts_with("- Inputs suspect: 98%"),
        "{}",
        lines[4]
    );
    let verdict = lines.iter().find(|l| l.contains("**Verdict:")).unwrap();
    assert!(
        verdict.starts_with("⛔ **Verdict: inputs suspect.**"),
        "{verdict}"
    );
    assert!(
        report.contains("98% (317 of 323) of arm \\`treatment\\`'s findings are malformed")
            || report.contains("98% (317 of 323) of arm `treatment`'s findings are malformed"),
        "{report}"
    );
    let html = std::fs::read_to_string(dir.path().join("reports/r/report.html")).unwrap();
    assert!(html.contains("<div class=\"verdict suspect\""));

    // validate says the same, as a note: the run is not refused.
    let v = calibench()
        .arg("validate")
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&v.stdout);
    assert!(
        stdout.contains("note: 98% (317 of 323) of arm `treatment`'s findings are malformed"),
        "{stdout}"
    );

    // Half or fewer is not suspect: the example as shipped carries a few malformed findings.
    let clean = example_copy();
    let m =
        json_of(run_into(clean.path().join("runs"), clean.path()).args(["--no-plots", "--json"]));
    assert!(m.get("inputs_suspect").is_none());
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

/// The files of code review's precision controls, each broken one way.
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

/// `calibench ARGS` under a 400 MB address-space limit: its exit status and stderr.
fn bounded(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let out = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 400000 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_calibench"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout),
    )
}

// Regression (issue 34): a reviews.jsonl of a million lines of `{}` held a message of some 470
// bytes per line (3.6 GB for ten million, then an abort), and one line of ten million `{}`
// findings took 5.5 GB before aborting. Both are refused within 400 MB of address space: the
// first problems are listed and the rest counted, and a return of more than 10,000 findings is
// refused as it is read.
#[test]
fn millions_of_bad_lines_or_findings_are_refused_in_bounded_memory() {
    let dir = example_copy();
    let reviews = dir.path().join("reviews.jsonl");
    let original = std::fs::read_to_string(&reviews).unwrap();
    std::fs::write(&reviews, format!("{original}{}", "{}\n".repeat(1_000_000))).unwrap();
    let exp = dir.path().join("experiment.toml");
    let runs = dir.path().join("out/runs");
    for args in [
        vec![std::ffi::OsStr::new("validate"), exp.as_os_str()],
        vec![
            "run".as_ref(),
            exp.as_os_str(),
            "--runs-dir".as_ref(),
            runs.as_os_str(),
            "--no-plots".as_ref(),
        ],
    ] {
        let (code, text) = bounded(&args);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(
            text.contains("1000000 problems") || text.contains("1000000 that refuse"),
            "{text}"
        );
        assert!(text.contains("field `target`: is missing"), "{text}");
    }
    assert!(!dir.path().join("out").exists());

    let one_line = format!(
        "{original}{{\"target\": \"t\", \"arm\": \"baseline\", \"reviewer\": \"r\", \"findings\": [{}]}}\n",
        vec!["{}"; 3_000_000].join(",")
    );
    std::fs::write(&reviews, one_line).unwrap();
    let line = original.lines().count() + 1;
    for args in [
        vec![std::ffi::OsStr::new("validate"), exp.as_os_str()],
        vec!["validate".as_ref(), dir.path().as_os_str()],
        vec![
            "run".as_ref(),
            exp.as_os_str(),
            "--runs-dir".as_ref(),
            runs.as_os_str(),
        ],
    ] {
        let (code, text) = bounded(&args);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(
            text.contains(&format!(
                "reviews.jsonl:{line}: field `findings`: holds more than 10000 findings"
            )),
            "{args:?}: {text}"
        );
    }
}
