//! `calibench merge OUT DIR…` (docs/guides/live-collection.md, "Shards"): the shards of one
//! collection (`collect --shard K/N`) joined into one corpus, refused when a shard is missing or
//! given twice, their plans or harness differ, or a call is recorded twice; and `merge OUT --arm
//! LABEL=DIR …`, collections of different arm labels (a stored baseline beside a new treatment)
//! joined, each label keeping its own harness record for `run` to compare.

use super::*;

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The corpus folder to write (refused if it exists)
    pub out: PathBuf,
    /// Shards of one collection (collect --shard K/N run directories), every K once
    pub dirs: Vec<PathBuf>,
    /// Take the lines of one recorded arm label from a collection, LABEL=DIR (repeatable):
    /// `--arm baseline=runs/last-week --arm treatment=runs/today`
    #[arg(long = "arm", value_name = "LABEL=DIR", conflicts_with = "dirs")]
    pub arms: Vec<String>,
}

/// What `merge` wrote.
#[derive(Clone, Debug, Serialize)]
pub struct MergeReport {
    pub out: PathBuf,
    pub from: Vec<PathBuf>,
    /// Lines written per file.
    pub lines: BTreeMap<String, usize>,
}

impl Render for MergeReport {
    fn human(&self) -> String {
        let files: Vec<String> = self
            .lines
            .iter()
            .map(|(f, n)| format!("{f} {}", crate::text::count(*n as u64, "line", "lines")))
            .collect();
        format!(
            "merged {} collections into {}: {}\n",
            self.from.len(),
            self.out.display(),
            files.join(", ")
        )
    }
}

impl crate::commands::Run for MergeArgs {
    fn run(self, ctx: &crate::commands::Context) -> Result<crate::commands::Answer, Error> {
        let report = merge(&self)?;
        Ok(ctx.answer(&report, crate::exit::Verdict::Pass))
    }
}

/// The corpus files a collection holds that `run` reads, and the gathered judges' lines.
const FILES: [&str; 5] = [
    "reviews.jsonl",
    "queries.jsonl",
    "validations.jsonl",
    "judges.jsonl",
    "verdicts.jsonl",
];

fn refuse(dir: &Path, field: &str, problem: String) -> Error {
    InputError::new(dir.join("collect.json").display().to_string(), problem)
        .field(format!("`{field}`"))
        .into()
}

/// A line's identity in its file: the call that recorded it.
fn identity(file: &str, line: &Map<String, Value>) -> String {
    let get = |k: &str| line.get(k).cloned().unwrap_or(Value::Null);
    let run = Value::from(line.get("run").and_then(Value::as_u64).unwrap_or(0));
    let parts = match file {
        "reviews.jsonl" => vec![get("arm"), get("target"), get("reviewer"), run],
        "queries.jsonl" => vec![get("arm"), get("query_id"), run],
        "validations.jsonl" => vec![get("arm"), get("finding")],
        "judges.jsonl" => vec![get("arm"), get("item_id"), get("judge")],
        _ => vec![get("arm"), get("item_id")],
    };
    serde_json::to_string(&parts).unwrap_or_default()
}

/// A line of a collection's file: its number, its JSON object and its text.
type Line = (u64, Map<String, Value>, String);

/// Each whole line of `dir/file` as its JSON object, with its line number.
fn lines_of(dir: &Path, file: &str) -> Result<Vec<Line>, Error> {
    let path = dir.join(file);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let text = String::from_utf8(read_file(&path)?).map_err(|_| {
        Error::from(InputError::new(
            path.display().to_string(),
            "is not UTF-8 text",
        ))
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(m)) => out.push((i as u64 + 1, m, line.to_string())),
            _ => {
                return Err(InputError::new(
                    path.display().to_string(),
                    "is not one JSON object per line",
                )
                .at_line(i as u64 + 1)
                .into())
            }
        }
    }
    Ok(out)
}

pub fn merge(args: &MergeArgs) -> Result<MergeReport, Error> {
    if args.out.exists() {
        return Err(
            InputError::new(args.out.display().to_string(), "already exists")
                .hint("merge writes a new corpus folder; name one that does not exist")
                .into(),
        );
    }
    let sources: Vec<(Option<String>, PathBuf)> = if args.arms.is_empty() {
        if args.dirs.len() < 2 {
            return Err(InputError::new(
                "calibench merge",
                "needs the shards to join: two or more run directories, or --arm LABEL=DIR",
            )
            .into());
        }
        args.dirs.iter().map(|d| (None, d.clone())).collect()
    } else {
        args.arms
            .iter()
            .map(|a| match a.split_once('=') {
                Some((label, dir)) if !label.is_empty() && !dir.is_empty() => {
                    Ok((Some(label.to_string()), PathBuf::from(dir)))
                }
                _ => Err(Error::from(
                    InputError::new("--arm", format!("`{a}` is not LABEL=DIR"))
                        .hint("--arm baseline=runs/last-week --arm treatment=runs/today"),
                )),
            })
            .collect::<Result<_, _>>()?
    };
    let manifests: Vec<Manifest> = sources
        .iter()
        .map(|(_, d)| read_manifest(d))
        .collect::<Result<_, _>>()?;
    for ((_, dir), m) in sources.iter().zip(&manifests) {
        if m.status != "complete" {
            return Err(refuse(
                dir,
                "status",
                format!(
                    "is not complete (status `{}`): a merged corpus would miss its calls",
                    m.status
                ),
            ));
        }
    }
    let first = &manifests[0];
    let dir0 = &sources[0].1;
    if args.arms.is_empty() {
        // Shards: every K of one N once, one plan, one harness.
        let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
        let Some(first_shard) = &first.shard else {
            return Err(refuse(
                dir0,
                "shard",
                "is not a shard (collected without --shard K/N)".into(),
            ));
        };
        let n = first_shard.n;
        for ((_, dir), m) in sources.iter().zip(&manifests) {
            let Some(s) = &m.shard else {
                return Err(refuse(
                    dir,
                    "shard",
                    "is not a shard (collected without --shard K/N)".into(),
                ));
            };
            if s.n != n {
                return Err(refuse(
                    dir,
                    "shard",
                    format!(
                        "is shard {}/{} of another split than {}/{n}",
                        s.k, s.n, first_shard.k
                    ),
                ));
            }
            if s.plan != first_shard.plan {
                return Err(refuse(dir, "shard.plan", format!("collects another plan than {} (the experiment, its targets or their content differ)", dir0.display())));
            }
            if let Some(other) = seen.insert(s.k, dir) {
                return Err(refuse(
                    dir,
                    "shard",
                    format!("is shard {}/{n}, and so is {}", s.k, other.display()),
                ));
            }
            if m.provenance != first.provenance {
                return Err(refuse(dir, "provenance", format!("was collected by another harness than {} (commands, files, environment or calibench): shards of one collection share one", dir0.display())));
            }
        }
        if let Some(k) = (1..=n).find(|k| !seen.contains_key(k)) {
            return Err(InputError::new(
                "calibench merge",
                format!("shard {k}/{n} is missing: merging part of a plan would look whole"),
            )
            .hint("give every shard's run directory, 1 to N")
            .into());
        }
    } else {
        for ((label, dir), m) in sources.iter().zip(&manifests) {
            let label = label.as_deref().unwrap_or_default();
            if !m.arms.iter().any(|a| a == label) {
                return Err(refuse(
                    dir,
                    "arms",
                    format!(
                        "holds no arm labelled `{label}` (it collected {})",
                        m.arms.join(", ")
                    ),
                ));
            }
            if m.targets != first.targets {
                return Err(refuse(dir, "targets", format!("collected other targets (or other content) than {}: an A/B compares the same targets", dir0.display())));
            }
        }
        let labels: Vec<&str> = sources.iter().filter_map(|(l, _)| l.as_deref()).collect();
        if let Some((i, l)) = labels
            .iter()
            .enumerate()
            .find(|(i, l)| labels[..*i].contains(l))
        {
            return Err(InputError::new(
                "--arm",
                format!("`{l}` is given twice (the {}th --arm)", i + 1),
            )
            .into());
        }
    }
    // The lines, each call once, in the order one collection of the whole plan writes them:
    // by arm label, then target (as the plan lists them), then as the collection that holds
    // the target wrote them (every line of a target comes from one shard).
    let label_order: Vec<String> = if args.arms.is_empty() {
        first.arms.clone()
    } else {
        sources.iter().filter_map(|(l, _)| l.clone()).collect()
    };
    let target_rank: HashMap<&str, usize> = first
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let rank_of = |line: &Map<String, Value>| -> (usize, usize) {
        let label = line.get("arm").and_then(Value::as_str).unwrap_or_default();
        let l = label_order
            .iter()
            .position(|x| x == label)
            .unwrap_or(usize::MAX);
        // A line names its target, its query, or an item or finding whose qualified id
        // (`arm/target/reviewer/run/id`) holds it.
        let t = ["target", "query_id", "item_id", "finding"]
            .iter()
            .filter_map(|k| line.get(*k).and_then(Value::as_str))
            .find_map(|v| {
                target_rank
                    .get(v)
                    .or_else(|| v.split('/').find_map(|part| target_rank.get(part)))
                    .copied()
            })
            .unwrap_or(usize::MAX);
        (l, t)
    };
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut lines: BTreeMap<String, usize> = BTreeMap::new();
    for file in FILES {
        let mut kept: Vec<((usize, usize, usize, usize), String)> = Vec::new();
        let mut at: HashMap<String, (PathBuf, u64)> = HashMap::new();
        for (source, (label, dir)) in sources.iter().enumerate() {
            for (n, line, text) in lines_of(dir, file)? {
                if let Some(l) = label {
                    if line.get("arm").and_then(Value::as_str) != Some(l) {
                        continue;
                    }
                }
                let key = identity(file, &line);
                if let Some((other, m)) = at.insert(key.clone(), (dir.clone(), n)) {
                    return Err(InputError::new(
                        dir.join(file).display().to_string(),
                        format!("records the call {key} again (also {}:{m})", other.join(file).display()),
                    )
                    .at_line(n)
                    .hint("shards of one plan are disjoint: was one collected twice, or a directory given twice?")
                    .into());
                }
                let (l, t) = rank_of(&line);
                kept.push(((l, t, source, n as usize), text));
            }
        }
        if kept.is_empty() {
            continue;
        }
        kept.sort_by_key(|k| k.0);
        let mut bytes = Vec::new();
        for (_, text) in &kept {
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(b'\n');
        }
        lines.insert(file.to_string(), kept.len());
        files.push((file.to_string(), bytes));
    }
    // The controls every collection copied from the corpus (targets.jsonl, sources/), once.
    let mut controls = Vec::new();
    collect_tree(dir0, Path::new(""), &mut controls)?;
    files.extend(controls);
    let mut manifest = first.clone();
    manifest.run_id = args
        .out
        .file_name()
        .map_or_else(|| "merged".into(), |n| n.to_string_lossy().into_owned());
    manifest.shard = None;
    manifest.sequential = None;
    manifest.merged = Some(
        sources
            .iter()
            .map(|(_, d)| d.display().to_string())
            .collect(),
    );
    if !args.arms.is_empty() {
        manifest.arms = sources.iter().filter_map(|(l, _)| l.clone()).collect();
        let mut p = crate::collect::provenance::Provenance::default();
        for ((label, _), m) in sources.iter().zip(&manifests) {
            let label = label.clone().unwrap_or_default();
            if let Some(r) = m.provenance.as_ref().and_then(|p| p.arms.get(&label)) {
                p.arms.insert(label, r.clone());
            }
        }
        manifest.provenance = (!p.arms.is_empty()).then_some(p);
    }
    for (i, stage) in manifest.stages.iter_mut().enumerate() {
        stage.recorded = manifests
            .iter()
            .filter_map(|m| m.stages.get(i))
            .map(|s| s.recorded)
            .sum();
        stage.failed = manifests
            .iter()
            .filter_map(|m| m.stages.get(i))
            .map(|s| s.failed)
            .sum();
    }
    let mut text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| Error::Write(std::io::Error::other(format!("collect.json: {e}"))))?;
    text.push('\n');
    files.push(("collect.json".into(), text.into_bytes()));
    rundir::replace_dir(&args.out, &files)?;
    Ok(MergeReport {
        out: args.out.clone(),
        from: sources.into_iter().map(|(_, d)| d).collect(),
        lines,
    })
}

/// `targets.jsonl` and every file under `sources/` of `dir`, as (relative name, bytes).
fn collect_tree(dir: &Path, rel: &Path, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), Error> {
    if rel.as_os_str().is_empty() {
        let t = dir.join("targets.jsonl");
        if t.is_file() {
            out.push(("targets.jsonl".into(), read_file(&t)?));
        }
        if dir.join("sources").is_dir() {
            collect_tree(dir, Path::new("sources"), out)?;
        }
        return Ok(());
    }
    let here = dir.join(rel);
    let mut entries: Vec<_> = std::fs::read_dir(&here)
        .map_err(|e| Error::read(&here, e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let name = rel.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            collect_tree(dir, &name, out)?;
        } else {
            out.push((name.display().to_string(), read_file(&path)?));
        }
    }
    Ok(())
}
