//! Inspect logs (SPEC §2.7): a `.eval` zip archive (`header.json`, one `samples/<id>_epoch_<n>.json`
//! entry per sample, read one entry at a time so memory does not grow with the samples' text) or
//! a `.json` log (`version`, `status`, `eval`, `results`, `samples`). Log version 2 only.
//!
//! item = `sample.id` (its JSON type kept), repeat = `epoch`, scorer = the score's name (a
//! list-valued score is one scorer per element, `name[0]`; a dict-valued one, one per key,
//! `name/key`), score = its value (`C`/`I`/`P`/`N` → 1/0/0.5/0, `true`/`false` → 1/0),
//! confidence = `Score.metadata.confidence` when a scorer writes one, correct = `C`/`I` or a
//! boolean value. A sample with an `error`, or without one of the log's scorers, is missing for
//! it.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::Path;

use serde_json::Value;

use super::{score_of, shown, Draft, Read, Scored, Tally, Values};
use crate::corpus::scores::ItemId;
use crate::error::{Error, InputError};

/// The only log version read: the one Inspect has written since 2024.
pub const VERSION: u64 = 2;

/// The largest sample entry read from a `.eval` archive (a zip entry can claim any size).
const MAX_ENTRY: u64 = 1 << 30;

/// A sample's keys that are mapped.
const SAMPLE_MAPPED: [&str; 4] = ["id", "epoch", "scores", "error"];

/// One sample's drafts, and why the scorers it lacks are missing.
struct Sample {
    /// The sample's id, repeat and source, kept only when it has no draft to copy them from:
    /// a large log holds one `Sample` per sample until every scorer is known.
    template: Option<Draft>,
    drafts: Vec<Draft>,
    why: &'static str,
}

/// Reads one Inspect log.
pub fn read(path: &Path, tally: &mut Tally) -> Result<Vec<Draft>, Error> {
    let name = shown(path);
    let samples = match path.extension().and_then(|e| e.to_str()) {
        Some("eval") => read_eval(path, &name, tally)?,
        Some("json") => read_json(path, &name, tally)?,
        _ => {
            return Err(InputError::new(
                name,
                "is not an Inspect log: the name ends neither in .eval nor in .json",
            )
            .hint("pass the .eval or .json file Inspect wrote under ./logs")
            .into())
        }
    };
    // The log's scorers: every name any sample was scored under; a sample without one of them
    // is missing for it (never a 0).
    let scorers: BTreeSet<String> = samples
        .iter()
        .flat_map(|s| s.drafts.iter().map(|d| d.scorer.clone()))
        .collect();
    let mut out = Vec::with_capacity(samples.len() * scorers.len());
    for mut s in samples {
        if s.drafts.len() < scorers.len() {
            let template = s.template.take().unwrap_or_else(|| s.drafts[0].clone());
            super::fill_missing(&mut s.drafts, &scorers, &template, s.why);
        }
        out.append(&mut s.drafts);
    }
    Ok(out)
}

fn read_json(path: &Path, name: &str, tally: &mut Tally) -> Result<Vec<Sample>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    let log: Value = serde_json::from_slice(&bytes).map_err(|e| {
        InputError::new(name, format!("is not a readable Inspect log: {e}"))
            .at_line(e.line() as u64)
    })?;
    let task = header(name, &log, tally)?;
    let Some(samples) = log.get("samples").and_then(Value::as_array) else {
        return Err(InputError::new(name, "the log holds no samples")
            .field("samples")
            .hint("Inspect writes samples unless the eval ran with --no-log-samples")
            .into());
    };
    samples
        .iter()
        .enumerate()
        .map(|(i, s)| sample(name, &format!("samples[{i}]"), s, &task, tally).map_err(Error::from))
        .collect()
}

fn read_eval(path: &Path, name: &str, tally: &mut Tally) -> Result<Vec<Sample>, Error> {
    let file = std::fs::File::open(path).map_err(|e| Error::read(path, e))?;
    let unreadable = |e: zip::result::ZipError| -> Error {
        InputError::new(name, format!("is not a readable .eval archive: {e}"))
            .hint("a .eval log is a zip archive; a copy cut short (a full disk, an interrupted download) cannot be read")
            .into()
    };
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(unreadable)?;
    let text = |zip: &mut zip::ZipArchive<_>, i: usize| -> Result<(String, Value), Error> {
        let mut entry = zip.by_index(i).map_err(unreadable)?;
        let entry_name = entry.name().to_string();
        if entry.size() > MAX_ENTRY {
            return Err(InputError::new(
                name,
                format!(
                    "entry {entry_name} claims {} bytes, more than the {MAX_ENTRY} read",
                    entry.size()
                ),
            )
            .into());
        }
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        (&mut entry)
            .take(MAX_ENTRY)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                InputError::new(name, format!("entry {entry_name} cannot be read: {e}"))
            })?;
        let value = serde_json::from_slice(&bytes).map_err(|e| {
            InputError::new(name, format!("entry {entry_name} is not valid JSON: {e}"))
        })?;
        Ok((entry_name, value))
    };
    let index = |zip: &zip::ZipArchive<_>, wanted: &str| zip.index_for_name(wanted);
    let header_at = match (
        index(&zip, "header.json"),
        index(&zip, "_journal/start.json"),
    ) {
        (Some(i), _) => i,
        (None, Some(i)) => {
            tally.notes.push(format!(
                "{name}: no header.json (the eval did not finish); read _journal/start.json"
            ));
            i
        }
        (None, None) => {
            return Err(InputError::new(
                name,
                "the archive has neither header.json nor _journal/start.json",
            )
            .hint("is this an Inspect .eval log?")
            .into())
        }
    };
    let (_, head) = text(&mut zip, header_at)?;
    let task = header(name, &head, tally)?;
    let mut samples = Vec::new();
    for i in 0..zip.len() {
        let is_sample = zip
            .name_for_index(i)
            .is_some_and(|n| n.starts_with("samples/") && n.ends_with(".json"));
        if !is_sample {
            continue;
        }
        let (entry, value) = text(&mut zip, i)?;
        samples.push(sample(name, &entry, &value, &task, tally)?);
    }
    Ok(samples)
}

/// Checks the header's version, notes its status, and returns its task.
fn header(name: &str, log: &Value, tally: &mut Tally) -> Result<String, InputError> {
    match log.get("version") {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => {
            return Err(InputError::new(
                name,
                format!("Inspect log version {v}; calibench reads version {VERSION}"),
            )
            .field("version")
            .hint("re-save the log with a current Inspect (`inspect log convert`)"))
        }
        None => {
            return Err(
                InputError::new(name, "has no version: is it an Inspect log?").field("version"),
            )
        }
    }
    match log.get("status").and_then(Value::as_str) {
        Some("success") | None => {}
        Some(status) => tally.notes.push(format!(
            "{name}: the log's status is `{status}`; the samples it holds are imported"
        )),
    }
    let task = log
        .pointer("/eval/task")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| InputError::new(name, "the log names no task").field("eval.task"))?;
    Ok(task.to_string())
}

/// One sample's scores.
fn sample(
    name: &str,
    record: &str,
    s: &Value,
    task: &str,
    tally: &mut Tally,
) -> Result<Sample, InputError> {
    let err = |field: &str, problem: String| {
        InputError::new(format!("{name}: {record}"), problem).field(field.to_string())
    };
    let Some(object) = s.as_object() else {
        return Err(err("sample", "is not a JSON object".into()));
    };
    tally.samples += 1;
    for key in object
        .keys()
        .filter(|k| !SAMPLE_MAPPED.contains(&k.as_str()))
    {
        tally.unmapped(format!("sample.{key}"));
    }
    let item = object
        .get("id")
        .and_then(ItemId::from_json)
        .ok_or_else(|| {
            err(
                "id",
                "a sample's id must be a whole number or a non-blank string".into(),
            )
        })?;
    let repeat = object
        .get("epoch")
        .and_then(Value::as_u64)
        .and_then(|e| u32::try_from(e).ok())
        .filter(|&e| e >= 1)
        .ok_or_else(|| {
            err(
                "epoch",
                "a sample's epoch must be a whole number from 1".into(),
            )
        })?;
    let template = Draft {
        task: task.to_string(),
        item,
        repeat,
        scorer: String::new(),
        value: Scored::Missing(String::new()),
        confidence: None,
        correct: None,
        source: format!("{name}: {record}"),
    };
    let errored = object.get("error").is_some_and(|e| !e.is_null());
    let mut drafts = Vec::new();
    let scores = match object.get("scores") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => {
            return Err(err(
                "scores",
                "must be an object of scores by scorer name".into(),
            ))
        }
    };
    for (scorer, score) in scores.into_iter().flatten() {
        let Some(score) = score.as_object() else {
            return Err(err(
                &format!("scores.{scorer}"),
                "must be a Score object with a value".into(),
            ));
        };
        for key in score.keys().filter(|k| *k != "value" && *k != "metadata") {
            tally.unmapped(format!("score.{key}"));
        }
        let confidence = match score.get("metadata").and_then(|m| m.as_object()) {
            Some(meta) => {
                for key in meta.keys().filter(|k| *k != "confidence") {
                    tally.unmapped(format!("score.metadata.{key}"));
                }
                match meta.get("confidence") {
                    None => None,
                    Some(c) => match c.as_f64().filter(|c| (0.0..=1.0).contains(c)) {
                        Some(c) => Some(c),
                        None => {
                            tally.unmapped("score.metadata.confidence (not a number in [0, 1])");
                            None
                        }
                    },
                }
            }
            None => None,
        };
        let value = score.get("value").unwrap_or(&Value::Null);
        let parts: Vec<(String, &Value)> = match value {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("{scorer}[{i}]"), v))
                .collect(),
            Value::Object(keys) => keys
                .iter()
                .map(|(k, v)| (format!("{scorer}/{k}"), v))
                .collect(),
            v => vec![(scorer.clone(), v)],
        };
        for (scorer, v) in parts {
            let correct = match v {
                Value::String(s) if s == "C" => Some(true),
                Value::String(s) if s == "I" => Some(false),
                Value::Bool(b) => Some(*b),
                _ => None,
            };
            let value = if errored {
                Scored::Missing("sample errored".into())
            } else {
                match score_of(v, Values::Inspect, tally) {
                    Read::Number(x) => Scored::Value(x),
                    Read::NotPerItem => {
                        *tally.not_per_item.entry(scorer.clone()).or_default() += 1;
                        continue;
                    }
                    Read::Unreadable(why) => Scored::Missing(format!("value {why}")),
                }
            };
            drafts.push(Draft {
                scorer,
                value,
                confidence,
                correct,
                ..template.clone()
            });
        }
    }
    drafts.shrink_to_fit();
    Ok(Sample {
        template: drafts.is_empty().then_some(template),
        drafts,
        why: if errored {
            "sample errored"
        } else {
            "no score"
        },
    })
}
