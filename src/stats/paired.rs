//! A/B comparisons over paired units (targets, queries): the mean difference with a 95% paired
//! bootstrap interval, the two-sided test of that mean (exact McNemar on 0/1 outcomes, else the
//! paired t-test), and the Wilson interval for rates (docs/guides/ab-rubric-change.md).

use serde::{Deserialize, Serialize};

use super::bootstrap::{parallel, Method, Plan};
use super::power::mde_for;
use super::quantile::percentile;
use super::test::{p_value, sd, Test};

/// treatment − baseline over the units measured in both arms.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PairedDelta {
    /// Mean over the paired units.
    pub baseline: f64,
    pub treatment: f64,
    pub delta: f64,
    /// 95% percentile interval of the mean difference, resampling units with replacement;
    /// `None` without replicates.
    pub ci: Option<[f64; 2]>,
    /// Two-sided test of the mean difference (`test`); null with fewer than 2 pairs (the key is
    /// always there), 1 when every difference is 0.
    #[serialize_always]
    pub p_value: Option<f64>,
    /// Which test `p_value` is of.
    #[serde(default)]
    pub test: Test,
    /// Minimum detectable effect (docs/guides/ab-rubric-change.md): the smallest true mean
    /// difference these pairs would detect with 80% power at two-sided 0.05 by `test`; null
    /// with fewer than 2 pairs, 0 when the differences do not vary, null for a figure that is
    /// not a mean of per-unit differences (the key is always there).
    #[serde(default)]
    #[serialize_always]
    pub mde: Option<f64>,
    /// The sample standard deviation of the per-unit differences (n − 1): what "needs ≈ N"
    /// and `plan` size a study from.
    #[serde(default)]
    pub sd: Option<f64>,
    /// McNemar's test: the units whose outcome differs between the arms. With n of them its p
    /// cannot go below 2·0.5ⁿ.
    #[serde(default)]
    pub discordant: Option<usize>,
    pub pairs: usize,
}

/// Compares paired values; `baseline[i]` and `treatment[i]` belong to the same unit. The
/// bootstrap's replicate `i` is seeded by `(seed, i)`.
pub fn paired_delta(
    baseline: &[f64],
    treatment: &[f64],
    replicates: usize,
    seed: u64,
    threads: usize,
) -> Option<PairedDelta> {
    let n = baseline.len().min(treatment.len());
    if n == 0 {
        return None;
    }
    let diffs: Vec<f64> = (0..n).map(|i| treatment[i] - baseline[i]).collect();
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let plan = Plan {
        method: Method::Units,
        replicates,
        seed,
        threads,
    };
    let mut draws: Vec<f64> = parallel(
        plan,
        || (),
        |_, rng| {
            (0..n)
                .map(|_| diffs[rng.below(n as u64) as usize])
                .sum::<f64>()
                / n as f64
        },
    );
    draws.sort_unstable_by(f64::total_cmp);
    let ci = match (percentile(&draws, 0.025), percentile(&draws, 0.975)) {
        (Some(lo), Some(hi)) => Some([lo, hi]),
        _ => None,
    };
    let test = Test::of(&baseline[..n], &treatment[..n]);
    Some(PairedDelta {
        baseline: mean(&baseline[..n]),
        treatment: mean(&treatment[..n]),
        delta: mean(&diffs),
        ci,
        p_value: p_value(test, &diffs),
        test,
        mde: mde_for(test, &diffs),
        sd: sd(&diffs),
        discordant: (test == Test::Mcnemar).then(|| diffs.iter().filter(|&&d| d != 0.0).count()),
        pairs: n,
    })
}

/// Φ⁻¹(0.975): the 95% intervals' normal quantile.
const Z95: f64 = 1.959_963_984_540_054;

/// 95% Wilson score interval for `successes` out of `n`; `None` when n = 0.
pub fn wilson(successes: f64, n: f64) -> Option<[f64; 2]> {
    wilson_at(successes, n, Z95)
}

/// Wilson's score interval with normal quantile `z` (1.96 for 95%).
fn wilson_at(successes: f64, n: f64, z: f64) -> Option<[f64; 2]> {
    if n <= 0.0 {
        return None;
    }
    let p = successes / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some([(centre - half).max(0.0), (centre + half).min(1.0)])
}

/// Newcombe's square-and-add 95% interval for treatment − baseline of paired 0/1 outcomes
/// (Newcombe 1998, Statistics in Medicine 17:2635, method 10), from the four cells: units
/// passing in both arms, in the treatment only, in the baseline only, and in neither. Each arm's
/// Wilson interval is combined with their correlation φ (continuity-corrected as Newcombe does:
/// a positive cross-product up to n/2 counts as none), so an A/B where no unit changed still has
/// an interval as wide as its units allow. `None` with no units.
pub fn newcombe_paired(
    both: f64,
    treatment_only: f64,
    baseline_only: f64,
    neither: f64,
) -> Option<[f64; 2]> {
    newcombe_paired_at([both, treatment_only, baseline_only, neither], Z95)
}

/// Newcombe's paired interval with normal quantile `z`, from the four cells in
/// [`newcombe_paired`]'s order.
pub fn newcombe_paired_at(
    [both, treatment_only, baseline_only, neither]: [f64; 4],
    z: f64,
) -> Option<[f64; 2]> {
    let n = both + treatment_only + baseline_only + neither;
    if n <= 0.0 {
        return None;
    }
    let (t_pass, t_fail) = (both + treatment_only, baseline_only + neither);
    let (b_pass, b_fail) = (both + baseline_only, treatment_only + neither);
    let (pt, pb) = (t_pass / n, b_pass / n);
    let [lt, ut] = wilson_at(t_pass, n, z)?;
    let [lb, ub] = wilson_at(b_pass, n, z)?;
    let phi = if t_pass == 0.0 || t_fail == 0.0 || b_pass == 0.0 || b_fail == 0.0 {
        0.0
    } else {
        let a = both * neither - treatment_only * baseline_only;
        let corrected = if a > n / 2.0 {
            a - n / 2.0
        } else if a >= 0.0 {
            0.0
        } else {
            a
        };
        corrected / (t_pass * t_fail * b_pass * b_fail).sqrt()
    };
    let delta = pt - pb;
    let spread = |x: f64, y: f64| (x * x + y * y - 2.0 * phi * x * y).max(0.0).sqrt();
    Some([
        delta - spread(pt - lt, ub - pb),
        delta + spread(pb - lb, ut - pt),
    ])
}

#[cfg(test)]
mod tests {

    #[test]
    fn newcombe_matches_the_published_paired_intervals() {
        // Cavo et al. 2012 as worked in Fagerland, Lydersen & Laake, "Statistical Analysis of
        // Contingency Tables", ch. 8 (the R package contingencytables' committed test): 59
        // responding in both, 6 after only, 16 before only, 80 in neither: −0.0621
        // (95% CI −0.1186 to −0.0046).
        let [lo, hi] = newcombe_paired(59.0, 6.0, 16.0, 80.0).unwrap();
        assert!(
            (lo - -0.1186).abs() < 5e-5 && (hi - -0.0046).abs() < 5e-5,
            "{lo} {hi}"
        );
        // By hand, no unit changed: 49 of 50 pass in both arms. Wilson for 49/50 is
        // [0.895046, 0.996461]; φ = (49 · 1 − 25) / √(49 · 1 · 49 · 1) = 24/49; the lower bound
        // is −√(0.084954² + 0.016461² − 2 · (24/49) · 0.084954 · 0.016461) = −0.078220, and the
        // upper bound mirrors it.
        let [lo, hi] = newcombe_paired(49.0, 0.0, 0.0, 1.0).unwrap();
        assert!(
            (lo - -0.078_220).abs() < 1e-6 && (hi - 0.078_220).abs() < 1e-6,
            "{lo} {hi}"
        );
        assert_eq!(newcombe_paired(0.0, 0.0, 0.0, 0.0), None);
    }
    use super::*;

    #[test]
    fn wilson_reference_values() {
        // 8 of 10, by hand: centre (0.8 + z²/20)/(1 + z²/10) = 0.7167, half-width 0.2266.
        let [lo, hi] = wilson(8.0, 10.0).unwrap();
        assert!(
            (lo - 0.4902).abs() < 1e-4 && (hi - 0.9433).abs() < 1e-4,
            "{lo} {hi}"
        );
        let [lo, hi] = wilson(0.0, 10.0).unwrap();
        assert_eq!(lo, 0.0);
        assert!((hi - 0.2775).abs() < 1e-4);
        assert_eq!(wilson(0.0, 0.0), None);
    }

    #[test]
    fn paired_delta_is_seeded_and_brackets_the_mean() {
        let b = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let t = [2.0, 2.5, 4.0, 4.0, 7.0, 6.5];
        let a = paired_delta(&b, &t, 500, 9, 1).unwrap();
        let c = paired_delta(&b, &t, 500, 9, 2).unwrap();
        assert_eq!(a, c);
        let [lo, hi] = a.ci.unwrap();
        assert!(lo <= a.delta && a.delta <= hi);
        assert!((a.delta - 5.0 / 6.0).abs() < 1e-12); // diffs 1, .5, 1, 0, 2, .5
        assert_eq!(a.pairs, 6);
        assert_eq!(a.test, Test::PairedT);
        // Differences 1, .5, 1, 0, 2, .5: mean 5/6, squared deviations 1/36 + 4/36 + 1/36 +
        // 25/36 + 49/36 + 4/36 = 84/36, sd = √(84/180) = 0.683130; t = (5/6)/(0.683130/√6)
        // = 2.988072 on 5 df: two-sided p = 0.030515 (the regularized incomplete beta, by
        // mpmath: 2 · ½ · I₅/(5+t²)(5/2, ½)).
        let p = a.p_value.unwrap();
        assert!((p - 0.030_515).abs() < 1e-6, "{p}");
        assert_eq!(paired_delta(&[], &[], 10, 1, 1), None);
        // One pair: no p-value, no mde.
        let one = paired_delta(&[1.0], &[2.0], 10, 1, 1).unwrap();
        assert_eq!((one.p_value, one.mde), (None, None));
    }

    // McNemar's exact test by hand: only the discordant units count.
    #[test]
    fn mcnemar_by_hand() {
        // 10 units: 6 concordant, 4 discordant all to the treatment: 2 · 0.5⁴ = 0.125.
        let b = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let t = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        let d = paired_delta(&b, &t, 0, 1, 1).unwrap();
        assert_eq!(d.test, Test::Mcnemar);
        assert_eq!(d.discordant, Some(4));
        assert!((d.p_value.unwrap() - 0.125).abs() < 1e-15);
        // 8 discordant, 7 to one side: 2 · (1 + 8)/256 = 0.0703125.
        let diffs = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 0.0, 0.0];
        assert!((crate::stats::test::mcnemar(&diffs) - 0.070_312_5).abs() < 1e-15);
        // Values other than 0 and 1 are not McNemar's.
        assert_eq!(Test::of(&[0.0, 2.0], &[1.0, 1.0]), Test::PairedT);
        assert_eq!(Test::of(&[0.0, 1.0], &[1.0, 0.5]), Test::PairedT);
    }
}
