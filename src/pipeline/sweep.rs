//! One sweep end to end (docs/guides/threshold-sweep.md): every grid point checked as the
//! experiment file is, the corpus read once, each point replayed from memory (points in
//! parallel; no figure depends on the threads), the choice made on one part of the units and
//! reported on the other, and the run directory and report written whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;

use super::run::to_json;
use super::{read_file, RunOptions};
use crate::analysis::sweep::{self as replayed, Units};
use crate::config::{self, Experiment};
use crate::error::{Error, InputError};
use crate::input::toml::Override;
use crate::model::{Closest, Holdout, Kept, Recommended, Sweep, SweepPoint, SweepTrust};
use crate::policy::Arm;
use crate::rundir::manifest::Manifest;
use crate::rundir::{self, Claim, RunId};
use crate::sweep::{self, Choice, Estimate, Side, Spec};

/// A sweep made: where it was written, and what it found.
#[derive(Clone, Debug)]
pub struct Done {
    pub run_dir: PathBuf,
    pub report_dir: PathBuf,
    pub sweep: Sweep,
}

/// Runs `spec` over the experiment at `path`. `tick` is called once per point replayed.
pub fn run(
    path: &Path,
    spec: &Spec,
    options: &RunOptions,
    tick: &(dyn Fn() + Sync),
) -> Result<Done, Error> {
    compute(path, spec, options, true, tick)?.write(options)
}

/// A sweep computed and not yet written: what [`Computed::write`] writes.
pub struct Computed {
    result: Sweep,
    started: SystemTime,
    stem: String,
    experiment_file: String,
    /// The choosing and held-out unit ids, one per line, when there is a hold-out.
    units: Option<[String; 2]>,
}

/// What every sweep checks before it replays a point, the same for `sweep`, for `run` before it
/// writes anything of an experiment that declares one, and for `validate`: the grid, each point
/// as the experiment file checks it, the figures the flags name against the corpus's side and
/// its judges' trust verdict, and the split against the units.
struct Checked {
    grid: Vec<Vec<String>>,
    arms: Vec<Arm>,
    side: Side,
    prefer: sweep::Prefer,
    current_arm: Arm,
    trust: Option<crate::trust::TrustVerdict>,
}

fn check(
    path: &Path,
    spec: &Spec,
    options: &RunOptions,
    exp: &Experiment,
    corpus: &crate::corpus::Corpus,
) -> Result<Checked, Error> {
    if !matches!(spec.arm.as_str(), "baseline" | "treatment") {
        return Err(
            InputError::new("calibench sweep", format!("`{}` is not an arm", spec.arm))
                .field("--arm")
                .hint("sweep one of the experiment's two arms: --arm baseline or --arm treatment")
                .into(),
        );
    }
    let (grid, arms) = points(path, spec, options)?;
    let side = replayed::side_of(corpus).ok_or_else(|| {
        InputError::new(
            exp.corpus.display().to_string(),
            "holds no reviews.jsonl or queries.jsonl",
        )
        .hint("a sweep replays reviewer returns or query traces")
    })?;
    let prefer = spec.prefer.clone().unwrap_or_else(|| side.default_prefer());
    let current_arm = arm_of(exp, &spec.arm).clone();
    let trust = match side {
        Side::Review => crate::analysis::panel_verdict(exp, corpus)?,
        Side::Queries => None,
    };
    check_flags(
        spec,
        side,
        &prefer,
        &arms,
        &current_arm,
        (
            corpus.verdicts.is_some(),
            replayed::records_cost(corpus),
            exp.bootstrap,
        ),
    )?;
    if let Some(v) = trust.as_ref().filter(|v| !v.trustworthy) {
        check_trusted(spec, side, &prefer, v)?;
    }
    Ok(Checked {
        grid,
        arms,
        side,
        prefer,
        current_arm,
        trust,
    })
}

/// A requirement or preference on a judge-derived figure under judges that are not trusted:
/// `run` withholds the figure, so the sweep may not choose on it.
fn check_trusted(
    spec: &Spec,
    side: Side,
    prefer: &sweep::Prefer,
    verdict: &crate::trust::TrustVerdict,
) -> Result<(), Error> {
    let named = spec
        .require
        .iter()
        .map(|r| ("--require", r.metric.as_str()))
        .chain([("--prefer", prefer.metric.as_str())]);
    for (flag, metric) in named {
        let judged = side.figures().iter().any(|f| f.name == metric && f.judged);
        if judged {
            return Err(InputError::new(
                "calibench sweep",
                format!(
                    "{flag} names `{metric}`, a judge-derived figure, and the judges are not trusted, so `run` withholds it and a sweep will not choose on it: {}",
                    verdict.trust_reasons.join("; ")
                ),
            )
            .field(flag)
            .hint("choose on figures the replay measures (surfaced, actionable, fyi, dropped, rejected), or make the panel agree first (docs/guides/trust.md)")
            .into());
        }
    }
    Ok(())
}

/// The split `spec` asks for over `ids`: none without requirements or with `holdout = 0`.
fn split_of(
    spec: &Spec,
    ids: &[String],
    seed: u64,
    side: Side,
) -> Result<(Option<f64>, Option<crate::sweep::Parts>), Error> {
    let fraction = spec.holdout.or((!spec.require.is_empty()).then_some(0.5));
    let split = sweep::parts(ids, fraction, !spec.require.is_empty(), seed, side.units()).map_err(
        |e| {
            let flag = if fraction.is_some_and(|f| f > 0.0) {
                "--holdout"
            } else {
                "--require"
            };
            Error::from(
                InputError::new("calibench sweep", e)
                    .field(flag)
                    .hint(format!(
                        "record more {}, or sweep without requirements (the preferred figure alone chooses, with no interval)",
                        side.units()
                    )),
            )
        },
    )?;
    Ok((fraction.filter(|f| *f > 0.0), split))
}

/// The `i`-th `[[sweep]]` of the experiment at `file`, checked completely against the corpus
/// `run` reads, as `run` checks it before writing anything: a refusal names the table's key
/// and line.
pub fn check_declared(
    file: &Path,
    i: usize,
    spec: &Spec,
    options: &RunOptions,
    exp: &Experiment,
    corpus: &crate::corpus::Corpus,
) -> Result<(), Error> {
    let checked = || -> Result<(), Error> {
        let c = check(file, spec, options, exp, corpus)?;
        let replayer = replayed::Replayer::new(exp, corpus, spec.confirm_at);
        let current = replayer.units(&c.current_arm)?;
        split_of(spec, &current.ids, exp.seed, c.side)?;
        Ok(())
    };
    checked().map_err(|e| as_declared(e, file, i))
}

/// A sweep refusal said of the `i`-th `[[sweep]]` table of `file`: the flag it names becomes
/// the table's key, on its line.
pub fn as_declared(e: Error, file: &Path, i: usize) -> Error {
    let Error::Input(ie) = e else {
        return e;
    };
    if ie.file != "calibench sweep" {
        return Error::Input(ie);
    }
    let flag = ie.field.clone().unwrap_or_default();
    let key = match flag.as_str() {
        "--require" => "require",
        "--prefer" => "prefer",
        "--holdout" => "holdout",
        "--confirm-at" => "confirm_at",
        "--arm" => "arm",
        _ => "vary",
    };
    let at = format!("sweep[{i}].{key}");
    // "--require names `x`, …" is said of the key the line names: "names `x`, …".
    let problem = match ie.problem.strip_prefix(&flag) {
        Some(rest) if !flag.is_empty() => rest.trim_start().to_string(),
        _ if flag.is_empty() => ie.problem.clone(),
        _ => ie.problem.replace(&flag, &format!("`{at}`")),
    };
    let mut out = config::error_at(file, &at, problem);
    out.hint = ie.hint;
    Error::Input(out)
}

/// Computes the sweep of `spec` without writing anything; `warn`: say the inputs' caveats on
/// stderr (a declared sweep's run has said them).
pub fn compute(
    path: &Path,
    spec: &Spec,
    options: &RunOptions,
    warn: bool,
    tick: &(dyn Fn() + Sync),
) -> Result<Computed, Error> {
    let started = SystemTime::now();
    let file = super::experiment_file(path);
    let name = file.display().to_string();
    let (exp, corpus) = load(path, options, &name, warn)?;
    let Checked {
        grid,
        arms,
        side,
        prefer,
        current_arm,
        trust,
    } = check(path, spec, options, &exp, &corpus)?;
    let untrusted = trust.as_ref().is_some_and(|v| !v.trustworthy);
    let replayer = replayed::Replayer::new(&exp, &corpus, spec.confirm_at);
    let current = replayer.units(&current_arm)?;
    let (fraction, split) = split_of(spec, &current.ids, exp.seed, side)?;
    let chosen = split.as_ref().map(|(c, _)| c.as_slice());
    let estimate = |units: &Units, on: Option<&[usize]>| {
        sweep::estimate(side, &units.vectors, on, exp.bootstrap, exp.seed)
    };

    let on_chosen = |units: &Units| estimate(units, chosen);
    let estimates = replay_points(&replayer, &arms, &current.ids, &on_chosen, options, tick)?;

    let shown = Shown {
        side,
        validated: corpus.validations.is_some(),
        costed: replayer.costed(),
        untrusted,
    };
    let figures = |e: &[Estimate]| shown.figures(e);
    let values_of = |values: &[String]| values_of(spec, values);
    let on_frontier = spec.frontier.as_ref().map(|f| {
        let at = |name: &str| side.figures().iter().position(|g| g.name == name);
        match (at(&f.x), at(&f.y)) {
            (Some(x), Some(y)) => sweep::frontier(side, &estimates, [x, y]),
            _ => vec![false; estimates.len()],
        }
    });
    let points: Vec<SweepPoint> = grid
        .iter()
        .zip(&estimates)
        .enumerate()
        .map(|(i, (values, e))| SweepPoint {
            values: values_of(values),
            figures: figures(e),
            on_frontier: on_frontier.as_ref().map(|f| f[i]),
        })
        .collect();
    let held = split.as_ref().map(|(_, h)| h.as_slice());
    let current_estimates = estimate(&current, chosen);
    let Outcome {
        recommended,
        closest,
        kept,
        versus_current,
    } = match sweep::choose(side, &estimates, &current_estimates, &spec.require, &prefer) {
        Some(Choice::Recommended(k)) => {
            let units = aligned(replayer.units(&arms[k])?, &current.ids);
            let held_out = held.map(|h| estimate(&units, Some(h)));
            recommended(
                &shown,
                spec,
                (k, &grid[k], &estimates[k]),
                (&current, &units, held, held_out),
                exp.bootstrap,
                exp.seed,
            )
        }
        Some(Choice::Keep(k)) => Outcome {
            kept: Some(Kept {
                index: k,
                all_tie: sweep::all_tie(&estimates)
                    && estimates.first().is_none_or(|e| *e == current_estimates),
            }),
            ..Outcome::default()
        },
        Some(Choice::Closest(k, misses)) => Outcome {
            closest: Some(Closest {
                index: k,
                values: values_of(&grid[k]),
                misses: misses.iter().map(ToString::to_string).collect(),
            }),
            ..Outcome::default()
        },
        None => Outcome::default(),
    };
    let current_values = spec
        .vary
        .iter()
        .map(|v| (v.key.clone(), current_value(&current_arm, &v.key)))
        .collect();
    let result = Sweep {
        run_id: String::new(),
        experiment: exp.name.clone(),
        arm: spec.arm.clone(),
        side,
        units: current.ids.len(),
        vary: spec.vary.clone(),
        points,
        meeting: sweep::meeting(side, &estimates, &spec.require),
        requirements: spec.require.iter().map(ToString::to_string).collect(),
        prefer: prefer.to_string(),
        confirm_at: (side == Side::Review).then_some(spec.confirm_at),
        holdout: fraction.zip(split.as_ref()).map(|(f, (c, h))| Holdout {
            fraction: f,
            choosing: c.len(),
            held_out: h.len(),
        }),
        current: SweepPoint {
            values: current_values,
            figures: figures(&current_estimates),
            on_frontier: None,
        },
        frontier: spec.frontier.clone(),
        recommended,
        kept,
        trust: trust.map(|v| SweepTrust {
            trustworthy: v.trustworthy,
            reasons: v.trust_reasons,
        }),
        closest,
        versus_current,
        bootstrap: exp.bootstrap,
        seed: exp.seed,
    };
    let units = split.as_ref().map(|(c, h)| {
        [c, h].map(|idx| {
            idx.iter()
                .map(|&i| format!("{}\n", current.ids[i]))
                .collect::<String>()
        })
    });
    Ok(Computed {
        result,
        started,
        stem: format!("{}-sweep-{}", exp.name, spec.arm),
        experiment_file: name,
        units,
    })
}

/// How a sweep's figures are shown: without validator calls nothing can be rejected (the figure
/// is left out, not written 0), and under judges that are not trusted the judge-derived figures
/// are withheld (null).
struct Shown {
    side: Side,
    validated: bool,
    /// Whether any return records what its call cost: `cost_usd` is left out if not.
    costed: bool,
    untrusted: bool,
}

impl Shown {
    /// Whether the corpus measures `f` at all.
    fn measured(&self, f: &str) -> bool {
        (self.validated || f != "rejected") && (self.costed || f != sweep::COST)
    }

    /// The figures of one point, by name.
    fn figures(&self, e: &[Estimate]) -> BTreeMap<String, Estimate> {
        self.side
            .figures()
            .iter()
            .zip(e)
            .filter(|(f, _)| self.measured(f.name))
            .map(|(f, e)| {
                let e = if self.untrusted && f.judged {
                    Estimate {
                        value: None,
                        ci: None,
                    }
                } else {
                    e.clone()
                };
                (f.name.to_string(), e)
            })
            .collect()
    }

    /// Whether the figure `name` is shown.
    fn shows(&self, name: &str) -> bool {
        self.measured(name)
            && (!self.untrusted
                || !self
                    .side
                    .figures()
                    .iter()
                    .any(|f| f.name == name && f.judged))
    }
}

/// A point's values of the swept keys, by key.
fn values_of(spec: &Spec, values: &[String]) -> BTreeMap<String, Value> {
    spec.vary
        .iter()
        .zip(values)
        .map(|(v, x)| (v.key.clone(), sweep::json_value(x)))
        .collect()
}

/// What a sweep chose: a setting to recommend (with its comparison with the current one), the
/// closest miss, or the current setting kept.
#[derive(Default)]
struct Outcome {
    recommended: Option<Recommended>,
    closest: Option<Closest>,
    kept: Option<Kept>,
    versus_current: BTreeMap<String, crate::stats::paired::PairedDelta>,
}

/// The recommended point `k` (its values and its estimates on the choosing units), with its
/// estimates on the held-out units and its paired comparison with the current setting there.
fn recommended(
    shown: &Shown,
    spec: &Spec,
    (k, values, choosing): (usize, &[String], &[Estimate]),
    (current, units, held, held_out): (&Units, &Units, Option<&[usize]>, Option<Vec<Estimate>>),
    bootstrap: usize,
    seed: u64,
) -> Outcome {
    let versus_current = sweep::versus(
        shown.side,
        &current.vectors,
        &units.vectors,
        held,
        bootstrap,
        seed,
    )
    .into_iter()
    .filter(|(n, _)| shown.shows(n))
    .map(|(n, d)| (n.to_string(), d))
    .collect();
    let held_out_misses = held_out
        .as_ref()
        .map(|e| sweep::misses(shown.side, e, &spec.require))
        .unwrap_or_default();
    Outcome {
        recommended: Some(Recommended {
            index: k,
            values: values_of(spec, values),
            choosing: shown.figures(choosing),
            held_out: held_out.map(|e| crate::model::HeldOut {
                figures: shown.figures(&e),
                meets: held_out_misses.is_empty(),
            }),
            held_out_misses: held_out_misses.iter().map(ToString::to_string).collect(),
        }),
        versus_current,
        ..Outcome::default()
    }
}

impl Computed {
    /// Claims the sweep's run directory and writes it and its report.
    pub fn write(self, options: &RunOptions) -> Result<Done, Error> {
        let claim = claim(options, &self.stem, self.started)?;
        let run_id = claim.id().to_string();
        let mut result = self.result;
        result.run_id = run_id.clone();
        // A sweep's manifest records no experiment and no inputs (its metrics.json holds what
        // each point read), and its overrides even when there are none.
        let manifest: Manifest<()> = Manifest {
            run_id: run_id.clone(),
            calibench_version: env!("CARGO_PKG_VERSION").into(),
            command_line: std::env::args().collect(),
            experiment_file: self.experiment_file,
            experiment: None,
            overrides: Some(options.set.iter().map(ToString::to_string).collect()),
            inputs: None,
            seed: result.seed,
            bootstrap: result.bootstrap,
            started_at: rundir::timestamp(self.started),
            finished_at: rundir::timestamp(SystemTime::now()),
        };
        let (run_dir, report_dir) = write(claim, &result, self.units, &manifest, options)?;
        Ok(Done {
            run_dir,
            report_dir,
            sweep: result,
        })
    }
}

/// The sweep's run directory, claimed: `--run-id`, or `<experiment>-sweep-<arm>-<time>`.
fn claim(options: &RunOptions, stem: &str, started: SystemTime) -> Result<Claim, Error> {
    let id = match &options.run_id {
        Some(id) => RunId::Given(id.clone()),
        None => RunId::Default(format!("{stem}-{}", rundir::compact_time(started))),
    };
    super::claim_with_report(options, id)
}

/// Replays every grid point on the threads `options` allows, `tick`ing once per point; each
/// point's units are aligned with the current arm's (`ids`) and summed up by `estimate`.
/// Results land in their grid slot, so no figure depends on the threads.
fn replay_points(
    replayer: &replayed::Replayer,
    arms: &[Arm],
    ids: &[String],
    estimate: &(dyn Fn(&Units) -> Vec<Estimate> + Sync),
    options: &RunOptions,
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<Vec<Estimate>>, Error> {
    let threads = super::threads(options.threads).clamp(1, arms.len().max(1));
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<PointResult>>> = Mutex::new(vec![None; arms.len()]);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            crate::threads::scoped(scope, "sweep", || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(arm) = arms.get(i) else { break };
                let result = replayer.units(arm).map(|u| estimate(&aligned(u, ids)));
                slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                tick();
            });
        }
    });
    Ok(slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|s| s.expect("every point replayed"))
        .collect::<Result<_, _>>()?)
}

/// The run directory (metrics.json, the manifest, the choosing and held-out unit lists when
/// there is a hold-out, sweep.csv and sweep.parquet: all or nothing) and the report.
fn write(
    claim: Claim,
    result: &Sweep,
    units: Option<[String; 2]>,
    manifest: &Manifest<()>,
    options: &RunOptions,
) -> Result<(PathBuf, PathBuf), Error> {
    let run_id = manifest.run_id.as_str();
    let mut files = vec![(
        "metrics.json".to_string(),
        to_json(&MetricsFile {
            run_id,
            sweep: result,
        }),
    )];
    if let Some([choosing, held_out]) = units {
        files.push(("choosing.txt".into(), choosing.into_bytes()));
        files.push(("held_out.txt".into(), held_out.into_bytes()));
    }
    files.push((crate::rundir::manifest::FILE.into(), to_json(manifest)));
    let table_error = |e: polars::error::PolarsError| std::io::Error::other(e.to_string());
    claim.write_with(["sweep.csv", "sweep.parquet"], |[csv, parquet]| {
        let frame = crate::report::sweep::table(result)
            .and_then(|df| crate::report::tables::with_run_id(df, &result.run_id));
        crate::report::tables::write_frames([frame], csv, parquet).map_err(table_error)
    })?;
    let run_dir = claim.commit(&files)?;
    let rendered = crate::report::sweep::render(result, !options.no_plots)
        .map_err(|e| Error::Write(std::io::Error::other(format!("report of {run_id}: {e}"))))?;
    let report_dir = rundir::replace_dir(&options.reports_dir.join(run_id), &rendered)?;
    Ok((run_dir, report_dir))
}

/// The experiment as `run` reads it, with the flags' bootstrap and seed, and its corpus. As
/// `run` does, a corpus most of whose findings are malformed is swept and said to be; `warn`:
/// say the inputs' caveats (a declared sweep's run has said them).
fn load(
    path: &Path,
    options: &RunOptions,
    name: &str,
    warn: bool,
) -> Result<(Experiment, crate::corpus::Corpus), Error> {
    let loaded = super::load::for_run(path, options)?;
    if warn {
        super::run::warn_caveats(
            name,
            &loaded.ledger.caveats,
            "the sweep goes on, on the units and findings that are valid",
        );
        for share in &loaded.suspect {
            crate::output::print_warning(&format!(
                "{name}: {}; the sweep goes on, on the findings that are valid\n  hint: {}",
                share.sentence(),
                share.fix
            ));
        }
    }
    let mut exp = loaded.experiment;
    if let Some(b) = options.bootstrap {
        exp.bootstrap = b;
    }
    if let Some(s) = options.seed {
        exp.seed = s;
    }
    Ok((exp, loaded.corpus))
}

/// The flags that name figures name ones the side has, and no point changes what the corpus
/// was read as (the arm's scale or source).
fn check_flags(
    spec: &Spec,
    side: Side,
    prefer: &sweep::Prefer,
    arms: &[Arm],
    current: &Arm,
    (judges, costed, bootstrap): (bool, bool, usize),
) -> Result<(), Error> {
    check_side(spec, side)?;
    let check = |flag: &str, metric: &str| -> Result<(), Error> {
        let i = sweep::figure_index(side, metric, flag).map_err(|e| usage(flag, e))?;
        if side.figures()[i].judged && !judges {
            return Err(usage(
                flag,
                format!("{flag} names `{metric}`, a judged figure, but the corpus has no verdicts.jsonl: it is never measured"),
            ));
        }
        if metric == sweep::COST && !costed {
            return Err(usage(
                flag,
                format!("{flag} names `cost_usd`, but no return in the corpus records what its call cost (`usage.cost_usd`): it is never measured"),
            ));
        }
        Ok(())
    };
    for r in &spec.require {
        check("--require", &r.metric)?;
    }
    if let Some(f) = &spec.frontier {
        check("--frontier", &f.x)?;
        check("--frontier", &f.y)?;
    }
    if !spec.require.is_empty() && bootstrap == 0 {
        return Err(usage(
            "--require",
            "a requirement is met when a figure's 95% interval clears it, and --bootstrap 0 draws no interval: nothing could meet it".into(),
        ));
    }
    check("--prefer", &prefer.metric)?;
    if arms
        .iter()
        .any(|a| a.review.scale() != current.review.scale() || a.source != current.source)
    {
        return Err(usage(
            "--vary",
            "a sweep replays the corpus as it was read: it cannot vary the arm's scale or source"
                .into(),
        ));
    }
    Ok(())
}

/// Every grid point of `spec`, with the arm as the point sets it: the experiment with the
/// point's keys set, checked exactly as the file is. `run` checks a declared sweep with it
/// before anything is replayed or written.
pub fn points(
    path: &Path,
    spec: &Spec,
    options: &RunOptions,
) -> Result<(Vec<Vec<String>>, Vec<Arm>), Error> {
    let file = super::experiment_file(path);
    let grid = sweep::grid(&spec.vary).map_err(|e| usage("--vary", e))?;
    let text = String::from_utf8(read_file(&file)?)
        .map_err(|_| InputError::new(file.display().to_string(), "is not valid UTF-8"))?;
    check_keys(spec)?;
    let arms = grid
        .iter()
        .map(|values| {
            let mut overrides = options.set.clone();
            overrides.extend(spec.vary.iter().zip(values).map(|(v, value)| Override {
                key: format!("arms.{}.{}", spec.arm, v.key),
                value: value.clone(),
                flag: "--vary",
            }));
            let exp = config::parse_with(&file, &text, &overrides)
                .map_err(|e| at_point(e, spec, values))?;
            Ok(arm_of(&exp, &spec.arm).clone())
        })
        .collect::<Result<_, InputError>>();
    // A key of the other side's table fails at every point (a review key over a query arm
    // lacks its policy): said as what it is, when the corpus shows which side it replays.
    if arms.is_err() {
        if let Ok(exp) = config::parse_with(&file, &text, &options.set) {
            let (reviews, queries) = (
                exp.corpus
                    .join(crate::corpus::files::File::Reviews.name())
                    .is_file(),
                exp.corpus
                    .join(crate::corpus::files::File::Queries.name())
                    .is_file(),
            );
            match (reviews, queries) {
                (false, true) => check_side(spec, Side::Queries)?,
                (true, false) => check_side(spec, Side::Review)?,
                _ => {}
            }
        }
    }
    Ok((grid, arms?))
}

/// The keys a sweep varies must be ones a point can change: a threshold of the policy the arm
/// replays, on the side the corpus has. Varying the policy itself, or a review key over query
/// traces (or a confidence key over reviews), would refuse every point with a message about
/// something else.
fn check_keys(spec: &Spec) -> Result<(), InputError> {
    for v in &spec.vary {
        if v.key == "review.policy" || v.key == "confidence.policy" {
            return Err(InputError::new(
                "calibench sweep",
                format!("`{}` names the arm's policy, which sets how the corpus is read (its scale): a sweep varies one policy's thresholds", v.key),
            )
            .field("--vary")
            .hint("compare two policies as an A/B (`calibench run`, one per arm); sweep each one's thresholds on its own"));
        }
    }
    Ok(())
}

/// A key of the table the corpus's side does not replay (a review key over query traces):
/// every point would be refused, or replay the same, with a message about something else.
fn check_side(spec: &Spec, side: Side) -> Result<(), Error> {
    let (other, has, vary) = match side {
        Side::Review => (
            "confidence",
            crate::corpus::files::File::Reviews.name(),
            "review.*",
        ),
        Side::Queries => (
            "review",
            crate::corpus::files::File::Queries.name(),
            "confidence.*",
        ),
    };
    match spec
        .vary
        .iter()
        .find(|v| v.key.split('.').next() == Some(other))
    {
        Some(v) => Err(usage(
            "--vary",
            format!(
                "`{}` is a key of the arm's {other} table, but the corpus replays {} ({has}): no point would replay it; vary {vary} keys",
                v.key,
                side.units()
            ),
        )),
        None => Ok(()),
    }
}

/// A grid point's refusal naming the point, when the refusal is about a key it did not vary (a
/// rule across keys: the stop threshold above the varied recovery threshold).
fn at_point(e: InputError, spec: &Spec, values: &[String]) -> InputError {
    let names_it = e.file.contains("--vary");
    if names_it {
        return e;
    }
    let point: Vec<String> = spec
        .vary
        .iter()
        .zip(values)
        .map(|(v, x)| format!("--vary {}.{}={x}", spec.arm, v.key))
        .collect();
    InputError {
        problem: format!("{} (at the grid point {})", e.problem, point.join(", ")),
        ..e
    }
}

/// One point's figures, or why its replay was refused.
type PointResult = Result<Vec<Estimate>, InputError>;

#[derive(Serialize)]
struct MetricsFile<'a> {
    run_id: &'a str,
    sweep: &'a Sweep,
}

fn usage(flag: &str, problem: String) -> Error {
    InputError::new("calibench sweep", problem)
        .field(flag)
        .into()
}

fn arm_of<'a>(exp: &'a Experiment, arm: &str) -> &'a Arm {
    if arm == "baseline" {
        &exp.baseline
    } else {
        &exp.treatment
    }
}

/// `units` in the order of `ids`; a unit a point did not replay counts as all zeros.
fn aligned(units: Units, ids: &[String]) -> Units {
    if units.ids == ids {
        return units;
    }
    let dim = units.vectors.first().map_or(0, Vec::len);
    let by_id: BTreeMap<&String, &Vec<f64>> = units.ids.iter().zip(&units.vectors).collect();
    Units {
        ids: ids.to_vec(),
        vectors: ids
            .iter()
            .map(|id| {
                by_id
                    .get(id)
                    .map_or_else(|| vec![0.0; dim], |v| (*v).clone())
            })
            .collect(),
    }
}

/// The value the arm, as the experiment resolves it (defaults included, on the arm's scale),
/// has at `key`, as `experiment.toml` writes it ([`Arm::written`]); `null` where the policy
/// has no such key.
fn current_value(arm: &Arm, key: &str) -> Value {
    let mut at = arm.written();
    for part in key.split('.') {
        at = at.get(part).cloned().unwrap_or(Value::Null);
    }
    match at {
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|x| x.fract() == 0.0 && x.abs() < 1e15) =>
        {
            Value::from(n.as_f64().unwrap_or_default() as i64)
        }
        other => other,
    }
}
