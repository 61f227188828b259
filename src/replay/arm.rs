//! One arm's review replay over all its recorded returns (SPEC §4.1 and §4.2's agreement units):
//! the returns grouped into targets and their runs, each (target, run) replayed through the
//! arm's review policy, and the units Krippendorff's α is computed over. Pure: returns in,
//! replays out. `analysis` turns them into metrics; `collect` and the skip rules can replay an
//! arm's synthesis without the rest.

use std::collections::{BTreeMap, HashMap};

use super::review::{self, Merged, ReturnRef};
use super::review_metrics::reviewer_units;
use crate::config::{Mode, ReviewPolicy};
use crate::corpus::reviews::{Finding, Location, Return};

/// One (target, run) as the arm's policy replays it.
#[derive(Clone, Debug)]
pub struct RunReplay<'a> {
    pub target: &'a str,
    pub run: u32,
    /// Recorded confidences of the valid findings of the `ok` returns, before any policy.
    pub raw_confidences: Vec<f64>,
    /// Findings dropped by validation, over every return of the (target, run).
    pub malformed: usize,
    /// Returns recorded `status: failed`.
    pub failed_reviewers: usize,
    /// The merged findings after the whole pipeline, in listing order.
    pub merged: Vec<Merged>,
}

/// A whole arm, replayed.
#[derive(Clone, Debug, Default)]
pub struct ArmReplay<'a> {
    /// Targets in order of first appearance, each target's runs in order of first appearance.
    pub runs: Vec<RunReplay<'a>>,
    /// Agreement among corroborating reviewers: per corroborated merged finding, each
    /// contributor's raw confidence.
    pub reviewer_units: Vec<Vec<f64>>,
    /// Test-retest agreement: per (target, reviewer, fingerprint) seen in two or more runs, its
    /// confidence in each run (the highest, when a reviewer filed it twice in one run).
    pub run_units: Vec<Vec<f64>>,
}

/// One target's recorded returns, by run.
#[derive(Clone, Debug)]
pub struct TargetGroup<'a> {
    pub target: &'a str,
    /// In order of first appearance.
    pub runs: Vec<RunGroup<'a>>,
}

/// One run of one target: its returns, in file order.
#[derive(Clone, Debug)]
pub struct RunGroup<'a> {
    pub run: u32,
    pub returns: Vec<&'a Return>,
}

/// The targets of `returns` in order of first appearance, each with its runs.
pub fn group(returns: &[Return]) -> Vec<TargetGroup<'_>> {
    let mut targets: Vec<TargetGroup> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for r in returns {
        let t = *index.entry(&r.target).or_insert_with(|| {
            targets.push(TargetGroup {
                target: &r.target,
                runs: Vec::new(),
            });
            targets.len() - 1
        });
        let runs = &mut targets[t].runs;
        match runs.iter_mut().find(|g| g.run == r.run) {
            Some(g) => g.returns.push(r),
            None => runs.push(RunGroup {
                run: r.run,
                returns: vec![r],
            }),
        }
    }
    targets
}

/// What makes one reviewer's finding "the same finding" in another run: its place (section or
/// file) and title, normalized (§4.1 step 2).
pub fn fingerprint(f: &Finding) -> String {
    let place = match &f.location {
        Location::Doc { section, .. } => section,
        Location::Code { file, .. } => file,
    };
    format!(
        "{}\u{1f}{}",
        review::normalize(place),
        review::normalize(&f.title)
    )
}

/// Replays every (target, run) of `returns` through `policy`. A target's runs are replayed
/// together, so the test-retest bookkeeping lives only as long as one target.
pub fn replay_arm<'a>(policy: &ReviewPolicy, mode: Mode, returns: &'a [Return]) -> ArmReplay<'a> {
    let mut out = ArmReplay::default();
    for TargetGroup { target, runs } in group(returns) {
        // (reviewer, fingerprint) → run → confidence, for test-retest agreement.
        let mut across_runs: HashMap<(&str, String), BTreeMap<u32, f64>> = HashMap::new();
        for RunGroup {
            run,
            returns: group,
        } in &runs
        {
            let ok: Vec<&Return> = group.iter().copied().filter(|r| !r.failed).collect();
            let refs: Vec<ReturnRef> = ok
                .iter()
                .map(|r| ReturnRef {
                    reviewer: &r.reviewer,
                    findings: &r.findings,
                })
                .collect();
            let merged = review::replay(policy, mode, &refs);
            out.reviewer_units.extend(reviewer_units(&merged));
            if runs.len() >= 2 {
                for r in &ok {
                    for f in &r.findings {
                        let slot = across_runs
                            .entry((r.reviewer.as_str(), fingerprint(f)))
                            .or_default()
                            .entry(*run)
                            .or_insert(f64::MIN);
                        *slot = slot.max(f.confidence);
                    }
                }
            }
            out.runs.push(RunReplay {
                target,
                run: *run,
                raw_confidences: ok
                    .iter()
                    .flat_map(|r| r.findings.iter().map(|f| f.confidence))
                    .collect(),
                malformed: group.iter().map(|r| r.malformed.len()).sum(),
                failed_reviewers: group.iter().filter(|r| r.failed).count(),
                merged,
            });
        }
        // Sorted for a deterministic unit order (α does not depend on it; the bootstrap does).
        let mut units: Vec<_> = across_runs
            .into_iter()
            .filter(|(_, by_run)| by_run.len() >= 2)
            .collect();
        units.sort_by(|a, b| a.0.cmp(&b.0));
        out.run_units.extend(
            units
                .into_iter()
                .map(|(_, by_run)| by_run.into_values().collect()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scale;
    use crate::corpus::reviews::parse_for;
    use serde_json::json;

    fn returns(lines: &[serde_json::Value]) -> Vec<Return> {
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let parsed = parse_for(
            "r.jsonl",
            text.join("\n").as_bytes(),
            Mode::Doc,
            &[("b".into(), Scale::Anchor)],
        );
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        parsed.selections.into_iter().next().unwrap().returns
    }

    fn finding(title: &str, confidence: u32) -> serde_json::Value {
        json!({"title": title, "severity": "P1", "section": "Plan", "finding_type": "error",
               "autofix_class": "manual", "confidence": confidence})
    }

    #[test]
    fn returns_group_into_targets_and_runs_in_order_of_first_appearance() {
        let line = |target: &str, reviewer: &str, run: u32| json!({"target": target, "arm": "b", "reviewer": reviewer, "run": run, "findings": []});
        let r = returns(&[
            line("t2", "x", 1),
            line("t1", "x", 0),
            line("t2", "x", 0),
            line("t2", "y", 1),
        ]);
        let groups = group(&r);
        let shape: Vec<(&str, Vec<(u32, usize)>)> = groups
            .iter()
            .map(|g| {
                (
                    g.target,
                    g.runs.iter().map(|r| (r.run, r.returns.len())).collect(),
                )
            })
            .collect();
        assert_eq!(shape, [("t2", vec![(1, 2), (0, 1)]), ("t1", vec![(0, 1)])]);
    }

    #[test]
    fn a_reviewers_finding_seen_in_two_runs_is_a_test_retest_unit() {
        let line = |reviewer: &str, run: u32, findings: Vec<serde_json::Value>| json!({"target": "t", "arm": "b", "reviewer": reviewer, "run": run, "findings": findings});
        let r = returns(&[
            line("x", 0, vec![finding("Rollback missing", 50)]),
            line("y", 0, vec![finding("rollback missing!", 75)]),
            line("x", 1, vec![finding("ROLLBACK  missing", 75)]),
            line("y", 1, vec![finding("Something else", 25)]),
        ]);
        let exp = crate::config::parse(
            std::path::Path::new("e.toml"),
            "mode = \"doc\"\n[arms.baseline]\nsource = \"b\"\n[arms.baseline.review]\npolicy = \"anchored\"\n[arms.treatment]\nsource = \"b\"\n",
        )
        .unwrap();
        let replayed = replay_arm(&exp.baseline.review, Mode::Doc, &r);
        assert_eq!(replayed.runs.len(), 2);
        assert_eq!(replayed.runs[0].raw_confidences, [50.0, 75.0]);
        // Run 0: x and y corroborate one finding; run 1: no corroboration.
        assert_eq!(replayed.reviewer_units, [vec![50.0, 75.0]]);
        // x filed "rollback missing" in both runs (fingerprints ignore case and punctuation).
        assert_eq!(replayed.run_units, [vec![50.0, 75.0]]);
    }
}
