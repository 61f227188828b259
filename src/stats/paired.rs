//! A/B comparisons over paired units (targets, queries): the mean difference with a 95% paired
//! bootstrap interval, the exact two-sided sign test, and the Wilson interval for rates
//! (docs/guides/ab-rubric-change.md).

use serde::{Deserialize, Serialize};

use super::bootstrap::{parallel, Method, Plan};
use super::power::mde;
use super::quantile::percentile;

/// treatment − baseline over the units measured in both arms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PairedDelta {
    /// Mean over the paired units.
    pub baseline: f64,
    pub treatment: f64,
    pub delta: f64,
    /// 95% percentile interval of the mean difference, resampling units with replacement;
    /// `None` without replicates.
    pub ci: Option<[f64; 2]>,
    /// Exact two-sided sign test over the non-zero differences.
    pub p_value: f64,
    /// Minimum detectable effect (docs/guides/ab-rubric-change.md): the smallest true mean difference these pairs
    /// would detect with 80% power at two-sided 0.05; null with fewer than 2 pairs, 0 when the
    /// differences do not vary, null for a figure that is not a mean of per-unit differences.
    #[serde(default)]
    pub mde: Option<f64>,
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
    Some(PairedDelta {
        baseline: mean(&baseline[..n]),
        treatment: mean(&treatment[..n]),
        delta: mean(&diffs),
        ci,
        p_value: sign_test(&diffs),
        mde: mde(&diffs),
        pairs: n,
    })
}

/// Exact two-sided sign test: with k positive among the n non-zero differences,
/// p = min(1, 2 · P(X ≤ min(k, n − k))) for X ~ Binomial(n, ½). p = 1 when every difference is 0.
pub fn sign_test(diffs: &[f64]) -> f64 {
    let positive = diffs.iter().filter(|&&d| d > 0.0).count();
    let negative = diffs.iter().filter(|&&d| d < 0.0).count();
    let n = positive + negative;
    if n == 0 {
        return 1.0;
    }
    let k = positive.min(negative);
    // Σ_{i ≤ k} C(n, i) / 2ⁿ in log space, so that large n neither overflows nor underflows.
    let ln_half_n = n as f64 * std::f64::consts::LN_2;
    let mut ln_c = 0.0; // ln C(n, 0)
    let mut tail = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_c - ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

/// 95% Wilson score interval for `successes` out of `n`; `None` when n = 0.
pub fn wilson(successes: f64, n: f64) -> Option<[f64; 2]> {
    if n <= 0.0 {
        return None;
    }
    const Z: f64 = 1.959_963_984_540_054; // Φ⁻¹(0.975)
    let p = successes / n;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some([(centre - half).max(0.0), (centre + half).min(1.0)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_test_matches_the_binomial() {
        // 5 of 5 positive: 2 · (1/32) = 0.0625.
        assert!((sign_test(&[1.0; 5]) - 0.0625).abs() < 1e-12);
        // 4 of 5: 2 · (1 + 5)/32 = 0.375. Zeros are left out.
        assert!((sign_test(&[1.0, 2.0, 3.0, 4.0, -1.0, 0.0]) - 0.375).abs() < 1e-12);
        // Balanced: capped at 1.
        assert_eq!(sign_test(&[1.0, -1.0]), 1.0);
        assert_eq!(sign_test(&[0.0, 0.0]), 1.0);
        // 10 of 10: 2/1024.
        assert!((sign_test(&[1.0; 10]) - 2.0 / 1024.0).abs() < 1e-15);
        // Large n stays finite and tiny.
        let p = sign_test(&[1.0; 2000]);
        assert!((0.0..1e-300).contains(&p));
    }

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
        assert!((a.p_value - 0.0625).abs() < 1e-12); // 5 positive, 1 zero: 2 · (1/2)⁵
        assert_eq!(paired_delta(&[], &[], 10, 1, 1), None);
    }
}
