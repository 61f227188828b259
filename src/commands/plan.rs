//! `calibench plan RUN_DIR --metric NAME` (docs/guides/ab-rubric-change.md): a pilot run's
//! paired units on one metric read back from its run directory, sized by the pure
//! [`crate::sizing`], and the plan printed.

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, InputError};
use crate::model::Metrics;
use crate::output::Render;
use crate::pipeline::read_file;
use crate::policy::Wanted;
use crate::replay::{compared_named, Compared, DeltaTable, LIFTS};
use crate::sizing::{fmt_level, plan, Decided, PilotPairs, PlanReport, Planned, Settings};
use crate::stats::test::Test;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The needed number is, for the paired t-test, the smallest n with (t₁₋α/₂,ₙ₋₁ + t_power,ₙ₋₁) · sd / √n ≤ |effect|, sd being the standard deviation of the pilot's paired differences; for McNemar's exact test (0/1 outcomes) the fewest units whose exact power reaches it, summed over the binomial counts of changed units (which counts the test's floor: its p cannot reach alpha with too few changed units). 10,000 simulated studies of that size, seeded by the run's seed and each running that same test, check it. For a metric of the run's [decision], alpha defaults to 0.05, the level the decision judges improving and holding at (\"better\" is an intersection-union claim: no multiplicity adjustment), and the effect to the metric's min_effect or a guard's margin, as the decision's \"needs ≈ N\" counts.\n\
Exit status: 0 done, 2 the metric or the effect cannot be planned for (named in the message)."
)]
pub struct PlanArgs {
    /// A pilot run's directory (runs/<run-id>)
    pub run_dir: std::path::PathBuf,
    /// The metric to plan for: a key of the run's review.delta or queries.delta, `lift`,
    /// `lift_human`, or an imported scorer's name (scores.delta)
    #[arg(
        long,
        required_unless_present = "labels_for",
        conflicts_with = "labels_for"
    )]
    pub metric: Option<String>,
    /// Instead: how many labelled items make the 95% PPI++ interval of the lift in human units
    /// at most ±WIDTH, from the run's labelled and judged-only lift pairs
    #[arg(long, value_name = "WIDTH", value_parser = positive)]
    pub labels_for: Option<f64>,
    /// The true mean difference to detect, treatment − baseline (default: the decision's
    /// min_effect or margin for the metric, else the pilot's observed mean difference)
    #[arg(long, allow_negative_numbers = true, value_parser = super::finite, conflicts_with = "labels_for")]
    pub effect: Option<f64>,
    /// The chance of detecting the effect
    #[arg(long, default_value_t = 0.8, value_parser = super::study_probability)]
    pub power: f64,
    /// The two-sided level of the test (default 0.05: for a decision metric, the level the
    /// decision judges improving and holding at)
    #[arg(long, value_parser = super::study_probability)]
    pub alpha: Option<f64>,
    /// Worker threads of the simulation (default: the CPUs available); the result never
    /// depends on it
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// A positive finite number.
fn positive(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("`{text}` is not a positive number")),
    }
}

/// `plan --labels-for WIDTH`: how many labelled items the lift in human units needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LabelsPlan {
    pub run_id: String,
    /// The half-width asked for (human units, 95%).
    pub width: f64,
    /// Labelled pairs (items labelled in both arms) that reach it, in all: the pilot's and
    /// `more` of its judged-only ones.
    pub needed: usize,
    /// How many more pairs to label, out of the pilot's judged-only ones: 0 when the pilot's
    /// labels already reach the width.
    pub more: usize,
    /// The pilot's labelled and judged-only pairs.
    pub labelled: usize,
    pub unlabelled: usize,
    /// The pilot's own half-width, and the one at `needed`.
    pub pilot_half_width: f64,
    pub half_width: f64,
    /// λ at `needed`.
    pub lambda: f64,
}

/// How many labels make the lift's PPI++ interval ±`width`, from the run's stored moments.
pub fn labels_for(run_dir: &Path, width: f64) -> Result<LabelsPlan, Error> {
    use crate::stats::ppi::{half_width, labels_needed, lambda};
    let (metrics, _) = crate::pipeline::stored::read_run(run_dir)?;
    let file = run_dir.join("metrics.json").display().to_string();
    let refuse = |problem: String, hint: &str| -> Error {
        InputError::new(&file, problem)
            .field("--labels-for")
            .hint(hint)
            .into()
    };
    let Some(l) = &metrics.lift_human else {
        return Err(refuse(
            "the run has no lift in human units".into(),
            "add labels.jsonl to the corpus, with some lift items labelled in both arms (docs/guides/judges-and-humans.md)",
        ));
    };
    let Some(m) = l.moments.filter(|m| m.labelled >= 2) else {
        return Err(refuse(
            format!(
                "the lift has {} pairs labelled in both arms and {} judged only: a plan needs at least 2 of the first and 1 of the second",
                l.ppi.labelled, l.ppi.unlabelled
            ),
            "label at least 2 lift items in both arms, drawn at random, and keep some unlabelled",
        ));
    };
    let w = crate::text::fmt_num;
    match labels_needed(&m, width) {
        Ok(needed) => Ok(LabelsPlan {
            run_id: metrics.run_id.clone(),
            width,
            needed,
            more: needed - m.labelled,
            labelled: m.labelled,
            unlabelled: m.unlabelled,
            pilot_half_width: half_width(&m, m.labelled),
            half_width: half_width(&m, needed),
            lambda: lambda(&m.with_labelled(needed), needed),
        }),
        Err(best) => Err(refuse(
            format!(
                "even labelling all {} judged-only pairs ({} labelled in all) gives ±{}, wider than ±{} (the narrowest any number of labels reaches: ±{})",
                m.unlabelled,
                m.labelled + m.unlabelled,
                w(round4(half_width(&m, m.labelled + m.unlabelled))),
                w(width),
                w(round4(best))
            ),
            "ask for a wider interval, or judge more items in both arms (the pairs judged in both arms bound what labels can do)",
        )),
    }
}

/// A half-width to 4 significant places, for messages.
fn round4(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let places = 3 - x.abs().log10().floor() as i32;
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

impl Render for LabelsPlan {
    fn human(&self) -> String {
        let w = |x: f64| crate::text::fmt_num(round4(x));
        let pilot = format!(
            "  the pilot: {} labelled and {} judged-only pairs, ±{}\n",
            self.labelled,
            self.unlabelled,
            w(self.pilot_half_width)
        );
        if self.more == 0 {
            return format!(
                "no more labels needed: the pilot's {} labelled pairs already give ±{} ≤ ±{} (95%, PPI++), from run {}\n{pilot}",
                self.labelled,
                w(self.half_width),
                crate::text::fmt_num(self.width),
                self.run_id
            );
        }
        format!(
            "label {} more of the judged-only pairs in both arms ({} labelled in all), drawn at random, for the lift in human units to be ±{} (95%, PPI++ at λ {:.2}: ±{}), from run {}\n{pilot}",
            self.more,
            self.needed,
            crate::text::fmt_num(self.width),
            self.lambda,
            w(self.half_width),
            self.run_id,
        )
    }
}

pub fn run(args: &PlanArgs) -> Result<PlanReport, Error> {
    let (metrics, about) = crate::pipeline::stored::read_run(&args.run_dir)?;
    let name = args.metric.as_deref().unwrap_or_default();
    let compared = metric_of(&metrics, name, &args.run_dir)?;
    let pilot = if compared.table == DeltaTable::LiftHuman {
        lift_human_pilot(&metrics, &args.run_dir)?
    } else {
        differences(&args.run_dir, &metrics, &compared)?
    };
    let threads = crate::pipeline::threads(args.threads);
    plan(
        &compared,
        &pilot,
        Settings {
            effect: args.effect,
            power: args.power,
            alpha: args.alpha,
            seed: about.seed,
            threads,
            decided: decided(&metrics, name),
        },
        &metrics.run_id,
    )
    .map_err(|problem| {
        InputError::new(
            args.run_dir.join("pairs.csv").display().to_string(),
            problem.problem,
        )
        .field(problem.flag)
        .hint(problem.hint)
        .into()
    })
}

/// The metric as the run's decision names it.
fn decided(m: &Metrics, name: &str) -> Option<Decided> {
    let d = m.decision.as_ref()?;
    let x = d.metrics.get(name)?;
    // A percentage is sized as that share of the baseline mean, in the metric's units.
    let share = |v: Option<f64>| match (x.relative, x.baseline) {
        (true, Some(b)) => v.map(|v| v * b.abs()),
        _ => v,
    };
    Some(Decided {
        wanted: Wanted {
            metric: name.to_string(),
            want: x.want,
            margin: share(x.margin),
            min_effect: share(x.min_effect),
            relative: false,
        },
    })
}

/// The delta `name`, if it is one of the run's deltas with per-unit differences: a catalogue's
/// metric, or a scorer of the imported scores.
fn metric_of(m: &Metrics, name: &str, run_dir: &Path) -> Result<Planned, Error> {
    let file = run_dir.join("metrics.json").display().to_string();
    let tables = [DeltaTable::Review, DeltaTable::Queries, DeltaTable::Scores];
    let mut names: Vec<&str> = tables
        .into_iter()
        .filter_map(|t| m.deltas(t))
        .flat_map(|d| d.keys().map(String::as_str))
        .collect();
    // The lifts, where the run estimated them.
    let estimated = |c: &Compared| match c.table {
        DeltaTable::Lift => m.lift.as_ref().is_some_and(|l| l.paired.is_some()),
        DeltaTable::LiftHuman => m.lift_human.as_ref().is_some_and(|l| l.ppi.value.is_some()),
        _ => false,
    };
    names.extend(LIFTS.iter().filter(|c| estimated(c)).map(|c| c.name));
    if let Some(c) = LIFTS.into_iter().find(|c| c.name == name) {
        if estimated(&c) {
            return Ok(c.into());
        }
        return Err(InputError::new(
            &file,
            format!("`{name}` has no estimate in this run (withheld, or nothing judged or labelled in both arms)"),
        )
        .field("`--metric`")
        .hint(format!("the run's deltas: {}", names.join(", ")))
        .into());
    }
    let known = compared_named(name);
    let withheld = tables
        .into_iter()
        .any(|t| m.withheld(t).iter().any(|x| x == name));
    let scorer = m
        .deltas(DeltaTable::Scores)
        .is_some_and(|d| d.contains_key(name));
    let catalogued = known.is_some_and(|c| m.deltas(c.table).is_some_and(|d| d.contains_key(name)));
    let present = names.contains(&name);
    let error = |problem: String| InputError::new(&file, problem).field("`--metric`");
    match (known, present) {
        _ if scorer && catalogued => Err(error(format!(
            "`{name}` names both a compared metric and an imported scorer in this run"
        ))
        .hint("import the scorer under another name (`calibench import` keeps names as the log writes them; rename the scorer in the log or the table)")
        .into()),
        _ if scorer => Ok(Planned {
            name: name.to_string(),
            table: DeltaTable::Scores,
        }),
        (Some(c), true) if !c.per_unit => Err(error(format!(
            "`{name}` is a figure of the whole set of {}, not a mean of per-unit differences: there are no differences to plan from",
            c.table.units()
        ))
        .hint("plan from a metric that is a mean over units, such as brier or final_accuracy")
        .into()),
        (Some(c), true) => Ok(c.into()),
        _ if withheld => Err(error(format!(
            "`{name}` was withheld in this run: the judges were not trusted, so it has no delta"
        ))
        .hint("plan from a run whose judges are trusted, or from a mechanical metric")
        .into()),
        _ => {
            let near = crate::text::nearest(name, &names)
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            let what = if known.is_some() {
                format!("`{name}` has no delta in this run{near}")
            } else {
                format!("`{name}` is not a compared metric{near}")
            };
            Err(error(what)
                .hint(if names.is_empty() {
                    "this run has no deltas: no metric was compared in both arms".to_string()
                } else {
                    format!("the run's deltas: {}", names.join(", "))
                })
                .into())
        }
    }
}

/// The lift in human units' pilot: its labelled pairs, its estimate and the spread its z-test
/// sees.
fn lift_human_pilot(m: &Metrics, run_dir: &Path) -> Result<PilotPairs, Error> {
    let file = run_dir.join("metrics.json").display().to_string();
    let l = m.lift_human.as_ref();
    let found = l.and_then(|l| {
        Some((
            l.ppi.labelled,
            l.ppi.value?,
            l.ppi.standard_error()? * (l.ppi.labelled as f64).sqrt(),
        ))
    });
    let Some(estimate) = found else {
        return Err(
            InputError::new(&file, "the lift in human units has no interval in this run")
                .field("`--metric`")
                .hint("label at least 2 lift items in both arms (docs/guides/judges-and-humans.md)")
                .into(),
        );
    };
    Ok(PilotPairs {
        diffs: Vec::new(),
        test: Test::PpiT,
        discordant: None,
        estimate: Some(estimate),
        units: DeltaTable::LiftHuman.units(),
    })
}

/// The pilot's units on `c`, from the run's `pairs.csv`, checked against the pairs
/// `metrics.json` counts.
fn differences(run_dir: &Path, m: &Metrics, c: &Planned) -> Result<PilotPairs, Error> {
    let path = run_dir.join("pairs.csv");
    let name = path.display().to_string();
    if !path.is_file() {
        return Err(InputError::new(&name, "does not exist")
            .hint("runs written before calibench kept paired differences have no pairs table; re-run the experiment")
            .into());
    }
    let rows = crate::rundir::pairs::read(&name, &read_file(&path)?)?;
    let values: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.table == c.table.name() && r.metric == c.name)
        .map(|r| (r.baseline, r.treatment))
        .collect();
    let counted = match c.table {
        DeltaTable::Lift => m.lift.as_ref().and_then(|l| l.paired.as_ref()),
        t => m.deltas(t).and_then(|d| d.get(&c.name)).map(|d| &d.paired),
    };
    if let Some(d) = counted {
        if d.pairs != values.len() {
            return Err(InputError::new(
                &name,
                format!(
                    "holds {} rows for `{}` but metrics.json counts {} pairs",
                    values.len(),
                    c.name,
                    d.pairs
                ),
            )
            .field("`metric`")
            .hint("the two files come from different runs; re-run the experiment")
            .into());
        }
    }
    Ok(PilotPairs::of(&values, c.table.units()))
}

impl Render for PlanReport {
    fn human(&self) -> String {
        let units = self.units;
        let mut s = format!(
            "plan for {} ({}, paired over {units}, tested by {}), from run {}\n",
            self.metric,
            self.table,
            self.test.words(),
            self.run_id
        );
        s += &format!(
            "  pilot: {} {units}, mean difference {:+.4}, sd of the differences {:.4}\n",
            self.pairs, self.observed, self.sd
        );
        s += &format!(
            "  effect to detect: {:+.4} ({})\n",
            self.effect,
            match self.effect_from {
                "--effect" => "--effect",
                "min_effect" => "the decision's min_effect for it, the smallest change that matters",
                "margin" => "the distance from the observed change to the guard's margin, as the decision sizes it",
                _ => "the observed mean difference; choose another with --effect",
            }
        );
        s += &format!(
            "  level: two-sided {} ({})\n",
            fmt_level(self.alpha),
            self.alpha_why
        );
        s += &match self.binds {
            "power" => format!(
                "  needed: {} {units} for {:.0}% power by {}\n",
                self.needed,
                100.0 * self.power,
                self.test.words()
            ),
            _ => format!(
                "  needed: {} {units} for {:.0}% power by McNemar's exact test, which cannot reach p < {} with fewer than {} changed {units} whatever the effect (the normal approximation, blind to that, asks {})\n",
                self.needed,
                100.0 * self.power,
                fmt_level(self.alpha),
                self.floor_discordant.unwrap_or_default(),
                self.power_needed
            ),
        };
        match self.simulated_power {
            Some(p) => {
                s += &format!(
                    "  check: {} simulated studies of {} {units}, each running {} on draws from the pilot shifted to the effect, detect it in {:.1}% (seed {})\n",
                    self.studies,
                    self.needed,
                    self.test.words(),
                    100.0 * p,
                    self.seed
                )
            }
            None => {
                s += &format!(
                    "  check: not simulated ({})\n",
                    self.note.as_deref().unwrap_or("too large")
                )
            }
        }
        if let Some(p) = self.simulated_power.filter(|p| *p < self.power - 0.04) {
            s += &format!(
                "  note: the simulated studies fall short of {:.0}% ({:.1}%): the pilot's differences are far from normal at this size, so the count by {} is optimistic; the table shows the power of larger studies\n",
                100.0 * self.power,
                100.0 * p,
                self.test.words()
            );
        }
        s += &format!(
            "  {:>10}  {:>19}  {:>17}\n",
            units,
            if self.test == Test::Mcnemar {
                "power (exact)"
            } else {
                "power (approximate)"
            },
            "power (simulated)"
        );
        for size in &self.sizes {
            s += &format!(
                "  {:>10}  {:>19.3}  {:>17}{}\n",
                size.pairs,
                size.approximate_power,
                size.simulated_power
                    .map_or("—".to_string(), |p| format!("{p:.3}")),
                if size.pairs == self.needed {
                    "  ← needed"
                } else {
                    ""
                }
            );
        }
        s
    }
}

impl super::Run for PlanArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        if let Some(width) = self.labels_for {
            return Ok(ctx.answer(
                &labels_for(&self.run_dir, width)?,
                crate::exit::Verdict::Pass,
            ));
        }
        Ok(ctx.answer(&run(&self)?, crate::exit::Verdict::Pass))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pairs_table_reads_back_exactly() {
        use crate::model::PairRow;
        use crate::replay::UnitPair;
        let rows = vec![
            PairRow {
                table: DeltaTable::Review,
                metric: "precision".into(),
                pair: UnitPair {
                    unit: "plan, \"v2\"".into(),
                    run: None,
                    baseline: 1.0 / 3.0,
                    treatment: 0.1 + 0.2,
                },
            },
            PairRow {
                table: DeltaTable::Queries,
                metric: "brier".into(),
                pair: UnitPair {
                    unit: "q01".into(),
                    run: Some(2),
                    baseline: 1e-300,
                    treatment: -0.0,
                },
            },
        ];
        let df = crate::report::tables::pairs(&rows).unwrap().unwrap();
        let mut csv = Vec::new();
        crate::report::tables::write_frames([Ok(df)], &mut csv, &mut Vec::new()).unwrap();
        let back = crate::rundir::pairs::read("pairs.csv", &csv).unwrap();
        assert_eq!(back.len(), 2);
        for (r, b) in rows.iter().zip(&back) {
            assert_eq!(b.table, r.table.name());
            assert_eq!(b.metric, r.metric);
            assert_eq!(b.unit, r.pair.unit);
            assert_eq!(b.run, r.pair.run);
            assert_eq!(b.baseline.to_bits(), r.pair.baseline.to_bits());
            assert_eq!(b.treatment, r.pair.treatment);
            assert_eq!(b.difference, r.pair.treatment - r.pair.baseline);
        }
        // A value that is not a number: its line and column.
        let bad = String::from_utf8(csv)
            .unwrap()
            .replace("q01,2,", "q01,two,");
        let e = crate::rundir::pairs::read("pairs.csv", bad.as_bytes()).unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(3), Some("column `run`"))
        );
    }

    // Regression (issue 34): `--alpha 1e-16` said "needed: 18446744073709551615 items" (the
    // quantile of 1 − 5·10⁻¹⁷, which is 1 in a double), and `--effect 1e-300` the same.
}
