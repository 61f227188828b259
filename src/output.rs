//! Terminal manners: results on stdout, as JSON with `--json` or as a human
//! summary otherwise; errors on stderr, in colour only on a terminal and never under NO_COLOR;
//! a closed pipe (`calibench alpha … | head -1`) ends output quietly rather than as an error.

use std::io::{self, IsTerminal, Write};

use serde::Serialize;

/// What every command result offers: a machine form (serde) and a human one.
pub trait Render: Serialize {
    fn human(&self) -> String;

    /// The machine form `--json` prints: pretty JSON, unless a command streams several
    /// results (then JSON Lines, one object per line).
    fn json(&self) -> Vec<u8> {
        // Serializing plain data structures cannot fail; a failure would be a bug worth seeing.
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_else(|e| {
            format!("{{\"error\": \"could not serialize the result: {e}\"}}").into_bytes()
        });
        out.push(b'\n');
        out
    }
}

/// How the user asked for output.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    pub json: bool,
    pub quiet: bool,
}

/// Renders `result` as the user asked. Pure: returns the bytes to print.
pub fn render<R: Render>(result: &R, style: Style) -> Vec<u8> {
    if style.json {
        result.json()
    } else if style.quiet {
        Vec::new()
    } else {
        // Names and reasons from a corpus reach the terminal as text, never as control
        // sequences (docs/reference.md).
        crate::text::terminal(&result.human())
            .into_owned()
            .into_bytes()
    }
}

/// Writes to stdout; a reader that went away (broken pipe) is not an error.
pub fn print(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// When to colour what calibench writes to stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set (no-color.org)
    #[default]
    Auto,
    Always,
    Never,
}

/// `--color`, as set once at start: 0 auto, 1 always, 2 never.
static COLOR: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Sets `--color` for the process (the binary does, once, before any output).
pub fn set_color(choice: ColorChoice) {
    let v = match choice {
        ColorChoice::Auto => 0,
        ColorChoice::Always => 1,
        ColorChoice::Never => 2,
    };
    COLOR.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// Whether stderr is coloured: as `--color` says, and by default on a terminal with NO_COLOR
/// unset or empty (no-color.org).
pub fn stderr_color() -> bool {
    match COLOR.load(std::sync::atomic::Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// A bar on stderr of `len` steps drawn by `template` (indicatif's syntax), ticking on its own
/// so that the spinner and elapsed time move between steps. Every long-running command draws
/// its progress through this one style.
pub fn progress_bar(len: usize, template: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// Prints an error message to stderr with an `error:` prefix.
pub fn print_error(message: &str) {
    print_labelled("error", "1;31", message);
}

/// Prints a warning to stderr with a `warning:` prefix: the command goes on, but the user
/// should look (a file that is probably transposed, say).
pub fn print_warning(message: &str) {
    print_labelled("warning", "1;33", message);
}

/// `label: message` on stderr, the label in the SGR colour `sgr` when colour is allowed.
fn print_labelled(label: &str, sgr: &str, message: &str) {
    let prefix = if stderr_color() {
        format!("\x1b[{sgr}m{label}:\x1b[0m")
    } else {
        format!("{label}:")
    };
    let _ = writeln!(io::stderr(), "{prefix} {}", crate::text::terminal(message));
}

/// Formats an optional number with `places` decimals, or `—` when absent.
pub fn fmt_opt(x: Option<f64>, places: usize) -> String {
    x.map_or_else(|| "—".to_string(), |v| format!("{v:.places$}"))
}

/// An argument as a POSIX shell would need it, for display only.
pub fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/=:,+@".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}
