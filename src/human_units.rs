//! The lift and anchor calibration in human units (docs/guides/judges-and-humans.md): PPI++
//! combines the few items people labelled with the many the judges scored, into estimates that
//! stay unbiased however biased the judges are, provided the labelled items were drawn at
//! random. Pure: judged items, labels and each finding's confidence value in.
//!
//! Per item, Y is the annotators' mean composite (each annotator's labels weighted as the
//! judges' dimensions are) and f the panel's composite (surviving judges only).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::corpus::labels::Label;
use crate::corpus::verdicts::Item;
use crate::stats::ppi::{self, classical, ppi_mean_t, Estimate, Moments};

/// `metrics.json` `lift_human`.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LiftHuman {
    /// Treatment − baseline in human units, PPI++ over the lift pairs (items judged in both
    /// arms; labelled: labelled in both).
    #[serde(flatten)]
    pub ppi: Estimate,
    /// The same from the labelled pairs alone: mean ± z·σ⁰/√n.
    pub classical: Classical,
    /// Each arm's mean composite in human units.
    pub arms: ArmsHuman,
    /// Two-sided p of the PPI++ estimate against no change (Student's t on the interval's
    /// degrees of freedom), for the decision.
    #[serde(default)]
    pub p: Option<f64>,
    /// Holm's adjustment of `p` over the decision metrics, when `lift_human` is one.
    #[serde(default)]
    pub p_adjusted: Option<f64>,
    /// The pilot's moments `calibench plan --labels-for` sizes the next labelling from.
    #[serde(default)]
    pub moments: Option<Moments>,
    /// Labelled (arm, item) pairs that no judge scored (or that are not judged items): counted,
    /// not used.
    pub labels_unused: usize,
    /// Items labelled in one arm only: not a lift pair.
    pub labelled_one_arm: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Classical {
    pub value: Option<f64>,
    pub ci: Option<[f64; 2]>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArmsHuman {
    pub baseline: Estimate,
    pub treatment: Estimate,
}

/// One confidence value's judged findings in human units: does a 75 hit 0.75?
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CalibrationHumanCell {
    pub arm: String,
    /// The recorded confidence value (anchor) or its 0.1 bin (float), as the reviewer wrote it.
    pub value: String,
    /// Judged findings at the value.
    pub items: usize,
    /// Their mean judge composite (judge units).
    pub judge: f64,
    /// Their mean composite in human units, PPI++.
    pub human: Estimate,
}

/// An arm's recorded labels (its `source`, and its name where that differs), and each judged
/// finding's recorded confidence value under them.
pub struct ArmLabels<'a> {
    pub name: &'a str,
    pub labels: Vec<&'a str>,
    pub confidence: HashMap<&'a str, String>,
}

/// Each (arm label, item) the people labelled: the annotators' mean composite.
fn human_composites<'a>(
    labels: &'a [Label],
    weights: &BTreeMap<String, f64>,
) -> HashMap<(&'a str, &'a str), f64> {
    let mut sums: HashMap<(&str, &str), (f64, usize)> = HashMap::new();
    for l in labels {
        if let Some(composite) = crate::corpus::verdicts::weighted(l.scores.iter(), weights) {
            let e = sums.entry((&l.arm, &l.item_id)).or_default();
            e.0 += composite;
            e.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(k, (s, n))| (k, s / n as f64))
        .collect()
}

/// PPI++ over `(f, Y if labelled)` items, with its small-sample interval.
fn estimate(items: &[(f64, Option<f64>)]) -> Estimate {
    let (y, f, u) = split(items);
    ppi_mean_t(&y, &f, &u)
}

/// The lift and each arm's mean in human units, and anchor calibration in human units. `None`
/// when no label falls on a judged item.
pub fn estimates(
    judged: &[Item],
    labels: &[Label],
    weights: &BTreeMap<String, f64>,
    arms: [&ArmLabels<'_>; 2],
) -> Option<(LiftHuman, Vec<CalibrationHumanCell>)> {
    let human = human_composites(labels, weights);
    let judge: HashMap<(&str, &str), f64> = judged
        .iter()
        .filter_map(|i| Some(((i.arm.as_str(), i.item_id.as_str()), i.composite(weights)?)))
        .collect();
    let labels_unused = human.keys().filter(|k| !judge.contains_key(*k)).count();
    if human.len() == labels_unused {
        return None;
    }
    // Per arm: every judged item under its labels, once by id.
    let per_arm = |a: &ArmLabels<'_>| -> Vec<(&str, &str, f64, Option<f64>)> {
        let mut seen = HashSet::new();
        judged
            .iter()
            .filter(|i| a.labels.contains(&i.arm.as_str()))
            .filter(|i| seen.insert(i.item_id.as_str()))
            .filter_map(|i| {
                let key = (i.arm.as_str(), i.item_id.as_str());
                Some((key.0, key.1, *judge.get(&key)?, human.get(&key).copied()))
            })
            .collect()
    };
    let (b, t) = (per_arm(arms[0]), per_arm(arms[1]));
    let arm_estimate = |items: &[(&str, &str, f64, Option<f64>)]| {
        estimate(&items.iter().map(|x| (x.2, x.3)).collect::<Vec<_>>())
    };
    // Lift pairs, in the treatment's order: f and Y as treatment − baseline.
    let b_by_id: HashMap<&str, (f64, Option<f64>)> = b.iter().map(|x| (x.1, (x.2, x.3))).collect();
    let mut pairs = Vec::new();
    let mut labelled_one_arm = 0;
    for &(_, id, ft, yt) in &t {
        let Some(&(fb, yb)) = b_by_id.get(id) else {
            continue;
        };
        let y = match (yb, yt) {
            (Some(yb), Some(yt)) => Some(yt - yb),
            (None, None) => None,
            _ => {
                labelled_one_arm += 1;
                None
            }
        };
        pairs.push((ft - fb, y));
    }
    let (y, f, u) = split(&pairs);
    let lift = ppi_mean_t(&y, &f, &u);
    let c = classical(&y);
    let p = lift.p_value();
    let lift = LiftHuman {
        ppi: lift,
        classical: Classical {
            value: c.value,
            ci: c.ci,
        },
        arms: ArmsHuman {
            baseline: arm_estimate(&b),
            treatment: arm_estimate(&t),
        },
        p,
        p_adjusted: None,
        moments: ppi::moments(&y, &f, &u).filter(|_| !u.is_empty()),
        labels_unused,
        labelled_one_arm,
    };
    // Anchor calibration: each arm's judged findings grouped by their recorded value.
    let mut cells = Vec::new();
    for (a, items) in [(arms[0], &b), (arms[1], &t)] {
        let mut by_value: BTreeMap<&str, Vec<(f64, Option<f64>)>> = BTreeMap::new();
        for &(_, id, f, y) in items.iter() {
            if let Some(v) = a.confidence.get(id) {
                by_value.entry(v).or_default().push((f, y));
            }
        }
        // In the order of the values themselves (25, 50, 75, 100), not of their text.
        let mut by_value: Vec<_> = by_value.into_iter().collect();
        by_value.sort_by(|a, b| {
            let order = crate::replay::review_metrics::cell_order;
            order(a.0).total_cmp(&order(b.0))
        });
        for (value, xs) in by_value {
            if xs.iter().all(|x| x.1.is_none()) {
                continue;
            }
            cells.push(CalibrationHumanCell {
                arm: a.name.to_string(),
                value: value.to_string(),
                items: xs.len(),
                judge: xs.iter().map(|x| x.0).sum::<f64>() / xs.len() as f64,
                human: estimate(&xs),
            });
        }
    }
    Some((lift, cells))
}

/// Labelled Y, their f, and the unlabelled f.
fn split(items: &[(f64, Option<f64>)]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut y, mut f, mut u) = (Vec::new(), Vec::new(), Vec::new());
    for &(fi, yi) in items {
        match yi {
            Some(yi) => {
                y.push(yi);
                f.push(fi);
            }
            None => u.push(fi),
        }
    }
    (y, f, u)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::verdicts::Verdict;

    fn item(arm: &str, id: &str, score: f64) -> Item {
        Item {
            line: 1,
            item_id: id.into(),
            arm: arm.into(),
            verdicts: ["j1", "j2"]
                .iter()
                .map(|m| Verdict {
                    model: m.to_string(),
                    reason: None,
                    scores: Some([("q".to_string(), score)].into()),
                    ..Default::default()
                })
                .collect(),
        }
    }

    fn label(arm: &str, id: &str, who: &str, x: f64) -> Label {
        Label {
            line: 1,
            item_id: id.into(),
            arm: arm.into(),
            annotator: who.into(),
            scores: [("q", x)].into_iter().collect(),
        }
    }

    fn arm<'a>(name: &'a str) -> ArmLabels<'a> {
        ArmLabels {
            name,
            labels: vec![name],
            confidence: HashMap::new(),
        }
    }

    #[test]
    fn the_lift_pairs_items_judged_in_both_arms_and_labelled_in_both() {
        // Judges score the treatment 0.25 higher than the baseline on every item; people see
        // only 0.125 more. Items i0..i5; i0, i1 labelled in both arms, i2 in the baseline only.
        // (Every value is exact in binary: the differences are exactly equal.)
        let mut items = Vec::new();
        for k in 0..6 {
            let base = 0.125 + 0.0625 * k as f64;
            items.push(item("b", &format!("i{k}"), base));
            items.push(item("t", &format!("i{k}"), base + 0.25));
        }
        items.push(item("t", "only-t", 0.875));
        let labels = vec![
            label("b", "i0", "ann", 0.25),
            label("t", "i0", "ann", 0.375),
            label("b", "i1", "ann", 0.5),
            label("t", "i1", "ann", 0.625),
            label("b", "i2", "ann", 0.5),
            label("b", "ghost", "ann", 0.5),
        ];
        let (b, t) = (arm("b"), arm("t"));
        let (lift, _) = estimates(&items, &labels, &BTreeMap::new(), [&b, &t]).unwrap();
        assert_eq!((lift.ppi.labelled, lift.ppi.unlabelled), (2, 4));
        assert_eq!((lift.labelled_one_arm, lift.labels_unused), (1, 1));
        // The judges' differences are all 0.25: they do not vary on the labelled pairs, so the
        // estimate is the labels alone: 0.125.
        assert_eq!(lift.ppi.lambda, 0.0);
        assert_eq!(lift.ppi.value, Some(0.125));
        assert!(lift.ppi.note.clone().unwrap().contains("do not vary"));
        assert_eq!(lift.classical.value, lift.ppi.value);
        // Each arm: three labelled items in the baseline (i0, i1, i2), two in the treatment.
        assert_eq!(lift.arms.baseline.labelled, 3);
        assert_eq!(lift.arms.treatment.labelled, 2);
        assert_eq!(lift.arms.treatment.unlabelled, 5);
    }

    #[test]
    fn annotators_are_averaged_and_dimensions_weighted_as_the_judges_are() {
        let mut two = label("b", "i0", "a1", 0.0);
        two.scores = [("q", 0.0), ("r", 1.0)].into_iter().collect();
        let labels = vec![two, label("b", "i0", "a2", 0.6)];
        let weights: BTreeMap<String, f64> = [("r".to_string(), 3.0)].into();
        let h = human_composites(&labels, &weights);
        // a1: (0·1 + 1·3) / 4 = 0.75; a2: 0.6; mean 0.675.
        assert!((h[&("b", "i0")] - 0.675).abs() < 1e-12);
    }

    #[test]
    fn anchor_calibration_groups_findings_by_their_recorded_value() {
        let mut items = Vec::new();
        let mut confidence = HashMap::new();
        let ids: Vec<String> = (0..8).map(|k| format!("f{k}")).collect();
        for (k, id) in ids.iter().enumerate() {
            items.push(item("t", id, if k < 4 { 0.8 } else { 0.4 }));
            confidence.insert(
                id.as_str(),
                if k < 4 {
                    "75".to_string()
                } else {
                    "25".to_string()
                },
            );
        }
        let labels = vec![label("t", "f0", "ann", 1.0), label("t", "f1", "ann", 0.5)];
        let t = ArmLabels {
            name: "treatment",
            labels: vec!["t"],
            confidence,
        };
        let b = arm("b");
        let (_, cells) = estimates(&items, &labels, &BTreeMap::new(), [&b, &t]).unwrap();
        // Only the 75s have labels: one cell; the judges' 0.8 against the people's 0.75.
        assert_eq!(cells.len(), 1);
        let c = &cells[0];
        assert_eq!(
            (c.arm.as_str(), c.value.as_str(), c.items),
            ("treatment", "75", 4)
        );
        assert!((c.judge - 0.8).abs() < 1e-12);
        assert_eq!((c.human.labelled, c.human.unlabelled), (2, 2));
        assert!((c.human.value.unwrap() - 0.75).abs() < 1e-12);
    }
}
