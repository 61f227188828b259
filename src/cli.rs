//! Command-line arguments (docs/reference.md). Parsing only: what each command does lives in `commands`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::input::reliability::Layout;
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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay experiments: metrics, trust verdict, tables and reports
    /// (every corpora/*/experiment.toml when none is named)
    Run(RunArgs),
    /// CI regression gate: check a run's metrics against a policy of bounds
    Gate(GateArgs),
    /// Store a run's metrics as the accepted baseline that gate policies compare against
    Accept(AcceptArgs),
    /// Krippendorff's α of reliability data (long or wide CSV, or long JSON Lines)
    Alpha(AlphaArgs),
    /// Trust verdict of a judge panel: do the judges agree enough to be believed?
    Trust(TrustArgs),
    /// Calibration (ECE, MCE, Brier, AUROC, reliability bins) of a confidence,correct CSV
    Calibrate(CalibrateArgs),
    /// List every problem in a corpus or experiment, with file and line
    Validate(ValidateArgs),
    /// Run reviewer or agent commands live and record a replayable corpus
    Collect(CollectArgs),
    /// Re-render a run's report from its metrics, without recomputing
    Report(ReportArgs),
    /// Print the JSON Schema of what a live command must print, or of a corpus file's line
    Schema(SchemaArgs),
    /// How many targets (or queries) the next A/B needs, from a pilot run's paired differences
    Plan(PlanArgs),
    /// Read Inspect, promptfoo or lm-eval logs (or a plain table) as one arm's scores in a corpus
    Import(ImportArgs),
    /// Start a corpus: example lines and a commented experiment.toml that runs as written
    Init(InitArgs),
    /// Print the reference of every input file, experiment key, metric and command (Markdown;
    /// docs/reference.md is its output)
    Reference,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Writes DIR/experiment.toml (every key of its kind, with its default and what it \
means) and a few example lines of each corpus file the kind reads; `calibench run DIR` runs them. \
Exit status: 0 written, 2 DIR is not empty (nothing is written)."
)]
pub struct InitArgs {
    /// The folder to make (default: the current one, which must then be empty)
    pub dir: Option<PathBuf>,
    /// What the corpus holds
    #[arg(long, value_enum)]
    pub kind: crate::generate::starter::InitKind,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Writes CORPUS_DIR/scores.jsonl, keeping the arms it holds. Scores come from the \
samples, never from a log's summary; a sample that errored or carries no score is missing, never 0. \
Exit status: 0 imported, 2 a log or the folder cannot be read as one arm (nothing is written)."
)]
pub struct ImportArgs {
    /// The logs' format
    #[arg(value_enum)]
    pub format: crate::import::Format,
    /// The log files: Inspect .eval or .json; promptfoo results.json; lm-eval samples_*.jsonl
    /// (and results_*.json); a .csv or .jsonl table
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// The label the scores are filed under (an experiment's arm `source`)
    #[arg(long)]
    pub arm: String,
    /// The corpus folder (created if needed)
    #[arg(long, value_name = "CORPUS_DIR")]
    pub into: PathBuf,
    /// Import an arm the folder already holds again, dropping its earlier lines
    #[arg(long)]
    pub replace: bool,
    /// promptfoo: the prompt × provider cell to read (provider id, prompt label, or
    /// `PROVIDER | PROMPT LABEL`), when the file holds several
    #[arg(long, value_name = "CELL")]
    pub pick: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Experiment files; none means every corpora/*/experiment.toml
    pub experiments: Vec<PathBuf>,
    #[command(flatten)]
    pub options: crate::pipeline::RunOptions,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 every check passed, 1 a check failed, 2 bad input \
                        (nothing is run or written).\n\
                        The policy: --policy FILE, else the experiment's [gate] table, else a \
                        gate.toml beside the experiment (for a run directory: the experiment \
                        named in its manifest.json)."
)]
pub struct GateArgs {
    /// A run directory (runs/<run-id>), or an experiment.toml to run first
    #[arg(required_unless_present = "list_metrics")]
    pub run_dir_or_experiment: Option<PathBuf>,
    /// Policy file (default: the experiment's [gate] table, or gate.toml beside it)
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Write a JUnit XML report, one test case per check
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when set)
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Print every metric path a check can name, and exit
    #[arg(long, conflicts_with_all = ["policy", "junit", "summary"])]
    pub list_metrics: bool,
    #[command(flatten)]
    pub options: crate::pipeline::RunOptions,
}

#[derive(Debug, Args)]
pub struct AcceptArgs {
    /// The run whose metrics become the accepted baseline (runs/<run-id>)
    pub run_dir: PathBuf,
    /// Where to store it (default: `accepted` beside the run, e.g. runs/accepted)
    #[arg(long)]
    pub to: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AlphaArgs {
    /// Reliability data: long CSV (unit,rater,value), wide CSV (rater,<unit>,…) or long JSON Lines
    pub file: PathBuf,
    /// Level of measurement
    #[arg(long, value_enum, default_value_t = LevelArg::Interval)]
    pub level: LevelArg,
    /// Table layout; auto reads long when the header has unit, rater and value
    #[arg(long, value_enum, default_value_t = LayoutArg::Auto)]
    pub layout: LayoutArg,
    /// Read a wide CSV with one row per unit (header `unit,<rater1>,<rater2>,…`), as R irr,
    /// irrCAC, SPSS KALPHA and pandas write it
    #[arg(long, conflicts_with = "layout")]
    pub units_as_rows: bool,
    /// Bootstrap replicates for the 95% interval; 0 for none; at most 1000000
    #[arg(long, default_value_t = 2000, value_parser = crate::pipeline::replicates)]
    pub bootstrap: usize,
    /// Bootstrap method: resample units, or KALPHA's coincidence resampling
    #[arg(long, value_enum, default_value_t = MethodArg::Units)]
    pub bootstrap_method: MethodArg,
    /// Seed of the bootstrap: same seed, same interval
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads of the bootstrap (default: the CPUs available); the interval never
    /// depends on it
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Judge verdicts (verdicts.jsonl)
    pub verdicts: PathBuf,
    /// Fail when the judges' α is below this
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    pub irr_floor: f64,
    /// Fail when an item's spread between judges is above this (strictly)
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub spread_ceiling: f64,
    /// Fail when an item has fewer surviving judges than this
    #[arg(long, default_value_t = 3)]
    pub min_survivors: usize,
    /// Level of measurement of the judges' α
    #[arg(long, value_enum, default_value_t = LevelArg::Interval)]
    pub level: LevelArg,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// CSV with confidence (0..1) and correct (0/1 or true/false) columns
    pub file: PathBuf,
    /// Number of equal-width, right-closed bins
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub bins: u32,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// A corpus directory or an experiment.toml
    pub corpus_or_experiment: PathBuf,
    /// Set a key of experiment.toml, as `run --set` does (repeatable)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<crate::input::toml::Override>,
}

#[derive(Debug, Args)]
pub struct CollectArgs {
    /// Experiment with a [collect] table (a file, or a folder holding experiment.toml)
    pub experiment: PathBuf,
    /// Where run directories are written
    #[arg(long, default_value = "runs")]
    pub runs_dir: PathBuf,
    /// Name of the run directory (default: derived from the experiment and time)
    #[arg(long, conflicts_with = "resume")]
    pub run_id: Option<String>,
    /// Continue an interrupted collection in runs-dir/RUN_ID, skipping what is recorded
    #[arg(long, value_name = "RUN_ID")]
    pub resume: Option<String>,
    /// Print the calls that would run, and run none
    #[arg(long)]
    pub dry_run: bool,
    /// Run one stage only: reviewers (starts a run, as collect does), validators or judges
    /// (over the run named by --resume)
    #[arg(long, value_enum, value_name = "NAME")]
    pub stage: Option<crate::collect::plan::Stage>,
}

#[derive(Debug, Args)]
#[command(after_help = schema_help())]
pub struct SchemaArgs {
    /// What to describe: a command's output, a corpus file's stem, or experiment (listed below)
    pub name: String,
    /// The confidence scale a finding is held to (review-return, reviews)
    #[arg(long, value_enum)]
    pub scale: Option<ScaleArg>,
    /// The review mode whose finding fields apply (review-return, reviews)
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// The dimensions a judge scores, comma-separated (judge-verdict)
    #[arg(long, value_name = "A,B")]
    pub dimensions: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScaleArg {
    Anchor,
    Float,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Doc,
    Code,
}

#[derive(Debug, Args)]
#[command(
    after_help = "The needed number is ⌈((z₁₋α/₂ + z_power) · sd / |effect|)²⌉ (at least 2), sd \
being the standard deviation of the pilot's paired differences, or the fewest pairs with which \
the sign test can reach alpha, when that is more (the output says which binds); 10,000 simulated \
studies of that size, resampling those differences shifted to the effect and seeded by the run's \
seed, check it.\n\
Exit status: 0 done, 2 the metric or the effect cannot be planned for (named in the message)."
)]
pub struct PlanArgs {
    /// A pilot run's directory (runs/<run-id>)
    pub run_dir: PathBuf,
    /// The metric to plan for: a key of the run's review.delta or queries.delta, or an
    /// imported scorer's name (scores.delta)
    #[arg(long)]
    pub metric: String,
    /// The true mean difference to detect, treatment − baseline (default: the pilot's observed
    /// mean difference)
    #[arg(long, allow_negative_numbers = true, value_parser = finite)]
    pub effect: Option<f64>,
    /// The chance of detecting the effect
    #[arg(long, default_value_t = 0.8, value_parser = probability)]
    pub power: f64,
    /// The two-sided level of the test
    #[arg(long, default_value_t = 0.05, value_parser = probability)]
    pub alpha: f64,
    /// Worker threads of the simulation (default: the CPUs available); the result never
    /// depends on it
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// A finite number.
fn finite(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(format!("`{text}` is not a finite number")),
    }
}

/// A probability strictly between 0 and 1.
fn probability(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => Err(format!("`{text}` is not a number strictly between 0 and 1")),
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory (runs/<run-id>)
    pub run_dir: PathBuf,
    /// Where reports are written (the report goes to <reports-dir>/<run-id>/)
    #[arg(long, default_value = "reports")]
    pub reports_dir: PathBuf,
    /// Write no plots
    #[arg(long)]
    pub no_plots: bool,
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

/// `schema --help`'s list of names, from the names `schema` knows.
pub(crate) fn schema_help() -> String {
    format!(
        "Names: {} (review-return with --scale and --mode, judge-verdict with --dimensions); the corpus files {} (reviews optionally with --scale and --mode); experiment for experiment.toml.",
        crate::collect::RETURNS.join(", "),
        crate::corpus::schema::stems().join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
