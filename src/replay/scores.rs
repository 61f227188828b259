//! Imported scores (docs/guides/importing-logs.md): what each arm's scorers gave, and treatment − baseline per
//! scorer, paired over the items both arms scored. Pure: score lines in, figures out.
//!
//! An item's value for a scorer is the mean of its scored repeats: a repeat that errored or was
//! not scored is missing, never 0, and an item with no scored repeat has no value. Items weigh
//! equally whatever their number of repeats.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::UnitPair;
use crate::corpus::scores::Score;
use crate::corpus::verdicts::{Item, Verdict};
use crate::corpus::ItemId;
use crate::stats::calibration::{calibrate, Calibration};
use crate::stats::paired::{wilson, PairedDelta};

/// The dimension a scorer's score is filed under when the scorers are a judge panel.
pub const DIMENSION: &str = "score";

/// Bins of the per-scorer reliability diagrams (docs/guides/alpha-and-calibration.md's default).
pub const BINS: usize = 10;

/// One arm's imported scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScoreArm {
    /// The arm label the lines carry (`calibench import --arm`).
    pub source: String,
    /// The task the arm's logs ran.
    pub task: String,
    /// Distinct items with at least one line.
    pub items: usize,
    /// The most repeats any item has.
    pub repeats: u32,
    pub scorers: BTreeMap<String, ScorerFigures>,
    /// What the samples spent, where the logs say (docs/reference.md, "Cost and latency"):
    /// `item_cost_usd_mean`, ..., `item_latency_p95_ms`.
    #[serde(
        flatten,
        default,
        skip_serializing_if = "super::usage::UsageFigures::is_empty"
    )]
    pub usage: super::usage::UsageFigures<super::usage::Items>,
    /// 95% intervals of the usage percentiles, where the items are enough to bound them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ci: BTreeMap<String, [f64; 2]>,
}

/// What each sample (item × repeat) spent, once per sample (its scorers' lines carry the same
/// usage), in item then repeat order.
pub fn spending(lines: &[&Score]) -> Vec<(String, u32, Option<crate::corpus::usage::Spent>)> {
    let mut by: BTreeMap<(&ItemId, u32), Option<crate::corpus::usage::Spent>> = BTreeMap::new();
    for s in lines {
        by.entry((&s.item, s.repeat))
            .or_insert_with(|| crate::corpus::usage::Spent::of(s.usage, s.elapsed_ms));
    }
    by.into_iter()
        .map(|((item, repeat), spent)| (unit_name(item), repeat, spent))
        .collect()
}

/// One scorer in one arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScorerFigures {
    /// Lines (item × repeat) the scorer has in the arm.
    pub lines: usize,
    /// Lines with `score: null`: errored or unscored samples, never counted as 0.
    pub missing: usize,
    /// Why, with how many lines each.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub missing_reasons: BTreeMap<String, usize>,
    /// Items with at least one scored repeat.
    pub items: usize,
    /// Mean over those items of each item's mean over its scored repeats; null when no item
    /// was scored, or when the scorer is a judge the trust verdict did not trust.
    pub mean: Option<f64>,
    /// Every score is 0 or 1.
    pub binary: bool,
    /// The lowest and the highest score; null when nothing was scored.
    pub range: Option<[f64; 2]>,
    /// The model's own confidence against `correct`, over the scored lines that carry both;
    /// null when none does (or withheld, for an untrusted judge).
    pub calibration: Option<Calibration>,
    /// Scored lines with a confidence but no `correct`: left out of the calibration.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub confidence_without_outcome: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Scores that are all 0 or 1 in both arms: McNemar's exact test, whose p is the exact sign
/// test's over the discordant pairs (concordant pairs differ by 0 and take no part).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct McNemar {
    /// Items scored 1 in the baseline and 0 in the treatment.
    pub baseline_only: usize,
    /// Items scored 0 in the baseline and 1 in the treatment.
    pub treatment_only: usize,
}

/// One scorer compared: the paired delta over items, with each item's values.
#[derive(Clone, Debug, PartialEq)]
pub struct ScorerComparison {
    pub scorer: String,
    pub delta: PairedDelta,
    pub mcnemar: Option<McNemar>,
    /// 0/1 scorers: 95% Wilson intervals of each arm's share of 1s over the paired items.
    pub wilson: Option<[Option<[f64; 2]>; 2]>,
    pub units: Vec<UnitPair>,
}

/// How an item is written in tables, messages and trust items: a number as itself, text as
/// itself unless it could be read as a number or starts with a quote, then quoted and escaped.
/// So `1` and `"1"` stay apart, and `x` is `x`.
pub fn unit_name(item: &ItemId) -> String {
    match item {
        ItemId::Number(n) => n.to_string(),
        ItemId::Text(t) if t.parse::<f64>().is_ok() || t.starts_with('"') => format!("{t:?}"),
        ItemId::Text(t) => t.clone(),
    }
}

/// One scorer's lines on one item in one arm.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ItemScores {
    /// Repeats with a line, and those of them missing.
    pub repeats: u32,
    pub missing: u32,
    /// The sum of the scored repeats, in line order.
    sum: f64,
}

impl ItemScores {
    /// The mean of the scored repeats; `None` when none was scored.
    pub fn mean(&self) -> Option<f64> {
        (self.repeats > self.missing).then(|| self.sum / f64::from(self.repeats - self.missing))
    }
}

/// One arm's lines gathered per scorer, then per item in item order: what its figures, the
/// deltas, the judge panel and the `scores` table all read, gathered once.
pub type ByItem<'a> = BTreeMap<&'a str, BTreeMap<&'a ItemId, ItemScores>>;

/// Gathers one arm's lines per scorer and item.
pub fn by_item<'a>(lines: &[&'a Score]) -> ByItem<'a> {
    let mut by: ByItem<'a> = BTreeMap::new();
    for s in lines {
        let e = by
            .entry(s.scorer.0.as_str())
            .or_default()
            .entry(&s.item)
            .or_default();
        e.repeats += 1;
        match s.score {
            Some(x) => e.sum += x,
            None => e.missing += 1,
        }
    }
    by
}

/// A scorer's item means: the items with at least one scored repeat.
fn means<'m, 'a>(
    items: &'m BTreeMap<&'a ItemId, ItemScores>,
) -> impl Iterator<Item = (&'a ItemId, f64)> + 'm {
    items
        .iter()
        .filter_map(|(&item, s)| Some((item, s.mean()?)))
}

/// One arm's figures, from its lines (all carrying `source` and one task) and their
/// [`by_item`].
pub fn arm(source: &str, lines: &[&Score], gathered: &ByItem<'_>) -> ScoreArm {
    let mut scorers: BTreeMap<String, ScorerFigures> = BTreeMap::new();
    let mut calibration: BTreeMap<&str, (Vec<f64>, Vec<bool>)> = BTreeMap::new();
    for s in lines {
        let f = scorers
            .entry(s.scorer.0.clone())
            .or_insert_with(|| ScorerFigures {
                lines: 0,
                missing: 0,
                missing_reasons: BTreeMap::new(),
                items: 0,
                mean: None,
                binary: true,
                range: None,
                calibration: None,
                confidence_without_outcome: 0,
            });
        f.lines += 1;
        match s.score {
            None => {
                f.missing += 1;
                let why = s
                    .missing
                    .clone()
                    .unwrap_or_else(|| "no reason given".into());
                *f.missing_reasons.entry(why).or_default() += 1;
            }
            Some(x) => {
                f.binary &= x == 0.0 || x == 1.0;
                f.range = Some(f.range.map_or([x, x], |[lo, hi]| [lo.min(x), hi.max(x)]));
                match (s.confidence, s.correct) {
                    (Some(p), Some(y)) => {
                        let c = calibration.entry(s.scorer.0.as_str()).or_default();
                        c.0.push(p);
                        c.1.push(y);
                    }
                    (Some(_), None) => f.confidence_without_outcome += 1,
                    _ => {}
                }
            }
        }
    }
    for (scorer, f) in scorers.iter_mut() {
        let item_means: Vec<f64> = gathered
            .get(scorer.as_str())
            .map_or_else(Vec::new, |items| means(items).map(|(_, x)| x).collect());
        f.items = item_means.len();
        f.mean = (!item_means.is_empty())
            .then(|| item_means.iter().sum::<f64>() / item_means.len() as f64);
        // Nothing scored: no value to be binary about.
        f.binary &= f.items > 0;
        f.calibration = calibration
            .get(scorer.as_str())
            .and_then(|(p, y)| calibrate(p, y, BINS).ok());
    }
    let mut items: Vec<&ItemId> = lines.iter().map(|s| &s.item).collect();
    items.sort_unstable();
    items.dedup();
    let (usage, ci) = super::usage::arm_figures::<super::usage::Items>(
        spending(lines).into_iter().map(|(_, _, s)| s),
    );
    ScoreArm {
        source: source.to_string(),
        task: lines.first().map_or(String::new(), |s| s.task.0.clone()),
        items: items.len(),
        repeats: lines.iter().map(|s| s.repeat).max().unwrap_or(0),
        scorers,
        usage,
        ci,
    }
}

/// One (arm, item, scorer): a row of the run's `scores` table.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemRow {
    /// The experiment's arm: baseline or treatment.
    pub arm: &'static str,
    pub item: String,
    pub scorer: String,
    /// Repeats with a line, and those of them missing.
    pub repeats: u32,
    pub missing: u32,
    /// The mean of the scored repeats; `None` when none was scored.
    pub mean: Option<f64>,
}

/// One arm's rows of the `scores` table, in item then scorer order.
pub fn item_rows(arm: &'static str, gathered: &ByItem<'_>) -> Vec<ItemRow> {
    let mut rows: Vec<(&ItemId, &str, ItemScores)> = gathered
        .iter()
        .flat_map(|(&scorer, items)| items.iter().map(move |(&item, &s)| (item, scorer, s)))
        .collect();
    rows.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    rows.into_iter()
        .map(|(item, scorer, s)| ItemRow {
            arm,
            item: unit_name(item),
            scorer: scorer.to_string(),
            repeats: s.repeats,
            missing: s.missing,
            mean: s.mean(),
        })
        .collect()
}

/// treatment − baseline for every scorer both arms have, paired over the items both scored,
/// in scorer order. A scorer with no such item has no comparison.
pub fn compare(
    baseline: &ByItem<'_>,
    treatment: &ByItem<'_>,
    replicates: usize,
    seed: u64,
    threads: usize,
) -> Vec<ScorerComparison> {
    let mut out = Vec::new();
    for (scorer, t_items) in treatment {
        let Some(b_items) = baseline.get(scorer) else {
            continue;
        };
        let units: Vec<UnitPair> = means(t_items)
            .filter_map(|(item, y)| {
                let x = b_items.get(item)?.mean()?;
                Some(UnitPair {
                    unit: unit_name(item),
                    run: None,
                    baseline: x,
                    treatment: y,
                })
            })
            .collect();
        let Some(delta) = super::paired(&units, replicates, seed, threads) else {
            continue;
        };
        let zero_one = |x: f64| x == 0.0 || x == 1.0;
        let binary = units
            .iter()
            .all(|u| zero_one(u.baseline) && zero_one(u.treatment));
        let (mcnemar, wilson) = if binary {
            let n = units.len() as f64;
            let ones =
                |arm: fn(&UnitPair) -> f64| units.iter().filter(|u| arm(u) == 1.0).count() as f64;
            (
                Some(McNemar {
                    baseline_only: units
                        .iter()
                        .filter(|u| u.baseline == 1.0 && u.treatment == 0.0)
                        .count(),
                    treatment_only: units
                        .iter()
                        .filter(|u| u.baseline == 0.0 && u.treatment == 1.0)
                        .count(),
                }),
                Some([
                    wilson(ones(|u| u.baseline), n),
                    wilson(ones(|u| u.treatment), n),
                ]),
            )
        } else {
            (None, None)
        };
        out.push(ScorerComparison {
            scorer: scorer.to_string(),
            delta,
            mcnemar,
            wilson,
            units,
        });
    }
    out
}

/// The judge panel's verdicts: per item of the arm, one verdict per judge scorer,
/// its score the item's mean over the judge's scored repeats under [`DIMENSION`]; a judge with
/// no scored repeat of the item failed on it (never a 0). Items in item order, filed under the
/// arm's label.
pub fn panel(source: &str, gathered: &ByItem<'_>, judges: &[String]) -> Vec<Item> {
    let items: std::collections::BTreeSet<&ItemId> = judges
        .iter()
        .filter_map(|j| gathered.get(j.as_str()))
        .flat_map(|items| items.keys().copied())
        .collect();
    items
        .into_iter()
        .map(|item| Item {
            line: 0,
            item_id: unit_name(item),
            arm: source.to_string(),
            verdicts: judges
                .iter()
                .map(|j| Verdict {
                    model: j.clone(),
                    reason: None,
                    scores: gathered
                        .get(j.as_str())
                        .and_then(|m| m.get(item)?.mean())
                        .map(|x| BTreeMap::from([(DIMENSION.to_string(), x)])),
                    position: None,
                    reported_model: None,
                    usage: None,
                })
                .collect(),
        })
        .collect()
}

/// Run-to-run agreement's units: per (scorer, item) with two or more scored repeats, the
/// scores in repeat order.
pub fn repeat_rows(lines: &[&Score]) -> Vec<Vec<f64>> {
    let mut by_unit: BTreeMap<(&str, &ItemId), Vec<(u32, f64)>> = BTreeMap::new();
    for s in lines {
        if let Some(x) = s.score {
            by_unit
                .entry((s.scorer.0.as_str(), &s.item))
                .or_default()
                .push((s.repeat, x));
        }
    }
    by_unit
        .into_values()
        .filter(|v| v.len() >= 2)
        .map(|mut v| {
            v.sort_by_key(|(r, _)| *r);
            v.into_iter().map(|(_, x)| x).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Text;

    fn line(arm: &str, item: i64, repeat: u32, scorer: &str, score: Option<f64>) -> Score {
        Score {
            line: 0,
            arm: Text(arm.into()),
            task: Text("t".into()),
            item: ItemId::Number(item),
            repeat,
            scorer: Text(scorer.into()),
            score,
            missing: score.is_none().then(|| "sample errored".into()),
            confidence: None,
            correct: None,
            source: Text("log".into()),
            usage: None,
            elapsed_ms: None,
        }
    }

    #[test]
    fn an_item_is_the_mean_of_its_scored_repeats_and_a_missing_repeat_is_not_zero() {
        let lines = [
            line("a", 1, 1, "m", Some(1.0)),
            line("a", 1, 2, "m", None),
            line("a", 1, 3, "m", Some(0.0)),
            line("a", 2, 1, "m", Some(1.0)),
            line("a", 3, 1, "m", None),
        ];
        let refs: Vec<&Score> = lines.iter().collect();
        let a = arm("a", &refs, &by_item(&refs));
        let m = &a.scorers["m"];
        // Items 1 (mean 0.5) and 2 (1.0); item 3 has no scored repeat.
        assert_eq!((m.lines, m.missing, m.items), (5, 2, 2));
        assert_eq!(m.mean, Some(0.75));
        assert_eq!(m.missing_reasons["sample errored"], 2);
        assert!(m.binary);
        assert_eq!((a.items, a.repeats), (3, 3));
        assert_eq!(repeat_rows(&refs), vec![vec![1.0, 0.0]]);
    }

    #[test]
    fn zero_one_scores_get_mcnemar_counts_and_the_sign_test_p() {
        // Baseline 1,0,0,1,0 ; treatment 1,1,1,1,1: discordant 0 baseline-only, 3
        // treatment-only; exact McNemar p = 2 · 0.5³ = 0.25.
        let b: Vec<Score> = [1.0, 0.0, 0.0, 1.0, 0.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| line("b", i as i64 + 1, 1, "acc", Some(x)))
            .collect();
        let t: Vec<Score> = (1..=5).map(|i| line("t", i, 1, "acc", Some(1.0))).collect();
        let (b, t): (Vec<&Score>, Vec<&Score>) = (b.iter().collect(), t.iter().collect());
        let c = compare(&by_item(&b), &by_item(&t), 0, 1, 1);
        assert_eq!(c.len(), 1);
        let acc = &c[0];
        assert_eq!(
            acc.mcnemar,
            Some(McNemar {
                baseline_only: 0,
                treatment_only: 3
            })
        );
        assert!((acc.delta.p_value.unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(acc.delta.test, crate::stats::test::Test::Mcnemar);
        assert!((acc.delta.delta - 0.6).abs() < 1e-12);
        assert_eq!(acc.delta.pairs, 5);
        assert!(acc.wilson.is_some());
    }

    #[test]
    fn items_pair_by_id_and_a_scorer_in_one_arm_only_is_not_compared() {
        let b = [
            line("b", 1, 1, "m", Some(0.2)),
            line("b", 2, 1, "m", Some(0.4)),
            line("b", 9, 1, "only-b", Some(1.0)),
        ];
        let t = [
            line("t", 2, 1, "m", Some(0.9)),
            line("t", 3, 1, "m", Some(0.1)),
        ];
        let (b, t): (Vec<&Score>, Vec<&Score>) = (b.iter().collect(), t.iter().collect());
        let c = compare(&by_item(&b), &by_item(&t), 0, 1, 1);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].units.len(), 1);
        assert_eq!(c[0].units[0].unit, "2");
        assert!((c[0].delta.delta - 0.5).abs() < 1e-12);
        assert_eq!(c[0].mcnemar, None);
    }

    #[test]
    fn unit_names_keep_numbers_and_numeric_text_apart() {
        assert_eq!(unit_name(&ItemId::Number(1)), "1");
        assert_eq!(unit_name(&ItemId::Text("1".into())), "\"1\"");
        assert_eq!(unit_name(&ItemId::Text("1e3".into())), "\"1e3\"");
        assert_eq!(unit_name(&ItemId::Text("\"1\"".into())), "\"\\\"1\\\"\"");
        assert_eq!(unit_name(&ItemId::Text("arc_1".into())), "arc_1");
    }

    #[test]
    fn a_judge_without_a_scored_repeat_failed_on_the_item() {
        let lines = [
            line("a", 1, 1, "j1", Some(0.5)),
            line("a", 1, 2, "j1", Some(1.0)),
            line("a", 1, 1, "j2", None),
            line("a", 1, 1, "exact", Some(1.0)),
        ];
        let refs: Vec<&Score> = lines.iter().collect();
        let items = panel("a", &by_item(&refs), &["j1".into(), "j2".into()]);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].verdicts.len(), 2);
        assert_eq!(
            items[0].verdicts[0].scores.as_ref().unwrap()[DIMENSION],
            0.75
        );
        assert_eq!(items[0].verdicts[1].scores, None);
    }
}
