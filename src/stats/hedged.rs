//! Hedged-capital confidence sequences for the mean of values in [0, 1] (Waudby-Smith &
//! Ramdas, "Estimating means of bounded random variables by betting", JRSS-B 2024, §4.3): for
//! each candidate mean m on a grid, two bettors wager on the values against m — one that the
//! mean is above it, one below — with the predictable plug-in bets λₜ = √(2·ln(2/α) / (t·ln(1 +
//! t)·σ̂²ₜ₋₁)), truncated at c/m (c/(1 − m) for the other side), and m stays in the sequence
//! while the larger of their half-capitals is at most 1/α. Tighter than the empirical-Bernstein
//! sequence ([`super::sequence`]) where the values vary little, at the price of a grid.
//!
//! With one truncation c = ½ it is exactly confseq 0.0.11's `confseq.betting.hedged_cs(x,
//! alpha, breaks, running_intersection=True)` with its defaults (θ = ½, prior mean ½, prior
//! variance ¼, one fake observation). calibench's sequential decision averages two such
//! bettors per side, c = ½ and c = 1 ([`TRUNCATIONS`]): an average of test martingales is one,
//! so the sequence stays valid, and it is confseq's `betting_cs` with those two strategies
//! (`lambdas_fns_positive`/`negative`, `trunc_scale=1`, `convex_comb=False`). The cautious
//! bettor keeps 0/1 outcomes (values at the edges) from ruining the bold one, and the bold one
//! wins quickly where scores vary little within a wide range. tests/sequence_reference.rs
//! checks both against confseq's own output.

/// The truncations of the sequence's bettors: ½ (confseq's `hedged_cs` default) and 1.
pub const TRUNCATIONS: [f64; 2] = [0.5, 1.0];

/// The grid's resolution, confseq's default `breaks`: candidate means 0, 1/1000, …, 1, and each
/// bound widened by one step.
pub const BREAKS: usize = 1000;

/// The predictable plug-in bets of `x` at level `a` (confseq's `lambda_predmix_eb` with no
/// truncation): λₜ = √(2·ln(1/a) / (t·ln(1 + t)·σ̂²ₜ₋₁)), σ̂² regularised by one fake
/// observation at mean ½ and variance ¼.
fn bets(x: &[f64], a: f64) -> Vec<f64> {
    let log_a = (1.0 / a).ln();
    let (mut sum_x, mut sum_sq) = (0.0, 0.0);
    let mut sigma2_prev = 0.25;
    let mut out = Vec::with_capacity(x.len());
    for (i, &xi) in x.iter().enumerate() {
        let t = (i + 1) as f64;
        let lambda = (2.0 * log_a / (t * (1.0 + t).ln() * sigma2_prev)).sqrt();
        out.push(if lambda.is_nan() { 0.0 } else { lambda });
        sum_x += xi;
        let mu = ((0.5 + sum_x) / (t + 1.0)).min(1.0);
        sum_sq += (xi - mu).powi(2);
        sigma2_prev = (0.25 + sum_sq) / (t + 1.0);
    }
    out
}

/// The two-sided level-`alpha` sequence of calibench's sequential decision for the mean of
/// `x` ∈ [0, 1]: the bettors of [`TRUNCATIONS`], on confseq's grid.
pub fn two_sided(x: &[f64], alpha: f64) -> (Vec<f64>, Vec<f64>) {
    two_sided_with(x, alpha, BREAKS, &TRUNCATIONS)
}

/// The two-sided level-`alpha` hedged-capital sequence for the mean of `x` ∈ [0, 1], on a grid
/// of `breaks` steps, each side's capital the average of one bettor per truncation in
/// `truncs`: (lower, upper) after each value, with the running intersection.
pub fn two_sided_with(
    x: &[f64],
    alpha: f64,
    breaks: usize,
    truncs: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    two_sided_until(x, alpha, breaks, truncs, |_, _| false)
}

/// [`two_sided_with`], stopping after the first value at which `stop(lower, upper)` holds: the
/// bounds up to and including it. Each value updates every grid point's capitals, so a caller
/// that needs only the first decision pays for the values up to it.
pub fn two_sided_until(
    x: &[f64],
    alpha: f64,
    breaks: usize,
    truncs: &[f64],
    stop: impl Fn(f64, f64) -> bool,
) -> (Vec<f64>, Vec<f64>) {
    // θ = ½: each bettor's level is α/2, and the sequence keeps m while max(½K⁺, ½K⁻) ≤ 1/α,
    // K± the average of the bettors' capitals on that side.
    let lambdas = bets(x, alpha / 2.0);
    let threshold = 1.0 / alpha;
    let step = 1.0 / breaks as f64;
    let w = 1.0 / truncs.len() as f64;
    let grid: Vec<f64> = (0..=breaks).map(|i| i as f64 * step).collect();
    // Each bettor's bets at each grid point are its λ truncated at c/m (upward) and c/(1 − m)
    // (downward), c ≤ 1, so that no capital can go negative.
    let mut up = vec![1.0f64; grid.len() * truncs.len()];
    let mut down = up.clone();
    let (mut lower, mut upper) = (Vec::with_capacity(x.len()), Vec::with_capacity(x.len()));
    let (mut lo_run, mut hi_run) = (f64::NEG_INFINITY, f64::INFINITY);
    let factor = |l: f64, d: f64| {
        if l.is_infinite() && d == 0.0 {
            1.0
        } else {
            1.0 + l * d
        }
    };
    let nan_zero = |k: f64| if k.is_nan() { 0.0 } else { k };
    for (&xt, &l) in x.iter().zip(&lambdas) {
        let (mut first, mut last) = (None, 0);
        for (i, &m) in grid.iter().enumerate() {
            let d = xt - m;
            let (mut up_sum, mut down_sum) = (0.0, 0.0);
            for (k, &c) in truncs.iter().enumerate() {
                let at = i * truncs.len() + k;
                up[at] *= factor(l.min(c / m).max(-c / (1.0 - m)), d);
                down[at] *= factor(l.min(c / (1.0 - m)).max(-c / m), -d);
                up_sum += w * nan_zero(up[at]);
                down_sum += w * nan_zero(down[at]);
            }
            if (0.5 * up_sum).max(0.5 * down_sum) <= threshold {
                first.get_or_insert(i);
                last = i;
            }
        }
        let (lo, hi) = match first {
            Some(f) => (
                (f as f64 * step - step).max(0.0),
                (last as f64 * step + step).min(1.0),
            ),
            None => (0.0, 1.0),
        };
        lo_run = lo_run.max(lo);
        hi_run = hi_run.min(hi);
        lower.push(lo_run);
        upper.push(hi_run);
        if stop(lo_run, hi_run) {
            break;
        }
    }
    (lower, upper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::Rng;

    // Worked by hand: one value x₁ = 1 at α = 0.05. λ₁ = √(2·ln 40/(1·ln 2·¼)) = 6.5415. At
    // m = 0 the upward bet is not truncated (½/0 = ∞): K⁺ = 1 + 6.5415 = 7.5415, half of it
    // 3.77 ≤ 1/α = 20, so even 0 stays: one unit excludes nothing, and the bounds are [0, 1].
    // Twelve 1s in a row: at m = 0.4, K⁺ grows by at most 1 + (½/0.4)·0.6 = 1.75 a unit, and
    // 1.75¹² / 2 = 409 > 20, so 0.4 is out; the lower bound lies above it.
    #[test]
    fn one_value_excludes_nothing_and_a_run_of_ones_does() {
        let l = bets(&[1.0], 0.025);
        assert!((l[0] - (2.0 * 40f64.ln() / (2f64.ln() * 0.25)).sqrt()).abs() < 1e-12);
        for truncs in [&[0.5][..], &TRUNCATIONS[..]] {
            let (lo, hi) = two_sided_with(&[1.0], 0.05, BREAKS, truncs);
            assert_eq!((lo[0], hi[0]), (0.0, 1.0));
            let (lo, hi) = two_sided_with(&[1.0; 12], 0.05, BREAKS, truncs);
            assert!(lo[11] > 0.4 && hi[11] == 1.0, "{} {}", lo[11], hi[11]);
        }
    }

    #[test]
    fn the_sequence_narrows_around_the_mean_and_is_nested() {
        let mut rng = Rng::for_replicate(3, 0);
        let x: Vec<f64> = (0..600)
            .map(|_| 0.6 + 0.1 * (rng.unit_f64() - 0.5))
            .collect();
        let (lo, hi) = two_sided(&x, 0.05);
        for t in 1..x.len() {
            assert!(lo[t] >= lo[t - 1] && hi[t] <= hi[t - 1]);
        }
        assert!(lo[599] < 0.6 && hi[599] > 0.6);
        assert!(hi[599] - lo[599] < 0.02, "{} {}", lo[599], hi[599]);
    }
}
