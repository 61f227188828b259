use super::*;
use crate::policy::*;

fn parse_str(text: &str) -> Result<Experiment, InputError> {
    parse(Path::new("corpora/x/experiment.toml"), text)
}

const EXAMPLE: &str = r#"
name = "doc-review-anchors"
mode = "doc"
corpus = "."
seed = 20260421
bootstrap = 2000

[arms.baseline]
source = "baseline"
[arms.baseline.review]
policy = "float-gates"
[arms.baseline.confidence]
policy = "flat-mean"

[arms.treatment]
source = "treatment"
[arms.treatment.review]
policy = "anchored"
[arms.treatment.confidence]
policy = "category-max"

[trust]
irr_floor = 0.2
spread_ceiling = 0.5
min_survivors = 3
level = "interval"
dimension_weights = {}
"#;

#[test]
fn the_spec_example_parses_with_every_default() {
    let e = parse_str(EXAMPLE).unwrap();
    assert_eq!(e.name, "doc-review-anchors");
    assert_eq!(e.corpus, Path::new("corpora/x"));
    // Run from the experiment's own folder, `corpus = "."` is that folder, not the empty
    // path (which "does not exist").
    let here = parse(Path::new("experiment.toml"), EXAMPLE).unwrap();
    assert_eq!(here.corpus, Path::new("."));
    assert!(here.corpus.is_dir());
    assert_eq!((e.seed, e.bootstrap), (20260421, 2000));
    let ReviewPolicy::FloatGates(f) = &e.baseline.review else {
        panic!()
    };
    assert_eq!(f.scale, Scale::Float);
    assert_eq!(f.gates, [0.50, 0.60, 0.65, 0.75]);
    assert_eq!(
        (f.gate, f.p0_gate, f.fyi_floor, f.auto_apply_from),
        (0.60, 0.50, 0.40, 0.85)
    );
    assert_eq!(f.promotion, Promotion::Corroboration { boost: 0.10 });
    let ReviewPolicy::Anchored(a) = &e.treatment.review else {
        panic!()
    };
    assert_eq!(a.scale, Scale::Anchor);
    assert_eq!(
        (a.surface_from, a.actionable_from, a.p0_escape),
        (50.0, 75.0, None)
    );
    assert!(a.collapse);
    assert_eq!(a.demote_reviewers, ["testing", "maintainability"]);
    let ConfidencePolicy::FlatMean(fm) = &e.baseline.confidence else {
        panic!()
    };
    assert_eq!(
        (
            fm.recovery_threshold,
            fm.stop_threshold,
            fm.recovery_entry_score
        ),
        (0.7, 0.2, 0.5)
    );
    let ConfidencePolicy::CategoryMax(cm) = &e.treatment.confidence else {
        panic!()
    };
    assert_eq!(cm.recovery_threshold, 0.5);
    assert_eq!(cm.weights.read, 3.0);
    assert_eq!(cm.weights.as_array().iter().sum::<f64>(), 10.5);
    assert_eq!(
        (cm.normalize, cm.bonus_mode),
        (Normalize::Present, BonusMode::Multiplicative)
    );
    assert_eq!(cm.bands, Bands::default());
    assert_eq!(e.trust, Trust::default());
}

#[test]
fn code_mode_anchored_defaults_and_overrides() {
    let text = EXAMPLE
        .replace("mode = \"doc\"", "mode = \"code\"")
        .replace(
            "policy = \"anchored\"",
            "policy = \"anchored\"\nsurface_from = 50\nreview_mode = \"headless\"",
        );
    let e = parse_str(&text).unwrap();
    let ReviewPolicy::Anchored(a) = &e.treatment.review else {
        panic!()
    };
    assert_eq!(
        (a.surface_from, a.actionable_from, a.p0_escape),
        (50.0, 75.0, Some(50.0))
    );
    assert_eq!(a.review_mode, ReviewMode::Headless);
}

/// docs/guides/ab-rubric-change.md's arm parameters: off by default, read under either policy, refused where
/// they cannot apply.
#[test]
fn precision_controls_are_off_by_default_and_checked() {
    let code = EXAMPLE.replace("mode = \"doc\"", "mode = \"code\"");
    let e = parse_str(&code).unwrap();
    assert!(e.baseline.controls.is_off() && e.treatment.controls.is_off());
    assert_eq!(e.treatment.controls.validation_budget, 15);
    let bundle = code.replace(
            "policy = \"anchored\"",
            "policy = \"anchored\"\nreview_mode = \"headless\"\nvalidation = \"auto\"\nvalidation_budget = 3\nskip = [\"closed\", \"trivial-pattern\", \"reviewed\"]\nlint_ignore = \"suppress\"",
        );
    let c = parse_str(&bundle).unwrap().treatment.controls;
    assert_eq!(c.validation, ValidationRun::Auto);
    assert_eq!(c.validation_budget, 3);
    assert_eq!(
        c.skip,
        [
            SkipRule::Closed,
            SkipRule::TrivialPattern,
            SkipRule::Reviewed
        ]
    );
    assert_eq!(c.lint_ignore, LintIgnore::Suppress);
    // Under the float-gates policy too, with an interactive route.
    let float = code.replace(
        "policy = \"float-gates\"",
        "policy = \"float-gates\"\nvalidation = \"always\"\nroute = \"file-tickets\"",
    );
    let c = parse_str(&float).unwrap().baseline.controls;
    assert_eq!(
        (c.validation, c.route),
        (ValidationRun::Always, InteractiveRoute::FileTickets)
    );

    for (text, field, problem) in [
        (
            EXAMPLE.replace(
                "policy = \"anchored\"",
                "policy = \"anchored\"\nvalidation = \"auto\"",
            ),
            "`arms.treatment.review.validation`",
            "mode is doc",
        ),
        (
            code.replace(
                "policy = \"anchored\"",
                "policy = \"anchored\"\nreview_mode = \"headless\"\nroute = \"file-tickets\"",
            ),
            "`arms.treatment.review.route`",
            "interactive review only",
        ),
        (
            code.replace(
                "policy = \"anchored\"",
                "policy = \"anchored\"\nvalidation_budget = 0",
            ),
            "`arms.treatment.review.validation_budget`",
            "1 or more",
        ),
        (
            code.replace(
                "policy = \"anchored\"",
                "policy = \"anchored\"\nskip = [\"closed\", \"closed\"]",
            ),
            "`arms.treatment.review.skip`",
            "listed twice",
        ),
        (
            code.replace(
                "policy = \"anchored\"",
                "policy = \"anchored\"\nskip = [\"stale\"]",
            ),
            "`arms.treatment.review.skip.0`",
            "is not one of closed, draft, trivial-pattern, trivial-judgment, reviewed",
        ),
    ] {
        let e = parse_str(&text).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        assert!(e.problem.contains(problem), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
}

/// When the validation pass runs (docs/guides/ab-rubric-change.md): `auto` where the measured pipeline runs it.
#[test]
fn auto_validation_runs_where_the_pipeline_runs_it() {
    let with = |validation, route| Controls {
        validation,
        route,
        ..Controls::default()
    };
    use InteractiveRoute::{BestJudgment, FileTickets, WalkThrough};
    use ReviewMode::{Autofix, Headless, Interactive};
    let auto = |mode, route| with(ValidationRun::Auto, route).validates(mode);
    assert!(auto(Headless, WalkThrough) && auto(Autofix, WalkThrough));
    assert!(auto(Interactive, FileTickets));
    for route in [WalkThrough, BestJudgment, InteractiveRoute::ReportOnly] {
        assert!(!auto(Interactive, route));
    }
    assert!(!auto(ReviewMode::ReportOnly, WalkThrough));
    for mode in [Interactive, ReviewMode::ReportOnly, Headless, Autofix] {
        assert!(with(ValidationRun::Always, WalkThrough).validates(mode));
        assert!(!with(ValidationRun::Never, FileTickets).validates(mode));
    }
}

#[test]
fn thresholds_follow_the_declared_scale() {
    let text = EXAMPLE.replace(
        "policy = \"float-gates\"",
        "policy = \"float-gates\"\nscale = \"anchor\"",
    );
    let e = parse_str(&text).unwrap();
    let ReviewPolicy::FloatGates(f) = &e.baseline.review else {
        panic!()
    };
    assert_eq!(f.gates, [50.0, 60.0, 65.0, 75.0]);
    assert_eq!(f.promotion, Promotion::Corroboration { boost: 10.0 });
}

#[test]
fn unknown_keys_are_named_with_their_line() {
    let text = EXAMPLE.replace(
        "policy = \"anchored\"",
        "policy = \"anchored\"\nsurface_form = 75",
    );
    let e = parse_str(&text).unwrap_err();
    assert_eq!(
        e.field.as_deref(),
        Some("`arms.treatment.review.surface_form`")
    );
    assert_eq!(e.line, Some(19)); // the example text opens with a blank line
    assert!(e.hint.unwrap().contains("surface_from"));

    let e = parse_str(&EXAMPLE.replace("irr_floor", "irr_flor")).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("`trust.irr_flor`"));
    assert!(e.hint.unwrap().contains("irr_floor"));
    assert_eq!(e.line, Some(23));

    let e = parse_str(&format!("bootstrapp = 3\n{EXAMPLE}")).unwrap_err();
    assert_eq!(
        (e.field.as_deref(), e.line),
        (Some("`bootstrapp`"), Some(1))
    );
    // After [trust] the same key belongs to that table, and is named there.
    let e = parse_str(&format!("{EXAMPLE}\nbootstrapp = 3\n")).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("`trust.bootstrapp`"));
}

// Regression (issue 34): `polciy = "anchored"` was reported as "`…review.policy`: is
// missing", which sends a user looking for a key they did write. Every table of the
// experiment, its gate policy and its [collect] table name the misspelt key and the key it
// most likely meant.
#[test]
fn a_misspelt_key_is_named_with_the_key_it_meant() {
    // The error and the line the misspelt key is on.
    let with = |from: &str, to: &str| {
        assert!(EXAMPLE.contains(from), "{from}");
        let text = EXAMPLE.replacen(from, to, 1);
        let typo = to
            .lines()
            .find(|l| !l.starts_with('[') && !from.contains(l.trim()))
            .unwrap();
        let line = text.lines().position(|l| l.starts_with(typo)).unwrap() as u64 + 1;
        (parse_str(&text).unwrap_err(), line)
    };
    let cases = [
        (
            with("policy = \"anchored\"", "polciy = \"anchored\""),
            "`arms.treatment.review.polciy`",
            "unknown key `polciy` — did you mean `policy`?",
        ),
        (
            with("policy = \"flat-mean\"", "polcy = \"flat-mean\""),
            "`arms.baseline.confidence.polcy`",
            "unknown key `polcy` — did you mean `policy`?",
        ),
        (
            with(
                "policy = \"anchored\"",
                "policy = \"anchored\"\nsurface_frm = 50",
            ),
            "`arms.treatment.review.surface_frm`",
            "unknown key `surface_frm` — did you mean `surface_from`?",
        ),
        (
            with("irr_floor", "irr_flor"),
            "`trust.irr_flor`",
            "unknown key `irr_flor` — did you mean `irr_floor`?",
        ),
        (
            with("seed = ", "sede = "),
            "`sede`",
            "unknown key `sede` — did you mean `seed`?",
        ),
        (
            with("[trust]", "[gate]\nrequire_trustworty = true\n[trust]"),
            "`gate.require_trustworty`",
            "unknown key `require_trustworty` — did you mean `require_trustworthy`?",
        ),
        (
            with(
                "[trust]",
                "[[gate.check]]\nmetirc = \"lift.value\"\nmin = 0\n[trust]",
            ),
            "`gate.check.0.metirc`",
            "unknown key `metirc` — did you mean `metric`?",
        ),
        (
            with(
                "[trust]",
                "[collect]\ncomand = [\"r\"]\ntargets = \"*.md\"\nreviewers = [\"a\"]\n[trust]",
            ),
            "`collect.comand`",
            "unknown key `comand` — did you mean `command`?",
        ),
    ];
    for ((e, line), field, problem) in cases {
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        assert_eq!(e.problem, problem, "{e}");
        assert_eq!(e.line, Some(line), "{e}");
    }
    // A key nothing is close to is still named, with the keys the table takes.
    let (e, _) = with("irr_floor", "banana");
    assert_eq!(e.problem, "unknown key `banana`");
    assert!(e.hint.unwrap().contains("irr_floor, spread_ceiling"));
}

#[test]
fn bad_values_are_refused() {
    let e = parse_str(&EXAMPLE.replace("mode = \"doc\"", "mode = \"prose\"")).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("`mode`"));
    assert!(e.problem.contains("`prose` is not one of doc, code"), "{e}");
    let e =
        parse_str(&EXAMPLE.replace("policy = \"anchored\"", "policy = \"anchor\"")).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("`arms.treatment.review.policy`"));
    assert!(
        e.problem
            .contains("`anchor` is not one of anchored, float-gates"),
        "{e}"
    );
    let e = parse_str(&EXAMPLE.replace("seed = 20260421", "seed = \"x\"")).unwrap_err();
    assert!(e.problem.contains("must be a non-negative integer"), "{e}");
    let e = parse_str("name = [").unwrap_err();
    assert!(e.problem.starts_with("not valid TOML"));
    let e = parse_str("name = \"x\"\n").unwrap_err();
    assert!(e.problem.contains("is missing"));
}

#[test]
fn trust_thresholds_are_checked() {
    let e =
        parse_str(&EXAMPLE.replace("spread_ceiling = 0.5", "spread_ceiling = -0.5")).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("`trust.spread_ceiling`"));
    assert!(e.line.is_some());
    let e = parse_str(&EXAMPLE.replace(
        "dimension_weights = {}",
        "dimension_weights = { real = -2.0 }",
    ))
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("`trust.dimension_weights.real`"));
    let e = parse_str(&EXAMPLE.replace("min_survivors = 3", "min_survivors = 3\nfloor = 1"))
        .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("`trust.floor`"));
}

#[test]
fn both_arms_may_read_one_source() {
    let text = EXAMPLE.replace("source = \"treatment\"", "source = \"baseline\"");
    let e = parse_str(&text).unwrap();
    assert_eq!(e.baseline.source, e.treatment.source);
}

#[test]
fn confidence_parameters_override_and_partial_tables_keep_defaults() {
    let text = EXAMPLE
            .replace(
                "policy = \"flat-mean\"",
                "policy = \"flat-mean\"\nrecovery_threshold = 0.6\nrecovery_entry_score = 0.4\nbands = { strong = 0.8 }",
            )
            .replace(
                "policy = \"category-max\"",
                "policy = \"category-max\"\nweights = { read = 4.0 }\nnormalize = \"all\"\nbonus_mode = \"additive\"\nbonus_two = 0.05\nstop_threshold = 0.1",
            );
    let e = parse_str(&text).unwrap();
    let ConfidencePolicy::FlatMean(f) = &e.baseline.confidence else {
        panic!()
    };
    assert_eq!((f.recovery_threshold, f.recovery_entry_score), (0.6, 0.4));
    assert_eq!(
        f.bands,
        Bands {
            strong: 0.8,
            ..Bands::default()
        }
    );
    let ConfidencePolicy::CategoryMax(c) = &e.treatment.confidence else {
        panic!()
    };
    assert_eq!(
        c.weights,
        Weights {
            read: 4.0,
            ..Weights::default()
        }
    );
    assert_eq!(
        (c.normalize, c.bonus_mode),
        (Normalize::All, BonusMode::Additive)
    );
    assert_eq!(
        (c.bonus_two, c.bonus_three, c.stop_threshold),
        (0.05, 0.20, 0.1)
    );
    // No [confidence] table: flat-mean for the baseline, category-max for the treatment.
    let bare = EXAMPLE
        .replace("[arms.baseline.confidence]\npolicy = \"flat-mean\"\n", "")
        .replace(
            "[arms.treatment.confidence]\npolicy = \"category-max\"\n",
            "",
        );
    let e = parse_str(&bare).unwrap();
    assert_eq!(
        e.baseline.confidence,
        ConfidencePolicy::FlatMean(FlatMean::default())
    );
    assert_eq!(
        e.treatment.confidence,
        ConfidencePolicy::CategoryMax(CategoryMax::default())
    );
}

#[test]
fn bad_confidence_parameters_are_refused_on_their_line() {
    let cases = [
        (
            "recovery_threshold = 1.5",
            "`arms.treatment.confidence.recovery_threshold`",
            "not in [0, 1]",
        ),
        (
            "stop_threshold = 0.6",
            "`arms.treatment.confidence.stop_threshold`",
            "could never fire",
        ),
        (
            "weights = { reads = 2.0 }",
            "`arms.treatment.confidence.weights.reads`",
            "unknown key `reads` — did you mean `read`?",
        ),
        (
            "weights = { read = -1.0 }",
            "`arms.treatment.confidence.weights.read`",
            "≥ 0",
        ),
        (
            "normalize = \"some\"",
            "`arms.treatment.confidence.normalize`",
            "not one of present, all",
        ),
        (
            "bonus_two = \"high\"",
            "`arms.treatment.confidence.bonus_two`",
            "must be a number",
        ),
        (
            "bands = { strong = true }",
            "`arms.treatment.confidence.bands.strong`",
            "must be a number",
        ),
        (
            "bands = { weak = 0.9 }",
            "`arms.treatment.confidence.bands`",
            "must rise",
        ),
        (
            "recovery_entry_score = 0.5",
            "`arms.treatment.confidence.recovery_entry_score`",
            "unknown key `recovery_entry_score`",
        ),
    ];
    for (line, field, problem) in cases {
        let text = EXAMPLE.replace(
            "policy = \"category-max\"",
            &format!("policy = \"category-max\"\n{line}"),
        );
        let e = parse_str(&text).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{line}: {e}");
        assert!(e.problem.contains(problem), "{line}: {}", e.problem);
        assert!(e.line.is_some(), "{line}");
    }
}

// Regression (hostile-4/11): `range = { q = [0, 1, 2] }` was read as [0, 1] without a word, and
// a range whose width overflows passed, to be refused later as "outside ±inf".
#[test]
fn a_sequential_range_is_exactly_two_finite_numbers_a_finite_width_apart() {
    let with = |range: &str| {
        let text = format!(
            "{EXAMPLE}\n[decision]\nq = \"increase\"\n\n[sequential]\nrange = {{ q = {range} }}\n"
        );
        parse_str(&text)
    };
    assert_eq!(with("[0, 1]").unwrap().sequential_range["q"], [0.0, 1.0]);
    for (range, says) in [
        (
            "[0, 1, 2]",
            "[0, 1, 2] has 3 numbers; a range is [LOW, HIGH]",
        ),
        ("[0.5]", "[0.5] has 1 number; a range is [LOW, HIGH]"),
        ("[1, 0]", "[1, 0] is not a range"),
        (
            "[-1e308, 1e308]",
            "is too wide: its width is not a finite number",
        ),
    ] {
        let e = with(range).unwrap_err();
        assert!(e.problem.contains(says), "{range}: {e}");
        assert_eq!(e.field.as_deref(), Some("`sequential.range.q`"), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
    // Not a number at all: refused as the file is read.
    assert!(with("[0, 1, \"x\"]").is_err());
}
