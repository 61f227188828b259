//! The run's tables (docs/guides/reports.md) as polars DataFrames, serialized to CSV and Parquet bytes. Built
//! from the one result model, so a table never says something `metrics.json` does not.

use std::sync::Arc;

use polars::prelude::*;

use crate::corpus::queries::Category;
use crate::model::{FindingRow, Metrics, PairRow};
use crate::replay::query::Part;
use crate::replay::query_metrics::QueryRow;
use crate::replay::review::Check;
use crate::replay::review_metrics::{Figure, Kind, TargetMetrics, REVIEW_METRICS};

/// Columns of one table, all of one height.
struct Columns {
    height: usize,
    columns: Vec<Column>,
}

impl Columns {
    fn new(height: usize) -> Self {
        Columns {
            height,
            columns: Vec::new(),
        }
    }

    fn push<T, P>(&mut self, name: &str, values: T) -> &mut Self
    where
        Series: NamedFrom<T, P>,
        P: ?Sized,
    {
        self.columns.push(Column::new(name.into(), values));
        self
    }

    fn finish(self) -> PolarsResult<DataFrame> {
        DataFrame::new(self.height, self.columns)
    }
}

/// One row per (arm, target, run) with every per-target metric.
pub fn targets(metrics: &Metrics) -> Table {
    let Some(review) = &metrics.review else {
        return Ok(None);
    };
    let rows: Vec<(&str, &TargetMetrics)> = [
        ("baseline", &review.arms.baseline),
        ("treatment", &review.arms.treatment),
    ]
    .into_iter()
    .flat_map(|(arm, m)| m.per_target.iter().map(move |t| (arm, t)))
    .collect();
    let mut c = Columns::new(rows.len());
    c.push("arm", rows.iter().map(|(a, _)| *a).collect::<Vec<&str>>())
        .push(
            "target",
            rows.iter()
                .map(|(_, t)| t.target.as_str())
                .collect::<Vec<&str>>(),
        )
        .push("run", rows.iter().map(|(_, t)| t.run).collect::<Vec<u32>>());
    // One column per per-target metric, as the catalogue declares them.
    for (i, m) in REVIEW_METRICS.iter().enumerate() {
        // A precision-control figure of an experiment without the controls has no column.
        if rows.iter().all(|(_, t)| t.figures[i] == Figure::Absent) && m.precision {
            continue;
        }
        let read = |t: &TargetMetrics| t.figures[i].number();
        match m.kind {
            Kind::Count => c.push(
                m.name,
                rows.iter()
                    .map(|(_, t)| read(t).unwrap_or(0.0) as u64)
                    .collect::<Vec<u64>>(),
            ),
            Kind::Real => c.push(
                m.name,
                rows.iter()
                    .map(|(_, t)| read(t).unwrap_or(f64::NAN))
                    .collect::<Vec<f64>>(),
            ),
            Kind::Optional => c.push(
                m.name,
                rows.iter()
                    .map(|(_, t)| read(t))
                    .collect::<Vec<Option<f64>>>(),
            ),
            Kind::OptionalCount => c.push(
                m.name,
                rows.iter()
                    .map(|(_, t)| read(t).map(|x| x as u64))
                    .collect::<Vec<Option<u64>>>(),
            ),
            Kind::Label => c.push(
                m.name,
                rows.iter()
                    .map(|(_, t)| match &t.figures[i] {
                        Figure::Label(l) => l.clone(),
                        _ => None,
                    })
                    .collect::<Vec<Option<String>>>(),
            ),
            // Counts by value live in metrics.json; a table column holds one number.
            Kind::ByValue => continue,
        };
    }
    c.finish().map(Some)
}

/// The names an enum's values serialize to, worked out once per distinct value (the enums here
/// have a handful), so that a million rows do not serialize a million times.
struct Names<T>(Vec<(T, String)>);

impl<T: serde::Serialize + PartialEq + Copy> Names<T> {
    fn of(values: impl Iterator<Item = T>) -> Self {
        let mut names: Vec<(T, String)> = Vec::new();
        for v in values {
            if !names.iter().any(|(seen, _)| *seen == v) {
                let name = serde_json::to_value(v)
                    .ok()
                    .and_then(|j| j.as_str().map(str::to_string))
                    .unwrap_or_default();
                names.push((v, name));
            }
        }
        Names(names)
    }

    fn name(&self, v: T) -> &str {
        self.0
            .iter()
            .find(|(seen, _)| *seen == v)
            .map_or("", |(_, name)| name)
    }
}

/// One row per merged finding: where it came from, its confidence before and after promotion,
/// its tier and route; with the precision controls, what the validation pass made of it.
pub fn findings(rows: &[FindingRow], controls: bool) -> Table {
    if rows.is_empty() {
        return Ok(None);
    }
    let text = |g: for<'a> fn(&'a FindingRow) -> &'a str| rows.iter().map(g).collect::<Vec<&str>>();
    let b = |g: fn(&FindingRow) -> bool| rows.iter().map(g).collect::<Vec<bool>>();
    let f64s = |g: fn(&FindingRow) -> f64| rows.iter().map(g).collect::<Vec<f64>>();
    let joined = |g: fn(&FindingRow) -> &[Arc<str>]| {
        rows.iter().map(|r| g(r).join(";")).collect::<Vec<String>>()
    };
    let severity = Names::of(rows.iter().map(|r| r.severity));
    let autofix = Names::of(rows.iter().map(|r| r.autofix));
    let tier = Names::of(rows.iter().map(|r| r.tier));
    let route = Names::of(rows.iter().filter_map(|r| r.route));
    let queue = Names::of(rows.iter().filter_map(|r| r.queue));
    let mut c = Columns::new(rows.len());
    c.push("arm", text(|r| &r.arm))
        .push("target", text(|r| &r.target))
        .push("run", rows.iter().map(|r| r.run).collect::<Vec<u32>>())
        .push("title", text(|r| &r.title))
        .push(
            "severity",
            rows.iter()
                .map(|r| severity.name(r.severity))
                .collect::<Vec<&str>>(),
        )
        .push("location", text(|r| &r.location))
        .push(
            "line",
            rows.iter().map(|r| r.line).collect::<Vec<Option<u32>>>(),
        )
        .push("reviewers", joined(|r| &r.reviewers))
        .push(
            "contributions",
            rows.iter().map(|r| r.contributions).collect::<Vec<u32>>(),
        )
        .push("ids", joined(|r| &r.ids))
        .push(
            "autofix_class",
            rows.iter()
                .map(|r| autofix.name(r.autofix))
                .collect::<Vec<&str>>(),
        )
        .push("confidence_before", f64s(|r| r.confidence_before))
        .push("confidence", f64s(|r| r.confidence))
        .push("corroborated", b(|r| r.corroborated))
        .push("promotable", b(|r| r.promotable))
        .push("promoted", b(|r| r.promoted))
        .push(
            "tier",
            rows.iter()
                .map(|r| tier.name(r.tier))
                .collect::<Vec<&str>>(),
        )
        .push(
            "route",
            rows.iter()
                .map(|r| r.route.map(|x| route.name(x)))
                .collect::<Vec<Option<&str>>>(),
        )
        .push(
            "queue",
            rows.iter()
                .map(|r| r.queue.map(|x| queue.name(x)))
                .collect::<Vec<Option<&str>>>(),
        );
    if controls {
        c.push(
            "validation",
            text(|r| r.validation.as_ref().map_or("not_run", Check::name)),
        )
        .push(
            "validation_reason",
            rows.iter()
                .map(|r| match &r.validation {
                    Some(Check::Rejected(why)) => Some(why.as_str()),
                    _ => None,
                })
                .collect::<Vec<Option<&str>>>(),
        )
        .push(
            "on_suppressed_line",
            rows.iter()
                .map(|r| r.on_suppressed_line)
                .collect::<Vec<Option<bool>>>(),
        );
    }
    c.finish().map(Some)
}

/// One row per (arm, query, run): primary and final confidence, the gate's decision, the band,
/// the outcomes, and the final score's breakdown by category (score, weight, contribution;
/// empty where the category did not count) so a reader can see why a score is what it is.
pub fn queries(rows: &[QueryRow]) -> Table {
    if rows.is_empty() {
        return Ok(None);
    }
    let f64s = |g: &dyn Fn(&QueryRow) -> f64| rows.iter().map(g).collect::<Vec<f64>>();
    let b = |g: fn(&QueryRow) -> bool| rows.iter().map(g).collect::<Vec<bool>>();
    let ob = |g: fn(&QueryRow) -> Option<bool>| rows.iter().map(g).collect::<Vec<Option<bool>>>();
    let mut c = Columns::new(rows.len());
    c.push(
        "arm",
        rows.iter().map(|r| r.arm.as_str()).collect::<Vec<&str>>(),
    )
    .push(
        "query_id",
        rows.iter()
            .map(|r| r.query_id.as_str())
            .collect::<Vec<&str>>(),
    )
    .push("run", rows.iter().map(|r| r.run).collect::<Vec<u32>>())
    .push("primary_confidence", f64s(&|r| r.outcome.primary))
    .push("confidence", f64s(&|r| r.outcome.confidence))
    .push("stopped", b(|r| r.outcome.stopped))
    .push("fired", b(|r| r.outcome.fired))
    .push(
        "attempts",
        rows.iter()
            .map(|r| r.outcome.attempts)
            .collect::<Vec<u32>>(),
    )
    .push(
        "band",
        rows.iter().map(|r| r.band.name()).collect::<Vec<&str>>(),
    )
    .push("error", b(|r| r.error))
    .push("recovery_recorded", b(|r| r.recovery_recorded))
    .push("first_pass_correct", ob(|r| r.first_pass_correct))
    .push("final_correct", ob(|r| r.final_correct))
    .push("base", f64s(&|r| r.outcome.breakdown.base))
    .push("bonus", f64s(&|r| r.outcome.breakdown.bonus))
    .push(
        "converging_categories",
        rows.iter()
            .map(|r| r.outcome.breakdown.converging as u32)
            .collect::<Vec<u32>>(),
    )
    .push(
        "search_read_converge",
        b(|r| r.outcome.breakdown.search_read),
    );
    let part = |name: &str, get: &dyn Fn(&QueryRow) -> Option<Part>, c: &mut Columns| {
        let field = |f: fn(Part) -> f64| {
            rows.iter()
                .map(|r| get(r).map(f))
                .collect::<Vec<Option<f64>>>()
        };
        c.push(&format!("{name}_score"), field(|p| p.score))
            .push(&format!("{name}_weight"), field(|p| p.weight))
            .push(&format!("{name}_contribution"), field(|p| p.contribution));
    };
    for cat in Category::ALL {
        part(
            cat.name(),
            &|r: &QueryRow| r.outcome.breakdown.categories[cat.index()],
            &mut c,
        );
    }
    part(
        "recovery",
        &|r: &QueryRow| r.outcome.breakdown.recovery,
        &mut c,
    );
    c.finish().map(Some)
}

/// One row per (arm, item, scorer) of imported scores: the item's repeats, how many were
/// missing, and the mean of the scored ones (empty when none was).
pub fn scores(rows: &[crate::replay::scores::ItemRow]) -> Table {
    if rows.is_empty() {
        return Ok(None);
    }
    let mut c = Columns::new(rows.len());
    c.push("arm", rows.iter().map(|r| r.arm).collect::<Vec<&str>>())
        .push(
            "item",
            rows.iter().map(|r| r.item.as_str()).collect::<Vec<&str>>(),
        )
        .push(
            "scorer",
            rows.iter()
                .map(|r| r.scorer.as_str())
                .collect::<Vec<&str>>(),
        )
        .push(
            "repeats",
            rows.iter().map(|r| r.repeats).collect::<Vec<u32>>(),
        )
        .push(
            "missing",
            rows.iter().map(|r| r.missing).collect::<Vec<u32>>(),
        )
        .push(
            "mean",
            rows.iter().map(|r| r.mean).collect::<Vec<Option<f64>>>(),
        );
    c.finish().map(Some)
}

/// One row per (reported delta, unit): the unit's value in each arm and their difference, so a
/// reader can see which targets or queries moved, and `calibench plan` can size the next study
/// from them. Targets' values are means over runs (`run` empty); queries are per run.
pub fn pairs(rows: &[PairRow]) -> Table {
    if rows.is_empty() {
        return Ok(None);
    }
    let f64s = |g: fn(&PairRow) -> f64| rows.iter().map(g).collect::<Vec<f64>>();
    let mut c = Columns::new(rows.len());
    c.push(
        "table",
        rows.iter().map(|r| r.table.name()).collect::<Vec<&str>>(),
    )
    .push(
        "metric",
        rows.iter()
            .map(|r| r.metric.as_ref())
            .collect::<Vec<&str>>(),
    )
    .push(
        "unit",
        rows.iter()
            .map(|r| r.pair.unit.as_str())
            .collect::<Vec<&str>>(),
    )
    .push(
        "run",
        rows.iter()
            .map(|r| r.pair.run)
            .collect::<Vec<Option<u32>>>(),
    )
    .push("baseline", f64s(|r| r.pair.baseline))
    .push("treatment", f64s(|r| r.pair.treatment))
    .push("difference", f64s(|r| r.pair.treatment - r.pair.baseline));
    c.finish().map(Some)
}

/// A table (or a batch of its rows) as built: `None` when it has no rows.
pub type Table = PolarsResult<Option<DataFrame>>;

/// How many rows a table is built and written at a time: a million-row table is never held
/// whole as a frame (each batch is one Parquet row group).
pub const FRAME_ROWS: usize = 65_536;

/// Writes one table, given as consecutive frames of one schema, as CSV (with a header) and as
/// Parquet at once. Each writer has a thread of its own, so that the next frame is built while
/// the last one is written; frames reach both in order.
pub fn write_frames(
    frames: impl IntoIterator<Item = PolarsResult<DataFrame>>,
    csv: &mut (impl std::io::Write + Send),
    parquet: &mut (impl std::io::Write + Send),
) -> PolarsResult<()> {
    use std::sync::mpsc::sync_channel;
    let mut frames = frames.into_iter();
    let Some(first) = frames.next().transpose()? else {
        return Ok(());
    };
    let schema = first.schema().clone();
    std::thread::scope(|scope| {
        let (to_csv, csv_frames) = sync_channel::<DataFrame>(2);
        let (to_parquet, parquet_frames) = sync_channel::<DataFrame>(2);
        let csv_schema = schema.clone();
        let csv = scope.spawn(move || -> PolarsResult<()> {
            let mut w = CsvWriter::new(csv)
                .include_header(true)
                .batched(&csv_schema)?;
            for df in csv_frames {
                w.write_batch(&df)?;
            }
            w.finish()
        });
        let parquet = scope.spawn(move || -> PolarsResult<()> {
            let mut w = ParquetWriter::new(parquet).batched(&schema)?;
            for df in parquet_frames {
                w.write_batch(&df)?;
            }
            w.finish().map(|_| ())
        });
        // A frame that fails to build stops both; a writer that fails stops taking frames,
        // and its error is the one returned.
        let mut built = Ok(());
        for df in std::iter::once(Ok(first)).chain(frames) {
            match df {
                Ok(df) => {
                    if to_csv.send(df.clone()).is_err() || to_parquet.send(df).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    built = Err(e);
                    break;
                }
            }
        }
        drop((to_csv, to_parquet));
        let join = |h: std::thread::ScopedJoinHandle<'_, PolarsResult<()>>| {
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
        };
        let (csv, parquet) = (join(csv), join(parquet));
        built.and(csv).and(parquet)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // A table written a batch at a time is the table written whole: the same CSV text, and a
    // Parquet file that reads back to the same frame.
    #[test]
    fn a_table_written_in_batches_is_the_table_written_whole() {
        let mut c = Columns::new(10);
        c.push(
            "name",
            (0..10).map(|i| format!("row {i}")).collect::<Vec<_>>(),
        )
        .push(
            "maybe",
            (0..10)
                .map(|i| (i % 3 == 0).then_some("x"))
                .collect::<Vec<Option<&str>>>(),
        )
        .push("x", (0..10).map(|i| i as f64 / 7.0).collect::<Vec<f64>>());
        let mut df = c.finish().unwrap();
        let mut whole = Vec::new();
        CsvWriter::new(&mut whole)
            .include_header(true)
            .finish(&mut df)
            .unwrap();
        let batches = [df.slice(0, 3), df.slice(3, 3), df.slice(6, 4)];
        let (mut csv, mut parquet) = (Vec::new(), Vec::new());
        write_frames(batches.clone().map(Ok), &mut csv, &mut parquet).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            String::from_utf8(whole).unwrap()
        );
        let back = ParquetReader::new(std::io::Cursor::new(parquet))
            .finish()
            .unwrap();
        assert!(back.equals_missing(&df), "{back}");
        let (mut csv, mut parquet) = (Vec::new(), Vec::new());
        write_frames(std::iter::empty(), &mut csv, &mut parquet).unwrap();
        assert!(csv.is_empty() && parquet.is_empty());

        // A frame that fails to build, or a writer that fails, is the error returned.
        let failing = [
            Ok(df.slice(0, 3)),
            Err(PolarsError::NoData("no rows".into())),
        ];
        let e = write_frames(failing, &mut Vec::new(), &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("no rows"), "{e}");
        struct Full;
        impl std::io::Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let e = write_frames(batches.map(Ok), &mut Vec::new(), &mut Full).unwrap_err();
        assert!(e.to_string().contains("disk full"), "{e}");
    }
}
