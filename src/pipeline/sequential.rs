//! `run --sequential` (docs/guides/stop-when-you-know.md): which decision metrics can be
//! decided sequentially and with what range (checked before the run claims anything), the
//! units' arrival order, and each metric's per-unit differences in that order for the pure
//! [`crate::sequential::decide`].

use std::collections::{BTreeMap, BTreeSet};

use crate::config::Experiment;
use crate::error::InputError;
use crate::model::PairRow;
use crate::policy::Wanted;
use crate::replay::{decidable, DeltaTable, LIFT};
use crate::sequential::{Sequential, Stream};
use crate::stats::rng::Rng;

/// A decision metric that a sequence can bound: its table and the range of its unit values.
#[derive(Clone, Debug)]
pub struct Qualified {
    pub wanted: Wanted,
    pub table: DeltaTable,
    pub range: [f64; 2],
}

/// The experiment's decision metrics as sequences can decide them, or the refusal naming the
/// first that cannot be (and the key that would make it one).
pub fn qualify(exp: &Experiment, file: &str) -> Result<Vec<Qualified>, InputError> {
    let error = |problem: String, hint: &str| {
        let e = InputError::new(file, problem)
            .field("`decision`")
            .hint(hint);
        match exp.decision_line {
            Some(l) => e.at_line(l),
            None => e,
        }
    };
    let wanted = exp.decision_metrics();
    if wanted.is_empty() {
        return Err(InputError::new(
            file,
            "--sequential decides on the experiment's decision metrics, and it names none",
        )
        .hint("add a [decision] table: each metric with the way it must move"));
    }
    let declared = |name: &str| exp.sequential_range.get(name).copied();
    let mut out: Vec<Qualified> = Vec::new();
    for w in wanted {
        let name = w.metric.as_str();
        if w.relative {
            return Err(error(
                format!("`{name}`'s margin or smallest effect is a percentage, a ratio of the arms' means: the sequence bounds a mean of per-unit differences, not a ratio"),
                &format!("give `{name}`'s margin in its own units for the sequential run, or decide on it at a fixed size"),
            ));
        }
        let (table, range) = match decidable(name) {
            Some(c) if c.table == DeltaTable::LiftHuman => {
                return Err(error(
                    format!("`{name}` is an estimate with a standard error (PPI++), not a mean of per-unit differences: no sequence can bound it"),
                    &format!("decide sequentially on `{}` or `precision`, and on {name} at a fixed size (calibench plan --metric {name})", LIFT.name),
                ))
            }
            Some(c) if !c.per_unit => {
                return Err(error(
                    format!("`{name}` is a figure of the whole set of units, with no per-unit difference: no sequence can bound it"),
                    "make it a guard checked at a fixed size, or leave it out of [decision] for the sequential run",
                ))
            }
            Some(c) => {
                // A declared range narrower than the values a unit can take is a collection
                // that stops at the first unit outside it, after its calls are paid for.
                if let (Some(d), Some(k)) = (declared(name), c.range) {
                    if d[0] > k[0] || d[1] < k[1] {
                        return Err(InputError::new(
                            file,
                            format!(
                                "the declared range [{}, {}] of `{name}` is narrower than the values a unit can take, [{}, {}]: the first unit outside it would stop the sequence",
                                crate::text::fmt_num(d[0]),
                                crate::text::fmt_num(d[1]),
                                crate::text::fmt_num(k[0]),
                                crate::text::fmt_num(k[1])
                            ),
                        )
                        .field(format!("`sequential.range.{name}`"))
                        .hint(format!("leave {name} out of [sequential] range (its range is known), or declare one that holds [{}, {}]", crate::text::fmt_num(k[0]), crate::text::fmt_num(k[1]))));
                    }
                }
                (c.table, declared(name).or(c.range))
            }
            None => (DeltaTable::Scores, declared(name)),
        };
        let Some(range) = range else {
            return Err(error(
                format!("`{name}` has no range its per-unit values are known to stay in, and a sequence needs one"),
                &format!("declare it: [sequential] range = {{ {name} = [LOW, HIGH] }} (every unit's value must lie in it)"),
            ));
        };
        if let Some(other) = out.iter().find(|q| q.table.units() != table.units()) {
            return Err(error(
                format!(
                    "`{name}` is over {} and `{}` over {}: one sequence of arrivals runs over one kind of unit",
                    table.units(),
                    other.wanted.metric,
                    other.table.units()
                ),
                "decide sequentially on metrics of one kind of unit",
            ));
        }
        out.push(Qualified {
            wanted: w,
            table,
            range,
        });
    }
    Ok(out)
}

/// The seeded arrival order of `ids`: sorted, then shuffled by the experiment's seed.
pub fn permutation(ids: &BTreeSet<String>, seed: u64) -> Vec<String> {
    let mut order: Vec<String> = ids.iter().cloned().collect();
    let mut rng = Rng::for_replicate(seed ^ 0x5E9_0E9C_E5EE, 0);
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// The order a sequential collection took its targets in, as its `collect.json` records it.
#[derive(Clone, Debug)]
pub struct RecordedOrder {
    pub ids: Vec<String>,
    /// The record, for messages.
    pub path: String,
}

/// The sequential decision of `metrics` over the run's `pairs`, units arriving in `order` (a
/// collection's, which must hold every unit of the pairs; else a seeded permutation of them). A
/// unit's runs (a query's) arrive together. The metrics in `withheld` (the run withheld them)
/// make the verdict `withheld`.
pub fn decide(
    metrics: &[Qualified],
    pairs: &[PairRow],
    order: Option<RecordedOrder>,
    seed: u64,
    method: crate::sequential::Method,
    file: &str,
    withheld: Vec<String>,
) -> Result<Sequential, InputError> {
    let units: BTreeSet<String> = pairs
        .iter()
        .filter(|p| {
            metrics
                .iter()
                .any(|q| q.table == p.table && q.wanted.metric == p.metric)
        })
        .map(|p| p.pair.unit.clone())
        .collect();
    let (order, order_name): (Vec<String>, String) = match order {
        // The collection's order of every target it could collect, kept to those collected;
        // a unit it lacks is refused, naming the record.
        Some(given) => {
            let held: BTreeSet<&str> = given.ids.iter().map(String::as_str).collect();
            if let Some(lacking) = units.iter().find(|u| !held.contains(u.as_str())) {
                return Err(InputError::new(
                    &given.path,
                    format!("lacks `{}`, a unit of the corpus", crate::text::terminal(lacking)),
                )
                .field("`sequential.order`")
                .hint("the order is the one the collection took its targets in: replay the collection as it was made"));
            }
            let kept = given.ids.into_iter().filter(|u| units.contains(u));
            (kept.collect(), crate::corpus::collection::FILE.to_string())
        }
        None => (
            permutation(&units, seed),
            format!("seeded permutation (seed {seed})"),
        ),
    };
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i + 1))
        .collect();
    let mut streams = Vec::new();
    for q in metrics {
        let mut arrived: Vec<(usize, Option<u32>, f64)> = pairs
            .iter()
            .filter(|p| p.table == q.table && p.metric == q.wanted.metric)
            .map(|p| {
                let look = rank.get(p.pair.unit.as_str()).copied().ok_or_else(|| {
                    InputError::new(
                        file,
                        format!("unit `{}` is not in the arrival order", p.pair.unit),
                    )
                })?;
                for (arm, v) in [("baseline", p.pair.baseline), ("treatment", p.pair.treatment)]
                {
                    if !(v >= q.range[0] && v <= q.range[1]) {
                        return Err(InputError::new(
                            file,
                            format!(
                                "`{}` of unit `{}` is {} in {arm}, outside its range [{}, {}]",
                                q.wanted.metric,
                                p.pair.unit,
                                crate::text::fmt_num(v),
                                crate::text::fmt_num(q.range[0]),
                                crate::text::fmt_num(q.range[1])
                            ),
                        )
                        .field(format!("`sequential.range.{}`", q.wanted.metric))
                        .hint("a sequence is valid only for values inside the declared range: declare the range every value can take"));
                    }
                }
                Ok((look, p.pair.run, p.pair.treatment - p.pair.baseline))
            })
            .collect::<Result<_, InputError>>()?;
        arrived.sort_by_key(|a| (a.0, a.1));
        streams.push((
            q.wanted.metric.clone(),
            Stream {
                wanted: q.wanted.clone(),
                range: q.range,
                looks: arrived.iter().map(|a| a.0).collect(),
                d: arrived.iter().map(|a| a.2).collect(),
            },
        ));
    }
    let unit_name = metrics.first().map_or("units", |q| q.table.units());
    crate::sequential::decide(&streams, method, order, order_name, unit_name)
        .map(|s| crate::sequential::withhold(s, withheld))
        .map_err(|e| InputError::new(file, e))
}

/// The decision metrics of `qualified` that the run withheld (judge-derived, judges not trusted).
pub fn withheld(qualified: &[Qualified], m: &crate::model::Metrics) -> Vec<String> {
    qualified
        .iter()
        .filter(|q| match q.table {
            DeltaTable::Lift => m.lift.as_ref().is_some_and(|l| l.withheld),
            table => m.withheld(table).contains(&q.wanted.metric),
        })
        .map(|q| q.wanted.metric.clone())
        .collect()
}

/// The arrival order a sequential collection recorded in `dir/collect.json`
/// (`sequential.order`), if it did. The record is read through its type: one that does not
/// read, or whose order names a target twice, is an error naming its field.
pub fn recorded_order(dir: &std::path::Path) -> Result<Option<RecordedOrder>, crate::error::Error> {
    use crate::corpus::collection::{Collection, FILE};
    let path = dir.join(FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let bytes = super::read_file(&path)?;
    let name = path.display().to_string();
    let record = Collection::read(&name, &bytes)?;
    Ok(record.sequential.map(|s| RecordedOrder {
        ids: s.order,
        path: name,
    }))
}

/// The sequential decision of the experiment at `path` over the corpus in `dir`, in the order
/// `order`: what `collect --until-decided` reads after each batch, and what `run --sequential`
/// of the finished collection reproduces. Nothing is written.
pub fn replay(
    path: &std::path::Path,
    dir: &std::path::Path,
    order: Vec<String>,
) -> Result<Sequential, crate::error::Error> {
    let options = super::RunOptions {
        runs_dir: "runs".into(),
        reports_dir: "reports".into(),
        run_id: None,
        strict: false,
        bootstrap: None,
        seed: None,
        no_plots: true,
        corpus: Some(dir.to_path_buf()),
        allow_partial: true,
        threads: None,
        set: Vec::new(),
        sequential: true,
        aa: false,
    };
    let file = super::experiment_file(path).display().to_string();
    let mut loaded = super::load::for_run(path, &options)?;
    // A look decides on the per-unit pairs alone: the bootstrap intervals a run reports
    // would be drawn and thrown away at every look.
    let exp = crate::config::Experiment {
        bootstrap: 0,
        ..loaded.experiment
    };
    let qualified = qualify(&exp, &file)?;
    let analysis = crate::analysis::analyse(
        &exp,
        &mut loaded.corpus,
        "sequential-look",
        crate::analysis::Settings {
            strict: false,
            threads: super::threads(None),
        },
    )?;
    Ok(decide(
        &qualified,
        &analysis.pairs,
        Some(RecordedOrder {
            ids: order,
            path: dir
                .join(crate::corpus::collection::FILE)
                .display()
                .to_string(),
        }),
        exp.seed,
        exp.sequential_method,
        &file,
        withheld(&qualified, &analysis.metrics),
    )?)
}
