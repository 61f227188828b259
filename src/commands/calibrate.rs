//! `calibench calibrate FILE`: calibration of recorded confidences against outcomes.

use crate::error::{Error, InputError};
use crate::input::calibration as reader;
use crate::output::{fmt_opt, Render};
use crate::pipeline::read_file;
use crate::stats::calibration::{calibrate, Calibration};

#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// CSV with confidence (0..1) and correct (0/1 or true/false) columns
    pub file: std::path::PathBuf,
    /// Number of equal-width, right-closed bins
    #[arg(long, default_value_t = crate::stats::calibration::BINS as u32, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub bins: u32,
}

pub fn run(args: &CalibrateArgs) -> Result<Calibration, Error> {
    let name = args.file.display().to_string();
    let predictions = reader::read(&name, &read_file(&args.file)?)?;
    calibrate(
        &predictions.confidence,
        &predictions.correct,
        args.bins as usize,
    )
    .map_err(|e| InputError::new(name, e.to_string()).into())
}

impl Render for Calibration {
    fn human(&self) -> String {
        let mut s = format!(
            "Calibration of {} predictions in {} bins\n  ECE {:.4}   MCE {:.4}   Brier {:.4}   AUROC {}\n\n",
            self.n,
            self.bins.len(),
            self.ece,
            self.mce,
            self.brier,
            fmt_opt(self.auroc, 4)
        );
        s += "  bin            count  confidence  accuracy   gap\n";
        for (i, b) in self.bins.iter().enumerate() {
            // The first bin is closed on the left too: it holds confidence 0.
            let open = if i == 0 { '[' } else { '(' };
            let gap = match (b.accuracy, b.mean_confidence) {
                (Some(a), Some(c)) => format!("{:+.3}", a - c),
                _ => "—".into(),
            };
            s += &format!(
                "  {open}{:.3}, {:.3}]  {:>5}  {:>10}  {:>8}  {:>6}\n",
                b.lower,
                b.upper,
                b.count,
                fmt_opt(b.mean_confidence, 3),
                fmt_opt(b.accuracy, 3),
                gap
            );
        }
        if self.auroc.is_none() {
            s += "  AUROC is undefined: every prediction has the same outcome\n";
        }
        s
    }
}

impl super::Run for CalibrateArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        Ok(ctx.answer(&run(&self)?, crate::exit::Verdict::Pass))
    }
}
