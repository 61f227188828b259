//! The pipeline of a run, above the layers it composes: an experiment and its corpus loaded
//! and checked against each other (`load`), replayed and analysed, written as a run directory
//! and rendered as a report (`run`), and a stored run read back (`stored`). `run`, `gate`,
//! `collect`, `report`, `plan` and `accept` call it instead of each other.

mod account;
pub mod calls;
mod checks;
mod collection;
mod items;
pub mod load;
pub mod loaded;
pub mod read;
pub mod run;
pub mod sequential;
pub mod stored;
pub mod sweep;
mod tally;
mod units;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::Error;
use crate::stats::bootstrap::MAX_REPLICATES;

/// How a run is made and where it is written: shared by `run` and `gate EXPERIMENT`.
#[derive(Clone, Debug, clap::Args)]
pub struct RunOptions {
    /// Where run directories are written
    #[arg(long, default_value = "runs")]
    pub runs_dir: PathBuf,
    /// Where reports are written
    #[arg(long, default_value = "reports")]
    pub reports_dir: PathBuf,
    /// Name of the run directory (default: derived from the experiment and time)
    #[arg(long)]
    pub run_id: Option<String>,
    /// Refuse the run on any caveat of its inputs (a malformed finding, an unpaired target, a
    /// reviewer in one arm only) instead of running with it
    #[arg(long)]
    pub strict: bool,
    /// Bootstrap replicates for every interval (overrides the experiment; at most 1000000)
    #[arg(long, value_parser = replicates)]
    pub bootstrap: Option<usize>,
    /// Seed for every bootstrap (overrides the experiment)
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write no plots
    #[arg(long)]
    pub no_plots: bool,
    /// Replay this corpus folder instead of the experiment's `corpus` (e.g. a collect run
    /// directory); one experiment only
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Replay a collection that holds part of its plan: one that did not finish, one shard of
    /// several, one whose lines were deleted; a caveat on every decision line says so
    #[arg(long, alias = "allow-incomplete")]
    pub allow_partial: bool,
    /// Worker threads for bootstraps (default: the CPUs available); the figures never depend on it
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Set a key of experiment.toml for this run, as if the file said it, checked as the file
    /// is (repeatable): --set arms.treatment.review.actionable_from=50
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<crate::input::toml::Override>,
    /// Also decide sequentially: replay the units in arrival order and report, per decision
    /// metric, the anytime-valid confidence sequence and the unit at which the decision was
    /// reached (docs/guides/stop-when-you-know.md)
    #[arg(long)]
    pub sequential: bool,
    /// Replay the A/A experiment: the baseline against itself, its second copy reading
    /// `<baseline label>-again` (a `collect --aa` collection); what `noise_floor` names
    #[arg(long)]
    pub aa: bool,
}

/// The worker threads to use: `--threads`, else every CPU available.
pub fn threads(flag: Option<u16>) -> usize {
    flag.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    )
}

/// A `--bootstrap` count: a whole number up to [`MAX_REPLICATES`].
pub fn replicates(text: &str) -> Result<usize, String> {
    let n: usize = text
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number of replicates"))?;
    if n > MAX_REPLICATES {
        return Err(format!(
            "{n} replicates is more than the {MAX_REPLICATES} allowed (2000 give stable 95% intervals)"
        ));
    }
    Ok(n)
}

/// The experiment file a path names: the path itself, or `experiment.toml` in a folder.
pub fn experiment_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("experiment.toml")
    } else {
        path.to_path_buf()
    }
}

/// Reads a whole input file, naming it in the error.
pub fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| Error::read(path, e))
}

/// Phase timings on stderr for the hidden `--timings` flag; silent otherwise.
pub struct Timer {
    on: bool,
    start: Instant,
}

impl Timer {
    pub fn new(on: bool) -> Self {
        Timer {
            on,
            start: Instant::now(),
        }
    }

    /// Reports the time since the previous lap (or the start) under `phase`, the peak resident
    /// memory so far where the system says it (Linux's `VmHWM`), and the system's monotonic
    /// clock at the lap (`CLOCK_MONOTONIC`, the clock `perf record -k mono` stamps its samples
    /// with), so that a profile's samples can be placed in their phase exactly.
    pub fn lap(&self, phase: &str, since: &mut Instant) {
        if self.on {
            let peak = std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|s| {
                    let kb = s.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
                    kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok()
                })
                .map(|kb| format!(", peak {} MB", kb / 1024))
                .unwrap_or_default();
            // SAFETY: getrusage only writes the struct it is given.
            let cpu = unsafe {
                let mut usage: libc::rusage = std::mem::zeroed();
                (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then(|| {
                    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
                    s(usage.ru_utime) + s(usage.ru_stime)
                })
            };
            let cpu = cpu.map_or_else(String::new, |c| format!(", cpu {c:.3} s"));
            // SAFETY: clock_gettime only writes the struct it is given.
            let at = unsafe {
                let mut now: libc::timespec = std::mem::zeroed();
                (libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) == 0)
                    .then(|| now.tv_sec as f64 + now.tv_nsec as f64 / 1e9)
            };
            let at = at.map_or_else(String::new, |t| format!(", at {t:.6} s monotonic"));
            eprintln!(
                "timing {phase}: {:.3} s (total {:.3} s{cpu}{peak}{at})",
                since.elapsed().as_secs_f64(),
                self.start.elapsed().as_secs_f64()
            );
        }
        *since = Instant::now();
    }
}

/// Claims a run id under `--runs-dir` whose report folder under `--reports-dir` is free: a
/// report there belongs to a run of another runs folder (a run of this one would have taken
/// the id), and writing this run's report would replace it without a word.
pub fn claim_with_report(
    options: &RunOptions,
    id: crate::rundir::RunId,
) -> Result<crate::rundir::Claim, Error> {
    let claim = crate::rundir::Claim::new(&options.runs_dir, id)?;
    let report = options.reports_dir.join(claim.id());
    if report.exists() {
        return Err(crate::error::InputError::new(
            report.display().to_string(),
            format!(
                "already holds the report of a run `{}` that is not in {}: this run's report would replace it",
                claim.id(),
                options.runs_dir.display()
            ),
        )
        .field("--run-id")
        .hint("give another --run-id, or another --reports-dir; `calibench report RUN_DIR` re-renders a run's own report")
        .into());
    }
    Ok(claim)
}
