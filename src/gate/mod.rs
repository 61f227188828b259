//! The CI regression gate (docs/guides/ci-gate.md): a policy of bounds on a run's `metrics.json`, checked
//! against the run and, for bounds on a change, against an accepted run. Pure: the caller reads
//! the files; here a missing or null metric fails its check ("not found"), never passes.

pub mod format;
pub mod policy;
pub mod schema;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

pub use policy::{Bound, Check, Policy};
use schema::MetricPath;

use crate::stats::calibration::round9;

/// The gate's answer for one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    pub passed: bool,
    pub failed: usize,
    pub checks: Vec<CheckResult>,
}

/// One check's answer. `value` and `accepted` are as they stand in the two `metrics.json`
/// files (null when not found).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckResult {
    pub name: String,
    pub metric: String,
    pub value: Value,
    /// The accepted run's value, for checks that bound a change.
    pub accepted: Option<Value>,
    pub baseline: Option<PathBuf>,
    pub bounds: Vec<BoundResult>,
    pub passed: bool,
    /// Why it passed or failed, in one line: value, bound and comparison.
    pub message: String,
    /// What kind of failure it is, when it failed (JUnit's failure `type`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failed>,
}

/// What kind of failure a check's is: JUnit's failure `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Failed {
    /// A figure absent from the run or the accepted run, or no accepted run: nothing was
    /// compared.
    NotFound,
    /// The decision is not one the policy requires, or carries a caveat it does not allow.
    Decision,
    /// The judges are not trusted.
    Untrustworthy,
    /// A bound was broken.
    Bound,
}

impl Failed {
    /// Its name, as JUnit's failure `type` says it.
    pub fn name(self) -> &'static str {
        match self {
            Failed::NotFound => "not_found",
            Failed::Decision => "decision",
            Failed::Untrustworthy => "untrustworthy",
            Failed::Bound => "bound",
        }
    }
}

impl CheckResult {
    /// A check of a whole verdict (`trust.trustworthy`, `decision.verdict`): no bounds, no
    /// accepted run.
    fn verdict(name: &str, metric: &str, value: Value, passed: bool, message: String) -> Self {
        CheckResult {
            name: name.to_string(),
            metric: metric.to_string(),
            value,
            accepted: None,
            baseline: None,
            bounds: Vec::new(),
            passed,
            message,
            failure: None,
        }
    }

    /// Records `kind` as its failure, if it failed.
    fn failing(mut self, kind: Failed) -> Self {
        self.failure = (!self.passed).then_some(kind);
        self
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoundResult {
    pub kind: &'static str,
    pub limit: f64,
    /// What the limit was compared with: the value, or its change from the accepted run.
    pub compared: Option<f64>,
    pub passed: bool,
}

/// Checks `run` (a parsed `metrics.json`) against `policy`. `accepted` holds each baseline
/// the policy names, parsed; a baseline missing from it counts as not found.
pub fn evaluate(policy: &Policy, run: &Value, accepted: &BTreeMap<PathBuf, Value>) -> Outcome {
    let mut checks = Vec::new();
    if policy.require_trustworthy {
        checks.push(trust_check(run));
    }
    if !policy.require_decision.is_empty() {
        checks.push(decision_check(
            run,
            &policy.require_decision,
            &policy.allow_caveats,
        ));
    }
    for check in &policy.checks {
        let base = check.baseline.as_ref().map(|b| (b, accepted.get(b)));
        checks.push(bound_check(check, run, base));
    }
    let failed = checks.iter().filter(|c| !c.passed).count();
    Outcome {
        passed: failed == 0,
        failed,
        checks,
    }
}

fn trust_check(run: &Value) -> CheckResult {
    let trust = &run["trust"];
    let value = trust["trustworthy"].clone();
    let (passed, message) = match &value {
        Value::Bool(true) => (
            true,
            match trust["inter_rater_reliability"].as_f64() {
                Some(a) => format!(
                    "the judges agree: α {} ≥ floor {}",
                    num(a),
                    trust["thresholds"]["irr_floor"]
                        .as_f64()
                        .map_or("?".into(), num)
                ),
                None => "the judges agree".to_string(),
            },
        ),
        Value::Bool(false) => {
            let reasons: Vec<&str> = trust["trust_reasons"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            (
                false,
                if reasons.is_empty() {
                    "the judges are not trustworthy".to_string()
                } else {
                    format!("the judges are not trustworthy: {}", reasons.join("; "))
                },
            )
        }
        _ => (
            false,
            "not found: the run has no trust verdict (it had no judge verdicts); set \
             require_trustworthy = false for runs without judges"
                .to_string(),
        ),
    };
    let kind = if value.is_boolean() {
        Failed::Untrustworthy
    } else {
        Failed::NotFound
    };
    CheckResult::verdict("trustworthy", "trust.trustworthy", value, passed, message).failing(kind)
}

/// Whether the run's decision is one the policy accepts, naming the verdict and its reasons;
/// a decision with a caveat the policy does not allow fails, naming each such caveat by its
/// kind.
fn decision_check(
    run: &Value,
    accepted: &[crate::decision::Verdict],
    allowed: &policy::Allowed,
) -> CheckResult {
    use crate::corpus::ledger::{stored, with_caveats};
    let decision = &run["decision"];
    let value = decision["verdict"].clone();
    let wanted: Vec<&str> = accepted.iter().map(|v| v.name()).collect();
    let reasons: Vec<&str> = decision["reasons"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let caveats = match stored::read_list(&decision["caveats"]) {
        Ok(c) => c,
        // A caveat the gate cannot read is not one it may let pass.
        Err(e) => {
            return CheckResult::verdict(
                "decision",
                "decision.verdict",
                value,
                false,
                format!("`decision.caveats` cannot be read: {e}"),
            )
            .failing(Failed::Decision)
        }
    };
    let refused: Vec<String> = caveats
        .iter()
        .filter(|c| !allowed.allows(c))
        .map(|c| format!("{} ({}): {}", c.title(), c.kind(), c.sentence()))
        .collect();
    let (passed, message) = match value.as_str() {
        Some(v) if wanted.contains(&v) && !refused.is_empty() => (
            false,
            format!(
                "the decision is {v}{}, and {} of a kind the policy does not allow (allow_caveats = true, or a list of kinds): {}",
                with_caveats(caveats.len()),
                crate::text::count(refused.len() as u64, "caveat is", "caveats are"),
                refused.join("; ")
            ),
        ),
        Some(v) => (
            wanted.contains(&v),
            format!(
                "the decision is {v}{} ({} required): {}",
                with_caveats(caveats.len()),
                wanted.join(" or "),
                reasons.join("; ")
            ),
        ),
        None => {
            return CheckResult::verdict(
                "decision",
                "decision.verdict",
                value,
                false,
                "not found: the run has no decision (its experiment names no [decision] metric and no primary metric with a better direction)".to_string(),
            )
            .failing(Failed::NotFound)
        }
    };
    CheckResult::verdict("decision", "decision.verdict", value, passed, message)
        .failing(Failed::Decision)
}

/// What a path found in one `metrics.json`.
enum Found {
    Number(f64),
    /// Why not: absent where, or null.
    Absent(String),
    /// The accepted run is not there yet (a first run, not yet accepted): why, and how to
    /// store one.
    NoAccepted(String),
}

fn lookup(doc: &Value, path: &MetricPath) -> (Value, Found) {
    let mut node = doc;
    for (i, part) in path.parts.iter().enumerate() {
        let next = match node {
            Value::Object(map) => map.get(part),
            Value::Array(items) => part.parse::<usize>().ok().and_then(|k| items.get(k)),
            _ => None,
        };
        node = match next {
            Some(n) => n,
            None => {
                let why = if i == 0 {
                    format!("the run has no `{part}` section")
                } else {
                    let at = MetricPath {
                        parts: path.parts[..i].to_vec(),
                    };
                    match node {
                        Value::Array(items) => {
                            format!("`{at}` has {} entries, so no `{part}`", items.len())
                        }
                        _ => format!("`{at}` has no `{part}`"),
                    }
                };
                return (Value::Null, Found::Absent(why));
            }
        };
    }
    match node {
        Value::Number(n) => match n.as_f64() {
            Some(x) => (node.clone(), Found::Number(x)),
            None => (node.clone(), Found::Absent(format!("`{path}` is {n}"))),
        },
        Value::Null => (Value::Null, Found::Absent(null_reason(doc, path))),
        other => (
            other.clone(),
            Found::Absent(format!("`{path}` is {other}, not a number")),
        ),
    }
}

/// Why a metric is null: withheld with the judges' distrust, or undefined.
fn null_reason(doc: &Value, path: &MetricPath) -> String {
    let text = path.to_string();
    let reasons = |v: &Value| -> Option<String> {
        let r: Vec<&str> = v.as_array()?.iter().filter_map(Value::as_str).collect();
        (!r.is_empty()).then(|| r.join("; "))
    };
    // The lift's section of metrics.json, under the lift's name.
    let lift = &doc[crate::replay::LIFT.name];
    if path.parts.first().map(String::as_str) == Some(crate::replay::LIFT.name)
        && lift["withheld"] == true
    {
        if let Some(r) = reasons(&lift["reasons"]) {
            return format!("`{text}` is null because the lift is withheld; {r}");
        }
    }
    let withheld = &doc["review"]["withheld"];
    if path.parts.first().map(String::as_str) == Some("review")
        && path.parts.last().is_some_and(|last| {
            withheld["metrics"]
                .as_array()
                .is_some_and(|m| m.iter().any(|x| x.as_str() == Some(last)))
        })
    {
        if let Some(r) = reasons(&withheld["reasons"]) {
            return format!("`{text}` is null because it is withheld; {r}");
        }
    }
    format!("`{text}` is null in this run (undefined for its data)")
}

fn bound_check(
    check: &Check,
    run: &Value,
    baseline: Option<(&PathBuf, Option<&Value>)>,
) -> CheckResult {
    let (value, found) = lookup(run, &check.metric);
    let (accepted, accepted_found) = match baseline {
        Some((_, Some(doc))) => {
            let (v, f) = lookup(doc, &check.metric);
            (Some(v), Some(f))
        }
        Some((path, None)) => (
            Some(Value::Null),
            Some(Found::NoAccepted(format!(
                "no accepted run yet ({} is not there): `calibench accept RUN_DIR --to {}` stores one",
                path.display(),
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(std::path::Path::new("."))
                    .display()
            ))),
        ),
        None => (None, None),
    };
    let mut results = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut passes = Vec::new();
    // Whether a figure was missing, so that nothing was compared.
    let mut absent = false;
    for &bound in &check.bounds {
        let limit = bound.limit();
        let key = bound.key();
        // The figure the limit is held against, or why there is none.
        let compared: Result<f64, String> = match (&found, bound, &accepted_found) {
            (Found::Absent(why) | Found::NoAccepted(why), _, _) => Err(format!("not found: {why}")),
            (Found::Number(v), Bound::Min(_) | Bound::Max(_), _) => Ok(*v),
            (Found::Number(v), _, Some(Found::Number(a))) => {
                let change = round9(v - a);
                Ok(match bound {
                    Bound::MaxIncrease(_) => change.max(0.0),
                    _ => (-change).max(0.0),
                })
            }
            (Found::Number(_), _, Some(Found::Absent(why))) => {
                Err(format!("not found in the accepted run: {why}"))
            }
            (Found::Number(_), _, Some(Found::NoAccepted(why))) => Err(why.clone()),
            (Found::Number(_), _, None) => Err("no accepted run to compare with".to_string()),
        };
        let passed = match &compared {
            Ok(x) => {
                let x = *x;
                let ok = match bound {
                    Bound::Min(_) => round9(x) >= round9(limit),
                    _ => round9(x) <= round9(limit),
                };
                let sign = match (bound, ok) {
                    (Bound::Min(_), true) => "≥",
                    (Bound::Min(_), false) => "<",
                    (_, true) => "≤",
                    (_, false) => ">",
                };
                let phrase = match bound {
                    Bound::Min(_) | Bound::Max(_) => format!("{sign} {key} {}", num(limit)),
                    Bound::MaxIncrease(_) => {
                        format!("rise {} {sign} {key} {}", num(x), num(limit))
                    }
                    Bound::MaxDecrease(_) => {
                        format!("fall {} {sign} {key} {}", num(x), num(limit))
                    }
                };
                if ok {
                    passes.push(phrase);
                } else {
                    failures.push(phrase);
                }
                ok
            }
            Err(why) => {
                absent = true;
                if !failures.contains(why) {
                    failures.push(why.clone());
                }
                false
            }
        };
        results.push(BoundResult {
            kind: key,
            limit,
            compared: compared.ok(),
            passed,
        });
    }
    let passed = failures.is_empty();
    let phrases = if passed { passes } else { failures };
    let message = match &found {
        Found::Absent(_) | Found::NoAccepted(_) => phrases.join("; "),
        Found::Number(v) => {
            let mut head = num(*v);
            if let Some(Found::Number(a)) = &accepted_found {
                let change = round9(v - a);
                let sign = if change > 0.0 { "+" } else { "" };
                head += &format!(" (accepted {}, change {sign}{})", num(*a), num(change));
            }
            format!("{head}: {}", phrases.join(", "))
        }
    };
    CheckResult {
        name: check.name.clone(),
        metric: check.metric.to_string(),
        value,
        accepted,
        baseline: check.baseline.clone(),
        bounds: results,
        passed,
        message,
        failure: (!passed).then_some(if absent {
            Failed::NotFound
        } else {
            Failed::Bound
        }),
    }
}

/// A number as the gate prints it: exact enough to see why a bound failed, no float noise.
pub fn num(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if x.abs() < 1e-4 || x.abs() >= 1e9 {
        return format!("{x:.3e}");
    }
    let s = format!("{:.6}", round9(x));
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(text: &str) -> Policy {
        policy::parse(std::path::Path::new("gate.toml"), text).unwrap()
    }

    fn run() -> Value {
        json!({
            "experiment": "x", "run_id": "x-1",
            "queries": {"arms": {"treatment": {
                "recovery_gate_rate": 0.06,
                "calibration": {"ece": 0.15},
                "final_accuracy": null
            }}},
            "agreement": {"judges": {"alpha": 0.8686}},
            "trust": {"trustworthy": true, "trust_reasons": [], "inter_rater_reliability": 0.8686,
                      "thresholds": {"irr_floor": 0.2}},
            "lift": {"value": 0.154, "ci": [0.083, 0.225], "withheld": false, "reasons": []}
        })
    }

    fn accepted() -> BTreeMap<PathBuf, Value> {
        BTreeMap::from([(
            PathBuf::from("acc.json"),
            json!({"queries": {"arms": {"treatment": {"calibration": {"ece": 0.12}}}}}),
        )])
    }

    #[test]
    fn every_bound_kind_passes_and_fails_on_its_side() {
        let p = policy(
            "baseline = \"acc.json\"\n\
             [[check]]\nmetric = \"queries.arms.treatment.recovery_gate_rate\"\nmax = 0.2\n\
             [[check]]\nmetric = \"agreement.judges.alpha\"\nmin = 0.9\n\
             [[check]]\nmetric = \"queries.arms.treatment.calibration.ece\"\nmax_increase = 0.02\n\
             [[check]]\nmetric = \"queries.arms.treatment.calibration.ece\"\nmax_decrease = 0.0\n\
             [[check]]\nmetric = \"lift.ci.0\"\nmin = 0\nmax = 0.1\n",
        );
        let out = evaluate(&p, &run(), &accepted());
        let verdicts: Vec<(bool, &str)> = out
            .checks
            .iter()
            .map(|c| (c.passed, c.message.as_str()))
            .collect();
        assert_eq!(
            verdicts,
            [
                (true, "the judges agree: α 0.8686 ≥ floor 0.2"),
                (true, "0.06: ≤ max 0.2"),
                (false, "0.8686: < min 0.9"),
                (
                    false,
                    "0.15 (accepted 0.12, change +0.03): rise 0.03 > max_increase 0.02"
                ),
                (
                    true,
                    "0.15 (accepted 0.12, change +0.03): fall 0 ≤ max_decrease 0"
                ),
                (true, "0.083: ≥ min 0, ≤ max 0.1"),
            ]
        );
        assert!(!out.passed);
        assert_eq!(out.failed, 2);
        assert_eq!(out.checks[3].accepted, Some(json!(0.12)));
        assert_eq!(out.checks[3].bounds[0].compared, Some(0.03));
    }

    #[test]
    fn bounds_are_met_at_equality_despite_float_noise() {
        // 0.55 + 0.10 is 0.6500000000000001 in binary; it still meets max 0.65.
        let p = policy("require_trustworthy = false\n[[check]]\nmetric = \"lift.value\"\nmax = 0.65\nmin = 0.65\n");
        let mut r = run();
        r["lift"]["value"] = json!(0.55 + 0.10);
        assert!(evaluate(&p, &r, &BTreeMap::new()).passed);
    }

    #[test]
    fn missing_or_null_metrics_fail_as_not_found() {
        let p = policy(
            "require_trustworthy = false\n\
             [[check]]\nmetric = \"queries.arms.treatment.final_accuracy\"\nmin = 0.5\n\
             [[check]]\nmetric = \"review.arms.treatment.precision\"\nmin = 0.5\n\
             [[check]]\nmetric = \"queries.arms.baseline.recovery_gate_rate\"\nmax = 1\n\
             [[check]]\nmetric = \"review.arms.treatment.per_target.7.merged\"\nmax = 1\n",
        );
        let out = evaluate(&p, &run(), &BTreeMap::new());
        let messages: Vec<&str> = out.checks.iter().map(|c| c.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "not found: `queries.arms.treatment.final_accuracy` is null in this run (undefined for its data)",
                "not found: the run has no `review` section",
                "not found: `queries.arms` has no `baseline`",
                "not found: the run has no `review` section",
            ]
        );
        assert!(out.checks.iter().all(|c| !c.passed && c.value.is_null()));
    }

    #[test]
    fn withheld_figures_say_why() {
        let p =
            policy("require_trustworthy = false\n[[check]]\nmetric = \"lift.value\"\nmin = 0\n");
        let mut r = run();
        r["lift"] =
            json!({"value": null, "withheld": true, "reasons": ["judges' α 0.12 is below 0.2"]});
        let out = evaluate(&p, &r, &BTreeMap::new());
        assert_eq!(
            out.checks[0].message,
            "not found: `lift.value` is null because the lift is withheld; judges' α 0.12 is below 0.2"
        );
    }

    #[test]
    fn relative_bounds_need_the_metric_in_the_accepted_run() {
        let p = policy(
            "require_trustworthy = false\nbaseline = \"acc.json\"\n\
             [[check]]\nmetric = \"agreement.judges.alpha\"\nmax_decrease = 0.05\n",
        );
        let out = evaluate(&p, &run(), &accepted());
        assert_eq!(
            out.checks[0].message,
            "0.8686: not found in the accepted run: the run has no `agreement` section"
        );
        let out = evaluate(&p, &run(), &BTreeMap::new());
        assert_eq!(
            out.checks[0].message,
            "0.8686: no accepted run yet (acc.json is not there): `calibench accept RUN_DIR --to .` stores one"
        );
        // JUnit types it as not found: nothing was compared, no bound was broken.
        let about = format::About {
            experiment: "x",
            run_id: "r",
            policy: "p",
            report: None,
            decision: None,
            caveats: &[],
        };
        let xml = format::junit(&about, &out).unwrap();
        assert!(xml.contains("type=\"not_found\""), "{xml}");
    }

    #[test]
    fn untrustworthy_or_judgeless_runs_fail_the_trust_check() {
        let p = policy("");
        let mut r = run();
        r["trust"]["trustworthy"] = json!(false);
        r["trust"]["trust_reasons"] = json!(["judges' α 0.12 is below the floor 0.2"]);
        let out = evaluate(&p, &r, &BTreeMap::new());
        assert!(!out.passed);
        assert_eq!(
            out.checks[0].message,
            "the judges are not trustworthy: judges' α 0.12 is below the floor 0.2"
        );
        r.as_object_mut().unwrap().remove("trust");
        let out = evaluate(&p, &r, &BTreeMap::new());
        assert!(!out.passed);
        assert!(out.checks[0]
            .message
            .starts_with("not found: the run has no trust verdict"));
    }

    #[test]
    fn numbers_print_without_float_noise() {
        assert_eq!(num(0.20000000000000004), "0.2");
        assert_eq!(num(0.868592402564241), "0.868592");
        assert_eq!(num(-0.03), "-0.03");
        assert_eq!(num(5.0), "5");
        assert_eq!(num(1.7763568394002527e-13), "1.776e-13");
        assert_eq!(num(0.0), "0");
    }
}
