//! A reviewer's finding and its rules (docs/reference.md, "Input files"): what each field must
//! hold in each mode, and the confidence on each scale. A finding that breaks a rule is
//! malformed: dropped and counted by the reading of `reviews.jsonl` (`reviews`), which checks
//! every finding here, whichever way its line was read ([`check_object`], over
//! [`raw::Written`](super::raw::Written)). The JSON Schema of a finding under each mode and
//! scale is derived from the same rules ([`finding_schema`]).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::raw::{field, Field, RawFinding, SharedText, Val, Written};
pub use super::raw::{written_id, FindingId};
use crate::policy::{Mode, Scale};
use crate::stats::calibration::round9;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
pub enum Severity {
    P0,
    P1,
    P2,
    P3,
}

impl Severity {
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Ordered from least to most conservative, so the merge takes the maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Autofix {
    SafeAuto,
    GatedAuto,
    Manual,
    Advisory,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FindingType {
    Error,
    Omission,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Owner {
    ReviewFixer,
    DownstreamResolver,
    Human,
    Release,
}

/// Where a finding points: a document section or a line of code.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Location {
    Doc {
        section: Arc<str>,
        finding_type: FindingType,
        /// Boxed: rare, and a finding that has none then holds one word for it, not two (a
        /// million findings are read before any is replayed).
        premise: Option<Box<Arc<str>>>,
    },
    Code(CodeSite),
}

/// Where a code finding points and who acts on it. A merged finding has one too: the line is
/// the smallest of its cluster and `pre_existing` holds only when every contributor says so.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CodeSite {
    pub file: Arc<str>,
    pub line: u32,
    pub owner: Owner,
    pub requires_verification: bool,
    pub pre_existing: bool,
}

/// A finding that passed validation. `confidence` is on the arm's scale; on the float scale it
/// is rounded to 9 decimal places, the resolution at which calibench compares confidences. Its
/// text is shared (`Arc<str>`): the merged findings and tables a run makes from it point at the
/// same strings rather than copying a million of them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    #[serde(serialize_with = "written_id")]
    pub id: Option<FindingId>,
    #[serde(flatten)]
    pub claim: Claim,
    pub confidence: f64,
    pub location: Location,
}

/// What a finding says, apart from its confidence and where it is: a reviewer's finding has
/// one, and so has the merged finding it joins (the dedup decides how its members' combine).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Claim {
    pub title: Arc<str>,
    pub severity: Severity,
    pub autofix: Autofix,
    /// A non-empty `suggested_fix` is present (in any member, for a merged finding).
    pub has_fix: bool,
    pub evidence: Quotes,
    /// Characters of its `title`, `why_it_matters` and `evidence`: the text a judge is shown
    /// (the bias audit's length check); a merged finding's longest member's. Held here, in
    /// the claim's last spare bytes: a finding is eleven words, not twelve.
    #[serde(skip)]
    pub text_chars: u32,
}

/// A finding's `evidence`, read as a slice of its quotes. Most findings quote none, and every
/// finding of a corpus is held before any is replayed: no quotes is one word and nothing
/// allocated (a boxed list was two words, a `Vec` three).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Quotes(Option<Box<Box<[Arc<str>]>>>);

impl std::ops::Deref for Quotes {
    type Target = [Arc<str>];
    fn deref(&self) -> &[Arc<str>] {
        self.0.as_deref().map_or(&[], |quotes| quotes)
    }
}

impl From<Vec<Arc<str>>> for Quotes {
    fn from(quotes: Vec<Arc<str>>) -> Self {
        Quotes((!quotes.is_empty()).then(|| Box::new(quotes.into_boxed_slice())))
    }
}

impl Serialize for Quotes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// A finding's field that breaks its rule, and why.
pub type FieldError = (String, String);

/// Validates one finding's values, not only their presence.
pub fn validate(f: &RawFinding, mode: Mode, scale: Scale) -> Result<Finding, FieldError> {
    check_object(f, mode, scale, &mut Apart)
}

/// Where a checked finding's title and place (section or file) come from: texts of their own
/// ([`Apart`]), or the same texts as the findings read before it (an [`Interner`]).
pub(crate) trait Places {
    fn share<T: SharedText>(&mut self, text: &T) -> Arc<str>;
}

/// Each finding's texts its own.
pub(crate) struct Apart;

impl Places for Apart {
    fn share<T: SharedText>(&mut self, text: &T) -> Arc<str> {
        text.shared()
    }
}

/// [`validate`] of a finding, however its fields are held, its title and place taken from
/// `places`.
pub(crate) fn check_object<W: Written>(
    f: &W,
    mode: Mode,
    scale: Scale,
    places: &mut impl Places,
) -> Result<Finding, FieldError> {
    if let Some(kind) = f.not_object() {
        return fail(
            "finding",
            format!("must be an object, not {}", kind.words()),
        );
    }
    let f = Fields(f);
    let id = f.string(field!("id"))?.map(SharedText::id);
    let title = f.required(field!("title"))?;
    // 1 to 100 bytes are 1 to 100 characters: only a longer title is counted.
    let title_len = title.as_str().len();
    if title_len == 0 || title_len > 100 {
        let chars = title.as_str().chars().count();
        if chars == 0 || chars > 100 {
            return fail("title", format!("must be 1 to 100 characters, not {chars}"));
        }
    }
    let severity = severity(&f)?;
    let autofix = autofix(&f, mode)?;
    let confidence = match f.0.value(field!("confidence")) {
        None => return Err(missing(f.0, "confidence")),
        Some(v) => confidence(v, scale)?,
    };
    let has_fix = f
        .string(field!("suggested_fix"))?
        .is_some_and(|s| !s.as_str().trim().is_empty());
    let why = f.string(field!("why_it_matters"))?;
    let evidence = evidence(&f)?;
    let chars = |t: &str| t.chars().count() as u32;
    let text_chars = chars(title.as_str())
        + why.map_or(0, |w| chars(w.as_str()))
        + evidence.iter().map(|e| chars(e)).sum::<u32>();
    let location = match mode {
        Mode::Doc => doc_location(&f, places)?,
        Mode::Code => code_location(&f, places)?,
    };
    Ok(Finding {
        id,
        claim: Claim {
            title: places.share(title),
            severity,
            autofix,
            has_fix,
            evidence: evidence.into(),
            text_chars,
        },
        confidence,
        location,
    })
}

fn fail<T>(field: &str, reason: String) -> Result<T, FieldError> {
    Err((field.to_string(), reason))
}

/// A finding's fields, read by type.
struct Fields<'a, W>(&'a W);

impl<'a, W: Written> Fields<'a, W> {
    fn string(&self, field: Field) -> Result<Option<&'a W::Text>, FieldError> {
        match self.0.value(field) {
            None | Some(Val::Null) => Ok(None),
            Some(Val::Str(s)) => Ok(Some(s)),
            Some(other) => fail(
                field.name,
                format!("must be a string, not {}", other.kind().words()),
            ),
        }
    }

    fn required(&self, field: Field) -> Result<&'a W::Text, FieldError> {
        self.string(field)?
            .ok_or_else(|| missing(self.0, field.name))
    }

    fn boolean(&self, field: Field) -> Result<bool, FieldError> {
        match self.0.value(field) {
            Some(Val::Bool(b)) => Ok(b),
            None => Err(missing(self.0, field.name)),
            Some(other) => fail(
                field.name,
                format!("must be true or false, not {}", other.kind().words()),
            ),
        }
    }
}

/// A required field the finding lacks: "is missing", and the key it has one slip from the
/// field's name, when it has one (`confidnce`).
fn missing(f: &impl Written, field: &str) -> FieldError {
    let reason = match f.near(field) {
        Some(key) => format!(
            "is missing; the finding has `{}`: did you mean `{field}`?",
            crate::text::one_line(key)
        ),
        None => "is missing".to_string(),
    };
    (field.to_string(), reason)
}

fn severity(f: &Fields<'_, impl Written>) -> Result<Severity, FieldError> {
    match f.required(field!("severity"))?.as_str() {
        "P0" => Ok(Severity::P0),
        "P1" => Ok(Severity::P1),
        "P2" => Ok(Severity::P2),
        "P3" => Ok(Severity::P3),
        other => fail("severity", format!("`{other}` is not P0, P1, P2 or P3")),
    }
}

/// `autofix_class`: `advisory` is code review's alone.
fn autofix(f: &Fields<'_, impl Written>, mode: Mode) -> Result<Autofix, FieldError> {
    match (f.required(field!("autofix_class"))?.as_str(), mode) {
        ("safe_auto", _) => Ok(Autofix::SafeAuto),
        ("gated_auto", _) => Ok(Autofix::GatedAuto),
        ("manual", _) => Ok(Autofix::Manual),
        ("advisory", Mode::Code) => Ok(Autofix::Advisory),
        (other, Mode::Doc) => fail(
            "autofix_class",
            format!("`{other}` is not safe_auto, gated_auto or manual"),
        ),
        (other, Mode::Code) => fail(
            "autofix_class",
            format!("`{other}` is not safe_auto, gated_auto, manual or advisory"),
        ),
    }
}

/// `evidence`: absent, or a non-empty list of strings.
fn evidence(f: &Fields<'_, impl Written>) -> Result<Vec<Arc<str>>, FieldError> {
    match f.0.value(field!("evidence")) {
        None | Some(Val::Null) => Ok(Vec::new()),
        Some(Val::Array(a)) if a.is_empty() => fail(
            "evidence",
            "must not be empty when present (omit it instead)".into(),
        ),
        Some(Val::Array(a)) => a
            .texts()
            .map_or_else(|| fail("evidence", "must be a list of strings".into()), Ok),
        Some(other) => fail(
            "evidence",
            format!("must be a list of strings, not {}", other.kind().words()),
        ),
    }
}

/// Where a doc finding is: its section, whether it is an error or an omission, its premise.
fn doc_location(
    f: &Fields<'_, impl Written>,
    places: &mut impl Places,
) -> Result<Location, FieldError> {
    Ok(Location::Doc {
        section: places.share(f.required(field!("section"))?),
        finding_type: match f.required(field!("finding_type"))?.as_str() {
            "error" => FindingType::Error,
            "omission" => FindingType::Omission,
            other => {
                return fail(
                    "finding_type",
                    format!("`{other}` is not error or omission"),
                )
            }
        },
        premise: f
            .string(field!("premise"))?
            .map(|p| Box::new(SharedText::shared(p))),
    })
}

/// Where a code finding is: file and line, who owns the fix, and its two flags.
fn code_location(
    f: &Fields<'_, impl Written>,
    places: &mut impl Places,
) -> Result<Location, FieldError> {
    let file = f.required(field!("file"))?;
    if file.as_str().trim().is_empty() {
        return fail("file", "is empty".into());
    }
    let line = match f.0.value(field!("line")) {
        Some(Val::Number(n)) => match n.as_u64().and_then(|l| u32::try_from(l).ok()) {
            Some(l) if l >= 1 => l,
            _ => return fail("line", format!("{n} is not a whole number ≥ 1")),
        },
        None => return Err(missing(f.0, "line")),
        Some(other) => {
            return fail(
                "line",
                format!("must be a whole number ≥ 1, not {}", other.kind().words()),
            )
        }
    };
    let owner = match f.required(field!("owner"))?.as_str() {
        "review-fixer" => Owner::ReviewFixer,
        "downstream-resolver" => Owner::DownstreamResolver,
        "human" => Owner::Human,
        "release" => Owner::Release,
        other => {
            return fail(
                "owner",
                format!("`{other}` is not review-fixer, downstream-resolver, human or release"),
            )
        }
    };
    Ok(Location::Code(CodeSite {
        file: places.share(file),
        line,
        owner,
        requires_verification: f.boolean(field!("requires_verification"))?,
        pre_existing: f.boolean(field!("pre_existing"))?,
    }))
}

/// A doc finding.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct DocFinding {
    /// Unique in the corpus; judges' verdicts and validator calls name findings by it.
    id: Option<String>,
    /// 1 to 100 characters. Findings of one section with the same normalized title merge.
    #[schemars(length(min = 1, max = 100))]
    title: String,
    /// P0 (most severe) to P3; decides the float-gates gate.
    severity: Severity,
    /// The document section the finding is about; part of its merge key.
    section: String,
    /// `error` (something wrong) or `omission` (something missing).
    finding_type: FindingType,
    /// `safe_auto`, `gated_auto` or `manual`: how a fix may be applied. A merge keeps the
    /// most conservative.
    autofix_class: Autofix,
    /// On the arm's scale.
    confidence: f64,
    /// The fix; a non-empty one lets a `safe_auto` finding be applied automatically.
    suggested_fix: Option<String>,
    /// Shown in the report; not replayed.
    why_it_matters: Option<String>,
    /// Quotes or pointers backing the finding; at least one when present.
    #[schemars(length(min = 1))]
    evidence: Option<Vec<String>>,
    /// The root premise, used by same-persona collapse.
    premise: Option<String>,
}

/// A code finding.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct CodeFinding {
    /// Unique in the corpus; judges' verdicts and validator calls name findings by it.
    id: Option<String>,
    /// 1 to 100 characters. Findings on one file with the same normalized title, lines within
    /// 3 of each other, merge.
    #[schemars(length(min = 1, max = 100))]
    title: String,
    /// P0 (most severe) to P3.
    severity: Severity,
    /// The file, as a path in the change.
    #[schemars(pattern(r"\S"))]
    file: String,
    /// The line, from 1.
    #[schemars(range(min = 1, max = 4294967295u32))]
    line: u64,
    /// `safe_auto`, `gated_auto`, `manual` or `advisory`: how a fix may be applied. A merge
    /// keeps the most conservative.
    autofix_class: Autofix,
    /// Who acts on it: `review-fixer`, `downstream-resolver`, `human` or `release`.
    owner: Owner,
    /// The fix must be verified (tests run) before it lands.
    requires_verification: bool,
    /// The issue predates the change: it leaves the pipeline and is counted apart.
    pre_existing: bool,
    /// On the arm's scale.
    confidence: f64,
    /// The fix; a non-empty one lets a `safe_auto` finding be applied automatically.
    suggested_fix: Option<String>,
    /// Shown in the report; not replayed.
    why_it_matters: Option<String>,
    /// Quotes or pointers backing the finding; at least one when present.
    #[schemars(length(min = 1))]
    evidence: Option<Vec<String>>,
}

/// The JSON Schema of a finding under `mode` and `scale`: what `validate` accepts.
pub fn finding_schema(mode: Mode, scale: Scale) -> Value {
    let mut schema = match mode {
        Mode::Doc => serde_json::to_value(schemars::schema_for!(DocFinding)),
        Mode::Code => serde_json::to_value(schemars::schema_for!(CodeFinding)),
    }
    .unwrap_or(Value::Null);
    let confidence = match scale {
        Scale::Float => serde_json::json!({"type": "number", "minimum": 0, "maximum": 1,
            "description": "float scale: a number in [0, 1]"}),
        Scale::Anchor => serde_json::json!({"enum": [0, 25, 50, 75, 100],
            "description": "anchor scale: one of 0, 25, 50, 75, 100"}),
    };
    schema["properties"]["confidence"] = confidence;
    if mode == Mode::Doc {
        // `advisory` is a code class.
        if let Some(Value::Array(names)) = schema.pointer_mut("/$defs/Autofix/enum") {
            names.retain(|n| n != "advisory");
        }
    }
    schema
}

/// A confidence on the declared scale, or why not.
fn confidence<T>(v: Val<'_, T>, scale: Scale) -> Result<f64, FieldError> {
    let field = || "confidence".to_string();
    let x = match v {
        Val::Number(n) => n
            .as_f64()
            .ok_or_else(|| (field(), format!("{n} is not a number")))?,
        other => {
            return Err((
                field(),
                format!("must be a number, not {}", other.kind().words()),
            ))
        }
    };
    match scale {
        Scale::Float if (0.0..=1.0).contains(&x) => Ok(round9(x)),
        Scale::Float => Err((
            field(),
            format!("{x} is off the float scale: a number in [0, 1] is expected"),
        )),
        Scale::Anchor if [0.0, 25.0, 50.0, 75.0, 100.0].contains(&x) => Ok(x),
        Scale::Anchor => Err((
            field(),
            format!("{x} is off the anchor scale: one of 0, 25, 50, 75, 100 is expected"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::reviews::Unchecked;
    use serde_json::json;

    fn doc_finding() -> Value {
        json!({"id": "f1", "title": "Rollback is unspecified", "severity": "P1", "section": "Deploy",
               "finding_type": "omission", "autofix_class": "manual", "confidence": 0.72})
    }

    fn code_finding() -> Value {
        json!({"title": "Unchecked unwrap", "severity": "P2", "file": "src/a.rs", "line": 12,
               "autofix_class": "advisory", "owner": "human", "requires_verification": false,
               "pre_existing": false, "confidence": 75, "suggested_fix": null})
    }

    // A run holds every finding of the file before it replays one: a place is four words, as
    // a code site is, and a finding eleven (a premise held in line made both one more, a boxed
    // list of quotes the finding one more again, its text length outside its claim one more).
    #[test]
    fn a_place_is_four_words_and_a_finding_eleven() {
        let word = std::mem::size_of::<usize>();
        assert_eq!(std::mem::size_of::<Location>(), 4 * word);
        assert_eq!(std::mem::size_of::<Claim>(), 4 * word);
        assert_eq!(std::mem::size_of::<Finding>(), 11 * word);
        assert_eq!(std::mem::size_of::<Quotes>(), word);
    }

    #[test]
    fn quotes_read_and_are_written_as_the_list_they_hold() {
        let none = Quotes::from(Vec::new());
        assert!(none.is_empty() && none.0.is_none());
        assert_eq!(serde_json::to_value(&none).unwrap(), json!([]));
        let two = Quotes::from(vec![Arc::from("step 4"), Arc::from("no runbook")]);
        assert_eq!(two.len(), 2);
        assert_eq!(&*two[1], "no runbook");
        assert_eq!(
            serde_json::to_value(&two).unwrap(),
            json!(["step 4", "no runbook"])
        );
    }

    #[test]
    fn valid_doc_and_code_findings() {
        let f = Unchecked::check(&doc_finding(), Mode::Doc, Scale::Float).unwrap();
        assert_eq!(
            (f.claim.severity, f.claim.autofix, f.confidence),
            (Severity::P1, Autofix::Manual, 0.72)
        );
        assert!(!f.claim.has_fix);
        let f = Unchecked::check(&code_finding(), Mode::Code, Scale::Anchor).unwrap();
        assert!(matches!(
            f.location,
            Location::Code(CodeSite {
                line: 12,
                owner: Owner::Human,
                ..
            })
        ));
    }

    #[test]
    fn confidence_off_the_declared_scale_is_malformed() {
        let mut f = doc_finding();
        f["confidence"] = json!(0.85);
        let e = Unchecked::check(&f, Mode::Doc, Scale::Anchor).unwrap_err();
        assert_eq!(e.0, "confidence");
        assert!(e.1.contains("off the anchor scale"));
        f["confidence"] = json!(75);
        assert!(Unchecked::check(&f, Mode::Doc, Scale::Float)
            .unwrap_err()
            .1
            .contains("off the float scale"));
        f["confidence"] = json!(-0.1);
        assert!(Unchecked::check(&f, Mode::Doc, Scale::Float).is_err());
        f["confidence"] = json!("high");
        assert!(Unchecked::check(&f, Mode::Doc, Scale::Float).is_err());
    }

    #[test]
    fn float_confidence_is_rounded_to_nine_places() {
        let mut f = doc_finding();
        f["confidence"] = json!(0.55 + 0.10);
        assert_eq!(
            Unchecked::check(&f, Mode::Doc, Scale::Float)
                .unwrap()
                .confidence,
            0.65
        );
    }

    #[test]
    fn each_field_rule_is_enforced() {
        let cases: Vec<(&str, Value, Mode)> = vec![
            ("title", json!(""), Mode::Doc),
            ("title", json!("x".repeat(101)), Mode::Doc),
            ("severity", json!("P4"), Mode::Doc),
            ("finding_type", json!("typo"), Mode::Doc),
            ("autofix_class", json!("advisory"), Mode::Doc),
            ("evidence", json!([]), Mode::Doc),
            ("evidence", json!([1]), Mode::Doc),
            ("section", Value::Null, Mode::Doc),
            ("file", json!(""), Mode::Code),
            ("line", json!(0), Mode::Code),
            ("line", json!(2.5), Mode::Code),
            ("owner", json!("bot"), Mode::Code),
            ("pre_existing", json!("no"), Mode::Code),
        ];
        for (field, value, mode) in cases {
            let mut f = if mode == Mode::Doc {
                doc_finding()
            } else {
                code_finding()
            };
            f[field] = value;
            let scale = if mode == Mode::Doc {
                Scale::Float
            } else {
                Scale::Anchor
            };
            let e = Unchecked::check(&f, mode, scale).unwrap_err();
            assert_eq!(e.0, field, "{f}");
        }
    }

    #[test]
    fn compact_returns_without_the_detail_tier_are_valid() {
        // seed 003: why_it_matters and evidence are the detail tier; a compact return omits them.
        let f = Unchecked::check(&code_finding(), Mode::Code, Scale::Anchor).unwrap();
        assert!(f.claim.evidence.is_empty());
    }
}
