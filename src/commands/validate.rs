//! `calibench validate CORPUS_OR_EXPERIMENT`: every problem in the inputs, with file and line.
//!
//! Given an experiment (or a folder holding `experiment.toml`), findings are also checked
//! against each arm's confidence scale, as `run` would; given a bare corpus folder, only the
//! records are checked, since the scale is the experiment's to declare.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, InputError, Problems};
use crate::exit::Verdict;
use crate::output::Render;
use crate::pipeline::load;

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// A corpus directory or an experiment.toml
    pub corpus_or_experiment: std::path::PathBuf,
    /// Set a key of experiment.toml, as `run --set` does (repeatable)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<crate::input::toml::Override>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Validation {
    pub checked: Vec<String>,
    /// The problems listed: of each kind, the first [`Problems::KEPT`] found.
    pub problems: Vec<Problem>,
    /// Every problem found, by kind, listed or only counted.
    pub counts: Counts,
    /// What could not be checked, and why.
    pub notes: Vec<String>,
    /// The input ledger (docs/reference.md, "The input ledger"): what a run makes of every
    /// line and finding, and its caveats; computed without replaying.
    pub inputs: crate::corpus::ledger::Inputs,
}

/// How many problems of each kind were found. A file of millions of bad lines is counted, and
/// only its first problems are listed: holding a message per line would cost more memory than
/// the file.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    pub refused: u64,
    pub malformed: u64,
    pub failed_call: u64,
}

impl Counts {
    fn total(&self) -> u64 {
        self.refused + self.malformed + self.failed_call
    }
}

/// A problem as `validate` lists it: the error (file, line, field, problem, hint), and what it
/// does to a run.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    #[serde(flatten)]
    pub error: InputError,
    /// `refused` stops a run; `malformed` findings are dropped and counted (refused under --strict);
    /// `failed_call` is a validator output that was not a verdict, counted as a failed call.
    pub kind: &'static str,
}

impl Problem {
    fn from(e: &InputError, kind: &'static str) -> Self {
        let mut error = e.clone();
        // A malformed finding's hint is the --strict note the summary line gives once.
        error.hint = error.hint.filter(|_| kind == "refused");
        Problem { error, kind }
    }
}

impl Validation {
    pub fn verdict(&self) -> Verdict {
        if self.counts.total() == 0 {
            Verdict::Pass
        } else {
            Verdict::BadInput
        }
    }
}

pub fn run(args: &ValidateArgs) -> Result<Validation, Error> {
    let path = &args.corpus_or_experiment;
    let experiment_path: Option<PathBuf> = if path.is_dir() {
        Some(path.join("experiment.toml")).filter(|p| p.is_file())
    } else if path.is_file() {
        Some(path.clone())
    } else {
        return Err(Error::read(
            path,
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    };
    let mut v = Validation {
        checked: Vec::new(),
        problems: Vec::new(),
        counts: Counts::default(),
        notes: Vec::new(),
        inputs: Default::default(),
    };
    // The experiment and its corpus are read exactly as `run` reads them (the corpus loader),
    // so every refusal of a run is a problem here. An experiment that cannot be read is itself
    // a problem, and its folder's corpus is still checked, record by record.
    let (corpus_dir, experiment) = match &experiment_path {
        Some(p) => {
            v.checked.push(p.display().to_string());
            match load::experiment(p, &args.set) {
                Ok((e, _)) => (e.corpus.clone(), Some(e)),
                Err(Error::Input(e)) => {
                    v.problems.push(Problem::from(&e, "refused"));
                    v.counts.refused += 1;
                    // `experiment.toml` in the working folder has the empty path as parent.
                    let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
                    (dir.unwrap_or(Path::new(".")).to_path_buf(), None)
                }
                Err(other) => return Err(other),
            }
        }
        None => {
            v.notes.push(format!(
                "no experiment.toml in {}: findings are not checked against a confidence scale",
                path.display()
            ));
            (path.clone(), None)
        }
    };
    let loaded = load::load(
        &corpus_dir,
        experiment_path.as_deref().zip(experiment.as_ref()),
        false,
    )?;
    v.checked
        .extend(loaded.inputs.iter().map(|i| i.path.clone()));
    v.problems
        .extend(loaded.refusals.iter().map(|e| Problem::from(e, "refused")));
    v.counts.refused += loaded.refusals.total();
    for (arms, e) in &loaded.malformed {
        let mut p = Problem::from(e, "malformed");
        p.error.problem = format!("{} ({arms})", p.error.problem);
        v.problems.push(p);
    }
    v.counts.malformed = loaded.malformed.len() as u64 + loaded.malformed_more;
    v.counts.failed_call = loaded.failed_validations.total();
    v.notes.extend(loaded.suspect.iter().map(|share| {
        format!(
            "{}: a run completes, but its report says its inputs are suspect ({})",
            share.sentence(),
            share.fix
        )
    }));
    v.problems.extend(
        loaded
            .failed_validations
            .iter()
            .map(|e| Problem::from(e, "failed_call")),
    );
    // A declared sweep is checked as `run` checks it before writing anything: its figures
    // against the corpus and its judges, its split against the units.
    if let (Some(file), Some(exp), true) =
        (&experiment_path, &experiment, loaded.refusals.total() == 0)
    {
        let options = crate::pipeline::RunOptions {
            runs_dir: PathBuf::from("runs"),
            reports_dir: PathBuf::from("reports"),
            run_id: None,
            strict: false,
            bootstrap: None,
            seed: None,
            no_plots: true,
            corpus: None,
            allow_partial: false,
            threads: None,
            set: args.set.clone(),
            sequential: false,
            aa: false,
        };
        for (i, spec) in exp.sweeps.iter().enumerate() {
            match crate::pipeline::sweep::check_declared(
                file,
                i,
                spec,
                &options,
                exp,
                &loaded.corpus,
            ) {
                Ok(()) => {}
                Err(Error::Input(e)) => {
                    v.problems.push(Problem::from(&e, "refused"));
                    v.counts.refused += 1;
                }
                Err(other) => return Err(other),
            }
        }
    }
    v.inputs = loaded.ledger;
    Ok(v)
}

impl Render for Validation {
    fn human(&self) -> String {
        let mut s = String::new();
        for p in &self.problems {
            s += &format!("{}\n", p.error);
        }
        for n in &self.notes {
            s += &format!("note: {n}\n");
        }
        for (file, f) in &self.inputs.files {
            let told =
                |r: &str| crate::corpus::ledger::Reason::of_key(r).is_some_and(|r| r.refuses());
            for (reason, e) in f.excluded.iter().filter(|(r, _)| !told(r)) {
                s += &format!(
                    "ledger: {file}: {} {reason} (first on line {}: {})\n",
                    crate::text::count(e.count, "line", "lines"),
                    e.first_line,
                    e.example
                );
            }
        }
        for c in &self.inputs.caveats {
            s += &format!("caveat: {c} (a run completes and says so on its decision line)\n");
        }
        let Counts {
            refused,
            malformed,
            failed_call: calls,
        } = self.counts;
        let unlisted = self.counts.total() - self.problems.len() as u64;
        if unlisted > 0 {
            s += &format!(
                "… and {unlisted} more problems, counted but not listed (the first {} of each kind are)\n",
                Problems::KEPT
            );
        }
        if self.counts.total() == 0 {
            s += &format!("no problems in {}\n", self.checked.join(", "));
        } else {
            let n = |count: u64, one: &str, many: &str| {
                format!("{count} {}", if count == 1 { one } else { many })
            };
            let calls = if calls == 0 {
                String::new()
            } else {
                format!(
                    ", {} that a run counts as failed",
                    n(calls, "validator output", "validator outputs")
                )
            };
            s += &format!(
                "{}: {} a run, {} that a run drops and counts{calls}\n",
                n(self.counts.total(), "problem", "problems"),
                n(refused, "that refuses", "that refuse"),
                n(malformed, "malformed finding", "malformed findings"),
            );
        }
        s
    }
}

impl super::Run for ValidateArgs {
    const PURGE_DELAY_MS: Option<i64> = Some(0);
    const HUGE_PAGES: bool = false;

    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        let validation = run(&self)?;
        Ok(ctx.answer(&validation, validation.verdict()))
    }
}
