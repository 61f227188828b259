//! Power (docs/guides/ab-rubric-change.md): the minimum detectable effect of a paired
//! comparison, the number of pairs a study needs to detect an effect, and the seeded
//! simulation that checks that number, each **for the test the decision runs**
//! ([`Test`](super::test::Test)): the paired t-test's with Student's t quantiles, McNemar's
//! exactly (its power summed over the binomial counts of changed units, so small studies and
//! the test's floor are counted as they are).

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use super::bootstrap::{parallel, Method, Plan};
use super::test::{mean, sd, Test};

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

/// P(Z > x) for a standard normal Z, without the cancellation of 1 − Φ(x) far in the tail.
pub fn normal_upper_tail(x: f64) -> f64 {
    Normal::standard().sf(x)
}

/// P(T > t) for Student's t on `df` degrees of freedom (the normal beyond 10⁷).
pub fn t_upper_tail(t: f64, df: f64) -> f64 {
    if df > 1e7 {
        return normal_upper_tail(t);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.sf(t),
        Err(_) => f64::NAN,
    }
}

/// z₁₋α/₂ + z_power: the distance, in standard errors, between no effect and an effect
/// detected with that power at two-sided level α.
pub fn z_sum(alpha: f64, power: f64) -> f64 {
    z_upper(alpha / 2.0) + z(power)
}

/// Student's t quantile with `tail` of the distribution above it, on `df` degrees of freedom:
/// t₁₋α/₂,ₙ₋₁ is `t_upper(α/2, n − 1)`. Worked from the tail itself (statrs inverts the
/// regularized incomplete beta of the smaller tail), so tiny levels keep their precision; past
/// 10⁷ degrees of freedom it is the normal quantile.
pub fn t_upper(tail: f64, df: f64) -> f64 {
    if df > 1e7 {
        return z_upper(tail);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => -t.inverse_cdf(tail),
        Err(_) => f64::NAN,
    }
}

/// t₁₋α/₂,ₙ₋₁ + t_power,ₙ₋₁ for `n` pairs: the paired t-test's distance, in standard errors,
/// between no effect and an effect detected with that power at two-sided level α.
pub fn t_sum(alpha: f64, power: f64, n: u64) -> f64 {
    let df = (n.max(2) - 1) as f64;
    t_upper(alpha / 2.0, df) + t_upper(1.0 - power, df)
}

/// The minimum detectable effect of `diffs` by `test`: for the paired t-test (t₀.₉₇₅,ₙ₋₁ +
/// t₀.₈,ₙ₋₁) · sd / √n, for McNemar's the same with z quantiles; `None` with fewer than 2, 0
/// when they do not vary, `None` for the bootstrap (no per-unit differences).
pub fn mde_for(test: Test, diffs: &[f64]) -> Option<f64> {
    let s = sd(diffs)?;
    let n = diffs.len() as u64;
    let k = match test {
        Test::Mcnemar => z_sum(ALPHA, POWER),
        Test::PairedT | Test::PpiT => t_sum(ALPHA, POWER, n),
        Test::Bootstrap => return None,
    };
    Some(if s == 0.0 {
        0.0
    } else {
        k * s / (n as f64).sqrt()
    })
}

/// Pairs needed to detect a true mean difference `effect` (≠ 0) with differences of standard
/// deviation `sd` (> 0), at two-sided `alpha` with `power`, by `test`: for the paired t-test
/// the smallest n ≥ 2 with (t₁₋α/₂,ₙ₋₁ + t_power,ₙ₋₁) · sd / √n ≤ |effect|; for McNemar's
/// ⌈((z₁₋α/₂ + z_power) · sd / |effect|)²⌉, at least 2. `None` past [`MAX_COUNT`].
pub fn needed_for(test: Test, sd: f64, effect: f64, alpha: f64, power: f64) -> Option<u64> {
    let by_z = needed(sd, effect, alpha, power)?;
    if !matches!(test, Test::PairedT | Test::PpiT) {
        return Some(by_z);
    }
    // t quantiles lie above z ones (for power ≥ ½), so the t count is at least the z count,
    // and a handful above it: search up from it. Past a million pairs the two agree.
    let meets = |n: u64| t_sum(alpha, power, n) * sd / (n as f64).sqrt() <= effect.abs();
    if by_z > 1_000_000 {
        return Some(by_z);
    }
    let mut n = if power >= 0.5 { by_z } else { 2 };
    while !meets(n) {
        n += 1;
        if n > MAX_COUNT {
            return None;
        }
    }
    Some(n.max(2))
}

/// The power of a study of `pairs` pairs by `test`'s approximation: the chance that the test
/// statistic of differences with true mean `effect` and standard deviation `sd` lands beyond
/// its two-sided critical value (t₁₋α/₂,ₙ₋₁ for the t-test, z₁₋α/₂ for McNemar's).
pub fn power_for(test: Test, sd: f64, effect: f64, pairs: u64, alpha: f64) -> f64 {
    let shift = effect.abs() * (pairs as f64).sqrt() / sd;
    let critical = match test {
        Test::PairedT | Test::PpiT => t_upper(alpha / 2.0, (pairs.max(2) - 1) as f64),
        _ => z_upper(alpha / 2.0),
    };
    phi(shift - critical) + phi(-shift - critical)
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

/// The exact power of McNemar's test (two-sided exact binomial over the changed units, rejecting
/// at p ≤ `alpha`) in a study of `pairs` units where a unit changes with probability `share`
/// (at least |effect|), in the treatment's favour with probability (share + effect) / 2 and
/// against it with (share − effect) / 2: the sum over k changed units of P(k) · P(the split of
/// k rejects). The model [`simulated_power_for`] draws from.
pub fn mcnemar_power(pairs: u64, share: f64, effect: f64, alpha: f64) -> f64 {
    McnemarPower::new(share, effect, alpha).at(pairs)
}

/// [`mcnemar_power`] for many study sizes: the rejection cut-offs of each count of changed
/// units are kept between sizes.
struct McnemarPower {
    share: f64,
    /// The share of changed units that favour the treatment.
    up: f64,
    alpha: f64,
    /// cut[k]: the largest c with 2 · P(Binomial(k, ½) ≤ c) ≤ alpha, or −1 when none.
    cut: Vec<i64>,
}

impl McnemarPower {
    fn new(share: f64, effect: f64, alpha: f64) -> Self {
        let share = share.max(effect.abs()).min(1.0);
        let up = if share > 0.0 {
            ((share + effect) / (2.0 * share)).clamp(0.0, 1.0)
        } else {
            0.5
        };
        McnemarPower {
            share,
            up,
            alpha,
            cut: vec![-1],
        }
    }

    fn cut(&mut self, k: usize) -> i64 {
        use statrs::distribution::{Binomial, DiscreteCDF};
        while self.cut.len() <= k {
            let n = self.cut.len() as u64;
            let mut c = *self.cut.last().unwrap_or(&-1);
            if let Ok(b) = Binomial::new(0.5, n) {
                while c + 1 < n as i64 && 2.0 * b.cdf((c + 1) as u64) <= self.alpha {
                    c += 1;
                }
            }
            self.cut.push(c);
        }
        self.cut[k]
    }

    fn at(&mut self, pairs: u64) -> f64 {
        use statrs::distribution::{Binomial, Discrete, DiscreteCDF};
        let (Ok(changed), true) = (Binomial::new(self.share, pairs), self.share > 0.0) else {
            return 0.0;
        };
        // The counts of changed units that carry all but a negligible share of the probability.
        let mean = pairs as f64 * self.share;
        let spread = 8.0 * (mean * (1.0 - self.share)).sqrt() + 8.0;
        let lo = (mean - spread).max(0.0) as u64;
        let hi = ((mean + spread).ceil() as u64).min(pairs);
        let mut power = 0.0;
        for k in lo..=hi {
            let c = self.cut(k as usize);
            if c < 0 {
                continue;
            }
            let Ok(split) = Binomial::new(self.up, k) else {
                continue;
            };
            let c = c as u64;
            // P(favourable ≤ c) + P(favourable ≥ k − c).
            let low = split.cdf(c);
            let high = if k - c == 0 {
                1.0
            } else {
                1.0 - split.cdf(k - c - 1)
            };
            power += changed.pmf(k) * (low + high).min(1.0);
        }
        power.min(1.0)
    }
}

/// The fewest units with which McNemar's test reaches `power` ([`mcnemar_power`]) for a true
/// change `effect` (≠ 0) when a unit changes with probability `share`: searched up from the
/// normal approximation's count where that is small enough to search (up to 20,000), the
/// approximation itself beyond: one by one up to 200 units, by bisection above. `None` past [`MAX_COUNT`].
pub fn mcnemar_needed(share: f64, effect: f64, alpha: f64, power: f64) -> Option<u64> {
    if effect == 0.0 {
        return None;
    }
    let d = share.max(effect.abs()).min(1.0);
    let sd = (d - effect * effect).max(0.0).sqrt();
    if sd == 0.0 {
        // Every unit changes, all one way: the floor alone.
        return Some(super::holm::pairs_for_floor(alpha) as u64);
    }
    let approx = needed(sd, effect, alpha, power)?;
    if approx > 20_000 {
        return Some(approx);
    }
    let mut exact = McnemarPower::new(share, effect, alpha);
    // Exact power sits below the approximation's (the test is discrete and conservative), so
    // the count is at or above three quarters of it, and at or above the floor's count (its
    // fewest changed units at the expected share).
    let floor = (super::holm::pairs_for_floor(alpha) as f64 / d).floor() as u64;
    let lo = ((approx as f64 * 0.75) as u64).max(floor).max(2);
    if approx <= 200 {
        // Small studies: power jumps up and down as units are added; the first count that
        // reaches it, one by one.
        let mut n = lo;
        while exact.at(n) < power {
            n += 1;
            if n > 4 * approx + 1000 {
                return Some(approx.max(n));
            }
        }
        return Some(n);
    }
    // Larger ones: power climbs almost smoothly. Find a count that reaches it by doubling, the
    // first by halving the gap, then step back over any earlier count that reaches it too.
    let mut hi = approx.max(lo);
    while exact.at(hi) < power {
        hi *= 2;
        if hi > 64 * approx {
            return Some(approx);
        }
    }
    let mut lo = lo.min(hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if exact.at(mid) >= power {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    while hi > 2 && exact.at(hi - 1) >= power {
        hi -= 1;
    }
    Some(hi)
}

/// The simulation that checks [`needed_for`]: `studies` studies of `pairs` pairs, each
/// running `test` at level `alpha` on what it draws; the share that detect the effect. For the
/// paired t-test, each study draws `pairs` differences with replacement from `diffs` shifted to
/// mean `effect`. For McNemar's (differences −1, 0, 1), each draws outcomes keeping the pilot's
/// share of discordant units (at least |effect|), split between the two directions so that
/// their mean is `effect`. Study `i` draws from its own generator, seeded by `(seed, i)`, so the
/// share does not depend on `threads`.
#[allow(clippy::too_many_arguments)]
pub fn simulated_power_for(
    test: Test,
    diffs: &[f64],
    effect: f64,
    pairs: u64,
    alpha: f64,
    studies: usize,
    seed: u64,
    threads: usize,
) -> f64 {
    if diffs.len() < 2 || pairs < 2 {
        return f64::NAN;
    }
    let plan = Plan {
        method: Method::Units,
        replicates: studies,
        seed,
        threads,
    };
    let detected: Vec<bool> = match test {
        Test::Mcnemar => {
            let n = diffs.len() as f64;
            let discordant = diffs.iter().filter(|&&d| d != 0.0).count() as f64 / n;
            let d = discordant.max(effect.abs()).min(1.0);
            let (up, down) = ((d + effect) / 2.0, (d - effect) / 2.0);
            parallel(
                plan,
                || Vec::with_capacity(pairs as usize),
                |drawn, rng| {
                    drawn.clear();
                    for _ in 0..pairs {
                        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                        drawn.push(if u < up {
                            1.0
                        } else if u < up + down {
                            -1.0
                        } else {
                            0.0
                        });
                    }
                    super::test::mcnemar(drawn) <= alpha
                },
            )
        }
        _ => {
            let centre = mean(diffs);
            let shifted: Vec<f64> = diffs.iter().map(|d| d - centre + effect).collect();
            let n = shifted.len() as u64;
            let critical = t_upper(alpha / 2.0, (pairs - 1) as f64);
            parallel(
                plan,
                || (),
                |_, rng| {
                    // One pass: the t statistic from the sum and the sum of squares, and whether
                    // every draw is the same value (rounding would leave the variance a hair
                    // above 0 and the t statistic unbounded).
                    let (mut sum, mut squares) = (0.0, 0.0);
                    let mut first = None;
                    let mut all_equal = true;
                    for _ in 0..pairs {
                        let x = shifted[rng.below(n) as usize];
                        all_equal &= *first.get_or_insert(x) == x;
                        sum += x;
                        squares += x * x;
                    }
                    let k = pairs as f64;
                    let m = sum / k;
                    let var = ((squares - k * m * m) / (k - 1.0)).max(0.0);
                    if all_equal || var == 0.0 {
                        // Every draw the same: the t-test's own rule (the sign test of one
                        // direction).
                        return m != 0.0 && 2.0 * 0.5f64.powf(k) <= alpha;
                    }
                    (m / (var / k).sqrt()).abs() >= critical
                },
            )
        }
    };
    detected.iter().filter(|&&d| d).count() as f64 / studies as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemars_exact_power_as_summed_by_hand() {
        // Two thirds of units change, all in the treatment's favour: power at 6..=12 units, and
        // the counts for three pilots, summed exactly with integer binomial coefficients
        // (Python's math.comb) over every count of changed units.
        let want = [0.0878, 0.2634, 0.4682, 0.6503, 0.7869, 0.8779, 0.9336];
        for (n, w) in (6..=12).zip(want) {
            let p = mcnemar_power(n, 2.0 / 3.0, 2.0 / 3.0, 0.05);
            assert!((p - w).abs() < 5e-5, "{n}: {p} vs {w}");
        }
        assert_eq!(mcnemar_needed(2.0 / 3.0, 2.0 / 3.0, 0.05, 0.8), Some(11));
        assert_eq!(mcnemar_needed(0.25, 0.15, 0.05, 0.8), Some(92));
        assert_eq!(mcnemar_needed(0.25, 0.9, 0.05, 0.8), Some(7));
        // No unit changes: no test can detect anything.
        assert_eq!(mcnemar_power(100, 0.0, 0.0, 0.05), 0.0);
    }

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
        let k = needed_for(Test::PairedT, s, 0.25, 0.05, 0.8).unwrap();
        assert!((110..=140).contains(&k), "{k}");
        let sim = |effect: f64, pairs: u64| {
            simulated_power_for(Test::PairedT, &diffs, effect, pairs, 0.05, STUDIES, 7, 2)
        };
        let p = sim(0.25, k);
        assert!((p - 0.8).abs() < 0.02, "simulated power {p} at {k} pairs");
        // Half the pairs: clearly less power, as the normal approximation says.
        let half = sim(0.25, k / 2);
        let approx = power_for(Test::PairedT, s, 0.25, k / 2, 0.05);
        assert!(
            (half - approx).abs() < 0.03 && half < 0.6,
            "{half} vs {approx}"
        );
        // No effect: the share detecting one is the level.
        let null = sim(0.0, k);
        assert!((null - 0.05).abs() < 0.015, "{null}");
    }

    #[test]
    fn simulation_is_seeded_and_independent_of_threads() {
        let diffs = [0.5, -0.2, 0.1, 0.9, 0.0, 0.3];
        for test in [Test::PairedT, Test::Mcnemar] {
            let run = |seed: u64, threads: usize| {
                simulated_power_for(test, &diffs, 0.2, 20, 0.05, 2_000, seed, threads)
            };
            assert_eq!(run(3, 1), run(3, 2));
            assert_ne!(run(3, 1), run(4, 1));
        }
    }
}

/// Seeded simulations of what the decision's figures promise (docs/guides/ab-rubric-change.md,
/// "Which test runs"): one model compared with itself, scored with unequal repeats, is called
/// neither better nor worse more than 5% of the time; and a study of the size `plan` names
/// detects the planned effect in 80% of studies.
#[cfg(test)]
mod promises {
    use super::*;
    use crate::stats::paired::paired_delta;
    use crate::stats::rng::Rng;
    use crate::stats::test::Test;

    fn uniform(rng: &mut Rng) -> f64 {
        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// One item's accuracy p ~ Beta(4, 1) (its CDF is p⁴), scored `repeats` times: the mean.
    fn scored(p: f64, repeats: usize, rng: &mut Rng) -> f64 {
        (0..repeats).filter(|_| uniform(rng) < p).count() as f64 / repeats as f64
    }

    /// A/A experiments of `items` items, the baseline scored with `b` repeats and the
    /// treatment with `t`: the share in which the paired test of the mean rejects at 0.05.
    fn false_positives(items: usize, b: usize, t: usize, experiments: u64) -> f64 {
        let mut rejected = 0;
        for e in 0..experiments {
            let mut rng = Rng::for_replicate(20261127, e);
            let (mut xs, mut ys) = (Vec::new(), Vec::new());
            for _ in 0..items {
                let p = uniform(&mut rng).powf(0.25);
                xs.push(scored(p, b, &mut rng));
                ys.push(scored(p, t, &mut rng));
            }
            let d = paired_delta(&xs, &ys, 0, 1, 1).unwrap();
            if d.p_value.unwrap() < 0.05 {
                rejected += 1;
            }
        }
        rejected as f64 / experiments as f64
    }

    // The sign test called "worse" or "better" in 73% (n = 100) and 100% (n = 400) of these
    // experiments (hostile round: decision-mean); the test of the mean stays at its level.
    #[test]
    fn one_model_against_itself_with_unequal_repeats_is_rarely_called_different() {
        for (items, b, t) in [(100, 1, 5), (400, 1, 5), (100, 3, 5), (400, 3, 5)] {
            let rate = false_positives(items, b, t, 2000);
            eprintln!("A/A, {items} items, {b} vs {t} repeats: {rate}");
            assert!(rate <= 0.07, "{items} items, {b} vs {t} repeats: {rate}");
            assert!(
                rate >= 0.03,
                "{items} items, {b} vs {t} repeats: {rate} (too timid)"
            );
        }
    }

    // A simulated study whose draws are all one same non-zero value is counted as the decision
    // counts it: by the exact sign test of that one direction (2 · 0.5ⁿ), not by a t statistic
    // made unbounded by a rounding error in the variance.
    #[test]
    fn a_study_of_equal_differences_is_counted_as_the_decision_counts_it() {
        // 0.1 three times: 2 · 0.5³ = 0.25, never significant; the sum of squares leaves a
        // variance of a rounding error's size.
        let diffs = [0.1; 6];
        assert_eq!(
            simulated_power_for(Test::PairedT, &diffs, 0.1, 3, ALPHA, 200, 1, 1),
            0.0
        );
        assert!((crate::stats::test::t_test(&[0.1; 3]).unwrap() - 0.25).abs() < 1e-12);
        // Ten of them: 2 · 0.5¹⁰ = 0.002, always.
        assert_eq!(
            simulated_power_for(Test::PairedT, &diffs, 0.1, 10, ALPHA, 200, 1, 1),
            1.0
        );
    }

    // A study of the size plan names for a pilot detects the planned effect in 80% ± 4% of
    // fresh studies drawn from the population (not from the pilot), skewed and discrete alike.
    #[test]
    fn a_study_of_the_planned_size_detects_the_effect_in_80_percent() {
        // Each unit's difference: 1 vs 5 repeats of the same item (skewed, discrete), plus
        // the effect.
        let draw = |rng: &mut Rng, effect: f64| {
            let p = uniform(rng).powf(0.25);
            scored(p, 5, rng) - scored(p, 1, rng) + effect
        };
        let mut rng = Rng::for_replicate(7, 0);
        let population: Vec<f64> = (0..20_000).map(|_| draw(&mut rng, 0.0)).collect();
        let s = sd(&population).unwrap();
        for effect in [0.04, 0.08] {
            let k = needed_for(Test::PairedT, s, effect, ALPHA, POWER).unwrap();
            let studies = 2000;
            let mut detected = 0;
            for i in 0..studies {
                let mut rng = Rng::for_replicate(11, i);
                let xs = vec![0.0; k as usize];
                let ys: Vec<f64> = (0..k).map(|_| draw(&mut rng, effect)).collect();
                let d = paired_delta(&xs, &ys, 0, 1, 1).unwrap();
                if d.p_value.unwrap() < ALPHA && d.delta > 0.0 {
                    detected += 1;
                }
            }
            let power = detected as f64 / studies as f64;
            eprintln!("paired t, effect {effect}: {k} pairs, power {power}");
            assert!(
                (power - 0.8).abs() <= 0.04,
                "effect {effect}, {k} pairs: power {power}"
            );
        }
        // McNemar's: 0/1 outcomes. The planned count is the fewest units whose exact power
        // reaches 80%; fresh studies of that size detect the effect as often as the exact power
        // says, and 80% ± 4% where the count is large enough for the power to move in small
        // steps (at 11 units one more unit moves it 9 points: the count is the first at or
        // above 80%).
        for (share, effect, large) in [
            (0.2, 0.08, true),
            (0.25, 0.15, true),
            (2.0 / 3.0, 2.0 / 3.0, false),
        ] {
            let k = mcnemar_needed(share, effect, ALPHA, POWER).unwrap();
            let exact = mcnemar_power(k, share, effect, ALPHA);
            let (up, down) = ((share + effect) / 2.0, (share - effect) / 2.0);
            let studies = 4000;
            let mut detected = 0;
            for i in 0..studies {
                let mut rng = Rng::for_replicate(13, i);
                let diffs: Vec<f64> = (0..k)
                    .map(|_| {
                        let u = uniform(&mut rng);
                        if u < up {
                            1.0
                        } else if u < up + down {
                            -1.0
                        } else {
                            0.0
                        }
                    })
                    .collect();
                if crate::stats::test::mcnemar(&diffs) < ALPHA {
                    detected += 1;
                }
            }
            let power = detected as f64 / studies as f64;
            eprintln!("McNemar, share {share}, effect {effect}: {k} pairs, exact power {exact}, simulated {power}");
            assert!(exact >= POWER, "{k}: {exact}");
            assert!(
                (power - exact).abs() <= 0.025,
                "McNemar, {k} pairs: {power} vs exact {exact}"
            );
            if large {
                assert!(
                    (power - 0.8).abs() <= 0.04,
                    "McNemar, {k} pairs: power {power}"
                );
            }
        }
    }
}
