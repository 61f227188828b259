//! Assembles the one result model, [`Metrics`](crate::model::Metrics) (what `metrics.json`
//! holds), from an experiment
//! and its loaded corpus. Pure: the corpus comes in as values, the model goes out as values;
//! `commands::run` does the reading and writing.

pub mod sweep;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::config::Experiment;
use crate::corpus::queries::{self, Query};
use crate::corpus::reviews::{Return, Selection};
use crate::corpus::sources::Sources;
use crate::corpus::targets::Target;
use crate::corpus::validations::Validation;
use crate::corpus::verdicts::Item;
use crate::error::InputError;
use crate::policy::{Arm, Mode, Scale};
use crate::replay;
use crate::replay::query_metrics::{self, QueryRow};
use crate::replay::review::Check;
use crate::replay::review_metrics::{
    self, arm_metrics, ArmMetrics, FailedCall, Figure, TargetGroups, TargetInput, REVIEW_METRICS,
};
use crate::replay::review_metrics::{MERGED, PROMOTED};
use crate::replay::scores::{self as imported};
use crate::replay::{Comparison, DeltaTable, UnitPair};
use crate::stats::alpha::{Level, Units};
use crate::stats::bootstrap::{self, Method, Plan};
use crate::stats::holm::holm;
use crate::stats::paired::wilson;
use crate::trust::{self, Lift, TrustVerdict};

pub use crate::corpus::Corpus;
use crate::model::*;

/// Computation settings that do not change the numbers' meaning.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub strict: bool,
    pub threads: usize,
}

/// Replays every section the corpus has data for. The returns an arm alone reads are taken out
/// of `corpus` and let go as they are replayed (`take_unshared`); everything else is left.
pub fn analyse(
    exp: &Experiment,
    corpus: &mut Corpus,
    run_id: &str,
    settings: Settings,
) -> Result<Analysis, InputError> {
    let owned = take_unshared(exp, corpus);
    let corpus = &*corpus;
    let verdicts = corpus
        .verdicts
        .as_ref()
        .map_or(&[][..], |(_, v)| v.as_slice());
    let controls = CorpusControls::of(exp, corpus);
    let mut pairs = Vec::new();
    let (mut review, mut agreement, findings) = match &corpus.reviews {
        Some((name, selections)) => {
            let r = review_section(exp, name, selections, owned, verdicts, &controls, settings)?;
            pairs.extend(r.pairs);
            (Some(r.section), Some(r.agreement), r.findings)
        }
        None => (None, None, [Vec::new(), Vec::new()]),
    };
    let (mut queries, query_rows) = match &corpus.queries {
        Some((name, all)) => {
            let (section, rows, units) = replay_queries(exp, name, all, settings)?;
            pairs.extend(units);
            (Some(section), rows)
        }
        None => (None, Vec::new()),
    };
    let mut scored = match &corpus.scores {
        Some((name, lines)) => Some(scores_section(exp, name, lines, settings)?),
        None => None,
    };
    let panel = scored.as_mut().and_then(|s| s.panel.take());
    if let Some(s) = &mut scored {
        pairs.append(&mut s.pairs);
        if let Some(r) = s.repeats.take() {
            agreement
                .get_or_insert_with(AgreementSection::default)
                .repeats = Some(r);
        }
    }
    let mut humans = None;
    let (mut lift_human, mut anchor_calibration_human) = (None, Vec::new());
    let (trust, lift) = match (&corpus.verdicts, panel) {
        (_, Some(judged)) => {
            agreement
                .get_or_insert_with(AgreementSection::default)
                .judges = Some(judged.agreement);
            if !judged.verdict.trustworthy {
                if let Some(s) = &mut scored {
                    withhold_scores(&mut s.section, &judged.verdict.trust_reasons);
                }
            }
            (Some(judged.verdict), Some(judged.lift))
        }
        (Some((name, items)), None) => {
            let labels = corpus
                .labels
                .as_ref()
                .map_or(&[][..], |(_, l)| l.as_slice());
            let filed = judged_items(exp, name, items)?;
            if !labels.is_empty() {
                let selections = corpus
                    .reviews
                    .as_ref()
                    .map_or(&[][..], |(_, s)| s.as_slice());
                if let Some((l, cells)) = human_units(exp, &filed, labels, selections) {
                    (lift_human, anchor_calibration_human) = (Some(l), cells);
                }
            }
            let judged = judge_items(exp, name, &filed, labels, settings)?;
            humans = judged.humans;
            agreement
                .get_or_insert_with(AgreementSection::default)
                .judges = Some(judged.agreement);
            if !judged.verdict.trustworthy {
                if let Some(r) = &mut review {
                    withhold(r, &judged.verdict.trust_reasons);
                }
            }
            (Some(judged.verdict), Some(judged.lift))
        }
        (None, None) => (None, None),
    };
    let (mut scores, mut score_rows) = match scored {
        Some(s) => (Some(s.section), s.rows),
        None => (None, Vec::new()),
    };
    // A withheld judge's per-item means are withheld too.
    if let Some(w) = scores.as_ref().and_then(|s| s.withheld.as_ref()) {
        for r in score_rows
            .iter_mut()
            .filter(|r| w.metrics.contains(&r.scorer))
        {
            r.mean = None;
        }
    }
    let mut lift = lift;
    let (lift_p, lift_human_p) = adjust(
        &exp.family(),
        review.as_mut(),
        queries.as_mut(),
        scores.as_mut(),
        [
            lift.as_ref()
                .and_then(|l| l.paired.as_ref())
                .and_then(|p| p.p_value),
            lift_human.as_ref().and_then(|l| l.p),
        ],
    );
    if let Some(l) = &mut lift {
        l.p_adjusted = lift_p;
    }
    if let Some(l) = &mut lift_human {
        l.p_adjusted = lift_human_p;
    }
    let mut metrics = Metrics {
        experiment: exp.name.clone(),
        run_id: run_id.to_string(),
        review,
        queries,
        scores,
        agreement,
        trust,
        lift,
        humans,
        lift_human,
        anchor_calibration_human,
        incomplete: None,
        inputs: None,
        inputs_suspect: Vec::new(),
        primary: exp.primary.clone(),
        decision: None,
        sequential: None,
    };
    let wanted = exp.decision_metrics();
    if !wanted.is_empty() {
        metrics.decision = Some(decide(&metrics, &wanted));
    }
    // What was withheld has no rows either.
    pairs.retain(|p| {
        metrics
            .deltas(p.table)
            .is_some_and(|d| d.contains_key(p.metric.as_ref()))
    });
    // The lift's items, when it is reported: what `plan --metric lift` resamples.
    if let Some(l) = metrics.lift.as_ref().filter(|l| l.paired.is_some()) {
        pairs.extend(l.pairs.iter().map(|(item, b, t)| PairRow {
            table: DeltaTable::Lift,
            metric: Cow::Borrowed(crate::replay::LIFT.name),
            pair: UnitPair {
                unit: item.clone(),
                run: None,
                baseline: *b,
                treatment: *t,
            },
        }));
    }
    Ok(Analysis {
        metrics,
        findings,
        queries: query_rows,
        pairs,
        scores: score_rows,
    })
}

/// Sets every reported delta's `p_adjusted` (docs/reference.md, "Adjusted p-values"): Holm over
/// `family` (the decision metrics, else the primary ones) as one family, and over each table's
/// other deltas as another. A name of the catalogue joins the family from its own table; any
/// other name is an imported scorer's; `lift` and `lift_human` (their p-values given in that
/// order) join it when named, and their adjusted p-values are returned in that order. A
/// withheld delta is no longer in its table and takes no part.
fn adjust(
    family: &[String],
    review: Option<&mut ReviewSection>,
    queries: Option<&mut QuerySection>,
    scores: Option<&mut ScoresSection>,
    lifts: [Option<f64>; 2],
) -> (Option<f64>, Option<f64>) {
    let in_family = |table: DeltaTable, name: &str| {
        family.iter().any(|f| f == name) && crate::replay::compared_key(name).table == table
    };
    let mut tables: Vec<(&mut BTreeMap<String, Delta>, DeltaTable)> = Vec::new();
    tables.extend(review.map(|r| (&mut r.delta, DeltaTable::Review)));
    tables.extend(queries.map(|q| (&mut q.delta, DeltaTable::Queries)));
    tables.extend(scores.map(|s| (&mut s.delta, DeltaTable::Scores)));
    let mut families: Vec<Vec<&mut Delta>> = vec![Vec::new()];
    for (table, which) in tables {
        let mut others = Vec::new();
        for (name, delta) in table.iter_mut() {
            if in_family(which, name) {
                families[0].push(delta);
            } else {
                others.push(delta);
            }
        }
        families.push(others);
    }
    // The lifts' p-values, each where the experiment names it.
    let named: Vec<(usize, f64)> = crate::replay::LIFTS
        .iter()
        .map(|c| c.name)
        .zip(lifts)
        .enumerate()
        .filter(|(_, (name, _))| family.iter().any(|f| f == name))
        .filter_map(|(i, (_, p))| Some((i, p?)))
        .collect();
    let mut adjusted_lifts = [None, None];
    for (i, family) in families.into_iter().enumerate() {
        let mut ps: Vec<Option<f64>> = family.iter().map(|d| d.paired.p_value).collect();
        let own = ps.len();
        if i == 0 {
            ps.extend(named.iter().map(|&(_, p)| Some(p)));
        }
        let adjusted = holm(&ps);
        for (delta, p) in family.into_iter().zip(&adjusted) {
            delta.p_adjusted = *p;
        }
        if i == 0 {
            for (k, &(which, _)) in named.iter().enumerate() {
                adjusted_lifts[which] = adjusted[own + k];
            }
        }
    }
    (adjusted_lifts[0], adjusted_lifts[1])
}

/// The decision (docs/reference.md, "The decision") over `wanted`, from the deltas as
/// adjusted over the decision's family.
fn decide(m: &Metrics, wanted: &[crate::policy::Wanted]) -> crate::decision::Decision {
    use crate::decision::Words;
    let rows: Vec<_> = wanted
        .iter()
        .map(|w| {
            let name = w.metric.as_str();
            // A catalogue's metric, a lift, or else an imported scorer.
            let c = crate::replay::decidable(name).unwrap_or(crate::replay::SCORER);
            let reading = match c.table {
                DeltaTable::LiftHuman => lift_human_reading(m),
                DeltaTable::Lift => lift_reading(m),
                table => delta_reading(m, table, name),
            };
            let words = Words {
                name: c.words_of(name),
                places: c.places,
                units: c.table.units(),
            };
            (w.clone(), reading, words)
        })
        .collect();
    crate::decision::decide(&rows)
}

/// A delta of one of the run's tables, as the decision reads it.
fn delta_reading(m: &Metrics, table: DeltaTable, name: &str) -> crate::decision::Reading {
    use crate::decision::{Measured, Reading};
    if m.withheld(table).iter().any(|x| x == name) {
        return Reading::Withheld;
    }
    match m.deltas(table).and_then(|d| d.get(name)) {
        Some(d) if d.paired.pairs > 0 => Reading::Measured(Measured::of(&d.paired, d.p_adjusted)),
        _ => Reading::Unmeasured,
    }
}

/// The lift (judge composite), as the decision reads it.
fn lift_reading(m: &Metrics) -> crate::decision::Reading {
    use crate::decision::{Measured, Reading};
    match &m.lift {
        Some(l) if l.withheld => Reading::Withheld,
        Some(Lift {
            paired: Some(p),
            p_adjusted,
            ..
        }) => Reading::Measured(Measured::of(p, *p_adjusted)),
        _ => Reading::Unmeasured,
    }
}

/// The lift in human units (PPI++), as the decision reads it: an estimate with its standard
/// error, tested by the z-test.
fn lift_human_reading(m: &Metrics) -> crate::decision::Reading {
    use crate::decision::{Measured, Reading};
    let Some(l) = &m.lift_human else {
        return Reading::Unmeasured;
    };
    match (l.ppi.value, l.arms.baseline.value, l.arms.treatment.value) {
        (Some(delta), Some(baseline), Some(treatment)) if l.ppi.labelled > 0 => {
            use crate::stats::power::{z_sum, ALPHA, POWER};
            let se = l.ppi.standard_error();
            Reading::Measured(Measured {
                baseline,
                treatment,
                delta,
                ci: l.ppi.ci,
                p_adjusted: l.p_adjusted,
                mde: se.map(|se| se * z_sum(ALPHA, POWER)),
                pairs: l.ppi.labelled,
                test: crate::stats::test::Test::ZTest,
                // The labelled pairs' spread as the z-test sees it.
                sd: se.map(|se| se * (l.ppi.labelled as f64).sqrt()),
                discordant: None,
                min_pairs: crate::decision::MIN_LABELLED_PAIRS,
            })
        }
        _ => Reading::Unmeasured,
    }
}

/// What code review's precision controls read from the corpus, and
/// whether the experiment replays them at all: in code mode, when an arm turns one on or the
/// corpus records validator calls, PR metadata or source snapshots. An experiment that does
/// not writes none of their figures, so its outputs are what they were before the controls.
struct CorpusControls<'a> {
    used: bool,
    calls: &'a [Validation],
    targets: &'a [Target],
    sources: Option<&'a Sources>,
}

/// The returns of each arm (baseline, treatment) that it alone reads, taken out of `corpus`
/// so that its replay lets them go target by target: at a million findings the corpus and the
/// replay's results are then never held whole together. Returns two arms share (an A/A run)
/// stay, and so do all of them when the human labels read the findings after the replay.
fn take_unshared(exp: &Experiment, corpus: &mut Corpus) -> [Option<Vec<Return>>; 2] {
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
fn returns_of<'a>(selections: &'a [Selection], arm: &Arm) -> &'a [Return] {
    let scale = arm.review.scale();
    selections
        .iter()
        .find(|s| s.source == arm.source && s.scale == scale)
        .map_or(&[], |s| s.returns.as_slice())
}

/// A finding's judge composite for `arm`: a verdict may be filed under the recorded arm label
/// or the arm's name.
fn arm_composite<'a>(
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
    fn of_arm<'b>(&'b self, arm: &'b Arm) -> replay::arm::ArmControls<'b> {
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
    fn of(exp: &Experiment, corpus: &'a Corpus) -> Self {
        let calls = corpus.validations.as_ref().map_or(&[][..], |(_, c)| c);
        let targets = corpus.targets.as_ref().map_or(&[][..], |(_, t)| t);
        let sources = corpus.sources.as_ref();
        let recorded =
            corpus.validations.is_some() || corpus.targets.is_some() || sources.is_some();
        let on = exp.arms().iter().any(|a| !a.controls.is_off());
        CorpusControls {
            used: exp.mode == Mode::Code && (on || recorded),
            calls,
            targets,
            sources,
        }
    }
}

/// The review section of the result, with the reviewers' and runs' agreement and the
/// findings table's rows.
struct Reviewed {
    section: ReviewSection,
    agreement: AgreementSection,
    findings: [Vec<FindingRow>; 2],
    pairs: Vec<PairRow>,
}

/// Both arms replayed over their returns (side by side: the arms are independent), their
/// metrics, and the paired deltas. `verdicts` give precision and anchor calibration.
fn review_section(
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
        let mut rows = Vec::new();
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
        let treatment = scope.spawn(|| replay(&exp.treatment, treatment_owned));
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

/// What the judges' panels give: the trust verdict (docs/guides/trust.md), the judges' α, and the lift.
struct Judged {
    verdict: TrustVerdict,
    agreement: Agreement,
    lift: Lift,
    /// With human labels on judged items: the alt-test and the judges' error correlations.
    humans: Option<crate::humans::HumansSection>,
}

/// The trust verdict of items filed under the arms' labels, with the alt-test's fourth check
/// when labels require it, and the humans section the check reads.
fn verdict_of(
    exp: &Experiment,
    name: &str,
    judged: &[Item],
    labels: &[crate::corpus::labels::Label],
) -> Result<(TrustVerdict, Option<crate::humans::HumansSection>), InputError> {
    let mut verdict = trust::verdict(judged, &exp.trust).map_err(|e| InputError::new(name, e))?;
    let humans = (!labels.is_empty())
        .then(|| crate::humans::section(judged, labels, &exp.trust))
        .flatten();
    if !labels.is_empty() {
        if let Some(reason) = crate::humans::check(humans.as_ref(), &exp.trust) {
            verdict.trustworthy = false;
            verdict.trust_reasons.push(reason);
        }
    }
    Ok((verdict, humans))
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
    Ok(Some(verdict_of(exp, name, &filed, labels)?.0))
}

/// The verdict, α and lift of items already filed under the arms' labels. With human `labels`
/// (empty without labels.jsonl), the humans section, and under `[trust] alt_test = "require"`
/// the panel's alt-test as a fourth trust check, before the lift reads the verdict.
fn judge_items(
    exp: &Experiment,
    name: &str,
    judged: &[Item],
    labels: &[crate::corpus::labels::Label],
    settings: Settings,
) -> Result<Judged, InputError> {
    let (verdict, humans) = verdict_of(exp, name, judged, labels)?;
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
        agreement,
        lift,
        humans,
    })
}

/// The lift and anchor calibration in human units (docs/guides/judges-and-humans.md), when the
/// corpus has labels on judged items (`judged`: the verdicts filed under the arms). Each judged
/// finding's value is the confidence its reviewer recorded, on its arm's scale.
fn human_units(
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

/// What imported scores give: the section, its pairs, and the judge panel's verdict when the
/// experiment names one.
struct ScoresReplay {
    section: ScoresSection,
    rows: Vec<imported::ItemRow>,
    pairs: Vec<PairRow>,
    repeats: Option<PerArm<Agreement>>,
    panel: Option<Judged>,
}

/// Both arms' imported scores (each arm reads the lines labelled with its `source`), the delta
/// per scorer, run-to-run agreement over repeats, and the judge panel's verdict.
fn scores_section(
    exp: &Experiment,
    name: &str,
    lines: &[crate::corpus::scores::Score],
    settings: Settings,
) -> Result<ScoresReplay, InputError> {
    let select = |arm: &Arm| -> Vec<&crate::corpus::scores::Score> {
        lines.iter().filter(|s| s.arm.0 == arm.source).collect()
    };
    let (b, t) = (select(&exp.baseline), select(&exp.treatment));
    for arm in exp.arms() {
        crate::corpus::scores::check_arm(name, lines, &arm.name, &arm.source)?;
    }
    let (b_items, t_items) = (imported::by_item(&b), imported::by_item(&t));
    let mut delta = BTreeMap::new();
    let mut pairs = Vec::new();
    for c in imported::compare(
        &b_items,
        &t_items,
        exp.bootstrap,
        exp.seed,
        settings.threads,
    ) {
        let metric: Cow<'static, str> = Cow::Owned(c.scorer.clone());
        pairs.extend(c.units.into_iter().map(|pair| PairRow {
            table: DeltaTable::Scores,
            metric: metric.clone(),
            pair,
        }));
        delta.insert(
            c.scorer,
            Delta {
                paired: c.delta,
                p_adjusted: None,
                wilson: c.wilson.map(|[baseline, treatment]| PerArm {
                    baseline,
                    treatment,
                }),
                mcnemar: c.mcnemar,
            },
        );
    }
    let arms = PerArm {
        baseline: imported::arm(&exp.baseline.source, &b, &b_items),
        treatment: imported::arm(&exp.treatment.source, &t, &t_items),
    };
    let repeats = (arms.baseline.repeats.max(arms.treatment.repeats) >= 2).then(|| {
        let runs_of = |lines: &[&crate::corpus::scores::Score], repeats: u32| {
            agreement_of(
                &imported::repeat_rows(lines),
                Level::Interval,
                repeats as usize,
                exp,
                settings,
                "no item was scored in two repeats",
            )
        };
        PerArm {
            baseline: runs_of(&b, arms.baseline.repeats),
            treatment: runs_of(&t, arms.treatment.repeats),
        }
    });
    let judges = &exp.scores.judges;
    let panel = if judges.is_empty() {
        None
    } else {
        let mut items = imported::panel(&exp.baseline.source, &b_items, judges);
        items.extend(imported::panel(&exp.treatment.source, &t_items, judges));
        Some(judge_items(exp, name, &items, &[], settings)?)
    };
    Ok(ScoresReplay {
        section: ScoresSection {
            arms,
            delta,
            judges: judges.clone(),
            withheld: None,
        },
        rows: {
            let mut rows = imported::item_rows("baseline", &b_items);
            rows.extend(imported::item_rows("treatment", &t_items));
            rows
        },
        pairs,
        repeats,
        panel,
    })
}

/// The scorers' judge panel is not trustworthy: the judge scorers' deltas, means and
/// calibrations are withheld; the other scorers' figures stand.
fn withhold_scores(scores: &mut ScoresSection, reasons: &[String]) {
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
fn withhold(review: &mut ReviewSection, reasons: &[String]) {
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
                t.figures[i] = Figure::Optional(None);
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

/// Replays the queries each arm reads under its confidence model. An arm whose `source` labels
/// no query in the file is an error: a typo must not come out as an empty arm.
fn replay_queries(
    exp: &Experiment,
    name: &str,
    all: &[Query],
    settings: Settings,
) -> Result<(QuerySection, Vec<QueryRow>, Vec<PairRow>), InputError> {
    let select = |arm: &Arm| queries::select(name, all, &arm.name, &arm.source);
    let (b_queries, t_queries) = (select(&exp.baseline)?, select(&exp.treatment)?);
    let plan = Plan {
        method: Method::Units,
        replicates: exp.bootstrap,
        seed: exp.seed,
        threads: settings.threads,
    };
    let replay = |arm: &Arm, queries: &[&Query]| {
        let rows = query_metrics::replay_all(&arm.name, &arm.confidence, queries);
        let metrics = query_metrics::arm_metrics(&arm.confidence, &rows, plan);
        (rows, metrics)
    };
    let ((b_rows, b_metrics), (t_rows, t_metrics)) = std::thread::scope(|scope| {
        let treatment = scope.spawn(|| replay(&exp.treatment, &t_queries));
        let baseline = replay(&exp.baseline, &b_queries);
        let treatment = treatment
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (baseline, treatment)
    });
    let mut delta = BTreeMap::new();
    let mut pairs = Vec::new();
    for c in query_metrics::deltas(&b_rows, &t_rows, plan) {
        pairs.extend(rows_of(DeltaTable::Queries, &c));
        delta.insert(
            c.name.to_string(),
            Delta {
                paired: c.delta,
                p_adjusted: None,
                wilson: None,
                mcnemar: None,
            },
        );
    }
    let mut rows = b_rows;
    rows.extend(t_rows);
    Ok((
        QuerySection {
            arms: PerArm {
                baseline: b_metrics,
                treatment: t_metrics,
            },
            delta,
        },
        rows,
        pairs,
    ))
}

/// The pairs table's rows of one comparison.
fn rows_of(table: DeltaTable, c: &Comparison) -> impl Iterator<Item = PairRow> + '_ {
    c.units.iter().map(move |pair| PairRow {
        table,
        metric: Cow::Borrowed(c.name),
        pair: pair.clone(),
    })
}

/// Judge composites by item id, then by the arm label the verdict was filed under.
type Composites = HashMap<String, Vec<(String, f64)>>;

fn composites(exp: &Experiment, items: &[Item]) -> Composites {
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

struct ArmReplay {
    metrics: ArmMetrics,
    reviewers: Agreement,
    runs: Option<Agreement>,
}

/// What an arm replays: the returns of `reviews.jsonl` (named `name` in messages), the judges'
/// composites, and the precision controls' files.
struct Replayed<'a> {
    name: &'a str,
    selections: &'a [Selection],
    composites: &'a Composites,
    controls: &'a CorpusControls<'a>,
}

/// One arm's review figures: its returns replayed (`replay::arm`), each (target, run)'s
/// metrics, the finding rows, what was malformed or failed, and the arm's agreement.
fn arm_review(
    exp: &Experiment,
    arm: &Arm,
    corpus: &Replayed<'_>,
    owned: Option<Vec<Return>>,
    settings: Settings,
    rows: &mut Vec<FindingRow>,
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
    rows.reserve(returns.iter().map(|r| r.findings.len()).sum());

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
    let arm_name: Arc<str> = Arc::from(arm.name.as_str());
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
        let target = run.target;
        rows.extend(
            run.merged
                .into_iter()
                .map(|m| FindingRow::new(&arm_name, &target, run.run, m)),
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
fn losses(
    returns: &[Return],
    skipped: &std::collections::HashSet<&str>,
) -> (BTreeMap<String, usize>, Vec<FailedCall>) {
    let reviewed = || {
        returns
            .iter()
            .filter(|r| !skipped.contains(r.target.as_str()))
    };
    let mut malformed_reasons: BTreeMap<String, usize> = BTreeMap::new();
    for (kind, n, _) in reviewed().flat_map(|r| r.malformed.kinds()) {
        *malformed_reasons.entry(kind.to_string()).or_default() += n;
    }
    let failed_calls = reviewed()
        .filter(|r| r.failed)
        .map(|r| FailedCall {
            target: r.target.clone(),
            run: r.run,
            reviewer: r.reviewer.to_string(),
            reason: r.reason.clone(),
        })
        .collect();
    (malformed_reasons, failed_calls)
}

/// An arm's agreement: among the reviewers who corroborate each other (`raters` of them), and
/// across runs when a target was reviewed twice or more.
fn arm_agreement(
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

fn agreement_of(
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
fn deltas(
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
            },
        );
    }
    (out, pairs)
}
