//! Generators of the example corpora under `corpora/`, from a fixed seed.
//!
//! They model how reviewer personas behave in the seed documents, not the metrics: every figure
//! in a report is whatever the pipeline computes on what is generated here.
//! * Each target hides latent issues with a true quality (is it real, does it matter). Each
//!   persona notices the issues of its domain more often than others, so several personas file
//!   the same issue and corroboration occurs.
//! * Float confidences cluster on round values (0.60, 0.65, 0.72, 0.80, 0.85…); anchors land
//!   on 50, 75 and 100, with 0 and 25 almost never emitted.
//! * Premise personas sometimes file three or more variants of one root premise at 0.68–0.72.
//! * A few findings break the schema (a confidence off the arm's scale) and a few reviewer
//!   calls fail, so Coverage has something to count.
//! * Judges score each finding's `real` and `important` dimensions near its true quality.
//!
//! `cargo run --example generate_corpora` rewrites the corpora; a test checks that the
//! committed files are exactly what these functions produce.

use crate::corpus::files::File;
use serde_json::{json, Value};

mod capacity;
mod judge_bias;
pub mod starter;

pub use capacity::{many as many_queries, EXPERIMENT as CAPACITY_EXPERIMENT};

use crate::stats::rng::Rng;

/// The seed every example corpus is generated from.
pub const SEED: u64 = 20260421;

/// A generated corpus: each file's path in its folder, and its contents.
pub type Files = Vec<(String, String)>;

/// A seeded stream with the few distributions the generators need.
struct Draw(Rng);

impl Draw {
    fn new(seed: u64, stream: u64) -> Self {
        Draw(Rng::for_replicate(seed, stream))
    }
    fn chance(&mut self, p: f64) -> bool {
        self.0.unit_f64() < p
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.0.below(items.len() as u64) as usize]
    }
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.0.below((hi - lo + 1) as u64) as i64
    }
    fn normal(&mut self, sd: f64) -> f64 {
        // Box–Muller.
        let u = self.0.unit_f64().max(1e-12);
        let v = self.0.unit_f64();
        sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
    fn weighted<T: Copy>(&mut self, items: &[(T, f64)]) -> T {
        let total: f64 = items.iter().map(|(_, w)| w).sum();
        let mut x = self.0.unit_f64() * total;
        for &(item, w) in items {
            if x < w {
                return item;
            }
            x -= w;
        }
        items[items.len() - 1].0
    }
}

fn clamp01(x: f64) -> f64 {
    x.clamp(0.0, 1.0)
}

/// A float confidence the way personas write it: mostly snapped to a favourite round value.
fn float_confidence(d: &mut Draw, quality: f64) -> f64 {
    let raw = (0.42 + 0.48 * quality + d.normal(0.07)).clamp(0.30, 0.95);
    const FAVOURITES: [f64; 9] = [0.45, 0.50, 0.55, 0.60, 0.65, 0.72, 0.80, 0.85, 0.90];
    if d.chance(0.75) {
        FAVOURITES
            .iter()
            .copied()
            .min_by(|a, b| (a - raw).abs().total_cmp(&(b - raw).abs()))
            .unwrap_or(raw)
    } else {
        (raw * 100.0).round() / 100.0
    }
}

/// An anchor the way personas pick it: 50, 75 or 100, rarely 25.
fn anchor_confidence(d: &mut Draw, quality: f64) -> f64 {
    let x = quality + d.normal(0.15);
    if x < 0.12 {
        25.0
    } else if x < 0.5 {
        50.0
    } else if x < 0.85 {
        75.0
    } else {
        100.0
    }
}

/// Judges' verdicts on one finding: three judges near the truth, now and then a fourth that
/// fails. `blind_spot` is what judge-b and judge-c, prompted alike, add to every finding's
/// importance: a shared mistake that agreement among the judges cannot see.
fn verdict_line(
    d: &mut Draw,
    item_id: &str,
    arm: &str,
    (real, important): (f64, f64),
    blind_spot: f64,
) -> String {
    let mut verdicts: Vec<Value> = ["judge-a", "judge-b", "judge-c"]
        .iter()
        .map(|model| {
            let q = |x: f64, d: &mut Draw| (clamp01(x + d.normal(0.08)) * 4.0).round() / 4.0;
            let bias = if *model == "judge-a" { 0.0 } else { blind_spot };
            json!({"model": model, "per_dimension": {"real": q(real, d), "important": q(important + bias, d)}})
        })
        .collect();
    if d.chance(0.08) {
        verdicts.push(json!({"model": "judge-d", "per_dimension": null}));
    }
    json!({"item_id": item_id, "arm": arm, "verdicts": verdicts}).to_string()
}

/// Judges' verdicts on one arm's review of a whole target: a free-standing item, judged in both
/// arms, so the lift pairs on it. `useful` is how useful the review is to the author, the
/// latent the judges perceive with noise. When `dissent` is set a fourth judge, reading the
/// target from a stale checkout, scores it far off: a contested item for the trust gate.
fn review_verdict(d: &mut Draw, target: &str, arm: &str, useful: f64, dissent: bool) -> String {
    let q = |x: f64, d: &mut Draw| (clamp01(x + d.normal(0.06)) * 20.0).round() / 20.0;
    let mut verdicts: Vec<Value> = ["judge-a", "judge-b", "judge-c"]
        .iter()
        .map(|model| {
            json!({"model": model, "per_dimension": {"useful": q(useful, d), "accurate": q(useful + 0.05, d)}})
        })
        .collect();
    if dissent {
        let off = q(1.0 - useful, d);
        verdicts
            .push(json!({"model": "judge-d", "per_dimension": {"useful": off, "accurate": off}}));
    }
    json!({"item_id": target, "arm": arm, "verdicts": verdicts}).to_string()
}

struct Latent {
    title: String,
    place: String,
    line: u32,
    severity: &'static str,
    finding_type: &'static str,
    domain: usize,
    quality: f64,
    importance: f64,
    autofix: &'static str,
    pre_existing: bool,
}

// ---------------------------------------------------------------------------------------------
// Document review

/// The seven document-review personas.
pub const DOC_PERSONAS: [&str; 7] = [
    "coherence",
    "feasibility",
    "product-lens",
    "design-lens",
    "security-lens",
    "scope-guardian",
    "adversarial-document",
];

/// (plan, approximate size in KB, latent issues).
const PLANS: [(&str, u32, usize); 4] = [
    ("cli-printing-press", 63, 30),
    ("interactive-judgment", 27, 18),
    ("deploy-runbook", 7, 10),
    ("brainstorm-notes", 10, 12),
];

const SECTIONS: [&str; 8] = [
    "Goals",
    "Scope",
    "Architecture",
    "Rollout",
    "Testing",
    "Risks",
    "Dependencies",
    "Open questions",
];

const DOC_TITLES: [&str; 24] = [
    "Rollback path is unspecified",
    "Success metric has no baseline",
    "Step order contradicts the dependency graph",
    "Migration lacks a dry run",
    "Auth token scope is broader than needed",
    "Feature flag owner is not named",
    "Two sections disagree on the release date",
    "Load estimate ignores peak traffic",
    "User research is cited but not linked",
    "Error states are not designed",
    "Secrets are stored in the config file",
    "Scope includes an unrelated refactor",
    "Acceptance criteria are not testable",
    "Fallback behaviour is undefined",
    "Data retention period is missing",
    "API contract changes without versioning",
    "Capacity plan assumes a single region",
    "On-call handoff is not described",
    "Cost estimate omits storage",
    "Accessibility review is missing",
    "Deprecation timeline is unrealistic",
    "Monitoring alerts have no thresholds",
    "Third-party limits are not checked",
    "The non-goals list contradicts the scope",
];

const PREMISES: [&str; 3] = [
    "The motivation for the redesign is thin",
    "The plan assumes users want this workflow",
    "The premise that latency is the bottleneck is unproven",
];

/// The document-review A/B corpus: floats with per-severity gates vs the anchored rubric.
pub fn doc_review(seed: u64) -> Files {
    let mut d = Draw::new(seed, 1);
    let mut latent: Vec<Vec<Latent>> = Vec::new();
    for (p, &(_, _, issues)) in PLANS.iter().enumerate() {
        let mut plan = Vec::new();
        for k in 0..issues {
            let quality = clamp01(0.15 + 0.85 * d.0.unit_f64());
            plan.push(Latent {
                title: DOC_TITLES[(k * 7 + p * 5) % DOC_TITLES.len()].to_string(),
                place: d.pick(&SECTIONS).to_string(),
                line: 0,
                severity: d.weighted(&[("P0", 0.05), ("P1", 0.25), ("P2", 0.45), ("P3", 0.25)]),
                finding_type: d.pick(&["error", "omission", "omission"]),
                domain: d.int(0, DOC_PERSONAS.len() as i64 - 1) as usize,
                quality,
                importance: clamp01(quality + d.normal(0.15)),
                autofix: d.weighted(&[("safe_auto", 0.2), ("gated_auto", 0.3), ("manual", 0.5)]),
                pre_existing: false,
            });
        }
        latent.push(plan);
    }

    let mut reviews = Vec::new();
    let mut verdicts = Vec::new();
    // Every judged finding with its truth (quality, importance), for the human labels.
    let mut judged: Vec<(String, &str, f64, f64)> = Vec::new();
    for (arm, anchored) in [("baseline", false), ("treatment", true)] {
        for (p, &(plan, _, _)) in PLANS.iter().enumerate() {
            for run in 0..3u32 {
                for (who, persona) in DOC_PERSONAS.iter().enumerate() {
                    let mut d = review_draw(seed, 1000, p, (run, 10), who, anchored);
                    if failed_return(&mut d, 0.015, &mut reviews, (plan, arm, run, persona)) {
                        continue;
                    }
                    let mut findings = Vec::new();
                    for (k, issue) in latent[p].iter().enumerate() {
                        let p_notice = if issue.domain == who { 0.7 } else { 0.12 };
                        if !d.chance(p_notice) {
                            continue;
                        }
                        let id = format!("{arm}-{plan}-r{run}-{persona}-{k}");
                        let mut confidence = if anchored {
                            json!(anchor_confidence(&mut d, issue.quality) as i64)
                        } else {
                            json!(float_confidence(&mut d, issue.quality))
                        };
                        if d.chance(0.02) {
                            // A persona writes its confidence on the other scale: malformed.
                            confidence = if anchored { json!(0.85) } else { json!(85) };
                        }
                        // Personas vary the title's case and punctuation; normalization merges them.
                        let title = if d.chance(0.3) {
                            format!("{}.", issue.title.to_lowercase())
                        } else {
                            issue.title.clone()
                        };
                        let fix = (issue.autofix == "safe_auto")
                            .then(|| format!("Add: {}", issue.title.to_lowercase()));
                        findings.push(json!({
                            "id": id, "title": title, "severity": issue.severity, "section": issue.place,
                            "finding_type": issue.finding_type, "autofix_class": issue.autofix,
                            "confidence": confidence, "suggested_fix": fix,
                            "why_it_matters": "A reader acting on the plan would hit this.",
                            "evidence": [format!("{} section", issue.place)],
                        }));
                        verdicts.push(verdict_line(
                            &mut d,
                            &id,
                            arm,
                            (issue.quality, issue.importance),
                            DOC_BLIND_SPOT,
                        ));
                        judged.push((id, arm, issue.quality, issue.importance));
                    }
                    if matches!(*persona, "product-lens" | "adversarial-document") && d.chance(0.5)
                    {
                        // One root premise filed as several findings at nearly the same confidence.
                        let premise = d.pick(&PREMISES).to_string();
                        let variants = d.int(3, 4);
                        for v in 0..variants {
                            let id = format!("{arm}-{plan}-r{run}-{persona}-premise{v}");
                            let confidence = if anchored {
                                json!(d.pick(&[75, 75, 50]))
                            } else {
                                json!(d.pick(&[0.68, 0.7, 0.72]))
                            };
                            findings.push(json!({
                                "id": id, "title": format!("{premise} ({})", ["scope", "evidence", "alternatives", "timing"][v as usize]),
                                "severity": "P2", "section": "Goals", "finding_type": "omission",
                                "autofix_class": "manual", "confidence": confidence, "premise": premise,
                            }));
                            verdicts.push(verdict_line(
                                &mut d,
                                &id,
                                arm,
                                (0.35, 0.3),
                                DOC_BLIND_SPOT,
                            ));
                            judged.push((id, arm, 0.35, 0.3));
                        }
                    }
                    reviews.push(json!({
                        "target": plan, "arm": arm, "run": run, "reviewer": persona, "findings": findings,
                        "residual_risks": [], "deferred_questions": [],
                    }).to_string());
                }
            }
        }
    }
    // Whole-plan verdicts. Authors find the anchored reviews more useful: fewer values to
    // second-guess, FYI kept apart from decisions. Its own stream, so the findings above do not
    // move.
    let (mut d, plans) = (Draw::new(seed, 11), PLANS.iter().map(|p| p.0));
    let whole = whole_target_verdicts(&mut d, plans, (0.45, 0.12), None, &mut verdicts);
    let mut files = review_files(reviews, verdicts, DOC_EXPERIMENT);
    files.push((
        File::Labels.name().into(),
        human_labels(seed, &judged, &whole),
    ));
    files
}

/// What judge-b and judge-c add to every finding's importance in the doc example.
const DOC_BLIND_SPOT: f64 = 0.17;

/// Three annotators label 60 judged findings drawn at random (its own stream, so nothing else
/// moves): each reads the truth with more noise than a judge (sd 0.12 against 0.08) and no
/// shared bias, on the judges' quarter-point scale. Then two of the plans, drawn at random,
/// have their whole-plan reviews labelled in both arms: the lift's labelled pairs.
fn human_labels(
    seed: u64,
    judged: &[(String, &str, f64, f64)],
    whole: &[(&str, &str, f64)],
) -> String {
    let mut d = Draw::new(seed, 12);
    let mut pool: Vec<usize> = (0..judged.len()).collect();
    let mut drawn = Vec::new();
    for _ in 0..60.min(pool.len()) {
        let k = d.int(0, pool.len() as i64 - 1) as usize;
        drawn.push(pool.swap_remove(k));
    }
    drawn.sort_unstable();
    let mut out = Vec::new();
    for i in drawn {
        let (id, arm, real, important) = &judged[i];
        for who in ["ann-1", "ann-2", "ann-3"] {
            let q = |x: f64, d: &mut Draw| (clamp01(x + d.normal(0.12)) * 4.0).round() / 4.0;
            out.push(
                json!({"item_id": id, "arm": arm, "annotator": who,
                       "per_dimension": {"real": q(*real, &mut d), "important": q(*important, &mut d)}})
                .to_string(),
            );
        }
    }
    let mut plans: Vec<&str> = whole.iter().map(|w| w.0).collect();
    plans.dedup();
    let mut chosen = Vec::new();
    for _ in 0..2.min(plans.len()) {
        let k = d.int(0, plans.len() as i64 - 1) as usize;
        chosen.push(plans.swap_remove(k));
    }
    for &(plan, arm, useful) in whole.iter().filter(|w| chosen.contains(&w.0)) {
        for who in ["ann-1", "ann-2", "ann-3"] {
            let q = |x: f64, d: &mut Draw| (clamp01(x + d.normal(0.12)) * 20.0).round() / 20.0;
            out.push(
                json!({"item_id": plan, "arm": arm, "annotator": who,
                       "per_dimension": {"useful": q(useful, &mut d), "accurate": q(useful + 0.05, &mut d)}})
                .to_string(),
            );
        }
    }
    lines(out)
}

const DOC_EXPERIMENT: &str = include_str!("generate/doc-review-ab.toml");

// ---------------------------------------------------------------------------------------------
// Code review

const ALWAYS_ON: [&str; 4] = [
    "correctness",
    "testing",
    "maintainability",
    "project-standards",
];

/// (change, files, conditional personas it triggers).
const CHANGES: [(&str, &[&str], &[&str]); 6] = [
    (
        "pr-1841-auth-token-refresh",
        &["src/auth/refresh.rs", "src/auth/session.rs"],
        &["security", "reliability"],
    ),
    (
        "pr-1852-query-cache",
        &["src/db/cache.rs", "src/db/query.rs"],
        &["performance"],
    ),
    (
        "pr-1860-payment-retry",
        &["src/billing/retry.rs", "src/billing/client.rs"],
        &["reliability", "adversarial", "security"],
    ),
    ("pr-1866-cli-flags", &["src/cli/args.rs"], &[]),
    (
        "pr-1871-batch-export",
        &["src/export/batch.rs", "src/export/writer.rs"],
        &["performance", "reliability"],
    ),
    // A dependency bump: the kind of change the trivial-pattern skip rule is for.
    ("pr-1874-bump-tokio", &["Cargo.toml", "Cargo.lock"], &[]),
];

/// The pull requests behind the changes, for the treatment's skip rules: an
/// ordinary open PR, a merged one, one already reviewed, and a dependency bump.
/// (change, state, title, body, reviewed).
const PULL_REQUESTS: [(&str, &str, &str, &str, bool); 6] = [
    (
        "pr-1841-auth-token-refresh",
        "OPEN",
        "Refresh auth tokens before expiry",
        "Refreshes the session token 60 s before it expires.",
        false,
    ),
    (
        "pr-1852-query-cache",
        "MERGED",
        "Cache prepared queries per tenant",
        "Adds an LRU of prepared statements.",
        false,
    ),
    (
        "pr-1860-payment-retry",
        "OPEN",
        "Retry failed payment captures",
        "Retries captures that fail with a 5xx.",
        false,
    ),
    (
        "pr-1866-cli-flags",
        "OPEN",
        "Add --dry-run and --since flags",
        "",
        true,
    ),
    (
        "pr-1871-batch-export",
        "OPEN",
        "Export in batches of 10k rows",
        "Streams the export instead of buffering it.",
        false,
    ),
    (
        "pr-1874-bump-tokio",
        "OPEN",
        "chore(deps): bump tokio from 1.40.0 to 1.41.1",
        "",
        false,
    ),
];

/// Why a validator rejects a finding, as its one sentence.
const REJECTIONS: [&str; 4] = [
    "The caller already handles this case.",
    "The issue predates this change.",
    "Not reachable from the changed code.",
    "Covered by an existing lint rule.",
];

const CODE_TITLES: [&str; 16] = [
    "Unchecked unwrap on user input",
    "Retry loop has no backoff",
    "Token compared with non-constant-time equality",
    "Cache key ignores the tenant",
    "Error is swallowed and logged at debug",
    "N+1 query inside the loop",
    "Lock held across an await point",
    "Integer overflow on large batch sizes",
    "Missing test for the empty input case",
    "Function exceeds the project length limit",
    "Public function lacks documentation",
    "Timeout is hard-coded",
    "File handle is not closed on error",
    "Off-by-one in the page boundary",
    "Duplicated parsing logic",
    "Missing test for the retry path",
];

/// Which persona's domain an issue kind belongs to (index into ALWAYS_ON + conditional).
fn code_domain(title: &str) -> &'static str {
    match title {
        t if t.starts_with("Missing test") => "testing",
        "Function exceeds the project length limit" | "Public function lacks documentation" => {
            "project-standards"
        }
        "Duplicated parsing logic" => "maintainability",
        "Token compared with non-constant-time equality" | "Cache key ignores the tenant" => {
            "security"
        }
        "N+1 query inside the loop" | "Integer overflow on large batch sizes" => "performance",
        "Retry loop has no backoff"
        | "Lock held across an await point"
        | "Timeout is hard-coded" => "reliability",
        _ => "correctness",
    }
}

/// The code-review A/B corpus: float gate at 0.60 vs the anchored rubric gating at 75.
pub fn code_review(seed: u64) -> Files {
    let mut d = Draw::new(seed, 2);
    let mut latent: Vec<Vec<Latent>> = Vec::new();
    for (c, (change, files, _)) in CHANGES.iter().enumerate() {
        let n = d.int(7, 12) as usize;
        let n = match *change {
            c if c.contains("bump") => n.min(2),
            // The large change, on which the validation budget fires.
            "pr-1871-batch-export" => n + 8,
            _ => n,
        };
        let mut issues = Vec::new();
        for k in 0..n {
            let title = CODE_TITLES[(k * 5 + c * 3) % CODE_TITLES.len()];
            let soft = matches!(
                code_domain(title),
                "testing" | "maintainability" | "project-standards"
            );
            let quality = clamp01(0.15 + 0.85 * d.0.unit_f64());
            issues.push(Latent {
                title: title.to_string(),
                place: d.pick(files).to_string(),
                line: d.int(10, 400) as u32,
                severity: if soft {
                    d.pick(&["P2", "P3"])
                } else {
                    d.weighted(&[("P0", 0.08), ("P1", 0.32), ("P2", 0.4), ("P3", 0.2)])
                },
                finding_type: "error",
                domain: 0,
                quality,
                importance: clamp01(quality + d.normal(0.15)),
                autofix: if soft && d.chance(0.7) {
                    "advisory"
                } else {
                    d.weighted(&[("safe_auto", 0.3), ("gated_auto", 0.35), ("manual", 0.35)])
                },
                pre_existing: d.chance(0.1),
            });
        }
        latent.push(issues);
    }

    let mut reviews = Vec::new();
    let mut verdicts = Vec::new();
    // The treatment's findings, for its validator calls: (change, run, id, issue, confidence).
    let mut treated: Vec<(usize, u32, String, usize, i64)> = Vec::new();
    for (arm, anchored) in [("baseline", false), ("treatment", true)] {
        for (c, &(change, _, conditional)) in CHANGES.iter().enumerate() {
            let personas: Vec<&str> = ALWAYS_ON
                .iter()
                .chain(conditional.iter())
                .copied()
                .collect();
            for run in 0..2u32 {
                for (who, persona) in personas.iter().enumerate() {
                    let mut d = review_draw(seed, 2000, c, (run, 20), who, anchored);
                    if failed_return(&mut d, 0.02, &mut reviews, (change, arm, run, persona)) {
                        continue;
                    }
                    let mut findings = Vec::new();
                    for (k, issue) in latent[c].iter().enumerate() {
                        let mine = code_domain(&issue.title) == *persona;
                        let p_notice = if mine {
                            0.75
                        } else if *persona == "adversarial" || *persona == "correctness" {
                            0.2
                        } else {
                            0.08
                        };
                        if !d.chance(p_notice) {
                            continue;
                        }
                        let id = format!("{arm}-{change}-r{run}-{persona}-{k}");
                        let confidence = if anchored {
                            let anchor = anchor_confidence(&mut d, issue.quality) as i64;
                            treated.push((c, run, id.clone(), k, anchor));
                            json!(anchor)
                        } else {
                            json!(float_confidence(&mut d, issue.quality))
                        };
                        // Personas point at nearby lines of the same issue.
                        let line = (i64::from(issue.line) + d.int(-2, 2)).max(1);
                        let owner = match issue.autofix {
                            "safe_auto" | "gated_auto" => "review-fixer",
                            "manual" => "downstream-resolver",
                            _ => d.pick(&["human", "downstream-resolver"]),
                        };
                        let fix = (issue.autofix == "safe_auto")
                            .then(|| "Apply the standard guard".to_string());
                        // Compact returns: merge-tier fields only (seed 003).
                        findings.push(json!({
                            "id": id, "title": issue.title, "severity": issue.severity, "file": issue.place,
                            "line": line, "autofix_class": issue.autofix, "owner": owner,
                            "requires_verification": issue.severity == "P0", "pre_existing": issue.pre_existing,
                            "confidence": confidence, "suggested_fix": fix,
                        }));
                        verdicts.push(verdict_line(
                            &mut d,
                            &id,
                            arm,
                            (issue.quality, issue.importance),
                            0.0,
                        ));
                    }
                    reviews.push(json!({
                        "target": change, "arm": arm, "run": run, "reviewer": persona, "findings": findings,
                        "testing_gaps": [],
                    }).to_string());
                }
            }
        }
    }
    // Whole-change verdicts, where a fourth judge reviewed the payment-retry change against a
    // stale checkout and disagrees with the other three: the trust gate should refuse the lift.
    let (mut d, changes) = (Draw::new(seed, 12), CHANGES.iter().map(|c| c.0));
    let dissent = Some("pr-1860-payment-retry");
    let _ = whole_target_verdicts(&mut d, changes, (0.5, 0.08), dissent, &mut verdicts);
    let mut files = review_files(reviews, verdicts, CODE_EXPERIMENT);
    files.push((
        File::Validations.name().into(),
        lines(validator_calls(seed, &latent, &treated)),
    ));
    files.push((File::Targets.name().into(), lines(pull_requests())));
    files.extend(source_snapshots(seed, &latent));
    files
}

/// The recorded Stage 5b calls: one per treatment finding the gate could surface
/// (confidence 50 or more). The validator keeps real issues and rejects weak ones; now and then
/// a call times out, prints something that is not a verdict, or was never recorded.
fn validator_calls(
    seed: u64,
    latent: &[Vec<Latent>],
    treated: &[(usize, u32, String, usize, i64)],
) -> Vec<String> {
    let mut d = Draw::new(seed, 13);
    let mut out = Vec::new();
    for (c, run, id, k, confidence) in treated {
        if *confidence < 50 {
            continue;
        }
        let issue = &latent[*c][*k];
        let (change, missing, failed, malformed) = (
            CHANGES[*c].0,
            d.chance(0.03),
            d.chance(0.04),
            d.chance(0.015),
        );
        if missing {
            continue;
        }
        let mut call = json!({"arm": "treatment", "target": change, "run": run, "finding": id, "validator": "validator-v2"});
        if failed {
            call["status"] = json!("failed");
            call["reason"] = json!("timed out after 120 s");
        } else if malformed {
            call["validated"] = json!("probably");
        } else if issue.quality > 0.5 || d.chance(0.15) {
            call["validated"] = json!(true);
        } else {
            call["validated"] = json!(false);
            call["reason"] = json!(REJECTIONS[*k % REJECTIONS.len()]);
        }
        out.push(call.to_string());
    }
    out
}

/// `targets.jsonl`: each change's pull request.
fn pull_requests() -> Vec<String> {
    PULL_REQUESTS
        .iter()
        .map(|&(target, state, title, body, reviewed)| {
            let files = CHANGES
                .iter()
                .find(|c| c.0 == target)
                .map_or(&[][..], |c| c.1);
            json!({"target": target, "pr": {"state": state, "draft": false, "title": title,
                   "body": if body.is_empty() { serde_json::Value::Null } else { json!(body) },
                   "files": files, "reviewed": reviewed, "trivial": null}})
            .to_string()
        })
        .collect()
}

/// Source snapshots for lint-ignore: each changed file of every change but the
/// CLI one (whose measure is then unknown), with a suppression comment over about one issue in
/// five, on the issue's line.
fn source_snapshots(seed: u64, latent: &[Vec<Latent>]) -> Files {
    let mut d = Draw::new(seed, 14);
    let mut out = Vec::new();
    for (c, &(change, files, _)) in CHANGES.iter().enumerate() {
        if change == "pr-1866-cli-flags" {
            continue;
        }
        for file in files {
            let marked: Vec<u32> = latent[c]
                .iter()
                .filter(|issue| issue.place == *file)
                .filter(|_| d.chance(0.2))
                .map(|issue| issue.line)
                .collect();
            let (marker, code) = if file.ends_with(".rs") {
                (
                    "    #[allow(clippy::unwrap_used)] // input checked upstream",
                    "    let v{} = step(v{})?;",
                )
            } else {
                (
                    "# noqa: pinned by the platform team",
                    "dependency-{} = \"{}.0\"",
                )
            };
            let text: Vec<String> = (1..=420u32)
                .map(|n| {
                    if marked.contains(&n) {
                        marker.to_string()
                    } else {
                        code.replacen("{}", &n.to_string(), 1).replacen(
                            "{}",
                            &(n - 1).to_string(),
                            1,
                        )
                    }
                })
                .collect();
            out.push((format!("sources/{change}/{file}"), lines(text)));
        }
    }
    out
}

const CODE_EXPERIMENT: &str = include_str!("generate/code-review-ab.toml");

/// A review example's files: its returns, its verdicts and its experiment.
fn review_files(reviews: Vec<String>, verdicts: Vec<String>, experiment: &str) -> Files {
    vec![
        (File::Reviews.name().into(), lines(reviews)),
        (File::Verdicts.name().into(), lines(verdicts)),
        ("experiment.toml".into(), experiment.to_string()),
    ]
}

fn lines(v: Vec<String>) -> String {
    let mut s = v.join("\n");
    s.push('\n');
    s
}

/// Every example corpus: folder name under `corpora/` and its files.
pub fn all(seed: u64) -> Vec<(&'static str, Files)> {
    vec![
        ("doc-review-ab", doc_review(seed)),
        ("code-review-ab", code_review(seed)),
        ("capacity-50", capacity::capacity(seed)),
        ("capacity-400", capacity::capacity_400(seed)),
        ("capacity-live", capacity::capacity_live(seed)),
        ("judge-bias", judge_bias::judge_bias(seed)),
    ]
}

/// Each target's whole-target verdicts in both arms: a base usefulness drawn from
/// `[low, low + 0.2)`, and the treatment `lift` above it give or take a little; the `dissent`
/// target has a judge who disagrees with the others.
fn whole_target_verdicts<'a>(
    d: &mut Draw,
    targets: impl Iterator<Item = &'a str>,
    (low, lift): (f64, f64),
    dissent: Option<&str>,
    verdicts: &mut Vec<String>,
) -> Vec<(&'a str, &'static str, f64)> {
    let mut truths = Vec::new();
    for target in targets {
        let base = low + 0.2 * d.0.unit_f64();
        for (arm, useful) in [
            ("baseline", base),
            ("treatment", base + lift + d.normal(0.05)),
        ] {
            verdicts.push(review_verdict(
                d,
                target,
                arm,
                useful,
                dissent == Some(target),
            ));
            truths.push((target, arm, useful));
        }
    }
    truths
}

/// The draw of one reviewer's return, seeded by its place in the corpus: the example's `base`,
/// the target's index, the run (with the example's stride), the persona and the arm.
fn review_draw(
    seed: u64,
    base: u64,
    target: usize,
    (run, stride): (u32, u64),
    who: usize,
    anchored: bool,
) -> Draw {
    Draw::new(
        seed,
        base + (target as u64) * 100
            + u64::from(run) * stride
            + who as u64
            + if anchored { 50_000 } else { 0 },
    )
}

/// With probability `rate` the reviewer failed: its failed return is recorded and `true`
/// returned.
fn failed_return(
    d: &mut Draw,
    rate: f64,
    reviews: &mut Vec<String>,
    (target, arm, run, persona): (&str, &str, u32, &str),
) -> bool {
    let failed = d.chance(rate);
    if failed {
        reviews.push(
            json!({"target": target, "arm": arm, "run": run, "reviewer": persona, "status": "failed"})
                .to_string(),
        );
    }
    failed
}
