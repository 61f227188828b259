//! The `calibench` binary: parse arguments, run the command, report errors, exit.

use std::process::ExitCode;

use clap::Parser;

use calibench::{cli::Cli, commands, exit, output};

/// mimalloc rather than glibc's malloc: a large replay builds and drops millions of small
/// strings, which glibc's allocator serves several times slower (README, Benchmarks).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Usage errors exit 2 from clap itself; --help and --version exit 0.
    let cli = Cli::parse();
    let result = commands::dispatch(cli);
    if let Err(e) = &result {
        output::print_error(&e.to_string());
    }
    exit::status(&result)
}
