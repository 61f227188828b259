//! Target metadata, `targets.jsonl` (docs/reference.md): one line per target, with the pull
//! request the PR skip conditions read. A target without a line, or without `pr`, is not a pull
//! request: no skip rule fires for it.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Lines, Text};
use crate::error::Problems;

/// One line of `targets.jsonl` as written. Its JSON Schema is derived from this type.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "One target's metadata.")]
pub struct RawTarget {
    /// The target as `reviews.jsonl` names it.
    pub target: Text,
    /// The pull request; absent for a branch or base review.
    pub pr: Option<Pr>,
}

/// A pull request's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum PrState {
    Open,
    Closed,
    Merged,
}

/// A pull request, as the skip conditions read it.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
pub struct Pr {
    /// `OPEN`, `CLOSED` or `MERGED`; the skip rule `closed` skips a closed or merged one.
    pub state: PrState,
    /// The skip rule `draft` skips a draft.
    #[serde(default)]
    pub draft: bool,
    /// The skip rule `trivial-pattern` skips a dependency or release bump (`chore(deps)`,
    /// `release:`, …) with an empty `body`.
    #[serde(default)]
    pub title: String,
    /// The description; null or absent is empty.
    pub body: Option<String>,
    /// The changed files' paths; kept, not replayed.
    #[serde(default)]
    pub files: Vec<String>,
    /// The change already carries a review report comment.
    #[serde(default)]
    pub reviewed: bool,
    /// A recorded trivial-change judgment; null when none was made.
    pub trivial: Option<bool>,
}

/// One target's metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub line: u64,
    pub target: String,
    pub pr: Option<Pr>,
}

impl Target {
    /// The call the line records: one target's metadata.
    pub fn call(&self) -> super::call::Call {
        super::call::Call::Target {
            target: self.target.as_str().into(),
        }
    }
}

const LINES: Lines = Lines {
    holds: "each line holds one target: {\"target\", \"pr\": {\"state\", \"draft\", \"title\", \"body\", \"reviewed\", \"trivial\"}}",
    hints: &[("pr.state", "OPEN, CLOSED or MERGED, as GitHub writes it")],
};

/// Every target's line, with every problem; a target described twice is refused.
pub fn parse(name: &str, bytes: &[u8]) -> (Vec<Target>, Problems) {
    let repeats: super::Repeats<Target> = super::Repeats {
        field: "target",
        hint: None,
        key: Target::call,
        says: |t| format!("target `{}` is described a second time", t.target),
    };
    super::parse_unique(
        (name, bytes),
        &LINES,
        |_, line, raw: RawTarget| {
            Ok(Target {
                line,
                target: raw.target.0,
                pr: raw.pr,
            })
        },
        repeats,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_requests_branches_and_refusals() {
        let text = concat!(
            r#"{"target": "pr-1", "pr": {"state": "MERGED", "draft": false, "title": "Fix", "body": null, "files": ["a.rs"], "reviewed": false, "trivial": null}}"#,
            "\n",
            r#"{"target": "main-branch"}"#,
            "\n",
            r#"{"target": "pr-2", "pr": {"state": "open"}}"#,
            "\n",
            r#"{"target": "pr-1", "pr": {"state": "OPEN"}}"#,
            "\n",
            r#"{"target": "pr-3", "pr": {"title": "x"}}"#,
            "\n",
        );
        let (targets, problems) = parse("t.jsonl", text.as_bytes());
        assert_eq!(targets.len(), 2);
        let pr = targets[0].pr.as_ref().unwrap();
        assert_eq!(
            (pr.state, pr.draft, pr.trivial),
            (PrState::Merged, false, None)
        );
        assert!(targets[1].pr.is_none());
        let at: Vec<(Option<u64>, Option<&str>, &str)> = problems
            .iter()
            .map(|e| (e.line, e.field.as_deref(), e.problem.as_str()))
            .collect();
        assert_eq!(
            at,
            [
                (
                    Some(3),
                    Some("field `pr.state`"),
                    "`open` is not one of OPEN, CLOSED, MERGED"
                ),
                (
                    Some(4),
                    Some("field `target`"),
                    "target `pr-1` is described a second time (first on line 1)"
                ),
                (Some(5), Some("field `pr.state`"), "is missing"),
            ]
        );
    }
}
