//! Property tests for Krippendorff's α and its bootstrap (docs/benchmarks.md): invariance to rater order,
//! unit order and relabelling; α = 1 under perfect agreement; bounds; seeded reproducibility.
//! The fast implementation is also checked against a naive one written straight from the
//! coincidence-matrix definition in REFERENCE.md.

use calibench::input::reliability::{self, Layout};
use calibench::stats::alpha::{alpha, AlphaError, Level, Units};
use calibench::stats::bootstrap::{interval, Method, Plan};
use proptest::prelude::*;

/// Reliability data as rows of units, each with one optional value per rater, values 0..5.
fn matrix() -> impl Strategy<Value = Vec<Vec<Option<u8>>>> {
    (2usize..6, 1usize..25).prop_flat_map(|(raters, units)| {
        prop::collection::vec(
            prop::collection::vec(prop::option::weighted(0.8, 0u8..5), raters),
            units,
        )
    })
}

fn to_units(rows: &[Vec<Option<u8>>]) -> Units {
    let rows: Vec<Vec<Option<f64>>> = rows
        .iter()
        .map(|r| r.iter().map(|v| v.map(f64::from)).collect())
        .collect();
    Units::from_rows(&rows).unwrap()
}

/// α from the dense coincidence matrix, exactly as REFERENCE.md writes it. Only for tests: it
/// is O(V²) per unit.
fn naive_alpha(rows: &[Vec<Option<u8>>], level: Level) -> Option<Option<f64>> {
    const V: usize = 5;
    let mut o = [[0.0f64; V]; V];
    for row in rows {
        let vals: Vec<usize> = row.iter().flatten().map(|&v| v as usize).collect();
        let m = vals.len();
        if m < 2 {
            continue;
        }
        for i in 0..m {
            for j in 0..m {
                if i != j {
                    o[vals[i]][vals[j]] += 1.0 / (m as f64 - 1.0);
                }
            }
        }
    }
    let nc: Vec<f64> = (0..V).map(|c| o[c].iter().sum()).collect();
    let n: f64 = nc.iter().sum();
    if n == 0.0 {
        return None;
    }
    let delta2 = |c: usize, k: usize| -> f64 {
        match level {
            Level::Nominal => f64::from(u8::from(c != k)),
            Level::Interval => ((c as f64) - (k as f64)).powi(2),
            Level::Ratio => {
                let (a, b) = (c as f64, k as f64);
                if a + b == 0.0 {
                    0.0
                } else {
                    ((a - b) / (a + b)).powi(2)
                }
            }
            Level::Ordinal => {
                let (lo, hi) = (c.min(k), c.max(k));
                let s: f64 = (lo..=hi).map(|g| nc[g]).sum();
                (s - (nc[c] + nc[k]) / 2.0).powi(2)
            }
        }
    };
    let (mut num, mut den) = (0.0, 0.0);
    for c in 0..V {
        for k in 0..V {
            num += o[c][k] * delta2(c, k);
            den += nc[c] * nc[k] * delta2(c, k);
        }
    }
    if nc.iter().filter(|&&x| x > 0.0).count() <= 1 {
        return Some(None);
    }
    Some(Some(1.0 - (n - 1.0) * num / den))
}

fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => (x - y).abs() < 1e-9,
        (None, None) => true,
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn agrees_with_the_naive_coincidence_matrix(rows in matrix()) {
        for level in Level::ALL {
            let fast = alpha(&to_units(&rows), level);
            match naive_alpha(&rows, level) {
                None => prop_assert_eq!(fast, Err(AlphaError::NoPairableUnit)),
                Some(want) => {
                    let got = fast.unwrap().alpha;
                    prop_assert!(close(got, want), "{}: {:?} vs {:?}", level, got, want);
                }
            }
        }
    }

    #[test]
    fn invariant_to_rater_and_unit_order(rows in matrix(), seed in any::<u64>()) {
        let mut shuffled = rows.clone();
        // A deterministic shuffle of units, and a rotation of raters within every unit.
        let k = (seed as usize) % shuffled.len().max(1);
        shuffled.rotate_left(k);
        shuffled.reverse();
        for row in &mut shuffled {
            let r = (seed as usize / 7) % row.len();
            row.rotate_right(r);
        }
        for level in Level::ALL {
            let a = alpha(&to_units(&rows), level).ok().map(|e| e.alpha);
            let b = alpha(&to_units(&shuffled), level).ok().map(|e| e.alpha);
            prop_assert!(a.is_some() == b.is_some());
            if let (Some(a), Some(b)) = (a, b) {
                prop_assert!(close(a, b), "{}: {:?} vs {:?}", level, a, b);
            }
        }
    }

    #[test]
    fn invariant_to_relabelling_raters_in_a_long_file(rows in matrix()) {
        let csv = |name: &dyn Fn(usize) -> String| {
            let mut s = String::from("unit,rater,value\n");
            for (u, row) in rows.iter().enumerate() {
                for (r, v) in row.iter().enumerate() {
                    let v = v.map_or("NA".to_string(), |v| v.to_string());
                    s += &format!("u{u},{},{v}\n", name(r));
                }
            }
            s
        };
        let plain = csv(&|r| format!("rater{r}"));
        let renamed = csv(&|r| format!("judge-{}", 100 - r));
        for level in Level::ALL {
            let a = reliability::read("a", plain.as_bytes(), Layout::Auto, level).unwrap();
            let b = reliability::read("b", renamed.as_bytes(), Layout::Auto, level).unwrap();
            let (a, b) = (alpha(&a.units, level).ok(), alpha(&b.units, level).ok());
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn nominal_is_invariant_to_relabelling_categories(rows in matrix()) {
        // A bijection of the five categories onto arbitrary labels.
        let relabelled: Vec<Vec<Option<u8>>> = rows
            .iter()
            .map(|r| r.iter().map(|v| v.map(|x| [3, 0, 4, 1, 2][x as usize])).collect())
            .collect();
        let a = alpha(&to_units(&rows), Level::Nominal).ok().map(|e| e.alpha);
        let b = alpha(&to_units(&relabelled), Level::Nominal).ok().map(|e| e.alpha);
        prop_assert!(a.is_some() == b.is_some());
        if let (Some(a), Some(b)) = (a, b) {
            prop_assert!(close(a, b));
        }
    }

    #[test]
    fn perfect_agreement_gives_one(values in prop::collection::vec((0u8..5, 2usize..6), 2..20)) {
        prop_assume!(values.iter().any(|v| v.0 != values[0].0));
        let rows: Vec<Vec<Option<u8>>> = values.iter().map(|&(v, m)| vec![Some(v); m]).collect();
        for level in Level::ALL {
            let e = alpha(&to_units(&rows), level).unwrap();
            prop_assert!(close(e.alpha, Some(1.0)), "{}: {:?}", level, e.alpha);
        }
    }

    #[test]
    fn alpha_stays_within_minus_one_and_one(rows in matrix()) {
        for level in Level::ALL {
            if let Ok(Some(a)) = alpha(&to_units(&rows), level).map(|e| e.alpha) {
                prop_assert!((-1.0..=1.0 + 1e-12).contains(&a), "{}: {}", level, a);
            }
        }
    }

    #[test]
    fn bootstrap_is_bounded_and_reproducible(rows in matrix(), seed in any::<u64>()) {
        let units = to_units(&rows);
        prop_assume!(alpha(&units, Level::Interval).is_ok());
        for method in [Method::Units, Method::Kalpha] {
            for level in Level::ALL {
                let plan = |threads| Plan { method, replicates: 60, seed, threads };
                let a = interval(&units, level, rows[0].len(), plan(1)).unwrap();
                let b = interval(&units, level, rows[0].len(), plan(3)).unwrap();
                prop_assert_eq!(&a, &b);
                for bound in [a.ci.lower, a.ci.upper].into_iter().flatten() {
                    prop_assert!((-1.0..=1.0 + 1e-12).contains(&bound), "{:?} {}: {}", method, level, bound);
                }
            }
        }
    }
}
