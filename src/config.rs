//! The experiment file, `experiment.toml` (docs/reference.md): typed, validated, with every
//! default filled in. An unknown key anywhere is an error that names it and its line: a typo
//! must never fall back to a default silently. The reader sits on top of the layers it
//! composes: the policy vocabulary (`policy`), the gate policy (`gate`), the `[collect]` table
//! (`collect::plan`) and the metric catalogue (`replay`) that `primary` and `[decision]` name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::InputError;
pub use crate::input::toml::Override;
use crate::input::toml::{read_toml, Ctx};
use crate::policy::{
    Anchored, Arm, CategoryMax, ConfidencePolicy, Controls, FlatMean, FloatGates, InteractiveRoute,
    LintIgnore, Mode, Promotion, ReviewMode, ReviewPolicy, Scale, Scores, SkipRule, Trust,
    ValidationRun, Want, Wanted,
};
use crate::stats::bootstrap::MAX_REPLICATES;

mod keys;

/// A resolved experiment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Experiment {
    pub name: String,
    pub mode: Mode,
    /// Whether the file says `mode`: required when the corpus has reviews, which the
    /// corpus loader checks, since only it knows. `mode` is `doc` when not declared.
    #[serde(skip)]
    pub mode_declared: bool,
    /// The corpus directory, resolved against the experiment file's folder.
    pub corpus: PathBuf,
    pub seed: u64,
    pub bootstrap: usize,
    pub baseline: Arm,
    pub treatment: Arm,
    pub trust: Trust,
    /// The `[scores]` table: the scorers that form the judge panel.
    #[serde(skip_serializing_if = "Scores::is_default")]
    pub scores: Scores,
    /// The line of `scores.judges`, for the corpus loader's refusal of a judge no line names.
    #[serde(skip)]
    pub judges_line: Option<u64>,
    /// The CI gate policy of the `[gate]` table (docs/guides/ci-gate.md), checked as the experiment is read.
    pub gate: Option<crate::gate::Policy>,
    /// How to record a corpus live: the `[collect]` table (docs/guides/live-collection.md).
    pub collect: Option<crate::collect::plan::Collect>,
    /// The primary metrics (docs/guides/ab-rubric-change.md): deltas that form one Holm family of their own and
    /// lead the report's headline. Names of compared metrics, checked as the file is read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub primary: Vec<String>,
    /// The line of `primary`, for the corpus loader's refusal of a primary metric the corpus
    /// cannot measure.
    #[serde(skip)]
    pub primary_line: Option<u64>,
    /// What "better" means for this A/B (`[decision]`, docs/reference.md): each metric with the
    /// way it must move, the metrics that must move first. Empty when the file has no table:
    /// then `primary` decides, on the metrics whose better direction the catalogue declares.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decision: Vec<Wanted>,
    /// The line of `[decision]`, for the corpus loader's refusals.
    #[serde(skip)]
    pub decision_line: Option<u64>,
    /// The `[[sweep]]` tables: sweeps `calibench run` makes beside the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sweeps: Vec<crate::sweep::Spec>,
    /// Recorded labels of other arms, whose lines the input ledger counts as `label-ignored`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignore_labels: Vec<String>,
    /// `[sequential] range`: the per-unit range of decision metrics whose range the catalogue
    /// does not know (imported scorers, counts), for `run --sequential`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub sequential_range: BTreeMap<String, [f64; 2]>,
    /// The line of `[sequential]`, for refusals made once the corpus is read.
    #[serde(skip)]
    pub sequential_line: Option<u64>,
    /// `noise_floor`: an A/A run of this experiment's baseline (a run directory, resolved
    /// against the experiment's folder), whose deltas each decision metric is shown beside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<PathBuf>,
    /// The line of `noise_floor`, for refusals made when the run is read.
    #[serde(skip)]
    pub noise_floor_line: Option<u64>,
    /// `[sequential] always`: every run decides sequentially, as with `--sequential`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sequential_always: bool,
    /// `[sequential] method`: the confidence sequence the sequential decision runs.
    pub sequential_method: crate::sequential::Method,
}

/// The `[sequential]` table (docs/guides/stop-when-you-know.md).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSequential {
    /// Each decision metric whose per-unit values have no range the catalogue knows (an
    /// imported scorer, a count), with the range `[lo, hi]` every unit's value lies in:
    /// `{ accuracy = [0, 1] }`. A value outside it is bad input.
    pub range: Option<BTreeMap<String, Vec<f64>>>,
    /// Decide sequentially on every `calibench run` of this experiment, as `--sequential` does
    /// (default false).
    pub always: Option<bool>,
    /// The confidence sequence: `"hedged"` (the hedged-capital betting sequence, the default)
    /// or `"empirical-bernstein"` (the predictable plug-in empirical-Bernstein one).
    pub method: Option<crate::sequential::Method>,
}

impl Experiment {
    /// The decision's metrics: `[decision]` when the file has one, else the `primary` metrics
    /// whose catalogue entry declares a better direction, as `increase` or `decrease`.
    pub fn decision_metrics(&self) -> Vec<Wanted> {
        if !self.decision.is_empty() {
            return self.decision.clone();
        }
        self.primary
            .iter()
            .filter_map(|name| {
                let better = crate::replay::compared_named(name)?.better?;
                Some(Wanted::plain(
                    name.clone(),
                    match better {
                        crate::replay::Better::Higher => Want::Increase,
                        crate::replay::Better::Lower => Want::Decrease,
                    },
                ))
            })
            .collect()
    }

    /// The metrics of the decision's Holm family: `[decision]`'s when the file has one (it
    /// replaces `primary`'s), else `primary`.
    pub fn family(&self) -> Vec<String> {
        if self.decision.is_empty() {
            self.primary.clone()
        } else {
            self.decision.iter().map(|w| w.metric.clone()).collect()
        }
    }

    pub fn arms(&self) -> [&Arm; 2] {
        [&self.baseline, &self.treatment]
    }

    /// The A/A experiment (`collect --aa`, `run --aa`; docs/guides/live-collection.md, "The
    /// harness's own noise"): the baseline against itself, its second copy reading the label
    /// `<baseline label>-again`. What it measures is the harness's run-to-run noise.
    pub fn aa(&self) -> Experiment {
        let mut exp = self.clone();
        exp.name = format!("{}-aa", self.name);
        exp.treatment = Arm {
            name: self.treatment.name.clone(),
            source: Self::again(&self.baseline.source),
            differs: Vec::new(),
            ..self.baseline.clone()
        };
        exp.sweeps = Vec::new();
        exp.noise_floor = None;
        exp
    }

    /// The label an A/A collection records the baseline's second copy under.
    pub fn again(label: &str) -> String {
        crate::corpus::collection::again(label)
    }

    /// The labels `arm`'s judged items (verdicts, human labels) are filed under: its recorded
    /// label and its name; a label both arms read cannot tell them apart, so only the arm's
    /// name then.
    pub fn item_labels<'a>(&'a self, arm: &'a Arm) -> Vec<&'a str> {
        let other = if arm.name == self.baseline.name {
            &self.treatment
        } else {
            &self.baseline
        };
        if arm.source == other.source {
            vec![arm.name.as_str()]
        } else {
            vec![arm.source.as_str(), arm.name.as_str()]
        }
    }

    /// Whether the lines filed under `label` are read: a recorded label an arm's `source` names,
    /// or, for judged items (`items`), an arm's name.
    pub fn reads(&self, label: &str, items: bool) -> bool {
        self.arms()
            .iter()
            .any(|a| a.source == label || (items && a.name == label))
    }

    /// Whether `label` is listed in `ignore_labels`.
    pub fn ignores(&self, label: &str) -> bool {
        self.ignore_labels.iter().any(|l| l == label)
    }
}

/// `experiment.toml` as written: every table and key it may hold, read by serde in
/// one pass (an unknown key is refused) and then checked into an [`Experiment`]. Its JSON
/// Schema, derived from these types, is what `calibench schema experiment` prints.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    /// Names the run and its report; default: the experiment's folder name.
    pub name: Option<String>,
    /// Required when the corpus has review returns.
    pub mode: Option<Mode>,
    /// The corpus folder, relative to this file (default: this file's folder).
    pub corpus: Option<String>,
    /// Seeds every bootstrap (default 20260421).
    pub seed: Option<u64>,
    /// Bootstrap replicates for every interval (default 2000, at most 1000000).
    pub bootstrap: Option<u64>,
    /// The primary metrics: names of `review.delta` or `queries.delta` entries. They form one
    /// Holm family of their own and lead the report's headline.
    pub primary: Option<Vec<String>>,
    /// The two arms, `[arms.baseline]` and `[arms.treatment]`, each with the keys below.
    pub arms: RawArms,
    /// The trust verdict's thresholds: do the judges agree enough to be believed
    /// (docs/guides/trust.md)?
    pub trust: Option<Trust>,
    /// Imported scores (`scores.jsonl`, docs/reference.md): which scorers form the judge panel.
    pub scores: Option<Scores>,
    /// What "better" means: each metric (a compared metric, `lift`, `lift_human` or an imported
    /// scorer) with `increase`, `decrease`, `no-decrease` or `no-increase`; or a table `{ want =
    /// "no-decrease", margin = 0.02 }` (a guard that must be shown to hold within the margin)
    /// or `{ want = "increase", min_effect = 0.03 }` (the smallest change that matters, which
    /// "needs ≈ N" and `plan` size the study for).
    pub decision: Option<std::collections::BTreeMap<String, RawWant>>,
    /// The CI gate policy (docs/guides/ci-gate.md).
    pub gate: Option<crate::gate::policy::RawPolicy>,
    /// How to record the corpus live (docs/guides/live-collection.md).
    pub collect: Option<crate::collect::plan::RawCollect>,
    /// Threshold sweeps `calibench run` makes beside the run (docs/guides/threshold-sweep.md).
    pub sweep: Option<Vec<crate::sweep::RawSweep>>,
    /// Recorded `arm` labels neither arm reads, in a corpus recorded with more arms than this
    /// experiment compares: their lines are counted as `label-ignored` in the input ledger,
    /// never refused. Any other label no arm reads is refused, in every corpus file.
    pub ignore_labels: Option<Vec<String>>,
    /// How `run --sequential` bounds decision metrics whose range the catalogue does not know
    /// (docs/guides/stop-when-you-know.md).
    pub sequential: Option<RawSequential>,
    /// An A/A run of this experiment's baseline (`calibench run EXPERIMENT --aa --corpus
    /// AA_COLLECTION`), relative to this file: each decision metric then shows the harness's own
    /// run-to-run noise beside its delta (docs/guides/live-collection.md).
    pub noise_floor: Option<String>,
}

/// One `[decision]` metric as written: its way, or a table with its way and a margin (a guard)
/// or a smallest effect (a metric that must move).
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
pub enum RawWant {
    Word(Want),
    Table {
        want: Want,
        /// A guard's non-inferiority margin, in the metric's units, or for cost and latency a
        /// share of the baseline (`"10%"`): held only when the 95% interval's bound on the
        /// unsafe side lies within it.
        #[schemars(with = "Option<Share>")]
        margin: Option<f64>,
        /// The smallest change that matters, in the metric's units (or `"5%"` of the
        /// baseline, for cost and latency), for a metric that must move: "needs ≈ N" and
        /// `plan` size the study for it.
        #[schemars(with = "Option<Share>")]
        min_effect: Option<f64>,
        /// Whether they were written as percentages.
        #[schemars(skip)]
        relative: bool,
    },
}

/// A margin or a smallest effect as written: a number in the metric's units, or a percentage
/// of the baseline (`"10%"`).
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Share {
    Units(f64),
    Percent(#[schemars(regex(pattern = r"^[0-9]+(\.[0-9]+)?%$"))] String),
}

impl<'de> Deserialize<'de> for RawWant {
    /// Read by hand, so that a wrong value is told what it may be, not that it matched no
    /// variant.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let want = |v: &toml::Value| -> Result<Want, D::Error> {
            let words = "increase, decrease, no-decrease, no-increase";
            match v {
                toml::Value::String(s) => Want::deserialize(toml::Value::String(s.clone()))
                    .map_err(|_| D::Error::custom(format_args!("`{s}` is not one of {words}"))),
                other => Err(D::Error::custom(format_args!(
                    "must be one of {words}, or a table {{ want = …, margin = … }}, not {}",
                    other.type_str()
                ))),
            }
        };
        match toml::Value::deserialize(d)? {
            toml::Value::Table(mut t) => {
                let w = t
                    .remove("want")
                    .ok_or_else(|| D::Error::custom("the table has no `want`"))?;
                // A number in the metric's units, or a percentage of the baseline ("10%").
                let number = |t: &mut toml::Table,
                              key: &str|
                 -> Result<Option<(f64, bool)>, D::Error> {
                    match t.remove(key) {
                            None => Ok(None),
                            Some(toml::Value::Float(x)) => Ok(Some((x, false))),
                            Some(toml::Value::Integer(i)) => Ok(Some((i as f64, false))),
                            Some(toml::Value::String(s)) => s
                                .trim()
                                .strip_suffix('%')
                                .and_then(|n| n.trim().parse::<f64>().ok())
                                .map(|x| Some((x / 100.0, true)))
                                .ok_or_else(|| {
                                    D::Error::custom(format_args!(
                                        "`{key}` must be a number or a percentage such as \"10%\", not \"{s}\""
                                    ))
                                }),
                            Some(other) => Err(D::Error::custom(format_args!(
                                "`{key}` must be a number or a percentage such as \"10%\", not {}",
                                other.type_str()
                            ))),
                        }
                };
                let (margin, min_effect) =
                    (number(&mut t, "margin")?, number(&mut t, "min_effect")?);
                let percent = |x: Option<(f64, bool)>| x.map(|(_, p)| p);
                if let (Some(a), Some(b)) = (percent(margin), percent(min_effect)) {
                    if a != b {
                        return Err(D::Error::custom(
                            "write margin and min_effect both as percentages or both in the metric's units",
                        ));
                    }
                }
                let relative = percent(margin).or(percent(min_effect)).unwrap_or(false);
                let (margin, min_effect) = (margin.map(|x| x.0), min_effect.map(|x| x.0));
                if let Some(k) = t.keys().next() {
                    let near = crate::text::nearest(k, &["want", "margin", "min_effect"])
                        .map(|n| format!(" — did you mean `{n}`?"))
                        .unwrap_or_default();
                    return Err(D::Error::custom(format_args!(
                        "unknown key `{k}`{near} (a decision metric's table takes want, margin and min_effect)"
                    )));
                }
                Ok(RawWant::Table {
                    want: want(&w)?,
                    margin,
                    min_effect,
                    relative,
                })
            }
            other => want(&other).map(RawWant::Word),
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawArms {
    pub baseline: RawArm,
    pub treatment: RawArm,
}

/// One arm: the recorded lines it reads and the policies it replays them through.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawArm {
    /// The recorded `arm` label this arm reads (default: the arm's name).
    pub source: Option<String>,
    /// Default: float-gates for the baseline, anchored for the treatment.
    pub review: Option<RawReview>,
    /// Default: flat-mean for the baseline, category-max for the treatment.
    pub confidence: Option<ConfidencePolicy>,
    /// The treatment only: what it changes besides its policy, so that the drift check between
    /// the arms does not call it harness drift: `model` (the reviewers' reported model),
    /// `command`, `files` (the hashes of files the command names), `calibench` (its version),
    /// `env.NAME` (a `[collect] provenance_env` variable).
    pub differs: Option<Vec<String>>,
}

/// An arm's `[review]` table, by `policy`. Thresholds left out take the policy's defaults on
/// the arm's scale.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(tag = "policy", rename_all = "kebab-case")]
pub enum RawReview {
    Anchored(RawAnchored),
    FloatGates(RawFloatGates),
}

/// Declares a review policy's raw table: the keys every review table takes, described once
/// here, then the policy's own. (serde's `flatten` would share them too, but cannot be combined
/// with `deny_unknown_fields`, and a misspelt key must be refused.)
macro_rules! review_table {
    ($(#[$doc:meta])* $name:ident { $($(#[$field_doc:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[derive(Default, Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// The scale findings' confidence is read on: `float` ([0, 1]) or `anchor` (0, 25,
            /// 50, 75, 100). Default: the policy's own (`float` for float-gates, `anchor` for
            /// anchored); thresholds left out are its defaults converted to this scale.
            pub scale: Option<Scale>,
            /// Corroborated findings (raised by more than one reviewer) move up: one anchor, or
            /// `boost` on the float scale (+0.10 when `boost` is absent). Default `true`.
            pub promotion: Option<bool>,
            /// Code mode: `interactive`, `report-only`, `headless` or `autofix`. Demoted findings
            /// stay visible in a soft bucket in the first two and are suppressed in the others.
            /// Default `interactive`.
            pub review_mode: Option<ReviewMode>,
            /// Code mode: a P2/P3 advisory finding raised only by these reviewers is demoted.
            /// Default `["testing", "maintainability"]`.
            pub demote_reviewers: Option<Vec<String>>,
            /// Code mode: when the validation pass runs, `never` (default), `auto` (where the
            /// measured pipeline runs it: headless, autofix, interactive file-tickets) or
            /// `always`; it reads `validations.jsonl` (docs/guides/ab-rubric-change.md).
            pub validation: Option<ValidationRun>,
            /// Code mode: findings validated per target at most. Default 15.
            pub validation_budget: Option<u64>,
            /// Code mode, interactive review only: where actionable findings go,
            /// `walk-through` (default), `best-judgment`, `file-tickets` or `report-only`.
            pub route: Option<InteractiveRoute>,
            /// Code mode: PR skip rules, each at most once: `closed`, `draft`,
            /// `trivial-pattern`, `trivial-judgment`, `reviewed` (they read `targets.jsonl`).
            /// Default: none.
            pub skip: Option<Vec<SkipRule>>,
            /// Code mode: `suppress` drops findings on a line that carries a lint-suppression
            /// comment (it reads `sources/<target>/<file>`); default `off`.
            pub lint_ignore: Option<LintIgnore>,
            $($(#[$field_doc])* pub $field: $ty,)*
        }

        impl $name {
            fn written_controls(&self) -> WrittenControls<'_> {
                WrittenControls {
                    review_mode: self.review_mode,
                    validation: self.validation,
                    validation_budget: self.validation_budget,
                    route: self.route,
                    skip: self.skip.as_deref(),
                    lint_ignore: self.lint_ignore,
                }
            }
        }
    };
}

/// The precision-control keys of a review table, as written, and the review mode they depend on.
struct WrittenControls<'a> {
    review_mode: Option<ReviewMode>,
    validation: Option<ValidationRun>,
    validation_budget: Option<u64>,
    route: Option<InteractiveRoute>,
    skip: Option<&'a [SkipRule]>,
    lint_ignore: Option<LintIgnore>,
}

impl RawReview {
    fn written_controls(&self) -> WrittenControls<'_> {
        match self {
            RawReview::Anchored(r) => r.written_controls(),
            RawReview::FloatGates(r) => r.written_controls(),
        }
    }
}

review_table!(
    /// The 0/25/50/75/100 rubric: a finding is dropped, FYI or actionable by the band its
    /// confidence falls in.
    RawAnchored {
        /// Findings below this are dropped. Default 50 (doc) or 75 (code).
        surface_from: Option<f64>,
        /// Findings from here up are actionable; between `surface_from` and this, FYI.
        /// Default 75. It is checked first: set below `surface_from`, every finding from here
        /// up is actionable and none is FYI (allowed, for a rubric with no FYI band).
        actionable_from: Option<f64>,
        /// A P0 at or above this surfaces as actionable, whatever the other thresholds.
        /// Default: none (doc), 50 (code).
        p0_escape: Option<f64>,
        /// Same-persona collapse: three or more findings of one reviewer on one premise merge
        /// into one. Default `true`.
        collapse: Option<bool>,
    }
);

review_table!(
    /// The gates of float confidence before the rubric: per severity (doc) or one gate (code).
    RawFloatGates {
        /// Doc mode: a finding is actionable at or above its severity's gate. Default
        /// P0 0.50, P1 0.60, P2 0.65, P3 0.75; a table that names some keeps the others.
        gates: Option<RawGates>,
        /// Code mode: findings at or above this surface. Default 0.60.
        gate: Option<f64>,
        /// Code mode: a P0 at or above this surfaces. Default 0.50.
        p0_gate: Option<f64>,
        /// Doc mode: manual findings from here up to their gate are FYI; below, dropped.
        /// Default 0.40.
        fyi_floor: Option<f64>,
        /// How far promotion raises a corroborated finding. Default 0.10.
        boost: Option<f64>,
        /// `safe_auto` findings with a fix from here up are applied automatically. Default 0.85.
        auto_apply_from: Option<f64>,
    }
);

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RawGates {
    /// Default 0.50.
    pub P0: Option<f64>,
    /// Default 0.60.
    pub P1: Option<f64>,
    /// Default 0.65.
    pub P2: Option<f64>,
    /// Default 0.75.
    pub P3: Option<f64>,
}

/// A refusal at the dotted key `path` of the experiment file at `file` (on its line, when the
/// file has it there), for a check made after the file was read: a declared sweep's figures.
pub fn error_at(file: &Path, path: &str, problem: impl Into<String>) -> InputError {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).unwrap_or_default();
    crate::input::toml::Ctx::new(&name, &text).error(path, problem)
}

/// Parses an experiment file; `path` is used for messages and to resolve `corpus`.
pub fn parse(path: &Path, text: &str) -> Result<Experiment, InputError> {
    parse_with(path, text, &[])
}

/// Parses an experiment file with `--set` overrides applied before anything is checked, so an
/// overridden key gets exactly the file's checks, defaults and did-you-mean; an error at an
/// overridden key names the override instead of a line.
pub fn parse_with(
    path: &Path,
    text: &str,
    overrides: &[Override],
) -> Result<Experiment, InputError> {
    let name = path.display().to_string();
    let merged = match overrides {
        [] => None,
        _ => crate::input::toml::apply(&name, text, overrides)?,
    };
    let ctx = match &merged {
        Some(merged) => Ctx::with_overrides(&name, merged, text, overrides),
        None => Ctx::new(&name, text),
    };
    let raw: RawExperiment = read_toml(&ctx)?;

    let exp_name = ctx.name(raw.name, path)?;
    let mode = raw.mode.unwrap_or(Mode::Doc);
    let corpus = keys::corpus_folder(path, raw.corpus.as_deref());
    let bootstrap = raw.bootstrap.unwrap_or(2000);
    if bootstrap > MAX_REPLICATES as u64 {
        return Err(ctx
            .error(
                "bootstrap",
                format!("{bootstrap} replicates is more than the {MAX_REPLICATES} allowed"),
            )
            .hint("2000 replicates give stable 95% intervals; 10000 are plenty"));
    }
    let baseline = ctx.arm("baseline", raw.arms.baseline, mode)?;
    let treatment = ctx.arm("treatment", raw.arms.treatment, mode)?;
    let trust = ctx.trust(raw.trust.unwrap_or_default())?;
    let (primary, primary_line) = ctx.primary(raw.primary.unwrap_or_default())?;
    let scores = raw.scores.unwrap_or_default();
    for (i, judge) in scores.judges.iter().enumerate() {
        if scores.judges[..i].contains(judge) {
            return Err(ctx.error(
                &format!("scores.judges.{i}"),
                format!("`{judge}` is named twice"),
            ));
        }
    }
    let judges_line = (!scores.judges.is_empty())
        .then(|| ctx.line_of("scores.judges"))
        .flatten();
    let sweeps = raw
        .sweep
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            s.check()
                .map_err(|(key, problem)| ctx.error(&format!("sweep[{i}].{key}"), problem))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let decision = ctx.decision(raw.decision)?;
    let decision_line = (!decision.is_empty())
        .then(|| ctx.line_of("decision"))
        .flatten();
    let ignore_labels = ctx.ignore_labels(
        raw.ignore_labels.unwrap_or_default(),
        [&baseline, &treatment],
    )?;
    let sequential_always = raw
        .sequential
        .as_ref()
        .and_then(|s| s.always)
        .unwrap_or(false);
    let sequential_method = raw
        .sequential
        .as_ref()
        .and_then(|s| s.method)
        .unwrap_or_default();
    let (sequential_range, sequential_line) =
        ctx.sequential_range(raw.sequential.and_then(|s| s.range), &decision)?;
    let noise_floor_line = raw
        .noise_floor
        .as_ref()
        .and_then(|_| ctx.line_of("noise_floor"));
    let collect = raw
        .collect
        .map(|c| crate::collect::plan::in_experiment(path, text, c))
        .transpose()?;
    // `differs = ["env.NAME"]` names a variable the collection records: a typo would declare
    // nothing, and the drift it meant would read as undeclared.
    if let Some(c) = &collect {
        let recorded: Vec<&str> = c.provenance_env.iter().map(String::as_str).collect();
        for (i, d) in treatment.differs.iter().enumerate() {
            let Some(name) = d.strip_prefix("env.") else {
                continue;
            };
            if !recorded.contains(&name) {
                let guess = crate::text::nearest(name, &recorded)
                    .map_or_else(String::new, |n| format!(": did you mean `env.{n}`?"));
                return Err(ctx
                    .error(
                        &format!("arms.treatment.differs.{i}"),
                        format!("`{d}` names no variable [collect] provenance_env records{guess}"),
                    )
                    .hint(format!(
                        "provenance_env lists {}",
                        if recorded.is_empty() {
                            "none".to_string()
                        } else {
                            recorded.join(", ")
                        }
                    )));
            }
        }
    }
    let noise_floor = raw.noise_floor.map(|p| {
        path.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from(&p), |d| d.join(&p))
    });
    Ok(Experiment {
        name: exp_name,
        mode,
        mode_declared: raw.mode.is_some(),
        corpus,
        seed: raw.seed.unwrap_or(20260421),
        bootstrap: bootstrap as usize,
        baseline,
        treatment,
        trust,
        scores,
        judges_line,
        gate: raw
            .gate
            .map(|g| crate::gate::policy::in_experiment(path, text, g))
            .transpose()?,
        collect,
        primary,
        primary_line,
        decision,
        decision_line,
        sweeps,
        ignore_labels,
        sequential_range,
        sequential_line,
        sequential_always,
        sequential_method,
        noise_floor,
        noise_floor_line,
    })
}

impl Ctx<'_> {
    /// The `[decision]` table, the metrics that must move first (each group in name order). A
    /// name of the catalogue or `lift` is checked here; any other may be an imported scorer,
    /// which only the corpus can tell, so the corpus loader checks it. A decision needs one
    /// metric that must move: guards alone would call a change that moved nothing "better".
    fn decision(
        &self,
        raw: Option<std::collections::BTreeMap<String, RawWant>>,
    ) -> Result<Vec<Wanted>, InputError> {
        let Some(raw) = raw else {
            return Ok(Vec::new());
        };
        if raw.is_empty() {
            return Err(self
                .error("decision", "names no metric")
                .hint("name what must change, e.g. precision = \"increase\"; or drop the table"));
        }
        let mut out = Vec::with_capacity(raw.len());
        for (metric, w) in raw {
            let wanted = match w {
                RawWant::Word(want) => Wanted::plain(metric, want),
                RawWant::Table {
                    want,
                    margin,
                    min_effect,
                    relative,
                } => {
                    let at = |key: &str| format!("decision.{metric}.{key}");
                    // A share of the baseline reads on a relative change: cost and latency.
                    let usage = crate::replay::relative_metrics();
                    if relative && !usage.contains(&metric.as_str()) {
                        let key = if margin.is_some() {
                            "margin"
                        } else {
                            "min_effect"
                        };
                        return Err(self
                            .error(&at(key), format!("a percentage reads on a relative change, and `{metric}` has none"))
                            .hint(format!("percentages are for {}; give `{metric}`'s {key} in its own units", usage.join(", "))));
                    }
                    for (key, x) in [("margin", margin), ("min_effect", min_effect)] {
                        if let Some(x) = x.filter(|x| !(x.is_finite() && *x > 0.0)) {
                            return Err(self.error(
                                &at(key),
                                format!("{} must be a number above 0", crate::text::fmt_num(x)),
                            ));
                        }
                    }
                    if margin.is_some() && want.must_move() {
                        return Err(self
                            .error(&at("margin"), format!("a margin is a guard's (no-decrease, no-increase), but `{metric}` must {}", want.name()))
                            .hint("for a metric that must move, give min_effect: the smallest change that matters"));
                    }
                    if min_effect.is_some() && !want.must_move() {
                        return Err(self
                            .error(&at("min_effect"), format!("min_effect sizes a change that must happen, but `{metric}` is a guard ({})", want.name()))
                            .hint("for a guard, give margin: how far it may move the wrong way and still hold"));
                    }
                    Wanted {
                        metric,
                        want,
                        margin,
                        min_effect,
                        relative,
                    }
                }
            };
            out.push(wanted);
        }
        if !out.iter().any(|w| w.want.must_move()) {
            return Err(self
                .error("decision", "names no metric that must increase or decrease: guards alone (no-decrease, no-increase) would call a change that moved nothing better")
                .hint("name the metric the treatment is for, e.g. precision = \"increase\""));
        }
        out.sort_by_key(|w| !w.want.must_move());
        Ok(out)
    }

    fn arm(&self, arm_name: &str, raw: RawArm, mode: Mode) -> Result<Arm, InputError> {
        let prefix = format!("arms.{arm_name}");
        let review = match raw.review {
            Some(r) => r,
            None if arm_name == "baseline" => RawReview::FloatGates(RawFloatGates::default()),
            None => RawReview::Anchored(RawAnchored::default()),
        };
        let controls = self.controls(&format!("{prefix}.review"), &review, mode)?;
        let review = self.review(&format!("{prefix}.review"), review, mode)?;
        let confidence = match raw.confidence {
            Some(policy) => {
                self.check_confidence(&format!("{prefix}.confidence"), &policy)?;
                policy
            }
            None if arm_name == "baseline" => ConfidencePolicy::FlatMean(FlatMean::default()),
            None => ConfidencePolicy::CategoryMax(CategoryMax::default()),
        };
        let differs = raw.differs.unwrap_or_default();
        if arm_name == "baseline" && !differs.is_empty() {
            return Err(self
                .error(
                    &format!("{prefix}.differs"),
                    "is the treatment's: what it changes against the baseline",
                )
                .hint("move it to [arms.treatment]"));
        }
        for (i, d) in differs.iter().enumerate() {
            let known = ["model", "command", "files", "calibench"];
            let env = d.strip_prefix("env.").is_some_and(|n| !n.is_empty());
            if !known.contains(&d.as_str()) && !env {
                return Err(self
                    .error(&format!("{prefix}.differs.{i}"), format!("`{d}` is not something an arm's collection records"))
                    .hint("one of model, command, files, calibench, or env.NAME for a [collect] provenance_env variable"));
            }
        }
        Ok(Arm {
            name: arm_name.to_string(),
            source: raw.source.unwrap_or_else(|| arm_name.to_string()),
            review,
            confidence,
            controls,
            differs,
        })
    }

    /// The precision controls of an arm's review table: code mode only, `route` only in
    /// interactive review, a budget of at least 1, each skip rule once.
    fn controls(&self, path: &str, raw: &RawReview, mode: Mode) -> Result<Controls, InputError> {
        let WrittenControls {
            review_mode,
            validation,
            validation_budget,
            route,
            skip,
            lint_ignore,
        } = raw.written_controls();
        let written = [
            ("validation", validation.is_some()),
            ("validation_budget", validation_budget.is_some()),
            ("route", route.is_some()),
            ("skip", skip.is_some()),
            ("lint_ignore", lint_ignore.is_some()),
        ];
        if mode == Mode::Doc {
            if let Some((key, _)) = written.iter().find(|(_, w)| *w) {
                return Err(self
                    .error(&format!("{path}.{key}"), "is a code review control, but mode is doc")
                    .hint("the validation pass, skip rules and lint-ignore replay code review (mode = \"code\")"));
            }
        }
        let review_mode = review_mode.unwrap_or(ReviewMode::Interactive);
        if route.is_some() && review_mode != ReviewMode::Interactive {
            return Err(self
                .error(
                    &format!("{path}.route"),
                    "applies to interactive review only",
                )
                .hint("route is where interactive review sends findings; set review_mode = \"interactive\" or remove route"));
        }
        let budget = match validation_budget {
            None => 15,
            Some(0) => {
                return Err(self
                    .error(&format!("{path}.validation_budget"), "must be 1 or more")
                    .hint("validation = \"never\" turns the pass off"))
            }
            Some(b) => usize::try_from(b).unwrap_or(usize::MAX),
        };
        let skip = skip.map(<[SkipRule]>::to_vec).unwrap_or_default();
        for (i, rule) in skip.iter().enumerate() {
            if skip[..i].contains(rule) {
                return Err(self.error(
                    &format!("{path}.skip"),
                    format!("`{}` is listed twice", rule.name()),
                ));
            }
        }
        Ok(Controls {
            validation: validation.unwrap_or_default(),
            validation_budget: budget,
            route: route.unwrap_or_default(),
            skip,
            lint_ignore: lint_ignore.unwrap_or_default(),
        })
    }

    /// Values serde cannot check: thresholds and bands in [0, 1] and in order, weights and
    /// bonuses finite and not negative.
    fn check_confidence(&self, path: &str, p: &ConfidencePolicy) -> Result<(), InputError> {
        let unit = |key: &str, x: f64| -> Result<(), InputError> {
            if (0.0..=1.0).contains(&x) {
                Ok(())
            } else {
                Err(self.error(&format!("{path}.{key}"), format!("{x} is not in [0, 1]")))
            }
        };
        let (stop, recovery) = (p.stop_threshold(), p.recovery_threshold());
        unit("stop_threshold", stop)?;
        unit("recovery_threshold", recovery)?;
        if stop > recovery {
            return Err(self
                .error(
                    &format!("{path}.stop_threshold"),
                    format!("{stop} is above recovery_threshold ({recovery}): the gate could never fire"),
                )
                .hint("the stop threshold is the emergency stop below the recovery gate"));
        }
        let b = p.bands();
        unit("bands.strong", b.strong)?;
        unit("bands.adequate", b.adequate)?;
        unit("bands.weak", b.weak)?;
        if !(b.weak <= b.adequate && b.adequate <= b.strong) {
            return Err(self.error(
                &format!("{path}.bands"),
                format!(
                    "must rise from weak to strong, not weak {} / adequate {} / strong {}",
                    b.weak, b.adequate, b.strong
                ),
            ));
        }
        match p {
            ConfidencePolicy::FlatMean(f) => unit("recovery_entry_score", f.recovery_entry_score),
            ConfidencePolicy::CategoryMax(c) => {
                let w = c.weights;
                let named = [
                    ("search", w.search),
                    ("read", w.read),
                    ("discovery", w.discovery),
                    ("verification", w.verification),
                    ("git", w.git),
                    ("ci", w.ci),
                    ("other", w.other),
                    ("bonus_two", c.bonus_two),
                    ("bonus_three", c.bonus_three),
                    ("bonus_search_read", c.bonus_search_read),
                ];
                for (i, (key, x)) in named.into_iter().enumerate() {
                    if !(x.is_finite() && x >= 0.0) {
                        let key = if i < 7 {
                            format!("weights.{key}")
                        } else {
                            key.to_string()
                        };
                        return Err(self.error(
                            &format!("{path}.{key}"),
                            format!("{x} must be a finite number ≥ 0"),
                        ));
                    }
                }
                if w.as_array().iter().sum::<f64>() <= 0.0 {
                    return Err(self.error(
                        &format!("{path}.weights"),
                        "are all 0: no category could count",
                    ));
                }
                Ok(())
            }
        }
    }

    /// A threshold: as written (finite), or the default (given on the native scale) on the
    /// arm's scale.
    fn threshold(
        &self,
        path: &str,
        key: &str,
        written: Option<f64>,
        default: f64,
        native: Scale,
        scale: Scale,
    ) -> Result<f64, InputError> {
        match written {
            Some(x) if !x.is_finite() => Err(self.error(
                &format!("{path}.{key}"),
                format!("must be a number, not {x}"),
            )),
            // A threshold off the arm's scale would gate everything or nothing, silently.
            // 0.75 on the anchor scale is someone thinking on the float scale: read as 0.75 of
            // 100, it would make every finding above 0 pass.
            Some(x) if scale == Scale::Anchor && x > 0.0 && x < 1.0 => Err(self
                .error(
                    &format!("{path}.{key}"),
                    format!(
                        "{x} is on the float scale, but this arm reads confidences on the anchor scale (0 to 100): did you mean {}?",
                        Scale::Anchor.convert(x, Scale::Float)
                    ),
                )
                .hint("anchor-scale thresholds are 0 to 100 (the anchors are 0, 25, 50, 75, 100); a threshold in [0, 1] belongs to scale = \"float\"")),
            Some(x) if !(0.0..=scale.convert(1.0, Scale::Float)).contains(&x) => Err(self.error(
                &format!("{path}.{key}"),
                format!(
                    "{x} is off the {} scale: a threshold is in [0, {}]",
                    match scale {
                        Scale::Anchor => "anchor",
                        Scale::Float => "float",
                    },
                    scale.convert(1.0, Scale::Float)
                ),
            )),
            Some(x) => Ok(x),
            None => Ok(scale.convert(default, native)),
        }
    }

    /// An arm's `[review]` table, resolved with its policy's defaults.
    fn review(&self, path: &str, raw: RawReview, mode: Mode) -> Result<ReviewPolicy, InputError> {
        self.refuse_other_mode(path, &raw, mode)?;
        match raw {
            RawReview::Anchored(r) => {
                let native = Scale::Anchor;
                let scale = r.scale.unwrap_or(native);
                let (surface, actionable, escape) = match mode {
                    Mode::Doc => (50.0, 75.0, None),
                    Mode::Code => (75.0, 75.0, Some(50.0)),
                };
                let num = |key: &str, written: Option<f64>, default: f64| {
                    self.threshold(path, key, written, default, native, scale)
                };
                let p0_escape = match (r.p0_escape, escape) {
                    (None, None) => None,
                    (written, default) => Some(num("p0_escape", written, default.unwrap_or(0.0))?),
                };
                Ok(ReviewPolicy::Anchored(Anchored {
                    scale,
                    surface_from: num("surface_from", r.surface_from, surface)?,
                    actionable_from: num("actionable_from", r.actionable_from, actionable)?,
                    p0_escape,
                    collapse: r.collapse.unwrap_or(true),
                    promotion: promotion(r.promotion, None, scale),
                    review_mode: r.review_mode.unwrap_or(ReviewMode::Interactive),
                    demote_reviewers: demote_reviewers(r.demote_reviewers),
                }))
            }
            RawReview::FloatGates(r) => {
                let native = Scale::Float;
                let scale = r.scale.unwrap_or(native);
                let num = |key: &str, written: Option<f64>, default: f64| {
                    self.threshold(path, key, written, default, native, scale)
                };
                let mut gates = [0.50, 0.60, 0.65, 0.75].map(|g| scale.convert(g, native));
                if let Some(g) = &r.gates {
                    for (i, (sev, written)) in
                        [("P0", g.P0), ("P1", g.P1), ("P2", g.P2), ("P3", g.P3)]
                            .into_iter()
                            .enumerate()
                    {
                        gates[i] = num(&format!("gates.{sev}"), written, gates[i])?;
                    }
                }
                let boost = match r.boost {
                    Some(b) => Some(num("boost", Some(b), 0.0)?),
                    None => None,
                };
                Ok(ReviewPolicy::FloatGates(FloatGates {
                    scale,
                    gates,
                    gate: num("gate", r.gate, 0.60)?,
                    p0_gate: num("p0_gate", r.p0_gate, 0.50)?,
                    fyi_floor: num("fyi_floor", r.fyi_floor, 0.40)?,
                    auto_apply_from: num("auto_apply_from", r.auto_apply_from, 0.85)?,
                    promotion: promotion(r.promotion, boost, scale),
                    review_mode: r.review_mode.unwrap_or(ReviewMode::Interactive),
                    demote_reviewers: demote_reviewers(r.demote_reviewers),
                }))
            }
        }
    }
}

impl Ctx<'_> {
    /// A key of the other mode's review would be read and ignored, silently: refused, as the
    /// code review controls are in doc mode.
    fn refuse_other_mode(&self, path: &str, raw: &RawReview, mode: Mode) -> Result<(), InputError> {
        let (review_mode, demote) = match raw {
            RawReview::Anchored(r) => (r.review_mode.is_some(), r.demote_reviewers.is_some()),
            RawReview::FloatGates(r) => (r.review_mode.is_some(), r.demote_reviewers.is_some()),
        };
        let written: Vec<(&str, &str)> = match (raw, mode) {
            (RawReview::FloatGates(r), Mode::Doc) => [
                (
                    r.gate.is_some(),
                    "gate",
                    "doc mode gates by severity: set gates.P0 … gates.P3",
                ),
                (
                    r.p0_gate.is_some(),
                    "p0_gate",
                    "doc mode gates by severity: set gates.P0",
                ),
            ]
            .into_iter()
            .filter(|(w, _, _)| *w)
            .map(|(_, k, h)| (k, h))
            .collect(),
            (RawReview::FloatGates(r), Mode::Code) => [
                (
                    r.gates.is_some(),
                    "gates",
                    "code mode gates every severity at `gate`, and P0 at `p0_gate`",
                ),
                (
                    r.fyi_floor.is_some(),
                    "fyi_floor",
                    "code mode has no FYI band: findings below `gate` are dropped",
                ),
            ]
            .into_iter()
            .filter(|(w, _, _)| *w)
            .map(|(_, k, h)| (k, h))
            .collect(),
            _ => Vec::new(),
        };
        let code_only = [
            (review_mode && mode == Mode::Doc, "review_mode"),
            (demote && mode == Mode::Doc, "demote_reviewers"),
        ];
        if let Some((key, hint)) = written.first() {
            let other = match mode {
                Mode::Doc => "code",
                Mode::Code => "doc",
            };
            return Err(self
                .error(
                    &format!("{path}.{key}"),
                    format!(
                        "is a {other}-mode key of float-gates, but mode is {}: it would be ignored",
                        mode.name()
                    ),
                )
                .hint(*hint));
        }
        if let Some((_, key)) = code_only.iter().find(|(w, _)| *w) {
            return Err(self
                .error(
                    &format!("{path}.{key}"),
                    "is a code review key, but mode is doc: it would be ignored",
                )
                .hint("review modes and demoted reviewers replay code review (mode = \"code\")"));
        }
        Ok(())
    }
}

/// `promotion = true` (the default: one step, or +0.10 on the float scale, or `boost`) or
/// `false`.
fn promotion(on: Option<bool>, boost: Option<f64>, scale: Scale) -> Promotion {
    match on {
        Some(false) => Promotion::None,
        _ => Promotion::Corroboration {
            boost: boost.unwrap_or_else(|| scale.convert(0.10, Scale::Float)),
        },
    }
}

fn demote_reviewers(written: Option<Vec<String>>) -> Vec<String> {
    written.unwrap_or_else(|| vec!["testing".to_string(), "maintainability".to_string()])
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod schema_tests;
