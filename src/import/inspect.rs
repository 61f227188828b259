//! Inspect logs (docs/guides/importing-logs.md): a `.eval` zip archive (`header.json`, one `samples/<id>_epoch_<n>.json`
//! entry per sample, read one entry at a time so memory does not grow with the samples' text) or
//! a `.json` log (`version`, `status`, `eval`, `results`, `samples`). Log version 2 only.
//!
//! item = `sample.id` (its JSON type kept), repeat = `epoch`, scorer = the score's name (a
//! list-valued score is one scorer per element, `name[0]`; a dict-valued one, one per key,
//! `name/key`), score = its value (`C`/`I`/`P`/`N` → 1/0/0.5/0, `true`/`false` → 1/0),
//! confidence = `Score.metadata.confidence` when a scorer writes one, correct = `C`/`I` or a
//! boolean value. A sample with an `error`, or without one of the log's scorers, is missing for
//! it.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::Path;

use serde_json::Value;

use super::{score_of, shown, Draft, Options, Read, Scored, Tally, Values};
use crate::corpus::ItemId;
use crate::error::{Error, InputError};

/// The only log version read: the one Inspect has written since 2024.
pub const VERSION: u64 = 2;

/// The largest sample entry read from a `.eval` archive (a zip entry can claim any size).
const MAX_ENTRY: u64 = 1 << 30;

/// One sample's drafts, and why the scorers it lacks are missing.
struct Sample {
    /// The sample's id, repeat and source, kept only when it has no draft to copy them from:
    /// a large log holds one `Sample` per sample until every scorer is known.
    template: Option<Draft>,
    drafts: Vec<Draft>,
    why: &'static str,
}

/// Reads one Inspect log.
pub fn read(path: &Path, _: &Options, tally: &mut Tally) -> Result<Vec<Draft>, Error> {
    let name = shown(path);
    let samples = match path.extension().and_then(|e| e.to_str()) {
        Some("eval") => read_eval(path, &name, tally)?,
        Some("json") => read_json(path, &name, tally)?,
        _ => {
            return Err(InputError::new(
                name,
                "is not an Inspect log: the name ends neither in .eval nor in .json",
            )
            .hint("pass the .eval or .json file Inspect wrote under ./logs")
            .into())
        }
    };
    // The log's scorers: every name any sample was scored under; a sample without one of them
    // is missing for it (never a 0).
    let scorers: BTreeSet<String> = samples
        .iter()
        .flat_map(|s| s.drafts.iter().map(|d| d.scorer.clone()))
        .collect();
    let mut out = Vec::with_capacity(samples.len() * scorers.len());
    for mut s in samples {
        if s.drafts.len() < scorers.len() {
            let template = s.template.take().unwrap_or_else(|| s.drafts[0].clone());
            super::fill_missing(&mut s.drafts, &scorers, &template, s.why);
        }
        out.append(&mut s.drafts);
    }
    Ok(out)
}

fn read_json(path: &Path, name: &str, tally: &mut Tally) -> Result<Vec<Sample>, Error> {
    let file = std::fs::File::open(path).map_err(|e| Error::read(path, e))?;
    // Read as it streams in, keeping of each sample only what is mapped: a log is never held
    // whole, nor any sample's unmapped fields (its messages, its events), whatever their size.
    let log: JsonLog = serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| {
        InputError::new(name, format!("is not a readable Inspect log: {e}"))
            .at_line(e.line() as u64)
    })?;
    let head = Header {
        version: log.version,
        status: log.status,
        eval: log.eval,
    };
    let task = header(name, &head, tally)?;
    let Some(samples) = log.samples else {
        return Err(InputError::new(name, "the log holds no samples")
            .field("samples")
            .hint("Inspect writes samples unless the eval ran with --no-log-samples")
            .into());
    };
    samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            sample(name, &format!("samples[{i}]"), s.0.as_ref(), &task, tally).map_err(Error::from)
        })
        .collect()
}

/// An archive entry up to this size is read into memory and parsed there; a larger one is
/// parsed as it inflates, so memory never follows an entry's size.
const IN_MEMORY: u64 = 4 << 20;

fn read_eval(path: &Path, name: &str, tally: &mut Tally) -> Result<Vec<Sample>, Error> {
    let file = std::fs::File::open(path).map_err(|e| Error::read(path, e))?;
    let unreadable = |e: zip::result::ZipError| -> Error {
        InputError::new(name, format!("is not a readable .eval archive: {e}"))
            .hint("a .eval log is a zip archive; a copy cut short (a full disk, an interrupted download) cannot be read")
            .into()
    };
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(unreadable)?;
    refuse_repeated_entries(path, name, &zip)?;
    let mut buffer = Vec::new();
    let index = |zip: &zip::ZipArchive<_>, wanted: &str| zip.index_for_name(wanted);
    let header_at = match (
        index(&zip, "header.json"),
        index(&zip, "_journal/start.json"),
    ) {
        (Some(i), _) => i,
        (None, Some(i)) => {
            tally.notes.push(format!(
                "{name}: no header.json (the eval did not finish); read _journal/start.json"
            ));
            i
        }
        (None, None) => {
            return Err(InputError::new(
                name,
                "the archive has neither header.json nor _journal/start.json",
            )
            .hint("is this an Inspect .eval log?")
            .into())
        }
    };
    let (_, head): (_, Header) = entry_json(&mut zip, header_at, name, &mut buffer)?;
    let task = header(name, &head, tally)?;
    let mut samples = Vec::new();
    let mut unread = Vec::new();
    for i in 0..zip.len() {
        let Some(entry) = zip.name_for_index(i) else {
            continue;
        };
        if !(entry.starts_with("samples/") && entry.ends_with(".json")) {
            if !is_known_entry(entry) && !entry.ends_with('/') {
                unread.push(entry.to_string());
            }
            continue;
        }
        let (entry, read): (_, Obj<SampleEntry>) = entry_json(&mut zip, i, name, &mut buffer)?;
        samples.push(sample(name, &entry, read.0.as_ref(), &task, tally)?);
    }
    // Nothing is dropped without a word: an entry that is neither a sample nor a part of an
    // Inspect log calibench knows (`Samples/1_epoch_1.json`, a stray file) is named.
    if !unread.is_empty() {
        tally.notes.push(format!(
            "{name}: {} {} not read, being neither samples/*.json nor a part of an Inspect log: {}",
            unread.len(),
            if unread.len() == 1 {
                "entry is"
            } else {
                "entries are"
            },
            crate::text::first_few(unread.iter(), 5),
        ));
    }
    Ok(samples)
}

/// Parts of an Inspect `.eval` archive that hold no samples: the header, its summaries and
/// reductions, and the journal an unfinished eval leaves.
fn is_known_entry(entry: &str) -> bool {
    matches!(entry, "header.json" | "summaries.json" | "reductions.json")
        || entry.starts_with("_journal/")
}

/// Entry `i` of the archive, named `name` in messages, parsed as `T`, with the entry's name. An
/// entry up to [`IN_MEMORY`] is read into `buffer` (kept from entry to entry) and parsed there;
/// a larger one as it inflates.
fn entry_json<R: std::io::Read + std::io::Seek, T: serde::de::DeserializeOwned>(
    zip: &mut zip::ZipArchive<R>,
    i: usize,
    name: &str,
    buffer: &mut Vec<u8>,
) -> Result<(String, T), Error> {
    let entry = zip.by_index(i).map_err(|e| {
        InputError::new(name, format!("is not a readable .eval archive: {e}"))
            .hint("a .eval log is a zip archive; a copy cut short (a full disk, an interrupted download) cannot be read")
    })?;
    let (entry_name, size) = (entry.name().to_string(), entry.size());
    if size > MAX_ENTRY {
        let problem =
            format!("entry {entry_name} claims {size} bytes, more than the {MAX_ENTRY} read");
        return Err(InputError::new(name, problem).into());
    }
    let small = size <= IN_MEMORY;
    let mut limited = entry.take(MAX_ENTRY);
    let parsed = if small {
        buffer.clear();
        limited.read_to_end(buffer).map_err(|e| {
            InputError::new(name, format!("entry {entry_name} cannot be read: {e}"))
        })?;
        serde_json::from_slice(buffer)
    } else {
        serde_json::from_reader(std::io::BufReader::new(limited))
    };
    let value = parsed.map_err(|e| {
        let problem = if e.is_io() {
            format!("entry {entry_name} cannot be read: {e}")
        } else {
            format!("entry {entry_name} is not valid JSON: {e}")
        };
        InputError::new(name, problem)
    })?;
    Ok((entry_name, value))
}

/// A zip archive may hold two entries of one name; the zip reader keeps the last, so the first
/// sample (or header) would vanish without a word. Refused, naming the entry. The names are read
/// from the archive's central directory, where every entry is listed.
fn refuse_repeated_entries<R: std::io::Read + std::io::Seek>(
    path: &Path,
    name: &str,
    zip: &zip::ZipArchive<R>,
) -> Result<(), Error> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::read(path, e))?;
    let names = central_directory_names(&mut file, zip.central_directory_start())
        .map_err(|e| Error::read(path, e))?;
    if names.len() == zip.len() {
        return Ok(());
    }
    let mut seen = std::collections::HashSet::new();
    let repeated = names
        .iter()
        .find(|n| !seen.insert(n.as_slice()))
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .unwrap_or_else(|| "(an unnamed entry)".into());
    Err(InputError::new(
        name,
        format!("the archive holds two entries named {repeated}: the zip reader would keep the last and drop the first without a word"),
    )
    .hint("an Inspect log names each entry once; this archive was assembled by hand or damaged: rebuild it from the log")
    .into())
}

/// The name of every entry the central directory at `start` lists, in order.
fn central_directory_names(file: &mut std::fs::File, start: u64) -> std::io::Result<Vec<Vec<u8>>> {
    use std::io::{Seek, SeekFrom};
    const CENTRAL_HEADER: u32 = 0x0201_4b50;
    file.seek(SeekFrom::Start(start))?;
    let mut reader = std::io::BufReader::new(file);
    let mut names = Vec::new();
    let mut fixed = [0u8; 46];
    loop {
        match reader.read_exact(&mut fixed) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e),
        }
        if u32::from_le_bytes([fixed[0], fixed[1], fixed[2], fixed[3]]) != CENTRAL_HEADER {
            break;
        }
        let field = |at: usize| u64::from(u16::from_le_bytes([fixed[at], fixed[at + 1]]));
        let (name_len, extra_len, comment_len) = (field(28), field(30), field(32));
        let mut entry_name = vec![0u8; name_len as usize];
        reader.read_exact(&mut entry_name)?;
        names.push(entry_name);
        std::io::copy(
            &mut (&mut reader).take(extra_len + comment_len),
            &mut std::io::sink(),
        )?;
    }
    Ok(names)
}

/// Checks the header's version, notes its status, and returns its task.
fn header(name: &str, log: &Header, tally: &mut Tally) -> Result<String, InputError> {
    match &log.version {
        Some(Scalar::Number(v)) if v.as_u64() == Some(VERSION) => {}
        Some(v) => {
            return Err(InputError::new(
                name,
                format!("Inspect log version {v}; calibench reads version {VERSION}"),
            )
            .field("version")
            .hint("re-save the log with a current Inspect (`inspect log convert`)"))
        }
        None => {
            return Err(
                InputError::new(name, "has no version: is it an Inspect log?").field("version"),
            )
        }
    }
    match &log.status {
        Some(Scalar::String(s)) if s == "success" => {}
        None => {}
        Some(Scalar::String(status)) => tally.notes.push(format!(
            "{name}: the log's status is `{status}`; the samples it holds are imported"
        )),
        Some(_) => {}
    }
    let task = match log.eval.as_ref().and_then(|e| e.task.as_ref()) {
        Some(Scalar::String(t)) if !t.trim().is_empty() => t.clone(),
        _ => return Err(InputError::new(name, "the log names no task").field("eval.task")),
    };
    Ok(task)
}

/// What a sample's model calls spent: `model_usage`'s `input_tokens`, `output_tokens` and
/// (where the log records it) `total_cost`, summed over its models. A part no model reports
/// stays unknown, never 0.
fn model_usage(by_model: Option<&Value>, tally: &mut Tally) -> Option<crate::corpus::usage::Usage> {
    let models = by_model?.as_object()?;
    let mut total: Option<crate::corpus::usage::Usage> = None;
    for usage in models.values() {
        let part = super::usage_from(
            [
                (usage.get("input_tokens"), "sample.model_usage.input_tokens"),
                (
                    usage.get("output_tokens"),
                    "sample.model_usage.output_tokens",
                ),
                (usage.get("total_cost"), "sample.model_usage.total_cost"),
            ],
            tally,
        );
        total = match (total, part) {
            (Some(a), Some(b)) => Some(a.plus(b)),
            (a, b) => a.or(b),
        };
    }
    total
}

/// One sample's scores.
fn sample(
    name: &str,
    record: &str,
    s: Option<&SampleEntry>,
    task: &str,
    tally: &mut Tally,
) -> Result<Sample, InputError> {
    let err = |field: &str, problem: String| {
        InputError::new(format!("{name}: {record}"), problem).field(field.to_string())
    };
    let Some(s) = s else {
        return Err(err("sample", "is not a JSON object".into()));
    };
    tally.samples += 1;
    for key in &s.unmapped {
        tally.unmapped(format!("sample.{key}"));
    }
    let item =
        s.id.as_ref()
            .and_then(|id| ItemId::from_json(&id.to_value()))
            .ok_or_else(|| {
                err(
                    "id",
                    "a sample's id must be a whole number or a non-blank string".into(),
                )
            })?;
    let repeat = match &s.epoch {
        Some(Scalar::Number(n)) => n.as_u64(),
        _ => None,
    }
    .and_then(|e| u32::try_from(e).ok())
    .filter(|&e| e >= 1)
    .ok_or_else(|| {
        err(
            "epoch",
            "a sample's epoch must be a whole number from 1".into(),
        )
    })?;
    let template = Draft {
        task: task.to_string(),
        item,
        repeat,
        scorer: String::new(),
        value: Scored::Missing(String::new()),
        confidence: None,
        correct: None,
        source: format!("{name}: {record}"),
        usage: model_usage(s.model_usage.as_ref(), tally),
        elapsed_ms: super::amount(s.total_time.as_ref(), 1000.0, "sample.total_time", tally),
    };
    let errored = s.errored;
    let mut drafts = Vec::new();
    let scores = match &s.scores {
        None | Some(None) => None,
        Some(Some(Obj(Some(m)))) => Some(&m.0),
        Some(Some(Obj(None))) => {
            return Err(err(
                "scores",
                "must be an object of scores by scorer name".into(),
            ))
        }
    };
    for (scorer, score) in scores.into_iter().flatten() {
        let Some(score) = score else {
            return Err(err(
                &format!("scores.{scorer}"),
                "must be a Score object with a value".into(),
            ));
        };
        for key in &score.unmapped {
            tally.unmapped(format!("score.{key}"));
        }
        let confidence = match &score.metadata {
            Some(meta) => {
                for key in &meta.unmapped {
                    tally.unmapped(format!("score.metadata.{key}"));
                }
                match &meta.confidence {
                    None => None,
                    Some(c) => match c.to_value().as_f64().filter(|c| (0.0..=1.0).contains(c)) {
                        Some(c) => Some(c),
                        None => {
                            tally.unmapped("score.metadata.confidence (not a number in [0, 1])");
                            None
                        }
                    },
                }
            }
            None => None,
        };
        let parts: Vec<(String, Value)> = match &score.value {
            ScoreValue::List(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("{scorer}[{i}]"), v.to_value()))
                .collect(),
            ScoreValue::Dict(keys) => keys
                .iter()
                .map(|(k, v)| (format!("{scorer}/{k}"), v.to_value()))
                .collect(),
            ScoreValue::One(v) => vec![(scorer.clone(), v.to_value())],
            ScoreValue::TooLong(n) => {
                *tally
                    .not_per_item
                    .entry(format!("{scorer} (a list of {n} values)"))
                    .or_default() += 1;
                Vec::new()
            }
        };
        for (scorer, v) in parts {
            let correct = match &v {
                Value::String(s) if s == "C" => Some(true),
                Value::String(s) if s == "I" => Some(false),
                Value::Bool(b) => Some(*b),
                _ => None,
            };
            let value = if errored {
                Scored::Missing("sample errored".into())
            } else {
                match score_of(&v, Values::Inspect, tally) {
                    Read::Number(x) => Scored::Value(x),
                    Read::NotPerItem => {
                        *tally.not_per_item.entry(scorer.clone()).or_default() += 1;
                        continue;
                    }
                    Read::Unreadable(why) => Scored::Missing(format!("value {why}")),
                }
            };
            drafts.push(Draft {
                scorer,
                value,
                confidence,
                correct,
                ..template.clone()
            });
        }
    }
    drafts.shrink_to_fit();
    Ok(Sample {
        template: drafts.is_empty().then_some(template),
        drafts,
        why: if errored {
            "sample errored"
        } else {
            "no score"
        },
    })
}

// The log's parts as calibench reads them. Each keeps only what is mapped: every other field
// is skipped while it is parsed (serde's `IgnoredAny`), never built as a `Value`, so a sample
// whose messages or a field of its own run to a gigabyte costs no more memory than one that
// does not (a `Value` costs some 30 bytes per array element, sixteen times the text).

/// A JSON value read only as far as calibench uses one: a scalar is kept; an array or an object
/// is skipped as it is parsed, leaving only which it was.
#[derive(Clone, Debug, PartialEq)]
enum Scalar {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array,
    Object,
}

impl Scalar {
    /// As a `Value`, for the readers shared with the other formats (an array or an object
    /// empty: what it held was skipped).
    fn to_value(&self) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Number(n) => Value::Number(n.clone()),
            Scalar::String(s) => Value::String(s.clone()),
            Scalar::Array => Value::Array(Vec::new()),
            Scalar::Object => Value::Object(serde_json::Map::new()),
        }
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_value())
    }
}

impl<'de> serde::Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::corpus::read_json(d)
    }
}

impl crate::corpus::FromJson for Scalar {
    fn null() -> Self {
        Scalar::Null
    }
    fn bool(b: bool) -> Self {
        Scalar::Bool(b)
    }
    fn number(n: serde_json::Number) -> Self {
        Scalar::Number(n)
    }
    fn string(s: String) -> Self {
        Scalar::String(s)
    }
    /// Skipped as it is parsed, keeping only that it was an array.
    fn array<'de, A: serde::de::SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Array)
    }
    fn object<'de, A: serde::de::MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Object)
    }
}

/// The names of the unmapped keys an object is kept with: enough to say which fields were not
/// read, never one per key of a hostile object with millions of them.
const UNMAPPED_NAMES: usize = 64;

/// Records an unmapped key's name (up to [`UNMAPPED_NAMES`] of them, then one for the rest).
fn note_unmapped(names: &mut Vec<String>, key: String) {
    if names.len() < UNMAPPED_NAMES {
        names.push(key);
    } else if names.len() == UNMAPPED_NAMES {
        names.push("(and more fields)".into());
    }
}

/// A log's header (`header.json`, or the top of a `.json` log).
#[derive(Debug, Default, serde::Deserialize)]
struct Header {
    version: Option<Scalar>,
    status: Option<Scalar>,
    eval: Option<EvalHeader>,
}

#[derive(Debug, serde::Deserialize)]
struct EvalHeader {
    task: Option<Scalar>,
}

/// A `.json` log: its header and its samples.
#[derive(serde::Deserialize)]
struct JsonLog {
    // The header's fields, named here: `#[serde(flatten)]` would buffer every other field of
    // the log (its results, its stats) whole.
    version: Option<Scalar>,
    status: Option<Scalar>,
    eval: Option<EvalHeader>,
    samples: Option<Vec<Obj<SampleEntry>>>,
}

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};

/// An object read key by key into `Self` (the keys it maps read, the others skipped).
trait Fields: Default {
    fn field<'de, A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error>;
}

/// `Some` for a JSON object read by `T`'s [`Fields`], `None` for any other value (skipped).
#[derive(Debug)]
struct Obj<T>(Option<T>);

impl<'de, T: Fields> serde::Deserialize<'de> for Obj<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Fields> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Obj<T>, A::Error> {
                let mut t = T::default();
                while let Some(key) = map.next_key::<String>()? {
                    t.field(key, &mut map)?;
                }
                Ok(Obj(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Obj<T>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Obj(None))
            }
            fn visit_unit<E>(self) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_none<E>(self) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// One sample, as far as it is mapped.
#[derive(Debug, Default)]
struct SampleEntry {
    id: Option<Scalar>,
    epoch: Option<Scalar>,
    /// An `error` that is not null.
    errored: bool,
    /// `None` when absent; `Some(None)` for `null`; `Some(Some(Obj(None)))` for a value that is
    /// not an object.
    scores: Option<Option<Obj<ScoresMap>>>,
    /// Tokens (and cost, where the log has it) by model: a small object.
    model_usage: Option<Value>,
    /// Seconds the sample took.
    total_time: Option<Value>,
    unmapped: Vec<String>,
}

impl Fields for SampleEntry {
    fn field<'de, A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error> {
        match key.as_str() {
            "model_usage" => self.model_usage = Some(map.next_value()?),
            "total_time" => self.total_time = Some(map.next_value()?),
            "id" => self.id = Some(map.next_value()?),
            "epoch" => self.epoch = Some(map.next_value()?),
            "error" => self.errored = map.next_value::<Scalar>()? != Scalar::Null,
            "scores" => self.scores = Some(map.next_value()?),
            _ => {
                map.next_value::<IgnoredAny>()?;
                note_unmapped(&mut self.unmapped, key);
            }
        }
        Ok(())
    }
}

/// A sample's `scores`, by scorer name: each a Score object, or `None` for any other value.
#[derive(Debug, Default)]
struct ScoresMap(std::collections::BTreeMap<String, Option<ScoreEntry>>);

impl Fields for ScoresMap {
    fn field<'de, A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error> {
        let score: Obj<ScoreEntry> = map.next_value()?;
        self.0.insert(key, score.0);
        Ok(())
    }
}

/// One scorer's score.
#[derive(Debug, Default)]
struct ScoreEntry {
    value: ScoreValue,
    metadata: Option<Metadata>,
    unmapped: Vec<String>,
}

impl Fields for ScoreEntry {
    fn field<'de, A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error> {
        match key.as_str() {
            "value" => self.value = map.next_value()?,
            "metadata" => self.metadata = map.next_value::<Obj<Metadata>>()?.0,
            _ => {
                map.next_value::<IgnoredAny>()?;
                note_unmapped(&mut self.unmapped, key);
            }
        }
        Ok(())
    }
}

/// A score's `metadata`: the model's confidence, where a scorer writes one.
#[derive(Debug, Default)]
struct Metadata {
    confidence: Option<Scalar>,
    unmapped: Vec<String>,
}

impl Fields for Metadata {
    fn field<'de, A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error> {
        if key == "confidence" {
            self.confidence = Some(map.next_value()?);
        } else {
            map.next_value::<IgnoredAny>()?;
            note_unmapped(&mut self.unmapped, key);
        }
        Ok(())
    }
}

/// A score's `value`: one value, a list (one scorer per element), a dict (one per key), or a
/// list or dict too long to be one item's scores.
#[derive(Debug)]
enum ScoreValue {
    One(Scalar),
    List(Vec<Scalar>),
    Dict(std::collections::BTreeMap<String, Scalar>),
    TooLong(usize),
}

impl Default for ScoreValue {
    fn default() -> Self {
        ScoreValue::One(Scalar::Null)
    }
}

/// The most values a list- or dict-valued score may hold and still be one scorer per value.
const MAX_PARTS: usize = 1000;

impl<'de> serde::Deserialize<'de> for ScoreValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ScoreValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a score's value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ScoreValue, A::Error> {
                let mut items = Vec::new();
                while items.len() < MAX_PARTS {
                    match seq.next_element::<Scalar>()? {
                        Some(v) => items.push(v),
                        None => return Ok(ScoreValue::List(items)),
                    }
                }
                let mut n = items.len();
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(if n > MAX_PARTS {
                    ScoreValue::TooLong(n)
                } else {
                    ScoreValue::List(items)
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ScoreValue, A::Error> {
                let mut keys = std::collections::BTreeMap::new();
                let mut n = 0;
                while let Some(key) = map.next_key::<String>()? {
                    n += 1;
                    if n <= MAX_PARTS {
                        keys.insert(key, map.next_value::<Scalar>()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(if n > MAX_PARTS {
                    ScoreValue::TooLong(n)
                } else {
                    ScoreValue::Dict(keys)
                })
            }
            fn visit_unit<E>(self) -> Result<ScoreValue, E> {
                Ok(ScoreValue::One(Scalar::Null))
            }
            fn visit_none<E>(self) -> Result<ScoreValue, E> {
                Ok(ScoreValue::One(Scalar::Null))
            }
            fn visit_bool<E>(self, b: bool) -> Result<ScoreValue, E> {
                Ok(ScoreValue::One(Scalar::Bool(b)))
            }
            fn visit_i64<E>(self, n: i64) -> Result<ScoreValue, E> {
                Ok(ScoreValue::One(Scalar::Number(n.into())))
            }
            fn visit_u64<E>(self, n: u64) -> Result<ScoreValue, E> {
                Ok(ScoreValue::One(Scalar::Number(n.into())))
            }
            fn visit_f64<E>(self, x: f64) -> Result<ScoreValue, E> {
                Ok(ScoreValue::One(
                    serde_json::Number::from_f64(x).map_or(Scalar::Null, Scalar::Number),
                ))
            }
            fn visit_str<E>(self, s: &str) -> Result<ScoreValue, E> {
                Ok(ScoreValue::One(Scalar::String(s.to_string())))
            }
            fn visit_string<E>(self, s: String) -> Result<ScoreValue, E> {
                Ok(ScoreValue::One(Scalar::String(s)))
            }
        }
        d.deserialize_any(V)
    }
}
