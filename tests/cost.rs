//! Cost and latency (docs/reference.md, "Cost and latency"): a reviewer that reports `usage`
//! is collected, and the run gives each target's cost and tokens, each arm's means, and the
//! paired delta with its relative change; a corpus with no usage has none of these figures;
//! usage written wrong refuses the line, naming it.

mod common;

use std::path::Path;

use common::{calibench, outcome, run_into, stdout_of};
use serde_json::Value;

/// A doc-mode folder collected by `calibench collect`: eight documents, two reviewers, a
/// reviewer script that reports what each call cost (the treatment's calls 30% dearer).
fn collected(dir: &Path) {
    std::fs::create_dir_all(dir.join("documents")).unwrap();
    for i in 0..8 {
        std::fs::write(
            dir.join(format!("documents/plan-{i}.md")),
            format!("# Plan {i}\n\n{}\n", "Ship it. ".repeat(10 + 3 * i)),
        )
        .unwrap();
    }
    let reviewer = r#"#!/bin/sh
# A fake reviewer that reports usage: tokens from the document's size, cost from the tokens,
# the treatment's prompt 30% longer.
set -eu
reviewer=$1 target=$2 arm=$3
size=$(wc -c | tr -d ' ')
scale=10; [ "$arm" = treatment ] && scale=13
input=$(( (size * 4 + 1500) * scale / 10 ))
output=$(( 300 + ${#reviewer} * 10 ))
cost=$(awk -v i="$input" -v o="$output" 'BEGIN { printf "%.6f", i * 0.000003 + o * 0.000015 }')
printf '{"findings": [{"id": "%s-%s", "title": "Rollback path is unspecified", "severity": "P1", "section": "Deploy", "finding_type": "omission", "autofix_class": "manual", "confidence": 0.7}], "usage": {"input_tokens": %d, "output_tokens": %d, "cost_usd": %s}}\n' "$reviewer" "$target" "$input" "$output" "$cost"
"#;
    script(&dir.join("review.sh"), reviewer);
    std::fs::write(
        dir.join("experiment.toml"),
        r#"name = "cost"
mode = "doc"
corpus = "."
bootstrap = 200

[arms.baseline]
[arms.baseline.review]
policy = "float-gates"
[arms.treatment]
[arms.treatment.review]
policy = "float-gates"

[decision]
distinct_values = "decrease"
cost_usd = { want = "no-increase", margin = 0.001 }

[collect]
command = ["./review.sh", "{reviewer}", "{target}", "{arm}"]
reviewers = ["coherence", "feasibility"]
targets = "documents/*.md"
"#,
    )
    .unwrap();
    collect_into(dir, "reviews.jsonl");
}

fn metrics(dir: &Path) -> (i32, String, String, Value) {
    let runs = dir.join("out/runs");
    let (code, out, err) = outcome(run_into(&runs, dir).args(["--no-plots"]));
    let m = std::fs::read_dir(&runs)
        .ok()
        .and_then(|mut d| d.next())
        .map(|e| e.unwrap().path().join("metrics.json"))
        .map_or(Value::Null, |p| {
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
        });
    (code, out, err, m)
}

#[test]
fn a_collected_reviewers_usage_becomes_cost_per_target_and_its_relative_change() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    collected(&c);
    let line: Value = serde_json::from_str(
        std::fs::read_to_string(c.join("reviews.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(line["usage"]["cost_usd"].is_number(), "{line}");
    let (code, out, err, m) = metrics(&c);
    assert_eq!(code, 0, "{err}");
    // The first screen shows what a target costs in each arm, and the change as a share.
    assert!(out.contains(" · cost per target $0.0"), "{out}");
    let arms = &m["review"]["arms"];
    // Per target: the sum over its two reviewers' calls.
    let row = &arms["baseline"]["per_target"][0];
    let first: Vec<Value> = std::fs::read_to_string(c.join("reviews.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l["arm"] == "baseline" && l["target"] == row["target"])
        .collect();
    let summed: f64 = first
        .iter()
        .map(|l| l["usage"]["cost_usd"].as_f64().unwrap())
        .sum();
    assert_eq!(first.len(), 2);
    assert!(
        (row["cost_usd"].as_f64().unwrap() - summed).abs() < 1e-12,
        "{row}"
    );
    assert!(row["input_tokens"].as_f64().unwrap() > 0.0);
    // The Coverage section's count: every call reported its usage.
    assert_eq!(
        m["inputs"]["usage"]["baseline"],
        serde_json::json!({"calls": 16, "reported": 16})
    );
    // collect timed each call: a target's wall time is its calls' summed, and the arm has
    // the 95th percentile over its targets too (eight cannot bound it: no interval).
    let timed: f64 = first
        .iter()
        .map(|l| l["elapsed_ms"].as_f64().unwrap())
        .sum();
    assert_eq!(row["latency_ms"].as_f64(), Some(timed), "{row}");
    let each: Vec<f64> = arms["baseline"]["per_target"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["latency_ms"].as_f64().unwrap())
        .collect();
    let p95 = arms["baseline"]["latency_p95_ms"].as_f64().unwrap();
    let (least, most) = each
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, m), &x| (l.min(x), m.max(x)));
    assert!(least <= p95 && p95 <= most, "{p95} of {each:?}");
    assert!(arms["baseline"].get("ci").is_none(), "{}", arms["baseline"]);
    let (b, t) = (
        arms["baseline"]["cost_usd_mean"].as_f64().unwrap(),
        arms["treatment"]["cost_usd_mean"].as_f64().unwrap(),
    );
    assert!(t > b);
    let d = &m["review"]["delta"]["cost_usd"];
    let rel = d["relative"]["value"].as_f64().unwrap();
    assert!((rel - (t / b - 1.0)).abs() < 1e-9, "{d}");
    let [lo, hi] = [0, 1].map(|i| d["relative"]["ci"][i].as_f64().unwrap());
    assert!(lo < rel && rel < hi, "{d}");
    // The guard: the treatment costs more than the margin allows.
    assert_eq!(m["decision"]["verdict"], "worse", "{}", m["decision"]);

    // The same corpus without usage has no cost figures at all.
    let text = std::fs::read_to_string(c.join("reviews.jsonl")).unwrap();
    let bare: String = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("usage");
            v.as_object_mut().unwrap().remove("elapsed_ms");
            format!("{v}\n")
        })
        .collect();
    let n = dir.path().join("n");
    common::copy_dir(&c, &n);
    std::fs::write(n.join("reviews.jsonl"), bare).unwrap();
    std::fs::remove_dir_all(n.join("out")).unwrap();
    let exp = std::fs::read_to_string(n.join("experiment.toml"))
        .unwrap()
        .replace(
            "cost_usd = { want = \"no-increase\", margin = 0.001 }",
            "actionable = \"no-decrease\"",
        );
    std::fs::write(n.join("experiment.toml"), exp).unwrap();
    std::fs::remove_file(n.join("collect.json")).unwrap();
    let (code, _, err, m) = metrics(&n);
    assert_eq!(code, 0, "{err}");
    let arm = &m["review"]["arms"]["baseline"];
    assert!(arm.get("cost_usd_mean").is_none(), "{arm}");
    assert!(arm.get("latency_p95_ms").is_none(), "{arm}");
    assert!(arm["per_target"][0].get("cost_usd").is_none());
    assert!(m["review"]["delta"].get("cost_usd").is_none());
    assert!(m["inputs"].get("usage").is_none(), "{}", m["inputs"]);
}

#[test]
fn usage_written_wrong_is_refused_naming_the_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    collected(&c);
    let text = std::fs::read_to_string(c.join("reviews.jsonl")).unwrap();
    std::fs::remove_file(c.join("collect.json")).unwrap();
    for (bad, says) in [
        (r#""cost_usd": "0.2""#, "cost_usd"),
        (r#""cost_usd": -0.5"#, "-0.5 is not 0 or more"),
        (r#""input_tokens": -3"#, "input_tokens"),
    ] {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut v: Value = serde_json::from_str(&lines[2]).unwrap();
        v["usage"] = serde_json::from_str(&format!("{{{bad}}}")).unwrap();
        lines[2] = v.to_string();
        std::fs::write(c.join("reviews.jsonl"), lines.join("\n") + "\n").unwrap();
        let (code, _, err) = outcome(run_into(c.join("out/runs"), &c).args(["--no-plots"]));
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("reviews.jsonl:3"), "{bad}: {err}");
        assert!(err.contains("usage") && err.contains(says), "{bad}: {err}");
    }
}

/// The collected folder with its guard line (the `[decision]` line after `distinct_values`)
/// written as `guard`.
fn guarded(dir: &Path, guard: &str) {
    let text = std::fs::read_to_string(dir.join("experiment.toml")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("distinct_values = "))
        .unwrap()
        + 1;
    lines[at] = guard;
    std::fs::write(dir.join("experiment.toml"), lines.join("\n") + "\n").unwrap();
    let _ = std::fs::remove_dir_all(dir.join("out"));
}

// A margin written as a percentage reads on the relative change's interval: the treatment's
// calls cost about a quarter more, beyond a 10% margin and within a 50% one.
#[test]
fn a_percentage_margin_reads_on_the_relative_change() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    collected(&c);
    guarded(&c, r#"cost_usd = { want = "no-increase", margin = "10%" }"#);
    let (code, out, err, m) = metrics(&c);
    assert_eq!(code, 0, "{err}");
    let d = &m["decision"]["metrics"]["cost_usd"];
    assert_eq!(d["outcome"], "regressed", "{d}");
    assert_eq!(d["relative"], true);
    assert_eq!(d["margin"], 0.1);
    let rel = &m["review"]["delta"]["cost_usd"]["relative"];
    assert!(rel["p_edge"].as_f64().unwrap() < 0.05, "{rel}");
    assert_eq!(d["margin_ci"], rel["ci"]);
    let line = d["outcome"].as_str().unwrap();
    let reason = cost_reason(&m);
    assert!(
        reason.contains("a loss beyond its margin of 10% (p adj.")
            && reason.contains("interval of the relative change (Fieller's) is +"),
        "{line}: {reason}"
    );
    assert!(out.contains("decision: worse"), "{out}");
    println!("{reason}");
    // The reference and the A/B guide quote this line as the run gives it.
    for doc in ["docs/reference.md", "docs/guides/ab-rubric-change.md"] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(doc)).unwrap();
        assert!(
            text.contains(&reason),
            "{doc} quotes another line than: {reason}"
        );
    }

    guarded(&c, r#"cost_usd = { want = "no-increase", margin = "50%" }"#);
    let (code, _, err, m) = metrics(&c);
    assert_eq!(code, 0, "{err}");
    let d = &m["decision"]["metrics"]["cost_usd"];
    assert_eq!(d["outcome"], "held", "{d}");
    let reason = cost_reason(&m);
    assert!(reason.contains("held within its margin of 50%"), "{reason}");
    println!("{reason}");
}

/// The decision's sentence on the cost guard.
fn cost_reason(m: &Value) -> String {
    m["decision"]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|r| r.starts_with("cost per target (USD)"))
        .unwrap()
        .to_string()
}

#[test]
fn a_percentage_is_refused_where_there_is_no_relative_change() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    collected(&c);
    for (guard, says) in [
        (
            r#"actionable = { want = "no-decrease", margin = "10%" }"#,
            "a percentage reads on a relative change, and `actionable` has none",
        ),
        (
            r#"cost_usd = { want = "no-increase", margin = "ten%" }"#,
            "must be a number or a percentage such as \"10%\", not \"ten%\"",
        ),
    ] {
        guarded(&c, guard);
        let (code, _, err) = outcome(run_into(c.join("out/runs"), &c).args(["--no-plots"]));
        assert_eq!(code, 2, "{guard}: {err}");
        assert!(
            err.contains(says) && err.contains("experiment.toml"),
            "{guard}: {err}"
        );
    }
}

/// A capacity-review folder collected by `calibench collect`: twenty queries answered by two
/// versions of a fake agent, each trace reporting what it spent (version 2 reads more: its
/// queries cost about 25% more). `collect` times every call.
fn collected_queries(dir: &Path) {
    std::fs::create_dir_all(dir.join("queries")).unwrap();
    for i in 0..20 {
        std::fs::write(
            dir.join(format!("queries/q{i:02}.json")),
            format!(
                r#"{{"query_id": "q{i:02}", "first_pass_correct": true, "correct": true, "tools": [{{"tool": "grep", "target": "Thing{i}", "hits": {hits}}}]}}"#,
                hits = 1 + i % 4
            ),
        )
        .unwrap();
    }
    let agent = r#"#!/bin/sh
# A fake agent: the trace its query file holds, with what answering it cost. Version 2 reads
# 25% more tokens.
set -eu
version=$1
trace=$(cat)
n=$(printf '%s' "$trace" | wc -c | tr -d ' ')
scale=100; [ "$version" = v2 ] && scale=125
input=$(( (n * 10 + 2000) * scale / 100 ))
cost=$(awk -v i="$input" 'BEGIN { printf "%.6f", i * 0.000003 + 0.0015 }')
printf '%s' "$trace" | sed "s/}\$/, \"usage\": {\"input_tokens\": $input, \"output_tokens\": 500, \"cost_usd\": $cost}}/"
"#;
    script(&dir.join("agent.sh"), agent);
    std::fs::write(
        dir.join("experiment.toml"),
        r#"name = "agent-cost"
corpus = "."
bootstrap = 200

[arms.baseline]
source = "v1"
[arms.baseline.confidence]
policy = "flat-mean"
[arms.treatment]
source = "v2"
[arms.treatment.confidence]
policy = "flat-mean"

[decision]
unnecessary_recovery_rate = "decrease"
query_cost_usd = { want = "no-increase", margin = "10%" }

[collect]
kind = "queries"
command = ["./agent.sh", "{arm}"]
targets = "queries/*.json"
"#,
    )
    .unwrap();
    collect_into(dir, "queries.jsonl");
}

/// `calibench collect` of the folder's experiment, its corpus file and `collect.json` copied
/// into the folder, as a user keeps a collection beside its experiment.
fn collect_into(dir: &Path, corpus: &str) {
    stdout_of(calibench().current_dir(dir).args([
        "collect",
        "experiment.toml",
        "--run-id",
        "c",
        "--runs-dir",
        "runs",
    ]));
    for f in [corpus, "collect.json"] {
        std::fs::copy(dir.join("runs/c").join(f), dir.join(f)).unwrap();
    }
}

/// An executable script at `path`.
fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_collected_agents_usage_becomes_cost_per_query_and_a_guard_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    collected_queries(&c);
    let lines = std::fs::read_to_string(c.join("queries.jsonl")).unwrap();
    for line in lines.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(v["usage"]["cost_usd"].is_number(), "{line}");
        // collect timed the call.
        assert!(v["elapsed_ms"].as_u64().is_some(), "{line}");
    }
    let (code, out, err, m) = metrics(&c);
    assert_eq!(code, 0, "{err}");
    let q = &m["queries"];
    let (b, t) = (&q["arms"]["baseline"], &q["arms"]["treatment"]);
    for arm in [b, t] {
        for key in [
            "query_cost_usd_mean",
            "query_input_tokens_mean",
            "query_output_tokens_mean",
            "query_latency_ms_mean",
            "query_latency_p95_ms",
        ] {
            assert!(arm[key].as_f64().is_some(), "{key}: {arm}");
        }
        // Twenty queries cannot bound a 95th percentile.
        assert!(arm["ci"].get("query_latency_p95_ms").is_none(), "{arm}");
    }
    let d = &q["delta"]["query_cost_usd"];
    let rel = &d["relative"];
    let ratio =
        t["query_cost_usd_mean"].as_f64().unwrap() / b["query_cost_usd_mean"].as_f64().unwrap();
    assert!(
        (rel["value"].as_f64().unwrap() - (ratio - 1.0)).abs() < 1e-9,
        "{d}"
    );
    assert!(rel["value"].as_f64().unwrap() > 0.15, "{d}");
    assert_eq!(d["pairs"], 20);
    assert_eq!(q["delta"]["query_output_tokens"]["delta"], 0.0);
    // Coverage counts the traces that said what they spent.
    assert_eq!(
        m["inputs"]["usage"]["treatment"],
        serde_json::json!({"calls": 20, "reported": 20})
    );
    let guard = &m["decision"]["metrics"]["query_cost_usd"];
    assert_eq!(guard["outcome"], "regressed", "{guard}");
    assert!(out.contains("decision: worse"), "{out}");
    assert!(
        out.contains("cost per query $0.0"),
        "the headline names the cost: {out}"
    );
}

/// An arm's 95th-percentile latency is a figure of the whole set: with 72 targets or more it
/// has a distribution-free interval, two of the targets' own latencies.
#[test]
fn the_p95_latency_has_its_interval_from_enough_targets() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    collected(&c);
    // The collected lines copied under 80 targets, each call taking 1000 + 10 × the target's
    // number ms (the treatment's calls 100 ms longer): a target's latency is its two calls'.
    let text = std::fs::read_to_string(c.join("reviews.jsonl")).unwrap();
    let mut lines = String::new();
    for i in 0..80 {
        for l in text.lines() {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v["target"] != "plan-0" {
                continue;
            }
            let extra = if v["arm"] == "treatment" { 100 } else { 0 };
            v["target"] = Value::from(format!("t{i:02}"));
            v["elapsed_ms"] = Value::from(1000 + 10 * i + extra);
            lines.push_str(&format!("{v}\n"));
        }
    }
    std::fs::write(c.join("reviews.jsonl"), lines).unwrap();
    std::fs::remove_file(c.join("collect.json")).unwrap();
    let (code, _, err, m) = metrics(&c);
    assert_eq!(code, 0, "{err}");
    let b = &m["review"]["arms"]["baseline"];
    // Targets' latencies 2000, 2020, ..., 3580. p95: h = 79 × 0.95 = 75.05 → 3500 + 0.05 × 20.
    assert!(
        (b["latency_p95_ms"].as_f64().unwrap() - 3501.0).abs() < 1e-9,
        "{b}"
    );
    // Binomial(80, 0.95): P(B ≤ 71) = 0.0184 and P(B ≤ 72) = 0.0466, so l = 72; P(B ≤ 78)
    // = 0.9139 and P(B ≤ 79) = 0.9835, so u = 80: the 72nd and 80th values.
    assert_eq!(
        b["ci"]["latency_p95_ms"],
        serde_json::json!([3420.0, 3580.0]),
        "{b}"
    );
    let t = &m["review"]["arms"]["treatment"];
    assert!(
        (t["latency_p95_ms"].as_f64().unwrap() - 3701.0).abs() < 1e-9,
        "{t}"
    );
    let d = &m["review"]["delta"]["latency_ms"];
    assert_eq!(d["delta"], 200.0);
    assert_eq!(d["pairs"], 80);
}

/// A target the arm skips makes no call, so it costs nothing: 0, not unknown. The live code
/// review's treatment skips closed and trivial changes; its reviewers report what each call
/// cost and how long their model took.
#[test]
fn a_skipped_target_costs_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = outcome(
        run_into(
            dir.path().join("runs"),
            root.join("corpora/code-review-live"),
        )
        .arg("--no-plots"),
    );
    assert_eq!(code, 0, "{err}");
    let run = std::fs::read_dir(dir.path().join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("metrics.json")).unwrap()).unwrap();
    let rows = m["review"]["arms"]["treatment"]["per_target"]
        .as_array()
        .unwrap();
    let (skipped, reviewed): (Vec<&Value>, Vec<&Value>) =
        rows.iter().partition(|r| !r["skipped"].is_null());
    assert!(!skipped.is_empty() && !reviewed.is_empty());
    for r in skipped {
        for part in ["cost_usd", "input_tokens", "output_tokens", "latency_ms"] {
            assert_eq!(r[part], 0.0, "{part}: {r}");
        }
    }
    for r in reviewed {
        assert!(r["cost_usd"].as_f64().unwrap() > 0.0, "{r}");
    }
}
