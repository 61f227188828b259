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
    Rejected(Box<str>),
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
    #[serde(serialize_with = "crate::corpus::finding::written_id")]
    pub id: Option<crate::corpus::finding::FindingId>,
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
    let mut merged = merge_remembering(policy, mode, precision, returns, fingerprints);
    route_merged(&mut merged, policy, mode, precision);
    merged
}

/// The steps of [`replay_remembering`] before the gate: collapse, dedup, corroboration and
/// promotion, and where each merged finding sits. Only the policy's scale, promotion and
/// collapse ([`ReviewPolicy::merging`]) reach them, so a sweep that varies gates merges once
/// and routes at every point ([`route_merged`], [`routing`]).
pub fn merge_remembering<'a>(
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
        m.on_suppressed_line = on_suppressed_line(m, precision);
    }
    merged
}

/// The steps of [`replay_remembering`] from the gate on, over findings [`merge_remembering`]
/// made: each routed, the validation pass, the listing order.
pub fn route_merged(
    merged: &mut [Merged],
    policy: &ReviewPolicy,
    mode: Mode,
    precision: &Precision<'_>,
) {
    for m in merged.iter_mut() {
        route(m, policy, mode, precision.controls);
    }
    if validates(policy, mode, precision.controls) {
        validation_pass(merged, policy, precision);
    }
    sort_for_listing(merged, mode);
}

/// Whether the validation pass runs after the gate (code mode, with validation on for the
/// policy's review mode).
pub fn validates(policy: &ReviewPolicy, mode: Mode, controls: &Controls) -> bool {
    mode == Mode::Code && controls.validates(policy.review_mode())
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
        Some(c) => Check::Rejected(c.reason.as_deref().unwrap_or("(no reason)").into()),
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
    // Room for every member: the usual distinct reviewers fill it.
    let mut reviewers: Vec<Arc<str>> = Vec::with_capacity(members.len());
    let mut evidence: Vec<Arc<str>> = Vec::new();
    for w in &members {
        if !reviewers.iter().any(|r| r == w.reviewer) {
            reviewers.push(w.reviewer.clone());
        }
        for e in w.finding.claim.evidence.iter() {
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
            evidence: evidence.into(),
            text_chars: members
                .iter()
                .map(|w| w.finding.claim.text_chars)
                .max()
                .unwrap_or(first.finding.claim.text_chars),
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
    let r = routing(m, policy, mode, controls);
    m.tier = r.tier;
    m.route = r.route;
    m.queue = r.queue;
    m.validation = None;
}

/// Where the gate and the steps before it send a merged finding (steps 6–9), as [`route`]
/// records it; the validation pass may move it after.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Routing {
    pub tier: Tier,
    pub route: Option<Route>,
    pub queue: Option<Queue>,
}

/// [`Routing`] of `m` under `policy`, read without changing it: a sweep's point reads it off
/// findings merged once for every point.
pub fn routing(m: &Merged, policy: &ReviewPolicy, mode: Mode, controls: &Controls) -> Routing {
    let only = |tier| Routing {
        tier,
        route: None,
        queue: None,
    };
    if let MergedLocation::Code(CodeSite {
        pre_existing: true, ..
    }) = m.location
    {
        return only(Tier::PreExisting);
    }
    if mode == Mode::Code && is_demoted(m, policy.demote_reviewers()) {
        return only(match policy.review_mode() {
            ReviewMode::Interactive | ReviewMode::ReportOnly => Tier::Soft,
            ReviewMode::Headless | ReviewMode::Autofix => Tier::Suppressed,
        });
    }
    if controls.lint_ignore == LintIgnore::Suppress
        && m.on_suppressed_line == Some(true)
        && !m.reviewers.iter().any(|r| &**r == PROJECT_STANDARDS)
    {
        return only(Tier::LintSuppressed);
    }
    let tier = gate(m, policy, mode);
    if tier != Tier::Actionable {
        return only(tier);
    }
    let top = round9(m.confidence) >= round9(policy.auto_apply_from());
    let route = if m.claim.autofix == Autofix::SafeAuto && m.claim.has_fix && top {
        Route::AutoApply
    } else {
        Route::Decision
    };
    let queue = match m.location {
        MergedLocation::Code(CodeSite { owner, .. }) => Some(
            if m.claim.autofix == Autofix::Advisory
                || matches!(owner, Owner::Human | Owner::Release)
            {
                Queue::ReportOnly
            } else if m.claim.autofix == Autofix::SafeAuto {
                Queue::Fixer
            } else {
                Queue::Residual
            },
        ),
        _ => None,
    };
    Routing {
        tier,
        route: Some(route),
        queue,
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
pub fn sort_for_listing(merged: &mut [Merged], mode: Mode) {
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
mod tests;
