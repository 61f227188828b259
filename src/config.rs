//! The experiment file, `experiment.toml` (SPEC §3): typed, validated, with every default of
//! SPEC §4 filled in. An unknown key anywhere is an error that names it and its line: a typo must
//! never fall back to a default silently.
//!
//! Thresholds are written in the units of the arm's confidence scale (0..100 for `anchor`,
//! 0..1 for `float`). Each policy's defaults are stated on its native scale (anchored: anchor,
//! float-gates: float) and converted (× or ÷ 100) when an arm declares the other scale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::InputError;
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

/// Code-review mode, which decides where demoted findings go (SPEC §4.1 step 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewMode {
    Interactive,
    ReportOnly,
    Headless,
    Autofix,
}

/// What corroboration does to a confidence (SPEC §4.1 step 5).
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

/// The confidence model of one arm for query replay (SPEC §4.3).
#[derive(Clone, Debug, PartialEq, Serialize)]
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlatMean {
    #[serde(default = "FlatMean::default_recovery")]
    pub recovery_threshold: f64,
    #[serde(default = "default_stop")]
    pub stop_threshold: f64,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Normalize {
    Present,
    All,
}

/// How the convergence bonus applies to `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BonusMode {
    Multiplicative,
    Additive,
}

/// Raw category weights; a table that names some categories keeps the defaults of the others.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Weights {
    pub search: f64,
    pub read: f64,
    pub discovery: f64,
    pub verification: f64,
    pub git: f64,
    pub ci: f64,
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
    pub strong: f64,
    pub adequate: f64,
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategoryMax {
    #[serde(default = "CategoryMax::default_recovery")]
    pub recovery_threshold: f64,
    #[serde(default = "default_stop")]
    pub stop_threshold: f64,
    #[serde(default)]
    pub weights: Weights,
    #[serde(default = "CategoryMax::default_normalize")]
    pub normalize: Normalize,
    #[serde(default = "CategoryMax::default_bonus_mode")]
    pub bonus_mode: BonusMode,
    #[serde(default = "CategoryMax::default_bonus_two")]
    pub bonus_two: f64,
    #[serde(default = "CategoryMax::default_bonus_three")]
    pub bonus_three: f64,
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

/// The trust gate's thresholds (SPEC §4.6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trust {
    #[serde(default = "Trust::default_irr_floor")]
    pub irr_floor: f64,
    #[serde(default = "Trust::default_spread_ceiling")]
    pub spread_ceiling: f64,
    #[serde(default = "Trust::default_min_survivors")]
    pub min_survivors: usize,
    #[serde(default = "Trust::default_level")]
    pub level: Level,
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
}

/// A resolved experiment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Experiment {
    pub name: String,
    pub mode: Mode,
    /// Whether the file says `mode`: required when the corpus has reviews (SPEC §3), which the
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
    /// The CI gate policy of the `[gate]` table (SPEC §7), checked as the experiment is read.
    pub gate: Option<crate::gate::Policy>,
    /// How to record a corpus live: the `[collect]` table (SPEC §8).
    pub collect: Option<crate::collect::plan::Collect>,
}

impl Experiment {
    pub fn arms(&self) -> [&Arm; 2] {
        [&self.baseline, &self.treatment]
    }
}

/// Parses an experiment file; `path` is used for messages and to resolve `corpus`.
pub fn parse(path: &Path, text: &str) -> Result<Experiment, InputError> {
    let name = path.display().to_string();
    let doc: toml::Table = text.parse::<toml::Table>().map_err(|e| {
        let err = InputError::toml(&name, text, &e);
        InputError {
            problem: format!("not valid TOML: {}", err.problem),
            ..err
        }
    })?;
    let ctx = Ctx {
        name: &name,
        text,
        spans: std::cell::OnceCell::new(),
    };
    ctx.known(
        &doc,
        "",
        &[
            "name",
            "mode",
            "corpus",
            "seed",
            "bootstrap",
            "arms",
            "trust",
            "gate",
            "collect",
        ],
    )?;

    let exp_name = ctx.string(&doc, "", "name")?.unwrap_or_else(|| {
        path.parent()
            .and_then(|p| p.file_name())
            .map_or("experiment".into(), |n| n.to_string_lossy().into_owned())
    });
    let declared_mode = ctx.string(&doc, "", "mode")?;
    let mode = match declared_mode.as_deref() {
        None | Some("doc") => Mode::Doc,
        Some("code") => Mode::Code,
        Some(other) => {
            return Err(ctx.error("mode", format!("`{other}` is not a mode: use doc or code")))
        }
    };
    let corpus_rel = ctx
        .string(&doc, "", "corpus")?
        .unwrap_or_else(|| ".".into());
    let base = path.parent().unwrap_or(Path::new("."));
    // `corpus = "."` names the experiment's own folder: keep paths in messages free of `/./`.
    let corpus: PathBuf = base
        .join(corpus_rel)
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    let seed = ctx.integer(&doc, "", "seed")?.unwrap_or(20260421);
    let bootstrap = ctx.integer(&doc, "", "bootstrap")?.unwrap_or(2000);
    if bootstrap > MAX_REPLICATES as u64 {
        return Err(ctx
            .error(
                "bootstrap",
                format!("{bootstrap} replicates is more than the {MAX_REPLICATES} allowed"),
            )
            .hint("2000 replicates give stable 95% intervals; 10000 are plenty"));
    }
    let bootstrap = bootstrap as usize;

    let arms = match doc.get("arms") {
        Some(toml::Value::Table(t)) => t,
        Some(_) => {
            return Err(ctx.error(
                "arms",
                "must be a table of [arms.baseline] and [arms.treatment]",
            ))
        }
        None => {
            return Err(ctx
                .error("arms", "is missing")
                .hint("an experiment has [arms.baseline] and [arms.treatment]"))
        }
    };
    ctx.known(arms, "arms", &["baseline", "treatment"])?;
    let arm = |arm_name: &str| -> Result<Arm, InputError> {
        match arms.get(arm_name) {
            Some(toml::Value::Table(t)) => ctx.arm(arm_name, t, mode),
            Some(_) => Err(ctx.error(&format!("arms.{arm_name}"), "must be a table")),
            None => Err(ctx
                .error(&format!("arms.{arm_name}"), "is missing")
                .hint("an experiment has exactly two arms, baseline and treatment")),
        }
    };
    let (baseline, treatment) = (arm("baseline")?, arm("treatment")?);

    let trust = match doc.get("trust") {
        None => Trust::default(),
        Some(v) => ctx.typed::<Trust>(v, "trust")?,
    };
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
    Ok(Experiment {
        name: exp_name,
        mode,
        mode_declared: declared_mode.is_some(),
        corpus,
        seed,
        bootstrap,
        baseline,
        treatment,
        trust,
        gate: crate::gate::policy::parse_in_experiment(path, text)?,
        collect: crate::collect::plan::parse_in_experiment(path, text)?,
    })
}

/// Parsing context: the file's name and text, to place errors on lines.
/// Keys every review policy's table may hold.
const SHARED_REVIEW_KEYS: [&str; 5] = [
    "policy",
    "scale",
    "promotion",
    "review_mode",
    "demote_reviewers",
];

/// The review settings both policies share.
struct SharedReview {
    review_mode: ReviewMode,
    demote_reviewers: Vec<String>,
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

    fn join(prefix: &str, key: &str) -> String {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    }

    fn known(&self, table: &toml::Table, prefix: &str, allowed: &[&str]) -> Result<(), InputError> {
        match table.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(self
                .error(&Self::join(prefix, k), "is not a known key")
                .hint(format!("known keys here: {}", allowed.join(", ")))),
            None => Ok(()),
        }
    }

    fn string(
        &self,
        t: &toml::Table,
        prefix: &str,
        key: &str,
    ) -> Result<Option<String>, InputError> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.error(
                &Self::join(prefix, key),
                format!("must be a string, not {}", other.type_str()),
            )),
        }
    }

    fn integer(&self, t: &toml::Table, prefix: &str, key: &str) -> Result<Option<u64>, InputError> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(other) => Err(self.error(
                &Self::join(prefix, key),
                format!("must be a non-negative integer, not {other}"),
            )),
        }
    }

    fn number(&self, t: &toml::Table, prefix: &str, key: &str) -> Result<Option<f64>, InputError> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(toml::Value::Float(f)) if f.is_finite() => Ok(Some(*f)),
            Some(other) => Err(self.error(
                &Self::join(prefix, key),
                format!("must be a number, not {other}"),
            )),
        }
    }

    fn boolean(
        &self,
        t: &toml::Table,
        prefix: &str,
        key: &str,
    ) -> Result<Option<bool>, InputError> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(other) => Err(self.error(
                &Self::join(prefix, key),
                format!("must be true or false, not {other}"),
            )),
        }
    }

    fn typed<T: serde::de::DeserializeOwned>(
        &self,
        v: &toml::Value,
        path: &str,
    ) -> Result<T, InputError> {
        v.clone().try_into::<T>().map_err(|e| {
            let msg = e.message().to_string();
            // serde names an unknown field as "unknown field `x`, expected …": place it on its line.
            let field = msg
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
                .map_or(path.to_string(), |k| format!("{path}.{k}"));
            self.error(&field, msg)
        })
    }

    fn arm(&self, arm_name: &str, t: &toml::Table, mode: Mode) -> Result<Arm, InputError> {
        let prefix = format!("arms.{arm_name}");
        self.known(t, &prefix, &["source", "review", "confidence"])?;
        let source = self
            .string(t, &prefix, "source")?
            .unwrap_or_else(|| arm_name.to_string());
        let review = match t.get("review") {
            Some(toml::Value::Table(r)) => self.review(&format!("{prefix}.review"), r, mode)?,
            Some(_) => return Err(self.error(&format!("{prefix}.review"), "must be a table")),
            None => {
                let default = if arm_name == "baseline" {
                    "float-gates"
                } else {
                    "anchored"
                };
                let mut r = toml::Table::new();
                r.insert("policy".into(), toml::Value::String(default.into()));
                self.review(&format!("{prefix}.review"), &r, mode)?
            }
        };
        let confidence = match t.get("confidence") {
            Some(v @ toml::Value::Table(c)) => {
                let path = format!("{prefix}.confidence");
                let policy = self.string(c, &path, "policy")?;
                let mut rest = v.clone();
                if let toml::Value::Table(r) = &mut rest {
                    r.remove("policy");
                }
                // Nested tables: name an unknown key with its full path.
                let nested: [(&str, &[&str]); 2] = [
                    (
                        "weights",
                        &[
                            "search",
                            "read",
                            "discovery",
                            "verification",
                            "git",
                            "ci",
                            "other",
                        ],
                    ),
                    ("bands", &["strong", "adequate", "weak"]),
                ];
                for (key, known) in nested {
                    if let Some(toml::Value::Table(t)) = c.get(key) {
                        let prefix = format!("{path}.{key}");
                        self.known(t, &prefix, known)?;
                        for k in known {
                            self.number(t, &prefix, k)?;
                        }
                    }
                }
                for key in [
                    "recovery_threshold",
                    "stop_threshold",
                    "recovery_entry_score",
                    "bonus_two",
                    "bonus_three",
                    "bonus_search_read",
                ] {
                    self.number(c, &path, key)?;
                }
                for (key, choices) in [
                    ("normalize", ["present", "all"]),
                    ("bonus_mode", ["multiplicative", "additive"]),
                ] {
                    if let Some(v) = self.string(c, &path, key)? {
                        if !choices.contains(&v.as_str()) {
                            return Err(self.error(
                                &format!("{path}.{key}"),
                                format!("`{v}` is not one of {}", choices.join(", ")),
                            ));
                        }
                    }
                }
                let policy = match policy.as_deref() {
                    Some("flat-mean") => ConfidencePolicy::FlatMean(self.typed(&rest, &path)?),
                    Some("category-max") => {
                        ConfidencePolicy::CategoryMax(self.typed(&rest, &path)?)
                    }
                    Some(other) => {
                        return Err(self.error(
                            &format!("{path}.policy"),
                            format!(
                            "`{other}` is not a confidence policy: use flat-mean or category-max"
                        ),
                        ))
                    }
                    None => return Err(self.error(&format!("{path}.policy"), "is missing")),
                };
                self.check_confidence(&path, &policy)?;
                policy
            }
            Some(_) => return Err(self.error(&format!("{prefix}.confidence"), "must be a table")),
            None if arm_name == "baseline" => ConfidencePolicy::FlatMean(FlatMean::default()),
            None => ConfidencePolicy::CategoryMax(CategoryMax::default()),
        };
        Ok(Arm {
            name: arm_name.to_string(),
            source,
            review,
            confidence,
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

    /// An arm's `[review]` table: the keys both policies share, then the policy's own.
    fn review(&self, path: &str, r: &toml::Table, mode: Mode) -> Result<ReviewPolicy, InputError> {
        let policy = self.string(r, path, "policy")?;
        let shared = SharedReview {
            review_mode: self.review_mode(r, path)?,
            demote_reviewers: self.demote_reviewers(r, path)?,
        };
        match policy.as_deref() {
            Some("anchored") => self.anchored(path, r, mode, shared),
            Some("float-gates") => self.float_gates(path, r, shared),
            Some(other) => Err(self.error(
                &format!("{path}.policy"),
                format!("`{other}` is not a review policy: use anchored or float-gates"),
            )),
            None => Err(self
                .error(&format!("{path}.policy"), "is missing")
                .hint("policy = \"anchored\" or \"float-gates\"")),
        }
    }

    fn anchored(
        &self,
        path: &str,
        r: &toml::Table,
        mode: Mode,
        shared: SharedReview,
    ) -> Result<ReviewPolicy, InputError> {
        let mut known = SHARED_REVIEW_KEYS.to_vec();
        known.extend(["surface_from", "actionable_from", "p0_escape", "collapse"]);
        self.known(r, path, &known)?;
        let native = Scale::Anchor;
        let scale = self.scale(r, path, native)?;
        let (surface, actionable, escape) = match mode {
            Mode::Doc => (50.0, 75.0, None),
            Mode::Code => (75.0, 75.0, Some(50.0)),
        };
        let p0_escape = match self.number(r, path, "p0_escape")? {
            Some(v) => Some(v),
            None => escape.map(|e| scale.convert(e, native)),
        };
        let num = |key: &str, default: f64| self.scaled(r, path, key, default, native, scale);
        Ok(ReviewPolicy::Anchored(Anchored {
            scale,
            surface_from: num("surface_from", surface)?,
            actionable_from: num("actionable_from", actionable)?,
            p0_escape,
            collapse: self.boolean(r, path, "collapse")?.unwrap_or(true),
            promotion: self.promotion(r, path, scale)?,
            review_mode: shared.review_mode,
            demote_reviewers: shared.demote_reviewers,
        }))
    }

    fn float_gates(
        &self,
        path: &str,
        r: &toml::Table,
        shared: SharedReview,
    ) -> Result<ReviewPolicy, InputError> {
        let mut known = SHARED_REVIEW_KEYS.to_vec();
        known.extend([
            "gates",
            "gate",
            "p0_gate",
            "fyi_floor",
            "boost",
            "auto_apply_from",
        ]);
        self.known(r, path, &known)?;
        let native = Scale::Float;
        let scale = self.scale(r, path, native)?;
        let mut gates = [0.50, 0.60, 0.65, 0.75].map(|g| scale.convert(g, native));
        if let Some(v) = r.get("gates") {
            let gpath = format!("{path}.gates");
            let toml::Value::Table(t) = v else {
                return Err(self.error(&gpath, "must be a table of P0..P3 gates"));
            };
            self.known(t, &gpath, &["P0", "P1", "P2", "P3"])?;
            for (i, sev) in ["P0", "P1", "P2", "P3"].iter().enumerate() {
                if let Some(g) = self.number(t, &gpath, sev)? {
                    gates[i] = g;
                }
            }
        }
        let promotion = match (
            self.number(r, path, "boost")?,
            self.promotion(r, path, scale)?,
        ) {
            (Some(boost), Promotion::Corroboration { .. }) => Promotion::Corroboration { boost },
            (_, promotion) => promotion,
        };
        let num = |key: &str, default: f64| self.scaled(r, path, key, default, native, scale);
        Ok(ReviewPolicy::FloatGates(FloatGates {
            scale,
            gates,
            gate: num("gate", 0.60)?,
            p0_gate: num("p0_gate", 0.50)?,
            fyi_floor: num("fyi_floor", 0.40)?,
            auto_apply_from: num("auto_apply_from", 0.85)?,
            promotion,
            review_mode: shared.review_mode,
            demote_reviewers: shared.demote_reviewers,
        }))
    }

    /// `scale`, or the policy's native scale.
    fn scale(&self, r: &toml::Table, path: &str, native: Scale) -> Result<Scale, InputError> {
        match self.string(r, path, "scale")?.as_deref() {
            None => Ok(native),
            Some("float") => Ok(Scale::Float),
            Some("anchor") => Ok(Scale::Anchor),
            Some(other) => Err(self.error(
                &format!("{path}.scale"),
                format!("`{other}` is not a scale: use float or anchor"),
            )),
        }
    }

    /// A threshold: as written, or the default (given on the native scale) on the arm's scale.
    fn scaled(
        &self,
        r: &toml::Table,
        path: &str,
        key: &str,
        default: f64,
        native: Scale,
        scale: Scale,
    ) -> Result<f64, InputError> {
        Ok(self
            .number(r, path, key)?
            .unwrap_or_else(|| scale.convert(default, native)))
    }

    /// `promotion = true` (the default: one step, or +0.10 on the float scale) or `false`.
    fn promotion(
        &self,
        r: &toml::Table,
        path: &str,
        scale: Scale,
    ) -> Result<Promotion, InputError> {
        match r.get("promotion") {
            None | Some(toml::Value::Boolean(true)) => Ok(Promotion::Corroboration {
                boost: scale.convert(0.10, Scale::Float),
            }),
            Some(toml::Value::Boolean(false)) => Ok(Promotion::None),
            Some(other) => Err(self.error(
                &format!("{path}.promotion"),
                format!("must be true or false, not {other}"),
            )),
        }
    }

    fn review_mode(&self, r: &toml::Table, path: &str) -> Result<ReviewMode, InputError> {
        match self.string(r, path, "review_mode")?.as_deref() {
            None | Some("interactive") => Ok(ReviewMode::Interactive),
            Some("report-only") => Ok(ReviewMode::ReportOnly),
            Some("headless") => Ok(ReviewMode::Headless),
            Some("autofix") => Ok(ReviewMode::Autofix),
            Some(other) => Err(self.error(
                &format!("{path}.review_mode"),
                format!("`{other}` is not a review mode: use interactive, report-only, headless or autofix"),
            )),
        }
    }

    fn demote_reviewers(&self, r: &toml::Table, path: &str) -> Result<Vec<String>, InputError> {
        let not_a_list = || {
            self.error(
                &format!("{path}.demote_reviewers"),
                "must be a list of reviewer names",
            )
        };
        match r.get("demote_reviewers") {
            None => Ok(vec!["testing".to_string(), "maintainability".to_string()]),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(not_a_list),
            Some(_) => Err(not_a_list()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Experiment, InputError> {
        parse(Path::new("corpora/x/experiment.toml"), text)
    }

    const SPEC_EXAMPLE: &str = r#"
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
        let e = parse_str(SPEC_EXAMPLE).unwrap();
        assert_eq!(e.name, "doc-review-anchors");
        assert_eq!(e.corpus, Path::new("corpora/x"));
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
        let text = SPEC_EXAMPLE
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

    #[test]
    fn thresholds_follow_the_declared_scale() {
        let text = SPEC_EXAMPLE.replace(
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
        let text = SPEC_EXAMPLE.replace(
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

        let e = parse_str(&SPEC_EXAMPLE.replace("irr_floor", "irr_flor")).unwrap_err();
        assert!(
            e.problem.contains("unknown field `irr_flor`"),
            "{}",
            e.problem
        );
        assert_eq!(e.line, Some(23));

        let e = parse_str(&format!("bootstrapp = 3\n{SPEC_EXAMPLE}")).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("`bootstrapp`"), Some(1))
        );
        // After [trust] the same key belongs to that table, and is named there.
        let e = parse_str(&format!("{SPEC_EXAMPLE}\nbootstrapp = 3\n")).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`trust.bootstrapp`"));
    }

    #[test]
    fn bad_values_are_refused() {
        let e = parse_str(&SPEC_EXAMPLE.replace("mode = \"doc\"", "mode = \"prose\"")).unwrap_err();
        assert!(e.problem.contains("`prose` is not a mode"));
        let e = parse_str(&SPEC_EXAMPLE.replace("policy = \"anchored\"", "policy = \"anchor\""))
            .unwrap_err();
        assert!(e.problem.contains("not a review policy"));
        let e = parse_str(&SPEC_EXAMPLE.replace("seed = 20260421", "seed = \"x\"")).unwrap_err();
        assert!(e.problem.contains("non-negative integer"));
        let e = parse_str("name = [").unwrap_err();
        assert!(e.problem.starts_with("not valid TOML"));
        let e = parse_str("name = \"x\"\n").unwrap_err();
        assert!(e.problem.contains("is missing"));
    }

    #[test]
    fn trust_thresholds_are_checked() {
        let e = parse_str(&SPEC_EXAMPLE.replace("spread_ceiling = 0.5", "spread_ceiling = -0.5"))
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`trust.spread_ceiling`"));
        assert!(e.line.is_some());
        let e = parse_str(&SPEC_EXAMPLE.replace(
            "dimension_weights = {}",
            "dimension_weights = { real = -2.0 }",
        ))
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`trust.dimension_weights.real`"));
        let e =
            parse_str(&SPEC_EXAMPLE.replace("min_survivors = 3", "min_survivors = 3\nfloor = 1"))
                .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("`trust.floor`"));
    }

    #[test]
    fn both_arms_may_read_one_source() {
        let text = SPEC_EXAMPLE.replace("source = \"treatment\"", "source = \"baseline\"");
        let e = parse_str(&text).unwrap();
        assert_eq!(e.baseline.source, e.treatment.source);
    }

    #[test]
    fn confidence_parameters_override_and_partial_tables_keep_defaults() {
        let text = SPEC_EXAMPLE
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
        let bare = SPEC_EXAMPLE
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
                "not a known key",
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
                "unknown field",
            ),
        ];
        for (line, field, problem) in cases {
            let text = SPEC_EXAMPLE.replace(
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
