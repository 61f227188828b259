//! One arm's review replay over all its recorded returns (docs/guides/ab-rubric-change.md, with its agreement units):
//! the returns grouped into targets and their runs, each (target, run) replayed through the
//! arm's review policy, and the units Krippendorff's α is computed over. Pure: returns in,
//! replays out. `analysis` turns them into metrics; `collect` and the skip rules can replay an
//! arm's synthesis without the rest.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::review::{self, Check, Merged, Precision, ReturnRef};
use super::review_metrics::reviewer_units;
use crate::corpus::reviews::{Return, Severity};
use crate::corpus::sources::Sources;
use crate::corpus::targets::{Pr, PrState, Target};
use crate::corpus::validations::Validation;
use crate::policy::{Controls, Mode, ReviewPolicy, SkipRule};

/// One (target, run) as the arm's policy replays it.
#[derive(Clone, Debug)]
pub struct RunReplay {
    pub target: Arc<str>,
    pub run: u32,
    /// Recorded confidences of the valid findings of the `ok` returns, before any policy.
    pub raw_confidences: Vec<f64>,
    /// Findings dropped by validation, over every return of the (target, run).
    pub malformed: usize,
    /// Returns recorded `status: failed`.
    pub failed_reviewers: usize,
    /// The merged findings after the whole pipeline, in listing order.
    pub merged: Vec<Merged>,
    /// The skip rule that kept the arm from reviewing this target (docs/guides/ab-rubric-change.md): then every
    /// count of the run is 0.
    pub skipped: Option<SkipRule>,
    /// Whether the corpus has a source snapshot of the target (lint-ignore's measure is
    /// unknown without one).
    pub has_sources: bool,
    /// What the (target, run)'s calls spent, summed, when any of them reported it.
    pub spent: Option<crate::corpus::usage::Spent>,
}

/// A whole arm, replayed.
#[derive(Clone, Debug, Default)]
pub struct ArmReplay {
    /// Targets in order of first appearance, each target's runs in order of first appearance.
    pub runs: Vec<RunReplay>,
    /// Agreement among corroborating reviewers: per corroborated merged finding, each
    /// contributor's raw confidence.
    pub reviewer_units: Vec<Vec<f64>>,
    /// Test-retest agreement: per (target, reviewer, fingerprint) seen in two or more runs, its
    /// confidence in each run (the highest, when a reviewer filed it twice in one run).
    pub run_units: Vec<Vec<f64>>,
    /// What the skip rules cost (docs/guides/ab-rubric-change.md), from replaying each skipped target as if it were
    /// not: targets skipped, their recorded returns (failed ones included) and the findings
    /// that would have externalized, all and at P0/P1, each averaged over the target's runs.
    pub skipped: Skipped,
    /// Each reason of a rejected finding with its count, over every target and run.
    pub rejection_reasons: BTreeMap<String, usize>,
}

/// What skipping targets saved and hid, for one arm (docs/guides/ab-rubric-change.md).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Skipped {
    pub targets: usize,
    pub calls: f64,
    pub lost_actionable: f64,
    pub lost_p0_p1: f64,
}

/// What an arm's precision controls read from the corpus.
#[derive(Clone, Copy, Debug)]
pub struct ArmControls<'a> {
    pub controls: &'a Controls,
    /// The recorded label the arm reads: the validator calls it shares.
    pub source: &'a str,
    pub calls: &'a [Validation],
    pub targets: &'a [Target],
    pub sources: Option<&'a Sources>,
}

/// Every control off, reading nothing.
pub const NO_ARM_CONTROLS: ArmControls<'static> = ArmControls {
    controls: &Controls::OFF,
    source: "",
    calls: &[],
    targets: &[],
    sources: None,
};

/// The first of `rules`, in their order, that fires on the target's pull request; none for a
/// target that is not a pull request.
pub fn skip_rule(rules: &[SkipRule], pr: Option<&Pr>) -> Option<SkipRule> {
    let pr = pr?;
    rules.iter().copied().find(|rule| match rule {
        SkipRule::Closed => matches!(pr.state, PrState::Closed | PrState::Merged),
        SkipRule::Draft => pr.draft,
        SkipRule::TrivialPattern => {
            const PREFIXES: [&str; 6] = [
                "chore(deps)",
                "chore(deps-dev)",
                "build(deps)",
                "build(deps-dev)",
                "chore(release)",
                "release:",
            ];
            let title = pr.title.trim().to_lowercase();
            PREFIXES.iter().any(|p| title.starts_with(p))
                && pr.body.as_deref().unwrap_or("").trim().is_empty()
        }
        SkipRule::TrivialJudgment => pr.trivial == Some(true),
        SkipRule::Reviewed => pr.reviewed,
    })
}

/// The targets a skip rule keeps the arm from reviewing: those whose pull request one of its
/// rules fires on, as [`replay_arm`] skips them.
pub fn skipped_targets<'a>(arm: &ArmControls<'a>) -> std::collections::HashSet<&'a str> {
    let prs: HashMap<&str, Option<&Pr>> = pull_requests(arm);
    prs.into_iter()
        .filter(|(_, pr)| skip_rule(&arm.controls.skip, *pr).is_some())
        .map(|(t, _)| t)
        .collect()
}

/// Each target's pull request, when the corpus's targets file gives one.
fn pull_requests<'a>(arm: &ArmControls<'a>) -> HashMap<&'a str, Option<&'a Pr>> {
    arm.targets
        .iter()
        .map(|t| (t.target.as_str(), t.pr.as_ref()))
        .collect()
}

/// One target's recorded returns (`&Return`, or the returns themselves when the replay may let
/// them go), by run.
#[derive(Clone, Debug)]
pub struct TargetGroup<R> {
    pub target: Arc<str>,
    /// In order of first appearance.
    pub runs: Vec<RunGroup<R>>,
}

/// One run of one target: its returns, in file order.
#[derive(Clone, Debug)]
pub struct RunGroup<R> {
    pub run: u32,
    pub returns: Vec<R>,
}

impl<R: Borrow<Return>> RunGroup<R> {
    /// Its returns, borrowed.
    pub fn refs(&self) -> Vec<&Return> {
        self.returns.iter().map(Borrow::borrow).collect()
    }
}

/// The targets of `returns` in order of first appearance, each with its runs.
pub fn group<R: Borrow<Return>>(returns: impl IntoIterator<Item = R>) -> Vec<TargetGroup<R>> {
    let mut targets: Vec<TargetGroup<R>> = Vec::new();
    let mut index: HashMap<Arc<str>, usize, foldhash::fast::RandomState> = HashMap::default();
    for r in returns {
        let ret = r.borrow();
        let t = match index.get(&*ret.target) {
            Some(&t) => t,
            None => {
                index.insert(ret.target.clone(), targets.len());
                targets.push(TargetGroup {
                    target: ret.target.clone(),
                    runs: Vec::new(),
                });
                targets.len() - 1
            }
        };
        let run = ret.run;
        let runs = &mut targets[t].runs;
        match runs.iter_mut().find(|g| g.run == run) {
            Some(g) => g.returns.push(r),
            None => runs.push(RunGroup {
                run,
                returns: vec![r],
            }),
        }
    }
    targets
}

/// `f`, typed as what replays a target's run `k` with its fingerprints (a closure's own
/// signature cannot keep the texts' lifetime fixed while each call borrows the memo anew).
fn replayer<'r, F: Fn(usize, &mut review::Fingerprints<'r>) -> Vec<Merged>>(f: F) -> F {
    f
}

/// Replays every (target, run) of `returns` through `policy` and the arm's precision controls.
/// A target's runs are replayed together, so the test-retest bookkeeping lives only as long as
/// one target; returns given by value are let go as soon as their target is replayed, so a
/// replay that owns its corpus never holds it and its results whole. A target a skip rule fires
/// on is replayed too, but only to count what skipping it hid; its runs hold zeros.
pub fn replay_arm<R: Borrow<Return>>(
    policy: &ReviewPolicy,
    mode: Mode,
    arm: &ArmControls<'_>,
    returns: impl IntoIterator<Item = R>,
) -> ArmReplay {
    let mut runs = Vec::new();
    let out = replay_arm_each(policy, mode, arm, returns, |run| runs.push(run));
    ArmReplay { runs, ..out }
}

/// [`replay_arm`], giving each (target, run) to `each` as soon as it is replayed instead of
/// keeping them (its `runs` are left empty): a caller that turns them into rows never holds
/// every merged finding of the arm and every row at once.
pub fn replay_arm_each<R: Borrow<Return>>(
    policy: &ReviewPolicy,
    mode: Mode,
    arm: &ArmControls<'_>,
    returns: impl IntoIterator<Item = R>,
    each: impl FnMut(RunReplay),
) -> ArmReplay {
    replay_arm_with(policy, mode, arm, returns, true, each)
}

/// Every (target, run) of `returns` merged under `policy` but not routed: each run's `merged`
/// stands before the gate ([`review::merge_remembering`]), and a target a skip rule fires on
/// holds nothing. What every point of a sweep that varies only `policy`'s gates routes again
/// ([`review::routing`]), when no validation pass runs after the gate ([`review::validates`]).
pub fn merge_arm<R: Borrow<Return>>(
    policy: &ReviewPolicy,
    mode: Mode,
    arm: &ArmControls<'_>,
    returns: impl IntoIterator<Item = R>,
) -> Vec<RunReplay> {
    let mut runs = Vec::new();
    replay_arm_with(policy, mode, arm, returns, false, |run| runs.push(run));
    runs
}

/// [`replay_arm_each`], routing each merged finding when `routed`; unrouted (for
/// [`merge_arm`]), only the runs are made.
fn replay_arm_with<R: Borrow<Return>>(
    policy: &ReviewPolicy,
    mode: Mode,
    arm: &ArmControls<'_>,
    returns: impl IntoIterator<Item = R>,
    routed: bool,
    mut each: impl FnMut(RunReplay),
) -> ArmReplay {
    let mut out = ArmReplay::default();
    let mut calls: HashMap<(&str, u32), Vec<&Validation>> = HashMap::new();
    for c in arm.calls.iter().filter(|c| c.arm == arm.source) {
        calls.entry((c.target.as_str(), c.run)).or_default().push(c);
    }
    let prs = pull_requests(arm);
    for TargetGroup {
        target: shared,
        runs: owned,
    } in group(returns)
    {
        // Borrowed for the replay; `owned` goes when this target is done.
        let runs: Vec<(u32, Vec<&Return>)> = owned.iter().map(|g| (g.run, g.refs())).collect();
        let target: &str = &shared;
        let has_sources = arm.sources.is_some_and(|s| s.has(target));
        // The target's findings' fingerprints, shared by its runs' dedups and the
        // test-retest bookkeeping below.
        let mut fingerprints = review::Fingerprints::default();
        // Run `k` of `runs`, replayed.
        let replay_run = replayer(|k, fingerprints| {
            let (run, group) = &runs[k];
            let run = *run;
            let refs = ReturnRef::valid(group);
            let precision = Precision {
                controls: arm.controls,
                target,
                sources: arm.sources,
                calls: calls.get(&(target, run)).map_or(&[], Vec::as_slice),
            };
            if routed {
                review::replay_remembering(policy, mode, &precision, &refs, fingerprints)
            } else {
                // In listing order (which routing does not change), so that whatever a point
                // sums over them it sums in the order a whole replay does.
                let mut merged =
                    review::merge_remembering(policy, mode, &precision, &refs, fingerprints);
                review::sort_for_listing(&mut merged, mode);
                merged
            }
        });
        let pr = prs.get(target).copied().flatten();
        if let Some(rule) = skip_rule(&arm.controls.skip, pr) {
            // Not reviewed: zero in every count. Replayed as if it were, for what that hid.
            let n = runs.len() as f64;
            out.skipped.targets += 1;
            for (k, (run, group)) in runs.iter().enumerate() {
                let merged = if routed {
                    replay_run(k, &mut fingerprints)
                } else {
                    Vec::new()
                };
                let lost = merged.iter().filter(|m| m.externalized());
                let (all, high) = lost.fold((0, 0), |(a, h), m| {
                    (a + 1, h + usize::from(m.claim.severity <= Severity::P1))
                });
                out.skipped.calls += group.len() as f64 / n;
                out.skipped.lost_actionable += all as f64 / n;
                out.skipped.lost_p0_p1 += high as f64 / n;
                each(RunReplay {
                    target: Arc::clone(&shared),
                    run: *run,
                    raw_confidences: Vec::new(),
                    malformed: 0,
                    failed_reviewers: 0,
                    merged: Vec::new(),
                    skipped: Some(rule),
                    has_sources,
                    spent: None,
                });
            }
            continue;
        }
        // (reviewer, fingerprint) → run → confidence, for test-retest agreement.
        let mut across_runs: HashMap<(&str, u32), BTreeMap<u32, f64>, foldhash::fast::RandomState> =
            HashMap::default();
        for (k, (run, group)) in runs.iter().enumerate() {
            let ok: Vec<&Return> = group.iter().copied().filter(|r| !r.failed).collect();
            let merged = replay_run(k, &mut fingerprints);
            for m in &merged {
                if let Some(Check::Rejected(reason)) = &m.validation {
                    *out.rejection_reasons.entry(reason.to_string()).or_default() += 1;
                }
            }
            if routed {
                out.reviewer_units.extend(reviewer_units(&merged));
            }
            if runs.len() >= 2 && routed {
                for r in &ok {
                    for f in &r.findings {
                        let slot = across_runs
                            .entry((&*r.reviewer, fingerprints.of_finding(f)))
                            .or_default()
                            .entry(*run)
                            .or_insert(f64::MIN);
                        *slot = slot.max(f.confidence);
                    }
                }
            }
            each(RunReplay {
                target: Arc::clone(&shared),
                run: *run,
                raw_confidences: ok
                    .iter()
                    .flat_map(|r| r.findings.iter().map(|f| f.confidence))
                    .collect(),
                malformed: group.iter().map(|r| r.malformed.len()).sum(),
                failed_reviewers: group.iter().filter(|r| r.failed).count(),
                merged,
                skipped: None,
                has_sources,
                spent: group
                    .iter()
                    .filter_map(|r| r.spent().copied())
                    .reduce(crate::corpus::usage::Spent::plus),
            });
        }
        // Sorted for a deterministic unit order (α does not depend on it; the bootstrap does).
        let mut units: Vec<_> = across_runs
            .into_iter()
            .filter(|(_, by_run)| by_run.len() >= 2)
            .collect();
        units.sort_by(|((a, x), _), ((b, y), _)| {
            (a, fingerprints.text(*x)).cmp(&(b, fingerprints.text(*y)))
        });
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
    use crate::corpus::reviews::parse_for;
    use crate::policy::Scale;
    use serde_json::json;

    /// Arm `b`'s returns, each line one return on the anchor scale.
    fn returns_in(mode: Mode, lines: &[serde_json::Value]) -> Vec<Return> {
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let arms = [("b".into(), Scale::Anchor)];
        let parsed = parse_for("r.jsonl", text.join("\n").as_bytes(), mode, &arms);
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        parsed.selections.into_iter().next().unwrap().returns
    }

    fn returns(lines: &[serde_json::Value]) -> Vec<Return> {
        returns_in(Mode::Doc, lines)
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
                    &*g.target,
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
        let replayed = replay_arm(&exp.baseline.review, Mode::Doc, &NO_ARM_CONTROLS, &r);
        assert_eq!(replayed.runs.len(), 2);
        assert_eq!(replayed.runs[0].raw_confidences, [50.0, 75.0]);
        // Run 0: x and y corroborate one finding; run 1: no corroboration.
        assert_eq!(replayed.reviewer_units, [vec![50.0, 75.0]]);
        // x filed "rollback missing" in both runs (fingerprints ignore case and punctuation).
        assert_eq!(replayed.run_units, [vec![50.0, 75.0]]);
    }

    fn pr(state: PrState) -> Pr {
        Pr {
            state,
            draft: false,
            title: "Fix the retry loop".into(),
            body: Some("Retries twice.".into()),
            files: vec![],
            reviewed: false,
            trivial: None,
        }
    }

    /// docs/guides/ab-rubric-change.md's skip rules, each firing and each kept from firing, in the arm's order.
    #[test]
    fn each_skip_rule_fires_only_where_it_should() {
        use SkipRule::*;
        let all = [Closed, Draft, TrivialPattern, TrivialJudgment, Reviewed];
        let fires = |p: &Pr| skip_rule(&all, Some(p));
        assert_eq!(fires(&pr(PrState::Open)), None);
        assert_eq!(fires(&pr(PrState::Closed)), Some(Closed));
        assert_eq!(fires(&pr(PrState::Merged)), Some(Closed));
        assert_eq!(
            fires(&Pr {
                draft: true,
                ..pr(PrState::Open)
            }),
            Some(Draft)
        );
        let bump = |title: &str, body: Option<&str>| Pr {
            title: title.into(),
            body: body.map(str::to_string),
            ..pr(PrState::Open)
        };
        for title in [
            "chore(deps): bump serde from 1.0.1 to 1.0.2",
            "  Chore(Deps-Dev): bump eslint",
            "build(deps): bump tokio",
            "build(deps-dev): bump x",
            "chore(release): 2.4.0",
            "Release: 2.4.0",
        ] {
            assert_eq!(fires(&bump(title, None)), Some(TrivialPattern), "{title}");
            assert_eq!(
                fires(&bump(title, Some(" \n "))),
                Some(TrivialPattern),
                "{title}"
            );
        }
        // Not a listed prefix, or a body that says anything.
        assert_eq!(fires(&bump("chore: deps", None)), None);
        assert_eq!(fires(&bump("deps: chore(deps)", None)), None);
        assert_eq!(
            fires(&bump(
                "chore(deps): bump openssl",
                Some("Fixes CVE-2026-1234")
            )),
            None
        );
        assert_eq!(
            fires(&Pr {
                trivial: Some(true),
                ..pr(PrState::Open)
            }),
            Some(TrivialJudgment)
        );
        assert_eq!(
            fires(&Pr {
                trivial: Some(false),
                ..pr(PrState::Open)
            }),
            None
        );
        assert_eq!(
            fires(&Pr {
                reviewed: true,
                ..pr(PrState::Open)
            }),
            Some(Reviewed)
        );
        // The first rule in the arm's order that fires names the skip.
        let both = Pr {
            reviewed: true,
            ..pr(PrState::Merged)
        };
        assert_eq!(skip_rule(&[Reviewed, Closed], Some(&both)), Some(Reviewed));
        assert_eq!(skip_rule(&[Closed, Reviewed], Some(&both)), Some(Closed));
        // Only the listed rules; never for a target that is not a pull request.
        assert_eq!(skip_rule(&[Draft], Some(&pr(PrState::Merged))), None);
        assert_eq!(skip_rule(&all, None), None);
        assert_eq!(skip_rule(&[], Some(&both)), None);
    }

    /// A skipped target holds zeros in every run; replayed as if it were not skipped, it
    /// counts its returns (failed ones too) and the findings it would have externalized, each
    /// averaged over its runs.
    #[test]
    fn a_skipped_target_counts_what_skipping_it_saved_and_hid() {
        let code = |title: &str, sev: &str, conf: u32| {
            json!({"title": title, "severity": sev, "file": "a.rs", "line": 10, "autofix_class": "manual",
                   "owner": "human", "requires_verification": false, "pre_existing": false, "confidence": conf})
        };
        let line = |target: &str, reviewer: &str, run: u32, findings: Vec<serde_json::Value>| json!({"target": target, "arm": "b", "reviewer": reviewer, "run": run, "findings": findings});
        let returns = &returns_in(
            Mode::Code,
            &[
                line(
                    "pr-merged",
                    "x",
                    0,
                    vec![code("P1 bug", "P1", 100), code("P3 nit", "P3", 75)],
                ),
                line("pr-merged", "y", 0, vec![]),
                json!({"target": "pr-merged", "arm": "b", "reviewer": "z", "run": 0, "status": "failed"}),
                line("pr-merged", "x", 1, vec![code("P1 bug", "P1", 100)]),
                line("pr-open", "x", 0, vec![code("real", "P2", 100)]),
            ],
        );
        let exp = crate::config::parse(
            std::path::Path::new("e.toml"),
            "mode = \"code\"\n[arms.baseline]\nsource = \"b\"\n[arms.baseline.review]\npolicy = \"anchored\"\nskip = [\"closed\"]\n[arms.treatment]\nsource = \"b\"\n",
        )
        .unwrap();
        let targets = [
            Target {
                line: 1,
                target: "pr-merged".into(),
                pr: Some(pr(PrState::Merged)),
            },
            Target {
                line: 2,
                target: "pr-open".into(),
                pr: Some(pr(PrState::Open)),
            },
        ];
        let arm = ArmControls {
            controls: &exp.baseline.controls,
            source: "b",
            calls: &[],
            targets: &targets,
            sources: None,
        };
        let replayed = replay_arm(&exp.baseline.review, Mode::Code, &arm, returns);
        let rows: Vec<(&str, u32, Option<SkipRule>, usize)> = replayed
            .runs
            .iter()
            .map(|r| {
                (
                    &*r.target,
                    r.run,
                    r.skipped,
                    r.merged.len() + r.raw_confidences.len() + r.failed_reviewers,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("pr-merged", 0, Some(SkipRule::Closed), 0),
                ("pr-merged", 1, Some(SkipRule::Closed), 0),
                ("pr-open", 0, None, 2),
            ]
        );
        // Run 0: three returns, two findings externalized (one at P1); run 1: one return, one
        // P1 finding. Averaged over the two runs.
        assert_eq!(
            replayed.skipped,
            Skipped {
                targets: 1,
                calls: 2.0,
                lost_actionable: 1.5,
                lost_p0_p1: 1.0
            }
        );
        // Without the rule, nothing is skipped.
        let off = replay_arm(&exp.baseline.review, Mode::Code, &NO_ARM_CONTROLS, returns);
        assert_eq!(off.skipped, Skipped::default());
        assert!(off.runs.iter().all(|r| r.skipped.is_none()));
    }
}
