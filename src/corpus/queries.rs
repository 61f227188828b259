//! Agent query traces, `queries.jsonl` (SPEC §2.2): one query per line, with the tools the agent
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

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::InputError;

/// The tools of SPEC §2.2; any other name is `Generic`.
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

/// Evidence categories of the category-max model (SPEC §2.2).
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
    pub tools: Vec<Tool>,
}

impl Query {
    /// The trace holds at least one recovery-phase tool (errored ones included): the recorded
    /// agent did go back to look again, so `correct` is the answer after recovery.
    pub fn recovery_recorded(&self) -> bool {
        self.tools.iter().any(|t| t.phase == Phase::Recovery)
    }
}

/// The arm label of a query without one.
pub const RECORDED: &str = "recorded";

const HINT: &str = "each line holds one query: {\"query_id\", \"tools\": [{\"tool\", \"target\", ...}], \"first_pass_correct\", \"correct\"}";

/// Parses every query, collecting every problem. A `query_id` seen twice in one (arm, run) is an
/// error naming the first line.
pub fn parse(name: &str, bytes: &[u8]) -> (Vec<Query>, Vec<InputError>) {
    let mut queries = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashMap<(String, u32, String), u64> = HashMap::new();
    for object in super::objects(name, bytes, HINT) {
        match object.and_then(|(line, o)| parse_query(name, line, &o)) {
            Ok(q) => {
                let key = (q.arm.clone(), q.run, q.query_id.clone());
                if let Some(first) = seen.get(&key) {
                    problems.push(
                        InputError::new(
                            name,
                            format!(
                                "query `{}` appears a second time in arm `{}`, run {} (first on line {first})",
                                q.query_id, q.arm, q.run
                            ),
                        )
                        .at_line(q.line)
                        .field("field `query_id`")
                        .hint("a query id is unique per (arm, run); repeats of a query go in another `run`"),
                    );
                } else {
                    seen.insert(key, q.line);
                    queries.push(q);
                }
            }
            Err(e) => problems.push(e),
        }
    }
    (queries, problems)
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

/// Field access on one line's object, with errors that name the line and the field.
struct Line<'a> {
    name: &'a str,
    line: u64,
}

impl Line<'_> {
    fn err(&self, field: &str, problem: impl Into<String>) -> InputError {
        InputError::new(self.name, problem)
            .at_line(self.line)
            .field(format!("field `{field}`"))
    }

    fn string(
        &self,
        o: &Map<String, Value>,
        key: &str,
        field: &str,
    ) -> Result<Option<String>, InputError> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(field, format!("must be a string, not {other}"))),
        }
    }

    fn bool(
        &self,
        o: &Map<String, Value>,
        key: &str,
        field: &str,
    ) -> Result<Option<bool>, InputError> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.err(field, format!("must be true or false, not {other}"))),
        }
    }

    fn count(
        &self,
        o: &Map<String, Value>,
        key: &str,
        field: &str,
    ) -> Result<Option<u64>, InputError> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.err(field, format!("must be a whole number ≥ 0, not {v}"))),
        }
    }
}

fn parse_query(name: &str, line: u64, o: &Map<String, Value>) -> Result<Query, InputError> {
    let at = Line { name, line };
    let query_id = match o.get("query_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(_)) => return Err(at.err("query_id", "is empty")),
        Some(other) => return Err(at.err("query_id", format!("must be a string, not {other}"))),
        None => return Err(at.err("query_id", "is missing")),
    };
    let arm = match at.string(o, "arm", "arm")? {
        Some(a) if a.trim().is_empty() => return Err(at.err("arm", "is empty")),
        Some(a) => a,
        None => RECORDED.to_string(),
    };
    let run = match at.count(o, "run", "run")? {
        None => 0,
        Some(r) => u32::try_from(r)
            .map_err(|_| at.err("run", format!("{r} is too large for a repeat index")))?,
    };
    let tools = match o.get("tools") {
        Some(Value::Array(ts)) => ts
            .iter()
            .enumerate()
            .map(|(i, t)| parse_tool(&at, i, t))
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(at.err(
                "tools",
                format!("must be an array of tool invocations, not {other}"),
            ))
        }
        None => {
            return Err(at
                .err("tools", "is missing")
                .hint("write \"tools\": [] for a query that ran no tool"))
        }
    };
    Ok(Query {
        line,
        query_id,
        arm,
        run,
        query: at.string(o, "query", "query")?,
        first_pass_correct: at.bool(o, "first_pass_correct", "first_pass_correct")?,
        correct: at.bool(o, "correct", "correct")?,
        error: at.string(o, "error", "error")?,
        tools,
    })
}

fn parse_tool(at: &Line, i: usize, v: &Value) -> Result<Tool, InputError> {
    let f = |key: &str| format!("tools[{i}].{key}");
    let Value::Object(o) = v else {
        return Err(at.err(
            &format!("tools[{i}]"),
            format!("must be an object, not {v}"),
        ));
    };
    let name = match o.get("tool") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::String(_)) => return Err(at.err(&f("tool"), "is empty")),
        Some(other) => return Err(at.err(&f("tool"), format!("must be a string, not {other}"))),
        None => return Err(at.err(&f("tool"), "is missing")),
    };
    let kind = ToolKind::from_name(&name);
    let phase = match at.string(o, "phase", &f("phase"))?.as_deref() {
        None | Some("primary") => Phase::Primary,
        Some("recovery") => Phase::Recovery,
        Some(other) => {
            return Err(at.err(
                &f("phase"),
                format!("`{other}` is not a phase: use primary or recovery"),
            ))
        }
    };
    let attempt = match at.count(o, "attempt", &f("attempt"))? {
        None => 1,
        Some(0) => return Err(at.err(&f("attempt"), "must be 1 or more (attempts count from 1)")),
        Some(a) => {
            u32::try_from(a).map_err(|_| at.err(&f("attempt"), format!("{a} is too large")))?
        }
    };
    let ok = at.bool(o, "ok", &f("ok"))?.unwrap_or(true);
    let score = match o.get("score") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(s) if (0.0..=1.0).contains(&s) => Some(s),
            _ => return Err(at.err(&f("score"), format!("must be a number in [0, 1], not {v}"))),
        },
    };
    let target = at
        .string(o, "target", &f("target"))?
        .filter(|t| !t.trim().is_empty());

    // Evidence: required for a tool that ran, since both models read it.
    let need = |key: &str| -> Result<u64, InputError> {
        at.count(o, key, &f(key))?.ok_or_else(|| {
            at.err(
                &f(key),
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
                Evidence::Hits(need("hits")?)
            }
            ToolKind::Read => {
                let files = need("files")?;
                let relevant = match o.get("relevant") {
                    None | Some(Value::Null) if files == 0 => 0,
                    None | Some(Value::Null) => {
                        return Err(at
                            .err(
                                &f("relevant"),
                                format!("is missing: the read returned {files} file(s)"),
                            )
                            .hint("true, false, or how many of the files were relevant"))
                    }
                    Some(Value::Bool(true)) => files,
                    Some(Value::Bool(false)) => 0,
                    Some(v) => match v.as_u64() {
                        Some(r) if r <= files => r,
                        _ => {
                            return Err(at.err(
                                &f("relevant"),
                                format!(
                                "must be true, false or a count from 0 to files ({files}), not {v}"
                            ),
                            ))
                        }
                    },
                };
                Evidence::Read { files, relevant }
            }
            ToolKind::Discovery | ToolKind::Gh => {
                let most = if kind == ToolKind::Discovery { 4 } else { 3 };
                let factors = need("factors")?;
                if factors > most {
                    return Err(at.err(
                        &f("factors"),
                        format!("{factors} is out of range: a `{name}` has 0 to {most} factors"),
                    ));
                }
                Evidence::Factors(factors)
            }
            ToolKind::Cmake => match at.bool(o, "passed", &f("passed"))? {
                Some(passed) => Evidence::Build { passed },
                None => {
                    return Err(at.err(
                        &f("passed"),
                        "is missing: a `cmake` that ran needs `passed` (true or false)",
                    ))
                }
            },
            ToolKind::Ctest => {
                let run = need("tests_run")?;
                let passed = at.count(o, "tests_passed", &f("tests_passed"))?;
                let failed = at.count(o, "tests_failed", &f("tests_failed"))?;
                let (passed, failed) = match (passed, failed) {
                    (Some(p), Some(x)) => (p, x),
                    (Some(p), None) if p <= run => (p, run - p),
                    (None, Some(x)) if x <= run => (run - x, x),
                    (None, None) if run == 0 => (0, 0),
                    (None, None) => {
                        return Err(at.err(
                            &f("tests_passed"),
                            format!("is missing, and so is tests_failed: {run} test(s) ran, with what result?"),
                        ))
                    }
                    (Some(p), None) => (p, 0),
                    (None, Some(x)) => (0, x),
                };
                if passed.saturating_add(failed) > run {
                    return Err(at.err(
                        &f("tests_run"),
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
        phase,
        attempt,
        target,
        ok,
        evidence,
        score,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Result<Query, InputError> {
        // One JSON Lines record, written over several lines here for reading.
        let line = line.replace('\n', " ");
        let (mut qs, mut problems) = parse("q.jsonl", line.as_bytes());
        match problems.pop() {
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
        let cases = [
            (r#"{"tools": []}"#, "field `query_id`", "is missing"),
            (r#"{"query_id": "q"}"#, "field `tools`", "is missing"),
            (
                r#"{"query_id": "q", "tools": {}}"#,
                "field `tools`",
                "must be an array",
            ),
            (
                r#"{"query_id": "q", "run": -1, "tools": []}"#,
                "field `run`",
                "whole number",
            ),
            (
                r#"{"query_id": "q", "correct": "yes", "tools": []}"#,
                "field `correct`",
                "true or false",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "find"}]}"#,
                "field `tools[0].hits`",
                "is missing",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "find", "hits": 2.5}]}"#,
                "field `tools[0].hits`",
                "whole number",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "read", "files": 2}]}"#,
                "field `tools[0].relevant`",
                "is missing",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "read", "files": 2, "relevant": 3}]}"#,
                "field `tools[0].relevant`",
                "from 0 to files",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "discovery", "factors": 5}]}"#,
                "field `tools[0].factors`",
                "0 to 4",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "gh", "factors": 4}]}"#,
                "field `tools[0].factors`",
                "0 to 3",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "cmake"}]}"#,
                "field `tools[0].passed`",
                "is missing",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "ctest", "tests_run": 2, "tests_passed": 2, "tests_failed": 1}]}"#,
                "field `tools[0].tests_run`",
                "fewer than",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "ctest", "tests_run": 2}]}"#,
                "field `tools[0].tests_passed`",
                "is missing",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "git", "hits": 1, "phase": "retry"}]}"#,
                "field `tools[0].phase`",
                "not a phase",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "git", "hits": 1, "attempt": 0}]}"#,
                "field `tools[0].attempt`",
                "1 or more",
            ),
            (
                r#"{"query_id": "q", "tools": [{"tool": "git", "hits": 1, "score": 1.5}]}"#,
                "field `tools[0].score`",
                "[0, 1]",
            ),
            (
                r#"{"query_id": "q", "tools": [{"hits": 1}]}"#,
                "field `tools[0].tool`",
                "is missing",
            ),
            (
                r#"{"query_id": "q", "tools": [3]}"#,
                "field `tools[0]`",
                "must be an object",
            ),
        ];
        for (text, field, problem) in cases {
            let e = one(text).unwrap_err();
            assert_eq!(e.line, Some(1), "{text}");
            assert_eq!(e.field.as_deref(), Some(field), "{text}");
            assert!(e.problem.contains(problem), "{text}: {}", e.problem);
        }
    }

    #[test]
    fn duplicates_are_refused_per_arm_and_run_and_all_problems_are_listed() {
        let text = concat!(
            "{\"query_id\": \"a\", \"tools\": []}\n",
            "\n",
            "{\"query_id\": \"a\", \"run\": 1, \"tools\": []}\n",
            "{\"query_id\": \"a\", \"arm\": \"v2\", \"tools\": []}\n",
            "{\"query_id\": \"a\", \"tools\": []}\n",
            "not json\n",
        );
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
