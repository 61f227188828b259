//! `calibench import` (docs/guides/importing-logs.md): eval logs written by other tools read into `scores.jsonl`
//! lines ([`Score`]). Each format's reader turns its records into [`Draft`]s; what they share
//! lives here: how a value a log writes becomes a score, how a sample without a score becomes a
//! *missing* line (never a 0), the tally of everything that was not mapped, and the rules across
//! logs of one arm (one task; an item, repeat and scorer once).

pub mod inspect;
pub mod lmeval;
pub mod promptfoo;
pub mod table;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::corpus::scores::Score;
use crate::corpus::ItemId;
use crate::corpus::Text;
use crate::error::{Error, InputError};

/// What a reader returns: the drafts it read, or why the logs cannot be read.
pub type Drafts = Result<Vec<Draft>, Error>;

/// How a format's reader takes the logs of one arm.
#[derive(Clone, Copy)]
pub enum Reader {
    /// One log at a time: each log is one run.
    EachLog(fn(&Path, &Options, &mut Tally) -> Drafts),
    /// Every log together: the logs' names say which run each is (lm-eval).
    AllLogs(fn(&[PathBuf], &Options, &mut Tally) -> Drafts),
}

/// Declares the formats once: the `Format` enum (each variant's doc comment is its line in
/// `calibench import --help`), the files each reads (the LOGS help) and its reader.
macro_rules! formats {
    ($($(#[$doc:meta])* $variant:ident { files: $files:literal, read: $reader:expr $(,)? },)*) => {
        /// The formats `calibench import` reads.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum Format {
            $($(#[$doc])* $variant,)*
        }

        impl Format {
            /// The files the format reads, as `import --help` lists them.
            pub fn files(self) -> &'static str {
                match self {
                    $(Format::$variant => $files,)*
                }
            }

            /// The format's reader.
            pub fn reader(self) -> Reader {
                match self {
                    $(Format::$variant => $reader,)*
                }
            }
        }
    };
}

formats! {
    /// Inspect: a `.eval` zip archive or a `.json` log
    Inspect { files: "Inspect .eval or .json", read: Reader::EachLog(inspect::read) },
    /// promptfoo: `promptfoo eval -o results.json` (results version 3)
    Promptfoo { files: "promptfoo results.json", read: Reader::EachLog(promptfoo::read) },
    /// lm-eval: `samples_<task>_<time>.jsonl` from `--log_samples` (and its `results_*.json`)
    LmEval {
        files: "lm-eval samples_*.jsonl (and results_*.json)",
        read: Reader::AllLogs(lmeval::read),
    },
    /// A CSV with columns item, score and optional scorer, repeat, confidence, correct, task
    Csv { files: "a .csv table", read: Reader::EachLog(table::read_csv) },
    /// JSON Lines with keys item, score and optional scorer, repeat, confidence, correct, task
    Jsonl { files: "a .jsonl table", read: Reader::EachLog(table::read_jsonl) },
}

impl Format {
    /// The help of `import`'s LOGS argument: every format's files.
    pub fn logs_help() -> String {
        let files: Vec<&str> = <Format as clap::ValueEnum>::value_variants()
            .iter()
            .map(|f| f.files())
            .collect();
        format!("The log files: {}", files.join("; "))
    }
}

/// One score as a reader found it, before the arm is attached.
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    pub task: String,
    pub item: ItemId,
    pub repeat: u32,
    pub scorer: String,
    pub value: Scored,
    pub confidence: Option<f64>,
    pub correct: Option<bool>,
    /// The log file and record: `log.eval: samples/3_epoch_1.json`, `samples_x.jsonl:4`.
    pub source: String,
    /// What the sample spent, where the log says.
    pub usage: Option<crate::corpus::usage::Usage>,
    pub elapsed_ms: Option<crate::corpus::usage::Amount>,
}

/// What a sample spent, from the log's own fields (`None` where it says nothing): tokens read
/// and written, cost in US dollars. A value that is not a count or an amount of 0 or more is
/// tallied as unmapped, naming `what`, and left out: a third-party log is not refused for it.
pub fn usage_from(
    [input, output, cost]: [(Option<&Value>, &str); 3],
    tally: &mut Tally,
) -> Option<crate::corpus::usage::Usage> {
    let mut count = |(v, what): (Option<&Value>, &str)| -> Option<u64> {
        let v = v.filter(|v| !v.is_null())?;
        let n = v.as_u64();
        if n.is_none() {
            tally.unmapped(format!("{what} (not a whole number of tokens)"));
        }
        n
    };
    let (input_tokens, output_tokens) = (count(input), count(output));
    let usage = crate::corpus::usage::Usage {
        input_tokens,
        output_tokens,
        cost_usd: amount(cost.0, 1.0, cost.1, tally),
    };
    (usage != crate::corpus::usage::Usage::default()).then_some(usage)
}

/// An amount of 0 or more from a log's field, times `scale` (seconds → milliseconds); a value
/// that is not one is tallied as unmapped, naming `what`.
pub fn amount(
    v: Option<&Value>,
    scale: f64,
    what: &str,
    tally: &mut Tally,
) -> Option<crate::corpus::usage::Amount> {
    let v = v.filter(|v| !v.is_null())?;
    match v.as_f64().filter(|x| x.is_finite() && *x >= 0.0) {
        Some(x) if scale == 1.0 => Some(crate::corpus::usage::Amount(x)),
        // Seconds to whole milliseconds: 2.162 s is 2162 ms, not 2162.0000000000005.
        Some(x) => Some(crate::corpus::usage::Amount((x * scale).round())),
        None => {
            tally.unmapped(format!("{what} (not an amount of 0 or more)"));
            None
        }
    }
}

/// A score, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub enum Scored {
    Value(f64),
    Missing(String),
}

/// What an import read and what it could not map, counted: printed by the command, and every
/// count is a reason, so nothing is dropped without a word.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Tally {
    /// Log files read.
    pub logs: usize,
    /// Samples (items × repeats) read.
    pub samples: usize,
    /// Score lines written with a value.
    pub scored: usize,
    /// Score lines written as missing, by reason.
    pub missing: BTreeMap<String, usize>,
    /// Values converted to numbers, by conversion (`"C" → 1`).
    pub conversions: BTreeMap<String, usize>,
    /// Per-sample values that are not a per-item score (a list, `"N/A"`), by scorer: reported,
    /// never averaged.
    pub not_per_item: BTreeMap<String, usize>,
    /// Fields of the log that were not mapped to anything, by field, with how often each was seen.
    pub unmapped: BTreeMap<String, usize>,
    /// Things about a log a user should know (a log that did not finish, its summary ignored).
    pub notes: Vec<String>,
}

impl Tally {
    pub fn unmapped(&mut self, field: impl Into<String>) {
        *self.unmapped.entry(field.into()).or_default() += 1;
    }

    fn converted(&mut self, how: &str) {
        *self.conversions.entry(how.to_string()).or_default() += 1;
    }
}

/// What one import produced.
#[derive(Clone, Debug)]
pub struct Imported {
    pub task: String,
    pub scores: Vec<Score>,
    pub tally: Tally,
}

/// How a reader turns a value a log wrote into a number, naming each conversion it makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// Inspect: numbers, booleans, `C`/`I`/`P`/`N`, numeric strings.
    Inspect,
    /// lm-eval: numbers, booleans, and numbers or booleans written as strings.
    LmEval,
    /// promptfoo, csv, jsonl: numbers and booleans only.
    Plain,
}

/// A value read as a score: a number, or why it is not one.
#[derive(Clone, Debug, PartialEq)]
pub enum Read {
    Number(f64),
    /// Not a per-item score at all (a list, `"N/A"`): counted under `not_per_item`.
    NotPerItem,
    /// A value that names no number.
    Unreadable(String),
}

/// Reads `v` as a score under `values`, counting each conversion in `tally`.
pub fn score_of(v: &Value, values: Values, tally: &mut Tally) -> Read {
    match v {
        Value::Number(n) => match n.as_f64().filter(|x| x.is_finite()) {
            Some(x) => in_range(x),
            None => Read::Unreadable(format!("{n} is not a finite number")),
        },
        Value::Bool(b) => {
            tally.converted(if *b { "true → 1" } else { "false → 0" });
            Read::Number(if *b { 1.0 } else { 0.0 })
        }
        Value::String(s) => {
            let t = s.trim();
            let letter = match (values, t) {
                (Values::Inspect, "C") => Some(1.0),
                (Values::Inspect, "I") => Some(0.0),
                (Values::Inspect, "P") => Some(0.5),
                (Values::Inspect, "N") => Some(0.0),
                _ => None,
            };
            if let Some(x) = letter {
                tally.converted(&format!("\"{t}\" → {x}"));
                return Read::Number(x);
            }
            if values == Values::Plain {
                return Read::Unreadable(format!("`{s}` is text, not a number"));
            }
            if t.eq_ignore_ascii_case("n/a") {
                return Read::NotPerItem;
            }
            let boolean = match t {
                "True" | "true" => Some(1.0),
                "False" | "false" => Some(0.0),
                _ => None,
            };
            if let Some(x) = boolean {
                tally.converted(&format!("\"{t}\" → {x}"));
                return Read::Number(x);
            }
            match t.parse::<f64>() {
                Ok(x) if x.is_finite() => {
                    tally.converted("number written as text → number");
                    in_range(x)
                }
                _ => Read::Unreadable(format!("`{s}` is not a score")),
            }
        }
        Value::Array(_) | Value::Object(_) => Read::NotPerItem,
        Value::Null => Read::Unreadable("null".into()),
    }
}

/// A finite number as a score, unless it is beyond what scores.jsonl holds.
fn in_range(x: f64) -> Read {
    use crate::corpus::scores::MAX_SCORE;
    if x.abs() > MAX_SCORE {
        Read::Unreadable(format!("{x:e} is beyond ±{MAX_SCORE:e}, not a score"))
    } else {
        Read::Number(x)
    }
}

/// A number a log may write as text (lm-eval's log-likelihoods: `"-10.0"`).
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite())
}

/// A boolean a log may write as text (`"False"`) or as 0/1.
pub fn boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim() {
            "True" | "true" | "1" => Some(true),
            "False" | "false" | "0" => Some(false),
            _ => None,
        },
        Value::Number(n) => match n.as_f64() {
            Some(1.0) => Some(true),
            Some(0.0) => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Options of one import.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// promptfoo: the prompt × provider cell to read, when the file holds several.
    pub pick: Option<String>,
}

/// Reads `logs` in `format` as one arm's scores, labelled `arm`, in key order. Refused: a log
/// that cannot be read, logs of more than one task, an item, repeat and scorer found twice.
pub fn import(
    format: Format,
    logs: &[PathBuf],
    arm: &str,
    options: &Options,
) -> Result<Imported, Error> {
    if options.pick.is_some() && format != Format::Promptfoo {
        return Err(InputError::new(
            "calibench import",
            "--pick chooses a promptfoo cell; other formats hold one arm per log",
        )
        .field("--pick")
        .into());
    }
    let mut tally = Tally::default();
    let drafts = match format.reader() {
        Reader::AllLogs(read) => read(logs, options, &mut tally)?,
        Reader::EachLog(read) => {
            let mut all = Vec::new();
            for log in logs {
                let mut drafts = read(log, options, &mut tally)?;
                // One log (the usual case) is kept as read, never copied into a second block.
                if all.is_empty() {
                    all = drafts;
                } else {
                    all.append(&mut drafts);
                }
            }
            all
        }
    };
    tally.logs = logs.len();
    finish(drafts, arm, tally)
}

/// The rules across one arm's drafts, and the drafts as score lines in key order.
fn finish(drafts: Vec<Draft>, arm: &str, mut tally: Tally) -> Result<Imported, Error> {
    let tasks: BTreeSet<&str> = drafts.iter().map(|d| d.task.as_str()).collect();
    if tasks.len() > 1 {
        let mut by_task: BTreeMap<&str, &str> = BTreeMap::new();
        for d in &drafts {
            by_task.entry(&d.task).or_insert(&d.source);
        }
        let listed: Vec<String> = by_task
            .iter()
            .map(|(t, s)| format!("`{t}` (e.g. {s})"))
            .collect();
        return Err(InputError::new(
            format!("arm `{arm}`"),
            format!("the logs hold more than one task: {}", listed.join(", ")),
        )
        .hint("an arm is one task: import each task's logs under its own arm label")
        .into());
    }
    let Some(task) = tasks.into_iter().next().map(str::to_string) else {
        let (problem, hint) = if tally.samples > 0 {
            (
                format!("the logs' {} samples carry no score", tally.samples),
                "score the log first (Inspect: `inspect score LOG`), then import it",
            )
        } else {
            (
                "the logs hold no sample to import".to_string(),
                "check that the logs are the ones the tool wrote for the run, with samples",
            )
        };
        return Err(InputError::new(format!("arm `{arm}`"), problem)
            .hint(hint)
            .into());
    };
    let mut scores = Vec::with_capacity(drafts.len());
    for d in drafts {
        let (score, missing) = match d.value {
            Scored::Value(x) => {
                tally.scored += 1;
                (Some(x), None)
            }
            Scored::Missing(why) => {
                *tally.missing.entry(why.clone()).or_default() += 1;
                (None, Some(why))
            }
        };
        scores.push(Score {
            line: 0,
            arm: Text(arm.to_string()),
            task: Text(d.task),
            item: d.item,
            repeat: d.repeat,
            scorer: Text(d.scorer),
            score,
            missing,
            confidence: d.confidence,
            correct: d.correct,
            source: Text(d.source),
            usage: d.usage,
            elapsed_ms: d.elapsed_ms,
        });
    }
    // A stable sort keeps the logs' order among equal keys, so a key found twice is two
    // neighbours, the first read first: no index of every key is held beside the lines.
    scores.sort_by(Score::order);
    if let Some(pair) = scores
        .windows(2)
        .find(|w| Score::order(&w[0], &w[1]).is_eq())
    {
        let (was, d) = (&pair[0], &pair[1]);
        return Err(InputError::new(
            d.source.0.clone(),
            format!(
                "item {} (repeat {}) is scored by `{}` a second time (first in {})",
                d.item, d.repeat, d.scorer.0, was.source.0
            ),
        )
        .field("id")
        .hint("two logs of the same run? Import each run under its own arm label")
        .into());
    }
    Ok(Imported {
        task,
        scores,
        tally,
    })
}

/// Scorer names made distinct in one record: a second `llm-rubric` is `llm-rubric #2`, so that
/// two scorers are never merged under one name.
pub fn distinct(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    names
        .into_iter()
        .map(|n| {
            let count = seen.entry(n.clone()).or_default();
            *count += 1;
            if *count == 1 {
                n
            } else {
                format!("{n} #{count}")
            }
        })
        .collect()
}

/// Drafts for a sample's scorers that carry no score: `missing` for each of `expected` the
/// sample's drafts do not name.
pub fn fill_missing(
    drafts: &mut Vec<Draft>,
    expected: &BTreeSet<String>,
    template: &Draft,
    why: &str,
) {
    let have: BTreeSet<String> = drafts.iter().map(|d| d.scorer.clone()).collect();
    for scorer in expected.difference(&have) {
        drafts.push(Draft {
            scorer: scorer.clone(),
            value: Scored::Missing(why.to_string()),
            confidence: None,
            correct: None,
            ..template.clone()
        });
    }
}

/// The file name shown in messages and `source`.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_logs_help_names_every_formats_files_and_only_promptfoo_takes_pick() {
        let help = Format::logs_help();
        for f in <Format as clap::ValueEnum>::value_variants() {
            assert!(help.contains(f.files()), "{f:?} missing from {help}");
        }
        let pick = Options {
            pick: Some("x".into()),
        };
        let err = import(Format::Csv, &[PathBuf::from("none.csv")], "a", &pick).unwrap_err();
        assert!(err.to_string().contains("--pick"), "{err}");
    }

    #[test]
    fn values_convert_as_each_tool_writes_them_and_each_conversion_is_counted() {
        let mut t = Tally::default();
        let n = |v: Value, how: Values, t: &mut Tally| score_of(&v, how, t);
        assert_eq!(n(json!("C"), Values::Inspect, &mut t), Read::Number(1.0));
        assert_eq!(n(json!("I"), Values::Inspect, &mut t), Read::Number(0.0));
        assert_eq!(n(json!("P"), Values::Inspect, &mut t), Read::Number(0.5));
        assert_eq!(n(json!("N"), Values::Inspect, &mut t), Read::Number(0.0));
        assert_eq!(n(json!(true), Values::Plain, &mut t), Read::Number(1.0));
        assert_eq!(
            n(json!("-10.0"), Values::LmEval, &mut t),
            Read::Number(-10.0)
        );
        assert_eq!(n(json!("False"), Values::LmEval, &mut t), Read::Number(0.0));
        assert_eq!(n(json!("N/A"), Values::LmEval, &mut t), Read::NotPerItem);
        assert_eq!(n(json!([1, 2]), Values::LmEval, &mut t), Read::NotPerItem);
        assert!(matches!(
            n(json!("C"), Values::Plain, &mut t),
            Read::Unreadable(_)
        ));
        assert!(matches!(
            n(json!("maybe"), Values::LmEval, &mut t),
            Read::Unreadable(_)
        ));
        assert_eq!(t.conversions["\"C\" → 1"], 1);
        assert_eq!(t.conversions["\"P\" → 0.5"], 1);
        assert_eq!(t.conversions["number written as text → number"], 1);
        assert_eq!(t.conversions["true → 1"], 1);
    }

    #[test]
    fn two_scorers_of_one_name_are_told_apart() {
        let names = distinct(["llm-rubric", "contains", "llm-rubric"].map(String::from));
        assert_eq!(names, ["llm-rubric", "contains", "llm-rubric #2"]);
    }

    fn draft(task: &str, item: i64, scorer: &str) -> Draft {
        Draft {
            task: task.into(),
            item: ItemId::Number(item),
            repeat: 1,
            scorer: scorer.into(),
            value: Scored::Value(1.0),
            confidence: None,
            correct: None,
            usage: None,
            elapsed_ms: None,
            source: format!("log:{item}"),
        }
    }

    #[test]
    fn an_arm_is_one_task_and_scores_each_item_once_per_scorer() {
        let refused = |drafts| {
            finish(drafts, "x", Tally::default())
                .unwrap_err()
                .to_string()
        };
        let e = refused(vec![draft("a", 1, "m"), draft("b", 2, "m")]);
        assert!(
            e.contains("more than one task") && e.contains("`a`") && e.contains("`b`"),
            "{e}"
        );
        let e = refused(vec![draft("a", 1, "m"), draft("a", 1, "m")]);
        assert!(e.contains("a second time"), "{e}");
        let ok = finish(
            vec![draft("a", 10, "m"), draft("a", 2, "m"), draft("a", 2, "k")],
            "x",
            Tally::default(),
        )
        .unwrap();
        let order: Vec<(ItemId, &str)> = ok
            .scores
            .iter()
            .map(|s| (s.item.clone(), s.scorer.0.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                (ItemId::Number(2), "k"),
                (ItemId::Number(2), "m"),
                (ItemId::Number(10), "m")
            ]
        );
    }
}
