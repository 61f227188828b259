//! Plain tables (docs/guides/importing-logs.md): a CSV or JSON Lines file with `item` and `score`, and optionally
//! `scorer` (default `score`), `repeat` (default 1), `confidence`, `correct` and `task` (default:
//! the file's name without extension). An empty score cell (CSV) or `null` (JSON Lines) is a
//! missing score. In a CSV every item id is text; in JSON Lines its type is kept.

use std::path::Path;

use serde_json::Value;

use super::{boolean, number, score_of, shown, Draft, Options, Read, Scored, Tally, Values};
use crate::corpus::ItemId;
use crate::corpus::{nonblank_lines, object};
use crate::error::{Error, InputError};
use crate::input::{csv_with_header, for_each_row};

const COLUMNS: [&str; 7] = [
    "item",
    "score",
    "scorer",
    "repeat",
    "confidence",
    "correct",
    "task",
];
const HEADER: &str = "item,score[,scorer,repeat,confidence,correct,task]";

/// Reads one CSV table.
pub fn read_csv(path: &Path, _: &Options, tally: &mut Tally) -> Result<Vec<Draft>, Error> {
    read(path, true, tally)
}

/// Reads one JSON Lines table.
pub fn read_jsonl(path: &Path, _: &Options, tally: &mut Tally) -> Result<Vec<Draft>, Error> {
    read(path, false, tally)
}

fn read(path: &Path, csv: bool, tally: &mut Tally) -> Result<Vec<Draft>, Error> {
    let name = shown(path);
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    let default_task = path
        .file_stem()
        .map_or_else(|| "scores".into(), |s| s.to_string_lossy().into_owned());
    let mut drafts = Vec::new();
    if csv {
        let (mut reader, header) = csv_with_header(&name, &bytes, HEADER)?;
        for required in ["item", "score"] {
            if !header.iter().any(|h| h == required) {
                return Err(InputError::new(
                    &name,
                    format!("the header has no `{required}` column"),
                )
                .at_line(1)
                .hint(format!("the header is {HEADER}"))
                .into());
            }
        }
        for h in header.iter().filter(|h| !COLUMNS.contains(&h.as_str())) {
            tally.unmapped(format!("column {h}"));
        }
        for_each_row(&name, &mut reader, |record, line| {
            let cell = |c: &str| {
                header
                    .iter()
                    .position(|h| h == c)
                    .and_then(|i| record.get(i))
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
            };
            let value = |c: &str| cell(c).map(|v| Value::String(v.to_string()));
            let item = cell("item").map(|i| ItemId::Text(i.to_string()));
            drafts.push(draft(
                &name,
                line,
                &default_task,
                item,
                &|c| value(c),
                tally,
            )?);
            Ok(())
        })?;
    } else {
        for (line, raw) in nonblank_lines(&bytes) {
            let (_, o) = object(&name, line, raw, "each line holds {\"item\", \"score\", …}")?;
            for key in o.keys().filter(|k| !COLUMNS.contains(&k.as_str())) {
                tally.unmapped(format!("key {key}"));
            }
            let item = o.get("item").and_then(ItemId::from_json);
            let get = |c: &str| o.get(c).filter(|v| !v.is_null()).cloned();
            drafts.push(draft(&name, line, &default_task, item, &get, tally)?);
        }
    }
    Ok(drafts)
}

/// One row's draft; `get` reads a column (absent or empty: `None`).
fn draft(
    name: &str,
    line: u64,
    default_task: &str,
    item: Option<ItemId>,
    get: &dyn Fn(&str) -> Option<Value>,
    tally: &mut Tally,
) -> Result<Draft, InputError> {
    let err = |field: &str, problem: String| {
        InputError::new(name, problem)
            .at_line(line)
            .field(field.to_string())
    };
    tally.samples += 1;
    let item = item.ok_or_else(|| {
        err(
            "item",
            "an item id must be a whole number or non-blank text".into(),
        )
    })?;
    let value = match get("score") {
        None => Scored::Missing("no score".into()),
        Some(v) => match score_of(&v, Values::LmEval, tally) {
            Read::Number(x) => Scored::Value(x),
            Read::NotPerItem | Read::Unreadable(_) => {
                return Err(err(
                    "score",
                    format!("{v} is not a score: write a number, or leave it empty when missing"),
                ))
            }
        },
    };
    let repeat = match get("repeat") {
        None => 1,
        Some(v) => number(&v)
            .filter(|r| r.fract() == 0.0 && *r >= 1.0 && *r <= f64::from(u32::MAX))
            .map(|r| r as u32)
            .ok_or_else(|| err("repeat", format!("{v} is not a repeat number (1, 2, …)")))?,
    };
    let confidence = match get("confidence") {
        None => None,
        Some(v) => Some(
            number(&v)
                .filter(|c| (0.0..=1.0).contains(c))
                .ok_or_else(|| err("confidence", format!("{v} is not a number in [0, 1]")))?,
        ),
    };
    let correct = match get("correct") {
        None => None,
        Some(v) => Some(
            boolean(&v).ok_or_else(|| err("correct", format!("{v} is not true/false or 1/0")))?,
        ),
    };
    let text = |c: &str| -> Result<Option<String>, InputError> {
        match get(c) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s)),
            Some(v) => Err(err(c, format!("{v} must be non-blank text"))),
        }
    };
    Ok(Draft {
        task: text("task")?.unwrap_or_else(|| default_task.to_string()),
        item,
        repeat,
        scorer: text("scorer")?.unwrap_or_else(|| "score".into()),
        value,
        confidence,
        correct,
        source: format!("{name}:{line}"),
        usage: None,
        elapsed_ms: None,
    })
}
