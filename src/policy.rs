//! The vocabulary of a replay: the review mode and confidence scale, the review and confidence
//! policies with their thresholds, code review's precision controls, the trust gate's
//! thresholds, an arm, and what "better" means for the decision. The layers below the
//! experiment reader (the corpus readers, the replay, the trust verdict, the decision) speak in
//! these types; `config` reads them from `experiment.toml` (docs/reference.md).
//!
//! Thresholds are written in the units of the arm's confidence scale (0..100 for `anchor`,
//! 0..1 for `float`). Each policy's defaults are stated on its native scale (anchored: anchor,
//! float-gates: float) and converted (× or ÷ 100) when an arm declares the other scale.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::alpha::Level;

/// Review corpora come from document review or code review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Doc,
    Code,
}

impl Mode {
    /// `doc` or `code`, as the experiment writes it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Doc => "doc",
            Mode::Code => "code",
        }
    }
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
    pub fn convert(self, value: f64, from: Scale) -> f64 {
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

/// What of a review policy the steps before the gate read ([`ReviewPolicy::merging`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Merging {
    pub scale: Scale,
    pub promotion: Promotion,
    /// Same-persona collapse (anchored, doc mode).
    pub collapse: bool,
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

    /// What of the policy the steps before the gate read (the scale, the promotion and, for
    /// anchored, same-persona collapse): two policies equal in it merge a corpus alike and
    /// differ only in where the gate sends each merged finding.
    pub fn merging(&self) -> Merging {
        let collapse = match self {
            ReviewPolicy::Anchored(a) => a.collapse,
            ReviewPolicy::FloatGates(_) => false,
        };
        Merging {
            scale: self.scale(),
            promotion: self.promotion(),
            collapse,
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

    /// The policy without what decides after scoring (its stop and recovery thresholds and its
    /// bands): two policies with equal `scoring()` give every query the same scores, so a
    /// sweep over gates scores each query once (`replay::query::Scored`).
    pub fn scoring(&self) -> ConfidencePolicy {
        match self {
            ConfidencePolicy::FlatMean(f) => ConfidencePolicy::FlatMean(FlatMean {
                recovery_threshold: 0.0,
                stop_threshold: 0.0,
                bands: Bands::default(),
                ..f.clone()
            }),
            ConfidencePolicy::CategoryMax(c) => ConfidencePolicy::CategoryMax(CategoryMax {
                recovery_threshold: 0.0,
                stop_threshold: 0.0,
                bands: Bands::default(),
                ..c.clone()
            }),
        }
    }
}

/// The mean of the tools' scores, with a recovery gate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FlatMean {
    /// Below this (and not stopped) the recovery gate fires.
    pub recovery_threshold: f64,
    /// Below this the query stops, with no recovery.
    pub stop_threshold: f64,
    /// What each recovery attempt adds to the mean, as one more entry.
    pub recovery_entry_score: f64,
    pub bands: Bands,
}

/// A missing key takes its value from here.
impl Default for FlatMean {
    fn default() -> Self {
        FlatMean {
            recovery_threshold: 0.7,
            stop_threshold: STOP_THRESHOLD,
            recovery_entry_score: 0.5,
            bands: Bands::default(),
        }
    }
}

/// Both confidence models' default stop threshold.
const STOP_THRESHOLD: f64 = 0.2;

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
    /// In the order of the evidence categories (`corpus::queries::Category::ALL`).
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
#[serde(default, deny_unknown_fields)]
pub struct CategoryMax {
    /// Below this (and not stopped) the recovery gate fires.
    pub recovery_threshold: f64,
    /// Below this the query stops, with no recovery.
    pub stop_threshold: f64,
    pub weights: Weights,
    pub normalize: Normalize,
    pub bonus_mode: BonusMode,
    /// The convergence bonus when two categories confirm one target.
    pub bonus_two: f64,
    /// The convergence bonus when three or more categories confirm one target.
    pub bonus_three: f64,
    /// The bonus when a search and a read confirm a common target.
    pub bonus_search_read: f64,
    pub bands: Bands,
}

/// A missing key takes its value from here.
impl Default for CategoryMax {
    fn default() -> Self {
        CategoryMax {
            recovery_threshold: 0.5,
            stop_threshold: STOP_THRESHOLD,
            weights: Weights::default(),
            normalize: Normalize::Present,
            bonus_mode: BonusMode::Multiplicative,
            bonus_two: 0.10,
            bonus_three: 0.20,
            bonus_search_read: 0.05,
            bands: Bands::default(),
        }
    }
}

/// The trust gate's thresholds (docs/guides/trust.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Trust {
    /// Krippendorff's α among the judges must reach this. His own guideline asks 0.667 for
    /// tentative conclusions and 0.8 for reliable ones.
    pub irr_floor: f64,
    /// No item's judges may differ by more than this on any dimension.
    pub spread_ceiling: f64,
    /// Judges that must answer every item (a failed judge is dropped, never scored 0).
    pub min_survivors: usize,
    pub level: Level,
    /// Weights of the judges' dimensions in the composite; empty: equal weights.
    pub dimension_weights: BTreeMap<String, f64>,
    /// With human labels (labels.jsonl): `report` (default) reports the alt-test of each judge
    /// and of the panel; `require` also makes "the panel passes the alt-test" a trust check
    /// (docs/guides/judges-and-humans.md).
    pub alt_test: AltTestUse,
    /// How much worse than a human annotator a judge may be in the alt-test: 0.2 experts, 0.15
    /// skilled annotators, 0.1 crowd workers. Strictly between 0 and 1.
    pub alt_test_epsilon: f64,
    /// What a failed check of the bias audit does (docs/guides/trust.md, "The bias audit"):
    /// `withhold` (default) makes the verdict not trustworthy, `warn` makes it a caveat on the
    /// decision, `off` runs no audit.
    pub bias: BiasUse,
}

/// What a failed bias check does.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BiasUse {
    /// Trust check (5): the judges are not trusted, and what they measure is withheld.
    #[default]
    Withhold,
    /// A caveat on the decision: the figures stand.
    Warn,
    /// No audit.
    Off,
}

/// What the alt-test does in the trust verdict.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AltTestUse {
    /// Reported beside the verdict.
    #[default]
    Report,
    /// A fourth trust check: the panel passes the alt-test.
    Require,
}

/// A missing key takes its value from here.
impl Default for Trust {
    fn default() -> Self {
        Trust {
            irr_floor: 0.2,
            spread_ceiling: 0.5,
            min_survivors: 3,
            level: Level::Interval,
            dimension_weights: BTreeMap::new(),
            alt_test: AltTestUse::Report,
            alt_test_epsilon: 0.2,
            bias: BiasUse::Withhold,
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
    pub fn is_default(&self) -> bool {
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
    /// What the treatment changes besides its policy, declared so that the drift check does
    /// not call it harness drift (`[arms.treatment] differs`, docs/guides/live-collection.md):
    /// `model`, `command`, `files`, `calibench`, `env.NAME`. Empty for the baseline.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<String>,
}

impl Arm {
    /// The arm as `experiment.toml` writes it, every key with the value in effect (defaults
    /// filled in, thresholds on the arm's scale): `review.gates.P1`, `review.promotion`,
    /// `review.boost`, `review.validation_budget`, `confidence.recovery_threshold`. A key the
    /// policy does not have is absent; `boost` is absent when promotion is off.
    pub fn written(&self) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let mut review = match serde_json::to_value(&self.review) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let promotion = match &self.review {
            ReviewPolicy::Anchored(a) => a.promotion,
            ReviewPolicy::FloatGates(f) => f.promotion,
        };
        review.insert(
            "promotion".into(),
            Value::Bool(matches!(promotion, Promotion::Corroboration { .. })),
        );
        if let (ReviewPolicy::FloatGates(_), Promotion::Corroboration { boost }) =
            (&self.review, promotion)
        {
            review.insert("boost".into(), json!(boost));
        }
        if let ReviewPolicy::FloatGates(f) = &self.review {
            review.insert(
                "gates".into(),
                json!({"P0": f.gates[0], "P1": f.gates[1], "P2": f.gates[2], "P3": f.gates[3]}),
            );
        }
        if let Ok(Value::Object(controls)) = serde_json::to_value(&self.controls) {
            review.extend(controls);
        }
        json!({
            "source": self.source,
            "review": review,
            "confidence": self.confidence,
        })
    }
}

/// One metric of the decision and how it must move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Wanted {
    pub metric: String,
    pub want: Want,
    /// A guard's non-inferiority margin: it holds only when the 95% interval's bound on the
    /// unsafe side lies within it (the lower bound above −margin for `no-decrease`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// The smallest change that matters for a metric that must move: "needs ≈ N" and `plan`
    /// size the study for it instead of the observed change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_effect: Option<f64>,
    /// The margin and the smallest effect are shares of the baseline (written `"10%"`), read
    /// on the relative change's interval (docs/reference.md, "Cost and latency").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub relative: bool,
}

impl Wanted {
    /// A metric and its way, with neither margin nor smallest effect.
    pub fn plain(metric: impl Into<String>, want: Want) -> Wanted {
        Wanted {
            metric: metric.into(),
            want,
            margin: None,
            min_effect: None,
            relative: false,
        }
    }
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
