//! `calibench gate RUN_DIR_OR_EXPERIMENT [--policy FILE]` (docs/guides/ci-gate.md): checks a run's metrics
//! against a policy and exits 0 (every check passed), 1 (a check failed) or 2 (bad input).
//! Everything it reads — the policy, the accepted runs — is read and checked before an
//! experiment is run, so a bad policy costs nothing and writes nothing.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::corpus::ledger::Caveat;
use crate::error::{Error, InputError};
use crate::exit::Verdict;
use crate::gate::format::{self, About};
use crate::gate::{self, policy, Outcome, Policy};
use crate::output::Render;
use crate::pipeline::{read_file, Timer};
use crate::rundir::manifest::{self, Manifest};
use crate::rundir::{self, replace_file};

#[derive(Debug, clap::Args)]
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
    pub run_dir_or_experiment: Option<std::path::PathBuf>,
    /// Policy file (default: the experiment's [gate] table, or gate.toml beside it)
    #[arg(long)]
    pub policy: Option<std::path::PathBuf>,
    /// Write a JUnit XML report, one test case per check
    #[arg(long)]
    pub junit: Option<std::path::PathBuf>,
    /// Write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when set)
    #[arg(long)]
    pub summary: Option<std::path::PathBuf>,
    /// Print every metric path a check can name, and exit
    #[arg(long, conflicts_with_all = ["policy", "junit", "summary"])]
    pub list_metrics: bool,
    #[command(flatten)]
    pub options: crate::pipeline::RunOptions,
}

/// What `gate` found.
#[derive(Clone, Debug, Serialize)]
pub struct GateReport {
    pub experiment: String,
    pub run_id: String,
    pub run_dir: PathBuf,
    /// `report.md` of the run, when there is one.
    pub report: Option<PathBuf>,
    /// Whether this gate ran the experiment (given one) or read a run directory.
    pub ran: bool,
    pub policy: String,
    /// The run's decision in words ("better. Precision rose …"), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The caveats of the run's inputs (docs/reference.md, "The input ledger").
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        with = "crate::corpus::ledger::stored"
    )]
    pub caveats: Vec<Caveat>,
    /// The accepted runs the policy names that are not there yet: the folder each is stored in.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub no_accepted_run: Vec<PathBuf>,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Files written: JUnit, summary, `$GITHUB_STEP_SUMMARY`.
    pub written: Vec<PathBuf>,
}

/// What the positional argument named.
enum Target {
    RunDir(PathBuf),
    Experiment(PathBuf),
}

pub fn run(args: &GateArgs, timer: &Timer) -> Result<(GateReport, Verdict), Error> {
    let Some(given) = &args.run_dir_or_experiment else {
        return Err(InputError::new("gate", "needs a run directory or an experiment").into());
    };
    let target = target(given)?;
    // A change-bound check that names no accepted run compares with the one `calibench
    // accept` stores: beside the gated run, or in the runs folder an experiment's run goes to.
    let runs = match &target {
        Target::RunDir(dir) => dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
        Target::Experiment(_) => args.options.runs_dir.clone(),
    };
    let policy = find_policy(&target, args.policy.as_deref())?.in_runs(&runs);
    let accepted = read_accepted(&policy)?;

    let (metrics, run_dir, report, ran) = match &target {
        Target::Experiment(path) => {
            crate::pipeline::run::prepare_folders(&args.options)?;
            let done = crate::pipeline::run::run_one(path, &args.options, timer)?;
            let value = serde_json::to_value(&done.metrics).map_err(|e| {
                Error::Write(std::io::Error::other(format!("metrics of the run: {e}")))
            })?;
            let report = done.report_dir.join("report.md");
            (value, done.run_dir, Some(report), true)
        }
        Target::RunDir(dir) => {
            let path = dir.join("metrics.json");
            let value = read_json(&path)?;
            crate::pipeline::stored::refuse_sweep(
                &path,
                &value,
                "a gate checks a run of an experiment",
            )?;
            let Some(run_id) = value["run_id"].as_str() else {
                return Err(InputError::new(
                    path.display().to_string(),
                    "is not a calibench metrics.json (it has no run_id)",
                )
                .field("`run_id`")
                .into());
            };
            // The id is joined to the reports folder below: one plain name only.
            rundir::check_id(run_id, &path.display().to_string())
                .map_err(|e| e.field("`run_id`"))?;
            let report = args.options.reports_dir.join(run_id).join("report.md");
            (
                value,
                dir.clone(),
                report.is_file().then_some(report),
                false,
            )
        }
    };
    // A caveat the gate cannot read is an input error, never one it leaves out.
    let caveats =
        crate::corpus::ledger::stored::read_list(&metrics["inputs"]["caveats"]).map_err(|e| {
            InputError::new(run_dir.join("metrics.json").display().to_string(), e)
                .field("`inputs.caveats`")
        })?;
    let outcome = gate::evaluate(&policy, &metrics, &accepted);
    let mut report = GateReport {
        experiment: metrics["experiment"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        run_id: metrics["run_id"].as_str().unwrap_or_default().to_string(),
        run_dir,
        report,
        ran,
        policy: policy.source.clone(),
        decision: serde_json::from_value::<crate::decision::Decision>(metrics["decision"].clone())
            .ok()
            .map(|d| crate::decision::headline(&d)),
        caveats,
        no_accepted_run: policy
            .baselines()
            .into_iter()
            .filter(|b| !b.exists())
            .map(|b| b.parent().unwrap_or(Path::new(".")).to_path_buf())
            .collect(),
        outcome,
        written: Vec::new(),
    };
    report.written = write_outputs(args, &report)?;
    let verdict = if report.outcome.passed {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    Ok((report, verdict))
}

fn target(given: &Path) -> Result<Target, Error> {
    if given.is_file() {
        return Ok(Target::Experiment(given.to_path_buf()));
    }
    if given.is_dir() {
        if given.join("metrics.json").is_file() {
            return Ok(Target::RunDir(given.to_path_buf()));
        }
        let experiment = given.join("experiment.toml");
        if experiment.is_file() {
            return Ok(Target::Experiment(experiment));
        }
        return Err(InputError::new(
            given.display().to_string(),
            "holds neither metrics.json (a run directory) nor experiment.toml",
        )
        .hint("give runs/<run-id>, or an experiment.toml to run first")
        .into());
    }
    Err(
        InputError::new(given.display().to_string(), "does not exist")
            .hint("give runs/<run-id>, or an experiment.toml to run first")
            .into(),
    )
}

/// `--policy FILE`; else the experiment's `[gate]`; else `gate.toml` beside the experiment.
/// For a run directory the experiment is the one its manifest names.
fn find_policy(target: &Target, flag: Option<&Path>) -> Result<Policy, Error> {
    if let Some(file) = flag {
        return Ok(policy::parse(file, &read_text(file)?)?);
    }
    let experiment = match target {
        Target::Experiment(p) => p.clone(),
        Target::RunDir(dir) => experiment_of(dir)?,
    };
    let in_experiment = crate::config::parse(&experiment, &read_text(&experiment)?)?.gate;
    let beside = experiment
        .parent()
        .unwrap_or(Path::new(""))
        .join("gate.toml");
    match (in_experiment, beside.is_file()) {
        (Some(_), true) => Err(InputError::new(
            experiment.display().to_string(),
            format!("has a [gate] table and {} is beside it", beside.display()),
        )
        .field("`gate`")
        .hint("keep one policy, or choose with --policy FILE")
        .into()),
        (Some(p), false) => Ok(p),
        (None, true) => Ok(policy::parse(&beside, &read_text(&beside)?)?),
        (None, false) => Err(InputError::new(
            experiment.display().to_string(),
            "has no [gate] table, and no gate.toml is beside it",
        )
        .hint("pass --policy FILE, or add a [gate] table (see docs/guides/ci-gate.md)")
        .into()),
    }
}

/// The experiment a run directory was made from, as its manifest records it.
fn experiment_of(dir: &Path) -> Result<PathBuf, Error> {
    let path = dir.join(manifest::FILE);
    let record: Manifest = crate::pipeline::stored::read_json(&path)?;
    // Older manifests record the experiment as given on the command line, which may be the
    // folder holding experiment.toml.
    let named = crate::pipeline::experiment_file(Path::new(&record.experiment_file));
    if named.is_file() {
        return Ok(named);
    }
    Err(InputError::new(
        path.display().to_string(),
        format!(
            "names the experiment {}, which is not there to read a [gate] from",
            named.display()
        ),
    )
    .field("`experiment_file`")
    .hint("run the gate from where the run was made, or pass --policy FILE")
    .into())
}

fn read_text(path: &Path) -> Result<String, Error> {
    String::from_utf8(read_file(path)?)
        .map_err(|_| InputError::new(path.display().to_string(), "is not valid UTF-8").into())
}

/// A JSON file, with the line and column of any syntax error.
fn read_json(path: &Path) -> Result<Value, Error> {
    let bytes = read_file(path)?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        InputError::new(
            path.display().to_string(),
            format!("is not valid JSON: {e}"),
        )
        .at_line(e.line() as u64)
    })?;
    Ok(value)
}

/// Every accepted run the policy compares against, each read and checked once.
fn read_accepted(policy: &Policy) -> Result<BTreeMap<PathBuf, Value>, Error> {
    let mut out = BTreeMap::new();
    for path in policy.baselines() {
        // No accepted run yet is not bad input: it is every project's first run. The checks
        // that bound a change fail, saying how to accept a run; the rest are judged as ever.
        if !path.exists() {
            continue;
        }
        let value = read_json(path)?;
        if !value["run_id"].is_string() {
            return Err(InputError::new(
                path.display().to_string(),
                "is not a calibench metrics.json (it has no run_id)",
            )
            .hint("`calibench accept RUN_DIR` stores a run's metrics.json as the baseline")
            .into());
        }
        out.insert(path.to_path_buf(), value);
    }
    Ok(out)
}

/// Writes the JUnit and Markdown files asked for, each whole or not at all, and appends the
/// summary to `$GITHUB_STEP_SUMMARY` when that is set.
fn write_outputs(args: &GateArgs, r: &GateReport) -> Result<Vec<PathBuf>, Error> {
    let report = r.report.as_ref().map(|p| p.display().to_string());
    let about = About {
        experiment: &r.experiment,
        run_id: &r.run_id,
        policy: &r.policy,
        report: report.as_deref(),
        decision: r.decision.as_deref(),
        caveats: &r.caveats,
    };
    let mut written = Vec::new();
    if let Some(path) = &args.junit {
        let xml = format::junit(&about, &r.outcome).map_err(|e| {
            Error::Write(std::io::Error::other(format!(
                "{}: could not write JUnit XML: {e}",
                path.display()
            )))
        })?;
        replace_file(path, &xml)?;
        written.push(path.clone());
    }
    let markdown = format::markdown(&about, &r.outcome);
    if let Some(path) = &args.summary {
        replace_file(path, &markdown)?;
        written.push(path.clone());
    }
    // The step summary is GitHub's page, not a file the user asked for: failing to append to
    // it is a warning, and the gate's answer (its output, its exit status, the files asked
    // for) stands.
    if let Some(step) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(step);
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(markdown.as_bytes()));
        match appended {
            Ok(()) => written.push(path),
            Err(e) => crate::output::print_warning(&format!(
                "$GITHUB_STEP_SUMMARY ({}) could not be written: {e}; the gate's answer stands (its exit status and the files asked for)",
                path.display()
            )),
        }
    }
    Ok(written)
}

impl Render for GateReport {
    fn human(&self) -> String {
        let o = &self.outcome;
        let checks = crate::text::count(o.checks.len() as u64, "check", "checks");
        let mut s = if o.passed {
            format!("gate passed: {} ({checks})\n", self.run_id)
        } else {
            format!(
                "gate FAILED: {} ({} of {checks} failed)\n",
                self.run_id, o.failed
            )
        };
        use crate::text::inline;
        if let Some(d) = &self.decision {
            s += &format!("  decision: {}.\n", inline(d));
        }
        for c in &self.caveats {
            s += &format!("  caveat ({}): {}\n", c.kind(), inline(&c.sentence()));
        }
        s += &format!("  policy: {}\n", self.policy);
        s += &format!(
            "  run:    {}{}\n",
            self.run_dir.display(),
            if self.ran { " (run now)" } else { "" }
        );
        let width = o
            .checks
            .iter()
            .map(|c| c.name.chars().count())
            .max()
            .unwrap_or(0);
        for c in &o.checks {
            s += &format!(
                "  {}  {:width$}  {}\n",
                if c.passed { "pass" } else { "FAIL" },
                inline(&c.name),
                inline(&c.message)
            );
        }
        if let Some(r) = &self.report {
            s += &format!("  report: {}\n", r.display());
        }
        for dir in &self.no_accepted_run {
            s += &format!(
                "  no accepted run yet: once this run is right, store it with `calibench accept {} --to {}`\n",
                self.run_dir.display(),
                dir.display()
            );
        }
        for w in &self.written {
            s += &format!("  wrote:  {}\n", w.display());
        }
        s
    }
}

/// `gate --list-metrics`: every path to a number a check can name.
#[derive(Clone, Debug, Serialize)]
pub struct MetricList {
    pub metrics: Vec<String>,
    /// What each `<name>` in the paths stands for.
    pub keys: BTreeMap<&'static str, &'static [&'static str]>,
}

pub fn list_metrics() -> MetricList {
    MetricList {
        metrics: gate::schema::number_patterns(),
        keys: gate::schema::key_sets().into_iter().collect(),
    }
}

impl Render for MetricList {
    fn human(&self) -> String {
        let mut s = String::from(
            "Metric paths a gate check can name. <i> is a list index from 0; {0|1} the lower or \
             upper end of an interval;\n<key> any key of that table (in double quotes if it \
             holds a dot); the other <names> are listed below.\n\n",
        );
        for m in &self.metrics {
            s += m;
            s.push('\n');
        }
        s.push('\n');
        for (label, keys) in &self.keys {
            s += &format!("<{label}>: {}\n", keys.join(", "));
        }
        s
    }
}

impl super::Run for GateArgs {
    const PURGE_DELAY_MS: Option<i64> = Some(0);

    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        if self.list_metrics {
            return Ok(ctx.answer(&list_metrics(), Verdict::Pass));
        }
        let (report, verdict) = run(&self, &ctx.timer)?;
        Ok(ctx.answer(&report, verdict))
    }
}
