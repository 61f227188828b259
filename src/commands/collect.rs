//! `calibench collect EXPERIMENT [--resume RUN_ID]` (SPEC §8): runs the `[collect]` command for
//! every (arm, target, reviewer, run) and records a corpus `run` can replay.
//!
//! The run directory `runs/<id>/` holds `collect.json` (what is collected, from which targets,
//! and how far it got), `artifacts/` (full-detail returns the command writes) and
//! `reviews.jsonl` or `queries.jsonl`. Lines are appended as calls finish, by one writer, so a
//! crash or Ctrl-C leaves whole lines only (a torn last line, after a hard kill, is dropped on
//! resume and its call run again). When every call is recorded the file is rewritten once, in
//! plan order, so a collection that was interrupted and resumed ends byte-identical to one that
//! was not (given a deterministic command).
//!
//! Everything that can be checked before a command runs is: the `[collect]` table, the targets,
//! the program, the names, and on `--resume` that the experiment still asks for what the run
//! recorded. A problem there exits 2 with nothing created.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::run::refuse;
use super::{experiment_file, read_file};
use crate::cli::CollectArgs;
use crate::collect::arrival::Expect;
use crate::collect::plan::{self, safe_name, Call, Collect, Kind, Target, AGENT};
use crate::collect::runner::{self, Context, Failure, Finished, Sink};
use crate::config::Experiment;
use crate::corpus::{queries, reviews};
use crate::error::{Error, InputError};
use crate::output::Render;
use crate::rundir::{self, RunId};

/// What `collect` did.
#[derive(Clone, Debug, Serialize)]
pub struct CollectReport {
    pub run_id: String,
    pub run_dir: PathBuf,
    /// The corpus file written: `reviews.jsonl` or `queries.jsonl` in the run directory.
    pub file: PathBuf,
    pub experiment: PathBuf,
    /// Every call the experiment plans.
    pub planned: usize,
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
    pub interrupted: bool,
    pub complete: bool,
    pub seconds: f64,
    /// Set by `--dry-run`: the calls that would run, and nothing ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<Vec<DryCall>>,
}

/// One planned call, as `--dry-run` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct DryCall {
    pub arm: String,
    pub target: String,
    pub reviewer: String,
    pub run: u32,
    pub argv: Vec<String>,
    pub artifact: PathBuf,
    pub recorded: bool,
}

/// `collect.json`: what the run collects, checked again on `--resume`.
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
    status: String,
    #[serde(default)]
    finished_at: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
struct TargetEntry {
    name: String,
    path: String,
    sha256: String,
}

type Key = (String, String, String, u32);

pub fn run(args: &CollectArgs, progress: bool) -> Result<CollectReport, Error> {
    let started = Instant::now();
    let mut p = prepare(args)?;
    let Place {
        run_id,
        recorded,
        lock,
    } = place(args, &p.exp.name, &mut p.manifest, p.collect.kind, &p.index)?;
    p.manifest.run_id = run_id.clone();
    let run_dir = args.runs_dir.join(&run_id);
    let file = run_dir.join(p.collect.kind.file());
    let mut report = CollectReport {
        run_id: run_id.clone(),
        run_dir: run_dir.clone(),
        file: file.clone(),
        experiment: p.exp_path.clone(),
        planned: p.calls.len(),
        already_recorded: recorded.len(),
        ok: 0,
        failed: 0,
        failures: BTreeMap::new(),
        failed_examples: Vec::new(),
        abandoned: 0,
        not_started: 0,
        interrupted: false,
        complete: false,
        seconds: 0.0,
        dry_run: None,
    };
    if args.dry_run {
        report.dry_run = Some(dry_calls(&p.calls, &run_dir, &recorded));
        return Ok(report);
    }

    std::fs::create_dir_all(&run_dir).map_err(|e| Error::write(&run_dir, e))?;
    // Held until the collection ends (every path that writes has taken it in `place`).
    let _lock = match lock {
        Some(held) => held,
        None => rundir::DirLock::take(&run_dir)?,
    };
    let run_dir_abs = run_dir
        .canonicalize()
        .map_err(|e| Error::write(&run_dir, e))?;
    write_manifest(&run_dir, &p.manifest)?;
    let pending: Vec<(usize, Call)> = p
        .calls
        .iter()
        .enumerate()
        .filter(|(_, c)| !recorded.contains(&c.key()))
        .map(|(i, c)| (i, c.clone()))
        .collect();
    let ctx = Context {
        program: p.program,
        cwd: p.exp_dir,
        run_dir: run_dir_abs,
        run_id,
        kind: p.collect.kind,
        timeout: p.collect.timeout,
        retries: p.collect.retries,
        backoff: p.collect.backoff,
        concurrency: p.collect.concurrency,
        expect: arm_expectations(&p.exp, &p.collect),
        stdin: p.stdin,
    };
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .map_err(|e| Error::write(&file, e))?;
    let mut writer = Writer {
        out,
        calls: &p.calls,
        bar: progress.then(|| progress_bar(pending.len())),
        report: &mut report,
    };
    let ended = runner::run(ctx, pending, &mut writer);
    let Writer { out, bar, .. } = writer;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let ended = ended.map_err(|e| Error::write(&file, e))?;
    out.sync_all().map_err(|e| Error::write(&file, e))?;
    drop(out);
    report.abandoned = ended.abandoned;
    report.not_started = ended.not_started;
    report.interrupted = ended.interrupted;
    report.complete = report.already_recorded + report.ok + report.failed == report.planned;
    if report.complete {
        in_plan_order(&file, p.collect.kind, &p.index)?;
        p.manifest.status = "complete".into();
    } else {
        p.manifest.status = "interrupted".into();
    }
    p.manifest.finished_at = Some(rundir::timestamp(SystemTime::now()));
    write_manifest(&run_dir, &p.manifest)?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Everything checked and planned before anything is created: the experiment and its
/// `[collect]` table, the targets, the names, the program, the calls, and the manifest.
struct Prepared {
    exp: Experiment,
    collect: Collect,
    exp_path: PathBuf,
    /// The experiment's folder, absolute: the commands' working directory.
    exp_dir: PathBuf,
    program: PathBuf,
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
    let (exp, _) = crate::corpus::load::experiment(&exp_path)?;
    let Some(collect) = exp.collect.clone() else {
        return Err(InputError::new(&exp_name, "has no [collect] table")
            .field("`collect`")
            .hint("[collect] names the command to run, its reviewers and its targets (README, \"Live collection\")")
            .into());
    };
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
    let arms = sources(&exp);
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
    };
    Ok(Prepared {
        exp,
        collect,
        exp_path,
        exp_dir,
        program,
        calls,
        index,
        stdin,
        manifest,
    })
}

/// Where a collection goes: its run id, what the run already holds, and the lock on it.
struct Place {
    run_id: String,
    recorded: HashSet<Key>,
    /// Taken before what the run holds is read (none for `--dry-run`).
    lock: Option<rundir::DirLock>,
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
    })
}

/// The calls `--dry-run` lists, with their artifact paths and whether each is recorded.
fn dry_calls(calls: &[Call], run_dir: &Path, recorded: &HashSet<Key>) -> Vec<DryCall> {
    calls
        .iter()
        .map(|c| DryCall {
            arm: c.arm.clone(),
            target: c.target.name.clone(),
            reviewer: c.reviewer.clone(),
            run: c.run,
            argv: c.argv.clone(),
            artifact: run_dir.join(&c.artifact),
            recorded: recorded.contains(&c.key()),
        })
        .collect()
}

/// The bar drawn on stderr while calls run: done/total, failures, elapsed and ETA.
fn progress_bar(calls: usize) -> ProgressBar {
    let bar = ProgressBar::new(calls as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{bar:30}] {pos}/{len} calls, {msg} ({elapsed}, ETA {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message("0 failed");
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// The single writer: appends each finished call's line whole, then counts it.
struct Writer<'a> {
    out: std::fs::File,
    calls: &'a [Call],
    bar: Option<ProgressBar>,
    report: &'a mut CollectReport,
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
                    let call = &self.calls[finished.index];
                    let reason = finished
                        .line
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    self.report.failed_examples.push(format!(
                        "{} · {} · {} · run {}: {reason}",
                        call.arm, call.target.name, call.reviewer, call.run
                    ));
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
                "stopping: no new calls; waiting for {running} running call(s) to finish or time out (interrupt again to kill them)"
            )
        } else {
            format!("killing {running} running call(s); they are not recorded")
        };
        match &self.bar {
            Some(bar) => bar.println(message),
            None => eprintln!("{message}"),
        }
    }
}

/// The recorded labels to collect: each arm's `source`, once.
fn sources(exp: &Experiment) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for arm in exp.arms() {
        if !out.contains(&arm.source) {
            out.push(arm.source.clone());
        }
    }
    out
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
    for source in sources(exp) {
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

/// The keys of the calls `file` records. A torn last line (no newline: the writer was killed
/// mid-line) is cut off, and its call runs again; any other unreadable line refuses the resume.
fn read_recorded(
    file: &Path,
    kind: Kind,
    index: &HashMap<Key, usize>,
) -> Result<HashSet<Key>, Error> {
    if !file.exists() {
        return Ok(HashSet::new());
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
    let name = file.display().to_string();
    let keys: Vec<(u64, Key)> = match kind {
        Kind::Reviews => {
            let (records, problems) = reviews::parse(&name, &bytes);
            refuse(problems)?;
            records
                .into_iter()
                .map(|r| (r.line, (r.arm, r.target, r.reviewer, r.run)))
                .collect()
        }
        Kind::Queries => {
            let (all, problems) = queries::parse(&name, &bytes);
            refuse(problems)?;
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

/// Rewrites a complete collection's lines in plan order (arm, target, reviewer, run), through a
/// temporary file and a rename.
fn in_plan_order(file: &Path, kind: Kind, index: &HashMap<Key, usize>) -> Result<(), Error> {
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
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let run = v.get("run").and_then(Value::as_u64).unwrap_or(0) as u32;
        let key = match kind {
            Kind::Reviews => (s("arm"), s("target"), s("reviewer"), run),
            Kind::Queries => (s("arm"), s("query_id"), AGENT.to_string(), run),
        };
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
        if let Some(calls) = &self.dry_run {
            let todo = calls.iter().filter(|c| !c.recorded).count();
            let _ = writeln!(
                s,
                "{} calls planned for {} ({} already recorded); nothing was run:",
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
                        .map(|a| shell_quote(a))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
            }
            return s;
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
        let _ = writeln!(
            s,
            "collect {}: {} calls recorded now, {} ok, {} failed{failures}{skipped}; {:.1} s",
            self.run_id,
            self.ok + self.failed,
            self.ok,
            self.failed,
            self.seconds
        );
        for e in &self.failed_examples {
            let _ = writeln!(s, "  failed: {e}");
        }
        if self.failed > self.failed_examples.len() {
            let _ = writeln!(
                s,
                "  … every failed call is in {} with `status: failed` and its `reason`",
                self.file.display()
            );
        }
        if self.ok == 0 && self.failed > 0 && self.already_recorded == 0 {
            let _ = writeln!(
                s,
                "warning: no call succeeded; look at the reasons above before replaying"
            );
        }
        if self.complete {
            let _ = writeln!(
                s,
                "{} holds all {} calls. Replay it: calibench run {} --corpus {}",
                self.file.display(),
                self.planned,
                self.experiment.display(),
                self.run_dir.display()
            );
        } else {
            let left = self.planned - self.already_recorded - self.ok - self.failed;
            let _ = writeln!(
                s,
                "interrupted: {left} of {} calls are not recorded yet. Continue: {}",
                self.planned,
                self.resume_command()
            );
        }
        s
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
            shell_quote(&self.experiment.display().to_string()),
            shell_quote(&self.run_id),
            shell_quote(&runs_dir.display().to_string())
        )
    }
}

/// An argument as a POSIX shell would need it, for display only.
fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/=:,+@".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}
