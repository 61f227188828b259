//! `--resume`: the manifest written and read back, checked against the experiment, and the
//! calls already recorded.

use super::*;

pub(super) fn write_manifest(run_dir: &Path, manifest: &Manifest) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(manifest)
        .map_err(|e| Error::Write(std::io::Error::other(format!("collect.json: {e}"))))?;
    text.push('\n');
    rundir::replace_file(&run_dir.join("collect.json"), &text)
}

pub(super) fn read_manifest(run_dir: &Path) -> Result<Manifest, Error> {
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
pub(super) fn check_same(run_dir: &Path, was: &Manifest, now: &Manifest) -> Result<(), Error> {
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
pub(super) fn read_recorded(
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

/// The keys of the calls a later stage's file records; a line that is not an object, names a
/// call the stage does not plan, or repeats one refuses the resume.
pub(super) fn read_keys(planned: &Planned) -> Result<HashSet<CallKey>, Error> {
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
pub(super) fn in_plan_order(file: &Path, planned: &Planned) -> Result<(), Error> {
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
