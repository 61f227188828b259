//! Judge verdicts, `verdicts.jsonl` (docs/reference.md): one object per judged item and arm, one verdict
//! per judge. `per_dimension: null` is a failed judge: kept as a failure, never read as a zero.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Id, Lines, Text};
use crate::error::{InputError, Problems};

/// One judge's verdict: scores per dimension, or `None` when the judge failed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    pub model: String,
    pub scores: Option<BTreeMap<String, f64>>,
    /// Why a judge that failed failed, as `collect` records it.
    pub reason: Option<String>,
    /// Where the item stood (0-based) in a judge call that scored several items.
    pub position: Option<u64>,
    /// The model the judge reported running (its stdout's `model`), beside the judge's name.
    pub reported_model: Option<String>,
    /// What the judge's call spent, when it says: the cost of evaluating, never an arm's.
    pub usage: Option<super::usage::Usage>,
}

/// The verdicts on one item in one arm.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub line: u64,
    pub item_id: String,
    pub arm: String,
    pub verdicts: Vec<Verdict>,
}

impl Item {
    /// The call the line records: the panel's verdicts on one item of one arm.
    pub fn call(&self) -> super::call::Call {
        super::call::Call::Verdicts {
            arm: self.arm.as_str().into(),
            item_id: self.item_id.as_str().into(),
        }
    }

    /// The surviving (non-failed) verdicts.
    pub fn survivors(&self) -> impl Iterator<Item = &BTreeMap<String, f64>> {
        self.verdicts.iter().filter_map(|v| v.scores.as_ref())
    }

    /// Composite (docs/guides/trust.md): mean over surviving judges of the weighted mean of their
    /// dimensions; a dimension without a weight counts 1 (uniform when `weights` is empty).
    /// `None` when no judge survived.
    pub fn composite(&self, weights: &BTreeMap<String, f64>) -> Option<f64> {
        let per_judge: Vec<f64> = self
            .survivors()
            .filter_map(|scores| weighted(scores.iter().map(|(d, v)| (d.as_str(), *v)), weights))
            .collect();
        (!per_judge.is_empty()).then(|| per_judge.iter().sum::<f64>() / per_judge.len() as f64)
    }
}

/// One judge's (or one annotator's) scores as one number: their mean weighted by `weights`,
/// a dimension not named there weighing 1. `None` when the weights sum to 0.
pub fn weighted<'a>(
    scores: impl IntoIterator<Item = (&'a str, f64)>,
    weights: &BTreeMap<String, f64>,
) -> Option<f64> {
    let (mut sum, mut total) = (0.0, 0.0);
    for (dim, s) in scores {
        let w = weights.get(dim).copied().unwrap_or(1.0);
        sum += w * s;
        total += w;
    }
    (total > 0.0).then(|| sum / total)
}

/// One line of `verdicts.jsonl` as written. Its JSON Schema is derived from this type; the
/// rules across its values (a judge once per item, scores on 0 to 1) are `check`'s.
#[derive(Deserialize, JsonSchema)]
#[schemars(description = "One judged item in one arm.")]
pub struct RawItem {
    /// A finding's `id` (that finding is judged) or any other item's id.
    pub item_id: Id,
    pub arm: Text,
    /// One verdict per judge.
    pub verdicts: Vec<RawVerdict>,
}

/// One judge's verdict as written.
#[derive(Deserialize, JsonSchema)]
pub struct RawVerdict {
    pub model: Text,
    /// Scores per dimension, each in [0, 1]; `null` for a judge that failed (never a zero).
    #[serde(deserialize_with = "super::present")]
    #[schemars(
        required,
        with = "Option<BTreeMap<String, Score>>",
        extend("type" = ["object", "null"], "minProperties" = 1)
    )]
    pub per_dimension: Option<BTreeMap<String, f64>>,
    /// Why the judge failed, as `collect` records it.
    pub reason: Option<String>,
    /// Where the item stood (0-based) in a judge call that scored several items: the bias
    /// audit's position check reads it (docs/guides/trust.md, "The bias audit").
    pub position: Option<u64>,
    /// The model the judge reports running (the `model` its command printed); `model` keeps
    /// naming the judge. The bias audit's self-preference check and the drift check read it.
    pub reported_model: Option<Text>,
    /// What the judge's call spent: reported as the cost of evaluating, never in an arm's
    /// (docs/reference.md, "Cost and latency").
    pub usage: Option<super::usage::Usage>,
}

/// A judge's score, for the schema: a number in [0, 1].
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Score(#[schemars(range(min = 0, max = 1))] f64);

const LINES: Lines = Lines {
    holds: "each line holds {\"item_id\", \"arm\", \"verdicts\": [{\"model\", \"per_dimension\"}]}",
    hints: &[
        (
            "verdicts",
            "an array of {\"model\", \"per_dimension\"}, one per judge",
        ),
        ("verdicts.per_dimension", "null marks a failed judge"),
    ],
};

/// Parses every item, collecting every problem. An (arm, item_id) pair judged twice is an error.
pub fn parse(name: &str, bytes: &[u8]) -> (Vec<Item>, Problems) {
    let repeats: super::Repeats<Item> = super::Repeats {
        field: "item_id",
        hint: None,
        key: Item::call,
        says: |item| {
            format!(
                "item `{}` in arm `{}` is judged a second time",
                item.item_id, item.arm
            )
        },
    };
    super::parse_unique((name, bytes), &LINES, check, repeats)
}

/// A `per_dimension` object's rules, in the words of the file that holds it: at least one
/// dimension, each score in [0, 1].
pub(crate) struct Scores {
    /// What an object with no dimension is told.
    pub empty: &'static str,
    /// The hint for a score off [0, 1].
    pub rescale: &'static str,
}

impl Scores {
    pub(crate) fn check(
        &self,
        scores: &BTreeMap<String, f64>,
        field: &str,
        err: &dyn Fn(&str, String) -> InputError,
    ) -> Result<(), InputError> {
        if scores.is_empty() {
            return Err(err(field, self.empty.into()));
        }
        match scores.iter().find(|(_, s)| !(0.0..=1.0).contains(*s)) {
            // As JSON writes it (`1e+308`), not as 309 digits.
            Some((dim, s)) => Err(err(
                &format!("{field}.{dim}"),
                format!("{} is outside [0, 1]", serde_json::Value::from(*s)),
            )
            .hint(self.rescale)),
            None => Ok(()),
        }
    }
}

/// The rules across one line's values: each judge once, every score a number in [0, 1], a
/// verdict that is not `null` scores at least one dimension.
fn check(name: &str, line: u64, raw: RawItem) -> Result<Item, InputError> {
    let err = |field: &str, problem: String| super::field_error(name, line, field, problem);
    let mut models: HashMap<&str, usize> = HashMap::with_capacity(raw.verdicts.len());
    for (j, v) in raw.verdicts.iter().enumerate() {
        let field = |f: &str| format!("verdicts[{j}].{f}");
        let model = v.model.0.as_str();
        // One judge listed twice would count its own consistency as agreement among judges.
        if let Some(first) = models.insert(model, j) {
            return Err(err(
                &field("model"),
                format!("judge `{model}` is listed a second time in this item (first as verdicts[{first}])"),
            )
            .hint("each judge gives one verdict per item: its self-consistency is not agreement between judges"));
        }
        if let Some(scores) = &v.per_dimension {
            let words = Scores {
                empty: "has no dimension: write null for a failed judge",
                rescale: "judge scores are on [0, 1], as the trust thresholds are: rescale a 1–5 or 1–10 scale before recording, e.g. (score − 1) / 4",
            };
            words.check(scores, &field("per_dimension"), &err)?;
        }
    }
    Ok(Item {
        line,
        item_id: raw.item_id.0,
        arm: raw.arm.0,
        verdicts: raw
            .verdicts
            .into_iter()
            .map(|v| Verdict {
                model: v.model.0,
                scores: v.per_dimension,
                reason: v.reason,
                position: v.position,
                reported_model: v.reported_model.map(|m| m.0),
                usage: v.usage,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_judges_are_kept_as_failures_and_left_out_of_composites() {
        let text = r#"{"item_id": "f1", "arm": "baseline", "verdicts": [{"model": "a", "per_dimension": {"real": 1.0, "important": 0.5}}, {"model": "b", "per_dimension": null}, {"model": "c", "per_dimension": {"real": 0.5, "important": 0.5}}]}"#;
        let (items, problems) = parse("v.jsonl", text.as_bytes());
        assert!(problems.is_empty());
        assert_eq!(items[0].verdicts.len(), 3);
        assert_eq!(items[0].survivors().count(), 2);
        // (0.75 + 0.5) / 2; a zero for the failed judge would give 0.4167.
        assert_eq!(items[0].composite(&BTreeMap::new()), Some(0.625));
        let weights: BTreeMap<String, f64> = [("real".to_string(), 3.0)].into();
        // judge a: (3·1 + 0.5)/4 = 0.875; judge c: 0.5 → 0.6875
        assert_eq!(items[0].composite(&weights), Some(0.6875));
    }

    // Regression (issue 21): one judge listed three times passed the trust verdict as
    // "trustworthy, IRR 0.980", and a score of 1e308 gave a 309-digit spread.
    #[test]
    fn a_judge_twice_in_one_item_and_scores_off_the_unit_interval_are_refused() {
        let line = |verdicts: &str| {
            format!("{{\"item_id\": \"i\", \"arm\": \"b\", \"verdicts\": [{verdicts}]}}\n")
        };
        let v = |model: &str, score: &str| {
            format!("{{\"model\": \"{model}\", \"per_dimension\": {{\"real\": {score}}}}}")
        };
        let thrice = line(&[v("judge-a", "1"), v("judge-a", "1"), v("judge-a", "0.9")].join(", "));
        let (items, problems) = parse("v.jsonl", thrice.as_bytes());
        assert!(items.is_empty());
        assert_eq!(problems[0].line, Some(1));
        assert_eq!(
            problems[0].field.as_deref(),
            Some("field `verdicts[1].model`")
        );
        assert!(problems[0]
            .problem
            .contains("judge `judge-a` is listed a second time"));
        // Distinct judges are fine, and so is the same judge on another item.
        let ok = line(&[v("judge-a", "0"), v("judge-b", "1")].join(", "));
        assert!(parse("v.jsonl", ok.as_bytes()).1.is_empty());
        for bad in ["2.0", "-1", "1e308", "1.0000001"] {
            let text = line(&[v("judge-a", "0.5"), v("judge-b", bad)].join(", "));
            let (_, problems) = parse("v.jsonl", text.as_bytes());
            assert_eq!(problems.len(), 1, "{bad}");
            let p = &problems[0];
            assert_eq!(
                p.field.as_deref(),
                Some("field `verdicts[1].per_dimension.real`")
            );
            assert!(p.problem.ends_with("is outside [0, 1]"), "{}", p.problem);
            assert!(p.hint.as_deref().unwrap().contains("rescale"));
        }
    }

    #[test]
    fn problems_name_line_and_field() {
        let text = r#"{"item_id": "x", "arm": "b", "verdicts": [{"model": "a", "per_dimension": {"real": "yes"}}]}
{"item_id": "x", "verdicts": []}
{"item_id": "y", "arm": "b", "verdicts": [{"model": "a", "per_dimension": null}]}
{"item_id": "y", "arm": "b", "verdicts": []}
"#;
        let (items, problems) = parse("v.jsonl", text.as_bytes());
        assert_eq!(items.len(), 1);
        let at: Vec<(Option<u64>, Option<String>)> =
            problems.iter().map(|p| (p.line, p.field.clone())).collect();
        assert_eq!(
            at,
            [
                (
                    Some(1),
                    Some("field `verdicts[0].per_dimension.real`".into())
                ),
                (Some(2), Some("field `arm`".into())),
                (Some(4), Some("field `item_id`".into())),
            ]
        );
        assert_eq!(items[0].composite(&BTreeMap::new()), None);
    }

    // The line type's refusals, in calibench's words: the field by its path, what it must be.
    #[test]
    fn shape_refusals_say_what_the_field_must_be() {
        let cases = [
            (r#"{"item_id": "x", "arm": "b", "verdicts": [{"model": "a"}]}"#, "verdicts[0].per_dimension", "is missing", Some("null marks a failed judge")),
            (r#"{"item_id": "x", "arm": "b", "verdicts": [{"model": 7, "per_dimension": null}]}"#, "verdicts[0].model", "must be a string, not 7", None),
            (r#"{"item_id": "x", "arm": "b", "verdicts": [{"model": "a", "per_dimension": [1]}]}"#, "verdicts[0].per_dimension", "must be an object, not an array", Some("null marks a failed judge")),
            (r#"{"item_id": "x", "arm": "b", "verdicts": {}}"#, "verdicts", "must be an array, not an object", Some("an array of {\"model\", \"per_dimension\"}, one per judge")),
            (r#"{"item_id": " ", "arm": "b", "verdicts": []}"#, "item_id", "is empty", None),
            (r#"{"item_id": true, "arm": "b", "verdicts": []}"#, "item_id", "must be a string, not a boolean", None),
            (r#"{"item_id": "x", "arm": "", "verdicts": []}"#, "arm", "is empty", None),
            (r#"{"item_id": "x", "arm": "b", "verdicts": [{"model": "a", "per_dimension": {"r": 1e308}}]}"#, "verdicts[0].per_dimension.r", "1e+308 is outside [0, 1]", Some("judge scores are on [0, 1], as the trust thresholds are: rescale a 1–5 or 1–10 scale before recording, e.g. (score − 1) / 4")),
        ];
        for (line, field, problem, hint) in cases {
            let (_, problems) = parse("v.jsonl", line.as_bytes());
            let p = &problems[0];
            assert_eq!(
                p.field.as_deref(),
                Some(format!("field `{field}`").as_str()),
                "{line}"
            );
            assert_eq!(p.problem, problem, "{line}");
            assert_eq!(p.hint.as_deref(), hint, "{line}");
        }
        // A numeric id is read as its text.
        let (items, problems) = parse("v.jsonl", br#"{"item_id": 7, "arm": "b", "verdicts": []}"#);
        assert!(problems.is_empty());
        assert_eq!(items[0].item_id, "7");
    }
}
