//! Can a judge replace a human? (docs/guides/judges-and-humans.md) With human labels beside the
//! judges' verdicts: the alternative annotator test of each judge and of the panel, the judges'
//! error correlations and the effective number of judges. Pure: verdicts and labels in.
//!
//! A unit is one (arm, item, dimension) that at least one person labelled. The judges are the
//! candidates, the annotators the humans, at the interval level (negative RMSE); the panel's
//! value on a unit is the mean of its surviving judges' scores on that dimension (a failed judge
//! dropped, never a zero). A judge's error on a unit is its score minus the mean of the labels.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::corpus::labels::Label;
use crate::corpus::verdicts::Item;
use crate::policy::{AltTestUse, Trust};
use crate::stats::alttest::{alt_test, Alignment, AltTest, HumanResult, Settings};
use crate::stats::judges::{effective_judges, error_correlation};
use crate::stats::test::mean;

/// The candidate name of the panel's composite in the alt-test.
pub use crate::corpus::labels::PANEL;

/// The humans section of `metrics.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HumansSection {
    /// People who labelled at least one judged item.
    pub annotators: usize,
    /// Judged (arm, item) pairs with at least one label.
    pub items: usize,
    /// (arm, item, dimension) units with at least one label: what the alt-test runs over.
    pub units: usize,
    /// The alt-test's ε and q.
    pub epsilon: f64,
    pub q: f64,
    /// Per judge, then `panel`: the alt-test against the annotators. A candidate the test
    /// could not run on is in `alt_test_notes` instead.
    pub alt_test: BTreeMap<String, AltTestFigures>,
    /// Why the test could not run on a candidate (too few labelled units per annotator, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub alt_test_notes: BTreeMap<String, String>,
    /// Pearson correlation of each pair of judges' errors against the mean label, over the
    /// units both judged; `null` where it is undefined (fewer than 2 units, an error that does
    /// not vary).
    pub error_correlation: BTreeMap<String, BTreeMap<String, Option<f64>>>,
    /// k / (1 + (k − 1)·r̄), r̄ the mean off-diagonal correlation clipped to [0, 1]: how many
    /// independent judges the panel is worth. `null` with no defined pair.
    pub effective_judges: Option<f64>,
    pub judges: usize,
}

/// One candidate's alt-test, as `metrics.json` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AltTestFigures {
    pub passed: bool,
    pub winning_rate: f64,
    pub advantage_probability: f64,
    pub items: usize,
    pub humans: Vec<HumanResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_humans: Vec<String>,
}

impl From<AltTest> for AltTestFigures {
    fn from(t: AltTest) -> Self {
        AltTestFigures {
            passed: t.passed,
            winning_rate: t.winning_rate,
            advantage_probability: t.advantage_probability,
            items: t.items,
            humans: t.humans,
            skipped_humans: t.skipped_humans,
        }
    }
}

/// The alt-test's settings in an experiment: interval level, q 0.05, at least 2 annotators per
/// unit and 30 units per annotator, as the paper recommends.
pub fn settings(trust: &Trust) -> Settings {
    Settings {
        alignment: Alignment::NegativeRmse,
        epsilon: trust.alt_test_epsilon,
        ..Settings::default()
    }
}

/// The humans section over the judged `items` (already filed under the arms) and `labels`.
/// `None` when no label falls on a judged item.
pub fn section(items: &[Item], labels: &[Label], trust: &Trust) -> Option<HumansSection> {
    let judged: HashMap<(&str, &str), &Item> = items
        .iter()
        .map(|i| ((i.arm.as_str(), i.item_id.as_str()), i))
        .collect();
    // Units in order of first label: (arm, item, dimension) → each annotator's label.
    let mut unit_index: HashMap<(&str, &str, &str), usize> = HashMap::new();
    let mut units: Vec<(&Item, &str, BTreeMap<&str, f64>)> = Vec::new();
    let mut annotators: BTreeSet<&str> = BTreeSet::new();
    for l in labels {
        let Some(item) = judged.get(&(&*l.arm, &*l.item_id)) else {
            continue;
        };
        annotators.insert(&l.annotator);
        for (dim, v) in l.scores.iter() {
            let next = units.len();
            let u = *unit_index.entry((&l.arm, &l.item_id, dim)).or_insert(next);
            if u == next {
                units.push((item, dim, BTreeMap::new()));
            }
            units[u].2.insert(&l.annotator, v);
        }
    }
    if units.is_empty() {
        return None;
    }
    // The judges that scored at least one labelled unit (a judge that failed on every one
    // has nothing to compare), in order of first appearance.
    let judges: Vec<&str> = {
        let mut seen = Vec::new();
        for (item, dim, _) in &units {
            for v in &item.verdicts {
                let scored = v.scores.as_ref().is_some_and(|s| s.contains_key(*dim));
                if scored && !seen.contains(&v.model.as_str()) {
                    seen.push(v.model.as_str());
                }
            }
        }
        seen
    };
    let annotators: Vec<&str> = annotators.into_iter().collect();
    // Raters: the judges, the panel, then the annotators.
    let mut names: Vec<String> = judges.iter().map(|j| j.to_string()).collect();
    names.push(PANEL.to_string());
    names.extend(annotators.iter().map(|a| a.to_string()));
    let k = judges.len();
    // Per unit: each judge's score and the panel's (k + 1 columns, few), and the ratings the
    // alt-test reads, held sparsely: a unit's judges, panel and the annotators who labelled it,
    // never a column per annotator (a crowd of 100,000 who each label three units is 300,000
    // labels, not a matrix).
    let annotator_at: HashMap<&str, usize> = annotators
        .iter()
        .enumerate()
        .map(|(i, a)| (*a, k + 1 + i))
        .collect();
    let scores: Vec<Vec<Option<f64>>> = units
        .iter()
        .map(|(item, dim, _)| {
            let score = |judge: &str| {
                item.verdicts
                    .iter()
                    .find(|v| v.model == judge)
                    .and_then(|v| v.scores.as_ref()?.get(*dim).copied())
            };
            let mut row: Vec<Option<f64>> = judges.iter().map(|j| score(j)).collect();
            let surviving: Vec<f64> = row.iter().flatten().copied().collect();
            row.push((!surviving.is_empty()).then(|| mean(&surviving)));
            row
        })
        .collect();
    let ratings: Vec<Vec<(usize, f64)>> = units
        .iter()
        .zip(&scores)
        .map(|((_, _, labelled), row)| {
            let judged = row.iter().enumerate().filter_map(|(j, v)| Some((j, (*v)?)));
            let labels = labelled.iter().map(|(a, v)| (annotator_at[a], *v));
            judged.chain(labels).collect()
        })
        .collect();
    let humans: Vec<usize> = (k + 1..names.len()).collect();
    let s = settings(trust);
    let mut alt = BTreeMap::new();
    let mut notes = BTreeMap::new();
    for candidate in 0..=k {
        match alt_test(&names, &ratings, candidate, &humans, &s) {
            Ok(t) => {
                alt.insert(names[candidate].clone(), AltTestFigures::from(t));
            }
            Err(e) => {
                notes.insert(names[candidate].clone(), e.to_string());
            }
        }
    }
    // Each judge's error against the mean label of its unit.
    let mean_labels: Vec<f64> = units
        .iter()
        .map(|(_, _, labelled)| mean(&labelled.values().copied().collect::<Vec<_>>()))
        .collect();
    let errors: Vec<Vec<Option<f64>>> = (0..k)
        .map(|j| {
            scores
                .iter()
                .zip(&mean_labels)
                .map(|(row, m)| row[j].map(|score| score - m))
                .collect()
        })
        .collect();
    let matrix = error_correlation(&errors);
    let error_correlation = judges
        .iter()
        .enumerate()
        .map(|(a, ja)| {
            let row = judges
                .iter()
                .enumerate()
                .map(|(b, jb)| (jb.to_string(), matrix[a][b]))
                .collect();
            (ja.to_string(), row)
        })
        .collect();
    let items: BTreeSet<(&str, &str)> = units
        .iter()
        .map(|(i, _, _)| (i.arm.as_str(), i.item_id.as_str()))
        .collect();
    Some(HumansSection {
        annotators: annotators.len(),
        items: items.len(),
        units: units.len(),
        epsilon: s.epsilon,
        q: s.q,
        alt_test: alt,
        alt_test_notes: notes,
        effective_judges: effective_judges(&matrix),
        error_correlation,
        judges: k,
    })
}

/// The mean of the defined off-diagonal error correlations (before clipping), for words.
pub fn mean_correlation(h: &HumansSection) -> Option<f64> {
    let names: Vec<&String> = h.error_correlation.keys().collect();
    let off: Vec<f64> = names
        .iter()
        .enumerate()
        .flat_map(|(a, x)| names[a + 1..].iter().map(move |y| (*x, *y)))
        .filter_map(|(x, y)| h.error_correlation[x][y])
        .collect();
    (!off.is_empty()).then(|| off.iter().sum::<f64>() / off.len() as f64)
}

/// One line of words per candidate, then the judges' error correlation: what the terminal
/// prints beside the trust verdict.
pub fn describe(h: &HumansSection) -> String {
    let mut s = format!(
        "Can a judge replace the annotators? alt-test over {} labelled units ({}, {}), ε {}, q {}:\n",
        h.units,
        crate::text::count(h.items as u64, "item", "items"),
        crate::text::count(h.annotators as u64, "annotator", "annotators"),
        h.epsilon,
        h.q
    );
    let width = h
        .alt_test
        .keys()
        .chain(h.alt_test_notes.keys())
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(5);
    for (name, t) in candidates(h) {
        match t {
            Ok(t) => {
                s += &format!(
                    "  {name:<width$}  {}  winning rate {:.2}, advantage probability {:.2}\n",
                    if t.passed { "passes" } else { "fails " },
                    t.winning_rate,
                    t.advantage_probability
                );
            }
            Err(note) => s += &format!("  {name:<width$}  not tested: {note}\n"),
        }
    }
    match (h.effective_judges, mean_correlation(h)) {
        (Some(e), Some(r)) => {
            s += &format!(
                "  the judges' errors correlate at r̄ {r:.2}: {} worth {e:.1} independent\n",
                crate::text::count(h.judges as u64, "judge", "judges")
            );
        }
        _ => s += "  the judges' error correlation is not computable (fewer than 2 units judged by two judges, or errors that do not vary)\n",
    }
    s
}

/// The candidates in order: each judge, then the panel; each its result or why it has none.
pub fn candidates(h: &HumansSection) -> Vec<(&str, Result<&AltTestFigures, &str>)> {
    let mut out: Vec<(&str, Result<&AltTestFigures, &str>)> = h
        .alt_test
        .iter()
        .map(|(n, t)| (n.as_str(), Ok(t)))
        .chain(
            h.alt_test_notes
                .iter()
                .map(|(n, e)| (n.as_str(), Err(e.as_str()))),
        )
        .collect();
    out.sort_by_key(|(n, _)| (*n == PANEL, *n));
    out
}

/// Trust check (4), when the experiment requires it: the panel passes the alt-test. The reason
/// when it does not, or when the test could not run on the panel.
pub fn check(humans: Option<&HumansSection>, trust: &Trust) -> Option<String> {
    if trust.alt_test != AltTestUse::Require {
        return None;
    }
    let Some(h) = humans else {
        return Some("(4) panel not alt-tested: no human label falls on a judged item".to_string());
    };
    match h.alt_test.get(PANEL) {
        Some(p) if p.passed => None,
        Some(p) => Some(format!(
            "(4) panel fails the alt-test: winning rate {:.2} < 0.5 (ε {})",
            p.winning_rate, h.epsilon
        )),
        None => Some(format!(
            "(4) panel not alt-tested: {}",
            h.alt_test_notes
                .get(PANEL)
                .map_or("no result", String::as_str)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::verdicts::Verdict;

    fn item(id: &str, scores: &[(&str, Option<f64>)]) -> Item {
        Item {
            line: 1,
            item_id: id.into(),
            arm: "b".into(),
            verdicts: scores
                .iter()
                .map(|(m, s)| Verdict {
                    model: m.to_string(),
                    reason: None,
                    scores: s.map(|x| [("real".to_string(), x)].into()),
                    ..Default::default()
                })
                .collect(),
        }
    }

    fn label(id: &str, who: &str, x: f64) -> Label {
        Label {
            line: 1,
            item_id: id.into(),
            arm: "b".into(),
            annotator: who.into(),
            scores: [("real", x)].into_iter().collect(),
        }
    }

    /// 40 items the three annotators label alike (0 or 1, alternating); judge `close` is 0.1
    /// off them, `far` 0.6 off, `gone` failed on every item.
    fn corpus() -> (Vec<Item>, Vec<Label>) {
        let mut items = Vec::new();
        let mut labels = Vec::new();
        for i in 0..40 {
            let truth = (i % 2) as f64;
            let id = format!("i{i}");
            let off = |d: f64| if truth == 1.0 { 1.0 - d } else { d };
            items.push(item(
                &id,
                &[
                    ("close", Some(off(0.1))),
                    ("far", Some(off(0.6))),
                    ("gone", None),
                ],
            ));
            for a in ["ann-1", "ann-2", "ann-3"] {
                labels.push(label(&id, a, truth));
            }
        }
        (items, labels)
    }

    #[test]
    fn each_judge_and_the_panel_are_tested_against_the_annotators() {
        let (items, labels) = corpus();
        let h = section(&items, &labels, &Trust::default()).unwrap();
        // `gone` failed on every labelled unit: not a judge here.
        assert_eq!((h.annotators, h.items, h.units, h.judges), (3, 40, 40, 2));
        // Annotators agree exactly: leaving one out, it aligns perfectly (RMSE 0) and any
        // judge 0.1 off loses every item: d = 1, p = 1, nobody rejected.
        assert_eq!(h.alt_test["close"].winning_rate, 0.0);
        assert!(!h.alt_test["close"].passed);
        assert_eq!(h.alt_test["close"].advantage_probability, 0.0);
        // The panel is the mean of the surviving judges: (0.1 + 0.6) / 2 = 0.35 off.
        assert!(!h.alt_test[PANEL].passed);
        assert!(!h.alt_test.contains_key("gone") && !h.error_correlation.contains_key("gone"));
    }

    #[test]
    fn a_judge_as_good_as_the_annotators_passes_and_require_makes_it_a_check() {
        // The annotators disagree by ±0.2 around a truth the `close` judge gives exactly.
        let mut items = Vec::new();
        let mut labels = Vec::new();
        for i in 0..40 {
            let truth = if i % 2 == 0 { 0.3 } else { 0.7 };
            let id = format!("i{i}");
            items.push(item(
                &id,
                &[("close", Some(truth)), ("far", Some(1.0 - truth))],
            ));
            let spread = [(0.2, -0.2, 0.0), (0.0, 0.2, -0.2), (-0.2, 0.0, 0.2)][i % 3];
            for (a, d) in [
                ("ann-1", spread.0),
                ("ann-2", spread.1),
                ("ann-3", spread.2),
            ] {
                labels.push(label(&id, a, truth + d));
            }
        }
        let h = section(&items, &labels, &Trust::default()).unwrap();
        assert!(h.alt_test["close"].passed, "{:?}", h.alt_test["close"]);
        assert_eq!(h.alt_test["close"].winning_rate, 1.0);
        assert!(!h.alt_test["far"].passed);
        // Report only: no check.
        assert_eq!(check(Some(&h), &Trust::default()), None);
        let require = Trust {
            alt_test: AltTestUse::Require,
            ..Trust::default()
        };
        // The panel is 0.5 everywhere: it loses to the annotators.
        let reason = check(Some(&h), &require).unwrap();
        assert!(
            reason.starts_with("(4) panel fails the alt-test: winning rate 0.00 < 0.5 (ε 0.2)"),
            "{reason}"
        );
        assert!(check(None, &require).unwrap().contains("no human label"));
    }

    #[test]
    fn errors_that_move_together_make_fewer_effective_judges() {
        // Labels 0/1; judges a and b err alike (+0.2 on even items, −0.1 on odd), c the other
        // way round: r(a, b) = 1, r(a, c) = r(b, c) = −1; r̄ = −1/3 clips to 0: three judges.
        let mut items = Vec::new();
        let mut labels = Vec::new();
        for i in 0..10 {
            let id = format!("i{i}");
            let (truth, e) = if i % 2 == 0 { (0.0, 0.2) } else { (1.0, -0.1) };
            items.push(item(
                &id,
                &[
                    ("a", Some(truth + e)),
                    ("b", Some(truth + e)),
                    ("c", Some(truth - e)),
                ],
            ));
            labels.push(label(&id, "ann-1", truth));
            labels.push(label(&id, "ann-2", truth));
        }
        let h = section(&items, &labels, &Trust::default()).unwrap();
        let r = |x: &str, y: &str| h.error_correlation[x][y].unwrap();
        assert!((r("a", "b") - 1.0).abs() < 1e-12);
        assert!((r("a", "c") + 1.0).abs() < 1e-12);
        assert_eq!(h.effective_judges, Some(3.0));
        // Only a and b: r̄ = 1, worth one judge.
        let two: Vec<Item> = items
            .iter()
            .map(|i| Item {
                verdicts: i.verdicts[..2].to_vec(),
                ..i.clone()
            })
            .collect();
        let h = section(&two, &labels, &Trust::default()).unwrap();
        assert!((h.effective_judges.unwrap() - 1.0).abs() < 1e-12);
        // Too few labelled units per annotator for the alt-test: noted per candidate.
        assert!(h.alt_test_notes[PANEL].contains("no human has 30 or more of the 10 kept items"));
    }

    #[test]
    fn labels_on_items_nobody_judged_give_no_section() {
        let (items, _) = corpus();
        assert_eq!(
            section(
                &items,
                &[label("elsewhere", "ann-1", 1.0)],
                &Trust::default()
            ),
            None
        );
    }
}
