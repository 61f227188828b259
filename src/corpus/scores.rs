//! Imported scores, `scores.jsonl` (docs/guides/importing-logs.md): one line per arm, item, repeat and scorer, as
//! `calibench import` writes them from Inspect, promptfoo, lm-eval or a plain table. One type,
//! [`Score`], is what the importer writes, what the reader reads back, and (derived) the line's
//! JSON Schema.

use std::cmp::Ordering;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ItemId, Lines, Text};
use crate::error::{InputError, Problems};

/// One line of `scores.jsonl`: one scorer's score of one item in one repeat of one arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    description = "One scorer's score of one item in one repeat of one arm, imported from an eval log."
)]
pub struct Score {
    /// The line of `scores.jsonl` it was read from (0 for a line not yet written).
    #[serde(skip)]
    #[schemars(skip)]
    pub line: u64,
    /// The arm label given to `calibench import --arm`.
    pub arm: Text,
    /// The task or eval the log ran, as it names it; one task per arm.
    pub task: Text,
    pub item: ItemId,
    /// 1, 2, … (Inspect's epoch; promptfoo's repeats of one test case; lm-eval's runs).
    #[schemars(range(min = 1))]
    pub repeat: u32,
    /// The scorer, judge, assertion or metric, as the log names it.
    pub scorer: Text,
    /// The score; `null` when the sample errored or carries no score (see `missing`): never 0.
    #[serde(deserialize_with = "super::present")]
    #[schemars(required, with = "ScoreValue", extend("type" = ["number", "null"]))]
    pub score: Option<f64>,
    /// Why `score` is null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
    /// The model's own confidence in its answer, in [0, 1], where the log has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1))]
    pub confidence: Option<f64>,
    /// Whether the answer was right, where the log says (for calibration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correct: Option<bool>,
    /// The log file and the record in it that the score came from.
    pub source: Text,
    /// What the sample's model calls spent, where the log says (docs/reference.md, "Cost and
    /// latency"); the same on each of the sample's scorers' lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<super::usage::Usage>,
    /// The sample's wall time in milliseconds, where the log says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<super::usage::Amount>,
}

/// The largest magnitude a score may have. Every sum, difference and square calibench forms of
/// millions of scores below it stays finite; a score of 10³⁰⁸ would make a mean of two of them
/// infinite and its interval NaN. No eval scores in units that large (log-likelihoods, counts and
/// milliseconds are all far smaller).
pub const MAX_SCORE: f64 = 1e15;

/// A score, for the schema: a finite number of magnitude at most [`MAX_SCORE`].
#[derive(JsonSchema)]
#[allow(dead_code)]
struct ScoreValue(#[schemars(range(min = -1e15, max = 1e15))] f64);

impl Score {
    /// The call the line records, what makes it unique in a file: arm, item, repeat, scorer.
    pub fn call(&self) -> super::call::Call {
        super::call::Call::Score {
            arm: self.arm.0.as_str().into(),
            item: self.item.clone(),
            repeat: self.repeat,
            scorer: self.scorer.0.as_str().into(),
        }
    }

    /// The order lines are written in: by arm, item, repeat and scorer, never by the order the
    /// log held them (completion order).
    pub fn order(a: &Score, b: &Score) -> Ordering {
        (&a.arm.0, &a.item, a.repeat, &a.scorer.0).cmp(&(&b.arm.0, &b.item, b.repeat, &b.scorer.0))
    }
}

const LINES: Lines = Lines {
    holds: "each line holds {\"arm\", \"task\", \"item\", \"repeat\", \"scorer\", \"score\", \"source\"}",
    hints: &[
        ("score", "a number, or null for a sample that errored or was not scored"),
        ("item", "the log's id, a whole number or a string"),
        ("confidence", "a number in [0, 1]"),
    ],
};

/// Parses every line, collecting every problem: a line's values out of range, or an arm, item,
/// repeat and scorer scored twice.
pub fn parse(name: &str, bytes: &[u8]) -> (Vec<Score>, Problems) {
    let repeats: super::Repeats<Score> = super::Repeats {
        field: "scorer",
        hint: None,
        key: Score::call,
        says: |s| {
            format!(
                "scorer `{}` scores item {} (repeat {}) of arm `{}` a second time",
                s.scorer.0, s.item, s.repeat, s.arm.0
            )
        },
    };
    super::parse_unique((name, bytes), &LINES, check, repeats)
}

/// An arm of an experiment reads the lines labelled with its `source`: a label no line carries
/// is refused, listing the file's labels (a typo must not compare an empty arm).
pub fn check_arm(name: &str, all: &[Score], arm: &str, source: &str) -> Result<(), InputError> {
    if all.iter().any(|s| s.arm.0 == source) {
        return Ok(());
    }
    let labels = super::label_list(all.iter().map(|s| s.arm.0.as_str()));
    Err(InputError::new(
        name,
        format!("arm `{arm}` reads imported arm `{source}`, but no line carries that label"),
    )
    .field("field `arm`")
    .hint(format!(
        "the file's labels: {labels}; set `source` in [arms.{arm}] to the `--arm` given to `calibench import`"
    )))
}

/// The rules an experiment puts on the lines, each broken one an error naming its
/// line: the two arms read two different labels; each arm's lines run one task; every judge
/// named in `[scores] judges` scores some line of either arm, and scores on [0, 1] (the trust
/// thresholds are on [0, 1]).
pub fn check_experiment(
    name: &str,
    all: &[Score],
    arms: [(&str, &str); 2],
    judges: &[String],
) -> Problems {
    let mut problems = Problems::default();
    for (arm, source) in arms {
        if let Err(e) = check_arm(name, all, arm, source) {
            problems.push(e);
        }
    }
    if arms[0].1 == arms[1].1 {
        problems.push(
            InputError::new(
                name,
                format!(
                    "both arms read imported arm `{}`: the comparison would be of a run with itself",
                    arms[0].1
                ),
            )
            .field("field `arm`")
            .hint("import the two runs under two labels (`calibench import --arm`) and set each arm's `source`"),
        );
    }
    for (_, source) in arms {
        let mut lines = all.iter().filter(|s| s.arm.0 == source);
        if let Some(first) = lines.next() {
            if let Some(other) = lines.find(|s| s.task != first.task) {
                problems.push(
                    super::field_error(
                        name,
                        other.line,
                        "task",
                        format!(
                            "arm `{source}` holds task `{}` here but task `{}` on line {}: one arm is one task",
                            other.task.0, first.task.0, first.line
                        ),
                    )
                    .hint("import each task's logs under its own arm label"),
                );
            }
        }
    }
    if arms[0].1 != arms[1].1 && problems.is_empty() {
        problems.extend(nothing_compared(name, all, arms));
    }
    let read = |s: &&Score| arms.iter().any(|(_, source)| s.arm.0 == *source);
    for judge in judges {
        let mut mine = all.iter().filter(read).filter(|s| s.scorer.0 == *judge);
        let Some(_) = mine.clone().next() else {
            let scorers: Vec<&str> = {
                let mut v: Vec<&str> = all
                    .iter()
                    .filter(read)
                    .map(|s| s.scorer.0.as_str())
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let near = crate::text::nearest(judge, &scorers)
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            problems.push(
                InputError::new(
                    name,
                    format!("`[scores] judges` names `{judge}`, but no line of either arm has that scorer{near}"),
                )
                .field("field `scorer`")
                .hint(format!("the arms' scorers: {}", scorers.join(", "))),
            );
            continue;
        };
        if let Some(s) = mine.find(|s| s.score.is_some_and(|x| !(0.0..=1.0).contains(&x))) {
            problems.push(
                super::field_error(
                    name,
                    s.line,
                    "score",
                    format!(
                        "judge `{judge}` scores {} here: a judge's scores must lie in [0, 1]",
                        s.score.unwrap_or_default()
                    ),
                )
                .hint("rescale the scorer before importing (a 1-5 scale: (x - 1) / 4), or do not name it as a judge"),
            );
        }
    }
    problems
}

/// Refuses two arms that no scorer scored an item of in both: nothing would be compared, and an
/// experiment whose every figure is "not compared" is no answer. The message says why: the
/// arms have no scorer in common (two runs scored by different scorers), or they score no
/// common item, and then whether their ids differ only by type (`"1"` from a CSV against `1`
/// from JSON Lines or Inspect: ids keep their type, so they are different items).
fn nothing_compared(name: &str, all: &[Score], arms: [(&str, &str); 2]) -> Option<InputError> {
    use std::collections::{BTreeMap, BTreeSet};
    let scored = |source: &str| {
        let mut by: BTreeMap<&str, BTreeSet<&ItemId>> = BTreeMap::new();
        for s in all
            .iter()
            .filter(|s| s.arm.0 == source && s.score.is_some())
        {
            by.entry(&s.scorer.0).or_default().insert(&s.item);
        }
        by
    };
    let (b, t) = (scored(arms[0].1), scored(arms[1].1));
    let arm = |i: usize| format!("arm `{}` (`{}`)", arms[i].0, arms[i].1);
    for (i, by) in [&b, &t].into_iter().enumerate() {
        if by.is_empty() {
            return Some(
                InputError::new(name, format!("{} has no scored line: every one is missing, so nothing can be compared", arm(i)))
                    .field("field `score`")
                    .hint("`calibench import` says why each sample is missing; re-run the eval or import a log whose samples were scored"),
            );
        }
    }
    let common: Vec<&str> = b.keys().filter(|k| t.contains_key(*k)).copied().collect();
    if common.is_empty() {
        let list = |by: &BTreeMap<&str, BTreeSet<&ItemId>>| {
            by.keys()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Some(
            InputError::new(
                name,
                format!(
                    "no scorer is in both arms, so nothing can be compared: {} has {}, {} has {}",
                    arm(0),
                    list(&b),
                    arm(1),
                    list(&t)
                ),
            )
            .field("field `scorer`")
            .hint("compare runs scored by the same scorers: a scorer is paired by its name as the log writes it"),
        );
    }
    if common.iter().any(|k| !b[k].is_disjoint(&t[k])) {
        return None;
    }
    let as_text = |id: &ItemId| match id {
        ItemId::Number(n) => n.to_string(),
        ItemId::Text(s) => s.clone(),
    };
    let mut e = InputError::new(
        name,
        format!(
            "the arms share no scored item, so nothing can be compared: {} and {} score different items under {}",
            arm(0),
            arm(1),
            common.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        ),
    )
    .field("field `item`");
    let typed = |by: &BTreeMap<&str, BTreeSet<&ItemId>>| -> Option<(&'static str, String)> {
        let id = by.values().flat_map(|ids| ids.iter()).next()?;
        Some(match id {
            ItemId::Number(_) => ("numbers", as_text(id)),
            ItemId::Text(_) => ("text", format!("{id}")),
        })
    };
    let retyped = common.iter().any(|k| {
        let b: BTreeSet<String> = b[k].iter().map(|id| as_text(id)).collect();
        t[k].iter().any(|id| b.contains(&as_text(id)))
    });
    if let (true, Some((bk, bx)), Some((tk, tx))) = (retyped, typed(&b), typed(&t)) {
        e = e.hint(format!(
            "the ids differ only by type: in {} they are {bk} ({bx}), in {} {tk} ({tx}); ids keep their type (1 and \"1\" are different items). `calibench import csv` reads every id as text: import both arms from CSV, or write the CSV as JSON Lines, where an id's type is kept",
            arm(0),
            arm(1)
        ));
    } else {
        e = e.hint("items pair by their id as the log writes it: import two runs of the same task");
    }
    Some(e)
}

/// The rules across one line's values.
fn check(name: &str, line: u64, s: Score) -> Result<Score, InputError> {
    let err = |field: &str, problem: String| super::field_error(name, line, field, problem);
    if s.repeat == 0 {
        return Err(err("repeat", "repeats count from 1".into()));
    }
    match (s.score, &s.missing) {
        (Some(x), _) if !x.is_finite() => {
            return Err(err("score", format!("{x} is not a finite number")))
        }
        (Some(x), _) if x.abs() > MAX_SCORE => {
            return Err(err(
                "score",
                format!("{x:e} is beyond ±{MAX_SCORE:e}: no score is that large, and means and intervals of it would overflow"),
            ))
        }
        (Some(_), Some(_)) => {
            return Err(err(
                "missing",
                "a line with a score is not missing; drop `missing` or set `score` to null".into(),
            ))
        }
        _ => {}
    }
    if let Some(c) = s.confidence.filter(|c| !(0.0..=1.0).contains(c)) {
        return Err(err("confidence", format!("{c} is outside [0, 1]")));
    }
    Ok(Score { line, ..s })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> (Vec<Score>, Problems) {
        parse("scores.jsonl", text.as_bytes())
    }

    #[test]
    fn ids_keep_their_type_and_sort_numbers_by_value() {
        let (s, p) = line(
            "{\"arm\":\"a\",\"task\":\"t\",\"item\":1,\"repeat\":1,\"scorer\":\"m\",\"score\":1,\"source\":\"x\"}\n\
             {\"arm\":\"a\",\"task\":\"t\",\"item\":\"1\",\"repeat\":1,\"scorer\":\"m\",\"score\":0,\"source\":\"x\"}\n",
        );
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(s[0].item, ItemId::Number(1));
        assert_eq!(s[1].item, ItemId::Text("1".into()));
        let mut ids = vec![
            ItemId::Number(10),
            ItemId::Text("10_epoch_1".into()),
            ItemId::Number(2),
            ItemId::Text("2_epoch_1".into()),
        ];
        ids.sort();
        assert_eq!(
            ids,
            [
                ItemId::Number(2),
                ItemId::Number(10),
                ItemId::Text("10_epoch_1".into()),
                ItemId::Text("2_epoch_1".into())
            ]
        );
    }

    #[test]
    fn a_score_must_be_written_and_null_is_missing_not_zero() {
        let (s, p) = line(
            "{\"arm\":\"a\",\"task\":\"t\",\"item\":1,\"repeat\":1,\"scorer\":\"m\",\"score\":null,\"missing\":\"error\",\"source\":\"x\"}",
        );
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(s[0].score, None);
        let (_, p) = line("{\"arm\":\"a\",\"task\":\"t\",\"item\":1,\"repeat\":1,\"scorer\":\"m\",\"source\":\"x\"}");
        assert!(p[0].to_string().contains("score"), "{}", p[0]);
    }

    #[test]
    fn bad_values_and_repeats_are_refused_naming_line_and_field() {
        let cases = [
            ("\"item\":1.5", "item"),
            ("\"item\":\" \"", "item"),
            ("\"repeat\":0", "repeat"),
            ("\"confidence\":1.5", "confidence"),
            ("\"missing\":\"x\"", "missing"),
            ("\"extra\":1", "extra"),
        ];
        for (field, name) in cases {
            let mut v: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
                "{\"arm\":\"a\",\"task\":\"t\",\"item\":1,\"repeat\":1,\"scorer\":\"m\",\"score\":1,\"source\":\"x\"}",
            )
            .unwrap();
            let (k, val) = field.split_once(':').unwrap();
            v.insert(
                k.trim_matches('"').into(),
                serde_json::from_str(val).unwrap(),
            );
            let (_, p) = line(&serde_json::to_string(&v).unwrap());
            assert_eq!(p.len(), 1, "{field}");
            let text = p[0].to_string();
            assert!(text.starts_with("scores.jsonl:1"), "{text}");
            assert!(text.contains(name), "{field}: {text}");
        }
        let one = "{\"arm\":\"a\",\"task\":\"t\",\"item\":1,\"repeat\":1,\"scorer\":\"m\",\"score\":1,\"source\":\"x\"}";
        let (_, p) = line(&format!("{one}\n{one}\n"));
        assert!(p[0].to_string().contains("first on line 1"), "{}", p[0]);
    }
}
