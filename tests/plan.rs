//! Multiplicity and planning (docs/guides/ab-rubric-change.md) end to end: `p_adjusted` and `mde` in every delta of
//! the examples' runs, the `pairs` table they rest on, `calibench plan` against the closed form
//! and its refusals, and the new figures as gate paths.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{calibench, json_of, run_into, stdout_of};
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// doc-review-ab (review deltas, primary metrics, trusted judges) and capacity-50 (query
/// deltas), run once for every test here.
fn runs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        for name in ["doc-review-ab", "capacity-50"] {
            run_into(
                dir.join("runs"),
                root().join("corpora").join(name).join("experiment.toml"),
            )
            .args(["--run-id", name, "--bootstrap", "200", "--no-plots", "-q"])
            .assert()
            .success();
        }
        dir
    })
}

fn run_dir(name: &str) -> PathBuf {
    runs().join("runs").join(name)
}

fn metrics(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(run_dir(name).join("metrics.json")).unwrap()).unwrap()
}

/// The differences the pairs table holds for one metric.
fn differences(run: &Path, metric: &str) -> Vec<f64> {
    let mut reader = csv::Reader::from_path(run.join("pairs.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |n: &str| headers.iter().position(|h| h == n).unwrap();
    let (m, b, t, d) = (
        col("metric"),
        col("baseline"),
        col("treatment"),
        col("difference"),
    );
    reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| &r[m] == metric)
        .map(|r| {
            let (b, t, d): (f64, f64, f64) = (
                r[b].parse().unwrap(),
                r[t].parse().unwrap(),
                r[d].parse().unwrap(),
            );
            assert!(
                (t - b - d).abs() < 1e-12,
                "difference is treatment − baseline"
            );
            d
        })
        .collect()
}

fn sd(xs: &[f64]) -> f64 {
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// z₀.₉₇₅ + z₀.₈, from the published quantiles.
const Z_SUM: f64 = 1.959_963_984_540_054 + 0.841_621_233_572_914_3;

/// Student's t quantile with `tail` above it on `df` degrees of freedom, by bisection on the
/// CDF (statrs's CDF alone, not calibench's quantile function).
fn t_upper(tail: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let t = StudentsT::new(0.0, 1.0, df).unwrap();
    let (mut lo, mut hi) = (-100.0f64, 100.0f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if 1.0 - t.cdf(mid) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The paired t-test's two-sided p of the differences, from statrs's CDF.
fn t_p(d: &[f64]) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let t = mean / (sd(d) / n.sqrt());
    2.0 * StudentsT::new(0.0, 1.0, n - 1.0).unwrap().cdf(-t.abs())
}

/// The paired t-test's count: the smallest n with (t₁₋α/₂,ₙ₋₁ + t_power,ₙ₋₁)·sd/√n ≤ |effect|.
fn t_needed(sd: f64, effect: f64, alpha: f64, power: f64) -> u64 {
    (2..)
        .find(|&n: &u64| {
            let df = (n - 1) as f64;
            (t_upper(alpha / 2.0, df) + t_upper(1.0 - power, df)) * sd / (n as f64).sqrt()
                <= effect.abs()
        })
        .unwrap()
}

/// Holm by hand, in the simplest form: sort, multiply by (m − j + 1), carry the maximum, cap.
fn holm(ps: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..ps.len()).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
    let mut out = vec![0.0; ps.len()];
    let mut carried: f64 = 0.0;
    for (j, &i) in order.iter().enumerate() {
        carried = carried.max((ps.len() - j) as f64 * ps[i]);
        out[i] = carried.min(1.0);
    }
    out
}

#[test]
fn every_delta_carries_its_adjusted_p_and_mde() {
    let m = metrics("doc-review-ab");
    let primary: Vec<&str> = m["primary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(primary, ["distinct_values", "precision"]);
    let delta = m["review"]["delta"].as_object().unwrap();
    // The two families: the primary metrics, and the table's other deltas (those with a
    // p-value: a delta of fewer than 2 pairs has none).
    for in_primary in [true, false] {
        let family: Vec<(&String, &Value)> = delta
            .iter()
            .filter(|(k, _)| primary.contains(&k.as_str()) == in_primary)
            .filter(|(_, d)| !d["p_value"].is_null())
            .collect();
        let ps: Vec<f64> = family
            .iter()
            .map(|(_, d)| d["p_value"].as_f64().unwrap())
            .collect();
        for ((name, d), want) in family.iter().zip(holm(&ps)) {
            let got = d["p_adjusted"].as_f64().unwrap();
            assert!((got - want).abs() < 1e-12, "{name}: {got} ≠ {want}");
        }
    }
    // Each p-value is the paired t-test's of its differences, and each MDE (t₀.₉₇₅,₃ +
    // t₀.₈,₃)·sd/√4, both worked from the pairs table with statrs's CDF; a count that is 0 or 1
    // on every target in both arms is McNemar's, whose MDE keeps the z quantiles.
    let mut t_tested = 0;
    for (name, d) in delta {
        let diffs = differences(&run_dir("doc-review-ab"), name);
        assert_eq!(diffs.len() as u64, d["pairs"].as_u64().unwrap(), "{name}");
        let n = diffs.len() as f64;
        let constant = diffs.iter().all(|&x| x == diffs[0]);
        let mcnemar = d["test"] == "mcnemar";
        let k = if mcnemar {
            Z_SUM
        } else {
            assert_eq!(d["test"], "paired-t", "{name}");
            t_upper(0.025, n - 1.0) + t_upper(0.2, n - 1.0)
        };
        let want = if constant {
            0.0
        } else {
            k * sd(&diffs) / n.sqrt()
        };
        let got = d["mde"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9, "{name}: mde {got} ≠ {want}");
        if !constant && !mcnemar {
            let p = d["p_value"].as_f64().unwrap();
            assert!(
                (p - t_p(&diffs)).abs() < 1e-9,
                "{name}: p {p} ≠ {}",
                t_p(&diffs)
            );
            t_tested += 1;
        }
    }
    assert!(t_tested >= 10, "{t_tested}");
    // Query deltas: the decision's metrics are one Holm family (capacity-50 decides on three),
    // the table's others another; ece has no mde.
    let q = metrics("capacity-50");
    let qd = q["queries"]["delta"].as_object().unwrap();
    let decided = q["decision"]["metrics"].as_object().unwrap();
    assert_eq!(decided.len(), 3);
    for in_decision in [true, false] {
        let family: Vec<(&String, &Value)> = qd
            .iter()
            .filter(|(k, _)| decided.contains_key(*k) == in_decision)
            .collect();
        let ps: Vec<f64> = family
            .iter()
            .map(|(_, d)| d["p_value"].as_f64().unwrap())
            .collect();
        for ((name, d), want) in family.iter().zip(holm(&ps)) {
            assert!(
                (d["p_adjusted"].as_f64().unwrap() - want).abs() < 1e-12,
                "{name}"
            );
            // The decision judges an improvement by the table's own p; its `p_adjusted` is
            // of the regression tests (against a guard's margin, where it has one).
            if in_decision {
                assert_eq!(decided[*name]["p_value"], d["p_value"], "{name}");
            }
        }
    }
    assert!(qd["ece"]["mde"].is_null());
    assert_eq!(qd["ece"]["test"], "bootstrap");
    let brier = differences(&run_dir("capacity-50"), "brier");
    let n = brier.len() as f64;
    let want = (t_upper(0.025, n - 1.0) + t_upper(0.2, n - 1.0)) * sd(&brier) / n.sqrt();
    assert!((qd["brier"]["mde"].as_f64().unwrap() - want).abs() < 1e-9);
    // A 0/1 outcome per query in each arm: McNemar's test, whose MDE keeps the z quantiles.
    assert_eq!(qd["unnecessary_recovery_rate"]["test"], "mcnemar");
    let urr = differences(&run_dir("capacity-50"), "unnecessary_recovery_rate");
    let want = Z_SUM * sd(&urr) / (urr.len() as f64).sqrt();
    assert!((qd["unnecessary_recovery_rate"]["mde"].as_f64().unwrap() - want).abs() < 1e-9);
    assert!(q.get("primary").is_none(), "no primary metrics: no key");
}

#[test]
fn plan_gives_the_closed_form_and_checks_it_by_simulation() {
    for (run, metric, units) in [
        ("doc-review-ab", "precision", "targets"),
        ("capacity-50", "brier", "queries"),
    ] {
        let dir = run_dir(run);
        let out = json_of(
            calibench()
                .args(["plan", "--json", "--metric", metric])
                .arg(&dir),
        );
        let diffs = differences(&dir, metric);
        let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
        let s = sd(&diffs);
        // A decision metric's level is the plain 0.05 its claim is judged at, as any other's.
        let alpha = 0.05;
        let needed = t_needed(s, mean, alpha, 0.8);
        assert_eq!(out["metric"], metric);
        assert_eq!(out["test"], "paired-t");
        assert_eq!(out["needed"].as_u64(), Some(needed), "{run} {metric}");
        assert_eq!(out["power_needed"].as_u64(), Some(needed), "{run} {metric}");
        assert_eq!(out["binds"], "power", "{run} {metric}");
        assert_eq!(out["pairs"].as_u64(), Some(diffs.len() as u64));
        assert!((out["sd"].as_f64().unwrap() - s).abs() < 1e-12);
        assert!((out["effect"].as_f64().unwrap() - mean).abs() < 1e-12);
        assert_eq!(out["power"].as_f64(), Some(0.8));
        assert_eq!(out["alpha"].as_f64(), Some(alpha));
        assert_eq!(out["units"], units);
        let sim = out["simulated_power"].as_f64().unwrap();
        assert!((0.7..=1.0).contains(&sim), "{run} {metric}: {sim}");
        // Seeded by the run: the same answer again, whatever the threads.
        let again = json_of(
            calibench()
                .args(["plan", "--json", "--threads", "1", "--metric", metric])
                .arg(&dir),
        );
        assert_eq!(again, out);
    }
    // A given effect, power and level: the closed form with those quantiles.
    let dir = run_dir("doc-review-ab");
    let out = json_of(
        calibench()
            .args(["plan", "--json", "--metric", "promotion_rate"])
            .args(["--effect", "-0.05", "--power", "0.9", "--alpha", "0.01"])
            .arg(&dir),
    );
    let s = sd(&differences(&dir, "promotion_rate"));
    let needed = t_needed(s, 0.05, 0.01, 0.9);
    assert_eq!(out["needed"].as_u64(), Some(needed));
    assert_eq!(out["effect"].as_f64(), Some(-0.05));
    assert_eq!(out["alpha_why"], "--alpha");
    // The human form says the same.
    let human = stdout_of(
        calibench()
            .args(["plan", "--metric", "precision"])
            .arg(&dir),
    );
    assert!(
        human.contains("targets for 80% power by the paired t-test"),
        "{human}"
    );
    assert!(
        human.contains(
            "level: two-sided 0.05 (the level the decision judges improving and holding at"
        ),
        "{human}"
    );
    assert!(human.contains("simulated studies"), "{human}");
}

/// Runs `plan` expecting exit 2; returns stderr.
fn refused(args: &[&str], run: &Path) -> String {
    let out = calibench()
        .arg("plan")
        .args(args)
        .arg(run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty());
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn plan_refuses_what_it_cannot_plan_for() {
    let review = run_dir("doc-review-ab");
    let queries = run_dir("capacity-50");
    // Unknown: the valid names are listed, and a near one suggested.
    let e = refused(&["--metric", "precison"], &review);
    assert!(
        e.contains("`precison` is not a compared metric; did you mean `precision`?"),
        "{e}"
    );
    assert!(e.contains("the run's deltas: actionable,"), "{e}");
    // A compared metric this run does not have.
    let e = refused(&["--metric", "brier"], &review);
    assert!(e.contains("`brier` has no delta in this run"), "{e}");
    // Not a mean of per-unit differences.
    let e = refused(&["--metric", "ece"], &queries);
    assert!(e.contains("not a mean of per-unit differences"), "{e}");
    // An effect of 0, given or observed.
    let e = refused(&["--metric", "brier", "--effect", "0"], &queries);
    assert!(
        e.contains("`--effect`") && e.contains("must not be 0"),
        "{e}"
    );
    // Differences that do not vary: capacity-50's final accuracy is the same in both arms.
    let e = refused(&["--metric", "final_accuracy"], &queries);
    assert!(e.contains("do not vary"), "{e}");
    // Out-of-range power and level, and a non-finite effect.
    refused(&["--metric", "brier", "--power", "1"], &queries);
    refused(&["--metric", "brier", "--alpha", "0"], &queries);
    // Regression (hostile-4/15): --alpha 1e-300 panicked in the t quantile, 1e-150 ran for
    // minutes. Past 1e-12 a level (or power) is refused; 1e-12 itself is sized at once.
    for (flag, value) in [
        ("--alpha", "1e-300"),
        ("--alpha", "1e-13"),
        ("--alpha", "5e-324"),
        ("--power", "0.9999999999999"),
    ] {
        let e = refused(&["--metric", "brier", flag, value], &queries);
        assert!(e.contains("from 1e-12 to 1 − 1e-12"), "{e}");
    }
    let started = std::time::Instant::now();
    let out = calibench()
        .args([
            "plan",
            "--metric",
            "brier",
            "--alpha",
            "1e-12",
            "--power",
            "0.999999999999",
        ])
        .arg(&queries)
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(2),
        "{out:?}"
    );
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    refused(&["--metric", "brier", "--effect", "NaN"], &queries);
}

#[test]
fn plan_refuses_a_run_without_a_sound_pairs_table() {
    let copy = tempfile::tempdir().unwrap();
    let dir = copy.path().join("doc-review-ab");
    common::copy_dir(&run_dir("doc-review-ab"), &dir);
    let pairs = std::fs::read_to_string(dir.join("pairs.csv")).unwrap();
    // A row lost: the count no longer matches metrics.json.
    let lost: String = pairs
        .lines()
        .filter(|l| !l.contains(",review,precision,deploy-runbook"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("pairs.csv"), lost).unwrap();
    let e = refused(&["--metric", "precision"], &dir);
    assert!(
        e.contains("holds 3 rows for `precision` but metrics.json counts 4 pairs"),
        "{e}"
    );
    // A value that is not a number: its line and column.
    let broken = pairs.replacen(
        ",review,findings_raw,cli-printing-press,,48.0",
        ",review,findings_raw,cli-printing-press,,forty-eight",
        1,
    );
    std::fs::write(dir.join("pairs.csv"), broken).unwrap();
    let e = refused(&["--metric", "precision"], &dir);
    assert!(
        e.contains("pairs.csv:2") && e.contains("column `baseline`"),
        "{e}"
    );
    // No table at all (a run from before it existed).
    std::fs::remove_file(dir.join("pairs.csv")).unwrap();
    let e = refused(&["--metric", "precision"], &dir);
    assert!(
        e.contains("pairs.csv: does not exist") && e.contains("re-run"),
        "{e}"
    );
}

#[test]
fn a_withheld_metric_has_no_pairs_and_cannot_be_planned() {
    // The judges held to an agreement they cannot reach: precision is withheld.
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("doc-review-ab");
    common::copy_dir(&root().join("corpora/doc-review-ab"), &corpus);
    let exp = std::fs::read_to_string(corpus.join("experiment.toml"))
        .unwrap()
        .replace("irr_floor = 0.2", "irr_floor = 0.99");
    std::fs::write(corpus.join("experiment.toml"), exp).unwrap();
    run_into(dir.path().join("runs"), corpus.join("experiment.toml"))
        .args(["--run-id", "held", "--bootstrap", "50", "--no-plots", "-q"])
        .assert()
        .success();
    let run = dir.path().join("runs/held");
    let m: Value =
        serde_json::from_slice(&std::fs::read(run.join("metrics.json")).unwrap()).unwrap();
    assert!(m["review"]["delta"].get("precision").is_none());
    assert!(differences(&run, "precision").is_empty());
    // distinct_values is the primary family alone now: its adjusted p is its p.
    let d = &m["review"]["delta"]["distinct_values"];
    assert_eq!(d["p_adjusted"], d["p_value"]);
    let e = refused(&["--metric", "precision"], &run);
    assert!(e.contains("withheld"), "{e}");
    // The headline says it.
    let report = std::fs::read_to_string(dir.path().join("reports/held/report.md")).unwrap();
    assert!(report.contains("precision withheld"), "{report}");
}

#[test]
fn the_new_figures_are_gate_paths() {
    let list = stdout_of(calibench().args(["gate", "--list-metrics"]));
    for path in [
        "review.delta.<review-delta>.p_adjusted",
        "review.delta.<review-delta>.mde",
        "queries.delta.<query-delta>.p_adjusted",
        "queries.delta.<query-delta>.mde",
    ] {
        assert!(
            list.lines().any(|l| l == path),
            "{path} missing from\n{list}"
        );
    }
    // A policy on them: precision's MDE bounded, distinct_values' adjusted p required.
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("gate.toml");
    std::fs::write(
        &policy,
        "[[check]]\nmetric = \"review.delta.precision.mde\"\nmax = 0.05\n\n\
         [[check]]\nmetric = \"review.delta.distinct_values.p_adjusted\"\nmax = 0.5\n",
    )
    .unwrap();
    let out = calibench()
        .args(["gate", "--json", "--policy"])
        .arg(&policy)
        .arg(run_dir("doc-review-ab"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "precision's MDE is above 0.05");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let passed = |metric: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["metric"] == metric)
            .unwrap_or_else(|| panic!("no check on {metric}: {report}"))["passed"]
            .clone()
    };
    assert_eq!(passed("review.delta.precision.mde"), false);
    assert_eq!(passed("review.delta.distinct_values.p_adjusted"), true);
}

#[test]
fn the_report_says_whether_the_ab_is_big_enough() {
    let report = std::fs::read_to_string(runs().join("reports/doc-review-ab/report.md")).unwrap();
    assert!(report.contains("| p | p adj. | MDE |"), "{report}");
    assert!(report.contains("Is this A/B big enough?"), "{report}");
    assert!(report.contains("calibench plan runs/doc-review-ab --metric precision"));
    // The headline leads with the primary metrics and their adjusted p.
    let headline = report
        .lines()
        .find(|l| l.starts_with("**Headline:**"))
        .unwrap();
    assert!(
        headline.contains("distinct values 11.67 → 3.50 (p adj. 0.036)"),
        "{headline}"
    );
    assert!(headline.contains("precision "), "{headline}");
    // 50 queries: the floor is far below 0.05 and is not mentioned.
    let q = std::fs::read_to_string(runs().join("reports/capacity-50/report.md")).unwrap();
    assert!(q.contains("Is this A/B big enough?"), "{q}");
    assert!(!q.contains("cannot reach"), "{q}");
}
