use super::*;

/// REFERENCE.md: Krippendorff (2011), 4 observers × 12 units, rows are observers.
pub(crate) fn reference_units() -> Units {
    let m = f64::NAN;
    let observers = [
        [1., 2., 3., 3., 2., 1., 4., 1., 2., m, m, m],
        [1., 2., 3., 3., 2., 2., 4., 1., 2., 5., m, 3.],
        [m, 3., 3., 3., 2., 3., 4., 2., 2., 5., 1., m],
        [1., 2., 3., 3., 2., 4., 4., 1., 2., 5., 1., m],
    ];
    let rows: Vec<Vec<Option<f64>>> = (0..12)
        .map(|u| {
            observers
                .iter()
                .map(|o| Some(o[u]).filter(|v| !v.is_nan()))
                .collect()
        })
        .collect();
    Units::from_rows(&rows).unwrap()
}

fn assert_close(got: Option<f64>, want: f64) {
    let got = got.expect("alpha defined");
    assert!((got - want).abs() < 1e-9, "got {got}, want {want}");
}

#[test]
fn units_from_parts_are_the_units_pushed_or_none() {
    let mut pushed = Units::new();
    pushed.push_unit(&[1.0, 2.0]).unwrap();
    pushed.push_unit(&[]).unwrap();
    pushed.push_unit(&[3.0]).unwrap();
    assert_eq!(
        Units::from_parts(vec![0, 2, 2, 3], vec![1.0, 2.0, 3.0]),
        Some(pushed)
    );
    assert_eq!(
        Units::from_parts(vec![0, 2, 1, 3], vec![1.0, 2.0, 3.0]),
        None
    );
    assert_eq!(Units::from_parts(vec![0, 2], vec![1.0, 2.0, 3.0]), None);
    assert_eq!(Units::from_parts(vec![0, 1], vec![f64::NAN]), None);
}

#[test]
fn reference_example_at_every_level() {
    // Exact fractions where they are known; ordinal and ratio to the published six places
    // (ordinal recomputed exactly is 0.8153877768…).
    let units = reference_units();
    for (level, want, tolerance) in [
        (Level::Nominal, 113.0 / 152.0, 1e-9),
        (Level::Ordinal, 0.815388, 5e-7),
        (Level::Interval, 951.0 / 1120.0, 1e-9),
        (Level::Ratio, 0.797403, 5e-7),
    ] {
        let got = alpha(&units, level).unwrap().alpha.expect("alpha defined");
        assert!(
            (got - want).abs() < tolerance,
            "{level}: {got}, want {want}"
        );
    }
    let e = alpha(&units, Level::Nominal).unwrap();
    assert_eq!((e.pairable_units, e.pairable_values), (11, 40));
}

#[test]
fn coded_interval_agrees_with_raw_interval() {
    let units = reference_units();
    let raw = Prepared::new(&units, Level::Interval).unwrap().estimate();
    let coded = Prepared::coded(&units, Level::Interval).unwrap().estimate();
    assert!((raw.alpha.unwrap() - coded.alpha.unwrap()).abs() < 1e-12);
    assert!((raw.expected_disagreement - coded.expected_disagreement).abs() < 1e-12);
}

#[test]
fn identical_values_leave_alpha_undefined_with_a_reason() {
    let units = Units::from_rows(&[[Some(3.0), Some(3.0)], [Some(3.0), None]]).unwrap();
    for level in Level::ALL {
        let e = alpha(&units, level).unwrap();
        assert_eq!(e.alpha, None, "{level}");
        assert_eq!(e.undefined_reason.as_deref(), Some(UNDEFINED_NO_VARIATION));
        assert_eq!(e.expected_disagreement, 0.0);
    }
}

#[test]
fn no_pairable_unit_is_an_error() {
    let units = Units::from_rows(&[[Some(1.0), None], [None, Some(2.0)]]).unwrap();
    for level in Level::ALL {
        assert_eq!(alpha(&units, level), Err(AlphaError::NoPairableUnit));
    }
}

#[test]
fn non_finite_values_are_refused() {
    let mut units = Units::new();
    assert_eq!(
        units.push_unit(&[1.0, f64::INFINITY]),
        Err(AlphaError::NonFinite(f64::INFINITY))
    );
}

#[test]
fn interval_values_too_large_to_square_are_refused() {
    let units = Units::from_rows(&[[Some(1e300), Some(-1e300)], [Some(1.0), Some(2.0)]]).unwrap();
    for build in [Prepared::new, Prepared::coded] {
        assert!(matches!(
            build(&units, Level::Interval),
            Err(AlphaError::TooLarge(_, Level::Interval))
        ));
    }
    // Ratio and ordinal never square the raw values.
    assert!(alpha(&units, Level::Ordinal).unwrap().alpha.is_some());
}

#[test]
fn negative_zero_is_zero() {
    let a = Units::from_rows(&[[Some(0.0), Some(-0.0)], [Some(1.5), Some(2.5)]]).unwrap();
    let b = Units::from_rows(&[[Some(0.0), Some(0.0)], [Some(1.5), Some(2.5)]]).unwrap();
    for level in [Level::Nominal, Level::Ordinal, Level::Ratio] {
        assert_eq!(
            alpha(&a, level).unwrap().alpha,
            alpha(&b, level).unwrap().alpha
        );
    }
}

#[test]
fn patterns_group_identical_units_whatever_their_order() {
    // Units 0, 2 and 4 hold the same values in different orders; 1 and 3 another multiset.
    let rows = [
        vec![1.0, 2.0, 2.0],
        vec![3.0, 1.0],
        vec![2.0, 1.0, 2.0],
        vec![1.0, 3.0],
        vec![2.0, 2.0, 1.0],
        vec![4.0],
    ];
    let mut units = Units::new();
    for row in &rows {
        units.push_unit(row).unwrap();
    }
    for level in Level::ALL {
        let prepared = Prepared::new(&units, level).unwrap();
        let patterns = Patterns::group(&prepared, 10).unwrap();
        assert_eq!(patterns.multiplicity(), [3, 2], "{level}");
        assert_eq!(patterns.units(), 5);
        let mut partial = Partial::default();
        // Each pattern counted as often as it occurs is the point estimate...
        let whole = patterns.evaluate(&[3, 2], &mut partial).alpha();
        let estimate = prepared.estimate().alpha;
        assert!(
            (whole.unwrap() - estimate.unwrap()).abs() < 1e-12,
            "{level}"
        );
        // ... and any pattern weights are the unit weights they stand for.
        let by_pattern = patterns.evaluate(&[1, 4], &mut partial);
        let by_unit = prepared.evaluate(Some(&[1, 2, 0, 2, 0]), &mut partial);
        assert!((by_pattern.alpha().unwrap() - by_unit.alpha().unwrap()).abs() < 1e-12);
        assert!(
            Patterns::group(&prepared, 1).is_none(),
            "{level}: a second pattern"
        );
    }
}

#[test]
fn patterns_reproduce_the_estimate_of_repeated_reference_data() {
    let reference = reference_units();
    let mut units = Units::new();
    for copy in 0..50 {
        for (u, values) in reference.iter().enumerate() {
            // Every other copy lists a unit's values backwards.
            let mut values = values.to_vec();
            if (copy + u) % 2 == 1 {
                values.reverse();
            }
            units.push_unit(&values).unwrap();
        }
    }
    for level in Level::ALL {
        let prepared = Prepared::new(&units, level).unwrap();
        let patterns = Patterns::group(&prepared, usize::MAX).unwrap();
        assert!(patterns.len() <= reference.len(), "{level}");
        let whole = patterns
            .evaluate(patterns.multiplicity(), &mut Partial::default())
            .alpha()
            .unwrap();
        let estimate = prepared.estimate().alpha.unwrap();
        assert!(
            (whole - estimate).abs() < 1e-12,
            "{level}: {whole} vs {estimate}"
        );
    }
}

#[test]
fn hashed_coding_matches_dense_coding() {
    // Shifting by 0.5 leaves the dense fast path but not the ordinal ranks or nominal labels.
    let levels = [Level::Nominal, Level::Ordinal, Level::Interval];
    same_alpha_after(|v| v + 0.5, &levels);
}

/// α of the reference data is unchanged, at each of `levels`, when every value is mapped by
/// `f`.
fn same_alpha_after(f: impl Fn(f64) -> f64, levels: &[Level]) {
    let units = reference_units();
    let mut mapped = Units::new();
    for u in units.iter() {
        let row: Vec<f64> = u.iter().map(|&v| f(v)).collect();
        mapped.push_unit(&row).unwrap();
    }
    for &level in levels {
        let a = alpha(&units, level).unwrap().alpha.unwrap();
        let b = alpha(&mapped, level).unwrap().alpha.unwrap();
        assert!((a - b).abs() < 1e-12, "{level}: {a} vs {b}");
    }
}

#[test]
fn switching_from_table_to_hash_midway_keeps_every_code() {
    // Ordinal α depends only on order: a monotone map that turns the values above 2 into
    // non-integers (first met mid-way, after integer codes were given) must not change it.
    same_alpha_after(
        |v| if v > 2.0 { v * 10.0 + 0.25 } else { v },
        &[Level::Nominal, Level::Ordinal],
    );
}

#[test]
fn merged_parts_equal_one_pass() {
    // Coding in slices and merging must give exactly what one pass gives.
    let units = reference_units();
    for level in Level::ALL {
        let mut one = CodedStats::build(&units, 0..units.len(), level);
        one.sort_levels();
        let mut merged = CodedStats::build(&units, 0..5, level);
        merged.append(CodedStats::build(&units, 5..9, level));
        merged.append(CodedStats::build(&units, 9..units.len(), level));
        merged.sort_levels();
        assert_eq!(one.levels, merged.levels);
        assert_eq!(one.offsets, merged.offsets);
        assert_eq!(one.codes, merged.codes);
        assert_eq!(one.counts, merged.counts);
        assert_eq!(one.full_marginals, merged.full_marginals);
        assert_eq!(one.within, merged.within, "{level}");
    }
}

#[test]
fn complete_data_with_three_raters_uses_the_m_minus_one_factor() {
    // 3 raters × 3 units, worked by hand. Units (1,1,2), (2,2,2), (1,2,2); nominal.
    // Per unit o-contributions (÷ (m−1) = 2): unit 1 has ordered disagreeing pairs 4 → 2;
    // unit 2: 0; unit 3: 4 → 2. Σ o_ck δ² = 4, n = 9, n_1 = 3, n_2 = 6.
    // α = 1 − (n−1) · 4 / (n² − Σ n_c²) = 1 − 8·4 / (81 − 45) = 1 − 32/36 = 1/9.
    // Forgetting the 1/(m−1) factor would give 1 − 8·8/36 < 0.
    let units = Units::from_rows(&[
        [Some(1.0), Some(1.0), Some(2.0)],
        [Some(2.0), Some(2.0), Some(2.0)],
        [Some(1.0), Some(2.0), Some(2.0)],
    ])
    .unwrap();
    assert_close(alpha(&units, Level::Nominal).unwrap().alpha, 1.0 / 9.0);
    // Interval, same data: D_o = Σ (within) / n; within per unit = 2·m·SS/(m−1):
    // unit 1: SS = 2/3 → 2·3·(2/3)/2 = 2; unit 3 the same; Σ = 4. D_o = 4/9.
    // D_e = 2 (n S2 − S1²)/(n (n − 1)) = 2 (9·27 − 15²)/(72) = 2·18/72 = 1/2.
    // α = 1 − (4/9)/(1/2) = 1/9.
    assert_close(alpha(&units, Level::Interval).unwrap().alpha, 1.0 / 9.0);
}

#[test]
fn lanes_added_block_by_block_give_each_lane_its_own_evaluation() {
    // 16 weightings side by side, units added in uneven blocks, against one evaluation
    // per weighting: the same numbers to the last bit, at every level.
    let units = reference_units();
    for level in Level::ALL {
        let p = Prepared::new(&units, level).unwrap();
        let n = p.pairable_units();
        let lanes_weights: Vec<[u32; 16]> = (0..n)
            .map(|u| std::array::from_fn(|r| ((u * 7 + r * 3) % 4) as u32))
            .collect();
        let mut lanes = Lanes::<16>::default();
        p.start(&mut lanes);
        for (start, end) in [(0, 1), (1, 4), (4, n)] {
            p.add(&mut lanes, start, &lanes_weights[start..end]);
        }
        if p.two_passes() {
            p.between_passes(&mut lanes);
            for (start, end) in [(0, 2), (2, n)] {
                p.add_again(&mut lanes, start, &lanes_weights[start..end]);
            }
        }
        for r in 0..16 {
            let one: Vec<u32> = lanes_weights.iter().map(|w| w[r]).collect();
            let alone = p.evaluate(Some(&one), &mut Partial::default());
            assert_eq!(p.finish(&mut lanes, r), alone, "{level}, lane {r}");
        }
    }
}

#[test]
fn ordinal_in_one_pass_per_unit_matches_pairwise_differences() {
    // Σ_{i≠j} (M_i − M_j)² / (m − 1) written out pair by pair, on ratings spread over
    // many levels, against the one-pass form the evaluation uses.
    let rows: Vec<Vec<Option<f64>>> = (0..200u64)
        .map(|u| {
            let mut rng = crate::stats::rng::Rng::for_replicate(5, u);
            let truth = rng.below(90) as f64;
            (0..6)
                .map(|j| (j + u % 3 != 7).then(|| truth + rng.below(12) as f64))
                .collect()
        })
        .collect();
    let units = Units::from_rows(&rows).unwrap();
    let got = alpha(&units, Level::Ordinal).unwrap();
    let values: Vec<f64> = units
        .iter()
        .filter(|u| u.len() >= 2)
        .flatten()
        .copied()
        .collect();
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    let rank = |v: f64| {
        let below = sorted.partition_point(|&x| x < v) as f64;
        let equal = sorted.partition_point(|&x| x <= v) as f64 - below;
        below + equal / 2.0
    };
    let n = values.len() as f64;
    let mut observed = 0.0;
    for unit in units.iter().filter(|u| u.len() >= 2) {
        let m = unit.len() as f64;
        for &a in unit {
            for &b in unit {
                observed += (rank(a) - rank(b)).powi(2) / (m - 1.0);
            }
        }
    }
    let mut expected = 0.0;
    for &a in &values {
        for &b in &values {
            expected += (rank(a) - rank(b)).powi(2);
        }
    }
    let want = 1.0 - (n - 1.0) * observed / expected;
    assert!(
        (got.alpha.unwrap() - want).abs() < 1e-12,
        "{:?} against {want}",
        got.alpha
    );
}

#[test]
fn weights_of_one_reproduce_the_estimate_and_weights_duplicate_units() {
    let units = reference_units();
    for level in Level::ALL {
        let p = Prepared::new(&units, level).unwrap();
        let mut partial = Partial::default();
        let ones = vec![1u32; p.pairable_units()];
        let a = p.evaluate(None, &mut partial).alpha().unwrap();
        let b = p.evaluate(Some(&ones), &mut partial).alpha().unwrap();
        assert!((a - b).abs() < 1e-12);

        // Weight 2 on unit 0 equals the data with unit 0 written twice.
        let mut twice = ones.clone();
        twice[0] = 2;
        let weighted = p.evaluate(Some(&twice), &mut partial).alpha().unwrap();
        let mut dup = Units::new();
        let pairable: Vec<&[f64]> = units.iter().filter(|u| u.len() >= 2).collect();
        dup.push_unit(pairable[0]).unwrap();
        for u in &pairable {
            dup.push_unit(u).unwrap();
        }
        let direct = alpha(&dup, level).unwrap().alpha.unwrap();
        assert!((weighted - direct).abs() < 1e-12, "{level}");
    }
}

#[test]
fn kalpha_cells_sum_to_one_and_reproduce_observed_disagreement() {
    for level in Level::ALL {
        let p = Prepared::coded(&reference_units(), level).unwrap();
        let cells = p.coincidence_cells().unwrap();
        let total: f64 = cells.iter().map(|c| c.probability).sum();
        assert!((total - 1.0).abs() < 1e-12);
        let d_o: f64 = cells.iter().map(|c| c.probability * c.delta2).sum();
        assert!(
            (d_o - p.estimate().observed_disagreement).abs() < 1e-12,
            "{level}"
        );
    }
}

#[test]
fn level_names_round_trip() {
    for level in Level::ALL {
        assert_eq!(level.name().parse::<Level>(), Ok(level));
    }
    assert!("cardinal".parse::<Level>().is_err());
}
