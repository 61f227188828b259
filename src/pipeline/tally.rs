//! One file's lines accounted for in the input ledger (docs/reference.md, "The input ledger"):
//! each used, or excluded for a named reason, by the arm label it is filed under; the refusal of
//! lines under a label neither arm reads; and a caveat recorded with the refusal `--strict`
//! makes of it.

use std::collections::BTreeSet;
use std::path::Path;

use crate::config::Experiment;
use crate::corpus::files::Noun;
use crate::corpus::ledger::{Caveat, FileLedger, Inputs, Reason};
use crate::corpus::{count_label, LabelCounts};
use crate::error::{InputError, Problems};

/// The name a file has in the ledger and in caveats: its file name, without the folder.
pub fn file_key(name: &str) -> String {
    Path::new(name)
        .file_name()
        .map_or_else(|| name.to_string(), |f| f.to_string_lossy().into_owned())
}

/// The experiment a corpus is read for, when there is one.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    pub exp: Option<(&'a Path, &'a Experiment)>,
}

/// What becomes of the lines under one `arm` label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    Read,
    Ignored,
    Unread,
}

impl Reader<'_> {
    /// The fate of lines filed under `label`; `items`: judged items, which an arm's name files
    /// too. Without an experiment every label is read.
    pub(super) fn fate(&self, label: &str, items: bool) -> Fate {
        match self.exp {
            None => Fate::Read,
            Some((_, exp)) if exp.ignores(label) => Fate::Ignored,
            Some((_, exp)) if exp.reads(label, items) => Fate::Read,
            Some(_) => Fate::Unread,
        }
    }

    /// The recorded label (an arm's `source`) whose lines the items under `label` are about.
    pub(super) fn source_of<'b>(&'b self, label: &'b str) -> &'b str {
        let Some((_, exp)) = self.exp else {
            return label;
        };
        if exp.arms().iter().any(|a| a.source == label) {
            return label;
        }
        exp.arms()
            .into_iter()
            .find(|a| a.name == label)
            .map_or(label, |a| a.source.as_str())
    }
}

/// One file's lines, accounted for one at a time.
pub struct Tally<'a> {
    name: &'a str,
    noun: Noun,
    reader: Reader<'a>,
    ledger: FileLedger,
    unread: LabelCounts,
    /// Every label the file's lines carry, for the refusal's hint.
    labels: BTreeSet<String>,
}

impl<'a> Tally<'a> {
    /// A file's tally, starting with the lines its reader refused (`problems`, one per line).
    pub fn new(name: &'a str, noun: Noun, reader: Reader<'a>, refused: &Problems) -> Self {
        let mut ledger = FileLedger::default();
        let first = refused.iter().filter_map(|p| p.line).min().unwrap_or(0);
        let example = refused
            .iter()
            .find(|p| p.line == Some(first))
            .map(|p| p.problem.clone())
            .unwrap_or_default();
        ledger.exclude(Reason::Refused, refused.total(), first, || example);
        Tally {
            name,
            noun,
            reader,
            ledger,
            unread: LabelCounts::new(),
            labels: BTreeSet::new(),
        }
    }

    fn saw(&mut self, label: &str) {
        if !self.labels.contains(label) {
            self.labels.insert(label.to_string());
        }
    }

    /// `n` lines under `label`, the first on `line`, all read alike (reviews.jsonl's, counted as
    /// they stream).
    pub fn label(&mut self, label: &str, n: u64, line: u64) {
        self.saw(label);
        match self.reader.fate(label, false) {
            Fate::Read => self.ledger.used(n),
            Fate::Ignored => self
                .ledger
                .exclude(Reason::LabelIgnored, n, line, || label.to_string()),
            Fate::Unread => {
                self.ledger
                    .exclude(Reason::LabelUnread, n, line, || label.to_string());
                for _ in 0..n {
                    count_label(&mut self.unread, label, line);
                }
            }
        }
    }

    /// One line under `label`: when an arm reads it, `used` unless `why` names a reason.
    pub fn line(
        &mut self,
        label: &str,
        line: u64,
        items: bool,
        why: impl FnOnce() -> Option<(Reason, String)>,
    ) {
        self.saw(label);
        match self.reader.fate(label, items) {
            Fate::Read => match why() {
                None => self.ledger.used(1),
                Some((reason, example)) => self.ledger.exclude(reason, 1, line, || example),
            },
            Fate::Ignored => self
                .ledger
                .exclude(Reason::LabelIgnored, 1, line, || label.to_string()),
            Fate::Unread => {
                self.ledger
                    .exclude(Reason::LabelUnread, 1, line, || label.to_string());
                count_label(&mut self.unread, label, line);
            }
        }
    }

    /// The file's ledger into `inputs`, and the refusal of the lines under labels no arm reads.
    pub fn close(self, inputs: &mut Inputs, refusals: &mut Problems) {
        if let (false, Some((exp_path, exp))) = (self.unread.is_empty(), self.reader.exp) {
            refusals.push(unread(
                (self.name, self.noun, self.ledger.lines),
                &self.unread,
                &self.labels,
                exp_path,
                exp,
            ));
        }
        let key = file_key(self.name);
        debug_assert!(self.ledger.balances());
        inputs.files.insert(key, self.ledger);
    }
}

/// The refusal of lines filed under labels neither arm reads, naming each label, its count
/// and first line, and the nearest label an arm reads.
fn unread(
    (name, noun, total): (&str, Noun, u64),
    unread: &LabelCounts,
    labels: &BTreeSet<String>,
    exp_path: &Path,
    exp: &Experiment,
) -> InputError {
    let n: u64 = unread.values().map(|c| c.lines).sum();
    let first = unread.values().map(|c| c.first).min().unwrap_or(0);
    let which: Vec<String> = unread
        .iter()
        .map(|(label, c)| {
            format!(
                "`{}` ({}, first on line {})",
                crate::text::terminal(label),
                crate::text::count(c.lines, "line", "lines"),
                c.first
            )
        })
        .collect();
    let sources: Vec<&str> = exp.arms().iter().map(|a| a.source.as_str()).collect();
    let near = unread
        .keys()
        .find_map(|label| {
            sources
                .iter()
                .find(|s| crate::text::near_miss(label, s))
                .map(|s| format!("; did you mean `{s}`?"))
        })
        .unwrap_or_default();
    let reads = format!(
        "arm `baseline` reads `{}` and arm `treatment` reads `{}`",
        exp.baseline.source, exp.treatment.source
    );
    let mut shown: Vec<&String> = unread.keys().collect();
    shown.truncate(3);
    let ignore = shown
        .iter()
        .map(|l| format!("\"{}\"", crate::text::terminal(l)))
        .collect::<Vec<_>>()
        .join(", ");
    InputError::new(
        name,
        format!(
            "{n} of {total} {} {} filed under a label neither arm reads, and would silently leave the run: {}{near}",
            if total == 1 { noun.one } else { noun.many },
            if n == 1 { "is" } else { "are" },
            which.join(", ")
        ),
    )
    .at_line(first)
    .field("field `arm`")
    .hint(format!(
        "the file's labels: {}; {reads}: correct the lines' `arm`, or an arm's `source` in {}; a corpus recorded with more arms than this experiment compares lists the others in ignore_labels = [{ignore}]",
        crate::corpus::label_list(labels.iter().map(String::as_str)),
        exp_path.display()
    ))
}

/// A caveat into the ledger, and the refusal `--strict` makes of it, at its file and line; a
/// caveat of a cause already recorded joins that one (`Inputs::caveat`).
pub(super) fn caveat(
    ledger: &mut Inputs,
    at: &mut Vec<InputError>,
    c: Caveat,
    file: &str,
    line: u64,
    field: &str,
) {
    let sentence = c.sentence();
    if !ledger.caveat(c) {
        return;
    }
    at.push(
        InputError::new(file, format!("{sentence} (--strict refuses every caveat)"))
            .at_line(line)
            .field(format!("field `{field}`"))
            .hint("correct the input, or run without --strict: the run then completes and says the caveat on every decision line"),
    );
}
