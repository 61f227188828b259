//! Judge verdicts, `verdicts.jsonl` (SPEC §2.3): one object per judged item and arm, one verdict
//! per judge. `per_dimension: null` is a failed judge: kept as a failure, never read as a zero.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::error::InputError;

/// One judge's verdict: scores per dimension, or `None` when the judge failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub model: String,
    pub scores: Option<BTreeMap<String, f64>>,
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
    /// The surviving (non-failed) verdicts.
    pub fn survivors(&self) -> impl Iterator<Item = &BTreeMap<String, f64>> {
        self.verdicts.iter().filter_map(|v| v.scores.as_ref())
    }

    /// Composite (SPEC §4.6): mean over surviving judges of the weighted mean of their
    /// dimensions; a dimension without a weight counts 1 (uniform when `weights` is empty).
    /// `None` when no judge survived.
    pub fn composite(&self, weights: &BTreeMap<String, f64>) -> Option<f64> {
        let per_judge: Vec<f64> = self
            .survivors()
            .filter_map(|scores| {
                let (mut sum, mut total) = (0.0, 0.0);
                for (dim, &s) in scores {
                    let w = weights.get(dim).copied().unwrap_or(1.0);
                    sum += w * s;
                    total += w;
                }
                (total > 0.0).then(|| sum / total)
            })
            .collect();
        (!per_judge.is_empty()).then(|| per_judge.iter().sum::<f64>() / per_judge.len() as f64)
    }
}

/// Parses every item, collecting every problem. An (arm, item_id) pair judged twice is an error.
pub fn parse(name: &str, bytes: &[u8]) -> (Vec<Item>, Vec<InputError>) {
    let mut items = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashMap<(String, String), u64> = HashMap::new();
    const HINT: &str =
        "each line holds {\"item_id\", \"arm\", \"verdicts\": [{\"model\", \"per_dimension\"}]}";
    for object in super::objects(name, bytes, HINT) {
        match object.and_then(|(line, o)| parse_item(name, line, o)) {
            Ok(item) => {
                let key = (item.arm.clone(), item.item_id.clone());
                if let Some(first) = seen.insert(key, item.line) {
                    problems.push(
                        InputError::new(
                            name,
                            format!(
                                "item `{}` in arm `{}` is judged a second time (first on line {first})",
                                item.item_id, item.arm
                            ),
                        )
                        .at_line(item.line)
                        .field("field `item_id`"),
                    );
                } else {
                    items.push(item);
                }
            }
            Err(e) => problems.push(e),
        }
    }
    (items, problems)
}

fn parse_item(name: &str, line: u64, object: Map<String, Value>) -> Result<Item, InputError> {
    let err = |field: &str, problem: String| {
        InputError::new(name, problem)
            .at_line(line)
            .field(format!("field `{field}`"))
    };
    let string = |field: &str| -> Result<String, InputError> {
        match object.get(field) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::Number(n)) if field == "item_id" => Ok(n.to_string()),
            Some(Value::String(_)) => Err(err(field, "is empty".into())),
            Some(other) => Err(err(field, format!("must be a string, not {other}"))),
            None => Err(err(field, "is missing".into())),
        }
    };
    let (item_id, arm) = (string("item_id")?, string("arm")?);
    let Some(Value::Array(raw)) = object.get("verdicts") else {
        return Err(err(
            "verdicts",
            "must be an array of {model, per_dimension}".into(),
        ));
    };
    let mut verdicts = Vec::with_capacity(raw.len());
    let mut models: HashMap<String, usize> = HashMap::with_capacity(raw.len());
    for (j, v) in raw.iter().enumerate() {
        let field = |f: &str| format!("verdicts[{j}].{f}");
        let Value::Object(v) = v else {
            return Err(err(&format!("verdicts[{j}]"), "must be an object".into()));
        };
        let model = match v.get("model") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(err(&field("model"), "must be a non-empty string".into())),
        };
        // One judge listed twice would count its own consistency as agreement among judges.
        if let Some(first) = models.insert(model.clone(), j) {
            return Err(err(
                &field("model"),
                format!("judge `{model}` is listed a second time in this item (first as verdicts[{first}])"),
            )
            .hint("each judge gives one verdict per item: its self-consistency is not agreement between judges"));
        }
        let scores = match v.get("per_dimension") {
            Some(Value::Null) => None,
            Some(Value::Object(dims)) => {
                let mut scores = BTreeMap::new();
                for (dim, s) in dims {
                    let Some(x) = s.as_f64().filter(|x| x.is_finite()) else {
                        return Err(err(
                            &field(&format!("per_dimension.{dim}")),
                            format!("must be a finite number, not {s}"),
                        ));
                    };
                    if !(0.0..=1.0).contains(&x) {
                        return Err(err(
                            &field(&format!("per_dimension.{dim}")),
                            format!("{s} is outside [0, 1]"),
                        )
                        .hint("judge scores are on [0, 1], as the trust thresholds are: rescale a 1–5 or 1–10 scale before recording, e.g. (score − 1) / 4"));
                    }
                    scores.insert(dim.clone(), x);
                }
                if scores.is_empty() {
                    return Err(err(
                        &field("per_dimension"),
                        "has no dimension: write null for a failed judge".into(),
                    ));
                }
                Some(scores)
            }
            None => {
                return Err(err(
                    &field("per_dimension"),
                    "is missing (null marks a failed judge)".into(),
                ))
            }
            Some(other) => {
                return Err(err(
                    &field("per_dimension"),
                    format!("must be an object or null, not {other}"),
                ))
            }
        };
        verdicts.push(Verdict { model, scores });
    }
    Ok(Item {
        line,
        item_id,
        arm,
        verdicts,
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
        let text = concat!(
            "{\"item_id\": \"x\", \"arm\": \"b\", \"verdicts\": [{\"model\": \"a\", \"per_dimension\": {\"real\": \"yes\"}}]}\n",
            "{\"item_id\": \"x\", \"verdicts\": []}\n",
            "{\"item_id\": \"y\", \"arm\": \"b\", \"verdicts\": [{\"model\": \"a\", \"per_dimension\": null}]}\n",
            "{\"item_id\": \"y\", \"arm\": \"b\", \"verdicts\": []}\n",
        );
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
}
