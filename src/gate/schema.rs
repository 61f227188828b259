//! The shape of `metrics.json`, for gate policies: which dotted paths can exist and what they
//! hold. A policy naming a path that can never exist is refused before anything runs; a path
//! that can exist but is absent or null in a given run fails its check as "not found".
//!
//! The tree mirrors the `Metrics` types in `analysis`, `replay` and `trust`. `tests/gate.rs`
//! walks every leaf of the example runs' `metrics.json` through it, and every path it lists
//! through the example runs, so the two cannot drift apart unnoticed.

use std::fmt;

use crate::replay::{query_metrics, review_metrics};

/// What a path names.
#[derive(Clone, Copy, Debug)]
pub enum Node {
    /// A number (possibly null in a run: an undefined α, a withheld precision).
    Num,
    Bool,
    Text,
    /// A table with these fields.
    Obj(&'static [(&'static str, Node)]),
    /// A table whose keys are these names (or any name, for `None`), each holding the node.
    /// The label names the set in patterns: `<arm>`.
    Map(
        Option<(&'static str, &'static [&'static str])>,
        &'static Node,
    ),
    /// A list of the node, indexed from 0.
    List(&'static Node),
    /// A 95% interval `[lower, upper]`: index 0 is the lower bound, 1 the upper.
    Pair,
}

/// The two arm names every per-arm table has.
pub const ARMS: &[&str] = &["baseline", "treatment"];

const fn per_arm(node: &'static Node) -> Node {
    Node::Map(Some(("arm", ARMS)), node)
}

const INTERVAL: Node = Node::Obj(&[
    ("lower", Node::Num),
    ("upper", Node::Num),
    ("method", Node::Text),
    ("replicates", Node::Num),
    ("seed", Node::Num),
    ("undefined_replicates", Node::Num),
]);

const AGREEMENT: Node = Node::Obj(&[
    ("alpha", Node::Num),
    ("level", Node::Text),
    ("ci", INTERVAL),
    ("units", Node::Num),
    ("raters", Node::Num),
    ("undefined_reason", Node::Text),
]);

const PAIRED: &[(&str, Node)] = &[
    ("baseline", Node::Num),
    ("treatment", Node::Num),
    ("delta", Node::Num),
    ("ci", Node::Pair),
    ("p_value", Node::Num),
    ("pairs", Node::Num),
];

const REVIEW_DELTA: Node = Node::Obj(&[
    ("baseline", Node::Num),
    ("treatment", Node::Num),
    ("delta", Node::Num),
    ("ci", Node::Pair),
    ("p_value", Node::Num),
    ("pairs", Node::Num),
    ("wilson", per_arm(&Node::Pair)),
]);

const VALUE_COUNT: Node = Node::Obj(&[("value", Node::Num), ("count", Node::Num)]);

const TARGET: Node = Node::Obj(&[
    ("target", Node::Text),
    ("run", Node::Num),
    ("findings_raw", Node::Num),
    ("malformed", Node::Num),
    ("failed_reviewers", Node::Num),
    ("distinct_values", Node::Num),
    ("entropy_bits", Node::Num),
    ("values_for_80pct", Node::Num),
    ("merged", Node::Num),
    ("corroborated", Node::Num),
    ("promoted", Node::Num),
    ("promotion_rate", Node::Num),
    ("dropped", Node::Num),
    ("fyi", Node::Num),
    ("actionable", Node::Num),
    ("decisions", Node::Num),
    ("auto_apply", Node::Num),
    ("demoted", Node::Num),
    ("pre_existing", Node::Num),
    ("fixer", Node::Num),
    ("residual", Node::Num),
    ("report_only", Node::Num),
    ("dropped_by_value", Node::Map(None, &Node::Num)),
    ("precision", Node::Num),
    ("judged_actionable", Node::Num),
]);

const REVIEW_ARM: Node = Node::Obj(&[
    ("policy", Node::Text),
    ("scale", Node::Text),
    ("targets", Node::Num),
    ("runs", Node::Num),
    ("findings_raw", Node::Num),
    ("malformed", Node::Num),
    ("failed_reviewers", Node::Num),
    ("merged", Node::Num),
    ("corroborated", Node::Num),
    ("promoted", Node::Num),
    ("dropped", Node::Num),
    ("fyi", Node::Num),
    ("actionable", Node::Num),
    ("decisions", Node::Num),
    ("auto_apply", Node::Num),
    ("demoted", Node::Num),
    ("pre_existing", Node::Num),
    ("fixer", Node::Num),
    ("residual", Node::Num),
    ("report_only", Node::Num),
    ("distinct_values_mean", Node::Num),
    ("distinct_values_max", Node::Num),
    ("entropy_bits_mean", Node::Num),
    ("values_for_80pct_mean", Node::Num),
    ("promotion_rate", Node::Num),
    ("corroboration_rate", Node::Num),
    (
        "rate_ci",
        Node::Obj(&[
            ("promotion_rate", Node::Pair),
            ("corroboration_rate", Node::Pair),
        ]),
    ),
    ("values", Node::List(&VALUE_COUNT)),
    ("precision", Node::Num),
    ("judged_actionable", Node::Num),
    ("dropped_by_value", Node::Map(None, &Node::Num)),
    (
        "anchor_calibration",
        Node::List(&Node::Obj(&[
            ("value", Node::Text),
            ("count", Node::Num),
            ("mean_confidence", Node::Num),
            ("mean_composite", Node::Num),
        ])),
    ),
    ("malformed_reasons", Node::Map(None, &Node::Num)),
    (
        "failed_calls",
        Node::List(&Node::Obj(&[
            ("target", Node::Text),
            ("run", Node::Num),
            ("reviewer", Node::Text),
            ("reason", Node::Text),
        ])),
    ),
    ("per_target", Node::List(&TARGET)),
]);

const QUERY_ARM: Node = Node::Obj(&[
    ("policy", Node::Text),
    ("stop_threshold", Node::Num),
    ("recovery_threshold", Node::Num),
    (
        "band_thresholds",
        Node::Obj(&[
            ("strong", Node::Num),
            ("adequate", Node::Num),
            ("weak", Node::Num),
        ]),
    ),
    ("queries", Node::Num),
    ("errors", Node::Num),
    ("stopped", Node::Num),
    ("recovery_fired", Node::Num),
    ("recovery_gate_rate", Node::Num),
    ("recovery_attempts", Node::Num),
    ("primary_confidence_mean", Node::Num),
    ("confidence_mean", Node::Num),
    ("confidence_median", Node::Num),
    ("distinct_values", Node::Num),
    ("values", Node::List(&VALUE_COUNT)),
    (
        "bands",
        Node::Obj(&[
            ("strong", Node::Num),
            ("adequate", Node::Num),
            ("weak", Node::Num),
            ("failed", Node::Num),
        ]),
    ),
    ("first_pass_success", Node::Num),
    ("final_accuracy", Node::Num),
    ("recovery_success", Node::Num),
    ("recovered", Node::Num),
    ("unnecessary_recovery_rate", Node::Num),
    ("labelled", Node::Num),
    (
        "calibration",
        Node::Obj(&[
            ("n", Node::Num),
            ("ece", Node::Num),
            ("mce", Node::Num),
            ("brier", Node::Num),
            ("auroc", Node::Num),
            (
                "bins",
                Node::List(&Node::Obj(&[
                    ("lower", Node::Num),
                    ("upper", Node::Num),
                    ("count", Node::Num),
                    ("mean_confidence", Node::Num),
                    ("accuracy", Node::Num),
                ])),
            ),
            ("ece_ci", Node::Pair),
            ("brier_ci", Node::Pair),
        ]),
    ),
    (
        "ci",
        Node::Map(Some(("ci-figure", &query_metrics::CI_METRICS)), &Node::Pair),
    ),
]);

const TRUST: Node = Node::Obj(&[
    ("trustworthy", Node::Bool),
    ("trust_reasons", Node::List(&Node::Text)),
    ("inter_rater_reliability", Node::Num),
    ("irr_note", Node::Text),
    (
        "per_item_spread",
        Node::List(&Node::Obj(&[
            ("arm", Node::Text),
            ("item_id", Node::Text),
            ("spread", Node::Num),
            ("dimension", Node::Text),
            ("survivors", Node::Num),
            ("judges", Node::Num),
        ])),
    ),
    ("items", Node::Num),
    ("judges", Node::Num),
    (
        "thresholds",
        Node::Obj(&[
            ("irr_floor", Node::Num),
            ("spread_ceiling", Node::Num),
            ("min_survivors", Node::Num),
            ("level", Node::Text),
        ]),
    ),
]);

const LIFT: Node = Node::Obj(&[
    ("value", Node::Num),
    ("ci", Node::Pair),
    ("items", Node::Num),
    ("withheld", Node::Bool),
    ("reasons", Node::List(&Node::Text)),
    ("note", Node::Text),
    ("paired", Node::Obj(PAIRED)),
]);

/// The whole of `metrics.json`.
pub const METRICS: Node = Node::Obj(&[
    ("experiment", Node::Text),
    ("run_id", Node::Text),
    (
        "review",
        Node::Obj(&[
            ("mode", Node::Text),
            ("arms", per_arm(&REVIEW_ARM)),
            (
                "delta",
                Node::Map(
                    Some(("review-delta", &review_metrics::DELTA_NAMES)),
                    &REVIEW_DELTA,
                ),
            ),
            (
                "withheld",
                Node::Obj(&[
                    ("metrics", Node::List(&Node::Text)),
                    ("reasons", Node::List(&Node::Text)),
                ]),
            ),
        ]),
    ),
    (
        "queries",
        Node::Obj(&[
            ("arms", per_arm(&QUERY_ARM)),
            (
                "delta",
                Node::Map(
                    Some(("query-delta", &query_metrics::DELTA_METRICS)),
                    &Node::Obj(PAIRED),
                ),
            ),
        ]),
    ),
    (
        "agreement",
        Node::Obj(&[
            ("judges", AGREEMENT),
            ("reviewers", per_arm(&AGREEMENT)),
            ("runs", per_arm(&AGREEMENT)),
        ]),
    ),
    ("trust", TRUST),
    ("lift", LIFT),
]);

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
                match chars.next() {
                    None => {
                        parts.push(part);
                        break;
                    }
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
    let mut node = &METRICS;
    let mut at: Vec<&str> = Vec::new();
    for part in &path.parts {
        let here = if at.is_empty() {
            "metrics.json".to_string()
        } else {
            format!("`{}`", at.join("."))
        };
        node = match node {
            Node::Obj(fields) => match fields.iter().find(|(k, _)| k == part) {
                Some((_, n)) => n,
                None => {
                    let names: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
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
                "0" | "1" => &Node::Num,
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
                .map(|(k, _)| *k)
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
    if let Some(near) = nearest(part, names) {
        msg.push_str(&format!("; did you mean `{near}`?"));
    } else {
        msg.push_str(&format!("; it has: {}", names.join(", ")));
    }
    msg
}

/// The name closest to `word`, when it is close enough to be a likely typo.
fn nearest<'a>(word: &str, names: &[&'a str]) -> Option<&'a str> {
    names
        .iter()
        .map(|n| (edit_distance(word, n), *n))
        .filter(|(d, n)| *d <= (n.len().max(word.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`: the
/// optimal string alignment distance.
fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// Every path to a value, as a pattern with its kind: `<arm>` is baseline or treatment, `<i>` a
/// list index, `<key>` any key of the table; named choices are spelled `{a|b|c}`.
pub fn patterns() -> Vec<(String, Leaf)> {
    let mut out = Vec::new();
    walk(&METRICS, &mut Vec::new(), &mut out);
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
pub fn key_sets() -> Vec<(&'static str, &'static [&'static str])> {
    fn go(node: &Node, out: &mut Vec<(&'static str, &'static [&'static str])>) {
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
    go(&METRICS, &mut out);
    out
}

/// How a part under `node` is spelled in a pattern, and the node it leads to.
fn spelled(node: &'static Node, part: Option<&str>) -> Option<(String, &'static Node)> {
    match node {
        Node::Obj(fields) => {
            let part = part?;
            let (k, n) = fields.iter().find(|(k, _)| *k == part)?;
            Some((k.to_string(), n))
        }
        Node::Map(Some((label, _)), n) => Some((format!("<{label}>"), *n)),
        Node::Map(None, n) => Some(("<key>".into(), *n)),
        Node::List(n) => Some(("<i>".into(), *n)),
        Node::Pair => Some(("{0|1}".into(), &Node::Num)),
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
        Node::Obj(fields) => fields.iter().map(|(k, n)| (k.to_string(), n)).collect(),
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
    let mut node = &METRICS;
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
        for bad in ["", "a..b", ".a", "a.", r#"a."b"#, r#"a."b"c"#] {
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
        assert!(err("queries.arms.control.ece").contains("baseline, treatment"));
        assert!(err("queries.delta.nope.delta").contains("has no `nope`"));
        assert!(err("lift.ci").contains("add `.0`"));
        assert!(err("lift.ci.2").contains("interval"));
        assert!(err("review.arms.baseline.per_target.first.merged").contains("number from 0"));
        assert!(err("trust.trustworthy").contains("require_trustworthy"));
        assert!(err("review.arms.baseline.policy").contains("text"));
        assert!(err("agreement.judges").contains("alpha"));
        assert!(err("run_id.x").contains("nothing lies under it"));
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

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
        assert_eq!(edit_distance("alpah", "alpha"), 1);
        assert_eq!(nearest("alpah", &["alpha", "level"]), Some("alpha"));
        assert_eq!(nearest("zzz", &["alpha", "level"]), None);
    }
}
