//! The shape of `metrics.json`, for gate policies: which dotted paths can exist and what they
//! hold. A policy naming a path that can never exist is refused before anything runs; a path
//! that can exist but is absent or null in a given run fails its check as "not found".
//!
//! The tree is derived from the `Metrics` types themselves (their JSON Schema, by schemars),
//! so a field added to a metric is a path a check can name, with nothing else to edit. What
//! the types cannot say is declared here: which maps have a fixed set of keys (the delta tables,
//! the query intervals), and that a table of exactly `baseline` and `treatment` is per arm.
//! `tests/gate.rs` walks every leaf of the example runs' `metrics.json` through it, and every
//! path it lists through the example runs.

use std::fmt;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::replay::{query_metrics, review_metrics};

/// What a path names.
#[derive(Clone, Debug)]
pub enum Node {
    /// A number (possibly null in a run: an undefined α, a withheld precision).
    Num,
    Bool,
    Text,
    /// A table with these fields.
    Obj(Vec<(String, Node)>),
    /// A table whose keys are these names (or any name, for `None`), each holding the node.
    /// The label names the set in patterns: `<arm>`.
    Map(Option<KeySet>, Box<Node>),
    /// A list of the node, indexed from 0.
    List(Box<Node>),
    /// A 95% interval `[lower, upper]`: index 0 is the lower bound, 1 the upper.
    Pair,
}

/// A named set of keys: its label in patterns and its keys.
pub type KeySet = (&'static str, &'static [&'static str]);

/// The two arm names every per-arm table has.
pub const ARMS: &[&str] = &["baseline", "treatment"];

/// The maps whose keys come from a fixed list, by the pattern of the map's path.
const NAMED_MAPS: [(&str, KeySet); 3] = [
    (
        "review.delta",
        ("review-delta", &review_metrics::DELTA_NAMES),
    ),
    (
        "queries.delta",
        ("query-delta", &query_metrics::DELTA_METRICS),
    ),
    (
        "queries.arms.<arm>.ci",
        ("ci-figure", &query_metrics::CI_METRICS),
    ),
];

static NUM: Node = Node::Num;

/// The whole of `metrics.json`, derived once.
fn metrics() -> &'static Node {
    static TREE: OnceLock<Node> = OnceLock::new();
    TREE.get_or_init(|| {
        let schema = schemars::schema_for!(crate::model::Metrics);
        let root = schema.as_value();
        let empty = Map::new();
        let defs = root
            .get("$defs")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        derive(root, defs, "")
    })
}

/// The node a JSON Schema describes; `path` is the pattern of where it sits (for the named
/// maps).
fn derive(schema: &Value, defs: &Map<String, Value>, path: &str) -> Node {
    let child = |part: &str| {
        if path.is_empty() {
            part.to_string()
        } else {
            format!("{path}.{part}")
        }
    };
    // `true` (any value, as a JSON value's schema is) describes nothing to walk into.
    if !schema.is_object() {
        return Node::Text;
    }
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
    {
        return defs
            .get(name)
            .map_or(Node::Text, |def| derive(def, defs, path));
    }
    // `Option<T>` is `anyOf [T, null]`; an enum of strings is `oneOf`/`enum` of constants.
    if let Some(alternatives) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        let real: Vec<&Value> = alternatives
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        return match real.as_slice() {
            [one] => derive(one, defs, path),
            _ => Node::Text,
        };
    }
    if schema.get("enum").is_some() || schema.get("const").is_some() {
        return Node::Text;
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => "object",
    };
    match kind {
        "number" | "integer" => Node::Num,
        "boolean" => Node::Bool,
        "array" => {
            let count = |k: &str| schema.get(k).and_then(Value::as_u64);
            let items = schema.get("items").unwrap_or(&Value::Null);
            let item = derive(items, defs, &child("<i>"));
            if count("minItems") == Some(2)
                && count("maxItems") == Some(2)
                && matches!(item, Node::Num)
            {
                Node::Pair
            } else {
                Node::List(Box::new(item))
            }
        }
        "object" => {
            if let Some(fields) = schema.get("properties").and_then(Value::as_object) {
                let per_arm =
                    fields.len() == ARMS.len() && ARMS.iter().all(|a| fields.contains_key(*a));
                if per_arm {
                    let arm = derive(&fields[ARMS[0]], defs, &child("<arm>"));
                    return Node::Map(Some(("arm", ARMS)), Box::new(arm));
                }
                Node::Obj(
                    fields
                        .iter()
                        .map(|(k, v)| (k.clone(), derive(v, defs, &child(k))))
                        .collect(),
                )
            } else {
                let named = NAMED_MAPS
                    .iter()
                    .find(|(p, _)| *p == path)
                    .map(|(_, set)| *set);
                let label = named.map_or("<key>".to_string(), |(l, _)| format!("<{l}>"));
                let values = schema.get("additionalProperties").unwrap_or(&Value::Null);
                Node::Map(named, Box::new(derive(values, defs, &child(&label))))
            }
        }
        _ => Node::Text,
    }
}

/// A dotted metric path, split into its parts. A part holding a dot is written in double
/// quotes: `review.arms.baseline.dropped_by_value."(0.45, 0.50]"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricPath {
    pub parts: Vec<String>,
}

impl MetricPath {
    pub fn parse(text: &str) -> Result<MetricPath, String> {
        let mut parts = Vec::new();
        let mut chars = text.chars().peekable();
        loop {
            let mut part = String::new();
            if chars.peek() == Some(&'"') {
                chars.next();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some(c) => part.push(c),
                        None => return Err(format!("`{text}` has an unclosed quote")),
                    }
                }
                parts.push(part);
                match chars.next() {
                    None => break,
                    Some('.') => {}
                    Some(c) => {
                        return Err(format!(
                            "`{text}`: `{c}` after a closing quote; parts are separated by dots"
                        ))
                    }
                }
            } else {
                let mut end = true;
                for c in chars.by_ref() {
                    if c == '.' {
                        end = false;
                        break;
                    }
                    part.push(c);
                }
                if part.is_empty() {
                    return Err(if text.is_empty() {
                        "is empty".to_string()
                    } else {
                        format!("`{text}` has an empty part (two dots, or a dot at an end)")
                    });
                }
                parts.push(part);
                if end {
                    break;
                }
            }
        }
        Ok(MetricPath { parts })
    }
}

impl fmt::Display for MetricPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            if p.contains('.') || p.contains('"') || p.is_empty() {
                write!(f, "\"{p}\"")?;
            } else {
                f.write_str(p)?;
            }
        }
        Ok(())
    }
}

/// What a valid path ends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    Number,
    Bool,
    Text,
}

/// Checks that `path` can exist in some run's `metrics.json` and names a number. The error says
/// where the path leaves the schema and what could come there instead.
pub fn number_at(path: &MetricPath) -> Result<(), String> {
    match leaf(path)? {
        Leaf::Number => Ok(()),
        Leaf::Bool => Err(format!(
            "`{path}` is true or false, not a number{}",
            if path.to_string() == "trust.trustworthy" {
                "; use `require_trustworthy = true` instead"
            } else {
                ""
            }
        )),
        Leaf::Text => Err(format!("`{path}` is text, not a number")),
    }
}

/// The node `path` names, or why it can never exist.
pub fn node(path: &MetricPath) -> Result<&'static Node, String> {
    let mut node = metrics();
    let mut at: Vec<&str> = Vec::new();
    for part in &path.parts {
        let here = if at.is_empty() {
            "metrics.json".to_string()
        } else {
            let shown = MetricPath {
                parts: at.iter().map(|p| p.to_string()).collect(),
            };
            format!("`{shown}`")
        };
        node = match node {
            Node::Obj(fields) => match fields.iter().find(|(k, _)| k == part) {
                Some((_, n)) => n,
                None => {
                    let names: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
                    return Err(unknown(part, &here, &names));
                }
            },
            Node::Map(Some((_, keys)), n) => {
                if keys.contains(&part.as_str()) {
                    n
                } else {
                    return Err(unknown(part, &here, keys));
                }
            }
            Node::Map(None, n) => n,
            Node::List(n) => {
                if part.parse::<usize>().is_err() {
                    return Err(format!(
                        "{here} is a list: index it with a number from 0, not `{part}`"
                    ));
                }
                n
            }
            Node::Pair => match part.as_str() {
                "0" | "1" => &NUM,
                _ => {
                    return Err(format!(
                        "{here} is an interval [lower, upper]: use `.0` for the lower bound \
                         or `.1` for the upper, not `{part}`"
                    ))
                }
            },
            Node::Num | Node::Bool | Node::Text => {
                return Err(format!("{here} is a single value: nothing lies under it"));
            }
        };
        at.push(part);
    }
    Ok(node)
}

/// The kind of value `path` names, or why it can never exist.
pub fn leaf(path: &MetricPath) -> Result<Leaf, String> {
    let node = node(path)?;
    match node {
        Node::Num => Ok(Leaf::Number),
        Node::Bool => Ok(Leaf::Bool),
        Node::Text => Ok(Leaf::Text),
        Node::Pair => Err(format!(
            "`{path}` is an interval: add `.0` for its lower bound or `.1` for its upper"
        )),
        Node::List(_) => Err(format!(
            "`{path}` is a list: add an index, such as `{path}.0`"
        )),
        Node::Obj(fields) => {
            let numbers: Vec<&str> = fields
                .iter()
                .filter(|(_, n)| matches!(n, Node::Num))
                .map(|(k, _)| k.as_str())
                .collect();
            Err(format!(
                "`{path}` is a table, not a number{}",
                if numbers.is_empty() {
                    String::new()
                } else {
                    format!("; its numbers: {}", numbers.join(", "))
                }
            ))
        }
        Node::Map(keys, _) => Err(format!(
            "`{path}` is a table, not a number; add one of its keys{}",
            keys.map(|(_, k)| format!(" ({})", k.join(", ")))
                .unwrap_or_default()
        )),
    }
}

fn unknown(part: &str, here: &str, names: &[&str]) -> String {
    let mut msg = format!("{here} has no `{part}`");
    let close = crate::text::close_names(part, names);
    if !close.is_empty() {
        msg.push_str(&format!("; did you mean {}?", crate::text::or_list(&close)));
    } else {
        msg.push_str(&format!("; it has: {}", names.join(", ")));
    }
    msg
}

/// Every path to a value, as a pattern with its kind: `<arm>` is baseline or treatment, `<i>` a
/// list index, `<key>` any key of the table; named choices are spelled `{a|b|c}`.
pub fn patterns() -> Vec<(String, Leaf)> {
    let mut out = Vec::new();
    walk(metrics(), &mut Vec::new(), &mut out);
    out
}

/// Every path to a number, as a pattern (what `gate --list-metrics` prints).
pub fn number_patterns() -> Vec<String> {
    patterns()
        .into_iter()
        .filter(|(_, leaf)| *leaf == Leaf::Number)
        .map(|(p, _)| p)
        .collect()
}

/// The named key sets the patterns use, with their keys: `("arm", ["baseline", "treatment"])`.
pub fn key_sets() -> Vec<KeySet> {
    fn go(node: &Node, out: &mut Vec<KeySet>) {
        match node {
            Node::Obj(fields) => fields.iter().for_each(|(_, n)| go(n, out)),
            Node::Map(named, n) => {
                if let Some(set) = named {
                    if !out.contains(set) {
                        out.push(*set);
                    }
                }
                go(n, out);
            }
            Node::List(n) => go(n, out),
            Node::Num | Node::Bool | Node::Text | Node::Pair => {}
        }
    }
    let mut out = Vec::new();
    go(metrics(), &mut out);
    out
}

/// How a part under `node` is spelled in a pattern, and the node it leads to.
fn spelled(node: &'static Node, part: Option<&str>) -> Option<(String, &'static Node)> {
    match node {
        Node::Obj(fields) => {
            let part = part?;
            let (k, n) = fields.iter().find(|(k, _)| k == part)?;
            Some((k.clone(), n))
        }
        Node::Map(Some((label, _)), n) => Some((format!("<{label}>"), n)),
        Node::Map(None, n) => Some(("<key>".into(), n)),
        Node::List(n) => Some(("<i>".into(), n)),
        Node::Pair => Some(("{0|1}".into(), &NUM)),
        Node::Num | Node::Bool | Node::Text => None,
    }
}

fn walk(node: &'static Node, prefix: &mut Vec<String>, out: &mut Vec<(String, Leaf)>) {
    let leaf = match node {
        Node::Num => Some(Leaf::Number),
        Node::Bool => Some(Leaf::Bool),
        Node::Text => Some(Leaf::Text),
        _ => None,
    };
    if let Some(leaf) = leaf {
        out.push((prefix.join("."), leaf));
        return;
    }
    let children: Vec<(String, &'static Node)> = match node {
        Node::Obj(fields) => fields.iter().map(|(k, n)| (k.clone(), n)).collect(),
        _ => spelled(node, None).into_iter().collect(),
    };
    for (part, child) in children {
        prefix.push(part);
        walk(child, prefix, out);
        prefix.pop();
    }
}

/// The pattern (as [`patterns`] spells it) that a path which can exist falls under.
pub fn pattern_of(path: &MetricPath) -> Result<String, String> {
    node(path)?;
    let mut node = metrics();
    let mut parts = Vec::new();
    for part in &path.parts {
        let (spelling, next) =
            spelled(node, Some(part)).ok_or_else(|| format!("`{path}` leaves the schema"))?;
        parts.push(spelling);
        node = next;
    }
    Ok(parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(s: &str) -> MetricPath {
        MetricPath::parse(s).unwrap()
    }

    #[test]
    fn paths_split_on_dots_and_quotes_keep_dots() {
        assert_eq!(path("a.b.c").parts, ["a", "b", "c"]);
        assert_eq!(
            path(r#"review.arms.baseline.dropped_by_value."(0.45, 0.50]""#).parts,
            [
                "review",
                "arms",
                "baseline",
                "dropped_by_value",
                "(0.45, 0.50]"
            ]
        );
        assert_eq!(
            path(r#"review.arms.baseline.dropped_by_value."(0.45, 0.50]""#).to_string(),
            r#"review.arms.baseline.dropped_by_value."(0.45, 0.50]""#
        );
        // Regression (issue 34): a quoted part before another part was dropped, so the README's
        // own `scores.delta."exact_match,strict-match".delta` read as `scores.delta.delta`,
        // and `scores.delta."x".acc.delta` would have gated scorer `acc`.
        assert_eq!(
            path(r#"scores.delta."exact_match,strict-match".delta"#).parts,
            ["scores", "delta", "exact_match,strict-match", "delta"]
        );
        assert_eq!(
            path(r#"scores.delta."grader.v2".mcnemar.baseline_only"#).parts,
            ["scores", "delta", "grader.v2", "mcnemar", "baseline_only"]
        );
        assert_eq!(path(r#""a"."b".c"#).parts, ["a", "b", "c"]);
        for p in [
            r#"scores.delta."exact_match,strict-match".delta"#,
            r#"scores.delta."grader.v2".mcnemar.baseline_only"#,
        ] {
            assert_eq!(
                path(p).to_string(),
                p.replace(r#""exact_match,strict-match""#, "exact_match,strict-match")
            );
            assert_eq!(number_at(&path(p)), Ok(()), "{p}");
        }
        for bad in ["", "a..b", ".a", "a.", r#"a."b"#, r#"a."b"c"#, r#"a."b".."#] {
            assert!(MetricPath::parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn spec_example_paths_are_numbers() {
        for p in [
            "queries.arms.treatment.recovery_gate_rate",
            "agreement.judges.alpha",
            "queries.arms.treatment.calibration.ece",
            "review.arms.baseline.per_target.3.promotion_rate",
            "lift.ci.0",
            "queries.delta.ece.ci.1",
            "review.delta.precision.wilson.treatment.0",
            "queries.arms.baseline.ci.final_accuracy.1",
            r#"review.arms.treatment.dropped_by_value."25""#,
        ] {
            assert_eq!(number_at(&path(p)), Ok(()), "{p}");
        }
    }

    #[test]
    fn impossible_paths_say_where_they_leave_the_schema() {
        let err = |p: &str| number_at(&path(p)).unwrap_err();
        assert_eq!(
            err("queries.arms.treatment.calibraton.ece"),
            "`queries.arms.treatment` has no `calibraton`; did you mean `calibration`?"
        );
        for (p, says) in [
            ("queries.arms.control.ece", "baseline, treatment"),
            ("queries.delta.nope.delta", "has no `nope`"),
            ("lift.ci", "add `.0`"),
            ("lift.ci.2", "interval"),
            (
                "review.arms.baseline.per_target.first.merged",
                "number from 0",
            ),
            ("trust.trustworthy", "require_trustworthy"),
            ("review.arms.baseline.policy", "text"),
            ("agreement.judges", "alpha"),
            ("run_id.x", "nothing lies under it"),
        ] {
            assert!(err(p).contains(says), "{p}: {}", err(p));
        }
        assert!(err("bogus").starts_with("metrics.json has no `bogus`"));
    }

    #[test]
    fn delta_and_interval_names_come_from_the_code_that_writes_them() {
        let patterns = number_patterns();
        assert!(patterns.contains(&"queries.arms.<arm>.calibration.ece".to_string()));
        assert!(patterns.contains(&"review.delta.<review-delta>.delta".to_string()));
        let sets = key_sets();
        assert!(sets.contains(&("review-delta", &review_metrics::DELTA_NAMES[..])));
        assert!(sets.contains(&("arm", ARMS)));
        for name in review_metrics::DELTA_NAMES {
            assert_eq!(
                number_at(&path(&format!("review.delta.{name}.delta"))),
                Ok(())
            );
        }
        for name in query_metrics::CI_METRICS {
            assert_eq!(
                number_at(&path(&format!("queries.arms.baseline.ci.{name}.0"))),
                Ok(())
            );
        }
    }
}
