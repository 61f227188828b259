//! The alternative annotator test (Calderon, Reichart & Dror, ACL 2025, "The Alternative
//! Annotator Test for LLM-as-a-Judge"): can a model stand in for the human annotators? Pure:
//! ratings in, the test's result out.
//!
//! For each human h, leave h out: on every item both rated, compare how well the model and h
//! each align with the *other* humans. W_f = 1 when the model aligns at least as well as h,
//! W_h = 1 when h aligns at least as well as the model; d = W_h − W_f. A one-sided t-test of
//! mean(d) ≥ ε against mean(d) < ε asks whether the model is at most ε worse than h. The
//! humans' p-values are corrected by Benjamini–Yekutieli at q; the winning rate is the share of
//! humans the model beats, and the model passes when it beats at least half of them.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::calibration::round9;
use super::test::{mean, sd};

/// How a value's alignment with the other humans is scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Alignment {
    /// The share of the other humans whose value equals it (nominal data).
    Accuracy,
    /// Minus the root mean squared difference from the other humans' values (every other level).
    NegativeRmse,
}

/// The test's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    pub alignment: Alignment,
    /// How much worse than a human the model may be (0.2 experts, 0.15 skilled annotators, 0.1
    /// crowd workers, per the paper).
    pub epsilon: f64,
    /// The false discovery rate of Benjamini–Yekutieli.
    pub q: f64,
    /// Items kept: those the model rated and at least this many humans rated.
    pub min_humans_per_item: usize,
    /// Humans tested: those with at least this many kept items (the others are listed as
    /// skipped).
    pub min_items_per_human: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            alignment: Alignment::Accuracy,
            epsilon: 0.2,
            q: 0.05,
            min_humans_per_item: 2,
            min_items_per_human: 30,
        }
    }
}

/// One human the model was tested against.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct HumanResult {
    pub human: String,
    /// Kept items this human rated.
    pub items: usize,
    /// mean(W_f): how often the model aligned at least as well as this human.
    pub rho_llm: f64,
    /// mean(W_h): how often this human aligned at least as well as the model.
    pub rho_human: f64,
    pub p_value: f64,
    /// Rejected by Benjamini–Yekutieli: the model is at most ε worse than this human.
    pub rejected: bool,
}

/// The alt-test of one model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AltTest {
    pub llm: String,
    /// The winning rate is at least 0.5.
    pub passed: bool,
    /// Humans rejected / humans tested.
    pub winning_rate: f64,
    /// The mean over tested humans of mean(W_f).
    pub advantage_probability: f64,
    pub epsilon: f64,
    pub q: f64,
    /// Items kept.
    pub items: usize,
    pub humans: Vec<HumanResult>,
    /// Humans with fewer kept items than the minimum.
    pub skipped_humans: Vec<String>,
}

/// Why the test cannot be run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AltTestError {
    #[error("the alt-test needs at least 2 human annotators; the data has {0}")]
    TooFewHumans(usize),
    #[error("no item has a value from `{llm}` and from at least {min} humans")]
    NoItems { llm: String, min: usize },
    #[error("no human has {min} or more of the {items} kept items")]
    NoHumans { items: usize, min: usize },
}

/// `value`'s alignment with `others` (not empty).
pub fn align(value: f64, others: &[f64], alignment: Alignment) -> f64 {
    let n = others.len() as f64;
    match alignment {
        Alignment::Accuracy => {
            others
                .iter()
                .filter(|o| round9(**o) == round9(value))
                .count() as f64
                / n
        }
        Alignment::NegativeRmse => {
            -(others.iter().map(|o| (value - o).powi(2)).sum::<f64>() / n).sqrt()
        }
    }
}

/// The one-sided one-sample t-test of H₀: mean(d) ≥ ε against H₁: mean(d) < ε: p = F(t) with
/// n − 1 degrees of freedom. When the differences do not vary (or there is one), p is 0 if
/// mean(d) < ε, else 1.
pub fn t_test_less(d: &[f64], epsilon: f64) -> f64 {
    let n = d.len() as f64;
    let mean = mean(d);
    let sd = sd(d).unwrap_or(0.0);
    if sd == 0.0 || !sd.is_finite() {
        return if mean < epsilon { 0.0 } else { 1.0 };
    }
    let t = (mean - epsilon) / (sd / n.sqrt());
    StudentsT::new(0.0, 1.0, n - 1.0).map_or(f64::NAN, |dist| dist.cdf(t))
}

/// Benjamini–Yekutieli at `q`: which of `p` are rejected. Sorted ascending, the k smallest are
/// rejected for the largest k with p₍k₎ ≤ (k/m)·q/H_m, H_m = Σ_{j≤m} 1/j; p-values tied with
/// p₍k₎ are rejected with it.
pub fn benjamini_yekutieli(p: &[f64], q: f64) -> Vec<bool> {
    let m = p.len();
    if m == 0 {
        return Vec::new();
    }
    let harmonic: f64 = (1..=m).map(|j| 1.0 / j as f64).sum();
    let mut sorted: Vec<f64> = p.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let cut = (1..=m)
        .rev()
        .find(|&k| sorted[k - 1] <= k as f64 / m as f64 * q / harmonic)
        .map(|k| sorted[k - 1]);
    p.iter().map(|x| cut.is_some_and(|c| *x <= c)).collect()
}

/// One item's ratings, held sparsely: each rater that rated it (an index into the names) and
/// its value, in any order, each rater once.
pub type Ratings = [(usize, f64)];

/// What the leave-one-out comparisons read of one kept item: the model's value, the humans'
/// count, their values' sums about a shift (the first human's value, so that the squares do not
/// cancel), and for accuracy each distinct value's count. "The other humans" of a human h are
/// then these less h's own value: each comparison costs O(1), not a pass over the item's raters.
struct Kept {
    model: f64,
    humans: usize,
    shift: f64,
    sum: f64,
    sum_sq: f64,
    /// (value at 9 decimals, count), for accuracy.
    counts: Vec<(u64, usize)>,
}

impl Kept {
    fn new(model: f64, human_values: &[f64], alignment: Alignment) -> Kept {
        let shift = human_values[0];
        let (mut sum, mut sum_sq) = (0.0, 0.0);
        for v in human_values {
            sum += v - shift;
            sum_sq += (v - shift) * (v - shift);
        }
        let mut counts: Vec<(u64, usize)> = Vec::new();
        if alignment == Alignment::Accuracy {
            for v in human_values {
                let key = round9(*v).to_bits();
                match counts.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((key, 1)),
                }
            }
        }
        Kept {
            model,
            humans: human_values.len(),
            shift,
            sum,
            sum_sq,
            counts,
        }
    }

    /// `value`'s alignment with the humans other than one whose value is `own`; `None` when
    /// there is no other.
    fn align_without(&self, value: f64, own: f64, alignment: Alignment) -> Option<f64> {
        let n = self.humans.checked_sub(1).filter(|&n| n > 0)? as f64;
        Some(match alignment {
            Alignment::Accuracy => {
                let key = round9(value).to_bits();
                let equal = self
                    .counts
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map_or(0, |(_, c)| *c);
                let own_equal = usize::from(round9(own).to_bits() == key);
                (equal - own_equal) as f64 / n
            }
            Alignment::NegativeRmse => {
                // Σ over the others of (value − o)², about the shift.
                let (a, b) = (value - self.shift, own - self.shift);
                let sum = self.sum - b;
                let sum_sq = self.sum_sq - b * b;
                let squares = (n * a * a - 2.0 * a * sum + sum_sq).max(0.0);
                -(squares / n).sqrt()
            }
        })
    }
}

/// The alt-test of the rater `llm` against `humans` (indices into `names`), over `items` (each
/// item's ratings, sparse). Time and memory follow the ratings: each item's sums are formed
/// once, and each human's comparison on an item reads them less its own value.
pub fn alt_test(
    names: &[String],
    items: &[Vec<(usize, f64)>],
    llm: usize,
    humans: &[usize],
    s: &Settings,
) -> Result<AltTest, AltTestError> {
    if humans.len() < 2 {
        return Err(AltTestError::TooFewHumans(humans.len()));
    }
    // Each rater's place among the humans, if it is one.
    let mut human_at: Vec<Option<usize>> = vec![None; names.len()];
    for (i, &h) in humans.iter().enumerate() {
        if let Some(slot) = human_at.get_mut(h) {
            *slot = Some(i);
        }
    }
    // The kept items, and each human's ratings of them.
    let mut kept: Vec<Kept> = Vec::new();
    let mut rated_by: Vec<Vec<(u32, f64)>> = vec![Vec::new(); humans.len()];
    let mut values: Vec<f64> = Vec::new();
    for item in items {
        let Some(&(_, model)) = item.iter().find(|(r, _)| *r == llm) else {
            continue;
        };
        values.clear();
        values.extend(
            item.iter()
                .filter(|(r, _)| human_at.get(*r).copied().flatten().is_some())
                .map(|(_, v)| *v),
        );
        if values.len() < s.min_humans_per_item.max(1) {
            continue;
        }
        let at = kept.len() as u32;
        for &(r, v) in item {
            if let Some(Some(h)) = human_at.get(r) {
                rated_by[*h].push((at, v));
            }
        }
        kept.push(Kept::new(model, &values, s.alignment));
    }
    if kept.is_empty() {
        return Err(AltTestError::NoItems {
            llm: names[llm].clone(),
            min: s.min_humans_per_item,
        });
    }
    let mut tested = Vec::new();
    let mut skipped = Vec::new();
    for (i, &h) in humans.iter().enumerate() {
        let mine = &rated_by[i];
        if mine.len() < s.min_items_per_human {
            skipped.push(names[h].clone());
            continue;
        }
        let (mut w_f, mut w_h, mut d) = (Vec::new(), Vec::new(), Vec::new());
        for &(at, human) in mine {
            let item = &kept[at as usize];
            let (Some(llm_alignment), Some(own)) = (
                item.align_without(item.model, human, s.alignment),
                item.align_without(human, human, s.alignment),
            ) else {
                continue;
            };
            // Alignments equal in exact arithmetic tie, whatever the order of operations.
            let (s_llm, s_h) = (round9(llm_alignment), round9(own));
            let (f, hh) = (
                f64::from(u8::from(s_llm >= s_h)),
                f64::from(u8::from(s_h >= s_llm)),
            );
            w_f.push(f);
            w_h.push(hh);
            d.push(hh - f);
        }
        if d.is_empty() {
            skipped.push(names[h].clone());
            continue;
        }
        tested.push(HumanResult {
            human: names[h].clone(),
            items: d.len(),
            rho_llm: mean(&w_f),
            rho_human: mean(&w_h),
            p_value: t_test_less(&d, s.epsilon),
            rejected: false,
        });
    }
    if tested.is_empty() {
        return Err(AltTestError::NoHumans {
            items: kept.len(),
            min: s.min_items_per_human,
        });
    }
    let p: Vec<f64> = tested.iter().map(|h| h.p_value).collect();
    for (h, r) in tested.iter_mut().zip(benjamini_yekutieli(&p, s.q)) {
        h.rejected = r;
    }
    let winning_rate = tested.iter().filter(|h| h.rejected).count() as f64 / tested.len() as f64;
    let rho_llm: Vec<f64> = tested.iter().map(|h| h.rho_llm).collect();
    let advantage_probability = mean(&rho_llm);
    Ok(AltTest {
        llm: names[llm].clone(),
        passed: winning_rate >= 0.5,
        winning_rate,
        advantage_probability,
        epsilon: s.epsilon,
        q: s.q,
        items: kept.len(),
        humans: tested,
        skipped_humans: skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::assert_close as close;

    #[test]
    fn alignment_by_accuracy_and_by_negative_rmse() {
        close(align(1.0, &[1.0, 0.0, 1.0, 2.0], Alignment::Accuracy), 0.5);
        close(align(3.0, &[1.0, 2.0], Alignment::Accuracy), 0.0);
        // Equal at 9 decimals counts as equal.
        close(align(0.1 + 0.2, &[0.3], Alignment::Accuracy), 1.0);
        // -sqrt(((2-1)² + (2-4)²)/2) = -sqrt(2.5)
        close(
            align(2.0, &[1.0, 4.0], Alignment::NegativeRmse),
            -(2.5f64).sqrt(),
        );
        close(align(1.0, &[1.0], Alignment::NegativeRmse), 0.0);
    }

    #[test]
    fn the_one_sided_t_test_by_hand_and_when_the_differences_do_not_vary() {
        // n = 2, d = [0, 1]: mean 0.5, sd 1/√2, t = (0.5 − 0.2)/(0.5) = 0.6 with 1 df, whose
        // CDF is ½ + atan(t)/π.
        close(
            t_test_less(&[0.0, 1.0], 0.2),
            0.5 + 0.6f64.atan() / std::f64::consts::PI,
        );
        // A negative mean is evidence for H₁: p below ½.
        assert!(t_test_less(&[-1.0, 0.0, -1.0, 0.0], 0.2) < 0.05);
        assert_eq!(t_test_less(&[0.0, 0.0, 0.0], 0.2), 0.0);
        assert_eq!(t_test_less(&[1.0, 1.0], 0.2), 1.0);
        assert_eq!(t_test_less(&[0.2, 0.2], 0.2), 1.0); // mean = ε is not below it
        assert_eq!(t_test_less(&[-1.0], 0.2), 0.0); // one difference: no spread
    }

    #[test]
    fn benjamini_yekutieli_with_ties_and_with_one_test() {
        // m = 1: H₁ = 1, reject iff p ≤ q.
        assert_eq!(benjamini_yekutieli(&[0.05], 0.05), [true]);
        assert_eq!(benjamini_yekutieli(&[0.050001], 0.05), [false]);
        // m = 3, H₃ = 11/6: thresholds q/H₃ · k/3 = 0.00909, 0.01818, 0.02727. The smallest
        // alone is above the first, but both 0.01s are under the second: both are rejected.
        assert_eq!(
            benjamini_yekutieli(&[0.5, 0.01, 0.01], 0.05),
            [false, true, true]
        );
        assert_eq!(
            benjamini_yekutieli(&[0.02, 0.5, 0.5], 0.05),
            [false, false, false]
        );
        assert!(benjamini_yekutieli(&[], 0.05).is_empty());
    }

    /// Raters: 0 the model, 1–3 humans.
    /// Dense rows (a value or none per rater) as the sparse ratings the test reads.
    fn sparse(dense: &[Vec<Option<f64>>]) -> Vec<Vec<(usize, f64)>> {
        dense
            .iter()
            .map(|row| {
                row.iter()
                    .enumerate()
                    .filter_map(|(r, v)| v.map(|v| (r, v)))
                    .collect()
            })
            .collect()
    }

    // The leave-one-out alignment from an item's sums is the alignment with the other humans'
    // values listed out, for both scorings, on values far from 0 (where squares would cancel
    // without the shift) and near it.
    #[test]
    fn alignment_without_one_human_from_the_items_sums_is_the_direct_one() {
        let mut rng = crate::stats::rng::Rng::for_replicate(7, 0);
        for (base, spread) in [(0.0, 1.0), (1e6, 3.0), (0.5, 1e-3)] {
            for _ in 0..200 {
                let n = 2 + (rng.next_u64() % 6) as usize;
                let humans: Vec<f64> = (0..n)
                    .map(|_| base + spread * ((rng.next_u64() % 5) as f64) / 4.0)
                    .collect();
                let model = base + spread * ((rng.next_u64() % 5) as f64) / 4.0;
                for alignment in [Alignment::Accuracy, Alignment::NegativeRmse] {
                    let kept = Kept::new(model, &humans, alignment);
                    for (i, &own) in humans.iter().enumerate() {
                        let others: Vec<f64> = humans
                            .iter()
                            .enumerate()
                            .filter(|(j, _)| *j != i)
                            .map(|(_, v)| *v)
                            .collect();
                        for value in [model, own] {
                            let direct = align(value, &others, alignment);
                            let fast = kept.align_without(value, own, alignment).unwrap();
                            assert_eq!(
                                round9(direct),
                                round9(fast),
                                "{alignment:?} {value} {humans:?}"
                            );
                        }
                    }
                }
            }
        }
        // One human alone has no others.
        let kept = Kept::new(1.0, &[1.0], Alignment::Accuracy);
        assert_eq!(kept.align_without(1.0, 1.0, Alignment::Accuracy), None);
    }

    // Regression (hostile round 3, 13): a crowd of annotators who each rated three items built a
    // dense items × raters matrix (2.7 GB, then an abort). Sparse, it is the ratings.
    #[test]
    fn a_crowd_of_annotators_costs_its_ratings_not_a_matrix() {
        let annotators = 100_000;
        let mut names = vec!["llm".to_string()];
        names.extend((0..annotators).map(|a| format!("a{a}")));
        let units = 2_000;
        let mut items: Vec<Vec<(usize, f64)>> =
            (0..units).map(|u| vec![(0, (u % 2) as f64)]).collect();
        for a in 0..annotators {
            for k in 0..3 {
                let u = (a * 3 + k) % units;
                items[u].push((a + 1, f64::from((u + a) as u32 % 2)));
            }
        }
        let humans: Vec<usize> = (1..=annotators).collect();
        let s = Settings {
            min_items_per_human: 3,
            ..Settings::default()
        };
        let r = alt_test(&names, &items, 0, &humans, &s).unwrap();
        assert_eq!(r.items, units);
        assert_eq!(r.humans.len(), annotators);
    }

    fn names() -> Vec<String> {
        ["llm", "h1", "h2", "h3"].map(String::from).to_vec()
    }

    /// The test of rater 0 (the model) against 1–3 (humans), each human kept with at least
    /// `min_items` items.
    fn model_vs_three(items: &[Vec<Option<f64>>], min_items: usize) -> AltTest {
        let s = Settings {
            min_items_per_human: min_items,
            ..Settings::default()
        };
        alt_test(&names(), &sparse(items), 0, &[1, 2, 3], &s).unwrap()
    }

    #[test]
    fn a_model_that_agrees_with_the_majority_beats_every_human_by_hand() {
        // Ten nominal items. h1, h2 and the model always say 1; h3 says 1 on items 0–4 and 0 on
        // 5–9. Against h1 (others h2, h3): the model and h1 both say 1, so they tie (W_f = W_h
        // = 1, d = 0) on every item: mean(d) = 0 with no spread, p = 0. The same against h2.
        // Against h3 (others h1, h2, both 1): on 0–4 a tie, on 5–9 the model aligns 1 against
        // h3's 0: W_f = 1, W_h = 0, d = −1. p = 0 as well (d ≤ 0 everywhere, mean −0.5 < ε,
        // with spread: t very negative).
        let items: Vec<Vec<Option<f64>>> = (0..10)
            .map(|i| {
                let h3 = if i < 5 { 1.0 } else { 0.0 };
                vec![Some(1.0), Some(1.0), Some(1.0), Some(h3)]
            })
            .collect();
        let r = model_vs_three(&items, 5);
        assert_eq!(r.items, 10);
        assert_eq!(r.humans.len(), 3);
        assert_eq!(r.humans[0].p_value, 0.0);
        assert_eq!(r.humans[0].rho_llm, 1.0);
        assert_eq!(r.humans[0].rho_human, 1.0);
        // d = five 0s and five −1s: mean −0.5, sd 0.527, t = −0.7 / 0.1667 = −4.2 with 9 df.
        close(
            r.humans[2].p_value,
            StudentsT::new(0.0, 1.0, 9.0).unwrap().cdf(-4.2),
        );
        assert!(r.humans[2].p_value < 0.01);
        assert_eq!(r.humans[2].rho_human, 0.5);
        assert!(r.humans.iter().all(|h| h.rejected));
        assert_eq!(r.winning_rate, 1.0);
        assert!(r.passed);
        close(r.advantage_probability, 1.0);
    }

    #[test]
    fn a_model_that_disagrees_fails_and_the_pass_rule_is_at_half() {
        // The model always says 0 where every human says 1: each human aligns perfectly and the
        // model never does: d = 1 everywhere, mean 1 ≥ ε, p = 1, nobody rejected.
        let items: Vec<Vec<Option<f64>>> = (0..6)
            .map(|_| vec![Some(0.0), Some(1.0), Some(1.0), Some(1.0)])
            .collect();
        let r = model_vs_three(&items, 3);
        assert_eq!(r.winning_rate, 0.0);
        assert!(!r.passed);
        close(r.advantage_probability, 0.0);
        // Two humans tested, the model beating exactly one of them: ω = 0.5 passes. Ten items
        // X where h1 says 1, h2 and the model 0; two items Y where h1 and h2 say 1, the model
        // 0; h3 rates nothing and is skipped. Against h1 (other: h2): on X the model aligns 1
        // and h1 0 (d = −1), on Y the model 0 and h1 1 (d = +1): mean −2/3, sd 0.778, t −3.86
        // with 11 df, p ≈ 0.0013. Against h2 (other: h1): on X both align 0 (d = 0), on Y the
        // model 0 and h2 1 (d = +1): mean 1/6 < ε but sd 0.389, t −0.297, p ≈ 0.39. BY with
        // m = 2 (H₂ = 1.5): thresholds 0.0167 and 0.0333: h1 is rejected, h2 is not.
        let items: Vec<Vec<Option<f64>>> = (0..12)
            .map(|i| {
                let h2 = if i < 10 { 0.0 } else { 1.0 };
                vec![Some(0.0), Some(1.0), Some(h2), None]
            })
            .collect();
        let s = Settings {
            min_items_per_human: 4,
            ..Settings::default()
        };
        let r = alt_test(&names(), &sparse(&items), 0, &[1, 2, 3], &s).unwrap();
        assert_eq!(r.skipped_humans, ["h3"]);
        assert_eq!(r.humans.len(), 2);
        let by = |n: &str| r.humans.iter().find(|h| h.human == n).unwrap();
        let t = |d: &[f64]| {
            let n = d.len() as f64;
            let m = d.iter().sum::<f64>() / n;
            let sd = (d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            StudentsT::new(0.0, 1.0, n - 1.0)
                .unwrap()
                .cdf((m - 0.2) / (sd / n.sqrt()))
        };
        let mut d1 = vec![-1.0; 10];
        d1.extend([1.0, 1.0]);
        let mut d2 = vec![0.0; 10];
        d2.extend([1.0, 1.0]);
        close(by("h1").p_value, t(&d1));
        close(by("h2").p_value, t(&d2));
        assert!(by("h1").p_value < 0.0167 && by("h2").p_value > 0.0333);
        assert!(by("h1").rejected, "{:?}", by("h1"));
        assert!(!by("h2").rejected, "{:?}", by("h2"));
        close(by("h1").rho_llm, 10.0 / 12.0);
        close(by("h2").rho_llm, 10.0 / 12.0);
        assert_eq!(r.winning_rate, 0.5);
        assert!(r.passed, "the pass rule is ω ≥ 0.5");
    }

    #[test]
    fn what_cannot_be_tested_is_said() {
        let items = vec![vec![Some(1.0), Some(1.0), None, None]];
        let s = Settings::default();
        assert_eq!(
            alt_test(&names(), &sparse(&items), 0, &[1], &s).unwrap_err(),
            AltTestError::TooFewHumans(1)
        );
        assert!(matches!(
            alt_test(&names(), &sparse(&items), 0, &[1, 2, 3], &s).unwrap_err(),
            AltTestError::NoItems { .. }
        ));
        let items = vec![vec![Some(1.0), Some(1.0), Some(1.0), None]];
        assert!(matches!(
            alt_test(&names(), &sparse(&items), 0, &[1, 2, 3], &s).unwrap_err(),
            AltTestError::NoHumans { items: 1, min: 30 }
        ));
    }
}
