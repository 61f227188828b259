//! The bias audit's example (`corpora/judge-bias`): a document review judged by a panel that
//! agrees on a bias. judge-c reads each finding's stated confidence and adds to the treatment's
//! (anchored, stated higher) findings what it takes for certainty; judges a and b score the
//! finding alone. Every other bias the audit checks is recorded and left out: the judges
//! report their models (judge-a runs the model one reviewer reports, and scores that
//! reviewer's findings as it scores any), each judge call scores five findings and records
//! their places (where an item stands moves nothing), and the findings' texts are as long in
//! both arms.
//!
//! What the audit finds is whatever `calibench run` computes on these files.

use serde_json::{json, Value};

use super::{clamp01, lines, Draw, Files, DOC_TITLES, SECTIONS};
use crate::corpus::files::File;

const PERSONAS: [(&str, &str); 3] = [
    ("coherence", "model-r1"),
    ("feasibility", "model-r2"),
    ("product-lens", "model-a"),
];
const JUDGES: [(&str, &str); 3] = [
    ("judge-a", "model-a"),
    ("judge-b", "model-b"),
    ("judge-c", "model-c"),
];
/// What judge-c adds to a treatment finding's scores: the stated confidence's pull.
const SWAYED: f64 = 0.15;
const PLANS: usize = 12;
const ISSUES: usize = 6;

struct Issue {
    title: &'static str,
    section: &'static str,
    quality: f64,
    /// Which persona's domain it is in.
    domain: usize,
}

/// The corpus: `reviews.jsonl`, `verdicts.jsonl` and its experiment.
pub fn judge_bias(seed: u64) -> Files {
    let mut d = Draw::new(seed, 66);
    let plans: Vec<Vec<Issue>> = (0..PLANS)
        .map(|p| {
            (0..ISSUES)
                .map(|k| Issue {
                    title: DOC_TITLES[(k * 5 + p * 3) % DOC_TITLES.len()],
                    section: d.pick(&SECTIONS),
                    quality: clamp01(0.2 + 0.6 * d.0.unit_f64()),
                    domain: d.int(0, PERSONAS.len() as i64 - 1) as usize,
                })
                .collect()
        })
        .collect();
    let mut reviews = Vec::new();
    let mut verdicts = Vec::new();
    for (arm, anchored) in [("baseline", false), ("treatment", true)] {
        for (p, issues) in plans.iter().enumerate() {
            let plan = format!("plan-{p:02}");
            // The findings of the plan in this arm, in the order the judges get them.
            let mut judged: Vec<(String, f64)> = Vec::new();
            for run in 0..2u32 {
                for (who, (persona, model)) in PERSONAS.iter().enumerate() {
                    let mut findings = Vec::new();
                    for (k, issue) in issues.iter().enumerate() {
                        let notice = if issue.domain == who { 0.8 } else { 0.15 };
                        if !d.chance(notice) {
                            continue;
                        }
                        let id = format!("{arm}-{plan}-r{run}-{persona}-{k}");
                        let confidence = if anchored {
                            json!(if issue.quality + d.normal(0.1) < 0.45 {
                                50
                            } else {
                                75
                            })
                        } else {
                            json!(
                                ((0.45 + 0.4 * issue.quality + d.normal(0.05)).clamp(0.3, 0.95)
                                    * 100.0)
                                    .round()
                                    / 100.0
                            )
                        };
                        let words = d.int(8, 30) as usize;
                        findings.push(json!({
                            "id": id, "title": issue.title, "severity": "P2",
                            "section": issue.section, "finding_type": "omission",
                            "autofix_class": "manual", "confidence": confidence,
                            "why_it_matters": vec!["the plan"; words].join(" "),
                            "evidence": [format!("{} section", issue.section)],
                        }));
                        judged.push((id, issue.quality));
                    }
                    reviews.push(
                        json!({
                            "target": plan, "arm": arm, "run": run, "reviewer": persona,
                            "model": model, "findings": findings,
                        })
                        .to_string(),
                    );
                }
            }
            // Each judge call scores five findings; its verdicts record their places.
            for (i, (id, quality)) in judged.iter().enumerate() {
                let place = (i % 5) as u64;
                let scores: Vec<Value> = JUDGES
                    .iter()
                    .map(|(judge, model)| {
                        let sway = if *judge == "judge-c" && anchored {
                            SWAYED
                        } else {
                            0.0
                        };
                        let s = |d: &mut Draw| {
                            (clamp01(quality + sway + d.normal(0.08)) * 20.0).round() / 20.0
                        };
                        // A call of five findings, its cost shared among them.
                        json!({
                            "model": judge, "reported_model": model, "position": place,
                            "per_dimension": {"real": s(&mut d), "important": s(&mut d)},
                            "usage": {"input_tokens": 420, "output_tokens": 60, "cost_usd": 0.00216},
                        })
                    })
                    .collect();
                verdicts.push(json!({"item_id": id, "arm": arm, "verdicts": scores}).to_string());
            }
        }
    }
    // The whole plan, judged in both arms: the item the lift pairs on. judge-c reads the
    // treatment's confident review as a better one too.
    let mut d = Draw::new(seed, 67);
    for p in 0..PLANS {
        let base = 0.45 + 0.2 * d.0.unit_f64();
        for (arm, useful) in [("baseline", base), ("treatment", base + 0.02)] {
            let scores: Vec<Value> = JUDGES
                .iter()
                .map(|(judge, model)| {
                    let sway = if *judge == "judge-c" && arm == "treatment" {
                        SWAYED
                    } else {
                        0.0
                    };
                    let s = |d: &mut Draw| {
                        (clamp01(useful + sway + d.normal(0.05)) * 20.0).round() / 20.0
                    };
                    json!({
                        "model": judge, "reported_model": model,
                        "per_dimension": {"real": s(&mut d), "important": s(&mut d)},
                    })
                })
                .collect();
            verdicts.push(
                json!({"item_id": format!("plan-{p:02}"), "arm": arm, "verdicts": scores})
                    .to_string(),
            );
        }
    }
    vec![
        (File::Reviews.name().into(), lines(reviews)),
        (File::Verdicts.name().into(), lines(verdicts)),
        (
            "experiment.toml".into(),
            include_str!("judge-bias.toml").to_string(),
        ),
    ]
}
