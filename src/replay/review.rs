//! The review pipeline (docs/guides/ab-rubric-change.md): one arm's valid returns for one (target, run) in, merged,
//! routed findings out. Pure: no IO, no clock, no randomness.
//!
//! Steps, in order: validation happened when the corpus was read (`corpus::reviews`); then
//! normalize text (2), same-persona collapse (3), dedup and merge (4), corroboration and
//! promotion (5), the pre-existing split (6), mode-aware demotion (7), the gate (8), actionable
//! routing (9) and the listing sort (10). Each step is one function below, named after it.
//!
//! On the float scale every comparison and every promoted value uses the number rounded to 9
//! decimal places, so that 0.55 + 0.10 is 0.65 and meets a 0.65 gate.

use std::sync::Arc;

use serde::Serialize;

use crate::corpus::reviews::{
    Autofix, Claim, CodeSite, Finding, FindingType, Location, Owner, Severity,
};
use crate::corpus::sources::Sources;
use crate::corpus::validations::{Validation, Verdict};
use crate::policy::{
    Controls, InteractiveRoute, LintIgnore, Mode, Promotion, ReviewMode, ReviewPolicy, Scale,
};
use crate::stats::calibration::round9;

/// One reviewer's valid return, as the pipeline reads it.
#[derive(Clone, Copy, Debug)]
pub struct ReturnRef<'a> {
    pub reviewer: &'a Arc<str>,
    pub findings: &'a [Finding],
}

impl<'a> ReturnRef<'a> {
    /// The returns that did not fail, as the pipeline reads them.
    pub fn valid(returns: &[&'a crate::corpus::reviews::Return]) -> Vec<ReturnRef<'a>> {
        returns
            .iter()
            .filter(|r| !r.failed)
            .map(|r| ReturnRef {
                reviewer: &r.reviewer,
                findings: &r.findings,
            })
            .collect()
    }
}

/// Where a merged finding ends up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Actionable,
    Fyi,
    Dropped,
    /// Code mode, demoted in interactive or report-only review: kept visible in a soft bucket.
    Soft,
    /// Code mode, demoted in headless or autofix review.
    Suppressed,
    /// Code mode: the issue predates the change; it leaves the pipeline (step 6).
    PreExisting,
    /// Code mode, `lint_ignore = "suppress"`: on a line that carries a lint suppression comment,
    /// dropped before the gate (docs/guides/ab-rubric-change.md).
    LintSuppressed,
}

/// What the validation pass made of a selected finding (docs/guides/ab-rubric-change.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    Validated,
    /// With the reason of the first rejecting call in file order.
    Rejected(String),
    Failed,
    /// The corpus holds no call for any of its contributors.
    Missing,
    OverBudget,
}

impl Check {
    /// The findings table's `validation` value.
    pub fn name(&self) -> &'static str {
        match self {
            Check::Validated => "validated",
            Check::Rejected(_) => "rejected",
            Check::Failed => "failed",
            Check::Missing => "missing",
            Check::OverBudget => "over_budget",
        }
    }
}

/// What the precision controls need to replay one (arm, target, run) (docs/guides/ab-rubric-change.md).
#[derive(Clone, Copy, Debug)]
pub struct Precision<'a> {
    pub controls: &'a Controls,
    pub target: &'a str,
    /// The corpus's source snapshots, when it has `sources/`.
    pub sources: Option<&'a Sources>,
    /// The validator calls recorded for this (source label, target, run), in file order.
    pub calls: &'a [&'a Validation],
}

/// Every control off: the pipeline alone (docs/guides/ab-rubric-change.md).
pub const NO_CONTROLS: Precision<'static> = Precision {
    controls: &Controls::OFF,
    target: "",
    sources: None,
    calls: &[],
};

/// The reviewer whose findings lint-ignore never suppresses: the suppression itself may break
/// a project rule.
pub const PROJECT_STANDARDS: &str = "project-standards";

/// How an actionable finding reaches the user (step 9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    AutoApply,
    Decision,
}

/// Code mode's partition of actionable findings (step 9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Queue {
    Fixer,
    Residual,
    ReportOnly,
}

/// One reviewer's part in a merged finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Contribution {
    pub reviewer: Arc<str>,
    pub id: Option<Arc<str>>,
    /// The confidence the reviewer recorded.
    pub confidence: f64,
    pub severity: Severity,
    pub title: Arc<str>,
    /// Code mode: its own file and line.
    pub place: Option<(Arc<str>, u32)>,
}

/// A finding after dedup, with its route.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Merged {
    /// Title and evidence of the first member, the highest severity, the most conservative
    /// autofix class, a fix when any member has one.
    #[serde(flatten)]
    pub claim: Claim,
    /// Highest contributing confidence, after same-persona collapse, before promotion.
    pub confidence_before: f64,
    /// After promotion: what the gate saw.
    pub confidence: f64,
    /// Distinct reviewers, in order of first appearance.
    pub reviewers: Vec<Arc<str>>,
    pub contributions: Vec<Contribution>,
    pub promotable: bool,
    pub corroborated: bool,
    pub promoted: bool,
    /// Position of the first contribution among all findings of the (target, run).
    pub order: usize,
    pub location: MergedLocation,
    pub tier: Tier,
    pub route: Option<Route>,
    pub queue: Option<Queue>,
    /// The representative contributor, in `contributions`: highest severity, then highest
    /// confidence, then first in document order.
    pub lead: usize,
    /// Whether a contributor sits on a line with a lint suppression comment; `None` when the
    /// target has no source snapshot.
    pub on_suppressed_line: Option<bool>,
    /// What the validation pass made of it; `None` when it was not selected (`not_run`).
    pub validation: Option<Check>,
}

impl Merged {
    /// Actionable after the validation pass: what reaches the user (docs/guides/ab-rubric-change.md).
    pub fn externalized(&self) -> bool {
        self.tier == Tier::Actionable && matches!(self.validation, None | Some(Check::Validated))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MergedLocation {
    Doc {
        section: Arc<str>,
        /// `error` when any contributor calls it an error.
        finding_type: FindingType,
    },
    Code(CodeSite),
}

/// Step 2: lowercase, keep only alphanumerics and whitespace, collapse whitespace, trim.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    normalize_into(&mut out, text);
    out
}

/// [`normalize`], appended to `out`. One pass: a run of whitespace becomes one space once the
/// next kept character arrives, so none leads or trails.
fn normalize_into(out: &mut String, text: &str) {
    if text.is_ascii() {
        return normalize_ascii_into(out, text.as_bytes());
    }
    let start = out.len();
    let mut gap = false;
    let mut keep = |c: char| {
        if c.is_alphanumeric() {
            if gap && out.len() > start {
                out.push(' ');
            }
            gap = false;
            out.push(c);
        } else if c.is_whitespace() {
            gap = true;
        }
    };
    for c in text.chars() {
        if c.is_ascii() {
            keep(c.to_ascii_lowercase());
        } else {
            c.to_lowercase().for_each(&mut keep);
        }
    }
}

/// [`normalize_into`] of ASCII text, a byte at a time: what titles and sections almost always
/// are. The same rules: ASCII letters and digits are kept (lowercased), and ASCII's whitespace
/// (`char::is_whitespace`, which unlike `u8::is_ascii_whitespace` counts the vertical tab) is
/// a gap. Each byte's fate is one look-up in [`ASCII_CLASS`].
fn normalize_ascii_into(out: &mut String, text: &[u8]) {
    out.reserve(text.len());
    let start = out.len();
    let mut gap = false;
    for &b in text {
        match ASCII_CLASS[usize::from(b)] {
            DROP => {}
            GAP => gap = true,
            kept => {
                if gap && out.len() > start {
                    out.push(' ');
                }
                gap = false;
                out.push(char::from(kept));
            }
        }
    }
}

/// [`ASCII_CLASS`] of a byte that is neither kept nor a gap.
const DROP: u8 = 0;
/// [`ASCII_CLASS`] of ASCII whitespace.
const GAP: u8 = 1;

/// Per byte: the lowercased byte for an ASCII letter or digit, [`GAP`] for whitespace,
/// [`DROP`] for the rest (non-ASCII bytes never reach it).
const ASCII_CLASS: [u8; 256] = {
    let mut class = [DROP; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            class[b] = c.to_ascii_lowercase();
        } else if matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ') {
            class[b] = GAP;
        }
        b += 1;
    }
    class
};

/// What makes two findings "the same finding" (step 2): their normalized place (section or
/// file) and title, with a separator that keeps "a"+"bc" apart from "ab"+"c". The replay numbers
/// them ([`Fingerprints`]); the tests read them whole.
#[cfg(test)]
fn fingerprint_of(place: &str, title: &str) -> String {
    let mut key = String::new();
    fingerprint_into(&mut key, place, title);
    key
}

/// A fingerprint (`fingerprint_of`), appended to `key`.
fn fingerprint_into(key: &mut String, place: &str, title: &str) {
    normalize_into(key, place);
    key.push('\u{1f}');
    normalize_into(key, title);
}

/// The fingerprints (normalized place and title, as `fingerprint_into` writes them) of one
/// target's findings, each worked out once however many runs and reviewers repeat it, as a
/// number per distinct fingerprint. A corpus holds one
/// copy of a repeated title or section, so texts are first looked up by where they are held;
/// the borrow keeps each of them alive, and so at one place, while the memo lives.
#[derive(Default)]
pub struct Fingerprints<'a> {
    /// (place, title) by address and length: the number of its fingerprint.
    held: HashMap<[usize; 4], u32>,
    /// Each fingerprint's number.
    numbers: HashMap<Arc<str>, u32>,
    /// Each number's fingerprint.
    texts: Vec<Arc<str>>,
    scratch: String,
    texts_held: std::marker::PhantomData<&'a str>,
}

type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

impl<'a> Fingerprints<'a> {
    /// The number of `place` and `title`'s fingerprint: equal numbers, equal fingerprints.
    pub fn of(&mut self, place: &'a str, title: &'a str) -> u32 {
        let at = [
            place.as_ptr() as usize,
            place.len(),
            title.as_ptr() as usize,
            title.len(),
        ];
        if let Some(&n) = self.held.get(&at) {
            return n;
        }
        self.scratch.clear();
        fingerprint_into(&mut self.scratch, place, title);
        let n = match self.numbers.get(self.scratch.as_str()) {
            Some(&n) => n,
            None => {
                let n = self.texts.len() as u32;
                let text: Arc<str> = Arc::from(self.scratch.as_str());
                self.texts.push(Arc::clone(&text));
                self.numbers.insert(text, n);
                n
            }
        };
        self.held.insert(at, n);
        n
    }

    /// [`Fingerprints::of`] a finding, by its place (section or file) and title.
    pub fn of_finding(&mut self, f: &'a Finding) -> u32 {
        let place = match &f.location {
            Location::Doc { section, .. } => section,
            Location::Code(CodeSite { file, .. }) => file,
        };
        self.of(place, &f.claim.title)
    }

    /// The fingerprint numbered `n`.
    pub fn text(&self, n: u32) -> &str {
        &self.texts[n as usize]
    }
}

/// A finding in flight: where it came from, and its confidence after collapse.
#[derive(Clone, Debug)]
struct Working<'a> {
    reviewer: &'a Arc<str>,
    finding: &'a Finding,
    confidence: f64,
    promotable: bool,
    order: usize,
}

/// Runs steps 2–10 over one (arm, target, run), without the precision controls.
pub fn replay(policy: &ReviewPolicy, mode: Mode, returns: &[ReturnRef<'_>]) -> Vec<Merged> {
    replay_with(policy, mode, &NO_CONTROLS, returns)
}

/// Runs steps 2–10 over one (arm, target, run), with the precision controls of docs/guides/ab-rubric-change.md in
/// their place: lint-ignore after step 7, the validation pass between the gate and routing.
pub fn replay_with(
    policy: &ReviewPolicy,
    mode: Mode,
    precision: &Precision<'_>,
    returns: &[ReturnRef<'_>],
) -> Vec<Merged> {
    replay_remembering(
        policy,
        mode,
        precision,
        returns,
        &mut Fingerprints::default(),
    )
}

/// [`replay_with`], with the fingerprints of the target's findings kept in `fingerprints`
/// from one run to the next.
pub fn replay_remembering<'a>(
    policy: &ReviewPolicy,
    mode: Mode,
    precision: &Precision<'_>,
    returns: &[ReturnRef<'a>],
    fingerprints: &mut Fingerprints<'a>,
) -> Vec<Merged> {
    let mut working = Vec::with_capacity(returns.iter().map(|r| r.findings.len()).sum());
    for ret in returns {
        let start = working.len();
        working.extend(ret.findings.iter().map(|finding| Working {
            reviewer: ret.reviewer,
            finding,
            confidence: finding.confidence,
            promotable: true,
            order: 0,
        }));
        if let ReviewPolicy::Anchored(a) = policy {
            if a.collapse && mode == Mode::Doc {
                collapse_same_persona(&mut working[start..], a.scale);
            }
        }
    }
    for (i, w) in working.iter_mut().enumerate() {
        w.order = i;
    }

    let mut merged = dedup(&working, mode, fingerprints);
    for m in &mut merged {
        corroborate(m, policy.promotion(), policy.scale());
    }
    for m in &mut merged {
        m.on_suppressed_line = on_suppressed_line(m, precision);
        route(m, policy, mode, precision.controls);
    }
    if mode == Mode::Code && precision.controls.validates(policy.review_mode()) {
        validation_pass(&mut merged, policy, precision);
    }
    sort_for_listing(&mut merged, mode);
    merged
}

/// Whether any contributor, by its own file and line, sits on a line that carries a lint
/// suppression comment (or below one); `None` without a snapshot of the target.
fn on_suppressed_line(m: &Merged, precision: &Precision<'_>) -> Option<bool> {
    let sources = precision.sources?;
    if !sources.has(precision.target) {
        return None;
    }
    Some(m.contributions.iter().any(|c| {
        c.place.as_ref().is_some_and(|(file, line)| {
            sources.suppressed(precision.target, file, *line) == Some(true)
        })
    }))
}

/// The validation pass (Stage 5b, docs/guides/ab-rubric-change.md), after the gate: the selected findings in budget
/// order, the first `validation_budget` looked up among the recorded calls, the rest over
/// budget; whatever is not validated loses its route and does not externalize.
fn validation_pass(merged: &mut [Merged], policy: &ReviewPolicy, precision: &Precision<'_>) {
    let controls = precision.controls;
    let tickets = policy.review_mode() == ReviewMode::Interactive
        && controls.route == InteractiveRoute::FileTickets;
    let mut selected: Vec<usize> = (0..merged.len())
        .filter(|&i| {
            let m = &merged[i];
            m.tier == Tier::Actionable && !(tickets && m.route == Some(Route::AutoApply))
        })
        .collect();
    // Budget order: severity P0..P3, confidence descending (on 9 decimals), then the
    // representative contributor's file, line and title, byte by byte.
    let place = |m: &Merged| {
        let lead = &m.contributions[m.lead];
        let (file, line) = lead.place.clone().unwrap_or_default();
        (file, line, lead.title.clone())
    };
    selected.sort_by(|&a, &b| {
        let (ma, mb) = (&merged[a], &merged[b]);
        ma.claim
            .severity
            .cmp(&mb.claim.severity)
            .then_with(|| round9(mb.confidence).total_cmp(&round9(ma.confidence)))
            .then_with(|| place(ma).cmp(&place(mb)))
    });
    for (rank, &i) in selected.iter().enumerate() {
        let m = &mut merged[i];
        let check = if rank >= controls.validation_budget {
            Check::OverBudget
        } else {
            lookup(m, precision.calls)
        };
        if check != Check::Validated {
            m.route = None;
            m.queue = None;
        }
        m.validation = Some(check);
    }
}

/// A merged finding's verdict from the calls naming any of its contributors' ids: none is
/// `Missing`; any failed call, `Failed`; else any rejection, `Rejected` with the reason of the
/// first rejecting call in file order; else `Validated`.
fn lookup(m: &Merged, calls: &[&Validation]) -> Check {
    let mine: Vec<&Validation> = calls
        .iter()
        .copied()
        .filter(|c| {
            m.contributions
                .iter()
                .any(|k| k.id.as_deref() == Some(c.finding.as_str()))
        })
        .collect();
    if mine.is_empty() {
        return Check::Missing;
    }
    if mine.iter().any(|c| c.verdict == Verdict::Failed) {
        return Check::Failed;
    }
    match mine.iter().find(|c| c.verdict == Verdict::Rejected) {
        Some(c) => Check::Rejected(c.reason.clone().unwrap_or_else(|| "(no reason)".into())),
        None => Check::Validated,
    }
}

/// Step 3: within one reviewer's return, when three or more findings share a non-empty
/// normalized premise, the most confident stays (the first on ties) and every other one is
/// capped at the scale's 50 and can no longer be promoted.
fn collapse_same_persona(findings: &mut [Working<'_>], scale: Scale) {
    let premise = |w: &Working| match &w.finding.location {
        Location::Doc {
            premise: Some(p), ..
        } => Some(normalize(p)).filter(|p| !p.is_empty()),
        _ => None,
    };
    let keys: Vec<Option<String>> = findings.iter().map(premise).collect();
    for (i, key) in keys.iter().enumerate() {
        let Some(key) = key else { continue };
        let group: Vec<usize> = (0..findings.len())
            .filter(|&j| keys[j].as_ref() == Some(key))
            .collect();
        if group.len() < 3 || group[0] != i {
            continue; // handle each group once, from its first member
        }
        let keep = group.iter().copied().fold(group[0], |best, j| {
            if findings[j].confidence > findings[best].confidence {
                j
            } else {
                best
            }
        });
        for &j in &group {
            if j != keep {
                findings[j].confidence = findings[j].confidence.min(scale.half());
                findings[j].promotable = false;
            }
        }
    }
}

/// Step 4: group findings that are the same issue and merge each group.
fn dedup<'a>(
    working: &[Working<'a>],
    mode: Mode,
    fingerprints: &mut Fingerprints<'a>,
) -> Vec<Merged> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    match mode {
        // Fingerprint: normalized section and title.
        Mode::Doc => {
            groups = by_fingerprint(working, fingerprints, |l| match l {
                Location::Doc { section, .. } => Some(section),
                Location::Code(CodeSite { .. }) => None,
            })
        }
        Mode::Code => {
            // Same normalized file and title, lines within ±3: sorted by line, a new cluster
            // starts where the gap to the previous line exceeds 3.
            let line = |i: usize| match working[i].finding.location {
                Location::Code(CodeSite { line, .. }) => line,
                Location::Doc { .. } => 0,
            };
            let by_key = by_fingerprint(working, fingerprints, |l| match l {
                Location::Code(CodeSite { file, .. }) => Some(file),
                Location::Doc { .. } => None,
            });
            for mut members in by_key {
                members.sort_by_key(|&i| (line(i), i));
                let mut cluster = vec![members[0]];
                for pair in members.windows(2) {
                    if line(pair[1]) - line(pair[0]) > 3 {
                        groups.push(std::mem::take(&mut cluster));
                    }
                    cluster.push(pair[1]);
                }
                groups.push(cluster);
            }
            for g in &mut groups {
                g.sort_unstable(); // contributions in document order
            }
        }
    }
    let mut merged: Vec<Merged> = groups.iter().map(|g| merge(working, g)).collect();
    merged.sort_by_key(|m| m.order);
    merged
}

/// The findings grouped by normalized place (`place` of a location, or `None` to leave it out)
/// and title, groups in order of first appearance, members in document order. A separator keeps
/// "a"+"bc" apart from "ab"+"c".
fn by_fingerprint<'a>(
    working: &[Working<'a>],
    fingerprints: &mut Fingerprints<'a>,
    place: impl Fn(&'a Location) -> Option<&'a Arc<str>>,
) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut index: HashMap<u32, usize> = HashMap::default();
    for (i, w) in working.iter().enumerate() {
        let Some(place) = place(&w.finding.location) else {
            continue;
        };
        let key = fingerprints.of(place, &w.finding.claim.title);
        match index.get(&key) {
            Some(&g) => groups[g].push(i),
            None => {
                index.insert(key, groups.len());
                groups.push(vec![i]);
            }
        }
    }
    groups
}

/// The merge rules of step 4 over one group (indices in document order).
fn merge(working: &[Working<'_>], group: &[usize]) -> Merged {
    let members: Vec<&Working> = group.iter().map(|&i| &working[i]).collect();
    let first = members[0];
    // Room for every member: the usual distinct reviewers fill it, and the row's boxed list
    // (`FindingRow::new`) is then this allocation, not a smaller copy of it.
    let mut reviewers: Vec<Arc<str>> = Vec::with_capacity(members.len());
    let mut evidence: Vec<Arc<str>> = Vec::new();
    for w in &members {
        if !reviewers.iter().any(|r| r == w.reviewer) {
            reviewers.push(w.reviewer.clone());
        }
        for e in &w.finding.claim.evidence {
            if !evidence.contains(e) {
                evidence.push(e.clone());
            }
        }
    }
    // The leading contributor: highest severity (P0 first), then highest confidence, then first.
    let lead_at = (0..members.len())
        .reduce(|best, i| {
            let (w, b) = (members[i], members[best]);
            let better = (w.finding.claim.severity, -w.confidence)
                < (b.finding.claim.severity, -b.confidence);
            if better {
                i
            } else {
                best
            }
        })
        .unwrap_or(0);
    let lead = members[lead_at];
    let location = match &first.finding.location {
        Location::Doc { section, .. } => MergedLocation::Doc {
            section: section.clone(),
            finding_type: if members.iter().any(|w| {
                matches!(
                    w.finding.location,
                    Location::Doc {
                        finding_type: FindingType::Error,
                        ..
                    }
                )
            }) {
                FindingType::Error
            } else {
                FindingType::Omission
            },
        },
        Location::Code(CodeSite { file, .. }) => {
            let code = |w: &Working| match w.finding.location {
                Location::Code(CodeSite {
                    line,
                    owner,
                    requires_verification,
                    pre_existing,
                    ..
                }) => (line, owner, requires_verification, pre_existing),
                Location::Doc { .. } => (u32::MAX, Owner::Human, false, false),
            };
            MergedLocation::Code(CodeSite {
                file: file.clone(),
                line: members.iter().map(|w| code(w).0).min().unwrap_or(1),
                owner: code(lead).1,
                requires_verification: members.iter().any(|w| code(w).2),
                pre_existing: members.iter().all(|w| code(w).3),
            })
        }
    };
    let confidence = members
        .iter()
        .map(|w| w.confidence)
        .fold(f64::MIN, f64::max);
    Merged {
        claim: Claim {
            title: first.finding.claim.title.clone(),
            severity: members
                .iter()
                .map(|w| w.finding.claim.severity)
                .min()
                .unwrap_or(first.finding.claim.severity),
            autofix: members
                .iter()
                .map(|w| w.finding.claim.autofix)
                .max()
                .unwrap_or(first.finding.claim.autofix),
            has_fix: members.iter().any(|w| w.finding.claim.has_fix),
            evidence,
        },
        confidence_before: confidence,
        confidence,
        corroborated: reviewers.len() >= 2,
        reviewers,
        contributions: members
            .iter()
            .map(|w| Contribution {
                reviewer: w.reviewer.clone(),
                id: w.finding.id.clone(),
                confidence: w.finding.confidence,
                severity: w.finding.claim.severity,
                title: w.finding.claim.title.clone(),
                place: match &w.finding.location {
                    Location::Code(CodeSite { file, line, .. }) => Some((file.clone(), *line)),
                    Location::Doc { .. } => None,
                },
            })
            .collect(),
        promotable: members.iter().all(|w| w.promotable),
        promoted: false,
        order: first.order,
        location,
        tier: Tier::Dropped,
        route: None,
        queue: None,
        lead: lead_at,
        on_suppressed_line: None,
        validation: None,
    }
}

/// Step 5: a corroborated, promotable finding goes one anchor up (100 stays), or + boost on the
/// float scale, capped at 1. Promoted means its confidence changed.
fn corroborate(m: &mut Merged, promotion: Promotion, scale: Scale) {
    let Promotion::Corroboration { boost } = promotion else {
        return;
    };
    if !(m.corroborated && m.promotable) {
        return;
    }
    let raised = match scale {
        Scale::Anchor => [0.0, 25.0, 50.0, 75.0, 100.0]
            .into_iter()
            .find(|&a| a > m.confidence)
            .unwrap_or(100.0),
        Scale::Float => round9((m.confidence + boost).min(1.0)),
    };
    m.promoted = raised != m.confidence;
    m.confidence = raised;
}

/// Steps 6–9 for one merged finding, with lint-ignore between steps 7 and 8.
fn route(m: &mut Merged, policy: &ReviewPolicy, mode: Mode, controls: &Controls) {
    if let MergedLocation::Code(CodeSite {
        pre_existing: true, ..
    }) = m.location
    {
        m.tier = Tier::PreExisting;
        return;
    }
    if mode == Mode::Code && is_demoted(m, policy.demote_reviewers()) {
        m.tier = match policy.review_mode() {
            ReviewMode::Interactive | ReviewMode::ReportOnly => Tier::Soft,
            ReviewMode::Headless | ReviewMode::Autofix => Tier::Suppressed,
        };
        return;
    }
    if controls.lint_ignore == LintIgnore::Suppress
        && m.on_suppressed_line == Some(true)
        && !m.reviewers.iter().any(|r| &**r == PROJECT_STANDARDS)
    {
        m.tier = Tier::LintSuppressed;
        return;
    }
    m.tier = gate(m, policy, mode);
    if m.tier != Tier::Actionable {
        return;
    }
    let top = round9(m.confidence) >= round9(policy.auto_apply_from());
    m.route = Some(
        if m.claim.autofix == Autofix::SafeAuto && m.claim.has_fix && top {
            Route::AutoApply
        } else {
            Route::Decision
        },
    );
    if let MergedLocation::Code(CodeSite { owner, .. }) = m.location {
        m.queue = Some(
            if m.claim.autofix == Autofix::Advisory
                || matches!(owner, Owner::Human | Owner::Release)
            {
                Queue::ReportOnly
            } else if m.claim.autofix == Autofix::SafeAuto {
                Queue::Fixer
            } else {
                Queue::Residual
            },
        );
    }
}

/// Step 7: P2/P3, advisory, and every contributor among the demotable reviewers.
fn is_demoted(m: &Merged, demote_reviewers: &[String]) -> bool {
    m.claim.severity >= Severity::P2
        && m.claim.autofix == Autofix::Advisory
        && m.reviewers
            .iter()
            .all(|r| demote_reviewers.iter().any(|d| **d == **r))
}

/// Step 8, last, on the promoted confidence.
fn gate(m: &Merged, policy: &ReviewPolicy, mode: Mode) -> Tier {
    let c = round9(m.confidence);
    let at_least = |threshold: f64| c >= round9(threshold);
    match policy {
        ReviewPolicy::Anchored(a) => {
            if at_least(a.actionable_from) {
                Tier::Actionable
            } else if at_least(a.surface_from) {
                Tier::Fyi
            } else if m.claim.severity == Severity::P0 && a.p0_escape.is_some_and(at_least) {
                Tier::Actionable
            } else {
                Tier::Dropped
            }
        }
        ReviewPolicy::FloatGates(f) => match mode {
            Mode::Doc => {
                if at_least(f.gates[m.claim.severity.index()]) {
                    Tier::Actionable
                } else if m.claim.autofix == Autofix::Manual && at_least(f.fyi_floor) {
                    Tier::Fyi
                } else {
                    Tier::Dropped
                }
            }
            Mode::Code => {
                if at_least(f.gate) || (m.claim.severity == Severity::P0 && at_least(f.p0_gate)) {
                    Tier::Actionable
                } else {
                    Tier::Dropped
                }
            }
        },
    }
}

/// Step 10: severity P0..P3; (doc) error before omission; confidence descending; (doc) document
/// order, (code) file then line.
fn sort_for_listing(merged: &mut [Merged], mode: Mode) {
    merged.sort_by(|a, b| {
        let by_type = |m: &Merged| match &m.location {
            MergedLocation::Doc { finding_type, .. } => *finding_type,
            MergedLocation::Code(CodeSite { .. }) => FindingType::Error,
        };
        fn place(m: &Merged) -> (&str, u32, usize) {
            match &m.location {
                MergedLocation::Code(CodeSite { file, line, .. }) => (file, *line, m.order),
                MergedLocation::Doc { .. } => ("", 0, m.order),
            }
        }
        a.claim
            .severity
            .cmp(&b.claim.severity)
            .then_with(|| {
                if mode == Mode::Doc {
                    by_type(a).cmp(&by_type(b))
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then_with(|| b.confidence.total_cmp(&a.confidence))
            .then_with(|| place(a).cmp(&place(b)))
    });
}

#[cfg(test)]
mod tests {
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
                evidence: vec![],
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
            *premise = Some(p.into());
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
                evidence: vec![],
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

    fn refs<'a>(
        names: &'a [Arc<str>],
        returns: &'a [(&'a str, Vec<Finding>)],
    ) -> Vec<ReturnRef<'a>> {
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
        a.claim.evidence = vec!["step 4".into()];
        a.id = Some("a1".into());
        let mut b = doc("rollback is MISSING!", " deploy ", Severity::P1, 0.55);
        b.claim.evidence = vec!["step 4".into(), "no runbook".into()];
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
            m.claim.evidence,
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
}
