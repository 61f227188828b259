//! One module per command: each reads its inputs, calls the pure core, and returns a result
//! that `output` renders.

pub mod accept;
pub mod alpha;
pub mod calibrate;
pub mod collect;
pub mod gate;
pub mod import;
pub mod init;
pub mod plan;
pub mod reference;
pub mod report;
pub mod run;
pub mod schema;
pub mod trust;
pub mod validate;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cli::{Cli, Command};
use crate::error::Error;
use crate::exit::Verdict;
use crate::output::{self, Style};

/// Runs the command the user asked for; returns its verdict or the error to report.
pub fn dispatch(cli: Cli) -> Result<Verdict, Error> {
    let style = Style {
        json: cli.json,
        quiet: cli.quiet,
    };
    let timer = Timer::new(cli.timings);
    // Progress bars go to stderr, and only to a terminal a person is watching.
    let progress = !cli.quiet && !cli.json && std::io::stderr().is_terminal();
    match cli.command {
        Command::Alpha(args) => emit(&alpha::run(&args, &timer, progress)?, style),
        Command::Calibrate(args) => emit(&calibrate::run(&args)?, style),
        Command::Run(args) => emit(&run::run(&args, &timer, progress)?, style),
        Command::Gate(args) if args.list_metrics => emit(&gate::list_metrics(), style),
        Command::Gate(args) => {
            let (report, verdict) = gate::run(&args, &timer)?;
            emit(&report, style)?;
            Ok(verdict)
        }
        Command::Accept(args) => emit(&accept::run(&args)?, style),
        Command::Trust(args) => {
            let (verdict, outcome) = trust::run(&args)?;
            emit(&verdict, style)?;
            Ok(outcome)
        }
        Command::Validate(args) => {
            let validation = validate::run(&args)?;
            emit(&validation, style)?;
            Ok(validation.verdict())
        }
        Command::Collect(args) => {
            let report = collect::run(&args, progress)?;
            emit(&report, style)?;
            Ok(if report.interrupted {
                Verdict::Interrupted
            } else {
                Verdict::Pass
            })
        }
        Command::Report(args) => emit(&report::run(&args)?, style),
        Command::Schema(args) => emit(&schema::run(&args)?, style),
        Command::Plan(args) => emit(&plan::run(&args)?, style),
        Command::Import(args) => emit(&import::run(&args)?, style),
        Command::Init(args) => emit(&init::run(&args)?, style),
        Command::Reference => emit(&reference::run()?, style),
    }
}

fn emit<R: output::Render>(result: &R, style: Style) -> Result<Verdict, Error> {
    output::print(&output::render(result, style)).map_err(Error::Write)?;
    Ok(Verdict::Pass)
}

/// The experiment file a path names: the path itself, or `experiment.toml` in a folder.
pub(crate) fn experiment_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("experiment.toml")
    } else {
        path.to_path_buf()
    }
}

/// Reads a whole input file, naming it in the error.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
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

    /// Reports the time since the previous lap (or the start) under `phase`, and the peak
    /// resident memory so far where the system says it (Linux's `VmHWM`).
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
            eprintln!(
                "timing {phase}: {:.3} s (total {:.3} s{cpu}{peak})",
                since.elapsed().as_secs_f64(),
                self.start.elapsed().as_secs_f64()
            );
        }
        *since = Instant::now();
    }
}
