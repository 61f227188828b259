//! Human labels, `labels.jsonl` (docs/guides/judges-and-humans.md): the judges' shape, from a
//! person. One object per (arm, item, annotator), scores per dimension in [0, 1]. The rules
//! across files (an annotator is never a judge, dimensions are the judges', an arm is one the
//! experiment reads) are [`check_against`]'s, given the verdicts.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::Deserialize;

use super::verdicts::Item;
use super::{Id, Lines, Text};
use crate::error::{InputError, Problems};

/// The name the alt-test gives the panel's composite (`humans.alt_test.panel`).
pub const PANEL: &str = "panel";

/// One person's labels on one item in one arm.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub line: u64,
    pub item_id: String,
    pub arm: String,
    pub annotator: String,
    pub scores: BTreeMap<String, f64>,
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
    let repeats: super::Repeats<Label, _> = super::Repeats {
        field: "annotator",
        hint: Some("one line per (arm, item, annotator)"),
        key: |l| (l.arm.clone(), l.item_id.clone(), l.annotator.clone()),
        says: |l| {
            format!(
                "`{}` labels item `{}` in arm `{}` a second time",
                l.annotator, l.item_id, l.arm
            )
        },
    };
    super::parse_unique((name, bytes), &LINES, check, repeats)
}

fn check(name: &str, line: u64, raw: RawLabel) -> Result<Label, InputError> {
    let words = super::verdicts::Scores {
        empty: "has no dimension",
        rescale: "labels are on the judges' [0, 1] scale: rescale a 1–5 scale as (label − 1) / 4",
    };
    let err = |field: &str, problem: String| super::field_error(name, line, field, problem);
    words.check(&raw.per_dimension, "per_dimension", &err)?;
    Ok(Label {
        line,
        item_id: raw.item_id.0,
        arm: raw.arm.0,
        annotator: raw.annotator.0,
        scores: raw.per_dimension,
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
        if judges.contains(l.annotator.as_str()) {
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
        } else if let Some(dim) = l.scores.keys().find(|d| !dimensions.contains(d.as_str())) {
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
        assert_eq!(labels[1].item_id, "7");
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
