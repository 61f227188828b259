//! What a query or an imported item spent (docs/reference.md, "Cost and latency"): the tokens,
//! cost and wall time its line records (`usage`, `elapsed_ms`), per arm as means over the units
//! that reported the part, and compared between the arms over the (unit, run) pairs where both
//! did. Each table is declared once, by `usage_table!`: an entry's name is its key in the
//! section's `delta` (`queries.delta`, `scores.delta`), its row in the report's delta table and
//! a gate's path; its arm figures are `<name>_mean`, and the latency adds the whole set's
//! `<unit>_latency_p95_ms` (with its interval in the arm's `ci`).
//!
//! The names carry their unit (`query_cost_usd`, `item_cost_usd`) because a run may hold
//! reviews as well, and a delta's name alone must say which table it is in (the reviews' are
//! `cost_usd`, `latency_ms`, ... in their catalogue).

use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;

use super::UnitPair;
use crate::corpus::usage::Spent;

/// One part of what a unit spent, compared between the arms.
#[derive(Clone, Copy)]
pub struct Part {
    pub name: &'static str,
    pub label: &'static str,
    /// Decimals in the report.
    pub places: usize,
    /// The part of a unit's [`Spent`]; `None` when its line did not report it.
    pub of: fn(&Spent) -> Option<f64>,
    /// The name of the arm's 95th percentile over its units, where it reports one.
    pub p95: Option<&'static str>,
}

/// The four parts of one kind of unit: `usage_table!("query_", "query", "agent")`.
macro_rules! usage_table {
    ($prefix:literal, $noun:literal, $who:literal) => {
        [
            Part {
                name: concat!($prefix, "cost_usd"),
                label: concat!("cost per ", $noun, " (USD)"),
                places: 4,
                of: |s| s.cost_usd,
                p95: None,
            },
            Part {
                name: concat!($prefix, "input_tokens"),
                label: concat!("input tokens per ", $noun),
                places: 0,
                of: |s| s.input_tokens.map(|n| n as f64),
                p95: None,
            },
            Part {
                name: concat!($prefix, "output_tokens"),
                label: concat!("output tokens per ", $noun),
                places: 0,
                of: |s| s.output_tokens.map(|n| n as f64),
                p95: None,
            },
            Part {
                name: concat!($prefix, "latency_ms"),
                label: concat!($who, " wall time per ", $noun, " (ms)"),
                places: 0,
                of: |s| s.elapsed_ms,
                p95: Some(concat!($prefix, "latency_p95_ms")),
            },
        ]
    };
}

impl Part {
    /// The cost part of a table: `usage_table!` declares it first.
    pub const fn cost_of(table: &[Part]) -> &'static str {
        table[0].name
    }
}

/// What an agent's queries spent: `queries.delta`'s usage entries.
pub const QUERY_USAGE: [Part; 4] = usage_table!("query_", "query", "agent");

/// What an imported log's samples spent: `scores.delta`'s usage entries.
pub const ITEM_USAGE: [Part; 4] = usage_table!("item_", "item", "model");

/// A kind of unit whose lines may say what they spent.
pub trait Table {
    const PARTS: &'static [Part];
    /// Its schema's name.
    const SCHEMA: &'static str;
}

/// Agent query traces.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Queries;
impl Table for Queries {
    const PARTS: &'static [Part] = &QUERY_USAGE;
    const SCHEMA: &'static str = "QueryUsageFigures";
}

/// Imported samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Items;
impl Table for Items {
    const PARTS: &'static [Part] = &ITEM_USAGE;
    const SCHEMA: &'static str = "ItemUsageFigures";
}

/// The names of the percentiles `table` declares: the `ci` keys they add to an arm.
pub const fn p95_of<const N: usize>(table: &[Part]) -> [&'static str; N] {
    let mut names = [""; N];
    let (mut i, mut k) = (0, 0);
    while i < table.len() {
        if let Some(name) = table[i].p95 {
            names[k] = name;
            k += 1;
        }
        i += 1;
    }
    assert!(k == N, "every declared percentile has its place");
    names
}

/// The names of the query arms' percentiles.
pub const QUERY_P95: [&str; 1] = p95_of(&QUERY_USAGE);

/// One unit's line as the usage figures read it: its name, its run (or repeat), what it spent.
pub type Spending<'a> = (&'a str, u32, Option<Spent>);

/// An arm's usage figures, flattened into the arm's object: `<name>_mean` and the
/// percentiles, each where some unit reported the part. Its schema lists every name it may
/// hold; reading keeps those names and leaves the arm's other keys alone.
pub struct UsageFigures<T>(pub BTreeMap<String, f64>, PhantomData<T>);

impl<T> UsageFigures<T> {
    pub fn new(figures: BTreeMap<String, f64>) -> Self {
        UsageFigures(figures, PhantomData)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T: Table> UsageFigures<T> {
    /// Every name an arm's usage figure may have.
    pub fn names() -> impl Iterator<Item = String> {
        T::PARTS.iter().flat_map(|u| {
            std::iter::once(format!("{}_mean", u.name)).chain(u.p95.map(str::to_string))
        })
    }
}

impl<T> Default for UsageFigures<T> {
    fn default() -> Self {
        Self::new(BTreeMap::new())
    }
}

impl<T> Clone for UsageFigures<T> {
    fn clone(&self) -> Self {
        Self::new(self.0.clone())
    }
}

impl<T> std::fmt::Debug for UsageFigures<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T> PartialEq for UsageFigures<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<T> serde::Serialize for UsageFigures<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de, T: Table> serde::Deserialize<'de> for UsageFigures<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let all = BTreeMap::<String, serde_json::Value>::deserialize(d)?;
        let names: Vec<String> = Self::names().collect();
        let mut out = BTreeMap::new();
        for (k, v) in all {
            if names.contains(&k) {
                let x = v
                    .as_f64()
                    .ok_or_else(|| serde::de::Error::custom(format!("`{k}` must be a number")))?;
                out.insert(k, x);
            }
        }
        Ok(Self::new(out))
    }
}

impl<T: Table> schemars::JsonSchema for UsageFigures<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::SCHEMA.into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let properties: serde_json::Map<String, serde_json::Value> = Self::names()
            .map(|n| (n, g.subschema_for::<f64>().to_value()))
            .collect();
        schemars::json_schema!({ "type": "object", "properties": properties })
    }
}

/// An arm's usage figures over its units: `<name>_mean` over the units that reported the part,
/// and the percentiles; a part no unit reported is absent, never 0. Each percentile's
/// distribution-free 95% interval goes in the second map, the arm's `ci`.
pub fn arm_figures<T: Table>(
    units: impl IntoIterator<Item = Option<Spent>>,
) -> (UsageFigures<T>, BTreeMap<String, [f64; 2]>) {
    let spent: Vec<Spent> = units.into_iter().flatten().collect();
    let mut figures = BTreeMap::new();
    let mut ci = BTreeMap::new();
    for u in T::PARTS {
        let mut values: Vec<f64> = spent.iter().filter_map(|s| (u.of)(s)).collect();
        if values.is_empty() {
            continue;
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        figures.insert(format!("{}_mean", u.name), mean);
        if let Some(name) = u.p95 {
            values.sort_unstable_by(f64::total_cmp);
            if let Some(p) = crate::stats::quantile::percentile(&values, 0.95) {
                figures.insert(name.to_string(), p);
            }
            if let Some(interval) = crate::stats::quantile::interval(&values, 0.95) {
                ci.insert(name.to_string(), interval);
            }
        }
    }
    (UsageFigures::new(figures), ci)
}

/// Per part of `T` reported in both arms: its values on the (unit, run) pairs where both arms'
/// lines report it.
pub fn pairs<T: Table>(
    baseline: &[Spending<'_>],
    treatment: &[Spending<'_>],
) -> Vec<(&'static Part, Vec<UnitPair>)> {
    let index: HashMap<(&str, u32), Option<Spent>> =
        baseline.iter().map(|&(u, r, s)| ((u, r), s)).collect();
    T::PARTS
        .iter()
        .filter_map(|u| {
            let units: Vec<UnitPair> = treatment
                .iter()
                .filter_map(|&(unit, run, t)| {
                    let b = (*index.get(&(unit, run))?)?;
                    Some(UnitPair {
                        unit: unit.to_string(),
                        run: Some(run),
                        baseline: (u.of)(&b)?,
                        treatment: (u.of)(&t?)?,
                    })
                })
                .collect();
            (!units.is_empty()).then_some((u, units))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::queries::{parse, Query};
    use crate::policy::{ConfidencePolicy, FlatMean};
    use crate::replay::query_metrics::{replay_all, QueryRow};

    /// Rows replayed from trace lines, each `(query_id, the line's usage keys)`.
    fn rows(lines: &[(&str, &str)]) -> Vec<QueryRow> {
        let text: String = lines
            .iter()
            .map(|(id, usage)| {
                let sep = if usage.is_empty() { "" } else { ", " };
                format!("{{\"query_id\": \"{id}\", \"tools\": []{sep}{usage}}}\n")
            })
            .collect();
        let (qs, problems) = parse("q.jsonl", text.as_bytes());
        assert!(problems.is_empty(), "{problems:?}");
        let refs: Vec<&Query> = qs.iter().collect();
        replay_all("a", &ConfidencePolicy::FlatMean(FlatMean::default()), &refs)
    }

    fn spending(rows: &[QueryRow]) -> Vec<Spending<'_>> {
        rows.iter().map(QueryRow::spending).collect()
    }

    // Hand-worked: costs 0.01 and 0.03 (one query reported none) average 0.02; no tokens were
    // reported, so no token figure is written.
    #[test]
    fn an_arm_averages_the_units_that_reported() {
        let rows = rows(&[
            ("q1", r#""usage": {"cost_usd": 0.01}, "elapsed_ms": 100"#),
            ("q2", r#""usage": {"cost_usd": 0.03}"#),
            ("q3", r#""elapsed_ms": 300"#),
        ]);
        let (figures, ci) = arm_figures::<Queries>(rows.iter().map(|r| r.spent));
        let figures = figures.0;
        assert!((figures["query_cost_usd_mean"] - 0.02).abs() < 1e-12);
        assert_eq!(figures["query_latency_ms_mean"], 200.0);
        // Two values: p95 = 100 + 0.95 × 200.
        assert!((figures["query_latency_p95_ms"] - 290.0).abs() < 1e-9);
        assert!(!figures.contains_key("query_input_tokens_mean"));
        assert!(ci.is_empty(), "two queries cannot bound a 95th percentile");
        assert_eq!(QUERY_P95, ["query_latency_p95_ms"]);
        assert_eq!(ITEM_USAGE[3].label, "model wall time per item (ms)");
        assert_eq!(ITEM_USAGE[3].p95, Some("item_latency_p95_ms"));
    }

    #[test]
    fn pairs_are_the_units_both_arms_reported() {
        let b = rows(&[
            ("q1", r#""usage": {"cost_usd": 0.01}"#),
            ("q2", r#""usage": {"cost_usd": 0.02}"#),
        ]);
        let t = rows(&[("q1", r#""usage": {"cost_usd": 0.02}"#), ("q2", "")]);
        let p = pairs::<Queries>(&spending(&b), &spending(&t));
        assert_eq!(p.len(), 1, "only cost is reported in both");
        assert_eq!(p[0].0.name, "query_cost_usd");
        assert_eq!(p[0].1.len(), 1);
        assert_eq!((p[0].1[0].baseline, p[0].1[0].treatment), (0.01, 0.02));
    }

    #[test]
    fn a_negative_or_textual_usage_is_a_malformed_trace() {
        for (usage, says) in [
            (r#""usage": {"cost_usd": -1}"#, "usage"),
            (r#""usage": {"cost_usd": "0.1"}"#, "usage"),
            (r#""elapsed_ms": -3"#, "elapsed_ms"),
            (r#""usage": {"tokens": 3}"#, "usage"),
        ] {
            let line = format!("{{\"query_id\": \"q\", \"tools\": [], {usage}}}\n");
            let (_, problems) = parse("q.jsonl", line.as_bytes());
            let text = problems
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                text.contains("q.jsonl") && text.contains(says),
                "{usage}: {text}"
            );
        }
    }
}
