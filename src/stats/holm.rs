//! Multiplicity (docs/guides/ab-rubric-change.md): Holm's step-down adjustment over a family of p-values, and the
//! smallest p-value the exact sign test can reach with a number of pairs.

/// Holm's step-down adjustment. Sorting the family's m p-values ascending p₍₁₎ ≤ … ≤ p₍ₘ₎,
/// p_adj₍ᵢ₎ = min(1, max over j ≤ i of (m − j + 1) · p₍ⱼ₎). A `None` takes no part in the family
/// and stays `None`; the result is in the input's order. Tied p-values get the same adjusted
/// value whatever their order: the running maximum carries the first one's to the others.
pub fn holm(ps: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<(usize, f64)> = ps
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| (i, p)))
        .collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = order.len();
    let mut out = vec![None; ps.len()];
    let mut running = 0.0f64;
    for (j, (i, p)) in order.into_iter().enumerate() {
        running = running.max((m - j) as f64 * p);
        out[i] = Some(running.min(1.0));
    }
    out
}

/// The smallest p-value the exact two-sided sign test can give with `pairs` non-zero
/// differences: 2 · 0.5ⁿ (all of them on one side), at most 1.
pub fn sign_test_floor(pairs: usize) -> f64 {
    (2.0 * 0.5f64.powi(pairs.min(2000) as i32)).min(1.0)
}

/// The fewest non-zero pairs with which the sign test can reach `alpha`: the smallest n with
/// 2 · 0.5ⁿ ≤ alpha (6 for 0.05). `alpha` must lie in (0, 1].
pub fn pairs_for_floor(alpha: f64) -> usize {
    let mut n = 1;
    while sign_test_floor(n) > alpha && n < 2000 {
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: &[Option<f64>], want: &[Option<f64>]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            match (g, w) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-12, "{got:?} vs {want:?}"),
                _ => assert_eq!(g, w, "{got:?} vs {want:?}"),
            }
        }
    }

    #[test]
    fn holm_by_hand() {
        // m = 4, sorted 0.01, 0.02, 0.03, 0.5: 4·0.01 = 0.04, 3·0.02 = 0.06, 2·0.03 = 0.06,
        // 1·0.5 = 0.5; in input order.
        close(
            &holm(&[Some(0.03), Some(0.01), Some(0.5), Some(0.02)]),
            &[Some(0.06), Some(0.04), Some(0.5), Some(0.06)],
        );
        // Monotonicity: 3·0.01 = 0.03, then 2·0.011 = 0.022 is lifted to 0.03 by the running
        // maximum, then 1·0.04 = 0.04.
        close(
            &holm(&[Some(0.01), Some(0.011), Some(0.04)]),
            &[Some(0.03), Some(0.03), Some(0.04)],
        );
    }

    #[test]
    fn holm_ties_caps_and_nulls() {
        // Ties: 3·0.02 = 0.06 for the first; 2·0.02 = 0.04 is lifted to 0.06; whichever of
        // the tied two comes first, both get 0.06.
        close(
            &holm(&[Some(0.02), Some(0.02), Some(0.9)]),
            &[Some(0.06), Some(0.06), Some(0.9)],
        );
        // p = 1 takes part and caps: 2·0.6 = 1.2 → 1; 1·1 = 1.
        close(&holm(&[Some(1.0), Some(0.6)]), &[Some(1.0), Some(1.0)]);
        // A null takes no part: m = 2, not 3.
        close(
            &holm(&[Some(0.02), None, Some(0.04)]),
            &[Some(0.04), None, Some(0.04)],
        );
        // A family of one is its own p-value; an empty family is empty.
        close(&holm(&[Some(0.125)]), &[Some(0.125)]);
        assert!(holm(&[]).is_empty());
        close(&holm(&[None]), &[None]);
    }

    #[test]
    fn holm_is_never_below_the_raw_p_and_keeps_the_order() {
        let ps = [0.2, 0.001, 0.04, 0.04, 0.3, 0.0125, 1.0, 0.07];
        let adj: Vec<f64> = holm(&ps.map(Some)).into_iter().flatten().collect();
        for (p, a) in ps.iter().zip(&adj) {
            assert!(a >= p && *a <= 1.0);
        }
        let mut pairs: Vec<(f64, f64)> = ps.iter().copied().zip(adj).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(pairs.windows(2).all(|w| w[0].1 <= w[1].1));
    }

    #[test]
    fn sign_test_floor_by_hand() {
        assert_eq!(sign_test_floor(4), 0.125);
        assert_eq!(sign_test_floor(5), 0.0625);
        assert_eq!(sign_test_floor(6), 0.03125);
        assert_eq!(sign_test_floor(0), 1.0);
        assert_eq!(sign_test_floor(1), 1.0);
        assert_eq!(pairs_for_floor(0.05), 6);
        assert_eq!(pairs_for_floor(0.01), 8); // 2/256 = 0.0078; 2/128 = 0.0156
        assert_eq!(pairs_for_floor(1.0), 1);
        // The floor is what the sign test itself gives with every difference on one side.
        for n in 1..12 {
            let p = crate::stats::test::sign_test(&vec![1.0; n]);
            assert!((p - sign_test_floor(n)).abs() < 1e-15);
        }
    }
}
