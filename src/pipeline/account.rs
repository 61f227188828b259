//! The input ledger of a loaded corpus (docs/reference.md, "The input ledger"): every line of
//! every file used or excluded for a named reason, every finding used or malformed, the units
//! one arm has and the other does not, and the caveats a decision carries. [`finish`] accounts
//! for every file the loader read, file by file as the corpus file table declares them, then for
//! the arms against each other (`units`); the refusals that keep a mistake from changing a
//! decision unseen are made beside the counts that find them.

use std::collections::{BTreeMap, BTreeSet};

use super::items::{self, Judged};
use super::loaded::Loaded;
use super::tally::{Reader, Tally};
use super::units;
use crate::corpus::files::{self, File};
use crate::corpus::ledger::{Inputs, Reason};
use crate::corpus::Corpus;
use crate::error::Problems;

/// Accounts for every file read into memory, file by file in the order of the corpus file
/// table, then checks the corpus across files: called once every file is read. `index`: the
/// records of `reviews.jsonl` as read, for `targets.jsonl` and judged items without an
/// experiment; `refused`: each file's record-level refusals, one per line it could not read.
pub fn finish(
    loaded: &mut Loaded,
    reader: Reader<'_>,
    index: &crate::corpus::reviews::Index,
    refused: &BTreeMap<File, Problems>,
) {
    let no_problems = Problems::default();
    let mut ledger = std::mem::take(&mut loaded.ledger);
    let mut refusals = Problems::default();
    let judged = Judged::of(loaded, reader, index, &ledger);
    let corpus = &loaded.corpus;
    for def in files::corpus() {
        let refused = refused.get(&def.file).unwrap_or(&no_problems);
        let out = (&mut ledger, &mut refusals);
        let file = def.file;
        match file {
            // Accounted for as it streamed, by label (`load`).
            File::Reviews | File::Judges => {}
            File::Verdicts => items::verdicts(corpus, reader, &judged, refused, out),
            File::Labels => items::labels(corpus, reader, &judged, refused, out),
            File::Queries => {
                if let Some((name, queries)) = &corpus.queries {
                    let lines = queries.iter().map(|q| (q.arm.as_str(), q.line, None));
                    by_label((name, file), reader, refused, out, lines);
                }
            }
            // A score that is `null` is missing, never a 0.
            File::Scores => {
                if let Some((name, scores)) = &corpus.scores {
                    let lines = scores.iter().map(|s| {
                        let why = s.score.is_none().then(|| {
                            let missing = s.missing.clone().unwrap_or_else(|| "null".into());
                            (Reason::MissingScore, missing)
                        });
                        (s.arm.0.as_str(), s.line, why)
                    });
                    by_label((name, file), reader, refused, out, lines);
                }
            }
            File::Validations => {
                if let Some((name, calls)) = &corpus.validations {
                    let lines = validations(calls, reader);
                    by_label((name, file), reader, refused, out, lines);
                }
            }
            File::Targets => {
                if let Some((name, all)) = &corpus.targets {
                    let lines = targets(all, corpus, reader, index);
                    by_label((name, file), Reader { exp: None }, refused, out, lines);
                }
            }
        }
    }
    let mut at = Vec::new();
    let mut cascaded = (Inputs::default(), Problems::default(), Vec::new());
    let (units_ledger, units_refusals, units_at) = if judged.cascade {
        (&mut cascaded.0, &mut cascaded.1, &mut cascaded.2)
    } else {
        (&mut ledger, &mut refusals, &mut at)
    };
    if let Some((_, exp)) = reader.exp {
        units::review_units(loaded, exp, units_ledger, units_refusals, units_at);
        units::query_units(loaded, exp, units_ledger, units_refusals, units_at);
        units::score_units(loaded, exp, units_ledger, units_refusals, units_at);
        units::harness_drift(loaded, exp, units_ledger, units_at);
        units::judge_model_drift(loaded, exp, units_ledger, units_at);
    }
    if let Some((exp_path, exp)) = reader.exp {
        super::calls::account(loaded, exp_path, exp, &mut ledger, &mut refusals, &mut at);
        super::collection::check_plan(loaded, exp, &mut ledger, &mut refusals, &mut at);
        super::collection::harness_changes(loaded, &mut ledger, &mut at);
    }
    ledger.provenance = loaded.provenance().is_some();
    if let (Some((_, exp)), Some((_, p))) = (reader.exp, loaded.provenance()) {
        for arm in exp.arms() {
            if let Some(record) = p.arms.get(&arm.source) {
                ledger.harness.insert(arm.name.clone(), record.clone());
            }
        }
    }
    // The findings each arm read stand whatever else is wrong.
    ledger.findings.append(&mut cascaded.0.findings);
    if let Some((exp_path, exp)) = reader.exp {
        units::panels(loaded, exp, exp_path, &mut refusals);
        // Lines of other recorded arms are counted above, and read no further.
        if !exp.ignore_labels.is_empty() {
            if let Some((_, items)) = &mut loaded.corpus.verdicts {
                items.retain(|i| !exp.ignores(&i.arm));
            }
            if let Some((_, labels)) = &mut loaded.corpus.labels {
                labels.retain(|l| !exp.ignores(&l.arm));
            }
        }
    }
    loaded.refusals.append(refusals);
    loaded.ledger = ledger;
    loaded.caveats_at = at;
}

/// A file's lines into the ledger, each by the label it is filed under (with its line, and the
/// reason it is not used when an arm reads it); `reader` says what becomes of each label.
fn by_label<'a>(
    (name, file): (&str, File),
    reader: Reader<'_>,
    refused: &Problems,
    (ledger, refusals): (&mut Inputs, &mut Problems),
    lines: impl Iterator<Item = (&'a str, u64, Option<(Reason, String)>)>,
) {
    let mut tally = Tally::new(name, file.def().noun, reader, refused);
    for (label, line, why) in lines {
        tally.line(label, line, false, || why);
    }
    tally.close(ledger, refusals);
}

/// The validator calls' lines: a call of an arm label whose arms do not run the validation pass
/// is not used.
fn validations<'a>(
    calls: &'a [crate::corpus::validations::Validation],
    reader: Reader<'a>,
) -> impl Iterator<Item = (&'a str, u64, Option<(Reason, String)>)> {
    let validating = move |label: &str| match reader.exp {
        None => true,
        Some((_, exp)) => exp
            .arms()
            .iter()
            .filter(|a| a.source == label)
            .any(|a| a.controls.validates(a.review.review_mode())),
    };
    calls.iter().map(move |c| {
        let off = (!validating(&c.arm)).then(|| (Reason::ValidationOff, c.arm.clone()));
        (c.arm.as_str(), c.line, off)
    })
}

/// The target metadata's lines, under no label: metadata of a target no return is on is not
/// used.
fn targets<'a>(
    targets: &'a [crate::corpus::targets::Target],
    corpus: &'a Corpus,
    reader: Reader<'a>,
    index: &'a crate::corpus::reviews::Index,
) -> impl Iterator<Item = (&'a str, u64, Option<(Reason, String)>)> {
    let reviewed: BTreeSet<&str> = match (reader.exp, &corpus.reviews) {
        (Some(_), Some((_, selections))) => selections
            .iter()
            .flat_map(|s| s.returns.iter().map(|r| &*r.target))
            .collect(),
        _ => index.targets.iter().map(String::as_str).collect(),
    };
    targets.iter().map(move |t| {
        let unreviewed = !reviewed.contains(t.target.as_str());
        (
            "",
            t.line,
            unreviewed.then(|| (Reason::NoReturn, t.target.clone())),
        )
    })
}
