//! One module per command, thin: each declares its arguments (a clap `Args` struct, whose doc
//! comments are its `--help`) and how it runs ([`Run`]), calls the pipeline and the core, and
//! returns what `output` renders. The list of commands below is the one place a command is
//! named: the command line, the dispatch and whether it replays corpora derive from it.

pub mod accept;
pub mod alpha;
pub mod alttest;
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
pub mod sweep;
pub mod trust;
pub mod validate;

use clap::{Parser, ValueEnum};

use crate::error::Error;
use crate::exit::Verdict;
use crate::input::reliability::Layout;
use crate::output::{self, Render, Style};
use crate::pipeline::Timer;
use crate::stats::alpha::Level;
use crate::stats::bootstrap::Method;

#[derive(Debug, Parser)]
#[command(
    name = "calibench",
    version,
    about = "Tell whether a change to how LLM reviewers or agents score confidence is better, \
             before it ships",
    long_about = "calibench replays recorded corpora (reviewer returns, agent query traces, judge \
                  verdicts) through a baseline and a treatment configuration, computes dispersion, \
                  promotion, routing, recovery-gate frequency, calibration and Krippendorff's α, \
                  gates the result through a trust verdict, and writes reports.\n\n\
                  Exit status: 0 done (or: passed, trustworthy), 1 a gate check failed or the judges \
                  are not trustworthy, 2 bad input or usage.",
    after_help = "Colour: --color auto (the default: on a terminal, unless NO_COLOR is set), always or never. Progress bars go to stderr, only on a terminal."
)]
pub struct Cli {
    /// When to colour errors and warnings on stderr
    #[arg(long, global = true, value_enum, default_value_t = crate::output::ColorChoice::Auto)]
    pub color: crate::output::ColorChoice,

    /// Print the machine-readable result as JSON on stdout (and nothing else there)
    #[arg(long, global = true)]
    pub json: bool,

    /// Print no human summary and no progress; errors still go to stderr
    #[arg(long, short, global = true)]
    pub quiet: bool,

    /// Print how long each phase took to stderr (used by the benchmark script)
    #[arg(long, global = true, hide = true)]
    pub timings: bool,

    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Runs the command the user asked for; returns its verdict or the error to report.
    pub fn run(self) -> Result<crate::exit::Verdict, crate::error::Error> {
        let ctx = Context {
            style: crate::output::Style {
                json: self.json,
                quiet: self.quiet,
            },
            timer: crate::pipeline::Timer::new(self.timings),
            // Progress bars go to stderr, and only to a terminal a person is watching.
            progress: !self.quiet
                && !self.json
                && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        };
        let answer = self.command.run(&ctx)?;
        crate::output::print(&answer.printed).map_err(crate::error::Error::Write)?;
        Ok(answer.verdict)
    }
}

/// What a command runs with beside its arguments.
pub struct Context {
    pub style: Style,
    pub timer: Timer,
    /// Draw progress bars on stderr (a person is watching a terminal).
    pub progress: bool,
}

impl Context {
    /// `result` rendered as the user asked, with the exit status the command decided.
    pub fn answer<R: Render>(&self, result: &R, verdict: Verdict) -> Answer {
        Answer {
            printed: output::render(result, self.style),
            verdict,
        }
    }
}

/// What a command answers: the bytes to print on stdout, and its verdict.
pub struct Answer {
    pub printed: Vec<u8>,
    pub verdict: Verdict,
}

/// A command, by its arguments.
pub trait Run {
    /// For a command that replays corpora, how many milliseconds freed memory is kept before
    /// it goes back to the system (`main.rs`); `None` keeps the allocator's default, a second.
    const PURGE_DELAY_MS: Option<i64> = None;

    /// Whether the command's memory may be served in transparent huge pages (`main.rs`). A
    /// command that reads a whole corpus and lets it go at once is better served in small
    /// pages: a huge page is faulted in, and zeroed, whole for the first byte of it written
    /// (docs/benchmarks.md).
    const HUGE_PAGES: bool = true;

    fn run(self, ctx: &Context) -> Result<Answer, Error>;
}

/// Declares the commands once: the subcommand enum (each variant's doc comment is its line in
/// `calibench --help`), its dispatch, and how soon each gives freed memory back.
macro_rules! commands {
    ($($(#[$doc:meta])* $variant:ident($args:ty),)*) => {
        #[derive(Debug, clap::Subcommand)]
        pub enum Command {
            $($(#[$doc])* $variant($args),)*
        }

        impl Command {
            /// How soon the command gives freed memory back ([`Run::PURGE_DELAY_MS`]).
            pub fn purge_delay_ms(&self) -> Option<i64> {
                match self {
                    $(Command::$variant(_) => <$args as Run>::PURGE_DELAY_MS,)*
                }
            }

            /// Whether the command's memory may be in transparent huge pages
            /// ([`Run::HUGE_PAGES`]).
            pub fn huge_pages(&self) -> bool {
                match self {
                    $(Command::$variant(_) => <$args as Run>::HUGE_PAGES,)*
                }
            }

            pub fn run(self, ctx: &Context) -> Result<Answer, Error> {
                match self {
                    $(Command::$variant(args) => args.run(ctx),)*
                }
            }
        }
    };
}

commands! {
    /// Replay experiments: metrics, trust verdict, tables and reports
    /// (every corpora/*/experiment.toml when none is named)
    Run(run::RunArgs),
    /// CI regression gate: check a run's metrics against a policy of bounds
    Gate(gate::GateArgs),
    /// Store a run's metrics as the accepted baseline that gate policies compare against
    Accept(accept::AcceptArgs),
    /// Krippendorff's α of reliability data (long or wide CSV, or long JSON Lines)
    Alpha(alpha::AlphaArgs),
    /// Can a model replace the human annotators? The alternative annotator test on reliability
    /// data (as alpha reads it)
    Alttest(alttest::AltTestArgs),
    /// Trust verdict of a judge panel: do the judges agree enough to be believed?
    Trust(trust::TrustArgs),
    /// Calibration (ECE, MCE, Brier, AUROC, reliability bins) of a confidence,correct CSV
    Calibrate(calibrate::CalibrateArgs),
    /// List every problem in a corpus or experiment, with file and line
    Validate(validate::ValidateArgs),
    /// Run reviewer or agent commands live and record a replayable corpus
    Collect(collect::CollectArgs),
    /// Join collections into one corpus: the shards of one plan (collect --shard K/N), or
    /// collections of different arm labels (--arm LABEL=DIR)
    Merge(collect::merge::MergeArgs),
    /// Re-render a run's report from its metrics, without recomputing
    Report(report::ReportArgs),
    /// Print the JSON Schema of what a live command must print, or of a corpus file's line
    Schema(schema::SchemaArgs),
    /// How many targets (or queries) the next A/B needs, from a pilot run's paired differences
    Plan(plan::PlanArgs),
    /// Which threshold should ship: replay one arm over a grid of policy values, choose on part
    /// of the targets and check the choice on the rest
    Sweep(sweep::SweepArgs),
    /// Read Inspect, promptfoo or lm-eval logs (or a plain table) as one arm's scores in a corpus
    Import(import::ImportArgs),
    /// Start a corpus: example lines and a commented experiment.toml that runs as written
    Init(init::InitArgs),
    /// Print the reference of every input file, experiment key, metric and command (Markdown;
    /// docs/reference.md is its output)
    Reference(reference::ReferenceArgs),
}

/// A finite number.
pub(crate) fn finite(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(format!("`{text}` is not a finite number")),
    }
}

/// A probability strictly between 0 and 1.
pub(crate) fn probability(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => Err(format!("`{text}` is not a number strictly between 0 and 1")),
    }
}

/// The most extreme level or power a study can be sized at: within it every quantile and power
/// calibench computes holds to the last digits, and no search runs for minutes; past it no
/// study could be run anyway.
pub(crate) const EXTREME: f64 = 1e-12;

/// A study's level or power (`plan --alpha`, `--power`): in [1e-12, 1 − 1e-12].
pub(crate) fn study_probability(text: &str) -> Result<f64, String> {
    let x = probability(text)?;
    if !(EXTREME..=1.0 - EXTREME).contains(&x) {
        return Err(format!(
            "`{text}` is beyond what a study can be sized at: give a number from 1e-12 to 1 − 1e-12"
        ));
    }
    Ok(x)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LevelArg {
    Nominal,
    Ordinal,
    Interval,
    Ratio,
}

impl From<LevelArg> for Level {
    fn from(l: LevelArg) -> Self {
        match l {
            LevelArg::Nominal => Level::Nominal,
            LevelArg::Ordinal => Level::Ordinal,
            LevelArg::Interval => Level::Interval,
            LevelArg::Ratio => Level::Ratio,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    Auto,
    Long,
    Wide,
}

impl From<LayoutArg> for Layout {
    fn from(l: LayoutArg) -> Self {
        match l {
            LayoutArg::Auto => Layout::Auto,
            LayoutArg::Long => Layout::Long,
            LayoutArg::Wide => Layout::Wide,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    Units,
    Kalpha,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Self {
        match m {
            MethodArg::Units => Method::Units,
            MethodArg::Kalpha => Method::Kalpha,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    // The commands that read a whole corpus and let it go at once run in small pages; the
    // rest (a sweep takes its freed pages again at its next point) keep huge ones.
    #[test]
    fn run_and_validate_turn_huge_pages_off_and_the_others_keep_them() {
        let huge = |args: &[&str]| {
            let cli = Cli::try_parse_from([&["calibench"], args].concat()).unwrap();
            cli.command.huge_pages()
        };
        assert!(!huge(&["run"]));
        assert!(!huge(&["validate", "corpus"]));
        assert!(huge(&[
            "sweep",
            "e.toml",
            "--arm",
            "treatment",
            "--vary",
            "review.actionable_from=0:9:1"
        ]));
        assert!(huge(&["alpha", "a.csv"]));
    }
}
