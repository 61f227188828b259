use super::*;

#[test]
fn dispersion_counts_entropy_and_coverage() {
    assert_eq!(dispersion(&[]), (0, 0.0, 0));
    let (d, h, v) = dispersion(&[75.0, 75.0, 75.0, 75.0]);
    assert_eq!((d, h, v), (1, 0.0, 1));
    // Two values, half each: 1 bit; covering 80% needs both.
    let (d, h, v) = dispersion(&[50.0, 75.0, 50.0, 75.0]);
    assert_eq!((d, v), (2, 2));
    assert!((h - 1.0).abs() < 1e-12);
    // 8 of 10 on one value: one value covers 80%.
    let mut x = vec![0.6; 8];
    x.extend([0.65, 0.72]);
    assert_eq!(dispersion(&x).2, 1);
    // 0.55 + 0.10 and 0.65 are one value.
    assert_eq!(dispersion(&[0.55 + 0.10, 0.65]).0, 1);
}

#[test]
fn value_labels() {
    assert_eq!(value_label(75.0, Scale::Anchor, 0.05), "75");
    assert_eq!(value_label(0.65, Scale::Float, 0.05), "(0.60, 0.65]");
    assert_eq!(value_label(0.0, Scale::Float, 0.05), "[0.00, 0.05]");
    assert_eq!(value_label(0.7, Scale::Float, 0.1), "(0.60, 0.70]");
}

fn target(name: &str, run: u32, merged: usize, corroborated: usize, raw: &[f64]) -> TargetMetrics {
    let mut figures: Vec<Figure> = REVIEW_METRICS
        .iter()
        .map(|m| match m.kind {
            _ if m.precision => Figure::Absent,
            Kind::Count => Figure::Count(0),
            Kind::Real => Figure::Real(0.0),
            Kind::Optional => Figure::optional(None),
            Kind::ByValue => Figure::ByValue(Box::default()),
            Kind::OptionalCount | Kind::Label => Figure::Absent,
        })
        .collect();
    figures[MERGED.index()] = Figure::Count(merged);
    figures[CORROBORATED.index()] = Figure::Count(corroborated);
    TargetMetrics {
        target: name.to_string(),
        run,
        figures,
        calibration_sums: BTreeMap::new(),
        values: value_counts(raw.iter().copied()),
    }
}

// The arm's per-target means, worked out from targets numbered once, are the named ones to
// the bit and in their order: targets interleaved, runs of one target far apart, and an
// optional figure first known on a target's later run (its place is where its first value
// is, not where the target first appears).
#[test]
fn grouped_means_are_by_targets_means() {
    let optional = REVIEW_METRICS
        .iter()
        .position(|m| m.kind == Kind::Optional && !m.precision)
        .expect("an optional figure");
    let entries = [
        ("a", 0, 3, None),
        ("b", 0, 5, Some(0.1)),
        ("a", 1, 4, Some(0.2)),
        ("c", 0, 7, Some(0.3)),
        ("b", 1, 1, Some(0.7)),
        ("a", 2, 9, Some(0.1)),
        ("d", 0, 2, None),
    ];
    let per_target: Vec<TargetMetrics> = entries
        .iter()
        .map(|&(name, run, merged, x)| {
            let mut t = target(name, run, merged, 0, &[]);
            t.figures[optional] = Figure::optional(x);
            t
        })
        .collect();
    let groups = TargetGroups::of(&per_target);
    for id in [MERGED, Id(optional)] {
        let by_name = by_target_of(&per_target, id);
        let want: Vec<(&str, u64)> = (by_name.iter())
            .map(|(t, v)| (t.as_str(), v.to_bits()))
            .collect();
        let got: Vec<(&str, u64)> = (groups.means_of(&per_target, id).iter())
            .map(|&(g, v)| (groups.name(&per_target, g), v.to_bits()))
            .collect();
        assert_eq!(got, want, "{}", REVIEW_METRICS[id.index()].name);
        let values: Vec<u64> = want.iter().map(|(_, v)| *v).collect();
        let means = groups.means(&per_target, id);
        assert_eq!(
            means.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            values
        );
    }
    // b's mean comes before a's for the optional figure: b has the first value.
    assert_eq!(by_target_of(&per_target, Id(optional))[0].0, "b");
    // Worked by hand: each target's values summed in run order, divided by their count.
    let by_hand = |id: Id, want: &[(&str, f64)]| {
        let got: Vec<(String, u64)> = (by_target_of(&per_target, id).into_iter())
            .map(|(t, v)| (t, v.to_bits()))
            .collect();
        let want: Vec<(String, u64)> = (want.iter())
            .map(|(t, v)| (t.to_string(), v.to_bits()))
            .collect();
        assert_eq!(got, want);
    };
    by_hand(
        MERGED,
        &[("a", 16.0 / 3.0), ("b", 3.0), ("c", 7.0), ("d", 2.0)],
    );
    by_hand(
        Id(optional),
        &[
            ("b", (0.1 + 0.7) / 2.0),
            ("a", (0.2 + 0.1) / 2.0),
            ("c", 0.3),
        ],
    );
}

/// A run without the precision controls writes none of their figures and reads back as
/// such; a run with them writes each one, lint-ignore's as null when unknown.
#[test]
fn precision_figures_are_written_only_when_replayed() {
    let plain = target("a", 0, 3, 1, &[75.0]);
    let json = serde_json::to_value(&plain).unwrap();
    for m in REVIEW_METRICS.iter() {
        assert_eq!(json.get(m.name).is_some(), !m.precision, "{}", m.name);
    }
    let back: TargetMetrics = serde_json::from_value(json).unwrap();
    assert_eq!(back.figures, plain.figures);
    let arm = arm_metrics("anchored", Scale::Anchor, vec![plain], BTreeMap::new());
    assert!(!arm.figures.controls);
    let json = serde_json::to_value(&arm.figures).unwrap();
    assert!(json.get("externalized").is_none() && json.get("merged").is_some());
    let back: ArmFigures = serde_json::from_value(json).unwrap();
    assert_eq!(back, arm.figures);

    let mut with = target("a", 0, 3, 1, &[75.0]);
    for (i, m) in REVIEW_METRICS
        .iter()
        .enumerate()
        .filter(|(_, m)| m.precision)
    {
        with.figures[i] = match m.kind {
            Kind::Count => Figure::Count(2),
            Kind::OptionalCount => Figure::optional_count(None),
            _ => Figure::label(Some("closed")),
        };
    }
    let json = serde_json::to_value(&with).unwrap();
    assert_eq!(json["externalized"], 2);
    assert!(json["on_suppressed_line"].is_null());
    assert_eq!(json["skipped"], "closed");
    let arm = arm_metrics("anchored", Scale::Anchor, vec![with], BTreeMap::new());
    assert!(arm.figures.controls);
    assert_eq!(arm.figures.value(EXTERNALIZED.sum()), Some(2.0));
    // Known for no target: unknown for the arm, written as null, never 0.
    assert_eq!(arm.figures.value(ON_SUPPRESSED_LINE.sum()), None);
    let json = serde_json::to_value(&arm.figures).unwrap();
    assert!(json.get("on_suppressed_line").is_some_and(|v| v.is_null()));
    let back: ArmFigures = serde_json::from_value(json).unwrap();
    assert_eq!(back, arm.figures);
}

#[test]
fn arm_pools_raw_values_and_rates_over_targets_and_runs() {
    // Target a twice (runs average), target b once.
    let per_target = vec![
        target("a", 0, 4, 2, &[50.0, 75.0, 75.0]),
        target("a", 1, 6, 2, &[75.0]),
        target("b", 0, 5, 1, &[100.0, 50.0]),
    ];
    let arm = arm_metrics("anchored", Scale::Anchor, per_target, BTreeMap::new());
    // Every raw value of every run: the histogram counts findings, not means.
    let values: Vec<(f64, usize)> = arm.values.iter().map(|v| (v.value, v.count)).collect();
    assert_eq!(values, vec![(50.0, 2), (75.0, 3), (100.0, 1)]);
    // merged = 5 (a, mean of 4 and 6) + 5 (b); corroborated = 2 + 1.
    assert!((arm.corroboration_rate - 0.3).abs() < 1e-12);
    let [lo, hi] = arm.rate_ci.corroboration_rate.unwrap();
    assert!(lo < 0.3 && 0.3 < hi);
    assert_eq!(
        arm.rate_ci.promotion_rate,
        Some([0.0, wilson(0.0, 10.0).unwrap()[1]])
    );
    // Pooled, each (target, run) holds what one read back from metrics.json holds.
    assert!(arm
        .per_target
        .iter()
        .all(|t| t.values.is_empty() && t.calibration_sums.is_empty()));
    // Nothing merged: rates are 0 and have no interval.
    let empty = arm_metrics("anchored", Scale::Anchor, Vec::new(), BTreeMap::new());
    assert_eq!(empty.corroboration_rate, 0.0);
    assert_eq!(empty.rate_ci.corroboration_rate, None);
}

// A run holds one figure per metric for every (target, run) of both arms: two words each.
#[test]
fn a_figure_is_two_words() {
    assert_eq!(
        std::mem::size_of::<Figure>(),
        2 * std::mem::size_of::<usize>()
    );
}

// The optional figures hold their absence in the word their value takes, and give back
// exactly what they were given: every value, NaN and the infinities included, and absence.
#[test]
fn optional_figures_give_back_what_they_were_given() {
    for x in [
        0.0,
        -0.0,
        1.5,
        -7.25e300,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        let held = Figure::optional(Some(x));
        assert_eq!(held.number().map(f64::to_bits), Some(x.to_bits()));
    }
    assert!(Figure::optional(Some(f64::NAN)).number().unwrap().is_nan());
    // The one pattern kept for absence, given as a value, is a NaN still, not absence.
    let absent_bits = f64::from_bits(0x7FF4_0000_0000_0A85);
    assert!(Figure::optional(Some(absent_bits))
        .number()
        .unwrap()
        .is_nan());
    assert_eq!(Figure::optional(None).number(), None);
    assert_eq!(Figure::optional(None), Figure::optional(None));
    assert_ne!(Figure::optional(None), Figure::optional(Some(0.0)));
    for n in [0, 1, 7, usize::MAX - 1] {
        assert_eq!(Figure::optional_count(Some(n)).number(), Some(n as f64));
    }
    assert_eq!(Figure::optional_count(None).number(), None);
    assert_ne!(
        Figure::optional_count(None),
        Figure::optional_count(Some(0))
    );
    assert_eq!(Figure::label(Some("closed")).text(), Some("closed"));
    assert_eq!(Figure::label(None).text(), None);
    // Written and read back as before: null for absence, the value otherwise.
    assert_eq!(
        serde_json::to_string(&Figure::optional(None)).unwrap(),
        "null"
    );
    assert_eq!(
        serde_json::to_string(&Figure::optional(Some(0.25))).unwrap(),
        "0.25"
    );
    assert_eq!(
        serde_json::to_string(&Figure::optional_count(Some(0))).unwrap(),
        "0"
    );
    assert_eq!(
        serde_json::to_string(&Figure::optional_count(None)).unwrap(),
        "null"
    );
    assert_eq!(
        serde_json::to_string(&Figure::label(Some("closed"))).unwrap(),
        "\"closed\""
    );
}
