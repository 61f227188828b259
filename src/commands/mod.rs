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

use crate::pipeline::Timer;
use std::io::IsTerminal;

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
