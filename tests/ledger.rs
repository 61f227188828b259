//! The input ledger (docs/reference.md, "The input ledger"): every line used or excluded for a
//! named reason, every refusal that keeps a mistake from changing a decision unseen, and every
//! caveat a decision carries. Each test is named after what it pins.

use std::path::{Path, PathBuf};

mod common;

use common::{calibench, examples_names, json_of, outcome, run_into};
use serde_json::Value;

/// A fresh `calibench init --kind KIND` corpus in a temporary folder.
fn scaffold(kind: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("c");
    calibench()
        .arg("init")
        .arg(&corpus)
        .args(["--kind", kind])
        .assert()
        .success();
    (dir, corpus)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Rewrites `file` of `corpus` line by line (1-based line numbers).
fn edit_lines(corpus: &Path, file: &str, f: impl Fn(usize, String) -> Option<String>) {
    let path = corpus.join(file);
    let text: Vec<String> = read(&path)
        .lines()
        .enumerate()
        .filter_map(|(i, l)| f(i + 1, l.to_string()))
        .collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
}

fn edit(corpus: &Path, file: &str, f: impl Fn(String) -> String) {
    let path = corpus.join(file);
    std::fs::write(&path, f(read(&path))).unwrap();
}

/// `calibench validate --json` of `corpus`: its exit status and answer.
fn validate(corpus: &Path) -> (i32, Value) {
    let out = calibench()
        .args(["validate", "--json"])
        .arg(corpus)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), v)
}

/// `calibench run` of `corpus`: exit status, stdout, stderr.
fn run(corpus: &Path, extra: &[&str]) -> (i32, String, String) {
    let runs = corpus.parent().unwrap().join("out/runs");
    outcome(
        run_into(&runs, corpus)
            .args(["--no-plots", "--bootstrap", "200"])
            .args(extra),
    )
}

/// Asserts a run of `corpus` is refused (exit 2) saying each of `says`, that `validate` lists
/// the same problem, and that nothing was written.
fn refused(corpus: &Path, says: &[&str]) {
    let runs = corpus.parent().unwrap().join("out/runs");
    let entries = || std::fs::read_dir(&runs).map_or(0, |d| d.count());
    let before = entries();
    let (code, _, err) = run(corpus, &[]);
    assert_eq!(code, 2, "{err}");
    for s in says {
        assert!(err.contains(s), "run does not say {s:?}:\n{err}");
    }
    assert_eq!(
        entries(),
        before,
        "a refused run wrote into {}",
        runs.display()
    );
    let out = calibench().arg("validate").arg(corpus).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    for s in says {
        assert!(text.contains(s), "validate does not say {s:?}:\n{text}");
    }
}

/// Every corpus folder under `root` (a folder holding a `*.jsonl`), recursively.
fn corpora_under(root: &Path, out: &mut Vec<PathBuf>) {
    let mut holds = false;
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            corpora_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            holds = true;
        }
    }
    if holds {
        out.push(root.to_path_buf());
    }
}

/// The non-blank lines of a file, as the ledger counts them.
fn nonblank(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
        .count() as u64
}

/// The arithmetic every file's ledger keeps: its lines are the file's non-blank lines, and each
/// is used or excluded once.
fn balances(dir: &Path, inputs: &Value) {
    let files = inputs["files"].as_object().unwrap();
    for (file, f) in files {
        let lines = f["lines"].as_u64().unwrap();
        let used = f["used"].as_u64().unwrap();
        let excluded: u64 = f["excluded"]
            .as_object()
            .unwrap()
            .values()
            .map(|e| e["count"].as_u64().unwrap())
            .sum();
        assert_eq!(lines, used + excluded, "{}: {file}", dir.display());
        assert_eq!(
            lines,
            nonblank(&dir.join(file)),
            "{}: {file}",
            dir.display()
        );
    }
    // Every corpus file of the folder is in the ledger.
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let corpus_file = [
            "reviews.jsonl",
            "queries.jsonl",
            "verdicts.jsonl",
            "labels.jsonl",
            "scores.jsonl",
            "validations.jsonl",
            "targets.jsonl",
        ]
        .contains(&name.as_str());
        if corpus_file {
            assert!(files.contains_key(&name), "{}: {name}", dir.display());
        }
    }
}

#[test]
fn every_example_and_every_reproducer_balances_its_ledger() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = Vec::new();
    corpora_under(&root.join("corpora"), &mut dirs);
    corpora_under(&root.join("tests/fixtures/repro"), &mut dirs);
    // Collections made by collect (accepted runs hold no corpus files).
    let mut checked = 0;
    for dir in &dirs {
        let (_, v) = validate(dir);
        let inputs = &v["inputs"];
        if inputs.is_null() {
            continue; // a folder validate cannot read as a corpus (an import's raw logs)
        }
        balances(dir, inputs);
        checked += 1;
    }
    assert!(checked >= 30, "{checked} corpora checked");
    // A run's ledger is the one validate prints.
    let out = tempfile::tempdir().unwrap();
    for name in examples_names() {
        let dir = root.join("corpora").join(name);
        let m = json_of(run_into(out.path().join(name).join("runs"), &dir).args([
            "--json",
            "--no-plots",
            "--bootstrap",
            "50",
        ]));
        let (_, v) = validate(&dir);
        assert_eq!(m["inputs"], v["inputs"], "{name}");
        balances(&dir, &m["inputs"]);
    }
}

#[test]
fn lines_under_a_label_no_arm_reads_are_refused_in_every_file() {
    // reviews.jsonl: three returns misspelt (as hostile round 3 found).
    let (_d, c) = scaffold("doc");
    edit_lines(&c, "reviews.jsonl", |i, l| {
        Some(if (17..=19).contains(&i) {
            l.replace("\"treatment\"", "\"tretment\"")
        } else {
            l
        })
    });
    refused(
        &c,
        &["reviews.jsonl:17: field `arm`: 3 of 32 returns are filed under a label neither arm reads, and would silently leave the run: `tretment` (3 lines, first on line 17); did you mean `treatment`?"],
    );
    // The copy-paste slip: the treatment arm reads the baseline's label.
    let (_d, c) = scaffold("doc");
    edit(&c, "experiment.toml", |t| {
        t.replacen("source = \"treatment\"", "source = \"baseline\"", 1)
    });
    refused(
        &c,
        &["16 of 32 returns are filed under a label neither arm reads"],
    );
    // queries.jsonl: a third recording appended.
    let (_d, c) = scaffold("queries");
    edit(&c, "queries.jsonl", |t| {
        let extra: String = t
            .lines()
            .take(2)
            .map(|l| l.replacen("{", "{\"arm\": \"v2\", ", 1) + "\n")
            .collect();
        t + &extra
    });
    refused(
        &c,
        &["2 of 14 queries are filed under a label neither arm reads"],
    );
    // scores.jsonl: a third imported arm.
    let (_d, c) = scaffold("scores");
    edit(&c, "scores.jsonl", |t| {
        let extra: String = t
            .lines()
            .take(3)
            .map(|l| l.replace("\"v1\"", "\"v3\"") + "\n")
            .collect();
        t + &extra
    });
    refused(&c, &["3 of 43 score lines are filed under a label neither arm reads, and would silently leave the run: `v3` (3 lines, first on line 41)"]);
}

#[test]
fn ignored_labels_are_counted_never_refused_and_never_a_caveat() {
    let (_d, c) = scaffold("doc");
    // A third recorded arm in both files, which this experiment does not compare.
    for file in ["reviews.jsonl", "verdicts.jsonl"] {
        edit(&c, file, |t| {
            let extra: String = t
                .lines()
                .filter(|l| l.contains("\"treatment\""))
                .take(4)
                .map(|l| l.replace("\"treatment\"", "\"treatment-2\"") + "\n")
                .collect();
            t + &extra
        });
    }
    refused(
        &c,
        &[
            "`treatment-2` (4 lines, first on line 33)",
            "ignore_labels = [\"treatment-2\"]",
        ],
    );
    edit(&c, "experiment.toml", |t| {
        t.replacen(
            "[decision]",
            "ignore_labels = [\"treatment-2\"]\n\n[decision]",
            1,
        )
    });
    let (code, v) = validate(&c);
    assert_eq!(code, 0, "{v:#}");
    let reviews = &v["inputs"]["files"]["reviews.jsonl"];
    assert_eq!(reviews["lines"], 36);
    assert_eq!(reviews["used"], 32);
    assert_eq!(reviews["excluded"]["label-ignored"]["count"], 4);
    assert_eq!(reviews["excluded"]["label-ignored"]["first_line"], 33);
    assert_eq!(
        reviews["excluded"]["label-ignored"]["example"],
        "treatment-2"
    );
    assert_eq!(
        v["inputs"]["files"]["verdicts.jsonl"]["excluded"]["label-ignored"]["count"],
        4
    );
    assert_eq!(v["inputs"]["caveats"], serde_json::json!([]));
    let (code, out, err) = run(&c, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("caveat"), "{err}");
    assert!(out.contains("decision: better."), "{out}");
    // An arm's own label cannot be ignored.
    edit(&c, "experiment.toml", |t| {
        t.replace(
            "ignore_labels = [\"treatment-2\"]",
            "ignore_labels = [\"treatment\"]",
        )
    });
    refused(
        &c,
        &["`ignore_labels.0`: `treatment` is the label arm `treatment` reads"],
    );
}

#[test]
fn verdict_and_label_ids_that_resolve_to_nothing_are_refused_with_the_nearest_id() {
    let (_d, c) = scaffold("doc");
    edit_lines(&c, "verdicts.jsonl", |i, l| {
        Some(if i == 41 {
            l.replacen("\"plan-a\"", "\"plan-x\"", 1)
        } else {
            l
        })
    });
    let line = read(&c.join("verdicts.jsonl"))
        .lines()
        .nth(40)
        .unwrap()
        .to_string();
    assert!(line.contains("plan-x"), "{line}");
    refused(
        &c,
        &["verdicts.jsonl:41: field `item_id`: 1 of 80 verdict lines names an item that is no target or finding id of its arm: first `plan-x` (arm `treatment`)"],
    );
    // A near miss of a finding id is named.
    let (_d, c) = scaffold("doc");
    let id = {
        let v = read(&c.join("verdicts.jsonl"));
        let line = v.lines().nth(2).unwrap();
        let item: Value = serde_json::from_str(line).unwrap();
        item["item_id"].as_str().unwrap().to_string()
    };
    let typo = id.replacen('-', "_", 1);
    edit_lines(&c, "verdicts.jsonl", |i, l| {
        Some(if i == 3 { l.replace(&id, &typo) } else { l })
    });
    refused(
        &c,
        &[&format!(
            "first `{typo}` (arm `baseline`); did you mean `{id}`?"
        )],
    );
    // Labels too.
    let (_d, c) = scaffold("doc");
    std::fs::write(
        c.join("labels.jsonl"),
        "{\"item_id\": \"plan-a\", \"arm\": \"baseline\", \"annotator\": \"ann-1\", \"per_dimension\": {\"real\": 1, \"important\": 0.5}}\n{\"item_id\": \"nope\", \"arm\": \"baseline\", \"annotator\": \"ann-1\", \"per_dimension\": {\"real\": 1, \"important\": 0.5}}\n",
    )
    .unwrap();
    refused(&c, &["labels.jsonl:2: field `item_id`: 1 of 2 label lines names an item that is no target or finding id of its arm: first `nope`"]);
}

#[test]
fn an_id_one_slip_from_another_is_refused_not_left_unpaired() {
    for (from, to, says) in [
        // Zero-padding: both ids in one arm only.
        ("plan-b", "plan-02", None),
        // Case, beside an id in both arms.
        ("plan-c", "Plan-a", Some("`Plan-a` is reviewed in the treatment only, and `plan-a` in both arms is one slip away")),
        // A transposition.
        ("plan-d", "paln-a", Some("`paln-a` is reviewed in the treatment only, and `plan-a` in both arms")),
    ] {
        let (_d, c) = scaffold("doc");
        if to == "plan-02" {
            // design-4 beside design-04: the baseline has plan-2, the treatment plan-02.
            edit(&c, "reviews.jsonl", |t| {
                t.lines()
                    .map(|l| {
                        if l.contains("\"plan-b\"") && l.contains("\"baseline\"") {
                            l.replace("\"plan-b\"", "\"plan-2\"")
                        } else if l.contains("\"plan-b\"") {
                            l.replace("\"plan-b\"", "\"plan-02\"")
                        } else {
                            l.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
                    + "\n"
            });
            // The verdicts judge the targets by name: drop theirs.
            edit_lines(&c, "verdicts.jsonl", |_, l| {
                (!l.contains("\"plan-b\"")).then_some(l)
            });
            refused(&c, &["1 target present in one arm only looks like a typo of another id: `plan-2` is reviewed in the baseline only, and `plan-02` in the treatment only is one slip away"]);
            continue;
        }
        edit(&c, "reviews.jsonl", |t| {
            t.lines()
                .map(|l| {
                    if l.contains(&format!("\"{from}\"")) && l.contains("\"treatment\"") {
                        l.replace(&format!("\"{from}\""), &format!("\"{to}\""))
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        });
        edit_lines(&c, "verdicts.jsonl", |_, l| {
            (!(l.contains(&format!("\"{from}\"")) && l.contains("\"treatment\""))).then_some(l)
        });
        refused(&c, &[says.unwrap(), "field `target`"]);
    }
}

#[test]
fn targets_in_one_arm_only_are_a_caveat_on_every_decision_line() {
    let (_d, c) = scaffold("doc");
    // plan-h reviewed in the baseline only: not a near miss of any other id (plan-a … plan-g
    // differ in one letter, a series).
    edit_lines(&c, "reviews.jsonl", |_, l| {
        (!(l.contains("\"plan-h\"") && l.contains("\"treatment\""))).then_some(l)
    });
    edit_lines(&c, "verdicts.jsonl", |_, l| {
        (!(l.contains("plan-h") && l.contains("\"treatment\""))).then_some(l)
    });
    let (code, v) = validate(&c);
    assert_eq!(code, 0, "{v:#}");
    let caveat = "1 target was reviewed in the baseline only and is not paired (first: plan-h)";
    assert_eq!(sentences(&v["inputs"]["caveats"]), [caveat]);
    assert_eq!(v["inputs"]["caveats"][0]["kind"], "unpaired");
    assert_eq!(v["inputs"]["unpaired"]["baseline"]["count"], 1);
    assert_eq!(v["inputs"]["unpaired"]["baseline"]["first"], "plan-h");
    let (code, out, err) = run(&c, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("1 caveat on the inputs:\n  - {caveat}")),
        "{err}"
    );
    assert!(out.contains("decision: better — with 1 caveat. "), "{out}");
    assert!(
        out.contains(&format!("- Caveat, unpaired units: {caveat}.")),
        "{out}"
    );
    let runs = c.parent().unwrap().join("out/runs");
    let run_dir = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let m: Value = serde_json::from_str(&read(&run_dir.join("metrics.json"))).unwrap();
    assert_eq!(sentences(&m["decision"]["caveats"]), [caveat]);
    assert_eq!(sentences(&m["inputs"]["caveats"]), [caveat]);
    let reports = c.parent().unwrap().join("out/reports");
    let report_dir = reports.join(run_dir.file_name().unwrap());
    let md = read(&report_dir.join("report.md"));
    assert!(md.contains("**Decision: better — with 1 caveat.**"), "{md}");
    assert!(md.contains("| reviews.jsonl | 30 | 30 | — |"), "{md}");
    let html = read(&report_dir.join("report.html"));
    assert!(html.contains("Decision: better — with 1 caveat."), "{html}");
    // --strict refuses it, at its file and line.
    let (code, _, err) = run(&c, &["--strict"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "reviews.jsonl:15: field `target`: 1 target was reviewed in the baseline only"
        ),
        "{err}"
    );
}

#[test]
fn a_reviewer_with_returns_in_one_arm_only_is_a_caveat() {
    let (_d, c) = scaffold("doc");
    edit(&c, "reviews.jsonl", |t| {
        t.lines()
            .map(|l| {
                if l.contains("\"treatment\"") && l.contains("\"feasibility\"") {
                    l.replace("\"feasibility\"", "\"feasibility-v2\"")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    });
    let (code, v) = validate(&c);
    assert_eq!(code, 0, "{v:#}");
    let caveats = sentences(&v["inputs"]["caveats"]);
    assert_eq!(caveats.len(), 2, "{caveats:#?}");
    assert!(caveats[0].starts_with("reviewer `feasibility` has returns in the baseline only (8 returns, first: reviews.jsonl:"), "{caveats:#?}");
    assert!(
        caveats[1].starts_with("reviewer `feasibility-v2` has returns in the treatment only"),
        "{caveats:#?}"
    );
}

#[test]
fn any_malformed_finding_is_a_caveat_and_a_near_key_says_did_you_mean() {
    let (_d, c) = scaffold("doc");
    // One treatment finding with `confidence` misspelt.
    edit_lines(&c, "reviews.jsonl", |i, l| {
        Some(if i == 20 {
            l.replacen("\"confidence\"", "\"confidnce\"", 1)
        } else {
            l
        })
    });
    let (code, v) = validate(&c);
    assert_eq!(code, 2, "{v:#}");
    let listed = v["problems"][0]["problem"].as_str().unwrap();
    assert!(
        listed.contains("is missing; the finding has `confidnce`: did you mean `confidence`?"),
        "{listed}"
    );
    let caveats = sentences(&v["inputs"]["caveats"]);
    assert_eq!(
        caveats[0],
        "1 of 32 treatment findings was dropped as malformed: `confidence` is missing; the finding has `confidnce`: did you mean `confidence`? (first: reviews.jsonl:20)"
    );
    assert_eq!(v["inputs"]["findings"]["treatment"]["read"], 32);
    assert_eq!(v["inputs"]["findings"]["treatment"]["used"], 31);
    let (code, out, _) = run(&c, &[]);
    assert_eq!(code, 0);
    assert!(out.contains("— with 1 caveat."), "{out}");
    // --strict refuses it naming the finding.
    let (code, _, err) = run(&c, &["--strict"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("reviews.jsonl:20: field `confidence`"),
        "{err}"
    );
}

#[test]
fn a_judge_panel_that_differs_between_the_arms_is_refused() {
    let (_d, c) = scaffold("doc");
    edit(&c, "verdicts.jsonl", |t| {
        t.lines()
            .map(|l| {
                if l.contains("\"arm\":\"treatment\"") {
                    l.replace("\"judge-c\"", "\"judge-d\"")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    });
    refused(
        &c,
        &["field `verdicts[].model`: the judge panel differs between the arms: `judge-c` judges baseline items only; `judge-d` judges treatment items only"],
    );
}

/// Three annotators' labels on plan-a and plan-b in both arms, with `per_dimension` as given.
fn labels(c: &Path, per_dimension: impl Fn(&str) -> &'static str) {
    let mut out = String::new();
    for arm in ["baseline", "treatment"] {
        for item in ["plan-a", "plan-b"] {
            for ann in ["ann-1", "ann-2", "ann-3"] {
                out += &format!(
                    "{{\"item_id\": \"{item}\", \"arm\": \"{arm}\", \"annotator\": \"{ann}\", \"per_dimension\": {}}}\n",
                    per_dimension(arm)
                );
            }
        }
    }
    std::fs::write(c.join("labels.jsonl"), out).unwrap();
}

#[test]
fn labels_that_leave_out_a_dimension_the_judges_score_are_refused() {
    let (_d, c) = scaffold("doc");
    labels(&c, |arm| {
        if arm == "treatment" {
            "{\"real\": 0.75}"
        } else {
            "{\"real\": 0.5, \"important\": 0.5}"
        }
    });
    refused(
        &c,
        &["labels.jsonl:7: field `per_dimension`: lacks `important`, which the judges score on item `plan-a` (arm `treatment`"],
    );
    // A dimension that weighs nothing in the composite may be left out.
    edit(&c, "experiment.toml", |t| {
        t.replace(
            "dimension_weights = {}",
            "dimension_weights = { important = 0 }",
        )
    });
    let (code, v) = validate(&c);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["inputs"]["files"]["labels.jsonl"]["used"], 12);
}

#[test]
fn labels_on_no_judged_item_are_refused_and_unjudged_ones_counted() {
    let (_d, c) = scaffold("doc");
    // Findings exist but none of these is judged: every judge failed on them.
    let finding = {
        let v = read(&c.join("verdicts.jsonl"));
        let item: Value = serde_json::from_str(v.lines().nth(1).unwrap()).unwrap();
        item["item_id"].as_str().unwrap().to_string()
    };
    edit_lines(&c, "verdicts.jsonl", |i, l| {
        Some(if i == 2 {
            let mut v: Value = serde_json::from_str(&l).unwrap();
            for j in v["verdicts"].as_array_mut().unwrap() {
                j["per_dimension"] = Value::Null;
            }
            v.to_string()
        } else {
            l
        })
    });
    std::fs::write(
        c.join("labels.jsonl"),
        format!("{{\"item_id\": \"{finding}\", \"arm\": \"baseline\", \"annotator\": \"ann-1\", \"per_dimension\": {{\"real\": 1}}}}\n"),
    )
    .unwrap();
    refused(
        &c,
        &["labels.jsonl:1: field `item_id`: no label names an item the judges scored"],
    );
    // Beside a label on a judged item, it is counted as not judged.
    edit(&c, "labels.jsonl", |t| {
        t + "{\"item_id\": \"plan-a\", \"arm\": \"baseline\", \"annotator\": \"ann-1\", \"per_dimension\": {\"real\": 1, \"important\": 1}}\n"
    });
    let (code, v) = validate(&c);
    assert_eq!(code, 0, "{v:#}");
    let f = &v["inputs"]["files"]["labels.jsonl"];
    assert_eq!(f["used"], 1);
    assert_eq!(f["excluded"]["item-not-judged"]["count"], 1);
    assert_eq!(
        f["excluded"]["item-not-judged"]["example"],
        finding.as_str()
    );
}

#[test]
fn policy_keys_of_the_other_mode_are_refused_wherever_they_are_set() {
    let (_d, doc) = scaffold("doc");
    let (_d2, code) = scaffold("code");
    for (corpus, set, says) in [
        (&doc, "arms.baseline.review.gate=0.99", "`arms.baseline.review.gate`: is a code-mode key of float-gates, but mode is doc: it would be ignored"),
        (&doc, "arms.baseline.review.p0_gate=0.5", "`arms.baseline.review.p0_gate`: is a code-mode key"),
        (&doc, "arms.treatment.review.review_mode=\"headless\"", "`arms.treatment.review.review_mode`: is a code review key, but mode is doc"),
        (&code, "arms.baseline.review.fyi_floor=0.99", "`arms.baseline.review.fyi_floor`: is a doc-mode key of float-gates, but mode is code"),
        (&code, "arms.baseline.review.gates.P1=0.1", "`arms.baseline.review.gates`: is a doc-mode key of float-gates, but mode is code"),
    ] {
        let out = calibench()
            .args(["validate", "--set", set])
            .arg(corpus)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{set}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(says), "{set}: {text}");
        let (key, _) = set.split_once('=').unwrap();
        let key = key.trim_start_matches("arms.baseline.").trim_start_matches("arms.treatment.");
        let arm = if set.contains("treatment") { "treatment" } else { "baseline" };
        let out = calibench()
            .args(["sweep"])
            .arg(corpus)
            .args(["--arm", arm, "--vary", &format!("{key}=0.1,0.9")])
            .arg("--runs-dir")
            .arg(corpus.parent().unwrap().join("sr"))
            .arg("--reports-dir")
            .arg(corpus.parent().unwrap().join("sp"))
            .output()
            .unwrap();
        if !key.ends_with("review_mode") {
            assert_eq!(out.status.code(), Some(2), "sweep {key}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("mode is"), "sweep {key}");
        }
    }
}

#[test]
fn an_anchor_scale_threshold_between_0_and_1_is_refused() {
    let (_d, c) = scaffold("doc");
    for (set, says) in [
        ("arms.treatment.review.actionable_from=0.75", "`arms.treatment.review.actionable_from`: 0.75 is on the float scale, but this arm reads confidences on the anchor scale (0 to 100): did you mean 75?"),
        ("arms.treatment.review.p0_escape=0.5", "did you mean 50?"),
    ] {
        let out = calibench()
            .args(["validate", "--set", set])
            .arg(&c)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{set}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(says), "{set}: {text}");
    }
    // actionable_from below surface_from stays allowed: checked first, it makes every finding
    // from there up actionable.
    let out = calibench()
        .args([
            "validate",
            "--set",
            "arms.treatment.review.actionable_from=25",
        ])
        .arg(&c)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_gate_fails_a_decision_with_caveats_unless_the_policy_allows_them() {
    let (_d, c) = scaffold("doc");
    edit_lines(&c, "reviews.jsonl", |i, l| {
        Some(if i == 20 {
            l.replacen("\"confidence\"", "\"confidnce\"", 1)
        } else {
            l
        })
    });
    let (code, _, err) = run(&c, &[]);
    assert_eq!(code, 0, "{err}");
    let runs = c.parent().unwrap().join("out/runs");
    let run_dir = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let gate = |policy: &str| {
        let p = c.parent().unwrap().join("gate.toml");
        std::fs::write(&p, policy).unwrap();
        let out = calibench()
            .arg("gate")
            .arg(&run_dir)
            .arg("--policy")
            .arg(&p)
            .arg("--summary")
            .arg(c.parent().unwrap().join("summary.md"))
            .arg("--junit")
            .arg(c.parent().unwrap().join("junit.xml"))
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = gate("require_decision = \"better\"\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL  decision     the decision is better — with 1 caveat, and 1 caveat is of a kind the policy does not allow (allow_caveats = true, or a list of kinds): malformed findings (malformed): 1 of 32 treatment findings"), "{out}");
    assert!(
        out.contains("  caveat (malformed): 1 of 32 treatment findings was dropped as malformed"),
        "{out}"
    );
    // JUnit types the failure by the check's kind and counts the caveats by theirs.
    let junit = read(&c.parent().unwrap().join("junit.xml"));
    assert!(
        junit.contains(r#"<property name="caveats.malformed" value="1"/>"#),
        "{junit}"
    );
    assert!(junit.contains(r#"type="decision""#), "{junit}");
    let summary = read(&c.parent().unwrap().join("summary.md"));
    assert!(summary.contains("**1 Caveat** on the inputs:"), "{summary}");
    let (code, out) = gate("require_decision = \"better\"\nallow_caveats = true\n");
    assert_eq!(code, 0, "{out}");
    // A list of kinds lets those pass and no others.
    let (code, out) = gate("require_decision = \"better\"\nallow_caveats = [\"malformed\"]\n");
    assert_eq!(code, 0, "{out}");
    let (code, out) =
        gate("require_decision = \"better\"\nallow_caveats = [\"drift\", \"partial\"]\n");
    assert_eq!(code, 1, "{out}");
    let (code, out) = gate("require_decision = \"better\"\nallow_caveats = [\"drfit\"]\n");
    assert_eq!(code, 2, "{out}");
    // allow_caveats alone allows nothing.
    let (code, out) = gate("allow_caveats = true\n");
    assert_eq!(code, 2, "{out}");
}

/// The sentences of a stored list of caveats.
fn sentences(caveats: &Value) -> Vec<String> {
    caveats
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sentence"].as_str().unwrap().to_string())
        .collect()
}
