//! Which files make a corpus and how each is read (docs/reference.md): the one loader that `run`,
//! `gate` and `validate` use, so that `validate` reports exactly what `run` refuses.
//!
//! [`load`] reads every file of a corpus folder and returns the parsed corpus with every
//! problem found: record-level refusals (a line that is not an object, a repeated return, a
//! judge listed twice…), the cross-checks between experiment and corpus (an arm whose `source`
//! matches no line, a missing `mode`, verdicts under neither arm, nothing to trust, no file at
//! all), and the malformed findings a run drops and counts. `run` refuses on any refusal;
//! `validate` prints them all.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::account;
use crate::config::{self, Experiment};
use crate::corpus::sources::{self, Sources};
use crate::corpus::{
    label_list, labels, queries, reviews, targets, validations, verdicts, Corpus, MalformedShare,
};
use crate::error::{Error, InputError, Problems};

/// An input file that was read, for the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct InputFile {
    pub path: String,
    pub sha256: String,
    pub bytes: usize,
}

/// Reads a whole file, recording it for the manifest.
fn read(path: &Path, inputs: &mut Vec<InputFile>) -> Result<Vec<u8>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    inputs.push(InputFile {
        path: path.display().to_string(),
        sha256: format!("{:x}", Sha256::digest(&bytes)),
        bytes: bytes.len(),
    });
    Ok(bytes)
}

impl Loaded {
    /// Reads the corpus file `dir/file` when there is one, recording it among the inputs: its
    /// name as messages give it, and its bytes.
    fn read_file(&mut self, dir: &Path, file: &str) -> Result<Option<(String, Vec<u8>)>, Error> {
        let path = dir.join(file);
        if !path.is_file() {
            return Ok(None);
        }
        let bytes = read(&path, &mut self.inputs)?;
        Ok(Some((path.display().to_string(), bytes)))
    }
}

/// Reads `path` a block of whole lines at a time on a thread of its own, hashing it for the
/// manifest as it goes, and turns each block into a `T` by `per_block(first_line, block)` on
/// worker threads, one per core (a UTF-8 byte-order mark before the first line is skipped, as
/// [`crate::corpus::nonblank_lines`] skips it). `consume` takes the blocks' results here, in file
/// order, while the next blocks are read and parsed: a large file is never held whole, and
/// reading overlaps checking.
fn stream<T: Send, R>(
    path: &Path,
    inputs: &mut Vec<InputFile>,
    per_block: impl Fn(u64, &[u8]) -> T + Sync,
    consume: impl FnOnce(&mut dyn Iterator<Item = T>) -> R,
) -> Result<R, Error> {
    // A quarter of a megabyte: a few hundred returns, small next to the file and large next to
    // a line. Each worker holds a block waiting, one being parsed and one parsed. What a block
    // becomes follows the findings it holds, not its bytes: a finding written `{}` is three
    // bytes and a checked record of about two hundred, so on such input the block size is what
    // bounds memory (a thousand returns of 10,000 `{}` findings peaked at 445 MB with 1 MB
    // blocks, 170 MB with these; docs/benchmarks.md). The million-finding run is as fast.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    stream_by(1 << 18, workers, path, inputs, per_block, consume)
}

/// The most lines a block holds. A block's result holds something per line (an error, for a
/// line that is not a return), so a block of four megabytes of two-byte lines would hold two
/// million of them; real returns are far longer than 256 bytes, so the byte size binds first.
const BLOCK_LINES: usize = 16_384;

/// [`stream`], reading `block_size` bytes at a time and parsing on `workers` threads. Block `i`
/// goes to worker `i % workers` and its result is taken from that worker's channel in turn, so
/// the results arrive in file order without any reordering.
fn stream_by<T: Send, R>(
    block_size: usize,
    workers: usize,
    path: &Path,
    inputs: &mut Vec<InputFile>,
    per_block: impl Fn(u64, &[u8]) -> T + Sync,
    consume: impl FnOnce(&mut dyn Iterator<Item = T>) -> R,
) -> Result<R, Error> {
    use std::io::Read;
    use std::sync::mpsc::{channel, sync_channel};
    let workers = workers.max(1);
    let per_block = &per_block;
    let (result, read) = std::thread::scope(|scope| {
        // Read buffers go back to the reader once parsed, so that the same few are reused.
        let (free_tx, free_rx) = channel::<Vec<u8>>();
        let (mut to_workers, mut results) = (Vec::new(), Vec::new());
        for _ in 0..workers {
            let (blocks_tx, blocks) = sync_channel::<(u64, Vec<u8>, usize)>(1);
            let (done_tx, done) = sync_channel::<T>(1);
            let free = free_tx.clone();
            scope.spawn(move || {
                for (first, block, from) in blocks {
                    let parsed = per_block(first, &block[from..]);
                    let _ = free.send(block);
                    if done_tx.send(parsed).is_err() {
                        break;
                    }
                }
            });
            to_workers.push(blocks_tx);
            results.push(done);
        }
        drop(free_tx);
        let reader = scope.spawn(move || -> std::io::Result<(String, usize)> {
            let mut file = std::fs::File::open(path)?;
            let mut hasher = Sha256::new();
            let (mut total, mut next_line, mut first, mut end_of_file) = (0, 1, true, false);
            let mut buf: Vec<u8> = Vec::new();
            let mut sent = 0usize;
            // How full the buffer is read before a block is cut: more than a block when one
            // line is longer than a block.
            let mut want = block_size;
            loop {
                let start = buf.len();
                if start < want && !end_of_file {
                    // Read into the buffer's spare room (not zeroed first, as a resize would
                    // zero every byte of the file once more), up to `want` or the end.
                    buf.reserve_exact(want - start);
                    let n = (&mut file)
                        .take((want - start) as u64)
                        .read_to_end(&mut buf)?;
                    hasher.update(&buf[start..]);
                    total += n;
                    end_of_file = start + n < want;
                }
                // The block ends after its last newline, or its BLOCK_LINES-th; the rest waits
                // for the next block.
                let end = match nth_newline(&buf, BLOCK_LINES) {
                    Some(i) => i + 1,
                    None if end_of_file => buf.len(),
                    None => match memchr::memrchr(b'\n', &buf) {
                        Some(i) => i + 1,
                        None => {
                            want = buf.len() + block_size;
                            continue;
                        }
                    },
                };
                want = block_size;
                let mut from = 0;
                if first {
                    if buf.starts_with(crate::corpus::BOM) {
                        from = crate::corpus::BOM.len().min(end);
                    }
                    first = false;
                }
                let last = end_of_file && end == buf.len();
                // The block leaves in this buffer; the rest of the last line starts the next.
                let mut next = free_rx.try_recv().unwrap_or_default();
                next.clear();
                next.extend_from_slice(&buf[end..]);
                buf.truncate(end);
                let block = std::mem::replace(&mut buf, next);
                let lines = memchr::memchr_iter(b'\n', &block[from..]).count() as u64;
                if to_workers[sent % workers]
                    .send((next_line, block, from))
                    .is_err()
                    || last
                {
                    break;
                }
                sent += 1;
                next_line += lines;
            }
            Ok((format!("{:x}", hasher.finalize()), total))
        });
        let result = {
            let mut turn = 0usize;
            let results = &results;
            let mut in_order = std::iter::from_fn(|| {
                let next = results[turn % workers].recv().ok();
                turn += 1;
                next
            });
            consume(&mut in_order)
        };
        // Whatever is still in flight is let go: the workers and the reader stop at their next
        // hand-over.
        drop(results);
        let read = reader
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (result, read)
    });
    // A read that failed part way ended the blocks early: what `consume` made of them is
    // dropped with the error.
    let (sha256, bytes) = read.map_err(|e| Error::read(path, e))?;
    inputs.push(InputFile {
        path: path.display().to_string(),
        sha256,
        bytes,
    });
    Ok(result)
}

/// The position of the `n`-th newline of `bytes` (`n` ≥ 1), if it has that many.
fn nth_newline(bytes: &[u8], n: usize) -> Option<usize> {
    memchr::memchr_iter(b'\n', bytes).nth(n - 1)
}

/// Reads and checks an experiment file, with `overrides` (`--set`) applied: UTF-8, then every
/// rule of docs/reference.md that the file alone decides. An unreadable file is
/// `Err(Error::Read)`; a bad one, `Err(Error::Input)`.
pub fn experiment(
    path: &Path,
    overrides: &[config::Override],
) -> Result<(Experiment, InputFile), Error> {
    let mut inputs = Vec::with_capacity(1);
    let bytes = read(path, &mut inputs)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        InputError::new(path.display().to_string(), "is not valid UTF-8")
            .at_line(line)
            .hint("save the experiment file as UTF-8")
    })?;
    let exp = config::parse_with(path, &text, overrides)?;
    Ok((exp, inputs.remove(0)))
}

/// A corpus as read, with everything wrong with it.
#[derive(Debug, Default)]
pub struct Loaded {
    pub corpus: Corpus,
    /// Every file read, in order, for the manifest.
    pub inputs: Vec<InputFile>,
    /// Problems that refuse a run.
    pub refusals: Problems,
    /// Set when the folder is a collection that did not finish and `allow_incomplete` let it
    /// through: what the report must say.
    pub incomplete: Option<String>,
    /// The arm labels such a collection collects (its `collect.json` `arms`): an arm it has not
    /// reached yet is not a typo.
    pub collecting: Vec<String>,
    /// Findings a run drops and counts (and `--strict` refuses), each with the arms that read
    /// it (``arm `baseline` ``, ``arms `baseline` and `treatment` ``): `validate` lists them.
    /// The first [`Problems::KEPT`] are kept; `malformed_more` counts the rest.
    pub malformed: Vec<(String, InputError)>,
    pub malformed_more: u64,
    /// Validator outputs that were not a verdict: a run counts each as a failed call
    ///; `validate` lists them.
    pub failed_validations: Problems,
    /// The arms more than half of whose findings are malformed (but not all: that is refused):
    /// the run completes, warns, and its report says its inputs are suspect.
    pub suspect: Vec<MalformedShare>,
    /// What became of every line and finding, and the caveats a decision carries
    /// (docs/reference.md, "The input ledger").
    pub ledger: crate::corpus::ledger::Inputs,
    /// Each caveat as the refusal `--strict` makes of it, at its file and line.
    pub caveats_at: Vec<InputError>,
    /// The harness record of a collection (collect.json `provenance`), with the file's name.
    pub provenance: Option<(String, crate::collect::provenance::Provenance)>,
}

/// Reads the corpus folder `dir`. With an experiment (its file's path, for messages), findings
/// are validated on each arm's scale and the corpus is checked against the experiment; without
/// one, only the records are. A folder that is a collection that did not finish (docs/guides/live-collection.md) is
/// refused unless `allow_incomplete`. `Err` only when a file that exists cannot be read.
pub fn load(
    dir: &Path,
    experiment: Option<(&Path, &Experiment)>,
    allow_incomplete: bool,
) -> Result<Loaded, Error> {
    let mut loaded = Loaded::default();
    let shown = dir.display().to_string();
    if dir.is_file() {
        loaded.refusals.push(
            InputError::new(&shown, "names a file, but a corpus is a folder")
                .field("`corpus`")
                .hint("name the folder that holds reviews.jsonl, queries.jsonl or verdicts.jsonl, relative to the experiment file"),
        );
        return Ok(loaded);
    }
    if !dir.is_dir() {
        loaded.refusals.push(
            InputError::new(&shown, "does not exist")
                .field("`corpus`")
                .hint(
                    "`corpus` in the experiment names the folder, relative to the experiment file",
                ),
        );
        return Ok(loaded);
    }

    let reader = account::Reader { exp: experiment };
    // Each file's record-level refusals, one per line it could not read, for the ledger.
    let mut parse_problems: BTreeMap<&'static str, Problems> = BTreeMap::new();
    let collection = dir.join("collect.json");
    refuse_stray_files(&mut loaded, dir, collection.is_file())?;
    if collection.is_file() {
        check_collection(&mut loaded, &collection, allow_incomplete)?;
    }
    let reviews_path = dir.join("reviews.jsonl");
    let mut index = reviews::Index::default();
    if reviews_path.is_file() {
        // Finding ids are kept only for validator calls to be checked against.
        let ids = dir.join("validations.jsonl").is_file();
        index = load_reviews(&mut loaded, &reviews_path, experiment, ids)?;
    }
    let returns = Returns {
        path: &reviews_path,
        index: &index,
    };
    load_controls(&mut loaded, dir, returns, &mut parse_problems)?;
    if let Some((exp_path, exp)) = experiment {
        refuse_controls_in_doc_mode(&mut loaded, exp_path, exp);
        malformed_shares(&mut loaded, exp_path, exp);
    }
    if let Some((name, bytes)) = loaded.read_file(dir, "verdicts.jsonl")? {
        let (items, problems) = verdicts::parse(&name, &bytes);
        // What the trust verdict would refuse: no verdict an arm reads (those under a label
        // no arm reads are refused with the ledger).
        let read = |label: &str| experiment.is_none_or(|(_, exp)| exp.reads(label, true));
        if problems.is_empty() && !items.iter().any(|i| read(&i.arm)) {
            let all_unread = !items.is_empty()
                && experiment.is_some_and(|(_, e)| items.iter().all(|i| !e.ignores(&i.arm)));
            if !all_unread {
                loaded
                    .refusals
                    .push(InputError::new(&name, crate::trust::NO_EVIDENCE));
            }
        }
        parse_problems.insert("verdicts.jsonl", problems.clone());
        loaded.refusals.append(problems);
        loaded.corpus.verdicts = Some((name, items));
    }
    load_labels(&mut loaded, dir, experiment, &mut parse_problems)?;
    if let Some((name, bytes)) = loaded.read_file(dir, "queries.jsonl")? {
        let (all, problems) = queries::parse(&name, &bytes);
        parse_problems.insert("queries.jsonl", problems.clone());
        loaded.refusals.append(problems);
        if let Some((_, exp)) = experiment {
            for arm in exp.arms() {
                if let Err(e) = queries::select(&name, &all, &arm.name, &arm.source) {
                    loaded.refusals.push(e);
                }
            }
        }
        loaded.corpus.queries = Some((name, all));
    }
    if let Some((name, bytes)) = loaded.read_file(dir, "scores.jsonl")? {
        let (lines, problems) = crate::corpus::scores::parse(&name, &bytes);
        // The checks across lines read whole files: with lines refused, they would report what
        // the refused lines would have held (an arm "with no line") rather than the file.
        let whole = problems.is_empty();
        parse_problems.insert("scores.jsonl", problems.clone());
        loaded.refusals.append(problems);
        if let (Some((exp_path, exp)), true) = (experiment, whole) {
            let arms = exp.arms().map(|a| (a.name.as_str(), a.source.as_str()));
            loaded
                .refusals
                .append(crate::corpus::scores::check_experiment(
                    &name,
                    &lines,
                    arms,
                    &exp.scores.judges,
                ));
            if !exp.scores.judges.is_empty() && loaded.corpus.verdicts.is_some() {
                loaded.refusals.push(judges_error(
                    exp_path,
                    exp,
                    "`[scores] judges` names a judge panel, but the corpus also has verdicts.jsonl: one trust verdict cannot weigh two panels",
                    "keep the scorers' panel (drop verdicts.jsonl) or the verdicts' (drop `judges`)",
                ));
            }
        }
        loaded.corpus.scores = Some((name, lines));
    } else if let Some((exp_path, exp)) = experiment {
        if !exp.scores.judges.is_empty() {
            loaded.refusals.push(judges_error(
                exp_path,
                exp,
                "`[scores] judges` names scorers, but the corpus has no scores.jsonl",
                "`calibench import` writes scores.jsonl into the corpus folder",
            ));
        }
    }
    account::finish(&mut loaded, reader, &index, &parse_problems);
    if let Some((exp_path, exp)) = experiment {
        refuse_unmeasured_primary(&mut loaded, exp_path, exp);
        refuse_undecidable(&mut loaded, exp_path, exp);
    }
    let corpus = &loaded.corpus;
    if corpus.reviews.is_none() && corpus.queries.is_none() && corpus.scores.is_none() {
        // Verdicts alone replay nothing, yet would still print a trust verdict and a lift.
        let hint = if corpus.verdicts.is_some() {
            "a corpus replays reviews.jsonl, queries.jsonl or scores.jsonl; to check a judge panel alone, run `calibench trust verdicts.jsonl`"
        } else {
            "`corpus` in the experiment names the folder, relative to the experiment file; `calibench import` writes scores.jsonl, `calibench collect` writes reviews.jsonl"
        };
        loaded.refusals.push(
            InputError::new(
                &shown,
                "holds none of reviews.jsonl, queries.jsonl or scores.jsonl: nothing would be replayed",
            )
            .hint(hint),
        );
    }
    Ok(loaded)
}

/// Human labels: read beside the verdicts they are compared with, each line checked against
/// them (an annotator never a judge, the judges' dimensions, an arm the experiment reads).
fn load_labels(
    loaded: &mut Loaded,
    dir: &Path,
    experiment: Option<(&Path, &Experiment)>,
    parse_problems: &mut BTreeMap<&'static str, Problems>,
) -> Result<(), Error> {
    let path = dir.join("labels.jsonl");
    if !path.is_file() {
        if let Some((exp_path, exp)) = experiment {
            if exp.trust.alt_test == crate::policy::AltTestUse::Require {
                loaded.refusals.push(
                    InputError::new(exp_path.display().to_string(), format!("`alt_test = \"require\"` makes the panel's alt-test a trust check, but {} has no labels.jsonl", dir.display()))
                        .field("`trust.alt_test`")
                        .hint("add the annotators' labels.jsonl to the corpus (docs/guides/judges-and-humans.md), or set alt_test = \"report\""),
                );
            }
        }
        return Ok(());
    }
    let name = path.display().to_string();
    let (labels, problems) = labels::parse(&name, &read(&path, &mut loaded.inputs)?);
    let whole = problems.is_empty();
    parse_problems.insert("labels.jsonl", problems.clone());
    loaded.refusals.append(problems);
    match &loaded.corpus.verdicts {
        None => loaded.refusals.push(
            InputError::new(&name, "human labels, but no verdicts.jsonl to compare them with")
                .hint("labels test whether the judges can stand in for people: add the judges' verdicts.jsonl, or move labels.jsonl out"),
        ),
        Some((_, items)) if whole => {
            loaded
                .refusals
                .append(labels::check_against(&name, &labels, items));
        }
        Some(_) => {}
    }
    loaded.corpus.labels = Some((name, labels));
    Ok(())
}

/// The JSON Lines files a corpus folder may hold, each with what it is: the files calibench
/// reads ([`crate::corpus::schema::FILES`]).
pub fn corpus_files() -> Vec<(String, &'static str)> {
    crate::corpus::schema::FILES
        .iter()
        .map(|f| (format!("{}.jsonl", f.stem), f.holds))
        .collect()
}

/// What `collect` keeps beside the corpus files of a run directory: each judge call as it
/// returns, gathered into verdicts.jsonl when the stage finishes.
const COLLECTION_FILES: [&str; 1] = ["judges.jsonl"];

/// A top-level `*.jsonl` whose name calibench does not read would be ignored without a word
/// (`review.jsonl`, `Reviews.jsonl`): refused with the nearest name it reads. So is a
/// `reviews.json` (the stem of a corpus file with another extension).
fn refuse_stray_files(loaded: &mut Loaded, dir: &Path, collection: bool) -> Result<(), Error> {
    let files = corpus_files();
    let known: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
    let entries = std::fs::read_dir(dir).map_err(|e| Error::read(dir, e))?;
    let mut stray: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            let lower = name.to_lowercase();
            let stem_known = known.iter().any(|k| {
                lower
                    .strip_suffix(".json")
                    .is_some_and(|stem| k.strip_suffix(".jsonl") == Some(stem))
            });
            let jsonl = lower.ends_with(".jsonl");
            let ours = known.contains(&name.as_str())
                || (collection && COLLECTION_FILES.contains(&name.as_str()));
            (jsonl && !ours) || stem_known
        })
        .collect();
    stray.sort();
    for name in stray {
        let shown = dir.join(&name).display().to_string();
        let near = nearest_corpus_file(&name);
        let listed = files
            .iter()
            .map(|(n, what)| format!("{n} ({what})"))
            .collect::<Vec<_>>()
            .join(", ");
        let problem = match near {
            Some(n) => format!(
                "is not a corpus file calibench reads, so it would be ignored: did you mean `{n}`?"
            ),
            None => "is not a corpus file calibench reads, so it would be ignored".to_string(),
        };
        loaded
            .refusals
            .push(InputError::new(shown, problem).hint(format!(
                "a corpus folder holds {listed}; rename the file, or move it out of the folder"
            )));
    }
    Ok(())
}

/// The corpus file `name` most likely meant: the same stem but for case, one edit, or the
/// singular (`review.jsonl`, `Verdicts.jsonl`, `query.jsonl`, `reveiws.jsonl`).
fn nearest_corpus_file(name: &str) -> Option<String> {
    let lower = name.to_lowercase();
    let stem = lower.split('.').next().unwrap_or(&lower);
    corpus_files()
        .into_iter()
        .map(|(file, _)| file)
        .find(|file| {
            let known = &file[..file.len() - ".jsonl".len()];
            let plural = match stem.strip_suffix('y') {
                Some(s) => format!("{s}ies"),
                None => format!("{stem}s"),
            };
            known == stem || known == plural || strsim::osa_distance(known, stem) <= 1
        })
}

/// Arms whose findings are all malformed are refused, and arms more than half of whose findings
/// are are recorded as suspect: either is what a corpus read on the wrong scale or in
/// the wrong mode looks like, and its figures would otherwise read like a result.
fn malformed_shares(loaded: &mut Loaded, exp_path: &Path, exp: &Experiment) {
    let Some((name, selections)) = &loaded.corpus.reviews else {
        return;
    };
    for arm in exp.arms() {
        let scale = arm.review.scale();
        let Some(sel) = selections
            .iter()
            .find(|s| s.source == arm.source && s.scale == scale)
        else {
            continue;
        };
        let valid: usize = sel.returns.iter().map(|r| r.findings.len()).sum();
        // Each reason's count and its first finding.
        let mut kinds: std::collections::BTreeMap<String, (usize, &reviews::Malformed)> =
            std::collections::BTreeMap::new();
        let mut malformed = 0;
        for (kind, n, m) in sel.returns.iter().flat_map(|r| r.malformed.kinds()) {
            malformed += n;
            let entry = kinds.entry(kind.to_string()).or_insert((0, m));
            entry.0 += n;
            if m.line < entry.1.line {
                entry.1 = m;
            }
        }
        if malformed == 0 || malformed * 2 <= valid + malformed {
            continue;
        }
        // The commonest reason; ties go to the reason seen first in the file.
        let Some((reason, (count, first))) = kinds
            .into_iter()
            .max_by(|a, b| a.1 .0.cmp(&b.1 .0).then(b.1 .1.line.cmp(&a.1 .1.line)))
        else {
            continue;
        };
        let share = MalformedShare {
            arm: arm.name.clone(),
            malformed,
            findings: valid + malformed,
            reason_count: count,
            fix: likely_fix(&reason, &first.reason, &arm.name, exp, exp_path),
            reason,
        };
        if valid > 0 {
            loaded.suspect.push(share);
            continue;
        }
        loaded.refusals.push(
            InputError::new(
                name,
                format!(
                    "arm `{}` has no valid finding: all {} of the findings it reads are malformed, {} of them for {}",
                    arm.name, share.findings, share.reason_count, share.reason
                ),
            )
            .at_line(first.line)
            .field(format!("field `findings[{}].{}`", first.index, first.field))
            .hint(share.fix),
        );
    }
}

/// What to change when most of an arm's findings are malformed for `reason` (`example`: the
/// first one's own words, with its value): the arm's `scale` when confidences are off it, a
/// division by 100 when they read as percentages, the experiment's `mode` when findings lack
/// the fields of its mode, and otherwise the findings themselves.
fn likely_fix(reason: &str, example: &str, arm: &str, exp: &Experiment, exp_path: &Path) -> String {
    let file = exp_path.display();
    let missing = |fields: &[&str]| fields.iter().any(|f| reason == format!("{f}: is missing"));
    let (doc_only, code_only) = (
        ["section", "finding_type"],
        [
            "file",
            "line",
            "owner",
            "requires_verification",
            "pre_existing",
        ],
    );
    if reason.ends_with("off the anchor scale") {
        format!("confidences in [0, 1] are on the float scale: set scale = \"float\" in [arms.{arm}.review] of {file}, or record them as 0, 25, 50, 75 or 100")
    } else if reason.ends_with("off the float scale") {
        // The value the first one carries: an anchor, or a percentage such as 62.
        let value = example
            .split_whitespace()
            .find_map(|w| w.parse::<f64>().ok());
        match value {
            Some(x) if x > 1.0 && x <= 100.0 && ![0.0, 25.0, 50.0, 75.0, 100.0].contains(&x) => format!(
                "confidences such as {} look like percentages: divide them by 100 to record them in [0, 1] (the anchor scale takes only 0, 25, 50, 75 and 100)",
                crate::text::fmt_num(x)
            ),
            _ => format!("confidences of 0, 25, 50, 75 or 100 are on the anchor scale: set scale = \"anchor\" in [arms.{arm}.review] of {file}, or record them in [0, 1]"),
        }
    } else if exp.mode == crate::policy::Mode::Doc
        && (missing(&doc_only) || reason.starts_with("autofix_class: `advisory`"))
    {
        format!("these look like code findings (file, line, owner): set mode = \"code\" in {file}")
    } else if exp.mode == crate::policy::Mode::Code && missing(&code_only) {
        format!("these look like document findings (section, finding_type): set mode = \"doc\" in {file}")
    } else {
        format!("correct the findings: `calibench validate {file}` lists each one with its line")
    }
}

/// A refusal of the experiment's `[scores] judges`, at its line.
fn judges_error(exp_path: &Path, exp: &Experiment, problem: &str, hint: &str) -> InputError {
    let e = InputError::new(exp_path.display().to_string(), problem).field("`scores.judges`");
    match exp.judges_line {
        Some(line) => e.at_line(line),
        None => e,
    }
    .hint(hint)
}

/// Why the corpus (and the experiment's mode) cannot measure the compared metric `c`: the
/// file it needs, or code review's precision controls in doc mode. `None` when it can.
fn unmeasurable(c: &crate::replay::Compared, corpus: &Corpus, exp: &Experiment) -> Option<String> {
    use crate::replay::DeltaTable;
    let needs = |file: &str| Some(format!("needs {file}, which the corpus does not have"));
    match c.table {
        DeltaTable::Review if corpus.reviews.is_none() => needs("reviews.jsonl"),
        DeltaTable::Queries if corpus.queries.is_none() => needs("queries.jsonl"),
        DeltaTable::Review if c.judged && corpus.verdicts.is_none() => needs("verdicts.jsonl"),
        DeltaTable::Review if c.controls && exp.mode != crate::policy::Mode::Code => Some(
            "is measured by code review's precision controls (the validation pass, skip rules, lint-ignore), but mode is doc".to_string(),
        ),
        DeltaTable::Review
            if c.controls
                && exp.arms().iter().all(|a| a.controls.is_off())
                && corpus.validations.is_none()
                && corpus.targets.is_none()
                && corpus.sources.is_none() =>
        {
            Some("is measured by code review's precision controls, which neither arm turns on and the corpus does not record (validations.jsonl, targets.jsonl, sources/)".to_string())
        }
        _ => None,
    }
}

/// A primary metric the corpus cannot measure would leave the headline and its Holm family
/// without it: refused, naming the file it needs.
fn refuse_unmeasured_primary(loaded: &mut Loaded, exp_path: &Path, exp: &Experiment) {
    use crate::replay::compared_named;
    let corpus = &loaded.corpus;
    for name in &exp.primary {
        let Some(c) = compared_named(name) else {
            continue; // refused as the experiment was read
        };
        if let Some(why) = unmeasurable(&c, corpus, exp) {
            let mut e = InputError::new(
                exp_path.display().to_string(),
                format!("primary metric `{name}` {why}"),
            )
            .field("`primary`");
            if let Some(line) = exp.primary_line {
                e = e.at_line(line);
            }
            loaded.refusals.push(e.hint(format!(
                "name metrics this corpus measures in {}",
                exp.corpus.display()
            )));
        }
    }
}

/// A `[decision]` metric the corpus cannot measure would leave the decision without it: a
/// catalogue metric whose file is missing, `lift` without judges, or a name that is neither a
/// compared metric, `lift`, nor a scorer of `scores.jsonl` (with the nearest name).
fn refuse_undecidable(loaded: &mut Loaded, exp_path: &Path, exp: &Experiment) {
    use crate::replay::{compared, compared_named};
    let corpus = &loaded.corpus;
    let scorers: std::collections::BTreeSet<&str> = corpus
        .scores
        .iter()
        .flat_map(|(_, lines)| lines.iter().map(|l| l.scorer.0.as_str()))
        .collect();
    let judges = corpus.verdicts.is_some() || !exp.scores.judges.is_empty();
    let error = |problem: String, hint: String| {
        let e = InputError::new(exp_path.display().to_string(), problem).hint(hint);
        let e = e.field("`decision`");
        match exp.decision_line {
            Some(l) => e.at_line(l),
            None => e,
        }
    };
    for w in &exp.decision {
        let name = w.metric.as_str();
        let needs = |file: &str| Some(format!("needs {file}, which the corpus does not have"));
        let missing = match compared_named(name) {
            // A scorer named like a catalogue metric the corpus cannot measure: the catalogue's
            // name wins, so the scorer could never be decided on.
            Some(c) if scorers.contains(name) && unmeasurable(&c, corpus, exp).is_some() => {
                loaded.refusals.push(error(
                    format!("`{name}` is both a metric of the catalogue (which this corpus cannot measure) and a scorer of scores.jsonl: the catalogue's name wins, so the scorer would never be decided on"),
                    "import the scorer under another name (its log's scorer name, renamed before `calibench import`), then decide on that name".to_string(),
                ));
                continue;
            }
            Some(c) => unmeasurable(&c, corpus, exp),
            None if name == "lift" => {
                (!judges).then(|| needs("verdicts.jsonl (or [scores] judges)").unwrap_or_default())
            }
            None if name == "lift_human" => match (&corpus.verdicts, &corpus.labels) {
                (None, _) => needs("verdicts.jsonl"),
                (_, None) => needs("labels.jsonl"),
                _ => None,
            },
            None if scorers.contains(name) => None,
            None => {
                let mut names: Vec<&str> = compared().iter().map(|c| c.name).collect();
                names.extend(["lift", "lift_human"]);
                names.extend(scorers.iter().copied());
                let near = crate::text::nearest(name, &names)
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                loaded.refusals.push(error(
                    format!("`{name}` is not a compared metric, `lift`, `lift_human`, or a scorer of the corpus{near}"),
                    format!("a decision metric is a key of review.delta or queries.delta, `lift`, `lift_human`, or an imported scorer: {}", names.join(", ")),
                ));
                continue;
            }
        };
        if let Some(why) = missing {
            loaded.refusals.push(error(
                format!("decision metric `{name}` {why}"),
                format!(
                    "decide on metrics this corpus measures in {}",
                    exp.corpus.display()
                ),
            ));
        }
    }
}

/// A collect run directory replays only once every call is recorded: an interrupted one holds
/// partial arms, which would replay as if they were whole.
fn check_collection(loaded: &mut Loaded, path: &Path, allow: bool) -> Result<(), Error> {
    let name = path.display().to_string();
    let bytes = read(path, &mut loaded.inputs)?;
    let manifest = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|t| crate::corpus::strict_json(t).ok());
    let field = |key: &str| {
        manifest
            .as_ref()
            .and_then(|m| m.get(key))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    loaded.provenance = manifest
        .as_ref()
        .and_then(|m| m.get("provenance"))
        .and_then(|p| serde_json::from_value(p.clone()).ok())
        .map(|p| (name.clone(), p));
    let Some(status) = field("status") else {
        loaded.refusals.push(
            InputError::new(&name, "is not a collect.json calibench can read (no `status`)")
                .field("`status`")
                .hint("a folder that holds collect.json is a collection: let `calibench collect --resume` finish it"),
        );
        return Ok(());
    };
    if status == "complete" {
        return Ok(());
    }
    let note = format!(
        "{name} says the collection did not finish (status `{status}`): some calls are not recorded, so arms may be partial"
    );
    if allow {
        loaded.incomplete = Some(note);
        loaded.collecting = manifest
            .as_ref()
            .and_then(|m| m.get("arms"))
            .and_then(|a| a.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let resume = format!(
        "calibench collect {} --resume {} --runs-dir {}",
        field("experiment_file").unwrap_or_else(|| "EXPERIMENT".into()),
        field("run_id").unwrap_or_else(|| "RUN_ID".into()),
        dir.parent().unwrap_or(Path::new(".")).display()
    );
    loaded.refusals.push(
        InputError::new(
            &name,
            format!("is an unfinished collection (status `{status}`): replaying it would replay partial arms as if they were whole"),
        )
        .field("`status`")
        .hint(format!(
            "finish it first: {resume}; or replay it as it is with --allow-incomplete, and the report says it is incomplete"
        )),
    );
    Ok(())
}

/// `reviews.jsonl`: records, the arms' selections with their malformed findings, and the
/// checks against the experiment. The index holds finding ids when `ids`.
fn load_reviews(
    loaded: &mut Loaded,
    path: &Path,
    experiment: Option<(&Path, &Experiment)>,
    ids: bool,
) -> Result<reviews::Index, Error> {
    let name = path.display().to_string();
    let Some((exp_path, exp)) = experiment else {
        // Without an experiment no arm is read: the records are checked and indexed, streamed
        // as a run streams them.
        let reading = reviews::Reading::new(crate::policy::Mode::Doc, &[]);
        let parsed = stream(
            path,
            &mut loaded.inputs,
            |first, block| reviews::read_block(&name, first, block),
            |blocks| {
                let index = reviews::Index::default();
                reviews::check_for(&name, blocks.flatten(), &reading, index)
            },
        )?;
        account(loaded, &name, account::Reader { exp: None }, &parsed);
        loaded.refusals.append(parsed.problems);
        loaded.corpus.reviews = Some((name, Vec::new()));
        return Ok(parsed.index);
    };
    if !exp.mode_declared {
        // A code corpus read as doc would drop every finding as malformed (docs/reference.md).
        loaded.refusals.push(
            InputError::new(exp_path.display().to_string(), "is missing")
                .field("field `mode`")
                .hint("the corpus has reviews.jsonl: say how to read it, mode = \"doc\" or mode = \"code\""),
        );
    }
    let wants: Vec<_> = exp
        .arms()
        .iter()
        .map(|a| (a.source.clone(), a.review.scale()))
        .collect();
    let index = if ids {
        reviews::Index::default()
    } else {
        reviews::Index::without_ids()
    };
    // The blocks' findings are checked where they are read, as the checking thread reads them.
    // Its size is a guess's scale: a file that cannot be asked is read without one.
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let reading = reviews::Reading::new(exp.mode, &wants).of_file(size);
    let parsed = stream(
        path,
        &mut loaded.inputs,
        |first, block| reviews::read_block_for(&name, first, block, &reading),
        |blocks| reviews::check_for(&name, blocks.flatten(), &reading, index),
    )?;
    account(loaded, &name, account::Reader { exp: experiment }, &parsed);
    loaded.refusals.append(parsed.problems);
    if !parsed.labels.is_empty() {
        for arm in exp.arms() {
            let not_reached = loaded.collecting.contains(&arm.source);
            if !parsed.labels.contains_key(&arm.source) && !not_reached {
                loaded.refusals.push(
                    InputError::new(
                        &name,
                        format!(
                            "arm `{}` reads recorded arm `{}`, but no return carries that label",
                            arm.name, arm.source
                        ),
                    )
                    .field("field `arm`")
                    .hint(format!(
                        "the file's labels: {}; set `source` in [arms.{}] of {}",
                        label_list(parsed.labels.keys().map(String::as_str)),
                        arm.name,
                        exp_path.display()
                    )),
                );
            }
        }
    }
    for selection in &parsed.selections {
        let readers: Vec<String> = exp
            .arms()
            .iter()
            .filter(|a| a.source == selection.source && a.review.scale() == selection.scale)
            .map(|a| format!("`{}`", a.name))
            .collect();
        let readers = match readers.len() {
            1 => format!("arm {}", readers[0]),
            _ => format!("arms {}", readers.join(" and ")),
        };
        for r in &selection.returns {
            let mut listed = 0;
            for m in r.malformed.iter() {
                if loaded.malformed.len() < Problems::KEPT {
                    loaded.malformed.push((readers.clone(), m.to_error(&name)));
                    listed += 1;
                }
            }
            loaded.malformed_more += (r.malformed.len() - listed) as u64;
        }
    }
    loaded.corpus.reviews = Some((name, parsed.selections));
    Ok(parsed.index)
}

/// `reviews.jsonl`'s lines into the ledger: those its reader refused, and the rest by label.
fn account(loaded: &mut Loaded, name: &str, reader: account::Reader<'_>, parsed: &reviews::Parsed) {
    let noun = account::Noun {
        one: "return",
        many: "returns",
    };
    let mut tally = account::Tally::new(name, noun, reader, &parsed.problems);
    for (label, c) in &parsed.labels {
        tally.label(label, c.lines, c.first);
    }
    tally.close(&mut loaded.ledger, &mut loaded.refusals);
}

/// The reviewer returns the controls' files are checked against: where they were read from (for
/// messages) and which findings and files they hold.
#[derive(Clone, Copy)]
pub struct Returns<'a> {
    pub path: &'a Path,
    pub index: &'a reviews::Index,
}

/// The files of code review's precision controls: validator calls, each
/// naming a finding some return holds; target metadata; and the source snapshots of the files
/// the findings name, none of which may lead outside `sources/<target>/`.
fn load_controls(
    loaded: &mut Loaded,
    dir: &Path,
    reviews: Returns<'_>,
    parse_problems: &mut BTreeMap<&'static str, Problems>,
) -> Result<(), Error> {
    if let Some((name, bytes)) = loaded.read_file(dir, "validations.jsonl")? {
        let parsed = validations::parse(&name, &bytes);
        parse_problems.insert("validations.jsonl", parsed.problems.clone());
        loaded.refusals.append(parsed.problems);
        loaded.failed_validations.append(parsed.malformed);
        for c in &parsed.calls {
            if !reviews.index.holds(&c.arm, &c.target, c.run, &c.finding) {
                loaded.refusals.push(
                    InputError::new(
                        &name,
                        format!(
                            "names finding `{}`, but no return of arm `{}` on target `{}`, run {} in {} holds it",
                            c.finding,
                            c.arm,
                            c.target,
                            c.run,
                            reviews.path.display()
                        ),
                    )
                    .at_line(c.line)
                    .field("field `finding`")
                    .hint("a validator call names the `id` of a finding in the return it came from (same arm, target and run)"),
                );
            }
        }
        loaded.corpus.validations = Some((name, parsed.calls));
    }
    targets_and_sources(loaded, dir, reviews, parse_problems)
}

/// `targets.jsonl` and `sources/` of the corpus folder `dir`, into `loaded`: what
/// skip rules and lint-ignore read. `collect`'s later stages read a run directory with it.
pub fn targets_and_sources(
    loaded: &mut Loaded,
    dir: &Path,
    reviews: Returns<'_>,
    parse_problems: &mut BTreeMap<&'static str, Problems>,
) -> Result<(), Error> {
    if let Some((name, bytes)) = loaded.read_file(dir, "targets.jsonl")? {
        let (targets, problems) = targets::parse(&name, &bytes);
        parse_problems.insert("targets.jsonl", problems.clone());
        loaded.refusals.append(problems);
        loaded.corpus.targets = Some((name, targets));
    }
    let root = dir.join("sources");
    if root.is_dir() {
        loaded.corpus.sources = Some(read_sources(loaded, &root, reviews)?);
    }
    Ok(())
}

/// Validator calls, PR metadata and source snapshots are code review's: a doc
/// experiment would read past them without a word.
fn refuse_controls_in_doc_mode(loaded: &mut Loaded, exp_path: &Path, exp: &Experiment) {
    if exp.mode != crate::policy::Mode::Doc {
        return;
    }
    let c = &loaded.corpus;
    let names: Vec<String> = [
        c.validations.as_ref().map(|(n, _)| n.clone()),
        c.targets.as_ref().map(|(n, _)| n.clone()),
    ]
    .into_iter()
    .flatten()
    .chain(c.sources.is_some().then(|| "sources/".to_string()))
    .collect();
    for name in names {
        loaded.refusals.push(
            InputError::new(
                name,
                "is read in code mode only, but the experiment's mode is doc",
            )
            .hint(format!(
                "set mode = \"code\" in {} if this is a code review corpus, or move the file away",
                exp_path.display()
            )),
        );
    }
}

/// The snapshot of each file a code finding names, for the targets with a folder under `root`.
fn read_sources(loaded: &mut Loaded, root: &Path, reviews: Returns<'_>) -> Result<Sources, Error> {
    let mut out = Sources::default();
    let reviews_name = reviews.path.display().to_string();
    let outside = |what: String| format!("{what} would lead outside {}", root.display());
    for target in &reviews.index.targets {
        if !sources::stays_inside(target) {
            if root.join(target).exists() {
                loaded.refusals.push(
                    InputError::new(root.display().to_string(), outside(format!("target `{target}`")))
                        .hint("a target's snapshot is the folder sources/<target>/; name targets without `..` or a leading /"),
                );
            }
            continue;
        }
        let folder = root.join(target);
        if !folder.is_dir() {
            continue;
        }
        out.add_target(target);
        let canonical_folder = folder.canonicalize().map_err(|e| Error::read(&folder, e))?;
        let mut seen = std::collections::HashSet::new();
        for (line, i, file) in reviews.index.files.get(target).into_iter().flatten() {
            if !seen.insert(file.as_str()) {
                continue;
            }
            let refuse = |problem: String| {
                InputError::new(&reviews_name, problem)
                    .at_line(*line)
                    .field(format!("field `findings[{i}].file`"))
                    .hint(format!(
                        "lint-ignore reads the finding's file under {}; a file path is relative to the change's root",
                        folder.display()
                    ))
            };
            if !sources::stays_inside(file) {
                loaded.refusals.push(refuse(outside(format!("`{file}`"))));
                continue;
            }
            let path = folder.join(file);
            if !path.is_file() {
                continue;
            }
            // A link inside the snapshot must not lead out of it either.
            let real = path.canonicalize().map_err(|e| Error::read(&path, e))?;
            if !real.starts_with(&canonical_folder) {
                loaded.refusals.push(refuse(outside(format!(
                    "`{file}` (a link to {})",
                    real.display()
                ))));
                continue;
            }
            let bytes = read(&path, &mut loaded.inputs)?;
            out.add_file(target, file, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::reviews;
    use crate::policy::{Mode, Scale};

    // Regression (issue 34): ten million lines of `{}` held a message per line (3.6 GB, then an
    // abort). Blocks now hold at most BLOCK_LINES lines, and the problems past the first
    // Problems::KEPT are counted, not kept; every line is still read and numbered.
    #[test]
    fn a_file_of_many_bad_lines_is_read_in_bounded_blocks_and_its_problems_counted() {
        let n = 3 * BLOCK_LINES + 5;
        let text = format!(
            "{}{}\n",
            "{}\n".repeat(n),
            r#"{"target": "t", "arm": "b", "reviewer": "r", "findings": []}"#
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reviews.jsonl");
        std::fs::write(&path, &text).unwrap();
        let wants = [("b".to_string(), Scale::Float)];
        let blocks = std::sync::Mutex::new(Vec::new());
        let parsed = stream(
            &path,
            &mut Vec::new(),
            |first, block| {
                let lines = block.iter().filter(|&&b| b == b'\n').count();
                blocks.lock().unwrap().push((first, lines));
                reviews::read_block("r", first, block)
            },
            |lines| {
                reviews::check_for(
                    "r",
                    lines.flatten(),
                    &reviews::Reading::new(Mode::Doc, &wants),
                    reviews::Index::without_ids(),
                )
            },
        )
        .unwrap();
        assert_eq!(parsed.problems.total(), n as u64);
        assert_eq!(parsed.problems.len(), Problems::KEPT);
        assert_eq!(parsed.problems.more(), (n - Problems::KEPT) as u64);
        assert_eq!(
            parsed.problems[Problems::KEPT - 1].line,
            Some(Problems::KEPT as u64)
        );
        // The return after them is read, on its own line number.
        assert_eq!(parsed.selections[0].returns[0].line, n as u64 + 1);
        // Workers parse blocks side by side: in the order of their first lines, they tile the file.
        let mut blocks = blocks.into_inner().unwrap();
        blocks.sort_unstable();
        assert!(blocks.len() >= 4, "{blocks:?}");
        let mut next = 1;
        for (first, lines) in blocks {
            assert_eq!(first, next);
            assert!(lines <= BLOCK_LINES);
            next += lines as u64;
        }
    }

    // Read in blocks smaller than a line, on one worker or several, the file gives the same
    // returns, refusals (with their line numbers), malformed findings and hash as read whole,
    // whether its findings are checked on the workers or after; the mark before the first line
    // is skipped, and a last line without a newline is read. A repeated id is malformed on
    // its second line, and a source two arms read on two scales is checked on both.
    #[test]
    fn a_file_streamed_in_small_blocks_reads_as_it_does_whole() {
        let finding = |id: &str, confidence: &str| {
            format!(
                r#"{{"id": "{id}", "title": "T {id}", "severity": "P1", "section": "S", "finding_type": "error", "autofix_class": "manual", "confidence": {confidence}}}"#
            )
        };
        let text = format!(
            "\u{feff}{{\"target\": \"t\", \"arm\": \"b\", \"reviewer\": \"r\", \"findings\": [{{\"title\": 5}}]}}\r\n\n\
             not json\n   \n\
             {{\"target\": \"t\", \"arm\": \"b\", \"reviewer\": \"s\", \"findings\": []}}\n\
             {{\"target\": \"t\", \"arm\": \"b\", \"reviewer\": \"s\", \"findings\": []}}\n\
             {{\"target\": \"u\", \"arm\": \"b\", \"reviewer\": \"r\", \"findings\": [{}, {}]}}\n\
             {{\"target\": \"u\", \"arm\": \"c\", \"reviewer\": \"r\", \"findings\": [{}, {}]}}\n\
             {{\"target\": \"v\", \"arm\": \"b\", \"reviewer\": \"q\", \"findings\": [{}]}}",
            finding("x", "0.5"),
            finding("y", "75"),
            finding("z", "0.5"),
            finding("x", "0.5"),
            finding("w", "100"),
        );
        let dir = std::env::temp_dir().join(format!("calibench-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("reviews.jsonl");
        std::fs::write(&path, &text).unwrap();
        let wants = [
            ("b".to_string(), Scale::Float),
            ("b".to_string(), Scale::Anchor),
            ("c".to_string(), Scale::Float),
        ];
        let whole = reviews::parse_for("r", text.as_bytes(), Mode::Doc, &wants);
        assert_eq!(whole.problems.len(), 2, "{:?}", whole.problems);
        assert_eq!(whole.selections[0].returns.len(), 4);
        let malformed = |sel: usize| -> Vec<String> {
            let returns = &whole.selections[sel].returns;
            let list = returns.iter().flat_map(|r| r.malformed.iter());
            list.map(|m| format!("{} {}", m.line, m.reason)).collect()
        };
        let off = |line: u64, value: u32| {
            format!("{line} {value} is off the float scale: a number in [0, 1] is expected")
        };
        assert_eq!(
            malformed(0),
            [
                "1 must be a string, not a number".to_string(),
                off(7, 75),
                off(9, 100)
            ]
        );
        assert_eq!(
            malformed(2),
            ["8 id is already used by a finding on line 7"]
        );
        // On the anchor scale, line 9's 100 is a finding.
        assert_eq!(whole.selections[1].returns[2].findings.len(), 1);
        let reading = reviews::Reading::new(Mode::Doc, &wants);
        for size in [1, 7, 64, 1 << 20] {
            for workers in [1, 2, 3] {
                for prechecked in [false, true] {
                    let mut inputs = Vec::new();
                    let index = || reviews::Index::default();
                    let streamed = if prechecked {
                        stream_by(
                            size,
                            workers,
                            &path,
                            &mut inputs,
                            |first, block| reviews::read_block_for("r", first, block, &reading),
                            |blocks| reviews::check_for("r", blocks.flatten(), &reading, index()),
                        )
                    } else {
                        stream_by(
                            size,
                            workers,
                            &path,
                            &mut inputs,
                            |first, block| reviews::read_block("r", first, block),
                            |blocks| reviews::check_for("r", blocks.flatten(), &reading, index()),
                        )
                    }
                    .unwrap();
                    let case =
                        format!("blocks of {size}, {workers} workers, prechecked {prechecked}");
                    assert_eq!(streamed, whole, "{case}");
                    assert_eq!(inputs[0].bytes, text.len());
                    assert_eq!(
                        inputs[0].sha256,
                        format!("{:x}", Sha256::digest(text.as_bytes()))
                    );
                }
            }
        }
        let missing = stream(&dir.join("none"), &mut Vec::new(), |_, _| (), |_| ());
        assert!(matches!(missing, Err(Error::Read { .. })), "{missing:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
