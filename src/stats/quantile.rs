//! Percentiles of bootstrap replicates.

/// The `p`-quantile of ascending `sorted` values by linear interpolation between order
/// statistics (Hyndman & Fan type 7, numpy's default). `None` when there are no values.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(last);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_between_order_statistics() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&x, 0.0), Some(1.0));
        assert_eq!(percentile(&x, 1.0), Some(5.0));
        assert_eq!(percentile(&x, 0.5), Some(3.0));
        // h = 4 × 0.025 = 0.1 → 1 + 0.1 × (2 − 1)
        assert!((percentile(&x, 0.025).unwrap() - 1.1).abs() < 1e-12);
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[7.0], 0.975), Some(7.0));
    }
}
