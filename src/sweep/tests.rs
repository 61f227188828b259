use super::*;

#[test]
fn slots_count_from_zero_in_order() {
    assert_eq!(
        (review::SURFACED, review::REJECTED, review::LEN),
        (0, 8, 11)
    );
    assert_eq!((queries::N, queries::BIN, queries::LEN), (0, 8, 38));
}

fn unit(pairs: &[(usize, f64)]) -> Vec<f64> {
    let mut u = vec![0.0; review::LEN];
    for &(i, x) in pairs {
        u[i] = x;
    }
    u
}

#[test]
fn values_are_lists_or_inclusive_ranges_rounded_to_nine_decimals() {
    let v: Vary = "review.actionable_from=25, 50,75".parse().unwrap();
    assert_eq!(v.key, "review.actionable_from");
    assert_eq!(v.values, ["25", "50", "75"]);
    let v: Vary = "confidence.recovery_threshold=0.3:0.5:0.05"
        .parse()
        .unwrap();
    assert_eq!(v.values, ["0.3", "0.35", "0.4", "0.45", "0.5"]);
    let v: Vary = "review.gate=50:100:25".parse().unwrap();
    assert_eq!(v.values, ["50", "75", "100"]);
    // A stop the steps do not land on is not passed.
    let v: Vary = "k=0:1:0.3".parse().unwrap();
    assert_eq!(v.values, ["0.0", "0.3", "0.6", "0.9"]);
}

#[test]
fn bad_grids_are_refused_with_what_to_write() {
    let err = |s: &str| s.parse::<Vary>().unwrap_err();
    for (vary, says) in [
        ("k=0.5:0.3:0.1", "inverted"),
        ("k=0:1:0", "more than 0"),
        ("k=0:1:-1", "more than 0"),
        ("k=0:1", "START:STOP:STEP"),
        ("k=0:100000:1", "at most 10000"),
        ("k=1,,2", "empty value"),
        ("k=", "empty value"),
        ("novalues", "KEY=VALUES"),
        (".k=1", "dotted key"),
    ] {
        assert!(err(vary).contains(says), "{vary}: {}", err(vary));
    }
    let many = |k: &str| Vary {
        key: k.into(),
        values: (0..101).map(|i| i.to_string()).collect(),
    };
    let e = grid(&[many("a"), many("b")]).unwrap_err();
    assert!(
        e.contains("101 × 101") && e.contains("at most 10000"),
        "{e}"
    );
    let e = grid(&[many("a"), many("a")]).unwrap_err();
    assert!(e.contains("varied twice"), "{e}");
}

#[test]
fn the_grid_is_the_product_with_the_first_key_slowest() {
    let a = Vary {
        key: "a".into(),
        values: vec!["1".into(), "2".into()],
    };
    let b = Vary {
        key: "b".into(),
        values: vec!["x".into(), "y".into(), "z".into()],
    };
    let g = grid(&[a, b]).unwrap();
    assert_eq!(g.len(), 6);
    assert_eq!(g[0], ["1", "x"]);
    assert_eq!(g[2], ["1", "z"]);
    assert_eq!(g[3], ["2", "x"]);
}

#[test]
fn figures_of_a_small_grid_point_by_hand() {
    // Two targets. A: 2 actionable (composites 0.8, 0.4), 1 FYI, 1 dropped; confirmed
    // (≥ 0.5): the 0.8 actionable and one dropped. B: 1 actionable (0.9), 0 FYI.
    let units = vec![
        unit(&[
            (review::SURFACED, 3.0),
            (review::ACTIONABLE, 2.0),
            (review::FYI, 1.0),
            (review::DROPPED, 1.0),
            (review::JUDGED_ACTIONABLE, 2.0),
            (review::COMPOSITE_SUM, 1.2),
            (review::CONFIRMED, 2.0),
            (review::CONFIRMED_ACTIONABLE, 1.0),
        ]),
        unit(&[
            (review::SURFACED, 1.0),
            (review::ACTIONABLE, 1.0),
            (review::JUDGED_ACTIONABLE, 1.0),
            (review::COMPOSITE_SUM, 0.9),
            (review::CONFIRMED, 1.0),
            (review::CONFIRMED_ACTIONABLE, 1.0),
        ]),
    ];
    let e = estimate(Side::Review, &units, None, 200, 7);
    let v = |name: &str| e[figure_index(Side::Review, name, "").unwrap()].value;
    assert_eq!(v("surfaced"), Some(4.0));
    assert_eq!(v("actionable"), Some(3.0));
    assert_eq!(v("fyi"), Some(1.0));
    assert_eq!(v("dropped"), Some(1.0));
    assert_eq!(v("judged_actionable"), Some(3.0));
    assert!((v("precision").unwrap() - 0.7).abs() < 1e-9); // (1.2 + 0.9) / 3
    assert!((v("recall").unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(v("rejected"), Some(0.0));
    // A resample holds two draws of the two targets: actionable is 2, 3 or 4 (targets
    // A,A → 4; A,B → 3; B,B → 2), so the interval lies in [2, 4] and spans it here.
    let ci = e[1].ci.unwrap();
    assert_eq!(ci, [2.0, 4.0]);
    // Same seed, same figures; the order of units does not matter to the point figures.
    assert_eq!(e, estimate(Side::Review, &units, None, 200, 7));
    let picked = estimate(Side::Review, &units, Some(&[1]), 50, 7);
    assert_eq!(picked[1].value, Some(1.0));
    assert_eq!(picked[1].ci, Some([1.0, 1.0]));
}

#[test]
fn query_figures_and_ece_from_bins() {
    // One query, two runs: fired once (unnecessarily), first pass right once of two,
    // final right once of two, confidences 0.9 and 0.3 in bins 9 and 3.
    let mut u = vec![0.0; queries::LEN];
    u[queries::N] = 2.0;
    u[queries::FIRED] = 1.0;
    u[queries::UNNECESSARY] = 1.0;
    u[queries::FIRST_PASS_LABELLED] = 2.0;
    u[queries::FIRST_PASS_RIGHT] = 1.0;
    u[queries::LABELLED] = 2.0;
    u[queries::RIGHT] = 1.0;
    u[queries::CONFIDENCE_SUM] = 1.2;
    // bin 9: labelled 1, conf 0.9, right 1; bin 3: labelled 1, conf 0.3, right 0.
    u[queries::BIN + 27] = 1.0;
    u[queries::BIN + 28] = 0.9;
    u[queries::BIN + 29] = 1.0;
    u[queries::BIN + 9] = 1.0;
    u[queries::BIN + 10] = 0.3;
    let e = estimate(Side::Queries, &[u], None, 10, 1);
    let v: Vec<Option<f64>> = e.iter().map(|x| x.value).collect();
    assert_eq!(v[0], Some(0.5));
    assert_eq!(v[1], Some(0.5));
    assert_eq!(v[2], Some(0.5));
    assert_eq!(v[3], Some(0.5));
    assert!((v[4].unwrap() - 0.6).abs() < 1e-12);
    // ECE = (|1 − 0.9| + |0 − 0.3|) / 2 = 0.2
    assert!((v[5].unwrap() - 0.2).abs() < 1e-12);
}

#[test]
fn a_requirement_is_met_only_when_the_unsafe_bound_clears_it() {
    let r: Requirement = "precision>=0.6".parse().unwrap();
    let at = |lo, hi| Estimate {
        value: Some(0.7),
        ci: Some([lo, hi]),
    };
    assert!(r.met_by(&at(0.6, 0.8))); // the bound reached
    assert!(!r.met_by(&at(0.599_999, 0.8))); // the estimate clears it; the bound does not
    assert!(!r.met_by(&Estimate {
        value: Some(0.9),
        ci: None
    }));
    let r: Requirement = "recovery_gate_rate<=0.2".parse().unwrap();
    assert!(r.met_by(&at(0.1, 0.2)));
    assert!(!r.met_by(&at(0.1, 0.200_001)));
    assert!("x>0.2".parse::<Requirement>().is_err());
    assert!("x>=y"
        .parse::<Requirement>()
        .unwrap_err()
        .contains("not a number"));
    let e = figure_index(Side::Queries, "precision", "--require").unwrap_err();
    assert!(e.contains("final_accuracy") && e.contains("queries"), "{e}");
}

fn point(actionable: f64, precision_ci: [f64; 2]) -> Vec<Estimate> {
    let mut p: Vec<Estimate> = REVIEW_FIGURES
        .iter()
        .map(|_| Estimate {
            value: Some(0.0),
            ci: Some([0.0, 0.0]),
        })
        .collect();
    p[1] = Estimate {
        value: Some(actionable),
        ci: Some([actionable - 1.0, actionable + 1.0]),
    };
    p[4] = Estimate {
        value: Some((precision_ci[0] + precision_ci[1]) / 2.0),
        ci: Some(precision_ci),
    };
    p
}

#[test]
fn the_preferred_point_among_those_that_meet_every_requirement_ties_to_the_first() {
    let points = vec![
        point(5.0, [0.4, 0.7]), // most actionable, but precision's lower bound is short
        point(3.0, [0.6, 0.8]),
        point(3.0, [0.65, 0.9]), // ties with the second: the first wins
        point(1.0, [0.8, 0.9]),
    ];
    let req = vec!["precision>=0.6".parse().unwrap()];
    let prefer = Side::Review.default_prefer();
    // The arm's own setting: fewer actionable findings (2), meeting the requirement.
    let current = point(2.0, [0.7, 0.8]);
    assert_eq!(
        choose(Side::Review, &points, &current, &req, &prefer),
        Some(Choice::Recommended(1))
    );
    let prefer: Prefer = "max:precision".parse().unwrap();
    assert_eq!(
        choose(Side::Review, &points, &current, &req, &prefer),
        Some(Choice::Recommended(3))
    );
    // Preferring a figure no point has, without requirements: nothing to recommend.
    let blank: Vec<Vec<Estimate>> = points
        .iter()
        .map(|p| {
            p.iter()
                .map(|e| Estimate {
                    value: None,
                    ci: e.ci,
                })
                .collect()
        })
        .collect();
    assert_eq!(choose(Side::Review, &blank, &current, &[], &prefer), None);
    // Nothing meets precision >= 0.85: the closest is the one whose lower bound is nearest.
    let req: Vec<Requirement> = vec!["precision>=0.85".parse().unwrap()];
    assert_eq!(
        choose(
            Side::Review,
            &points,
            &current,
            &req,
            &Side::Review.default_prefer()
        ),
        Some(Choice::Closest(3, req.clone()))
    );
}

#[test]
fn a_point_that_only_ties_the_current_setting_keeps_it() {
    let req: Vec<Requirement> = vec!["precision>=0.6".parse().unwrap()];
    let prefer = Side::Review.default_prefer();
    let points = vec![point(3.0, [0.6, 0.8]), point(3.0, [0.7, 0.9])];
    // The current setting gives 3 actionable too, and meets the requirement: keep it.
    let current = point(3.0, [0.65, 0.8]);
    assert_eq!(
        choose(Side::Review, &points, &current, &req, &prefer),
        Some(Choice::Keep(0))
    );
    // One more actionable finding at a point: recommended.
    let current = point(2.0, [0.65, 0.8]);
    assert_eq!(
        choose(Side::Review, &points, &current, &req, &prefer),
        Some(Choice::Recommended(0))
    );
    // A current setting that misses the requirement is no setting to keep.
    let current = point(3.0, [0.5, 0.8]);
    assert_eq!(
        choose(Side::Review, &points, &current, &req, &prefer),
        Some(Choice::Recommended(0))
    );
    // Every point the same: the key moves nothing the sweep measures.
    assert!(all_tie(&[point(3.0, [0.6, 0.8]), point(3.0, [0.6, 0.8])]));
    assert!(!all_tie(&points));
    // The held-out check: what a point misses there.
    assert_eq!(misses(Side::Review, &point(3.0, [0.5, 0.7]), &req), req);
    assert!(misses(Side::Review, &point(3.0, [0.6, 0.7]), &req).is_empty());
}

#[test]
fn the_holdout_is_a_seeded_partition() {
    let ids: Vec<String> = (0..40).map(|i| format!("t{i}")).collect();
    let split = |ids: &[String], f: f64, seed: u64| split(ids, f, seed, "targets");
    let (a, b) = split(&ids, 0.3, 42).unwrap();
    assert_eq!(b.len(), 12);
    assert_eq!(a.len(), 28);
    let mut all: Vec<usize> = a.iter().chain(&b).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..40).collect::<Vec<_>>());
    assert_eq!(split(&ids, 0.3, 42).unwrap(), (a.clone(), b.clone()));
    // The same ids listed in another order are split the same way.
    let mut rev = ids.clone();
    rev.reverse();
    let (_, rb) = split(&rev, 0.3, 42).unwrap();
    let held: Vec<&String> = rb.iter().map(|&i| &rev[i]).collect();
    let held_before: Vec<&String> = b.iter().map(|&i| &ids[i]).collect();
    let (mut x, mut y) = (held, held_before);
    x.sort();
    y.sort();
    assert_eq!(x, y);
    assert_ne!(
        split(&ids, 0.3, 43).unwrap().1,
        b,
        "another seed, another split"
    );
    assert!(split(&ids, 0.0, 1).unwrap_err().contains("between 0 and 1"));
    assert!(split(&ids, 1.0, 1).unwrap_err().contains("between 0 and 1"));
    // Parts of fewer than 10: a bootstrap interval over them means little.
    let e = split(&ids[..19], 0.5, 1).unwrap_err();
    assert!(
        e.contains("of 19 targets leaves 9 to choose on and 10 held out"),
        "{e}"
    );
    assert!(e.contains("at least 10 targets in each part"), "{e}");
    assert!(split(&ids[..20], 0.5, 1).is_ok());
    // No hold-out: none with requirements on fewer than 10 units in all.
    assert_eq!(parts(&ids[..4], Some(0.0), false, 1, "targets"), Ok(None));
    assert_eq!(parts(&ids[..4], None, false, 1, "targets"), Ok(None));
    let e = parts(&ids[..4], Some(0.0), true, 1, "targets").unwrap_err();
    assert!(
        e.contains("4 targets are too few for one (at least 10)"),
        "{e}"
    );
    assert_eq!(parts(&ids[..10], Some(0.0), true, 1, "targets"), Ok(None));
}

#[test]
fn ece_is_compared_over_the_whole_set_by_a_paired_bootstrap() {
    // One labelled query per unit: (bin, confidence, right).
    let q = |bin: usize, conf: f64, right: f64| {
        let mut u = vec![0.0; queries::LEN];
        u[queries::N] = 1.0;
        u[queries::LABELLED] = 1.0;
        u[queries::RIGHT] = right;
        u[queries::CONFIDENCE_SUM] = conf;
        let at = queries::BIN + 3 * bin;
        (u[at], u[at + 1], u[at + 2]) = (1.0, conf, right);
        u
    };
    // Current: both at 0.9, one right: ECE |1 − 1.8| / 2 = 0.4. Recommended: the wrong one
    // at 0.2: (|1 − 0.9| + |0 − 0.2|) / 2 = 0.15.
    let current = vec![q(9, 0.9, 1.0), q(9, 0.9, 0.0)];
    let recommended = vec![q(9, 0.9, 1.0), q(2, 0.2, 0.0)];
    let v = versus(Side::Queries, &current, &recommended, None, 500, 3);
    let (_, ece) = v
        .iter()
        .find(|(n, _)| *n == "ece")
        .expect("ECE is compared");
    assert!((ece.baseline - 0.4).abs() < 1e-12 && (ece.treatment - 0.15).abs() < 1e-12);
    assert!((ece.delta + 0.25).abs() < 1e-12);
    assert_eq!(ece.test, crate::stats::test::Test::Bootstrap);
    assert_eq!((ece.pairs, ece.mde), (2, None));
    let [lo, hi] = ece.ci.unwrap();
    assert!(lo <= ece.delta && ece.delta <= hi, "{lo} {hi}");
    assert!(ece.p_value.is_some());
}

#[test]
fn the_recommendation_is_compared_with_the_current_setting_unit_by_unit() {
    let current = vec![
        unit(&[(review::ACTIONABLE, 1.0)]),
        unit(&[(review::ACTIONABLE, 2.0)]),
        unit(&[(review::ACTIONABLE, 0.0)]),
    ];
    let recommended = vec![
        unit(&[(review::ACTIONABLE, 2.0)]),
        unit(&[(review::ACTIONABLE, 4.0)]),
        unit(&[(review::ACTIONABLE, 1.0)]),
    ];
    let v = versus(Side::Review, &current, &recommended, None, 100, 3);
    let (_, d) = v.iter().find(|(n, _)| *n == "actionable").unwrap();
    assert_eq!(d.pairs, 3);
    assert!((d.baseline - 1.0).abs() < 1e-12);
    assert!((d.treatment - 7.0 / 3.0).abs() < 1e-12);
    assert!((d.delta - 4.0 / 3.0).abs() < 1e-12);
    // Differences 1, 2, 1: mean 4/3, sd 1/√3, t = 4.0 on 2 df, the paired t-test's
    // p = 1 − 4/√(4 + 16)·… = 0.057191 (mpmath's regularized incomplete beta).
    assert!((d.p_value.unwrap() - 0.057_191).abs() < 1e-6);
    // Precision is undefined on every unit (no judged finding): no pair, no row.
    assert!(v.iter().all(|(n, _)| *n != "precision"));
    // Only the units chosen are compared.
    let v = versus(Side::Review, &current, &recommended, Some(&[0, 1]), 100, 3);
    let (_, d) = v.iter().find(|(n, _)| *n == "actionable").unwrap();
    assert_eq!(d.pairs, 2);
}

/// Hand-worked frontier of cost (lower is better) and precision (higher): `b` is beaten by
/// `a` on both, each interval wholly on the better side; `c`'s cost interval overlaps `a`'s,
/// so nothing beats it on both; `d` has no precision and is not placed.
#[test]
fn the_frontier_is_judged_on_intervals() {
    let fig = |name: &str| figure_index(Side::Review, name, "--frontier").unwrap();
    let (cost, precision) = (fig("cost_usd"), fig("precision"));
    let point = |c: [f64; 2], p: Option<[f64; 2]>| -> Vec<Estimate> {
        let mut e = vec![
            Estimate {
                value: None,
                ci: None
            };
            REVIEW_FIGURES.len()
        ];
        e[cost] = Estimate {
            value: Some((c[0] + c[1]) / 2.0),
            ci: Some(c),
        };
        e[precision] = Estimate {
            value: p.map(|p| (p[0] + p[1]) / 2.0),
            ci: p,
        };
        e
    };
    let points = [
        point([1.0, 2.0], Some([0.8, 0.9])),
        point([3.0, 4.0], Some([0.5, 0.6])),
        point([1.5, 3.5], Some([0.5, 0.6])),
        point([0.1, 0.2], None),
    ];
    assert_eq!(
        frontier(Side::Review, &points, [cost, precision]),
        [true, false, true, false]
    );
    // Cost is lower-better, precision higher-better: the directions come from the figures.
    assert_eq!(REVIEW_FIGURES[cost].better, crate::replay::Better::Lower);
    assert_eq!(
        REVIEW_FIGURES[precision].better,
        crate::replay::Better::Higher
    );
    // Cost per target: the sums over targets of each one's cost, over the targets costed.
    let u = unit(&[(review::COST, 0.3), (review::COSTED, 1.0)]);
    let v = unit(&[(review::COST, 0.0), (review::COSTED, 1.0)]);
    let sums: Vec<f64> = u.iter().zip(&v).map(|(a, b)| a + b).collect();
    assert_eq!(REVIEW_FIGURES[cost].value(&sums), Some(0.15));
    assert_eq!(REVIEW_FIGURES[cost].value(&unit(&[])), None);
    assert!("cost_usd".parse::<Frontier>().is_err());
    assert!("precision:precision".parse::<Frontier>().is_err());
    assert_eq!(
        "cost_usd:precision"
            .parse::<Frontier>()
            .unwrap()
            .to_string(),
        "cost_usd:precision"
    );
}
