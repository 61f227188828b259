//! One grid point of a sweep replayed into units (docs/guides/threshold-sweep.md): the arm's
//! policy as the point sets it, replayed over the corpus read once, each target (query) summed
//! into the vector layout of `sweep::review` (`sweep::queries`). `sweep` turns them into figures.

use std::collections::BTreeMap;

use super::{arm_composite, composites, returns_of, Composites, CorpusControls};
use crate::config::Experiment;
use crate::corpus::queries;
use crate::corpus::Corpus;
use crate::error::InputError;
use crate::policy::Arm;
use crate::replay::{self, query_metrics, review::Check, review::Tier, review_metrics};
use crate::stats::calibration::bin_index;
use crate::sweep::{self, Side};

/// One grid point's units, in `ids` order (targets or queries, ascending).
#[derive(Clone, Debug, PartialEq)]
pub struct Units {
    pub ids: Vec<String>,
    pub vectors: Vec<Vec<f64>>,
}

/// What the corpus lets a sweep replay: reviewer returns, else query traces.
pub fn side_of(corpus: &Corpus) -> Option<Side> {
    if corpus.reviews.is_some() {
        Some(Side::Review)
    } else if corpus.queries.is_some() {
        Some(Side::Queries)
    } else {
        None
    }
}

/// What every grid point of a sweep replays from, prepared once: the experiment, the corpus,
/// its judge composites and its precision controls. A merged finding is *confirmed* when its
/// judge composite is at least `confirm_at`.
pub struct Replayer<'a> {
    exp: &'a Experiment,
    corpus: &'a Corpus,
    composites: Composites,
    controls: CorpusControls<'a>,
    confirm_at: f64,
}

impl<'a> Replayer<'a> {
    pub fn new(exp: &'a Experiment, corpus: &'a Corpus, confirm_at: f64) -> Self {
        let verdicts = corpus.verdicts.as_ref().map_or(&[][..], |(_, v)| v);
        Replayer {
            exp,
            corpus,
            composites: composites(exp, verdicts),
            controls: CorpusControls::of(exp, corpus),
            confirm_at,
        }
    }

    /// `arm` (as one grid point sets it) replayed over the corpus into units.
    pub fn units(&self, arm: &Arm) -> Result<Units, InputError> {
        match side_of(self.corpus) {
            Some(Side::Review) => Ok(self.review_units(arm)),
            Some(Side::Queries) => query_units(self.corpus, arm),
            None => Ok(Units {
                ids: Vec::new(),
                vectors: Vec::new(),
            }),
        }
    }

    /// Per target: each figure of `sweep::review`, a mean over the target's runs.
    fn review_units(&self, arm: &Arm) -> Units {
        let (exp, confirm_at) = (self.exp, self.confirm_at);
        let selections = self.corpus.reviews.as_ref().map_or(&[][..], |(_, s)| s);
        let composite = arm_composite(&self.composites, arm);
        let returns = returns_of(selections, arm);
        let replayed =
            replay::arm::replay_arm(&arm.review, exp.mode, &self.controls.of_arm(arm), returns);
        let mut by_target: BTreeMap<&str, (Vec<f64>, f64)> = BTreeMap::new();
        for run in &replayed.runs {
            let mut v = vec![0.0; sweep::review::LEN];
            for m in &run.merged {
                let c = review_metrics::finding_composite(m, &composite);
                let actionable = m.tier == Tier::Actionable;
                let mut add = |at: usize, x: f64| v[at] += x;
                match m.tier {
                    Tier::Actionable => add(sweep::review::ACTIONABLE, 1.0),
                    Tier::Fyi => add(sweep::review::FYI, 1.0),
                    Tier::Dropped => add(sweep::review::DROPPED, 1.0),
                    _ => {}
                }
                if matches!(m.tier, Tier::Actionable | Tier::Fyi) {
                    add(sweep::review::SURFACED, 1.0);
                }
                if let (true, Some(c)) = (actionable, c) {
                    add(sweep::review::JUDGED_ACTIONABLE, 1.0);
                    add(sweep::review::COMPOSITE_SUM, c);
                }
                if c.is_some_and(|c| c >= confirm_at) {
                    add(sweep::review::CONFIRMED, 1.0);
                    if actionable {
                        add(sweep::review::CONFIRMED_ACTIONABLE, 1.0);
                    }
                }
                if matches!(m.validation, Some(Check::Rejected(_))) {
                    add(sweep::review::REJECTED, 1.0);
                }
            }
            let entry = by_target
                .entry(run.target)
                .or_insert_with(|| (vec![0.0; sweep::review::LEN], 0.0));
            for (acc, x) in entry.0.iter_mut().zip(&v) {
                *acc += x;
            }
            entry.1 += 1.0;
        }
        let (ids, vectors) = by_target
            .into_iter()
            .map(|(t, (sum, runs))| (t.to_string(), sum.into_iter().map(|x| x / runs).collect()))
            .unzip();
        Units { ids, vectors }
    }
}

/// Per query: each figure of `sweep::queries`, summed over the query's runs.
fn query_units(corpus: &Corpus, arm: &Arm) -> Result<Units, InputError> {
    let Some((name, all)) = &corpus.queries else {
        return Ok(Units {
            ids: Vec::new(),
            vectors: Vec::new(),
        });
    };
    let selected = queries::select(name, all, &arm.name, &arm.source)?;
    let rows = query_metrics::replay_all(&arm.name, &arm.confidence, &selected);
    // A query's runs summed in one vector; the queries in id order at the end.
    let mut at: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(rows.len());
    let mut sums: Vec<(&str, Vec<f64>)> = Vec::new();
    use sweep::queries as q;
    for r in &rows {
        let i = *at.entry(r.query_id.as_str()).or_insert_with(|| {
            sums.push((r.query_id.as_str(), vec![0.0; q::LEN]));
            sums.len() - 1
        });
        let v = &mut sums[i].1;
        let one = |b: bool| f64::from(u8::from(b));
        let p = r.outcome.confidence;
        v[q::N] += 1.0;
        v[q::FIRED] += one(r.outcome.fired);
        v[q::UNNECESSARY] += one(r.unnecessary());
        v[q::FIRST_PASS_LABELLED] += one(r.first_pass_correct.is_some());
        v[q::FIRST_PASS_RIGHT] += one(r.first_pass_correct == Some(true));
        v[q::CONFIDENCE_SUM] += p;
        if let Some(right) = r.final_correct {
            v[q::LABELLED] += 1.0;
            v[q::RIGHT] += one(right);
            let at = q::BIN + 3 * bin_index(p, sweep::BINS);
            v[at] += 1.0;
            v[at + 1] += p;
            v[at + 2] += one(right);
        }
    }
    sums.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let (ids, vectors) = sums.into_iter().map(|(id, v)| (id.to_string(), v)).unzip();
    Ok(Units { ids, vectors })
}
