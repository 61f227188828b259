//! Power (docs/guides/ab-rubric-change.md): the minimum detectable effect of a paired comparison, the number of pairs
//! a study needs to detect an effect by the normal approximation, and the seeded simulation
//! that checks that number by resampling the observed differences.

use statrs::distribution::{ContinuousCDF, Normal};

use super::bootstrap::{parallel, Method, Plan};

/// The two-sided level and the power every `mde` is reported at.
pub const ALPHA: f64 = 0.05;
pub const POWER: f64 = 0.8;

/// Simulated studies per `plan` check.
pub const STUDIES: usize = 10_000;

/// The largest study `plan` simulates: 10,000 studies of this many draws each.
pub const MAX_SIMULATED_PAIRS: u64 = 100_000;

/// Φ⁻¹(p), the standard normal quantile.
pub fn z(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// The standard normal quantile with `tail` of the distribution above it: z₁₋α/₂ is
/// `z_upper(α/2)`. A small tail is worked from the tail itself, −Φ⁻¹(tail): 1 − 5·10⁻¹⁷
/// rounds to 1 in binary floating point, whose quantile is infinite, and 1 − tail keeps only
/// ε/tail of the tail's precision. From 10⁻⁴ up that is better than 10⁻¹², and Φ⁻¹(1 − tail)
/// is kept there, so that every figure at the usual levels stays what it was to the last bit.
pub fn z_upper(tail: f64) -> f64 {
    if tail >= 1e-4 {
        z(1.0 - tail)
    } else {
        -z(tail)
    }
}

/// The largest count `needed` states: every whole number up to it is exact in a double.
pub const MAX_COUNT: u64 = 1 << 53;

/// Φ(x).
pub fn phi(x: f64) -> f64 {
    Normal::standard().cdf(x)
}

/// z₁₋α/₂ + z_power: the distance, in standard errors, between no effect and an effect
/// detected with that power at two-sided level α.
pub fn z_sum(alpha: f64, power: f64) -> f64 {
    z_upper(alpha / 2.0) + z(power)
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

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The smallest true mean difference these `diffs` would detect with 80% power at two-sided
/// 0.05: (z₀.₉₇₅ + z₀.₈) · sd / √n. `None` with fewer than 2 differences, 0 when they do not
/// vary.
pub fn mde(diffs: &[f64]) -> Option<f64> {
    let s = sd(diffs)?;
    Some(if s == 0.0 {
        0.0
    } else {
        z_sum(ALPHA, POWER) * s / (diffs.len() as f64).sqrt()
    })
}

/// Pairs needed to detect a true mean difference `effect` (≠ 0) with differences of standard
/// deviation `sd` (> 0), at two-sided `alpha` with `power`, by the normal approximation:
/// ⌈((z₁₋α/₂ + z_power) · sd / |effect|)²⌉, at least 2. `None` past [`MAX_COUNT`]: a count
/// no study can reach, and none a double states exactly.
pub fn needed(sd: f64, effect: f64, alpha: f64, power: f64) -> Option<u64> {
    let k = (z_sum(alpha, power) * sd / effect.abs()).powi(2).ceil();
    (k <= MAX_COUNT as f64).then(|| (k as u64).max(2))
}

/// [`needed`] for an observed `effect` at two-sided `alpha` and 80% power, from the minimum
/// detectable effect `mde` of `pairs` pairs (at 0.05 and 80%) instead of their standard
/// deviation: sd = mde · √pairs / (z₀.₉₇₅ + z₀.₈), so the count is
/// ⌈pairs · (mde / effect)² · ((z₁₋α/₂ + z₀.₈) / (z₀.₉₇₅ + z₀.₈))²⌉. At least 2; `None` past
/// [`MAX_COUNT`].
pub fn needed_at(mde: f64, pairs: usize, effect: f64, alpha: f64) -> Option<u64> {
    let scale = z_sum(alpha, POWER) / z_sum(ALPHA, POWER);
    let k = (pairs as f64 * (mde / effect * scale).powi(2)).ceil();
    (k <= MAX_COUNT as f64).then(|| (k as u64).max(2))
}

/// The power of a study of `pairs` pairs by the normal approximation: the chance that the mean
/// of `pairs` differences with true mean `effect` and standard deviation `sd` lands beyond
/// ±z₁₋α/₂ · sd / √pairs.
pub fn normal_power(sd: f64, effect: f64, pairs: u64, alpha: f64) -> f64 {
    let shift = effect.abs() * (pairs as f64).sqrt() / sd;
    let za = z_upper(alpha / 2.0);
    phi(shift - za) + phi(-shift - za)
}

/// The simulation that checks [`needed`]: `studies` studies of `pairs` pairs, each drawing
/// `pairs` differences with replacement from `diffs` shifted to mean `effect`, detecting the
/// effect when |their mean| ≥ z₁₋α/₂ · sd / √pairs (sd of the observed differences). The share
/// that detect it. Study `i` draws from its own generator, seeded by `(seed, i)`, so the share
/// does not depend on `threads`.
pub fn simulated_power(
    diffs: &[f64],
    effect: f64,
    pairs: u64,
    alpha: f64,
    studies: usize,
    seed: u64,
    threads: usize,
) -> f64 {
    let (Some(s), false) = (sd(diffs), diffs.is_empty() || pairs == 0) else {
        return f64::NAN;
    };
    let centre = mean(diffs);
    let shifted: Vec<f64> = diffs.iter().map(|d| d - centre + effect).collect();
    let threshold = z_upper(alpha / 2.0) * s / (pairs as f64).sqrt();
    let n = shifted.len() as u64;
    let plan = Plan {
        method: Method::Units,
        replicates: studies,
        seed,
        threads,
    };
    let detected: Vec<bool> = parallel(
        plan,
        || (),
        |_, rng| {
            let mut sum = 0.0;
            for _ in 0..pairs {
                sum += shifted[rng.below(n) as usize];
            }
            (sum / pairs as f64).abs() >= threshold
        },
    );
    detected.iter().filter(|&&d| d).count() as f64 / studies as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_the_published_ones() {
        assert!((z(0.975) - 1.959_963_984_540_054).abs() < 1e-12);
        assert!((z(0.8) - 0.841_621_233_572_914_3).abs() < 1e-12);
        assert!((z(0.9) - 1.281_551_565_544_600_5).abs() < 1e-12);
    }

    #[test]
    fn mde_by_hand() {
        // Differences 1, 2, 3, 4: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5,
        // sd = √(5/3) = 1.290994; mde = (1.959964 + 0.841621) · 1.290994 / 2 = 1.808415.
        let m = mde(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((m - 1.808_415).abs() < 1e-6, "{m}");
        // Fewer than two pairs: no mde. No variation: 0.
        assert_eq!(mde(&[]), None);
        assert_eq!(mde(&[0.3]), None);
        assert_eq!(mde(&[0.1, 0.1, 0.1]), Some(0.0));
        assert_eq!(sd(&[0.1, 0.1]), Some(0.0));
        // sd with n − 1: 2, 4 → mean 3, ss 2, sd √2.
        assert!((sd(&[2.0, 4.0]).unwrap() - 2f64.sqrt()).abs() < 1e-15);
    }

    #[test]
    fn needed_is_the_closed_form() {
        // sd 1, effect 0.5, α 0.05, power 0.8: (2.801585 / 0.5)² = 31.3957 → 32.
        assert_eq!(needed(1.0, 0.5, 0.05, 0.8), Some(32));
        // The sign of the effect does not matter.
        assert_eq!(needed(1.0, -0.5, 0.05, 0.8), Some(32));
        // power 0.9: (1.959964 + 1.281552)² · 4 = 42.03 → 43.
        assert_eq!(needed(1.0, 0.5, 0.05, 0.9), Some(43));
        // α 0.01, power 0.8: (2.575829 + 0.841621)² · 4 = 46.72 → 47.
        assert_eq!(needed(1.0, 0.5, 0.01, 0.8), Some(47));
        // A huge effect still needs 2 pairs.
        assert_eq!(needed(1.0, 100.0, 0.05, 0.8), Some(2));
        // The mde of n pairs is the effect n pairs are needed for (up to rounding up).
        let diffs = [0.3, -0.1, 0.8, 0.2, 0.5, -0.4, 0.9, 0.1];
        let m = mde(&diffs).unwrap();
        assert_eq!(
            needed(sd(&diffs).unwrap(), m * 1.000_001, 0.05, 0.8),
            Some(8)
        );
        // And the normal-approximation power at that size is the target.
        assert!((normal_power(sd(&diffs).unwrap(), m, 8, 0.05) - 0.8).abs() < 1e-3);
    }

    // Regression (issue 34): z was Φ⁻¹(1 − α/2), and 1 − 5·10⁻¹⁷ is 1 in a double, so
    // `--alpha 1e-16` planned for u64::MAX pairs. The quantiles below are Python's
    // statistics.NormalDist().inv_cdf at α/2, an implementation independent of statrs.
    #[test]
    fn tiny_levels_keep_their_quantile_and_unstatable_counts_are_none() {
        for (alpha, zq, k) in [
            (3e-16, 8.173_326_769_008_506, 326),
            (1e-16, 8.304_785_425_194_112, 335),
            (1e-300, 37.065_787_880_772_12, 5748),
        ] {
            assert!((z_upper(alpha / 2.0) - zq).abs() < 1e-9 * zq, "{alpha}");
            assert_eq!(needed(1.0, 0.5, alpha, 0.8), Some(k), "{alpha}");
            assert!(normal_power(1.0, 0.5, k, alpha) >= 0.8);
        }
        // An effect of 1e-300 needs about 10^600 pairs: not a count anyone can run or state.
        assert_eq!(needed(1.0, 1e-300, 0.05, 0.8), None);
        let big = needed(1.0, 1e-7, 0.05, 0.8).unwrap();
        assert!(
            (784_887_000_000_000..784_889_000_000_000).contains(&big),
            "{big}"
        );
    }

    // The decision's count from an MDE is plan's count from the standard deviation.
    #[test]
    fn needed_from_the_mde_is_needed_from_the_sd() {
        let diffs = [0.3, -0.1, 0.8, 0.2, 0.5, -0.4, 0.9, 0.1, 0.35];
        let (s, m) = (sd(&diffs).unwrap(), mde(&diffs).unwrap());
        for (effect, alpha) in [(0.07, 0.05), (-0.11, 0.05), (0.07, 0.025), (0.2, 0.01)] {
            assert_eq!(
                needed_at(m, diffs.len(), effect, alpha),
                needed(s, effect, alpha, POWER),
                "{effect} at {alpha}"
            );
        }
    }

    #[test]
    fn simulated_power_at_the_needed_size_is_the_target_power() {
        // A known distribution: 4,000 differences drawn from N(0, 1) by a seeded Box–Muller,
        // planned for an effect of 0.25 (needed = ⌈(2.801585 · sd / 0.25)²⌉ ≈ 126).
        let mut rng = crate::stats::rng::Rng::for_replicate(11, 0);
        let mut uniform = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let diffs: Vec<f64> = (0..4000)
            .map(|_| {
                let (u, v) = (uniform().max(1e-300), uniform());
                (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
            })
            .collect();
        let s = sd(&diffs).unwrap();
        let k = needed(s, 0.25, 0.05, 0.8).unwrap();
        assert!((110..=140).contains(&k), "{k}");
        let p = simulated_power(&diffs, 0.25, k, 0.05, STUDIES, 7, 2);
        assert!((p - 0.8).abs() < 0.02, "simulated power {p} at {k} pairs");
        // Half the pairs: clearly less power, as the normal approximation says.
        let half = simulated_power(&diffs, 0.25, k / 2, 0.05, STUDIES, 7, 2);
        let approx = normal_power(s, 0.25, k / 2, 0.05);
        assert!(
            (half - approx).abs() < 0.03 && half < 0.6,
            "{half} vs {approx}"
        );
        // No effect: the share detecting one is the level.
        let null = simulated_power(&diffs, 0.0, k, 0.05, STUDIES, 7, 2);
        assert!((null - 0.05).abs() < 0.015, "{null}");
    }

    #[test]
    fn simulation_is_seeded_and_independent_of_threads() {
        let diffs = [0.5, -0.2, 0.1, 0.9, 0.0, 0.3];
        let a = simulated_power(&diffs, 0.2, 20, 0.05, 2_000, 3, 1);
        let b = simulated_power(&diffs, 0.2, 20, 0.05, 2_000, 3, 2);
        assert_eq!(a, b);
        let c = simulated_power(&diffs, 0.2, 20, 0.05, 2_000, 4, 1);
        assert_ne!(a, c);
    }
}
