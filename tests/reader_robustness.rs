//! The readers never panic: arbitrary bytes, and near-valid files with one cell mangled, give
//! data or an input error naming the file, never a crash. (The `fuzz/` targets run the same
//! readers under libFuzzer; this keeps a fast version of that promise in every test run.)

use calibench::config;
use calibench::corpus::{queries, reviews, verdicts};
use calibench::input::{calibration, reliability};
use calibench::policy::{Mode, Scale};
use calibench::stats::alpha::{alpha, Level};
use proptest::prelude::*;

fn layouts() -> [reliability::Layout; 3] {
    [
        reliability::Layout::Auto,
        reliability::Layout::Long,
        reliability::Layout::Wide,
    ]
}

/// Reads `bytes` every way `alpha` can; on success computes α as `alpha` would.
fn exercise(bytes: &[u8]) {
    for layout in layouts() {
        for level in Level::ALL {
            match reliability::read("fuzz.csv", bytes, layout, level) {
                Ok(table) => {
                    if let Ok(estimate) = alpha(&table.units, level) {
                        // A defined α is a finite number; garbage would serialize as null.
                        assert!(estimate.alpha.is_none_or(f64::is_finite));
                        assert!(estimate.expected_disagreement.is_finite());
                    }
                }
                Err(e) => assert_eq!(e.file, "fuzz.csv"),
            }
        }
    }
    if let Err(e) = calibration::read("fuzz.csv", bytes) {
        assert_eq!(e.file, "fuzz.csv");
    }
}

/// Cells that sit near the edges of what the readers accept.
fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(".".to_string()),
        Just("NA".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("-0".to_string()),
        Just("1e308".to_string()),
        Just("-1e-320".to_string()),
        Just("\"a,b\"".to_string()),
        Just("\"unterminated".to_string()),
        Just("true".to_string()),
        Just("{".to_string()),
        (0u8..6).prop_map(|v| v.to_string()),
        "[a-z]{1,3}",
        "\\PC{0,4}",
    ]
}

fn csv_text() -> impl Strategy<Value = String> {
    let header = prop_oneof![
        Just("unit,rater,value".to_string()),
        Just("rater,u1,u2,u3".to_string()),
        Just("confidence,correct".to_string()),
        Just("value,unit,rater,extra".to_string()),
        "[a-z,]{0,12}",
    ];
    let rows = prop::collection::vec(prop::collection::vec(cell(), 0..6), 0..8);
    (header, rows).prop_map(|(h, rows)| {
        let mut s = h;
        for r in rows {
            s.push('\n');
            s.push_str(&r.join(","));
        }
        s
    })
}

fn jsonl_text() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        Just("null".to_string()),
        Just("1".to_string()),
        Just("\"x\"".to_string()),
        Just("[1]".to_string()),
        Just("{}".to_string()),
        Just("-1e400".to_string()),
        Just("\"NA\"".to_string()),
    ];
    let line = (value.clone(), value.clone(), value, any::<bool>()).prop_map(|(u, r, v, cut)| {
        let s = format!("{{\"unit\": {u}, \"rater\": {r}, \"value\": {v}}}");
        if cut {
            s[..s.len() / 2].to_string()
        } else {
            s
        }
    });
    prop::collection::vec(line, 0..6).prop_map(|l| l.join("\n"))
}

/// Runs the corpus and experiment readers on `bytes`, and the replay on whatever they accept.
fn exercise_corpus(bytes: &[u8]) {
    let (records, problems) = reviews::parse("r.jsonl", bytes);
    assert!(problems
        .iter()
        .all(|p| p.file == "r.jsonl" && p.line.is_some()));
    for mode in [Mode::Doc, Mode::Code] {
        for scale in [Scale::Float, Scale::Anchor] {
            let _ = reviews::select(&records, "b", mode, scale);
            let wants = [("b".to_string(), scale)];
            let _ = reviews::parse_for("r.jsonl", bytes, mode, &wants);
        }
    }
    let _ = verdicts::parse("v.jsonl", bytes);
    let v = calibench::corpus::validations::parse("val.jsonl", bytes);
    assert!(v
        .problems
        .iter()
        .chain(v.malformed.iter())
        .all(|p| p.file == "val.jsonl" && p.line.is_some()));
    let (_, problems) = calibench::corpus::targets::parse("t.jsonl", bytes);
    assert!(problems
        .iter()
        .all(|p| p.file == "t.jsonl" && p.line.is_some()));
    exercise_queries(bytes);
    exercise_scores(bytes);
    let _ = config::parse(
        std::path::Path::new("e.toml"),
        &String::from_utf8_lossy(bytes),
    );
}

/// Reads `bytes` as imported scores and compares whatever is accepted: both arms' figures, the
/// deltas, a judge panel and the repeats' units.
fn exercise_scores(bytes: &[u8]) {
    use calibench::replay::scores;
    let (lines, problems) = calibench::corpus::scores::parse("s.jsonl", bytes);
    assert!(problems
        .iter()
        .all(|p| p.file == "s.jsonl" && p.line.is_some()));
    let of = |arm: &str| -> Vec<&calibench::corpus::scores::Score> {
        lines.iter().filter(|s| s.arm.0 == arm).collect()
    };
    let (a, b) = (of("a"), of("b"));
    let (a_items, b_items) = (scores::by_item(&a), scores::by_item(&b));
    for (label, arm, items) in [("a", &a, &a_items), ("b", &b, &b_items)] {
        let figures = scores::arm(label, arm, items);
        for f in figures.scorers.values() {
            assert!(f.mean.is_none_or(f64::is_finite));
        }
        let _ = scores::panel(label, items, &["m".to_string(), "j".to_string()]);
        let _ = scores::repeat_rows(arm);
        let _ = scores::item_rows("baseline", items);
    }
    for c in scores::compare(&a_items, &b_items, 20, 1, 1) {
        assert!(c.delta.delta.is_finite() || c.delta.pairs == 0);
    }
}

/// A line of `scores.jsonl` with its values drawn near the edges of what the reader accepts.
fn score_line() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        Just("1".to_string()),
        Just("0".to_string()),
        Just("0.5".to_string()),
        Just("-1".to_string()),
        Just("1e308".to_string()),
        Just("null".to_string()),
        Just("\"1\"".to_string()),
        Just("1.5".to_string()),
        Just("\"\"".to_string()),
        Just("[]".to_string()),
        Just("true".to_string()),
    ];
    (
        prop_oneof![Just("a"), Just("b")],
        value.clone(),
        value.clone(),
        prop_oneof![Just("m"), Just("j"), Just("")],
        value.clone(),
        value,
    )
        .prop_map(|(arm, item, repeat, scorer, score, confidence)| {
            format!(
                "{{\"arm\": \"{arm}\", \"task\": \"t\", \"item\": {item}, \"repeat\": {repeat}, \"scorer\": \"{scorer}\", \"score\": {score}, \"confidence\": {confidence}, \"source\": \"s\"}}"
            )
        })
}

/// Reads `bytes` as query traces and replays whatever is accepted under both default models,
/// metrics and paired deltas included.
fn exercise_queries(bytes: &[u8]) {
    use calibench::policy::{CategoryMax, ConfidencePolicy, FlatMean};
    use calibench::replay::query_metrics::{arm_metrics, deltas, replay_all};
    use calibench::stats::bootstrap::{Method, Plan};
    let (all, problems) = queries::parse("q.jsonl", bytes);
    assert!(problems
        .iter()
        .all(|p| p.file == "q.jsonl" && p.line.is_some()));
    let refs: Vec<&queries::Query> = all.iter().collect();
    let plan = Plan {
        method: Method::Units,
        replicates: 20,
        seed: 1,
        threads: 1,
    };
    let policies = [
        ConfidencePolicy::FlatMean(FlatMean::default()),
        ConfidencePolicy::CategoryMax(CategoryMax::default()),
    ];
    let rows: Vec<_> = policies
        .iter()
        .map(|p| {
            let rows = replay_all("a", p, &refs);
            for r in &rows {
                assert!((0.0..=1.0).contains(&r.outcome.confidence));
            }
            let _ = arm_metrics(p, &rows, plan);
            rows
        })
        .collect();
    let _ = deltas(&rows[0], &rows[1], plan);
}

fn query_line() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        Just("null".to_string()),
        Just("0".to_string()),
        Just("3".to_string()),
        Just("12".to_string()),
        Just("-1".to_string()),
        Just("0.5".to_string()),
        Just("1e400".to_string()),
        Just("true".to_string()),
        Just("\"recovery\"".to_string()),
        Just("\"src/a_b.h\"".to_string()),
        Just("[]".to_string()),
    ];
    let tool = prop::sample::select(vec![
        "find",
        "grep",
        "references",
        "read",
        "discovery",
        "cmake",
        "ctest",
        "git",
        "gh",
        "bazel",
    ]);
    let keys = [
        "phase",
        "attempt",
        "target",
        "ok",
        "hits",
        "files",
        "relevant",
        "factors",
        "passed",
        "tests_run",
        "tests_passed",
        "tests_failed",
        "score",
    ];
    let call = (
        tool,
        prop::collection::vec((prop::sample::select(keys.to_vec()), value.clone()), 0..8),
    )
        .prop_map(|(t, kv)| {
            let mut fields = vec![format!("\"tool\": \"{t}\"")];
            fields.extend(kv.iter().map(|(k, v)| format!("\"{k}\": {v}")));
            format!("{{{}}}", fields.join(", "))
        });
    (
        prop::collection::vec(call, 0..6),
        value,
        any::<bool>(),
        0..3u8,
    )
        .prop_map(|(calls, correct, cut, id)| {
            let s = format!(
                r#"{{"query_id": "q{id}", "correct": {correct}, "first_pass_correct": true, "tools": [{}]}}"#,
                calls.join(", ")
            );
            if cut {
                s[..s.len() / 2].to_string()
            } else {
                s
            }
        })
}

fn review_line() -> impl Strategy<Value = String> {
    // Values a field may break its rule with, and now and then one that refuses the whole line
    // (a number out of range, a key repeated deep inside).
    let value = prop_oneof![
        8 => Just("null".to_string()),
        8 => Just("0.5".to_string()),
        8 => Just("75".to_string()),
        8 => Just("-3".to_string()),
        8 => Just("\"P1\"".to_string()),
        8 => Just("\"\"".to_string()),
        8 => Just("[]".to_string()),
        8 => Just("[\"a\"]".to_string()),
        8 => Just("[\"a\", 1, {}]".to_string()),
        8 => Just("{}".to_string()),
        8 => Just("{\"k\": [1, {\"j\": 0}]}".to_string()),
        8 => Just("true".to_string()),
        8 => Just("2.0".to_string()),
        8 => Just("18446744073709551616".to_string()),
        8 => Just("\"esc\\u00e9\\n\"".to_string()),
        1 => Just("1e400".to_string()),
        1 => Just("{\"k\": 1, \"k\": 2}".to_string()),
        1 => Just("[{\"k\": 1}, {\"k\": [1, {\"j\": 0, \"j\": 0}]}]".to_string()),
    ];
    let keys = [
        "extra",
        "suggested_fix",
        "why_it_matters",
        "id",
        "title",
        "severity",
        "section",
        "finding_type",
        "autofix_class",
        "confidence",
        "file",
        "line",
        "owner",
        "requires_verification",
        "pre_existing",
        "evidence",
        "premise",
    ];
    // Distinct keys, each with a value, and now and then one of them again (a repeated key
    // refuses the whole line).
    let finding = (
        prop::sample::subsequence(keys.to_vec(), 0..keys.len()).prop_shuffle(),
        prop::collection::vec(value.clone(), keys.len()),
        prop::option::weighted(0.1, (prop::sample::select(keys.to_vec()), value.clone())),
    )
        .prop_map(|(names, values, again)| {
            let mut kv: Vec<String> = names
                .iter()
                .zip(&values)
                .map(|(k, v)| format!("\"{k}\": {v}"))
                .collect();
            kv.extend(again.map(|(k, v)| format!("\"{k}\": {v}")));
            format!("{{{}}}", kv.join(", "))
        });
    let envelope = prop::collection::vec(
        (
            prop::sample::select(vec![
                "target",
                "arm",
                "reviewer",
                "status",
                "reason",
                "note",
                "testing_gaps",
            ]),
            value.clone(),
        ),
        0..2,
    );
    // Mostly lines that are readable as records, so that findings are read.
    let run = prop_oneof![4 => Just("1".to_string()), 1 => value.clone()];
    (
        prop::collection::vec(finding, 0..4),
        run,
        envelope,
        prop::bool::weighted(0.2),
    )
        .prop_map(|(f, run, more, cut)| {
        let more: String = more.iter().map(|(k, v)| format!(", \"{k}\": {v}")).collect();
        let s = format!(
            r#"{{"target": "t", "arm": "b", "reviewer": "r", "run": {run}, "findings": [{}]{more}}}"#,
            f.join(", ")
        );
        if cut {
            s[..s.len() / 2].to_string()
        } else {
            s
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        exercise(&bytes);
    }

    #[test]
    fn near_valid_csv_never_panics(text in csv_text()) {
        exercise(text.as_bytes());
    }

    #[test]
    fn near_valid_jsonl_never_panics(text in jsonl_text()) {
        exercise(text.as_bytes());
    }

    #[test]
    fn corpus_and_experiment_readers_never_panic_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        exercise_corpus(&bytes);
    }

    #[test]
    fn near_valid_queries_never_panic(lines in prop::collection::vec(query_line(), 0..5)) {
        exercise_queries(lines.join("\n").as_bytes());
    }

    #[test]
    fn near_valid_scores_never_panic(lines in prop::collection::vec(score_line(), 0..8)) {
        exercise_scores(lines.join("\n").as_bytes());
    }

    #[test]
    fn near_valid_reviews_never_panic(lines in prop::collection::vec(review_line(), 0..5)) {
        exercise_corpus(lines.join("\n").as_bytes());
    }

    // A run reads reviews.jsonl by a faster route (`corpus::raw`) than `validate` and `collect`
    // (`reviews::parse`); both must keep and refuse the same lines, with the same words.
    #[test]
    fn the_run_reads_reviews_as_the_general_reader_does(lines in prop::collection::vec(review_line(), 0..5)) {
        let bytes = lines.join("\n");
        let (records, problems) = reviews::parse("r.jsonl", bytes.as_bytes());
        for mode in [Mode::Doc, Mode::Code] {
            for scale in [Scale::Float, Scale::Anchor] {
                let wants = [("b".to_string(), scale)];
                let fast = reviews::parse_for("r.jsonl", bytes.as_bytes(), mode, &wants);
                prop_assert_eq!(&fast.problems, &problems);
                prop_assert_eq!(&fast.selections[0].returns, &reviews::select(&records, "b", mode, scale));
            }
        }
    }
}
