//! Live validators and judges, the pure part (docs/guides/live-collection.md): from the collected reviewer returns,
//! the findings each arm's validation pass selects and the items the judges judge, with the
//! JSON object each call gets on stdin; and what a validator's or a judge's stdout must be.
//!
//! Everything here is replayed with the arm's own policy and precision controls, so the
//! findings a validator is asked about are exactly those `run` will look up (docs/guides/ab-rubric-change.md): merged
//! by the same synthesis, gated after the same promotion and lint-ignore, selected by the same
//! mode, route and budget order.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::plan::Judges;
use super::runner::Protocol;
use crate::corpus::reviews::{self, CodeSite, Record};
use crate::corpus::sources::Sources;
use crate::corpus::targets::Target;
use crate::policy::{Arm, Mode, Scale};
use crate::replay::arm::group;
use crate::replay::review::{self, Check, Merged, MergedLocation, Precision, ReturnRef};

/// What the later stages read from a collection.
#[derive(Clone, Copy, Debug)]
pub struct Collected<'a> {
    /// The experiment's review mode and its two arms, baseline first.
    pub mode: Mode,
    pub arms: [&'a Arm; 2],
    /// Every recorded return, in file order.
    pub records: &'a [Record],
    /// The run's `targets.jsonl`, empty when it has none.
    pub targets: &'a [Target],
    pub sources: Option<&'a Sources>,
    /// Each target's file, absolute.
    pub paths: &'a HashMap<String, PathBuf>,
}

/// A merged finding of one arm label, as validators and judges see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Subject {
    /// The recorded arm label.
    pub arm: String,
    pub target: String,
    pub run: u32,
    /// Its representative contributor's `id` (highest severity, then confidence, then first).
    pub id: String,
    /// What the command gets on stdin (without `item_id`).
    pub object: Map<String, Value>,
    /// Selected by an arm of this label's validation pass, within its budget.
    pub selected: bool,
}

/// The recorded labels to collect, once each, the baseline's first.
pub fn labels(arms: [&Arm; 2]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for arm in arms {
        if !out.contains(&arm.source) {
            out.push(arm.source.clone());
        }
    }
    out
}

/// Every merged finding of every arm label, in plan order: label (baseline's first), target (in
/// the order of `reviews.jsonl`), run, then document order. Two arms reading one label share its
/// findings (merging does not depend on the policy); a finding is selected when either arm's
/// validation pass selects it within its budget. A target a skip rule fires on is replayed as
/// if it were not, as `run` replays it to count what skipping hid, so those figures rest on the
/// same evidence. A finding whose representative has no `id` cannot be named and is left out
/// (`collect` gives every recorded finding one).
pub fn subjects(c: &Collected<'_>) -> Vec<Subject> {
    let mut out = Vec::new();
    for label in labels(c.arms) {
        // (target position, run position, document order) → subject.
        let mut found: BTreeMap<(usize, usize, usize), Subject> = BTreeMap::new();
        let mut positions: HashMap<String, (usize, usize, usize)> = HashMap::new();
        let raw = raw_findings(c.records, &label);
        for arm in c.arms.into_iter().filter(|a| a.source == label) {
            let returns = reviews::select(c.records, &label, c.mode, arm.review.scale());
            for (t, target) in group(&returns).into_iter().enumerate() {
                for (r, run) in target.runs.iter().enumerate() {
                    let refs = ReturnRef::valid(&run.returns);
                    let precision = Precision {
                        controls: &arm.controls,
                        target: &target.target,
                        sources: c.sources,
                        calls: &[],
                    };
                    let merged = review::replay_with(&arm.review, c.mode, &precision, &refs);
                    for m in &merged {
                        let Some(id) = m.contributions[m.lead].id.as_deref().map(str::to_string)
                        else {
                            continue;
                        };
                        let selected = m.validation == Some(Check::Missing);
                        if let Some(at) = positions.get(&id) {
                            if let Some(s) = found.get_mut(at) {
                                s.selected |= selected;
                            }
                            continue;
                        }
                        let at = (t, r, m.order);
                        positions.insert(id.clone(), at);
                        let object = finding_object(
                            m,
                            raw.get(id.as_str()).copied(),
                            arm.review.scale(),
                            c.mode,
                        );
                        found.insert(
                            at,
                            Subject {
                                arm: label.clone(),
                                target: target.target.to_string(),
                                run: run.run,
                                id,
                                object,
                                selected,
                            },
                        );
                    }
                }
            }
        }
        for mut s in found.into_values() {
            let path = c
                .paths
                .get(&s.target)
                .map_or(Value::Null, |p| Value::String(p.display().to_string()));
            s.object
                .insert("finding_id".into(), Value::String(s.id.clone()));
            s.object.insert("arm".into(), Value::String(s.arm.clone()));
            s.object
                .insert("target".into(), Value::String(s.target.clone()));
            s.object.insert("run".into(), Value::from(s.run));
            s.object.insert("target_path".into(), path);
            out.push(s);
        }
    }
    out
}

/// The recorded findings of `label` by `id`, as written.
fn raw_findings<'a>(records: &'a [Record], label: &str) -> HashMap<&'a str, &'a Value> {
    records
        .iter()
        .filter(|r| r.arm == label)
        .flat_map(|r| r.findings.iter())
        .filter_map(|f| f.get("id").and_then(Value::as_str).map(|id| (id, f)))
        .collect()
}

/// The detail tier: what a compact return leaves out.
const DETAIL: [&str; 3] = ["why_it_matters", "evidence", "id"];

/// A merged finding's merge-tier fields under their names in reviews.jsonl (docs/reference.md): the representative's as
/// recorded (its `file`, `line`, `title`, `suggested_fix`), with the merged values over them
/// (severity, class, confidence after promotion, and per mode the type or owner and flags), and
/// its `reviewers`.
fn finding_object(m: &Merged, raw: Option<&Value>, scale: Scale, mode: Mode) -> Map<String, Value> {
    let mut o: Map<String, Value> = raw
        .and_then(Value::as_object)
        .map(|f| {
            f.iter()
                .filter(|(k, _)| !DETAIL.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    o.insert(
        "title".into(),
        Value::String(m.contributions[m.lead].title.to_string()),
    );
    o.insert("severity".into(), name(&m.claim.severity));
    o.insert("autofix_class".into(), name(&m.claim.autofix));
    let confidence = match scale {
        // 75, not 75.0: the anchor scale's values are whole numbers.
        Scale::Anchor => Value::from(m.confidence.round() as i64),
        Scale::Float => Value::from(m.confidence),
    };
    o.insert("confidence".into(), confidence);
    match (&m.location, mode) {
        (MergedLocation::Doc { finding_type, .. }, _) => {
            o.insert("finding_type".into(), name(finding_type));
        }
        (
            MergedLocation::Code(CodeSite {
                owner,
                requires_verification,
                pre_existing,
                ..
            }),
            _,
        ) => {
            o.insert("owner".into(), name(owner));
            o.insert(
                "requires_verification".into(),
                Value::Bool(*requires_verification),
            );
            o.insert("pre_existing".into(), Value::Bool(*pre_existing));
        }
    }
    o.insert(
        "reviewers".into(),
        Value::Array(m.reviewers.iter().map(|r| Value::from(&**r)).collect()),
    );
    o
}

/// One of the pipeline's enums (severity, class, owner) under its name in reviews.jsonl.
fn name<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// One item a judge is asked about.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeItem {
    pub arm: String,
    pub item_id: String,
    /// The target it belongs to (a finding's) or is (a whole-target item).
    pub target: String,
    /// What the judge gets on stdin.
    pub object: Map<String, Value>,
}

/// The items the judges judge, in plan order: per label and target (in the order of
/// `reviews.jsonl`), the target's own item first (items `targets` or `both`; a target whose
/// returns merged into no finding is judged too, one all of whose returns failed is not: no
/// paid call on nothing), then its findings by run and document order (`findings` or `both`).
pub fn judge_items(c: &Collected<'_>, subjects: &[Subject], judges: &Judges) -> Vec<JudgeItem> {
    let mut by_target: HashMap<(&str, &str), Vec<&Subject>> = HashMap::new();
    for s in subjects {
        by_target.entry((&s.arm, &s.target)).or_default().push(s);
    }
    let mut out = Vec::new();
    for label in labels(c.arms) {
        let mut targets: Vec<&str> = Vec::new();
        // A target none of whose returns succeeded has nothing to judge: no paid call on it.
        for r in c
            .records
            .iter()
            .filter(|r| r.arm == label && r.status != reviews::Status::Failed)
        {
            if !targets.contains(&r.target.as_str()) {
                targets.push(&r.target);
            }
        }
        for target in targets {
            let mine = by_target
                .get(&(label.as_str(), target))
                .map_or(&[][..], Vec::as_slice);
            if judges.items.targets() {
                out.push(target_item(c, &label, target, mine));
            }
            if judges.items.findings() {
                for s in mine {
                    let mut object = s.object.clone();
                    object.insert("item_id".into(), Value::String(s.id.clone()));
                    out.push(JudgeItem {
                        arm: s.arm.clone(),
                        item_id: s.id.clone(),
                        target: s.target.clone(),
                        object,
                    });
                }
            }
        }
    }
    out
}

fn target_item(c: &Collected<'_>, arm: &str, target: &str, findings: &[&Subject]) -> JudgeItem {
    let mut object = Map::new();
    object.insert("item_id".into(), Value::String(target.to_string()));
    object.insert("arm".into(), Value::String(arm.to_string()));
    object.insert("target".into(), Value::String(target.to_string()));
    object.insert(
        "target_path".into(),
        c.paths
            .get(target)
            .map_or(Value::Null, |p| Value::String(p.display().to_string())),
    );
    object.insert(
        "findings".into(),
        Value::Array(
            findings
                .iter()
                .map(|s| Value::Object(s.object.clone()))
                .collect(),
        ),
    );
    JudgeItem {
        arm: arm.to_string(),
        item_id: target.to_string(),
        target: target.to_string(),
        object,
    }
}

/// What a validator must print: one JSON object with a boolean `validated` and, optionally, a
/// string `reason`. Other keys are ignored (a model's `reasoning` does not fail the call).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    title = "validator verdict",
    description = "What a [collect.validators] command prints on stdout (docs/guides/live-collection.md)."
)]
pub struct ValidatorVerdict {
    /// Is the finding real, introduced by this change, and not handled elsewhere?
    pub validated: bool,
    /// One sentence: why.
    pub reason: Option<String>,
}

/// What a judge must print: per declared dimension a score in [0, 1], exactly those.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    title = "judge verdict",
    description = "What a [collect.judges] command prints on stdout (docs/guides/live-collection.md); keys beside per_dimension (a rationale) are ignored."
)]
pub struct JudgeVerdict {
    /// A score in [0, 1] for each declared dimension, and no other.
    pub per_dimension: BTreeMap<String, f64>,
    /// The model the judge runs, if it says: recorded as the verdict's `reported_model`, for
    /// the bias audit's self-preference check and the drift check between arms.
    pub model: Option<String>,
    /// What the call spent, if it says: recorded as the verdict's `usage`, the cost of
    /// evaluating.
    pub usage: Option<crate::corpus::usage::Usage>,
}

/// A command's stdout as one JSON object, or why not.
fn object(stdout: &[u8]) -> Result<Map<String, Value>, String> {
    let text = std::str::from_utf8(stdout).map_err(|_| "stdout is not UTF-8 text".to_string())?;
    let text = text.trim();
    if text.is_empty() {
        return Err("printed nothing on stdout; expected one JSON object".into());
    }
    match crate::corpus::strict_json(text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(other) => Err(format!(
            "stdout is JSON but {}, not an object",
            reviews::kind(&other)
        )),
        Err(e) => Err(format!(
            "stdout is not one JSON object ({e}); it begins {:?}",
            super::arrival::excerpt(text, 60)
        )),
    }
}

/// Reads `o` as `T`, a refusal in calibench's words naming the field.
fn read<T: serde::de::DeserializeOwned>(o: Map<String, Value>) -> Result<T, String> {
    crate::corpus::typed::<T>("stdout", 1, o, &[]).map_err(|e| {
        let text = e.to_string();
        text.strip_prefix("stdout:1: ")
            .unwrap_or(&text)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    })
}

/// A validator's verdict from its stdout, or why it is not one.
pub fn validator_verdict(stdout: &[u8]) -> Result<ValidatorVerdict, String> {
    read(object(stdout)?)
}

/// The keys that say which call a return answers.
const IDENTITY: [&str; 5] = ["item_id", "finding_id", "arm", "target", "run"];

/// A return may name the call it answers (`item_id`, `arm`, …); naming another call's value
/// than the one on its stdin (`asked`) fails the call, as a reviewer naming another target
/// does: a judge answering for another item would otherwise be recorded as its verdict on this
/// one.
fn same_call(stdout: &[u8], asked: &Map<String, Value>) -> Result<(), String> {
    let returned = object(stdout)?;
    for key in IDENTITY {
        match (returned.get(key), asked.get(key)) {
            (Some(got), Some(want)) if !got.is_null() && got != want => {
                return Err(format!(
                    "the return names {key} {got}, but the call was for {want}"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// A judge's scores from its stdout, or why they are not a verdict on `dimensions`: a missing or
/// extra dimension, or a score outside [0, 1], fails the judge (never a zero).
pub fn judge_scores(stdout: &[u8], dimensions: &[String]) -> Result<JudgeVerdict, String> {
    let verdict: JudgeVerdict = read(object(stdout)?)?;
    let scores = &verdict.per_dimension;
    if let Some(missing) = dimensions.iter().find(|d| !scores.contains_key(*d)) {
        return Err(format!(
            "field `per_dimension`: dimension `{missing}` is missing"
        ));
    }
    if let Some(extra) = scores.keys().find(|k| !dimensions.contains(k)) {
        return Err(format!(
            "field `per_dimension`: `{extra}` is not a declared dimension ({})",
            dimensions.join(", ")
        ));
    }
    if let Some((d, x)) = scores
        .iter()
        .find(|(_, x)| !(x.is_finite() && (0.0..=1.0).contains(*x)))
    {
        return Err(format!("field `per_dimension.{d}`: {x} is outside [0, 1]"));
    }
    Ok(verdict)
}

/// The validators' contract: one call per selected finding, the line `validations.jsonl`
/// records.
pub struct Validations {
    /// The selected findings, in plan order.
    pub subjects: Vec<Subject>,
}

impl Validations {
    fn identity(&self, index: usize) -> Map<String, Value> {
        let s = &self.subjects[index];
        let mut line = Map::new();
        line.insert("arm".into(), Value::String(s.arm.clone()));
        line.insert("target".into(), Value::String(s.target.clone()));
        line.insert("run".into(), Value::from(s.run));
        line.insert("finding".into(), Value::String(s.id.clone()));
        line
    }
}

impl Protocol for Validations {
    fn accept(&self, index: usize, stdout: &[u8]) -> Result<Map<String, Value>, String> {
        let verdict = validator_verdict(stdout)?;
        same_call(stdout, &self.subjects[index].object)?;
        let mut line = self.identity(index);
        line.insert("validated".into(), Value::Bool(verdict.validated));
        if let Some(reason) = verdict.reason {
            line.insert("reason".into(), Value::String(reason));
        }
        Ok(line)
    }

    fn failed(&self, index: usize, reason: &str) -> Map<String, Value> {
        let mut line = self.identity(index);
        line.insert("status".into(), Value::String("failed".into()));
        line.insert("reason".into(), Value::String(reason.to_string()));
        line
    }
}

/// The judges' contract: one call per (item, judge), in that order; each call's line names
/// its item, arm and judge, and [`verdict_lines`] gathers them per item.
pub struct Verdicts {
    pub items: Vec<JudgeItem>,
    pub judges: Vec<String>,
    pub dimensions: Vec<String>,
}

impl Verdicts {
    /// The item and judge of the call at plan position `index`.
    pub fn call(&self, index: usize) -> (&JudgeItem, &str) {
        let n = self.judges.len().max(1);
        (&self.items[index / n], &self.judges[index % n])
    }

    fn identity(&self, index: usize) -> Map<String, Value> {
        let (item, judge) = self.call(index);
        let mut line = Map::new();
        line.insert("arm".into(), Value::String(item.arm.clone()));
        line.insert("item_id".into(), Value::String(item.item_id.clone()));
        line.insert("judge".into(), Value::String(judge.to_string()));
        line
    }
}

impl Protocol for Verdicts {
    fn accept(&self, index: usize, stdout: &[u8]) -> Result<Map<String, Value>, String> {
        let verdict = judge_scores(stdout, &self.dimensions)?;
        same_call(stdout, &self.call(index).0.object)?;
        let mut line = self.identity(index);
        line.insert(
            "per_dimension".into(),
            Value::Object(
                verdict
                    .per_dimension
                    .into_iter()
                    .map(|(k, v)| (k, Value::from(v)))
                    .collect(),
            ),
        );
        if let Some(model) = verdict.model.filter(|m| !m.trim().is_empty()) {
            line.insert("reported_model".into(), Value::String(model));
        }
        if let Some(usage) = verdict.usage {
            line.insert(
                "usage".into(),
                serde_json::to_value(usage).map_err(|e| e.to_string())?,
            );
        }
        Ok(line)
    }

    fn failed(&self, index: usize, reason: &str) -> Map<String, Value> {
        let mut line = self.identity(index);
        line.insert("per_dimension".into(), Value::Null);
        line.insert("reason".into(), Value::String(reason.to_string()));
        line
    }
}

/// `verdicts.jsonl`'s lines from every judge call's line, `calls` in plan order:
/// one per (item, arm), its judges' verdicts in the order of `judges`, a failed judge with
/// `per_dimension: null` and its `reason`.
pub fn verdict_lines(v: &Verdicts, calls: &[Map<String, Value>]) -> Vec<Map<String, Value>> {
    let n = v.judges.len().max(1);
    v.items
        .iter()
        .zip(calls.chunks(n))
        .map(|(item, mine)| {
            let verdicts = mine
                .iter()
                .map(|call| {
                    let mut verdict = Map::new();
                    verdict.insert(
                        "model".into(),
                        call.get("judge").cloned().unwrap_or(Value::Null),
                    );
                    verdict.insert(
                        "per_dimension".into(),
                        call.get("per_dimension").cloned().unwrap_or(Value::Null),
                    );
                    for key in ["reason", "reported_model", "usage"] {
                        if let Some(v) = call.get(key) {
                            verdict.insert(key.into(), v.clone());
                        }
                    }
                    Value::Object(verdict)
                })
                .collect();
            let mut line = Map::new();
            line.insert("item_id".into(), Value::String(item.item_id.clone()));
            line.insert("arm".into(), Value::String(item.arm.clone()));
            line.insert("verdicts".into(), Value::Array(verdicts));
            line
        })
        .collect()
}
