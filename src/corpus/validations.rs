//! Validator verdicts, `validations.jsonl` (docs/reference.md): the recorded Stage 5b calls,
//! one per line, each naming the finding it validated by its `id`.
//!
//! An `ok` line whose `validated` is not a boolean is read as the measured pipeline reads it: a
//! failed call, "malformed validator output". It is counted, and `validate` lists it, but it
//! does not refuse the run. A line naming a finding that no return holds is refused (by the
//! loader, which knows the returns).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::reviews::Status;
use super::{Lines, Text};
use crate::error::Problems;

/// One line of `validations.jsonl` as written. Its JSON Schema is derived from this type.
#[derive(Deserialize, JsonSchema)]
#[schemars(
    description = "One recorded validator call on one finding.",
    extend(
        "if" = {"required": ["status"], "properties": {"status": {"const": "failed"}}},
        "else" = {"required": ["validated"]}
    )
)]
pub struct RawValidation {
    /// The recorded arm of the return the finding came from.
    pub arm: Text,
    pub target: Text,
    /// Repeat index, 0 when absent.
    #[schemars(range(max = 4294967295u32))]
    pub run: Option<u64>,
    /// The `id` of a finding of that return.
    pub finding: Text,
    /// Model or prompt name.
    pub validator: Option<String>,
    /// `failed`: timeout, dispatch error or malformed output. `ok` when absent.
    pub status: Option<Status>,
    /// The verdict: is the finding real, introduced by this change, not handled elsewhere?
    #[schemars(with = "Option<bool>")]
    pub validated: Option<Value>,
    /// The validator's one sentence.
    pub reason: Option<String>,
}

/// What a validator call came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Validated,
    Rejected,
    /// The call failed, or its output was malformed.
    Failed,
}

/// One validator call, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Validation {
    pub line: u64,
    pub arm: String,
    pub target: String,
    pub run: u32,
    pub finding: String,
    pub validator: Option<String>,
    pub verdict: Verdict,
    /// The validator's reason; for a malformed output, "malformed validator output".
    pub reason: Option<String>,
}

impl Validation {
    /// The call the line records: one validator's verdict on one finding of a return.
    pub fn call(&self) -> super::call::Call {
        super::call::Call::Validation {
            arm: self.arm.as_str().into(),
            target: self.target.as_str().into(),
            run: self.run,
            finding: self.finding.as_str().into(),
        }
    }
}

/// The reason a call whose output was not a verdict is recorded with.
pub const MALFORMED: &str = "malformed validator output";

const LINES: Lines = Lines {
    holds: "each line holds one validator call: {\"arm\", \"target\", \"run\", \"finding\", \"validated\", \"reason\"}",
    hints: &[("finding", "the `id` of the finding the validator was asked about")],
};

/// Every validator call, with the record-level problems (refusals: a line that does not read,
/// or a call recorded twice) and the calls recorded as failed because their output was
/// malformed (listed, not refused).
pub struct Parsed {
    pub calls: Vec<Validation>,
    pub problems: Problems,
    pub malformed: Problems,
}

pub fn parse(name: &str, bytes: &[u8]) -> Parsed {
    let mut out = Parsed {
        calls: Vec::new(),
        problems: Problems::default(),
        malformed: Problems::default(),
    };
    let mut seen: std::collections::HashMap<super::call::Call, u64> =
        std::collections::HashMap::new();
    for raw in super::records::<RawValidation>(name, bytes, &LINES) {
        let (line, raw) = match raw {
            Ok(r) => r,
            Err(e) => {
                out.problems.push(e);
                continue;
            }
        };
        let run = match super::repeat_index(name, line, raw.run) {
            Ok(r) => r,
            Err(e) => {
                out.problems.push(e);
                continue;
            }
        };
        let (verdict, reason) = match (raw.status.unwrap_or(Status::Ok), &raw.validated) {
            (Status::Failed, _) => (Verdict::Failed, raw.reason),
            (Status::Ok, Some(Value::Bool(true))) => (Verdict::Validated, raw.reason),
            (Status::Ok, Some(Value::Bool(false))) => (Verdict::Rejected, raw.reason),
            (Status::Ok, other) => {
                let written = match other {
                    None | Some(Value::Null) => "no `validated`".to_string(),
                    Some(v) => format!("`validated` is {}, not true or false", super::kind(v)),
                };
                out.malformed.push(super::field_error(
                    name,
                    line,
                    "validated",
                    format!("{written}: recorded as a failed call ({MALFORMED})"),
                ));
                (Verdict::Failed, Some(MALFORMED.to_string()))
            }
        };
        let call = Validation {
            line,
            arm: raw.arm.0,
            target: raw.target.0,
            run,
            finding: raw.finding.0,
            validator: raw.validator,
            verdict,
            reason,
        };
        // A finding validated twice would count its verdict twice.
        if let Some(first) = seen.insert(call.call(), line) {
            out.problems.push(
                super::field_error(
                    name,
                    line,
                    "finding",
                    format!(
                        "finding `{}` of arm `{}`, target `{}`, run {} is validated a second time (first on line {first})",
                        call.finding, call.arm, call.target, call.run
                    ),
                )
                .hint("one validator call per finding: a concatenated file must not count a verdict twice"),
            );
            continue;
        }
        out.calls.push(call);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_failures_and_malformed_outputs() {
        let text = concat!(
            r#"{"arm": "t", "target": "pr-1", "finding": "f1", "validated": true}"#,
            "\n",
            r#"{"arm": "t", "target": "pr-1", "run": 1, "finding": "f2", "validated": false, "reason": "handled in caller"}"#,
            "\n",
            r#"{"arm": "t", "target": "pr-1", "finding": "f3", "status": "failed", "reason": "timeout"}"#,
            "\n",
            r#"{"arm": "t", "target": "pr-1", "finding": "f4", "validated": "yes"}"#,
            "\n",
            r#"{"arm": "t", "target": "pr-1", "finding": "f5"}"#,
            "\n",
            r#"{"arm": "t", "target": "pr-1", "validated": true}"#,
            "\n",
            r#"{"arm": "t", "target": "pr-1", "finding": "f6", "status": "done", "validated": true}"#,
            "\n",
        );
        let p = parse("v.jsonl", text.as_bytes());
        let got: Vec<(&str, u32, Verdict, Option<&str>)> = p
            .calls
            .iter()
            .map(|c| (c.finding.as_str(), c.run, c.verdict, c.reason.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("f1", 0, Verdict::Validated, None),
                ("f2", 1, Verdict::Rejected, Some("handled in caller")),
                ("f3", 0, Verdict::Failed, Some("timeout")),
                ("f4", 0, Verdict::Failed, Some(MALFORMED)),
                ("f5", 0, Verdict::Failed, Some(MALFORMED)),
            ]
        );
        let malformed: Vec<(Option<u64>, &str)> = p
            .malformed
            .iter()
            .map(|e| (e.line, e.problem.as_str()))
            .collect();
        assert_eq!(malformed[0].0, Some(4));
        assert!(
            malformed[0].1.contains("`validated` is a string"),
            "{}",
            malformed[0].1
        );
        assert_eq!(malformed[1].0, Some(5));
        let refused: Vec<(Option<u64>, Option<&str>)> = p
            .problems
            .iter()
            .map(|e| (e.line, e.field.as_deref()))
            .collect();
        assert_eq!(
            refused,
            [
                (Some(6), Some("field `finding`")),
                (Some(7), Some("field `status`"))
            ]
        );
    }
}
