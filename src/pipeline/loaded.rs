//! What the loader makes of a corpus folder: the parsed corpus, every file read, and everything
//! wrong with it (refusals, malformed findings, caveats, the input ledger), which `run`,
//! `validate`, the ledger's accounting and the checks against the experiment all read.

use std::path::Path;

use super::read::{read, InputFile, Mark};
use crate::corpus::{reviews, Corpus, MalformedShare};
use crate::error::{Error, InputError, Problems};

/// A corpus as read, with everything wrong with it.
#[derive(Debug, Default)]
pub struct Loaded {
    pub corpus: Corpus,
    /// Every file read, in order, for the manifest.
    pub inputs: Vec<InputFile>,
    /// Problems that refuse a run.
    pub refusals: Problems,
    /// Set when the folder is a collection that did not finish and `allow_partial` let it
    /// through: what the report must say.
    pub incomplete: Option<String>,
    /// `--allow-partial`: a collection that holds part of its plan is replayed, with a caveat.
    pub allow_partial: bool,
    /// The arm labels such a collection collects (its `collect.json` `arms`): an arm it has not
    /// reached yet is not a typo.
    pub collecting: Vec<String>,
    /// Findings a run drops and counts (and `--strict` refuses), each with the arms that read
    /// it (``arm `baseline` ``, ``arms `baseline` and `treatment` ``): `validate` lists them.
    /// The first [`Problems::KEPT`] are kept; `malformed_more` counts the rest.
    pub malformed: Vec<(String, InputError)>,
    pub malformed_more: u64,
    /// Validator outputs that were not a verdict: a run counts each as a failed call;
    /// `validate` lists them.
    pub failed_validations: Problems,
    /// The arms more than half of whose findings are malformed (but not all: that is refused):
    /// the run completes, warns, and its report says its inputs are suspect.
    pub suspect: Vec<MalformedShare>,
    /// What became of every line and finding, and the caveats a decision carries
    /// (docs/reference.md, "The input ledger").
    pub ledger: crate::corpus::ledger::Inputs,
    /// Each caveat as the refusal `--strict` makes of it, at its file and line.
    pub caveats_at: Vec<InputError>,
    /// The record of a collection (collect.json), with the file's name: its plan, its harness
    /// (`provenance`) and what changed while it ran.
    pub collection: Option<(String, crate::corpus::collection::Collection)>,
    /// A look's reading of a collection in progress: the files it appends to, each read from
    /// where the previous look stopped, and moved on to where this one stops.
    pub window: Option<Window>,
}

/// What a sequential collection's look reads (docs/guides/stop-when-you-know.md): each stage
/// file from the mark the previous look reached, so that a look costs what its batch added.
#[derive(Clone, Debug, Default)]
pub struct Window {
    pub marks: std::collections::BTreeMap<std::path::PathBuf, Mark>,
    /// The arm labels the collection collects (its collect.json's `arms`, which a look does
    /// not read again).
    pub collecting: Vec<String>,
}

impl Loaded {
    /// The harness record of a collection (collect.json `provenance`), with the file's name.
    pub fn provenance(&self) -> Option<(&str, &crate::corpus::collection::Provenance)> {
        let (name, record) = self.collection.as_ref()?;
        Some((name, record.provenance.as_ref()?))
    }

    /// Reads the corpus file at `path`, recording it among the inputs: its name as messages
    /// give it, and its bytes.
    /// A file of the look's window is read from its mark to its end, the lines before it given
    /// as blank lines (which every reader skips), so that each line keeps its number.
    pub(super) fn read_at(&mut self, path: &Path) -> Result<(String, Vec<u8>), Error> {
        let name = path.display().to_string();
        let Some(mark) = self.window.as_mut().and_then(|w| w.marks.get_mut(path)) else {
            return Ok((name, read(path, &mut self.inputs)?));
        };
        let tail = read_from(path, mark.byte)?;
        let mut bytes = vec![b'\n'; mark.lines as usize];
        bytes.extend_from_slice(&tail);
        *mark = mark.after(&tail);
        Ok((name, bytes))
    }

    /// Where a streamed file of the look's window starts, moved on to `end` once read.
    pub(super) fn mark(&self, path: &Path) -> Option<Mark> {
        self.window.as_ref()?.marks.get(path).copied()
    }

    pub(super) fn set_mark(&mut self, path: &Path, mark: Mark) {
        if let Some(m) = self.window.as_mut().and_then(|w| w.marks.get_mut(path)) {
            *m = mark;
        }
    }
}

/// The bytes of `path` from `byte` on.
fn read_from(path: &Path, byte: u64) -> Result<Vec<u8>, Error> {
    use std::io::{Read, Seek};
    let mut out = Vec::new();
    let mut file = std::fs::File::open(path).map_err(|e| Error::read(path, e))?;
    file.seek(std::io::SeekFrom::Start(byte))
        .and_then(|_| file.read_to_end(&mut out))
        .map_err(|e| Error::read(path, e))?;
    Ok(out)
}

/// The reviewer returns the controls' files are checked against: where they were read from (for
/// messages) and which findings and files they hold.
#[derive(Clone, Copy)]
pub struct Returns<'a> {
    pub path: &'a Path,
    pub index: &'a reviews::Index,
}
