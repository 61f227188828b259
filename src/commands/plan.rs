//! `calibench plan RUN_DIR --metric NAME` (docs/guides/ab-rubric-change.md): from a pilot run's paired differences
//! on one metric, how many targets (or queries) the next A/B needs to detect an effect, by the
//! normal approximation, checked by a seeded simulation that resamples those differences.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, InputError};
use crate::model::Metrics;
use crate::output::Render;
use crate::pipeline::read_file;
use crate::replay::{compared_named, Compared, DeltaTable};
use crate::stats::holm::pairs_for_floor;
use crate::stats::power::{
    mean, needed, normal_power, sd, simulated_power, MAX_COUNT, MAX_SIMULATED_PAIRS, STUDIES,
};

#[derive(Debug, clap::Args)]
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
    pub run_dir: std::path::PathBuf,
    /// The metric to plan for: a key of the run's review.delta or queries.delta, or an
    /// imported scorer's name (scores.delta)
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
    /// The true mean difference to detect, treatment − baseline (default: the pilot's observed
    /// mean difference)
    #[arg(long, allow_negative_numbers = true, value_parser = super::finite, conflicts_with = "labels_for")]
    pub effect: Option<f64>,
    /// The chance of detecting the effect
    #[arg(long, default_value_t = 0.8, value_parser = super::probability)]
    pub power: f64,
    /// The two-sided level of the test
    #[arg(long, default_value_t = 0.05, value_parser = super::probability)]
    pub alpha: f64,
    /// Worker threads of the simulation (default: the CPUs available); the result never
    /// depends on it
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// One row of a run's `pairs.csv`, as `tables::pairs` writes it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct PairRecord {
    pub table: String,
    pub metric: String,
    pub unit: String,
    pub run: Option<u32>,
    pub baseline: f64,
    pub treatment: f64,
    pub difference: f64,
}

/// The plan for one metric: `{metric, effect, sd, pairs, power, alpha, needed,
/// simulated_power}` and what they rest on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanReport {
    pub metric: String,
    /// The true mean difference planned for, signed (treatment − baseline).
    pub effect: f64,
    /// The sample standard deviation of the pilot's differences.
    pub sd: f64,
    /// The pilot's pairs.
    pub pairs: usize,
    pub power: f64,
    pub alpha: f64,
    /// Pairs needed: the larger of what the normal approximation needs for the power
    /// (`normal_needed`) and the fewest with which the sign test can reach `alpha` at all
    /// (`sign_test_pairs`); `binds` says which.
    pub needed: u64,
    /// Pairs the normal approximation needs for the power.
    pub normal_needed: u64,
    /// `power` or `sign test`: which of the two counts `needed` is.
    pub binds: &'static str,
    /// The share of simulated studies of `needed` pairs that detect the effect; null when the
    /// study is too large to simulate.
    pub simulated_power: Option<f64>,
    /// `review` or `queries`.
    pub table: &'static str,
    /// What a pair is: targets, queries.
    pub units: &'static str,
    /// The pilot's mean difference.
    pub observed: f64,
    /// Whether `effect` was given (`--effect`) or is the observed difference.
    pub effect_given: bool,
    pub run_id: String,
    /// The seed of the simulation: the run's.
    pub seed: u64,
    pub studies: usize,
    /// Power at other study sizes, beside the recommended one.
    pub sizes: Vec<SizePower>,
    /// The fewest non-zero pairs with which the exact sign test calibench reports can reach
    /// `alpha` at all (6 for 0.05), whatever the effect.
    pub sign_test_pairs: usize,
    /// Why `simulated_power` is null, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizePower {
    pub pairs: u64,
    pub normal_power: f64,
    pub simulated_power: Option<f64>,
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
    let compared = metric_of(
        &metrics,
        args.metric.as_deref().unwrap_or_default(),
        &args.run_dir,
    )?;
    let diffs = differences(&args.run_dir, &metrics, &compared)?;
    let threads = crate::pipeline::threads(args.threads);
    plan(
        &compared,
        &diffs,
        Settings {
            effect: args.effect,
            power: args.power,
            alpha: args.alpha,
            seed: about.seed,
            threads,
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

/// What `plan` is asked.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub effect: Option<f64>,
    pub power: f64,
    pub alpha: f64,
    pub seed: u64,
    pub threads: usize,
}

/// The delta a plan is made for: a catalogue's metric, or an imported scorer.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub name: String,
    pub table: DeltaTable,
}

impl From<Compared> for Planned {
    fn from(c: Compared) -> Self {
        Planned {
            name: c.name.to_string(),
            table: c.table,
        }
    }
}

/// Why a plan cannot be made from these differences.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The flag at fault: `--metric` or `--effect`.
    pub flag: &'static str,
    pub problem: String,
    pub hint: String,
}

/// The plan from a pilot's differences. Pure.
pub fn plan(
    compared: &Planned,
    diffs: &[f64],
    settings: Settings,
    run_id: &str,
) -> Result<PlanReport, Refusal> {
    let name = compared.name.as_str();
    let units = compared.table.units();
    let refuse = |flag: &'static str, problem: String, hint: &str| Refusal {
        flag,
        problem,
        hint: hint.to_string(),
    };
    let Some(s) = sd(diffs) else {
        return Err(refuse(
            "`--metric`",
            format!(
                "`{name}` has {} paired {units} in this run; a standard deviation needs at least 2",
                diffs.len()
            ),
            "plan from a pilot with at least 2 pairs",
        ));
    };
    if s == 0.0 {
        return Err(refuse(
            "`--metric`",
            format!(
                "`{name}`'s {} differences do not vary (all {:+}): there is no spread to plan from",
                diffs.len(),
                diffs[0]
            ),
            "plan from a metric whose differences vary, or from a bigger pilot",
        ));
    }
    let observed = mean(diffs);
    let effect = settings.effect.unwrap_or(observed);
    if effect == 0.0 {
        return Err(match settings.effect {
            Some(_) => refuse(
                "`--effect`",
                "an effect of 0 cannot be detected: --effect must not be 0".into(),
                "give the smallest difference that would matter, e.g. --effect 0.05",
            ),
            None => refuse(
                "`--effect`",
                format!("`{name}`'s observed mean difference is 0, so there is no default effect"),
                "give the smallest difference that would matter with --effect",
            ),
        });
    }
    let (alpha, power) = (settings.alpha, settings.power);
    let Some(normal_k) = needed(s, effect, alpha, power) else {
        return Err(refuse(
            if settings.effect.is_some() {
                "`--effect`"
            } else {
                "`--alpha`"
            },
            format!(
                "detecting {effect:+e} at two-sided {} with {:.0}% power would take more than {MAX_COUNT} {units}: no study can",
                fmt_level(alpha),
                100.0 * power
            ),
            "plan for a larger effect (--effect) or a less strict level (--alpha)",
        ));
    };
    // The sign test calibench reports cannot reach `alpha` with fewer pairs, whatever the
    // effect: a count below that would plan a study that cannot show anything.
    let sign_test_pairs = pairs_for_floor(alpha);
    let (k, binds) = if normal_k >= sign_test_pairs as u64 {
        (normal_k, "power")
    } else {
        (sign_test_pairs as u64, "sign test")
    };
    let simulate = |pairs: u64| {
        (pairs <= MAX_SIMULATED_PAIRS).then(|| {
            simulated_power(
                diffs,
                effect,
                pairs,
                alpha,
                STUDIES,
                settings.seed,
                settings.threads,
            )
        })
    };
    let simulated = simulate(k);
    let mut sizes: Vec<u64> = [0.5, 0.75, 1.0, 1.5]
        .iter()
        .map(|f| ((k as f64 * f).round() as u64).max(2))
        .collect();
    sizes.dedup();
    let sizes = sizes
        .into_iter()
        .map(|pairs| SizePower {
            pairs,
            normal_power: normal_power(s, effect, pairs, alpha),
            simulated_power: if pairs == k {
                simulated
            } else {
                simulate(pairs)
            },
        })
        .collect();
    Ok(PlanReport {
        metric: name.to_string(),
        effect,
        sd: s,
        pairs: diffs.len(),
        power,
        alpha,
        needed: k,
        normal_needed: normal_k,
        binds,
        simulated_power: simulated,
        table: compared.table.name(),
        units,
        observed,
        effect_given: settings.effect.is_some(),
        run_id: run_id.to_string(),
        seed: settings.seed,
        studies: STUDIES,
        sizes,
        sign_test_pairs,
        note: simulated.is_none().then(|| {
            format!(
                "{k} {units} is more than the {MAX_SIMULATED_PAIRS} a simulated study may draw; the normal approximation stands alone"
            )
        }),
    })
}

/// A level as people write it: `0.05`, and `1e-16` rather than sixteen zeros.
fn fmt_level(alpha: f64) -> String {
    if alpha >= 1e-4 {
        format!("{alpha}")
    } else {
        format!("{alpha:e}")
    }
}

/// The delta `name`, if it is one of the run's deltas with per-unit differences: a catalogue's
/// metric, or a scorer of the imported scores.
fn metric_of(m: &Metrics, name: &str, run_dir: &Path) -> Result<Planned, Error> {
    let file = run_dir.join("metrics.json").display().to_string();
    let tables = [DeltaTable::Review, DeltaTable::Queries, DeltaTable::Scores];
    let names: Vec<&str> = tables
        .into_iter()
        .filter_map(|t| m.deltas(t))
        .flat_map(|d| d.keys().map(String::as_str))
        .collect();
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

/// The pilot's differences on `c`, from the run's `pairs.csv`, checked against the pairs
/// `metrics.json` counts.
fn differences(run_dir: &Path, m: &Metrics, c: &Planned) -> Result<Vec<f64>, Error> {
    let path = run_dir.join("pairs.csv");
    let name = path.display().to_string();
    if !path.is_file() {
        return Err(InputError::new(&name, "does not exist")
            .hint("runs written before calibench kept paired differences have no pairs table; re-run the experiment")
            .into());
    }
    let rows = read_pairs(&name, &read_file(&path)?)?;
    let diffs: Vec<f64> = rows
        .iter()
        .filter(|r| r.table == c.table.name() && r.metric == c.name)
        .map(|r| r.difference)
        .collect();
    if let Some(d) = m.deltas(c.table).and_then(|d| d.get(&c.name)) {
        if d.paired.pairs != diffs.len() {
            return Err(InputError::new(
                &name,
                format!(
                    "holds {} rows for `{}` but metrics.json counts {} pairs",
                    diffs.len(),
                    c.name,
                    d.paired.pairs
                ),
            )
            .field("`metric`")
            .hint("the two files come from different runs; re-run the experiment")
            .into());
        }
    }
    Ok(diffs)
}

/// Reads a pairs table; a row that does not parse is refused with its line and column.
pub fn read_pairs(name: &str, bytes: &[u8]) -> Result<Vec<PairRecord>, InputError> {
    let mut reader = csv::Reader::from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| InputError::new(name, format!("not a CSV table: {e}")).at_line(1))?
        .clone();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            InputError::new(name, format!("not a CSV row: {e}")).at_line(line)
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let row: PairRecord = record.deserialize(Some(&headers)).map_err(|e| {
            let column = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => err
                    .field()
                    .and_then(|i| headers.get(i as usize))
                    .map(str::to_string),
                _ => None,
            };
            let mut error = InputError::new(name, e.to_string()).at_line(line);
            if let Some(c) = column {
                error = error.field(format!("column `{c}`"));
            }
            error.hint(
                "this file is written by `calibench run`; re-run the experiment to rewrite it",
            )
        })?;
        if !row.difference.is_finite() {
            return Err(InputError::new(name, "is not a finite number")
                .at_line(line)
                .field("column `difference`"));
        }
        rows.push(row);
    }
    Ok(rows)
}

impl Render for PlanReport {
    fn human(&self) -> String {
        let units = self.units;
        let mut s = format!(
            "plan for {} ({}, paired over {units}), from run {}\n",
            self.metric, self.table, self.run_id
        );
        s += &format!(
            "  pilot: {} {units}, mean difference {:+.4}, sd of the differences {:.4}\n",
            self.pairs, self.observed, self.sd
        );
        s += &format!(
            "  effect to detect: {:+.4} ({})\n",
            self.effect,
            if self.effect_given {
                "--effect"
            } else {
                "the observed mean difference; choose another with --effect"
            }
        );
        s += &match self.binds {
            "power" => format!(
                "  needed: {} {units} for {:.0}% power at two-sided {} (normal approximation)\n",
                self.needed,
                100.0 * self.power,
                fmt_level(self.alpha)
            ),
            _ => format!(
                "  needed: {} {units}: the sign test in calibench's reports cannot reach p < {} with fewer, whatever the effect (for {:.0}% power alone the normal approximation asks {})\n",
                self.needed,
                fmt_level(self.alpha),
                100.0 * self.power,
                self.normal_needed
            ),
        };
        match self.simulated_power {
            Some(p) => {
                s += &format!(
                    "  check: {} simulated studies of {} {units}, resampling the pilot's differences shifted to the effect, detect it in {:.1}% (seed {})\n",
                    self.studies,
                    self.needed,
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
        s += &format!(
            "  {:>10}  {:>14}  {:>17}\n",
            units, "power (normal)", "power (simulated)"
        );
        for size in &self.sizes {
            s += &format!(
                "  {:>10}  {:>14.3}  {:>17}{}\n",
                size.pairs,
                size.normal_power,
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

    fn settings(effect: Option<f64>) -> Settings {
        Settings {
            effect,
            power: 0.8,
            alpha: 0.05,
            seed: 5,
            threads: 2,
        }
    }

    fn metric(name: &str) -> Planned {
        compared_named(name).unwrap().into()
    }

    #[test]
    fn needed_is_the_closed_form_and_the_simulation_checks_it() {
        // Differences 0.1, 0.3, −0.1, 0.5, 0.2: mean 0.2, squared deviations 0.01 + 0.01 +
        // 0.09 + 0.09 + 0 = 0.2, sd = √(0.2/4) = 0.223607.
        let diffs = [0.1, 0.3, -0.1, 0.5, 0.2];
        let p = plan(&metric("precision"), &diffs, settings(None), "r").unwrap();
        assert!((p.sd - 0.05f64.sqrt()).abs() < 1e-12);
        assert!((p.effect - 0.2).abs() < 1e-12 && !p.effect_given);
        // ((1.959964 + 0.841621) · 0.223607 / 0.2)² = 9.81 → 10.
        assert_eq!(p.needed, 10);
        assert_eq!(p.pairs, 5);
        let sim = p.simulated_power.unwrap();
        // Five values resampled: the simulation is near the target, not on it.
        assert!((sim - 0.8).abs() < 0.1, "{sim}");
        assert_eq!(p.table, "review");
        // A given effect, negative: the same needed as its size.
        let q = plan(&metric("precision"), &diffs, settings(Some(-0.2)), "r").unwrap();
        assert_eq!(q.needed, 10);
        assert!(q.effect_given && q.effect == -0.2);
        // The sizes beside it include the needed one, with the same simulated power.
        let at = p.sizes.iter().find(|s| s.pairs == p.needed).unwrap();
        assert_eq!(at.simulated_power, p.simulated_power);
        assert!(p
            .sizes
            .windows(2)
            .all(|w| w[0].normal_power < w[1].normal_power));
    }

    #[test]
    fn refusals_name_the_metric_or_the_effect() {
        let c = metric("brier");
        let err = plan(&c, &[0.1], settings(None), "r").unwrap_err();
        assert!(err.problem.contains("at least 2"), "{err:?}");
        let err = plan(&c, &[0.1, 0.1, 0.1], settings(None), "r").unwrap_err();
        assert!(err.problem.contains("do not vary"), "{err:?}");
        let err = plan(&c, &[0.1, -0.1], settings(None), "r").unwrap_err();
        assert!(
            err.problem.contains("observed mean difference is 0"),
            "{err:?}"
        );
        let err = plan(&c, &[0.1, 0.3], settings(Some(0.0)), "r").unwrap_err();
        assert!(err.problem.contains("--effect must not be 0"), "{err:?}");
        assert_eq!(c.table, DeltaTable::Queries);
    }

    /// The reader and the writer of the pairs table agree, to the last bit of every value.
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
        let back = read_pairs("pairs.csv", &csv).unwrap();
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
        let e = read_pairs("pairs.csv", bad.as_bytes()).unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(3), Some("column `run`"))
        );
    }

    // Regression (issue 34): `--alpha 1e-16` said "needed: 18446744073709551615 items" (the
    // quantile of 1 − 5·10⁻¹⁷, which is 1 in a double), and `--effect 1e-300` the same.
    #[test]
    fn tiny_levels_plan_a_real_count_and_unreachable_effects_are_refused() {
        let diffs = [0.5, -0.4, 0.3, -0.2, 0.6, 0.1];
        let with = |effect: Option<f64>, alpha: f64| {
            let mut s = settings(effect);
            s.alpha = alpha;
            plan(&metric("confidence_mean"), &diffs, s, "r")
        };
        let strict = with(Some(0.1), 1e-16).unwrap();
        let usual = with(Some(0.1), 0.05).unwrap();
        assert!(strict.needed > usual.needed && strict.needed < 100 * usual.needed);
        assert!(
            strict.human().contains("at two-sided 1e-16"),
            "{}",
            strict.human()
        );
        let e = with(Some(1e-300), 0.05).unwrap_err();
        assert_eq!(e.flag, "`--effect`");
        assert!(
            e.problem.contains("would take more than 9007199254740992"),
            "{}",
            e.problem
        );
    }

    #[test]
    fn a_study_too_big_to_simulate_keeps_the_approximation() {
        let p = plan(
            &metric("confidence_mean"),
            &[0.5, -0.4, 0.3, -0.2],
            settings(Some(0.0001)),
            "r",
        )
        .unwrap();
        assert!(p.needed > MAX_SIMULATED_PAIRS);
        assert_eq!(p.simulated_power, None);
        assert!(p.note.as_deref().unwrap().contains("normal approximation"));
    }
}
