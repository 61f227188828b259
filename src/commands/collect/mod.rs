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

mod calls;
mod harness;
pub mod merge;
mod prepare;
mod resume;
mod until;

use calls::*;
use prepare::*;
use resume::*;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use indicatif::ProgressBar;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::collect::arrival::{Expect, Returns};
use crate::collect::plan::{self, safe_name, Call, Collect, Limits, Target};
use crate::collect::runner::{self, Context, Failure, Finished, Job, Protocol, Sink};
use crate::collect::stages::{self, Collected, Validations, Verdicts};
use crate::config::Experiment;
use crate::corpus::collection::{
    Collection, Kind, Look, Sequential, ShardEntry, Stage, StageEntry, StageStatus, Status,
    TargetEntry, FILE,
};
use crate::corpus::reviews;
use crate::error::{Error, InputError};
use crate::output::{self, Render};
use crate::pipeline::load;
use crate::pipeline::{experiment_file, read_file};
use crate::rundir::{self, RunId};

#[derive(Clone, Debug, clap::Args)]
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
    /// With --run-id: continue runs-dir/RUN_ID as --resume would when it is already there (a
    /// job a scheduler runs again after a crash or a requeue), else start it
    #[arg(long, requires = "run_id", conflicts_with = "resume")]
    pub or_resume: bool,
    /// Print the calls that would run, and run none
    #[arg(long)]
    pub dry_run: bool,
    /// Run one stage only: reviewers (starts a run, as collect does), validators or judges
    /// (over the run named by --resume)
    #[arg(long, value_enum, value_name = "NAME")]
    pub stage: Option<Stage>,
    /// Collect targets in a seeded random order, a batch at a time, and stop launching once
    /// the sequential decision is better or worse (docs/guides/stop-when-you-know.md)
    #[arg(long, conflicts_with_all = NOT_UNTIL_DECIDED)]
    pub until_decided: bool,
    /// Collect the baseline configuration twice (arms `<label>` and `<label>-again`): the
    /// harness's own run-to-run noise, which `run --aa` measures and `noise_floor` shows
    #[arg(long, conflicts_with = "until_decided")]
    pub aa: bool,
    /// With --until-decided: collect at most N targets (default: every target)
    #[arg(long, requires = "until_decided", conflicts_with_all = NOT_UNTIL_DECIDED, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_targets: Option<u32>,
    /// Collect shard K of N: the targets whose SHA-256 of the name, mod N, is K − 1, so that N
    /// machines collect disjoint parts of one plan (`calibench merge` joins them). `auto`
    /// reads the job's index from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX), a SLURM
    /// job array (SLURM_ARRAY_TASK_ID) or an AWS Batch array job (AWS_BATCH_JOB_ARRAY_INDEX)
    #[arg(
        long = "shard",
        value_name = "K/N|auto",
        conflicts_with = "until_decided"
    )]
    pub shard_spec: Option<crate::collect::shard::ShardSpec>,
    /// With --shard auto: how many jobs the array has (a Kubernetes Job does not say; SLURM
    /// and AWS Batch do, and this must agree)
    #[arg(long, value_name = "N", requires = "shard_spec", conflicts_with = "until_decided", value_parser = clap::value_parser!(u32).range(2..))]
    pub shards: Option<u32>,
    /// The shard `--shard` names, once `auto` is read from the environment.
    #[arg(skip)]
    pub shard: Option<Shard>,
    /// Where an `auto` shard came from, for the summary.
    #[arg(skip)]
    pub shard_from: Option<String>,
    /// With --until-decided: targets collected between looks (default: [collect] concurrency)
    #[arg(long, requires = "until_decided", conflicts_with_all = NOT_UNTIL_DECIDED, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: Option<u32>,
}

/// What `--until-decided` cannot be used with. A flag that requires it conflicts with them too:
/// clap does not check a requirement on a flag that conflicts with one given, so without this
/// `--max-targets 5 --dry-run` ran a dry run and ignored the budget.
const NOT_UNTIL_DECIDED: [&str; 4] = ["stage", "dry_run", "aa", "shard_spec"];

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
    /// `--until-decided`: each look and why the collection stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<Sequential>,
    /// `--aa`: an A/A collection, replayed with `run --aa`.
    pub aa: bool,
    /// `--shard`: which shard, and (for `auto`) where the scheduler said so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Arms, reviewers and judges none of whose calls succeeded where `run` needs some: `run`
    /// refuses the corpus, and `collect` exits 1.
    pub all_failed: Vec<String>,
    /// The commands that continue it and that replay it, with every flag they need, as its
    /// collect.json records it.
    pub resume_command: String,
    pub replay_command: String,
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
    /// Files of the harness that changed while it ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<crate::corpus::collection::Change>,
}

/// One planned call, as `--dry-run` lists it.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Serialize)]
pub struct DryCall {
    /// What the call is about: arm, target, reviewer and run; arm and finding; arm, item and
    /// judge.
    pub about: String,
    pub argv: Vec<String>,
    pub artifact: Option<PathBuf>,
    pub recorded: bool,
}

pub use crate::collect::shard::Shard;

/// The SHA-256 of a collection's whole plan (`Collection::plan_hash`), with each later
/// stage's plan as the experiment declares it.
pub(super) fn plan_hash(m: &Collection, collect: &Collect) -> String {
    let stages: Vec<Value> = collect
        .stages()
        .iter()
        .map(|s| stage_plan_value(collect, *s))
        .collect();
    m.plan_hash(&stages)
}

/// A call's identity in its stage's file ("the same call", `corpus::call`): what marks it
/// recorded, and its plan position.
pub(super) use crate::corpus::call::Call as Key;

pub fn run(args: &CollectArgs, progress: bool) -> Result<CollectReport, Error> {
    let mut report = if args.until_decided {
        until::run(args, progress)?
    } else {
        run_with(args, progress, None, None)?
    };
    if !args.dry_run {
        report.all_failed = all_failed(args, &report.run_dir)?;
    }
    Ok(report)
}

/// What of the run `run` would refuse because every call of an arm, or of a reviewer or judge
/// in one arm, failed (docs/guides/live-collection.md, "Failed calls"): the ledger `run` keeps
/// of the same lines, so that the two say the same.
fn all_failed(args: &CollectArgs, run_dir: &Path) -> Result<Vec<String>, Error> {
    let exp_path = experiment_file(&args.experiment);
    let (exp, _) = crate::pipeline::load::experiment(&exp_path, &[])?;
    let exp = if args.aa { exp.aa() } else { exp };
    let loaded = crate::pipeline::load::load(run_dir, Some((&exp_path, &exp)), true)?;
    let [b, t] = exp.arms();
    Ok(
        crate::pipeline::calls::all_failed(&loaded.ledger.calls, [&b.name, &t.name])
            .iter()
            .map(|r| r.sentence(if r.arm == b.name { &t.name } else { &b.name }))
            .collect(),
    )
}

/// A collection of the targets `only` names (every target when `None`), with `log` recorded
/// in collect.json as its sequential record.
fn run_with(
    args: &CollectArgs,
    progress: bool,
    only: Option<&[String]>,
    log: Option<Sequential>,
) -> Result<CollectReport, Error> {
    run_prepared(args, progress, only, log, prepare(args)?, None)
}

/// [`run_with`] of a collection already prepared.
fn run_prepared(
    args: &CollectArgs,
    progress: bool,
    only: Option<&[String]>,
    log: Option<Sequential>,
    mut p: Prepared,
    watch: Option<&std::cell::RefCell<harness::Watch>>,
) -> Result<CollectReport, Error> {
    let started = Instant::now();
    let mut open = Open::new(args, log, &mut p, only)?;
    let own;
    let watch = match watch {
        Some(w) => w,
        None => {
            own = std::cell::RefCell::new(harness::Watch::new(&p.watched));
            &own
        }
    };
    let mut report = open.collect(args, progress, &mut p, watch, false)?;
    open.close(args, &mut p, &report)?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// A collection's run directory while it is written: claimed or resumed, locked, and what it
/// records known. A sequential collection keeps it open across its batches, so that a batch
/// reads nothing its predecessors wrote and rewrites nothing but collect.json.
struct Open {
    run_id: String,
    run_dir: PathBuf,
    run_dir_abs: PathBuf,
    /// Held until the collection ends (every path that writes has taken it in `place`).
    _lock: Option<rundir::DirLock>,
    /// The reviewer calls recorded.
    recorded: HashSet<Key>,
    /// The stages as collect.json recorded them before this plan's calls.
    earlier: Vec<StageEntry>,
    /// Whether the plan now collected adds to the one `earlier` counts (a sequential batch
    /// after the first) rather than holding it.
    adds: bool,
}

impl Open {
    /// Claims or resumes the run of `args` for the plan `p`, narrowed to `only` (or the shard)
    /// once what the run holds is read against the whole plan, and records its start.
    fn new(
        args: &CollectArgs,
        log: Option<Sequential>,
        p: &mut Prepared,
        only: Option<&[String]>,
    ) -> Result<Open, Error> {
        // Set before `place`, so that a resume is checked to be the same shard.
        if let Some(shard) = args.shard {
            p.manifest.shard = Some(ShardEntry {
                k: shard.k,
                n: shard.n,
                plan: plan_hash(&p.manifest, &p.collect),
            });
        }
        let Place {
            run_id,
            recorded,
            lock,
            earlier,
        } = place(args, &p.exp.name, &mut p.manifest, p.collect.kind, &p.index)?;
        p.manifest.run_id = run_id.clone();
        p.manifest.sequential = log;
        p.narrow_to(only, args.shard);
        let run_dir = args.runs_dir.join(&run_id);
        check_stage_plans(&run_dir, &earlier, &p.collect)?;
        let mut lock = lock;
        if !args.dry_run {
            std::fs::create_dir_all(&run_dir).map_err(|e| Error::write(&run_dir, e))?;
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
        Ok(Open {
            run_id,
            run_dir,
            run_dir_abs,
            _lock: lock,
            recorded,
            earlier,
            adds: false,
        })
    }

    /// Runs each stage the experiment declares over the plan `p`, recording each in `p`'s
    /// manifest (not written here). A stage whose every call is recorded has its file
    /// rewritten in plan order, unless the plan is a sequential `batch` that later ones add to
    /// ([`StageContext::batch`]).
    fn collect(
        &mut self,
        args: &CollectArgs,
        progress: bool,
        p: &mut Prepared,
        watch: &std::cell::RefCell<harness::Watch>,
        batch: bool,
    ) -> Result<CollectReport, Error> {
        let run_dir = &self.run_dir;
        let mut report = CollectReport {
            run_id: self.run_id.clone(),
            run_dir: run_dir.clone(),
            experiment: p.exp_path.clone(),
            stages: Vec::new(),
            interrupted: false,
            complete: false,
            seconds: 0.0,
            dry_run: args.dry_run,
            sequential: None,
            aa: args.aa,
            shard: args.shard.map(|sh| {
                args.shard_from
                    .clone()
                    .unwrap_or_else(|| format!("shard {} of {}", sh.k, sh.n))
            }),
            all_failed: Vec::new(),
            resume_command: p.manifest.resume_command(&args.runs_dir),
            replay_command: p.manifest.replay_command(run_dir),
        };
        let wanted = |s: Stage| args.stage.is_none_or(|w| w == s);
        let mut ready = true;
        let earlier = &self.earlier;
        for stage in p.collect.stages() {
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
                    p,
                    run_dir,
                    run_dir_abs: &self.run_dir_abs,
                    run_id: &self.run_id,
                    progress,
                    watch,
                    batch,
                };
                // The stage's calls recorded before: what a change found now came after.
                let before = earlier
                    .iter()
                    .find(|e| e.stage == stage)
                    .map_or(0, |e| e.recorded);
                watch.borrow_mut().stage_start(before);
                stage_report = match stage {
                    Stage::Reviewers => ctx.reviewers(&self.recorded)?,
                    Stage::Validators | Stage::Judges => ctx.later(stage)?,
                };
                stage_report.changed = watch
                    .borrow_mut()
                    .stage_end(stage_report.ok + stage_report.failed);
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
                let adds = batch_adds(self.adds, stage);
                let e = stage_entry(&stage_report, &p.collect, earlier, adds);
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
        Ok(report)
    }

    /// Records in collect.json how the collection of `report` ended.
    fn close(
        &mut self,
        args: &CollectArgs,
        p: &mut Prepared,
        report: &CollectReport,
    ) -> Result<(), Error> {
        if !args.dry_run {
            p.manifest.status = if report.complete {
                Status::Complete
            } else if report.interrupted {
                Status::Interrupted
            } else {
                Status::Partial
            };
            p.manifest.finished_at = Some(rundir::timestamp(SystemTime::now()));
            write_manifest(&self.run_dir, &p.manifest)?;
        }
        Ok(())
    }

    /// After a whole batch of `p`'s plan: its calls are recorded, and the next batch's plan
    /// adds to the stages as they stand.
    fn next_batch(&mut self, p: &Prepared, adds: bool) {
        let kind = p.collect.kind;
        self.recorded.extend(p.calls.iter().map(|c| c.call(kind)));
        self.earlier = p.manifest.stages.clone();
        self.adds = adds;
    }
}

/// Whether `stage`'s calls in a plan that `adds` to earlier batches' add to theirs: a
/// sequential batch's reviewer calls do; a later stage plans from every return the run holds.
fn batch_adds(adds: bool, stage: Stage) -> bool {
    adds && stage == Stage::Reviewers
}

/// The stage's record in collect.json after `s`: its calls and their failures and time added
/// to those `earlier` records; with `adds`, its plan is more calls of the same stage (a
/// sequential batch), counted with those before it.
fn stage_entry(
    s: &StageReport,
    collect: &Collect,
    earlier: &[StageEntry],
    adds: bool,
) -> StageEntry {
    let before = earlier.iter().find(|e| e.stage == s.stage);
    let (calls, recorded) = match before.filter(|_| adds) {
        Some(e) => (
            Some(e.calls.unwrap_or(0) + s.planned.unwrap_or(0)),
            e.recorded + s.already_recorded + s.ok + s.failed,
        ),
        None => (s.planned, s.already_recorded + s.ok + s.failed),
    };
    StageEntry {
        stage: s.stage,
        status: s.status,
        plan: stage_plan_value(collect, s.stage),
        calls,
        recorded,
        failed: s.failed + before.map_or(0, |e| e.failed),
        seconds: s.seconds + before.map_or(0.0, |e| e.seconds),
        changed: before
            .map(|e| e.changed.clone())
            .unwrap_or_default()
            .into_iter()
            .chain(s.changed.iter().cloned())
            .collect(),
    }
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
                            "{name}: {} planned for {} ({} already recorded); nothing was run:",
                            crate::text::count(calls.len() as u64, "call", "calls"),
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
        match &self.shard {
            Some(shard) => {
                let _ = writeln!(s, "collect {} ({shard}):", self.run_id);
            }
            None => {
                let _ = writeln!(s, "collect {}:", self.run_id);
            }
        }
        for stage in &self.stages {
            let _ = writeln!(s, "  {:<10}  {}", stage.stage.name(), stage.summary());
            for e in &stage.failed_examples {
                let _ = writeln!(s, "      failed: {}", crate::text::inline(e));
            }
            if stage.failed > stage.failed_examples.len() {
                let _ = writeln!(
                    s,
                    "      … every failed call is in {} with its `reason`",
                    stage.file.display()
                );
            }
        }
        for stage in &self.stages {
            for c in &stage.changed {
                let _ = writeln!(
                    s,
                    "warning: {} changed while the {} stage ran ({} calls before, {} after): `run` says so on every decision line",
                    crate::text::inline(&c.file),
                    stage.stage.name(),
                    c.calls_before,
                    c.calls_after
                );
            }
        }
        let failed: usize = self.stages.iter().map(|s| s.failed).sum();
        if failed > 0 {
            let _ = writeln!(
                s,
                "warning: {} failed; `run` counts them (inputs.calls) and says so on every decision line",
                crate::text::count(failed as u64, "call", "calls")
            );
        }
        for refused in &self.all_failed {
            let _ = writeln!(
                s,
                "error: {refused}: `run` refuses this corpus, since its arms would compare different harnesses; look at the reasons above, correct the harness and collect again"
            );
        }
        if let Some(log) = &self.sequential {
            let _ = writeln!(s, "  sequential: {}", until::summary(log));
        }
        if self.complete && self.all_failed.is_empty() {
            let shard = if self.replay_command.ends_with("--allow-partial") {
                " of its shard; merge the shards (calibench merge OUT SHARD...) to replay the whole plan, or replay this part alone"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "{} holds every call{}{shard}. Replay it: {}",
                self.run_dir.display(),
                if self.sequential.is_some() {
                    " it made"
                } else {
                    ""
                },
                self.replay_command
            );
        } else if !self.complete {
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
            let _ = writeln!(s, "{what}{later}. Continue: {}", self.resume_command);
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
                .map(|(kind, n)| format!("{n} {}", kind.phrase()))
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
            "{} recorded now, {} ok, {} failed{failures}{skipped}; {:.1} s → {}",
            crate::text::count((self.ok + self.failed) as u64, "call", "calls"),
            self.ok,
            self.failed,
            self.seconds,
            self.file
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        )
    }
}

/// A flag whose value cannot be used, as the command line's own errors are: exit 2, nothing
/// written.
fn usage_error(flag: &str, message: String) -> Error {
    crate::error::InputError::new("calibench collect", message)
        .field(flag.to_string())
        .into()
}

impl CollectArgs {
    /// `--run-id ID --or-resume` as `--resume ID` when runs-dir/ID is there: a scheduler's
    /// retry of a job continues what its first attempt recorded instead of being refused for
    /// a run id that exists. Two attempts at once are kept apart by the run's lock, as two
    /// resumes are.
    fn resume_if_there(&mut self) {
        if !self.or_resume {
            return;
        }
        if let Some(id) = self.run_id.take_if(|id| {
            // A name that is not a run id stays --run-id's, to be refused as one.
            crate::rundir::check_id(id, "--run-id").is_ok()
                && self.runs_dir.join(id.as_str()).exists()
        }) {
            self.resume = Some(id);
        }
    }
}

impl super::Run for CollectArgs {
    const PURGE_DELAY_MS: Option<i64> = Some(0);

    fn run(mut self, ctx: &super::Context) -> Result<super::Answer, Error> {
        use crate::collect::shard::{self, ShardSpec};
        match self.shard_spec {
            Some(ShardSpec::Fixed(s)) => {
                if let Some(n) = self.shards.filter(|&n| n != s.n) {
                    return Err(usage_error(
                        "--shards",
                        format!("--shards {n} disagrees with --shard {}/{}", s.k, s.n),
                    ));
                }
                self.shard = Some(s);
            }
            Some(ShardSpec::Auto) => {
                let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
                let (s, from) =
                    shard::auto(&env, self.shards).map_err(|e| usage_error("--shard auto", e))?;
                self.shard = Some(s);
                self.shard_from = Some(from);
            }
            None => {}
        }
        self.resume_if_there();
        let report = run(&self, ctx.progress)?;
        let verdict = if report.interrupted {
            crate::exit::Verdict::Interrupted
        } else if !report.all_failed.is_empty() {
            crate::exit::Verdict::Fail
        } else {
            crate::exit::Verdict::Pass
        };
        Ok(ctx.answer(&report, verdict))
    }
}
