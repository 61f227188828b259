//! Agent query traces, `queries.jsonl` (docs/reference.md): one query per line, with the tools the agent
//! ran in order and the evidence each one returned.
//!
//! Unlike review findings there is no "malformed and dropped" level here: a query with a bad
//! field would change every rate it counts in, so any problem refuses the run. [`parse`]
//! collects every problem, each with file, line and field, so `calibench validate` can list
//! them all at once.
//!
//! Evidence is required where a confidence model needs it: a search tool's `hits`, a read's
//! `files` (and `relevant` when it read any), and so on. A tool that failed (`ok: false`) yields
//! no evidence in either model, so it needs none.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Id, Lines, Text};
use crate::error::{InputError, Problems};

/// The tools of docs/reference.md; any other name is `Generic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    Find,
    Grep,
    References,
    Read,
    Discovery,
    Cmake,
    Ctest,
    Git,
    Gh,
    Generic,
}

impl ToolKind {
    pub fn from_name(name: &str) -> Self {
        match name {
            "find" => ToolKind::Find,
            "grep" => ToolKind::Grep,
            "references" => ToolKind::References,
            "read" => ToolKind::Read,
            "discovery" => ToolKind::Discovery,
            "cmake" => ToolKind::Cmake,
            "ctest" => ToolKind::Ctest,
            "git" => ToolKind::Git,
            "gh" => ToolKind::Gh,
            _ => ToolKind::Generic,
        }
    }

    pub fn category(self) -> Category {
        match self {
            ToolKind::Find | ToolKind::Grep | ToolKind::References => Category::Search,
            ToolKind::Read => Category::Read,
            ToolKind::Discovery => Category::Discovery,
            ToolKind::Cmake | ToolKind::Ctest => Category::Verification,
            ToolKind::Git => Category::Git,
            ToolKind::Gh => Category::Ci,
            ToolKind::Generic => Category::Other,
        }
    }
}

/// Evidence categories of the category-max model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Search,
    Read,
    Discovery,
    Verification,
    Git,
    Ci,
    Other,
}

impl Category {
    pub const ALL: [Category; 7] = [
        Category::Search,
        Category::Read,
        Category::Discovery,
        Category::Verification,
        Category::Git,
        Category::Ci,
        Category::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Category::Search => "search",
            Category::Read => "read",
            Category::Discovery => "discovery",
            Category::Verification => "verification",
            Category::Git => "git",
            Category::Ci => "ci",
            Category::Other => "other",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Primary,
    Recovery,
}

/// What a tool returned, by kind. Counts are validated: `relevant ≤ files`,
/// `passed + failed ≤ run`, factors within their range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// find, grep, references, git.
    Hits(u64),
    Read {
        files: u64,
        relevant: u64,
    },
    /// discovery (0..4), gh (0..3).
    Factors(u64),
    Build {
        passed: bool,
    },
    Tests {
        run: u64,
        passed: u64,
        failed: u64,
    },
    /// Generic tools, and tools that failed.
    None,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub kind: ToolKind,
    pub phase: Phase,
    pub attempt: u32,
    pub target: Option<String>,
    pub ok: bool,
    pub evidence: Evidence,
    /// The per-tool score the agent recorded, in [0, 1].
    pub score: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub line: u64,
    pub query_id: String,
    pub arm: String,
    pub run: u32,
    pub query: Option<String>,
    pub first_pass_correct: Option<bool>,
    pub correct: Option<bool>,
    pub error: Option<String>,
    /// The call failed (`status: failed`), with its reason when the line says.
    pub failed: Option<Option<String>>,
    pub tools: Vec<Tool>,
    /// What the query spent, if its line says (`usage`, `elapsed_ms`).
    pub spent: Option<super::usage::Spent>,
}

impl Query {
    /// The call the line records: one query of one arm in one run.
    pub fn call(&self) -> super::call::Call {
        super::call::Call::Query {
            arm: self.arm.as_str().into(),
            query_id: self.query_id.as_str().into(),
            run: self.run,
        }
    }

    /// The trace holds at least one recovery-phase tool (errored ones included): the recorded
    /// agent did go back to look again, so `correct` is the answer after recovery.
    pub fn recovery_recorded(&self) -> bool {
        self.tools.iter().any(|t| t.phase == Phase::Recovery)
    }
}

/// The arm label of a query without one.
pub const RECORDED: &str = "recorded";

/// One line of `queries.jsonl` as written. Its JSON Schema is derived from this type; what a
/// tool's evidence must hold, by tool, is `check_tool`'s.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "One agent query trace.")]
pub struct RawQuery {
    /// Unique per (arm, run).
    pub query_id: Id,
    /// The recorded agent version; `recorded` when absent.
    pub arm: Option<Text>,
    /// Repeat index, 0 when absent.
    #[schemars(range(max = 4294967295u32))]
    pub run: Option<u64>,
    /// The question asked; shown in the report, not replayed.
    pub query: Option<String>,
    /// Was the answer right before any recovery.
    pub first_pass_correct: Option<bool>,
    /// Was the final recorded answer right.
    pub correct: Option<bool>,
    /// The agent failed.
    pub error: Option<String>,
    /// `failed`: the call failed (`collect` records a call whose retries ran out so, with its
    /// `reason`): a failed call, counted in `inputs.calls`. `ok` when absent.
    pub status: Option<super::reviews::Status>,
    /// Why a failed call failed.
    pub reason: Option<String>,
    /// Tool invocations in order (`[]` for a query that ran none).
    pub tools: Vec<RawTool>,
    /// What the query's calls spent: tokens read and written and their cost
    /// (docs/reference.md, "Cost and latency").
    pub usage: Option<super::usage::Usage>,
    /// The query's wall time in milliseconds; `collect` records it.
    pub elapsed_ms: Option<super::usage::Amount>,
}

/// One tool invocation as written, with every evidence field any tool takes.
#[derive(Deserialize, JsonSchema)]
pub struct RawTool {
    /// `find`, `grep`, `references`, `read`, `discovery`, `cmake`, `ctest`, `git`, `gh`; any
    /// other name is a generic tool.
    pub tool: Text,
    /// `primary` (default) or `recovery`: whether the tool ran before or after the recorded
    /// recovery gate fired.
    pub phase: Option<Phase>,
    /// The recovery attempt, from 1.
    #[schemars(range(min = 1, max = 4294967295u32))]
    pub attempt: Option<u64>,
    /// The search term or path.
    pub target: Option<String>,
    /// false for a tool that failed (it then needs no evidence); true when absent.
    pub ok: Option<bool>,
    /// Search tools and git: how many hits.
    pub hits: Option<u64>,
    /// read: how many files it returned.
    pub files: Option<u64>,
    /// read: true, false, or how many of the files were relevant.
    pub relevant: Option<Relevant>,
    /// discovery (0 to 4) and gh (0 to 3).
    #[schemars(range(max = 4))]
    pub factors: Option<u64>,
    /// cmake: did the build pass.
    pub passed: Option<bool>,
    /// ctest: how many tests ran.
    pub tests_run: Option<u64>,
    /// ctest: how many passed (one of `tests_passed` and `tests_failed` is required).
    pub tests_passed: Option<u64>,
    /// ctest: how many failed.
    pub tests_failed: Option<u64>,
    /// The per-tool score the agent recorded; computed from the evidence when absent.
    #[schemars(range(min = 0, max = 1))]
    pub score: Option<f64>,
}

/// A read's `relevant`: all or none of the files, or how many.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(untagged, expecting = "must be true, false or a count of the files")]
pub enum Relevant {
    All(bool),
    Count(u64),
}

const LINES: Lines = Lines {
    holds: "each line holds one query: {\"query_id\", \"tools\": [{\"tool\", \"target\", ...}], \"first_pass_correct\", \"correct\"}",
    hints: &[
        ("tools", "write \"tools\": [] for a query that ran no tool"),
        (
            "tools.relevant",
            "true, false, or how many of the files were relevant",
        ),
    ],
};

/// Parses every query, collecting every problem. A `query_id` seen twice in one (arm, run) is an
/// error naming the first line.
pub fn parse(name: &str, bytes: &[u8]) -> (Vec<Query>, Problems) {
    let repeats: super::Repeats<Query> = super::Repeats {
        field: "query_id",
        hint: Some("a query id is unique per (arm, run); repeats of a query go in another `run`"),
        key: Query::call,
        says: |q| {
            format!(
                "query `{}` appears a second time in arm `{}`, run {}",
                q.query_id, q.arm, q.run
            )
        },
    };
    super::parse_unique((name, bytes), &LINES, check_query, repeats)
}

/// The queries recorded under `source`, in file order. A label no query carries is an error
/// listing the labels there are: a typo in `source` must not come out as an empty arm.
pub fn select<'a>(
    name: &str,
    all: &'a [Query],
    arm: &str,
    source: &str,
) -> Result<Vec<&'a Query>, InputError> {
    let chosen: Vec<&Query> = all.iter().filter(|q| q.arm == source).collect();
    if chosen.is_empty() && !all.is_empty() {
        let labels = super::label_list(all.iter().map(|q| q.arm.as_str()));
        return Err(InputError::new(
            name,
            format!("arm `{arm}` reads recorded arm `{source}`, but no query carries that label"),
        )
        .field("field `arm`")
        .hint(format!(
            "the file's labels: {labels}; set `source` in [arms.{arm}] (a query without `arm` is `{RECORDED}`)"
        )));
    }
    Ok(chosen)
}

fn check_query(name: &str, line: u64, raw: RawQuery) -> Result<Query, InputError> {
    let err = |field: &str, problem: String| super::field_error(name, line, field, problem);
    let run = super::repeat_index(name, line, raw.run)?;
    let tools = raw
        .tools
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            check_tool(t, &|key, problem| {
                err(&format!("tools[{i}].{key}"), problem)
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Query {
        line,
        query_id: raw.query_id.0,
        arm: raw.arm.map_or_else(|| RECORDED.to_string(), |a| a.0),
        run,
        query: raw.query,
        first_pass_correct: raw.first_pass_correct,
        correct: raw.correct,
        error: raw.error,
        failed: (raw.status == Some(super::reviews::Status::Failed)).then_some(raw.reason),
        tools,
        spent: super::usage::Spent::of(raw.usage, raw.elapsed_ms),
    })
}

/// A tool's values checked against each other: the evidence its kind needs when it ran, counts
/// that add up, factors within the tool's range. `err` names a key of this tool.
fn check_tool(raw: RawTool, err: &dyn Fn(&str, String) -> InputError) -> Result<Tool, InputError> {
    let name = raw.tool.0.trim().to_string();
    let kind = ToolKind::from_name(&name);
    let attempt = match raw.attempt {
        None => 1,
        Some(0) => {
            return Err(err(
                "attempt",
                "must be 1 or more (attempts count from 1)".into(),
            ))
        }
        Some(a) => u32::try_from(a).map_err(|_| err("attempt", format!("{a} is too large")))?,
    };
    if let Some(s) = raw.score.filter(|s| !(0.0..=1.0).contains(s)) {
        return Err(err("score", format!("must be a number in [0, 1], not {s}")));
    }
    let ok = raw.ok.unwrap_or(true);

    // Evidence: required for a tool that ran, since both models read it.
    let need = |key: &str, value: Option<u64>| -> Result<u64, InputError> {
        value.ok_or_else(|| {
            err(
                key,
                format!("is missing: a `{name}` that ran needs `{key}`"),
            )
            .hint("mark a tool that failed with \"ok\": false; it then needs no evidence")
        })
    };
    let evidence = if !ok {
        Evidence::None
    } else {
        match kind {
            ToolKind::Find | ToolKind::Grep | ToolKind::References | ToolKind::Git => {
                Evidence::Hits(need("hits", raw.hits)?)
            }
            ToolKind::Read => {
                let files = need("files", raw.files)?;
                let relevant = match raw.relevant {
                    None if files == 0 => 0,
                    None => {
                        return Err(err(
                            "relevant",
                            format!(
                                "is missing: the read returned {}",
                                crate::text::count(files, "file", "files")
                            ),
                        )
                        .hint("true, false, or how many of the files were relevant"))
                    }
                    Some(Relevant::All(true)) => files,
                    Some(Relevant::All(false)) => 0,
                    Some(Relevant::Count(r)) if r <= files => r,
                    Some(Relevant::Count(r)) => {
                        return Err(err(
                            "relevant",
                            format!(
                                "must be true, false or a count from 0 to files ({files}), not {r}"
                            ),
                        ))
                    }
                };
                Evidence::Read { files, relevant }
            }
            ToolKind::Discovery | ToolKind::Gh => {
                let most = if kind == ToolKind::Discovery { 4 } else { 3 };
                let factors = need("factors", raw.factors)?;
                if factors > most {
                    return Err(err(
                        "factors",
                        format!("{factors} is out of range: a `{name}` has 0 to {most} factors"),
                    ));
                }
                Evidence::Factors(factors)
            }
            ToolKind::Cmake => match raw.passed {
                Some(passed) => Evidence::Build { passed },
                None => {
                    return Err(err(
                        "passed",
                        "is missing: a `cmake` that ran needs `passed` (true or false)".into(),
                    ))
                }
            },
            ToolKind::Ctest => {
                let run = need("tests_run", raw.tests_run)?;
                let (passed, failed) = match (raw.tests_passed, raw.tests_failed) {
                    (Some(p), Some(x)) => (p, x),
                    (Some(p), None) if p <= run => (p, run - p),
                    (None, Some(x)) if x <= run => (run - x, x),
                    (None, None) if run == 0 => (0, 0),
                    (None, None) => {
                        return Err(err(
                            "tests_passed",
                            format!(
                                "is missing, and so is tests_failed: {} ran, with what result?",
                                crate::text::count(run, "test", "tests")
                            ),
                        ))
                    }
                    (Some(p), None) => (p, 0),
                    (None, Some(x)) => (0, x),
                };
                if passed.saturating_add(failed) > run {
                    return Err(err(
                        "tests_run",
                        format!(
                            "{run} is fewer than tests_passed ({passed}) + tests_failed ({failed})"
                        ),
                    ));
                }
                Evidence::Tests {
                    run,
                    passed,
                    failed,
                }
            }
            ToolKind::Generic => Evidence::None,
        }
    };
    Ok(Tool {
        kind,
        phase: raw.phase.unwrap_or(Phase::Primary),
        attempt,
        target: raw.target.filter(|t| !t.trim().is_empty()),
        ok,
        evidence,
        score: raw.score,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Result<Query, InputError> {
        // One JSON Lines record, written over several lines here for reading.
        let line = line.replace('\n', " ");
        let (mut qs, problems) = parse("q.jsonl", line.as_bytes());
        match problems.into_kept().pop() {
            Some(p) => Err(p),
            None => Ok(qs.remove(0)),
        }
    }

    #[test]
    fn reads_a_full_trace_with_defaults() {
        let q = one(
            r#"{"query_id": "q1", "query": "where is X?", "first_pass_correct": true, "tools": [
            {"tool": "find", "target": "X", "hits": 3},
            {"tool": "read", "target": "src/X.h", "files": 2, "relevant": 1, "score": 0.7},
            {"tool": "grep", "target": "X", "ok": false},
            {"tool": "bazel", "phase": "recovery", "attempt": 2},
            {"tool": "ctest", "tests_run": 10, "tests_failed": 1},
            {"tool": "read", "files": 3, "relevant": true}
        ]}"#,
        )
        .unwrap();
        assert_eq!((q.arm.as_str(), q.run), (RECORDED, 0));
        assert_eq!(q.first_pass_correct, Some(true));
        assert_eq!(q.correct, None);
        assert_eq!(q.tools[0].evidence, Evidence::Hits(3));
        assert_eq!(q.tools[0].phase, Phase::Primary);
        assert_eq!(q.tools[0].attempt, 1);
        assert_eq!(
            q.tools[1].evidence,
            Evidence::Read {
                files: 2,
                relevant: 1
            }
        );
        assert_eq!(q.tools[1].score, Some(0.7));
        assert_eq!(q.tools[2].evidence, Evidence::None);
        assert!(!q.tools[2].ok);
        assert_eq!(q.tools[3].kind, ToolKind::Generic);
        assert_eq!((q.tools[3].phase, q.tools[3].attempt), (Phase::Recovery, 2));
        assert_eq!(
            q.tools[4].evidence,
            Evidence::Tests {
                run: 10,
                passed: 9,
                failed: 1
            }
        );
        assert_eq!(
            q.tools[5].evidence,
            Evidence::Read {
                files: 3,
                relevant: 3
            }
        );
        assert!(q.recovery_recorded());
    }

    #[test]
    fn every_problem_names_line_and_field() {
        // Each row: a line, the field its error names, and words its problem holds.
        let cases = r#"
            {"tools": []} | query_id | is missing
            {"query_id": "q"} | tools | is missing
            {"query_id": "q", "tools": {}} | tools | must be an array
            {"query_id": "q", "run": -1, "tools": []} | run | whole number
            {"query_id": "q", "correct": "yes", "tools": []} | correct | true or false
            {"query_id": "q", "tools": [{"tool": "find"}]} | tools[0].hits | is missing
            {"query_id": "q", "tools": [{"tool": "find", "hits": 2.5}]} | tools[0].hits | whole number
            {"query_id": "q", "tools": [{"tool": "read", "files": 2}]} | tools[0].relevant | is missing
            {"query_id": "q", "tools": [{"tool": "read", "files": 2, "relevant": 3}]} | tools[0].relevant | from 0 to files
            {"query_id": "q", "tools": [{"tool": "discovery", "factors": 5}]} | tools[0].factors | 0 to 4
            {"query_id": "q", "tools": [{"tool": "gh", "factors": 4}]} | tools[0].factors | 0 to 3
            {"query_id": "q", "tools": [{"tool": "cmake"}]} | tools[0].passed | is missing
            {"query_id": "q", "tools": [{"tool": "ctest", "tests_run": 2, "tests_passed": 2, "tests_failed": 1}]} | tools[0].tests_run | fewer than
            {"query_id": "q", "tools": [{"tool": "ctest", "tests_run": 2}]} | tools[0].tests_passed | is missing
            {"query_id": "q", "tools": [{"tool": "git", "hits": 1, "phase": "retry"}]} | tools[0].phase | `retry` is not one of primary, recovery
            {"query_id": "q", "tools": [{"tool": "git", "hits": 1, "attempt": 0}]} | tools[0].attempt | 1 or more
            {"query_id": "q", "tools": [{"tool": "git", "hits": 1, "score": 1.5}]} | tools[0].score | [0, 1]
            {"query_id": "q", "tools": [{"hits": 1}]} | tools[0].tool | is missing
            {"query_id": "q", "tools": [3]} | tools[0] | must be an object"#;
        for case in cases.lines().filter(|l| !l.trim().is_empty()) {
            let [text, field, problem] =
                [0, 1, 2].map(|i| case.split(" | ").nth(i).unwrap().trim());
            let e = one(text).unwrap_err();
            assert_eq!(e.line, Some(1), "{text}");
            assert_eq!(
                e.field.as_deref(),
                Some(format!("field `{field}`").as_str()),
                "{text}"
            );
            assert!(e.problem.contains(problem), "{text}: {}", e.problem);
        }
    }

    #[test]
    fn duplicates_are_refused_per_arm_and_run_and_all_problems_are_listed() {
        let text = r#"{"query_id": "a", "tools": []}

{"query_id": "a", "run": 1, "tools": []}
{"query_id": "a", "arm": "v2", "tools": []}
{"query_id": "a", "tools": []}
not json
"#;
        let (qs, problems) = parse("q.jsonl", text.as_bytes());
        assert_eq!(qs.len(), 3);
        let lines: Vec<Option<u64>> = problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [Some(5), Some(6)]);
        assert!(problems[0].problem.contains("first on line 1"));
    }

    #[test]
    fn failed_tools_need_no_evidence() {
        let q = one(r#"{"query_id": "q", "tools": [{"tool": "read", "ok": false}, {"tool": "cmake", "ok": false}]}"#).unwrap();
        assert!(q
            .tools
            .iter()
            .all(|t| t.evidence == Evidence::None && !t.ok));
    }
}
