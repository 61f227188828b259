//! The review section of a run: each arm's returns replayed through its policy and precision
//! controls, its figures per target and per arm, the agreement of repeated runs, and the paired
//! deltas of the catalogue's metrics.

use std::collections::{BTreeMap, HashMap};

use crate::config::Experiment;
use crate::corpus::reviews::{Return, Selection};
use crate::corpus::sources::Sources;
use crate::corpus::targets::Target;
use crate::corpus::validations::Validation;
use crate::corpus::verdicts::Item;
use crate::error::InputError;
use crate::policy::{Arm, Mode, Scale};
use crate::replay;
use crate::replay::review::Check;
use crate::replay::review_metrics::{
    self, arm_metrics, ArmMetrics, FailedCall, TargetGroups, TargetInput,
};
use crate::replay::review_metrics::{MERGED, PROMOTED};
use crate::replay::{Comparison, DeltaTable, UnitPair};
use crate::stats::alpha::{Level, Units};
use crate::stats::bootstrap::{self, Method, Plan};
use crate::stats::paired::wilson;

use super::rows_of;
use super::Settings;
use crate::corpus::Corpus;
use crate::model::*;

/// What code review's precision controls read from the corpus, and
/// whether the experiment replays them at all: in code mode, when an arm turns one on or the
/// corpus records validator calls, PR metadata or source snapshots. An experiment that does
/// not writes none of their figures, so its outputs are what they were before the controls.
pub(super) struct CorpusControls<'a> {
    pub(super) used: bool,
    /// Whether any return records what its call spent (`usage`, `elapsed_ms`): both arms then
    /// carry the usage figures (docs/reference.md, "Cost and latency").
    pub(super) usage: bool,
    pub(super) calls: &'a [Validation],
    pub(super) targets: &'a [Target],
    pub(super) sources: Option<&'a Sources>,
}

/// The returns of each arm (baseline, treatment) that it alone reads, taken out of `corpus`
/// so that its replay lets them go target by target: at a million findings the corpus and the
/// replay's results are then never held whole together. Returns two arms share (an A/A run)
/// stay, and so do all of them when the human labels read the findings after the replay.
pub(super) fn take_unshared(exp: &Experiment, corpus: &mut Corpus) -> [Option<Vec<Return>>; 2] {
    let mut owned = [None, None];
    if corpus.labels.is_some() {
        return owned;
    }
    let Some((_, selections)) = &mut corpus.reviews else {
        return owned;
    };
    for (i, arm) in [&exp.baseline, &exp.treatment].into_iter().enumerate() {
        let reads = |a: &Arm| a.source == arm.source && a.review.scale() == arm.review.scale();
        if exp.arms().iter().filter(|a| reads(a)).count() != 1 {
            continue;
        }
        let scale = arm.review.scale();
        if let Some(s) = selections
            .iter_mut()
            .find(|s| s.source == arm.source && s.scale == scale)
        {
            owned[i] = Some(std::mem::take(&mut s.returns));
        }
    }
    owned
}

/// The returns an arm reads: those of its source, validated on its scale.
pub(super) fn returns_of<'a>(selections: &'a [Selection], arm: &Arm) -> &'a [Return] {
    let scale = arm.review.scale();
    selections
        .iter()
        .find(|s| s.source == arm.source && s.scale == scale)
        .map_or(&[], |s| s.returns.as_slice())
}

/// A finding's judge composite for `arm`: a verdict may be filed under the recorded arm label
/// or the arm's name.
pub(super) fn arm_composite<'a>(
    composites: &'a Composites,
    arm: &'a Arm,
) -> impl Fn(&str) -> Option<f64> + 'a {
    move |id: &str| {
        composites.get(id).and_then(|by_arm| {
            by_arm
                .iter()
                .find(|(a, _)| *a == arm.source || *a == arm.name)
                .map(|(_, c)| *c)
        })
    }
}

impl<'a> CorpusControls<'a> {
    /// What `arm`'s precision controls read.
    pub(super) fn of_arm<'b>(&'b self, arm: &'b Arm) -> replay::arm::ArmControls<'b> {
        replay::arm::ArmControls {
            controls: &arm.controls,
            source: &arm.source,
            calls: self.calls,
            targets: self.targets,
            sources: self.sources,
        }
    }
}

impl<'a> CorpusControls<'a> {
    /// `owned`: the returns [`take_unshared`] took out of `corpus`.
    pub(super) fn of(
        exp: &Experiment,
        corpus: &'a Corpus,
        owned: &[Option<Vec<Return>>; 2],
    ) -> Self {
        let calls = corpus.validations.as_ref().map_or(&[][..], |(_, c)| c);
        let targets = corpus.targets.as_ref().map_or(&[][..], |(_, t)| t);
        let sources = corpus.sources.as_ref();
        let recorded =
            corpus.validations.is_some() || corpus.targets.is_some() || sources.is_some();
        let on = exp.arms().iter().any(|a| !a.controls.is_off());
        let left = corpus
            .reviews
            .as_ref()
            .map_or(&[][..], |(_, s)| s.as_slice());
        let usage = left
            .iter()
            .flat_map(|s| &s.returns)
            .chain(owned.iter().flatten().flatten())
            .any(|r| r.spent().is_some());
        CorpusControls {
            used: exp.mode == Mode::Code && (on || recorded),
            usage,
            calls,
            targets,
            sources,
        }
    }
}

/// The review section of the result, with the reviewers' and runs' agreement and the
/// findings table's rows.
pub(super) struct Reviewed {
    pub(super) section: ReviewSection,
    pub(super) agreement: AgreementSection,
    pub(super) findings: [FindingRows; 2],
    pub(super) pairs: Vec<PairRow>,
}

/// Both arms replayed over their returns (side by side: the arms are independent), their
/// metrics, and the paired deltas. `verdicts` give precision and anchor calibration.
pub(super) fn review_section(
    exp: &Experiment,
    name: &str,
    selections: &[Selection],
    owned: [Option<Vec<Return>>; 2],
    verdicts: &[Item],
    controls: &CorpusControls<'_>,
    settings: Settings,
) -> Result<Reviewed, InputError> {
    let composites = composites(exp, verdicts);
    // Each arm replays into its own rows, joined in arm order so the tables do not depend on
    // the threads.
    let replay = |arm: &Arm, owned: Option<Vec<Return>>| {
        let mut rows = FindingRows::default();
        let corpus = Replayed {
            name,
            selections,
            composites: &composites,
            controls,
        };
        arm_review(exp, arm, &corpus, owned, settings, &mut rows).map(|r| (r, rows))
    };
    let [baseline_owned, treatment_owned] = owned;
    let (baseline, treatment) = std::thread::scope(|scope| {
        let treatment = crate::threads::scoped(scope, "treatment", || {
            replay(&exp.treatment, treatment_owned)
        });
        let baseline = replay(&exp.baseline, baseline_owned);
        let treatment = treatment
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (baseline, treatment)
    });
    let (baseline, baseline_rows) = baseline?;
    let (treatment, treatment_rows) = treatment?;
    let findings = [baseline_rows, treatment_rows];
    let (delta, pairs) = deltas(exp, &baseline.metrics, &treatment.metrics, settings.threads);
    let runs = match (baseline.runs, treatment.runs) {
        (Some(baseline), Some(treatment)) => Some(PerArm {
            baseline,
            treatment,
        }),
        _ => None,
    };
    Ok(Reviewed {
        section: ReviewSection {
            withheld: None,
            mode: exp.mode,
            arms: PerArm {
                baseline: baseline.metrics,
                treatment: treatment.metrics,
            },
            delta,
        },
        agreement: AgreementSection {
            judges: None,
            reviewers: Some(PerArm {
                baseline: baseline.reviewers,
                treatment: treatment.reviewers,
            }),
            runs,
            repeats: None,
        },
        findings,
        pairs,
    })
}

/// Judge composites by item id, then by the arm label the verdict was filed under.
pub(super) type Composites = HashMap<String, Vec<(String, f64)>>;

pub(super) fn composites(exp: &Experiment, items: &[Item]) -> Composites {
    let mut out: Composites = HashMap::new();
    for i in items {
        if let Some(c) = i.composite(&exp.trust.dimension_weights) {
            out.entry(i.item_id.clone())
                .or_default()
                .push((i.arm.clone(), c));
        }
    }
    out
}

pub(super) struct ArmReplay {
    pub(super) metrics: ArmMetrics,
    pub(super) reviewers: Agreement,
    pub(super) runs: Option<Agreement>,
}

/// What an arm replays: the returns of `reviews.jsonl` (named `name` in messages), the judges'
/// composites, and the precision controls' files.
pub(super) struct Replayed<'a> {
    pub(super) name: &'a str,
    pub(super) selections: &'a [Selection],
    pub(super) composites: &'a Composites,
    pub(super) controls: &'a CorpusControls<'a>,
}

/// One arm's review figures: its returns replayed (`replay::arm`), each (target, run)'s
/// metrics, the finding rows, what was malformed or failed, and the arm's agreement.
pub(super) fn arm_review(
    exp: &Experiment,
    arm: &Arm,
    corpus: &Replayed<'_>,
    owned: Option<Vec<Return>>,
    settings: Settings,
    rows: &mut FindingRows,
) -> Result<ArmReplay, InputError> {
    let Replayed {
        name,
        selections,
        composites,
        controls,
    } = *corpus;
    let scale = arm.review.scale();
    let returns: &[Return] = owned
        .as_deref()
        .unwrap_or_else(|| returns_of(selections, arm));
    if settings.strict {
        if let Some(m) = returns.iter().flat_map(|r| r.malformed.iter()).next() {
            return Err(m.to_error(name));
        }
    }
    // Merging never makes more findings than the returns hold: room for that many rows up
    // front, so the rows are never copied into a larger block as they grow (room not written
    // is never touched, and costs no memory).
    rows.rows
        .reserve(returns.iter().map(|r| r.findings.len()).sum());

    let composite = arm_composite(composites, arm);
    let arm_controls = controls.of_arm(arm);
    // A target a skip rule kept from review counts nothing: not its malformed findings, nor
    // its failed calls.
    let skipped = replay::arm::skipped_targets(&arm_controls);
    let (malformed_reasons, failed_calls) = losses(returns, &skipped);
    let raters = {
        let mut names: Vec<&str> = returns.iter().map(|r| &*r.reviewer).collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    };
    let mut per_target = Vec::new();
    let mut lists = ReviewerLists::default();
    // Judge composites of the findings the validation pass rejected and validated.
    let (mut rejected, mut validated) = (Vec::new(), Vec::new());
    // Each (target, run) becomes its metrics and rows as soon as it is replayed.
    let each = |run: replay::arm::RunReplay| {
        let input = TargetInput {
            target: &run.target,
            run: run.run,
            raw_confidences: &run.raw_confidences,
            malformed: run.malformed,
            failed_reviewers: run.failed_reviewers,
            merged: &run.merged,
            controls: controls.used,
            skipped: run.skipped,
            has_sources: run.has_sources,
            spent: run.spent,
            usage: controls.usage,
        };
        per_target.push(review_metrics::target_metrics(&input, scale, &composite));
        for m in &run.merged {
            let pile = match m.validation {
                Some(Check::Rejected(_)) => &mut rejected,
                Some(Check::Validated) => &mut validated,
                _ => continue,
            };
            pile.extend(review_metrics::finding_composite(m, &composite));
        }
        rows.push_run(
            &run.target,
            run.run,
            run.merged
                .into_iter()
                .map(|m| FindingRow::new(m, &mut lists)),
        );
    };
    // Returns this arm alone reads go as their targets are replayed.
    let (policy, mode) = (&arm.review, exp.mode);
    let replayed = match owned {
        Some(returns) => replay::arm::replay_arm_each(policy, mode, &arm_controls, returns, each),
        None => {
            let returns = returns_of(selections, arm);
            replay::arm::replay_arm_each(policy, mode, &arm_controls, returns, each)
        }
    };
    let mean = |xs: &[f64]| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
    let precision_controls = controls.used.then(|| review_metrics::ControlsFigures {
        skipped_targets: replayed.skipped.targets,
        skipped_calls: replayed.skipped.calls,
        lost_actionable: replayed.skipped.lost_actionable,
        lost_p0_p1: replayed.skipped.lost_p0_p1,
        rejection_reasons: replayed.rejection_reasons,
        rejected_composite: mean(&rejected),
        validated_composite: mean(&validated),
    });

    let units = (&replayed.reviewer_units[..], &replayed.run_units[..]);
    let (reviewers, runs) = arm_agreement(exp, scale, settings, units, raters, &per_target);
    Ok(ArmReplay {
        metrics: ArmMetrics {
            failed_calls,
            controls: precision_controls,
            ..arm_metrics(arm.review.name(), scale, per_target, malformed_reasons)
        },
        reviewers,
        runs,
    })
}

/// What the reviewers of an arm lost, on the targets it reviewed: malformed findings by reason,
/// and the failed calls.
pub(super) fn losses(
    returns: &[Return],
    skipped: &std::collections::HashSet<&str>,
) -> (BTreeMap<String, usize>, Vec<FailedCall>) {
    let reviewed = || returns.iter().filter(|r| !skipped.contains(&*r.target));
    let mut malformed_reasons: BTreeMap<String, usize> = BTreeMap::new();
    for (kind, n, _) in reviewed().flat_map(|r| r.malformed.kinds()) {
        *malformed_reasons.entry(kind.to_string()).or_default() += n;
    }
    let failed_calls = reviewed()
        .filter(|r| r.failed)
        .map(|r| FailedCall {
            target: r.target.to_string(),
            run: r.run,
            reviewer: r.reviewer.to_string(),
            reason: r.reason().map(String::from),
        })
        .collect();
    (malformed_reasons, failed_calls)
}

/// An arm's agreement: among the reviewers who corroborate each other (`raters` of them), and
/// across runs when a target was reviewed twice or more.
pub(super) fn arm_agreement(
    exp: &Experiment,
    scale: Scale,
    settings: Settings,
    (reviewer_rows, run_rows): (&[Vec<f64>], &[Vec<f64>]),
    raters: usize,
    per_target: &[review_metrics::TargetMetrics],
) -> (Agreement, Option<Agreement>) {
    let level = match scale {
        Scale::Anchor => Level::Ordinal,
        Scale::Float => Level::Interval,
    };
    let reviewers = agreement_of(
        reviewer_rows,
        level,
        raters,
        exp,
        settings,
        "no merged finding has two or more reviewers",
    );
    let max_runs = per_target
        .iter()
        .fold(HashMap::<&str, usize>::new(), |mut m, t| {
            *m.entry(t.target.as_str()).or_default() += 1;
            m
        })
        .into_values()
        .max()
        .unwrap_or(0);
    let runs = (max_runs >= 2).then(|| {
        agreement_of(
            run_rows,
            level,
            max_runs,
            exp,
            settings,
            "no reviewer filed the same finding in two runs",
        )
    });
    (reviewers, runs)
}

pub(super) fn agreement_of(
    rows: &[Vec<f64>],
    level: Level,
    raters: usize,
    exp: &Experiment,
    settings: Settings,
    empty: &str,
) -> Agreement {
    let mut units = Units::with_capacity(rows.len(), rows.iter().map(Vec::len).sum());
    for row in rows {
        // Confidences were validated finite when the corpus was read.
        if units.push_unit(row).is_err() {
            continue;
        }
    }
    let plan = Plan {
        method: Method::Units,
        replicates: exp.bootstrap,
        seed: exp.seed,
        threads: settings.threads,
    };
    match crate::stats::alpha::alpha(&units, level) {
        Ok(estimate) => {
            let ci = (exp.bootstrap > 0 && estimate.alpha.is_some())
                .then(|| bootstrap::interval(&units, level, raters, plan).ok())
                .flatten()
                .map(|s| s.ci);
            Agreement {
                alpha: estimate.alpha,
                level,
                ci,
                units: estimate.pairable_units,
                raters,
                undefined_reason: estimate.undefined_reason,
            }
        }
        Err(e) => Agreement {
            alpha: None,
            level,
            ci: None,
            units: 0,
            raters,
            undefined_reason: Some(format!("{empty} ({e})")),
        },
    }
}

/// treatment − baseline for every per-target metric, over the targets both arms reviewed, and
/// each target's values.
pub(super) fn deltas(
    exp: &Experiment,
    b: &ArmMetrics,
    t: &ArmMetrics,
    threads: usize,
) -> (BTreeMap<String, Delta>, Vec<PairRow>) {
    let mut out = BTreeMap::new();
    let mut pairs = Vec::new();
    // Each arm's targets numbered once, and each treatment target's number in the baseline:
    // every metric's means are then paired without a text hashed or copied.
    let (bt, tt) = (&b.per_target, &t.per_target);
    let (in_b, in_t) = (TargetGroups::of(bt), TargetGroups::of(tt));
    let numbers: HashMap<&str, usize> = (0..in_b.len()).map(|g| (in_b.name(bt, g), g)).collect();
    let in_baseline: Vec<Option<usize>> = (0..in_t.len())
        .map(|g| numbers.get(in_t.name(tt, g)).copied())
        .collect();
    for (i, m) in review_metrics::catalogue().filter(|(_, m)| m.delta) {
        let name = m.name;
        let mut base: Vec<Option<f64>> = vec![None; in_b.len()];
        for (g, x) in in_b.means_of(bt, i) {
            base[g] = Some(x);
        }
        let units: Vec<UnitPair> = (in_t.means_of(tt, i).into_iter())
            .filter_map(|(g, y)| {
                let x = base[in_baseline[g]?]?;
                Some(UnitPair {
                    unit: in_t.name(tt, g).to_string(),
                    run: None,
                    baseline: x,
                    treatment: y,
                })
            })
            .collect();
        let Some(paired) = crate::replay::paired(&units, exp.bootstrap, exp.seed, threads) else {
            continue;
        };
        let wilson = (name == "promotion_rate").then(|| PerArm {
            baseline: wilson(b.figure(PROMOTED.sum()), b.figure(MERGED.sum())),
            treatment: wilson(t.figure(PROMOTED.sum()), t.figure(MERGED.sum())),
        });
        // A cost or latency change is read as a share of the baseline's too, and a guard with
        // a percentage margin is tested against its edge.
        let relative = m
            .usage
            .then(|| super::relative(exp, name, &units))
            .flatten();
        let c = Comparison {
            name,
            delta: paired,
            units,
        };
        pairs.extend(rows_of(DeltaTable::Review, &c));
        out.insert(
            name.to_string(),
            Delta {
                paired: c.delta,
                p_adjusted: None,
                wilson,
                mcnemar: None,
                relative,
            },
        );
    }
    (out, pairs)
}
