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
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::raw::{self, field, Field, RawFinding, SharedText, Slot, Val, Written};
pub use super::raw::{RawReturn, Status};
use super::Lines;
use crate::error::{InputError, Problems};
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
        premise: Option<Arc<str>>,
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
    pub id: Option<Arc<str>>,
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
    pub evidence: Vec<Arc<str>>,
}

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
    /// The same, as a string that can be shared.
    fn shared(&self, name: &str) -> Option<Arc<str>>;
    /// It checked against its field rules, as [`validate`] checks.
    fn check(&self, mode: Mode, scale: Scale) -> Result<Finding, FieldError>;
    /// Its `id` with the id's hash under `state`, for the duplicate-id check.
    fn keyed_id(&self, state: &RandomState) -> Option<Keyed> {
        self.shared("id").map(|id| Keyed::new(state, id))
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
    text: Arc<str>,
}

impl Keyed {
    pub fn new(state: &RandomState, text: Arc<str>) -> Self {
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
            Some(Val::Str(t)) => Some(t.shared()),
            _ => None,
        };
        Prechecked {
            id: text(field!("id")).map(|id| Keyed::new(&reading.state, id)),
            file: text(field!("file")),
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
    fn shared(&self, name: &str) -> Option<Arc<str>> {
        match name {
            "id" => self.id.as_ref().map(|k| k.text.clone()),
            "file" => self.file.clone(),
            _ => None,
        }
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
    fn shared(&self, name: &str) -> Option<Arc<str>> {
        self.text(name).map(Arc::from)
    }
    fn check(&self, mode: Mode, scale: Scale) -> Result<Finding, FieldError> {
        validate(&RawFinding::from(self), mode, scale)
    }
}

impl Unchecked for RawFinding {
    fn text(&self, name: &str) -> Option<&str> {
        RawFinding::text(self, name)
    }
    fn shared(&self, name: &str) -> Option<Arc<str>> {
        match self.get(name)? {
            Slot::Str(s) => Some(s.clone()),
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
    // Each id with the line it first appears on, in the order first seen, found through a table
    // of (position there, low half of the id's hash): the hash is the one the id was read with,
    // the table is placed by its low half spread over 64 bits ([`spread`]), so the table grows
    // without touching a single id, and an id's text is read only when the halves match. At a
    // million findings the table is 18 MB (a full hash and a `usize` per entry made it 34 MB).
    let mut first_ids: Vec<(Arc<str>, u64)> = Vec::new();
    let mut ids: hashbrown::HashTable<(u32, u32)> = hashbrown::HashTable::new();
    // A return's key is its call ([`Record::call`]) with its target, arm and reviewer named by
    // number: a few thousand distinct names, each held once, rather than three copied strings
    // for every one of a million lines.
    let mut numbers: HashMap<Box<str>, u32, RandomState> = HashMap::with_hasher(state.clone());
    let mut number = move |name: &str| match numbers.get(name) {
        Some(&n) => n,
        None => {
            let n = u32::try_from(numbers.len()).expect("fewer than 2^32 names: each is held");
            numbers.insert(name.into(), n);
            n
        }
    };
    super::unique(
        raws,
        || expect().map(|e| e.returns),
        |line, raw| check_record(name, line, raw),
        |r: &Record<F>| {
            let target = number(&r.target);
            (target, number(&r.arm), number(&r.reviewer), r.run)
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
                    ids.reserve(e.ids, |&(_, h)| spread(h));
                }
            }
            record.duplicate_id_of = record
                .findings
                .iter()
                .map(|f| {
                    let Keyed { hash, text } = f.keyed_id(state)?;
                    let half = hash as u32;
                    let same =
                        |&(at, h): &(u32, u32)| h == half && first_ids[at as usize].0 == text;
                    match ids.find(spread(half), same) {
                        Some(&(at, _)) => Some(first_ids[at as usize].1),
                        None => {
                            let at = u32::try_from(first_ids.len())
                                .expect("fewer than 2^32 finding ids: each one is held in memory");
                            ids.insert_unique(spread(half), (at, half), |&(_, h)| spread(h));
                            first_ids.push((text, record.line));
                            None
                        }
                    }
                })
                .collect();
            f(record);
        },
    )
}

/// A 32-bit hash spread over 64 bits (Fibonacci hashing), so that the table's bucket index
/// (low bits) and tag (high bits) both depend on all of it.
fn spread(half: u32) -> u64 {
    u64::from(half).wrapping_mul(0x9E37_79B9_7F4A_7C15)
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
    })
}

pub(crate) use super::kind;

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
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MalformedList {
    count: usize,
    first: Vec<Malformed>,
    /// Each kind ([`Malformed::kind`]), how many, and the first finding of it.
    kinds: Vec<(String, usize, Malformed)>,
    /// The `id`s of the malformed findings that have one: a verdict may still name one.
    ids: Vec<Arc<str>>,
}

impl MalformedList {
    /// How many findings of one return are kept whole.
    pub const KEPT: usize = 16;

    fn push(&mut self, m: Malformed) {
        self.count += 1;
        let kind = m.kind();
        match self.kinds.iter_mut().find(|(k, _, _)| *k == kind) {
            Some((_, n, _)) => *n += 1,
            None => self.kinds.push((kind, 1, m.clone())),
        }
        if self.first.len() < Self::KEPT {
            self.first.push(m);
        }
    }

    /// Every malformed finding of the return.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The first ones, kept whole, in the order of the return.
    pub fn iter(&self) -> std::slice::Iter<'_, Malformed> {
        self.first.iter()
    }

    /// The ids the malformed findings carry.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.ids.iter().map(|s| &**s)
    }

    /// Each kind, with how many findings are of it and the first of them, in the order first seen.
    pub fn kinds(&self) -> impl Iterator<Item = (&str, usize, &Malformed)> {
        self.kinds.iter().map(|(k, n, m)| (k.as_str(), *n, m))
    }
}

/// One reviewer's return as one arm reads it: valid findings, and the malformed ones dropped.
#[derive(Clone, Debug, PartialEq)]
pub struct Return {
    pub line: u64,
    pub target: String,
    pub run: u32,
    pub reviewer: Arc<str>,
    pub failed: bool,
    /// Why it failed, when the return says.
    pub reason: Option<String>,
    pub findings: Vec<Finding>,
    pub malformed: MalformedList,
    /// The model the return reports, if it does.
    pub model: Option<Arc<str>>,
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
/// several reviewers (or arms) give one issue. A large corpus holds each once.
#[derive(Default)]
pub(crate) struct Interner {
    /// Each text with its hash, so that the table grows without hashing any text again.
    held: hashbrown::HashTable<(u64, Arc<str>)>,
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
        let same = |(h, held): &(u64, Arc<str>)| {
            *h == hash && (std::ptr::eq(&**held, text) || **held == *text)
        };
        match self.held.find(hash, same) {
            Some((_, held)) => held.clone(),
            None => {
                let new = make();
                self.held
                    .insert_unique(hash, (hash, new.clone()), |(h, _)| *h);
                new
            }
        }
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
            Err((field, reason)) => {
                if let Some(id) = raw.shared("id") {
                    malformed.ids.push(id);
                }
                malformed.push(Malformed {
                    line: r.line,
                    index,
                    field,
                    reason,
                })
            }
        }
    }
    // Room was made for every finding; a return of malformed ones gives back what it did not use.
    findings.shrink_to_fit();
    Return {
        line: r.line,
        target: r.target.clone(),
        run: r.run,
        reviewer: r.reviewer.as_str().into(),
        failed: r.status == Status::Failed,
        reason: r.reason.clone(),
        findings,
        malformed,
        model: r.model.as_deref().map(Arc::from),
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

/// The text held, looked up before a copy is made.
impl Places for Interner {
    fn share<T: SharedText>(&mut self, text: &T) -> Arc<str> {
        use std::hash::BuildHasher;
        let hash = self.state.hash_one(text.as_str());
        self.held_or(text.as_str(), hash, || text.shared())
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
    let id = f.string(field!("id"))?.map(SharedText::shared);
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
    f.string(field!("why_it_matters"))?;
    let evidence = evidence(&f)?;
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
            evidence,
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
        premise: f.string(field!("premise"))?.map(SharedText::shared),
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

// The finding types below exist for their JSON Schemas: `validate` reads findings leniently (a
// malformed one is dropped and counted, not refused), so it checks the value itself, and a test
// in `commands::schema` holds the two to the same verdict on every example and malformed line.

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

    #[test]
    fn unreadable_records_are_collected_with_line_and_field() {
        let text = r#"{"target": "a", "arm": "baseline", "reviewer": "r", "findings": []}
not json

{"target": "a", "arm": "baseline", "findings": []}
{"target": "a", "arm": "baseline", "reviewer": "r", "findings": {}}
{"target": "a", "arm": "baseline", "reviewer": "r2", "status": "failed"}
{"target": "a", "arm": "baseline", "reviewer": "r", "run": -1, "findings": []}
{"target": "a", "arm": "baseline", "reviewer": "r3", "status": "failed", "reason": "timed out"}
{"target": "a", "arm": "baseline", "reviewer": "r", "status": "failed", "reason": 3}
"#;
        let (records, problems) = parse("reviews.jsonl", text.as_bytes());
        assert_eq!(records.len(), 3);
        assert_eq!(records[1].status, Status::Failed);
        assert_eq!(records[1].reason, None);
        assert_eq!(records[2].reason.as_deref(), Some("timed out"));
        let at: Vec<(Option<u64>, Option<String>)> =
            problems.iter().map(|p| (p.line, p.field.clone())).collect();
        assert_eq!(
            at,
            [
                (Some(2), None),
                (Some(4), Some("field `reviewer`".into())),
                (Some(5), Some("field `findings`".into())),
                (Some(7), Some("field `run`".into())),
                (Some(9), Some("field `reason`".into())),
            ]
        );
    }

    // Regression (issue 21): `cat a.jsonl b.jsonl` double-counted every review (findings_raw
    // 8 → 14) and `validate` said "no problems".
    #[test]
    fn a_second_return_for_one_target_arm_reviewer_and_run_names_both_lines() {
        let line = |reviewer: &str, run: u32| {
            json!({"target": "t", "arm": "b", "reviewer": reviewer, "run": run, "findings": [doc_finding()]})
                .to_string()
        };
        // The key numbers names, one numbering for all three fields: a target named like a
        // reviewer, and that reviewer named like the target, is another return.
        let swapped = json!({"target": "x", "arm": "b", "reviewer": "t", "run": 0, "findings": [doc_finding()]});
        let text = [
            line("x", 0),
            line("y", 0),
            line("x", 1),
            line("x", 0),
            swapped.to_string(),
        ]
        .join("\n");
        let (records, problems) = parse("r.jsonl", text.as_bytes());
        assert_eq!(records.len(), 4, "the repeat is not read");
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].line, Some(4));
        assert!(
            problems[0].problem.contains("a second return of reviewer `x` on target `t` in arm `b`, run 0 (the first is on line 1)"),
            "{}",
            problems[0].problem
        );
        let parsed = parse_for(
            "r.jsonl",
            text.as_bytes(),
            Mode::Doc,
            &[("b".into(), Scale::Float)],
        );
        assert_eq!(parsed.problems.len(), 1);
        assert_eq!(parsed.selections[0].returns.len(), 4);
        assert_eq!(parsed.labels.into_keys().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn select_validates_per_arm_and_flags_duplicate_ids() {
        let text = format!(
            "{}\n{}\n",
            json!({"target": "t", "arm": "b", "reviewer": "x", "findings": [doc_finding(), {"title": 3}]}),
            json!({"target": "t", "arm": "b", "reviewer": "y", "findings": [doc_finding()]}),
        );
        let (records, problems) = parse("r.jsonl", text.as_bytes());
        assert!(problems.is_empty());
        let returns = select(&records, "b", Mode::Doc, Scale::Float);
        assert_eq!(returns[0].findings.len(), 1);
        assert_eq!(returns[0].malformed.iter().next().unwrap().field, "title");
        assert_eq!(
            returns[1].malformed.iter().next().unwrap().reason,
            "id is already used by a finding on line 1"
        );
        assert!(select(&records, "other", Mode::Doc, Scale::Float).is_empty());
    }

    // Issue 34: a return of many malformed findings holds each kind once, with its count, and
    // the first few whole; one more finding than a return may hold refuses the line.
    #[test]
    fn a_return_of_many_malformed_findings_is_counted_by_kind() {
        let line = |n: usize| {
            format!(
                "{{\"target\": \"t\", \"arm\": \"b\", \"reviewer\": \"r\", \"findings\": [{}]}}",
                vec!["{}"; n].join(",")
            )
        };
        let wants = [("b".to_string(), Scale::Float)];
        let full = parse_for("r", line(raw::MAX_FINDINGS).as_bytes(), Mode::Doc, &wants);
        assert!(full.problems.is_empty(), "{:?}", full.problems);
        let m = &full.selections[0].returns[0].malformed;
        assert_eq!(m.len(), raw::MAX_FINDINGS);
        assert_eq!(m.iter().count(), MalformedList::KEPT);
        let kinds: Vec<(&str, usize)> = m.kinds().map(|(k, n, _)| (k, n)).collect();
        assert_eq!(kinds, [("title: is missing", raw::MAX_FINDINGS)]);
        let over = parse_for(
            "r",
            line(raw::MAX_FINDINGS + 1).as_bytes(),
            Mode::Doc,
            &wants,
        );
        assert_eq!(over.problems.len(), 1);
        assert_eq!(over.problems[0].field.as_deref(), Some("field `findings`"));
        assert!(over.selections[0].returns.is_empty());
    }

    /// What a run keeps of a line: its envelope and, per finding, its id, file, hashes and its
    /// check on every scale `reading` wants of the line's arm.
    fn kept(r: RawReturn<Prechecked>, reading: &Reading) -> String {
        let scales = reading.scales(&r.arm.0);
        let findings: Vec<_> = (r.findings.iter().flatten())
            .map(|f| {
                let checks: Vec<_> = scales.iter().map(|s| f.check(reading.mode, *s)).collect();
                (f.text("id"), f.text("file"), f.hashes, checks)
            })
            .collect();
        format!(
            "{:?}",
            (
                &r.target,
                &r.arm,
                &r.reviewer,
                r.run,
                &r.status,
                &r.reason,
                &r.residual_risks,
                &r.deferred_questions,
                &r.testing_gaps,
                &r.model,
                r.findings.is_some(),
                findings
            )
        )
    }

    // Emptied lists go back a batch at a time, up to what the reading holds, and come out a
    // batch at a time; a list read into is cleared first, whatever it held.
    #[test]
    fn spare_lists_are_bounded_and_reused_empty() {
        let reading = Reading::new(Mode::Doc, &[("baseline".into(), Scale::Float)]);
        assert!(reading.spare_lists().is_empty());
        // A list with room for a huge return's findings is let go, not held.
        let mut huge = vec![
            Vec::with_capacity(SPARE_ROOM + 1),
            Vec::with_capacity(SPARE_ROOM),
        ];
        reading.give_back(&mut huge);
        let small = reading.spare_lists();
        assert_eq!(small.len(), 1);
        assert!(small[0].capacity() <= SPARE_ROOM);
        let mut lists: Vec<Vec<Prechecked>> = (0..SPARES_HELD + 5)
            .map(|_| Vec::with_capacity(8))
            .collect();
        reading.give_back(&mut lists);
        assert!(lists.is_empty());
        let batch = reading.spare_lists();
        assert_eq!(batch.len(), SPARES_BATCH);
        assert!(batch.iter().all(|l| l.is_empty() && l.capacity() >= 8));
        let mut taken = SPARES_BATCH;
        while !reading.spare_lists().is_empty() {
            taken += SPARES_BATCH;
        }
        assert_eq!(taken, SPARES_HELD);
        let text = r#"{"target":"t","arm":"baseline","reviewer":"r","findings":[{"title":"T","severity":"P1","section":"S","autofix_class":"manual","confidence":0.5}]}"#;
        let mut held = Interner::with_state(reading.state.clone());
        let mut read = |list: Vec<Prechecked>| {
            let mut scales = None;
            super::super::scan::line(text, list, |arm, f| {
                let scales = scales.get_or_insert_with(|| reading.scales(arm));
                Prechecked::new(f, &reading, scales, &mut held)
            })
            .expect("read directly")
        };
        let fresh = read(Vec::new());
        let filled = read(Vec::new()).findings.expect("findings");
        assert_eq!(filled.len(), 1);
        // A list that still holds a finding is read into as if it were empty.
        let again = read(filled);
        assert_eq!(kept(again, &reading), kept(fresh, &reading));
    }

    // A block's counts scaled by its share of the file's bytes, worked by hand; a first block
    // of absurdly short lines cannot ask for more than the file could hold.
    #[test]
    fn expected_counts_scale_with_the_files_size() {
        let e = Expected::scaled(900, 5_400, 1 << 20, 193 << 20);
        assert_eq!((e.returns, e.ids), (900 * 193, 5_400 * 193));
        assert_eq!(
            Expected::scaled(3, 7, 1_000, 2_500),
            Expected {
                returns: 8,
                ids: 18
            }
        );
        let capped = Expected::scaled(16_384, 16_384, 16_384, 1 << 30);
        assert_eq!((capped.returns, capped.ids), ((1 << 29) + 1, (1 << 27) + 1));
    }

    // A reading told its file's size knows, once a block is read, what the file holds: for a
    // file of one block, exactly its returns and the findings with an id (a refused line, and
    // a finding without an id or malformed without one, count for nothing); a reading not
    // told the size guesses nothing. The blocks' results are the same either way.
    #[test]
    fn the_first_block_read_says_what_the_file_holds() {
        let line = |t: &str, n: usize| {
            let f = |i: usize| {
                format!(
                    r#"{{"id":"{t}{i}","title":"T","severity":"P1","section":"S","autofix_class":"manual","confidence":0.5}}"#
                )
            };
            let mut fs: Vec<String> = (0..n).map(f).collect();
            fs.push(r#"{"title":"no id","severity":"P1","section":"S","autofix_class":"manual","confidence":0.5}"#.into());
            fs.push("{}".into());
            format!(
                r#"{{"target":"{t}","arm":"baseline","reviewer":"r","findings":[{}]}}"#,
                fs.join(",")
            )
        };
        let text = [line("a", 2), "{}".into(), line("b", 0), line("c", 3)].join("\n");
        let wants = [("baseline".to_string(), Scale::Float)];
        let sized = Reading::new(Mode::Doc, &wants).of_file(text.len() as u64);
        let unsized_ = Reading::new(Mode::Doc, &wants);
        assert_eq!(sized.expected(), None);
        let a = read_block_for("r", 1, text.as_bytes(), &sized);
        let b = read_block_for("r", 1, text.as_bytes(), &unsized_);
        assert_eq!(sized.expected(), Some(Expected { returns: 3, ids: 5 }));
        assert_eq!(unsized_.expected(), None);
        let lines = |r: Vec<Result<(u64, RawReturn<Prechecked>), InputError>>| {
            r.into_iter()
                .map(|r| r.map(|(l, raw)| (l, raw.findings.map_or(0, |f| f.len()))))
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(a), lines(b));
    }

    /// A line read straight from its text (`None` when that route declines it), and read the
    /// way it was read before that route existed.
    fn both_routes(text: &str, mode: Mode) -> (Option<String>, Result<String, String>) {
        let arm = |t: &str| {
            serde_json::from_str::<Value>(t).ok()?["arm"]
                .as_str()
                .map(str::to_string)
        };
        let arm = arm(text).unwrap_or_else(|| "baseline".into());
        let reading = Reading::new(mode, &[(arm.clone(), Scale::Float), (arm, Scale::Anchor)]);
        let mut scales = None;
        let mut held = Interner::with_state(reading.state.clone());
        let direct = super::super::scan::line(text, Vec::new(), |arm, f| {
            let scales = scales.get_or_insert_with(|| reading.scales(arm));
            Prechecked::new(f, &reading, scales, &mut held)
        })
        .map(|r| kept(r, &reading));
        let mut held = Interner::with_state(reading.state.clone());
        let before = read_line("reviews.jsonl", 1, text.as_bytes(), text)
            .map(|(_, r)| {
                let scales = reading.scales(&r.arm.0);
                let r = r.map_findings(|fs| {
                    fs.iter()
                        .map(|f| Prechecked::new(f, &reading, &scales, &mut held))
                        .collect()
                });
                kept(r, &reading)
            })
            .map_err(|e| e.to_string());
        (direct, before)
    }

    fn example_lines() -> Vec<(String, Mode)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
        let mut out = Vec::new();
        for dir in std::fs::read_dir(root).unwrap() {
            let dir = dir.unwrap().path();
            let Ok(text) = std::fs::read_to_string(dir.join("reviews.jsonl")) else {
                continue;
            };
            let toml = std::fs::read_to_string(dir.join("experiment.toml")).unwrap_or_default();
            let mode = if toml.contains("mode = \"code\"") {
                Mode::Code
            } else {
                Mode::Doc
            };
            out.extend(text.lines().map(|l| (l.to_string(), mode)));
        }
        out
    }

    // The route that reads a line straight from its text is only a faster way to the same
    // answer, and only worth having if the lines users write take it: every line of every
    // example corpus does, in both modes, and gives what the fast route gives.
    #[test]
    fn every_example_line_is_read_straight_from_its_text_with_the_same_values() {
        let lines = example_lines();
        assert!(lines.len() > 100, "{}", lines.len());
        for (line, mode) in &lines {
            for mode in [*mode, Mode::Doc, Mode::Code] {
                let (direct, before) = both_routes(line, mode);
                let direct = direct.unwrap_or_else(|| panic!("declined: {line}"));
                assert_eq!(Ok(direct), before, "{line}");
            }
        }
    }

    // Lines written by hand to reach each thing the direct route reads, and each it declines.
    #[test]
    fn the_direct_route_reads_escapes_spacing_and_unknown_keys_and_declines_the_rest() {
        let f = r#""id":"f1","title":"Rollback","severity":"P1","section":"Deploy","finding_type":"omission","autofix_class":"manual","confidence":0.75"#;
        let line = |finding: &str| {
            format!(
                r#"{{"target":"plan","arm":"baseline","reviewer":"r","run":0,"findings":[{{{finding}}}]}}"#
            )
        };
        let read = [
            line(f),
            line(&f.replace("Rollback", r#"Say \"no\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \u0000"#)),
            line(&f.replace(':', " :\t").replace(',', " ,\r\n ")),
            format!("  {}  \r", line(f)),
            line(&format!(r#"{f},"extra":[1,-2.5e3,"x",true,null,[]],"more":"s","n":-0"#)),
            line(&format!(r#"{f},"evidence":["a","b\"c"],"premise":null,"suggested_fix":" ""#)),
            line(&format!(r#"{f},"evidence":[]"#)),
            line(&format!(r#"{f},"evidence":"x","why_it_matters":3"#)),
            line(&f.replace("0.75", "75")),
            line(&f.replace("0.75", "7.5e-1")),
            line(&f.replace("0.75", "1E0")),
            line(&f.replace("0.75", "1.5")),
            line(&f.replace("0.75", "0.1234567891234")),
            line(&f.replace("0.75", "1e-400")),
            line(&f.replace("0.75", "\"0.75\"")),
            line(&f.replace("0.75", "true")),
            line(&f.replace(r#""P1""#, r#""p1""#)),
            line(&f.replace(r#""Rollback""#, r#""""#)),
            line(&f.replace(r#""Rollback""#, &format!("\"{}\"", "é".repeat(101)))),
            line(&f.replace(r#""title":"Rollback","#, "")),
            line(&format!(
                r#""file":"src/a.rs","line":12,"owner":"human","requires_verification":false,"pre_existing":true,{}"#,
                f.replace("0.75", "50")
            )),
            line(&format!(r#""file":" ","line":12.0,{f}"#)),
            line(&format!(r#""line":4294967296,{f}"#)),
            r#"{"target":"p","arm":"baseline","reviewer":"r","status":"failed","reason":"timeout\u0021"}"#.into(),
            r#"{"target":"p","arm":"baseline","reviewer":"r","findings":null,"status":null,"run":null,"model":"m","residual_risks":["a"],"deferred_questions":[],"testing_gaps":null}"#.into(),
            // Every key of the envelope with a value, so that none is dropped as unknown.
            r#"{"target":"p","arm":"baseline","reviewer":"r","run":3,"status":"ok","reason":"x","findings":[],"residual_risks":["a"],"deferred_questions":["d"],"testing_gaps":["g"],"model":"m"}"#.into(),
            r#"{"arm":"baseline","findings":[],"reviewer":"r","target":"p","x":{}}"#.replace(r#","x":{}"#, ""),
        ];
        for l in &read {
            for mode in [Mode::Doc, Mode::Code] {
                let (direct, before) = both_routes(l, mode);
                let direct = direct.unwrap_or_else(|| panic!("declined: {l}"));
                assert_eq!(Ok(direct), before, "{l}");
            }
        }
        let declined = [
            r#"{"target":"p","findings":[],"arm":"baseline","reviewer":"r"}"#.to_string(),
            line(&f.replace("0.75", "-0.5")),
            line(&f.replace("0.75", "1e400")),
            line(&f.replace("0.75", "07")),
            line(&f.replace("0.75", "0.")),
            line(&format!(r#"{f},"confidnce":1"#)),
            line(&format!(r#"{f},"Title":"x""#)),
            line(&format!(r#"{f},"x":1,"x":2"#)),
            line(&format!(r#"{f},"x":{{"a":1}}"#)),
            line(&format!(r#"{f},"title":"again""#)),
            line(&format!(r#"{f},"evidence":["a",1]"#)),
            line(&f.replace("Rollback", r"\x")),
            line(&f.replace("Rollback", r"\ud83d")),
            line(&f.replace("Rollback", "tab\there")),
            line(&f.replace(r#""id""#, r#""\u0069d""#)),
            format!("{} x", line(f)),
            format!("{}}}", line(f)),
            r#"{"target":" ","arm":"baseline","reviewer":"r","findings":[]}"#.into(),
            r#"{"target":"p","arm":"baseline","reviewer":"r","findings":[1]}"#.into(),
            r#"{"target":"p","arm":"baseline","reviewer":"r","findings":[],"run":-1}"#.into(),
            r#"{"target":"p","arm":"baseline","reviewer":"r","findings":[],"status":"maybe"}"#
                .into(),
            r#"{"target":"p","arm":"baseline","reviewer":"r","findings":[],}"#.into(),
            r#"[{"target":"p"}]"#.into(),
        ];
        for l in &declined {
            assert_eq!(both_routes(l, Mode::Doc).0, None, "{l}");
        }
    }

    // Seeded damage to example lines: whatever the direct route reads, the fast route reads
    // the same way; a line refused must never be read.
    #[test]
    fn damaged_lines_read_straight_are_read_as_the_fast_route_reads_them() {
        let pieces = [
            "\"",
            "\\",
            "\\\"",
            "\\u0041",
            "\\ud83d\\ude00",
            "\\ud83d",
            ",",
            ":",
            "{",
            "}",
            "[",
            "]",
            " ",
            "-",
            "0",
            "1e400",
            "e5",
            ".",
            "null",
            "true",
            "\"x\":1,",
            "\"id\":\"d\",",
            "\"confidnce\":0.5,",
            "\"extra\":{\"a\":1},",
            "\"e\":[1,[2,\"x\"]],",
            "\t",
            "\u{1}",
            "é",
            "-0",
            "00",
            "1.",
            "75",
            "0.5E-1",
            "\"title\":\"t\",",
            "\"arm\":\"x\",",
        ];
        let lines = example_lines();
        let mut rng = crate::stats::rng::Rng::for_replicate(51, 0);
        let (mut read, mut tried) = (0, 0);
        for (line, mode) in lines.iter().step_by(3) {
            for _ in 0..12 {
                let mut text = line.clone();
                for _ in 0..=rng.below(2) {
                    // Half the time just after a `{`, `[` or `,`, where a key or value may go.
                    let after: Vec<usize> = (text.match_indices(['{', '[', ',']))
                        .map(|(i, _)| i + 1)
                        .collect();
                    let mut at = match rng.below(2) {
                        0 if !after.is_empty() => after[rng.below(after.len() as u64) as usize],
                        _ => rng.below(text.len() as u64 + 1) as usize,
                    };
                    while !text.is_char_boundary(at) {
                        at -= 1;
                    }
                    match rng.below(3) {
                        0 => text.insert_str(at, pieces[rng.below(pieces.len() as u64) as usize]),
                        1 => {
                            if let Some(c) = text[at..].chars().next() {
                                text.replace_range(at..at + c.len_utf8(), "");
                            }
                        }
                        _ => {
                            if let Some(c) = text[at..].chars().next() {
                                let p = pieces[rng.below(pieces.len() as u64) as usize];
                                text.replace_range(at..at + c.len_utf8(), p);
                            }
                        }
                    }
                }
                tried += 1;
                let (direct, before) = both_routes(&text, *mode);
                if let Some(direct) = direct {
                    read += 1;
                    assert_eq!(Ok(direct), before, "{text}");
                }
            }
        }
        // The damage reaches both sides: many lines still read, many declined.
        assert!(
            read > tried / 10 && read < tried * 9 / 10,
            "{read} of {tried}"
        );
    }
}
