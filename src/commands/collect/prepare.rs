//! Everything checked before a command runs: the experiment's `[collect]` tables, the targets,
//! the programs and the names; and the plan of calls.

use super::*;

/// Copies the corpus's `targets.jsonl` and `sources/` into the run directory, when
/// the experiment's corpus has them and the run does not yet: `run --corpus` on the collection
/// then replays skip rules and lint-ignore as on the corpus. Only regular files are copied; a
/// link is refused, as the corpus reader refuses one that leads outside.
pub(super) fn copy_controls(exp: &Experiment, run_dir: &Path) -> Result<(), Error> {
    let from = &exp.corpus;
    let [name, folder] = copied();
    let (targets, copy) = (from.join(name), run_dir.join(name));
    if targets.is_file() && !copy.exists() {
        std::fs::copy(&targets, &copy).map_err(|e| Error::write(&copy, e))?;
    }
    let sources = from.join(folder);
    if sources.is_dir() && !run_dir.join(folder).exists() {
        copy_tree(&sources, &run_dir.join(folder))?;
    }
    Ok(())
}

/// What [`copy_controls`] copies from the corpus into a run directory, before the run's
/// `collect.json` is written: the targets file and the `sources/` folder.
pub(super) fn copied() -> [&'static str; 2] {
    [
        crate::corpus::files::File::Targets.name(),
        crate::corpus::files::SOURCES,
    ]
}

pub(super) fn copy_tree(from: &Path, to: &Path) -> Result<(), Error> {
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
#[derive(Clone)]
pub(super) struct Prepared {
    pub(super) exp: Experiment,
    pub(super) collect: Collect,
    pub(super) exp_path: PathBuf,
    /// The experiment's folder, absolute: the commands' working directory.
    pub(super) exp_dir: PathBuf,
    pub(super) program: PathBuf,
    /// The validators' and judges' programs, resolved like the reviewers'.
    pub(super) stage_programs: HashMap<Stage, PathBuf>,
    pub(super) targets: Vec<Target>,
    pub(super) calls: Vec<Call>,
    /// Each call's position in the plan.
    pub(super) index: HashMap<Key, usize>,
    /// Each target's content, given on stdin.
    pub(super) stdin: HashMap<String, Arc<Vec<u8>>>,
    /// Every file of the harness the record hashed: its path and hash.
    pub(super) watched: BTreeMap<String, (PathBuf, String)>,
    pub(super) manifest: Collection,
}

impl Prepared {
    /// The plan narrowed to a sequential batch's targets (`only`), else to a shard's; neither
    /// keeps the whole plan.
    pub(super) fn narrow_to(&mut self, only: Option<&[String]>, shard: Option<super::Shard>) {
        match (only, shard) {
            (Some(only), _) => self.narrow(only),
            (None, Some(shard)) => {
                let held: Vec<String> = self
                    .targets
                    .iter()
                    .filter(|t| crate::corpus::collection::holds(shard.k, shard.n, &t.name))
                    .map(|t| t.name.clone())
                    .collect();
                self.narrow(&held);
            }
            (None, None) => {}
        }
    }

    /// The plan narrowed to the targets `only` names (a shard's, or a sequential batch's).
    pub(super) fn narrow(&mut self, only: &[String]) {
        let wanted: HashSet<&str> = only.iter().map(String::as_str).collect();
        self.calls
            .retain(|c| wanted.contains(c.target.name.as_str()));
        self.index_calls();
    }

    /// The plan made the calls of `all` (a whole plan's) on the targets `only` names: a
    /// sequential collection's next batch.
    pub(super) fn select(&mut self, all: &[Call], only: &[String]) {
        let wanted: HashSet<&str> = only.iter().map(String::as_str).collect();
        self.calls = all
            .iter()
            .filter(|c| wanted.contains(c.target.name.as_str()))
            .cloned()
            .collect();
        self.index_calls();
    }

    fn index_calls(&mut self) {
        let kind = self.collect.kind;
        self.index = self
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| (c.call(kind), i))
            .collect();
    }
}

pub(super) fn prepare(args: &CollectArgs) -> Result<Prepared, Error> {
    let exp_path = experiment_file(&args.experiment);
    let exp_name = exp_path.display().to_string();
    let (exp, _) = crate::pipeline::load::experiment(&exp_path, &[])?;
    // --aa: the baseline against itself, its second copy recorded as `<label>-again`.
    let exp = if args.aa { exp.aa() } else { exp };
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
    let mut calls = plan::plan(&collect, &arms, &targets);
    if args.aa {
        // The second copy runs the baseline's own command (`{arm}` is the baseline's label);
        // only its recorded label differs.
        let b = exp.baseline.source.clone();
        let again = Experiment::again(&b);
        let same = plan::plan(&collect, std::slice::from_ref(&b), &targets);
        for (c, s) in calls.iter_mut().filter(|c| c.arm == again).zip(&same) {
            c.argv = s.argv.clone();
        }
    }
    let index: HashMap<Key, usize> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| (c.call(collect.kind), i))
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
    let (provenance, watched) = harness_record(&collect, &arms, &exp_dir);
    let manifest = Collection {
        run_id: String::new(),
        calibench_version: env!("CARGO_PKG_VERSION").into(),
        experiment_file: exp_path.display().to_string(),
        kind: collect.kind,
        command: collect.command.clone(),
        reviewers: collect.reviewers.clone(),
        arms: arms.clone(),
        runs: collect.runs,
        targets: entries,
        calls: calls.len(),
        started_at: rundir::timestamp(SystemTime::now()),
        status: Status::Running,
        reason: None,
        finished_at: None,
        stages: Vec::new(),
        sequential: None,
        shard: None,
        merged: None,
        provenance: Some(provenance),
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
        watched,
    })
}

/// The harness record of the collection (commands, the files they name, environment), with
/// every file it hashed (its path and hash), which the stages watch while they run.
#[allow(clippy::type_complexity)]
fn harness_record(
    collect: &Collect,
    arms: &[String],
    exp_dir: &Path,
) -> (
    crate::corpus::collection::Provenance,
    BTreeMap<String, (PathBuf, String)>,
) {
    let watched = std::cell::RefCell::new(BTreeMap::new());
    let provenance = crate::collect::provenance::record(
        collect,
        arms,
        env!("CARGO_PKG_VERSION"),
        &|arg, program| {
            let path = if program && !arg.contains('/') {
                resolve_program(arg, exp_dir).ok()?
            } else {
                exp_dir.join(arg)
            };
            let sha = harness::sha256(&path)?;
            watched
                .borrow_mut()
                .insert(arg.to_string(), (path, sha.clone()));
            Some(sha)
        },
        &|name| std::env::var(name).ok(),
    );
    (provenance, watched.into_inner())
}

/// What a first attempt at a run left in `dir` when it was killed between claiming the
/// directory and writing its `collect.json`, which a scheduler's retry with `--or-resume`
/// starts afresh: `Some` of the entries to remove when the directory is empty but for the
/// run's lock, or holds nothing but the copies a collection begins with (the corpus's targets
/// file and `sources/`, perhaps cut short) beside a lock the first attempt made (`locked`, seen
/// before this process took its own); `None` for anything else (a collection, or a directory
/// calibench did not make), which is left to `--resume`'s checks. Read under the run's lock, so
/// that what it finds is not changing.
pub(super) fn never_started(dir: &Path, locked: bool) -> Option<Vec<PathBuf>> {
    let entries: Vec<std::ffi::OsString> = std::fs::read_dir(dir)
        .ok()?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .ok()?;
    let copies = copied();
    let mut litter = Vec::new();
    for entry in &entries {
        if entry == rundir::LOCK {
            continue;
        }
        // A copy is the run's own only beside the lock that says calibench made the folder.
        if !locked || !copies.iter().any(|c| entry == c) {
            return None;
        }
        litter.push(dir.join(entry));
    }
    Some(litter)
}

/// Removes what [`never_started`] found, under the run's lock, so that the copies are made
/// again whole.
pub(super) fn clear(dir: &Path, litter: &[PathBuf]) -> Result<(), Error> {
    for path in litter {
        let removed = if path.is_dir() && !path.is_symlink() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
        removed.map_err(|e| Error::write(dir, e))?;
    }
    Ok(())
}

/// Where a collection goes: its run id, what the run already holds, and the lock on it.
pub(super) struct Place {
    pub(super) run_id: String,
    /// The reviewer calls recorded.
    pub(super) recorded: HashSet<Key>,
    /// Taken before what the run holds is read (none for `--dry-run`).
    pub(super) lock: Option<rundir::DirLock>,
    /// The stages an earlier collection of the run recorded.
    pub(super) earlier: Vec<StageEntry>,
}

/// Claims a new run directory, or (`--resume`) locks an existing one, checks it still matches
/// the experiment and reads what it records. One collection writes a run at a time (two resumes
/// at once would make every missing call twice, paid calls, and write its line twice), so the
/// run is locked before what it holds is read.
pub(super) fn place(
    args: &CollectArgs,
    name: &str,
    manifest: &mut Collection,
    kind: Kind,
    index: &HashMap<Key, usize>,
) -> Result<Place, Error> {
    let mut lock = None;
    let mut earlier_stages = Vec::new();
    let (run_id, recorded) = match &args.resume {
        Some(id) => {
            rundir::check_id(id, "--resume")?;
            let dir = args.runs_dir.join(id);
            // Seen before the lock is taken: taking it makes its file.
            let locked_before = dir.join(rundir::LOCK).exists();
            if dir.is_dir() && !args.dry_run {
                lock = Some(rundir::DirLock::take(&dir)?);
                // What a killed collection of this run left running dies before anything
                // is collected again.
                crate::collect::runner::descendants::kill_orphans_of(id);
            }
            if let Some(litter) = args
                .or_resume
                .then(|| never_started(&dir, locked_before))
                .flatten()
            {
                // A first attempt killed before it recorded anything: started afresh.
                if !args.dry_run {
                    clear(&dir, &litter)?;
                }
                return Ok(Place {
                    run_id: id.clone(),
                    recorded: HashSet::new(),
                    lock,
                    earlier: Vec::new(),
                });
            }
            if args.or_resume && !dir.join(FILE).is_file() {
                return Err(InputError::new(
                    dir.display().to_string(),
                    "exists and is not a collection: it holds no collect.json, and more than a killed first attempt leaves",
                )
                .field("--run-id")
                .hint("give another --run-id, or move the folder away if nothing in it is wanted")
                .into());
            }
            let earlier = read_manifest(&dir)?;
            check_flags(&dir, &earlier, args)?;
            check_same(&dir, &earlier, manifest)?;
            manifest.started_at = earlier.started_at;
            earlier_stages = earlier.stages;
            manifest.stages = earlier_stages.clone();
            let file = dir.join(kind.file().name());
            let planned = |k: &Key| index.contains_key(k);
            let recorded = recorded_calls(&file, kind.file().def(), &planned, Stage::Reviewers)?;
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

pub(super) fn arm_expectations(exp: &Experiment, collect: &Collect) -> HashMap<String, Expect> {
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
pub(super) fn find_targets(
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
pub(super) fn check_names(
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
pub(super) fn resolve_program(program: &str, exp_dir: &Path) -> Result<PathBuf, String> {
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
