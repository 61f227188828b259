//! `run --sequential` (docs/guides/stop-when-you-know.md): which decision metrics can be
//! decided sequentially and with what range (checked before the run claims anything), the
//! units' arrival order, and each metric's per-unit differences in that order for the pure
//! [`crate::sequential::decide`].

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::config::Experiment;
use crate::error::InputError;
use crate::model::PairRow;
use crate::policy::Wanted;
use crate::replay::{decidable, DeltaTable, LIFT};
use crate::sequential::{Sequences, Sequential, Stream};
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
    let how = How {
        seed,
        method,
        file,
        withheld,
    };
    decide_with(metrics, pairs, order, how, &mut Sequences::default())
}

/// How a decision is made: the seed of a permutation, the sequence, the experiment's file (for
/// messages) and the metrics withheld.
pub struct How<'a> {
    pub seed: u64,
    pub method: crate::sequential::Method,
    pub file: &'a str,
    pub withheld: Vec<String>,
}

/// [`decide`], extending the sequences `kept` from an earlier decision over fewer units.
pub fn decide_with(
    metrics: &[Qualified],
    pairs: &[PairRow],
    order: Option<RecordedOrder>,
    How {
        seed,
        method,
        file,
        withheld,
    }: How<'_>,
    kept: &mut Sequences,
) -> Result<Sequential, InputError> {
    // Hashed, not sorted: a sequential collection decides after every batch.
    let units: HashSet<&str> = pairs
        .iter()
        .filter(|p| {
            metrics
                .iter()
                .any(|q| q.table == p.table && q.wanted.metric == p.metric)
        })
        .map(|p| p.pair.unit.as_str())
        .collect();
    let (order, order_name): (Vec<String>, String) = match order {
        // The collection's order of every target it could collect, kept to those collected;
        // a unit it lacks is refused, naming the record (the first such, by name).
        Some(given) => {
            let held: HashSet<&str> = given.ids.iter().map(String::as_str).collect();
            let lacking = units.iter().filter(|u| !held.contains(*u)).min();
            if let Some(lacking) = lacking {
                return Err(InputError::new(
                    &given.path,
                    format!("lacks `{}`, a unit of the corpus", crate::text::terminal(lacking)),
                )
                .field("`sequential.order`")
                .hint("the order is the one the collection took its targets in: replay the collection as it was made"));
            }
            let kept = given.ids.into_iter().filter(|u| units.contains(u.as_str()));
            (kept.collect(), crate::corpus::collection::FILE.to_string())
        }
        None => (
            permutation(&units.iter().map(|u| u.to_string()).collect(), seed),
            format!("seeded permutation (seed {seed})"),
        ),
    };
    let rank: HashMap<&str, usize> = order
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
    crate::sequential::decide_with(&streams, method, (order, order_name), unit_name, kept)
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

/// The looks of a sequential collection (`collect --until-decided`): the decision of the
/// experiment at `path` over the run directory `dir` after each batch, in the collection's
/// order, as `run --sequential` of the finished collection reproduces it. Nothing is written.
///
/// Each look reads only what its batch appended to the stage files and analyses those units
/// alone, keeping every earlier unit's pairs: a unit's per-unit values are its own, so a look
/// costs what its batch adds, not what the run holds. A look reads the whole run instead when
/// the collection says so (`whole`: a validator or judge stage, whose batches rewrite the stage
/// files in plan order, and whose judges' trust is a figure of every item), when its batch
/// alone withholds a metric, and when a look over the batch fails (the whole run is what
/// decides, and what a failure must be reported of).
pub struct Looks {
    path: std::path::PathBuf,
    dir: std::path::PathBuf,
    exp: Experiment,
    qualified: Vec<Qualified>,
    /// The stage files a look reads from where the last one stopped, and the arm labels the
    /// collection collects.
    files: Vec<std::path::PathBuf>,
    arms: Vec<String>,
    /// The marks the next look reads the stage files from, and the pairs read before them;
    /// `None` when every look reads the whole run.
    read: Option<(Window, Vec<PairRow>)>,
    /// Each metric's sequence as the last look left it.
    kept: Sequences,
    /// The looks that read the whole run.
    whole_reads: usize,
}

use super::loaded::Window;

impl Looks {
    /// The looks of the experiment at `path` over the collection in `dir` that appends to
    /// `files` (its stage files) and collects the arm labels `arms`.
    pub fn new(
        path: &std::path::Path,
        dir: &std::path::Path,
        files: &[std::path::PathBuf],
        arms: Vec<String>,
        whole: bool,
    ) -> Result<Looks, crate::error::Error> {
        let file = super::experiment_file(path);
        let (exp, _) = super::load::experiment(&file, &[])?;
        let exp = if super::load::is_aa_of(dir, &exp.baseline.source) {
            exp.aa()
        } else {
            exp
        };
        // A look decides on the per-unit pairs alone: the bootstrap intervals a run reports
        // would be drawn and thrown away at every look.
        let exp = Experiment {
            bootstrap: 0,
            corpus: dir.to_path_buf(),
            ..exp
        };
        let qualified = qualify(&exp, &file.display().to_string())?;
        let mut looks = Looks {
            path: file,
            dir: dir.to_path_buf(),
            exp,
            qualified,
            files: files.to_vec(),
            arms,
            read: None,
            kept: Sequences::default(),
            whole_reads: 0,
        };
        if !whole {
            looks.read = Some((looks.window(|_| Ok(Default::default()))?, Vec::new()));
        }
        Ok(looks)
    }

    /// The decision once the targets `order` are collected.
    pub fn look(&mut self, order: Vec<String>) -> Result<Sequential, crate::error::Error> {
        let mut whole = None;
        if let Some((window, mut pairs)) = self.read.take() {
            match self.batch(window) {
                Ok(Some((window, new))) => {
                    pairs.extend(new);
                    self.read = Some((window, pairs));
                }
                // What the whole run makes of it: reported if it fails too; if it does not,
                // and withholds nothing, the next looks read on from here.
                Ok(None) | Err(_) => {
                    let (pairs, withheld) = self.whole()?;
                    if withheld.is_empty() {
                        let end = self.window(|path| {
                            let bytes = std::fs::read(path)
                                .map_err(|e| crate::error::Error::read(path, e))?;
                            Ok(super::read::Mark::default().after(&bytes))
                        })?;
                        self.read = Some((end, pairs));
                    } else {
                        whole = Some((pairs, withheld));
                    }
                }
            }
        } else {
            whole = Some(self.whole()?);
        }
        let (whole, withheld) = whole.unzip();
        let pairs: &[PairRow] = match (&whole, &self.read) {
            (Some(pairs), _) | (None, Some((_, pairs))) => pairs,
            (None, None) => &[],
        };
        // A resumed collection may hold calls past this look (made after the last look its
        // record kept): they wait for the look whose targets they are among.
        let held: HashSet<&str> = order.iter().map(String::as_str).collect();
        let waiting = |p: &PairRow| !held.contains(p.pair.unit.as_str());
        let now: Vec<PairRow>;
        let pairs = if pairs.iter().any(waiting) {
            now = pairs.iter().filter(|p| !waiting(p)).cloned().collect();
            &now[..]
        } else {
            pairs
        };
        let order = RecordedOrder {
            ids: order,
            path: self
                .dir
                .join(crate::corpus::collection::FILE)
                .display()
                .to_string(),
        };
        let how = How {
            seed: self.exp.seed,
            method: self.exp.sequential_method,
            file: &self.path.display().to_string(),
            withheld: withheld.unwrap_or_default(),
        };
        let (q, kept) = (&self.qualified, &mut self.kept);
        Ok(decide_with(q, pairs, Some(order), how, kept)?)
    }

    /// The pairs of the units appended since the window's marks, and the marks after them;
    /// `None` when those units alone withhold a metric (the whole run decides whether it is).
    #[allow(clippy::type_complexity)]
    fn batch(&self, window: Window) -> Result<Option<(Window, Vec<PairRow>)>, crate::error::Error> {
        let mut loaded = super::load::load_window(&self.dir, (&self.path, &self.exp), window)?;
        loaded.refusals.refuse()?;
        let window = loaded.window.take().unwrap_or_default();
        let analysis = self.analyse(&mut loaded.corpus)?;
        if !withheld(&self.qualified, &analysis.metrics).is_empty() {
            return Ok(None);
        }
        let q = &self.qualified;
        let pairs = analysis.pairs.into_iter();
        let kept = pairs.filter(|p| {
            q.iter()
                .any(|q| q.table == p.table && q.wanted.metric == p.metric)
        });
        Ok(Some((window, kept.collect())))
    }

    /// How many looks read the whole run rather than their batch.
    pub fn whole_reads(&self) -> usize {
        self.whole_reads
    }

    /// The pairs of every unit the run holds, and the metrics it withholds.
    fn whole(&mut self) -> Result<(Vec<PairRow>, Vec<String>), crate::error::Error> {
        self.whole_reads += 1;
        let loaded = super::load::load(&self.dir, Some((&self.path, &self.exp)), true)?;
        loaded.refusals.refuse()?;
        let mut corpus = loaded.corpus;
        let analysis = self.analyse(&mut corpus)?;
        let withheld = withheld(&self.qualified, &analysis.metrics);
        Ok((analysis.pairs, withheld))
    }

    /// A window over the stage files, each from the mark `at` gives (a file not written yet
    /// from its start).
    fn window(
        &self,
        at: impl Fn(&std::path::Path) -> Result<super::read::Mark, crate::error::Error>,
    ) -> Result<Window, crate::error::Error> {
        let mut marks = std::collections::BTreeMap::new();
        for path in &self.files {
            let mark = if path.is_file() {
                at(path)?
            } else {
                Default::default()
            };
            marks.insert(path.clone(), mark);
        }
        Ok(Window {
            marks,
            collecting: self.arms.clone(),
        })
    }

    fn analyse(
        &self,
        corpus: &mut crate::corpus::Corpus,
    ) -> Result<crate::model::Analysis, crate::error::Error> {
        Ok(crate::analysis::analyse(
            &self.exp,
            corpus,
            "sequential-look",
            crate::analysis::Settings {
                strict: false,
                threads: super::threads(None),
            },
        )?)
    }
}
