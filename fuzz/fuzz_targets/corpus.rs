//! Arbitrary bytes into the reviews, queries, verdicts, validations, targets, scores and
//! experiment readers, then the review and query replays and the scores' comparison of whatever
//! they accept: never a panic.
#![no_main]

use calibench::policy::{Mode, Scale};
use calibench::corpus::{queries, reviews, targets, validations, verdicts};
use calibench::replay::review::{replay, ReturnRef};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = verdicts::parse("v.jsonl", data);
    let _ = validations::parse("val.jsonl", data);
    let _ = targets::parse("t.jsonl", data);
    let (scores, _) = calibench::corpus::scores::parse("s.jsonl", data);
    let of = |arm: &str| -> Vec<&calibench::corpus::scores::Score> {
        scores.iter().filter(|s| s.arm.0 == arm).collect()
    };
    let (a, b) = (of("a"), of("b"));
    let (a_items, b_items) = (calibench::replay::scores::by_item(&a), calibench::replay::scores::by_item(&b));
    let _ = calibench::replay::scores::arm("a", &a, &a_items);
    let _ = calibench::replay::scores::compare(&a_items, &b_items, 10, 1, 1);
    let (traces, _) = queries::parse("q.jsonl", data);
    let refs: Vec<&queries::Query> = traces.iter().collect();
    let _ = calibench::config::parse(std::path::Path::new("e.toml"), &String::from_utf8_lossy(data));
    const EXPERIMENT: &str = "name = \"f\"\n[arms.baseline.review]\npolicy = \"float-gates\"\n\
                              [arms.treatment.review]\npolicy = \"anchored\"\n";
    let Ok(exp) = calibench::config::parse(std::path::Path::new("e.toml"), EXPERIMENT) else { return };
    for arm in exp.arms() {
        let _ = calibench::replay::query_metrics::replay_all("a", &arm.confidence, &refs);
    }
    for mode in [Mode::Doc, Mode::Code] {
        for arm in exp.arms() {
            let scale: Scale = arm.review.scale();
            let wants = [("b".to_string(), scale)];
            let parsed = reviews::parse_for("r.jsonl", data, mode, &wants);
            for sel in &parsed.selections {
                let refs: Vec<ReturnRef> = sel
                    .returns
                    .iter()
                    .map(|r| ReturnRef { reviewer: &r.reviewer, findings: &r.findings })
                    .collect();
                let _ = replay(&arm.review, mode, &refs);
            }
        }
    }
});
