//! Query replay (docs/guides/capacity-review.md): score an agent's recorded trace under a confidence model, decide
//! whether the recovery gate fires, and replay the counterfactual.
//!
//! Pure: a [`Query`] and a [`ConfidencePolicy`] in, an [`Outcome`] out, with the breakdown of
//! the final score by category so a reader can see why a score is what it is.

use std::collections::HashMap;

use serde::Serialize;

use crate::corpus::queries::{Category, Evidence, Phase, Query, Tool, ToolKind};
use crate::policy::{BonusMode, CategoryMax, ConfidencePolicy, FlatMean, Normalize};
use crate::stats::calibration::round9;

/// The per-tool score of docs/guides/capacity-review.md's table, from the tool's evidence alone.
pub fn table_score(kind: ToolKind, evidence: Evidence) -> f64 {
    match (kind, evidence) {
        (ToolKind::Find | ToolKind::Grep | ToolKind::References, Evidence::Hits(h)) => match h {
            0 => 0.10,
            1..=3 => 0.60,
            4..=10 => 0.80,
            _ => 0.90,
        },
        (ToolKind::Read, Evidence::Read { files, relevant }) => {
            let rel = relevant > 0;
            match files {
                0 => 0.10,
                1 if rel => 0.55,
                1 => 0.35,
                2..=5 if rel => 0.75,
                2..=5 => 0.55,
                _ if rel => 0.85,
                _ => 0.70,
            }
        }
        (ToolKind::Cmake, Evidence::Build { passed }) => {
            if passed {
                0.95
            } else {
                0.25
            }
        }
        (
            ToolKind::Ctest,
            Evidence::Tests {
                run,
                passed,
                failed,
            },
        ) => {
            if run == 0 {
                0.30
            } else if failed == 0 {
                0.95
            } else if passed as f64 / run as f64 >= 0.8 {
                0.65
            } else {
                0.20
            }
        }
        (ToolKind::Gh, Evidence::Factors(f)) => f as f64 / 3.0,
        (ToolKind::Discovery, Evidence::Factors(f)) => f as f64 / 4.0,
        (ToolKind::Git, Evidence::Hits(h)) => {
            if h > 0 {
                0.75
            } else {
                0.30
            }
        }
        // Generic tools; a tool without evidence of its kind cannot reach here from the reader.
        _ => 0.50,
    }
}

/// The tool's entry: its recorded score, else the table's; `None` for a tool that failed.
pub fn tool_score(t: &Tool) -> Option<f64> {
    t.ok.then(|| t.score.unwrap_or_else(|| table_score(t.kind, t.evidence)))
}

/// One category's (or the flat-mean recovery entries') part of a score.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Part {
    pub score: f64,
    /// Normalized: the parts' weights sum to 1 (category-max with `normalize = "all"`: to
    /// the share of the weight that is present).
    pub weight: f64,
    /// weight × score; the contributions sum to `base`.
    pub contribution: f64,
}

/// Why a score is what it is.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Breakdown {
    /// Per category, in [`Category::ALL`] order; `None` where no usable tool of it counted.
    /// Flat-mean: the mean of the category's entries, weighted by its share of the entries.
    pub categories: [Option<Part>; 7],
    /// Flat-mean only: the recovery entries.
    pub recovery: Option<Part>,
    pub base: f64,
    /// Category-max only: the convergence bonus, and what earned it.
    pub bonus: f64,
    pub converging: usize,
    pub search_read: bool,
}

/// A query replayed under one policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// Confidence from the primary-phase tools; rounded to 9 decimal places like `confidence`.
    pub primary: f64,
    /// Final confidence: `primary`, or after recovery when the gate fired.
    pub confidence: f64,
    pub stopped: bool,
    pub fired: bool,
    /// Recovery attempts that counted (flat-mean: the entries added; category-max: the distinct
    /// recorded attempts whose tools joined the evidence). 0 unless the gate fired.
    pub attempts: u32,
    /// At least one tool that counted ran successfully.
    pub usable: bool,
    pub breakdown: Breakdown,
}

/// Replays one query: primary confidence, the stop/fire decision, the final confidence.
/// Thresholds are compared on confidences rounded to 9 decimal places.
pub fn replay(policy: &ConfidencePolicy, q: &Query) -> Outcome {
    gate(policy, q, &Scored::primary(policy, q))
}

/// What a policy's scoring makes of one query before its gates decide anything: the
/// primary-phase confidence and, once [`Scored::with_recovery`] has run, the confidence the
/// query reaches if recovery runs. No threshold and no band plays a part, so a sweep over
/// gates scores each query once and only [`gate`]s it per point
/// ([`ConfidencePolicy::scoring`] says which policies score alike).
#[derive(Clone, Debug)]
pub struct Scored {
    /// Rounded to 9 decimal places.
    primary: f64,
    breakdown: Breakdown,
    usable_primary: bool,
    recovered: Option<Recovered>,
}

/// The query's score once recovery has run.
#[derive(Clone, Debug)]
struct Recovered {
    /// Rounded to 9 decimal places.
    confidence: f64,
    breakdown: Breakdown,
    attempts: u32,
    usable: bool,
}

impl Scored {
    /// The primary phase only; recovery is scored when a gate fires.
    pub fn primary(policy: &ConfidencePolicy, q: &Query) -> Scored {
        let primary_tools = q.tools.iter().filter(|t| t.phase == Phase::Primary);
        let (primary, breakdown) = score(policy, primary_tools, 0);
        Scored {
            primary: round9(primary),
            breakdown,
            usable_primary: q.tools.iter().any(|t| t.phase == Phase::Primary && t.ok),
            recovered: None,
        }
    }

    /// Both phases, for a query [`gate`]d under many thresholds.
    pub fn with_recovery(policy: &ConfidencePolicy, q: &Query) -> Scored {
        let mut s = Scored::primary(policy, q);
        s.recovered = Some(recover(policy, q));
        s
    }
}

/// The query's score when the gate fired: recovery-phase tools recorded in the trace count.
fn recover(policy: &ConfidencePolicy, q: &Query) -> Recovered {
    let recorded_attempts = {
        let mut a: Vec<u32> = q
            .tools
            .iter()
            .filter(|t| t.phase == Phase::Recovery)
            .map(|t| t.attempt)
            .collect();
        a.sort_unstable();
        a.dedup();
        a.len() as u32
    };
    let primary_tools = || q.tools.iter().filter(|t| t.phase == Phase::Primary);
    let (confidence, breakdown, attempts) = match policy {
        // Recovery adds one fixed entry per attempt, never its tools' own scores; one attempt
        // when the trace recorded none (the counterfactual agent would have made one).
        ConfidencePolicy::FlatMean(_) => {
            let attempts = recorded_attempts.max(1);
            let (c, b) = score(policy, primary_tools(), attempts);
            (c, b, attempts)
        }
        ConfidencePolicy::CategoryMax(_) => {
            let (c, b) = score(policy, q.tools.iter(), 0);
            (c, b, recorded_attempts)
        }
    };
    let usable = match policy {
        ConfidencePolicy::FlatMean(_) => primary_tools().any(|t| t.ok),
        ConfidencePolicy::CategoryMax(_) => q.tools.iter().any(|t| t.ok),
    };
    Recovered {
        confidence: round9(confidence),
        breakdown,
        attempts,
        usable,
    }
}

/// The stop/fire decision on `scored` (as `policy`'s scoring made it of `q`) under `policy`'s
/// thresholds, and the final confidence: the recovered one when the gate fired (scored now if
/// `scored` does not hold it yet).
pub fn gate(policy: &ConfidencePolicy, q: &Query, scored: &Scored) -> Outcome {
    let primary = scored.primary;
    let stopped = primary < round9(policy.stop_threshold());
    let fired = !stopped && primary < round9(policy.recovery_threshold());
    if !fired {
        return Outcome {
            primary,
            confidence: primary,
            stopped,
            fired,
            attempts: 0,
            usable: scored.usable_primary,
            breakdown: scored.breakdown.clone(),
        };
    }
    let recovered;
    let r = match &scored.recovered {
        Some(r) => r,
        None => {
            recovered = recover(policy, q);
            &recovered
        }
    };
    Outcome {
        primary,
        confidence: r.confidence,
        stopped,
        fired,
        attempts: r.attempts,
        usable: r.usable,
        breakdown: r.breakdown.clone(),
    }
}

/// The policy's confidence over `tools`, with `recovery_entries` flat-mean recovery entries.
fn score<'a>(
    policy: &ConfidencePolicy,
    tools: impl Iterator<Item = &'a Tool>,
    recovery_entries: u32,
) -> (f64, Breakdown) {
    match policy {
        ConfidencePolicy::FlatMean(f) => flat_mean(f, tools, recovery_entries),
        ConfidencePolicy::CategoryMax(c) => category_max(c, tools),
    }
}

/// Arithmetic mean of the tools' entries and `recovery_entries` entries of
/// `recovery_entry_score`; 0 with no entry at all.
pub fn flat_mean<'a>(
    policy: &FlatMean,
    tools: impl Iterator<Item = &'a Tool>,
    recovery_entries: u32,
) -> (f64, Breakdown) {
    let mut sums = [(0.0f64, 0usize); 7];
    for t in tools {
        if let Some(s) = tool_score(t) {
            let slot = &mut sums[t.kind.category().index()];
            slot.0 += s;
            slot.1 += 1;
        }
    }
    let entries = sums.iter().map(|s| s.1).sum::<usize>() + recovery_entries as usize;
    let mut b = Breakdown::default();
    if entries == 0 {
        return (0.0, b);
    }
    let n = entries as f64;
    for (slot, &(sum, count)) in b.categories.iter_mut().zip(&sums) {
        if count > 0 {
            *slot = Some(Part {
                score: sum / count as f64,
                weight: count as f64 / n,
                contribution: sum / n,
            });
        }
    }
    if recovery_entries > 0 {
        let r = f64::from(recovery_entries);
        b.recovery = Some(Part {
            score: policy.recovery_entry_score,
            weight: r / n,
            contribution: r * policy.recovery_entry_score / n,
        });
    }
    let total: f64 = sums.iter().map(|s| s.0).sum::<f64>()
        + f64::from(recovery_entries) * policy.recovery_entry_score;
    b.base = total / n;
    (b.base, b)
}

/// A convergence target: the part after the last `/`, without the extension after the last
/// `.`, lowercased, without `_` and `-`.
pub fn normalize_target(target: &str) -> String {
    let name = target.rsplit('/').next().unwrap_or(target);
    let stem = match name.rfind('.') {
        Some(i) => &name[..i],
        None => name,
    };
    stem.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Two normalized targets match when both are non-empty and either contains the other.
pub fn targets_match(a: &str, b: &str) -> bool {
    !a.is_empty() && !b.is_empty() && (a.contains(b) || b.contains(a))
}

/// For each of `targets` (distinct, non-empty normalized targets, each with a bit set of what
/// stands behind it), the union of the bit sets of every target that matches it
/// ([`targets_match`]: either contains the other), itself included.
///
/// Few targets (a query's usual handful) are compared pairwise. More are matched in one pass
/// of an Aho-Corasick automaton over all of them: each target is scanned once for every other
/// target it contains, so the work grows with the text and the containments found, not with
/// the square of the targets (a query of 100,000 tools took 44 s pairwise).
fn matching_unions(targets: &[(String, u8)]) -> Vec<u8> {
    const PAIRWISE_UP_TO: usize = 32;
    if targets.len() > PAIRWISE_UP_TO {
        if let Some(unions) = unions_by_automaton(targets) {
            return unions;
        }
        // Too large for an automaton: slow, but the same answer.
    }
    unions_pairwise(targets)
}

fn unions_pairwise(targets: &[(String, u8)]) -> Vec<u8> {
    targets
        .iter()
        .map(|(a, _)| {
            targets
                .iter()
                .filter(|(b, _)| targets_match(a, b))
                .fold(0u8, |u, (_, m)| u | m)
        })
        .collect()
}

fn unions_by_automaton(targets: &[(String, u8)]) -> Option<Vec<u8>> {
    let automaton = aho_corasick::AhoCorasick::new(targets.iter().map(|(t, _)| t)).ok()?;
    let mut unions: Vec<u8> = targets.iter().map(|(_, m)| *m).collect();
    for (b, (text, mask)) in targets.iter().enumerate() {
        for found in automaton.find_overlapping_iter(text) {
            let a = found.pattern().as_usize(); // target a is contained in target b
            unions[a] |= mask;
            unions[b] |= targets[a].1;
        }
    }
    Some(unions)
}

/// Distinct non-empty targets with the union of their bits, in order of first appearance.
fn distinct_targets(entries: impl Iterator<Item = (String, u8)>) -> Vec<(String, u8)> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<(String, u8)> = Vec::new();
    for (target, bit) in entries.filter(|(t, _)| !t.is_empty()) {
        match index.get(&target) {
            Some(&i) => out[i].1 |= bit,
            None => {
                index.insert(target.clone(), out.len());
                out.push((target, bit));
            }
        }
    }
    out
}

/// The tool returned evidence for convergence: search and git found hits, read read files,
/// anything else ran.
fn has_evidence(t: &Tool) -> bool {
    t.ok && match t.evidence {
        Evidence::Hits(h) => h > 0,
        Evidence::Read { files, .. } => files > 0,
        _ => true,
    }
}

/// Category scores of docs/guides/capacity-review.md step 1, in [`Category::ALL`] order.
pub fn category_scores(tools: &[&Tool]) -> [Option<f64>; 7] {
    let mut out = [None; 7];
    let of = |c: Category| {
        tools
            .iter()
            .copied()
            .filter(move |t| t.kind.category() == c)
    };
    let hits = |t: &Tool| matches!(t.evidence, Evidence::Hits(h) if h > 0);

    // search: how many different search tools found hits on one matching target.
    let searches: Vec<&Tool> = of(Category::Search).collect();
    if !searches.is_empty() {
        let found: Vec<(ToolKind, String)> = searches
            .iter()
            .filter(|t| hits(t))
            .map(|t| {
                (
                    t.kind,
                    t.target
                        .as_deref()
                        .map(normalize_target)
                        .unwrap_or_default(),
                )
            })
            .collect();
        out[Category::Search.index()] = Some(if found.is_empty() {
            0.10
        } else {
            // Each search tool kind is one bit: how many kinds agree on one target.
            let mut kinds: Vec<ToolKind> = found.iter().map(|(k, _)| *k).collect();
            kinds.sort_unstable();
            kinds.dedup(); // at most the three search tools
            let bit = |k: ToolKind| 1u8 << kinds.iter().position(|x| *x == k).unwrap_or(0).min(7);
            let targets = distinct_targets(found.into_iter().map(|(k, t)| (t, bit(k))));
            let agreeing = matching_unions(&targets)
                .into_iter()
                .map(u8::count_ones)
                .max()
                .unwrap_or(0);
            match agreeing {
                0 | 1 => 0.65,
                2 => 0.80,
                _ => 0.92,
            }
        });
    }

    let reads: Vec<&Tool> = of(Category::Read).collect();
    if !reads.is_empty() {
        let (files, relevant) = reads
            .iter()
            .fold((0u64, 0u64), |(f, r), t| match t.evidence {
                Evidence::Read { files, relevant } => (f + files, r + relevant),
                _ => (f, r),
            });
        let searched = searches.iter().any(|t| hits(t));
        out[Category::Read.index()] = Some(if files == 0 {
            0.10
        } else if !searched {
            0.55
        } else if relevant >= 3 {
            0.88
        } else {
            0.80
        });
    }

    let best_factors = |c: Category| {
        of(c)
            .filter_map(|t| match t.evidence {
                Evidence::Factors(f) => Some(f),
                _ => None,
            })
            .max()
    };
    if let Some(f) = best_factors(Category::Discovery) {
        out[Category::Discovery.index()] = Some(match f {
            0 | 1 => 0.20,
            2 => 0.50,
            3 => 0.70,
            _ => 0.85,
        });
    }

    let checks: Vec<&Tool> = of(Category::Verification).collect();
    if !checks.is_empty() {
        let build = |want: bool| {
            checks
                .iter()
                .any(|t| t.evidence == Evidence::Build { passed: want })
        };
        let tests = checks.iter().filter_map(|t| match t.evidence {
            Evidence::Tests { run, failed, .. } => Some((run, failed)),
            _ => None,
        });
        let tests_failed = tests.clone().any(|(_, failed)| failed > 0);
        let tests_passed = tests.clone().any(|(run, failed)| run > 0 && failed == 0);
        out[Category::Verification.index()] = Some(if build(false) {
            0.15
        } else if tests_failed {
            0.30
        } else if build(true) && tests_passed {
            0.93
        } else {
            0.80
        });
    }

    let gits: Vec<&Tool> = of(Category::Git).collect();
    if !gits.is_empty() {
        out[Category::Git.index()] = Some(if gits.iter().any(|t| hits(t)) {
            0.75
        } else {
            0.30
        });
    }

    if let Some(f) = best_factors(Category::Ci) {
        out[Category::Ci.index()] = Some(if f >= 3 { 0.80 } else { f as f64 / 3.0 * 0.80 });
    }

    out[Category::Other.index()] = of(Category::Other)
        .filter_map(tool_score)
        .max_by(f64::total_cmp);
    out
}

/// Convergence (docs/guides/capacity-review.md step 3): the most categories confirming one target, and whether
/// search and read confirm a common one.
pub fn convergence(tools: &[&Tool]) -> (usize, bool) {
    // Each category is one bit of a target's set.
    let confirming = tools.iter().filter(|t| has_evidence(t)).filter_map(|t| {
        let target = normalize_target(t.target.as_deref()?);
        Some((target, 1u8 << t.kind.category().index()))
    });
    let targets = distinct_targets(confirming);
    let both = (1u8 << Category::Search.index()) | (1u8 << Category::Read.index());
    let unions = matching_unions(&targets);
    let k = unions
        .iter()
        .map(|u| u.count_ones() as usize)
        .max()
        .unwrap_or(0);
    let search_read = unions.iter().any(|u| u & both == both);
    (k, search_read)
}

/// The category-max confidence over `tools`; 0 with no usable tool.
pub fn category_max<'a>(
    policy: &CategoryMax,
    tools: impl Iterator<Item = &'a Tool>,
) -> (f64, Breakdown) {
    let usable: Vec<&Tool> = tools.filter(|t| t.ok).collect();
    let mut b = Breakdown::default();
    if usable.is_empty() {
        return (0.0, b);
    }
    let scores = category_scores(&usable);
    let weights = policy.weights.as_array();
    let total = match policy.normalize {
        Normalize::Present => scores
            .iter()
            .zip(&weights)
            .filter(|(s, _)| s.is_some())
            .map(|(_, w)| w)
            .sum::<f64>(),
        Normalize::All => weights.iter().sum(),
    };
    if total <= 0.0 {
        return (0.0, b);
    }
    for ((slot, s), w) in b.categories.iter_mut().zip(&scores).zip(&weights) {
        if let Some(s) = *s {
            *slot = Some(Part {
                score: s,
                weight: w / total,
                contribution: w * s / total,
            });
        }
    }
    b.base = b.categories.iter().flatten().map(|p| p.contribution).sum();
    let (k, search_read) = convergence(&usable);
    b.converging = k;
    b.search_read = search_read;
    b.bonus = match k {
        0 | 1 => 0.0,
        2 => policy.bonus_two,
        _ => policy.bonus_three,
    } + if search_read {
        policy.bonus_search_read
    } else {
        0.0
    };
    let score = match policy.bonus_mode {
        BonusMode::Multiplicative => b.base * (1.0 + b.bonus),
        BonusMode::Additive => b.base + b.bonus,
    };
    (score.min(1.0), b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Weights;

    fn tool(kind: &str, target: &str, evidence: Evidence) -> Tool {
        Tool {
            kind: ToolKind::from_name(kind),
            phase: Phase::Primary,
            attempt: 1,
            target: (!target.is_empty()).then(|| target.to_string()),
            ok: true,
            evidence,
            score: None,
        }
    }

    fn recovery(mut t: Tool, attempt: u32) -> Tool {
        t.phase = Phase::Recovery;
        t.attempt = attempt;
        t
    }

    fn read(target: &str, files: u64, relevant: u64) -> Tool {
        tool("read", target, Evidence::Read { files, relevant })
    }

    fn query(tools: Vec<Tool>) -> Query {
        Query {
            line: 1,
            query_id: "q".into(),
            arm: "recorded".into(),
            run: 0,
            query: None,
            first_pass_correct: Some(true),
            correct: Some(true),
            error: None,
            failed: None,
            tools,
            spent: None,
        }
    }

    fn flat() -> ConfidencePolicy {
        ConfidencePolicy::FlatMean(FlatMean::default())
    }

    fn cmax() -> ConfidencePolicy {
        ConfidencePolicy::CategoryMax(CategoryMax::default())
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn per_tool_table() {
        use Evidence::*;
        let s = |k: &str, e| table_score(ToolKind::from_name(k), e);
        for (hits, want) in [
            (0, 0.10),
            (1, 0.60),
            (3, 0.60),
            (4, 0.80),
            (10, 0.80),
            (11, 0.90),
        ] {
            assert_eq!(s("grep", Hits(hits)), want, "{hits}");
            assert_eq!(s("references", Hits(hits)), want);
        }
        let r = |files, relevant| s("read", Read { files, relevant });
        assert_eq!(
            [
                r(0, 0),
                r(1, 1),
                r(1, 0),
                r(2, 1),
                r(5, 0),
                r(6, 2),
                r(6, 0)
            ],
            [0.10, 0.55, 0.35, 0.75, 0.55, 0.85, 0.70]
        );
        assert_eq!(s("cmake", Build { passed: true }), 0.95);
        assert_eq!(s("cmake", Build { passed: false }), 0.25);
        let t = |run, passed, failed| {
            s(
                "ctest",
                Tests {
                    run,
                    passed,
                    failed,
                },
            )
        };
        assert_eq!(
            [t(0, 0, 0), t(10, 10, 0), t(10, 8, 2), t(10, 7, 3)],
            [0.30, 0.95, 0.65, 0.20]
        );
        assert!(close(s("gh", Factors(2)), 2.0 / 3.0));
        assert_eq!(s("discovery", Factors(3)), 0.75);
        assert_eq!([s("git", Hits(1)), s("git", Hits(0))], [0.75, 0.30]);
        assert_eq!(s("bazel", None), 0.50);
        // A recorded score wins; a failed tool has no entry.
        let mut g = tool("grep", "x", Hits(2));
        g.score = Some(0.33);
        assert_eq!(tool_score(&g), Some(0.33));
        g.ok = false;
        assert_eq!(tool_score(&g), Option::None);
    }

    #[test]
    fn targets_normalize_and_match_by_containment() {
        crate::text::assert_maps(
            normalize_target,
            &[
                ("src/mem/Memory_Manager.h", "memorymanager"),
                ("memory-manager", "memorymanager"),
                ("a/b/archive.tar.gz", "archive.tar"),
                ("src/", ""),
            ],
        );
        assert!(targets_match("memorymanager", "memory"));
        assert!(targets_match("memory", "memorymanager"));
        assert!(!targets_match("memorypool", "memorymanager"));
        assert!(!targets_match("", "x"));
    }

    /// The phase-1 shape: find+read+grep+read on one symbol.
    fn four_step() -> Vec<Tool> {
        vec![
            tool("find", "MemoryManager", Evidence::Hits(5)),
            read("src/MemoryManager.h", 1, 1),
            tool("grep", "memory_manager", Evidence::Hits(6)),
            read("src/MemoryManager.cpp", 1, 1),
        ]
    }

    /// A query scored once and gated under each threshold is the query replayed under each.
    #[test]
    fn gating_a_scored_query_is_replaying_it() {
        let weak = vec![
            tool("grep", "nothing", Evidence::Hits(0)),
            recovery(read("src/Other.cpp", 3, 1), 1),
            recovery(tool("find", "Other", Evidence::Hits(2)), 2),
        ];
        let queries = [query(four_step()), query(weak), query(Vec::new())];
        for base in [flat(), cmax()] {
            let scored: Vec<Scored> = queries
                .iter()
                .map(|q| Scored::with_recovery(&base, q))
                .collect();
            for step in 0..=20 {
                let mut policy = base.clone();
                let x = f64::from(step) * 0.05;
                match &mut policy {
                    ConfidencePolicy::FlatMean(f) => {
                        (f.recovery_threshold, f.stop_threshold) = (x, x / 4.0)
                    }
                    ConfidencePolicy::CategoryMax(c) => {
                        (c.recovery_threshold, c.stop_threshold) = (x, x / 4.0)
                    }
                }
                assert_eq!(policy.scoring(), base.scoring());
                for (q, s) in queries.iter().zip(&scored) {
                    assert_eq!(
                        gate(&policy, q, s),
                        replay(&policy, q),
                        "{} at {x}",
                        policy.name()
                    );
                    // Scored lazily, as a run scores it, the answer is the same.
                    assert_eq!(
                        gate(&policy, q, &Scored::primary(&policy, q)),
                        replay(&policy, q)
                    );
                }
            }
        }
        let mut other = cmax();
        if let ConfidencePolicy::CategoryMax(c) = &mut other {
            c.bonus_two = 0.3;
        }
        assert_ne!(
            other.scoring(),
            cmax().scoring(),
            "a scoring key changes what is scored"
        );
    }

    #[test]
    fn flat_mean_fires_below_0_7_and_adds_one_half_entry_per_recorded_attempt() {
        let mut tools = four_step();
        // Two recorded recovery attempts; their tools' own scores never count.
        tools.push(recovery(
            tool("references", "MemoryManager", Evidence::Hits(40)),
            1,
        ));
        let mut failed = recovery(read("x", 0, 0), 2);
        failed.ok = false; // an errored attempt still counts as an attempt
        tools.push(failed);
        let o = replay(&flat(), &query(tools));
        // primary (0.8 + 0.55 + 0.8 + 0.55)/4 = 0.675 < 0.7 → fires;
        // final (2.7 + 0.5 + 0.5)/6 = 0.616667.
        assert_eq!(o.primary, 0.675);
        assert!(o.fired && !o.stopped);
        assert_eq!(o.attempts, 2);
        assert_eq!(o.confidence, round9(3.7 / 6.0));
        let rec = o.breakdown.recovery.unwrap();
        assert!(close(rec.weight, 2.0 / 6.0) && close(rec.contribution, 1.0 / 6.0));
        let search = o.breakdown.categories[Category::Search.index()].unwrap();
        assert!(close(search.score, 0.8) && close(search.weight, 2.0 / 6.0));
        let sum: f64 = o
            .breakdown
            .categories
            .iter()
            .flatten()
            .map(|p| p.contribution)
            .sum::<f64>()
            + rec.contribution;
        assert!(close(sum, o.confidence));
    }

    #[test]
    fn flat_mean_counts_one_attempt_when_none_was_recorded() {
        // find 1–3 hits (0.6) + read 1 relevant (0.55): 0.575 fires; (1.15 + 0.5)/3 = 0.55.
        let q = query(vec![
            tool("find", "X", Evidence::Hits(2)),
            read("X.h", 1, 1),
        ]);
        let o = replay(&flat(), &q);
        assert_eq!((o.primary, o.attempts), (0.575, 1));
        assert_eq!(o.confidence, 0.55);
    }

    #[test]
    fn no_usable_entry_scores_zero_and_stops() {
        for policy in [flat(), cmax()] {
            let mut bad = tool("grep", "x", Evidence::None);
            bad.ok = false;
            let mut q = query(vec![bad, recovery(tool("find", "x", Evidence::Hits(3)), 1)]);
            q.error = Some("timeout".into());
            let o = replay(&policy, &q);
            assert_eq!((o.primary, o.confidence), (0.0, 0.0));
            assert!(o.stopped && !o.fired && !o.usable);
            let o = replay(&policy, &query(vec![]));
            assert!(o.stopped && o.confidence == 0.0);
        }
    }

    #[test]
    fn stop_threshold_is_strictly_below() {
        // One find with no hits: 0.10 < 0.2 → stop in flat-mean; category-max search 0.10 too.
        let q = query(vec![tool("find", "x", Evidence::Hits(0))]);
        for policy in [flat(), cmax()] {
            assert!(replay(&policy, &q).stopped);
        }
        // Exactly at the stop threshold: not stopped, the gate fires.
        let at = FlatMean {
            stop_threshold: 0.1,
            ..FlatMean::default()
        };
        let o = replay(&ConfidencePolicy::FlatMean(at), &q);
        assert!(!o.stopped && o.fired);
        // (0.1 + 0.5)/2
        assert_eq!(o.confidence, 0.3);
    }

    #[test]
    fn category_max_the_four_step_query_converges() {
        // search: find and grep both hit a matching target → 0.80; read: files and search hits,
        // 2 relevant → 0.80. base = (2.5·0.8 + 3·0.8)/5.5 = 0.8. Search and read confirm
        // "memorymanager": k = 2 → +0.10, +0.05 → 0.8 × 1.15 = 0.92. No recovery.
        let o = replay(&cmax(), &query(four_step()));
        assert_eq!(o.primary, 0.92);
        assert!(!o.fired && !o.stopped);
        let b = &o.breakdown;
        assert!(close(b.base, 0.8));
        assert_eq!((b.converging, b.search_read), (2, true));
        assert!(close(b.bonus, 0.15));
        let read = b.categories[Category::Read.index()].unwrap();
        assert!(close(read.weight, 3.0 / 5.5) && close(read.contribution, 2.4 / 5.5));
    }

    #[test]
    fn category_max_search_scores() {
        // Each case: the search tools run, as `kind:target:hits`, and the category's score.
        // Two kinds with hits on unrelated targets do not agree; the same kind twice is one
        // method; `Alpha.h` and `alpha` name one thing.
        let cases = "
            find:a:0 grep:a:0                                          0.10
            find:a:2 grep:a:0                                          0.65
            find:alpha:2 grep:beta:9                                   0.65
            grep:alpha:2 grep:alpha:9                                  0.65
            find:Alpha.h:2 grep:alpha:9                                0.80
            find:alpha:2 grep:alpha:9 references:src/alpha_x.cpp:1     0.92";
        for case in cases.lines().filter(|l| !l.trim().is_empty()) {
            let mut words: Vec<&str> = case.split_whitespace().collect();
            let want: f64 = words.pop().unwrap().parse().unwrap();
            let tools: Vec<Tool> = words
                .iter()
                .map(|w| {
                    let (kind, rest) = w.split_once(':').unwrap();
                    let (target, hits) = rest.rsplit_once(':').unwrap();
                    tool(kind, target, Evidence::Hits(hits.parse().unwrap()))
                })
                .collect();
            let refs: Vec<&Tool> = tools.iter().collect();
            let got = category_scores(&refs)[Category::Search.index()];
            assert_eq!(got, Some(want), "{case}");
        }
        let reads = [read("a", 1, 1)];
        assert_eq!(
            category_scores(&[&reads[0]])[Category::Search.index()],
            None
        );
    }

    #[test]
    fn category_max_read_verification_and_the_rest() {
        let scores = |tools: Vec<Tool>| {
            let refs: Vec<&Tool> = tools.iter().collect();
            category_scores(&refs)
        };
        let idx = |c: Category| c.index();
        let hit = tool("grep", "z", Evidence::Hits(1));
        assert_eq!(
            scores(vec![read("a", 0, 0)])[idx(Category::Read)],
            Some(0.10)
        );
        assert_eq!(
            scores(vec![read("a", 4, 4)])[idx(Category::Read)],
            Some(0.55)
        );
        assert_eq!(
            scores(vec![read("a", 4, 2), hit.clone()])[idx(Category::Read)],
            Some(0.80)
        );
        // 3 relevant files in total across reads.
        assert_eq!(
            scores(vec![read("a", 1, 1), read("b", 4, 2), hit.clone()])[idx(Category::Read)],
            Some(0.88)
        );
        let v = |tools: Vec<Tool>| scores(tools)[idx(Category::Verification)];
        let build = |passed| tool("cmake", "", Evidence::Build { passed });
        let tests = |run, failed| {
            tool(
                "ctest",
                "",
                Evidence::Tests {
                    run,
                    passed: run - failed,
                    failed,
                },
            )
        };
        assert_eq!(v(vec![build(false), tests(5, 0), build(true)]), Some(0.15));
        assert_eq!(v(vec![build(true), tests(5, 1)]), Some(0.30));
        assert_eq!(v(vec![build(true), tests(5, 0)]), Some(0.93));
        assert_eq!(v(vec![build(true)]), Some(0.80));
        assert_eq!(v(vec![tests(5, 0)]), Some(0.80));
        assert_eq!(v(vec![build(true), tests(0, 0)]), Some(0.80));
        let d =
            |f| scores(vec![tool("discovery", "", Evidence::Factors(f))])[idx(Category::Discovery)];
        assert_eq!(
            [d(0), d(1), d(2), d(3), d(4)].map(Option::unwrap),
            [0.20, 0.20, 0.50, 0.70, 0.85]
        );
        let g = |h| scores(vec![tool("git", "", Evidence::Hits(h))])[idx(Category::Git)];
        assert_eq!((g(3), g(0)), (Some(0.75), Some(0.30)));
        let ci = |f| scores(vec![tool("gh", "", Evidence::Factors(f))])[idx(Category::Ci)].unwrap();
        assert!(close(ci(3), 0.80) && close(ci(2), 2.0 / 3.0 * 0.8) && ci(0) == 0.0);
        let mut custom = tool("bazel", "", Evidence::None);
        custom.score = Some(0.9);
        let other = scores(vec![tool("bazel", "", Evidence::None), custom]);
        assert_eq!(other[idx(Category::Other)], Some(0.9));
    }

    #[test]
    fn failed_tools_give_no_evidence_in_either_model() {
        // A failed grep on the same target: no search category, no agreement, no convergence.
        let mut failed = tool("grep", "Parser", Evidence::None);
        failed.ok = false;
        let tools = vec![read("src/parser.rs", 1, 1), failed];
        let o = replay(&cmax(), &query(tools.clone()));
        let b = &o.breakdown;
        assert_eq!(b.categories[Category::Search.index()], None);
        // read alone, no search hits: 0.55, and nothing to converge with.
        assert_eq!((o.primary, b.converging, b.bonus), (0.55, 1, 0.0));
        // flat-mean: one entry, the read's 0.55; fires at 0.7 → (0.55 + 0.5)/2.
        let o = replay(&flat(), &query(tools));
        assert_eq!((o.primary, o.confidence), (0.55, 0.525));
    }

    #[test]
    fn convergence_counts_categories_on_one_target() {
        let tools = [
            tool("find", "Parser", Evidence::Hits(2)),
            read("src/parser.rs", 1, 1),
            tool("git", "parser", Evidence::Hits(0)), // no hits: no confirmation
            tool("discovery", "src/parser", Evidence::Factors(1)), // ran: confirms
            tool("grep", "Lexer", Evidence::Hits(3)),
        ];
        let refs: Vec<&Tool> = tools.iter().collect();
        assert_eq!(convergence(&refs), (3, true));
        // Different targets everywhere: each category confirms only its own.
        let apart = [
            tool("find", "alpha", Evidence::Hits(2)),
            read("beta.rs", 1, 1),
        ];
        let refs: Vec<&Tool> = apart.iter().collect();
        assert_eq!(convergence(&refs), (1, false));
        // No targets at all.
        let none = [tool("find", "", Evidence::Hits(2))];
        assert_eq!(convergence(&none.iter().collect::<Vec<_>>()), (0, false));
    }

    #[test]
    fn category_max_normalize_all_additive_and_cap() {
        let tools = four_step();
        let mut p = CategoryMax {
            normalize: Normalize::All,
            ..CategoryMax::default()
        };
        // base = (2.5·0.8 + 3·0.8)/10.5 = 0.419048; × 1.15 = 0.481905
        let (s, b) = category_max(&p, tools.iter());
        assert!(close(b.base, 4.4 / 10.5));
        assert!(close(s, 4.4 / 10.5 * 1.15));
        p.bonus_mode = BonusMode::Additive;
        assert!(close(category_max(&p, tools.iter()).0, 4.4 / 10.5 + 0.15));
        // A big bonus caps at 1.
        p.normalize = Normalize::Present;
        p.bonus_two = 0.5;
        assert_eq!(category_max(&p, tools.iter()).0, 1.0);
        // Custom weights: only read counts.
        let only_read = CategoryMax {
            weights: Weights {
                search: 0.0,
                read: 1.0,
                discovery: 0.0,
                verification: 0.0,
                git: 0.0,
                ci: 0.0,
                other: 0.0,
            },
            bonus_two: 0.0,
            bonus_search_read: 0.0,
            ..CategoryMax::default()
        };
        assert!(close(category_max(&only_read, tools.iter()).0, 0.8));
    }

    #[test]
    fn category_max_recovery_tools_count_only_when_the_gate_fires() {
        // Primary: a find with no hits and a read with no search support.
        // search 0.10, read 0.55: base = (0.25 + 1.65)/5.5 = 0.345455; the find's and read's
        // targets differ → no bonus. 0.2 ≤ 0.345 < 0.5 → fires.
        let mut tools = vec![
            tool("find", "Widget", Evidence::Hits(0)),
            read("docs/intro.md", 1, 1),
        ];
        tools.push(recovery(tool("grep", "widget", Evidence::Hits(4)), 1));
        tools.push(recovery(read("src/widget.rs", 1, 1), 1));
        let o = replay(&cmax(), &query(tools.clone()));
        assert_eq!(o.primary, round9(1.9 / 5.5));
        assert!(o.fired);
        assert_eq!(o.attempts, 1);
        // After recovery: search one kind with hits 0.65; read with search hits, 2 relevant
        // → 0.80; base (1.625 + 2.4)/5.5 = 0.731818; grep, read confirm "widget" (and the
        // failed find's target too, but it found nothing): k = 2 with search+read → ×1.15.
        assert_eq!(o.confidence, round9(4.025 / 5.5 * 1.15));
        // Under a gate that does not fire the recovery tools are not there.
        let lax = CategoryMax {
            recovery_threshold: 0.3,
            ..CategoryMax::default()
        };
        let o = replay(&ConfidencePolicy::CategoryMax(lax), &query(tools));
        assert!(!o.fired);
        assert_eq!(o.confidence, round9(1.9 / 5.5));
        assert_eq!(o.attempts, 0);
    }

    #[test]
    fn the_gate_compares_rounded_confidences() {
        // 0.7 exactly, reached through floating point: not below the 0.7 gate.
        let s = |x: f64| {
            let mut t = tool("bazel", "", Evidence::None);
            t.score = Some(x);
            t
        };
        let q = query(vec![s(0.2), s(0.95), s(0.95)]);
        // (0.2 + 0.95 + 0.95)/3 = 0.7, which is 0.6999999999999998 in floating point.
        let sum = [0.2, 0.95, 0.95].iter().sum::<f64>();
        assert!(sum / 3.0 < 0.7);
        let o = replay(&flat(), &q);
        assert_eq!(o.primary, 0.7);
        assert!(!o.fired);
    }

    proptest::proptest! {
        // The one-pass matcher gives what the pairwise definition gives, on targets from a
        // small alphabet so that containment (and repeats, and overlaps) are common.
        #[test]
        fn the_automaton_matches_targets_as_the_pairwise_rule_does(
            raw in proptest::collection::vec(("[ab]{1,4}", 0u8..7), 1..60)
        ) {
            let targets = distinct_targets(raw.into_iter().map(|(t, c)| (t, 1u8 << c)));
            let fast = unions_by_automaton(&targets).unwrap();
            proptest::prop_assert_eq!(fast, unions_pairwise(&targets));
        }
    }
}
