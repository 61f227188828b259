//! The judges' part of a run: their verdicts filed by arm and item, the trust verdict and the
//! lift it guards, the judges against human labels, the lift in human units, and what is
//! withheld when the judges are not trusted.

use std::collections::{BTreeMap, HashMap};

use crate::config::Experiment;
use crate::corpus::reviews::Selection;
use crate::corpus::verdicts::Item;
use crate::error::InputError;
use crate::policy::BiasUse;
use crate::replay::review_metrics::{Figure, REVIEW_METRICS};
use crate::stats::bootstrap::{Method, Plan};
use crate::trust::{self, Lift, TrustVerdict};

use super::review::agreement_of;
use super::Settings;
use crate::corpus::Corpus;
use crate::model::*;

/// What the judges' panels give: the trust verdict (docs/guides/trust.md), the judges' α, and the lift.
pub(super) struct Judged {
    pub(super) verdict: TrustVerdict,
    /// The bias audit, unless `[trust] bias = "off"`.
    pub(super) bias: Option<crate::trust::bias::Bias>,
    pub(super) agreement: Agreement,
    pub(super) lift: Lift,
    /// With human labels on judged items: the alt-test and the judges' error correlations.
    pub(super) humans: Option<crate::humans::HumansSection>,
}

/// What [`verdict_of`] gives: the verdict, the humans section its alt-test check reads, and the
/// bias audit its fifth check reads.
pub(super) type Verdict = (
    TrustVerdict,
    Option<crate::humans::HumansSection>,
    Option<crate::trust::bias::Bias>,
);

/// The trust verdict of items filed under the arms' labels, with the alt-test's fourth check
/// when labels require it, the humans section the check reads, and the bias audit's fifth
/// check (`facts`: what it needs of the findings and targets the items judge).
pub(super) fn verdict_of(
    exp: &Experiment,
    name: &str,
    judged: &[Item],
    labels: &[crate::corpus::labels::Label],
    facts: &Facts,
) -> Result<Verdict, InputError> {
    let mut verdict = trust::verdict(judged, &exp.trust).map_err(|e| InputError::new(name, e))?;
    // Each item's arm as the experiment names it, beside the label it was recorded under.
    for s in &mut verdict.per_item_spread {
        s.side = [&exp.baseline, &exp.treatment]
            .into_iter()
            .find(|a| a.source == s.arm || a.name == s.arm)
            .map(|a| a.name.clone());
    }
    let humans = (!labels.is_empty())
        .then(|| crate::humans::section(judged, labels, &exp.trust))
        .flatten();
    if !labels.is_empty() {
        if let Some(reason) = crate::humans::check(humans.as_ref(), &exp.trust) {
            verdict.trustworthy = false;
            verdict.trust_reasons.push(reason);
        }
    }
    let bias = (exp.trust.bias != BiasUse::Off).then(|| {
        crate::trust::bias::audit(&bias_rows(exp, judged, facts), &exp.trust.dimension_weights)
    });
    if let Some(b) = bias.as_ref().filter(|b| b.failed()) {
        if exp.trust.bias == BiasUse::Withhold {
            verdict.trustworthy = false;
            verdict
                .trust_reasons
                .push(format!("(5) bias: {}", b.failures().join("; ")));
        }
    }
    Ok((verdict, humans, bias))
}

/// What the bias audit needs of the findings and targets the verdicts judge, gathered before
/// the replay lets the returns go: per item label and id, a finding's target, characters,
/// fingerprint (numbered across both arms) and reviewer's model; per label and target, the
/// characters of all its findings. Only what a verdict names is kept.
#[derive(Default)]
pub struct Facts {
    findings: HashMap<(String, String), Known>,
    targets: HashMap<(String, String), f64>,
}

struct Known {
    target: String,
    chars: f64,
    fingerprint: u32,
    model: Option<String>,
}

impl Facts {
    /// The facts of the corpus's judged findings and targets; none without verdicts or with
    /// `[trust] bias = "off"`.
    pub fn of(exp: &Experiment, corpus: &Corpus) -> Facts {
        use crate::replay::review::Fingerprints;
        let mut facts = Facts::default();
        let (Some((_, items)), Some((_, selections))) = (&corpus.verdicts, &corpus.reviews) else {
            return facts;
        };
        if exp.trust.bias == BiasUse::Off {
            return facts;
        }
        let named: std::collections::HashSet<(&str, &str)> = items
            .iter()
            .map(|i| (i.arm.as_str(), i.item_id.as_str()))
            .collect();
        let mut prints = Fingerprints::default();
        for arm in [&exp.baseline, &exp.treatment] {
            let Some(sel) = selections.iter().find(|s| s.source == arm.source) else {
                continue;
            };
            for label in exp.item_labels(arm) {
                for r in &sel.returns {
                    let target_named = named.contains(&(label, &*r.target));
                    for f in &r.findings {
                        let chars = f64::from(f.claim.text_chars);
                        if target_named {
                            *facts
                                .targets
                                .entry((label.to_string(), r.target.to_string()))
                                .or_default() += chars;
                        }
                        let Some(id) = f.id.as_deref().filter(|id| named.contains(&(label, id)))
                        else {
                            continue;
                        };
                        facts.findings.insert(
                            (label.to_string(), id.to_string()),
                            Known {
                                target: r.target.to_string(),
                                chars,
                                fingerprint: prints.of_finding(f),
                                model: r.model().map(|m| m.to_string()),
                            },
                        );
                    }
                }
            }
        }
        facts
    }
}

/// The judged items as the bias audit reads them: a finding with its facts; a target's item
/// with the characters of its findings; any other item on its own.
fn bias_rows<'a>(
    exp: &Experiment,
    judged: &'a [Item],
    facts: &'a Facts,
) -> Vec<crate::trust::bias::Judged<'a>> {
    let treatment = exp.item_labels(&exp.treatment);
    judged
        .iter()
        .map(|item| {
            let key = (item.arm.clone(), item.item_id.clone());
            let known = facts.findings.get(&key);
            crate::trust::bias::Judged {
                item,
                treatment: treatment.contains(&item.arm.as_str()),
                target: known.map_or(item.item_id.as_str(), |k| k.target.as_str()),
                chars: known
                    .map(|k| k.chars)
                    .or_else(|| facts.targets.get(&key).copied()),
                fingerprint: known.map(|k| k.fingerprint),
                reviewer_model: known.and_then(|k| k.model.as_deref()),
            }
        })
        .collect()
}

/// The trust verdict `run` gives the judge panel of a review corpus (`verdicts.jsonl`), as it
/// gives it: `None` without verdicts. A sweep honours it at every grid point (the panel's
/// agreement does not depend on the policy replayed).
pub fn panel_verdict(
    exp: &Experiment,
    corpus: &Corpus,
) -> Result<Option<TrustVerdict>, InputError> {
    let Some((name, items)) = &corpus.verdicts else {
        return Ok(None);
    };
    let labels = corpus
        .labels
        .as_ref()
        .map_or(&[][..], |(_, l)| l.as_slice());
    let filed = judged_items(exp, name, items)?;
    let facts = Facts::of(exp, corpus);
    Ok(Some(verdict_of(exp, name, &filed, labels, &facts)?.0))
}

/// The verdict, α and lift of items already filed under the arms' labels. With human `labels`
/// (empty without labels.jsonl), the humans section, and under `[trust] alt_test = "require"`
/// the panel's alt-test as a fourth trust check, before the lift reads the verdict.
pub(super) fn judge_items(
    exp: &Experiment,
    name: &str,
    judged: &[Item],
    labels: &[crate::corpus::labels::Label],
    facts: &Facts,
    settings: Settings,
) -> Result<Judged, InputError> {
    let (verdict, humans, bias) = verdict_of(exp, name, judged, labels, facts)?;
    let agreement = agreement_of(
        &trust::irr_rows(judged),
        exp.trust.level,
        verdict.judges,
        exp,
        settings,
        "no item has two surviving judges",
    );
    let (b, t) = (
        exp.item_labels(&exp.baseline),
        exp.item_labels(&exp.treatment),
    );
    let lift = trust::lift(
        judged,
        &b,
        &t,
        &exp.trust.dimension_weights,
        &verdict,
        Plan {
            method: Method::Units,
            replicates: exp.bootstrap,
            seed: exp.seed,
            threads: settings.threads,
        },
    );
    Ok(Judged {
        verdict,
        bias,
        agreement,
        lift,
        humans,
    })
}

/// The lift and anchor calibration in human units (docs/guides/judges-and-humans.md), when the
/// corpus has labels on judged items (`judged`: the verdicts filed under the arms). Each judged
/// finding's value is the confidence its reviewer recorded, on its arm's scale.
pub(super) fn human_units(
    exp: &Experiment,
    judged: &[Item],
    labels: &[crate::corpus::labels::Label],
    selections: &[Selection],
) -> Option<(
    crate::human_units::LiftHuman,
    Vec<crate::human_units::CalibrationHumanCell>,
)> {
    use crate::human_units::{estimates, ArmLabels};
    use crate::replay::review_metrics::value_label;
    let arms: Vec<ArmLabels> = [&exp.baseline, &exp.treatment]
        .into_iter()
        .map(|arm| (arm, exp.item_labels(arm)))
        .map(|(arm, labels)| {
            let mut confidence = HashMap::new();
            for sel in selections.iter().filter(|s| s.source == arm.source) {
                for f in sel.returns.iter().flat_map(|r| &r.findings) {
                    if let Some(id) = &f.id {
                        confidence.insert(&**id, value_label(f.confidence, sel.scale, 0.1));
                    }
                }
            }
            ArmLabels {
                name: &arm.name,
                labels,
                confidence,
            }
        })
        .collect();
    estimates(
        judged,
        labels,
        &exp.trust.dimension_weights,
        [&arms[0], &arms[1]],
    )
}

/// The verdicts filed under either arm's recorded label (`source`) or name. A line under any
/// other label is refused with the labels the file holds: a typo in one arm's label
/// would otherwise take half the panel out of the trust verdict without a word.
pub fn judged_items(exp: &Experiment, name: &str, items: &[Item]) -> Result<Vec<Item>, InputError> {
    let ours = |label: &str| exp.reads(label, true) || exp.ignores(label);
    // Each foreign label: its first line and how many lines carry it.
    let mut foreign: BTreeMap<&str, (u64, usize)> = BTreeMap::new();
    for i in items.iter().filter(|i| !ours(&i.arm)) {
        foreign.entry(&i.arm).or_insert((i.line, 0)).1 += 1;
    }
    if let Some(first) = foreign.values().map(|(line, _)| *line).min() {
        let lines: usize = foreign.values().map(|(_, n)| n).sum();
        let which: Vec<String> = foreign
            .iter()
            .map(|(label, (line, n))| {
                format!(
                    "`{}` ({n} {}, first on line {line})",
                    crate::text::terminal(label),
                    if *n == 1 { "line" } else { "lines" }
                )
            })
            .collect();
        let labels = crate::corpus::label_list(items.iter().map(|i| i.arm.as_str()));
        return Err(InputError::new(
            name,
            format!(
                "{lines} of {} verdict lines are filed under a label neither arm reads: {}; their items would silently leave the trust verdict and the lift",
                items.len(),
                which.join(", ")
            ),
        )
        .at_line(first)
        .field("field `arm`")
        .hint(format!(
            "the file's labels: {labels}; arm `baseline` reads `{}` and arm `treatment` reads `{}`: correct the lines' `arm`, or the arm's `source`",
            exp.baseline.source, exp.treatment.source
        )));
    }
    // Lines under a label of another recorded arm are counted by the input ledger, not judged.
    Ok(items
        .iter()
        .filter(|i| !exp.ignores(&i.arm))
        .cloned()
        .collect())
}

/// What the judges' calls cost, over both arms: the cost of evaluating, never an arm's
/// (docs/guides/ab-rubric-change.md, "Cost and latency").
pub(super) fn evaluation(
    exp: &Experiment,
    verdicts: &[Item],
) -> Option<crate::corpus::usage::Evaluation> {
    crate::corpus::usage::Evaluation::of(
        verdicts
            .iter()
            .filter(|i| !exp.ignores(&i.arm))
            .flat_map(|i| i.verdicts.iter().map(|v| v.usage)),
    )
}

/// The scorers' judge panel is not trustworthy: the judge scorers' deltas, means and
/// calibrations are withheld; the other scorers' figures stand.
pub(super) fn withhold_scores(scores: &mut ScoresSection, reasons: &[String]) {
    for judge in &scores.judges {
        scores.delta.remove(judge);
        for arm in [&mut scores.arms.baseline, &mut scores.arms.treatment] {
            if let Some(f) = arm.scorers.get_mut(judge) {
                f.mean = None;
                f.calibration = None;
            }
        }
    }
    scores.withheld = Some(Withheld {
        metrics: scores.judges.clone(),
        reasons: reasons.to_vec(),
    });
}

/// The judges are not trustworthy: every judge-derived review figure is withheld.
pub(super) fn withhold(review: &mut ReviewSection, reasons: &[String]) {
    let judged: Vec<usize> = (0..REVIEW_METRICS.len())
        .filter(|&i| REVIEW_METRICS[i].judged)
        .collect();
    let controls = review.arms.baseline.controls.is_some();
    for arm in [&mut review.arms.baseline, &mut review.arms.treatment] {
        arm.precision = None;
        arm.anchor_calibration.clear();
        if let Some(c) = &mut arm.controls {
            c.rejected_composite = None;
            c.validated_composite = None;
        }
        for t in &mut arm.per_target {
            for &i in &judged {
                t.figures[i] = Figure::optional(None);
            }
            t.calibration_sums.clear();
        }
    }
    for &i in &judged {
        review.delta.remove(REVIEW_METRICS[i].name);
    }
    review.withheld = Some(Withheld {
        metrics: judged
            .iter()
            .map(|&i| REVIEW_METRICS[i].name.to_string())
            .chain(["anchor_calibration".to_string()])
            .chain(
                controls
                    .then_some(["rejected_composite", "validated_composite"])
                    .into_iter()
                    .flatten()
                    .map(str::to_string),
            )
            .collect(),
        reasons: reasons.to_vec(),
    });
}
