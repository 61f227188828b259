//! The trust verdict (docs/guides/trust.md): may a result measured by judges be believed? And the lift it
//! guards. Pure: verdict items in, the verdict out.
//!
//! Three checks, each failure named with its number and value:
//! 1. inter-rater reliability, Krippendorff's α over (arm, item, dimension) units, at least
//!    `irr_floor`;
//! 2. per-item spread, within the item (max − min across its surviving judges, the worst
//!    dimension), at most `spread_ceiling`. Never pooled: pooling across items reads a genuine
//!    quality gap between items as "raters split", exactly when the finding is largest;
//! 3. at least `min_survivors` surviving judges per item. A failed judge is dropped, never read
//!    as a zero.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

pub mod bias;

use crate::corpus::verdicts::Item;
use crate::policy::Trust;
use crate::stats::alpha::{alpha, Level, Units};
use crate::stats::bootstrap::Plan;
use crate::stats::calibration::round9;
use crate::stats::paired::{paired_delta, PairedDelta};

/// One item's disagreement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ItemSpread {
    /// The recorded arm label the item was judged under.
    pub arm: String,
    /// The experiment's arm that label belongs to (`baseline`, `treatment`), where a run knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    pub item_id: String,
    /// The worst dimension's max − min across the surviving judges; 0 with fewer than two.
    pub spread: f64,
    /// Where the spread is worst; `None` without two survivors.
    pub dimension: Option<String>,
    pub survivors: usize,
    pub judges: usize,
}

/// The thresholds the verdict was decided with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Thresholds {
    pub irr_floor: f64,
    pub spread_ceiling: f64,
    pub min_survivors: usize,
    pub level: Level,
}

impl Thresholds {
    /// Check 1: α at or above the floor (compared at 9 decimals); an α that could not be
    /// computed fails.
    pub fn irr_passes(&self, irr: Option<f64>) -> bool {
        irr.is_some_and(|a| round9(a) >= round9(self.irr_floor))
    }

    /// Check 2: an item's spread at most the ceiling (compared at 9 decimals).
    pub fn spread_passes(&self, spread: f64) -> bool {
        round9(spread) <= round9(self.spread_ceiling)
    }

    /// Check 3: enough surviving judges on an item.
    pub fn survivors_pass(&self, survivors: usize) -> bool {
        survivors >= self.min_survivors
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrustVerdict {
    pub trustworthy: bool,
    /// Empty iff trustworthy.
    pub trust_reasons: Vec<String>,
    /// The α check 1 used: 1.0 when α is undefined because nobody varied and nobody disagreed;
    /// `None` when no unit has two surviving judges.
    pub inter_rater_reliability: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub irr_note: Option<String>,
    pub per_item_spread: Vec<ItemSpread>,
    pub items: usize,
    /// Distinct judge models among the verdicts.
    pub judges: usize,
    pub thresholds: Thresholds,
}

/// What failed each of the verdict's three checks, read from its figures (not its words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failures {
    /// (1): the judges' agreement is below the floor, or not computable.
    pub irr: bool,
    /// (2): items whose judges spread more than the ceiling.
    pub spread: usize,
    /// (3): items with fewer surviving judges than the minimum.
    pub survivors: usize,
}

impl TrustVerdict {
    /// Which of the three checks failed, and on how many items.
    pub fn failures(&self) -> Failures {
        let t = &self.thresholds;
        let items = &self.per_item_spread;
        Failures {
            irr: !t.irr_passes(self.inter_rater_reliability),
            spread: items.iter().filter(|i| !t.spread_passes(i.spread)).count(),
            survivors: items
                .iter()
                .filter(|i| !t.survivors_pass(i.survivors))
                .count(),
        }
    }

    /// How many checks failed: each of the three once however many items fail it, and each
    /// further check (the panel's alt-test) once.
    pub fn checks_failed(&self) -> usize {
        let f = self.failures();
        usize::from(f.irr)
            + usize::from(f.spread > 0)
            + usize::from(f.survivors > 0)
            + self.other_reasons().len()
    }

    /// The reasons of checks beyond the three (the panel's alt-test, when the experiment
    /// requires it): the three's reasons come first, one per failure.
    pub fn other_reasons(&self) -> &[String] {
        let f = self.failures();
        let own = usize::from(f.irr) + f.spread + f.survivors;
        &self.trust_reasons[own.min(self.trust_reasons.len())..]
    }
}

/// The IRR units: per (arm, item, dimension), the surviving judges' scores, in item order and
/// then dimension order.
pub fn irr_rows(items: &[Item]) -> Vec<Vec<f64>> {
    let mut rows = Vec::new();
    for item in items {
        let mut by_dim: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for scores in item.survivors() {
            for (dim, &s) in scores {
                by_dim.entry(dim).or_default().push(s);
            }
        }
        rows.extend(by_dim.into_values());
    }
    rows
}

/// The item's spread: max − min per dimension across survivors, the worst dimension.
fn spread(item: &Item) -> (f64, Option<String>) {
    let mut by_dim: BTreeMap<&str, (f64, f64, usize)> = BTreeMap::new();
    for scores in item.survivors() {
        for (dim, &s) in scores {
            let e = by_dim.entry(dim).or_insert((s, s, 0));
            e.0 = e.0.min(s);
            e.1 = e.1.max(s);
            e.2 += 1;
        }
    }
    by_dim
        .into_iter()
        .filter(|(_, (_, _, n))| *n >= 2)
        .map(|(dim, (lo, hi, _))| (hi - lo, Some(dim.to_string())))
        .fold((0.0, None), |best, this| {
            if this.0 > best.0 || best.1.is_none() {
                this
            } else {
                best
            }
        })
}

/// `value` with 2 decimals, or more when 2 would not show how it compares with `threshold`
/// (0.196 against 0.2 prints 0.196, not 0.20).
fn shown(value: f64, threshold: f64) -> String {
    for places in [2, 3, 4, 6, 9] {
        let s = format!("{value:.places$}");
        let back: f64 = s.parse().unwrap_or(value);
        if (back < threshold) == (value < threshold) && back != threshold {
            return s;
        }
    }
    value.to_string()
}

/// The error of a verdict set with nothing to judge.
pub const NO_EVIDENCE: &str = "no evidence to trust: the verdict set is empty";

/// Decides the verdict over `items`. `Err` only for an empty set: no silent trust over zero
/// evidence.
pub fn verdict(items: &[Item], t: &Trust) -> Result<TrustVerdict, &'static str> {
    if items.is_empty() {
        return Err(NO_EVIDENCE);
    }
    let thresholds = Thresholds {
        irr_floor: t.irr_floor,
        spread_ceiling: t.spread_ceiling,
        min_survivors: t.min_survivors,
        level: t.level,
    };
    let mut reasons = Vec::new();

    // (1) Inter-rater reliability.
    let mut units = Units::new();
    for row in irr_rows(items) {
        // Scores were read as finite numbers.
        let _ = units.push_unit(&row);
    }
    let (irr, irr_note) = match alpha(&units, t.level) {
        Ok(e) => match e.alpha {
            Some(a) => (Some(a), None),
            None => (
                Some(1.0),
                Some(format!(
                    "α is undefined ({}): nobody varied and nobody disagreed, so it counts as 1.0",
                    e.undefined_reason.unwrap_or_default()
                )),
            ),
        },
        Err(_) => (
            None,
            Some(
                "no item has two surviving judges scoring one dimension: α cannot be computed"
                    .into(),
            ),
        ),
    };
    match irr {
        Some(a) if !thresholds.irr_passes(Some(a)) => {
            reasons.push(format!(
                "(1) IRR {} < {}",
                shown(a, t.irr_floor),
                t.irr_floor
            ));
        }
        Some(_) => {}
        None => reasons.push(format!(
            "(1) IRR not computable: no item has 2 surviving raters on one dimension (floor {})",
            t.irr_floor
        )),
    }

    // An id judged under several arms is named with its arm.
    let mut arms_of: HashMap<&str, Vec<&str>> = HashMap::new();
    for i in items {
        let arms = arms_of.entry(&i.item_id).or_default();
        if !arms.contains(&i.arm.as_str()) {
            arms.push(&i.arm);
        }
    }
    let name = |i: &Item| {
        if arms_of[i.item_id.as_str()].len() > 1 {
            format!("{} ({})", i.item_id, i.arm)
        } else {
            i.item_id.clone()
        }
    };

    // (2) Per-item spread and (3) survivors.
    let mut per_item = Vec::with_capacity(items.len());
    let mut survivor_reasons = Vec::new();
    for item in items {
        let (s, dimension) = spread(item);
        let survivors = item.survivors().count();
        if !thresholds.spread_passes(s) {
            reasons.push(format!(
                "(2) item {} spread {} > {} — raters split",
                name(item),
                shown(s, t.spread_ceiling),
                t.spread_ceiling
            ));
        }
        if !thresholds.survivors_pass(survivors) {
            survivor_reasons.push(format!(
                "(3) item {}: {survivors} surviving raters < {}",
                name(item),
                t.min_survivors
            ));
        }
        per_item.push(ItemSpread {
            arm: item.arm.clone(),
            side: None,
            item_id: item.item_id.clone(),
            spread: s,
            dimension,
            survivors,
            judges: item.verdicts.len(),
        });
    }
    reasons.extend(survivor_reasons);

    let mut judges: Vec<&str> = items
        .iter()
        .flat_map(|i| i.verdicts.iter().map(|v| v.model.as_str()))
        .collect();
    judges.sort_unstable();
    judges.dedup();
    Ok(TrustVerdict {
        trustworthy: reasons.is_empty(),
        trust_reasons: reasons,
        inter_rater_reliability: irr,
        irr_note,
        per_item_spread: per_item,
        items: items.len(),
        judges: judges.len(),
        thresholds,
    })
}

/// Treatment − baseline judge composite over the items judged in both arms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Lift {
    /// Mean paired difference; `None` when withheld or when no item is judged in both arms.
    pub value: Option<f64>,
    /// 95% paired bootstrap interval.
    pub ci: Option<[f64; 2]>,
    /// Items judged (with a surviving judge) in both arms.
    pub items: usize,
    /// The judges are not trustworthy: the lift is not reported.
    pub withheld: bool,
    /// Why it is withheld: the trust verdict's reasons.
    pub reasons: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Mean composites and the test of their mean difference, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedDelta>,
    /// Holm's adjustment of the p-value over the decision metrics, when the lift is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_adjusted: Option<f64>,
    /// Each item judged in both arms: (item, baseline composite, treatment composite), for
    /// the run's pairs table; not in `metrics.json`.
    #[serde(skip)]
    #[schemars(skip)]
    pub pairs: Vec<(String, f64, f64)>,
}

/// The lift between the items filed under `baseline` labels and `treatment` labels, paired by
/// `item_id`, withheld unless `verdict` is trustworthy.
pub fn lift(
    items: &[Item],
    baseline: &[&str],
    treatment: &[&str],
    weights: &BTreeMap<String, f64>,
    verdict: &TrustVerdict,
    plan: Plan,
) -> Lift {
    let composites = |labels: &[&str]| -> HashMap<&str, f64> {
        items
            .iter()
            .filter(|i| labels.contains(&i.arm.as_str()))
            .filter_map(|i| Some((i.item_id.as_str(), i.composite(weights)?)))
            .collect()
    };
    let (b, t) = (composites(baseline), composites(treatment));
    // Pairs in file order of the treatment items, for a stable bootstrap.
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let mut ids = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for i in items.iter().filter(|i| treatment.contains(&i.arm.as_str())) {
        if let (Some(&x), Some(&y)) = (b.get(i.item_id.as_str()), t.get(i.item_id.as_str())) {
            if seen.insert(i.item_id.as_str()) {
                xs.push(x);
                ys.push(y);
                ids.push(i.item_id.clone());
            }
        }
    }
    let n = xs.len();
    if !verdict.trustworthy {
        return Lift {
            value: None,
            ci: None,
            items: n,
            withheld: true,
            reasons: verdict.trust_reasons.clone(),
            note: None,
            paired: None,
            p_adjusted: None,
            pairs: Vec::new(),
        };
    }
    match paired_delta(&xs, &ys, plan.replicates, plan.seed, plan.threads) {
        Some(p) => Lift {
            value: Some(p.delta),
            ci: p.ci,
            items: n,
            withheld: false,
            reasons: Vec::new(),
            note: None,
            paired: Some(p),
            p_adjusted: None,
            pairs: ids
                .into_iter()
                .zip(xs.iter().zip(&ys))
                .map(|(id, (&x, &y))| (id, x, y))
                .collect(),
        },
        None => Lift {
            value: None,
            ci: None,
            items: 0,
            withheld: false,
            reasons: Vec::new(),
            note: Some("no item is judged in both arms".into()),
            paired: None,
            p_adjusted: None,
            pairs: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::verdicts::Verdict;

    fn item(arm: &str, id: &str, judges: &[Option<&[(&str, f64)]>]) -> Item {
        Item {
            line: 1,
            item_id: id.into(),
            arm: arm.into(),
            verdicts: judges
                .iter()
                .enumerate()
                .map(|(j, scores)| Verdict {
                    model: format!("judge-{j}"),
                    reason: None,
                    scores: scores.map(|s| s.iter().map(|(d, x)| (d.to_string(), *x)).collect()),
                    ..Default::default()
                })
                .collect(),
        }
    }

    /// Three judges scoring one dimension per item.
    fn scored(arm: &str, id: &str, scores: [f64; 3]) -> Item {
        let a = [("real", scores[0])];
        let b = [("real", scores[1])];
        let c = [("real", scores[2])];
        item(arm, id, &[Some(&a), Some(&b), Some(&c)])
    }

    /// Items i1, i2, … in arm `b`, each scored by three judges.
    fn panel(scores: &[[f64; 3]]) -> Vec<Item> {
        let id = |i: usize| format!("i{}", i + 1);
        scores
            .iter()
            .enumerate()
            .map(|(i, s)| scored("b", &id(i), *s))
            .collect()
    }

    fn trust() -> Trust {
        Trust::default()
    }

    fn plan() -> Plan {
        Plan {
            method: crate::stats::bootstrap::Method::Units,
            replicates: 200,
            seed: 3,
            threads: 1,
        }
    }

    #[test]
    fn agreeing_raters_on_very_different_items_are_trusted_with_zero_spread() {
        let items = panel(&[
            [0.1, 0.1, 0.1],
            [0.9, 0.9, 0.9],
            [0.5, 0.5, 0.5],
            [1.0, 1.0, 1.0],
        ]);
        let v = verdict(&items, &trust()).unwrap();
        assert!(v.trustworthy, "{:?}", v.trust_reasons);
        assert!(v.trust_reasons.is_empty());
        assert_eq!(v.inter_rater_reliability, Some(1.0));
        assert!(v.per_item_spread.iter().all(|s| s.spread == 0.0));
        assert_eq!((v.items, v.judges), (4, 3));
    }

    #[test]
    fn one_contested_item_is_named_and_the_others_show_zero_spread() {
        let items = panel(&[
            [0.1, 0.1, 0.1],
            [0.9, 0.9, 0.9],
            [0.5, 0.5, 0.5],
            [0.2, 1.0, 0.6],
            [0.0, 0.0, 0.0],
            [1.0, 1.0, 1.0],
        ]);
        let v = verdict(&items, &trust()).unwrap();
        assert!(!v.trustworthy);
        assert_eq!(
            v.trust_reasons,
            ["(2) item i4 spread 0.80 > 0.5 — raters split"]
        );
        let spreads: Vec<f64> = v.per_item_spread.iter().map(|s| s.spread).collect();
        assert_eq!(spreads[..3], [0.0, 0.0, 0.0]);
        assert!((spreads[3] - 0.8).abs() < 1e-12);
        assert_eq!(spreads[4..], [0.0, 0.0]);
        assert_eq!(v.per_item_spread[3].dimension.as_deref(), Some("real"));
        // IRR stays high: the items differ far more than the judges do.
        assert!(v.inter_rater_reliability.unwrap() > 0.2);
    }

    #[test]
    fn anti_correlated_raters_fail_the_irr_check() {
        // Two judges of three say the opposite of each other on every item; spreads ≤ 0.5.
        let items = panel(&[
            [0.3, 0.7, 0.5],
            [0.7, 0.3, 0.5],
            [0.3, 0.7, 0.5],
            [0.7, 0.3, 0.5],
        ]);
        let v = verdict(&items, &trust()).unwrap();
        assert!(!v.trustworthy);
        let a = v.inter_rater_reliability.unwrap();
        assert!(a < 0.2, "{a}");
        assert_eq!(v.trust_reasons.len(), 1);
        assert!(
            v.trust_reasons[0].starts_with("(1) IRR ") && v.trust_reasons[0].ends_with(" < 0.2"),
            "{:?}",
            v.trust_reasons
        );
        assert!(v.trust_reasons[0].contains(&format!("{a:.2}")));
    }

    #[test]
    fn two_raters_fail_the_survivor_check_per_item() {
        let a = [("real", 0.8)];
        let b = [("real", 0.8)];
        let c = [("real", 0.1)];
        let items = [
            item("b", "i1", &[Some(&a), Some(&b)]),
            item("b", "i2", &[Some(&c), Some(&c)]),
        ];
        let v = verdict(&items, &trust()).unwrap();
        assert_eq!(
            v.trust_reasons,
            [
                "(3) item i1: 2 surviving raters < 3",
                "(3) item i2: 2 surviving raters < 3"
            ]
        );
    }

    /// The failures read from the verdict's figures are the ones its reasons state, check by
    /// check, and a reason of a further check comes after them.
    #[test]
    fn failures_count_what_the_reasons_say() {
        let per_check =
            |v: &TrustVerdict, k: &str| v.trust_reasons.iter().filter(|r| r.starts_with(k)).count();
        let strict = Trust {
            min_survivors: 4,
            irr_floor: 0.99,
            ..trust()
        };
        for (rows, t) in [
            (
                vec![[0.1, 0.1, 0.1], [0.2, 1.0, 0.6], [0.9, 0.9, 0.9]],
                trust(),
            ),
            (vec![[0.3, 0.7, 0.5], [0.7, 0.3, 0.5]], trust()),
            (
                vec![[0.2, 0.8, 0.5], [0.9, 0.9, 0.9], [0.1, 0.9, 0.1]],
                strict,
            ),
            (vec![[0.5, 0.5, 0.5], [0.9, 0.9, 0.9]], trust()),
        ] {
            let mut v = verdict(&panel(&rows), &t).unwrap();
            let f = v.failures();
            assert_eq!(
                usize::from(f.irr),
                per_check(&v, "(1)"),
                "{:?}",
                v.trust_reasons
            );
            assert_eq!(f.spread, per_check(&v, "(2)"), "{:?}", v.trust_reasons);
            assert_eq!(f.survivors, per_check(&v, "(3)"), "{:?}", v.trust_reasons);
            assert!(v.other_reasons().is_empty());
            // Checks, not items: each of the three once, however many items fail it.
            let checks =
                usize::from(f.irr) + usize::from(f.spread > 0) + usize::from(f.survivors > 0);
            assert_eq!(v.checks_failed(), checks);
            v.trust_reasons.push("(4) panel fails the alt-test".into());
            assert_eq!(v.other_reasons(), ["(4) panel fails the alt-test"]);
            assert_eq!(v.checks_failed(), checks + 1);
        }
    }

    #[test]
    fn a_failed_judge_among_agreeing_ones_is_dropped_not_zeroed() {
        let hi = [("real", 0.9)];
        let lo = [("real", 0.2)];
        let items = [
            item("b", "i1", &[Some(&hi), Some(&hi), Some(&hi), None]),
            item("b", "i2", &[Some(&lo), Some(&lo), Some(&lo), None]),
        ];
        let v = verdict(&items, &trust()).unwrap();
        assert!(v.trustworthy, "{:?}", v.trust_reasons);
        assert_eq!(v.per_item_spread[0].survivors, 3);
        assert_eq!(v.per_item_spread[0].judges, 4);
        assert_eq!(v.per_item_spread[0].spread, 0.0); // a zero would make it 0.9
        assert_eq!(items[0].composite(&BTreeMap::new()), Some(0.9));
    }

    #[test]
    fn every_threshold_can_be_overridden() {
        let items = panel(&[
            [0.2, 0.8, 0.5], // spread 0.6
            [0.9, 0.9, 0.9],
        ]);
        let v = verdict(&items, &trust()).unwrap();
        assert!(!v.trustworthy);
        let lax = Trust {
            spread_ceiling: 0.6, // not strictly greater: passes
            irr_floor: -1.0,
            ..trust()
        };
        let v = verdict(&items, &lax).unwrap();
        assert!(v.trustworthy, "{:?}", v.trust_reasons);
        let strict = Trust {
            min_survivors: 4,
            irr_floor: 0.99,
            spread_ceiling: 0.0,
            level: Level::Ordinal,
            ..trust()
        };
        let v = verdict(&items, &strict).unwrap();
        assert_eq!(v.thresholds.level, Level::Ordinal);
        assert_eq!(v.trust_reasons.len(), 1 + 1 + 2, "{:?}", v.trust_reasons);
        assert!(v.trust_reasons[0].ends_with("< 0.99"));
        assert_eq!(
            v.trust_reasons[1],
            "(2) item i1 spread 0.60 > 0 — raters split"
        );
        assert_eq!(v.trust_reasons[3], "(3) item i2: 3 surviving raters < 4");
    }

    #[test]
    fn an_empty_verdict_set_is_an_error() {
        assert_eq!(verdict(&[], &trust()), Err(NO_EVIDENCE));
    }

    #[test]
    fn several_dimensions_where_only_one_splits() {
        let j = |real: f64, important: f64| [("real", real), ("important", important)];
        let (a, b, c) = (j(0.9, 0.1), j(0.9, 0.9), j(0.9, 0.5));
        let (d, e) = (j(0.2, 0.3), j(0.2, 0.3));
        let items = [
            item("b", "split", &[Some(&a), Some(&b), Some(&c)]),
            item("b", "calm", &[Some(&d), Some(&e), Some(&d)]),
            item("b", "calm2", &[Some(&b), Some(&b), Some(&b)]),
        ];
        let v = verdict(&items, &trust()).unwrap();
        let s = &v.per_item_spread[0];
        assert!((s.spread - 0.8).abs() < 1e-12);
        assert_eq!(s.dimension.as_deref(), Some("important"));
        assert_eq!(v.per_item_spread[1].spread, 0.0);
        assert!(v
            .trust_reasons
            .contains(&"(2) item split spread 0.80 > 0.5 — raters split".to_string()));
        // IRR units are (item, dimension): 6 units of 3 values.
        assert_eq!(irr_rows(&items).len(), 6);
    }

    #[test]
    fn undefined_alpha_counts_as_one_with_a_note() {
        let items = panel(&[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]);
        let v = verdict(&items, &trust()).unwrap();
        assert!(v.trustworthy);
        assert_eq!(v.inter_rater_reliability, Some(1.0));
        assert!(v.irr_note.as_deref().unwrap().contains("counts as 1.0"));
        // Single-judge items: α cannot be computed, and check 1 fails loudly.
        let one = [("real", 0.5)];
        let v = verdict(&[item("b", "i", &[Some(&one)])], &trust()).unwrap();
        assert_eq!(v.inter_rater_reliability, None);
        assert!(v.trust_reasons[0].starts_with("(1) IRR not computable"));
    }

    #[test]
    fn values_show_enough_decimals_to_compare() {
        assert_eq!(shown(0.12, 0.2), "0.12");
        assert_eq!(shown(0.196, 0.2), "0.196");
        assert_eq!(shown(0.5004, 0.5), "0.5004");
        assert_eq!(shown(0.8, 0.5), "0.80");
    }

    #[test]
    fn lift_pairs_items_and_is_withheld_when_untrusted() {
        let items = [
            scored("base", "doc1", [0.4, 0.4, 0.4]),
            scored("base", "doc2", [0.6, 0.6, 0.6]),
            scored("base", "only-base", [0.1, 0.1, 0.1]),
            scored("cand", "doc1", [0.7, 0.7, 0.7]),
            scored("cand", "doc2", [0.8, 0.8, 0.8]),
        ];
        let v = verdict(&items, &trust()).unwrap();
        assert!(v.trustworthy);
        let w = BTreeMap::new();
        let l = lift(&items, &["base"], &["cand"], &w, &v, plan());
        assert_eq!(l.items, 2);
        assert!((l.value.unwrap() - 0.25).abs() < 1e-12); // (0.3 + 0.2) / 2
        let [lo, hi] = l.ci.unwrap();
        assert!(lo <= 0.25 && 0.25 <= hi);
        assert!(!l.withheld);
        // The same id in two arms is named with its arm.
        let split = [
            scored("base", "doc1", [0.0, 1.0, 0.5]),
            scored("cand", "doc1", [0.7, 0.7, 0.7]),
        ];
        let v = verdict(&split, &trust()).unwrap();
        assert!(v
            .trust_reasons
            .iter()
            .any(|r| r.contains("item doc1 (base) spread")));
        let l = lift(&split, &["base"], &["cand"], &w, &v, plan());
        assert!(l.withheld && l.value.is_none() && l.ci.is_none());
        assert_eq!(l.reasons, v.trust_reasons);
        // Nothing judged in both arms.
        let v = verdict(&items[..3], &trust()).unwrap();
        let l = lift(&items[..3], &["base"], &["cand"], &w, &v, plan());
        assert_eq!((l.value, l.items), (None, 0));
        assert!(l.note.is_some());
    }

    #[test]
    fn a_pass_fail_panel_lifts_by_mcnemar_and_counts_the_discordant_items() {
        // Every composite 0 or 1: the lift is a difference of proportions, tested by McNemar's
        // exact test over the items whose outcome changed (two: d1 failed → passed, d4 passed →
        // failed, d2 passed → passed, d3 failed → failed). Two discordant items split 1–1: p 1.
        let pass = [1.0; 3];
        let fail = [0.0; 3];
        let items = [
            scored("base", "d1", fail),
            scored("base", "d2", pass),
            scored("base", "d3", fail),
            scored("base", "d4", pass),
            scored("cand", "d1", pass),
            scored("cand", "d2", pass),
            scored("cand", "d3", fail),
            scored("cand", "d4", fail),
        ];
        let v = verdict(&items, &trust()).unwrap();
        assert!(v.trustworthy, "{:?}", v.trust_reasons);
        let l = lift(&items, &["base"], &["cand"], &BTreeMap::new(), &v, plan());
        let p = l.paired.unwrap();
        assert_eq!(p.test, crate::stats::test::Test::Mcnemar);
        assert_eq!((p.discordant, p.p_value), (Some(2), Some(1.0)));
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["discordant"], 2);
    }
}
