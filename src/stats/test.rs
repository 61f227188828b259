//! The two-sided tests of a mean difference over paired units, and the moments they read:
//! exact McNemar on 0/1 outcomes (the sign test of the discordant units), the paired t-test
//! otherwise (docs/guides/ab-rubric-change.md). [`Test`] names which one a delta's p is of; the
//! deltas (`paired`) and the power and sizes (`power`) both read it from here.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The test a delta's p-value comes from: always one of its mean difference, the quantity the
/// delta and its interval describe (a test of the median rejects on skewed differences while
/// the mean does not move).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Every unit gives one 0/1 outcome per arm: exact McNemar, the binomial (p = ½) on the
    /// discordant units.
    Mcnemar,
    /// Anything else: the paired t-test on the per-unit differences.
    #[default]
    PairedT,
    /// A figure of the whole set of units (ECE), with no per-unit difference: the share of
    /// bootstrap replicates on the other side of 0, doubled.
    Bootstrap,
    /// An estimate with its standard error (the lift in human units, PPI++): the two-sided
    /// t-test on the estimate's degrees of freedom (labelled pairs − 2 when λ is fitted on
    /// them, − 1 when it is not). Runs stored before it was a t-test name it `z-test`.
    #[serde(rename = "ppi-t", alias = "z-test")]
    PpiT,
}

impl Test {
    /// The test of the mean difference of these paired values: McNemar's when every value of
    /// both arms is 0 or 1, else the paired t-test.
    pub fn of(baseline: &[f64], treatment: &[f64]) -> Test {
        let binary = |x: &[f64]| x.iter().all(|&v| v == 0.0 || v == 1.0);
        if !baseline.is_empty() && binary(baseline) && binary(treatment) {
            Test::Mcnemar
        } else {
            Test::PairedT
        }
    }

    /// How a sentence names it.
    pub fn words(self) -> &'static str {
        match self {
            Test::Mcnemar => "McNemar's exact test",
            Test::PairedT => "the paired t-test",
            Test::Bootstrap => "the bootstrap",
            Test::PpiT => "the t-test of the PPI++ estimate",
        }
    }
}

/// The two-sided p of the mean difference of `diffs` by `test`: null with fewer than 2, 1 when
/// every difference is 0. (The bootstrap's p is the caller's: it has no per-unit differences.)
pub fn p_value(test: Test, diffs: &[f64]) -> Option<f64> {
    if diffs.len() < 2 {
        return None;
    }
    match test {
        Test::Mcnemar => Some(mcnemar(diffs)),
        Test::PairedT | Test::Bootstrap | Test::PpiT => t_test(diffs),
    }
}

/// Exact McNemar on paired 0/1 outcomes, given their differences (−1, 0, 1): with k of the n
/// discordant units on the rarer side, p = min(1, 2 · P(X ≤ k)) for X ~ Binomial(n, ½); the
/// concordant units take no part. 1 when no unit is discordant.
pub fn mcnemar(diffs: &[f64]) -> f64 {
    sign_test(diffs)
}

/// The two-sided paired t-test of mean(diffs) = 0: t = mean / (sd / √n), sd with n − 1,
/// Student's t with n − 1 degrees of freedom (statrs). Null with fewer than 2 differences; 1
/// when every one is 0. When they are all one same non-zero value the t statistic is
/// unbounded, and the test is the exact sign test of that one direction (2 · 0.5ⁿ): n equal
/// differences are evidence only as far as their count goes.
pub fn t_test(diffs: &[f64]) -> Option<f64> {
    let n = diffs.len();
    let s = sd(diffs)?;
    let m = diffs.iter().sum::<f64>() / n as f64;
    if s == 0.0 {
        return Some(if m == 0.0 { 1.0 } else { sign_test(diffs) });
    }
    let t = m / (s / (n as f64).sqrt());
    let dist = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
    Some((2.0 * dist.cdf(-t.abs())).min(1.0))
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

/// The sample standard deviation of the differences (n − 1 in the denominator): `None` with
/// fewer than 2, exactly 0 when they are all equal.
pub fn sd(diffs: &[f64]) -> Option<f64> {
    let n = diffs.len();
    if n < 2 {
        return None;
    }
    if diffs.iter().all(|&d| d == diffs[0]) {
        return Some(0.0);
    }
    let mean = mean(diffs);
    let ss: f64 = diffs.iter().map(|d| (d - mean).powi(2)).sum();
    Some((ss / (n - 1) as f64).sqrt())
}

/// The arithmetic mean.
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
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

    // The paired t-test by hand, against published values of Student's t.
    #[test]
    fn the_paired_t_test_by_hand() {
        // d = 1, 2, 3, 4: mean 2.5, sd √(5/3) = 1.290994, t = 2.5/(1.290994/2) = 3.872983 on 3
        // df; two-sided p = 0.030466 (the regularized incomplete beta, by mpmath).
        let p = t_test(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((p - 0.030_466_3).abs() < 1e-6, "{p}");
        // Symmetric about 0: t = 0, p = 1.
        assert!((t_test(&[-1.0, 1.0, -2.0, 2.0]).unwrap() - 1.0).abs() < 1e-12);
        // d = 0.2, −0.1, 0.4, 0.3, −0.2: mean 0.12, sd 0.258844, t = 1.036642 on 4 df:
        // p = 0.358456 (mpmath).
        let p = t_test(&[0.2, -0.1, 0.4, 0.3, -0.2]).unwrap();
        assert!((p - 0.358_456).abs() < 1e-6, "{p}");
        // Every difference 0: p = 1; one difference: none; all one same non-zero value: the
        // exact sign test of that direction.
        assert_eq!(t_test(&[0.0, 0.0, 0.0]), Some(1.0));
        assert_eq!(t_test(&[0.3]), None);
        assert_eq!(t_test(&[0.25, 0.25]), Some(0.5));
        assert!((t_test(&[0.25; 6]).unwrap() - 0.031_25).abs() < 1e-15);
    }
}
