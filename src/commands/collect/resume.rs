//! `--resume`: the manifest written and read back, checked against the experiment, and the
//! calls already recorded.

use super::*;
use crate::corpus::files;

pub(super) fn write_manifest(run_dir: &Path, manifest: &Collection) -> Result<(), Error> {
    let text = manifest
        .text()
        .map_err(|e| Error::Write(std::io::Error::other(format!("{FILE}: {e}"))))?;
    rundir::replace_file(&run_dir.join(FILE), &text)
}

pub(super) fn read_manifest(run_dir: &Path) -> Result<Collection, Error> {
    let path = run_dir.join(FILE);
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
    Ok(Collection::read(&path.display().to_string(), &bytes)?)
}

/// A resume must be made with the flags the collection was made with (`--shard K/N`, `--aa`,
/// `--until-decided`): without them it would collect another plan, or (a sequential collection
/// resumed plainly) collect every target and drop its record of the looks. The refusal prints
/// the command that continues it.
pub(super) fn check_flags(
    run_dir: &Path,
    was: &Collection,
    args: &CollectArgs,
) -> Result<(), Error> {
    let shard = |s: Option<(u32, u32)>| {
        s.map_or("no --shard".to_string(), |(k, n)| {
            format!("--shard {k}/{n}")
        })
    };
    let was_shard = was.shard.as_ref().map(|s| (s.k, s.n));
    let now_shard = args.shard.map(|s| (s.k, s.n));
    let yes_no = |on: bool, flag: &str| {
        if on {
            flag.to_string()
        } else {
            format!("no {flag}")
        }
    };
    let differs = if was_shard != now_shard {
        Some(("shard", shard(was_shard), shard(now_shard)))
    } else if was.is_aa() != args.aa {
        Some(("arms", yes_no(was.is_aa(), "--aa"), yes_no(args.aa, "--aa")))
    } else if was.sequential.is_some() != args.until_decided {
        Some((
            "sequential",
            yes_no(was.sequential.is_some(), "--until-decided"),
            yes_no(args.until_decided, "--until-decided"),
        ))
    } else {
        None
    };
    let Some((field, before, after)) = differs else {
        return Ok(());
    };
    // A scheduler's retry (`--or-resume`) was not written as a resume by anyone.
    let this = if args.or_resume {
        "this retry (--or-resume)"
    } else {
        "this resume"
    };
    Err(InputError::new(
        run_dir.join(FILE).display().to_string(),
        format!("was collected with {before}, but {this} has {after}"),
    )
    .field(format!("field `{field}`"))
    .hint(format!(
        "continue it with: {}",
        was.resume_command(&args.runs_dir)
    ))
    .into())
}

/// A resumed run must collect what it began collecting: same kind, command, reviewers, arms,
/// repeats and targets with the same content. Concurrency, timeout and retries may change.
pub(super) fn check_same(run_dir: &Path, was: &Collection, now: &Collection) -> Result<(), Error> {
    let differs = |field: &str, before: String, after: String| -> Error {
        InputError::new(
            run_dir.join(FILE).display().to_string(),
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
    if was.shard.as_ref().map(|s| (s.k, s.n)) != now.shard.as_ref().map(|s| (s.k, s.n)) {
        let shown = |s: &Option<ShardEntry>| {
            s.as_ref()
                .map_or("no shard".to_string(), |s| format!("shard {}/{}", s.k, s.n))
        };
        return Err(differs("shard", shown(&was.shard), shown(&now.shard)));
    }
    if was.runs != now.runs {
        return Err(differs("runs", was.runs.to_string(), now.runs.to_string()));
    }
    let names = |m: &Collection| m.targets.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
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
    // The harness itself: a prompt edited, a model variable changed, another calibench.
    if let (Some(was_p), Some(now_p)) = (&was.provenance, &now.provenance) {
        for (label, before) in &was_p.arms {
            let Some(after) = now_p.arms.get(label) else {
                continue;
            };
            if let Some(d) = crate::collect::provenance::compare((label, before), (label, after))
                .into_iter()
                .next()
            {
                return Err(differs(
                    &format!("provenance ({})", d.what),
                    d.baseline,
                    format!("{} (the harness changed since)", d.treatment),
                ));
            }
        }
    }
    Ok(())
}

/// A stage an earlier collection of the run began must run as it began: same command (and for
/// the judges the same panel, items and dimensions).
pub(super) fn check_stage_plans(
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
                run_dir.join(FILE).display().to_string(),
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

/// The calls `file` (a stage's file of a collection of `kind`) records, read by the file's
/// reader: a line it refuses (a call recorded twice among them), or one that records a call the
/// experiment does not plan, refuses the resume. A torn last line (no newline: the writer was
/// killed mid-line) is cut off first, and its call runs again.
pub(super) fn recorded_calls(
    file: &Path,
    def: &'static files::Def,
    planned: &dyn Fn(&Key) -> bool,
    stage: Stage,
) -> Result<HashSet<Key>, Error> {
    let bytes = whole_lines(file)?;
    let name = file.display().to_string();
    let (calls, problems) = def.calls(&name, &bytes);
    problems.refuse()?;
    let mut recorded = HashSet::with_capacity(calls.len());
    for c in calls {
        if !planned(&c.call) {
            return Err(InputError::new(
                &name,
                format!(
                    "records a {} call ({}) that the experiment does not plan",
                    stage.name(),
                    c.call
                ),
            )
            .at_line(c.line)
            .hint("resume with the experiment that began this collection, or start a new one")
            .into());
        }
        recorded.insert(c.call);
    }
    Ok(recorded)
}

/// The whole lines of a stage's file, a torn last line (no newline: the writer was killed
/// mid-line) cut off so that its call runs again.
pub(super) fn whole_lines(file: &Path) -> Result<Vec<u8>, Error> {
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

/// The calls a later stage's file records.
pub(super) fn read_keys(planned: &Planned) -> Result<HashSet<Key>, Error> {
    let known: HashSet<&Key> = planned.keys.iter().collect();
    let def = planned.stage.file(planned.kind).def();
    recorded_calls(&planned.file, def, &|k| known.contains(k), planned.stage)
}

/// Rewrites a stage's complete file in plan order, through a temporary file and a rename: each
/// line placed by its call, as the file's reader reads it.
pub(super) fn in_plan_order(file: &Path, planned: &Planned) -> Result<(), Error> {
    in_order_of(file, planned.stage.file(planned.kind).def(), &planned.keys)
}

/// The reviewers' file of a collection of `kind` in `run_dir` put in the order of the plan
/// `calls` (a sequential collection's, once it stops).
pub(super) fn sort_reviewers<'a>(
    kind: Kind,
    calls: impl Iterator<Item = &'a Call>,
    run_dir: &Path,
) -> Result<(), Error> {
    let keys: Vec<Key> = calls.map(|c| c.call(kind)).collect();
    let file = run_dir.join(kind.file().name());
    in_order_of(&file, kind.file().def(), &keys)
}

/// The lines of `file` (read by `def`'s reader) in the order of `keys`.
fn in_order_of(file: &Path, def: &'static files::Def, keys: &[Key]) -> Result<(), Error> {
    let index: HashMap<&Key, usize> = keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let bytes = read_file(file)?;
    let name = file.display().to_string();
    let (calls, problems) = def.calls(&name, &bytes);
    problems.refuse()?;
    let position: HashMap<u64, usize> = calls
        .iter()
        .map(|c| (c.line, index.get(&c.call).copied().unwrap_or(usize::MAX)))
        .collect();
    let mut lines: Vec<(usize, &[u8])> = crate::corpus::nonblank_lines(&bytes)
        .map(|(line, text)| (position.get(&line).copied().unwrap_or(usize::MAX), text))
        .collect();
    lines.sort_by_key(|(i, _)| *i);
    let mut out = Vec::with_capacity(bytes.len());
    for (_, line) in lines {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    let out = String::from_utf8(out)
        .map_err(|_| Error::from(InputError::new(&name, "is not UTF-8 text")))?;
    rundir::replace_file(file, &out)
}
