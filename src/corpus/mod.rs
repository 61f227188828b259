//! Corpora: the recorded files an experiment replays, read and validated into typed values.

pub mod call;
pub mod collection;
pub mod files;
pub mod finding;
pub mod harness;
pub mod judges;
pub mod labels;
pub mod ledger;
pub mod queries;
pub mod raw;
pub mod reviews;
pub mod scan;
pub mod scores;
pub mod sources;
pub mod targets;
pub mod usage;
pub mod validations;
pub mod verdicts;

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{backticked, mismatch, InputError, Problems};
use queries::Query;
use reviews::Selection;
use verdicts::Item;

/// The files of a corpus, read and parsed.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    /// `reviews.jsonl`: its name for messages, and the returns each arm reads.
    pub reviews: Option<(String, Vec<Selection>)>,
    /// `verdicts.jsonl`: its name for messages, and every verdict item.
    pub verdicts: Option<(String, Vec<Item>)>,
    /// `queries.jsonl`: its name for messages, and every query in file order.
    pub queries: Option<(String, Vec<Query>)>,
    /// `validations.jsonl`: its name for messages, and every validator call in file order.
    pub validations: Option<(String, Vec<validations::Validation>)>,
    /// `targets.jsonl`: its name for messages, and every target's metadata.
    pub targets: Option<(String, Vec<targets::Target>)>,
    /// `sources/`: the snapshots lint-ignore reads.
    pub sources: Option<sources::Sources>,
    /// `scores.jsonl`: its name for messages, and every imported score line in file order.
    pub scores: Option<(String, Vec<scores::Score>)>,
    /// `labels.jsonl`: its name for messages, and every human label in file order.
    pub labels: Option<(String, Vec<labels::Label>)>,
}

impl Corpus {
    /// Whether the corpus holds `file` (a collection's own `judges.jsonl` is never read).
    pub fn has(&self, file: files::File) -> bool {
        use files::File;
        match file {
            File::Reviews => self.reviews.is_some(),
            File::Validations => self.validations.is_some(),
            File::Targets => self.targets.is_some(),
            File::Verdicts => self.verdicts.is_some(),
            File::Labels => self.labels.is_some(),
            File::Queries => self.queries.is_some(),
            File::Scores => self.scores.is_some(),
            File::Judges => false,
        }
    }
}

/// The non-blank lines of a JSON Lines file, numbered from 1. A UTF-8 byte-order mark before
/// the first line is skipped, as the CSV readers skip it (editors on Windows write one).
pub(crate) fn nonblank_lines(bytes: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    lines_from(bytes, 1)
}

/// A UTF-8 byte-order mark.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The non-blank lines of `block`, a run of whole lines whose first is line `first`.
/// Lines end at `\n`, found by `memchr` (a byte-at-a-time split was a twentieth of a large
/// run's reading).
pub(crate) fn lines_from(block: &[u8], first: u64) -> impl Iterator<Item = (u64, &[u8])> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', block)
        .chain(std::iter::once(block.len()))
        .map(move |end| {
            let line = &block[start..end];
            start = end + 1;
            line
        })
        .enumerate()
        .filter(|(_, raw)| raw.iter().any(|b| !b.is_ascii_whitespace()))
        .map(move |(i, raw)| (first + i as u64, raw))
}

/// One line's text, or the error for a line that is not valid UTF-8.
pub(crate) fn line_text<'a>(name: &str, line: u64, raw: &'a [u8]) -> Result<&'a str, InputError> {
    std::str::from_utf8(raw)
        .map_err(|_| InputError::new(name, "the line is not valid UTF-8").at_line(line))
}

/// The non-blank lines of a JSON Lines file, numbered from 1, each parsed as one JSON object
/// by [`object`].
pub(crate) fn objects<'a>(
    name: &'a str,
    bytes: &'a [u8],
    hint: &'static str,
) -> impl Iterator<Item = Result<(u64, Map<String, Value>), InputError>> + 'a {
    nonblank_lines(bytes).map(move |(line, raw)| object(name, line, raw, hint))
}

/// One line parsed as one JSON object by [`strict_json`]; a line that is not valid UTF-8, not
/// an object, or repeats a key is an error naming it, with `hint`.
pub(crate) fn object(
    name: &str,
    line: u64,
    raw: &[u8],
    hint: &'static str,
) -> Result<(u64, Map<String, Value>), InputError> {
    let text = line_text(name, line, raw)?;
    match strict_json(text) {
        Ok(Value::Object(o)) => Ok((line, o)),
        Ok(other) => Err(InputError::new(
            name,
            format!("not a JSON object: the line holds {}", kind(&other)),
        )
        .at_line(line)
        .hint(hint)),
        Err(e) if e.is_data() => Err(InputError::new(name, e.to_string()).at_line(line)),
        Err(e) => Err(InputError::new(name, format!("not a JSON object: {e}"))
            .at_line(line)
            .hint(hint)),
    }
}

/// An `Option` that must be written: `null` is `None`, a missing key is refused.
pub(crate) fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Option::deserialize(d)
}

/// A string field that must hold something: `""` or blanks are refused as "is empty".
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema, serde::Serialize)]
#[serde(transparent)]
pub struct Text(#[schemars(pattern(r"\S"))] pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.trim().is_empty() {
            return Err(de::Error::custom("is empty"));
        }
        Ok(Text(s))
    }
}

/// An id: a non-blank string, or a number read as its decimal text (`"item_id": 7` is `"7"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Id(pub String);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Number(n) => Ok(Id(n.to_string())),
            Value::String(s) if s.trim().is_empty() => Err(de::Error::custom("is empty")),
            Value::String(s) => Ok(Id(s)),
            other => Err(de::Error::custom(format_args!(
                "must be a string, not {}",
                kind(&other)
            ))),
        }
    }
}

impl JsonSchema for Id {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Id".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A non-blank string, or a number read as its decimal text.",
            "anyOf": [{"type": "string", "pattern": "\\S"}, {"type": "number"}]
        })
    }
}

/// An item's id with its type kept: `1` and `"1"` are different items, and a
/// numeric-looking string stays a string. Whole numbers sort before text, numbers by value and
/// text as written, so `10` sorts after `2`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemId {
    Number(i64),
    Text(String),
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ItemId::Number(n) => write!(f, "{n}"),
            ItemId::Text(s) => write!(f, "{s:?}"),
        }
    }
}

impl ItemId {
    /// The id a log wrote, kept by its JSON type; `None` for anything but a whole number or a
    /// non-blank string.
    pub fn from_json(v: &Value) -> Option<ItemId> {
        match v {
            Value::Number(n) => n.as_i64().map(ItemId::Number),
            Value::String(s) if !s.trim().is_empty() => Some(ItemId::Text(s.clone())),
            _ => None,
        }
    }
}

impl Serialize for ItemId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ItemId::Number(n) => s.serialize_i64(*n),
            ItemId::Text(t) => s.serialize_str(t),
        }
    }
}

impl<'de> Deserialize<'de> for ItemId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        ItemId::from_json(&v).ok_or_else(|| {
            de::Error::custom(format_args!(
                "must be a whole number or a non-blank string, not {}",
                kind(&v)
            ))
        })
    }
}

impl JsonSchema for ItemId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ItemId".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The item's id as the log wrote it: a whole number or a non-blank string, never converted (1 and \"1\" are different items).",
            "anyOf": [{"type": "integer"}, {"type": "string", "pattern": "\\S"}]
        })
    }
}

/// How a JSON Lines file's lines are described in messages: what one line holds, and advice per
/// field, by its path with indices dropped (`tools.relevant`).
pub(crate) struct Lines {
    pub holds: &'static str,
    pub hints: &'static [(&'static str, &'static str)],
}

/// The lines of a JSON Lines file read as `T`, the file's serde-derived line type: each line's
/// object from [`objects`], then [`typed`].
pub(crate) fn records<'a, T: DeserializeOwned>(
    name: &'a str,
    bytes: &'a [u8],
    lines: &'a Lines,
) -> impl Iterator<Item = Result<(u64, T), InputError>> + 'a {
    objects(name, bytes, lines.holds)
        .map(move |o| o.and_then(|(line, o)| Ok((line, typed(name, line, o, lines.hints)?))))
}

/// What keeps a corpus file's lines apart: the field a repeat is reported on, what to do about
/// it, the call a line records (no two lines may record one), and what a repeat is (without
/// where the first one was).
pub(crate) struct Repeats<T> {
    pub field: &'static str,
    pub hint: Option<&'static str>,
    pub key: fn(&T) -> call::Call,
    pub says: fn(&T) -> String,
}

/// Reads every line as `R` and checks it into `T` (`check(name, line, raw)`), keeping each one
/// whose call no earlier line recorded; a repeat is refused on `repeats.field`, naming the first
/// line. Returns every problem, so that `validate` lists them all.
///
/// The lines kept are found again by their call's hash, with their position and line: 24 bytes
/// a line, whatever the call holds (a table of the calls themselves took 72 for a label line,
/// 47 MB more at a million labels). Two calls are compared whole only when their hashes agree.
pub(crate) fn parse_unique<R: DeserializeOwned, T>(
    (name, bytes): (&str, &[u8]),
    lines: &Lines,
    check: impl Fn(&str, u64, R) -> Result<T, InputError>,
    repeats: Repeats<T>,
) -> (Vec<T>, Problems) {
    let mut kept: Vec<T> = Vec::new();
    let mut problems = Problems::default();
    let state = foldhash::fast::RandomState::default();
    // (the call's hash, its line's position in `kept`, the line it was on)
    let mut seen: hashbrown::HashTable<(u64, u32, u64)> = hashbrown::HashTable::new();
    for raw in records(name, bytes, lines) {
        let (line, t) = match raw.and_then(|(line, raw)| Ok((line, check(name, line, raw)?))) {
            Ok(checked) => checked,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let call = (repeats.key)(&t);
        let hash = std::hash::BuildHasher::hash_one(&state, &call);
        let same =
            |&(h, at, _): &(u64, u32, u64)| h == hash && (repeats.key)(&kept[at as usize]) == call;
        if let Some(&(_, _, first)) = seen.find(hash, same) {
            let problem = format!("{} (first on line {first})", (repeats.says)(&t));
            let e = field_error(name, line, repeats.field, problem);
            problems.push(match repeats.hint {
                Some(hint) => e.hint(hint),
                None => e,
            });
            continue;
        }
        let at = u32::try_from(kept.len()).expect("fewer than 2^32 lines: each is held");
        seen.insert_unique(hash, (hash, at, line), |&(h, ..)| h);
        kept.push(t);
    }
    (kept, problems)
}

/// Lines already read as `R`, each checked into `T` and passed to `keep` unless its `key`
/// repeats an earlier line's (refused with `repeat(t, line, first_line)`). `expect`, asked once
/// the first line is read, is how many lines to take room for.
pub(crate) fn unique<R, T, K: Eq + std::hash::Hash + Clone>(
    raws: impl Iterator<Item = Result<(u64, R), InputError>>,
    expect: impl FnOnce() -> Option<usize>,
    check: impl Fn(u64, R) -> Result<T, InputError>,
    mut key: impl FnMut(&T) -> K,
    repeat: impl Fn(&T, u64, u64) -> InputError,
    mut keep: impl FnMut(T),
) -> Problems {
    let mut problems = Problems::default();
    // Each key with its first line in four bytes ([`Line32`]): a million-finding corpus's
    // 400,000 returns hold 2 MB less than with the line whole.
    let mut first: std::collections::HashMap<K, Line32, foldhash::fast::RandomState> =
        std::collections::HashMap::default();
    let mut wide: std::collections::HashMap<K, u64> = std::collections::HashMap::new();
    let mut raws = raws.peekable();
    // Room for the lines `expect` says there are, once the first has been read.
    if raws.peek().is_some() {
        first.reserve(expect().unwrap_or(0));
    }
    for raw in raws {
        match raw.and_then(|(line, raw)| Ok((line, check(line, raw)?))) {
            Ok((line, t)) => match first.entry(key(&t)) {
                std::collections::hash_map::Entry::Occupied(o) => {
                    let first = o.get().or_else(|| wide[o.key()]);
                    problems.push(repeat(&t, line, first))
                }
                std::collections::hash_map::Entry::Vacant(v) => {
                    let narrow = Line32::keep(line, |line| {
                        wide.insert(v.key().clone(), line);
                    });
                    v.insert(narrow);
                    keep(t);
                }
            },
            Err(e) => problems.push(e),
        }
    }
    problems
}

/// A line number in four bytes, as the tables that hold one for every line of a file want; a
/// line past them (the four-billionth) is [`Line32::WIDE`], held whole beside the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line32(u32);

impl Line32 {
    pub(crate) const WIDE: Line32 = Line32(u32::MAX);

    /// `line` in four bytes, or [`Line32::WIDE`] once `hold_wide` has been given it whole.
    pub(crate) fn keep(line: u64, hold_wide: impl FnOnce(u64)) -> Line32 {
        match u32::try_from(line) {
            Ok(narrow) if narrow != Line32::WIDE.0 => Line32(narrow),
            _ => {
                hold_wide(line);
                Line32::WIDE
            }
        }
    }

    /// The line, or `wide()` for one held whole.
    pub(crate) fn or_else(self, wide: impl FnOnce() -> u64) -> u64 {
        if self == Line32::WIDE {
            wide()
        } else {
            u64::from(self.0)
        }
    }
}

/// Line numbers, one for each thing a table holds, in four bytes each ([`Line32`]).
#[derive(Debug, Default)]
pub(crate) struct Lines32 {
    narrow: Vec<Line32>,
    wide: std::collections::HashMap<usize, u64>,
}

impl Lines32 {
    pub(crate) fn reserve(&mut self, n: usize) {
        self.narrow.reserve(n);
    }

    pub(crate) fn push(&mut self, line: u64) {
        let at = self.narrow.len();
        let narrow = Line32::keep(line, |line| {
            self.wide.insert(at, line);
        });
        self.narrow.push(narrow);
    }

    pub(crate) fn get(&self, i: usize) -> u64 {
        self.narrow[i].or_else(|| self.wide[&i])
    }
}

/// The error for `field` of one line.
pub(crate) fn field_error(name: &str, line: u64, field: &str, problem: String) -> InputError {
    InputError::new(name, problem)
        .at_line(line)
        .field(format!("field `{field}`"))
}

/// A repeat index as written (`run`): a whole number that fits.
pub(crate) fn repeat_index(name: &str, line: u64, run: Option<u64>) -> Result<u32, InputError> {
    run.map_or(Ok(0), |r| {
        u32::try_from(r).map_err(|_| {
            field_error(
                name,
                line,
                "run",
                format!("{r} is too large for a repeat index"),
            )
        })
    })
}

/// Reads one line's object as `T`. A refusal names the field by its path in the line
/// (`verdicts[1].model`) and says what the field must be, in the words the rest of calibench
/// uses; `hints` adds advice for a field, by its path with indices dropped (`tools.tool`).
pub(crate) fn typed<T: DeserializeOwned>(
    name: &str,
    line: u64,
    object: Map<String, Value>,
    hints: &[(&str, &str)],
) -> Result<T, InputError> {
    serde_path_to_error::deserialize(Value::Object(object)).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let message = e.inner().to_string();
        let (field, problem) = field_problem(&path, &message);
        let bare: String = {
            // `tools[3].hits` → `tools.hits`, the key `hints` are written under.
            let mut out = String::with_capacity(field.len());
            let mut skip = false;
            for c in field.chars() {
                match c {
                    '[' => skip = true,
                    ']' => skip = false,
                    _ if !skip => out.push(c),
                    _ => {}
                }
            }
            out
        };
        let err = InputError::new(name, problem).at_line(line).field(format!(
            "field `{}`",
            if field.is_empty() { "(line)" } else { &field }
        ));
        match hints.iter().find(|(f, _)| *f == bare) {
            Some((_, hint)) => err.hint(*hint),
            None => err,
        }
    })
}

/// The field a serde refusal at `path` is about, and the problem in calibench's words:
/// "is missing", "`x` is not one of a, b", "must be a string, not 5".
fn field_problem(path: &str, message: &str) -> (String, String) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    if let Some(rest) = message.strip_prefix("missing field `") {
        let key = rest.split('`').next().unwrap_or(rest);
        return (join(key), "is missing".into());
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let (value, expected) = rest.split_once('`').unwrap_or((rest, ""));
        return (
            path.to_string(),
            format!(
                "`{value}` is not one of {}",
                backticked(expected).join(", ")
            ),
        );
    }
    let problem = match mismatch(message) {
        Some((got, want)) => format!("must be {}, not {}", wanted(want), unexpected(got)),
        None => message.to_string(),
    };
    (path.to_string(), problem)
}

/// serde's name for what a field takes, as a message says it.
fn wanted(want: &str) -> &str {
    match want {
        "u64" | "u32" | "usize" => "a whole number ≥ 0",
        "i64" => "a whole number",
        "f64" => "a number",
        "a sequence" => "an array",
        "a map" => "an object",
        "a boolean" => "true or false",
        w if w.starts_with("struct ") => "an object",
        w => w,
    }
}

/// serde's description of a value it refused (`integer `5``, `map`), as a message says it.
fn unexpected(got: &str) -> String {
    let ticked = |prefix: &str| {
        got.strip_prefix(prefix)
            .map(|v| v.trim_matches('`').to_string())
    };
    if let Some(v) = ticked("integer ").or_else(|| ticked("floating point ")) {
        return v;
    }
    if let Some(v) = ticked("boolean ") {
        return v;
    }
    match got {
        "map" => "an object".into(),
        "sequence" => "an array".into(),
        "unit value" => "null".into(),
        other => other.strip_prefix("string ").unwrap_or(other).to_string(),
    }
}

/// "an array", "a string", …: what a JSON value is, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    Kind::of(v).words()
}

/// The six kinds of JSON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    pub fn of(v: &Value) -> Kind {
        match v {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        }
    }

    /// "an array", "a string", …: the words messages use for it.
    pub fn words(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// Parses one JSON text, refusing an object at any depth that repeats a key:
/// `serde_json` keeps the last of two, so `{"arm": "baseline", "arm": "treatment"}` would be
/// read as treatment without a word. The error for a repeated key is a data error
/// (`is_data()`) naming the key and its position.
pub(crate) fn strict_json(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let Strict(value) = Strict::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A JSON value read with repeated keys refused.
pub(crate) struct Strict(pub Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_json(d).map(Strict)
    }
}

/// A value built from JSON as it is parsed: each reader says what it keeps of a scalar, an
/// array and an object, and [`read_json`] does the visiting for all of them.
pub(crate) trait FromJson: Sized {
    fn null() -> Self;
    fn bool(b: bool) -> Self;
    /// Any number: JSON has no NaN or infinity, so every parsed float is a `Number`.
    fn number(n: serde_json::Number) -> Self;
    fn string(s: String) -> Self;
    /// A borrowed string: by default copied into [`FromJson::string`]; a reader that keeps
    /// strings its own way builds from the borrow, saving a copy per string.
    fn str(s: &str) -> Self {
        Self::string(s.to_owned())
    }
    fn array<'de, A: SeqAccess<'de>>(seq: A) -> Result<Self, A::Error>;
    fn object<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

/// Reads any JSON value as `T` (for a `Deserialize` impl).
pub(crate) fn read_json<'de, T: FromJson, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(JsonVisitor(std::marker::PhantomData))
}

struct JsonVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: FromJson> Visitor<'de> for JsonVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::null())
    }
    fn visit_none<E>(self) -> Result<T, E> {
        Ok(T::null())
    }
    fn visit_bool<E>(self, v: bool) -> Result<T, E> {
        Ok(T::bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<T, E> {
        Ok(T::number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok(T::number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<T, E> {
        Ok(serde_json::Number::from_f64(v).map_or_else(T::null, T::number))
    }
    fn visit_str<E>(self, v: &str) -> Result<T, E> {
        Ok(T::str(v))
    }
    fn visit_string<E>(self, v: String) -> Result<T, E> {
        Ok(T::string(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::array(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::object(map)
    }
}

impl FromJson for Value {
    fn null() -> Self {
        Value::Null
    }
    fn bool(b: bool) -> Self {
        Value::Bool(b)
    }
    fn number(n: serde_json::Number) -> Self {
        Value::Number(n)
    }
    fn string(s: String) -> Self {
        Value::String(s)
    }
    fn array<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    /// Strictly: a key repeated in one object is refused.
    fn object<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "the key `{key}` appears twice in one object (calibench will not guess which one counts)"
                )));
            }
            let Strict(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// How many lines of a file carry one `arm` label, and the first of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelCount {
    pub lines: u64,
    pub first: u64,
}

/// A file's lines by `arm` label.
pub type LabelCounts = std::collections::BTreeMap<String, LabelCount>;

/// Counts one more line under `label`.
pub fn count_label(counts: &mut LabelCounts, label: &str, line: u64) {
    match counts.get_mut(label) {
        Some(c) => {
            c.lines += 1;
            c.first = c.first.min(line);
        }
        None => {
            counts.insert(
                label.to_string(),
                LabelCount {
                    lines: 1,
                    first: line,
                },
            );
        }
    }
}

/// The distinct arm labels of a file's records, sorted and joined for a hint.
pub(crate) fn label_list<'a>(labels: impl Iterator<Item = &'a str>) -> String {
    let mut v: Vec<&str> = labels.collect();
    v.sort_unstable();
    v.dedup();
    v.join(", ")
}

/// An arm most of whose findings are malformed, and the likeliest reason: a corpus read on the
/// wrong terms (a scale or a mode that is not the one it was written in) looks exactly like
/// this, and its figures would describe the few findings that happened to fit.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, JsonSchema)]
pub struct MalformedShare {
    pub arm: String,
    /// Malformed findings, of `findings` the arm reads in all.
    pub malformed: usize,
    pub findings: usize,
    /// The commonest reason, by field and kind (`confidence: off the anchor scale`), and how
    /// many findings it accounts for.
    pub reason: String,
    pub reason_count: usize,
    /// What to change, when the reason points at the experiment (its `scale` or `mode`).
    pub fix: String,
}

impl MalformedShare {
    /// "58% (116 of 200) of arm `treatment`'s findings are malformed, 116 of them for
    /// confidence: off the anchor scale".
    pub fn sentence(&self) -> String {
        format!(
            "{}% ({} of {}) of arm `{}`'s findings are malformed, {} of them for {}",
            // Rounded down: not every finding is malformed, and the share must not say 100%.
            (100 * self.malformed) / self.findings.max(1),
            self.malformed,
            self.findings,
            self.arm,
            self.reason_count,
            self.reason
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A line number is held in four bytes and read back whole, however large: the last ones
    // that fit, the one kept as the mark, and those past it.
    #[test]
    fn lines_held_in_four_bytes_read_back_whole() {
        let max = u64::from(u32::MAX);
        let lines = [1, 7, max - 1, max, max + 1, u64::MAX, 12];
        let mut held = Lines32::default();
        for &l in &lines {
            held.push(l);
        }
        for (i, &l) in lines.iter().enumerate() {
            assert_eq!(held.get(i), l);
        }
        assert_eq!(held.wide.len(), 3);
        // A repeated key names its first line whole, past four bytes too.
        let raws = [(max + 3, "a"), (max + 9, "a"), (5, "b"), (max + 11, "b")];
        let mut kept = Vec::new();
        let problems = unique(
            raws.iter().map(|&(l, k)| Ok((l, k))),
            || None,
            |_, k| Ok(k),
            |&k| k,
            |k, line, first| InputError::new("f", format!("{k} on {line} first on {first}")),
            |k| kept.push(k),
        );
        assert_eq!(kept, ["a", "b"]);
        let said: Vec<String> = problems.iter().map(|e| e.to_string()).collect();
        assert!(
            said[0].contains(&format!("a on {} first on {}", max + 9, max + 3)),
            "{said:?}"
        );
        assert!(
            said[1].contains(&format!("b on {} first on 5", max + 11)),
            "{said:?}"
        );
    }

    // Lines are what splitting at every `\n` gives, numbered from `first`, blank ones left out:
    // at either end of a block, between two newlines, after a `\r`, and in a block of none.
    #[test]
    fn lines_are_the_text_between_newlines() {
        let by_split = |block: &[u8], first: u64| -> Vec<(u64, Vec<u8>)> {
            block
                .split(|&b| b == b'\n')
                .enumerate()
                .filter(|(_, raw)| raw.iter().any(|b| !b.is_ascii_whitespace()))
                .map(|(i, raw)| (first + i as u64, raw.to_vec()))
                .collect()
        };
        for block in [
            &b""[..],
            b"\n",
            b"\n\n\n",
            b"{}",
            b"{}\n",
            b"\n{}",
            b"{\"a\": 1}\r\n \t\n\n{\"b\": 2}\r\n{}",
            b"  \n x \n\t\n",
            b"\xEF\xBB\xBF{}\n{}",
        ] {
            for first in [1, 7] {
                let ours: Vec<(u64, Vec<u8>)> = lines_from(block, first)
                    .map(|(i, raw)| (i, raw.to_vec()))
                    .collect();
                assert_eq!(ours, by_split(block, first), "{block:?}");
            }
        }
    }

    // Regression (issue 21): `"arm"` twice on one line was read as the last one, silently.
    #[test]
    fn a_key_repeated_at_any_depth_is_refused_naming_the_key() {
        for (text, key) in [
            (r#"{"arm": "baseline", "arm": "treatment"}"#, "arm"),
            (
                r#"{"findings": [{"id": "a", "confidence": 50, "confidence": 75}]}"#,
                "confidence",
            ),
            (
                r#"{"v": {"per_dimension": {"real": 1, "real": 0}}}"#,
                "real",
            ),
        ] {
            let e = strict_json(text).unwrap_err();
            assert!(e.is_data(), "{e}");
            assert!(
                e.to_string()
                    .contains(&format!("the key `{key}` appears twice")),
                "{e}"
            );
            let (_, problem) = (0, objects("f.jsonl", text.as_bytes(), "h").next().unwrap());
            let problem = problem.unwrap_err();
            assert_eq!(problem.line, Some(1));
            assert!(
                problem.problem.contains(&format!("`{key}`")),
                "{}",
                problem.problem
            );
        }
        // The same key in two different objects is fine, and values keep their types.
        let v = strict_json(r#"{"a": {"k": 1}, "b": {"k": -2.5}, "c": [true, null, "s"], "d": 18446744073709551615}"#).unwrap();
        assert_eq!(v["b"]["k"], -2.5);
        assert_eq!(v["d"], u64::MAX);
        assert!(strict_json("{} {}").is_err());
    }

    // Regression (issue 21): a byte-order mark made the first line "not a JSON object".
    #[test]
    fn a_byte_order_mark_is_skipped_and_non_objects_are_named() {
        let lines: Vec<_> = objects("f.jsonl", b"\xEF\xBB\xBF{\"a\": 1}\n[1]\n", "h").collect();
        assert_eq!(lines[0].as_ref().unwrap().0, 1);
        let e = lines[1].as_ref().unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(e.problem, "not a JSON object: the line holds an array");
    }
}
