//! Correlated judges: judges that agree can agree on the same mistake. With human labels, a
//! judge's error on a unit is its score minus the mean of the annotators' labels; the errors'
//! pairwise Pearson correlations say how alike the judges' mistakes are, and the effective
//! number of judges k / (1 + (k − 1)·r̄) how many independent judges the panel is worth: three
//! judges whose errors correlate at 0.9 are worth about one. Pure.

/// Pearson's correlation of the pairs `(x, y)`; `None` with fewer than 2 pairs or when either
/// side does not vary.
pub fn pearson(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len() as f64;
    if pairs.len() < 2 {
        return None;
    }
    let mx = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for &(x, y) in pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx).powi(2);
        syy += (y - my).powi(2);
    }
    (sxx > 0.0 && syy > 0.0).then(|| (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// The matrix of pairwise correlations of the judges' errors: `errors[j][u]` is judge j's error
/// on unit u (`None` where it did not judge the unit); each pair is correlated over the units
/// both judged. The diagonal is 1 for a judge whose errors vary, `None` otherwise.
pub fn error_correlation(errors: &[Vec<Option<f64>>]) -> Vec<Vec<Option<f64>>> {
    let k = errors.len();
    let mut out = vec![vec![None; k]; k];
    for a in 0..k {
        for b in a..k {
            let pairs: Vec<(f64, f64)> = errors[a]
                .iter()
                .zip(&errors[b])
                .filter_map(|(x, y)| Some(((*x)?, (*y)?)))
                .collect();
            let r = pearson(&pairs);
            out[a][b] = r;
            out[b][a] = r;
        }
    }
    out
}

/// The effective number of judges: k / (1 + (k − 1)·r̄), r̄ the mean of the defined
/// off-diagonal correlations clipped to [0, 1] (errors that anti-correlate do not make a panel
/// worth more than its judges). `None` with no defined pair; k for a single judge.
pub fn effective_judges(correlation: &[Vec<Option<f64>>]) -> Option<f64> {
    let k = correlation.len();
    if k == 1 {
        return Some(1.0);
    }
    let off: Vec<f64> = (0..k)
        .flat_map(|a| ((a + 1)..k).map(move |b| (a, b)))
        .filter_map(|(a, b)| correlation[a][b])
        .collect();
    if off.is_empty() {
        return None;
    }
    let mean = (off.iter().sum::<f64>() / off.len() as f64).clamp(0.0, 1.0);
    Some(k as f64 / (1.0 + (k as f64 - 1.0) * mean))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::assert_close as close;

    #[test]
    fn pearson_by_hand() {
        // x = 1, 2, 3; y = 1, 2, 4: deviations (−1, 0, 1) and (−4/3, −1/3, 5/3), Σ = 3,
        // Σdx² = 2, Σdy² = 42/9: r = 3 / √(2 · 42/9).
        close(
            pearson(&[(1.0, 1.0), (2.0, 2.0), (3.0, 4.0)]).unwrap(),
            3.0 / (2.0f64 * 42.0 / 9.0).sqrt(),
        );
        close(pearson(&[(0.0, 1.0), (1.0, 0.0)]).unwrap(), -1.0);
        assert_eq!(pearson(&[(1.0, 2.0)]), None);
        assert_eq!(pearson(&[(1.0, 2.0), (1.0, 3.0)]), None); // x does not vary
    }

    #[test]
    fn the_matrix_pairs_units_both_judged() {
        // Judge c skipped unit 0: the pair (a, c) is over units 1–3 only.
        let errors = vec![
            vec![Some(0.5), Some(0.1), Some(-0.2), Some(0.3)],
            vec![Some(0.4), Some(0.2), Some(-0.1), Some(0.2)],
            vec![None, Some(0.1), Some(-0.2), Some(0.3)],
        ];
        let m = error_correlation(&errors);
        assert_eq!(m[0][0], Some(1.0));
        close(m[0][2].unwrap(), 1.0); // identical on the units both judged
        assert_eq!(m[0][1], m[1][0]);
        let r01 = pearson(&[(0.5, 0.4), (0.1, 0.2), (-0.2, -0.1), (0.3, 0.2)]).unwrap();
        close(m[0][1].unwrap(), r01);
    }

    #[test]
    fn the_effective_number_of_judges() {
        let corr = |r: f64| {
            vec![
                vec![Some(1.0), Some(r), Some(r)],
                vec![Some(r), Some(1.0), Some(r)],
                vec![Some(r), Some(r), Some(1.0)],
            ]
        };
        // Three judges whose errors correlate at 0.9 are worth about one: 3 / (1 + 2 · 0.9).
        close(effective_judges(&corr(0.9)).unwrap(), 3.0 / 2.8);
        close(effective_judges(&corr(1.0)).unwrap(), 1.0);
        close(effective_judges(&corr(0.0)).unwrap(), 3.0);
        // Anti-correlated errors are clipped to 0: never more than k.
        close(effective_judges(&corr(-0.4)).unwrap(), 3.0);
        assert_eq!(effective_judges(&[vec![Some(1.0)]]), Some(1.0));
        assert_eq!(
            effective_judges(&[vec![None, None], vec![None, None]]),
            None
        );
    }
}
