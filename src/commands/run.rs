//! `calibench run [EXPERIMENT…]`: replay each experiment, compute its metrics, and write its run
//! directory (docs/guides/reports.md). A run directory is written under a temporary name and renamed when
//! complete, so a crash never leaves a half run that looks whole.

use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use serde::Serialize;

use crate::error::{Error, InputError};
use crate::output::{self, Render};
use crate::pipeline::run::{prepare_folders, run_one, Completed};
use crate::pipeline::Timer;
use crate::report::{index, terminal};
use crate::rundir;

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Experiment files; none means every corpora/*/experiment.toml
    pub experiments: Vec<std::path::PathBuf>,
    #[command(flatten)]
    pub options: crate::pipeline::RunOptions,
}

/// What `run` reports: one entry per experiment.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub runs: Vec<Completed>,
    /// The sweeps the experiments declare (`[[sweep]]`), made after their runs.
    pub sweeps: Vec<crate::pipeline::sweep::Done>,
    /// `reports/index.html`, written when `run` ran every example.
    pub index: Option<PathBuf>,
}

impl Serialize for RunReport {
    /// The metrics of every run, in order.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.runs
            .iter()
            .map(|r| &r.metrics)
            .collect::<Vec<_>>()
            .serialize(s)
    }
}

/// `progress`: draw a progress bar on stderr (the caller checked it is a terminal).
pub fn run(args: &RunArgs, timer: &Timer, progress: bool) -> Result<RunReport, Error> {
    let experiments = if args.experiments.is_empty() {
        discover(Path::new("corpora"))?
    } else {
        args.experiments.clone()
    };
    if let Some(id) = &args.options.run_id {
        if experiments.len() > 1 {
            return Err(InputError::new(
                "--run-id",
                "names one run, but several experiments were given",
            )
            .hint("run them one at a time, or drop --run-id")
            .into());
        }
        rundir::check_id(id, "--run-id")?;
    }
    prepare_folders(&args.options)?;
    if args.options.corpus.is_some() && experiments.len() != 1 {
        return Err(InputError::new(
            "--corpus",
            "replaces one experiment's corpus, but not exactly one experiment was named",
        )
        .hint("calibench run path/to/experiment.toml --corpus runs/<collect-run-id>")
        .into());
    }
    let bar = if progress && experiments.len() > 1 {
        output::progress_bar(
            experiments.len(),
            "{spinner} [{bar:30}] {pos}/{len} {msg} ({elapsed})",
        )
    } else {
        ProgressBar::hidden()
    };
    // A sweep an experiment declares is made before anything is written: every point checked
    // as the file is, the figures it names against the corpus and its judges, the split against
    // the units, every point replayed. A refusal names the `[[sweep]]` key and writes nothing.
    let declared: Vec<Vec<crate::pipeline::sweep::Computed>> = experiments
        .iter()
        .map(|path| declared_sweeps(path, &args.options))
        .collect::<Result<_, _>>()?;
    let mut runs = Vec::new();
    let mut sweeps = Vec::new();
    for (path, computed) in experiments.iter().zip(declared) {
        bar.set_message(path.display().to_string());
        let done = run_one(path, &args.options, timer)
            .and_then(|c| Ok((c, write_sweeps(computed, &args.options)?)));
        match done {
            Ok((c, mut s)) => {
                runs.push(c);
                sweeps.append(&mut s);
            }
            Err(e) => {
                bar.finish_and_clear();
                return Err(e);
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    // The index lists this invocation's runs and sweeps: every example for the main job, the
    // one run for `calibench run EXPERIMENT`.
    let entries: Vec<index::Entry> = runs
        .iter()
        .map(|r| index::Entry::of(&r.metrics.experiment, &r.document))
        .collect();
    let swept: Vec<index::SweepEntry> = sweeps
        .iter()
        .map(|d| index::SweepEntry::of(&d.sweep))
        .collect();
    let index = Some(write_index(&args.options.reports_dir, &entries, &swept)?);
    Ok(RunReport {
        runs,
        sweeps,
        index,
    })
}

/// The sweeps the experiment at `path` declares (`[[sweep]]`), computed and not yet written.
fn declared_sweeps(
    path: &Path,
    options: &crate::pipeline::RunOptions,
) -> Result<Vec<crate::pipeline::sweep::Computed>, Error> {
    let file = crate::pipeline::experiment_file(path);
    let specs = crate::pipeline::load::experiment(&file, &options.set)?
        .0
        .sweeps;
    specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            crate::pipeline::sweep::compute(path, spec, options, false, &|| {})
                .map_err(|e| crate::pipeline::sweep::as_declared(e, &file, i))
        })
        .collect()
}

/// Writes the declared sweeps beside their run: `<run-id>-sweep-<i>` under a given run id.
fn write_sweeps(
    computed: Vec<crate::pipeline::sweep::Computed>,
    options: &crate::pipeline::RunOptions,
) -> Result<Vec<crate::pipeline::sweep::Done>, Error> {
    computed
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut options = options.clone();
            options.run_id = options
                .run_id
                .as_ref()
                .map(|id| format!("{id}-sweep-{}", i + 1));
            c.write(&options)
        })
        .collect()
}

/// Writes `index.md` and `index.html` beside the reports, each through a temporary file.
fn write_index(
    reports_dir: &Path,
    entries: &[index::Entry],
    sweeps: &[index::SweepEntry],
) -> Result<PathBuf, Error> {
    rundir::replace_file(
        &reports_dir.join("index.md"),
        &index::markdown(entries, sweeps),
    )?;
    let html = reports_dir.join("index.html");
    rundir::replace_file(&html, &index::html(entries, sweeps))?;
    Ok(html)
}

/// Every `corpora/*/experiment.toml`, sorted.
fn discover(root: &Path) -> Result<Vec<PathBuf>, Error> {
    if !root.is_dir() {
        return Err(InputError::new(
            "calibench run",
            format!(
                "names no experiment, and there is no {}/ folder here to run every example of",
                root.display()
            ),
        )
        .hint("name an experiment: `calibench run path/to/experiment.toml` (or a folder holding one); `calibench init DIR --kind doc` makes one to start from")
        .into());
    }
    let entries = std::fs::read_dir(root).map_err(|e| Error::read(root, e))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path().join("experiment.toml"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(
            InputError::new(root.display().to_string(), "holds no */experiment.toml")
                .hint("name an experiment: `calibench run path/to/experiment.toml`; `calibench init DIR --kind doc` makes one to start from")
                .into(),
        );
    }
    Ok(found)
}

impl Render for RunReport {
    /// JSON Lines: one `metrics.json` object per experiment, one line each, in the order they
    /// ran. One experiment prints one object, and many can be read as they stream
    /// (`jq -c .decision.verdict`).
    fn json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for r in &self.runs {
            match serde_json::to_vec(&r.metrics) {
                Ok(mut line) => out.append(&mut line),
                Err(e) => out.extend(
                    format!("{{\"error\": \"could not serialize the metrics: {e}\"}}").bytes(),
                ),
            }
            out.push(b'\n');
        }
        out
    }

    /// Each run's summary, rendered from its report's document (see `report::terminal`).
    fn human(&self) -> String {
        let mut s = String::new();
        for run in &self.runs {
            s += &terminal::render(
                &run.metrics.experiment,
                &run.document,
                &run.run_dir,
                &run.report_dir.join("report.html"),
            );
            s += "\n";
        }
        for d in &self.sweeps {
            s += &format!(
                "{} → {}\n  sweep: {}\n\n",
                d.sweep.experiment,
                d.run_dir.display(),
                crate::report::sweep::sentence(&d.sweep)
            );
        }
        if let Some(index) = &self.index {
            s += &format!("index of every report: {}\n", index.display());
        }
        s
    }
}

impl super::Run for RunArgs {
    const PURGE_DELAY_MS: Option<i64> = Some(0);
    const HUGE_PAGES: bool = false;

    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        Ok(ctx.answer(
            &run(&self, &ctx.timer, ctx.progress)?,
            crate::exit::Verdict::Pass,
        ))
    }
}
