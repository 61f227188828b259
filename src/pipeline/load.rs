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
use std::path::{Path, PathBuf};

use super::account;
use super::checks;
use super::collection::check_collection;
use super::loaded::{Loaded, Returns};
use super::read::{read, stream, stream_from, InputFile};
use super::tally::{Reader, Tally};
use crate::config::{self, Experiment, Override};
use crate::corpus::files::{self, File};
use crate::corpus::sources::{self, Sources};
use crate::corpus::{collection, label_list, labels, queries, reviews, scores, targets};
use crate::corpus::{validations, verdicts, Corpus};
use crate::error::{Error, InputError, Problems};

/// Reads and checks an experiment file, with `overrides` (`--set`) applied: UTF-8, then every
/// rule of docs/reference.md that the file alone decides. An unreadable file is
/// `Err(Error::Read)`; a bad one, `Err(Error::Input)`.
pub fn experiment(path: &Path, overrides: &[Override]) -> Result<(Experiment, InputFile), Error> {
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

/// Reads the experiment (a file, or a folder holding `experiment.toml`) and its corpus — or
/// `options.corpus` instead of the one it names — for a run. Every problem the loader finds
/// refuses the run, so `validate` (the same loader) reports exactly what is refused here; with
/// `options.strict`, so does every caveat.
pub fn for_run(path: &Path, options: &super::RunOptions) -> Result<Run, Error> {
    let corpus = options.corpus.as_deref();
    let path = &super::experiment_file(path);
    let (mut exp, experiment_input) = experiment(path, &options.set)?;
    if options.aa {
        exp = exp.aa();
    }
    if let Some(dir) = corpus {
        if !dir.is_dir() {
            return Err(InputError::new(dir.display().to_string(), "is not a folder")
                .field("`--corpus`")
                .hint("a folder holding reviews.jsonl, queries.jsonl or verdicts.jsonl, such as a collect run directory")
                .into());
        }
        exp.corpus = dir.to_path_buf();
    }
    // An A/A collection says it is one: its baseline, then `<label>-again`.
    if !options.aa && is_aa_of(&exp.corpus, &exp.baseline.source) {
        exp = exp.aa();
    }
    let loaded = load(&exp.corpus, Some((path, &exp)), options.allow_partial)?;
    loaded.refusals.refuse()?;
    if options.strict {
        // The first malformed finding names its own field; every other caveat, its line.
        let malformed = loaded.malformed.first().map(|(_, e)| e.clone());
        if let Some(e) = malformed.or_else(|| loaded.caveats_at.first().cloned()) {
            return Err(e.into());
        }
    }
    let mut inputs = vec![experiment_input];
    inputs.extend(loaded.inputs);
    Ok(Run {
        experiment: exp,
        corpus: loaded.corpus,
        inputs,
        incomplete: loaded.incomplete,
        suspect: loaded.suspect,
        ledger: loaded.ledger,
    })
}

/// Whether the folder `dir` is an A/A collection (`collect --aa`) of the baseline label
/// `baseline`, as its collect.json says. A record that does not read is not one here: the
/// loader refuses it naming its field.
pub(super) fn is_aa_of(dir: &Path, baseline: &str) -> bool {
    let record = dir.join(collection::FILE);
    if !record.is_file() {
        return false;
    }
    let Ok(bytes) = std::fs::read(&record) else {
        return false;
    };
    crate::corpus::collection::Collection::read(&record.display().to_string(), &bytes)
        .is_ok_and(|c| c.is_aa() && c.arms.first().is_some_and(|a| a == baseline))
}

/// An experiment and its corpus, read for a run.
pub struct Run {
    pub experiment: Experiment,
    pub corpus: Corpus,
    /// Every file read, for the manifest.
    pub inputs: Vec<InputFile>,
    /// What the report must say when an unfinished collection was replayed on purpose.
    pub incomplete: Option<String>,
    /// Arms most of whose findings are malformed: warned of, and said in the report.
    pub suspect: Vec<crate::corpus::MalformedShare>,
    /// What became of every line and finding, with the caveats the decision carries.
    pub ledger: crate::corpus::ledger::Inputs,
}

/// Reads the corpus folder `dir`. With an experiment (its file's path, for messages), findings
/// are validated on each arm's scale and the corpus is checked against the experiment; without
/// one, only the records are. A folder that is a collection that did not finish
/// (docs/guides/live-collection.md) is refused unless `allow_partial`. `Err` only when a
/// file that exists cannot be read.
pub fn load(
    dir: &Path,
    experiment: Option<(&Path, &Experiment)>,
    allow_partial: bool,
) -> Result<Loaded, Error> {
    load_with(dir, experiment, allow_partial, None)
}

/// What a sequential collection's look reads of its run directory `dir`: each stage file of
/// `window` from its mark on (the loaded window holds the marks this look reached), the rest as
/// [`load`] reads it. The collection's record is not read again: the collection writing it is
/// the one looking.
pub fn load_window(
    dir: &Path,
    experiment: (&Path, &Experiment),
    window: super::loaded::Window,
) -> Result<Loaded, Error> {
    load_with(dir, Some(experiment), true, Some(window))
}

fn load_with(
    dir: &Path,
    experiment: Option<(&Path, &Experiment)>,
    allow_partial: bool,
    window: Option<super::loaded::Window>,
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
    let record = dir.join(collection::FILE);
    refuse_stray_files(&mut loaded, dir, record.is_file())?;
    if let Some(window) = window {
        loaded.allow_partial = true;
        loaded.collecting = window.collecting.clone();
        loaded.window = Some(window);
    } else if record.is_file() {
        loaded.allow_partial = allow_partial;
        check_collection(&mut loaded, &record, allow_partial)?;
    }
    let mut l = Loading {
        loaded,
        dir,
        experiment,
        refused: BTreeMap::new(),
        index: reviews::Index::default(),
        reviews: dir.join(File::Reviews.name()),
    };
    for def in files::corpus() {
        let path = dir.join(def.name);
        let present = path.is_file();
        l.file(def.file, &path, present)?;
    }
    let Loading {
        mut loaded,
        refused,
        index,
        ..
    } = l;
    account::finish(&mut loaded, Reader { exp: experiment }, &index, &refused);
    if let Some((exp_path, exp)) = experiment {
        checks::refuse_unmeasured_primary(&mut loaded, exp_path, exp);
        checks::refuse_undecidable(&mut loaded, exp_path, exp);
    }
    if !files::corpus().any(|d| d.replayed && loaded.corpus.has(d.file)) {
        // Verdicts alone replay nothing, yet would still print a trust verdict and a lift.
        let hint = if loaded.corpus.verdicts.is_some() {
            "a corpus replays reviews.jsonl, queries.jsonl or scores.jsonl; to check a judge panel alone, run `calibench trust verdicts.jsonl`"
        } else {
            "`corpus` in the experiment names the folder, relative to the experiment file; `calibench import` writes scores.jsonl, `calibench collect` writes reviews.jsonl"
        };
        let mut replayed: Vec<&str> = files::corpus()
            .filter(|d| d.replayed)
            .map(|d| d.name)
            .collect();
        let last = replayed.pop().unwrap_or_default();
        loaded.refusals.push(
            InputError::new(
                &shown,
                format!(
                    "holds none of {} or {last}: nothing would be replayed",
                    replayed.join(", ")
                ),
            )
            .hint(hint),
        );
    }
    Ok(loaded)
}

/// What the loader carries from one corpus file to the next.
struct Loading<'a> {
    loaded: Loaded,
    dir: &'a Path,
    experiment: Option<(&'a Path, &'a Experiment)>,
    /// Each file's record-level refusals, one per line it could not read, for the ledger.
    refused: BTreeMap<File, Problems>,
    /// The records of `reviews.jsonl` as read: what the other files are checked against.
    index: reviews::Index,
    /// Where `reviews.jsonl` is (or would be), for messages.
    reviews: PathBuf,
}

impl Loading<'_> {
    /// The corpus file `file` at `path`, read when `present`; what its absence means, when it
    /// means something. Every file of the table comes here, in its order.
    fn file(&mut self, file: File, path: &Path, present: bool) -> Result<(), Error> {
        match (file, present) {
            (File::Reviews, true) => self.reviews(path),
            (File::Validations, true) => self.validations(path),
            // Target metadata and `sources/` go together, and close code review's controls.
            (File::Targets, _) => {
                if present {
                    self.targets(path)?;
                }
                let root = self.dir.join(crate::corpus::files::SOURCES);
                if root.is_dir() {
                    let returns = Returns {
                        path: &self.reviews,
                        index: &self.index,
                    };
                    let read = read_sources(&mut self.loaded, &root, returns)?;
                    self.loaded.corpus.sources = Some(read);
                }
                if let Some((exp_path, exp)) = self.experiment {
                    checks::refuse_controls_in_doc_mode(&mut self.loaded, exp_path, exp);
                    checks::malformed_shares(&mut self.loaded, exp_path, exp);
                }
                Ok(())
            }
            (File::Verdicts, true) => self.verdicts(path),
            (File::Labels, true) => self.labels(path),
            (File::Labels, false) => {
                self.no_labels();
                Ok(())
            }
            (File::Queries, true) => self.queries(path),
            (File::Scores, true) => self.scores(path),
            (File::Scores, false) => {
                self.no_scores();
                Ok(())
            }
            (File::Judges, _) | (_, false) => Ok(()),
        }
    }

    /// A file's record-level refusals: into the run's, and kept for its ledger.
    fn refused(&mut self, file: File, problems: Problems) {
        self.refused.insert(file, problems.clone());
        self.loaded.refusals.append(problems);
    }

    fn reviews(&mut self, path: &Path) -> Result<(), Error> {
        // Finding ids are kept only for validator calls to be checked against.
        let ids = self.dir.join(File::Validations.name()).is_file();
        self.index = load_reviews(&mut self.loaded, path, self.experiment, ids)?;
        Ok(())
    }

    /// Validator calls, each naming a finding some return holds.
    fn validations(&mut self, path: &Path) -> Result<(), Error> {
        let (name, bytes) = self.loaded.read_at(path)?;
        let parsed = validations::parse(&name, &bytes);
        self.refused(File::Validations, parsed.problems);
        self.loaded.failed_validations.append(parsed.malformed);
        let reviews = &self.reviews;
        for c in &parsed.calls {
            if !self.index.holds(&c.arm, &c.target, c.run, &c.finding) {
                self.loaded.refusals.push(
                    InputError::new(
                        &name,
                        format!(
                            "names finding `{}`, but no return of arm `{}` on target `{}`, run {} in {} holds it",
                            c.finding,
                            c.arm,
                            c.target,
                            c.run,
                            reviews.display()
                        ),
                    )
                    .at_line(c.line)
                    .field("field `finding`")
                    .hint("a validator call names the `id` of a finding in the return it came from (same arm, target and run)"),
                );
            }
        }
        self.loaded.corpus.validations = Some((name, parsed.calls));
        Ok(())
    }

    fn targets(&mut self, path: &Path) -> Result<(), Error> {
        let (name, bytes) = self.loaded.read_at(path)?;
        let (targets, problems) = targets::parse(&name, &bytes);
        self.refused(File::Targets, problems);
        self.loaded.corpus.targets = Some((name, targets));
        Ok(())
    }

    fn verdicts(&mut self, path: &Path) -> Result<(), Error> {
        let (name, bytes) = self.loaded.read_at(path)?;
        let (items, problems) = verdicts::parse(&name, &bytes);
        // What the trust verdict would refuse: no verdict an arm reads (those under a label
        // no arm reads are refused with the ledger).
        let experiment = self.experiment;
        let read = |label: &str| experiment.is_none_or(|(_, exp)| exp.reads(label, true));
        if problems.is_empty() && !items.iter().any(|i| read(&i.arm)) {
            let all_unread = !items.is_empty()
                && experiment.is_some_and(|(_, e)| items.iter().all(|i| !e.ignores(&i.arm)));
            if !all_unread {
                self.loaded
                    .refusals
                    .push(InputError::new(&name, crate::trust::NO_EVIDENCE));
            }
        }
        self.refused(File::Verdicts, problems);
        self.loaded.corpus.verdicts = Some((name, items));
        Ok(())
    }

    /// Human labels: read beside the verdicts they are compared with, each line checked
    /// against them (an annotator never a judge, the judges' dimensions, an arm the experiment
    /// reads).
    fn labels(&mut self, path: &Path) -> Result<(), Error> {
        let (name, bytes) = self.loaded.read_at(path)?;
        let (labels, problems) = labels::parse(&name, &bytes);
        let whole = problems.is_empty();
        self.refused(File::Labels, problems);
        let loaded = &mut self.loaded;
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

    /// No labels: refused when the experiment makes the alt-test a trust check.
    fn no_labels(&mut self) {
        let Some((exp_path, exp)) = self.experiment else {
            return;
        };
        if exp.trust.alt_test == crate::policy::AltTestUse::Require {
            self.loaded.refusals.push(
                InputError::new(exp_path.display().to_string(), format!("`alt_test = \"require\"` makes the panel's alt-test a trust check, but {} has no labels.jsonl", self.dir.display()))
                    .field("`trust.alt_test`")
                    .hint("add the annotators' labels.jsonl to the corpus (docs/guides/judges-and-humans.md), or set alt_test = \"report\""),
            );
        }
    }

    fn queries(&mut self, path: &Path) -> Result<(), Error> {
        let (name, bytes) = self.loaded.read_at(path)?;
        let (all, problems) = queries::parse(&name, &bytes);
        self.refused(File::Queries, problems);
        if let Some((_, exp)) = self.experiment {
            for arm in exp.arms() {
                if let Err(e) = queries::select(&name, &all, &arm.name, &arm.source) {
                    self.loaded.refusals.push(e);
                }
            }
        }
        self.loaded.corpus.queries = Some((name, all));
        Ok(())
    }

    fn scores(&mut self, path: &Path) -> Result<(), Error> {
        let (name, bytes) = self.loaded.read_at(path)?;
        let (lines, problems) = scores::parse(&name, &bytes);
        // The checks across lines read whole files: with lines refused, they would report what
        // the refused lines would have held (an arm "with no line") rather than the file.
        let whole = problems.is_empty();
        self.refused(File::Scores, problems);
        if let (Some((exp_path, exp)), true) = (self.experiment, whole) {
            let arms = exp.arms().map(|a| (a.name.as_str(), a.source.as_str()));
            let loaded = &mut self.loaded;
            loaded.refusals.append(scores::check_experiment(
                &name,
                &lines,
                arms,
                &exp.scores.judges,
            ));
            if !exp.scores.judges.is_empty() && loaded.corpus.verdicts.is_some() {
                loaded.refusals.push(checks::judges_error(
                    exp_path,
                    exp,
                    "`[scores] judges` names a judge panel, but the corpus also has verdicts.jsonl: one trust verdict cannot weigh two panels",
                    "keep the scorers' panel (drop verdicts.jsonl) or the verdicts' (drop `judges`)",
                ));
            }
        }
        self.loaded.corpus.scores = Some((name, lines));
        Ok(())
    }

    /// No imported scores: refused when the experiment names scorers as its judges.
    fn no_scores(&mut self) {
        let Some((exp_path, exp)) = self.experiment else {
            return;
        };
        if !exp.scores.judges.is_empty() {
            self.loaded.refusals.push(checks::judges_error(
                exp_path,
                exp,
                "`[scores] judges` names scorers, but the corpus has no scores.jsonl",
                "`calibench import` writes scores.jsonl into the corpus folder",
            ));
        }
    }
}

/// `targets.jsonl` and `sources/` of the run directory `dir` that `collect`'s later stages
/// read, as a run reads them: what skip rules and lint-ignore read, checked against `index`,
/// the returns the run holds.
pub fn targets_and_sources(dir: &Path, index: &reviews::Index) -> Result<Loaded, Error> {
    let mut l = Loading {
        loaded: Loaded::default(),
        dir,
        experiment: None,
        refused: BTreeMap::new(),
        index: index.clone(),
        reviews: dir.join(File::Reviews.name()),
    };
    let path = dir.join(File::Targets.name());
    let present = path.is_file();
    l.file(File::Targets, &path, present)?;
    Ok(l.loaded)
}

/// A top-level `*.jsonl` whose name calibench does not read would be ignored without a word
/// (`review.jsonl`, `Reviews.jsonl`): refused with the nearest name it reads. So is a
/// `reviews.json` (the stem of a corpus file with another extension). A collection's own
/// files (`judges.jsonl`) belong in a folder that holds `collect.json`.
fn refuse_stray_files(loaded: &mut Loaded, dir: &Path, collection: bool) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::read(dir, e))?;
    let ours = |name: &str| {
        files::FILES
            .iter()
            .any(|d| d.name == name && (d.corpus || collection))
    };
    let mut stray: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            let lower = name.to_lowercase();
            let stem_known = files::corpus().any(|d| {
                lower
                    .strip_suffix(".json")
                    .is_some_and(|stem| d.stem() == stem)
            });
            let jsonl = lower.ends_with(".jsonl");
            (jsonl && !ours(name)) || stem_known
        })
        .collect();
    stray.sort();
    let listed = files::corpus()
        .map(|d| format!("{} ({})", d.name, d.holds))
        .collect::<Vec<_>>()
        .join(", ");
    for name in stray {
        let shown = dir.join(&name).display().to_string();
        let problem = match nearest_corpus_file(&name) {
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
fn nearest_corpus_file(name: &str) -> Option<&'static str> {
    let lower = name.to_lowercase();
    let stem = lower.split('.').next().unwrap_or(&lower);
    let plural = match stem.strip_suffix('y') {
        Some(s) => format!("{s}ies"),
        None => format!("{stem}s"),
    };
    files::corpus()
        .find(|d| {
            let known = d.stem();
            known == stem || known == plural || strsim::osa_distance(known, stem) <= 1
        })
        .map(|d| d.name)
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
        account_returns(loaded, &name, Reader { exp: None }, &parsed);
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
    let from = loaded.mark(path);
    let (parsed, end) = stream_from(
        path,
        from.unwrap_or_default(),
        &mut loaded.inputs,
        |first, block| reviews::read_block_for(&name, first, block, &reading),
        |blocks| reviews::check_for(&name, blocks.flatten(), &reading, index),
    )?;
    loaded.set_mark(path, end);
    account_returns(loaded, &name, Reader { exp: experiment }, &parsed);
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
fn account_returns(loaded: &mut Loaded, name: &str, reader: Reader<'_>, parsed: &reviews::Parsed) {
    let noun = File::Reviews.def().noun;
    let mut tally = Tally::new(name, noun, reader, &parsed.problems);
    for (label, c) in &parsed.labels {
        tally.label(label, c.lines, c.first);
    }
    tally.close(&mut loaded.ledger, &mut loaded.refusals);
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
