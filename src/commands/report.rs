//! `calibench report RUN_DIR`: re-renders a run's report from its `metrics.json` and
//! `manifest.json`, without recomputing anything.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::Error;
use crate::output::Render;
use crate::pipeline::stored::{read_run, render, write};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A run directory (runs/<run-id>)
    pub run_dir: std::path::PathBuf,
    /// Where reports are written (the report goes to <reports-dir>/<run-id>/)
    #[arg(long, default_value = "reports")]
    pub reports_dir: std::path::PathBuf,
    /// Write no plots
    #[arg(long)]
    pub no_plots: bool,
}

/// What `report` did.
#[derive(Clone, Debug, Serialize)]
pub struct ReportWritten {
    pub run_id: String,
    pub report_dir: PathBuf,
    pub files: Vec<String>,
}

impl Render for ReportWritten {
    fn human(&self) -> String {
        format!(
            "{} → {}\n",
            self.run_id,
            self.report_dir.join("report.html").display()
        )
    }
}

pub fn run(args: &ReportArgs) -> Result<ReportWritten, Error> {
    let (metrics, about) = read_run(&args.run_dir)?;
    let rendered = render(&metrics, &about, !args.no_plots)?;
    let report_dir = write(&args.reports_dir, &about.run_id, &rendered)?;
    Ok(ReportWritten {
        run_id: about.run_id,
        report_dir,
        files: rendered.files.into_iter().map(|(name, _)| name).collect(),
    })
}

impl super::Run for ReportArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        Ok(ctx.answer(&run(&self)?, crate::exit::Verdict::Pass))
    }
}
