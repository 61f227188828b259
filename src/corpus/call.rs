//! "The same call", defined once: the recorded call a line of a corpus file is the record of.
//! Two lines of one call are one call recorded twice. The corpus readers refuse the second
//! ([`super::parse_unique`]), `collect` skips a call already recorded when it resumes, and
//! `merge` refuses a call two shards recorded — each by comparing [`Call`]s, built by the line
//! types' own `call()` and by `collect`'s plan from the same fields (docs/architecture.md,
//! "Adding an input file").

use std::fmt;
use std::sync::Arc;

use super::ItemId;

/// What one line of a corpus file records: its file's key fields, by name. The texts are
/// shared (`Arc<str>`), so that a reader holding a million lines' keys copies no string it
/// already holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Call {
    /// A reviewer's return on a target in one run (`reviews.jsonl`).
    Review {
        arm: Arc<str>,
        target: Arc<str>,
        reviewer: Arc<str>,
        run: u32,
    },
    /// An agent's trace of one query in one run (`queries.jsonl`): one agent, so no reviewer.
    Query {
        arm: Arc<str>,
        query_id: Arc<str>,
        run: u32,
    },
    /// A validator's verdict on one finding of a return (`validations.jsonl`).
    Validation {
        arm: Arc<str>,
        target: Arc<str>,
        run: u32,
        finding: Arc<str>,
    },
    /// One judge on one item (`judges.jsonl`, a collection's record of each judge call).
    Judge {
        arm: Arc<str>,
        item_id: Arc<str>,
        judge: Arc<str>,
    },
    /// The panel's verdicts on one item (`verdicts.jsonl`).
    Verdicts { arm: Arc<str>, item_id: Arc<str> },
    /// A scorer's score of one item in one repeat (`scores.jsonl`).
    Score {
        arm: Arc<str>,
        item: ItemId,
        repeat: u32,
        scorer: Arc<str>,
    },
    /// One annotator's label on one item (`labels.jsonl`).
    Label {
        arm: Arc<str>,
        item_id: Arc<str>,
        annotator: Arc<str>,
    },
    /// A target's metadata (`targets.jsonl`): one line per target, whatever the arm.
    Target { target: Arc<str> },
}

impl Call {
    /// The recorded arm label the call was made under; none for a target's metadata.
    pub fn arm(&self) -> Option<&str> {
        match self {
            Call::Review { arm, .. }
            | Call::Query { arm, .. }
            | Call::Validation { arm, .. }
            | Call::Judge { arm, .. }
            | Call::Verdicts { arm, .. }
            | Call::Score { arm, .. }
            | Call::Label { arm, .. } => Some(arm),
            Call::Target { .. } => None,
        }
    }
}

/// The call as messages name it: `arm "b", target "t", reviewer "r", run 0`.
impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Call::Review {
                arm,
                target,
                reviewer,
                run,
            } => write!(
                f,
                "arm {arm:?}, target {target:?}, reviewer {reviewer:?}, run {run}"
            ),
            Call::Query { arm, query_id, run } => {
                write!(f, "arm {arm:?}, query {query_id:?}, run {run}")
            }
            Call::Validation {
                arm,
                target,
                run,
                finding,
            } => write!(
                f,
                "arm {arm:?}, target {target:?}, run {run}, finding {finding:?}"
            ),
            Call::Judge {
                arm,
                item_id,
                judge,
            } => write!(f, "arm {arm:?}, item {item_id:?}, judge {judge:?}"),
            Call::Verdicts { arm, item_id } => write!(f, "arm {arm:?}, item {item_id:?}"),
            Call::Score {
                arm,
                item,
                repeat,
                scorer,
            } => write!(
                f,
                "arm {arm:?}, item {item}, repeat {repeat}, scorer {scorer:?}"
            ),
            Call::Label {
                arm,
                item_id,
                annotator,
            } => write!(f, "arm {arm:?}, item {item_id:?}, annotator {annotator:?}"),
            Call::Target { target } => write!(f, "target {target:?}"),
        }
    }
}

/// A line's call, with where it stands in its file: what `collect`'s resume and `merge` read
/// of a stage's file.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub line: u64,
    pub call: Call,
}

/// Why a call failed, as its line records it: a failed line's `reason` begins with the
/// failure's phrase (`invalid output: …`), so that what `collect` counted is what `run` reads
/// back. A `reason` that begins with none of them (a hand-written corpus, a command that
/// reported `status: failed` itself) is [`Failure::Reported`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// The program could not be started.
    Start,
    /// It exited non-zero or was killed by a signal.
    Exit,
    /// It ran past `timeout_s` and was killed.
    Timeout,
    /// It exited 0 but its stdout is not a valid return.
    Output,
    /// The line says `failed`, for a reason of its own (or none).
    Reported,
}

impl Failure {
    pub const ALL: [Failure; 5] = [
        Failure::Start,
        Failure::Exit,
        Failure::Timeout,
        Failure::Output,
        Failure::Reported,
    ];

    /// Its key in `inputs.calls` and in `collect`'s counts.
    pub fn key(self) -> &'static str {
        match self {
            Failure::Start => "start",
            Failure::Exit => "exit",
            Failure::Timeout => "timeout",
            Failure::Output => "output",
            Failure::Reported => "reported",
        }
    }

    /// How a sentence names it, and how a recorded `reason` begins.
    pub fn phrase(self) -> &'static str {
        match self {
            Failure::Start => "could not start",
            Failure::Exit => "exited non-zero",
            Failure::Timeout => "timed out",
            Failure::Output => "invalid output",
            Failure::Reported => "reported failed",
        }
    }

    /// The `reason` a failed line records: the phrase, then what happened.
    pub fn reason(self, detail: &str) -> String {
        format!("{}: {detail}", self.phrase())
    }

    /// The failure a recorded `reason` names.
    pub fn of_reason(reason: Option<&str>) -> Failure {
        let Some(reason) = reason else {
            return Failure::Reported;
        };
        Failure::ALL
            .into_iter()
            .find(|f| {
                reason
                    .strip_prefix(f.phrase())
                    .is_some_and(|rest| rest.starts_with(':'))
            })
            .unwrap_or(Failure::Reported)
    }

    /// What happened, without the phrase: `confidence` 68 is off the float scale.
    pub fn detail(reason: &str) -> &str {
        let f = Failure::of_reason(Some(reason));
        if f == Failure::Reported {
            return reason;
        }
        reason[f.phrase().len() + 1..].trim_start()
    }
}

/// A failure is written as its key.
impl serde::Serialize for Failure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.key())
    }
}

/// A failure is read from its key.
impl<'de> serde::Deserialize<'de> for Failure {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let key = String::deserialize(d)?;
        Failure::ALL
            .into_iter()
            .find(|f| f.key() == key)
            .ok_or_else(|| {
                let keys: Vec<&str> = Failure::ALL.iter().map(|f| f.key()).collect();
                serde::de::Error::custom(format!(
                    "unknown failure `{key}`: one of {}",
                    keys.join(", ")
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::Failure;

    #[test]
    fn a_reason_names_its_failure_and_reads_back() {
        for f in Failure::ALL {
            let r = f.reason("68 is off the scale");
            let back = Failure::of_reason(Some(&r));
            if f == Failure::Reported {
                // Its phrase is a reason of its own kind.
                assert_eq!(back, Failure::Reported);
            } else {
                assert_eq!(back, f, "{r}");
                assert_eq!(Failure::detail(&r), "68 is off the scale");
            }
        }
        assert_eq!(Failure::of_reason(Some("rate limited")), Failure::Reported);
        assert_eq!(Failure::of_reason(Some("timed outage")), Failure::Reported);
        assert_eq!(Failure::of_reason(None), Failure::Reported);
        assert_eq!(Failure::detail("rate limited"), "rate limited");
    }
}
