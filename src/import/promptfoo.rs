//! promptfoo output (docs/guides/importing-logs.md): `promptfoo eval -o results.json`, results version 3. One file
//! holds one cell per prompt × provider; the cell read is chosen with `--pick`, and a file with
//! several cells refuses to guess.
//!
//! item = the test case's `description`, else `vars:` and the first 16 hex digits of the
//! SHA-256 of its `vars` as sorted JSON (never `testIdx`, which numbers rows, not questions); a
//! description that test cases of different vars share is followed by ` [vars:…]`, so that two
//! questions never become repeats of one;
//! repeat = the test case's rows in the cell numbered 1, 2, … by `testIdx`; scorer = each
//! `gradingResult.componentResults[].assertion`'s `metric`, else its `type` (a second one of a
//! name in a row is `name #2`); score = the component's `score`; confidence = the geometric mean
//! of the response's token probabilities, exp(mean `response.logProbs`), when present. A row
//! whose `failureReason` is 2 (an error, not a failed assertion) carries `score: 0` and
//! `success: false`: every scorer of its test case is missing for it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{distinct, score_of, shown, Draft, Options, Read, Scored, Tally, Values};
use crate::corpus::ItemId;
use crate::error::{Error, InputError};

/// The results version read.
pub const VERSION: u64 = 3;

/// promptfoo's `ResultFailureReason.ERROR`.
const FAILURE_ERROR: u64 = 2;

/// A row's keys that are mapped.
const ROW_MAPPED: [&str; 10] = [
    "cost",
    "latencyMs",
    "testCase",
    "testIdx",
    "provider",
    "prompt",
    "gradingResult",
    "failureReason",
    "response",
    "vars",
];

/// A prompt × provider cell: its provider (by label, else id), the provider's id, and its
/// prompt label.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Cell {
    provider: String,
    provider_id: String,
    prompt: String,
}

impl Cell {
    fn of(row: &Value) -> Cell {
        let (provider, provider_id) = match row.get("provider") {
            Some(Value::String(s)) => (s.clone(), s.clone()),
            Some(p) => {
                let id = p.get("id").and_then(Value::as_str).unwrap_or("");
                let label = p
                    .get("label")
                    .and_then(Value::as_str)
                    .filter(|l| !l.is_empty())
                    .unwrap_or(id);
                (label.to_string(), id.to_string())
            }
            None => (String::new(), String::new()),
        };
        let prompt = row
            .pointer("/prompt/label")
            .or_else(|| row.pointer("/prompt/raw"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        Cell {
            provider,
            provider_id,
            prompt,
        }
    }

    /// Whether `--pick` names this cell: by its provider's label or id, its prompt label, or
    /// the two together.
    fn matches(&self, pick: &str) -> bool {
        pick == self.provider
            || (!self.provider_id.is_empty() && pick == self.provider_id)
            || pick == self.prompt
            || pick == self.label()
            || pick == format!("{} | {}", self.provider_id, self.prompt)
    }

    fn label(&self) -> String {
        format!("{} | {}", self.provider, self.prompt)
    }
}

/// Reads one promptfoo results file.
pub fn read(path: &Path, options: &Options, tally: &mut Tally) -> Result<Vec<Draft>, Error> {
    let name = shown(path);
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    let file: Value = serde_json::from_slice(&bytes).map_err(|e| {
        InputError::new(&name, format!("is not readable promptfoo output: {e}"))
            .at_line(e.line() as u64)
    })?;
    let results = file.get("results").unwrap_or(&Value::Null);
    match results.get("version") {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => {
            return Err(InputError::new(
                &name,
                format!("promptfoo results version {v}; calibench reads version {VERSION}"),
            )
            .field("results.version")
            .hint("write the file again with a current promptfoo: promptfoo eval -o results.json")
            .into())
        }
        None => {
            return Err(InputError::new(
                &name,
                "has no results.version: is it `promptfoo eval -o` output?",
            )
            .field("results.version")
            .into())
        }
    }
    let Some(rows) = results.get("results").and_then(Value::as_array) else {
        return Err(InputError::new(&name, "holds no result rows")
            .field("results.results")
            .into());
    };
    let task = file
        .pointer("/config/description")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
        .map_or_else(
            || {
                path.file_stem()
                    .map_or_else(|| "promptfoo".into(), |s| s.to_string_lossy().into_owned())
            },
            str::to_string,
        );
    let cells: BTreeSet<Cell> = rows.iter().map(Cell::of).collect();
    let listed = || {
        cells
            .iter()
            .map(|c| format!("`{}`", c.label()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: Vec<&Cell> = match &options.pick {
        Some(pick) => cells.iter().filter(|c| c.matches(pick)).collect(),
        None => cells.iter().collect(),
    };
    let cell = match (chosen.as_slice(), &options.pick) {
        ([one], _) => (*one).clone(),
        ([], Some(pick)) => {
            return Err(InputError::new(&name, format!("no prompt × provider cell is `{pick}`; the file holds {}", listed()))
                .field("--pick")
                .into())
        }
        (_, Some(pick)) => {
            return Err(InputError::new(&name, format!("`{pick}` names more than one cell: {}", listed()))
                .field("--pick")
                .hint("name the cell whole: `PROVIDER | PROMPT LABEL`")
                .into())
        }
        (_, None) => {
            return Err(InputError::new(&name, format!("the file holds {} prompt × provider cells: {}", cells.len(), listed()))
                .field("--pick")
                .hint("choose the arm's cell with --pick PROVIDER (or PROMPT LABEL, or `PROVIDER | PROMPT LABEL`)")
                .into())
        }
    };
    // A description is free text, and two test cases may share one (with different vars):
    // such a description is told apart by its vars, so that two questions are never read as
    // repeats of one.
    let mut vars_of: BTreeMap<&str, BTreeSet<Option<String>>> = BTreeMap::new();
    for row in rows.iter().filter(|r| Cell::of(r) == cell) {
        if let Some(d) = description(row) {
            vars_of.entry(d).or_default().insert(vars_hash(row));
        }
    }
    let shared: BTreeSet<&str> = vars_of
        .iter()
        .filter(|(_, vars)| vars.len() > 1)
        .map(|(d, _)| *d)
        .collect();
    if !shared.is_empty() {
        tally.notes.push(format!(
            "{name}: {} {} shared by test cases with different vars ({}): each such test case's item is its description and `[vars:…]`, a hash of its vars",
            shared.len(),
            if shared.len() == 1 { "description is" } else { "descriptions are" },
            crate::text::first_few(shared.iter().map(|d| format!("`{d}`")), 3),
        ));
    }
    // The cell's rows by test case, each test case's rows in testIdx order: its repeats.
    let mut by_item: BTreeMap<ItemId, Vec<(u64, usize)>> = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        if Cell::of(row) != cell {
            continue;
        }
        let record = format!("results.results[{i}]");
        let item = item_of(row, &shared).ok_or_else(|| {
            InputError::new(
                format!("{name}: {record}"),
                "a row has neither a test case description nor vars",
            )
            .field("testCase")
        })?;
        let test = row
            .get("testIdx")
            .and_then(Value::as_u64)
            .unwrap_or(i as u64);
        by_item.entry(item).or_default().push((test, i));
    }
    let mut drafts = Vec::new();
    for (item, mut found) in by_item {
        found.sort_unstable();
        for (n, &(_, i)) in found.iter().enumerate() {
            let row = &rows[i];
            let source = format!("{name}: results.results[{i}]");
            tally.samples += 1;
            if let Some(o) = row.as_object() {
                for key in o.keys().filter(|k| !ROW_MAPPED.contains(&k.as_str())) {
                    tally.unmapped(format!("row.{key}"));
                }
            }
            let template = Draft {
                task: task.clone(),
                item: item.clone(),
                repeat: n as u32 + 1,
                scorer: String::new(),
                value: Scored::Missing(String::new()),
                confidence: confidence(row, tally),
                correct: None,
                source,
                usage: usage(row, tally),
                elapsed_ms: super::amount(row.get("latencyMs"), 1.0, "row.latencyMs", tally),
            };
            drafts.extend(row_scores(row, &template, tally));
        }
    }
    Ok(drafts)
}

/// A test case's id: its description (with its vars' hash when test cases of other vars share
/// the description, `shared`), else the hash of its vars.
fn item_of(row: &Value, shared: &BTreeSet<&str>) -> Option<ItemId> {
    match (description(row), vars_hash(row)) {
        (Some(d), Some(hex)) if shared.contains(d) => {
            Some(ItemId::Text(format!("{d} [vars:{hex}]")))
        }
        (Some(d), _) => Some(ItemId::Text(d.to_string())),
        (None, Some(hex)) => Some(ItemId::Text(format!("vars:{hex}"))),
        (None, None) => None,
    }
}

/// A row's test case description, when it has a non-blank one.
fn description(row: &Value) -> Option<&str> {
    row.pointer("/testCase/description")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
}

/// The first 16 hex digits of the SHA-256 of a row's vars as sorted JSON.
fn vars_hash(row: &Value) -> Option<String> {
    let vars = row.pointer("/testCase/vars").or_else(|| row.get("vars"))?;
    // serde_json's maps are sorted by key, so equal vars print equal.
    let digest = Sha256::digest(serde_json::to_string(vars).ok()?.as_bytes());
    Some(digest.iter().take(8).map(|b| format!("{b:02x}")).collect())
}

/// What the provider call cost, as promptfoo records it: `cost`, and
/// `response.tokenUsage.{prompt, completion}`.
fn usage(row: &Value, tally: &mut Tally) -> Option<crate::corpus::usage::Usage> {
    super::usage_from(
        [
            (
                row.pointer("/response/tokenUsage/prompt"),
                "response.tokenUsage.prompt",
            ),
            (
                row.pointer("/response/tokenUsage/completion"),
                "response.tokenUsage.completion",
            ),
            (row.get("cost"), "row.cost"),
        ],
        tally,
    )
}

/// exp(mean log-probability) of the response's tokens.
fn confidence(row: &Value, tally: &mut Tally) -> Option<f64> {
    let probs = row.pointer("/response/logProbs")?.as_array()?;
    let logs: Option<Vec<f64>> = probs.iter().map(Value::as_f64).collect();
    match logs {
        Some(l) if !l.is_empty() && l.iter().all(|x| *x <= 0.0) => {
            Some((l.iter().sum::<f64>() / l.len() as f64).exp())
        }
        _ => {
            tally.unmapped("response.logProbs (not a list of log-probabilities)");
            None
        }
    }
}

/// The scorer name of an assertion: its metric, else its type.
fn assertion_name(a: &Value) -> String {
    a.get("metric")
        .and_then(Value::as_str)
        .filter(|m| !m.trim().is_empty())
        .or_else(|| a.get("type").and_then(Value::as_str))
        .unwrap_or("assertion")
        .to_string()
}

/// One row's scores: one per graded assertion, or every assertion of its test case missing
/// when the row is an error.
fn row_scores(row: &Value, template: &Draft, tally: &mut Tally) -> Vec<Draft> {
    let asserted: Vec<String> = row
        .pointer("/testCase/assert")
        .and_then(Value::as_array)
        .map(|a| distinct(a.iter().map(assertion_name)))
        .unwrap_or_default();
    let error = row.get("failureReason").and_then(Value::as_u64) == Some(FAILURE_ERROR);
    let components = row
        .pointer("/gradingResult/componentResults")
        .and_then(Value::as_array);
    let (Some(components), false) = (components, error) else {
        let why = if error {
            "the call errored (failureReason 2)"
        } else {
            "no grading result"
        };
        return asserted
            .into_iter()
            .map(|scorer| Draft {
                scorer,
                value: Scored::Missing(why.into()),
                ..template.clone()
            })
            .collect();
    };
    let names = distinct(
        components
            .iter()
            .map(|c| assertion_name(c.get("assertion").unwrap_or(&Value::Null))),
    );
    let mut out = Vec::new();
    for (c, scorer) in components.iter().zip(names) {
        if let Some(o) = c.as_object() {
            for key in o
                .keys()
                .filter(|k| !["score", "pass", "assertion"].contains(&k.as_str()))
            {
                tally.unmapped(format!("componentResults.{key}"));
            }
        }
        // A score that is there but not a number is named, as the other readers name it; its
        // `pass` is not kept without the score it goes with.
        let value = match c.get("score") {
            None => Scored::Missing("no score".into()),
            Some(Value::Null) => Scored::Missing("score is null".into()),
            Some(v) => match score_of(v, Values::Plain, tally) {
                Read::Number(x) => Scored::Value(x),
                Read::Unreadable(why) => Scored::Missing(format!("score {why}")),
                Read::NotPerItem => {
                    Scored::Missing(format!("score is {}, not a number", crate::corpus::kind(v)))
                }
            },
        };
        let correct = match value {
            Scored::Value(_) => c.get("pass").and_then(Value::as_bool),
            Scored::Missing(_) => None,
        };
        out.push(Draft {
            scorer,
            value,
            correct,
            ..template.clone()
        });
    }
    if row.pointer("/gradingResult/score").is_some() {
        tally.unmapped(
            "gradingResult.score (the test case's aggregate; each assertion is imported)",
        );
    }
    out
}
