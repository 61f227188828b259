//! `calibench import` on real logs written by Inspect, promptfoo and lm-eval
//! (tests/fixtures/import/SOURCES.md says where each came from), one test per mapping rule of
//! docs/reference.md. Where a rule needs a case the real logs lack (an errored sample, a list-valued
//! score), the test edits a copy of a real log, so every other field stays as the tool wrote it.

mod common;

use std::path::{Path, PathBuf};

use common::{calibench, json_of};
use serde_json::{json, Value};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(rel)
}

/// `calibench import FORMAT LOGS --arm ARM --into DIR --json`, which must succeed.
fn import(format: &str, logs: &[&Path], arm: &str, into: &Path, extra: &[&str]) -> Value {
    json_of(
        calibench()
            .args(["import", format])
            .args(logs)
            .args(["--arm", arm, "--into"])
            .arg(into)
            .args(extra)
            .arg("--json"),
    )
}

/// The same, which must be refused with exit status 2; its stderr.
fn refused(format: &str, logs: &[&Path], arm: &str, into: &Path, extra: &[&str]) -> String {
    let out = calibench()
        .args(["import", format])
        .args(logs)
        .args(["--arm", arm, "--into"])
        .arg(into)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).unwrap()
}

fn lines(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("scores.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn arm_lines(dir: &Path, arm: &str) -> Vec<Value> {
    lines(dir).into_iter().filter(|l| l["arm"] == arm).collect()
}

/// A copy of a real JSON log, edited by `edit`, written into `dir` as `name`.
fn edited(from: &str, dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut log: Value = serde_json::from_slice(&std::fs::read(fixture(from)).unwrap()).unwrap();
    edit(&mut log);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(&log).unwrap()).unwrap();
    path
}

fn without_source(mut v: Vec<Value>) -> Vec<Value> {
    for l in &mut v {
        l.as_object_mut().unwrap().remove("source");
        l.as_object_mut().unwrap().remove("arm");
    }
    v
}

#[test]
fn inspect_eval_and_json_of_one_log_import_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    import(
        "inspect",
        &[&fixture("inspect/log_formats.eval")],
        "x",
        &a,
        &[],
    );
    import(
        "inspect",
        &[&fixture("inspect/log_formats.json")],
        "x",
        &b,
        &[],
    );
    let (from_zip, from_json) = (lines(&a), lines(&b));
    assert_eq!(from_zip.len(), 1);
    assert_eq!(without_source(from_zip), without_source(from_json));
}

#[test]
fn inspect_samples_pair_by_id_in_id_order_with_letters_converted() {
    let tmp = tempfile::tempdir().unwrap();
    let log = fixture("inspect/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval");
    let out = import("inspect", &[&log], "pop", tmp.path(), &[]);
    assert_eq!(out["task"], "popularity");
    assert_eq!(out["tally"]["samples"], 10);
    // The archive holds the samples in completion order (9, 6, 10, 5, …); the file is by id,
    // numbers by value: 10 after 9, not after 1.
    let items: Vec<i64> = lines(tmp.path())
        .iter()
        .map(|l| l["item"].as_i64().unwrap())
        .collect();
    assert_eq!(items, (1..=10).collect::<Vec<_>>());
    // The log's own summary: accuracy 0.8 from its samples' C and I.
    let c = out["tally"]["conversions"]["\"C\" → 1"].as_u64().unwrap();
    let i = out["tally"]["conversions"]["\"I\" → 0"].as_u64().unwrap();
    assert_eq!((c, i), (8, 2));
    let scores: Vec<f64> = lines(tmp.path())
        .iter()
        .map(|l| l["score"].as_f64().unwrap())
        .collect();
    assert_eq!(scores.iter().sum::<f64>(), 8.0);
    for l in lines(tmp.path()) {
        assert_eq!(l["correct"], json!(l["score"] == 1.0), "{l}");
        assert_eq!(l["repeat"], 1);
        assert_eq!(l["scorer"], "match");
    }
    // Fields that carry no score are counted, not silently dropped.
    assert_eq!(out["tally"]["unmapped"]["score.explanation"], 10);
}

#[test]
fn an_unscored_log_is_refused_not_read_as_zeros() {
    let tmp = tempfile::tempdir().unwrap();
    let log = fixture("inspect/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval");
    let e = refused("inspect", &[&log], "x", tmp.path(), &[]);
    assert!(e.contains("10 samples carry no score"), "{e}");
    assert!(!tmp.path().join("scores.jsonl").exists(), "nothing written");
}

#[test]
fn an_errored_or_unscored_sample_is_missing_never_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let log = edited(
        "inspect/data_arc_sonnet.json",
        tmp.path(),
        "arc.json",
        |log| {
            log["samples"][1]["error"] = json!({"message": "RateLimitError", "traceback": ""});
            log["samples"][2].as_object_mut().unwrap().remove("scores");
        },
    );
    let out = import("inspect", &[&log], "s", &tmp.path().join("c"), &[]);
    let by_item: Vec<(i64, Value, Value)> = lines(&tmp.path().join("c"))
        .iter()
        .map(|l| {
            (
                l["item"].as_i64().unwrap(),
                l["score"].clone(),
                l["missing"].clone(),
            )
        })
        .collect();
    assert_eq!(by_item[1], (2, Value::Null, json!("sample errored")));
    assert_eq!(by_item[2], (3, Value::Null, json!("no score")));
    assert_eq!(by_item[0].1, json!(1.0));
    assert_eq!(
        out["tally"]["missing"],
        json!({"no score": 1, "sample errored": 1})
    );
    assert_eq!(out["tally"]["scored"], 3);
}

#[test]
fn ids_keep_their_type_lists_are_one_scorer_per_element_and_confidence_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let log = edited(
        "inspect/data_arc_sonnet.json",
        tmp.path(),
        "arc.json",
        |log| {
            log["samples"][0]["id"] = json!("1");
            log["samples"][1]["scores"]["choice"]["value"] = json!(["C", "I"]);
            log["samples"][2]["scores"]["choice"]["metadata"] = json!({"confidence": 0.8});
        },
    );
    import("inspect", &[&log], "s", &tmp.path().join("c"), &[]);
    let all = lines(&tmp.path().join("c"));
    // Numbers before text: "1" is its own item, after 5.
    assert_eq!(all.last().unwrap()["item"], json!("1"));
    assert!(all.iter().all(|l| l["item"] != json!(1)));
    let scorers: Vec<&str> = all
        .iter()
        .filter(|l| l["item"] == 2)
        .map(|l| l["scorer"].as_str().unwrap())
        .collect();
    // Its elements are scorers of their own; the log's plain `choice` is missing for it.
    assert_eq!(scorers, ["choice", "choice[0]", "choice[1]"]);
    let two = all
        .iter()
        .find(|l| l["item"] == 2 && l["scorer"] == "choice")
        .unwrap();
    assert_eq!(two["missing"], "no score");
    let three = all
        .iter()
        .find(|l| l["item"] == 3 && l["scorer"] == "choice")
        .unwrap();
    assert_eq!(three["confidence"], 0.8);
    // The other items lack choice[0] and choice[1]: missing for them, never 0.
    let one = all
        .iter()
        .find(|l| l["item"] == json!("1") && l["scorer"] == "choice[0]")
        .unwrap();
    assert_eq!(one["score"], Value::Null);
}

#[test]
fn malformed_inspect_logs_are_refused_naming_file_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let into = tmp.path().join("c");
    let v4 = tmp.path().join("future.json");
    std::fs::copy(fixture("inspect/log_version_3.txt"), &v4).unwrap();
    let e = refused("inspect", &[&v4], "x", &into, &[]);
    assert!(
        e.contains("future.json: version: Inspect log version 4; calibench reads version 2"),
        "{e}"
    );
    let cut = tmp.path().join("cut.json");
    std::fs::copy(fixture("inspect/log_invalid.txt"), &cut).unwrap();
    let e = refused("inspect", &[&cut], "x", &into, &[]);
    assert!(
        e.contains("cut.json:2: is not a readable Inspect log"),
        "{e}"
    );
    let short = tmp.path().join("short.eval");
    let bytes = std::fs::read(fixture("inspect/log_formats.eval")).unwrap();
    std::fs::write(&short, &bytes[..bytes.len() * 3 / 4]).unwrap();
    let e = refused("inspect", &[&short], "x", &into, &[]);
    assert!(
        e.contains("short.eval: is not a readable .eval archive"),
        "{e}"
    );
    let bad_id = edited("inspect/data_arc_qwen.json", tmp.path(), "id.json", |log| {
        log["samples"][1]["id"] = json!(1.5);
    });
    let e = refused("inspect", &[&bad_id], "x", &into, &[]);
    assert!(e.contains("id.json: samples[1]: id:"), "{e}");
    let e = refused(
        "inspect",
        &[
            &fixture("inspect/data_arc_qwen.json"),
            &fixture("inspect/log_formats.json"),
        ],
        "x",
        &into,
        &[],
    );
    assert!(e.contains("more than one task"), "{e}");
    assert!(!into.exists(), "nothing written for a refused import");
}

#[test]
fn arms_append_a_label_is_refused_twice_and_replace_swaps_it() {
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path();
    import(
        "inspect",
        &[&fixture("inspect/data_arc_qwen.json")],
        "qwen",
        c,
        &[],
    );
    let out = import(
        "inspect",
        &[&fixture("inspect/data_arc_sonnet.json")],
        "sonnet",
        c,
        &[],
    );
    assert_eq!(out["arms"], json!(["qwen", "sonnet"]));
    assert_eq!(lines(c).len(), 8);
    let before = std::fs::read(c.join("scores.jsonl")).unwrap();
    let e = refused(
        "inspect",
        &[&fixture("inspect/data_arc_sonnet.json")],
        "qwen",
        c,
        &[],
    );
    assert!(e.contains("already holds arm `qwen` (3 lines)"), "{e}");
    assert_eq!(
        std::fs::read(c.join("scores.jsonl")).unwrap(),
        before,
        "untouched"
    );
    let out = import(
        "inspect",
        &[&fixture("inspect/data_arc_sonnet.json")],
        "qwen",
        c,
        &["--replace"],
    );
    assert_eq!(out["replaced"], 3);
    assert_eq!(arm_lines(c, "qwen").len(), 5);
    assert_eq!(arm_lines(c, "sonnet").len(), 5);
    // The file reads back through the corpus reader and its derived schema.
    let schema = json_of(calibench().args(["schema", "scores", "--json"]));
    assert_eq!(schema["title"], "scores.jsonl line");
}

#[test]
fn promptfoo_cells_are_picked_and_items_are_test_cases_not_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let log = fixture("promptfoo/sample-export.json");
    let e = refused("promptfoo", &[&log], "x", tmp.path(), &[]);
    assert!(
        e.contains("2 prompt × provider cells") && e.contains("openai:gpt-5-mini"),
        "{e}"
    );
    let e = refused("promptfoo", &[&log], "x", tmp.path(), &["--pick", "gpt"]);
    assert!(e.contains("no prompt × provider cell is `gpt`"), "{e}");
    import(
        "promptfoo",
        &[&log],
        "full",
        tmp.path(),
        &["--pick", "openai:gpt-5"],
    );
    import(
        "promptfoo",
        &[&log],
        "mini",
        tmp.path(),
        &["--pick", "openai:gpt-5-mini"],
    );
    let (full, mini) = (arm_lines(tmp.path(), "full"), arm_lines(tmp.path(), "mini"));
    // Two riddles × their assertions (4 and 3), under the same item ids in both arms: the hash
    // of each test case's vars, not testIdx or the row's place.
    assert_eq!((full.len(), mini.len()), (7, 7));
    let ids = |v: &[Value]| -> Vec<(Value, Value)> {
        v.iter()
            .map(|l| (l["item"].clone(), l["scorer"].clone()))
            .collect()
    };
    assert_eq!(ids(&full), ids(&mini));
    assert!(full
        .iter()
        .all(|l| l["item"].as_str().unwrap().starts_with("vars:")));
    // gpt-5 failed the cost assertion on the echo riddle (0.0021 > 0.002), gpt-5-mini passed.
    let cost = |v: &[Value]| -> Vec<f64> {
        v.iter()
            .filter(|l| l["scorer"] == "cost")
            .map(|l| l["score"].as_f64().unwrap())
            .collect()
    };
    assert_eq!(cost(&full).iter().sum::<f64>(), 1.0);
    assert_eq!(cost(&mini).iter().sum::<f64>(), 2.0);
}

#[test]
fn promptfoo_errors_are_missing_repeats_regroup_and_names_stay_distinct() {
    let tmp = tempfile::tempdir().unwrap();
    let log = edited(
        "promptfoo/sample-export.json",
        tmp.path(),
        "r.json",
        |log| {
            let rows = log["results"]["results"].as_array_mut().unwrap();
            // A provider error: promptfoo still writes score 0 and success false.
            rows[1]["failureReason"] = json!(2);
            rows[1]["error"] = json!("API error: 429");
            // A repeat of the boat riddle for gpt-5, under another testIdx.
            let mut again = rows[3].clone();
            again["testIdx"] = json!(7);
            rows.push(again);
            // A described test case with two rubric assertions.
            rows[3]["testCase"]["description"] = json!("boat");
            let extra = json!({"type": "llm-rubric", "value": "is short"});
            rows[3]["testCase"]["assert"]
                .as_array_mut()
                .unwrap()
                .push(extra.clone());
            let mut c = rows[3]["gradingResult"]["componentResults"][2].clone();
            c["assertion"] = extra;
            c["score"] = json!(0);
            rows[3]["gradingResult"]["componentResults"]
                .as_array_mut()
                .unwrap()
                .push(c);
            // A repeat of the described test case, under a later testIdx: its second repeat.
            let mut repeat = rows[3].clone();
            repeat["testIdx"] = json!(9);
            rows.push(repeat);
        },
    );
    let out = import(
        "promptfoo",
        &[&log],
        "full",
        tmp.path(),
        &["--pick", "openai:gpt-5"],
    );
    let all = lines(tmp.path());
    let echo: Vec<&Value> = all
        .iter()
        .filter(|l| l["source"].as_str().unwrap().ends_with("[1]"))
        .collect();
    assert_eq!(echo.len(), 4, "every assertion of the errored row");
    assert!(echo
        .iter()
        .all(|l| l["score"].is_null() && l["missing"] == "the call errored (failureReason 2)"));
    assert_eq!(
        out["tally"]["missing"]["the call errored (failureReason 2)"],
        4
    );
    let boat: Vec<(&str, &str)> = all
        .iter()
        .filter(|l| l["item"] == "boat")
        .map(|l| (l["scorer"].as_str().unwrap(), l["source"].as_str().unwrap()))
        .collect();
    assert!(boat.contains(&("llm-rubric #2", boat[0].1)), "{boat:?}");
    let repeats: Vec<u64> = all
        .iter()
        .filter(|l| l["item"] != "boat" && l["scorer"] == "cost" && !l["score"].is_null())
        .map(|l| l["repeat"].as_u64().unwrap())
        .collect();
    assert_eq!(
        repeats,
        [1],
        "the undescribed copy of the boat riddle is its own test case"
    );
    let twice: Vec<u64> = all
        .iter()
        .filter(|l| l["scorer"] == "latency")
        .map(|l| l["repeat"].as_u64().unwrap())
        .collect();
    assert_eq!(twice.len(), 4);
    let boat_repeats: std::collections::BTreeSet<u64> = all
        .iter()
        .filter(|l| l["item"] == "boat")
        .map(|l| l["repeat"].as_u64().unwrap())
        .collect();
    assert_eq!(
        boat_repeats,
        [1, 2].into(),
        "rows of one test case are its repeats"
    );
}

#[test]
fn lm_eval_samples_are_the_scores_and_the_results_file_is_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let samples = fixture("lm-eval/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl");
    let results = fixture("lm-eval/results_2026-01-21T03-44-18.458309.json");
    let out = import(
        "lm-eval",
        &[&samples, &results],
        "m",
        &tmp.path().join("a"),
        &[],
    );
    assert_eq!(out["task"], "math_perturbed_full");
    let all = lines(&tmp.path().join("a"));
    assert_eq!(all.len(), 10);
    assert!(all
        .iter()
        .all(|l| l["scorer"] == "exact_match,none" && l["repeat"] == 1));
    let items: Vec<i64> = all.iter().map(|l| l["item"].as_i64().unwrap()).collect();
    assert_eq!(items, (0..10).collect::<Vec<_>>());
    // A results file of another task is refused.
    let other = edited(
        "lm-eval/results_2026-01-21T03-44-18.458309.json",
        tmp.path(),
        "results_2026-02-01T00-00-00.json",
        |r| {
            r["results"] = json!({"gsm8k": {}});
        },
    );
    let e = refused(
        "lm-eval",
        &[&samples, &other],
        "m",
        &tmp.path().join("b"),
        &[],
    );
    assert!(
        e.contains("does not report task `math_perturbed_full`"),
        "{e}"
    );

    // Regression (issue 34): one run given twice became repeats 1 and 2 of every document (and
    // a repeat-to-repeat α of 1 over identical copies). The same file twice, a copy of it in
    // another folder, and a copy renamed to another time are each refused.
    let copy_dir = tmp.path().join("copy");
    std::fs::create_dir(&copy_dir).unwrap();
    let copy = copy_dir.join(samples.file_name().unwrap());
    std::fs::copy(&samples, &copy).unwrap();
    let renamed = tmp
        .path()
        .join("samples_math_perturbed_full_2026-03-01T00-00-00.1.jsonl");
    std::fs::copy(&samples, &renamed).unwrap();
    for (twice, says) in [
        (
            &samples,
            "is the run of task `math_perturbed_full` at 2026-01-21T03-44-18.458309 that",
        ),
        (
            &copy,
            "is the run of task `math_perturbed_full` at 2026-01-21T03-44-18.458309 that",
        ),
        (&renamed, "holds exactly what"),
    ] {
        let e = refused(
            "lm-eval",
            &[&samples, twice],
            "m",
            &tmp.path().join("c"),
            &[],
        );
        assert!(
            e.contains(says) && e.contains("would count as two repeats"),
            "{e}"
        );
    }
    assert!(!tmp.path().join("c").exists());
}

/// Writes `experiment` into the corpus folder `corpus` and runs it, with its runs and reports
/// beside the folder; the metrics.
fn run_experiment(corpus: &Path, experiment: &str) -> Value {
    std::fs::write(corpus.join("experiment.toml"), experiment).unwrap();
    let beside = corpus.parent().unwrap();
    json_of(
        calibench()
            .arg("run")
            .arg(corpus.join("experiment.toml"))
            .arg("--runs-dir")
            .arg(beside.join("runs"))
            .arg("--reports-dir")
            .arg(beside.join("reports"))
            .args(["--json", "--no-plots"]),
    )
}

/// Two runs of a multiple-choice task in `dir`: the real lm-eval lines, with lm-eval's
/// multiple-choice fields (log-likelihoods −1, −2, −3 written as text; `acc` 1, 0, 1 in the
/// first run and 0, 1, 0 in the second; `f1` a corpus-level list).
fn multiple_choice_runs(dir: &Path) -> Vec<PathBuf> {
    let real = std::fs::read_to_string(fixture(
        "lm-eval/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl",
    ))
    .unwrap();
    let mut runs = Vec::new();
    for (n, time) in ["2026-01-21T03-44-18.1", "2026-01-22T10-00-00.1"]
        .iter()
        .enumerate()
    {
        let text: String = real
            .lines()
            .take(3)
            .enumerate()
            .map(|(i, l)| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v["metrics"] = json!(["acc", "f1"]);
                v["acc"] = json!(if (i + n) % 2 == 0 { "1.0" } else { "0.0" });
                v["f1"] = json!(["3", "3"]);
                v["filtered_resps"] =
                    json!([["-1.0", "False"], ["-2.0", "False"], ["-3.0", "False"]]);
                v.as_object_mut().unwrap().remove("exact_match");
                serde_json::to_string(&v).unwrap() + "\n"
            })
            .collect();
        let path = dir.join(format!("samples_mc_{time}.jsonl"));
        std::fs::write(&path, text).unwrap();
        runs.push(path);
    }
    runs
}

#[test]
fn lm_eval_values_written_as_text_are_read_and_corpus_metrics_are_not_averaged() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = multiple_choice_runs(tmp.path());
    // Given later run first: repeats follow the time in the names.
    let out = import(
        "lm-eval",
        &[&runs[1], &runs[0]],
        "m",
        &tmp.path().join("c"),
        &[],
    );
    assert_eq!(out["tally"]["not_per_item"]["f1,none"], 6);
    assert_eq!(
        out["tally"]["conversions"]["number written as text → number"],
        6
    );
    let all = lines(&tmp.path().join("c"));
    assert_eq!(all.len(), 6);
    let p = 1.0 / (1.0 + (-1.0f64).exp() + (-2.0f64).exp());
    for l in &all {
        assert_eq!(l["scorer"], "acc,none");
        assert!((l["confidence"].as_f64().unwrap() - p).abs() < 1e-12);
        assert_eq!(l["correct"], json!(l["score"] == 1.0));
    }
    let first_run: Vec<f64> = all
        .iter()
        .filter(|l| l["repeat"] == 1)
        .map(|l| l["score"].as_f64().unwrap())
        .collect();
    assert_eq!(first_run, [1.0, 0.0, 1.0]);
}

#[test]
fn plain_tables_read_csv_as_text_ids_and_jsonl_with_types() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("runs.csv");
    std::fs::write(&csv, "item,score,scorer,repeat,confidence,correct\nq1,1,judge-a,1,0.9,true\nq1,,judge-b,1,,\n2,0.5,judge-a,2,0.4,0\n").unwrap();
    let out = import("csv", &[&csv], "a", &tmp.path().join("c"), &[]);
    assert_eq!(out["tally"]["missing"]["no score"], 1);
    let all = lines(&tmp.path().join("c"));
    assert_eq!(all[0]["item"], "2", "CSV ids are text");
    assert_eq!(all[0]["correct"], false);
    let jsonl = tmp.path().join("runs.jsonl");
    std::fs::write(
        &jsonl,
        "{\"item\": 2, \"score\": 1}\n{\"item\": \"2\", \"score\": 0}\n",
    )
    .unwrap();
    import("jsonl", &[&jsonl], "b", &tmp.path().join("c"), &[]);
    let b = arm_lines(&tmp.path().join("c"), "b");
    assert_eq!(
        (b[0]["item"].clone(), b[1]["item"].clone()),
        (json!(2), json!("2"))
    );
    std::fs::write(&csv, "item,score\nq1,high\n").unwrap();
    let e = refused("csv", &[&csv], "d", &tmp.path().join("c"), &[]);
    assert!(e.contains("runs.csv:2: score:"), "{e}");
}

/// The example corpus `corpora/arc-easy-import/` is what the two commands its experiment file
/// names write, from the repository's root: no line of it is typed by hand.
#[test]
fn the_arc_easy_example_is_what_import_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    for (log, arm) in [
        ("data_arc_qwen.json", "qwen2.5-0.5b"),
        ("data_arc_sonnet.json", "claude-sonnet-4"),
    ] {
        calibench()
            .current_dir(root)
            .args(["import", "inspect"])
            .arg(format!("tests/fixtures/import/inspect/{log}"))
            .args(["--arm", arm, "--into"])
            .arg(dir.path())
            .assert()
            .success();
    }
    let again = std::fs::read(dir.path().join("scores.jsonl")).unwrap();
    let committed = std::fs::read(root.join("corpora/arc-easy-import/scores.jsonl")).unwrap();
    assert!(
        again == committed,
        "corpora/arc-easy-import/scores.jsonl differs from what `calibench import` writes: run the commands in its experiment.toml"
    );
}

/// The model's own confidence, imported from lm-eval's multiple-choice log-likelihoods, is what
/// a scores run calibrates, and its two runs are the repeats whose agreement it measures.
#[test]
fn imported_multiple_choice_confidence_calibrates_in_a_scores_run() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = multiple_choice_runs(tmp.path());
    let corpus = tmp.path().join("c");
    let logs: Vec<&Path> = runs.iter().map(PathBuf::as_path).collect();
    import("lm-eval", &logs, "m", &corpus, &[]);
    import("lm-eval", &logs, "m-again", &corpus, &[]);
    let m = run_experiment(
        &corpus,
        "name = \"mc\"\nbootstrap = 100\n[arms.baseline]\nsource = \"m\"\n[arms.treatment]\nsource = \"m-again\"\n",
    );
    // Every line has confidence p = softmax(−1, −2, −3)[0]; 3 of the 6 answers are right, all
    // in one bin: ECE |0.5 − p|, Brier ((1 − p)² + p²) / 2.
    let p = 1.0 / (1.0 + (-1.0f64).exp() + (-2.0f64).exp());
    let cal = &m["scores"]["arms"]["baseline"]["scorers"]["acc,none"]["calibration"];
    assert_eq!(cal["n"], 6);
    assert!((cal["ece"].as_f64().unwrap() - (0.5 - p).abs()).abs() < 1e-12);
    let brier = ((1.0 - p).powi(2) + p.powi(2)) / 2.0;
    assert!((cal["brier"].as_f64().unwrap() - brier).abs() < 1e-12);
    // The two runs disagree on every item ([1, 0], [0, 1], [1, 0]): D_o = 6/6, D_e = 18/30,
    // α = 1 − 1 / 0.6.
    let alpha = m["agreement"]["repeats"]["baseline"]["alpha"]
        .as_f64()
        .unwrap();
    assert!((alpha - (1.0 - 1.0 / 0.6)).abs() < 1e-12, "{alpha}");
    // Each item's mean over its two runs is 0.5 in both arms: the delta is 0.
    assert_eq!(m["scores"]["delta"]["acc,none"]["delta"], 0.0);
}

/// The two cells of one real promptfoo file, imported as two arms, compare per assertion over
/// the test cases both ran; naming its `llm-rubric` grader as the only judge leaves a panel of
/// one, which the trust verdict refuses to believe, so that grader's figures are withheld while
/// the mechanical assertions stand.
#[test]
fn promptfoo_cells_compare_as_arms_and_a_lone_grader_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let log = fixture("promptfoo/sample-export.json");
    let corpus = tmp.path().join("c");
    for (arm, cell) in [
        ("gpt-5", "openai:gpt-5"),
        ("gpt-5-mini", "openai:gpt-5-mini"),
    ] {
        import("promptfoo", &[&log], arm, &corpus, &["--pick", cell]);
    }
    let m = run_experiment(
        &corpus,
        "name = \"riddles\"\nbootstrap = 100\n[arms.baseline]\nsource = \"gpt-5\"\n[arms.treatment]\nsource = \"gpt-5-mini\"\n[scores]\njudges = [\"llm-rubric\"]\n",
    );
    let d = &m["scores"]["delta"];
    // `cost` passes on both riddles under the mini model and on one under the full one: one
    // discordant item, for the treatment; McNemar's p with one discordant pair is 1.
    assert_eq!(d["cost"]["pairs"], 2);
    assert_eq!(d["cost"]["delta"], 0.5);
    assert_eq!(d["cost"]["mcnemar"]["treatment_only"], 1);
    assert_eq!(d["cost"]["mcnemar"]["baseline_only"], 0);
    assert_eq!(d["cost"]["p_value"], 1.0);
    // `contains` is asserted on one riddle only.
    assert_eq!(d["contains"]["pairs"], 1);
    // One grader: its α cannot be computed (no item has two raters), and each of the 2 riddles
    // in each arm has 1 surviving rater < 3.
    assert_eq!(m["trust"]["trustworthy"], false);
    let reasons = m["trust"]["trust_reasons"].as_array().unwrap();
    assert!(reasons[0]
        .as_str()
        .unwrap()
        .starts_with("(1) IRR not computable"));
    assert_eq!(reasons.len(), 5);
    assert!(d.get("llm-rubric").is_none());
    assert_eq!(m["scores"]["withheld"]["metrics"], json!(["llm-rubric"]));
    assert_eq!(m["lift"]["withheld"], true);
    // What each riddle cost, from the rows' `cost`, beside the scorers: per arm the mean over
    // samples, and the paired change with its relative interval. Not withheld with the judge:
    // it is measured, not judged.
    let rows = |cell: &str| -> Vec<f64> {
        let raw: Value = serde_json::from_slice(&std::fs::read(&log).unwrap()).unwrap();
        raw["results"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["provider"]["id"] == cell)
            .map(|r| r["cost"].as_f64().unwrap())
            .collect()
    };
    let mean = |xs: Vec<f64>| xs.iter().sum::<f64>() / xs.len() as f64;
    let arms = &m["scores"]["arms"];
    let b = arms["baseline"]["item_cost_usd_mean"].as_f64().unwrap();
    assert!((b - mean(rows("openai:gpt-5"))).abs() < 1e-12, "{b}");
    let t = arms["treatment"]["item_cost_usd_mean"].as_f64().unwrap();
    assert!((t - mean(rows("openai:gpt-5-mini"))).abs() < 1e-12, "{t}");
    let cost = &d["item_cost_usd"];
    assert_eq!(cost["pairs"], 2);
    assert!((cost["relative"]["value"].as_f64().unwrap() - (t / b - 1.0)).abs() < 1e-9);
    // Two riddles cannot bound a 95th percentile of latency.
    assert!(arms["baseline"]["item_latency_p95_ms"].is_number());
    assert!(arms["baseline"].get("ci").is_none());
    // Coverage counts the samples (a riddle's row, once however many assertions grade it).
    assert_eq!(
        m["inputs"]["usage"]["baseline"],
        json!({"calls": 2, "reported": 2})
    );
    // The report's first screen says what an item costs in each arm.
    let reports = corpus.parent().unwrap().join("reports");
    let report = std::fs::read_dir(&reports)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.path().is_dir())
        .unwrap()
        .path()
        .join("report.md");
    let md = std::fs::read_to_string(report).unwrap();
    assert!(
        md.contains(&format!("cost per item ${b:.4} → ${t:.4}")),
        "{}",
        md.lines()
            .find(|l| l.contains("Headline"))
            .unwrap_or_default()
    );
}

/// The entries of a real `.eval` archive, in order.
fn eval_entries(from: &str) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let file = std::fs::File::open(fixture(from)).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut e = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            (e.name().to_string(), bytes)
        })
        .collect()
}

/// Writes `entries` as a `.eval` archive at `path` (deflated, as Inspect writes them).
fn write_eval(path: &Path, entries: &[(String, Vec<u8>)]) {
    write_eval_as(path, entries, zip::CompressionMethod::Deflated);
}

fn write_eval_as(path: &Path, entries: &[(String, Vec<u8>)], method: zip::CompressionMethod) {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    for (name, bytes) in entries {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(method)
            .large_file(bytes.len() > u32::MAX as usize);
        zip.start_file(name.as_str(), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

// Regression (issue 34): a sample entry holding a large array in a field calibench does not
// map was parsed whole into a JSON value (some 30 bytes per element): a 102 KB `.eval` took
// 2.8 GB and a 1 MB one aborted. Unmapped fields are now skipped as they are parsed; an entry
// larger than 4 MB is parsed as it inflates. The import is the same as without the field.
// (Peak memory is measured by benches/bench.sh, not here.)
#[test]
fn a_sample_with_a_huge_unmapped_field_imports_as_without_it() {
    let tmp = tempfile::tempdir().unwrap();
    let from = "inspect/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval";
    let entries = eval_entries(from);
    let huge: Vec<(String, Vec<u8>)> = entries
        .iter()
        .map(|(name, bytes)| {
            if name != "samples/3_epoch_1.json" {
                return (name.clone(), bytes.clone());
            }
            // `{"x": [0,0,…], ` + the sample's own fields: 3,000,000 zeros, 6 MB of text.
            let mut b = b"{\"x\": [".to_vec();
            b.extend(std::iter::repeat_n(&b"0,"[..], 3_000_000).flatten());
            b.extend_from_slice(b"0], ");
            b.extend_from_slice(&bytes[1..]);
            (name.clone(), b)
        })
        .collect();
    let log = tmp.path().join("huge.eval");
    write_eval(&log, &huge);
    let plain = import(
        "inspect",
        &[&fixture(from)],
        "a",
        &tmp.path().join("plain"),
        &[],
    );
    let big = import("inspect", &[&log], "a", &tmp.path().join("big"), &[]);
    assert_eq!(
        without_source(lines(&tmp.path().join("big"))),
        without_source(lines(&tmp.path().join("plain")))
    );
    assert_eq!(big["tally"]["unmapped"]["sample.x"], 1);
    assert_eq!(big["tally"]["samples"], plain["tally"]["samples"]);

    // Under a 400 MB address-space limit: a 20 MB entry of ten million array elements took
    // 320 MB as a JSON value on top of its own bytes, and aborted here (exit 134).
    let one = &entries
        .iter()
        .find(|(n, _)| n == "samples/1_epoch_1.json")
        .unwrap()
        .1;
    let mut b = b"{\"x\": [".to_vec();
    b.extend(std::iter::repeat_n(&b"0,"[..], 10_000_000).flatten());
    b.extend_from_slice(b"0], ");
    b.extend_from_slice(&one[1..]);
    let mut bounded = entries.clone();
    bounded.retain(|(n, _)| !n.starts_with("samples/") || n == "samples/1_epoch_1.json");
    for (n, bytes) in &mut bounded {
        if n == "samples/1_epoch_1.json" {
            *bytes = b.clone();
        }
    }
    let log = tmp.path().join("bounded.eval");
    write_eval_as(&log, &bounded, zip::CompressionMethod::Stored);
    let out = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 400000 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_calibench"))
        .args(["import", "inspect"])
        .arg(&log)
        .args(["--arm", "a", "--into"])
        .arg(tmp.path().join("bounded"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A score whose value is a list too long to be one item's scores is reported as not a
    // per-item score, never split into a million scorers.
    let long: Vec<(String, Vec<u8>)> = entries
        .iter()
        .map(|(name, bytes)| {
            if name != "samples/1_epoch_1.json" {
                return (name.clone(), bytes.clone());
            }
            let mut s: Value = serde_json::from_slice(bytes).unwrap();
            s["scores"]["list"] = json!({"value": vec![1; 5000]});
            (name.clone(), serde_json::to_vec(&s).unwrap())
        })
        .collect();
    let log = tmp.path().join("long.eval");
    write_eval(&log, &long);
    let out = import("inspect", &[&log], "a", &tmp.path().join("long"), &[]);
    assert_eq!(
        out["tally"]["not_per_item"]["list (a list of 5000 values)"],
        1
    );
}

// Regression (issue 34): an archive with two entries of one name (two samples/1_epoch_1.json,
// two header.json) lost the first without a word, as the zip reader keeps the last. Refused,
// naming the entry. An entry that is neither a sample nor part of an Inspect log is named in a
// note.
#[test]
fn an_eval_archive_with_a_repeated_entry_name_is_refused_and_stray_entries_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let entries = eval_entries("inspect/log_formats.eval");
    for repeated in ["samples/1_epoch_1.json", "header.json"] {
        // Written under a stand-in name of the same length, then renamed in the archive's bytes
        // (the zip writer refuses a repeated name).
        let stand_in = format!("{}X", &repeated[..repeated.len() - 1]);
        let mut twice = entries.clone();
        let (_, bytes) = entries.iter().find(|(n, _)| n == repeated).unwrap();
        twice.insert(0, (stand_in.clone(), bytes.clone()));
        let log = tmp.path().join("twice.eval");
        write_eval(&log, &twice);
        let raw = std::fs::read(&log).unwrap();
        let mut patched = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            if raw[i..].starts_with(stand_in.as_bytes()) {
                patched.extend_from_slice(repeated.as_bytes());
                i += stand_in.len();
            } else {
                patched.push(raw[i]);
                i += 1;
            }
        }
        std::fs::write(&log, patched).unwrap();
        let e = refused("inspect", &[&log], "x", &tmp.path().join("c"), &[]);
        assert!(
            e.contains(&format!(
                "twice.eval: the archive holds two entries named {repeated}"
            )),
            "{e}"
        );
    }
    assert!(!tmp.path().join("c").exists());

    let mut stray = entries.clone();
    stray.push(("Samples/2_epoch_1.json".into(), b"{}".to_vec()));
    let log = tmp.path().join("stray.eval");
    write_eval(&log, &stray);
    let out = import("inspect", &[&log], "x", &tmp.path().join("d"), &[]);
    let notes = out["tally"]["notes"].to_string();
    assert!(
        notes.contains("1 entry is not read, being neither samples/*.json nor a part of an Inspect log: Samples/2_epoch_1.json"),
        "{notes}"
    );
}

// Regression (issue 34): two test cases sharing a description but not their vars became one
// item with two repeats (item mean 0.5, and McNemar silently replaced by the sign test); a
// provider with a label could not be picked by its id; and a component score of `"1"`, null or
// `[1]` was written as "no score", keeping `correct` from `pass`.
#[test]
fn promptfoo_shared_descriptions_ids_and_unreadable_scores_are_told_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let log = edited(
        "promptfoo/sample-export.json",
        tmp.path(),
        "shared.json",
        |log| {
            for row in log["results"]["results"].as_array_mut().unwrap() {
                row["testCase"]["description"] = json!("riddle");
                if row["provider"]["id"] == "openai:gpt-5" {
                    row["provider"]["label"] = json!("big model");
                }
            }
            let first = &mut log["results"]["results"][0]["gradingResult"]["componentResults"];
            first[0]["score"] = json!("1");
            first[1]["score"] = Value::Null;
            first[2]["score"] = json!([1]);
        },
    );
    let out = import(
        "promptfoo",
        &[&log],
        "mini",
        tmp.path(),
        &["--pick", "openai:gpt-5-mini"],
    );
    let mini = arm_lines(tmp.path(), "mini");
    // Two riddles, one description: two items, each once, told apart by their vars.
    let items: std::collections::BTreeSet<&str> =
        mini.iter().map(|l| l["item"].as_str().unwrap()).collect();
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(
        items.iter().all(|i| i.starts_with("riddle [vars:")),
        "{items:?}"
    );
    assert!(mini.iter().all(|l| l["repeat"] == 1));
    assert!(out["tally"]["notes"]
        .to_string()
        .contains("1 description is shared by test cases with different vars (`riddle`)"));
    // Each unreadable score named, and no `correct` kept without its score.
    let missing: Vec<&str> = mini.iter().filter_map(|l| l["missing"].as_str()).collect();
    for why in [
        "score `1` is text, not a number",
        "score is null",
        "score is an array, not a number",
    ] {
        assert!(missing.contains(&why), "{missing:?}");
    }
    assert!(mini
        .iter()
        .filter(|l| l["score"].is_null())
        .all(|l| l.get("correct").is_none()));
    // The labelled provider is picked by its id as by its label, and gives the same lines.
    import(
        "promptfoo",
        &[&log],
        "by-id",
        tmp.path(),
        &["--pick", "openai:gpt-5"],
    );
    import(
        "promptfoo",
        &[&log],
        "by-label",
        tmp.path(),
        &["--pick", "big model"],
    );
    assert_eq!(
        without_source(arm_lines(tmp.path(), "by-id")),
        without_source(arm_lines(tmp.path(), "by-label"))
    );
    // The pairing across arms holds: both cells name the same items.
    let ids = |arm: &str| -> std::collections::BTreeSet<String> {
        arm_lines(tmp.path(), arm)
            .iter()
            .map(|l| l["item"].to_string())
            .collect()
    };
    assert_eq!(ids("mini"), ids("by-id"));
}

/// What a sample spent travels with its scores (docs/guides/importing-logs.md, "What a
/// sample spent"): promptfoo's `cost`, `latencyMs` and `response.tokenUsage`; Inspect's
/// `model_usage` tokens and `total_time`. A value that is not an amount is counted as not
/// imported, never a 0, and the line keeps the rest.
#[test]
fn what_a_sample_spent_is_imported_where_the_log_says() {
    let tmp = tempfile::tempdir().unwrap();
    let log = fixture("promptfoo/sample-export.json");
    import(
        "promptfoo",
        &[&log],
        "full",
        tmp.path(),
        &["--pick", "openai:gpt-5"],
    );
    let raw: Value = serde_json::from_slice(&std::fs::read(&log).unwrap()).unwrap();
    let rows: Vec<&Value> = raw["results"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["provider"]["id"] == "openai:gpt-5")
        .collect();
    let full = arm_lines(tmp.path(), "full");
    for line in &full {
        // The line's source names the row it came from.
        let i: usize = line["source"]
            .as_str()
            .unwrap()
            .rsplit('[')
            .next()
            .unwrap()
            .trim_end_matches(']')
            .parse()
            .unwrap();
        let row = &raw["results"]["results"][i];
        assert!(rows.contains(&row));
        assert_eq!(line["usage"]["cost_usd"], row["cost"], "{line}");
        assert_eq!(
            line["usage"]["input_tokens"],
            row["response"]["tokenUsage"]["prompt"]
        );
        assert_eq!(
            line["usage"]["output_tokens"],
            row["response"]["tokenUsage"]["completion"]
        );
        assert_eq!(line["elapsed_ms"].as_f64(), row["latencyMs"].as_f64());
    }

    // Inspect: tokens summed over the sample's models, seconds as whole milliseconds, no cost
    // (the log records none).
    let inspect = fixture("inspect/data_arc_sonnet.json");
    import("inspect", &[&inspect], "sonnet", tmp.path(), &[]);
    let raw: Value = serde_json::from_slice(&std::fs::read(&inspect).unwrap()).unwrap();
    let first = &raw["samples"][0];
    let usage = &first["model_usage"]["anthropic/claude-sonnet-4-0"];
    let line = arm_lines(tmp.path(), "sonnet")
        .into_iter()
        .find(|l| l["item"] == first["id"])
        .unwrap();
    assert_eq!(line["usage"]["input_tokens"], usage["input_tokens"]);
    assert_eq!(line["usage"]["output_tokens"], usage["output_tokens"]);
    assert!(line["usage"].get("cost_usd").is_none(), "{line}");
    let ms = first["total_time"].as_f64().unwrap() * 1000.0;
    assert_eq!(line["elapsed_ms"].as_f64(), Some(ms.round()));

    // A cost that is no amount is not imported, and said so; the tokens still are.
    let bad = edited(
        "promptfoo/sample-export.json",
        tmp.path(),
        "bad-cost.json",
        |log| {
            for r in log["results"]["results"].as_array_mut().unwrap() {
                r["cost"] = json!("free");
            }
        },
    );
    let out = import(
        "promptfoo",
        &[&bad],
        "bad",
        tmp.path(),
        &["--pick", "openai:gpt-5"],
    );
    let said = out.to_string();
    assert!(
        said.contains("row.cost (not an amount of 0 or more)"),
        "{said}"
    );
    for line in arm_lines(tmp.path(), "bad") {
        assert!(line["usage"].get("cost_usd").is_none(), "{line}");
        assert!(line["usage"]["input_tokens"].is_u64(), "{line}");
    }
}
