//! One grid point of a sweep replayed into units (docs/guides/threshold-sweep.md): the arm's
//! policy as the point sets it, replayed over the corpus read once, each target (query) summed
//! into the vector layout of `sweep::review` (`sweep::queries`). `sweep` turns them into figures.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::review::{arm_composite, composites, returns_of, Composites, CorpusControls};
use crate::config::Experiment;
use crate::corpus::queries::{self, Query};
use crate::corpus::Corpus;
use crate::error::InputError;
use crate::policy::{Arm, ConfidencePolicy};
use crate::replay::query::{self, Scored};
use crate::replay::{self, query_metrics, review, review::Check, review::Tier, review_metrics};
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
    /// Whether any return records what its call cost: a skipped target then costs 0, rather
    /// than being unknown.
    costed: bool,
    /// Query traces scored once per arm (points that vary only gates share the scoring).
    scored: PerArm<ScoredQueries<'a>>,
    /// Reviewer returns merged once per arm (points that vary only gates share the merge).
    merged: PerArm<MergedArm>,
}

/// What a sweep makes of an arm once and keeps for every point that can reuse it: the first
/// made of each arm (by its name and source) is kept.
struct PerArm<T>(Mutex<Vec<(String, String, Arc<T>)>>);

impl<T> PerArm<T> {
    fn new() -> Self {
        PerArm(Mutex::new(Vec::new()))
    }

    /// The kept one of `arm` that `fits`, else what `make(keep)` makes, kept when the arm has
    /// none yet (`keep` says whether it will be).
    fn get<E>(
        &self,
        arm: &Arm,
        fits: impl Fn(&T) -> bool,
        make: impl FnOnce(bool) -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        let same = |(name, source, _): &(String, String, Arc<T>)| {
            *name == arm.name && *source == arm.source
        };
        let keep = {
            let cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, _, t)) = cache.iter().find(|c| same(c) && fits(&c.2)) {
                return Ok(Arc::clone(t));
            }
            !cache.iter().any(same)
        };
        let made = Arc::new(make(keep)?);
        if keep {
            let mut cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if !cache.iter().any(same) {
                let key = (arm.name.clone(), arm.source.clone());
                cache.push((key.0, key.1, Arc::clone(&made)));
            }
        }
        Ok(made)
    }
}

/// An arm's (target, run)s merged before the gate: what every grid point whose policy merges
/// alike ([`crate::policy::ReviewPolicy::merging`]) routes again.
struct MergedArm {
    merging: crate::policy::Merging,
    controls: crate::policy::Controls,
    runs: Vec<replay::arm::RunReplay>,
}

/// An arm's queries as its policy scores them before any gate: what every grid point that
/// varies only the arm's thresholds or bands replays from.
struct ScoredQueries<'a> {
    scoring: ConfidencePolicy,
    queries: Vec<&'a Query>,
    scored: Vec<Scored>,
    /// Per query line, the index of its query id in `ids`.
    unit_of: Vec<usize>,
    /// The query ids, ascending.
    ids: Vec<String>,
}

/// Whether any return of the corpus records what its call cost: a sweep then carries
/// `cost_usd` at every point. Query traces record a query's cost whole, not per phase, so the
/// cost a gate saves cannot be replayed: a query sweep carries none.
pub fn records_cost(corpus: &Corpus) -> bool {
    corpus.reviews.as_ref().is_some_and(|(_, s)| {
        s.iter()
            .flat_map(|s| s.returns.iter())
            .any(|r| r.spent().is_some_and(|s| s.cost_usd.is_some()))
    })
}

impl<'a> Replayer<'a> {
    /// Whether the corpus records what reviewer calls cost.
    pub fn costed(&self) -> bool {
        self.costed
    }

    pub fn new(exp: &'a Experiment, corpus: &'a Corpus, confirm_at: f64) -> Self {
        let verdicts = corpus.verdicts.as_ref().map_or(&[][..], |(_, v)| v);
        Replayer {
            exp,
            corpus,
            composites: composites(exp, verdicts),
            controls: CorpusControls::of(exp, corpus, &[None, None]),
            confirm_at,
            costed: records_cost(corpus),
            scored: PerArm::new(),
            merged: PerArm::new(),
        }
    }

    /// `arm` (as one grid point sets it) replayed over the corpus into units.
    pub fn units(&self, arm: &Arm) -> Result<Units, InputError> {
        match side_of(self.corpus) {
            Some(Side::Review) => Ok(self.review_units(arm)),
            Some(Side::Queries) => self.query_units(arm),
            None => Ok(Units {
                ids: Vec::new(),
                vectors: Vec::new(),
            }),
        }
    }

    /// `arm`'s returns merged before the gate, from the cache when an earlier point merged
    /// them alike. The cache keeps one merge per arm.
    fn merged_arm(&self, arm: &Arm) -> Arc<MergedArm> {
        let merging = arm.review.merging();
        let fits = |m: &MergedArm| m.merging == merging && m.controls == arm.controls;
        let merged = self.merged.get(arm, fits, |_| {
            let selections = self.corpus.reviews.as_ref().map_or(&[][..], |(_, s)| s);
            let returns = returns_of(selections, arm);
            let controls = self.controls.of_arm(arm);
            let runs = replay::arm::merge_arm(&arm.review, self.exp.mode, &controls, returns);
            Ok::<_, std::convert::Infallible>(MergedArm {
                merging,
                controls: arm.controls.clone(),
                runs,
            })
        });
        let Ok(merged) = merged;
        merged
    }

    /// Per target: each figure of `sweep::review`, a mean over the target's runs. The returns
    /// are merged once and routed at each point, unless a validation pass follows the gate (it
    /// reads the routed findings in its budget order): then each point replays them whole.
    fn review_units(&self, arm: &Arm) -> Units {
        let mode = self.exp.mode;
        if review::validates(&arm.review, mode, &arm.controls) {
            return self.review_units_whole(arm);
        }
        let merged = self.merged_arm(arm);
        let tier = |m: &review::Merged| review::routing(m, &arm.review, mode, &arm.controls).tier;
        self.review_vectors(arm, &merged.runs, |m| (tier(m), None))
    }

    /// Per target, as [`Self::units`] gives them, with `arm`'s returns replayed whole (merged
    /// and routed) rather than routed again from a merge an earlier point made: what a point
    /// whose validation pass follows the gate replays, and what the merge's reuse is checked
    /// against (tests/sweep.rs).
    pub fn review_units_whole(&self, arm: &Arm) -> Units {
        let selections = self.corpus.reviews.as_ref().map_or(&[][..], |(_, s)| s);
        let returns = returns_of(selections, arm);
        let controls = self.controls.of_arm(arm);
        let replayed = replay::arm::replay_arm(&arm.review, self.exp.mode, &controls, returns);
        self.review_vectors(arm, &replayed.runs, |m| (m.tier, m.validation.as_ref()))
    }

    /// [`Self::review_units`] of the replayed `runs`, each merged finding's tier and
    /// validation read by `routed`.
    fn review_vectors<'r>(
        &self,
        arm: &Arm,
        runs: &'r [replay::arm::RunReplay],
        routed: impl Fn(&'r review::Merged) -> (Tier, Option<&'r Check>),
    ) -> Units {
        let confirm_at = self.confirm_at;
        let composite = arm_composite(&self.composites, arm);
        let mut by_target: BTreeMap<&str, (Vec<f64>, f64)> = BTreeMap::new();
        for run in runs {
            let mut v = vec![0.0; sweep::review::LEN];
            for m in &run.merged {
                let (tier, validation) = routed(m);
                let c = review_metrics::finding_composite(m, &composite);
                let actionable = tier == Tier::Actionable;
                let mut add = |at: usize, x: f64| v[at] += x;
                match tier {
                    Tier::Actionable => add(sweep::review::ACTIONABLE, 1.0),
                    Tier::Fyi => add(sweep::review::FYI, 1.0),
                    Tier::Dropped => add(sweep::review::DROPPED, 1.0),
                    _ => {}
                }
                if matches!(tier, Tier::Actionable | Tier::Fyi) {
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
                if matches!(validation, Some(Check::Rejected(_))) {
                    add(sweep::review::REJECTED, 1.0);
                }
            }
            // What the run's reviewer calls cost; a target the policy skips makes none.
            let cost = match (&run.skipped, run.spent.and_then(|s| s.cost_usd)) {
                (Some(_), _) if self.costed => Some(0.0),
                (None, Some(c)) => Some(c),
                _ => None,
            };
            if let Some(c) = cost {
                v[sweep::review::COST] += c;
                v[sweep::review::COSTED] += 1.0;
            }
            let entry = by_target
                .entry(&run.target)
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

impl<'a> Replayer<'a> {
    /// `arm`'s queries scored by its policy, from the cache when an earlier point scored them
    /// alike. The cache keeps one scoring per arm: a sweep over gates reuses it at every point;
    /// a sweep over what scores (weights, bonuses) scores each point afresh, the primary phase
    /// only (recovery is scored where a gate fires), and keeps nothing.
    fn scored_queries(&self, arm: &Arm) -> Result<Arc<ScoredQueries<'a>>, InputError> {
        let scoring = arm.confidence.scoring();
        let corpus: &'a Corpus = self.corpus;
        self.scored.get(
            arm,
            |s| s.scoring == scoring,
            |keep| {
                let (name, all) = corpus
                    .queries
                    .as_ref()
                    .map_or(("", &[][..]), |(n, q)| (n, q));
                let queries = queries::select(name, all, &arm.name, &arm.source)?;
                let scored = queries
                    .iter()
                    .map(|q| {
                        if keep {
                            Scored::with_recovery(&arm.confidence, q)
                        } else {
                            Scored::primary(&arm.confidence, q)
                        }
                    })
                    .collect();
                let mut ids: Vec<&str> = queries.iter().map(|q| q.query_id.as_str()).collect();
                ids.sort_unstable();
                ids.dedup();
                let unit_of = queries
                    .iter()
                    .map(|q| ids.binary_search(&q.query_id.as_str()).unwrap_or(0))
                    .collect();
                let ids = ids.into_iter().map(str::to_string).collect();
                Ok(ScoredQueries {
                    scoring: scoring.clone(),
                    queries,
                    scored,
                    unit_of,
                    ids,
                })
            },
        )
    }

    /// Per query: each figure of `sweep::queries`, summed over the query's runs in the order
    /// the corpus holds them.
    fn query_units(&self, arm: &Arm) -> Result<Units, InputError> {
        if self.corpus.queries.is_none() {
            return Ok(Units {
                ids: Vec::new(),
                vectors: Vec::new(),
            });
        }
        let s = self.scored_queries(arm)?;
        use sweep::queries as q;
        let mut vectors = vec![vec![0.0; q::LEN]; s.ids.len()];
        for ((query, scored), &unit) in s.queries.iter().zip(&s.scored).zip(&s.unit_of) {
            let outcome = query::gate(&arm.confidence, query, scored);
            let a = query_metrics::answers(query, &outcome);
            let v = &mut vectors[unit];
            let one = |b: bool| f64::from(u8::from(b));
            let p = outcome.confidence;
            v[q::N] += 1.0;
            v[q::FIRED] += one(outcome.fired);
            v[q::UNNECESSARY] += one(query_metrics::unnecessary(&outcome, a.first_pass_correct));
            v[q::FIRST_PASS_LABELLED] += one(a.first_pass_correct.is_some());
            v[q::FIRST_PASS_RIGHT] += one(a.first_pass_correct == Some(true));
            v[q::CONFIDENCE_SUM] += p;
            if let Some(right) = a.final_correct {
                v[q::LABELLED] += 1.0;
                v[q::RIGHT] += one(right);
                let at = q::BIN + 3 * bin_index(p, crate::stats::calibration::BINS);
                v[at] += 1.0;
                v[at + 1] += p;
                v[at + 2] += one(right);
            }
        }
        Ok(Units {
            ids: s.ids.clone(),
            vectors,
        })
    }
}
