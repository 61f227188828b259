//! The `calibench` binary: parse arguments, run the command, report errors, exit.

use std::process::ExitCode;

use clap::Parser;

use calibench::{cli::Cli, commands, exit, output};

fn main() -> ExitCode {
    // Usage errors exit 2 from clap itself; --help and --version exit 0.
    let cli = Cli::parse();
    let result = commands::dispatch(cli);
    if let Err(e) = &result {
        output::print_error(&e.to_string());
    }
    exit::status(&result)
}
