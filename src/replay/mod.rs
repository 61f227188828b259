//! Replay: the pure policies that turn recorded outputs into what a configuration would have
//! shown the user. No IO, no clock, no randomness.

pub mod arm;
pub mod query;
pub mod query_metrics;
pub mod review;
pub mod review_metrics;
pub mod scores;
pub mod usage;

use serde::{Deserialize, Serialize};

use crate::stats::calibration::round9;
use crate::stats::paired::PairedDelta;

/// The section of `metrics.json` whose `delta` table holds a compared metric: the review
/// deltas, paired over targets, the query deltas, paired over (query, run), or the imported
/// scores' deltas, one per scorer, paired over items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeltaTable {
    Review,
    Queries,
    Scores,
    /// The lift: the judges' composite per item judged in both arms (its pairs are in
    /// `pairs.csv`; its figures under `lift` in `metrics.json`).
    Lift,
    /// The lift in human units (PPI++): an estimate with its standard error, over labelled
    /// items (under `lift_human` in `metrics.json`).
    LiftHuman,
}

impl DeltaTable {
    pub fn name(self) -> &'static str {
        match self {
            DeltaTable::Review => "review",
            DeltaTable::Queries => "queries",
            DeltaTable::Scores => "scores",
            DeltaTable::Lift => "lift",
            DeltaTable::LiftHuman => "lift_human",
        }
    }

    /// What one pair is, for sentences: "targets", "queries".
    pub fn units(self) -> &'static str {
        match self {
            DeltaTable::Review => "targets",
            DeltaTable::Queries => "queries",
            DeltaTable::Scores | DeltaTable::Lift => "items",
            DeltaTable::LiftHuman => "labelled items",
        }
    }
}

/// Which way a metric gets better, where it has one: precision up, calibration error down. A
/// metric without one (a count of findings, a promotion rate) is a trade-off the team weighs,
/// and decides nothing unless `[decision]` names a direction for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// A metric compared between the arms, as the catalogues declare it: the name of its delta
/// (a key of `review.delta` or `queries.delta`), its table, and whether the delta is a mean
/// of per-unit differences (every one but `ece`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compared {
    pub name: &'static str,
    pub table: DeltaTable,
    pub per_unit: bool,
    /// Derived from judge verdicts (precision): needs `verdicts.jsonl`.
    pub judged: bool,
    /// Measured by code review's precision controls (the validation pass, skip rules,
    /// lint-ignore): only in code mode, and only when the experiment replays them.
    pub controls: bool,
    /// Which way it gets better, where it has one.
    pub better: Option<Better>,
    /// Its words in the report's summary table, when it has a row there.
    pub label: Option<&'static str>,
    /// Decimals in the report.
    pub places: usize,
    /// Its row in the report's summary table: (rank, decimals).
    pub summary: Option<(u8, usize)>,
    /// The range every per-unit value lies in by construction, where it has one: what an
    /// anytime-valid sequence bounds its differences by (docs/guides/stop-when-you-know.md).
    pub range: Option<[f64; 2]>,
}

impl Compared {
    /// How the report names it: its summary label, else its name.
    pub fn words(&self) -> &'static str {
        self.label.unwrap_or(self.name)
    }

    /// How a sentence names the delta under `key`: the metric's words, or `scorer <key>`.
    pub fn words_of(&self, key: &str) -> String {
        if *self == SCORER {
            format!("scorer {key}")
        } else {
            self.words().to_string()
        }
    }
}

/// Every compared metric: the review catalogue's deltas, then the query catalogue's. Their
/// names are distinct (a test checks), so a name alone says which table it is in.
pub fn compared() -> Vec<Compared> {
    review_metrics::delta_metrics()
        .map(|m| Compared {
            name: m.name,
            table: DeltaTable::Review,
            per_unit: true,
            judged: m.judged,
            controls: m.precision,
            better: m.better,
            label: m.label,
            places: m.places,
            summary: m.summary.map(|(rank, _, places)| (rank, places)),
            range: m.range,
        })
        .chain(query_metrics::QUERY_DELTAS.iter().map(|d| Compared {
            name: d.name,
            table: DeltaTable::Queries,
            per_unit: d.has_per_query(),
            judged: false,
            controls: false,
            better: d.better,
            label: d.label,
            places: 3,
            summary: d.summary.map(|(rank, _)| (rank, 3)),
            // Every per-query value is a confidence or a 0/1 outcome.
            range: d.has_per_query().then_some([0.0, 1.0]),
        }))
        .chain(
            (usage::QUERY_USAGE.iter().map(|u| (DeltaTable::Queries, u)))
                .chain(usage::ITEM_USAGE.iter().map(|u| (DeltaTable::Scores, u)))
                .map(|(table, u)| Compared {
                    name: u.name,
                    table,
                    per_unit: true,
                    judged: false,
                    controls: false,
                    better: Some(Better::Lower),
                    label: Some(u.label),
                    places: u.places,
                    summary: None,
                    range: None,
                }),
        )
        .collect()
}

/// The metrics of `table` with a row in the report's summary table, in its order: (name,
/// label, decimals).
pub fn summary_rows(table: DeltaTable) -> Vec<(&'static str, &'static str, usize)> {
    let mut rows: Vec<(u8, &str, &str, usize)> = compared()
        .into_iter()
        .filter(|c| c.table == table)
        .filter_map(|c| {
            c.summary
                .map(|(rank, places)| (rank, c.name, c.words(), places))
        })
        .collect();
    rows.sort_by_key(|r| r.0);
    rows.into_iter().map(|(_, n, l, p)| (n, l, p)).collect()
}

/// Every metric of `table` with its delta, in catalogue order: (name, label, decimals).
pub fn delta_rows(table: DeltaTable) -> Vec<(&'static str, &'static str, usize)> {
    compared()
        .into_iter()
        .filter(|c| c.table == table)
        .map(|c| (c.name, c.words(), c.places))
        .collect()
}

/// The compared metrics with a relative delta (treatment ÷ baseline − 1): what a reviewer's or
/// a query's calls spent. Only these take a margin written as a percentage.
pub fn relative_metrics() -> Vec<&'static str> {
    review_metrics::REVIEW_METRICS
        .iter()
        .filter(|m| m.usage && m.delta)
        .map(|m| m.name)
        .chain(usage::QUERY_USAGE.iter().map(|u| u.name))
        .chain(usage::ITEM_USAGE.iter().map(|u| u.name))
        .collect()
}

/// The compared metric called `name`.
pub fn compared_named(name: &str) -> Option<Compared> {
    compared().into_iter().find(|c| c.name == name)
}

/// An imported scorer's delta, under the scorer's own name in `scores.delta`: a mean over
/// items of each item's mean score, on the scale the log wrote, with no better direction
/// unless `[decision]` names one.
pub const SCORER: Compared = Compared {
    name: "scorer",
    table: DeltaTable::Scores,
    per_unit: true,
    judged: false,
    controls: false,
    better: None,
    label: None,
    places: 3,
    summary: None,
    range: None,
};

/// The lift (docs/guides/trust.md): the mean difference of the judges' composite over the
/// items judged in both arms, on [0, 1]. Withheld when the judges are not trusted.
pub const LIFT: Compared = Compared {
    name: "lift",
    table: DeltaTable::Lift,
    per_unit: true,
    judged: true,
    controls: false,
    better: None,
    label: Some("the lift (judge composite)"),
    places: 3,
    summary: None,
    range: Some([0.0, 1.0]),
};

/// The lift in human units (docs/guides/judges-and-humans.md): PPI++'s estimate from the
/// labelled items, with a standard error and no per-unit differences.
pub const LIFT_HUMAN: Compared = Compared {
    name: "lift_human",
    table: DeltaTable::LiftHuman,
    per_unit: false,
    judged: true,
    controls: false,
    better: None,
    label: Some("the lift in human units (PPI++)"),
    places: 3,
    summary: None,
    range: None,
};

/// The metrics the judges measure beside the catalogues': a `[decision]` and `plan` may name
/// them, a primary metric may not (they have no direction of their own).
pub const LIFTS: [Compared; 2] = [LIFT, LIFT_HUMAN];

/// The metric a decision or a plan may name `name`: a catalogue's, or a lift.
pub fn decidable(name: &str) -> Option<Compared> {
    compared_named(name).or_else(|| LIFTS.into_iter().find(|c| c.name == name))
}

/// What a delta's key names: the catalogue's metric of that name, else an imported scorer.
pub fn compared_key(key: &str) -> Compared {
    compared_named(key).unwrap_or(SCORER)
}

/// One unit's value of a compared metric in both arms: the unit is a target (its value the
/// mean over its runs, `run` empty) or a query in one run.
#[derive(Clone, Debug, PartialEq)]
pub struct UnitPair {
    pub unit: String,
    pub run: Option<u32>,
    pub baseline: f64,
    pub treatment: f64,
}

/// treatment − baseline over units' values (docs/guides/ab-rubric-change.md): `None` without a unit.
pub fn paired(
    units: &[UnitPair],
    replicates: usize,
    seed: u64,
    threads: usize,
) -> Option<PairedDelta> {
    let xs: Vec<f64> = units.iter().map(|u| u.baseline).collect();
    let ys: Vec<f64> = units.iter().map(|u| u.treatment).collect();
    crate::stats::paired::paired_delta(&xs, &ys, replicates, seed, threads)
}

/// A compared metric's delta with the per-unit values it is the mean difference of (empty for
/// a delta that is not such a mean).
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub name: &'static str,
    pub delta: PairedDelta,
    pub units: Vec<UnitPair>,
}

/// How often one confidence value occurred.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ValueCount {
    pub value: f64,
    pub count: usize,
}

/// Every distinct value (compared at 9 decimal places, as the gates compare) with its count,
/// ascending.
pub fn value_counts(values: impl IntoIterator<Item = f64>) -> Vec<ValueCount> {
    merge_counts(values.into_iter().map(|v| ValueCount {
        value: round9(v),
        count: 1,
    }))
}

/// Pools counts of values already rounded (as [`value_counts`] gives them), ascending.
pub fn merge_counts(parts: impl IntoIterator<Item = ValueCount>) -> Vec<ValueCount> {
    let mut parts: Vec<ValueCount> = parts.into_iter().collect();
    parts.sort_unstable_by(|a, b| a.value.total_cmp(&b.value));
    let mut out: Vec<ValueCount> = Vec::new();
    for p in parts {
        match out.last_mut() {
            Some(last) if last.value == p.value => last.count += p.count,
            _ => out.push(p),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compared_names_are_distinct_and_only_ece_has_no_per_unit_values() {
        let all = compared();
        let mut names: Vec<&str> = all.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            all.len(),
            "a name in both tables would be ambiguous"
        );
        let whole: Vec<&str> = all.iter().filter(|c| !c.per_unit).map(|c| c.name).collect();
        assert_eq!(whole, ["ece"]);
        assert_eq!(
            compared_named("precision").unwrap().table,
            DeltaTable::Review
        );
        assert_eq!(
            compared_named("final_accuracy").unwrap().table,
            DeltaTable::Queries
        );
        assert_eq!(compared_named("nope"), None);
    }

    #[test]
    fn value_counts_merge_values_equal_at_nine_decimals() {
        let counts = value_counts([0.65, 0.55 + 0.1, 0.5, 1.0]);
        assert_eq!(
            counts,
            vec![
                ValueCount {
                    value: 0.5,
                    count: 1
                },
                ValueCount {
                    value: 0.65,
                    count: 2
                },
                ValueCount {
                    value: 1.0,
                    count: 1
                },
            ]
        );
        assert!(value_counts([]).is_empty());
        // Pooling counts gives what counting everything at once gives.
        let pooled = merge_counts(
            value_counts([0.5, 0.65])
                .into_iter()
                .chain(value_counts([0.65, 1.0])),
        );
        assert_eq!(pooled, counts);
    }
}
