//! Anytime-valid confidence sequences for the mean of a bounded per-unit difference
//! (docs/guides/stop-when-you-know.md): Waudby-Smith & Ramdas's predictable plug-in
//! empirical-Bernstein sequence (PrPl-EB, "Estimating means of bounded random variables by
//! betting", JRSS-B 2024), two-sided, with the running intersection. It is exactly confseq
//! 0.0.11's `predmix_empbern_twosided_cs(x, alpha, truncation=0.5, running_intersection=True)`
//! (tests/sequence_reference.rs checks it against that package's own output).
//!
//! The guarantee: with probability at least 1 − α the sequence covers the true mean at every
//! unit count at once, so a collection may look after every unit and stop whenever it likes.

/// λ never exceeds this (confseq's `truncation`).
const TRUNCATION: f64 = 0.5;

/// The lower bounds of the one-sided level-`a` sequence for the mean of `x` ∈ [0, 1], after
/// each of its values: max(0, Σλᵢxᵢ/Σλᵢ − (ln(1/a) + Σvᵢψ(λᵢ))/Σλᵢ), then the running maximum.
pub fn lower(x: &[f64], a: f64) -> Vec<f64> {
    let log_a = (1.0 / a).ln();
    // The regularised mean and variance that choose each λ (one fake observation at ½, ¼).
    let (mut sum_x, mut sum_sq) = (0.0, 0.0);
    let mut sigma2_prev = 0.25;
    // The plain running mean that centres each variance increment, x̄₀ = 0.
    let mut mean_prev = 0.0;
    let (mut sum_lambda, mut sum_lambda_x, mut sum_v_psi) = (0.0, 0.0, 0.0);
    let mut best = f64::NEG_INFINITY;
    let mut out = Vec::with_capacity(x.len());
    for (i, &xi) in x.iter().enumerate() {
        let t = (i + 1) as f64;
        let lambda = (2.0 * log_a / (t * (1.0 + t).ln() * sigma2_prev))
            .sqrt()
            .min(TRUNCATION);
        let lambda = if lambda.is_nan() { 0.0 } else { lambda };
        let v = (xi - mean_prev).powi(2);
        let psi = -(1.0 - lambda).ln() - lambda;
        sum_lambda += lambda;
        sum_lambda_x += lambda * xi;
        sum_v_psi += v * psi;
        let bound = (sum_lambda_x / sum_lambda - (log_a + sum_v_psi) / sum_lambda).max(0.0);
        best = best.max(bound);
        out.push(best);
        // Then this unit joins the estimates the next λ uses.
        sum_x += xi;
        let mu = ((0.5 + sum_x) / (t + 1.0)).min(1.0);
        sum_sq += (xi - mu).powi(2);
        sigma2_prev = (0.25 + sum_sq) / (t + 1.0);
        mean_prev = sum_x / t;
    }
    out
}

/// The two-sided level-`alpha` sequence for the mean of `x` ∈ [0, 1]: (lower, upper) after
/// each value, each side at `alpha / 2`.
pub fn two_sided(x: &[f64], alpha: f64) -> (Vec<f64>, Vec<f64>) {
    let lo = lower(x, alpha / 2.0);
    let flipped: Vec<f64> = x.iter().map(|v| 1.0 - v).collect();
    let hi = lower(&flipped, alpha / 2.0)
        .into_iter()
        .map(|l| 1.0 - l)
        .collect();
    (lo, hi)
}

/// The empirical-Bernstein sequence for the mean of per-unit differences `d` ∈ [−`range`,
/// `range`]: [`of_differences_with`] this module's [`two_sided`].
pub fn of_differences(d: &[f64], range: f64, alpha: f64) -> Option<(Vec<f64>, Vec<f64>)> {
    of_differences_with(d, range, |x| two_sided(x, alpha))
}

/// A sequence `cs` on [0, 1] for the mean of per-unit differences `d` ∈ [−`range`, `range`], on
/// the difference's own scale: each d mapped to (d + R)/(2R) ∈ [0, 1], the two-sided sequence,
/// each bound mapped back by 2R·b − R. `None` when a difference lies outside the range (the
/// caller names the unit) or the range is not positive.
pub fn of_differences_with(
    d: &[f64],
    range: f64,
    cs: impl FnOnce(&[f64]) -> (Vec<f64>, Vec<f64>),
) -> Option<(Vec<f64>, Vec<f64>)> {
    if !(range > 0.0 && range.is_finite()) {
        return None;
    }
    let x: Vec<f64> = d
        .iter()
        .map(|&v| (v >= -range && v <= range).then(|| (v + range) / (2.0 * range)))
        .collect::<Option<_>>()?;
    let (lo, hi) = cs(&x);
    let back = |b: f64| 2.0 * range * b - range;
    Some((
        lo.into_iter().map(back).collect(),
        hi.into_iter().map(back).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::assert_close;
    use crate::stats::rng::Rng;

    // Worked by hand from the formulas at a = 0.025 (ln(1/a) = ln 40). One unit x₁ = 1:
    // σ̂²₀ = ¼, so λ₁ = min(½, √(2·ln 40/(1·ln 2·¼))) = ½; v₁ = (1 − x̄₀)² = 1; ψ(½) = ln 2 − ½;
    // L₁ = max(0, ½/½ − (ln 40 + ln 2 − ½)/½) = max(0, 2 − 2·ln 80) = 0.
    // A second x₂ = 1: μ̂₁ = (½ + 1)/2 = ¾, σ̂²₁ = (¼ + ¼²)/2 = 5/32, λ₂ = min(½, √(2·ln 40/
    // (2·ln 3·5/32))) = ½; v₂ = (1 − 1)² = 0; L₂ = max(0, 1 − (ln 40 + ln 2 − ½)/1) = 0.
    // Two units say nothing at this level; 1 − ln 80 + ½ is the bound before the floor.
    #[test]
    fn the_first_units_are_worked_by_hand() {
        let l = lower(&[1.0], 0.025);
        assert_close(l[0], 0.0);
        let l = lower(&[1.0, 1.0], 0.025);
        assert!(1.0 - 80.0f64.ln() + 0.5 < 0.0);
        assert_close(l[1], 0.0);
        // A long run of 1s does leave 0: after n units the bound is Σλ/Σλ − (ln 40 + ψ(½))/Σλ
        // with λ = ½ throughout (σ̂² shrinks), so 1 − (ln 40 + ln 2 − ½)/(n/2).
        let n = 40;
        let l = lower(&vec![1.0; n], 0.025);
        assert_close(
            l[n - 1],
            1.0 - (40.0f64.ln() + 2.0f64.ln() - 0.5) / (n as f64 / 2.0),
        );
        // Upper side of a constant ½ stream is symmetric to its lower side.
        let (lo, hi) = two_sided(&[0.5; 50], 0.05);
        for (a, b) in lo.iter().zip(&hi) {
            assert_close(*a, 1.0 - b);
        }
    }

    #[test]
    fn bounds_are_nested_and_narrow_as_units_arrive() {
        let mut rng = Rng::for_replicate(7, 0);
        let x: Vec<f64> = (0..2000).map(|_| rng.unit_f64()).collect();
        let (lo, hi) = two_sided(&x, 0.05);
        for t in 1..x.len() {
            assert!(
                lo[t] >= lo[t - 1] && hi[t] <= hi[t - 1],
                "running intersection at {t}"
            );
        }
        assert!(lo[1999] < 0.5 && hi[1999] > 0.5);
        assert!(hi[1999] - lo[1999] < 0.1, "{} {}", lo[1999], hi[1999]);
    }

    #[test]
    fn a_difference_outside_its_range_is_refused_and_the_scale_maps_back() {
        assert!(of_differences(&[0.5, 1.2], 1.0, 0.05).is_none());
        assert!(of_differences(&[0.5], 0.0, 0.05).is_none());
        let d = [0.2; 30];
        let (lo, hi) = of_differences(&d, 1.0, 0.05).unwrap();
        let x: Vec<f64> = d.iter().map(|v| (v + 1.0) / 2.0).collect();
        let (lx, hx) = two_sided(&x, 0.05);
        assert_close(lo[29], 2.0 * lx[29] - 1.0);
        assert_close(hi[29], 2.0 * hx[29] - 1.0);
    }
}
