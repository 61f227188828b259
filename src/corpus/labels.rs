//! Human labels, `labels.jsonl` (docs/guides/judges-and-humans.md): the judges' shape, from a
//! person. One object per (arm, item, annotator), scores per dimension in [0, 1]. The rules
//! across files (an annotator is never a judge, dimensions are the judges', an arm is one the
//! experiment reads) are [`check_against`]'s, given the verdicts.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::verdicts::Item;
use super::{Id, Lines, Text};
use crate::error::{InputError, Problems};

/// The name the alt-test gives the panel's composite (`humans.alt_test.panel`).
pub const PANEL: &str = "panel";

/// One person's labels on one item in one arm. Held compactly: a crowd's million lines name a
/// few hundred items, two arms and a handful of dimensions, so each text is held once
/// (`Arc<str>`, shared by every line that repeats it) and the scores are a short sorted list.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub line: u64,
    pub item_id: Arc<str>,
    pub arm: Arc<str>,
    pub annotator: Arc<str>,
    pub scores: Scores,
}

impl Label {
    /// The call the line records: one annotator's label on one item of one arm.
    pub fn call(&self) -> super::call::Call {
        super::call::Call::Label {
            arm: self.arm.clone(),
            item_id: self.item_id.clone(),
            annotator: self.annotator.clone(),
        }
    }
}

/// A label's score per dimension, sorted by dimension.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scores(Box<[(Arc<str>, f64)]>);

impl Scores {
    /// Each dimension and its score, in dimension order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.0.iter().map(|(d, v)| (&**d, *v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(d, _)| &**d)
    }

    pub fn get(&self, dimension: &str) -> Option<f64> {
        self.0
            .binary_search_by(|(d, _)| (**d).cmp(dimension))
            .ok()
            .map(|i| self.0[i].1)
    }

    pub fn contains_key(&self, dimension: &str) -> bool {
        self.get(dimension).is_some()
    }
}

impl<S: AsRef<str>> FromIterator<(S, f64)> for Scores {
    fn from_iter<I: IntoIterator<Item = (S, f64)>>(it: I) -> Self {
        let mut v: Vec<(Arc<str>, f64)> = it
            .into_iter()
            .map(|(d, x)| (Arc::from(d.as_ref()), x))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.dedup_by(|a, b| a.0 == b.0);
        Scores(v.into_boxed_slice())
    }
}

/// One copy of each text the lines repeat.
#[derive(Default)]
struct Interner(std::collections::HashSet<Arc<str>, foldhash::fast::RandomState>);

impl Interner {
    fn get(&mut self, s: &str) -> Arc<str> {
        match self.0.get(s) {
            Some(held) => held.clone(),
            None => {
                let held: Arc<str> = Arc::from(s);
                self.0.insert(held.clone());
                held
            }
        }
    }
}

/// One line of `labels.jsonl` as written. Its JSON Schema is derived from this type.
#[derive(Deserialize, JsonSchema)]
#[schemars(
    description = "One person's labels on one judged item in one arm: the judges' shape, from a human. The labelled items must be drawn at random from the judged ones."
)]
pub struct RawLabel {
    /// The judged item's id, as in verdicts.jsonl.
    pub item_id: Id,
    /// The recorded arm label, as in verdicts.jsonl.
    pub arm: Text,
    /// Who labelled it: never a judge's `model` name.
    pub annotator: Text,
    /// Labels per dimension, each in [0, 1], on dimensions the judges score.
    #[schemars(with = "BTreeMap<String, Score>", extend("minProperties" = 1))]
    pub per_dimension: BTreeMap<String, f64>,
}

/// A label, for the schema: a number in [0, 1].
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Score(#[schemars(range(min = 0, max = 1))] f64);

const LINES: Lines = Lines {
    holds: "each line holds {\"item_id\", \"arm\", \"annotator\", \"per_dimension\": {dimension: 0 to 1}}",
    hints: &[(
        "per_dimension",
        "an object of dimension names to numbers in [0, 1], as the judges score them",
    )],
};

/// Parses every line, collecting every problem: a label off [0, 1], no dimension, or an
/// (arm, item, annotator) labelled twice (both lines named).
pub fn parse(name: &str, bytes: &[u8]) -> (Vec<Label>, Problems) {
    let repeats: super::Repeats<Label> = super::Repeats {
        field: "annotator",
        hint: Some("one line per (arm, item, annotator)"),
        key: Label::call,
        says: |l| {
            format!(
                "`{}` labels item `{}` in arm `{}` a second time",
                l.annotator, l.item_id, l.arm
            )
        },
    };
    let interner = std::cell::RefCell::new(Interner::default());
    super::parse_unique(
        (name, bytes),
        &LINES,
        |name, line, raw| check(name, line, raw, &mut interner.borrow_mut()),
        repeats,
    )
}

fn check(name: &str, line: u64, raw: RawLabel, texts: &mut Interner) -> Result<Label, InputError> {
    let words = super::verdicts::Scores {
        empty: "has no dimension",
        rescale: "labels are on the judges' [0, 1] scale: rescale a 1–5 scale as (label − 1) / 4",
    };
    let err = |field: &str, problem: String| super::field_error(name, line, field, problem);
    words.check(&raw.per_dimension, "per_dimension", &err)?;
    Ok(Label {
        line,
        item_id: texts.get(&raw.item_id.0),
        arm: texts.get(&raw.arm.0),
        annotator: texts.get(&raw.annotator.0),
        scores: Scores(
            raw.per_dimension
                .iter()
                .map(|(d, v)| (texts.get(d), *v))
                .collect(),
        ),
    })
}

/// The rules across files: an annotator that is also a judge, a dimension no judge scores. (An
/// arm label no arm reads, an item no one judged, a dimension left out are the input ledger's:
/// `pipeline::account`.)
pub fn check_against(name: &str, labels: &[Label], items: &[Item]) -> Problems {
    let mut problems = Problems::default();
    let judges: BTreeSet<&str> = items
        .iter()
        .flat_map(|i| i.verdicts.iter().map(|v| v.model.as_str()))
        .collect();
    let dimensions: BTreeSet<&str> = items
        .iter()
        .flat_map(|i| i.survivors().flat_map(|s| s.keys().map(String::as_str)))
        .collect();
    let list = |s: &BTreeSet<&str>| crate::text::first_few(s.iter().map(|x| format!("`{x}`")), 8);
    // The alt-test names the panel's composite `panel`: a judge of that name would be confused
    // with it in metrics.json and the gate's paths.
    if let Some(item) = items
        .iter()
        .find(|i| i.verdicts.iter().any(|v| v.model == PANEL))
    {
        problems.push(
            InputError::new(
                name,
                format!(
                    "a judge is named `{PANEL}` (verdicts.jsonl line {}), the name the alt-test gives the panel's composite",
                    item.line
                ),
            )
            .hint("rename that judge in verdicts.jsonl to compare the judges with human labels"),
        );
    }
    for l in labels {
        let err = |field: &str, problem: String| super::field_error(name, l.line, field, problem);
        if judges.contains(&*l.annotator) {
            problems.push(
                err(
                    "annotator",
                    format!(
                        "`{}` is also a judge `model` in verdicts.jsonl",
                        l.annotator
                    ),
                )
                .hint("a person and a model must be told apart: name the annotator differently"),
            );
        } else if let Some(dim) = l.scores.keys().find(|d| !dimensions.contains(d)) {
            problems.push(
                err(
                    &format!("per_dimension.{dim}"),
                    format!("`{dim}` is not a dimension the judges score"),
                )
                .hint(format!("the judges score {}", list(&dimensions))),
            );
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts() -> Vec<Item> {
        let text = r#"{"item_id": "f1", "arm": "b", "verdicts": [{"model": "judge-a", "per_dimension": {"real": 1.0}}, {"model": "judge-b", "per_dimension": {"real": 0.5}}]}"#;
        super::super::verdicts::parse("v.jsonl", text.as_bytes()).0
    }

    #[test]
    fn labels_read_and_each_bad_line_is_named() {
        let text = r#"{"item_id": "f1", "arm": "b", "annotator": "ann-1", "per_dimension": {"real": 1.0}}
{"item_id": 7, "arm": "b", "annotator": "ann-1", "per_dimension": {"real": 0}}
{"item_id": "f1", "arm": "b", "annotator": "ann-1", "per_dimension": {"real": 0.5}}
{"item_id": "f2", "arm": "b", "annotator": "ann-2", "per_dimension": {"real": 1.5}}
{"item_id": "f3", "arm": "b", "annotator": "ann-2", "per_dimension": {}}
{"item_id": "f4", "arm": "b", "per_dimension": {"real": 1}}
"#;
        let (labels, problems) = parse("labels.jsonl", text.as_bytes());
        assert_eq!(labels.len(), 2);
        assert_eq!(&*labels[1].item_id, "7");
        let shown: Vec<String> = problems.into_kept().iter().map(|p| p.to_string()).collect();
        assert_eq!(shown.len(), 4, "{shown:#?}");
        assert!(shown[0].contains("labels.jsonl:3: field `annotator`: `ann-1` labels item `f1` in arm `b` a second time (first on line 1)"), "{shown:#?}");
        assert!(
            shown[1].contains(":4: field `per_dimension.real`: 1.5 is outside [0, 1]"),
            "{shown:#?}"
        );
        assert!(
            shown[2].contains(":5: field `per_dimension`: has no dimension"),
            "{shown:#?}"
        );
        assert!(
            shown[3].contains(":6:") && shown[3].contains("annotator"),
            "{shown:#?}"
        );
    }

    #[test]
    fn a_judge_as_annotator_and_an_unknown_dimension_are_refused() {
        let text = r#"{"item_id": "f1", "arm": "b", "annotator": "judge-a", "per_dimension": {"real": 1.0}}
{"item_id": "f1", "arm": "b", "annotator": "ann-1", "per_dimension": {"reel": 1.0}}
{"item_id": "f1", "arm": "v9", "annotator": "ann-1", "per_dimension": {"real": 1.0}}
{"item_id": "f1", "arm": "b", "annotator": "ann-2", "per_dimension": {"real": 1.0}}
"#;
        let (labels, problems) = parse("labels.jsonl", text.as_bytes());
        assert!(problems.is_empty());
        let problems = check_against("labels.jsonl", &labels, &verdicts());
        let shown: Vec<String> = problems.into_kept().iter().map(|p| p.to_string()).collect();
        assert_eq!(shown.len(), 2, "{shown:#?}");
        assert!(
            shown[0].contains(":1: field `annotator`: `judge-a` is also a judge"),
            "{shown:#?}"
        );
        assert!(
            shown[1].contains(
                ":2: field `per_dimension.reel`: `reel` is not a dimension the judges score"
            ),
            "{shown:#?}"
        );
        assert!(shown[1].contains("`real`"), "{shown:#?}");
    }
}
