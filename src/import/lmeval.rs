//! lm-eval `--log_samples` output (docs/guides/importing-logs.md): `samples_<task>_<time>.jsonl`, one line per
//! document and filter, with its `results_<time>.json` when present.
//!
//! item = `doc_id`; repeat = the run, each samples file of the task one run, numbered 1, 2, …
//! by the time in its name; scorer = `<metric>,<filter>` as lm-eval names it in its results
//! (`acc,none`), for each name in the line's `metrics`; score = the line's value for the metric
//! (numbers and booleans written as text are read: `"-10.0"`, `"False"`); a list or `"N/A"`
//! (a corpus-level metric such as F1) is not a per-item score and is counted, not imported.
//! For multiple choice (`filtered_resps` a list of `[log-likelihood, is_greedy]`), the `acc`
//! line also carries the softmax probability of the chosen (most likely) answer as confidence,
//! and `acc` as correct.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{number, score_of, shown, Draft, Options, Read, Scored, Tally, Values};
use crate::corpus::ItemId;
use crate::corpus::{nonblank_lines, object};
use crate::error::{Error, InputError};

/// Line keys that are mapped (the metric values are mapped through `metrics`).
const MAPPED: [&str; 4] = ["doc_id", "filter", "metrics", "filtered_resps"];

/// A samples file's task and time, from its name.
fn task_and_time(path: &Path) -> Option<(String, String)> {
    let stem = path.file_stem()?.to_str()?;
    let rest = stem.strip_prefix("samples_")?;
    let (task, time) = rest.rsplit_once('_')?;
    let looks_like_time = time.len() >= 10
        && time.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && time.as_bytes()[4] == b'-';
    (looks_like_time && !task.is_empty()).then(|| (task.to_string(), time.to_string()))
}

/// Reads lm-eval logs: samples files (the runs) and results files (checked, not scored).
pub fn read(logs: &[PathBuf], _: &Options, tally: &mut Tally) -> Result<Vec<Draft>, Error> {
    let mut runs: Vec<(String, String, PathBuf)> = Vec::new();
    let mut results: Vec<PathBuf> = Vec::new();
    for log in logs {
        let path = log.as_path();
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if file.starts_with("results_") && file.ends_with(".json") {
            results.push(path.to_path_buf());
            continue;
        }
        let Some((task, time)) = task_and_time(path) else {
            return Err(InputError::new(
                shown(path),
                "is not an lm-eval samples file: its name is not samples_<task>_<time>.jsonl",
            )
            .hint("pass the samples_*.jsonl files lm-eval wrote with --log_samples (and their results_*.json)")
            .into());
        };
        runs.push((task, time, path.to_path_buf()));
    }
    // Runs by time as written (ISO 8601, so text order is time order), never by file name.
    runs.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    refuse_repeated_runs(&runs)?;
    for path in &results {
        check_results(path, &runs, tally)?;
    }
    let mut repeat_of: BTreeMap<&str, u32> = BTreeMap::new();
    let mut drafts = Vec::new();
    for (task, _, path) in &runs {
        let repeat = repeat_of.entry(task).or_default();
        *repeat += 1;
        drafts.extend(read_samples(path, task, *repeat, tally)?);
    }
    Ok(drafts)
}

/// One run given twice (the same file, a copy of it, or another file of the same task and time
/// stamp) would become two repeats of every document: a repeat count that is not, and a
/// repeat-to-repeat α of 1 over byte-identical copies. Refused, naming both files.
fn refuse_repeated_runs(runs: &[(String, String, PathBuf)]) -> Result<(), Error> {
    use sha2::{Digest, Sha256};
    let mut seen: BTreeMap<[u8; 32], &Path> = BTreeMap::new();
    for (i, (task, time, path)) in runs.iter().enumerate() {
        if let Some((_, _, first)) = runs[..i].iter().find(|(t, w, _)| t == task && w == time) {
            return Err(InputError::new(
                shown(path),
                format!(
                    "is the run of task `{task}` at {time} that {} already is: given twice, it would count as two repeats",
                    shown(first)
                ),
            )
            .hint("give each run's samples file once; repeats are runs made at different times")
            .into());
        }
        let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
        let digest: [u8; 32] = Sha256::digest(&bytes).into();
        if let Some(first) = seen.insert(digest, path) {
            return Err(InputError::new(
                shown(path),
                format!(
                    "holds exactly what {} holds: one run copied, it would count as two repeats",
                    shown(first)
                ),
            )
            .hint("give each run's samples file once; repeats are runs made at different times")
            .into());
        }
    }
    Ok(())
}

/// A results file names the tasks of the samples given with it; its figures are not read
/// (scores come from the samples).
fn check_results(
    path: &Path,
    runs: &[(String, String, PathBuf)],
    tally: &mut Tally,
) -> Result<(), Error> {
    let name = shown(path);
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    let file: Value = serde_json::from_slice(&bytes).map_err(|e| {
        InputError::new(
            &name,
            format!("is not a readable lm-eval results file: {e}"),
        )
        .at_line(e.line() as u64)
    })?;
    let Some(tasks) = file.get("results").and_then(Value::as_object) else {
        return Err(InputError::new(
            &name,
            "has no `results` object: is it an lm-eval results file?",
        )
        .field("results")
        .into());
    };
    for (task, _, samples) in runs {
        if !tasks.contains_key(task) {
            return Err(InputError::new(
                &name,
                format!("does not report task `{task}` of {}", shown(samples)),
            )
            .field("results")
            .hint("pass the results file written by the same run as the samples")
            .into());
        }
    }
    tally.notes.push(format!(
        "{name}: checked against the samples; its summary figures are not used (scores come from the samples)"
    ));
    Ok(())
}

fn read_samples(
    path: &Path,
    task: &str,
    repeat: u32,
    tally: &mut Tally,
) -> Result<Vec<Draft>, Error> {
    let name = shown(path);
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    let mut drafts = Vec::new();
    for (line, raw) in nonblank_lines(&bytes) {
        let (_, o) = object(
            &name,
            line,
            raw,
            "each line is one lm-eval sample: {\"doc_id\", \"metrics\", …}",
        )?;
        let err = |field: &str, problem: &str| {
            InputError::new(&name, problem.to_string())
                .at_line(line)
                .field(field.to_string())
        };
        tally.samples += 1;
        let item = match o.get("doc_id") {
            Some(v @ Value::Number(_)) => ItemId::from_json(v),
            _ => None,
        }
        .ok_or_else(|| err("doc_id", "a sample's doc_id must be a whole number"))?;
        let filter = match o.get("filter") {
            Some(Value::String(f)) => f.clone(),
            None => "none".into(),
            Some(_) => return Err(err("filter", "must be the filter's name").into()),
        };
        let metrics: Vec<String> = match o.get("metrics") {
            Some(Value::Array(m)) => m
                .iter()
                .map(|m| m.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| err("metrics", "must be a list of metric names"))?,
            _ => {
                return Err(err(
                    "metrics",
                    "a sample must list its metrics (lm-eval 0.4.2 or later)",
                )
                .into())
            }
        };
        for key in o.keys() {
            if !MAPPED.contains(&key.as_str()) && !metrics.contains(key) {
                tally.unmapped(format!("sample.{key}"));
            }
        }
        let choice = chosen(o.get("filtered_resps"));
        for metric in &metrics {
            let scorer = format!("{metric},{filter}");
            let Some(v) = o.get(metric) else {
                return Err(err(
                    metric,
                    &format!("metric `{metric}` is listed in `metrics` but has no value"),
                )
                .into());
            };
            let value = match score_of(v, Values::LmEval, tally) {
                Read::Number(x) => Scored::Value(x),
                Read::NotPerItem => {
                    *tally.not_per_item.entry(scorer).or_default() += 1;
                    continue;
                }
                Read::Unreadable(why) => Scored::Missing(format!("value {why}")),
            };
            let (confidence, correct) = match (metric.as_str(), choice, &value) {
                ("acc", Some(p), Scored::Value(x)) => (Some(p), Some(*x == 1.0)),
                _ => (None, None),
            };
            drafts.push(Draft {
                task: task.to_string(),
                item: item.clone(),
                repeat,
                scorer,
                value,
                confidence,
                correct,
                source: format!("{name}:{line}"),
                usage: None,
                elapsed_ms: None,
            });
        }
    }
    Ok(drafts)
}

/// For a multiple-choice sample, the softmax probability of its most likely answer: each
/// element of `filtered_resps` a `[log-likelihood, is_greedy]` pair (numbers or text).
fn chosen(resps: Option<&Value>) -> Option<f64> {
    let choices = resps?.as_array()?;
    if choices.len() < 2 {
        return None;
    }
    let lls: Vec<f64> = choices
        .iter()
        .map(|c| {
            c.as_array()
                .filter(|p| p.len() == 2)
                .and_then(|p| number(&p[0]))
        })
        .collect::<Option<_>>()?;
    let top = lls.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = lls.iter().map(|l| (l - top).exp()).sum();
    Some(1.0 / total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn file_names_give_task_and_time() {
        let p = Path::new("out/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl");
        assert_eq!(
            task_and_time(p),
            Some((
                "math_perturbed_full".into(),
                "2026-01-21T03-44-18.458309".into()
            ))
        );
        assert_eq!(task_and_time(Path::new("samples.jsonl")), None);
        assert_eq!(task_and_time(Path::new("results_2026-01-21.json")), None);
    }

    #[test]
    fn the_chosen_answer_gets_its_softmax_probability() {
        // log-likelihoods -1, -2, -3 (two written as text): softmax of the first.
        let p = chosen(Some(&json!([
            [-1.0, "False"],
            ["-2.0", false],
            ["-3", "False"]
        ])))
        .unwrap();
        let want = 1.0 / (1.0 + (-1.0f64).exp() + (-2.0f64).exp());
        assert!((p - want).abs() < 1e-12, "{p} {want}");
        assert_eq!(
            chosen(Some(&json!([["42"]]))),
            None,
            "generation, not choices"
        );
        assert_eq!(chosen(Some(&json!([[-1.0, false], ["x", false]]))), None);
    }
}
