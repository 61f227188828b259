use super::*;
use crate::policy::{Anchored, FloatGates};

fn anchored(mode: Mode) -> ReviewPolicy {
    let (surface_from, actionable_from, p0_escape) = match mode {
        Mode::Doc => (50.0, 75.0, None),
        Mode::Code => (75.0, 75.0, Some(50.0)),
    };
    ReviewPolicy::Anchored(Anchored {
        scale: Scale::Anchor,
        surface_from,
        actionable_from,
        p0_escape,
        collapse: true,
        promotion: Promotion::Corroboration { boost: 10.0 },
        review_mode: ReviewMode::Interactive,
        demote_reviewers: vec!["testing".into(), "maintainability".into()],
    })
}

fn float_gates() -> ReviewPolicy {
    ReviewPolicy::FloatGates(FloatGates {
        scale: Scale::Float,
        gates: [0.50, 0.60, 0.65, 0.75],
        gate: 0.60,
        p0_gate: 0.50,
        fyi_floor: 0.40,
        auto_apply_from: 0.85,
        promotion: Promotion::Corroboration { boost: 0.10 },
        review_mode: ReviewMode::Interactive,
        demote_reviewers: vec!["testing".into(), "maintainability".into()],
    })
}

fn doc(title: &str, section: &str, sev: Severity, conf: f64) -> Finding {
    Finding {
        id: None,
        claim: Claim {
            title: title.into(),
            severity: sev,
            autofix: Autofix::Manual,
            has_fix: false,
            evidence: Default::default(),
            text_chars: 0,
        },
        confidence: conf,
        location: Location::Doc {
            section: section.into(),
            finding_type: FindingType::Omission,
            premise: None,
        },
    }
}

fn with_premise(mut f: Finding, p: &str) -> Finding {
    if let Location::Doc { premise, .. } = &mut f.location {
        *premise = Some(Box::new(p.into()));
    }
    f
}

fn code(title: &str, file: &str, line: u32, sev: Severity, conf: f64) -> Finding {
    Finding {
        id: None,
        claim: Claim {
            title: title.into(),
            severity: sev,
            autofix: Autofix::GatedAuto,
            has_fix: false,
            evidence: Default::default(),
            text_chars: 0,
        },
        confidence: conf,
        location: Location::Code(CodeSite {
            file: file.into(),
            line,
            owner: Owner::ReviewFixer,
            requires_verification: false,
            pre_existing: false,
        }),
    }
}

/// The reviewers' names as the corpus holds them, for [`refs`].
fn names(returns: &[(&str, Vec<Finding>)]) -> Vec<Arc<str>> {
    returns.iter().map(|(r, _)| Arc::from(*r)).collect()
}

fn refs<'a>(names: &'a [Arc<str>], returns: &'a [(&'a str, Vec<Finding>)]) -> Vec<ReturnRef<'a>> {
    names
        .iter()
        .zip(returns)
        .map(|(r, (_, f))| ReturnRef {
            reviewer: r,
            findings: f,
        })
        .collect()
}

fn run(policy: &ReviewPolicy, mode: Mode, returns: &[(&str, Vec<Finding>)]) -> Vec<Merged> {
    replay(policy, mode, &refs(&names(returns), returns))
}

/// [`run`] under the anchored policy of `mode`.
fn anchored_run(mode: Mode, returns: &[(&str, Vec<Finding>)]) -> Vec<Merged> {
    run(&anchored(mode), mode, returns)
}

#[test]
fn normalize_lowercases_strips_punctuation_and_collapses_space() {
    crate::text::assert_maps(
        normalize,
        &[
            (
                "  Rollback: plan   is\tMISSING! ",
                "rollback plan is missing",
            ),
            ("a-b_c", "abc"),
            ("Ünïcode 2", "ünïcode 2"),
        ],
    );
}

#[test]
fn normalize_is_the_three_step_definition() {
    // The definition, step by step: lowercase, keep alphanumerics and whitespace, collapse.
    let by_steps = |text: &str| {
        let kept: String = text
            .chars()
            .flat_map(char::to_lowercase)
            .filter(|c| c.is_alphanumeric() || c.is_whitespace())
            .collect();
        kept.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    for text in [
        "",
        "   ",
        " - ",
        "a -b",
        "a\u{b}b\u{85}c\u{a0}d\u{3000}e",
        "İstanbul ΣΑΣ ǅ ẞ",
        "x\u{301}y 12½ ٣",
        "\t\nRollback:\r\n plan--is MISSING!\u{2028}",
        "tab\tend\t",
        "v\u{b}tab\u{c}form\u{1c}sep\u{7f}del",
        "ASCII: Rollback -- plan_is   MISSING!\r\n",
    ]
    .into_iter()
    .map(String::from)
    // Every ASCII character, between letters and at either end (the byte-wise route).
    .chain((0u8..128).map(|b| format!("{0}a{0}B{0}", char::from(b))))
    {
        let text = text.as_str();
        assert_eq!(normalize(text), by_steps(text), "{text:?}");
        // A fingerprint is the two normalized texts joined, whatever each one holds.
        for place in ["", " S-1 ", "  "] {
            let joined = format!("{}\u{1f}{}", by_steps(place), by_steps(text));
            assert_eq!(fingerprint_of(place, text), joined, "{place:?} {text:?}");
        }
    }
}

// The memo numbers fingerprints, not addresses: one text held twice, or two texts that
// normalize alike, get one number; texts that differ get their own, whichever is asked
// first; and each number reads back as its fingerprint.
#[test]
fn fingerprints_are_numbered_by_what_they_say() {
    let texts: Vec<String> = [
        "Rollback plan",
        "Rollback plan",
        "ROLLBACK -- plan",
        "Other",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let (place, other_place) = (String::from("S 1"), String::from("s-1"));
    let mut memo = Fingerprints::default();
    let a = memo.of(&place, &texts[0]);
    assert_eq!(memo.of(&place, &texts[0]), a, "the same text asked again");
    assert_eq!(
        memo.of(&place, &texts[1]),
        a,
        "an equal text held elsewhere"
    );
    assert_eq!(
        memo.of(&place, &texts[2]),
        a,
        "a text that normalizes alike"
    );
    let b = memo.of(&place, &texts[3]);
    assert_ne!(a, b);
    let c = memo.of(&other_place, &texts[0]);
    assert_ne!(c, a, "`s-1` normalizes to `s1`, not `s 1`");
    // A prefix of a held text sits at its address: the length tells them apart.
    let d = memo.of(&place, &texts[0][..8]);
    assert_ne!(d, a);
    for (n, (p, t)) in [
        (a, (&place, &texts[0][..])),
        (b, (&place, &texts[3])),
        (c, (&other_place, &texts[0])),
        (d, (&place, &texts[0][..8])),
    ] {
        assert_eq!(memo.text(n), fingerprint_of(p, t));
    }
}

#[test]
fn same_persona_collapse_keeps_the_most_confident_and_caps_the_rest() {
    // One persona files the same premise three times (the seed's 0.68–0.72 symptom, here
    // on anchors): 75, 100, 75. The 100 stays; the two 75s drop to 50 and lose promotion.
    // A second persona corroborates the first 75: without collapse it would go to 100.
    let p = "The motivation is thin";
    let f = |t: &str, c: f64| with_premise(doc(t, "Why", Severity::P2, c), p);
    let out = anchored_run(
        Mode::Doc,
        &[
            (
                "product-lens",
                vec![
                    f("Premise A", 75.0),
                    f("Premise B", 100.0),
                    f("Premise C", 75.0),
                ],
            ),
            ("adversarial-document", vec![f("premise a", 75.0)]),
        ],
    );
    let get = |t: &str| out.iter().find(|m| &*m.claim.title == t).unwrap();
    assert_eq!(get("Premise B").confidence, 100.0);
    let a = get("Premise A");
    assert_eq!((a.confidence_before, a.confidence), (75.0, 75.0));
    assert!(a.corroborated && !a.promotable && !a.promoted);
    assert_eq!(a.tier, Tier::Actionable); // 75 from the corroborating persona
    let c = get("Premise C");
    assert_eq!((c.confidence, c.tier), (50.0, Tier::Fyi));
}

#[test]
fn collapse_needs_three_and_is_anchored_doc_only() {
    let p = "same root";
    let f = |t: &str| with_premise(doc(t, "S", Severity::P2, 75.0), p);
    let two = anchored_run(Mode::Doc, &[("x", vec![f("A"), f("B")])]);
    assert!(two.iter().all(|m| m.confidence == 75.0 && m.promotable));
    let three_float = run(
        &float_gates(),
        Mode::Doc,
        &[(
            "x",
            vec![
                with_premise(doc("A", "S", Severity::P2, 0.7), p),
                with_premise(doc("B", "S", Severity::P2, 0.7), p),
                with_premise(doc("C", "S", Severity::P2, 0.7), p),
            ],
        )],
    );
    assert!(three_float.iter().all(|m| m.confidence == 0.7));
}

#[test]
fn doc_dedup_merges_on_section_and_title_and_takes_the_merge_rules() {
    let mut a = doc("Rollback is missing", "Deploy", Severity::P2, 0.6);
    a.claim.evidence = vec!["step 4".into()].into();
    a.id = Some("a1".into());
    let mut b = doc("rollback is MISSING!", " deploy ", Severity::P1, 0.55);
    b.claim.evidence = vec!["step 4".into(), "no runbook".into()].into();
    b.claim.autofix = Autofix::SafeAuto;
    b.claim.has_fix = true;
    if let Location::Doc { finding_type, .. } = &mut b.location {
        *finding_type = FindingType::Error;
    }
    let other = doc("Rollback is missing", "Testing", Severity::P3, 0.9);
    let out = run(
        &float_gates(),
        Mode::Doc,
        &[("coherence", vec![a, other]), ("feasibility", vec![b])],
    );
    assert_eq!(out.len(), 2);
    let m = out.iter().find(|m| m.reviewers.len() == 2).unwrap();
    assert_eq!(&*m.claim.title, "Rollback is missing"); // first appearance
    assert_eq!(m.claim.severity, Severity::P1); // highest
    assert_eq!(m.confidence_before, 0.6); // highest
    assert_eq!(m.claim.autofix, Autofix::Manual); // most conservative of safe_auto, manual
    assert_eq!(
        *m.claim.evidence,
        [Arc::from("step 4"), Arc::from("no runbook")]
    ); // union, order kept
    assert!(m.claim.has_fix);
    assert!(matches!(
        m.location,
        MergedLocation::Doc {
            finding_type: FindingType::Error,
            ..
        }
    ));
    assert_eq!(m.contributions[0].id.as_deref(), Some("a1"));
}

#[test]
fn code_dedup_clusters_lines_within_three() {
    // Lines 10, 12, 15 chain into one cluster (gaps 2 and 3); 19 is 4 past 15: its own.
    let f = |r: u32| code("Unchecked unwrap", "src/a.rs", r, Severity::P2, 75.0);
    let out = anchored_run(
        Mode::Code,
        &[
            ("correctness", vec![f(12), f(19)]),
            ("reliability", vec![f(10)]),
            ("security", vec![f(15)]),
        ],
    );
    assert_eq!(out.len(), 2);
    let big = out.iter().find(|m| m.reviewers.len() == 3).unwrap();
    assert!(matches!(
        big.location,
        MergedLocation::Code(CodeSite { line: 10, .. })
    ));
    assert_eq!(
        big.reviewers,
        ["correctness", "reliability", "security"].map(Arc::from)
    );
    let lone = out.iter().find(|m| m.reviewers.len() == 1).unwrap();
    assert!(matches!(
        lone.location,
        MergedLocation::Code(CodeSite { line: 19, .. })
    ));
    // Different file or title never merge.
    let out = anchored_run(
        Mode::Code,
        &[
            ("a", vec![f(10)]),
            (
                "b",
                vec![code("Unchecked unwrap", "src/b.rs", 10, Severity::P2, 75.0)],
            ),
        ],
    );
    assert_eq!(out.len(), 2);
}

#[test]
fn code_merge_owner_flags_and_pre_existing() {
    let mut a = code("Race", "src/q.rs", 40, Severity::P2, 75.0);
    let mut b = code("Race", "src/q.rs", 41, Severity::P1, 50.0);
    if let Location::Code(CodeSite {
        owner,
        pre_existing,
        requires_verification,
        ..
    }) = &mut a.location
    {
        *owner = Owner::Human;
        *pre_existing = true;
        *requires_verification = true;
    }
    if let Location::Code(CodeSite { owner, .. }) = &mut b.location {
        *owner = Owner::DownstreamResolver;
    }
    let out = anchored_run(Mode::Code, &[("x", vec![a.clone()]), ("y", vec![b])]);
    let MergedLocation::Code(CodeSite {
        owner,
        pre_existing,
        requires_verification,
        ..
    }) = &out[0].location
    else {
        panic!()
    };
    assert_eq!(*owner, Owner::DownstreamResolver); // from the P1 contributor
    assert!(!pre_existing); // not every contributor says so
    assert!(*requires_verification); // any does
                                     // All contributors pre-existing: the finding leaves the pipeline.
    let out = anchored_run(Mode::Code, &[("x", vec![a])]);
    assert_eq!(out[0].tier, Tier::PreExisting);
    assert_eq!(out[0].route, None);
}

#[test]
fn corroboration_promotes_one_anchor_step_and_100_stays() {
    let f = |c: f64| doc("Same", "S", Severity::P2, c);
    for (conf, want, promoted) in [
        (0.0, 25.0, true),
        (50.0, 75.0, true),
        (75.0, 100.0, true),
        (100.0, 100.0, false),
    ] {
        let out = anchored_run(Mode::Doc, &[("a", vec![f(conf)]), ("b", vec![f(conf)])]);
        assert_eq!(
            (out[0].confidence, out[0].promoted),
            (want, promoted),
            "{conf}"
        );
        assert!(out[0].corroborated);
    }
    // A single reviewer filing it twice is not corroboration.
    let out = anchored_run(Mode::Doc, &[("a", vec![f(50.0), f(50.0)])]);
    assert!(!out[0].corroborated && !out[0].promoted);
}

#[test]
fn float_boost_is_rounded_and_capped() {
    // 0.55 + 0.10 meets a 0.65 gate (P2) despite binary floating point.
    let f = |c: f64| doc("Same", "S", Severity::P2, c);
    let out = run(
        &float_gates(),
        Mode::Doc,
        &[("a", vec![f(0.55)]), ("b", vec![f(0.5)])],
    );
    assert_eq!(out[0].confidence, 0.65);
    assert_eq!(out[0].tier, Tier::Actionable);
    let out = run(
        &float_gates(),
        Mode::Doc,
        &[("a", vec![f(0.95)]), ("b", vec![f(0.95)])],
    );
    assert_eq!(out[0].confidence, 1.0);
    let out = run(
        &float_gates(),
        Mode::Doc,
        &[("a", vec![f(1.0)]), ("b", vec![f(1.0)])],
    );
    assert!(!out[0].promoted);
}

#[test]
fn anchored_doc_gate() {
    let cases = [
        (25.0, Tier::Dropped),
        (50.0, Tier::Fyi),
        (75.0, Tier::Actionable),
        (100.0, Tier::Actionable),
    ];
    for (conf, tier) in cases {
        let out = anchored_run(Mode::Doc, &[("a", vec![doc("T", "S", Severity::P0, conf)])]);
        assert_eq!(out[0].tier, tier, "{conf}");
    }
}

#[test]
fn code_gates_let_p0_escape_at_50_anchored_and_have_no_fyi_tier() {
    let (anchored, float) = (anchored(Mode::Code), float_gates());
    let cases = [
        (&anchored, Severity::P1, 50.0, Tier::Dropped),
        (&anchored, Severity::P0, 50.0, Tier::Actionable),
        (&anchored, Severity::P0, 25.0, Tier::Dropped),
        (&anchored, Severity::P2, 75.0, Tier::Actionable),
        (&float, Severity::P1, 0.60, Tier::Actionable),
        (&float, Severity::P1, 0.59, Tier::Dropped),
        (&float, Severity::P0, 0.50, Tier::Actionable),
        (&float, Severity::P0, 0.49, Tier::Dropped),
    ];
    for (policy, sev, c, want) in cases {
        let f = code("T", "f.rs", 1, sev, c);
        let got = run(policy, Mode::Code, &[("a", vec![f])])[0].tier;
        assert_eq!(got, want, "{sev:?} at {c}");
    }
}

#[test]
fn float_gates_doc_per_severity_and_fyi_floor_for_manual_only() {
    let tier = |sev, c, autofix| {
        let mut f = doc("T", "S", sev, c);
        f.claim.autofix = autofix;
        run(&float_gates(), Mode::Doc, &[("a", vec![f])])[0].tier
    };
    assert_eq!(tier(Severity::P0, 0.50, Autofix::Manual), Tier::Actionable);
    assert_eq!(tier(Severity::P1, 0.59, Autofix::Manual), Tier::Fyi);
    assert_eq!(tier(Severity::P2, 0.65, Autofix::Manual), Tier::Actionable);
    assert_eq!(tier(Severity::P3, 0.72, Autofix::Manual), Tier::Fyi);
    assert_eq!(tier(Severity::P3, 0.72, Autofix::GatedAuto), Tier::Dropped);
    assert_eq!(tier(Severity::P3, 0.39, Autofix::Manual), Tier::Dropped);
}

#[test]
fn mode_aware_demotion() {
    let mut f = code("Missing test", "t.rs", 3, Severity::P3, 100.0);
    f.claim.autofix = Autofix::Advisory;
    let demoted = |policy: &ReviewPolicy, who: &[&str]| {
        let returns: Vec<(&str, Vec<Finding>)> =
            who.iter().map(|w| (*w, vec![f.clone()])).collect();
        run(policy, Mode::Code, &returns)[0].tier
    };
    assert_eq!(demoted(&anchored(Mode::Code), &["testing"]), Tier::Soft);
    assert_eq!(
        demoted(&anchored(Mode::Code), &["testing", "maintainability"]),
        Tier::Soft
    );
    // A non-demotable contributor keeps it in the pipeline.
    assert_eq!(
        demoted(&anchored(Mode::Code), &["testing", "correctness"]),
        Tier::Actionable
    );
    let mut headless = anchored(Mode::Code);
    if let ReviewPolicy::Anchored(a) = &mut headless {
        a.review_mode = ReviewMode::Headless;
    }
    assert_eq!(demoted(&headless, &["testing"]), Tier::Suppressed);
    // P1 advisory from testing is not demoted.
    let mut p1 = f.clone();
    p1.claim.severity = Severity::P1;
    assert_eq!(
        anchored_run(Mode::Code, &[("testing", vec![p1])])[0].tier,
        Tier::Actionable
    );
}

#[test]
fn routing_auto_apply_and_code_queues() {
    let mut f = doc("T", "S", Severity::P1, 100.0);
    f.claim.autofix = Autofix::SafeAuto;
    f.claim.has_fix = true;
    let out = anchored_run(Mode::Doc, &[("a", vec![f.clone()])]);
    assert_eq!(out[0].route, Some(Route::AutoApply));
    f.confidence = 75.0; // not at the top
    assert_eq!(
        anchored_run(Mode::Doc, &[("a", vec![f.clone()])])[0].route,
        Some(Route::Decision)
    );
    f.confidence = 100.0;
    f.claim.has_fix = false; // no fix to apply
    assert_eq!(
        anchored_run(Mode::Doc, &[("a", vec![f])])[0].route,
        Some(Route::Decision)
    );
    // Float: at or above 0.85.
    let mut g = doc("T", "S", Severity::P1, 0.85);
    g.claim.autofix = Autofix::SafeAuto;
    g.claim.has_fix = true;
    assert_eq!(
        run(&float_gates(), Mode::Doc, &[("a", vec![g])])[0].route,
        Some(Route::AutoApply)
    );

    let queue = |autofix, owner| {
        let mut c = code("T", "f", 1, Severity::P1, 100.0);
        c.claim.autofix = autofix;
        if let Location::Code(CodeSite { owner: o, .. }) = &mut c.location {
            *o = owner;
        }
        anchored_run(Mode::Code, &[("correctness", vec![c])])[0].queue
    };
    use Autofix::{Advisory, GatedAuto, Manual, SafeAuto};
    use Owner::{DownstreamResolver, Human, Release, ReviewFixer};
    for (autofix, owner, want) in [
        (SafeAuto, ReviewFixer, Queue::Fixer),
        (GatedAuto, ReviewFixer, Queue::Residual),
        (Manual, DownstreamResolver, Queue::Residual),
        (Advisory, ReviewFixer, Queue::ReportOnly),
        (SafeAuto, Human, Queue::ReportOnly),
        (GatedAuto, Release, Queue::ReportOnly),
    ] {
        assert_eq!(queue(autofix, owner), Some(want), "{autofix:?}, {owner:?}");
    }
}

#[test]
fn listing_sort_order() {
    let mut err = doc("E", "S1", Severity::P1, 75.0);
    if let Location::Doc { finding_type, .. } = &mut err.location {
        *finding_type = FindingType::Error;
    }
    let out = anchored_run(
        Mode::Doc,
        &[(
            "a",
            vec![
                doc("late P3", "S9", Severity::P3, 100.0),
                doc("P1 omission 100", "S2", Severity::P1, 100.0),
                err,
                doc("P1 omission 75 first", "S3", Severity::P1, 75.0),
                doc("P1 omission 75 second", "S4", Severity::P1, 75.0),
                doc("P0", "S5", Severity::P0, 50.0),
            ],
        )],
    );
    let titles: Vec<&str> = out.iter().map(|m| &*m.claim.title).collect();
    assert_eq!(
        titles,
        [
            "P0",
            "E",
            "P1 omission 100",
            "P1 omission 75 first",
            "P1 omission 75 second",
            "late P3"
        ]
    );

    let out = anchored_run(
        Mode::Code,
        &[(
            "a",
            vec![
                code("x", "b.rs", 5, Severity::P1, 75.0),
                code("y", "a.rs", 9, Severity::P1, 75.0),
                code("z", "a.rs", 2, Severity::P1, 75.0),
            ],
        )],
    );
    let places: Vec<&str> = out.iter().map(|m| &*m.claim.title).collect();
    assert_eq!(places, ["z", "y", "x"]);
}

// ---- docs/guides/ab-rubric-change.md: the validation pass and lint-ignore, worked by hand ----

fn with_id(mut f: Finding, id: &str) -> Finding {
    f.id = Some(id.into());
    f
}

fn call(line: u64, finding: &str, verdict: Verdict, reason: Option<&str>) -> Validation {
    Validation {
        line,
        arm: "t".into(),
        target: "pr".into(),
        run: 0,
        finding: finding.into(),
        validator: None,
        verdict,
        reason: reason.map(str::to_string),
    }
}

fn headless() -> ReviewPolicy {
    let mut p = anchored(Mode::Code);
    if let ReviewPolicy::Anchored(a) = &mut p {
        a.review_mode = ReviewMode::Headless;
    }
    p
}

fn controls(validation: crate::policy::ValidationRun, budget: usize) -> Controls {
    Controls {
        validation,
        validation_budget: budget,
        ..Controls::OFF
    }
}

fn run_with(
    policy: &ReviewPolicy,
    controls: &Controls,
    sources: Option<&Sources>,
    calls: &[Validation],
    returns: &[(&str, Vec<Finding>)],
) -> Vec<Merged> {
    let calls: Vec<&Validation> = calls.iter().collect();
    let precision = Precision {
        controls,
        target: "pr",
        sources,
        calls: &calls,
    };
    replay_with(
        policy,
        Mode::Code,
        &precision,
        &refs(&names(returns), returns),
    )
}

fn outcome<'a>(out: &'a [Merged], title: &str) -> &'a Merged {
    out.iter().find(|m| &*m.claim.title == title).unwrap()
}

/// Budget order: severity, confidence descending, then the representative's file (byte by
/// byte: `Zeta` before `alpha`), line and title; the first `validation_budget` are looked
/// up, the rest are over budget and lose their route.
#[test]
fn the_budget_keeps_the_first_in_severity_confidence_file_line_title_order() {
    use crate::policy::ValidationRun::Always;
    let findings = vec![
        with_id(code("A", "b.rs", 10, Severity::P1, 75.0), "a"),
        with_id(code("B", "z.rs", 10, Severity::P0, 75.0), "b"),
        with_id(code("C", "c.rs", 10, Severity::P1, 100.0), "c"),
        with_id(code("D", "alpha.rs", 10, Severity::P1, 75.0), "d"),
        with_id(code("E", "Zeta.rs", 10, Severity::P1, 75.0), "e"),
        with_id(code("F", "alpha.rs", 90, Severity::P1, 75.0), "f"),
        with_id(code("F", "alpha.rs", 91, Severity::P1, 75.0), "g"),
    ];
    let calls: Vec<Validation> = ["a", "b", "c", "d", "e", "f", "g"]
        .iter()
        .enumerate()
        .map(|(i, id)| call(i as u64 + 1, id, Verdict::Validated, None))
        .collect();
    // The two F findings share file, title and nearly their line: merged, so six findings. Budget order: B (P0); C (P1,
    // 100); then P1 at 75 by file: Zeta.rs (E) < alpha.rs (D at 10, then F+G at 90) < b.rs.
    let out = run_with(
        &headless(),
        &controls(Always, 3),
        None,
        &calls,
        &[("correctness", findings)],
    );
    assert_eq!(out.len(), 6);
    let checks: Vec<(&str, Option<&str>)> = ["B", "C", "E", "D", "F", "A"]
        .iter()
        .map(|t| (*t, outcome(&out, t).validation.as_ref().map(Check::name)))
        .collect();
    assert_eq!(
        checks,
        [
            ("B", Some("validated")),
            ("C", Some("validated")),
            ("E", Some("validated")),
            ("D", Some("over_budget")),
            ("F", Some("over_budget")),
            ("A", Some("over_budget")),
        ]
    );
    for t in ["D", "F", "A"] {
        let m = outcome(&out, t);
        assert_eq!(m.tier, Tier::Actionable, "the gate's count keeps it");
        assert!(!m.externalized() && m.route.is_none() && m.queue.is_none());
    }
    assert!(outcome(&out, "B").externalized() && outcome(&out, "B").route.is_some());
    // A budget as large as the selection cuts nothing.
    let out = run_with(
        &headless(),
        &controls(Always, 6),
        None,
        &calls,
        &[(
            "correctness",
            vec![with_id(code("A", "b.rs", 10, Severity::P1, 75.0), "a")],
        )],
    );
    assert_eq!(out[0].validation, Some(Check::Validated));
}

/// The lookup: no call is missing; any failed call wins; else any rejection, with the first
/// rejecting call's reason in file order; contributors may disagree.
#[test]
fn each_lookup_outcome_including_disagreeing_contributors() {
    use crate::policy::ValidationRun::Auto;
    let one = |calls: &[Validation], findings: Vec<(&str, Finding)>| {
        let returns: Vec<(&str, Vec<Finding>)> =
            findings.into_iter().map(|(r, f)| (r, vec![f])).collect();
        let out = run_with(&headless(), &controls(Auto, 15), None, calls, &returns);
        assert_eq!(out.len(), 1);
        out[0].validation.clone().unwrap()
    };
    let f = |id: &str| with_id(code("T", "a.rs", 10, Severity::P1, 75.0), id);
    use Verdict::{Failed, Rejected, Validated};
    assert_eq!(one(&[], vec![("r", f("x"))]), Check::Missing);
    assert_eq!(
        one(&[call(1, "other", Validated, None)], vec![("r", f("x"))]),
        Check::Missing
    );
    assert_eq!(
        one(&[call(1, "x", Failed, None)], vec![("r", f("x"))]),
        Check::Failed
    );
    assert_eq!(
        one(&[call(1, "x", Rejected, None)], vec![("r", f("x"))]),
        Check::Rejected("(no reason)".into())
    );
    // Two contributors (two reviewers, one place): they disagree.
    let two = vec![("r1", f("x")), ("r2", f("y"))];
    let rejected = [
        call(1, "x", Validated, None),
        call(2, "y", Rejected, Some("handled by the caller")),
        call(3, "x", Rejected, Some("later")),
    ];
    assert_eq!(
        one(&rejected, two.clone()),
        Check::Rejected("handled by the caller".into())
    );
    let failed = [
        call(1, "x", Rejected, Some("no")),
        call(2, "y", Failed, None),
    ];
    assert_eq!(one(&failed, two.clone()), Check::Failed);
    let both = [call(1, "x", Validated, None), call(2, "y", Validated, None)];
    assert_eq!(one(&both, two.clone()), Check::Validated);
    // A contributor without an id has no calls: the other's decide.
    let no_id = vec![
        ("r1", code("T", "a.rs", 10, Severity::P1, 75.0)),
        ("r2", f("y")),
    ];
    assert_eq!(
        one(&[call(1, "y", Validated, None)], no_id.clone()),
        Check::Validated
    );
    assert_eq!(one(&[], no_id), Check::Missing);
}

/// What is selected: actionable findings only; under interactive file-tickets not the
/// auto-applied ones; `auto` runs where the measured pipeline runs it.
#[test]
fn selection_follows_mode_route_and_tier() {
    use crate::policy::ValidationRun::{Always, Auto};
    let mut auto_fix = with_id(code("fix", "a.rs", 1, Severity::P1, 100.0), "fix");
    auto_fix.claim.autofix = Autofix::SafeAuto;
    auto_fix.claim.has_fix = true;
    let findings = vec![
        auto_fix,
        with_id(code("act", "b.rs", 1, Severity::P1, 75.0), "act"),
        with_id(code("low", "c.rs", 1, Severity::P1, 25.0), "low"),
        {
            let mut pre = with_id(code("pre", "d.rs", 1, Severity::P1, 100.0), "pre");
            if let Location::Code(CodeSite { pre_existing, .. }) = &mut pre.location {
                *pre_existing = true;
            }
            pre
        },
    ];
    let selected = |policy: &ReviewPolicy, c: &Controls| -> Vec<String> {
        let out = run_with(policy, c, None, &[], &[("correctness", findings.clone())]);
        let mut s: Vec<String> = out
            .iter()
            .filter(|m| m.validation.is_some())
            .map(|m| m.claim.title.to_string())
            .collect();
        s.sort();
        s
    };
    let interactive = anchored(Mode::Code);
    let tickets = Controls {
        route: InteractiveRoute::FileTickets,
        ..controls(Auto, 15)
    };
    assert_eq!(selected(&interactive, &tickets), ["act"]);
    assert_eq!(
        selected(
            &interactive,
            &Controls {
                validation: Always,
                ..tickets.clone()
            }
        ),
        ["act"]
    );
    assert!(selected(&interactive, &controls(Auto, 15)).is_empty());
    assert_eq!(
        selected(&interactive, &controls(Always, 15)),
        ["act", "fix"]
    );
    assert_eq!(selected(&headless(), &controls(Auto, 15)), ["act", "fix"]);
    let mut report_only = anchored(Mode::Code);
    if let ReviewPolicy::Anchored(a) = &mut report_only {
        a.review_mode = ReviewMode::ReportOnly;
    }
    assert!(selected(&report_only, &controls(Auto, 15)).is_empty());
    assert_eq!(
        selected(&report_only, &controls(Always, 15)),
        ["act", "fix"]
    );
    // Off, nothing changes: every field as the plain replay gives it.
    let plain = run(
        &headless(),
        Mode::Code,
        &[("correctness", findings.clone())],
    );
    let off = run_with(
        &headless(),
        &Controls::OFF,
        None,
        &[],
        &[("correctness", findings)],
    );
    assert_eq!(plain, off);
}

/// Lint-ignore: the finding's line or the line before; dropped before the gate only with
/// `suppress`, and never when `project-standards` contributes; counted as on a suppressed
/// line whatever became of it; unknown without a snapshot.
#[test]
fn lint_ignore_drops_suppressed_lines_before_the_gate() {
    let mut sources = Sources::default();
    sources.add_file(
        "pr",
        "a.rs",
        "fn f() {\n    #[allow(dead_code)]\n    let x = 1;\n    let y = 2;\n".into(),
    );
    let findings = |reviewer: &'static str| {
        vec![(
            reviewer,
            vec![
                code("on the marker", "a.rs", 2, Severity::P1, 75.0),
                code("below it", "b.rs", 3, Severity::P1, 75.0),
                code("line after the marker", "a.rs", 3, Severity::P1, 100.0),
                code("two below", "a.rs", 4, Severity::P1, 100.0),
            ],
        )]
    };
    let suppress = Controls {
        lint_ignore: LintIgnore::Suppress,
        ..Controls::OFF
    };
    let policy = headless();
    let out = run_with(
        &policy,
        &suppress,
        Some(&sources),
        &[],
        &findings("correctness"),
    );
    // Line 2 carries the marker; line 3 is below it; line 4 is two below; b.rs has none.
    let tiers: Vec<(&str, Tier, Option<bool>)> = out
        .iter()
        .map(|m| (&*m.claim.title, m.tier, m.on_suppressed_line))
        .collect();
    assert_eq!(
        tiers,
        [
            ("line after the marker", Tier::LintSuppressed, Some(true)),
            ("two below", Tier::Actionable, Some(false)),
            ("on the marker", Tier::LintSuppressed, Some(true)),
            ("below it", Tier::Actionable, Some(false)),
        ]
    );
    let apart = vec![(
        "correctness",
        vec![
            code("marker line", "a.rs", 2, Severity::P1, 75.0),
            code("far", "a.rs", 40, Severity::P1, 75.0),
        ],
    )];
    let out = run_with(&policy, &suppress, Some(&sources), &[], &apart);
    assert_eq!(outcome(&out, "marker line").tier, Tier::LintSuppressed);
    assert_eq!(outcome(&out, "far").on_suppressed_line, Some(false));
    // Off: measured, not dropped.
    let out = run_with(&policy, &Controls::OFF, Some(&sources), &[], &apart);
    assert_eq!(outcome(&out, "marker line").tier, Tier::Actionable);
    assert_eq!(outcome(&out, "marker line").on_suppressed_line, Some(true));
    // project-standards contributes: kept.
    let out = run_with(
        &policy,
        &suppress,
        Some(&sources),
        &[],
        &[
            (
                "correctness",
                vec![code("x", "a.rs", 3, Severity::P1, 75.0)],
            ),
            (
                "project-standards",
                vec![code("x", "a.rs", 3, Severity::P1, 75.0)],
            ),
        ],
    );
    assert_eq!(out[0].tier, Tier::Actionable);
    assert_eq!(out[0].on_suppressed_line, Some(true));
    // Pre-existing: leaves at step 6, still counted as on a suppressed line.
    let mut pre = code("old", "a.rs", 3, Severity::P1, 75.0);
    if let Location::Code(CodeSite { pre_existing, .. }) = &mut pre.location {
        *pre_existing = true;
    }
    let out = run_with(&policy, &suppress, Some(&sources), &[], &[("r", vec![pre])]);
    assert_eq!(
        (out[0].tier, out[0].on_suppressed_line),
        (Tier::PreExisting, Some(true))
    );
    // No snapshot of the target: unknown, and nothing is dropped.
    let out = run_with(&policy, &suppress, None, &[], &apart);
    assert!(out.iter().all(|m| m.on_suppressed_line.is_none()));
    assert_eq!(outcome(&out, "marker line").tier, Tier::Actionable);
    let mut other = Sources::default();
    other.add_target("another-pr");
    let out = run_with(&policy, &suppress, Some(&other), &[], &apart);
    assert!(out.iter().all(|m| m.on_suppressed_line.is_none()));
}
