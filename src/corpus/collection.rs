//! `collect.json`, the record a collection keeps of itself (docs/guides/live-collection.md): what
//! it collects and from which targets, how far each stage got, the sequential record of
//! `--until-decided`, the shard it is, and the harness that made each arm's lines. One type,
//! written by `collect` and `merge` and read back by them, by `run` (is it complete? was the
//! harness the same in both arms?) and by `run --sequential` (its order): a record that does
//! not read is an input error naming the file and the field, never skipped.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::files::{Kind, Stage};
use crate::error::InputError;

/// The name of the record in a run directory.
pub const FILE: &str = "collect.json";

/// How far a stage got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageStatus {
    /// Every call is recorded.
    Complete,
    /// Interrupted with calls left unrecorded.
    Interrupted,
    /// Not run yet: an earlier stage is not complete.
    Waiting,
    /// Not asked for (`--stage` named another); as far as an earlier collection took it.
    Skipped,
    /// `--dry-run` listed its calls.
    Planned,
}

/// How far the whole collection got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Being collected (or killed before it could say otherwise).
    Running,
    /// Every stage is complete.
    Complete,
    /// Stopped by an interruption with calls left unrecorded.
    Interrupted,
    /// A stage was not run yet (`--stage` named another).
    Partial,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Complete => "complete",
            Status::Interrupted => "interrupted",
            Status::Partial => "partial",
        }
    }
}

/// `collect.json`: what the run collects, checked again on `--resume`, and each stage's state.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Collection {
    pub run_id: String,
    pub calibench_version: String,
    pub experiment_file: String,
    pub kind: Kind,
    pub command: Vec<String>,
    pub reviewers: Vec<String>,
    /// The recorded arm labels it collects, the baseline's first.
    pub arms: Vec<String>,
    pub runs: u32,
    pub targets: Vec<TargetEntry>,
    pub calls: usize,
    pub started_at: String,
    pub status: Status,
    #[serde(default)]
    pub finished_at: Option<String>,
    #[serde(default)]
    pub stages: Vec<StageEntry>,
    /// `--until-decided`: the targets' order, each look, and why it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<Sequential>,
    /// The harness that made each arm's lines: commands, the files they name, the
    /// `provenance_env` variables, calibench's version (docs/guides/live-collection.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// `--shard K/N`: which part of the plan this collection holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardEntry>,
    /// `calibench merge`: the collections this corpus was joined from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Vec<String>>,
}

/// One target of the plan: its name, its file relative to the experiment's folder, and the
/// SHA-256 of its content.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TargetEntry {
    pub name: String,
    pub path: String,
    pub sha256: String,
}

/// A stage's line in `collect.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StageEntry {
    pub stage: Stage,
    pub status: StageStatus,
    /// What the stage runs (its command, and for judges the panel): a resume must run the same.
    pub plan: Value,
    pub calls: Option<usize>,
    pub recorded: usize,
    pub failed: usize,
    /// Seconds spent on it, over every collection that ran it.
    pub seconds: f64,
}

/// `--shard K/N`: K of N, and the hash of the whole plan every shard must share.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ShardEntry {
    pub k: u32,
    pub n: u32,
    pub plan: String,
}

/// The record of a sequential collection (`--until-decided`), in collect.json `sequential`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Sequential {
    /// Every target, in the order the collection takes them (seeded by the experiment's seed).
    pub order: Vec<String>,
    /// Targets collected between looks.
    pub batch: usize,
    /// The most targets it may collect.
    pub max_targets: usize,
    pub looks: Vec<Look>,
    /// Why it stopped: `better`, `worse` (decided) or `budget`; absent while it goes on.
    pub stopped: Option<String>,
}

/// One look: after how many targets, with how many calls recorded, and what the sequences said.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Look {
    pub targets: usize,
    pub calls: usize,
    pub verdict: String,
}

impl Sequential {
    /// Targets collected at the last look.
    pub fn collected(&self) -> usize {
        self.looks.last().map_or(0, |l| l.targets)
    }
}

/// collect.json `provenance`: each recorded arm label's harness.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub arms: BTreeMap<String, ArmRecord>,
}

/// One arm label's harness.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ArmRecord {
    pub calibench: String,
    /// Each `provenance_env` variable's value (`(unset)` when unset), but a credential's.
    pub env: BTreeMap<String, String>,
    /// Each `provenance_env` variable whose name or value looks like a credential: only whether
    /// it was set, never its value or a hash of it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: BTreeMap<String, bool>,
    /// Role (`reviewer`, `validator`, `judge`) → name → its command.
    pub roles: BTreeMap<String, BTreeMap<String, Command>>,
}

/// One role's command as the arm ran it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub argv: Vec<String>,
    /// Each argument that names a file, with the file's SHA-256.
    pub files: BTreeMap<String, String>,
}

impl Collection {
    /// The record read from `bytes` of the file `name`: strict JSON (a key repeated in one
    /// object is refused, as in every corpus file), every field of its type. What does not
    /// read is an error naming the field and its line.
    pub fn read(name: &str, bytes: &[u8]) -> Result<Collection, InputError> {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| InputError::new(name, "is not valid UTF-8").hint(REWRITE))?;
        let value = super::strict_json(text).map_err(|e| {
            InputError::new(
                name,
                format!("is not a collect.json calibench can read: {e}"),
            )
            .at_line(e.line() as u64)
            .hint(REWRITE)
        })?;
        let record: Collection = serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            let problem = format!("is not a collect.json calibench can read: {}", e.inner());
            let err = InputError::new(name, problem).hint(REWRITE);
            if field == "." {
                err
            } else {
                err.field(format!("`{field}`"))
            }
        })?;
        // An order that names a target twice would count its units twice.
        if let Some(s) = &record.sequential {
            let mut first: std::collections::HashMap<&str, usize> = Default::default();
            for (i, id) in s.order.iter().enumerate() {
                if let Some(at) = first.insert(id, i + 1) {
                    return Err(InputError::new(
                        name,
                        format!(
                            "`{}` appears twice (positions {at} and {})",
                            crate::text::terminal(id),
                            i + 1
                        ),
                    )
                    .field("`sequential.order`")
                    .hint(REWRITE));
                }
            }
        }
        Ok(record)
    }

    /// The record as `collect` and `merge` write it: pretty JSON and a newline.
    pub fn text(&self) -> Result<String, serde_json::Error> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(text)
    }
}

/// What to do about a collect.json that does not read.
const REWRITE: &str = "collect.json is written by `calibench collect` (and `calibench merge`); a folder that holds one is a collection: collect it again, or move collect.json out to replay the folder as a plain corpus";

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Collection {
        Collection {
            run_id: "r".into(),
            calibench_version: "0.1.0".into(),
            experiment_file: "e/experiment.toml".into(),
            kind: Kind::Reviews,
            command: vec!["./review.sh".into()],
            reviewers: vec!["a".into()],
            arms: vec!["b".into(), "t".into()],
            runs: 1,
            targets: vec![TargetEntry {
                name: "doc".into(),
                path: "docs/doc.md".into(),
                sha256: "00".into(),
            }],
            calls: 2,
            started_at: "2026-12-04T00:00:00Z".into(),
            status: Status::Complete,
            finished_at: None,
            stages: Vec::new(),
            sequential: None,
            provenance: Some(Provenance::default()),
            shard: None,
            merged: None,
        }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let r = record();
        let text = r.text().unwrap();
        assert!(text.contains("\"status\": \"complete\""), "{text}");
        assert_eq!(Collection::read("c.json", text.as_bytes()).unwrap(), r);
    }

    // Regression (issue 63): a provenance record that did not read was dropped without a word,
    // and the drift check with it.
    #[test]
    fn a_record_that_does_not_read_names_the_field() {
        let mut v = serde_json::to_value(record()).unwrap();
        v["provenance"]["arms"] = serde_json::json!({"b": {"calibench": 1}});
        let e = Collection::read("c.json", v.to_string().as_bytes()).unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("`provenance.arms.b.calibench`"),
            "{e}"
        );
        let mut v = serde_json::to_value(record()).unwrap();
        v["status"] = "done".into();
        let e = Collection::read("c.json", v.to_string().as_bytes()).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`status`"), "{e}");
        assert!(e.problem.contains("unknown variant `done`"), "{e}");
        let e = Collection::read("c.json", br#"{"status": "complete", "status": "running"}"#)
            .unwrap_err();
        assert!(e.problem.contains("appears twice"), "{e}");
        let e = Collection::read("c.json", b"[1]").unwrap_err();
        assert!(e.problem.contains("collect.json"), "{e}");
    }
}
