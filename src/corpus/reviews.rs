//! Reviewer returns, `reviews.jsonl` (docs/reference.md).
//!
//! Two levels of trouble, as in the pipeline being measured:
//! * an unreadable **record** (not JSON, no `target`/`arm`/`reviewer`, `findings` not an array, a
//!   bad `run` or `status`) refuses the whole run: [`parse`] collects every such problem so that
//!   `calibench validate` can list them all;
//! * a **malformed finding** (a field that breaks its rule, a confidence off the arm's scale) is
//!   dropped and counted with its reason by [`select`], which validates findings against the
//!   scale of the arm that reads them. `--strict` turns malformed findings into refusals.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use foldhash::fast::RandomState;
use serde::Serialize;
use serde_json::Value;

use super::finding::{check_object, FindingId, Places};
pub use super::finding::{
    finding_schema, validate, Autofix, Claim, CodeSite, FieldError, Finding, FindingType, Location,
    Owner, Severity,
};
use super::raw::{self, field, Field, RawFinding, SharedText, Slot, Val, Written};
pub use super::raw::{RawReturn, Status};
use super::Lines;
use crate::error::{InputError, Problems};
use crate::policy::{Mode, Scale};

pub(crate) use super::kind;

/// One line of `reviews.jsonl` that is readable as a record; findings not yet validated, as
/// JSON values (`F = Value`, what [`parse`] gives, for the readers that copy a finding as
/// written) or as [`RawFinding`]s (what a run reads, by [`parse_for`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Record<F = Value> {
    pub line: u64,
    pub target: String,
    pub arm: String,
    pub run: u32,
    pub reviewer: String,
    pub status: Status,
    /// Why a failed return failed, when the line says (`reason`, as `collect` records it).
    pub reason: Option<String>,
    pub findings: Vec<F>,
    /// Per finding: the line of an earlier finding with the same `id`, if any.
    pub duplicate_id_of: Vec<Option<u64>>,
    pub residual_risks: Vec<String>,
    pub deferred_questions: Vec<String>,
    pub testing_gaps: Vec<String>,
    /// The model the return reports, if it does.
    pub model: Option<String>,
    /// What the call spent, if its line says (`usage`, `elapsed_ms`).
    pub spent: Option<super::usage::Spent>,
}

impl<F> Record<F> {
    /// The call the line records: one reviewer's return on one target of one arm, in one run.
    /// The reader's repeat check numbers these four fields rather than copying them
    /// ([`each_record`]): the same identity, compared as numbers.
    pub fn call(&self) -> super::call::Call {
        super::call::Call::Review {
            arm: self.arm.as_str().into(),
            target: self.target.as_str().into(),
            reviewer: self.reviewer.as_str().into(),
            run: self.run,
        }
    }
}

/// What the corpus's other files are checked against: every finding `id` of every return, valid
/// or malformed, by the return's (arm, target, run) (`validations.jsonl` names them), and every
/// code finding's `file` by target (`sources/<target>/` holds them).
#[derive(Clone, Debug, PartialEq)]
pub struct Index {
    /// Whether it holds the ids: only a corpus with validator calls needs them, and at a
    /// million findings they are a tenth of the run's memory.
    with_ids: bool,
    /// Every target with a return.
    pub targets: BTreeSet<String>,
    /// (arm, target, run) → the finding ids its returns hold.
    ids: HashMap<(String, String, u32), HashSet<String, RandomState>, RandomState>,
    /// Arm label → the targets it has a return on (kept with the ids).
    arm_targets: HashMap<String, BTreeSet<String>, RandomState>,
    /// Target → (line, finding's position in its return, `file`).
    pub files: BTreeMap<String, Vec<(u64, usize, String)>>,
}

/// A finding not yet checked, however it is held: what the index and [`select`] read of it.
pub trait Unchecked {
    /// Its string field `name`, if it has one.
    fn text(&self, name: &str) -> Option<&str>;
    /// Its `id`, as the checked finding holds it.
    fn id(&self) -> Option<FindingId>;
    /// It checked against its field rules, as [`validate`] checks.
    fn check(&self, mode: Mode, scale: Scale) -> Result<Finding, FieldError>;
    /// Its `id` with the id's hash under `state`, for the duplicate-id check.
    fn keyed_id(&self, state: &RandomState) -> Option<Keyed> {
        self.id().map(|id| Keyed::new(state, id))
    }
    /// The hashes under the reading's state of its title and place when they were worked out
    /// where the line was read, so that sharing repeated text costs no hashing here.
    fn text_hashes(&self) -> Option<[u64; 2]> {
        None
    }
    /// Takes back kept returns' emptied lists of these for the reading's next lines
    /// ([`Reading::spares`]), or lets them go.
    fn give_back(lists: &mut Vec<Vec<Self>>, _: &Reading)
    where
        Self: Sized,
    {
        lists.clear();
    }
}

/// A text with its hash, worked out once (on the thread that read its line): the tables of
/// [`check_for`] compare hashes first and never hash a string again, not even when they grow.
#[derive(Clone, Debug)]
pub struct Keyed {
    hash: u64,
    text: FindingId,
}

impl Keyed {
    pub fn new(state: &RandomState, text: FindingId) -> Self {
        use std::hash::BuildHasher;
        Keyed {
            hash: state.hash_one(&*text),
            text,
        }
    }
}

/// What a run reads, the same on the threads that read blocks of lines and on the one that
/// checks them: the corpus's mode, the (source, scale) pairs its arms want, the state the
/// texts are hashed with, and the emptied findings lists passed back for reuse.
#[derive(Debug)]
pub struct Reading {
    pub mode: Mode,
    pub wants: Vec<(String, Scale)>,
    state: RandomState,
    /// Emptied lists of a return's checked findings, handed back by the thread that keeps the
    /// returns to the threads that read lines: a million findings otherwise take a fresh
    /// couple of hundred megabytes on the readers, freed on another thread as they go.
    spares: std::sync::Mutex<Vec<Vec<Prechecked>>>,
    /// Emptied tables of one block's shared texts, for the next block: grown afresh for each
    /// block, a table was rebuilt a dozen times over pages not touched before.
    block_texts: std::sync::Mutex<Vec<Interner>>,
    /// The file's size in bytes, when known ([`Reading::of_file`]).
    size: u64,
    /// What the file holds, as the first block read says ([`Expected`]).
    expected: std::sync::OnceLock<Expected>,
}

/// How many returns and finding ids a file holds, judged from one block read of it by its
/// share of the file's bytes: the thread that keeps the returns takes room for them once,
/// rather than growing its tables by doubling, each time into pages not touched before. A
/// guess only: the tables grow past it as they would have. Lines that are not returns, and
/// findings without an id, count for nothing: a file of ten million refused lines takes no
/// room for them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Expected {
    pub returns: usize,
    pub ids: usize,
}

impl Expected {
    /// `returns` and `ids` of a block of `block` bytes, scaled to a file of `file` bytes;
    /// never more than a file of two-byte lines and eight-byte findings could hold.
    fn scaled(returns: usize, ids: usize, block: usize, file: u64) -> Self {
        let share = file as f64 / block.max(1) as f64;
        let at_most = |n: usize, cap: u64| ((n as f64 * share).ceil() as u64).min(cap) as usize;
        Expected {
            returns: at_most(returns, file / 2 + 1),
            ids: at_most(ids, file / 8 + 1),
        }
    }
}

/// How many emptied lists go back to [`Reading::spares`] at a time, and the most it holds.
const SPARES_BATCH: usize = 256;

const SPARES_HELD: usize = 8 * SPARES_BATCH;

/// The most findings a list kept for reuse, or taken fresh, has room for: a return of ten
/// thousand findings lets its list go, so that what the spares hold stays a few megabytes
/// (lists kept at any size held 1.2 GB on a file of a thousand such returns).
const SPARE_ROOM: usize = 64;

impl Reading {
    pub fn new(mode: Mode, wants: &[(String, Scale)]) -> Self {
        Reading {
            mode,
            wants: wants.to_vec(),
            state: RandomState::default(),
            spares: std::sync::Mutex::default(),
            block_texts: std::sync::Mutex::default(),
            size: 0,
            expected: std::sync::OnceLock::new(),
        }
    }

    /// The reading of a file of `bytes` bytes: its first block says what to expect of it.
    pub fn of_file(self, bytes: u64) -> Self {
        Reading {
            size: bytes,
            ..self
        }
    }

    /// What the file holds, once a block of it has been read (never without its size).
    pub fn expected(&self) -> Option<Expected> {
        self.expected.get().copied()
    }

    /// A table for one block's shared texts: an emptied one if there is one.
    fn block_texts(&self) -> Interner {
        let mut tables = self.block_texts.lock().unwrap_or_else(|e| e.into_inner());
        tables
            .pop()
            .unwrap_or_else(|| Interner::with_state(self.state.clone()))
    }

    /// Takes a block's table back, emptied (its texts are let go, its room kept).
    fn block_done(&self, mut table: Interner) {
        table.held.clear();
        let mut tables = self.block_texts.lock().unwrap_or_else(|e| e.into_inner());
        tables.push(table);
    }

    /// Up to a batch of emptied lists, for one block's returns.
    fn spare_lists(&self) -> Vec<Vec<Prechecked>> {
        let mut spares = self.spares.lock().unwrap_or_else(|e| e.into_inner());
        let keep = spares.len().saturating_sub(SPARES_BATCH);
        spares.split_off(keep)
    }

    /// Takes `lists` (emptied) back, as far as there is room; a list with room for more than
    /// [`SPARE_ROOM`] findings is let go.
    fn give_back(&self, lists: &mut Vec<Vec<Prechecked>>) {
        let mut spares = self.spares.lock().unwrap_or_else(|e| e.into_inner());
        let room = SPARES_HELD.saturating_sub(spares.len());
        spares.extend(
            lists
                .drain(..)
                .filter(|l| l.capacity() <= SPARE_ROOM)
                .take(room),
        );
    }
}

/// A finding checked on the thread that read its line, against every scale the reading wants
/// of its arm (one, unless two arms read one source on two scales), with the hashes of its id,
/// title and place: the thread that keeps the returns then only marks duplicate ids and shares
/// repeated text. [`Unchecked::check`] gives what [`validate`] gives the raw finding.
pub struct Prechecked {
    id: Option<Keyed>,
    /// The `file` field as written, for the index of files the findings name.
    file: Option<Arc<str>>,
    mode: Mode,
    /// What [`validate`] made of it on the first scale its reading wants, until
    /// [`Unchecked::check`] takes it (each selection reads a record on its own scale, so no
    /// scale's result is asked for twice). None when no arm reads its source.
    checked: Option<Checked>,
    /// The same on the other scale, when two arms read its source on two scales (rare: kept
    /// out of line, so that a finding checked once is not twice its size).
    other: Option<Box<Checked>>,
    hashes: [u64; 2],
}

impl std::fmt::Debug for Prechecked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prechecked")
            .field("id", &self.id)
            .field("file", &self.file)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// A finding validated on one scale, until it is taken.
struct Checked {
    scale: Scale,
    result: std::cell::Cell<Option<Result<Finding, FieldError>>>,
}

impl Prechecked {
    /// `raw` checked on each of `scales`, the distinct scales its arm is read on (none, one or
    /// two), its title and place shared with the block's findings before it (`held`): the
    /// thread that keeps the returns then finds most of them already shared, and frees none.
    fn new<W: Written>(raw: &W, reading: &Reading, scales: &[Scale], held: &mut Interner) -> Self {
        use std::hash::BuildHasher;
        let mut check =
            |&scale: &Scale| (scale, check_object(raw, reading.mode, scale, &mut *held));
        let first = scales.first().map(&mut check);
        let second = scales.get(1).map(&mut check);
        // The title's and the place's hashes, from the first valid check.
        let hashes = [&first, &second]
            .into_iter()
            .find_map(|c| c.as_ref()?.1.as_ref().ok())
            .map_or([0; 2], |f| {
                let place = match &f.location {
                    Location::Doc { section, .. } => section,
                    Location::Code(CodeSite { file, .. }) => file,
                };
                [
                    reading.state.hash_one(&*f.claim.title),
                    reading.state.hash_one(&**place),
                ]
            });
        let held = |(scale, result)| Checked {
            scale,
            result: std::cell::Cell::new(Some(result)),
        };
        let text = |field: Field| match raw.value(field) {
            Some(Val::Str(t)) => Some(t),
            _ => None,
        };
        Prechecked {
            id: text(field!("id")).map(|id| Keyed::new(&reading.state, id.id())),
            file: text(field!("file")).map(SharedText::shared),
            mode: reading.mode,
            checked: first.map(held),
            other: second.map(|c| Box::new(held(c))),
            hashes,
        }
    }
}

impl Unchecked for Prechecked {
    fn text(&self, name: &str) -> Option<&str> {
        match name {
            "id" => self.id.as_ref().map(|k| &*k.text),
            "file" => self.file.as_deref(),
            _ => None,
        }
    }
    fn id(&self) -> Option<FindingId> {
        self.id.as_ref().map(|k| k.text.clone())
    }
    fn check(&self, mode: Mode, scale: Scale) -> Result<Finding, FieldError> {
        let checked = [self.checked.as_ref(), self.other.as_deref()]
            .into_iter()
            .flatten()
            .find(|c| c.scale == scale)
            .filter(|_| mode == self.mode)
            .and_then(|c| c.result.take());
        match checked {
            Some(result) => result,
            None => unreachable!("a finding is prechecked once for every scale its reading wants"),
        }
    }
    fn keyed_id(&self, _: &RandomState) -> Option<Keyed> {
        self.id.clone()
    }
    fn give_back(lists: &mut Vec<Vec<Self>>, reading: &Reading) {
        reading.give_back(lists);
    }
    fn text_hashes(&self) -> Option<[u64; 2]> {
        Some(self.hashes)
    }
}

impl Unchecked for Value {
    fn text(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }
    fn id(&self) -> Option<FindingId> {
        self.text("id").map(FindingId::from)
    }
    fn check(&self, mode: Mode, scale: Scale) -> Result<Finding, FieldError> {
        validate(&RawFinding::from(self), mode, scale)
    }
}

impl Unchecked for RawFinding {
    fn text(&self, name: &str) -> Option<&str> {
        RawFinding::text(self, name)
    }
    fn id(&self) -> Option<FindingId> {
        match self.get("id")? {
            Slot::Str(s) => Some(s.id()),
            _ => None,
        }
    }
    fn check(&self, mode: Mode, scale: Scale) -> Result<Finding, FieldError> {
        validate(self, mode, scale)
    }
}

impl Default for Index {
    fn default() -> Self {
        Index {
            with_ids: true,
            targets: BTreeSet::new(),
            ids: HashMap::default(),
            arm_targets: HashMap::default(),
            files: BTreeMap::new(),
        }
    }
}

impl Index {
    /// An index that keeps no ids: [`Index::holds`] must not be asked of it.
    pub fn without_ids() -> Self {
        Index {
            with_ids: false,
            ..Index::default()
        }
    }

    pub fn add<F: Unchecked>(&mut self, r: &Record<F>) {
        if !self.targets.contains(&r.target) {
            self.targets.insert(r.target.clone());
        }
        if self.with_ids {
            let targets = match self.arm_targets.get_mut(&r.arm) {
                Some(targets) => targets,
                None => self.arm_targets.entry(r.arm.clone()).or_default(),
            };
            if !targets.contains(&r.target) {
                targets.insert(r.target.clone());
            }
        }
        let mut ids = r.findings.iter().filter_map(|f| f.text("id")).peekable();
        if self.with_ids && ids.peek().is_some() {
            let key = (r.arm.clone(), r.target.clone(), r.run);
            let held = self.ids.entry(key).or_default();
            held.extend(ids.map(str::to_string));
        }
        for (i, f) in r.findings.iter().enumerate() {
            if let Some(file) = f.text("file") {
                let entry = (r.line, i, file.to_string());
                match self.files.get_mut(&r.target) {
                    Some(files) => files.push(entry),
                    None => {
                        self.files.insert(r.target.clone(), vec![entry]);
                    }
                }
            }
        }
    }

    /// Every (arm label, target or finding id) the index holds; nothing when it keeps no ids.
    pub fn arm_ids(&self) -> impl Iterator<Item = (&str, &str)> {
        let targets = self
            .arm_targets
            .iter()
            .flat_map(|(arm, ts)| ts.iter().map(move |t| (arm.as_str(), t.as_str())));
        let ids = self
            .ids
            .iter()
            .flat_map(|((arm, _, _), ids)| ids.iter().map(move |id| (arm.as_str(), id.as_str())));
        targets.chain(ids)
    }

    /// Whether a return of `arm` on `target`, run `run`, holds a finding with this id.
    pub fn holds(&self, arm: &str, target: &str, run: u32, id: &str) -> bool {
        debug_assert!(self.with_ids, "an index without ids was asked for one");
        self.ids
            .get(&(arm.to_string(), target.to_string(), run))
            .is_some_and(|ids| ids.contains(id))
    }
}

/// How `reviews.jsonl` lines are described in messages.
const LINES: Lines = Lines {
    holds: "each line holds one reviewer's return: {\"target\", \"arm\", \"reviewer\", \"findings\": [...]}",
    hints: &[(
        "findings",
        "a return with status ok lists its findings, [] when there are none",
    )],
};

/// Parses every record, collecting every record-level problem instead of stopping at the first.
pub fn parse(name: &str, bytes: &[u8]) -> (Vec<Record>, Problems) {
    let mut records = Vec::new();
    let state = RandomState::default();
    let problems = each_record(
        name,
        super::records(name, bytes, &LINES),
        &state,
        || None,
        |r| records.push(r),
    );
    (records, problems)
}

/// The longest line the general reader reads again to say why the fast one refused it.
const LONG_LINE: usize = 16 << 20;

/// One line of `reviews.jsonl` as a run reads it: its number and return, or why not.
pub type Line = Result<(u64, RawReturn<RawFinding>), InputError>;

/// A block of whole lines of `reviews.jsonl`, the first of them line `first`, with their
/// findings as [`RawFinding`]s: read by `raw::fast_line`, and a line it refuses read again the
/// general way (as [`parse`] reads it), whose refusal is the one reported. Pure, so that a
/// reader thread can work through one block while the previous one is checked.
pub fn read_block(name: &str, first: u64, block: &[u8]) -> Vec<Line> {
    super::lines_from(block, first)
        .map(|(line, raw)| read_line(name, line, raw, super::line_text(name, line, raw)?))
        .collect()
}

/// One line of [`read_block`], its text `text`.
fn read_line(name: &str, line: u64, raw: &[u8], text: &str) -> Line {
    match raw::fast_line(text) {
        Ok(r) => return Ok((line, r)),
        Err(raw::Refused::TooManyFindings) => {
            return Err(super::field_error(
                name,
                line,
                "findings",
                format!("holds more than {} findings", raw::MAX_FINDINGS),
            )
            .hint("a return is one reviewer's review of one target; a writer that emits millions of findings in one line is broken"))
        }
        // The general reader builds the line as a JSON value, some thirty times its
        // text: a line this long is refused with what the fast reader saw instead.
        Err(raw::Refused::Other(e)) if raw.len() > LONG_LINE => {
            return Err(InputError::new(
                name,
                format!(
                    "a line of {} MiB that is not a return calibench can read ({})",
                    raw.len() >> 20,
                    e.to_string().replace("read the general way", "a required field is missing or a field is repeated, or holds the wrong kind of value")
                ),
            )
            .at_line(line)
            .hint(LINES.holds))
        }
        Err(raw::Refused::Other(_)) => {}
    }
    let (line, object) = super::object(name, line, raw, LINES.holds)?;
    let r: RawReturn = super::typed(name, line, object, LINES.hints)?;
    // Only a line the general reader accepts and the fast one does not gets here.
    Ok((
        line,
        r.map_findings(|f| f.iter().map(RawFinding::from).collect()),
    ))
}

impl Reading {
    /// The distinct scales the arm `label` is read on: none, one, or two.
    fn scales(&self, label: &str) -> Vec<Scale> {
        let mut scales: Vec<Scale> = Vec::new();
        for (source, scale) in &self.wants {
            if source == label && !scales.contains(scale) {
                scales.push(*scale);
            }
        }
        scales
    }
}

/// [`read_block`] for a run: each finding checked there, as `reading` wants it
/// ([`Prechecked`]), so that blocks read on several threads leave the thread that keeps the
/// returns only what must see the file in order. A line is read straight from its text
/// (`scan::line`, each finding checked as it is read) when it can be, else as [`read_block`]
/// reads it.
pub fn read_block_for(
    name: &str,
    first: u64,
    block: &[u8],
    reading: &Reading,
) -> Vec<Result<(u64, RawReturn<Prechecked>), InputError>> {
    let mut held = reading.block_texts();
    let mut spares = reading.spare_lists();
    // One result per line, in room taken once: grown by doubling, a thousand-line block's
    // results were copied ten times, each time into pages the reading had not touched yet.
    let lines = memchr::memchr_iter(b'\n', block).count() + 1;
    let mut results = Vec::with_capacity(lines);
    // A list taken fresh has room for half as many again as the line before held (up to
    // SPARE_ROOM): grown from nothing, most lists were reallocated twice.
    let mut last = 0;
    results.extend(super::lines_from(block, first).map(|(line, raw)| {
        let text = super::line_text(name, line, raw)?;
        // Every finding of a line is of its arm: its scales are found once.
        let mut scales: Option<Vec<Scale>> = None;
        let list = spares
            .pop()
            .unwrap_or_else(|| Vec::with_capacity((last + last / 2).min(SPARE_ROOM)));
        let direct = super::scan::line(text, list, |arm, f| {
            let scales = scales.get_or_insert_with(|| reading.scales(arm));
            Prechecked::new(f, reading, scales, &mut held)
        });
        if let Some(r) = direct {
            last = r.findings.as_ref().map_or(0, Vec::len);
            return Ok((line, r));
        }
        let (line, r) = read_line(name, line, raw, text)?;
        let scales = reading.scales(&r.arm.0);
        let checked = r.map_findings(|fs| {
            fs.iter()
                .map(|f| Prechecked::new(f, reading, &scales, &mut held))
                .collect()
        });
        Ok((line, checked))
    }));
    reading.block_done(held);
    if reading.size > 0 {
        reading.expected.get_or_init(|| {
            let returns = results.iter().filter_map(|r| r.as_ref().ok());
            let ids = returns
                .clone()
                .flat_map(|(_, r)| r.findings.iter().flatten());
            let ids = ids.filter(|f| f.id.is_some()).count();
            Expected::scaled(returns.count(), ids, block.len(), reading.size)
        });
    }
    results
}

/// Calls `f` with every readable record, in file order, with duplicate ids marked; returns the
/// record-level problems. A second return for one (target, arm, reviewer, run) is one of them
///: `cat a.jsonl b.jsonl` must not count a review twice.
fn each_record<F: Unchecked>(
    name: &str,
    raws: impl Iterator<Item = Result<(u64, RawReturn<F>), InputError>>,
    state: &RandomState,
    expect: impl Fn() -> Option<Expected>,
    mut f: impl FnMut(Record<F>),
) -> Problems {
    // Each id with the line it first appears on (in four bytes, [`super::Lines32`]: 4 MB less
    // at a million findings), in the order first seen, found through a table of positions
    // there, placed by the hash the id was read with: a slot is four bytes, and the table's own
    // seven bits of that hash make reading an id's text on a probe rare. At a million findings
    // the table is 10 MB (a position and half the hash in each slot made it 19 MB, a full hash
    // and a `usize` 34 MB). Room for the ids expected is taken before the first, so the ids are
    // hashed again only if the file holds more than its first block said.
    let mut first_ids: Vec<FindingId> = Vec::new();
    let mut first_lines = super::Lines32::default();
    let mut ids: hashbrown::HashTable<u32> = hashbrown::HashTable::new();
    // What the ids were read with ([`Keyed::new`]): the table's places when it grows.
    let rehash = |first: &[FindingId], at: u32| {
        use std::hash::BuildHasher;
        state.hash_one(&*first[at as usize])
    };
    // A return's key is its call ([`Record::call`]) with its target, arm and reviewer named by
    // number: a few thousand distinct names, each held once, rather than three copied strings
    // for every one of a million lines. Its arm, reviewer and run are numbered once more as
    // one (a few dozen calls of a target), so that the key is two numbers: the table holding
    // each key with its line is 9 MB at a million findings rather than 13.
    let mut numbers: HashMap<Box<str>, u32, RandomState> = HashMap::with_hasher(state.clone());
    let mut number = move |name: &str| match numbers.get(name) {
        Some(&n) => n,
        None => {
            let n = u32::try_from(numbers.len()).expect("fewer than 2^32 names: each is held");
            numbers.insert(name.into(), n);
            n
        }
    };
    let mut calls: HashMap<(u32, u32, u32), u32, RandomState> = HashMap::with_hasher(state.clone());
    let mut call = move |call: (u32, u32, u32)| {
        let n = u32::try_from(calls.len()).expect("fewer than 2^32 calls: each is held");
        *calls.entry(call).or_insert(n)
    };
    super::unique(
        raws,
        || expect().map(|e| e.returns),
        |line, raw| check_record(name, line, raw),
        |r: &Record<F>| {
            let target = number(&r.target);
            (target, call((number(&r.arm), number(&r.reviewer), r.run)))
        },
        |r, line, first| {
            InputError::new(
                name,
                format!(
                    "a second return of reviewer `{}` on target `{}` in arm `{}`, run {} (the first is on line {first})",
                    r.reviewer, r.target, r.arm, r.run
                ),
            )
            .at_line(line)
            .hint("each (target, arm, reviewer, run) has one return; a concatenated file must not count a review twice (give repeats their own `run`)")
        },
        |mut record| {
            // Room for the ids the file is expected to hold, taken before the first is kept.
            if first_ids.capacity() == 0 {
                if let Some(e) = expect() {
                    first_ids.reserve(e.ids);
                    first_lines.reserve(e.ids);
                    ids.reserve(e.ids, |&at| rehash(&first_ids, at));
                }
            }
            record.duplicate_id_of = record
                .findings
                .iter()
                .map(|f| {
                    let Keyed { hash, text } = f.keyed_id(state)?;
                    match ids.find(hash, |&at| first_ids[at as usize] == text) {
                        Some(&at) => Some(first_lines.get(at as usize)),
                        None => {
                            let at = u32::try_from(first_ids.len())
                                .expect("fewer than 2^32 finding ids: each one is held in memory");
                            ids.insert_unique(hash, at, |&at| rehash(&first_ids, at));
                            first_ids.push(text);
                            first_lines.push(record.line);
                            None
                        }
                    }
                })
                .collect();
            f(record);
        },
    )
}

/// The rules across a return's values: a repeat index that fits, findings when it is ok.
fn check_record<F>(name: &str, line: u64, raw: RawReturn<F>) -> Result<Record<F>, InputError> {
    let run = super::repeat_index(name, line, raw.run)?;
    let status = raw.status.unwrap_or(Status::Ok);
    let findings = match (raw.findings, &status) {
        (Some(findings), _) => findings,
        (None, Status::Failed) => Vec::new(),
        (None, Status::Ok) => {
            return Err(
                super::field_error(name, line, "findings", "is missing".into())
                    .hint("a return with status ok lists its findings, [] when there are none"),
            )
        }
    };
    Ok(Record {
        line,
        target: raw.target.0,
        arm: raw.arm.0,
        run,
        reviewer: raw.reviewer.0,
        status,
        reason: raw.reason,
        duplicate_id_of: Vec::new(),
        findings,
        residual_risks: raw.residual_risks.unwrap_or_default(),
        deferred_questions: raw.deferred_questions.unwrap_or_default(),
        testing_gaps: raw.testing_gaps.unwrap_or_default(),
        model: raw.model.map(|m| m.0),
        spent: super::usage::Spent::of(raw.usage, raw.elapsed_ms),
    })
}

/// Why a finding was dropped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Malformed {
    pub line: u64,
    /// Position of the finding in the return's `findings` array.
    pub index: usize,
    pub field: String,
    pub reason: String,
}

impl Malformed {
    /// Its field and the kind of its reason, with the value left out where one rule refuses
    /// many values (`confidence: off the anchor scale`): what the report tallies.
    pub fn kind(&self) -> String {
        let reason = &self.reason;
        let kind = if reason.contains("off the anchor scale") {
            "off the anchor scale"
        } else if reason.contains("off the float scale") {
            "off the float scale"
        } else if reason.starts_with("id is already used") {
            "duplicate id"
        } else {
            reason
        };
        format!("{}: {kind}", self.field)
    }

    /// The refusal `--strict` makes of it.
    pub fn to_error(&self, name: &str) -> InputError {
        InputError::new(name, format!("finding {}: {}", self.index, self.reason))
            .at_line(self.line)
            .field(format!("field `{}`", self.field))
            .hint("without --strict, malformed findings are dropped and counted in the report's Coverage section")
    }
}

/// A return's malformed findings: each counted by its kind (with the first of the kind), and the
/// first [`MalformedList::KEPT`] kept whole for `validate` to list. A return of ten thousand
/// `{}` holds one kind and a few details, not ten thousand reasons.
///
/// Held out of line: almost every return has none, and a return holds one word for it, not the
/// eighty bytes of four empty lists (a million-finding corpus holds 400,000 returns).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MalformedList(Option<Box<Dropped>>);

#[derive(Clone, Debug, Default, PartialEq)]
struct Dropped {
    count: usize,
    first: Vec<Malformed>,
    /// Each kind ([`Malformed::kind`]), how many, and the first finding of it.
    kinds: Vec<(String, usize, Malformed)>,
    /// The `id`s of the malformed findings that have one: a verdict may still name one.
    ids: Vec<FindingId>,
}

impl MalformedList {
    /// How many findings of one return are kept whole.
    pub const KEPT: usize = 16;

    /// Adds `m`, with its finding's `id` when it has one.
    fn push(&mut self, m: Malformed, id: Option<FindingId>) {
        let d = self.0.get_or_insert_with(Default::default);
        d.count += 1;
        d.ids.extend(id);
        let kind = m.kind();
        match d.kinds.iter_mut().find(|(k, _, _)| *k == kind) {
            Some((_, n, _)) => *n += 1,
            None => d.kinds.push((kind, 1, m.clone())),
        }
        if d.first.len() < Self::KEPT {
            d.first.push(m);
        }
    }

    /// Every malformed finding of the return.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |d| d.count)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first ones, kept whole, in the order of the return.
    pub fn iter(&self) -> std::slice::Iter<'_, Malformed> {
        self.0.as_ref().map_or(&[][..], |d| &d.first).iter()
    }

    /// The ids the malformed findings carry.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.iter().flat_map(|d| d.ids.iter().map(|s| &**s))
    }

    /// Each kind, with how many findings are of it and the first of them, in the order first seen.
    pub fn kinds(&self) -> impl Iterator<Item = (&str, usize, &Malformed)> {
        self.0
            .iter()
            .flat_map(|d| d.kinds.iter().map(|(k, n, m)| (k.as_str(), *n, m)))
    }
}

/// One reviewer's return as one arm reads it: valid findings, and the malformed ones dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct Return {
    pub line: u64,
    pub target: Arc<str>,
    pub run: u32,
    pub reviewer: Arc<str>,
    pub failed: bool,
    /// A list of its own size (a million findings are held before any is replayed): boxed, it
    /// has no room to record, and the return is two words smaller than with a `Vec`.
    pub findings: Box<[Finding]>,
    pub malformed: MalformedList,
    /// A failure's reason, the model and what the call spent, held apart as one: a return
    /// that says none of them holds one word for them, not five (at a million findings the
    /// returns are 14 MB smaller); one that names its model holds a word more.
    said: Option<Box<Said>>,
}

/// What a return may say about its call beside its findings ([`Return::said`]).
#[derive(Clone, Debug, Default, PartialEq)]
struct Said {
    reason: Option<Box<str>>,
    model: Option<Arc<str>>,
    /// Boxed again: eight words, and most returns that say anything name only their model.
    spent: Option<Box<super::usage::Spent>>,
}

impl Return {
    /// Why it failed, when the return says.
    pub fn reason(&self) -> Option<&str> {
        self.said.as_ref()?.reason.as_deref()
    }

    /// The model the return reports, if it does.
    pub fn model(&self) -> Option<&Arc<str>> {
        self.said.as_ref()?.model.as_ref()
    }

    /// What the call spent, if its line says.
    pub fn spent(&self) -> Option<&super::usage::Spent> {
        self.said.as_ref()?.spent.as_deref()
    }
}

/// The returns recorded under `source`, with findings validated for `mode` on `scale`.
pub fn select<F: Unchecked>(
    records: &[Record<F>],
    source: &str,
    mode: Mode,
    scale: Scale,
) -> Vec<Return> {
    let mut interner = Interner::default();
    records
        .iter()
        .filter(|r| r.arm == source)
        .map(|r| to_return(r, mode, scale, &mut interner))
        .collect()
}

/// The returns one arm reads: its recorded `source` validated on its `scale`.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    pub source: String,
    pub scale: Scale,
    pub returns: Vec<Return>,
}

/// What [`parse_for`] read.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// One per distinct (source, scale) wanted, in the order first wanted.
    pub selections: Vec<Selection>,
    /// What the corpus's other files are checked against.
    pub index: Index,
    /// Every `arm` label of a readable record, with its lines: what a `source` may name, and
    /// what the input ledger accounts for.
    pub labels: super::LabelCounts,
    /// Record-level problems, as in [`parse`].
    pub problems: Problems,
}

/// Parses and validates in one pass for the (source, scale) pairs an experiment reads, keeping
/// only typed findings: the untyped JSON of a line is dropped as soon as it is converted, so a
/// large corpus is held once, in its compact form. Record-level problems are collected as in
/// [`parse`].
pub fn parse_for(name: &str, bytes: &[u8], mode: Mode, wants: &[(String, Scale)]) -> Parsed {
    let bytes = bytes.strip_prefix(super::BOM).unwrap_or(bytes);
    let lines = read_block(name, 1, bytes).into_iter();
    check_for(name, lines, &Reading::new(mode, wants), Index::default())
}

/// [`parse_for`] over lines read by [`read_block`] (or, for a run, [`read_block_for`] with
/// the same `reading`), indexing into `index` (an index [`Index::without_ids`] when the corpus
/// has no validator calls to check).
pub fn check_for<F: Unchecked>(
    name: &str,
    lines: impl Iterator<Item = Result<(u64, RawReturn<F>), InputError>>,
    reading: &Reading,
    mut index: Index,
) -> Parsed {
    let mut out: Vec<Selection> = Vec::new();
    for (source, scale) in &reading.wants {
        if !out.iter().any(|s| &s.source == source && s.scale == *scale) {
            out.push(Selection {
                source: source.clone(),
                scale: *scale,
                returns: Vec::new(),
            });
        }
    }
    let mut labels = super::LabelCounts::new();
    let mut interner = Interner::with_state(reading.state.clone());
    let mut emptied: Vec<Vec<F>> = Vec::new();
    let problems = each_record(
        name,
        lines,
        &reading.state,
        || reading.expected(),
        |mut record| {
            // Each arm's share is not known yet: room for every return is only address space
            // where an arm has fewer (pages are taken as they are written).
            for sel in out.iter_mut().filter(|s| s.returns.capacity() == 0) {
                sel.returns
                    .reserve(reading.expected().map_or(0, |e| e.returns));
            }
            index.add(&record);
            for sel in out.iter_mut().filter(|s| s.source == record.arm) {
                sel.returns
                    .push(to_return(&record, reading.mode, sel.scale, &mut interner));
            }
            super::count_label(&mut labels, &record.arm, record.line);
            let mut list = std::mem::take(&mut record.findings);
            // A list with room for a huge return's findings goes now, not with its batch.
            if list.capacity() <= SPARE_ROOM {
                list.clear();
                emptied.push(list);
            }
            if emptied.len() == SPARES_BATCH {
                F::give_back(&mut emptied, reading);
            }
        },
    );
    Parsed {
        selections: out,
        index,
        labels,
        problems,
    }
}

/// One copy of each text findings repeat: the sections and files they point at, and the titles
/// several reviewers (or arms) give one issue; and of the target, reviewer and model names every
/// return repeats. A large corpus holds each once.
#[derive(Default)]
pub(crate) struct Interner {
    /// Each text, placed by its hash under `state`. A slot is the text's two words and no
    /// more: the table's own seven bits of the hash make comparing texts on a probe rare, and
    /// a text is hashed again only when the table grows (with its hash beside it, the table
    /// was 13 MB at a million findings, 9 MB without).
    held: hashbrown::HashTable<Arc<str>>,
    state: RandomState,
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Interner({} texts)", self.held.len())
    }
}

impl Interner {
    fn with_state(state: RandomState) -> Self {
        Interner {
            held: hashbrown::HashTable::new(),
            state,
        }
    }

    /// `s`, hashed `hash`, replaced by the copy already held, or held from now on.
    fn get(&mut self, s: &mut Arc<str>, hash: Option<u64>) {
        use std::hash::BuildHasher;
        let hash = hash.unwrap_or_else(|| self.state.hash_one(&**s));
        let held = self.held_or(s, hash, || s.clone());
        if !Arc::ptr_eq(&held, s) {
            *s = held;
        }
    }

    /// The copy of `text` (hashed `hash`) already held, or the one `make` makes, held from now
    /// on. Most texts reach the thread that keeps the returns already shared by the block they
    /// were read in: the very same string, found without comparing its text.
    fn held_or(&mut self, text: &str, hash: u64, make: impl FnOnce() -> Arc<str>) -> Arc<str> {
        use std::hash::BuildHasher;
        let same = |held: &Arc<str>| std::ptr::eq(&**held, text) || **held == *text;
        match self.held.find(hash, same) {
            Some(held) => held.clone(),
            None => {
                let new = make();
                let state = &self.state;
                self.held
                    .insert_unique(hash, new.clone(), |held| state.hash_one(&**held));
                new
            }
        }
    }

    /// The copy of `text` held, or a new one held from now on: the target, reviewer and model
    /// names every return repeats.
    fn text(&mut self, text: &str) -> Arc<str> {
        use std::hash::BuildHasher;
        let hash = self.state.hash_one(text);
        self.held_or(text, hash, || Arc::from(text))
    }

    /// Its title and place shared, by the hashes the finding was read with when it has them.
    fn finding(&mut self, f: &mut Finding, hashes: Option<[u64; 2]>) {
        let [title, place] = hashes.map_or([None; 2], |h| h.map(Some));
        self.get(&mut f.claim.title, title);
        match &mut f.location {
            Location::Doc { section, .. } => self.get(section, place),
            Location::Code(CodeSite { file, .. }) => self.get(file, place),
        }
    }
}

/// One record as one arm reads it.
fn to_return<F: Unchecked>(
    r: &Record<F>,
    mode: Mode,
    scale: Scale,
    interner: &mut Interner,
) -> Return {
    let mut findings = Vec::with_capacity(r.findings.len());
    let mut malformed = MalformedList::default();
    for (index, raw) in r.findings.iter().enumerate() {
        let checked = match r.duplicate_id_of.get(index).copied().flatten() {
            Some(first) => Err((
                "id".to_string(),
                format!("id is already used by a finding on line {first}"),
            )),
            None => raw.check(mode, scale),
        };
        match checked {
            Ok(mut f) => {
                interner.finding(&mut f, raw.text_hashes());
                findings.push(f);
            }
            Err((field, reason)) => malformed.push(
                Malformed {
                    line: r.line,
                    index,
                    field,
                    reason,
                },
                raw.id(),
            ),
        }
    }
    // Room was made for every finding; a return of malformed ones gives back what it did not use
    // (boxed below).
    Return {
        line: r.line,
        target: interner.text(&r.target),
        run: r.run,
        reviewer: interner.text(&r.reviewer),
        failed: r.status == Status::Failed,
        findings: findings.into_boxed_slice(),
        malformed,
        said: (r.reason.is_some() || r.model.is_some() || r.spent.is_some()).then(|| {
            Box::new(Said {
                reason: r.reason.as_deref().map(Box::from),
                model: r.model.as_deref().map(|m| interner.text(m)),
                spent: r.spent.map(Box::new),
            })
        }),
    }
}

/// The text held, looked up before a copy is made.
impl Places for Interner {
    fn share<T: SharedText>(&mut self, text: &T) -> Arc<str> {
        use std::hash::BuildHasher;
        let hash = self.state.hash_one(text.as_str());
        self.held_or(text.as_str(), hash, || text.shared())
    }
}

#[cfg(test)]
mod tests;
