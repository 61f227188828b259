//! `run --sequential` end to end (docs/guides/stop-when-you-know.md): the sequential example
//! decides before its last query and says so on the decision line; what cannot be bounded is
//! refused before anything is written, naming the key that would make it bounded.

mod common;

use std::path::Path;

use common::{calibench, outcome};
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    outcome(
        calibench()
            .current_dir(root())
            .arg("run")
            .args(args)
            .arg("--runs-dir")
            .arg(dir.join("runs"))
            .arg("--reports-dir")
            .arg(dir.join("reports"))
            .args(["--no-plots", "--bootstrap", "200"]),
    )
}

#[test]
fn the_sequential_example_decides_before_its_last_query() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(
        dir.path(),
        &["corpora/capacity-400", "--run-id", "seq", "--json"],
    );
    assert_eq!(code, 0, "{err}");
    let m: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let s = &m["sequential"];
    assert_eq!(s["verdict"], "better");
    assert_eq!(s["units"], 400);
    assert_eq!(s["alpha"], 0.025);
    let stopped = s["stopped_at"].as_u64().unwrap();
    assert!(stopped < 400, "{stopped}");
    assert_eq!(s["saved"].as_u64().unwrap(), 400 - stopped);
    // Better is reached when the last metric is decided favourably.
    let decided: Vec<u64> = s["metrics"]
        .as_object()
        .unwrap()
        .values()
        .map(|m| m["decided_at"].as_u64().unwrap())
        .collect();
    assert_eq!(decided.iter().max(), Some(&stopped));
    for (name, metric) in s["metrics"].as_object().unwrap() {
        let (t, lo, hi) = (
            metric["t"].as_array().unwrap(),
            metric["lower"].as_array().unwrap(),
            metric["upper"].as_array().unwrap(),
        );
        assert_eq!((t.len(), lo.len()), (400, 400), "{name}");
        assert_eq!(hi.len(), 400);
        // Nested: the running intersection never widens.
        for w in lo.windows(2) {
            assert!(w[1].as_f64() >= w[0].as_f64(), "{name}");
        }
    }
    assert_eq!(
        s["metrics"]["unnecessary_recovery_rate"]["outcome"],
        "improved"
    );
    assert_eq!(s["metrics"]["final_accuracy"]["outcome"], "held");
    // The text says it where the decision is.
    let (_, text, _) = run(dir.path(), &["corpora/capacity-400", "--run-id", "seq2"]);
    assert!(
        text.contains(&format!(
            "    - sequential: better — decided after {stopped} of 400 queries"
        )),
        "{text}"
    );
    let md = std::fs::read_to_string(dir.path().join("reports/seq2/report.md")).unwrap();
    assert!(md.contains("## Sequential decision"), "{md}");
}

#[test]
fn what_no_sequence_can_bound_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    // ECE has no per-unit difference.
    let (code, _, err) = run(dir.path(), &["corpora/capacity-50", "--sequential"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("experiment.toml:30: `decision`: `ece` is a figure of the whole set of units"),
        "{err}"
    );
    // A count has no known range: the refusal names the key that declares one.
    let (code, _, err) = run(dir.path(), &["corpora/doc-review-live", "--sequential"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`distinct_values` has no range")
            && err.contains("[sequential] range = { distinct_values = [LOW, HIGH] }"),
        "{err}"
    );
    // A percentage margin is a ratio, which no sequence here bounds.
    let (code, _, err) = run(
        dir.path(),
        &[
            "corpora/doc-review-live",
            "--sequential",
            "--set",
            "sequential.range.distinct_values=[0,30]",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`cost_usd`'s margin or smallest effect is a percentage"),
        "{err}"
    );
    // A declared range a unit's value leaves is bad input, not a clipped value.
    let (code, _, err) = run(
        dir.path(),
        &[
            "corpora/doc-review-live",
            "--sequential",
            "--set",
            "sequential.range.distinct_values=[0,5]",
            // Its cost guard, a percentage, is given in dollars for the sequence, with a
            // range: a cost has no bound of its own.
            "--set",
            "decision.cost_usd={ want = \"no-increase\", margin = 0.01 }",
            "--set",
            "sequential.range.cost_usd=[0,1]",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("outside its range [0, 5]"), "{err}");
    assert!(err.contains("sequential.range.distinct_values"), "{err}");
    // A range for a metric the decision does not name.
    let (code, _, err) = run(
        dir.path(),
        &[
            "corpora/doc-review-live",
            "--sequential",
            "--set",
            "sequential.range.fyi=[0,5]",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`fyi` is not a metric of `[decision]`"),
        "{err}"
    );
    let written = |d: &str| {
        std::fs::read_dir(dir.path().join(d))
            .map(|r| r.filter_map(Result::ok).count())
            .unwrap_or(0)
    };
    assert_eq!((written("runs"), written("reports")), (0, 0));
}

#[test]
fn a_figure_run_withholds_is_not_decided_on_sequentially() {
    let dir = tempfile::tempdir().unwrap();
    // code-review-ab's judges are not trusted, so its precision is withheld.
    let (code, out, err) = run(
        dir.path(),
        &[
            "corpora/code-review-ab",
            "--sequential",
            "--set",
            "sequential.range.distinct_values=[0,30]",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let m: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(m["sequential"]["verdict"], "withheld");
    assert_eq!(
        m["sequential"]["withheld"],
        serde_json::json!(["precision"])
    );
    assert!(m["sequential"]["stopped_at"].is_null());
}

// Regression (hostile-4/10): a collect.json whose sequential.order repeated ids counted 180
// units for a 90-query corpus; an order missing ids was blamed on the experiment file.
#[test]
fn a_recorded_order_names_each_unit_once_and_every_unit() {
    let dir = tempfile::tempdir().unwrap();
    let live = root().join("corpora/capacity-live");
    let record: Value =
        serde_json::from_slice(&std::fs::read(live.join("collect.json")).unwrap()).unwrap();
    let order: Vec<Value> = record["sequential"]["order"].as_array().unwrap().clone();
    let with_order = |name: &str, order: Vec<Value>| {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(live.join("queries.jsonl"), folder.join("queries.jsonl")).unwrap();
        let mut r = record.clone();
        r["sequential"]["order"] = Value::Array(order);
        std::fs::write(folder.join("collect.json"), r.to_string()).unwrap();
        folder
    };
    let twice: Vec<Value> = order.iter().chain(order.iter()).cloned().collect();
    let dup = with_order("dup", twice);
    let (code, _, err) = run(
        dir.path(),
        &[
            "corpora/capacity-live",
            "--corpus",
            dup.to_str().unwrap(),
            "--sequential",
        ],
    );
    assert_eq!(code, 2, "{err}");
    let first = order[0].as_str().unwrap();
    assert!(
        err.contains("dup/collect.json: `sequential.order`:")
            && err.contains(&format!(
                "`{first}` appears twice (positions 1 and {})",
                order.len() + 1
            )),
        "{err}"
    );
    let missing = with_order("missing", order[5..].to_vec());
    let (code, _, err) = run(
        dir.path(),
        &[
            "corpora/capacity-live",
            "--corpus",
            missing.to_str().unwrap(),
            "--sequential",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("missing/collect.json: field `sequential.order`: arm label `recorded` holds 25 of 30 targets of the plan"),
        "{err}"
    );
}

/// A sequential collection's look reads only what its batch appended (docs/guides/
/// stop-when-you-know.md, "What a look costs"), yet decides exactly as a look over the whole
/// run: a run directory grown a few targets at a time, looked at after each, gives every look
/// the bounds, decision points and verdict that reading the whole run gives — for agent
/// queries and for document reviews (several reviewers and repeats per target).
#[test]
fn a_look_over_its_batch_decides_as_a_look_over_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    // The capacity-live queries, in the order the collection took them.
    let queries = dir.path().join("queries");
    common::copy_dir(&root().join("corpora/capacity-live"), &queries);
    let record: Value =
        serde_json::from_slice(&std::fs::read(queries.join("collect.json")).unwrap()).unwrap();
    let order: Vec<String> = record["sequential"]["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    // It stopped after 30 of them.
    grow_and_look(&queries, "queries.jsonl", "query_id", &order[..30], 4);
    // doc-review-live's reviews, decided on what each document's review says alone: the judges
    // (whose trust is a figure of every item) are left out.
    let docs = dir.path().join("docs");
    common::copy_dir(&root().join("corpora/doc-review-live"), &docs);
    std::fs::remove_file(docs.join("verdicts.jsonl")).unwrap();
    let exp = std::fs::read_to_string(docs.join("experiment.toml")).unwrap();
    let exp = exp
        .replace("precision = \"no-decrease\"\n", "")
        .replace(
            "cost_usd = { want = \"no-increase\", margin = \"50%\" }",
            "cost_usd = { want = \"no-increase\", margin = 0.01 }\n[sequential]\nrange = { distinct_values = [0, 30], cost_usd = [0, 1] }",
        );
    let cut = exp.find("# Three judges").unwrap();
    let end = exp.find("[trust]").unwrap();
    let exp = format!("{}{}", &exp[..cut], &exp[end..]);
    std::fs::write(docs.join("experiment.toml"), exp).unwrap();
    let mut targets: Vec<String> = std::fs::read_dir(docs.join("documents"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    targets.sort();
    grow_and_look(&docs, "reviews.jsonl", "target", &targets, 1);
}

/// Moves `file` of the collection `root` aside and appends its lines back `batch` units of
/// `order` at a time (a line's unit in its field `unit`), comparing after each batch the look
/// over the batch with the look over the whole run.
fn grow_and_look(root: &Path, file: &str, unit: &str, order: &[String], batch: usize) {
    use calibench::pipeline::sequential::Looks;
    use std::io::Write;
    let lines: Vec<(String, String)> = std::fs::read_to_string(root.join(file))
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v[unit].as_str().unwrap().to_string(), l.to_string())
        })
        .collect();
    let path = root.join(file);
    std::fs::write(&path, "").unwrap();
    let arms = vec![];
    let stages = [path.clone()];
    let mut part = Looks::new(root, root, &stages, arms.clone(), false).unwrap();
    let mut whole = Looks::new(root, root, &stages, arms, true).unwrap();
    let (mut looks, mut from) = (0, 0);
    while from < order.len() {
        let n = (from + batch).min(order.len());
        let mut out = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        for id in &order[from..n] {
            for (_, line) in lines.iter().filter(|(u, _)| u == id) {
                writeln!(out, "{line}").unwrap();
            }
        }
        drop(out);
        (looks, from) = (looks + 1, n);
        let (a, b) = (
            part.look(order[..n].to_vec()),
            whole.look(order[..n].to_vec()),
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a, b, "{file}, look {looks} after {n} units");
        assert_eq!(a.units, n, "{file}");
    }
    assert!(looks >= 3, "{looks}");
    // Every look read its batch alone.
    assert_eq!((part.whole_reads(), whole.whole_reads()), (0, looks));
}
