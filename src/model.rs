//! The one result model: [`Metrics`], what `metrics.json` holds, with the rows behind a run's
//! tables ([`Analysis`]). `analysis` assembles it; the gate's metric paths, the report and
//! `calibench plan` read it. It sits below them all, and above the replay, trust and decision
//! layers whose values it holds.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::corpus::reviews::{Autofix, CodeSite, Severity};
use crate::policy::Mode;
use crate::replay::query_metrics::{QueryArmMetrics, QueryRow};
use crate::replay::review::{Check, Merged, MergedLocation, Queue, Route, Tier};
use crate::replay::review_metrics::ArmMetrics;
use crate::replay::scores::{self as imported, McNemar, ScoreArm};
use crate::replay::{DeltaTable, UnitPair};
use crate::stats::alpha::Level;
use crate::stats::bootstrap::Interval;
use crate::stats::paired::PairedDelta;
use crate::trust::{Lift, TrustVerdict};

/// A value per arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PerArm<T> {
    pub baseline: T,
    pub treatment: T,
}

/// Everything `metrics.json` holds (docs/guides/reports.md); sections are absent when the corpus has no file
/// for them.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Metrics {
    pub experiment: String,
    pub run_id: String,
    pub review: Option<ReviewSection>,
    pub queries: Option<QuerySection>,
    /// Imported scores: per scorer, both arms and the paired delta over items.
    #[serde(default)]
    pub scores: Option<ScoresSection>,
    pub agreement: Option<AgreementSection>,
    pub trust: Option<TrustVerdict>,
    pub lift: Option<Lift>,
    /// The judges' bias audit (docs/guides/trust.md, "The bias audit"), with judge verdicts
    /// and `[trust] bias` not `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bias: Option<crate::trust::bias::Bias>,
    /// What evaluating cost: the judges' calls' usage over both arms, when any reported it
    /// (docs/reference.md, "Cost and latency"); never part of an arm's cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation: Option<crate::corpus::usage::Evaluation>,
    /// With human labels: can a judge replace the annotators (the alt-test of each judge and of
    /// the panel), the judges' error correlations and the effective number of judges.
    #[serde(default)]
    pub humans: Option<crate::humans::HumansSection>,
    /// With human labels on lift pairs: the lift and each arm's mean composite in human units,
    /// PPI++ beside the labels alone.
    #[serde(default)]
    pub lift_human: Option<crate::human_units::LiftHuman>,
    /// With human labels on judged findings: per arm and recorded confidence value, the judged
    /// composite in human units (does a 75 hit 0.75?).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchor_calibration_human: Vec<crate::human_units::CalibrationHumanCell>,
    /// Set when an unfinished collection was replayed with `--allow-partial`: why the
    /// figures may come from partial arms. The report leads with it.
    #[serde(default)]
    pub incomplete: Option<String>,
    /// What became of every line of every corpus file and every finding (docs/reference.md,
    /// "The input ledger"), with the caveats the decision carries.
    #[serde(default)]
    pub inputs: Option<crate::corpus::ledger::Inputs>,
    /// The arms more than half of whose findings were malformed: the report says its inputs are
    /// suspect, with the share and the commonest reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs_suspect: Vec<crate::corpus::MalformedShare>,
    /// The experiment's primary metrics (docs/guides/ab-rubric-change.md), in its order: one Holm family, and the
    /// report's headline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub primary: Vec<String>,
    /// Better, worse or inconclusive (docs/reference.md, "The decision"): absent when the
    /// experiment names no decision metric (no `[decision]`, and no primary metric with a better
    /// direction).
    #[serde(default)]
    pub decision: Option<crate::decision::Decision>,
    /// The sequential decision of `run --sequential` (docs/guides/stop-when-you-know.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<crate::sequential::Sequential>,
}

impl Metrics {
    /// The delta table of one section, when the run has that section.
    pub fn deltas(&self, table: DeltaTable) -> Option<&BTreeMap<String, Delta>> {
        match table {
            DeltaTable::Review => self.review.as_ref().map(|r| &r.delta),
            DeltaTable::Queries => self.queries.as_ref().map(|q| &q.delta),
            DeltaTable::Scores => self.scores.as_ref().map(|s| &s.delta),
            DeltaTable::Lift | DeltaTable::LiftHuman => None,
        }
    }

    /// The metrics a table withheld because the judges were not trusted.
    pub fn withheld(&self, table: DeltaTable) -> &[String] {
        let w = match table {
            DeltaTable::Review => self.review.as_ref().and_then(|r| r.withheld.as_ref()),
            DeltaTable::Queries | DeltaTable::Lift | DeltaTable::LiftHuman => None,
            DeltaTable::Scores => self.scores.as_ref().and_then(|s| s.withheld.as_ref()),
        };
        w.map_or(&[], |w| w.metrics.as_slice())
    }

    /// The reported delta of the compared metric `name`, from the table that holds it.
    pub fn delta(&self, name: &str) -> Option<&Delta> {
        let c = crate::replay::compared_named(name)?;
        self.deltas(c.table)?.get(name)
    }
}

/// Query replay (docs/guides/capacity-review.md): both confidence models over the recorded traces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QuerySection {
    pub arms: PerArm<QueryArmMetrics>,
    /// treatment − baseline, paired over the (query, run) pairs both arms replayed.
    pub delta: BTreeMap<String, Delta>,
}

/// Imported scores: each arm's scorers, and treatment − baseline per scorer.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScoresSection {
    pub arms: PerArm<ScoreArm>,
    /// treatment − baseline per scorer both arms have, paired over the items both scored
    /// (each item's mean over its scored repeats). Keyed by the scorer's name as the log wrote
    /// it.
    pub delta: BTreeMap<String, Delta>,
    /// The scorers the experiment names as its judge panel (`[scores] judges`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<String>,
    /// The judge scorers' figures withheld because the panel is not trusted.
    #[serde(default)]
    pub withheld: Option<Withheld>,
}

impl ScoresSection {
    /// The deltas of the scorers, without those of what the samples spent (`item_cost_usd`,
    /// ...), which share the table.
    pub fn scorer_deltas(&self) -> impl Iterator<Item = (&String, &Delta)> {
        self.delta.iter().filter(|(k, _)| !is_item_usage(k))
    }

    /// The deltas of what the samples spent, in declaration order.
    pub fn usage_deltas(&self) -> impl Iterator<Item = (&'static str, &Delta)> {
        crate::replay::usage::ITEM_USAGE
            .iter()
            .filter_map(|u| Some((u.name, self.delta.get(u.name)?)))
    }
}

/// Whether a key of `scores.delta` is a usage figure's rather than a scorer's.
fn is_item_usage(key: &str) -> bool {
    crate::replay::usage::ITEM_USAGE
        .iter()
        .any(|u| u.name == key)
}

#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewSection {
    pub mode: Mode,
    pub arms: PerArm<ArmMetrics>,
    /// treatment − baseline per per-target metric, paired over the targets both arms reviewed.
    pub delta: BTreeMap<String, Delta>,
    /// Judge-derived figures withheld because the judges are not trustworthy.
    pub withheld: Option<Withheld>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Withheld {
    pub metrics: Vec<String>,
    pub reasons: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Delta {
    #[serde(flatten)]
    pub paired: PairedDelta,
    /// Holm's step-down adjustment of `p_value` over its family (docs/guides/ab-rubric-change.md): the primary
    /// metrics when the experiment names them, else the delta's table.
    #[serde(default)]
    pub p_adjusted: Option<f64>,
    /// Rates only: 95% Wilson intervals of each arm's pooled rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wilson: Option<PerArm<Option<[f64; 2]>>>,
    /// Imported scores that are all 0 or 1: the discordant pairs of McNemar's exact test,
    /// whose p is `p_value` (the exact binomial over the pairs that differ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcnemar: Option<McNemar>,
    /// Cost and latency only: treatment ÷ baseline − 1 of the paired means, with Fieller's 95%
    /// interval (docs/reference.md, "Cost and latency").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative: Option<Relative>,
}

pub use crate::stats::ratio::Relative;

#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgreementSection {
    /// Among the judges, over (arm, item, dimension) units at the trust level.
    pub judges: Option<Agreement>,
    /// Among reviewers who corroborate each other, per arm.
    pub reviewers: Option<PerArm<Agreement>>,
    /// Test-retest across runs, per arm; absent with fewer than two runs.
    pub runs: Option<PerArm<Agreement>>,
    /// Imported scores' repeat-to-repeat agreement per arm: α over (scorer, item)
    /// units, the repeats as raters; absent when no arm repeats an item.
    #[serde(default)]
    pub repeats: Option<PerArm<Agreement>>,
}

/// Krippendorff's α over some units, with its bootstrap interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Agreement {
    pub alpha: Option<f64>,
    pub level: Level,
    pub ci: Option<Interval>,
    pub units: usize,
    pub raters: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undefined_reason: Option<String>,
}

/// One merged finding with where it came from: a row of the `findings` table. It keeps what
/// the table shows of a [`Merged`] and no more (a large run holds a million of them at once);
/// its text is shared with the corpus. Its arm is the list it is in, and its (target, run)
/// the stretch of that list it is in ([`FindingRows`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FindingRow {
    pub title: Arc<str>,
    pub severity: Severity,
    /// The section (doc mode) or the file (code mode).
    pub location: Arc<str>,
    /// Code mode: the smallest line of the merged cluster. A code finding's line is read as a
    /// whole number ≥ 1, so its absence fits in the number's own four bytes.
    pub line: Option<std::num::NonZeroU32>,
    /// Shared by every row of the arm naming the same reviewers ([`ReviewerLists`]).
    pub reviewers: Arc<[Arc<str>]>,
    pub contributions: u32,
    /// The contributors' ids in document order, joined by `;` as the findings table writes them
    /// (a contributor without one has none here): one short text a row, rather than a list of
    /// the findings' own ids, which then outlived their returns (a million findings held 50 MB
    /// of ids and 16 MB of lists through the tables).
    pub ids: Box<str>,
    pub autofix: Autofix,
    pub confidence_before: f64,
    pub confidence: f64,
    pub corroborated: bool,
    pub promotable: bool,
    pub promoted: bool,
    pub tier: Tier,
    pub route: Option<Route>,
    pub queue: Option<Queue>,
    /// Boxed: most rows have none, and then hold one word for it, not three.
    pub validation: Option<Box<Check>>,
    pub on_suppressed_line: Option<bool>,
}

/// The lists of reviewers an arm's rows name, each held once: a million merged findings name a
/// few dozen distinct lists, so a row holds a pointer to its list rather than a list of its own.
#[derive(Debug, Default)]
pub struct ReviewerLists(std::collections::HashSet<Arc<[Arc<str>]>, foldhash::fast::RandomState>);

impl ReviewerLists {
    /// The list held equal to `list`, or `list` held from now on.
    fn share(&mut self, list: Vec<Arc<str>>) -> Arc<[Arc<str>]> {
        if let Some(held) = self.0.get(&*list) {
            return held.clone();
        }
        let held: Arc<[Arc<str>]> = list.into();
        self.0.insert(held.clone());
        held
    }
}

/// An arm's finding rows in the order the tables write them, and the (target, run) of each
/// stretch of them with how many rows it has: a (target, run)'s rows are replayed and written
/// together, so a row need not hold its own (at a million findings, 14 MB less through the
/// tables).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FindingRows {
    pub rows: Vec<FindingRow>,
    pub runs: Vec<(Arc<str>, u32, usize)>,
}

impl FindingRows {
    /// Appends one (target, run)'s rows.
    pub(crate) fn push_run(
        &mut self,
        target: &Arc<str>,
        run: u32,
        rows: impl IntoIterator<Item = FindingRow>,
    ) {
        let before = self.rows.len();
        self.rows.extend(rows);
        let added = self.rows.len() - before;
        if added > 0 {
            self.runs.push((target.clone(), run, added));
        }
    }

    /// The rows in blocks of at most `n` (`n` ≥ 1), each moved into a list `room` gives (an
    /// emptied one, so that the same few are reused), with its rows' (target, run), one for each
    /// row. The list's own block goes with the last of them.
    pub fn into_blocks(
        self,
        n: usize,
        mut room: impl FnMut() -> Vec<FindingRow>,
    ) -> impl Iterator<Item = (Vec<FindingRow>, Vec<(Arc<str>, u32)>)> {
        let mut rows = self.rows.into_iter();
        let mut runs = self.runs.into_iter();
        let mut current: Option<(Arc<str>, u32, usize)> = None;
        std::iter::from_fn(move || {
            let mut block = room();
            block.extend(rows.by_ref().take(n.max(1)));
            if block.is_empty() {
                return None;
            }
            let mut places = Vec::with_capacity(block.len());
            while places.len() < block.len() {
                let (target, run, left) = match current.take() {
                    Some(c) if c.2 > 0 => c,
                    _ => runs.next().expect("a (target, run) for every row"),
                };
                let take = left.min(block.len() - places.len());
                places.extend(std::iter::repeat_n((target.clone(), run), take));
                current = Some((target, run, left - take));
            }
            Some((block, places))
        })
    }
}

impl FindingRow {
    pub(crate) fn new(m: Merged, lists: &mut ReviewerLists) -> Self {
        let (location, line) = match m.location {
            MergedLocation::Doc { section, .. } => (section, None),
            MergedLocation::Code(CodeSite { file, line, .. }) => {
                (file, std::num::NonZeroU32::new(line))
            }
        };
        FindingRow {
            title: m.claim.title,
            severity: m.claim.severity,
            location,
            line,
            reviewers: lists.share(m.reviewers),
            contributions: m.contributions.len() as u32,
            ids: joined_ids(&m.contributions),
            autofix: m.claim.autofix,
            confidence_before: m.confidence_before,
            confidence: m.confidence,
            corroborated: m.corroborated,
            promotable: m.promotable,
            promoted: m.promoted,
            tier: m.tier,
            route: m.route,
            queue: m.queue,
            validation: m.validation.map(Box::new),
            on_suppressed_line: m.on_suppressed_line,
        }
    }
}

/// What joins a list in one cell of a table (a finding row's reviewers and ids).
pub const LIST_SEPARATOR: char = ';';

/// Appends `parts` to `out` as one table cell writes a list: joined by [`LIST_SEPARATOR`].
pub fn push_list<'a>(out: &mut String, parts: impl IntoIterator<Item = &'a str>) {
    for (i, part) in parts.into_iter().enumerate() {
        if i > 0 {
            out.push(LIST_SEPARATOR);
        }
        out.push_str(part);
    }
}

/// The ids of `contributions` in their order, joined as a list cell (one without an id adds
/// nothing), in a text sized exactly: the box is that one allocation, not a copy of a grown
/// string.
fn joined_ids(contributions: &[crate::replay::review::Contribution]) -> Box<str> {
    let ids = || contributions.iter().filter_map(|c| c.id.as_deref());
    let (n, chars) = ids().fold((0usize, 0), |(n, chars), id| (n + 1, chars + id.len()));
    let mut joined = String::with_capacity(chars + n.saturating_sub(1));
    push_list(&mut joined, ids());
    joined.into_boxed_str()
}

/// One unit's values of one reported delta: a row of the `pairs` table, from which
/// `calibench plan` reads a pilot's paired differences.
#[derive(Clone, Debug, PartialEq)]
pub struct PairRow {
    pub table: DeltaTable,
    /// A catalogue's metric, or an imported scorer's name.
    pub metric: Cow<'static, str>,
    pub pair: UnitPair,
}

/// The model and the rows behind its tables.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    pub metrics: Metrics,
    /// Baseline rows, then treatment rows: each arm's as it replayed them (not joined, so that
    /// a million rows are never copied into one larger block).
    pub findings: [FindingRows; 2],
    /// Baseline rows, then treatment rows.
    pub queries: Vec<QueryRow>,
    /// Per reported delta that is a mean of per-unit differences, in table then delta order:
    /// each unit's values.
    pub pairs: Vec<PairRow>,
    /// Imported scores per (arm, item, scorer): baseline rows, then treatment rows.
    pub scores: Vec<imported::ItemRow>,
}

/// A threshold sweep (docs/guides/threshold-sweep.md): `metrics.json`'s `sweep` object.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sweep {
    pub run_id: String,
    pub experiment: String,
    /// The arm swept: `baseline` or `treatment`.
    pub arm: String,
    pub side: crate::sweep::Side,
    /// Targets (queries) replayed at every point.
    pub units: usize,
    /// Each varied key (inside the arm's tables) with its values, in grid order: in
    /// `metrics.json` an object `{key: [values]}`, keys in the order they vary.
    #[serde(serialize_with = "vary_map")]
    pub vary: Vec<crate::sweep::Vary>,
    pub points: Vec<SweepPoint>,
    /// How many points meet every requirement, where the choice is made.
    pub meeting: usize,
    pub requirements: Vec<String>,
    pub prefer: String,
    /// A merged finding is confirmed when its judge composite is at least this (review).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirm_at: Option<f64>,
    /// The split the choice was made on, when there is one.
    pub holdout: Option<Holdout>,
    /// The arm as the experiment sets it, on the same units as every point.
    pub current: SweepPoint,
    /// The point chosen, or null when none meets every requirement or the current setting is
    /// kept.
    pub recommended: Option<Recommended>,
    /// The current setting meets every requirement and no point does better by `prefer`: it
    /// is kept (the best point only ties it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<Kept>,
    /// The two figures `--frontier` names, `X:Y`; each point then says whether it is on the
    /// frontier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frontier: Option<crate::sweep::Frontier>,
    /// The judge panel's trust verdict, as `run` gives it, when the corpus has verdicts: when
    /// not trusted, the judge-derived figures (precision, judged actionable, recall) are
    /// withheld at every point, and no requirement or preference may name them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust: Option<SweepTrust>,
    /// When none meets them: the point closest to meeting them, and what it misses.
    pub closest: Option<Closest>,
    /// The recommended point against the current setting, paired per unit (on the held-out
    /// units when there is a hold-out).
    pub versus_current: BTreeMap<String, crate::stats::paired::PairedDelta>,
    pub bootstrap: usize,
    pub seed: u64,
}

fn vary_map<S: serde::Serializer>(vary: &[crate::sweep::Vary], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(vary.len()))?;
    for v in vary {
        let values: Vec<serde_json::Value> = v
            .values
            .iter()
            .map(|x| crate::sweep::json_value(x))
            .collect();
        map.serialize_entry(&v.key, &values)?;
    }
    map.end()
}

impl Sweep {
    /// The figures the sweep reports, in table order: its side's, less any it could not
    /// measure (`rejected` without validator calls).
    pub fn figures(&self) -> impl Iterator<Item = &'static crate::sweep::Figure> + '_ {
        self.side
            .figures()
            .iter()
            .filter(|f| self.current.figures.contains_key(f.name))
    }
}

/// One grid point: the values it sets and the arm's figures there.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Each varied key's value (a number where it reads as one).
    pub values: BTreeMap<String, serde_json::Value>,
    /// Each figure with its 95% bootstrap interval, on the choosing units.
    pub figures: BTreeMap<String, crate::sweep::Estimate>,
    /// With `--frontier`: no other point beats this one on both of its figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_frontier: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Holdout {
    pub fraction: f64,
    /// Units chosen on and held out (their ids are in `choosing.txt` and `held_out.txt`).
    pub choosing: usize,
    pub held_out: usize,
}

#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recommended {
    /// Its position in `points`.
    pub index: usize,
    pub values: BTreeMap<String, serde_json::Value>,
    /// Its figures where it was chosen.
    pub choosing: BTreeMap<String, crate::sweep::Estimate>,
    /// Its figures on the held-out units, which took no part in the choice, and whether it
    /// meets every requirement there.
    pub held_out: Option<HeldOut>,
    /// The requirements it fails on the held-out units: the choice did not hold up there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out_misses: Vec<String>,
}

/// The recommended point's figures on the held-out units.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeldOut {
    /// Each figure by name, as in `choosing`.
    #[serde(flatten)]
    pub figures: BTreeMap<String, crate::sweep::Estimate>,
    /// Whether the point meets every requirement on the held-out units (`held_out_misses`
    /// names those it fails).
    pub meets: bool,
}

/// The current setting kept: the best point, which only ties it, and whether every point gives
/// the same figures (the varied keys move nothing the sweep measures).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Kept {
    pub index: usize,
    pub all_tie: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepTrust {
    pub trustworthy: bool,
    pub reasons: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Closest {
    pub index: usize,
    pub values: BTreeMap<String, serde_json::Value>,
    /// The requirements it misses.
    pub misses: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_naming_the_same_reviewers_in_the_same_order_share_one_list() {
        let names = |n: &[&str]| n.iter().map(|&s| Arc::from(s)).collect::<Vec<Arc<str>>>();
        let mut lists = ReviewerLists::default();
        let a = lists.share(names(&["coherence", "feasibility"]));
        let b = lists.share(names(&["coherence", "feasibility"]));
        let c = lists.share(names(&["feasibility", "coherence"]));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, *names(&["feasibility", "coherence"]));
    }

    // A run holds a row for every merged finding of both arms until its table is written: one
    // word for a validation that most rows have not (three when it was held in line).
    #[test]
    fn a_row_is_fourteen_words() {
        assert_eq!(
            std::mem::size_of::<FindingRow>(),
            14 * std::mem::size_of::<usize>()
        );
    }

    fn row(title: &str) -> FindingRow {
        FindingRow {
            title: title.into(),
            severity: Severity::P1,
            location: "Rollout".into(),
            line: None,
            reviewers: Arc::from(Vec::<Arc<str>>::new()),
            contributions: 1,
            ids: "".into(),
            autofix: Autofix::Manual,
            confidence_before: 0.5,
            confidence: 0.5,
            corroborated: false,
            promotable: false,
            promoted: false,
            tier: Tier::Actionable,
            route: None,
            queue: None,
            validation: None,
            on_suppressed_line: None,
        }
    }

    // Each row is written with its own (target, run), however the blocks cut the stretches: a
    // stretch across two blocks, one ending a block exactly, a (target, run) with no rows.
    #[test]
    fn rows_in_blocks_keep_their_target_and_run() {
        let mut rows = FindingRows::default();
        let (a, b, c): (Arc<str>, Arc<str>, Arc<str>) = ("a".into(), "b".into(), "c".into());
        rows.push_run(&a, 0, ["a0-1", "a0-2", "a0-3"].map(row));
        rows.push_run(&b, 0, []);
        rows.push_run(&b, 2, ["b2-1"].map(row));
        rows.push_run(&c, 1, ["c1-1", "c1-2", "c1-3", "c1-4"].map(row));
        assert_eq!(rows.runs.len(), 3);
        let mut rooms = 0;
        let blocks: Vec<_> = rows
            .into_blocks(2, || {
                rooms += 1;
                Vec::new()
            })
            .collect();
        assert_eq!(blocks.len(), 4);
        let written: Vec<String> = blocks
            .iter()
            .flat_map(|(rows, places)| {
                assert_eq!(rows.len(), places.len());
                rows.iter()
                    .zip(places)
                    .map(|(r, (t, run))| format!("{t}{run}:{}", r.title))
            })
            .collect();
        assert_eq!(
            written,
            [
                "a0:a0-1", "a0:a0-2", "a0:a0-3", "b2:b2-1", "c1:c1-1", "c1:c1-2", "c1:c1-3",
                "c1:c1-4"
            ]
        );
        // A list asked for each block, and one more to find there are no rows left.
        assert_eq!(rooms, 5);
    }

    #[test]
    fn a_rows_ids_are_its_contributors_ids_joined_in_order() {
        let contribution = |id: Option<&str>| crate::replay::review::Contribution {
            reviewer: "coherence".into(),
            id: id.map(crate::corpus::finding::FindingId::from),
            confidence: 75.0,
            severity: crate::corpus::reviews::Severity::P1,
            title: "t".into(),
            place: None,
        };
        let ids = joined_ids(&[
            contribution(Some("b-2")),
            contribution(None),
            contribution(Some("a-1")),
        ]);
        assert_eq!(&*ids, "b-2;a-1");
        assert_eq!(&*joined_ids(&[contribution(None)]), "");
        assert_eq!(&*joined_ids(&[]), "");
    }
}
