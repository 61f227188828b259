//! `calibench trust VERDICTS`: may a result measured by these judges be believed? Exit 0 when
//! trustworthy, 1 when not, 2 on bad input (an empty verdict set included).

use std::collections::BTreeMap;

use crate::corpus::labels;
use crate::corpus::verdicts;
use crate::error::{Error, InputError};
use crate::exit::Verdict;
use crate::humans::HumansSection;
use crate::output::Render;
use crate::pipeline::read_file;
use crate::policy::Trust;
use crate::trust::{verdict, TrustVerdict};

#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    /// Judge verdicts (verdicts.jsonl)
    pub verdicts: std::path::PathBuf,
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
    #[arg(long, value_enum, default_value_t = super::LevelArg::Interval)]
    pub level: super::LevelArg,
    /// Human labels on some of the judged items (labels.jsonl): adds the alt-test of each judge
    /// and of the panel, the judges' error correlations and the effective number of judges
    #[arg(long)]
    pub labels: Option<std::path::PathBuf>,
    /// With --labels: how much worse than an annotator a judge may be (0.2 experts, 0.15
    /// skilled annotators, 0.1 crowd workers)
    #[arg(long, default_value_t = 0.2, value_parser = super::probability, allow_negative_numbers = true, requires = "labels")]
    pub epsilon: f64,
}

/// What `calibench trust` prints: the verdict, and with `--labels` the humans section.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, serde::Serialize)]
pub struct TrustReport {
    #[serde(flatten)]
    pub verdict: TrustVerdict,
    pub humans: Option<HumansSection>,
}

pub fn run(args: &TrustArgs) -> Result<(TrustReport, Verdict), Error> {
    let name = args.verdicts.display().to_string();
    for (flag, x) in [
        ("--irr-floor", args.irr_floor),
        ("--spread-ceiling", args.spread_ceiling),
    ] {
        if !x.is_finite() || (flag == "--spread-ceiling" && x < 0.0) {
            return Err(
                InputError::new(flag, format!("{x} is not a usable threshold"))
                    .hint("a finite number; the spread ceiling is 0 or more")
                    .into(),
            );
        }
    }
    let (items, problems) = verdicts::parse(&name, &read_file(&args.verdicts)?);
    problems.refuse()?;
    let thresholds = Trust {
        irr_floor: args.irr_floor,
        spread_ceiling: args.spread_ceiling,
        min_survivors: args.min_survivors,
        level: args.level.into(),
        dimension_weights: BTreeMap::new(),
        alt_test_epsilon: args.epsilon,
        ..Trust::default()
    };
    let v = verdict(&items, &thresholds).map_err(|e| {
        InputError::new(&name, e)
            .hint("each line holds {\"item_id\", \"arm\", \"verdicts\": [{\"model\", \"per_dimension\"}]}")
    })?;
    let humans = match &args.labels {
        None => None,
        Some(path) => {
            let shown = path.display().to_string();
            let (labels, problems) = labels::parse(&shown, &read_file(path)?);
            problems.refuse()?;
            labels::check_against(&shown, &labels, &items).refuse()?;
            let section = crate::humans::section(&items, &labels, &thresholds);
            if section.is_none() {
                return Err(InputError::new(
                    &shown,
                    "no label falls on an item of the verdicts: nothing to compare",
                )
                .hint("labels name the same item_id and arm as the verdicts they label")
                .into());
            }
            section
        }
    };
    let outcome = if v.trustworthy {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    Ok((TrustReport { verdict: v, humans }, outcome))
}

impl Render for TrustReport {
    fn human(&self) -> String {
        let mut s = self.verdict.human();
        if let Some(h) = &self.humans {
            s += &crate::humans::describe(h);
        }
        s
    }
}

impl Render for TrustVerdict {
    fn human(&self) -> String {
        let t = &self.thresholds;
        let mut s = if self.trustworthy {
            "trustworthy: the judges agree enough for their figures to be believed\n".to_string()
        } else {
            format!(
                "not trustworthy: {} failed; judge-derived figures are withheld\n",
                crate::text::count(self.checks_failed() as u64, "check", "checks")
            )
        };
        for r in &self.trust_reasons {
            s += &format!("  {r}\n");
        }
        s += &format!(
            "  {}, {}; IRR ({} α) {} (floor {}); worst item spread {} (ceiling {}); at least {} surviving raters per item required\n",
            crate::text::count(self.items as u64, "item", "items"),
            crate::text::count(self.judges as u64, "judge", "judges"),
            t.level.name(),
            self.inter_rater_reliability
                .map_or("not computable".into(), |a| format!("{a:.3}")),
            t.irr_floor,
            self.per_item_spread
                .iter()
                .map(|p| p.spread)
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
                .map_or("—".into(), |x| format!("{x:.2}")),
            t.spread_ceiling,
            t.min_survivors
        );
        if let Some(note) = &self.irr_note {
            s += &format!("  note: {note}\n");
        }
        s
    }
}

impl super::Run for TrustArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        let (verdict, outcome) = run(&self)?;
        Ok(ctx.answer(&verdict, outcome))
    }
}
