//! `calibench alpha FILE`: Krippendorff's α of reliability data with a bootstrap interval.

use std::time::Instant;

use indicatif::ProgressBar;
use serde::Serialize;

use crate::error::{Error, InputError};
use crate::input::reliability::{self, Layout};
use crate::output::{self, fmt_opt, Render};
use crate::pipeline::{read_file, Timer};
use crate::stats::alpha::{AlphaError, Level, Prepared};
use crate::stats::bootstrap::{self, Exceedance, Interval, Method, Plan};

#[derive(Debug, clap::Args)]
pub struct AlphaArgs {
    /// Reliability data: long CSV (unit,rater,value), wide CSV (rater,<unit>,…) or long JSON Lines
    pub file: std::path::PathBuf,
    /// Level of measurement
    #[arg(long, value_enum, default_value_t = super::LevelArg::Interval)]
    pub level: super::LevelArg,
    /// Table layout; auto reads long when the header has unit, rater and value
    #[arg(long, value_enum, default_value_t = super::LayoutArg::Auto)]
    pub layout: super::LayoutArg,
    /// Read a wide CSV with one row per unit (header `unit,<rater1>,<rater2>,…`), as R irr,
    /// irrCAC, SPSS KALPHA and pandas write it
    #[arg(long, conflicts_with = "layout")]
    pub units_as_rows: bool,
    /// Bootstrap replicates for the 95% interval; 0 for none; at most 1000000
    #[arg(long, default_value_t = 2000, value_parser = crate::pipeline::replicates)]
    pub bootstrap: usize,
    /// Bootstrap method: resample units, or KALPHA's coincidence resampling
    #[arg(long, value_enum, default_value_t = super::MethodArg::Units)]
    pub bootstrap_method: super::MethodArg,
    /// Seed of the bootstrap: same seed, same interval
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads of the bootstrap (default: the CPUs available); the interval never
    /// depends on it
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// The result printed by `calibench alpha` (`--json` keys are the public interface).
#[derive(Clone, Debug, Serialize)]
pub struct AlphaReport {
    pub file: String,
    pub alpha: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undefined_reason: Option<String>,
    pub level: Level,
    pub layout: &'static str,
    /// Units in the file, pairable or not.
    pub units: usize,
    /// Units with two or more values: the ones α is computed over.
    pub pairable_units: usize,
    pub raters: usize,
    pub pairable_values: usize,
    pub observed_disagreement: f64,
    pub expected_disagreement: f64,
    /// `None` with `--bootstrap 0`.
    pub ci: Option<Interval>,
    pub q: Vec<Exceedance>,
}

/// `progress`: draw a bar on stderr while the bootstrap runs (the caller checked it is a
/// terminal).
pub fn run(args: &AlphaArgs, timer: &Timer, progress: bool) -> Result<AlphaReport, Error> {
    let name = args.file.display().to_string();
    let level = Level::from(args.level);
    let mut lap = Instant::now();
    let bytes = read_file(&args.file)?;
    let layout = if args.units_as_rows {
        Layout::UnitsAsRows
    } else {
        args.layout.into()
    };
    let table = reliability::read(&name, &bytes, layout, level)?;
    drop(bytes);
    for warning in &table.warnings {
        output::print_warning(warning);
    }
    timer.lap("read", &mut lap);

    let as_input = |e: AlphaError| Error::from(InputError::new(&name, e.to_string()));
    let prepared = Prepared::new(&table.units, level).map_err(as_input)?;
    let estimate = prepared.estimate();
    timer.lap("estimate", &mut lap);

    let method = Method::from(args.bootstrap_method);
    let plan = Plan {
        method,
        replicates: args.bootstrap,
        seed: args.seed,
        threads: crate::pipeline::threads(args.threads),
    };
    let summary = if args.bootstrap == 0 {
        None
    } else {
        let bar = if progress {
            output::progress_bar(
                args.bootstrap,
                "{spinner} bootstrap [{bar:30}] {pos}/{len} replicates ({elapsed}, ETA {eta})",
            )
        } else {
            ProgressBar::hidden()
        };
        let tick = || bar.inc(1);
        let draws = match method {
            Method::Units => bootstrap::unit_replicates(&prepared, plan, &tick),
            Method::Kalpha => {
                let coded = Prepared::coded(&table.units, level).map_err(as_input)?;
                bootstrap::kalpha_replicates(&coded, table.raters, plan, &tick)
            }
        };
        bar.finish_and_clear();
        Some(bootstrap::summarize(plan, &draws))
    };
    timer.lap("bootstrap", &mut lap);

    Ok(AlphaReport {
        file: name,
        alpha: estimate.alpha,
        undefined_reason: estimate.undefined_reason,
        level,
        layout: table.layout.name(),
        units: table.units.len(),
        pairable_units: estimate.pairable_units,
        raters: table.raters,
        pairable_values: estimate.pairable_values,
        observed_disagreement: estimate.observed_disagreement,
        expected_disagreement: estimate.expected_disagreement,
        q: summary.as_ref().map(|s| s.q.clone()).unwrap_or_default(),
        ci: summary.map(|s| s.ci),
    })
}

/// Krippendorff's (2004) reading of α for drawing conclusions from data.
fn reading(alpha: f64) -> &'static str {
    if alpha >= 0.8 {
        "reliable (α ≥ 0.800)"
    } else if alpha >= 0.667 {
        "tentative conclusions only (0.667 ≤ α < 0.800)"
    } else {
        "not reliable enough to draw conclusions (α < 0.667)"
    }
}

impl Render for AlphaReport {
    fn human(&self) -> String {
        let mut s = String::new();
        match self.alpha {
            Some(a) => {
                s += &format!("Krippendorff's α ({}) = {a:.6}", self.level);
                if let Some(ci) = &self.ci {
                    s += &format!(
                        "   95% CI [{}, {}]",
                        fmt_opt(ci.lower, 3),
                        fmt_opt(ci.upper, 3)
                    );
                }
                s += &format!("\n  {}\n", reading(a));
            }
            None => {
                s += &format!("Krippendorff's α ({}) is undefined\n", self.level);
                if let Some(reason) = &self.undefined_reason {
                    s += &format!("  {reason}\n");
                }
            }
        }
        s += &format!(
            "  {} units ({} pairable), {} raters, {} pairable values, {} layout\n",
            self.units, self.pairable_units, self.raters, self.pairable_values, self.layout
        );
        s += &format!(
            "  observed disagreement {:.6}, expected {:.6}\n",
            self.observed_disagreement, self.expected_disagreement
        );
        if let Some(ci) = &self.ci {
            s += &format!(
                "  bootstrap: {}, {} replicates, seed {}",
                ci.method.name(),
                ci.replicates,
                ci.seed
            );
            if ci.undefined_replicates > 0 {
                s += &format!(
                    " ({} replicates without variation left out)",
                    ci.undefined_replicates
                );
            }
            s += "\n";
            for e in &self.q {
                s += &format!(
                    "  q: share of replicates with α < {} = {}\n",
                    e.alpha_min,
                    fmt_opt(e.q, 3)
                );
            }
        }
        s
    }
}

impl super::Run for AlphaArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        Ok(ctx.answer(
            &run(&self, &ctx.timer, ctx.progress)?,
            crate::exit::Verdict::Pass,
        ))
    }
}
