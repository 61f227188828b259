//! Judge calls, `judges.jsonl`: a collection's own record of each judge call as it returns
//! (docs/guides/live-collection.md), one line per (arm, item, judge), gathered into
//! `verdicts.jsonl` once every call is recorded. `run` never reads it; `collect`'s resume and
//! `merge` do, through this reader.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::call::Call;
use super::{Id, Lines, Text};
use crate::error::Problems;

/// One line of `judges.jsonl` as `collect` writes it.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "One judge's call on one item, as a collection records it.")]
pub struct RawJudgeCall {
    /// The recorded arm label of the item.
    pub arm: Text,
    /// The item judged: a finding's `id`, or a target's name.
    pub item_id: Id,
    /// The judge, as `[collect.judges] judges` names it.
    pub judge: Text,
    /// Scores per declared dimension, each in [0, 1]; `null` for a call that failed.
    #[serde(deserialize_with = "super::present")]
    #[schemars(required)]
    pub per_dimension: Option<BTreeMap<String, f64>>,
    /// Why the call failed.
    pub reason: Option<String>,
}

/// One judge call, read.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeCall {
    pub line: u64,
    pub arm: Arc<str>,
    pub item_id: Arc<str>,
    pub judge: Arc<str>,
    pub per_dimension: Option<BTreeMap<String, f64>>,
    pub reason: Option<String>,
}

impl JudgeCall {
    /// The call the line records.
    pub fn call(&self) -> Call {
        Call::Judge {
            arm: self.arm.clone(),
            item_id: self.item_id.clone(),
            judge: self.judge.clone(),
        }
    }
}

const LINES: Lines = Lines {
    holds: "each line holds one judge call: {\"arm\", \"item_id\", \"judge\", \"per_dimension\"}",
    hints: &[("per_dimension", "null marks a call that failed")],
};

/// Every judge call, with every problem; a call recorded twice is refused.
pub fn parse(name: &str, bytes: &[u8]) -> (Vec<JudgeCall>, Problems) {
    let repeats: super::Repeats<JudgeCall> = super::Repeats {
        field: "judge",
        hint: None,
        key: JudgeCall::call,
        says: |c| format!("the call {} is recorded a second time", c.call()),
    };
    super::parse_unique(
        (name, bytes),
        &LINES,
        |_, line, raw: RawJudgeCall| {
            Ok(JudgeCall {
                line,
                arm: raw.arm.0.into(),
                item_id: raw.item_id.0.into(),
                judge: raw.judge.0.into(),
                per_dimension: raw.per_dimension,
                reason: raw.reason,
            })
        },
        repeats,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_read_with_their_failures_and_a_repeat_is_refused() {
        let text = concat!(
            r#"{"arm": "b", "item_id": "t1", "judge": "j1", "per_dimension": {"real": 0.5}}"#,
            "\n",
            r#"{"arm": "b", "item_id": 7, "judge": "j1", "per_dimension": null, "reason": "timed out"}"#,
            "\n",
            r#"{"arm": "b", "item_id": "t1", "judge": "j1", "per_dimension": {"real": 0.4}}"#,
            "\n",
            r#"{"arm": "b", "item_id": "t1", "judge": "j2"}"#,
            "\n",
        );
        let (calls, problems) = parse("judges.jsonl", text.as_bytes());
        assert_eq!(calls.len(), 2);
        assert_eq!(&*calls[1].item_id, "7");
        assert_eq!(calls[1].reason.as_deref(), Some("timed out"));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].line, Some(3));
        assert!(
            problems[0].problem.contains("first on line 1"),
            "{problems:?}"
        );
        assert_eq!(problems[1].field.as_deref(), Some("field `per_dimension`"));
    }
}
