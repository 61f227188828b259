//! Live collection, the pure part that checks what a call returned (docs/guides/live-collection.md): a command's stdout
//! becomes one corpus line only if it is a return `run` would read without a single malformed
//! finding. Anything else — no output, not JSON, a wrong identity, a value off its scale, an
//! unknown enum — is a reason, and the call is recorded `status: failed` with it, never as an
//! empty review.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::plan::Call;
use super::runner::Protocol;
use crate::corpus::collection::Kind;
use crate::corpus::{queries, reviews};
use crate::policy::{Mode, Scale};

/// What a return is checked against.
#[derive(Clone, Debug)]
pub struct Expect {
    pub kind: Kind,
    pub mode: Mode,
    /// The scales of the arms reading the call's recorded label: a confidence is valid when it
    /// is valid on one of them.
    pub scales: Vec<Scale>,
}

/// The reviewers' (or the agent's) contract: each call's stdout is a return checked against
/// the arms that read its label.
pub struct Returns {
    pub kind: Kind,
    /// Every call of the plan, by position.
    pub calls: Vec<Call>,
    /// Per recorded arm label: what its returns are checked against.
    pub expect: HashMap<String, Expect>,
}

impl Protocol for Returns {
    fn accept(&self, index: usize, stdout: &[u8]) -> Result<Map<String, Value>, String> {
        let call = &self.calls[index];
        match self.expect.get(&call.arm) {
            Some(expect) => accept(stdout, call, expect),
            None => Err(format!("arm {:?} has nothing to check against", call.arm)),
        }
    }

    fn failed(&self, index: usize, reason: &str) -> Map<String, Value> {
        failed(&self.calls[index], self.kind, reason)
    }

    fn timed(&self) -> bool {
        true
    }
}

/// The line to record for a call whose command exited 0 printing `stdout`, or why the return
/// cannot be recorded as it stands.
pub fn accept(stdout: &[u8], call: &Call, expect: &Expect) -> Result<Map<String, Value>, String> {
    let text = std::str::from_utf8(stdout).map_err(|_| "stdout is not UTF-8 text".to_string())?;
    let text = text.trim();
    if text.is_empty() {
        return Err("printed nothing on stdout; expected one JSON object".into());
    }
    let value: Value = crate::corpus::strict_json(text).map_err(|e| {
        format!(
            "stdout is not one JSON object ({e}); it begins {:?}",
            excerpt(text, 60)
        )
    })?;
    let Value::Object(mut object) = value else {
        return Err(format!(
            "stdout is JSON but {}, not an object",
            reviews::kind(&value)
        ));
    };
    if let Some(Value::String(s)) = object.get("status") {
        if s == "failed" {
            let why = ["reason", "error"]
                .iter()
                .find_map(|k| object.get(*k).and_then(Value::as_str))
                .map_or(String::new(), |r| format!(": {r}"));
            return Err(format!("the command reported status failed{why}"));
        }
    }
    match expect.kind {
        Kind::Reviews => {
            identify(&mut object, "target", &call.target.name)?;
            identify(&mut object, "arm", &call.arm)?;
            identify(&mut object, "reviewer", &call.reviewer)?;
            identify_run(&mut object, call.run)?;
            qualify_ids(&mut object, call);
            check_review(&object, expect)?;
        }
        Kind::Queries => {
            identify(&mut object, "query_id", &call.target.name)?;
            identify(&mut object, "arm", &call.arm)?;
            identify_run(&mut object, call.run)?;
            let line = serde_json::to_vec(&object).map_err(|e| e.to_string())?;
            let (_, problems) = queries::parse("stdout", &line);
            if let Some(p) = problems.first() {
                return Err(strip_place(&p.to_string()));
            }
        }
    }
    Ok(object)
}

/// The line recorded for a call that failed: its identity, `status: failed` and the reason.
/// A query trace also carries the reason as its `error` and no tools, which `run` counts as an
/// errored query.
pub fn failed(call: &Call, kind: Kind, reason: &str) -> Map<String, Value> {
    let mut line = Map::new();
    let s = |v: &str| Value::String(v.to_string());
    match kind {
        Kind::Reviews => {
            line.insert("target".into(), s(&call.target.name));
            line.insert("reviewer".into(), s(&call.reviewer));
        }
        Kind::Queries => {
            line.insert("query_id".into(), s(&call.target.name));
            line.insert("error".into(), s(reason));
            line.insert("tools".into(), Value::Array(Vec::new()));
        }
    }
    line.insert("arm".into(), s(&call.arm));
    line.insert("run".into(), Value::from(call.run));
    line.insert("status".into(), s("failed"));
    line.insert("reason".into(), s(reason));
    line
}

/// Sets an identity field from the call; a return that names another value is refused, since
/// it would be recorded under the wrong target, arm or reviewer.
fn identify(object: &mut Map<String, Value>, field: &str, want: &str) -> Result<(), String> {
    match object.get(field) {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == want => {}
        Some(other) => {
            return Err(format!(
                "the return names {field} {other}, but the call was for {want:?}"
            ))
        }
    }
    object.insert(field.into(), Value::String(want.into()));
    Ok(())
}

fn identify_run(object: &mut Map<String, Value>, run: u32) -> Result<(), String> {
    match object.get("run") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_u64() == Some(u64::from(run)) => {}
        Some(other) => {
            return Err(format!(
                "the return names run {other}, but the call was run {run}"
            ))
        }
    }
    object.insert("run".into(), Value::from(run));
    Ok(())
}

/// Finding ids must be unique in the corpus, but a reviewer numbers its own findings: each id
/// is qualified with the call, `<arm>/<target>/<reviewer>/r<run>/<id>`. A finding without an id
/// gets `#<n>`, its position from 1, so that validators and judges can name every finding.
fn qualify_ids(object: &mut Map<String, Value>, call: &Call) {
    let Some(Value::Array(findings)) = object.get_mut("findings") else {
        return;
    };
    let prefix = format!(
        "{}/{}/{}/r{}/",
        call.arm, call.target.name, call.reviewer, call.run
    );
    for (i, f) in findings.iter_mut().enumerate() {
        let Value::Object(f) = f else { continue };
        match f.get_mut("id") {
            Some(Value::String(id)) => *id = format!("{prefix}{id}"),
            None | Some(Value::Null) => {
                f.insert("id".into(), Value::String(format!("{prefix}#{}", i + 1)));
            }
            Some(_) => {}
        }
    }
}

fn check_review(object: &Map<String, Value>, expect: &Expect) -> Result<(), String> {
    let line = serde_json::to_vec(object).map_err(|e| e.to_string())?;
    let (records, problems) = reviews::parse("stdout", &line);
    if let Some(p) = problems.first() {
        return Err(strip_place(&p.to_string()));
    }
    let Some(record) = records.first() else {
        return Err("stdout holds no return".into());
    };
    for (i, raw) in record.findings.iter().enumerate() {
        if let Some(Some(_)) = record.duplicate_id_of.get(i) {
            return Err(format!(
                "findings[{i}].id: {} is used by an earlier finding of the same return",
                raw.get("id").unwrap_or(&Value::Null)
            ));
        }
        let mut first_error = None;
        for &scale in &expect.scales {
            match reviews::validate(&raw.into(), expect.mode, scale) {
                Ok(_) => {
                    first_error = None;
                    break;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some((field, reason)) = first_error {
            return Err(format!("findings[{i}].{field}: {reason}"));
        }
    }
    Ok(())
}

/// An input error about `stdout:1` without that place: the reason reads on its own.
fn strip_place(message: &str) -> String {
    message
        .strip_prefix("stdout:1: ")
        .or_else(|| message.strip_prefix("stdout: "))
        .unwrap_or(message)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

pub(crate) fn excerpt(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if text.chars().count() > chars {
        out.push('…');
    }
    out
}

/// A doc reviewer's call, for the tests of what arrives.
#[cfg(test)]
pub(crate) fn example_call() -> Call {
    Call {
        arm: "treatment".into(),
        target: crate::collect::plan::Target::from_path(std::path::Path::new("documents/plan.md")),
        reviewer: "feasibility".into(),
        run: 1,
        argv: vec!["r".into()],
        artifact: "artifacts/treatment/plan/feasibility-r1.json".into(),
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn doc(scale: Scale) -> Expect {
        Expect {
            kind: Kind::Reviews,
            mode: Mode::Doc,
            scales: vec![scale],
        }
    }

    const FINDING: &str = r#"{"id": "f1", "title": "Rollback path is unspecified", "severity": "P1", "section": "Rollout", "finding_type": "omission", "autofix_class": "manual", "confidence": 75, "suggested_fix": null}"#;

    #[test]
    fn a_compact_return_is_recorded_under_the_call() {
        let out = format!("{{\"findings\": [{FINDING}], \"residual_risks\": [\"load\"]}}\n");
        let line = accept(out.as_bytes(), &example_call(), &doc(Scale::Anchor)).unwrap();
        assert_eq!(line["target"], "plan");
        assert_eq!(line["arm"], "treatment");
        assert_eq!(line["reviewer"], "feasibility");
        assert_eq!(line["run"], 1);
        assert_eq!(
            line["findings"][0]["id"],
            "treatment/plan/feasibility/r1/f1"
        );
        assert_eq!(line["residual_risks"][0], "load");
        // What is recorded reads back as a valid return.
        let bytes = serde_json::to_vec(&line).unwrap();
        let (records, problems) = reviews::parse("x", &bytes);
        assert!(problems.is_empty() && records[0].findings.len() == 1);
        // Zero findings is a valid return when the reviewer says so.
        let empty = accept(b"{\"findings\": []}", &example_call(), &doc(Scale::Anchor)).unwrap();
        assert_eq!(empty["findings"], Value::Array(vec![]));
    }

    #[test]
    fn values_are_checked_not_only_presence() {
        let cases = [
            ("", "printed nothing"),
            ("Sure! Here are my findings:", "not one JSON object"),
            ("[1, 2]", "an array, not an object"),
            ("{\"target\": \"plan\"}", "`findings`: is missing"),
            ("{\"findings\": {}}", "must be an array"),
            (
                "{\"reviewer\": \"coherence\", \"findings\": []}",
                "the return names reviewer \"coherence\", but the call was for \"feasibility\"",
            ),
            ("{\"run\": 0, \"findings\": []}", "names run 0"),
            (
                "{\"status\": \"failed\", \"reason\": \"rate limited\"}",
                "reported status failed: rate limited",
            ),
        ];
        for (out, needle) in cases {
            let e = accept(out.as_bytes(), &example_call(), &doc(Scale::Anchor)).unwrap_err();
            assert!(e.contains(needle), "{out:?}: {e}");
        }
        let with = |replace: (&str, &str)| {
            format!(
                "{{\"findings\": [{}]}}",
                FINDING.replace(replace.0, replace.1)
            )
        };
        for (swap, scale, needle) in [
            (("\"P1\"", "\"P9\""), Scale::Anchor, "findings[0].severity"),
            (
                ("\"omission\"", "\"typo\""),
                Scale::Anchor,
                "findings[0].finding_type",
            ),
            (("75", "0.75"), Scale::Anchor, "findings[0].confidence"),
            (("75", "62"), Scale::Anchor, "findings[0].confidence"),
            (("75", "1.5"), Scale::Float, "findings[0].confidence"),
            (("\"Rollout\"", "7"), Scale::Anchor, "findings[0].section"),
        ] {
            let e = accept(with(swap).as_bytes(), &example_call(), &doc(scale)).unwrap_err();
            assert!(e.contains(needle), "{swap:?}: {e}");
        }
        // Two ids alike within one return.
        let twice = format!("{{\"findings\": [{FINDING}, {FINDING}]}}");
        let e = accept(twice.as_bytes(), &example_call(), &doc(Scale::Anchor)).unwrap_err();
        assert!(e.contains("findings[1].id"), "{e}");
    }

    #[test]
    fn a_value_is_valid_on_any_scale_an_arm_reads_it_with() {
        let both = Expect {
            scales: vec![Scale::Float, Scale::Anchor],
            ..doc(Scale::Float)
        };
        let out = format!("{{\"findings\": [{FINDING}]}}");
        assert!(accept(out.as_bytes(), &example_call(), &both).is_ok());
        assert!(accept(out.as_bytes(), &example_call(), &doc(Scale::Float)).is_err());
    }

    #[test]
    fn query_traces_are_checked_and_failed_calls_are_errored_queries() {
        let q = Expect {
            kind: Kind::Queries,
            ..doc(Scale::Float)
        };
        let ok = accept(
            br#"{"query": "where is X?", "tools": [{"tool": "grep", "target": "X", "hits": 3}], "correct": true}"#,
            &example_call(),
            &q,
        )
        .unwrap();
        assert_eq!(
            (ok["query_id"].as_str(), ok["run"].as_u64()),
            (Some("plan"), Some(1))
        );
        let e = accept(
            br#"{"tools": [{"tool": "grep", "phase": "later"}]}"#,
            &example_call(),
            &q,
        )
        .unwrap_err();
        assert!(e.contains("phase"), "{e}");
        let line = failed(&example_call(), Kind::Queries, "timed out after 5s");
        let bytes = serde_json::to_vec(&line).unwrap();
        let (parsed, problems) = queries::parse("x", &bytes);
        assert!(problems.is_empty());
        assert_eq!(parsed[0].error.as_deref(), Some("timed out after 5s"));
        let line = failed(&example_call(), Kind::Reviews, "exited with status 3");
        let bytes = serde_json::to_vec(&line).unwrap();
        let (records, problems) = reviews::parse("x", &bytes);
        assert!(problems.is_empty());
        assert_eq!(records[0].status, reviews::Status::Failed);
        assert_eq!(line["reason"], "exited with status 3");
    }
}
