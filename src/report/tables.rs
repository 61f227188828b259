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

    /// A column of one value per row, read by `get`.
    fn of<'a, R, T>(&mut self, name: &str, rows: &'a [R], get: impl Fn(&'a R) -> T) -> &mut Self
    where
        Series: NamedFrom<Vec<T>, [T]>,
    {
        self.push(name, rows.iter().map(get).collect::<Vec<T>>())
    }

    /// A column of each row's texts, read by `get`, joined by `;`: built in place, without a
    /// string per row.
    fn joined<'a, R>(
        &mut self,
        name: &str,
        rows: &'a [R],
        get: impl Fn(&'a R) -> &'a [Arc<str>],
    ) -> &mut Self {
        let mut column = StringChunkedBuilder::new(name.into(), rows.len());
        let mut text = String::new();
        for r in rows {
            text.clear();
            crate::model::push_list(&mut text, get(r).iter().map(|part| &**part));
            column.append_value(&text);
        }
        self.columns.push(column.finish().into_column());
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
    c.of("arm", &rows, |(a, _)| *a)
        .of("target", &rows, |(_, t)| t.target.as_str())
        .of("run", &rows, |(_, t)| t.run);
    // One column per per-target metric, as the catalogue declares them.
    for (i, m) in REVIEW_METRICS.iter().enumerate() {
        // A precision-control figure of an experiment without the controls has no column.
        if rows.iter().all(|(_, t)| t.figures[i] == Figure::Absent) && m.optional_in_run() {
            continue;
        }
        let read = |(_, t): &(&str, &TargetMetrics)| t.figures[i].number();
        match m.kind {
            Kind::Count => c.of(m.name, &rows, |r| read(r).unwrap_or(0.0) as u64),
            Kind::Real => c.of(m.name, &rows, |r| read(r).unwrap_or(f64::NAN)),
            Kind::Optional => c.of(m.name, &rows, read),
            Kind::OptionalCount => c.of(m.name, &rows, |r| read(r).map(|x| x as u64)),
            Kind::Label => c.of(m.name, &rows, |(_, t)| t.figures[i].text()),
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
/// its tier and route; with the precision controls, what the validation pass made of it. Each
/// row's (target, run) is the one beside it in `places` ([`crate::model::FindingRows`]).
pub fn findings(
    rows: &[FindingRow],
    places: &[(Arc<str>, u32)],
    arm: &str,
    controls: bool,
) -> Table {
    if rows.is_empty() {
        return Ok(None);
    }
    let severity = Names::of(rows.iter().map(|r| r.severity));
    let autofix = Names::of(rows.iter().map(|r| r.autofix));
    let tier = Names::of(rows.iter().map(|r| r.tier));
    let route = Names::of(rows.iter().filter_map(|r| r.route));
    let queue = Names::of(rows.iter().filter_map(|r| r.queue));
    let mut c = Columns::new(rows.len());
    c.of("arm", rows, |_| arm)
        .of("target", places, |(target, _)| &**target)
        .of("run", places, |&(_, run)| run)
        .of("title", rows, |r| &*r.title)
        .of("severity", rows, |r| severity.name(r.severity))
        .of("location", rows, |r| &*r.location)
        .of("line", rows, |r| r.line.map(std::num::NonZeroU32::get))
        .joined("reviewers", rows, |r| &r.reviewers)
        .of("contributions", rows, |r| r.contributions)
        .of("ids", rows, |r| &*r.ids)
        .of("autofix_class", rows, |r| autofix.name(r.autofix))
        .of("confidence_before", rows, |r| r.confidence_before)
        .of("confidence", rows, |r| r.confidence)
        .of("corroborated", rows, |r| r.corroborated)
        .of("promotable", rows, |r| r.promotable)
        .of("promoted", rows, |r| r.promoted)
        .of("tier", rows, |r| tier.name(r.tier))
        .of("route", rows, |r| r.route.map(|x| route.name(x)))
        .of("queue", rows, |r| r.queue.map(|x| queue.name(x)));
    if controls {
        c.of("validation", rows, |r| {
            r.validation.as_deref().map_or("not_run", Check::name)
        })
        .of("validation_reason", rows, |r| {
            match r.validation.as_deref() {
                Some(Check::Rejected(why)) => Some(&**why),
                _ => None,
            }
        })
        .of("on_suppressed_line", rows, |r| r.on_suppressed_line);
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
    let mut c = Columns::new(rows.len());
    c.of("arm", rows, |r| r.arm.as_str())
        .of("query_id", rows, |r| r.query_id.as_str())
        .of("run", rows, |r| r.run)
        .of("primary_confidence", rows, |r| r.outcome.primary)
        .of("confidence", rows, |r| r.outcome.confidence)
        .of("stopped", rows, |r| r.outcome.stopped)
        .of("fired", rows, |r| r.outcome.fired)
        .of("attempts", rows, |r| r.outcome.attempts)
        .of("band", rows, |r| r.band.name())
        .of("error", rows, |r| r.error)
        .of("recovery_recorded", rows, |r| r.recovery_recorded)
        .of("first_pass_correct", rows, |r| r.first_pass_correct)
        .of("final_correct", rows, |r| r.final_correct)
        .of("base", rows, |r| r.outcome.breakdown.base)
        .of("bonus", rows, |r| r.outcome.breakdown.bonus)
        .of("converging_categories", rows, |r| {
            r.outcome.breakdown.converging as u32
        })
        .of("search_read_converge", rows, |r| {
            r.outcome.breakdown.search_read
        });
    let part = |name: &str, get: &dyn Fn(&QueryRow) -> Option<Part>, c: &mut Columns| {
        c.of(&format!("{name}_score"), rows, |r| get(r).map(|p| p.score))
            .of(&format!("{name}_weight"), rows, |r| {
                get(r).map(|p| p.weight)
            })
            .of(&format!("{name}_contribution"), rows, |r| {
                get(r).map(|p| p.contribution)
            });
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
    c.of("arm", rows, |r| r.arm)
        .of("item", rows, |r| r.item.as_str())
        .of("scorer", rows, |r| r.scorer.as_str())
        .of("repeats", rows, |r| r.repeats)
        .of("missing", rows, |r| r.missing)
        .of("mean", rows, |r| r.mean);
    c.finish().map(Some)
}

/// One row per (reported delta, unit): the unit's value in each arm and their difference, so a
/// reader can see which targets or queries moved, and `calibench plan` can size the next study
/// from them. Targets' values are means over runs (`run` empty); queries are per run.
pub fn pairs(rows: &[PairRow]) -> Table {
    if rows.is_empty() {
        return Ok(None);
    }
    let mut c = Columns::new(rows.len());
    c.of("table", rows, |r| r.table.name())
        .of("metric", rows, |r| r.metric.as_ref())
        .of("unit", rows, |r| r.pair.unit.as_str())
        .of("run", rows, |r| r.pair.run)
        .of("baseline", rows, |r| r.pair.baseline)
        .of("treatment", rows, |r| r.pair.treatment)
        .of("difference", rows, |r| r.pair.treatment - r.pair.baseline);
    c.finish().map(Some)
}

/// A table (or a batch of its rows) as built: `None` when it has no rows.
pub type Table = PolarsResult<Option<DataFrame>>;

/// `df` with the run's id as its first column, `run_id`: every table of every run carries it,
/// so that `runs/*/<table>.parquet` read together (DuckDB, polars) is one table whose rows
/// say which run they came from (docs/guides/reports.md).
pub fn with_run_id(mut df: DataFrame, run_id: &str) -> PolarsResult<DataFrame> {
    let height = df.height();
    df.insert_column(
        0,
        Column::new_scalar(
            "run_id".into(),
            Scalar::new(DataType::String, AnyValue::StringOwned(run_id.into())),
            height,
        ),
    )?;
    Ok(df)
}

/// How many rows a table is built and written at a time: a million-row table is never held
/// whole as a frame (each batch is one Parquet row group). Up to five frames are in flight
/// (one being built, one waiting and one being written for each of the two writers): at 16,384
/// rows that was 30 MB of a million-finding run's peak with reviewer-length titles; at 4,096 the
/// Parquet file is 5% larger.
pub const FRAME_ROWS: usize = 4_096;

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
        // One frame waiting for each writer: the frames in flight are the rows' largest copy.
        let (to_csv, csv_frames) = sync_channel::<DataFrame>(1);
        let (to_parquet, parquet_frames) = sync_channel::<DataFrame>(1);
        let csv_schema = schema.clone();
        let csv = crate::threads::scoped(scope, "csv", move || -> PolarsResult<()> {
            if super::csv::handles(&csv_schema) {
                let mut w = super::csv::Csv::new(csv, &csv_schema)?;
                for df in csv_frames {
                    w.frame(&df)?;
                }
                return Ok(());
            }
            let mut w = CsvWriter::new(csv)
                .include_header(true)
                .batched(&csv_schema)?;
            for df in csv_frames {
                w.write_batch(&super::csv::guarded(&df)?)?;
            }
            w.finish()
        });
        let parquet = crate::threads::scoped(scope, "parquet", move || -> PolarsResult<()> {
            let mut w = super::parquet::Parquet::new(parquet, &schema)?;
            for df in parquet_frames {
                w.frame(&df)?;
            }
            w.finish()
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
