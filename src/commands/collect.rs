//! `calibench collect EXPERIMENT [--resume RUN_ID] [--stage NAME]` (docs/guides/live-collection.md): runs the
//! `[collect]` command for every (arm, target, reviewer, run), then the validators over the
//! findings each arm's validation pass selects and the judges over every finding and target,
//! and records a corpus `run` can replay.
//!
//! The run directory `runs/<id>/` holds `collect.json` (what is collected, from which targets,
//! and how far each stage got), `artifacts/` (full-detail returns the reviewers write),
//! `reviews.jsonl` or `queries.jsonl`, `validations.jsonl`, and `verdicts.jsonl` (gathered from
//! `judges.jsonl`, one line per judge call, when every call is recorded). Lines are appended
//! as calls finish, by one writer, so a crash or Ctrl-C leaves whole lines only (a torn last
//! line, after a hard kill, is dropped on resume and its call run again). When a stage's every
//! call is recorded its file is rewritten once, in plan order, so a collection that was
//! interrupted and resumed ends byte-identical to one that was not (given deterministic
//! commands).
//!
//! Everything that can be checked before a command runs is: the `[collect]` tables, the
//! targets, the programs, the names, and on `--resume` that the experiment still asks for what
//! the run recorded. A problem there exits 2 with nothing created.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::collect::arrival::{Expect, Returns};
use crate::collect::plan::{self, safe_name, Call, Collect, Kind, Limits, Stage, Target, AGENT};
use crate::collect::runner::{self, Context, Failure, Finished, Job, Protocol, Sink};
use crate::collect::stages::{self, Collected, Validations, Verdicts};
use crate::config::Experiment;
use crate::corpus::{queries, reviews};
use crate::error::{Error, InputError};
use crate::output::{self, Render};
use crate::pipeline::load;
use crate::pipeline::{experiment_file, read_file};
use crate::rundir::{self, RunId};

#[derive(Debug, clap::Args)]
pub struct CollectArgs {
    /// Experiment with a [collect] table (a file, or a folder holding experiment.toml)
    pub experiment: std::path::PathBuf,
    /// Where run directories are written
    #[arg(long, default_value = "runs")]
    pub runs_dir: std::path::PathBuf,
    /// Name of the run directory (default: derived from the experiment and time)
    #[arg(long, conflicts_with = "resume")]
    pub run_id: Option<String>,
    /// Continue an interrupted collection in runs-dir/RUN_ID, skipping what is recorded
    #[arg(long, value_name = "RUN_ID")]
    pub resume: Option<String>,
    /// Print the calls that would run, and run none
    #[arg(long)]
    pub dry_run: bool,
    /// Run one stage only: reviewers (starts a run, as collect does), validators or judges
    /// (over the run named by --resume)
    #[arg(long, value_enum, value_name = "NAME")]
    pub stage: Option<crate::collect::plan::Stage>,
}

/// What `collect` did.
#[derive(Clone, Debug, Serialize)]
pub struct CollectReport {
    pub run_id: String,
    pub run_dir: PathBuf,
    pub experiment: PathBuf,
    /// One entry per stage the experiment declares, in order.
    pub stages: Vec<StageReport>,
    pub interrupted: bool,
    /// Every stage the experiment declares has every call recorded.
    pub complete: bool,
    pub seconds: f64,
    /// Set by `--dry-run`: nothing ran.
    pub dry_run: bool,
}

/// What one stage did.
#[derive(Clone, Debug, Serialize)]
pub struct StageReport {
    pub stage: Stage,
    /// The file its lines go to, in the run directory.
    pub file: PathBuf,
    pub status: StageStatus,
    /// Every call the stage plans; `None` while it cannot be planned (it waits for the
    /// reviewer returns).
    pub planned: Option<usize>,
    /// Calls already recorded when this collection began (`--resume`).
    pub already_recorded: usize,
    /// Calls recorded now, ok and failed.
    pub ok: usize,
    pub failed: usize,
    pub failures: BTreeMap<Failure, usize>,
    /// Up to five failed calls, with their reasons.
    pub failed_examples: Vec<String>,
    /// Calls an interruption left unrecorded: launched and stopped, or never launched.
    pub abandoned: usize,
    pub not_started: usize,
    pub seconds: f64,
    /// Set by `--dry-run`: the calls that would run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<Vec<DryCall>>,
}

/// How far a stage got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageStatus {
    /// Every call is recorded.
    Complete,
    /// Interrupted with calls left unrecorded.
    Interrupted,
    /// Not run yet: an earlier stage is not complete.
    Waiting,
    /// Not asked for (`--stage` named another); as far as an earlier collection took it.
    Skipped,
    /// `--dry-run` listed its calls.
    Planned,
}

/// One planned call, as `--dry-run` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct DryCall {
    /// What the call is about: arm, target, reviewer and run; arm and finding; arm, item and
    /// judge.
    pub about: String,
    pub argv: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<PathBuf>,
    pub recorded: bool,
}

/// `collect.json`: what the run collects, checked again on `--resume`, and each stage's state.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct Manifest {
    run_id: String,
    calibench_version: String,
    experiment_file: String,
    kind: String,
    command: Vec<String>,
    reviewers: Vec<String>,
    arms: Vec<String>,
    runs: u32,
    targets: Vec<TargetEntry>,
    calls: usize,
    started_at: String,
    /// `complete` when every stage is; `running`, `interrupted` or `partial` (a stage not run
    /// yet) otherwise.
    status: String,
    #[serde(default)]
    finished_at: Option<String>,
    #[serde(default)]
    stages: Vec<StageEntry>,
}

/// A stage's line in `collect.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct StageEntry {
    stage: Stage,
    status: StageStatus,
    /// What the stage runs (its command, and for judges the panel): a resume must run the same.
    plan: Value,
    calls: Option<usize>,
    recorded: usize,
    failed: usize,
    /// Seconds spent on it, over every collection that ran it.
    seconds: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct TargetEntry {
    name: String,
    path: String,
    sha256: String,
}

type Key = (String, String, String, u32);

/// A call's identity in its stage's file: what marks it recorded, and its plan position.
type CallKey = String;

fn string(v: &str) -> Value {
    Value::String(v.to_string())
}

fn call_key(parts: &[&Value]) -> CallKey {
    serde_json::to_string(parts).unwrap_or_default()
}

/// The key of a recorded line of `stage`'s file, from the fields that identify its call.
fn key_of(stage: Stage, kind: Kind, line: &Map<String, Value>) -> CallKey {
    let get = |k: &str| line.get(k).unwrap_or(&Value::Null);
    let run = Value::from(line.get("run").and_then(Value::as_u64).unwrap_or(0));
    let agent = Value::String(AGENT.into());
    match (stage, kind) {
        (Stage::Reviewers, Kind::Reviews) => {
            call_key(&[get("arm"), get("target"), get("reviewer"), &run])
        }
        (Stage::Reviewers, Kind::Queries) => call_key(&[get("arm"), get("query_id"), &agent, &run]),
        (Stage::Validators, _) => call_key(&[get("arm"), get("finding")]),
        (Stage::Judges, _) => call_key(&[get("arm"), get("item_id"), get("judge")]),
    }
}

fn reviewer_key(k: &Key) -> CallKey {
    call_key(&[
        &string(&k.0),
        &string(&k.1),
        &string(&k.2),
        &Value::from(k.3),
    ])
}

pub fn run(args: &CollectArgs, progress: bool) -> Result<CollectReport, Error> {
    let started = Instant::now();
    let mut p = prepare(args)?;
    let Place {
        run_id,
        recorded,
        lock,
        earlier,
    } = place(args, &p.exp.name, &mut p.manifest, p.collect.kind, &p.index)?;
    p.manifest.run_id = run_id.clone();
    let run_dir = args.runs_dir.join(&run_id);
    check_stage_plans(&run_dir, &earlier, &p.collect)?;
    let mut report = CollectReport {
        run_id: run_id.clone(),
        run_dir: run_dir.clone(),
        experiment: p.exp_path.clone(),
        stages: Vec::new(),
        interrupted: false,
        complete: false,
        seconds: 0.0,
        dry_run: args.dry_run,
    };
    let declared = p.collect.stages();
    let wanted = |s: Stage| args.stage.is_none_or(|w| w == s);
    let mut lock = lock;
    if !args.dry_run {
        std::fs::create_dir_all(&run_dir).map_err(|e| Error::write(&run_dir, e))?;
        // Held until the collection ends (every path that writes has taken it in `place`).
        if lock.is_none() {
            lock = Some(rundir::DirLock::take(&run_dir)?);
        }
        copy_controls(&p.exp, &run_dir)?;
        write_manifest(&run_dir, &p.manifest)?;
    }
    let run_dir_abs = if args.dry_run {
        rundir::resolved(&run_dir)
    } else {
        run_dir
            .canonicalize()
            .map_err(|e| Error::write(&run_dir, e))?
    };
    let mut ready = true;
    for stage in declared {
        let entry = |s: &StageReport| StageEntry {
            stage: s.stage,
            status: s.status,
            plan: stage_plan_value(&p.collect, s.stage),
            calls: s.planned,
            recorded: s.already_recorded + s.ok + s.failed,
            failed: s.failed
                + earlier
                    .iter()
                    .find(|e| e.stage == s.stage)
                    .map_or(0, |e| e.failed),
            seconds: s.seconds
                + earlier
                    .iter()
                    .find(|e| e.stage == s.stage)
                    .map_or(0.0, |e| e.seconds),
        };
        let file = run_dir.join(stage_file(stage, p.collect.kind));
        let mut stage_report = StageReport::new(stage, file);
        if !wanted(stage) {
            stage_report.status = earlier
                .iter()
                .find(|e| e.stage == stage)
                .map_or(StageStatus::Waiting, |e| e.status);
            if stage_report.status != StageStatus::Complete {
                stage_report.status = StageStatus::Skipped;
            }
        } else if !ready {
            stage_report.status = StageStatus::Waiting;
        } else {
            let ctx = StageContext {
                args,
                p: &p,
                run_dir: &run_dir,
                run_dir_abs: &run_dir_abs,
                run_id: &run_id,
                progress,
            };
            stage_report = match stage {
                Stage::Reviewers => ctx.reviewers(&recorded)?,
                Stage::Validators | Stage::Judges => ctx.later(stage)?,
            };
        }
        // Later stages work over the reviewer returns: they wait for all of them, and for
        // nothing else but an interruption.
        if stage == Stage::Reviewers && stage_report.status != StageStatus::Complete {
            ready = false;
        }
        if stage_report.status == StageStatus::Interrupted {
            report.interrupted = true;
            ready = false;
        }
        if !args.dry_run {
            let e = entry(&stage_report);
            match p.manifest.stages.iter_mut().find(|x| x.stage == stage) {
                Some(slot) => *slot = e,
                None => p.manifest.stages.push(e),
            }
        }
        report.stages.push(stage_report);
    }
    report.complete = report
        .stages
        .iter()
        .all(|s| s.status == StageStatus::Complete);
    if !args.dry_run {
        p.manifest.status = if report.complete {
            "complete"
        } else if report.interrupted {
            "interrupted"
        } else {
            "partial"
        }
        .into();
        p.manifest.finished_at = Some(rundir::timestamp(SystemTime::now()));
        write_manifest(&run_dir, &p.manifest)?;
    }
    drop(lock);
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// What a stage's calls share.
struct StageContext<'a> {
    args: &'a CollectArgs,
    p: &'a Prepared,
    run_dir: &'a Path,
    run_dir_abs: &'a Path,
    run_id: &'a str,
    progress: bool,
}

/// One stage, planned: its calls in plan order with their keys, and how they are run.
struct Planned {
    stage: Stage,
    kind: Kind,
    file: PathBuf,
    program: PathBuf,
    limits: Limits,
    jobs: Vec<Job>,
    keys: Vec<CallKey>,
    /// What each call is about, for the summary's failures and `--dry-run`.
    about: Vec<String>,
    protocol: Arc<dyn Protocol>,
}

impl StageContext<'_> {
    /// The reviewers (or agent) stage, over the calls `place` found unrecorded.
    fn reviewers(&self, recorded: &HashSet<Key>) -> Result<StageReport, Error> {
        let p = self.p;
        let file = self.run_dir.join(p.collect.kind.file());
        let stdin: HashMap<&str, Arc<Vec<u8>>> = p
            .stdin
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let jobs = p
            .calls
            .iter()
            .map(|c| Job {
                argv: c.argv.clone(),
                stdin: stdin
                    .get(c.target.name.as_str())
                    .cloned()
                    .unwrap_or_default(),
                artifact: Some(c.artifact.clone()),
            })
            .collect();
        let planned = Planned {
            stage: Stage::Reviewers,
            kind: p.collect.kind,
            file,
            program: p.program.clone(),
            limits: p.collect.limits,
            jobs,
            keys: p.calls.iter().map(|c| reviewer_key(&c.key())).collect(),
            about: p
                .calls
                .iter()
                .map(|c| {
                    format!(
                        "{} · {} · {} · run {}",
                        c.arm, c.target.name, c.reviewer, c.run
                    )
                })
                .collect(),
            protocol: Arc::new(Returns {
                kind: p.collect.kind,
                calls: p.calls.clone(),
                expect: arm_expectations(&p.exp, &p.collect),
            }),
        };
        let recorded: HashSet<CallKey> = recorded.iter().map(reviewer_key).collect();
        self.execute(planned, &recorded)
    }

    /// The validators or the judges, planned from the reviewer returns the run holds.
    fn later(&self, stage: Stage) -> Result<StageReport, Error> {
        let p = self.p;
        let reviews_path = self.run_dir.join(Kind::Reviews.file());
        let file = self.run_dir.join(stage_file(stage, p.collect.kind));
        if self.args.dry_run && !reviews_path.is_file() {
            // Nothing collected yet: the stage is planned from the returns once they are.
            let mut r = StageReport::new(stage, file);
            r.status = StageStatus::Planned;
            return Ok(r);
        }
        let bytes = read_file(&reviews_path)?;
        let name = reviews_path.display().to_string();
        let (records, problems) = reviews::parse(&name, &bytes);
        problems.refuse()?;
        let mut index = reviews::Index::default();
        records.iter().for_each(|r| index.add(r));
        let mut loaded = load::Loaded::default();
        load::targets_and_sources(&mut loaded, self.run_dir, &reviews_path, &index)?;
        loaded.refusals.refuse()?;
        let targets = loaded.corpus.targets.map(|(_, t)| t).unwrap_or_default();
        let paths: HashMap<String, PathBuf> = p
            .targets
            .iter()
            .map(|t| (t.name.clone(), t.path.clone()))
            .collect();
        let collected = Collected {
            mode: p.exp.mode,
            arms: p.exp.arms(),
            records: &records,
            targets: &targets,
            sources: loaded.corpus.sources.as_ref(),
            paths: &paths,
        };
        let subjects = stages::subjects(&collected);
        // The judges' plan, kept to gather their calls into verdicts once all are recorded.
        let mut panel: Option<Arc<Verdicts>> = None;
        // Each stage's calls: the job, its key, and what it is about.
        let (mut jobs, mut keys, mut about) = (Vec::new(), Vec::new(), Vec::new());
        let (own, protocol): (&plan::Overrides, Arc<dyn Protocol>) = match stage {
            Stage::Validators => {
                let v = p.collect.validators.as_ref().expect("declared stage");
                let selected: Vec<_> = subjects.iter().filter(|s| s.selected).cloned().collect();
                for s in &selected {
                    jobs.push(Job {
                        argv: substitute(&v.command, |ph| match ph {
                            "{finding_id}" => Some(s.id.clone()),
                            "{arm}" => Some(s.arm.clone()),
                            "{target}" => Some(s.target.clone()),
                            "{target_path}" => Some(path_of(&paths, &s.target)),
                            "{run}" => Some(s.run.to_string()),
                            _ => None,
                        }),
                        stdin: Arc::new(json_line(&s.object)),
                        artifact: None,
                    });
                    keys.push(call_key(&[&string(&s.arm), &string(&s.id)]));
                    about.push(format!("{} · {}", s.arm, s.id));
                }
                (&v.limits, Arc::new(Validations { subjects: selected }))
            }
            // The judges (the reviewers' stage never comes here).
            _ => {
                let j = p.collect.judges.as_ref().expect("declared stage");
                let verdicts = Arc::new(Verdicts {
                    items: stages::judge_items(&collected, &subjects, j),
                    judges: j.judges.clone(),
                    dimensions: j.dimensions.clone(),
                });
                for item in &verdicts.items {
                    let stdin = Arc::new(json_line(&item.object));
                    for judge in &j.judges {
                        jobs.push(Job {
                            argv: substitute(&j.command, |ph| match ph {
                                "{judge}" => Some(judge.clone()),
                                "{item_id}" => Some(item.item_id.clone()),
                                "{arm}" => Some(item.arm.clone()),
                                "{target}" => Some(item.target.clone()),
                                "{target_path}" => Some(path_of(&paths, &item.target)),
                                _ => None,
                            }),
                            stdin: stdin.clone(),
                            artifact: None,
                        });
                        keys.push(call_key(&[
                            &string(&item.arm),
                            &string(&item.item_id),
                            &string(judge),
                        ]));
                        about.push(format!("{} · {} · {judge}", item.arm, item.item_id));
                    }
                }
                panel = Some(verdicts.clone());
                (&j.limits, verdicts)
            }
        };
        let planned = Planned {
            stage,
            kind: Kind::Reviews,
            file,
            program: p.stage_programs[&stage].clone(),
            limits: p.collect.limits_with(own),
            jobs,
            keys,
            about,
            protocol,
        };
        let recorded = read_keys(&planned)?;
        let report = self.execute(planned, &recorded)?;
        if let Some(verdicts) = panel.filter(|_| report.status == StageStatus::Complete) {
            self.write_verdicts(&report.file, &verdicts)?;
        }
        Ok(report)
    }

    /// `verdicts.jsonl` from the judge calls' lines, once all are recorded.
    fn write_verdicts(&self, calls_file: &Path, verdicts: &Verdicts) -> Result<(), Error> {
        let text = String::from_utf8_lossy(&read_file(calls_file)?).into_owned();
        let mut calls = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(o)) => calls.push(o),
                _ => {
                    return Err(InputError::new(
                        calls_file.display().to_string(),
                        "holds a line that is not a JSON object",
                    )
                    .into())
                }
            }
        }
        let path = self.run_dir.join("verdicts.jsonl");
        let lines = stages::verdict_lines(verdicts, &calls);
        if lines.is_empty() {
            // Nothing was judged: no file, rather than one `run` would refuse as no evidence.
            return Ok(());
        }
        let mut out = String::new();
        for line in lines {
            out.push_str(&serde_json::to_string(&line).map_err(|e| {
                Error::Write(std::io::Error::other(format!("verdicts.jsonl: {e}")))
            })?);
            out.push('\n');
        }
        rundir::replace_file(&path, &out)
    }

    /// Runs what `planned` holds that `recorded` does not, appending each line as its call
    /// ends; when every call is recorded, rewrites the file in plan order.
    fn execute(&self, planned: Planned, recorded: &HashSet<CallKey>) -> Result<StageReport, Error> {
        let started = Instant::now();
        let mut report = StageReport::new(planned.stage, planned.file.clone());
        report.planned = Some(planned.jobs.len());
        report.already_recorded = planned
            .keys
            .iter()
            .filter(|k| recorded.contains(*k))
            .count();
        if self.args.dry_run {
            report.status = StageStatus::Planned;
            report.calls = Some(
                planned
                    .jobs
                    .iter()
                    .zip(&planned.keys)
                    .zip(&planned.about)
                    .map(|((job, key), about)| DryCall {
                        about: about.clone(),
                        argv: job.argv.clone(),
                        artifact: job.artifact.as_ref().map(|a| self.run_dir.join(a)),
                        recorded: recorded.contains(key),
                    })
                    .collect(),
            );
            return Ok(report);
        }
        let pending: Vec<(usize, Job)> = planned
            .jobs
            .iter()
            .enumerate()
            .filter(|(i, _)| !recorded.contains(&planned.keys[*i]))
            .map(|(i, j)| (i, j.clone()))
            .collect();
        let ctx = Context {
            program: planned.program.clone(),
            cwd: self.p.exp_dir.clone(),
            run_dir: self.run_dir_abs.to_path_buf(),
            run_id: self.run_id.to_string(),
            stage: planned.stage.name(),
            limits: planned.limits,
            protocol: planned.protocol.clone(),
        };
        let file = &planned.file;
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .map_err(|e| Error::write(file, e))?;
        let mut writer = Writer {
            out,
            about: &planned.about,
            bar: (self.progress && !pending.is_empty())
                .then(|| progress_bar(planned.stage, pending.len())),
            report: &mut report,
        };
        let ended = runner::run(ctx, pending, &mut writer);
        let Writer { out, bar, .. } = writer;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        let ended = ended.map_err(|e| Error::write(file, e))?;
        out.sync_all().map_err(|e| Error::write(file, e))?;
        drop(out);
        report.abandoned = ended.abandoned;
        report.not_started = ended.not_started;
        let done = report.already_recorded + report.ok + report.failed == planned.jobs.len();
        report.status = if done {
            in_plan_order(file, &planned)?;
            StageStatus::Complete
        } else {
            StageStatus::Interrupted
        };
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }
}

impl StageReport {
    fn new(stage: Stage, file: PathBuf) -> StageReport {
        StageReport {
            stage,
            file,
            status: StageStatus::Waiting,
            planned: None,
            already_recorded: 0,
            ok: 0,
            failed: 0,
            failures: BTreeMap::new(),
            failed_examples: Vec::new(),
            abandoned: 0,
            not_started: 0,
            seconds: 0.0,
            calls: None,
        }
    }
}

/// The file a stage appends its lines to.
fn stage_file(stage: Stage, kind: Kind) -> &'static str {
    match stage {
        Stage::Reviewers => kind.file(),
        Stage::Validators => "validations.jsonl",
        Stage::Judges => "judges.jsonl",
    }
}

/// What a stage runs, recorded in `collect.json` so that a resume runs the same.
fn stage_plan_value(collect: &Collect, stage: Stage) -> Value {
    match stage {
        Stage::Reviewers => serde_json::json!({"command": collect.command}),
        Stage::Validators => serde_json::json!({
            "command": collect.validators.as_ref().map(|v| &v.command),
        }),
        Stage::Judges => serde_json::json!({
            "command": collect.judges.as_ref().map(|j| &j.command),
            "judges": collect.judges.as_ref().map(|j| &j.judges),
            "items": collect.judges.as_ref().map(|j| j.items),
            "dimensions": collect.judges.as_ref().map(|j| &j.dimensions),
        }),
    }
}

/// An argv with each placeholder replaced, as a whole argument.
fn substitute(command: &[String], value: impl Fn(&str) -> Option<String>) -> Vec<String> {
    command
        .iter()
        .map(|a| value(a).unwrap_or_else(|| a.clone()))
        .collect()
}

fn path_of(paths: &HashMap<String, PathBuf>, target: &str) -> String {
    paths
        .get(target)
        .map_or_else(String::new, |p| p.display().to_string())
}

/// One JSON object and a newline: a call's stdin.
fn json_line(object: &Map<String, Value>) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(object).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Copies the corpus's `targets.jsonl` and `sources/` into the run directory, when
/// the experiment's corpus has them and the run does not yet: `run --corpus` on the collection
/// then replays skip rules and lint-ignore as on the corpus. Only regular files are copied; a
/// link is refused, as the corpus reader refuses one that leads outside.
fn copy_controls(exp: &Experiment, run_dir: &Path) -> Result<(), Error> {
    let from = &exp.corpus;
    let targets = from.join("targets.jsonl");
    if targets.is_file() && !run_dir.join("targets.jsonl").exists() {
        std::fs::copy(&targets, run_dir.join("targets.jsonl"))
            .map_err(|e| Error::write(&run_dir.join("targets.jsonl"), e))?;
    }
    let sources = from.join("sources");
    if sources.is_dir() && !run_dir.join("sources").exists() {
        copy_tree(&sources, &run_dir.join("sources"))?;
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(to).map_err(|e| Error::write(to, e))?;
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .map_err(|e| Error::read(from, e))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| Error::read(&path, e))?;
        let dest = to.join(entry.file_name());
        if kind.is_symlink() {
            return Err(InputError::new(
                path.display().to_string(),
                "is a symbolic link; collect copies a corpus's sources/ as regular files only",
            )
            .hint("replace the link with the file it points to")
            .into());
        } else if kind.is_dir() {
            copy_tree(&path, &dest)?;
        } else if kind.is_file() {
            std::fs::copy(&path, &dest).map_err(|e| Error::write(&dest, e))?;
        }
    }
    Ok(())
}

/// Everything checked and planned before anything is created: the experiment and its
/// `[collect]` tables, the targets, the names, the programs, the reviewer calls, and the
/// manifest.
struct Prepared {
    exp: Experiment,
    collect: Collect,
    exp_path: PathBuf,
    /// The experiment's folder, absolute: the commands' working directory.
    exp_dir: PathBuf,
    program: PathBuf,
    /// The validators' and judges' programs, resolved like the reviewers'.
    stage_programs: HashMap<Stage, PathBuf>,
    targets: Vec<Target>,
    calls: Vec<Call>,
    /// Each call's position in the plan.
    index: HashMap<Key, usize>,
    /// Each target's content, given on stdin.
    stdin: HashMap<String, Arc<Vec<u8>>>,
    manifest: Manifest,
}

fn prepare(args: &CollectArgs) -> Result<Prepared, Error> {
    let exp_path = experiment_file(&args.experiment);
    let exp_name = exp_path.display().to_string();
    let (exp, _) = crate::pipeline::load::experiment(&exp_path, &[])?;
    let Some(collect) = exp.collect.clone() else {
        return Err(InputError::new(&exp_name, "has no [collect] table")
            .field("`collect`")
            .hint("[collect] names the command to run, its reviewers and its targets (see docs/guides/live-collection.md)")
            .into());
    };
    if let Some(stage) = args.stage {
        if !collect.stages().contains(&stage) {
            return Err(InputError::new(
                &exp_name,
                format!("has no [collect.{}] table", stage.name()),
            )
            .field("`--stage`")
            .hint(format!(
                "the stages it declares: {}",
                collect
                    .stages()
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .into());
        }
        if stage != Stage::Reviewers && args.resume.is_none() {
            return Err(InputError::new(
                "--stage",
                format!(
                    "`{}` works over a collection's reviewer returns: name the run with --resume RUN_ID",
                    stage.name()
                ),
            )
            .into());
        }
    }
    let exp_dir = exp_path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .canonicalize()
        .map_err(|e| Error::read(&exp_path, e))?;
    let at = |line: u64, field: &str, problem: String| {
        InputError::new(&exp_name, problem)
            .at_line(line)
            .field(format!("`collect.{field}`"))
    };
    let targets = find_targets(&collect, &exp_dir, &at)?;
    check_names(&collect, &exp, &exp_name, &at)?;
    let program = resolve_program(&collect.command[0], &exp_dir)
        .map_err(|problem| at(collect.lines.command, "command", problem))?;
    let mut stage_programs = HashMap::new();
    if let Some(v) = &collect.validators {
        let found = resolve_program(&v.command[0], &exp_dir)
            .map_err(|problem| at(v.line, "validators.command", problem))?;
        stage_programs.insert(Stage::Validators, found);
    }
    if let Some(j) = &collect.judges {
        let found = resolve_program(&j.command[0], &exp_dir)
            .map_err(|problem| at(j.line, "judges.command", problem))?;
        stage_programs.insert(Stage::Judges, found);
    }
    let arms = stages::labels(exp.arms());
    let calls = plan::plan(&collect, &arms, &targets);
    let index: HashMap<Key, usize> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key(), i))
        .collect();
    let mut stdin = HashMap::new();
    let mut entries = Vec::new();
    for t in &targets {
        let bytes = read_file(&t.path)?;
        entries.push(TargetEntry {
            name: t.name.clone(),
            path: t
                .path
                .strip_prefix(&exp_dir)
                .unwrap_or(&t.path)
                .display()
                .to_string(),
            sha256: format!("{:x}", Sha256::digest(&bytes)),
        });
        stdin.insert(t.name.clone(), Arc::new(bytes));
    }
    let manifest = Manifest {
        run_id: String::new(),
        calibench_version: env!("CARGO_PKG_VERSION").into(),
        experiment_file: exp_path.display().to_string(),
        kind: format!("{:?}", collect.kind).to_lowercase(),
        command: collect.command.clone(),
        reviewers: collect.reviewers.clone(),
        arms: arms.clone(),
        runs: collect.runs,
        targets: entries,
        calls: calls.len(),
        started_at: rundir::timestamp(SystemTime::now()),
        status: "running".into(),
        finished_at: None,
        stages: Vec::new(),
    };
    Ok(Prepared {
        exp,
        collect,
        exp_path,
        exp_dir,
        program,
        stage_programs,
        targets,
        calls,
        index,
        stdin,
        manifest,
    })
}

/// Where a collection goes: its run id, what the run already holds, and the lock on it.
struct Place {
    run_id: String,
    /// The reviewer calls recorded.
    recorded: HashSet<Key>,
    /// Taken before what the run holds is read (none for `--dry-run`).
    lock: Option<rundir::DirLock>,
    /// The stages an earlier collection of the run recorded.
    earlier: Vec<StageEntry>,
}

/// Claims a new run directory, or (`--resume`) locks an existing one, checks it still matches
/// the experiment and reads what it records. One collection writes a run at a time (two resumes
/// at once would make every missing call twice, paid calls, and write its line twice), so the
/// run is locked before what it holds is read.
fn place(
    args: &CollectArgs,
    name: &str,
    manifest: &mut Manifest,
    kind: Kind,
    index: &HashMap<Key, usize>,
) -> Result<Place, Error> {
    let mut lock = None;
    let mut earlier_stages = Vec::new();
    let (run_id, recorded) = match &args.resume {
        Some(id) => {
            rundir::check_id(id, "--resume")?;
            let dir = args.runs_dir.join(id);
            if dir.is_dir() && !args.dry_run {
                lock = Some(rundir::DirLock::take(&dir)?);
            }
            let earlier = read_manifest(&dir)?;
            check_same(&dir, &earlier, manifest)?;
            manifest.started_at = earlier.started_at;
            earlier_stages = earlier.stages;
            manifest.stages = earlier_stages.clone();
            let file = dir.join(kind.file());
            let recorded = read_recorded(&file, kind, index)?;
            (id.clone(), recorded)
        }
        None => {
            let id = match &args.run_id {
                Some(id) => {
                    rundir::check_id(id, "--run-id")?;
                    RunId::Given(id.clone())
                }
                None => RunId::Default(format!(
                    "{}-collect-{}",
                    name,
                    rundir::compact_time(SystemTime::now())
                )),
            };
            let id = if args.dry_run {
                id.preview()
            } else {
                let taken = rundir::create_live(&args.runs_dir, &id).map_err(|e| match e {
                    Error::Input(e) if matches!(id, RunId::Given(_)) => e
                        .hint(format!(
                            "continue it with --resume {}, or choose another --run-id",
                            id.preview()
                        ))
                        .into(),
                    other => other,
                })?;
                lock = Some(rundir::DirLock::take(&args.runs_dir.join(&taken))?);
                taken
            };
            (id, HashSet::new())
        }
    };
    Ok(Place {
        run_id,
        recorded,
        lock,
        earlier: earlier_stages,
    })
}

/// The bar drawn on stderr while a stage's calls run: done/total, failures, elapsed and ETA.
fn progress_bar(stage: Stage, calls: usize) -> ProgressBar {
    let bar = output::progress_bar(
        calls,
        &format!(
            "{{spinner}} {} [{{bar:30}}] {{pos}}/{{len}} calls, {{msg}} ({{elapsed}}, ETA {{eta}})",
            stage.name()
        ),
    );
    bar.set_message("0 failed");
    bar
}

/// The single writer: appends each finished call's line whole, then counts it.
struct Writer<'a> {
    out: std::fs::File,
    about: &'a [String],
    bar: Option<ProgressBar>,
    report: &'a mut StageReport,
}

impl Sink for Writer<'_> {
    fn record(&mut self, finished: Finished) -> std::io::Result<()> {
        let mut line = serde_json::to_string(&finished.line).map_err(std::io::Error::other)?;
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        match finished.failure {
            None => self.report.ok += 1,
            Some(kind) => {
                self.report.failed += 1;
                *self.report.failures.entry(kind).or_default() += 1;
                if self.report.failed_examples.len() < 5 {
                    let reason = finished
                        .line
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    self.report
                        .failed_examples
                        .push(format!("{}: {reason}", self.about[finished.index]));
                }
            }
        }
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{} failed", self.report.failed));
            bar.inc(1);
        }
        Ok(())
    }

    fn interrupted(&mut self, level: u8, running: usize) {
        let message = if level == 1 {
            format!(
                "stopping: no new calls; waiting for {} to finish or time out (interrupt again to kill them)",
                crate::text::count(running as u64, "running call", "running calls")
            )
        } else {
            format!(
                "killing {}; they are not recorded",
                crate::text::count(running as u64, "running call", "running calls")
            )
        };
        match &self.bar {
            Some(bar) => bar.println(message),
            None => eprintln!("{message}"),
        }
    }
}

fn arm_expectations(exp: &Experiment, collect: &Collect) -> HashMap<String, Expect> {
    let mut out: HashMap<String, Expect> = HashMap::new();
    for arm in exp.arms() {
        let scale = arm.review.scale();
        let entry = out.entry(arm.source.clone()).or_insert_with(|| Expect {
            kind: collect.kind,
            mode: exp.mode,
            scales: Vec::new(),
        });
        if !entry.scales.contains(&scale) {
            entry.scales.push(scale);
        }
    }
    out
}

/// The targets the glob matches, sorted; each must be a readable file with a name no other
/// target shares (after reduction to a path component too).
fn find_targets(
    collect: &Collect,
    exp_dir: &Path,
    at: &dyn Fn(u64, &str, String) -> InputError,
) -> Result<Vec<Target>, Error> {
    let line = collect.lines.targets;
    let pattern = format!(
        "{}/{}",
        glob::Pattern::escape(&exp_dir.display().to_string()),
        collect.targets
    );
    let paths = glob::glob(&pattern).map_err(|e| {
        at(
            line,
            "targets",
            format!("`{}` is not a glob pattern: {e}", collect.targets),
        )
    })?;
    let mut found: Vec<PathBuf> = Vec::new();
    for p in paths {
        let p = p.map_err(|e| at(line, "targets", format!("cannot read a match: {e}")))?;
        if p.is_file() {
            found.push(p);
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(at(
            line,
            "targets",
            format!(
                "`{}` matches no file in {}",
                collect.targets,
                exp_dir.display()
            ),
        )
        .hint("the glob is relative to the experiment's folder, e.g. \"documents/*.md\"")
        .into());
    }
    let mut by_name: HashMap<String, &Path> = HashMap::new();
    let mut by_safe: HashMap<String, &Path> = HashMap::new();
    let targets: Vec<Target> = found.iter().map(|p| Target::from_path(p)).collect();
    for (t, p) in targets.iter().zip(&found) {
        if let Some(first) = by_name.insert(t.name.clone(), p) {
            return Err(at(
                line,
                "targets",
                format!(
                    "{} and {} are both target `{}`: a target is named by its file stem",
                    first.display(),
                    p.display(),
                    t.name
                ),
            )
            .into());
        }
        if let Some(first) = by_safe.insert(safe_name(&t.name), p) {
            return Err(at(
                line,
                "targets",
                format!(
                    "{} and {} would share the artifact folder `{}`",
                    first.display(),
                    p.display(),
                    safe_name(&t.name)
                ),
            )
            .into());
        }
    }
    Ok(targets)
}

/// Reviewer and arm names must stay distinct once reduced to path components.
fn check_names(
    collect: &Collect,
    exp: &Experiment,
    exp_name: &str,
    at: &dyn Fn(u64, &str, String) -> InputError,
) -> Result<(), Error> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for r in &collect.reviewers {
        if let Some(first) = seen.insert(safe_name(r), r) {
            let problem = if first == r {
                format!("`{r}` is listed twice")
            } else {
                format!(
                    "`{first}` and `{r}` would share the artifact name `{}`",
                    safe_name(r)
                )
            };
            return Err(at(collect.lines.reviewers, "reviewers", problem).into());
        }
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    for source in stages::labels(exp.arms()) {
        if let Some(first) = seen.insert(safe_name(&source), source.clone()) {
            return Err(InputError::new(
                exp_name,
                format!(
                    "arm sources `{first}` and `{source}` would share the artifact folder `{}`",
                    safe_name(&source)
                ),
            )
            .field("`source`")
            .into());
        }
    }
    Ok(())
}

/// `command[0]`: a path (it holds a `/`) relative to the experiment's folder, or a program on
/// PATH. It must be an executable file; nothing is run through a shell.
fn resolve_program(program: &str, exp_dir: &Path) -> Result<PathBuf, String> {
    let executable = |p: &Path| {
        p.is_file()
            && p.metadata()
                .map(|m| m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
    };
    if program.contains('/') {
        let path = exp_dir.join(program);
        if !path.exists() {
            return Err(format!(
                "`{program}` does not exist (looked for {})",
                path.display()
            ));
        }
        if !executable(&path) {
            return Err(format!(
                "`{program}` is not an executable file (chmod +x it, or run it through its interpreter, e.g. [\"sh\", \"{program}\", …])"
            ));
        }
        return path.canonicalize().map_err(|e| format!("`{program}`: {e}"));
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
        .ok_or_else(|| format!("`{program}` is not a program on PATH"))
}

fn write_manifest(run_dir: &Path, manifest: &Manifest) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(manifest)
        .map_err(|e| Error::Write(std::io::Error::other(format!("collect.json: {e}"))))?;
    text.push('\n');
    rundir::replace_file(&run_dir.join("collect.json"), &text)
}

fn read_manifest(run_dir: &Path) -> Result<Manifest, Error> {
    let path = run_dir.join("collect.json");
    if !path.is_file() {
        return Err(InputError::new(
            run_dir.display().to_string(),
            "is not a collection: it holds no collect.json",
        )
        .field("`--resume`")
        .hint("--resume takes the run id a collect printed, looked up under --runs-dir")
        .into());
    }
    let bytes = read_file(&path)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        InputError::new(
            path.display().to_string(),
            format!("is not a collect manifest: {e}"),
        )
        .at_line(e.line() as u64)
        .into()
    })
}

/// A resumed run must collect what it began collecting: same kind, command, reviewers, arms,
/// repeats and targets with the same content. Concurrency, timeout and retries may change.
fn check_same(run_dir: &Path, was: &Manifest, now: &Manifest) -> Result<(), Error> {
    let differs = |field: &str, before: String, after: String| -> Error {
        InputError::new(
            run_dir.join("collect.json").display().to_string(),
            format!("was collected with {field} {before}, but the experiment now says {after}"),
        )
        .field(format!("field `{field}`"))
        .hint("resume with the experiment as it was, or start a new collection")
        .into()
    };
    let show = |v: &dyn std::fmt::Debug| format!("{v:?}");
    if was.kind != now.kind {
        return Err(differs("kind", show(&was.kind), show(&now.kind)));
    }
    if was.command != now.command {
        return Err(differs("command", show(&was.command), show(&now.command)));
    }
    if was.reviewers != now.reviewers {
        return Err(differs(
            "reviewers",
            show(&was.reviewers),
            show(&now.reviewers),
        ));
    }
    if was.arms != now.arms {
        return Err(differs("arms", show(&was.arms), show(&now.arms)));
    }
    if was.runs != now.runs {
        return Err(differs("runs", was.runs.to_string(), now.runs.to_string()));
    }
    let names = |m: &Manifest| m.targets.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    if names(was) != names(now) {
        return Err(differs("targets", show(&names(was)), show(&names(now))));
    }
    if let Some((a, b)) = was
        .targets
        .iter()
        .zip(&now.targets)
        .find(|(a, b)| a.sha256 != b.sha256)
    {
        return Err(differs(
            "targets",
            format!("{} at sha256 {}", a.path, &a.sha256[..12]),
            format!(
                "{} at sha256 {} (its content changed)",
                b.path,
                &b.sha256[..12]
            ),
        ));
    }
    Ok(())
}

/// A stage an earlier collection of the run began must run as it began: same command (and for
/// the judges the same panel, items and dimensions).
fn check_stage_plans(
    run_dir: &Path,
    earlier: &[StageEntry],
    collect: &Collect,
) -> Result<(), Error> {
    for e in earlier {
        if e.recorded == 0 || !collect.stages().contains(&e.stage) {
            continue;
        }
        let now = stage_plan_value(collect, e.stage);
        if now != e.plan {
            return Err(InputError::new(
                run_dir.join("collect.json").display().to_string(),
                format!(
                    "its {} stage was collected with {}, but the experiment now says {}",
                    e.stage.name(),
                    e.plan,
                    now
                ),
            )
            .field(format!("`collect.{}`", e.stage.name()))
            .hint("resume with the experiment as it was, or start a new collection")
            .into());
        }
    }
    Ok(())
}

/// The keys of the calls `file` records. A torn last line (no newline: the writer was killed
/// mid-line) is cut off, and its call runs again; any other unreadable line refuses the resume.
fn read_recorded(
    file: &Path,
    kind: Kind,
    index: &HashMap<Key, usize>,
) -> Result<HashSet<Key>, Error> {
    let bytes = whole_lines(file)?;
    let name = file.display().to_string();
    let keys: Vec<(u64, Key)> = match kind {
        Kind::Reviews => {
            let (records, problems) = reviews::parse(&name, &bytes);
            problems.refuse()?;
            records
                .into_iter()
                .map(|r| (r.line, (r.arm, r.target, r.reviewer, r.run)))
                .collect()
        }
        Kind::Queries => {
            let (all, problems) = queries::parse(&name, &bytes);
            problems.refuse()?;
            all.into_iter()
                .map(|q| (q.line, (q.arm, q.query_id, AGENT.to_string(), q.run)))
                .collect()
        }
    };
    let mut recorded = HashSet::new();
    for (line, key) in keys {
        let call = format!(
            "arm {:?}, target {:?}, reviewer {:?}, run {}",
            key.0, key.1, key.2, key.3
        );
        if !index.contains_key(&key) {
            return Err(InputError::new(
                &name,
                format!("records {call}, which the experiment does not plan"),
            )
            .at_line(line)
            .hint("resume with the experiment that began this collection")
            .into());
        }
        if !recorded.insert(key) {
            return Err(InputError::new(&name, format!("records {call} twice"))
                .at_line(line)
                .into());
        }
    }
    Ok(recorded)
}

/// The whole lines of a stage's file, a torn last line (no newline: the writer was killed
/// mid-line) cut off so that its call runs again.
fn whole_lines(file: &Path) -> Result<Vec<u8>, Error> {
    if !file.exists() {
        return Ok(Vec::new());
    }
    let mut bytes = read_file(file)?;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(keep);
        let f = OpenOptions::new()
            .write(true)
            .open(file)
            .map_err(|e| Error::write(file, e))?;
        f.set_len(keep as u64).map_err(|e| Error::write(file, e))?;
        eprintln!(
            "{}: dropped an incomplete last line; its call runs again",
            file.display()
        );
    }
    Ok(bytes)
}

/// The keys of the calls a later stage's file records; a line that is not an object, names a
/// call the stage does not plan, or repeats one refuses the resume.
fn read_keys(planned: &Planned) -> Result<HashSet<CallKey>, Error> {
    let bytes = whole_lines(&planned.file)?;
    let name = planned.file.display().to_string();
    let known: HashSet<&CallKey> = planned.keys.iter().collect();
    let mut recorded = HashSet::new();
    let text = String::from_utf8_lossy(&bytes);
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |problem: String| -> Error {
            InputError::new(&name, problem)
                .at_line(i as u64 + 1)
                .hint("resume with the experiment that began this collection, or start a new one")
                .into()
        };
        let Ok(Value::Object(o)) = serde_json::from_str::<Value>(line) else {
            return Err(at("is not a JSON object".into()));
        };
        let key = key_of(planned.stage, planned.kind, &o);
        if !known.contains(&key) {
            return Err(at(format!(
                "records a {} call ({key}) that the experiment does not plan",
                planned.stage.name()
            )));
        }
        if !recorded.insert(key.clone()) {
            return Err(at(format!("records the call {key} twice")));
        }
    }
    Ok(recorded)
}

/// Rewrites a stage's complete file in plan order, through a temporary file and a rename.
fn in_plan_order(file: &Path, planned: &Planned) -> Result<(), Error> {
    let index: HashMap<&CallKey, usize> = planned
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k, i))
        .collect();
    let kind = planned.kind;
    let bytes = read_file(file)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<(usize, &str)> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).map_err(|e| {
            InputError::new(
                file.display().to_string(),
                format!("a line is not JSON: {e}"),
            )
        })?;
        let key = v
            .as_object()
            .map(|o| key_of(planned.stage, kind, o))
            .unwrap_or_default();
        lines.push((index.get(&key).copied().unwrap_or(usize::MAX), line));
    }
    lines.sort_by_key(|(i, _)| *i);
    let mut out = String::with_capacity(bytes.len());
    for (_, line) in lines {
        out.push_str(line);
        out.push('\n');
    }
    rundir::replace_file(file, &out)
}

impl Render for CollectReport {
    fn human(&self) -> String {
        let mut s = String::new();
        if self.dry_run {
            for stage in &self.stages {
                let name = stage.stage.name();
                match &stage.calls {
                    None if stage.status != StageStatus::Planned => {
                        let _ = writeln!(s, "{name}: {}", stage.summary());
                    }
                    Some(calls) => {
                        let todo = calls.iter().filter(|c| !c.recorded).count();
                        let _ = writeln!(
                            s,
                            "{name}: {} calls planned for {} ({} already recorded); nothing was run:",
                            calls.len(),
                            self.run_dir.display(),
                            calls.len() - todo
                        );
                        for c in calls {
                            let _ = writeln!(
                                s,
                                "  {}{}",
                                if c.recorded { "(recorded) " } else { "" },
                                c.argv
                                    .iter()
                                    .map(|a| crate::output::shell_quote(a))
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            );
                        }
                    }
                    None => {
                        let _ = writeln!(
                            s,
                            "{name}: planned from the reviewer returns once they are collected"
                        );
                    }
                }
            }
            return s;
        }
        let _ = writeln!(s, "collect {}:", self.run_id);
        for stage in &self.stages {
            let _ = writeln!(s, "  {:<10}  {}", stage.stage.name(), stage.summary());
            for e in &stage.failed_examples {
                let _ = writeln!(s, "      failed: {e}");
            }
            if stage.failed > stage.failed_examples.len() {
                let _ = writeln!(
                    s,
                    "      … every failed call is in {} with its `reason`",
                    stage.file.display()
                );
            }
        }
        let reviewers = self.stages.first();
        if let Some(r) = reviewers {
            if r.ok == 0 && r.failed > 0 && r.already_recorded == 0 {
                let _ = writeln!(
                    s,
                    "warning: no call succeeded; look at the reasons above before replaying"
                );
            }
        }
        if self.complete {
            let _ = writeln!(
                s,
                "{} holds every call. Replay it: calibench run {} --corpus {}",
                self.run_dir.display(),
                crate::output::shell_quote(&self.experiment.display().to_string()),
                crate::output::shell_quote(&self.run_dir.display().to_string())
            );
        } else {
            let left: usize = self
                .stages
                .iter()
                .filter_map(|s| {
                    s.planned
                        .map(|p| p.saturating_sub(s.already_recorded + s.ok + s.failed))
                })
                .sum();
            let waiting = self
                .stages
                .iter()
                .any(|s| matches!(s.status, StageStatus::Waiting | StageStatus::Skipped));
            let what = if self.interrupted {
                format!("interrupted: {left} planned calls are not recorded yet")
            } else {
                "not complete".to_string()
            };
            let later = if waiting {
                "; the stages waiting run after"
            } else {
                ""
            };
            let _ = writeln!(s, "{what}{later}. Continue: {}", self.resume_command());
        }
        s
    }
}

impl StageReport {
    /// The stage's line in the summary.
    fn summary(&self) -> String {
        match self.status {
            StageStatus::Waiting => {
                return "waiting: it runs once every earlier stage is complete".into()
            }
            StageStatus::Skipped => return "not run (--stage names another)".into(),
            StageStatus::Planned => return "planned".into(),
            StageStatus::Complete | StageStatus::Interrupted => {}
        }
        let failures = if self.failures.is_empty() {
            String::new()
        } else {
            let parts: Vec<String> = self
                .failures
                .iter()
                .map(|(kind, n)| {
                    let what = match kind {
                        Failure::Start => "could not start",
                        Failure::Exit => "exited non-zero",
                        Failure::Timeout => "timed out",
                        Failure::Output => "invalid output",
                    };
                    format!("{n} {what}")
                })
                .collect();
            format!(" ({})", parts.join(", "))
        };
        let skipped = if self.already_recorded > 0 {
            format!(
                "; {} were already recorded and skipped",
                self.already_recorded
            )
        } else {
            String::new()
        };
        format!(
            "{} calls recorded now, {} ok, {} failed{failures}{skipped}; {:.1} s → {}",
            self.ok + self.failed,
            self.ok,
            self.failed,
            self.seconds,
            self.file
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        )
    }
}

impl CollectReport {
    /// The command that continues this collection, with every flag it needs (`--runs-dir`
    /// included: without it a resume looks in `runs/` and fails), quoted for a POSIX shell.
    fn resume_command(&self) -> String {
        let runs_dir = self
            .run_dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        format!(
            "calibench collect {} --resume {} --runs-dir {}",
            crate::output::shell_quote(&self.experiment.display().to_string()),
            crate::output::shell_quote(&self.run_id),
            crate::output::shell_quote(&runs_dir.display().to_string())
        )
    }
}

impl super::Run for CollectArgs {
    const REPLAYS: bool = true;

    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        let report = run(&self, ctx.progress)?;
        let verdict = if report.interrupted {
            crate::exit::Verdict::Interrupted
        } else {
            crate::exit::Verdict::Pass
        };
        Ok(ctx.answer(&report, verdict))
    }
}
