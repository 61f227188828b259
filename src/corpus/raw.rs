//! Review findings as written, read straight from a line's text.
//!
//! A run reads every finding of `reviews.jsonl` once and keeps only its typed form. Going
//! through `serde_json::Value` first built an ordered map per finding (a string per key, a
//! B-tree insert per field) only to take it apart again; at a million findings that was most of
//! the read. [`RawFinding`] keeps only the fields a finding's rules read, each as the JSON kind
//! it was written as, so that the finding rules can still say "must be a string, not a
//! number" in the words it always used.
//!
//! [`fast_line`] reads a whole `reviews.jsonl` line this way. It is only a faster route to the
//! same answer: when it refuses a line for any reason, the line is read again the general way
//! (`strict_json`, then the derived envelope type), whose message is the one reported, so every
//! refusal reads as it always did. A line it accepts is one the general way accepts with the same
//! values (a test holds the two to that on every example corpus and on hostile lines).
//!
//! A run tries a narrower route first: `scan::line` reads the lines writers usually write
//! without any [`Slot`], checking each finding by the same rules ([`Written`]); a line it is not
//! sure of comes here.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Number, Value};

use schemars::JsonSchema;
use serde::Serialize;

use super::{Kind, Strict, Text};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
}

/// One line of `reviews.jsonl` as written: the return's envelope. Its JSON Schema is derived
/// from this type. Findings stay unchecked here (JSON values, or [`RawFinding`]s as
/// [`fast_line`] reads them): a finding that breaks a field rule is malformed, dropped and
/// counted by `reviews::select` under the reading arm's scale, never a refusal of the line.
#[derive(Deserialize, JsonSchema)]
#[schemars(
    description = "One reviewer's return for one target, in one recorded arm and run.",
    extend(
        "if" = {"required": ["status"], "properties": {"status": {"const": "failed"}}},
        "else" = {"required": ["findings"]}
    )
)]
pub struct RawReturn<F = Value> {
    /// The reviewed document (doc mode) or change id (code mode).
    pub target: Text,
    /// The recorded variant that produced it.
    pub arm: Text,
    /// Persona name, e.g. `feasibility`.
    pub reviewer: Text,
    /// Repeat index, 0 when absent.
    #[schemars(range(max = 4294967295u32))]
    pub run: Option<u64>,
    /// `failed`: the reviewer errored, a failed rater, never "zero findings". `ok` when absent.
    pub status: Option<Status>,
    /// Why a failed return failed.
    pub reason: Option<String>,
    /// Doc or code findings; required when the status is ok (`[]` for none).
    pub findings: Option<Vec<F>>,
    /// Risks the reviewer names without a finding; kept, not replayed.
    pub residual_risks: Option<Vec<String>>,
    /// Questions the reviewer leaves to the author; kept, not replayed.
    pub deferred_questions: Option<Vec<String>>,
    /// Tests the reviewer found missing; kept, not replayed.
    pub testing_gaps: Option<Vec<String>>,
    /// The model that wrote the return, when the reviewer reports it: a reviewer whose model
    /// differs between the arms is a caveat unless `[arms.treatment] differs` names `model`.
    pub model: Option<Text>,
    /// What the call spent: tokens read and written, cost in US dollars (docs/reference.md,
    /// "Cost and latency").
    pub usage: Option<super::usage::Usage>,
    /// The call's wall time in milliseconds, as `collect` measured it.
    pub elapsed_ms: Option<super::usage::Amount>,
}

impl<F> RawReturn<F> {
    /// The same return with its findings turned into `G`s by `f`.
    pub fn map_findings<G>(self, f: impl FnOnce(Vec<F>) -> Vec<G>) -> RawReturn<G> {
        RawReturn {
            findings: self.findings.map(f),
            target: self.target,
            arm: self.arm,
            reviewer: self.reviewer,
            run: self.run,
            status: self.status,
            reason: self.reason,
            residual_risks: self.residual_risks,
            deferred_questions: self.deferred_questions,
            testing_gaps: self.testing_gaps,
            model: self.model,
            usage: self.usage,
            elapsed_ms: self.elapsed_ms,
        }
    }
}

/// A field's value, by the JSON kind it was written as. Arrays keep their elements (evidence is
/// a list of strings); an object's contents are not kept (no finding field is an object).
#[derive(Clone, Debug, PartialEq)]
pub enum Slot {
    Null,
    Bool(bool),
    Number(Number),
    Str(Arc<str>),
    Array(Vec<Slot>),
    Object,
}

impl Slot {
    /// What kind of JSON value it is: `kind().words()` is what messages say of it.
    pub fn kind(&self) -> Kind {
        match self {
            Slot::Null => Kind::Null,
            Slot::Bool(_) => Kind::Bool,
            Slot::Number(_) => Kind::Number,
            Slot::Str(_) => Kind::String,
            Slot::Array(_) => Kind::Array,
            Slot::Object => Kind::Object,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Slot::Str(s) => Some(s),
            _ => None,
        }
    }

    fn from_value(v: &Value) -> Slot {
        match v {
            Value::Null => Slot::Null,
            Value::Bool(b) => Slot::Bool(*b),
            Value::Number(n) => Slot::Number(n.clone()),
            Value::String(s) => Slot::Str(s.as_str().into()),
            Value::Array(a) => Slot::Array(a.iter().map(Slot::from_value).collect()),
            Value::Object(_) => Slot::Object,
        }
    }
}

/// A text a finding holds, as its rules read it and as a checked finding keeps it.
pub trait SharedText {
    fn as_str(&self) -> &str;
    /// The text as a string the checked finding can share.
    fn shared(&self) -> Arc<str>;
    /// The text as a finding's id ([`FindingId`]): the same one however often asked.
    fn id(&self) -> FindingId;
}

/// A finding's id: shared, as its text is, by the duplicate-id check and the merged findings
/// that name it, but counted without `std`'s second (weak) count. A million ids are held
/// before any is replayed, and a 31-byte id is then a 40-byte block rather than a 56-byte one.
pub type FindingId = triomphe::Arc<str>;

/// An id written as its text (`triomphe` writes only sized values itself).
pub fn written_id<S: serde::Serializer>(id: &Option<FindingId>, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&id.as_deref(), s)
}

impl SharedText for Arc<str> {
    fn as_str(&self) -> &str {
        self
    }
    fn shared(&self) -> Arc<str> {
        self.clone()
    }
    /// A copy: only lines the fast reader refuses are read this way.
    fn id(&self) -> FindingId {
        FindingId::from(&**self)
    }
}

/// A field's value as the finding's rules read it ([`Written::value`]), held by [`Slot`]s or
/// straight from the line's text (`scan`): the same rules, the same messages, for both.
pub enum Val<'a, T> {
    Null,
    Bool(bool),
    Number(&'a Number),
    Str(&'a T),
    Array(Items<'a, T>),
    Object,
}

/// An array's elements: any values, or texts only.
pub enum Items<'a, T> {
    Slots(&'a [Slot]),
    Texts(&'a [T]),
}

impl<T: SharedText> Items<'_, T> {
    pub fn is_empty(&self) -> bool {
        match self {
            Items::Slots(s) => s.is_empty(),
            Items::Texts(t) => t.is_empty(),
        }
    }

    /// Every element as a shared string, when every element is a string.
    pub fn texts(&self) -> Option<Vec<Arc<str>>> {
        match self {
            Items::Slots(s) => s
                .iter()
                .map(|v| match v {
                    Slot::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
            Items::Texts(t) => Some(t.iter().map(SharedText::shared).collect()),
        }
    }
}

impl<T> Val<'_, T> {
    /// What kind of JSON value it is: `kind().words()` is what messages say of it.
    pub fn kind(&self) -> Kind {
        match self {
            Val::Null => Kind::Null,
            Val::Bool(_) => Kind::Bool,
            Val::Number(_) => Kind::Number,
            Val::Str(_) => Kind::String,
            Val::Array(_) => Kind::Array,
            Val::Object => Kind::Object,
        }
    }
}

/// A finding object's fields as written, however they are held: what its rules read.
pub trait Written {
    type Text: SharedText;
    /// The value of `field`, if the finding has it.
    fn value(&self, field: Field) -> Option<Val<'_, Self::Text>>;
    /// A key the finding has that is one slip from the field `name`, if any.
    fn near(&self, name: &str) -> Option<&str>;
    /// What it was instead of an object, if it is not one (a malformed finding).
    fn not_object(&self) -> Option<Kind> {
        None
    }
}

impl Written for RawFinding {
    type Text = Arc<str>;
    fn value(&self, field: Field) -> Option<Val<'_, Arc<str>>> {
        Some(match self.field(field)? {
            Slot::Null => Val::Null,
            Slot::Bool(b) => Val::Bool(*b),
            Slot::Number(n) => Val::Number(n),
            Slot::Str(s) => Val::Str(s),
            Slot::Array(a) => Val::Array(Items::Slots(a)),
            Slot::Object => Val::Object,
        })
    }
    fn near(&self, name: &str) -> Option<&str> {
        RawFinding::near(self, name)
    }
    fn not_object(&self) -> Option<Kind> {
        match self {
            RawFinding::Not(kind) => Some(*kind),
            RawFinding::Object(_) => None,
        }
    }
}

/// The fields of a finding that its rules read. Any other key is read
/// (a key repeated inside it still refuses the line) and not kept.
pub const FINDING_FIELDS: [&str; 16] = [
    "id",
    "title",
    "severity",
    "section",
    "finding_type",
    "autofix_class",
    "confidence",
    "suggested_fix",
    "why_it_matters",
    "evidence",
    "premise",
    "file",
    "line",
    "owner",
    "requires_verification",
    "pre_existing",
];

/// Where a key may be in [`FINDING_FIELDS`], by its length and first byte: the one field that
/// could be it, found with one comparison (the sixteen fields differ in that pair, and the
/// table is built, and checked to have no two in one entry, as the code is compiled).
const BY_SHAPE: [u8; 64] = {
    let mut table = [u8::MAX; 64];
    let mut i = 0;
    while i < FINDING_FIELDS.len() {
        let at = shape(FINDING_FIELDS[i].as_bytes());
        assert!(table[at] == u8::MAX, "two finding fields share a shape");
        table[at] = i as u8;
        i += 1;
    }
    table
};

const fn shape(key: &[u8]) -> usize {
    let first = if key.is_empty() { 0 } else { key[0] as usize };
    (key.len() * 7 + first) % 64
}

/// The place of `key` in [`FINDING_FIELDS`], if it is a finding field.
pub fn finding_field(key: &str) -> Option<usize> {
    let at = usize::from(BY_SHAPE[shape(key.as_bytes())]);
    (FINDING_FIELDS.get(at)? == &key).then_some(at)
}

/// A field of [`FINDING_FIELDS`] and its place there. Made by `field!` in a `const`, so that
/// the place is found as the code is compiled (the rules read about ten fields of each of a
/// million findings) and a name that is not a finding field does not compile.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    at: u8,
}

impl Field {
    /// The field `name`; in a `const`, a name that is not a finding field stops the build:
    ///
    /// ```compile_fail
    /// use calibench::corpus::raw::Field;
    /// const TITLE: Field = Field::named("titel"); // misspelt: the build stops here
    /// ```
    pub const fn named(name: &'static str) -> Field {
        let mut i = 0;
        while i < FINDING_FIELDS.len() {
            if crate::text::same_bytes(FINDING_FIELDS[i].as_bytes(), name.as_bytes()) {
                return Field { name, at: i as u8 };
            }
            i += 1;
        }
        panic!("not a field of FINDING_FIELDS")
    }

    /// Its place in [`FINDING_FIELDS`].
    pub const fn place(self) -> usize {
        self.at as usize
    }
}

/// The finding field named `$name` ([`Field`]), its place found as the code is compiled.
macro_rules! field {
    ($name:literal) => {
        const { $crate::corpus::raw::Field::named($name) }
    };
}
pub(crate) use field;

/// Marks a field entry that holds an unknown key one slip from a known field (`confidnce`),
/// kept as its text so that a finding missing the field can say "did you mean". The entry's
/// index is `NEAR | i`, `i` the known field's place: [`RawFinding::get`] never finds it.
const NEAR: u8 = 0x80;

/// The known field `key` most likely meant, when `key` is not one: the same but for case, or
/// close enough to be a typo.
pub(crate) fn near_field(key: &str) -> Option<u8> {
    let lower = key.to_lowercase();
    FINDING_FIELDS
        .iter()
        .position(|f| *f == lower)
        .or_else(|| {
            let at = crate::text::nearest(&lower, &FINDING_FIELDS)?;
            FINDING_FIELDS.iter().position(|f| *f == at)
        })
        .map(|i| i as u8)
}

/// Keeps the unknown `key` when it is one slip from a known field: of two such keys for one
/// field, the first in text order, whatever order they were written in.
fn keep_near(fields: &mut Vec<(u8, Slot)>, key: &str) {
    let Some(i) = near_field(key) else {
        return;
    };
    match fields.iter_mut().find(|(at, _)| *at == NEAR | i) {
        Some((_, Slot::Str(kept))) if key < &**kept => *kept = key.into(),
        Some(_) => {}
        None => fields.push((NEAR | i, Slot::Str(key.into()))),
    }
}

/// One element of a return's `findings` as written: its known fields, or what it was instead of
/// an object (a finding that is not an object is malformed, not a refusal of the line).
///
/// An object keeps the fields it has, each with its place in [`FINDING_FIELDS`]: an empty or
/// near-empty object costs nothing beyond its entry, so a line of a million `{}` findings costs
/// no more than its text (a fixed slot per known field cost 512 bytes each).
#[derive(Clone, Debug, PartialEq)]
pub enum RawFinding {
    Object(Vec<(u8, Slot)>),
    Not(Kind),
}

impl RawFinding {
    /// The field `name`, if the finding is an object that has it. `name` is one of
    /// [`FINDING_FIELDS`].
    pub fn get(&self, name: &str) -> Option<&Slot> {
        let i = FINDING_FIELDS.iter().position(|f| *f == name);
        debug_assert!(i.is_some(), "`{name}` is not in FINDING_FIELDS");
        self.at(i? as u8)
    }

    /// The field `field`, if the finding is an object that has it.
    pub fn field(&self, field: Field) -> Option<&Slot> {
        self.at(field.at)
    }

    fn at(&self, i: u8) -> Option<&Slot> {
        match self {
            RawFinding::Object(fields) => fields.iter().find(|(at, _)| *at == i).map(|(_, s)| s),
            RawFinding::Not(_) => None,
        }
    }

    /// The string field `name`, if it is one.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Slot::as_str)
    }

    /// A key the finding has that is one slip from the field `name` (`confidnce` for
    /// `confidence`), if any.
    pub fn near(&self, name: &str) -> Option<&str> {
        let i = FINDING_FIELDS.iter().position(|f| *f == name)? as u8;
        match self {
            RawFinding::Object(fields) => fields
                .iter()
                .find(|(at, _)| *at == NEAR | i)
                .and_then(|(_, s)| s.as_str()),
            RawFinding::Not(_) => None,
        }
    }
}

impl From<&Value> for RawFinding {
    fn from(v: &Value) -> Self {
        let Value::Object(o) = v else {
            return RawFinding::Not(Kind::of(v));
        };
        let mut fields: Vec<(u8, Slot)> = FINDING_FIELDS
            .iter()
            .enumerate()
            .filter_map(|(i, name)| Some((i as u8, Slot::from_value(o.get(*name)?))))
            .collect();
        for key in o.keys().filter(|k| !FINDING_FIELDS.contains(&k.as_str())) {
            keep_near(&mut fields, key);
        }
        fields.sort_unstable_by_key(|(i, _)| *i);
        RawFinding::Object(fields)
    }
}

/// The most findings one return may hold: a return is one reviewer's review of one target, and
/// a line of millions of findings is a broken writer, not a review. Beyond it the line is
/// refused as it is read, without holding its findings.
pub const MAX_FINDINGS: usize = 10_000;

/// How [`fast_line`] failed: a line it refuses for good (it says why), or one the general reader
/// must read to say why.
#[derive(Debug)]
pub enum Refused {
    /// More than [`MAX_FINDINGS`] findings.
    TooManyFindings,
    Other(serde_json::Error),
}

/// The marker error message of a line over [`MAX_FINDINGS`].
const TOO_MANY: &str = "calibench: too many findings";

/// The `reviews.jsonl` line `text` read as a return, or an error when the general reader must
/// say why not. The error's wording is never shown.
pub fn fast_line(text: &str) -> Result<RawReturn<RawFinding>, Refused> {
    let mut de = serde_json::Deserializer::from_str(text);
    let read = Fast::deserialize(&mut de).and_then(|Fast(line)| de.end().map(|()| line));
    read.map_err(|e| {
        if e.to_string().starts_with(TOO_MANY) {
            Refused::TooManyFindings
        } else {
            Refused::Other(e)
        }
    })
}

/// A return's findings, read one at a time and refused past [`MAX_FINDINGS`].
struct Findings(Vec<RawFinding>);

impl<'de> Deserialize<'de> for Findings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Findings;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of findings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Findings, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(f) = seq.next_element::<RawFinding>()? {
                    if out.len() == MAX_FINDINGS {
                        return Err(de::Error::custom(TOO_MANY));
                    }
                    out.push(f);
                }
                Ok(Findings(out))
            }
        }
        d.deserialize_seq(V)
    }
}

/// Refused: the general reader will say why.
fn refuse<E: de::Error>() -> E {
    E::custom("read the general way")
}

/// A key of an object whose known keys are `names`: its position there, or the key itself.
enum Key {
    Known(usize),
    Other(String),
}

struct Names(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Names {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Names {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(match self.0.iter().position(|n| *n == v) {
            Some(i) => Key::Known(i),
            None => Key::Other(v.to_string()),
        })
    }
}

/// Reads a key no earlier key of the object had, `seen` holding the unknown ones so far.
fn unknown<'de, A: MapAccess<'de>>(
    map: &mut A,
    seen: &mut Vec<String>,
    key: String,
) -> Result<(), A::Error> {
    if seen.contains(&key) {
        return Err(refuse());
    }
    seen.push(key);
    // Read strictly (a repeated key inside refuses the line), then dropped.
    map.next_value::<Strict>()?;
    Ok(())
}

const ENVELOPE: [&str; 13] = [
    "target",
    "arm",
    "reviewer",
    "run",
    "status",
    "reason",
    "findings",
    "residual_risks",
    "deferred_questions",
    "testing_gaps",
    "model",
    "usage",
    "elapsed_ms",
];

struct Fast(RawReturn<RawFinding>);

impl<'de> Deserialize<'de> for Fast {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(FastVisitor)
    }
}

struct FastVisitor;

impl<'de> Visitor<'de> for FastVisitor {
    type Value = Fast;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a return")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fast, A::Error> {
        let mut r = Envelope::default();
        let mut seen = Vec::new();
        while let Some(key) = map.next_key_seed(Names(&ENVELOPE))? {
            let read = match key {
                Key::Known(0) => once(&mut r.target, map.next_value()?),
                Key::Known(1) => once(&mut r.arm, map.next_value()?),
                Key::Known(2) => once(&mut r.reviewer, map.next_value()?),
                Key::Known(3) => once(&mut r.run, map.next_value()?),
                Key::Known(4) => once(&mut r.status, map.next_value()?),
                Key::Known(5) => once(&mut r.reason, map.next_value()?),
                Key::Known(6) => once(
                    &mut r.findings,
                    map.next_value::<Option<Findings>>()?.map(|f| f.0),
                ),
                Key::Known(7) => once(&mut r.residual, map.next_value()?),
                Key::Known(8) => once(&mut r.deferred, map.next_value()?),
                Key::Known(9) => once(&mut r.gaps, map.next_value()?),
                Key::Known(10) => once(&mut r.model, map.next_value()?),
                Key::Known(11) => once(&mut r.usage, map.next_value()?),
                Key::Known(12) => once(&mut r.elapsed_ms, map.next_value()?),
                Key::Known(_) => None,
                Key::Other(key) => {
                    unknown(&mut map, &mut seen, key)?;
                    Some(())
                }
            };
            read.ok_or_else(refuse)?;
        }
        r.finish().map(Fast).ok_or_else(refuse)
    }
}

/// A return's envelope as its keys are read, each at most once ([`once`]): what both fast
/// readers fill ([`fast_line`] and `scan::line`) and turn into the return.
pub(crate) struct Envelope<F> {
    pub target: Option<Text>,
    pub arm: Option<Text>,
    pub reviewer: Option<Text>,
    pub run: Option<Option<u64>>,
    pub status: Option<Option<Status>>,
    pub reason: Option<Option<String>>,
    pub findings: Option<Option<Vec<F>>>,
    pub residual: Option<Option<Vec<String>>>,
    pub deferred: Option<Option<Vec<String>>>,
    pub gaps: Option<Option<Vec<String>>>,
    pub model: Option<Option<Text>>,
    pub usage: Option<Option<super::usage::Usage>>,
    pub elapsed_ms: Option<Option<super::usage::Amount>>,
}

impl<F> Default for Envelope<F> {
    fn default() -> Self {
        Envelope {
            target: None,
            arm: None,
            reviewer: None,
            run: None,
            status: None,
            reason: None,
            findings: None,
            residual: None,
            deferred: None,
            gaps: None,
            model: None,
            usage: None,
            elapsed_ms: None,
        }
    }
}

impl<F> Envelope<F> {
    /// The return, when its required keys were read.
    pub fn finish(self) -> Option<RawReturn<F>> {
        Some(RawReturn {
            target: self.target?,
            arm: self.arm?,
            reviewer: self.reviewer?,
            run: self.run.flatten(),
            status: self.status.flatten(),
            reason: self.reason.flatten(),
            findings: self.findings.flatten(),
            residual_risks: self.residual.flatten(),
            deferred_questions: self.deferred.flatten(),
            testing_gaps: self.gaps.flatten(),
            model: self.model.flatten(),
            usage: self.usage.flatten(),
            elapsed_ms: self.elapsed_ms.flatten(),
        })
    }
}

/// Sets a key's value read once; `None` (the line goes the general way) the second time.
pub(crate) fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

impl<'de> Deserialize<'de> for RawFinding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FindingVisitor)
    }
}

struct FindingVisitor;

impl<'de> Visitor<'de> for FindingVisitor {
    type Value = RawFinding;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a finding")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawFinding, A::Error> {
        let mut fields: Vec<(u8, Slot)> = Vec::new();
        let mut seen = Vec::new();
        while let Some(key) = map.next_key_seed(Names(&FINDING_FIELDS))? {
            match key {
                Key::Known(i) => {
                    if fields.iter().any(|(at, _)| usize::from(*at) == i) {
                        return Err(refuse());
                    }
                    if fields.is_empty() {
                        // Room for a doc or code finding's usual fields in one allocation.
                        fields.reserve_exact(8);
                    }
                    fields.push((i as u8, map.next_value::<Slot>()?));
                }
                Key::Other(key) => {
                    keep_near(&mut fields, &key);
                    unknown(&mut map, &mut seen, key)?
                }
            }
        }
        // In the order of FINDING_FIELDS, as the general reader builds them (the near keys,
        // marked NEAR, after them).
        fields.sort_unstable_by_key(|(i, _)| *i);
        // A sparse object (a hostile line of a million `{"title": 1}`) holds no more than it has.
        if fields.len() < 4 {
            fields.shrink_to_fit();
        }
        Ok(RawFinding::Object(fields))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawFinding, A::Error> {
        while seq.next_element::<Strict>()?.is_some() {}
        Ok(RawFinding::Not(Kind::Array))
    }
    fn visit_bool<E>(self, _: bool) -> Result<RawFinding, E> {
        Ok(RawFinding::Not(Kind::Bool))
    }
    fn visit_i64<E>(self, _: i64) -> Result<RawFinding, E> {
        Ok(RawFinding::Not(Kind::Number))
    }
    fn visit_u64<E>(self, _: u64) -> Result<RawFinding, E> {
        Ok(RawFinding::Not(Kind::Number))
    }
    fn visit_f64<E>(self, _: f64) -> Result<RawFinding, E> {
        Ok(RawFinding::Not(Kind::Number))
    }
    fn visit_str<E>(self, _: &str) -> Result<RawFinding, E> {
        Ok(RawFinding::Not(Kind::String))
    }
    fn visit_unit<E>(self) -> Result<RawFinding, E> {
        Ok(RawFinding::Not(Kind::Null))
    }
}

impl<'de> Deserialize<'de> for Slot {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::read_json(d)
    }
}

impl super::FromJson for Slot {
    fn null() -> Self {
        Slot::Null
    }
    fn bool(b: bool) -> Self {
        Slot::Bool(b)
    }
    fn number(n: Number) -> Self {
        Slot::Number(n)
    }
    fn string(s: String) -> Self {
        Slot::Str(s.into())
    }
    /// Straight into the shared string, as every finding's text field is read; a short one
    /// (a severity, a class, a section name) is shared with its last occurrence on this thread.
    fn str(s: &str) -> Self {
        Slot::Str(short_text(s))
    }
    fn array<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Slot>()? {
            items.push(item);
        }
        Ok(Slot::Array(items))
    }
    fn object<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        // Read strictly for its repeated keys, then kept as its kind alone.
        Strict::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(Slot::Object)
    }
}

/// The longest text [`short_text`] shares.
const SHORT: usize = 24;

std::thread_local! {
    /// The short texts this thread read last, one per slot of a hash of their bytes.
    static RECENT: std::cell::RefCell<[Option<Arc<str>>; 64]> =
        const { std::cell::RefCell::new([const { None }; 64]) };
}

/// `s` as a shared string. The fields a finding repeats from one finding to the next (severity,
/// finding type, autofix class, owner, often the section) are short: each is allocated once per
/// run of repeats on the reading thread instead of once per finding.
pub(crate) fn short_text(s: &str) -> Arc<str> {
    if s.len() > SHORT {
        return s.into();
    }
    let slot = s.bytes().fold(s.len() as u32, |h, b| {
        h.wrapping_mul(31).wrapping_add(u32::from(b))
    }) as usize
        % 64;
    RECENT.with_borrow_mut(|recent| match &recent[slot] {
        Some(held) if **held == *s => held.clone(),
        _ => {
            let text: Arc<str> = s.into();
            recent[slot] = Some(text.clone());
            text
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_shared_and_read_as_written() {
        let (a, b) = (short_text("P1"), short_text("P1"));
        assert!(Arc::ptr_eq(&a, &b));
        for s in [
            "",
            "P0",
            "Section 3",
            "manual",
            "é",
            &"x".repeat(SHORT),
            &"y".repeat(SHORT + 1),
        ] {
            assert_eq!(&*short_text(s), s);
            assert_eq!(&*short_text(s), s);
        }
        let long = "z".repeat(SHORT + 1);
        assert!(!Arc::ptr_eq(&short_text(&long), &short_text(&long)));
    }

    // The fast route is only worth having if the lines users write take it: every line of every
    // example corpus does.
    #[test]
    fn every_example_return_is_read_by_the_fast_route() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
        let mut lines = 0;
        for dir in std::fs::read_dir(root).unwrap() {
            let path = dir.unwrap().path().join("reviews.jsonl");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            for (i, line) in text.lines().enumerate() {
                assert!(fast_line(line).is_ok(), "{}:{}", path.display(), i + 1);
                lines += 1;
            }
        }
        assert!(lines > 100, "{lines}");
    }

    // The envelope's keys are the derived type's fields, which its JSON Schema lists.
    #[test]
    fn the_envelope_keys_are_the_fields_of_the_derived_type() {
        let schema = serde_json::to_value(schemars::schema_for!(RawReturn)).unwrap();
        let mut fields: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut envelope = ENVELOPE.to_vec();
        fields.sort_unstable();
        envelope.sort_unstable();
        assert_eq!(fields, envelope);
    }

    #[test]
    fn a_finding_keeps_its_fields_by_kind_and_drops_the_rest() {
        let v = serde_json::json!({"title": "t", "line": 3, "evidence": ["a", 1], "x": {"y": 1},
            "owner": {"z": 2}, "pre_existing": false, "premise": null});
        let f = RawFinding::from(&v);
        assert_eq!(f.text("title"), Some("t"));
        assert_eq!(f.get("line"), Some(&Slot::Number(3.into())));
        assert_eq!(
            f.get("evidence"),
            Some(&Slot::Array(vec![
                Slot::Str("a".into()),
                Slot::Number(1.into())
            ]))
        );
        assert_eq!(f.get("owner"), Some(&Slot::Object));
        assert_eq!(f.get("pre_existing"), Some(&Slot::Bool(false)));
        assert_eq!(f.get("premise"), Some(&Slot::Null));
        assert_eq!(f.get("id"), None);
        let read: RawFinding = serde_json::from_value(v).unwrap();
        assert_eq!(read, f);
        assert_eq!(
            RawFinding::from(&serde_json::json!([1])),
            RawFinding::Not(Kind::Array)
        );
    }
}
