//! The experiment file, `experiment.toml` (docs/reference.md): typed, validated, with every default of
//! docs/guides/ab-rubric-change.md filled in. An unknown key anywhere is an error that names it and its line: a typo must
//! never fall back to a default silently.
//!
//! Thresholds are written in the units of the arm's confidence scale (0..100 for `anchor`,
//! 0..1 for `float`). Each policy's defaults are stated on its native scale (anchored: anchor,
//! float-gates: float) and converted (× or ÷ 100) when an arm declares the other scale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{backticked, mismatch, InputError};
use crate::stats::alpha::Level;
use crate::stats::bootstrap::MAX_REPLICATES;

/// Review corpora come from document review or code review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Doc,
    Code,
}

/// The confidence scale an arm's reviewers recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// A number in [0, 1].
    Float,
    /// An integer in {0, 25, 50, 75, 100}.
    Anchor,
}

impl Scale {
    /// Converts a threshold written on `from`'s units into this scale's units.
    fn convert(self, value: f64, from: Scale) -> f64 {
        match (from, self) {
            (Scale::Anchor, Scale::Float) => value / 100.0,
            (Scale::Float, Scale::Anchor) => value * 100.0,
            _ => value,
        }
    }

    /// The scale's "50": the cap for findings demoted by same-persona collapse.
    pub fn half(self) -> f64 {
        self.convert(50.0, Scale::Anchor)
    }

    /// The highest confidence on the scale.
    pub fn top(self) -> f64 {
        self.convert(100.0, Scale::Anchor)
    }
}

/// Code-review mode, which decides where demoted findings go (docs/guides/ab-rubric-change.md step 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewMode {
    Interactive,
    ReportOnly,
    Headless,
    Autofix,
}

/// When the validation pass runs (docs/guides/ab-rubric-change.md).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ValidationRun {
    #[default]
    Never,
    /// Where the measured pipeline runs it: headless, autofix, interactive file-tickets.
    Auto,
    Always,
}

/// Where interactive review sends actionable findings (docs/guides/ab-rubric-change.md; interactive only).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum InteractiveRoute {
    #[default]
    WalkThrough,
    BestJudgment,
    FileTickets,
    ReportOnly,
}

/// A PR skip condition (docs/guides/ab-rubric-change.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SkipRule {
    Closed,
    Draft,
    TrivialPattern,
    TrivialJudgment,
    Reviewed,
}

impl SkipRule {
    pub fn name(self) -> &'static str {
        match self {
            SkipRule::Closed => "closed",
            SkipRule::Draft => "draft",
            SkipRule::TrivialPattern => "trivial-pattern",
            SkipRule::TrivialJudgment => "trivial-judgment",
            SkipRule::Reviewed => "reviewed",
        }
    }
}

/// Lint-ignore suppression (docs/guides/ab-rubric-change.md).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum LintIgnore {
    #[default]
    Off,
    Suppress,
}

/// Code review's precision controls of one arm (docs/guides/ab-rubric-change.md), each off by default: the
/// validation pass, PR skip conditions and lint-ignore suppression.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Controls {
    pub validation: ValidationRun,
    pub validation_budget: usize,
    pub route: InteractiveRoute,
    pub skip: Vec<SkipRule>,
    pub lint_ignore: LintIgnore,
}

impl Default for Controls {
    fn default() -> Self {
        Controls::OFF
    }
}

impl Controls {
    /// Every control off.
    pub const OFF: Controls = Controls {
        validation: ValidationRun::Never,
        validation_budget: 15,
        route: InteractiveRoute::WalkThrough,
        skip: Vec::new(),
        lint_ignore: LintIgnore::Off,
    };

    /// Every control off, as in an experiment written before they existed.
    pub fn is_off(&self) -> bool {
        *self == Controls::default()
    }

    /// Whether the validation pass runs under `review_mode` (docs/guides/ab-rubric-change.md).
    pub fn validates(&self, review_mode: ReviewMode) -> bool {
        match self.validation {
            ValidationRun::Never => false,
            ValidationRun::Always => true,
            ValidationRun::Auto => match review_mode {
                ReviewMode::Headless | ReviewMode::Autofix => true,
                ReviewMode::Interactive => self.route == InteractiveRoute::FileTickets,
                ReviewMode::ReportOnly => false,
            },
        }
    }
}

/// What corroboration does to a confidence (docs/guides/ab-rubric-change.md step 5).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Promotion {
    /// Anchor scale: one step up 0 → 25 → 50 → 75 → 100. Float scale: + `boost`, capped at 1.
    Corroboration { boost: f64 },
    /// Corroboration is counted but raises nothing.
    None,
}

/// The synthesis policy of one arm, with every parameter resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "policy", rename_all = "kebab-case")]
pub enum ReviewPolicy {
    Anchored(Anchored),
    FloatGates(FloatGates),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Anchored {
    pub scale: Scale,
    pub surface_from: f64,
    pub actionable_from: f64,
    /// P0 findings at or above this surface as actionable even below `surface_from`.
    pub p0_escape: Option<f64>,
    /// Same-persona collapse (doc mode).
    pub collapse: bool,
    pub promotion: Promotion,
    pub review_mode: ReviewMode,
    pub demote_reviewers: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FloatGates {
    pub scale: Scale,
    /// Doc mode: per-severity gates P0..P3.
    pub gates: [f64; 4],
    /// Code mode: one gate, and the lower P0 gate.
    pub gate: f64,
    pub p0_gate: f64,
    /// Doc mode: manual findings at or above this go to FYI.
    pub fyi_floor: f64,
    pub auto_apply_from: f64,
    pub promotion: Promotion,
    pub review_mode: ReviewMode,
    pub demote_reviewers: Vec<String>,
}

impl ReviewPolicy {
    pub fn scale(&self) -> Scale {
        match self {
            ReviewPolicy::Anchored(a) => a.scale,
            ReviewPolicy::FloatGates(f) => f.scale,
        }
    }

    pub fn promotion(&self) -> Promotion {
        match self {
            ReviewPolicy::Anchored(a) => a.promotion,
            ReviewPolicy::FloatGates(f) => f.promotion,
        }
    }

    pub fn review_mode(&self) -> ReviewMode {
        match self {
            ReviewPolicy::Anchored(a) => a.review_mode,
            ReviewPolicy::FloatGates(f) => f.review_mode,
        }
    }

    pub fn demote_reviewers(&self) -> &[String] {
        match self {
            ReviewPolicy::Anchored(a) => &a.demote_reviewers,
            ReviewPolicy::FloatGates(f) => &f.demote_reviewers,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            ReviewPolicy::Anchored(_) => "anchored",
            ReviewPolicy::FloatGates(_) => "float-gates",
        }
    }

    /// Confidence at or above which an actionable `safe_auto` finding with a fix auto-applies.
    pub fn auto_apply_from(&self) -> f64 {
        match self {
            ReviewPolicy::Anchored(a) => a.scale.top(),
            ReviewPolicy::FloatGates(f) => f.auto_apply_from,
        }
    }
}

/// The confidence model of one arm for query replay (docs/guides/capacity-review.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "policy", rename_all = "kebab-case")]
pub enum ConfidencePolicy {
    FlatMean(FlatMean),
    CategoryMax(CategoryMax),
}

impl ConfidencePolicy {
    pub fn name(&self) -> &'static str {
        match self {
            ConfidencePolicy::FlatMean(_) => "flat-mean",
            ConfidencePolicy::CategoryMax(_) => "category-max",
        }
    }

    /// Below this the primary-phase confidence stops the query (no recovery).
    pub fn stop_threshold(&self) -> f64 {
        match self {
            ConfidencePolicy::FlatMean(f) => f.stop_threshold,
            ConfidencePolicy::CategoryMax(c) => c.stop_threshold,
        }
    }

    /// Below this (and not stopped) the recovery gate fires.
    pub fn recovery_threshold(&self) -> f64 {
        match self {
            ConfidencePolicy::FlatMean(f) => f.recovery_threshold,
            ConfidencePolicy::CategoryMax(c) => c.recovery_threshold,
        }
    }

    pub fn bands(&self) -> Bands {
        match self {
            ConfidencePolicy::FlatMean(f) => f.bands,
            ConfidencePolicy::CategoryMax(c) => c.bands,
        }
    }
}

/// The mean of the tools' scores, with a recovery gate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlatMean {
    /// Below this (and not stopped) the recovery gate fires.
    #[serde(default = "FlatMean::default_recovery")]
    pub recovery_threshold: f64,
    /// Below this the query stops, with no recovery.
    #[serde(default = "default_stop")]
    pub stop_threshold: f64,
    /// What each recovery attempt adds to the mean, as one more entry.
    #[serde(default = "FlatMean::default_entry")]
    pub recovery_entry_score: f64,
    #[serde(default)]
    pub bands: Bands,
}

impl FlatMean {
    fn default_recovery() -> f64 {
        0.7
    }
    fn default_entry() -> f64 {
        0.5
    }
}

impl Default for FlatMean {
    fn default() -> Self {
        FlatMean {
            recovery_threshold: FlatMean::default_recovery(),
            stop_threshold: default_stop(),
            recovery_entry_score: FlatMean::default_entry(),
            bands: Bands::default(),
        }
    }
}

fn default_stop() -> f64 {
    0.2
}

/// How `base` is normalized: over the categories present, or over every weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Normalize {
    Present,
    All,
}

/// How the convergence bonus applies to `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BonusMode {
    Multiplicative,
    Additive,
}

/// Raw category weights; a table that names some categories keeps the defaults of the others.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Weights {
    /// The tools `find`, `grep` and `references`.
    pub search: f64,
    /// The tool `read`.
    pub read: f64,
    /// The tool `discovery`.
    pub discovery: f64,
    /// The tools `cmake` and `ctest`.
    pub verification: f64,
    /// The tool `git`.
    pub git: f64,
    /// The tool `gh`.
    pub ci: f64,
    /// Any other tool name.
    pub other: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            search: 2.5,
            read: 3.0,
            discovery: 1.0,
            verification: 1.5,
            git: 1.0,
            ci: 1.0,
            other: 0.5,
        }
    }
}

impl Weights {
    /// In [`crate::corpus::queries::Category::ALL`] order.
    pub fn as_array(&self) -> [f64; 7] {
        [
            self.search,
            self.read,
            self.discovery,
            self.verification,
            self.git,
            self.ci,
            self.other,
        ]
    }
}

/// Lower bounds of the confidence bands; below `weak` is `failed`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Bands {
    /// From here up: strong.
    pub strong: f64,
    /// From here up to `strong`: adequate.
    pub adequate: f64,
    /// From here up to `adequate`: weak; below it, failed.
    pub weak: f64,
}

impl Default for Bands {
    fn default() -> Self {
        Bands {
            strong: 0.75,
            adequate: 0.55,
            weak: 0.25,
        }
    }
}

/// The best evidence per category, weighted, with a bonus when categories converge on one
/// target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CategoryMax {
    /// Below this (and not stopped) the recovery gate fires.
    #[serde(default = "CategoryMax::default_recovery")]
    pub recovery_threshold: f64,
    /// Below this the query stops, with no recovery.
    #[serde(default = "default_stop")]
    pub stop_threshold: f64,
    #[serde(default)]
    pub weights: Weights,
    #[serde(default = "CategoryMax::default_normalize")]
    pub normalize: Normalize,
    #[serde(default = "CategoryMax::default_bonus_mode")]
    pub bonus_mode: BonusMode,
    /// The convergence bonus when two categories confirm one target.
    #[serde(default = "CategoryMax::default_bonus_two")]
    pub bonus_two: f64,
    /// The convergence bonus when three or more categories confirm one target.
    #[serde(default = "CategoryMax::default_bonus_three")]
    pub bonus_three: f64,
    /// The bonus when a search and a read confirm a common target.
    #[serde(default = "CategoryMax::default_bonus_search_read")]
    pub bonus_search_read: f64,
    #[serde(default)]
    pub bands: Bands,
}

impl CategoryMax {
    fn default_recovery() -> f64 {
        0.5
    }
    fn default_normalize() -> Normalize {
        Normalize::Present
    }
    fn default_bonus_mode() -> BonusMode {
        BonusMode::Multiplicative
    }
    fn default_bonus_two() -> f64 {
        0.10
    }
    fn default_bonus_three() -> f64 {
        0.20
    }
    fn default_bonus_search_read() -> f64 {
        0.05
    }
}

impl Default for CategoryMax {
    fn default() -> Self {
        CategoryMax {
            recovery_threshold: CategoryMax::default_recovery(),
            stop_threshold: default_stop(),
            weights: Weights::default(),
            normalize: CategoryMax::default_normalize(),
            bonus_mode: CategoryMax::default_bonus_mode(),
            bonus_two: CategoryMax::default_bonus_two(),
            bonus_three: CategoryMax::default_bonus_three(),
            bonus_search_read: CategoryMax::default_bonus_search_read(),
            bands: Bands::default(),
        }
    }
}

/// The trust gate's thresholds (docs/guides/trust.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trust {
    /// Krippendorff's α among the judges must reach this. His own guideline asks 0.667 for
    /// tentative conclusions and 0.8 for reliable ones.
    #[serde(default = "Trust::default_irr_floor")]
    pub irr_floor: f64,
    /// No item's judges may differ by more than this on any dimension.
    #[serde(default = "Trust::default_spread_ceiling")]
    pub spread_ceiling: f64,
    /// Judges that must answer every item (a failed judge is dropped, never scored 0).
    #[serde(default = "Trust::default_min_survivors")]
    pub min_survivors: usize,
    #[serde(default = "Trust::default_level")]
    pub level: Level,
    /// Weights of the judges' dimensions in the composite; empty: equal weights.
    #[serde(default)]
    pub dimension_weights: BTreeMap<String, f64>,
}

impl Trust {
    fn default_irr_floor() -> f64 {
        0.2
    }
    fn default_spread_ceiling() -> f64 {
        0.5
    }
    fn default_min_survivors() -> usize {
        3
    }
    fn default_level() -> Level {
        Level::Interval
    }
}

impl Default for Trust {
    fn default() -> Self {
        Trust {
            irr_floor: Trust::default_irr_floor(),
            spread_ceiling: Trust::default_spread_ceiling(),
            min_survivors: Trust::default_min_survivors(),
            level: Trust::default_level(),
            dimension_weights: BTreeMap::new(),
        }
    }
}

/// The `[scores]` table: how a corpus's imported scores are read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scores {
    /// The scorers that are judges (LLM graders, human raters, each scoring on [0, 1]): they
    /// form the panel the trust verdict checks, and their deltas and means are withheld when
    /// the panel is not trusted. Default: none (every scorer is mechanical, no trust verdict).
    #[serde(default)]
    pub judges: Vec<String>,
}

impl Scores {
    fn is_default(&self) -> bool {
        self.judges.is_empty()
    }
}

/// One arm: which recorded outputs it reads and how it synthesizes them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Arm {
    pub name: String,
    /// The recorded `arm` label it reads.
    pub source: String,
    pub review: ReviewPolicy,
    /// The query-replay model; when the arm names none, flat-mean for the baseline and
    /// category-max for the treatment.
    pub confidence: ConfidencePolicy,
    /// Code review's precision controls, from the arm's review table (docs/guides/ab-rubric-change.md).
    #[serde(skip_serializing_if = "Controls::is_off")]
    pub controls: Controls,
}

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
}

/// One metric of the decision and how it must move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Wanted {
    pub metric: String,
    pub want: Want,
}

/// How a decision metric must move: `increase`/`decrease` significantly (the change the
/// treatment is for), or `no-decrease`/`no-increase`: not significantly the other way (a guard).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Want {
    Increase,
    Decrease,
    NoDecrease,
    NoIncrease,
}

impl Want {
    /// Whether the metric must move (not only be guarded).
    pub fn must_move(self) -> bool {
        matches!(self, Want::Increase | Want::Decrease)
    }

    /// The sign of the change that is good: +1 for up, −1 for down.
    pub fn good_sign(self) -> f64 {
        match self {
            Want::Increase | Want::NoDecrease => 1.0,
            Want::Decrease | Want::NoIncrease => -1.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Want::Increase => "increase",
            Want::Decrease => "decrease",
            Want::NoDecrease => "no-decrease",
            Want::NoIncrease => "no-increase",
        }
    }
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
                Some(Wanted {
                    metric: name.clone(),
                    want: match better {
                        crate::replay::Better::Higher => Want::Increase,
                        crate::replay::Better::Lower => Want::Decrease,
                    },
                })
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
    /// What "better" means: each metric (a compared metric, `lift`, or an imported scorer)
    /// with `increase`, `decrease`, `no-decrease` or `no-increase`.
    pub decision: Option<std::collections::BTreeMap<String, Want>>,
    /// The CI gate policy (docs/guides/ci-gate.md).
    pub gate: Option<crate::gate::policy::RawPolicy>,
    /// How to record the corpus live (docs/guides/live-collection.md).
    pub collect: Option<crate::collect::plan::RawCollect>,
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
        /// Default 75.
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

/// Reads `text` as `T`, naming the dotted path, line and problem of the first thing serde
/// refuses: an unknown key (with the keys known there), a missing one, a value of the wrong
/// type or not among the choices.
fn read_toml<T: serde::de::DeserializeOwned>(ctx: &Ctx<'_>) -> Result<T, InputError> {
    let de = toml::de::Deserializer::parse(ctx.text).map_err(|e| {
        let err = InputError::toml(ctx.name, ctx.text, &e);
        InputError {
            problem: format!("not valid TOML: {}", err.problem),
            ..err
        }
    })?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        // serde's path, as the dotted keys this file's errors use: `check[0]` is `check.0`,
        // and a position wrapper (`Spanned`) is no key.
        let path = e.path().to_string();
        let path = path
            .split('.')
            .filter(|p| !p.is_empty() && !p.starts_with("$__serde_spanned"))
            .map(|p| p.replace('[', ".").replace(']', ""))
            .collect::<Vec<_>>()
            .join(".");
        let inner = e.into_inner();
        ctx.serde_error(&path, inner.message().trim_end(), inner.span())
    })
}

/// Reads a whole TOML file `name` as `T`, with `read_toml`'s messages: for files other than
/// the experiment that are read through serde-derived raw types (`gate.toml`).
pub fn read_toml_file<T: serde::de::DeserializeOwned>(
    name: &str,
    text: &str,
) -> Result<T, InputError> {
    read_toml(&Ctx {
        name,
        text,
        spans: std::cell::OnceCell::new(),
    })
}

/// "unknown key `polciy` — did you mean `policy`?": a key no table of the file takes, with the
/// known key it most likely meant.
pub(crate) fn unknown_key(key: &str, near: Option<&str>) -> String {
    match near {
        Some(n) => format!("unknown key `{key}` — did you mean `{n}`?"),
        None => format!("unknown key `{key}`"),
    }
}

/// The backquoted words of a serde message: `a`, `b` → [a, b].
/// Whether serde's description of a refused value (`string "high"`, `integer `5``,
/// `floating point `1.5``, `boolean `true``) is this TOML value.
fn unexpected_is(got: &str, v: &toml::de::DeValue<'_>) -> bool {
    use toml::de::DeValue;
    let literal = |prefix: &str| {
        got.strip_prefix(prefix)
            .map(|rest| rest.trim_matches(|c| c == '`' || c == '"').to_string())
    };
    match v {
        DeValue::String(s) => literal("string ").is_some_and(|l| l == s.as_ref()),
        DeValue::Integer(i) => literal("integer ").is_some_and(|l| l == i.to_string()),
        DeValue::Float(f) => literal("floating point ").is_some_and(|l| l == f.to_string()),
        DeValue::Boolean(b) => literal("boolean ").is_some_and(|l| l == b.to_string()),
        _ => false,
    }
}

/// Parses an experiment file; `path` is used for messages and to resolve `corpus`.
pub fn parse(path: &Path, text: &str) -> Result<Experiment, InputError> {
    let name = path.display().to_string();
    let ctx = Ctx {
        name: &name,
        text,
        spans: std::cell::OnceCell::new(),
    };
    let raw: RawExperiment = read_toml(&ctx)?;

    let exp_name = raw.name.unwrap_or_else(|| {
        path.parent()
            .and_then(|p| p.file_name())
            .map_or("experiment".into(), |n| n.to_string_lossy().into_owned())
    });
    let mode = raw.mode.unwrap_or(Mode::Doc);
    let base = path.parent().unwrap_or(Path::new("."));
    // `corpus = "."` names the experiment's own folder: keep paths in messages free of `/./`.
    let corpus: PathBuf = base
        .join(raw.corpus.as_deref().unwrap_or("."))
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    // An experiment in the current folder naming its own folder: `.`, not the empty path.
    let corpus = if corpus.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        corpus
    };
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
    let trust = raw.trust.unwrap_or_default();
    if !trust.irr_floor.is_finite() {
        return Err(ctx.error("trust.irr_floor", "must be a finite number"));
    }
    if !(trust.spread_ceiling.is_finite() && trust.spread_ceiling >= 0.0) {
        return Err(ctx.error(
            "trust.spread_ceiling",
            format!("{} must be a finite number ≥ 0", trust.spread_ceiling),
        ));
    }
    if let Some((dim, w)) = trust
        .dimension_weights
        .iter()
        .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
    {
        return Err(ctx.error(
            &format!("trust.dimension_weights.{dim}"),
            format!("{w} must be a finite number ≥ 0"),
        ));
    }
    let primary = raw.primary.unwrap_or_default();
    for (i, name) in primary.iter().enumerate() {
        let at = format!("primary.{i}");
        if crate::replay::compared_named(name).is_none() {
            let names: Vec<&str> = crate::replay::compared().iter().map(|c| c.name).collect();
            let near = crate::text::nearest(name, &names)
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            return Err(ctx
                .error(&at, format!("`{name}` is not a compared metric{near}"))
                .hint(format!(
                    "primary metrics are names of review.delta or queries.delta: {}",
                    names.join(", ")
                )));
        }
        if primary[..i].contains(name) {
            return Err(ctx.error(&at, format!("`{name}` is named twice")));
        }
    }
    let primary_line = (!primary.is_empty())
        .then(|| ctx.line_of("primary"))
        .flatten();
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
    let decision = ctx.decision(raw.decision)?;
    let decision_line = (!decision.is_empty())
        .then(|| ctx.line_of("decision"))
        .flatten();
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
        collect: raw
            .collect
            .map(|c| crate::collect::plan::in_experiment(path, text, c))
            .transpose()?,
        primary,
        primary_line,
        decision,
        decision_line,
    })
}

/// The byte offset where `parts` is set in `table`: its last key (or array element).
fn key_offset(table: &toml::de::DeTable, parts: &[&str]) -> Option<usize> {
    let (first, rest) = parts.split_first()?;
    let (key, value) = table.iter().find(|(k, _)| k.get_ref() == first)?;
    if rest.is_empty() {
        return Some(key.span().start);
    }
    value_offset(value.get_ref(), rest)
}

fn value_offset(value: &toml::de::DeValue, parts: &[&str]) -> Option<usize> {
    use toml::de::DeValue;
    match value {
        DeValue::Table(table) => key_offset(table, parts),
        DeValue::Array(items) => {
            let (first, rest) = parts.split_first()?;
            let item = items.get(first.parse::<usize>().ok()?)?;
            if rest.is_empty() {
                Some(item.span().start)
            } else {
                value_offset(item.get_ref(), rest)
            }
        }
        _ => None,
    }
}

struct Ctx<'a> {
    name: &'a str,
    text: &'a str,
    /// The document with the position of every key, to place an error on its line; parsed
    /// only when an error needs a line.
    spans: std::cell::OnceCell<Option<toml::Spanned<toml::de::DeTable<'a>>>>,
}

impl Ctx<'_> {
    /// The line where the dotted `path` (`arms.treatment.review.policy`) is set: the position
    /// of its last key, found by walking the document table by table, so a key is found in its
    /// own table and not in the first table that has a key of that name. `None` when the path
    /// is not in the file (a missing key is then placed on its table).
    fn line_of(&self, path: &str) -> Option<u64> {
        let parts: Vec<&str> = path.split('.').collect();
        let spans = self
            .spans
            .get_or_init(|| toml::de::DeTable::parse(self.text).ok());
        let offset = key_offset(spans.as_ref()?.get_ref(), &parts)?;
        Some(crate::error::line_at(self.text, offset))
    }

    fn error(&self, path: &str, problem: impl Into<String>) -> InputError {
        let e = InputError::new(self.name, problem).field(format!("`{path}`"));
        // A key inside an inline table (`weights = { reads = 2 }`) sits on its parent's line.
        let mut at = Some(path);
        let mut line = None;
        while let (Some(p), None) = (at, line) {
            line = self.line_of(p);
            at = p.rsplit_once('.').map(|(parent, _)| parent);
        }
        match line {
            Some(l) => e.at_line(l),
            None => e,
        }
    }

    /// The table at the dotted `path` (the document's top for the empty path), as written.
    fn table_at(&self, path: &str) -> Option<&toml::de::DeTable<'_>> {
        let spans = self
            .spans
            .get_or_init(|| toml::de::DeTable::parse(self.text).ok());
        let mut table = spans.as_ref()?.get_ref();
        for part in path.split('.').filter(|p| !p.is_empty()) {
            match table.iter().find(|(k, _)| k.get_ref() == part)?.1.get_ref() {
                toml::de::DeValue::Table(t) => table = t,
                _ => return None,
            }
        }
        Some(table)
    }

    /// The dotted path of the first key, at or below the table at `path` and breadth first,
    /// for which `hit(key, value)` holds.
    fn find(
        &self,
        path: &str,
        hit: &dyn Fn(&str, &toml::de::DeValue<'_>) -> bool,
    ) -> Option<String> {
        use toml::de::DeValue;
        let mut queue = vec![(path.to_string(), self.table_at(path)?)];
        while !queue.is_empty() {
            let mut next = Vec::new();
            for (at, t) in queue {
                for (k, v) in t.iter() {
                    let here = if at.is_empty() {
                        k.get_ref().to_string()
                    } else {
                        format!("{at}.{}", k.get_ref())
                    };
                    if hit(k.get_ref(), v.get_ref()) {
                        return Some(here);
                    }
                    // A value in an array (`skip = ["stale"]`): the key holding it.
                    if let DeValue::Array(items) = v.get_ref() {
                        if let Some(i) = items.iter().position(|x| hit(k.get_ref(), x.get_ref())) {
                            return Some(format!("{here}.{i}"));
                        }
                    }
                    if let DeValue::Table(inner) = v.get_ref() {
                        next.push((here, inner));
                    }
                }
            }
            queue = next;
        }
        None
    }

    /// What serde refused at `path`, in the words of this file's other errors.
    fn serde_error(
        &self,
        path: &str,
        message: &str,
        span: Option<std::ops::Range<usize>>,
    ) -> InputError {
        let join = |key: &str| {
            if path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            }
        };
        let located = |e: InputError| match (e.line, span.clone()) {
            (None, Some(s)) => e.at_line(crate::error::line_at(self.text, s.start)),
            _ => e,
        };
        if let Some(rest) = message.strip_prefix("unknown field `") {
            let (key, expected) = rest.split_once('`').unwrap_or((rest, ""));
            let known = backticked(expected);
            // The path ends at the key, or, inside a `policy`-tagged table (read as a whole),
            // at the table: then the key is found below it.
            let field = if path.rsplit('.').next() == Some(key) {
                path.to_string()
            } else {
                self.find(path, &|k, _| k == key)
                    .unwrap_or_else(|| join(key))
            };
            let e = self.error(&field, unknown_key(key, crate::text::nearest(key, &known)));
            return located(if known.is_empty() {
                e.hint("this table takes no keys")
            } else {
                e.hint(format!("known keys here: {}", known.join(", ")))
            });
        }
        if let Some(rest) = message.strip_prefix("missing field `") {
            let key = rest.split('`').next().unwrap_or(rest);
            // A misspelt required key is reported as what it is, not as the key it meant being
            // missing (`polciy = "anchored"` in a table that must say `policy`).
            if let Some(typo) = self.key_near(path, key) {
                let field = join(&typo);
                return self.error(&field, unknown_key(&typo, Some(key)));
            }
            let e = self.error(&join(key), "is missing");
            return located(match key {
                "arms" | "baseline" | "treatment" => {
                    e.hint("an experiment has exactly two arms, [arms.baseline] and [arms.treatment]")
                }
                "policy" => e.hint("policy = \"anchored\" or \"float-gates\" under [review]; \"flat-mean\" or \"category-max\" under [confidence]"),
                _ => e,
            });
        }
        if let Some(rest) = message.strip_prefix("unknown variant `") {
            let (value, expected) = rest.split_once('`').unwrap_or((rest, ""));
            // Inside a `policy`-tagged table (read as a whole) the path ends at the table: the
            // field is the key below it that holds the value (`policy` itself, or `normalize`).
            let field = self
                .find(path, &|_, v| v.as_str() == Some(value))
                .filter(|f| f != path)
                .unwrap_or_else(|| path.to_string());
            return located(self.error(
                &field,
                format!(
                    "`{value}` is not one of {}",
                    backticked(expected).join(", ")
                ),
            ));
        }
        // "invalid type: string \"x\", expected a boolean" → "must be a boolean, not string "x""
        let problem = match mismatch(message) {
            Some((got, want)) => {
                let want = match want {
                    "u64" | "usize" | "u32" => "a non-negative integer",
                    "i64" => "an integer",
                    "f64" => "a number",
                    other => other,
                };
                format!("must be {want}, not {got}")
            }
            None => message.to_string(),
        };
        // Inside a tagged table, the field is the key below it holding the refused value.
        let field = mismatch(message)
            .and_then(|(got, _)| self.find(path, &|_, v| unexpected_is(got, v)))
            .unwrap_or_else(|| path.to_string());
        located(self.error(if field.is_empty() { "(top)" } else { &field }, problem))
    }

    /// The `[decision]` table, the metrics that must move first (each group in name order). A
    /// name of the catalogue or `lift` is checked here; any other may be an imported scorer,
    /// which only the corpus can tell, so the corpus loader checks it. A decision needs one
    /// metric that must move: guards alone would call a change that moved nothing "better".
    fn decision(
        &self,
        raw: Option<std::collections::BTreeMap<String, Want>>,
    ) -> Result<Vec<Wanted>, InputError> {
        let Some(raw) = raw else {
            return Ok(Vec::new());
        };
        if raw.is_empty() {
            return Err(self
                .error("decision", "names no metric")
                .hint("name what must change, e.g. precision = \"increase\"; or drop the table"));
        }
        if !raw.values().any(|w| w.must_move()) {
            return Err(self
                .error("decision", "names no metric that must increase or decrease: guards alone (no-decrease, no-increase) would call a change that moved nothing better")
                .hint("name the metric the treatment is for, e.g. precision = \"increase\""));
        }
        let mut out: Vec<Wanted> = raw
            .into_iter()
            .map(|(metric, want)| Wanted { metric, want })
            .collect();
        out.sort_by_key(|w| !w.want.must_move());
        Ok(out)
    }

    /// A key of the table at `path` that is not `key` but close enough to be its misspelling.
    fn key_near(&self, path: &str, key: &str) -> Option<String> {
        self.table_at(path)?
            .iter()
            .map(|(k, _)| k.get_ref())
            .find(|k| *k != key && crate::text::nearest(k, &[key]).is_some())
            .map(|k| k.to_string())
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
        Ok(Arm {
            name: arm_name.to_string(),
            source: raw.source.unwrap_or_else(|| arm_name.to_string()),
            review,
            confidence,
            controls,
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
            Some(x) => Ok(x),
            None => Ok(scale.convert(default, native)),
        }
    }

    /// An arm's `[review]` table, resolved with its policy's defaults.
    fn review(&self, path: &str, raw: RawReview, mode: Mode) -> Result<ReviewPolicy, InputError> {
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
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Experiment, InputError> {
        parse(Path::new("corpora/x/experiment.toml"), text)
    }

    const EXAMPLE: &str = r#"
name = "doc-review-anchors"
mode = "doc"
corpus = "."
seed = 20260421
bootstrap = 2000

[arms.baseline]
source = "baseline"
[arms.baseline.review]
policy = "float-gates"
[arms.baseline.confidence]
policy = "flat-mean"

[arms.treatment]
source = "treatment"
[arms.treatment.review]
policy = "anchored"
[arms.treatment.confidence]
policy = "category-max"

[trust]
irr_floor = 0.2
spread_ceiling = 0.5
min_survivors = 3
level = "interval"
dimension_weights = {}
"#;

    #[test]
    fn the_spec_example_parses_with_every_default() {
        let e = parse_str(EXAMPLE).unwrap();
        assert_eq!(e.name, "doc-review-anchors");
        assert_eq!(e.corpus, Path::new("corpora/x"));
        // Run from the experiment's own folder, `corpus = "."` is that folder, not the empty
        // path (which "does not exist").
        let here = parse(Path::new("experiment.toml"), EXAMPLE).unwrap();
        assert_eq!(here.corpus, Path::new("."));
        assert!(here.corpus.is_dir());
        assert_eq!((e.seed, e.bootstrap), (20260421, 2000));
        let ReviewPolicy::FloatGates(f) = &e.baseline.review else {
            panic!()
        };
        assert_eq!(f.scale, Scale::Float);
        assert_eq!(f.gates, [0.50, 0.60, 0.65, 0.75]);
        assert_eq!(
            (f.gate, f.p0_gate, f.fyi_floor, f.auto_apply_from),
            (0.60, 0.50, 0.40, 0.85)
        );
        assert_eq!(f.promotion, Promotion::Corroboration { boost: 0.10 });
        let ReviewPolicy::Anchored(a) = &e.treatment.review else {
            panic!()
        };
        assert_eq!(a.scale, Scale::Anchor);
        assert_eq!(
            (a.surface_from, a.actionable_from, a.p0_escape),
            (50.0, 75.0, None)
        );
        assert!(a.collapse);
        assert_eq!(a.demote_reviewers, ["testing", "maintainability"]);
        let ConfidencePolicy::FlatMean(fm) = &e.baseline.confidence else {
            panic!()
        };
        assert_eq!(
            (
                fm.recovery_threshold,
                fm.stop_threshold,
                fm.recovery_entry_score
            ),
            (0.7, 0.2, 0.5)
        );
        let ConfidencePolicy::CategoryMax(cm) = &e.treatment.confidence else {
            panic!()
        };
        assert_eq!(cm.recovery_threshold, 0.5);
        assert_eq!(cm.weights.read, 3.0);
        assert_eq!(cm.weights.as_array().iter().sum::<f64>(), 10.5);
        assert_eq!(
            (cm.normalize, cm.bonus_mode),
            (Normalize::Present, BonusMode::Multiplicative)
        );
        assert_eq!(cm.bands, Bands::default());
        assert_eq!(e.trust, Trust::default());
    }

    #[test]
    fn code_mode_anchored_defaults_and_overrides() {
        let text = EXAMPLE
            .replace("mode = \"doc\"", "mode = \"code\"")
            .replace(
                "policy = \"anchored\"",
                "policy = \"anchored\"\nsurface_from = 50\nreview_mode = \"headless\"",
            );
        let e = parse_str(&text).unwrap();
        let ReviewPolicy::Anchored(a) = &e.treatment.review else {
            panic!()
        };
        assert_eq!(
            (a.surface_from, a.actionable_from, a.p0_escape),
            (50.0, 75.0, Some(50.0))
        );
        assert_eq!(a.review_mode, ReviewMode::Headless);
    }

    /// docs/guides/ab-rubric-change.md's arm parameters: off by default, read under either policy, refused where
    /// they cannot apply.
    #[test]
    fn precision_controls_are_off_by_default_and_checked() {
        let code = EXAMPLE.replace("mode = \"doc\"", "mode = \"code\"");
        let e = parse_str(&code).unwrap();
        assert!(e.baseline.controls.is_off() && e.treatment.controls.is_off());
        assert_eq!(e.treatment.controls.validation_budget, 15);
        let bundle = code.replace(
            "policy = \"anchored\"",
            "policy = \"anchored\"\nreview_mode = \"headless\"\nvalidation = \"auto\"\nvalidation_budget = 3\nskip = [\"closed\", \"trivial-pattern\", \"reviewed\"]\nlint_ignore = \"suppress\"",
        );
        let c = parse_str(&bundle).unwrap().treatment.controls;
        assert_eq!(c.validation, ValidationRun::Auto);
        assert_eq!(c.validation_budget, 3);
        assert_eq!(
            c.skip,
            [
                SkipRule::Closed,
                SkipRule::TrivialPattern,
                SkipRule::Reviewed
            ]
        );
        assert_eq!(c.lint_ignore, LintIgnore::Suppress);
        // Under the float-gates policy too, with an interactive route.
        let float = code.replace(
            "policy = \"float-gates\"",
            "policy = \"float-gates\"\nvalidation = \"always\"\nroute = \"file-tickets\"",
        );
        let c = parse_str(&float).unwrap().baseline.controls;
        assert_eq!(
            (c.validation, c.route),
            (ValidationRun::Always, InteractiveRoute::FileTickets)
        );

        for (text, field, problem) in [
            (
                EXAMPLE.replace(
                    "policy = \"anchored\"",
                    "policy = \"anchored\"\nvalidation = \"auto\"",
                ),
                "`arms.treatment.review.validation`",
                "mode is doc",
            ),
            (
                code.replace(
                    "policy = \"anchored\"",
                    "policy = \"anchored\"\nreview_mode = \"headless\"\nroute = \"file-tickets\"",
                ),
                "`arms.treatment.review.route`",
                "interactive review only",
            ),
            (
                code.replace(
                    "policy = \"anchored\"",
                    "policy = \"anchored\"\nvalidation_budget = 0",
                ),
                "`arms.treatment.review.validation_budget`",
                "1 or more",
            ),
            (
                code.replace(
                    "policy = \"anchored\"",
                    "policy = \"anchored\"\nskip = [\"closed\", \"closed\"]",
                ),
                "`arms.treatment.review.skip`",
                "listed twice",
            ),
            (
                code.replace(
                    "policy = \"anchored\"",
                    "policy = \"anchored\"\nskip = [\"stale\"]",
                ),
                "`arms.treatment.review.skip.0`",
                "is not one of closed, draft, trivial-pattern, trivial-judgment, reviewed",
            ),
        ] {
            let e = parse_str(&text).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{e}");
            assert!(e.problem.contains(problem), "{e}");
            assert!(e.line.is_some(), "{e}");
        }
    }

    /// When the validation pass runs (docs/guides/ab-rubric-change.md): `auto` where the measured pipeline runs it.
    #[test]
    fn auto_validation_runs_where_the_pipeline_runs_it() {
        let with = |validation, route| Controls {
            validation,
            route,
            ..Controls::default()
        };
        use InteractiveRoute::{BestJudgment, FileTickets, WalkThrough};
        use ReviewMode::{Autofix, Headless, Interactive};
        let auto = |mode, route| with(ValidationRun::Auto, route).validates(mode);
        assert!(auto(Headless, WalkThrough) && auto(Autofix, WalkThrough));
        assert!(auto(Interactive, FileTickets));
        for route in [WalkThrough, BestJudgment, InteractiveRoute::ReportOnly] {
            assert!(!auto(Interactive, route));
        }
        assert!(!auto(ReviewMode::ReportOnly, WalkThrough));
        for mode in [Interactive, ReviewMode::ReportOnly, Headless, Autofix] {
            assert!(with(ValidationRun::Always, WalkThrough).validates(mode));
            assert!(!with(ValidationRun::Never, FileTickets).validates(mode));
        }
    }

    #[test]
    fn thresholds_follow_the_declared_scale() {
        let text = EXAMPLE.replace(
            "policy = \"float-gates\"",
            "policy = \"float-gates\"\nscale = \"anchor\"",
        );
        let e = parse_str(&text).unwrap();
        let ReviewPolicy::FloatGates(f) = &e.baseline.review else {
            panic!()
        };
        assert_eq!(f.gates, [50.0, 60.0, 65.0, 75.0]);
        assert_eq!(f.promotion, Promotion::Corroboration { boost: 10.0 });
    }

    #[test]
    fn unknown_keys_are_named_with_their_line() {
        let text = EXAMPLE.replace(
            "policy = \"anchored\"",
            "policy = \"anchored\"\nsurface_form = 75",
        );
        let e = parse_str(&text).unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("`arms.treatment.review.surface_form`")
        );
        assert_eq!(e.line, Some(19)); // the example text opens with a blank line
        assert!(e.hint.unwrap().contains("surface_from"));

        let e = parse_str(&EXAMPLE.replace("irr_floor", "irr_flor")).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`trust.irr_flor`"));
        assert!(e.hint.unwrap().contains("irr_floor"));
        assert_eq!(e.line, Some(23));

        let e = parse_str(&format!("bootstrapp = 3\n{EXAMPLE}")).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("`bootstrapp`"), Some(1))
        );
        // After [trust] the same key belongs to that table, and is named there.
        let e = parse_str(&format!("{EXAMPLE}\nbootstrapp = 3\n")).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`trust.bootstrapp`"));
    }

    // Regression (issue 34): `polciy = "anchored"` was reported as "`…review.policy`: is
    // missing", which sends a user looking for a key they did write. Every table of the
    // experiment, its gate policy and its [collect] table name the misspelt key and the key it
    // most likely meant.
    #[test]
    fn a_misspelt_key_is_named_with_the_key_it_meant() {
        // The error and the line the misspelt key is on.
        let with = |from: &str, to: &str| {
            assert!(EXAMPLE.contains(from), "{from}");
            let text = EXAMPLE.replacen(from, to, 1);
            let typo = to
                .lines()
                .find(|l| !l.starts_with('[') && !from.contains(l.trim()))
                .unwrap();
            let line = text.lines().position(|l| l.starts_with(typo)).unwrap() as u64 + 1;
            (parse_str(&text).unwrap_err(), line)
        };
        let cases = [
            (
                with("policy = \"anchored\"", "polciy = \"anchored\""),
                "`arms.treatment.review.polciy`",
                "unknown key `polciy` — did you mean `policy`?",
            ),
            (
                with("policy = \"flat-mean\"", "polcy = \"flat-mean\""),
                "`arms.baseline.confidence.polcy`",
                "unknown key `polcy` — did you mean `policy`?",
            ),
            (
                with(
                    "policy = \"anchored\"",
                    "policy = \"anchored\"\nsurface_frm = 50",
                ),
                "`arms.treatment.review.surface_frm`",
                "unknown key `surface_frm` — did you mean `surface_from`?",
            ),
            (
                with("irr_floor", "irr_flor"),
                "`trust.irr_flor`",
                "unknown key `irr_flor` — did you mean `irr_floor`?",
            ),
            (
                with("seed = ", "sede = "),
                "`sede`",
                "unknown key `sede` — did you mean `seed`?",
            ),
            (
                with("[trust]", "[gate]\nrequire_trustworty = true\n[trust]"),
                "`gate.require_trustworty`",
                "unknown key `require_trustworty` — did you mean `require_trustworthy`?",
            ),
            (
                with(
                    "[trust]",
                    "[[gate.check]]\nmetirc = \"lift.value\"\nmin = 0\n[trust]",
                ),
                "`gate.check.0.metirc`",
                "unknown key `metirc` — did you mean `metric`?",
            ),
            (
                with(
                    "[trust]",
                    "[collect]\ncomand = [\"r\"]\ntargets = \"*.md\"\nreviewers = [\"a\"]\n[trust]",
                ),
                "`collect.comand`",
                "unknown key `comand` — did you mean `command`?",
            ),
        ];
        for ((e, line), field, problem) in cases {
            assert_eq!(e.field.as_deref(), Some(field), "{e}");
            assert_eq!(e.problem, problem, "{e}");
            assert_eq!(e.line, Some(line), "{e}");
        }
        // A key nothing is close to is still named, with the keys the table takes.
        let (e, _) = with("irr_floor", "banana");
        assert_eq!(e.problem, "unknown key `banana`");
        assert!(e.hint.unwrap().contains("irr_floor, spread_ceiling"));
    }

    #[test]
    fn bad_values_are_refused() {
        let e = parse_str(&EXAMPLE.replace("mode = \"doc\"", "mode = \"prose\"")).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`mode`"));
        assert!(e.problem.contains("`prose` is not one of doc, code"), "{e}");
        let e = parse_str(&EXAMPLE.replace("policy = \"anchored\"", "policy = \"anchor\""))
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`arms.treatment.review.policy`"));
        assert!(
            e.problem
                .contains("`anchor` is not one of anchored, float-gates"),
            "{e}"
        );
        let e = parse_str(&EXAMPLE.replace("seed = 20260421", "seed = \"x\"")).unwrap_err();
        assert!(e.problem.contains("must be a non-negative integer"), "{e}");
        let e = parse_str("name = [").unwrap_err();
        assert!(e.problem.starts_with("not valid TOML"));
        let e = parse_str("name = \"x\"\n").unwrap_err();
        assert!(e.problem.contains("is missing"));
    }

    #[test]
    fn trust_thresholds_are_checked() {
        let e = parse_str(&EXAMPLE.replace("spread_ceiling = 0.5", "spread_ceiling = -0.5"))
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`trust.spread_ceiling`"));
        assert!(e.line.is_some());
        let e = parse_str(&EXAMPLE.replace(
            "dimension_weights = {}",
            "dimension_weights = { real = -2.0 }",
        ))
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`trust.dimension_weights.real`"));
        let e = parse_str(&EXAMPLE.replace("min_survivors = 3", "min_survivors = 3\nfloor = 1"))
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`trust.floor`"));
    }

    #[test]
    fn both_arms_may_read_one_source() {
        let text = EXAMPLE.replace("source = \"treatment\"", "source = \"baseline\"");
        let e = parse_str(&text).unwrap();
        assert_eq!(e.baseline.source, e.treatment.source);
    }

    #[test]
    fn confidence_parameters_override_and_partial_tables_keep_defaults() {
        let text = EXAMPLE
            .replace(
                "policy = \"flat-mean\"",
                "policy = \"flat-mean\"\nrecovery_threshold = 0.6\nrecovery_entry_score = 0.4\nbands = { strong = 0.8 }",
            )
            .replace(
                "policy = \"category-max\"",
                "policy = \"category-max\"\nweights = { read = 4.0 }\nnormalize = \"all\"\nbonus_mode = \"additive\"\nbonus_two = 0.05\nstop_threshold = 0.1",
            );
        let e = parse_str(&text).unwrap();
        let ConfidencePolicy::FlatMean(f) = &e.baseline.confidence else {
            panic!()
        };
        assert_eq!((f.recovery_threshold, f.recovery_entry_score), (0.6, 0.4));
        assert_eq!(
            f.bands,
            Bands {
                strong: 0.8,
                ..Bands::default()
            }
        );
        let ConfidencePolicy::CategoryMax(c) = &e.treatment.confidence else {
            panic!()
        };
        assert_eq!(
            c.weights,
            Weights {
                read: 4.0,
                ..Weights::default()
            }
        );
        assert_eq!(
            (c.normalize, c.bonus_mode),
            (Normalize::All, BonusMode::Additive)
        );
        assert_eq!(
            (c.bonus_two, c.bonus_three, c.stop_threshold),
            (0.05, 0.20, 0.1)
        );
        // No [confidence] table: flat-mean for the baseline, category-max for the treatment.
        let bare = EXAMPLE
            .replace("[arms.baseline.confidence]\npolicy = \"flat-mean\"\n", "")
            .replace(
                "[arms.treatment.confidence]\npolicy = \"category-max\"\n",
                "",
            );
        let e = parse_str(&bare).unwrap();
        assert_eq!(
            e.baseline.confidence,
            ConfidencePolicy::FlatMean(FlatMean::default())
        );
        assert_eq!(
            e.treatment.confidence,
            ConfidencePolicy::CategoryMax(CategoryMax::default())
        );
    }

    #[test]
    fn bad_confidence_parameters_are_refused_on_their_line() {
        let cases = [
            (
                "recovery_threshold = 1.5",
                "`arms.treatment.confidence.recovery_threshold`",
                "not in [0, 1]",
            ),
            (
                "stop_threshold = 0.6",
                "`arms.treatment.confidence.stop_threshold`",
                "could never fire",
            ),
            (
                "weights = { reads = 2.0 }",
                "`arms.treatment.confidence.weights.reads`",
                "unknown key `reads` — did you mean `read`?",
            ),
            (
                "weights = { read = -1.0 }",
                "`arms.treatment.confidence.weights.read`",
                "≥ 0",
            ),
            (
                "normalize = \"some\"",
                "`arms.treatment.confidence.normalize`",
                "not one of present, all",
            ),
            (
                "bonus_two = \"high\"",
                "`arms.treatment.confidence.bonus_two`",
                "must be a number",
            ),
            (
                "bands = { strong = true }",
                "`arms.treatment.confidence.bands.strong`",
                "must be a number",
            ),
            (
                "bands = { weak = 0.9 }",
                "`arms.treatment.confidence.bands`",
                "must rise",
            ),
            (
                "recovery_entry_score = 0.5",
                "`arms.treatment.confidence.recovery_entry_score`",
                "unknown key `recovery_entry_score`",
            ),
        ];
        for (line, field, problem) in cases {
            let text = EXAMPLE.replace(
                "policy = \"category-max\"",
                &format!("policy = \"category-max\"\n{line}"),
            );
            let e = parse_str(&text).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{line}: {e}");
            assert!(e.problem.contains(problem), "{line}: {}", e.problem);
            assert!(e.line.is_some(), "{line}");
        }
    }
}

#[cfg(test)]
mod schema_tests {
    use super::*;
    use crate::schema_walk::{every_key_is_described, property};

    /// The JSON Schema is derived from the types the reader uses: every key the example
    /// experiments set (arms, review and confidence policies, trust, gate checks, collect) is a
    /// property at its place in it.
    #[test]
    fn the_derived_schema_describes_every_key_of_the_examples() {
        let schema = serde_json::to_value(schemars::schema_for!(RawExperiment)).unwrap();
        let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
        let mut seen = 0;
        for entry in std::fs::read_dir(&corpora).unwrap() {
            let path = entry.unwrap().path().join("experiment.toml");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            parse(&path, &text).unwrap();
            let table: toml::Table = text.parse().unwrap();
            let value = serde_json::to_value(table).unwrap();
            every_key_is_described(&value, &schema, &path.display().to_string(), &[]);
            seen += 1;
        }
        assert!(seen >= 4, "{seen} example experiments");
        // And a key the reader refuses is not in it.
        assert!(property(&schema, &schema, "arms").is_some());
        assert!(property(&schema, &schema, "bootstrapp").is_none());
    }
}
