//! The `calibench` binary: parse arguments, run the command, report errors, exit.

use std::process::ExitCode;

use clap::Parser;

use calibench::commands::Cli;
use calibench::{exit, output};

/// mimalloc rather than glibc's malloc: a large replay builds and drops millions of small
/// strings, which glibc's allocator serves several times slower (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    /// mimalloc's option setter (`mimalloc.h`), in the library the allocator links.
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// `mi_option_purge_delay` in `mimalloc.h` (the same in its v2 and v3): how long freed memory
/// is kept from the operating system, in milliseconds.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

fn main() -> ExitCode {
    // Usage errors exit 2 from clap itself; --help and --version exit 0.
    let cli = Cli::parse();
    output::set_color(cli.color);
    // mimalloc 3 keeps freed pages for a second before giving them back. Replaying a corpus
    // frees the returns, parse buffers and merge scratch as it goes while its rows grow, and
    // that second is a few hundred MB of peak memory on a million findings; even 10 ms left the
    // peak 30-80 MB higher, by how the threads happened to run (docs/benchmarks.md). So the
    // commands that replay say how soon they give freed pages back (`Run::PURGE_DELAY_MS`):
    // at once, but for a sweep, which takes them again at its next point. `alpha`, which
    // allocates its table once, keeps the default: there the prompt return only costs page
    // faults. An explicit MIMALLOC_PURGE_DELAY in the environment wins.
    let delay = cli.command.purge_delay_ms();
    if let (Some(delay), None) = (delay, std::env::var_os("MIMALLOC_PURGE_DELAY")) {
        // SAFETY: sets a plain integer option; mimalloc reads options atomically.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, delay as std::ffi::c_long) };
    }
    // Transparent huge pages off for a command that reads a whole corpus (`Run::HUGE_PAGES`):
    // the million-finding run peaked 13-25 MiB lower and no slower, `validate` 15 MiB lower
    // (docs/benchmarks.md). mimalloc makes the same call when
    // MIMALLOC_ALLOW_THP=0, which is read before `main`: an explicit setting there wins.
    #[cfg(target_os = "linux")]
    if !cli.command.huge_pages() && std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: PR_SET_THP_DISABLE takes integers only and changes how later page faults
        // are served, not any memory the program holds.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
    let json = cli.json;
    let result = cli.run();
    if let Err(e) = &result {
        output::print_error(&e.to_string());
        // A CI script reading --json output parses every outcome: an error is an object too.
        if json {
            println!("{}", serde_json::json!({ "error": e.to_string() }));
        }
    }
    exit::status(&result)
}
