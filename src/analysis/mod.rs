//! Assembles the one result model, [`Metrics`](crate::model::Metrics) (what `metrics.json`
//! holds), from an experiment
//! and its loaded corpus. Pure: the corpus comes in as values, the model goes out as values;
//! `commands::run` does the reading and writing.

mod decide;
mod judged;
mod review;
pub mod sweep;

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::config::Experiment;
use crate::corpus::queries::{self, Query};
use crate::error::InputError;
use crate::policy::Arm;
use crate::replay::query_metrics::{self, QueryRow};
use crate::replay::scores::{self as imported};
use crate::replay::{Comparison, DeltaTable, UnitPair};
use crate::stats::alpha::Level;
use crate::stats::bootstrap::{Method, Plan};

pub use crate::corpus::Corpus;
use crate::model::*;

use decide::adjust;
pub use decide::decide;
pub use judged::panel_verdict;
use judged::{human_units, judge_items, judged_items, withhold, withhold_scores, Judged};
use review::agreement_of;
use review::{review_section, take_unshared, CorpusControls};

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
    // What the bias audit needs of the judged findings, before their returns are let go.
    let facts = judged::Facts::of(exp, corpus);
    let owned = take_unshared(exp, corpus);
    let corpus = &*corpus;
    let verdicts = corpus
        .verdicts
        .as_ref()
        .map_or(&[][..], |(_, v)| v.as_slice());
    let controls = CorpusControls::of(exp, corpus, &owned);
    let mut pairs = Vec::new();
    let (mut review, mut agreement, findings) = match &corpus.reviews {
        Some((name, selections)) => {
            let r = review_section(exp, name, selections, owned, verdicts, &controls, settings)?;
            pairs.extend(r.pairs);
            (Some(r.section), Some(r.agreement), r.findings)
        }
        None => (None, None, Default::default()),
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
    let evaluation = judged::evaluation(exp, verdicts);
    let JudgesFigures {
        trust,
        bias,
        lift,
        humans,
        mut lift_human,
        anchor_calibration_human,
    } = judges_figures(
        exp,
        corpus,
        &facts,
        panel,
        Withholding {
            review: &mut review,
            scored: &mut scored,
            agreement: &mut agreement,
        },
        settings,
    )?;
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
        bias,
        evaluation,
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
        metrics.decision = Some(decide(&metrics, &wanted, &BTreeMap::new()));
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

/// What the judges make of a run: the trust verdict and the lift it guards, the judges against
/// human labels, and the lift and anchor calibration in human units.
struct JudgesFigures {
    trust: Option<crate::trust::TrustVerdict>,
    bias: Option<crate::trust::bias::Bias>,
    lift: Option<crate::trust::Lift>,
    humans: Option<crate::humans::HumansSection>,
    lift_human: Option<crate::human_units::LiftHuman>,
    anchor_calibration_human: Vec<crate::human_units::CalibrationHumanCell>,
}

/// What distrusted judges withhold figures from, and where their agreement is written.
struct Withholding<'a> {
    review: &'a mut Option<ReviewSection>,
    scored: &'a mut Option<ScoresReplay>,
    agreement: &'a mut Option<AgreementSection>,
}

/// The judges' figures, from an imported panel of scorers or from the corpus's verdicts (with
/// its human labels); what they withhold when they are not trusted is withheld in `w`.
fn judges_figures(
    exp: &Experiment,
    corpus: &Corpus,
    facts: &judged::Facts,
    panel: Option<Judged>,
    w: Withholding<'_>,
    settings: Settings,
) -> Result<JudgesFigures, InputError> {
    let mut out = JudgesFigures {
        trust: None,
        bias: None,
        lift: None,
        humans: None,
        lift_human: None,
        anchor_calibration_human: Vec::new(),
    };
    let judged = match (&corpus.verdicts, panel) {
        (_, Some(judged)) => {
            if !judged.verdict.trustworthy {
                if let Some(s) = w.scored.as_mut() {
                    withhold_scores(&mut s.section, &judged.verdict.trust_reasons);
                }
            }
            judged
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
                    (out.lift_human, out.anchor_calibration_human) = (Some(l), cells);
                }
            }
            let mut judged = judge_items(exp, name, &filed, labels, facts, settings)?;
            out.humans = judged.humans.take();
            if !judged.verdict.trustworthy {
                if let Some(r) = w.review.as_mut() {
                    withhold(r, &judged.verdict.trust_reasons);
                }
            }
            judged
        }
        (None, None) => return Ok(out),
    };
    w.agreement
        .get_or_insert_with(AgreementSection::default)
        .judges = Some(judged.agreement);
    out.trust = Some(judged.verdict);
    out.lift = Some(judged.lift);
    out.bias = judged.bias;
    Ok(out)
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
                relative: None,
            },
        );
    }
    // What the samples spent, where both arms' logs say: read as a share of the baseline's too.
    {
        use crate::replay::usage;
        let (b_spent, t_spent) = (imported::spending(&b), imported::spending(&t));
        let b_view: Vec<usage::Spending<'_>> = b_spent
            .iter()
            .map(|(u, r, s)| (u.as_str(), *r, *s))
            .collect();
        let t_view: Vec<usage::Spending<'_>> = t_spent
            .iter()
            .map(|(u, r, s)| (u.as_str(), *r, *s))
            .collect();
        for (u, units) in usage::pairs::<usage::Items>(&b_view, &t_view) {
            let Some(paired) =
                crate::replay::paired(&units, exp.bootstrap, exp.seed, settings.threads)
            else {
                continue;
            };
            let metric: Cow<'static, str> = Cow::Borrowed(u.name);
            let relative = relative(exp, u.name, &units);
            pairs.extend(units.into_iter().map(|pair| PairRow {
                table: DeltaTable::Scores,
                metric: metric.clone(),
                pair,
            }));
            delta.insert(
                u.name.to_string(),
                Delta {
                    paired,
                    p_adjusted: None,
                    wilson: None,
                    mcnemar: None,
                    relative,
                },
            );
        }
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
        Some(judge_items(
            exp,
            name,
            &items,
            &[],
            &judged::Facts::default(),
            settings,
        )?)
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
        let treatment =
            crate::threads::scoped(scope, "treatment", || replay(&exp.treatment, &t_queries));
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
                relative: None,
            },
        );
    }
    // What the queries spent, where both arms' traces say: read as a share of the baseline's
    // too.
    use crate::replay::usage;
    let b_spent: Vec<usage::Spending<'_>> = b_rows.iter().map(|r| r.spending()).collect();
    let t_spent: Vec<usage::Spending<'_>> = t_rows.iter().map(|r| r.spending()).collect();
    for (u, units) in usage::pairs::<usage::Queries>(&b_spent, &t_spent) {
        let Some(paired) = crate::replay::paired(&units, exp.bootstrap, exp.seed, settings.threads)
        else {
            continue;
        };
        let c = Comparison {
            name: u.name,
            delta: paired,
            units,
        };
        pairs.extend(rows_of(DeltaTable::Queries, &c));
        delta.insert(
            u.name.to_string(),
            Delta {
                relative: relative(exp, u.name, &c.units),
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

/// A cost or latency delta read as a share of the baseline's (treatment ÷ baseline − 1 of the
/// paired means, Fieller's interval), tested against the edge of a guard on `name` whose margin
/// is a percentage.
fn relative(exp: &Experiment, name: &str, units: &[UnitPair]) -> Option<crate::model::Relative> {
    let edge = exp
        .decision_metrics()
        .into_iter()
        .find(|w| w.metric == name && w.relative)
        .and_then(|w| Some(-w.margin? * w.want.good_sign()));
    let (b, t): (Vec<f64>, Vec<f64>) = units.iter().map(|u| (u.baseline, u.treatment)).unzip();
    crate::model::Relative::of(&b, &t, edge)
}

/// The pairs table's rows of one comparison.
pub(super) fn rows_of(table: DeltaTable, c: &Comparison) -> impl Iterator<Item = PairRow> + '_ {
    c.units.iter().map(move |pair| PairRow {
        table,
        metric: Cow::Borrowed(c.name),
        pair: pair.clone(),
    })
}
