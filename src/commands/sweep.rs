//! `calibench sweep EXPERIMENT --arm NAME --vary KEY=VALUES…` (docs/guides/threshold-sweep.md):
//! replays one arm over a grid of policy values and says which value meets the requirements,
//! checked on targets (queries) the choice was not made on.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::Error;
use crate::model::Sweep;
use crate::output::{self, Render};
use crate::pipeline::run::prepare_folders;
use crate::pipeline::sweep;
use crate::sweep::{Prefer, Requirement, Spec, Vary};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "KEY is a dotted key inside the arm's tables, as experiment.toml writes it: review.actionable_from, review.gates.P2, confidence.recovery_threshold. VALUES is a comma list (25,50,75) or an inclusive range START:STOP:STEP (0.30:0.80:0.05). Several --vary make the Cartesian product, at most 10000 points; each point is checked as the experiment file is before anything is replayed.\n\nExit status: 0 swept (a sweep where no point meets the requirements is an answer, not a failure), 2 bad input or usage (nothing written)."
)]
pub struct SweepArgs {
    /// The experiment file (or a folder holding experiment.toml)
    pub experiment: PathBuf,
    /// The arm to sweep: baseline or treatment
    #[arg(long)]
    pub arm: String,
    /// A policy key of the arm and the values to try (repeatable)
    #[arg(long, required = true, value_name = "KEY=VALUES")]
    pub vary: Vec<Vary>,
    /// A requirement every recommended point meets: METRIC>=X or METRIC<=X, judged on the
    /// figure's 95% interval bound on the unsafe side (repeatable)
    #[arg(long, value_name = "METRIC>=X")]
    pub require: Vec<Requirement>,
    /// Which point to recommend among those meeting the requirements: max:METRIC or
    /// min:METRIC (default max:actionable for review, max:final_accuracy for queries)
    #[arg(long, value_name = "max:METRIC")]
    pub prefer: Option<Prefer>,
    /// The share of targets (queries) held out of the choice and used to check it (default
    /// 0.5 with --require, else none; 0: choose on every unit, unchecked). With --require each
    /// part needs at least 10 units
    #[arg(long, value_name = "FRACTION", value_parser = holdout)]
    pub holdout: Option<f64>,
    /// A merged finding is confirmed (for recall) when its judge composite is at least this, in
    /// [0, 1]
    #[arg(long, value_name = "X", default_value_t = crate::sweep::CONFIRM_AT, value_parser = confirm_at, allow_negative_numbers = true)]
    pub confirm_at: f64,
    /// Mark the points no other point beats on both figures, judged on intervals, and plot
    /// the two: X:Y, such as cost_usd:precision
    #[arg(long, value_name = "X:Y")]
    pub frontier: Option<crate::sweep::Frontier>,
    #[command(flatten)]
    pub options: crate::pipeline::RunOptions,
}

/// `--holdout`: a share from 0 (no hold-out) up to but not including 1.
fn holdout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "`{text}` is not a share from 0 (no hold-out) up to but not including 1"
        )),
    }
}

/// `--confirm-at`: a judge composite, in [0, 1].
fn confirm_at(text: &str) -> Result<f64, String> {
    let x = text
        .parse::<f64>()
        .map_err(|_| format!("`{text}` is not a number"))?;
    crate::sweep::confirm_at(x).map_err(|_| format!("`{text}` is not in [0, 1]"))
}

/// What `sweep` prints: the sweep, and where it was written.
#[derive(Clone, Debug, Serialize)]
#[serde(transparent)]
pub struct SweepReport {
    pub sweep: Sweep,
    #[serde(skip)]
    pub run_dir: PathBuf,
    #[serde(skip)]
    pub report: PathBuf,
}

impl Render for SweepReport {
    fn human(&self) -> String {
        let s = &self.sweep;
        let mut out = format!(
            "{} · sweep of the {} arm over {} → {}\n  {}\n",
            s.experiment,
            s.arm,
            crate::text::count(s.points.len() as u64, "point", "points"),
            self.run_dir.display(),
            crate::report::sweep::sentence(s)
        );
        if let Some(r) = &s.recommended {
            for f in s.figures() {
                let show = |e: Option<&crate::sweep::Estimate>| {
                    e.and_then(|e| e.value)
                        .map_or("—".into(), |x| format!("{x:.prec$}", prec = f.places))
                };
                let held = r.held_out.as_ref().map_or(String::new(), |h| {
                    format!(", held out {}", show(h.figures.get(f.name)))
                });
                out += &format!(
                    "    {}: {} (current {}{held})\n",
                    f.name,
                    show(r.choosing.get(f.name)),
                    show(s.current.figures.get(f.name)),
                );
            }
        }
        out += &format!("  report: {}\n", self.report.display());
        out
    }
}

impl super::Run for SweepArgs {
    // A sweep replays the same corpus at every point: pages freed by one point are taken again
    // by the next, and giving them back at once cost 100 points a second of wall time.
    const PURGE_DELAY_MS: Option<i64> = Some(10);

    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        if let Some(id) = &self.options.run_id {
            crate::rundir::check_id(id, "--run-id")?;
        }
        prepare_folders(&self.options)?;
        let spec = Spec {
            arm: self.arm.clone(),
            vary: self.vary.clone(),
            require: self.require.clone(),
            prefer: self.prefer.clone(),
            holdout: self.holdout,
            confirm_at: self.confirm_at,
            frontier: self.frontier.clone(),
        };
        let bar = if ctx.progress {
            output::progress_bar(0, "{spinner} [{bar:30}] {pos}/{len} points ({elapsed})")
        } else {
            indicatif::ProgressBar::hidden()
        };
        let tick = || bar.inc(1);
        let bar_len = self
            .vary
            .iter()
            .map(|v| v.values.len() as u64)
            .product::<u64>();
        bar.set_length(bar_len);
        let done = sweep::run(&self.experiment, &spec, &self.options, &tick);
        bar.finish_and_clear();
        let done = done?;
        let report = SweepReport {
            sweep: done.sweep,
            run_dir: done.run_dir,
            report: done.report_dir.join("report.html"),
        };
        Ok(ctx.answer(&report, crate::exit::Verdict::Pass))
    }
}
