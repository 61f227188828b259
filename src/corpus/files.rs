//! Each corpus file declared once (docs/architecture.md, "Adding an input file"), in the spirit
//! of ripgrep's one declaration per flag: its name, what it holds, its line's noun in messages,
//! the field that files a line under an arm, its key (the fields whose values are the recorded
//! call a line is: [`Call`]), the reasons the input ledger may exclude its lines for, the
//! checks it gets against the other files and the experiment, who makes it, its line type's
//! JSON Schema, and its reader's calls. The loader reads the files in the table's order (each
//! is checked against those before it), the ledger accounts for them by their nouns, a folder's
//! stray files are refused against their names, `collect`'s resume and `merge` read each line's
//! call through [`Def::calls`], and `calibench reference` prints the table.

use schemars::{schema_for, Schema};

use super::call::{Call, Recorded};
use serde::{Deserialize, Serialize};

use super::ledger::Reason;
use super::{judges, labels, queries, reviews, scores, targets, validations, verdicts};
use crate::error::Problems;

/// A corpus file, by what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum File {
    Reviews,
    Validations,
    Targets,
    Verdicts,
    Labels,
    Queries,
    Scores,
    /// A collection's record of each judge call, gathered into `verdicts.jsonl`.
    Judges,
}

/// What one line of a file is, in messages: "1 return", "3 returns".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Noun {
    pub one: &'static str,
    pub many: &'static str,
}

impl Noun {
    /// The noun for `n` of them.
    pub fn of(self, n: u64) -> &'static str {
        if n == 1 {
            self.one
        } else {
            self.many
        }
    }
}

/// Who makes a file, and so what `merge` does with a collection's copy of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Made {
    /// A stage of `collect` writes a line per call: shards are merged call by call.
    Collected(Stage),
    /// `collect` copies the experiment's corpus's file into every collection: merged once.
    Copied,
    /// Written by hand, by `calibench import` or by annotators: never in a collection.
    Given,
}

/// What a collection records: reviewer returns or agent query traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Reviewer returns, into `reviews.jsonl`.
    Reviews,
    /// Agent query traces, into `queries.jsonl`.
    Queries,
}

impl Kind {
    /// The corpus file its first stage writes.
    pub fn file(self) -> File {
        match self {
            Kind::Reviews => File::Reviews,
            Kind::Queries => File::Queries,
        }
    }
}

/// A collection's stages, in the order they run (docs/guides/live-collection.md).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// The `[collect]` command: reviewer returns, or an agent's query traces.
    Reviewers,
    /// `[collect.validators]`: a verdict per finding the validation pass selects.
    Validators,
    /// `[collect.judges]`: a panel's verdicts per finding and target.
    Judges,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Reviewers => "reviewers",
            Stage::Validators => "validators",
            Stage::Judges => "judges",
        }
    }

    /// The file the stage appends a line to per call, for a collection of `kind`.
    pub fn file(self, kind: Kind) -> File {
        match self {
            Stage::Reviewers => kind.file(),
            Stage::Validators => File::Validations,
            Stage::Judges => File::Judges,
        }
    }
}

/// One corpus file, declared.
pub struct Def {
    pub file: File,
    /// Its name in a corpus folder.
    pub name: &'static str,
    /// What it holds, in a few words.
    pub holds: &'static str,
    /// One line, for messages.
    pub noun: Noun,
    /// The field that files a line under a recorded arm label, where lines have one.
    pub arm: Option<&'static str>,
    /// The fields whose values are the call a line records: no two lines may share them.
    pub key: &'static [&'static str],
    /// What the input ledger may exclude a line for (every other line is used).
    pub excluded: &'static [Reason],
    /// The checks against the corpus's other files and the experiment, in words.
    pub checks: &'static str,
    /// Read in code mode only (code review's precision controls).
    pub code_only: bool,
    /// Replayed: a corpus must hold one such file, or nothing would be.
    pub replayed: bool,
    /// Read by `run` (a collection's own `judges.jsonl` is not).
    pub corpus: bool,
    pub made: Made,
    schema: fn() -> Schema,
    calls: fn(&str, &[u8]) -> (Vec<Recorded>, Problems),
}

impl Def {
    /// The line type's schema, titled after the file ("reviews.jsonl line").
    pub fn schema(&self) -> Schema {
        let mut schema = (self.schema)();
        schema.insert("title".into(), format!("{} line", self.name).into());
        schema
    }

    /// The name without `.jsonl`: what `calibench schema` calls the file.
    pub fn stem(&self) -> &'static str {
        self.name.strip_suffix(".jsonl").unwrap_or(self.name)
    }

    /// Each line's call, read the way the file's reader reads it (a line it refuses is a
    /// problem, as `validate` reports it); a call recorded twice is one of the problems.
    pub fn calls(&self, name: &str, bytes: &[u8]) -> (Vec<Recorded>, Problems) {
        (self.calls)(name, bytes)
    }
}

impl File {
    /// The file's declaration.
    pub fn def(self) -> &'static Def {
        FILES
            .iter()
            .find(|d| d.file == self)
            .expect("every file is declared in FILES")
    }

    /// Its name in a corpus folder.
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// The files whose lines are filed under an arm label: `arm` on every line.
const ARM: Option<&str> = Some("arm");
/// The exclusions every file with an arm field has.
const BY_LABEL: [Reason; 3] = [Reason::Refused, Reason::LabelUnread, Reason::LabelIgnored];

/// The folder of a corpus (and of a collection's run directory) that holds each target's
/// source snapshot, `sources/<target>/`: what lint-ignore reads in code mode, beside the
/// targets file.
pub const SOURCES: &str = "sources";

/// Every file, in the order the loader reads them: a file is checked against those before it
/// (validator calls against the returns, labels against the verdicts). The reference lists
/// them in this order.
pub const FILES: &[Def] = &[
    Def {
        file: File::Reviews,
        name: "reviews.jsonl",
        holds: "reviewer returns",
        noun: Noun {
            one: "return",
            many: "returns",
        },
        arm: ARM,
        key: &["arm", "target", "reviewer", "run"],
        excluded: &BY_LABEL,
        checks: "each arm's `source` is a label some return carries; a finding `id` is unique in the file; findings are checked on the scale of each arm that reads them",
        code_only: false,
        replayed: true,
        corpus: true,
        made: Made::Collected(Stage::Reviewers),
        schema: || schema_for!(reviews::RawReturn),
        calls: |name, bytes| recorded(reviews::parse(name, bytes), |r| r.line, reviews::Record::call),
    },
    Def {
        file: File::Validations,
        name: "validations.jsonl",
        holds: "validator verdicts",
        noun: Noun {
            one: "validator call",
            many: "validator calls",
        },
        arm: ARM,
        key: &["arm", "target", "run", "finding"],
        excluded: &[
            Reason::Refused,
            Reason::LabelUnread,
            Reason::LabelIgnored,
            Reason::ValidationOff,
        ],
        checks: "each names the `id` of a finding of a return of the same arm, target and run; read in code mode only",
        code_only: true,
        replayed: false,
        corpus: true,
        made: Made::Collected(Stage::Validators),
        schema: || schema_for!(validations::RawValidation),
        calls: |name, bytes| {
            let parsed = validations::parse(name, bytes);
            recorded((parsed.calls, parsed.problems), |c| c.line, validations::Validation::call)
        },
    },
    Def {
        file: File::Targets,
        name: "targets.jsonl",
        holds: "target metadata",
        noun: Noun {
            one: "target",
            many: "targets",
        },
        arm: None,
        key: &["target"],
        excluded: &[Reason::Refused, Reason::NoReturn],
        checks: "read in code mode only, with the snapshots under `sources/` that lint-ignore reads",
        code_only: true,
        replayed: false,
        corpus: true,
        made: Made::Copied,
        schema: || schema_for!(targets::RawTarget),
        calls: |name, bytes| recorded(targets::parse(name, bytes), |t| t.line, targets::Target::call),
    },
    Def {
        file: File::Verdicts,
        name: "verdicts.jsonl",
        holds: "judge verdicts",
        noun: Noun {
            one: "verdict line",
            many: "verdict lines",
        },
        arm: ARM,
        key: &["arm", "item_id"],
        excluded: &[
            Reason::Refused,
            Reason::LabelUnread,
            Reason::LabelIgnored,
            Reason::ItemUnknown,
        ],
        checks: "each `item_id` is a target or finding `id` of its arm (review corpora), a query id (query corpora) or an item (scores); both arms are judged by one panel",
        code_only: false,
        replayed: false,
        corpus: true,
        made: Made::Collected(Stage::Judges),
        schema: || schema_for!(verdicts::RawItem),
        calls: |name, bytes| recorded(verdicts::parse(name, bytes), |i| i.line, verdicts::Item::call),
    },
    Def {
        file: File::Labels,
        name: "labels.jsonl",
        holds: "human labels",
        noun: Noun {
            one: "label line",
            many: "label lines",
        },
        arm: ARM,
        key: &["arm", "item_id", "annotator"],
        excluded: &[
            Reason::Refused,
            Reason::LabelUnread,
            Reason::LabelIgnored,
            Reason::ItemUnknown,
            Reason::ItemNotJudged,
        ],
        checks: "needs `verdicts.jsonl`: each label names an item of its arm, an annotator is never a judge, and a labelled item has every dimension the judges score on it",
        code_only: false,
        replayed: false,
        corpus: true,
        made: Made::Given,
        schema: || schema_for!(labels::RawLabel),
        calls: |name, bytes| recorded(labels::parse(name, bytes), |l| l.line, labels::Label::call),
    },
    Def {
        file: File::Queries,
        name: "queries.jsonl",
        holds: "agent query traces",
        noun: Noun {
            one: "query",
            many: "queries",
        },
        arm: ARM,
        key: &["arm", "query_id", "run"],
        excluded: &BY_LABEL,
        checks: "each arm's `source` is a label some trace carries",
        code_only: false,
        replayed: true,
        corpus: true,
        made: Made::Collected(Stage::Reviewers),
        schema: || schema_for!(queries::RawQuery),
        calls: |name, bytes| recorded(queries::parse(name, bytes), |q| q.line, queries::Query::call),
    },
    Def {
        file: File::Scores,
        name: "scores.jsonl",
        holds: "imported scores",
        noun: Noun {
            one: "score line",
            many: "score lines",
        },
        arm: ARM,
        key: &["arm", "item", "repeat", "scorer"],
        excluded: &[
            Reason::Refused,
            Reason::LabelUnread,
            Reason::LabelIgnored,
            Reason::MissingScore,
        ],
        checks: "each arm's `source` is a label some line carries, one task per arm; `[scores] judges` names scorers of both arms",
        code_only: false,
        replayed: true,
        corpus: true,
        made: Made::Given,
        schema: || schema_for!(scores::Score),
        calls: |name, bytes| recorded(scores::parse(name, bytes), |s| s.line, scores::Score::call),
    },
    Def {
        file: File::Judges,
        name: "judges.jsonl",
        holds: "a collection's judge calls",
        noun: Noun {
            one: "judge call",
            many: "judge calls",
        },
        arm: ARM,
        key: &["arm", "item_id", "judge"],
        excluded: &[],
        checks: "gathered into verdicts.jsonl once every call is recorded; `run` does not read it",
        code_only: false,
        replayed: false,
        corpus: false,
        made: Made::Collected(Stage::Judges),
        schema: || schema_for!(judges::RawJudgeCall),
        calls: |name, bytes| recorded(judges::parse(name, bytes), |c| c.line, judges::JudgeCall::call),
    },
];

/// The files `run` reads.
pub fn corpus() -> impl Iterator<Item = &'static Def> {
    FILES.iter().filter(|d| d.corpus)
}

/// The corpus file whose stem is `stem` (`reviews`), for `calibench schema`.
pub fn by_stem(stem: &str) -> Option<&'static Def> {
    corpus().find(|d| d.stem() == stem)
}

/// The stems `calibench schema` knows a corpus file by, in the table's order.
pub fn stems() -> Vec<&'static str> {
    corpus().map(Def::stem).collect()
}

/// The schema of a line of the corpus file `stem`.
pub fn schema_of(stem: &str) -> Option<Schema> {
    by_stem(stem).map(Def::schema)
}

/// A reader's records as their calls, with their lines.
fn recorded<T>(
    (records, problems): (Vec<T>, Problems),
    line: fn(&T) -> u64,
    call: fn(&T) -> Call,
) -> (Vec<Recorded>, Problems) {
    let calls = records
        .iter()
        .map(|r| Recorded {
            line: line(r),
            call: call(r),
        })
        .collect();
    (calls, problems)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::schema_walk::every_key_is_described;

    /// Every key of every example corpus line is a property at its place in its file's derived
    /// schema, and every line reads: the schema and the reader come from one type.
    #[test]
    fn the_derived_schemas_describe_every_key_of_the_example_corpora() {
        let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
        let mut lines = 0;
        for entry in std::fs::read_dir(&corpora).unwrap() {
            for file in corpus() {
                let path = entry.as_ref().unwrap().path().join(file.name);
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let schema = serde_json::to_value(file.schema()).unwrap();
                for (i, line) in text.lines().enumerate() {
                    let value: serde_json::Value = serde_json::from_str(line).unwrap();
                    let at = format!("{}:{}", path.display(), i + 1);
                    every_key_is_described(&value, &schema, &at, &["findings"]);
                    lines += 1;
                }
            }
        }
        assert!(lines > 1000, "{lines} example lines");
        assert!(by_stem("sources").is_none());
        // The walk can fail: a key no schema describes, at depth.
        let q = serde_json::to_value(by_stem("queries").unwrap().schema()).unwrap();
        let typo = serde_json::json!({"query_id": "q", "tools": [{"tool": "find", "hitz": 1}]});
        let walked = std::panic::catch_unwind(|| every_key_is_described(&typo, &q, "typo", &[]));
        assert!(walked.is_err());
    }

    /// The ranges and requirements the readers enforce are stated in the schemas.
    #[test]
    fn the_schemas_state_the_readers_ranges_and_requirements() {
        let q = serde_json::to_value(by_stem("queries").unwrap().schema()).unwrap();
        let required = |v: &serde_json::Value| v["required"].clone();
        assert_eq!(required(&q), serde_json::json!(["query_id", "tools"]));
        let tool = &q["$defs"]["RawTool"];
        assert_eq!(tool["properties"]["score"]["maximum"], 1);
        assert_eq!(tool["properties"]["attempt"]["minimum"], 1);
        let v = serde_json::to_value(by_stem("verdicts").unwrap().schema()).unwrap();
        let verdict = &v["$defs"]["RawVerdict"];
        assert_eq!(
            required(verdict),
            serde_json::json!(["model", "per_dimension"])
        );
        // Written, but `null` for a judge that failed.
        let scores = &verdict["properties"]["per_dimension"];
        assert_eq!(scores["type"], serde_json::json!(["object", "null"]));
        assert_eq!(scores["minProperties"], 1);
        let r = serde_json::to_value(by_stem("reviews").unwrap().schema()).unwrap();
        assert_eq!(r["else"]["required"], serde_json::json!(["findings"]));
        assert_eq!(r["$defs"]["Text"]["pattern"], "\\S");
    }

    /// A line of each file, every field of its key and one beside it written.
    fn sample(file: File) -> serde_json::Value {
        use serde_json::json;
        match file {
            File::Reviews => {
                json!({"target": "t", "arm": "b", "reviewer": "r", "run": 1, "findings": [], "model": "m"})
            }
            File::Validations => {
                json!({"arm": "b", "target": "t", "run": 1, "finding": "f", "validated": true, "validator": "v"})
            }
            File::Targets => json!({"target": "t", "pr": {"state": "OPEN"}}),
            File::Verdicts => {
                json!({"item_id": "i", "arm": "b", "verdicts": [{"model": "j", "per_dimension": {"real": 0.5}}]})
            }
            File::Labels => {
                json!({"item_id": "i", "arm": "b", "annotator": "a", "per_dimension": {"real": 0.5}})
            }
            File::Queries => {
                json!({"query_id": "q", "arm": "b", "run": 1, "tools": [], "correct": true})
            }
            File::Scores => {
                json!({"arm": "b", "task": "x", "item": 3, "repeat": 1, "scorer": "s", "score": 1.0, "source": "log"})
            }
            File::Judges => {
                json!({"arm": "b", "item_id": "i", "judge": "j", "per_dimension": {"real": 0.5}})
            }
        }
    }

    /// The call of one line, read through the file's declared reader.
    fn call_of(def: &Def, line: &serde_json::Value) -> Call {
        let (calls, problems) = def.calls(def.name, line.to_string().as_bytes());
        assert!(problems.is_empty(), "{}: {problems:?}", def.name);
        calls.into_iter().next().expect("one line, one call").call
    }

    // The key a file declares is its calls' identity: changing a key field's value makes
    // another call, and changing any other field leaves the call as it was. So the words the
    // reference prints, `collect`'s resume, `merge` and the readers' repeat refusals agree.
    #[test]
    fn each_file_s_key_is_its_call() {
        let all = [
            File::Reviews,
            File::Validations,
            File::Targets,
            File::Verdicts,
            File::Labels,
            File::Queries,
            File::Scores,
            File::Judges,
        ];
        assert_eq!(all.len(), FILES.len());
        for file in all {
            let def = file.def();
            let line = sample(file);
            let call = call_of(def, &line);
            assert_eq!(call.arm().is_some(), def.arm.is_some(), "{}", def.name);
            for (field, value) in line.as_object().unwrap() {
                let mut other = line.clone();
                other[field] = match value {
                    serde_json::Value::Number(n) => (n.as_u64().unwrap_or(0) + 1).into(),
                    serde_json::Value::String(s) => format!("{s}2").into(),
                    _ => continue,
                };
                let changed = call_of(def, &other) != call;
                let keyed = def.key.contains(&field.as_str());
                assert_eq!(changed, keyed, "{}: field `{field}`", def.name);
            }
            for field in def.key {
                assert!(
                    line.get(field).is_some(),
                    "{}: sample lacks {field}",
                    def.name
                );
            }
            // Two lines of one call: the reader refuses the second.
            let twice = format!("{line}\n{line}\n");
            let (calls, problems) = def.calls(def.name, twice.as_bytes());
            assert_eq!((calls.len(), problems.len()), (1, 1), "{}", def.name);
        }
    }

    #[test]
    fn names_are_distinct_and_every_file_with_an_arm_can_be_filed_under_an_unread_label() {
        let mut names: Vec<&str> = FILES.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FILES.len());
        for def in FILES.iter().filter(|d| d.corpus) {
            assert!(def.excluded.contains(&Reason::Refused), "{}", def.name);
            assert_eq!(
                def.arm.is_some(),
                def.excluded.contains(&Reason::LabelUnread),
                "{}",
                def.name
            );
        }
        assert_eq!(by_stem("reviews").unwrap().file, File::Reviews);
        assert!(by_stem("judges").is_none());
        assert_eq!(File::Scores.name(), "scores.jsonl");
    }
}
