//! `calibench alttest FILE --llm NAME…`: can a model stand in for the human annotators? The
//! alternative annotator test (docs/guides/judges-and-humans.md) on reliability data read as
//! `alpha` reads it. Exit 0 when every named model passes, 1 when one fails, 2 on bad input.

use serde::Serialize;

use crate::error::{Error, InputError};
use crate::exit::Verdict;
use crate::input::reliability::{self, Layout};
use crate::output::Render;
use crate::pipeline::read_file;
use crate::stats::alpha::Level;
use crate::stats::alttest::{alt_test, Alignment, AltTest, Settings};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Each model is tested on its own, against every rater not named by --llm: leave \
one human out, score how well the model and that human each agree with the other humans, and ask \
by a one-sided t-test whether the model is at most ε worse; Benjamini–Yekutieli over the humans at \
q; the model passes when it wins at least half of them (docs/guides/judges-and-humans.md).\n\
Exit status: 0 every model named passes, 1 one fails, 2 bad input."
)]
pub struct AltTestArgs {
    /// Reliability data: long CSV (unit,rater,value), wide CSV (rater,<unit>,…) or long JSON Lines
    pub file: std::path::PathBuf,
    /// A rater that is a model, tested against the others (every rater not named is a human);
    /// repeat for several models
    #[arg(long = "llm", value_name = "NAME", required = true)]
    pub llm: Vec<String>,
    /// Level of measurement: nominal scores alignment by accuracy, any other by negative RMSE
    #[arg(long, value_enum, default_value_t = super::LevelArg::Nominal)]
    pub level: super::LevelArg,
    /// Table layout; auto reads long when the header has unit, rater and value
    #[arg(long, value_enum, default_value_t = super::LayoutArg::Auto)]
    pub layout: super::LayoutArg,
    /// Read a wide CSV with one row per unit (header `unit,<rater1>,<rater2>,…`)
    #[arg(long, conflicts_with = "layout")]
    pub units_as_rows: bool,
    /// How much worse than a human the model may be, in [0, 1): 0.2 experts, 0.15 skilled
    /// annotators, 0.1 crowd workers, 0 for no allowance at all
    #[arg(long, default_value_t = 0.2, value_parser = epsilon, allow_negative_numbers = true)]
    pub epsilon: f64,
    /// The false discovery rate of the Benjamini–Yekutieli correction over the humans
    #[arg(long, default_value_t = 0.05, value_parser = super::probability, allow_negative_numbers = true)]
    pub q: f64,
    /// Keep only items the model rated and at least this many humans rated
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..))]
    pub min_humans_per_item: u32,
    /// Test only humans with at least this many kept items; the others are listed as skipped
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub min_items_per_human: u32,
}

/// What `calibench alttest` found: one result per model named.
#[derive(Clone, Debug, Serialize)]
pub struct AltTestReport {
    pub file: String,
    pub level: Level,
    pub results: Vec<AltTest>,
}

pub fn run(args: &AltTestArgs) -> Result<(AltTestReport, Verdict), Error> {
    let name = args.file.display().to_string();
    let level = Level::from(args.level);
    let layout = if args.units_as_rows {
        Layout::UnitsAsRows
    } else {
        args.layout.into()
    };
    let rated = reliability::read_rated(&name, &read_file(&args.file)?, layout, level)?;
    let raters = crate::text::first_few(rated.raters.iter().map(|r| format!("`{r}`")), 12);
    let mut llms: Vec<usize> = Vec::new();
    for llm in &args.llm {
        let Some(i) = rated.raters.iter().position(|r| r == llm) else {
            return Err(InputError::new(
                &name,
                format!("--llm `{llm}` is not a rater in the file"),
            )
            .hint(format!("the raters are {raters}"))
            .into());
        };
        if !llms.contains(&i) {
            llms.push(i);
        }
    }
    let humans: Vec<usize> = (0..rated.raters.len())
        .filter(|i| !llms.contains(i))
        .collect();
    let settings = Settings {
        alignment: if level == Level::Nominal {
            Alignment::Accuracy
        } else {
            Alignment::NegativeRmse
        },
        epsilon: args.epsilon,
        q: args.q,
        min_humans_per_item: args.min_humans_per_item as usize,
        min_items_per_human: args.min_items_per_human as usize,
    };
    let results = llms
        .iter()
        .map(|&llm| alt_test(&rated.raters, &rated.values, llm, &humans, &settings))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            InputError::new(&name, e.to_string()).hint(format!(
                "the raters are {raters}; every rater not named by --llm is a human; --min-humans-per-item and --min-items-per-human set what is kept"
            ))
        })?;
    let verdict = if results.iter().all(|r| r.passed) {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    Ok((
        AltTestReport {
            file: name,
            level,
            results,
        },
        verdict,
    ))
}

/// One model's result in words: what passing (or not) means, then each human tested.
pub fn describe(r: &AltTest) -> String {
    let mut s = if r.passed {
        format!(
            "{}: passes — it can stand in for these annotators (winning rate {:.2} ≥ 0.5, ε {})\n",
            r.llm, r.winning_rate, r.epsilon
        )
    } else {
        format!(
            "{}: fails — it cannot yet replace these annotators (winning rate {:.2} < 0.5, ε {})\n",
            r.llm, r.winning_rate, r.epsilon
        )
    };
    s += &format!(
        "  advantage probability {:.3}; {} kept; {} tested; Benjamini–Yekutieli at q {}\n",
        r.advantage_probability,
        crate::text::count(r.items as u64, "item", "items"),
        crate::text::count(r.humans.len() as u64, "human", "humans"),
        r.q
    );
    let width = r
        .humans
        .iter()
        .map(|h| h.human.len())
        .max()
        .unwrap_or(5)
        .max(5);
    s += &format!(
        "  {:<width$}  items  ρ model  ρ human  p        model within ε\n",
        "human"
    );
    for h in &r.humans {
        s += &format!(
            "  {:<width$}  {:>5}  {:>7.3}  {:>7.3}  {:<7}  {}\n",
            h.human,
            h.items,
            h.rho_llm,
            h.rho_human,
            crate::text::fmt_p(h.p_value),
            if h.rejected { "yes" } else { "no" }
        );
    }
    if !r.skipped_humans.is_empty() {
        s += &format!(
            "  skipped (too few kept items): {}\n",
            r.skipped_humans.join(", ")
        );
    }
    s
}

impl Render for AltTestReport {
    fn human(&self) -> String {
        self.results
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// JSON Lines: one object per model named, in the order named.
    fn json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for r in &self.results {
            // Plain data: serializing cannot fail.
            out.extend(serde_json::to_vec(r).unwrap_or_default());
            out.push(b'\n');
        }
        out
    }
}

impl super::Run for AltTestArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        let (report, verdict) = run(&self)?;
        Ok(ctx.answer(&report, verdict))
    }
}

/// ε in [0, 1): 0 asks the model to win outright against every human.
fn epsilon(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{text}` is not a number in [0, 1)")),
    }
}
