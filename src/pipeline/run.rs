//! One run of one experiment, end to end: the experiment and its corpus loaded and checked,
//! replayed and analysed, its run directory written whole (metrics, trust, tables, manifest)
//! and its report rendered (docs/guides/reports.md).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use super::load;
use super::{RunOptions, Timer};
use crate::analysis::{self, Settings};
use crate::corpus::ledger::Caveat;
use crate::error::{Error, InputError};
use crate::model::{Analysis, Metrics};
use crate::output;
use crate::replay::DeltaTable;
use crate::report::document::Document;
use crate::report::tables;
use crate::rundir::manifest::{self, Manifest};
use crate::rundir::{self, RunId};

/// A run made: where it was written, what it measured and what its report says.
#[derive(Clone, Debug)]
pub struct Completed {
    pub run_dir: PathBuf,
    pub report_dir: PathBuf,
    pub metrics: Metrics,
    /// What the report says: the terminal summary and the index are rendered from it.
    pub document: Document,
}

/// Checks the runs and reports folders before any work, and sweeps up what killed runs left
/// in them (saying so once on stderr). A runs folder and a reports folder that are the same, or
/// one inside the other, are refused: writing a report must never replace a run (docs/guides/reports.md).
pub fn prepare_folders(options: &RunOptions) -> Result<(), Error> {
    let (runs, reports) = (
        rundir::resolved(&options.runs_dir),
        rundir::resolved(&options.reports_dir),
    );
    if runs.starts_with(&reports) || reports.starts_with(&runs) {
        let relation = if runs == reports {
            "is the same folder as"
        } else {
            "and --reports-dir nest:"
        };
        return Err(InputError::new(
            "--runs-dir",
            format!(
                "`{}` {relation} --reports-dir `{}`",
                options.runs_dir.display(),
                options.reports_dir.display()
            ),
        )
        .hint("a report written into the runs folder would replace the run of the same id; give two separate folders (e.g. runs and reports)")
        .into());
    }
    let mut swept = rundir::sweep_stale(&options.runs_dir);
    swept.extend(rundir::sweep_stale(&options.reports_dir));
    if let Some(message) = rundir::describe_sweep(&swept) {
        crate::output::print_warning(&message);
    }
    Ok(())
}

pub fn run_one(path: &Path, args: &RunOptions, timer: &Timer) -> Result<Completed, Error> {
    let started = SystemTime::now();
    let mut lap = std::time::Instant::now();
    let load::Run {
        experiment: mut exp,
        mut corpus,
        inputs,
        incomplete,
        suspect,
        mut ledger,
    } = load::for_run(path, args)?;
    warn_caveats(
        &exp_label(path),
        &ledger.caveats,
        "the run goes on, and every decision line says so",
    );
    for share in &suspect {
        output::print_warning(&format!(
            "{}: {}; the run goes on, and its report says its inputs are suspect\n  hint: {}",
            exp_label(path),
            crate::text::inline(&share.sentence()),
            crate::text::inline(&share.fix)
        ));
    }
    timer.lap("read and parse", &mut lap);
    if let Some(b) = args.bootstrap {
        exp.bootstrap = b;
    }
    if let Some(s) = args.seed {
        exp.seed = s;
    }
    // What --sequential decides on is checked before anything is claimed.
    let file = super::experiment_file(path).display().to_string();
    let sequential = (args.sequential || exp.sequential_always)
        .then(|| super::sequential::qualify(&exp, &file))
        .transpose()?;
    // The id is claimed before the replay: a taken --run-id is refused before any work, and
    // concurrent runs of one experiment each get their own.
    let claim = super::claim_with_report(
        args,
        match &args.run_id {
            Some(id) => RunId::Given(id.clone()),
            None => RunId::Default(format!("{}-{}", exp.name, rundir::compact_time(started))),
        },
    )?;
    let run_id = claim.id().to_string();
    let settings = Settings {
        strict: args.strict,
        threads: super::threads(args.threads),
    };
    let Analysis {
        mut metrics,
        findings,
        queries,
        pairs,
        scores,
    } = analysis::analyse(&exp, &mut corpus, &run_id, settings)?;
    if let Some(qualified) = &sequential {
        let order = super::sequential::recorded_order(&exp.corpus)?;
        let withheld = super::sequential::withheld(qualified, &metrics);
        metrics.sequential = Some(super::sequential::decide(
            qualified,
            &pairs,
            order,
            exp.seed,
            exp.sequential_method,
            &file,
            withheld,
        )?);
    }
    if metrics.decision.is_some() {
        if let Some(floors) = noise_floors(&exp, &file, &ledger.harness, &pairs)? {
            metrics.decision = Some(analysis::decide(&metrics, &exp.decision_metrics(), &floors));
        }
    }
    metrics.incomplete = incomplete;
    metrics.inputs_suspect = suspect;
    bias_caveats(&exp, path, &metrics, &mut ledger.caveats);
    if let Some(d) = &mut metrics.decision {
        d.caveats = ledger.caveats.clone();
    }
    metrics.inputs = Some(ledger);
    drop(corpus);
    timer.lap("replay and metrics", &mut lap);

    let freeing = write_tables(&claim, &run_id, &metrics, findings, queries, scores, pairs)?;
    timer.lap("tables", &mut lap);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    if let Some(trust) = &metrics.trust {
        #[derive(Serialize)]
        struct TrustFile<'a> {
            #[serde(flatten)]
            verdict: &'a crate::trust::TrustVerdict,
            lift: &'a Option<crate::trust::Lift>,
        }
        files.push((
            "trust.json".into(),
            to_json(&TrustFile {
                verdict: trust,
                lift: &metrics.lift,
            }),
        ));
    }
    let overrides: Vec<String> = args.set.iter().map(ToString::to_string).collect();
    let manifest = Manifest {
        run_id: run_id.clone(),
        calibench_version: env!("CARGO_PKG_VERSION").into(),
        command_line: std::env::args().collect(),
        experiment_file: super::experiment_file(path).display().to_string(),
        experiment: Some(exp.clone()),
        overrides: (!overrides.is_empty()).then_some(overrides),
        inputs: Some(inputs),
        seed: exp.seed,
        bootstrap: exp.bootstrap,
        started_at: rundir::timestamp(started),
        finished_at: rundir::timestamp(SystemTime::now()),
    };
    let manifest = to_json(&manifest);
    // The report reads the manifest as `calibench report` will, so both render the same.
    let about: Manifest = serde_json::from_slice(&manifest)
        .map_err(|e| Error::Write(std::io::Error::other(format!("manifest.json: {e}"))))?;
    files.push((manifest::FILE.into(), manifest));
    let run_dir = claim.commit(&files)?;
    timer.lap("write", &mut lap);
    let rendered = super::stored::render(&metrics, &about, !args.no_plots)?;
    let report_dir =
        super::stored::write(&args.reports_dir, &run_id, &rendered).map_err(|e| match e {
            Error::Write(io) => Error::Write(std::io::Error::new(
                io.kind(),
                format!(
                    "{io}\n  the run itself is whole in {}; render its report elsewhere with `calibench report {} --reports-dir DIR`",
                    run_dir.display(),
                    run_dir.display()
                ),
            )),
            other => other,
        })?;
    timer.lap("report", &mut lap);
    freeing
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
    Ok(Completed {
        run_dir,
        report_dir,
        document: rendered.document,
        metrics,
    })
}

/// Each decision metric's change in the experiment's A/A run (`noise_floor`), with the per-unit
/// differences the A/B's change is netted against; `None` when the experiment names no noise
/// floor. Refused (exit 2, naming `noise_floor`) when the directory is not a run of this
/// experiment's A/A, or its tables cannot be read.
fn noise_floors(
    exp: &crate::config::Experiment,
    file: &str,
    harness: &std::collections::BTreeMap<String, crate::corpus::harness::ArmRecord>,
    pairs: &[crate::model::PairRow],
) -> Result<Option<std::collections::BTreeMap<String, crate::decision::Floor>>, Error> {
    use crate::decision::{AaFigure, Floor};
    let Some(dir) = &exp.noise_floor else {
        return Ok(None);
    };
    let refuse = |problem: String| -> Error {
        let e = crate::error::InputError::new(file, problem)
            .field("`noise_floor`")
            .hint(format!(
                "noise_floor names a run of the A/A experiment: calibench collect {file} --aa, then calibench run {file} --aa --corpus <that collection>"
            ));
        match exp.noise_floor_line {
            Some(l) => e.at_line(l).into(),
            None => e.into(),
        }
    };
    let read = |name: &str| -> Result<Option<Vec<u8>>, Error> {
        let path = dir.join(name);
        // A run writes regular files: anything else (a link to a device, a pipe) is not read.
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() && m.len() <= 1 << 30 => std::fs::read(&path)
                .map(Some)
                .map_err(|e| refuse(format!("{} cannot be read: {e}", path.display()))),
            Ok(_) => Err(refuse(format!(
                "{} is not a run's {name} (not a regular file of at most 1 GiB)",
                path.display()
            ))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && name != "metrics.json" => {
                Ok(None)
            }
            Err(e) => Err(refuse(format!("{} cannot be read: {e}", path.display()))),
        }
    };
    let path = dir.join("metrics.json");
    let bytes = read("metrics.json")?.unwrap_or_default();
    let aa: crate::model::Metrics = serde_json::from_slice(&bytes).map_err(|e| {
        refuse(format!(
            "{} is not a run's metrics.json: {e}",
            path.display()
        ))
    })?;
    let want = format!("{}-aa", exp.name);
    if aa.experiment != want {
        return Err(refuse(format!(
            "{} is a run of `{}`, not of this experiment's A/A (`{want}`)",
            dir.display(),
            aa.experiment
        )));
    }
    // The name is not enough: the run must replay the baseline against its own second copy,
    // configured as this experiment's baseline is.
    if let Some(problem) = not_an_aa_of(exp, dir) {
        return Err(refuse(problem));
    }
    // The A/A's per-unit differences, where its run wrote them.
    let aa_pairs = match read(rundir::pairs::FILE)? {
        Some(bytes) => {
            let name = dir.join(rundir::pairs::FILE).display().to_string();
            rundir::pairs::read(&name, &bytes)?
        }
        None => Vec::new(),
    };
    let key = |unit: &str, run: Option<u32>| match run {
        Some(r) => format!("{unit}#{r}"),
        None => unit.to_string(),
    };
    let base = &exp.baseline.name;
    let aa_harness = aa.inputs.as_ref().and_then(|i| i.harness.get(base));
    let differs = harness_differs(&exp.baseline.source, aa_harness, harness.get(base));
    let mut floors = std::collections::BTreeMap::new();
    for w in exp.decision_metrics() {
        let name = w.metric.as_str();
        let table = crate::replay::decidable(name).map_or(DeltaTable::Scores, |c| c.table);
        let paired = match table {
            DeltaTable::Lift => aa.lift.as_ref().and_then(|l| l.paired.as_ref()),
            // An estimate with no paired delta: the harness's noise is not measured for it.
            DeltaTable::LiftHuman => continue,
            table => aa
                .deltas(table)
                .and_then(|t| t.get(name))
                .map(|x| &x.paired),
        };
        let aa_figure = match paired {
            Some(p) => Ok(AaFigure {
                delta: p.delta,
                ci: p.ci,
                sd: p.sd,
                pairs: p.pairs,
                units: aa_pairs
                    .iter()
                    .filter(|r| r.table == table.name() && r.metric == name)
                    .map(|r| (key(&r.unit, r.run), r.difference))
                    .collect(),
            }),
            None => Err(format!(
                "the A/A run {} has no figure for `{name}` (withheld there, or not measured)",
                dir.display()
            )),
        };
        let ab_units = pairs
            .iter()
            .filter(|r| r.table == table && r.metric == name)
            .map(|r| {
                (
                    key(&r.pair.unit, r.pair.run),
                    r.pair.treatment - r.pair.baseline,
                )
            })
            .collect();
        floors.insert(
            name.to_string(),
            Floor {
                aa: aa_figure,
                differs: differs.clone(),
                ab_units,
            },
        );
    }
    Ok(Some(floors))
}

/// Why the run in `dir` is not an A/A of `exp` as its manifest records it: its treatment must
/// read `<baseline label>-again` and its baseline be configured as `exp`'s, with no `--set`.
fn not_an_aa_of(exp: &crate::config::Experiment, dir: &Path) -> Option<String> {
    let path = dir.join(rundir::manifest::FILE);
    let bytes = match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() && m.len() <= 1 << 30 => std::fs::read(&path).ok(),
        _ => None,
    };
    let Some(bytes) = bytes else {
        return Some(format!(
            "{} cannot be read: a run directory holds one",
            path.display()
        ));
    };
    let manifest: rundir::manifest::Manifest<serde_json::Value> =
        match serde_json::from_slice(&bytes) {
            Ok(m) => m,
            Err(e) => return Some(format!("{} is not a run's manifest: {e}", path.display())),
        };
    let Some(recorded) = &manifest.experiment else {
        return Some(format!("{} records no experiment", path.display()));
    };
    let again = crate::corpus::collection::again(&exp.baseline.source);
    let treatment = recorded["treatment"]["source"].as_str().unwrap_or("");
    if treatment != again {
        return Some(format!(
            "{} is not an A/A run: its treatment reads `{}`, not the baseline's second copy `{again}`",
            dir.display(),
            crate::text::inline(treatment)
        ));
    }
    let ours = serde_json::to_value(&exp.baseline).unwrap_or_default();
    if let Some(key) = first_difference(&recorded["baseline"], &ours, "baseline") {
        return Some(format!(
            "{} is an A/A of another baseline: its `{key}` differs from this experiment's",
            dir.display()
        ));
    }
    if !manifest.overrides().is_empty() {
        return Some(format!(
            "{} was run with --set {}: not this experiment's baseline as its file says",
            dir.display(),
            manifest.overrides().join(" --set ")
        ));
    }
    None
}

/// The first key path at which two JSON values differ.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                first_difference(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{at}.{k}"),
                )
            })
        }
        _ if a == b => None,
        _ => Some(at.to_string()),
    }
}

/// What differs between the A/A run's baseline harness and this run's (both as their
/// collections recorded them): by provenance, never by name. A side without a record cannot be
/// compared, and says so.
fn harness_differs(
    baseline: &str,
    aa: Option<&crate::corpus::harness::ArmRecord>,
    this: Option<&crate::corpus::harness::ArmRecord>,
) -> Vec<String> {
    match (aa, this) {
        (Some(aa), Some(this)) => {
            crate::collect::provenance::compare((baseline, this), (baseline, aa))
                .into_iter()
                .map(|d| d.between("this run", "A/A"))
                .collect()
        }
        (None, Some(_)) => {
            vec!["the A/A run's corpus has no record of its harness, so it cannot be checked to be this one".into()]
        }
        (Some(_), None) => {
            vec!["this run's corpus has no record of its harness, so the A/A's cannot be checked to be it".into()]
        }
        (None, None) => {
            vec!["neither corpus records the harness that made it (a collection's collect.json does), so the A/A cannot be checked to be this harness".into()]
        }
    }
}

/// Each table with rows written straight into the claimed run directory (`targets`, `findings`,
/// `queries`, `scores`, `pairs`), and `metrics.json` beside them on a thread of its own. The
/// thread that frees the findings' rows is returned, for the caller to join when it is done.
fn write_tables(
    claim: &rundir::Claim,
    run_id: &str,
    metrics: &Metrics,
    findings: [crate::model::FindingRows; 2],
    queries: Vec<crate::replay::query_metrics::QueryRow>,
    scores: Vec<crate::replay::scores::ItemRow>,
    pairs: Vec<crate::model::PairRow>,
) -> Result<std::thread::JoinHandle<()>, Error> {
    // Each table with rows is written straight into the claimed run directory, a batch of rows
    // at a time, each frame built as the writers reach it; the rows are let go after their
    // table (the findings' as their frames are built). At a million findings the rows, a whole
    // frame and the CSV text are never all held.
    let table_error = |e: polars::error::PolarsError| std::io::Error::other(e.to_string());
    let write_table =
        |name: &str, frames: &mut dyn Iterator<Item = tables::Table>| -> Result<(), Error> {
            let mut frames = frames
                .filter_map(Result::transpose)
                .map(|df| df.and_then(|df| tables::with_run_id(df, run_id)))
                .peekable();
            if frames.peek().is_none() {
                return Ok(());
            }
            let (csv, parquet) = (format!("{name}.csv"), format!("{name}.parquet"));
            claim.write_with([&csv, &parquet], |[csv, parquet]| {
                tables::write_frames(frames, csv, parquet).map_err(table_error)
            })
        };
    // metrics.json is written straight into its file on a thread of its own while the tables
    // are: it is the last of the run's large outputs, and the tables leave part of a core idle.
    let (freeing, json) = std::thread::scope(|scope| -> Result<_, Error> {
        let json = crate::threads::scoped(scope, "metrics.json", || {
            claim.write_with(["metrics.json"], |[out]| write_json(out, metrics))
        });
        let controls = controls_replayed(metrics);
        // A million rows take a quarter of a second to free: that happens beside the rest, a
        // frame's rows at a time as soon as its frame is built, so that the rows still held
        // shrink as the table is written. The emptied frames come back to hold the next rows:
        // the same few blocks are reused, not a fresh one taken (and its pages faulted in) for
        // every frame.
        type Rows = Vec<crate::model::FindingRow>;
        let (to_free, freed) = std::sync::mpsc::channel::<Rows>();
        let (to_reuse, reusable) = std::sync::mpsc::channel::<Rows>();
        let freeing = crate::threads::detached("free rows", move || {
            for mut rows in freed {
                rows.clear();
                let _ = to_reuse.send(rows);
            }
        });
        write_table(
            "findings",
            &mut findings
                .into_iter()
                .zip(crate::gate::schema::ARMS.iter().copied())
                .flat_map(|(rows, arm)| {
                    let reusable = &reusable;
                    let room = move || {
                        reusable
                            .try_recv()
                            .unwrap_or_else(|_| Vec::with_capacity(tables::FRAME_ROWS))
                    };
                    rows.into_blocks(tables::FRAME_ROWS, room)
                        .map(move |(frame, places)| (arm, frame, places))
                })
                .map(|(arm, rows, places)| {
                    let table = tables::findings(&rows, &places, arm, controls);
                    let _ = to_free.send(rows);
                    table
                }),
        )?;
        drop(to_free);
        // After the findings: a whole frame of every (target, run)'s figures, built while the
        // finding rows were all still held, was 30 MB on top of them.
        write_table("targets", &mut std::iter::once(tables::targets(metrics)))?;
        write_table("queries", &mut std::iter::once(tables::queries(&queries)))?;
        drop(queries);
        write_table("scores", &mut std::iter::once(tables::scores(&scores)))?;
        drop(scores);
        write_table("pairs", &mut std::iter::once(tables::pairs(&pairs)))?;
        let json = json.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        Ok((freeing, json))
    })?;
    json?;
    Ok(freeing)
}

/// Under `[trust] bias = "warn"`, each failed check of the bias audit is a caveat on the
/// decision, said on stderr as the input ledger's are.
fn bias_caveats(
    exp: &crate::config::Experiment,
    path: &Path,
    metrics: &Metrics,
    caveats: &mut Vec<Caveat>,
) {
    if exp.trust.bias != crate::policy::BiasUse::Warn {
        return;
    }
    let said: Vec<Caveat> = metrics
        .bias
        .iter()
        .flat_map(|b| b.failures())
        .map(|says| Caveat::Bias { says })
        .collect();
    warn_caveats(
        &exp_label(path),
        &said,
        "the run goes on, and every decision line says so",
    );
    caveats.extend(said);
}

/// The input ledger's caveats as one warning on stderr: what the run read that could change
/// its answer unseen, and that it goes on (`goes_on`).
pub(super) fn warn_caveats(experiment: &str, caveats: &[Caveat], goes_on: &str) {
    if caveats.is_empty() {
        return;
    }
    let list: String = caveats
        .iter()
        .map(|c| format!("\n  - {}", crate::text::inline(&c.sentence())))
        .collect();
    output::print_warning(&format!(
        "{experiment}: {} on the inputs:{list}\n  hint: {goes_on}; `calibench validate --json` shows what became of every line, and --strict refuses caveats",
        crate::text::count(caveats.len() as u64, "caveat", "caveats")
    ));
}

/// The experiment file a warning is about.
fn exp_label(path: &Path) -> String {
    super::experiment_file(path).display().to_string()
}

/// Pretty JSON with a final newline. Serializing plain data cannot fail; if it ever did, the
/// file says so rather than the run dying half-written.
/// `v` as [`to_json`] writes it, straight into `out`.
fn write_json<T: Serialize>(out: &mut impl std::io::Write, v: &T) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, v).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

pub(super) fn to_json<T: Serialize>(v: &T) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v)
        .unwrap_or_else(|e| format!("{{\"error\": \"could not serialize: {e}\"}}").into_bytes());
    out.push(b'\n');
    out
}

/// Whether the run replayed code review's precision controls (docs/guides/ab-rubric-change.md): their columns are in
/// its tables only then.
fn controls_replayed(metrics: &crate::model::Metrics) -> bool {
    metrics
        .review
        .as_ref()
        .is_some_and(|r| r.arms.baseline.controls.is_some())
}
