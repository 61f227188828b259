//! `collect.json`, the record a collection keeps of itself (docs/guides/live-collection.md): what
//! it collects and from which targets, how far each stage got, the sequential record of
//! `--until-decided`, the shard it is, and the harness that made each arm's lines. One type,
//! written by `collect` and `merge` and read back by them, by `run` (is it complete? was the
//! harness the same in both arms?) and by `run --sequential` (its order): a record that does
//! not read is an input error naming the file and the field, never skipped.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::files::{Kind, Stage};
pub use super::harness::{ArmRecord, Command, Provenance};
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
    /// Stopped by an error (a sequential look that failed): `reason` says which.
    Incomplete,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Complete => "complete",
            Status::Interrupted => "interrupted",
            Status::Partial => "partial",
            Status::Incomplete => "incomplete",
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
    /// Why it is `incomplete`: the error that stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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
    /// Files of the harness that changed while it ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<Change>,
}

/// A file of the harness that changed while a stage ran: its hash before and after, and how
/// many of the stage's calls were recorded before the change was seen and after.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Change {
    pub file: String,
    pub before: String,
    pub after: String,
    pub calls_before: usize,
    pub calls_after: usize,
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
        // Read plainly; only a record that cannot be read is read again, tracking the path, to
        // name the field (a merge of a thousand shards reads a thousand records).
        let record: Collection = match serde_json::from_value(value) {
            Ok(record) => record,
            Err(_) => {
                let value =
                    super::strict_json(text).map_err(|e| InputError::new(name, e.to_string()))?;
                let e = match serde_path_to_error::deserialize::<_, Collection>(value) {
                    Ok(record) => return Ok(record),
                    Err(e) => e,
                };
                let field = e.path().to_string();
                let problem = format!("is not a collect.json calibench can read: {}", e.inner());
                let err = InputError::new(name, problem).hint(REWRITE);
                return Err(if field == "." {
                    err
                } else {
                    err.field(format!("`{field}`"))
                });
            }
        };
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

/// Whether target `name` is in shard `k` of `n`: its SHA-256, first 8 bytes as a number, mod
/// N, is K − 1.
pub fn holds(k: u32, n: u32, name: &str) -> bool {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(name.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&d[..8]);
    u64::from_be_bytes(first) % u64::from(n.max(1)) == u64::from(k.saturating_sub(1))
}

impl Collection {
    /// The SHA-256 of its whole plan: what it collects (kind, command, reviewers, arms,
    /// repeats) from which targets (names and contents), and each stage's plan (`stages`, as
    /// the experiment declares them). Every shard of one plan records the same.
    pub fn plan_hash(&self, stages: &[Value]) -> String {
        use sha2::{Digest, Sha256};
        let whole = serde_json::json!([
            self.kind,
            self.command,
            self.reviewers,
            self.arms,
            self.runs,
            self.targets,
            stages
        ]);
        format!("{:x}", Sha256::digest(whole.to_string().as_bytes()))
    }

    /// The targets its plan holds: a sequential collection's as far as it went (its plan is
    /// the order it stopped in), else every target it lists.
    pub fn plan_targets(&self) -> Vec<&str> {
        match &self.sequential {
            Some(s) => s.order[..s.collected().min(s.order.len())]
                .iter()
                .map(String::as_str)
                .collect(),
            None => self.targets.iter().map(|t| t.name.as_str()).collect(),
        }
    }

    /// Whether `other` says of its plan all that [`Collection::plan_hash`] hashes, as this
    /// record does: then the two hash alike, and one recomputation serves both.
    pub fn same_plan_as(&self, other: &Collection) -> bool {
        self.kind == other.kind
            && self.command == other.command
            && self.reviewers == other.reviewers
            && self.arms == other.arms
            && self.runs == other.runs
            && self.targets == other.targets
            && self.stages.len() == other.stages.len()
            && self
                .stages
                .iter()
                .zip(&other.stages)
                .all(|(a, b)| a.plan == b.plan)
    }

    /// The plan's hash recomputed from what the record itself says of its stages.
    pub fn own_plan_hash(&self) -> String {
        let stages: Vec<Value> = self.stages.iter().map(|s| s.plan.clone()).collect();
        self.plan_hash(&stages)
    }
}

/// The label an A/A collection (`collect --aa`) records the baseline's second copy under.
pub fn again(label: &str) -> String {
    format!("{label}-again")
}

impl Collection {
    /// Whether it is an A/A collection: the baseline's label, then `<label>-again`.
    pub fn is_aa(&self) -> bool {
        matches!(self.arms.as_slice(), [b, a] if *a == again(b))
    }

    /// The flags a resume of it needs beside its run id and runs folder, as it was made: its
    /// shard, A/A, and a sequential collection's batch and budget.
    pub fn resume_flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if let Some(s) = &self.shard {
            flags.extend(["--shard".to_string(), format!("{}/{}", s.k, s.n)]);
        }
        if self.is_aa() {
            flags.push("--aa".into());
        }
        if let Some(s) = &self.sequential {
            flags.extend([
                "--until-decided".to_string(),
                "--batch".into(),
                s.batch.to_string(),
                "--max-targets".into(),
                s.max_targets.to_string(),
            ]);
        }
        flags
    }

    /// The command that continues it, with every flag it needs, quoted for a POSIX shell:
    /// `calibench collect EXPERIMENT --resume ID --runs-dir DIR …`.
    pub fn resume_command(&self, runs_dir: &std::path::Path) -> String {
        let quote = crate::output::shell_quote;
        let mut words = vec![
            "calibench".to_string(),
            "collect".into(),
            quote(&self.experiment_file),
            "--resume".into(),
            quote(&self.run_id),
            "--runs-dir".into(),
            quote(&runs_dir.display().to_string()),
        ];
        words.extend(self.resume_flags().iter().map(|f| quote(f)));
        words.join(" ")
    }
}

impl Collection {
    /// The command that replays it, with every flag it needs: `--sequential` for a sequential
    /// collection (its decision is the sequences'), `--aa` for an A/A one, `--allow-partial`
    /// for one shard (the plan's other targets are in the other shards).
    pub fn replay_command(&self, run_dir: &std::path::Path) -> String {
        let quote = crate::output::shell_quote;
        let mut words = vec![
            "calibench".to_string(),
            "run".into(),
            quote(&self.experiment_file),
            "--corpus".into(),
            quote(&run_dir.display().to_string()),
        ];
        if self.sequential.is_some() {
            words.push("--sequential".into());
        }
        if self.is_aa() {
            words.push("--aa".into());
        }
        if self.shard.is_some() {
            words.push("--allow-partial".into());
        }
        words.join(" ")
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
            reason: None,
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
