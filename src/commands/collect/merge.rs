//! `calibench merge OUT DIR…` (docs/guides/live-collection.md, "Shards"): the shards of one
//! collection (`collect --shard K/N`) joined into one corpus, refused when a shard is missing or
//! given twice, their plans or harness differ, or a call is recorded twice; and `merge OUT --arm
//! LABEL=DIR …`, collections of different arm labels (a stored baseline beside a new treatment)
//! joined, each label keeping its own harness record for `run` to compare.
//!
//! Merging reads what a collection writes the way `collect`'s resume reads it: each file of the
//! corpus file table that a stage writes, through its own reader (a line it refuses is an error
//! naming the file and line), each line's identity its [`Call`](crate::corpus::call::Call), so
//! "the same call" means here what it means everywhere.

use super::*;
use crate::corpus::files::Made;

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
    /// The collections that hold full-detail returns (`artifacts/`), which merge leaves where
    /// they are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts_left: Vec<PathBuf>,
}

impl Render for MergeReport {
    fn human(&self) -> String {
        let files: Vec<String> = self
            .lines
            .iter()
            .map(|(f, n)| format!("{f} {}", crate::text::count(*n as u64, "line", "lines")))
            .collect();
        let mut s = format!(
            "merged {} into {}: {}\n",
            crate::text::count(self.from.len() as u64, "collection", "collections"),
            self.out.display(),
            files.join(", ")
        );
        if !self.artifacts_left.is_empty() {
            let dirs: Vec<String> = self
                .artifacts_left
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            s += &format!(
                "note: the full-detail returns (artifacts/) are not merged: keep {} for them\n",
                dirs.join(", ")
            );
        }
        s
    }
}

impl crate::commands::Run for MergeArgs {
    fn run(self, ctx: &crate::commands::Context) -> Result<crate::commands::Answer, Error> {
        let report = merge(&self)?;
        Ok(ctx.answer(&report, crate::exit::Verdict::Pass))
    }
}

/// A line of a collection's file: its call, the text as written, and where it stands in
/// one collection of the whole plan.
struct Line {
    call: Key,
    text: Vec<u8>,
    /// Arm label position, target position, the collection it came from, its line.
    rank: (usize, usize, usize, u64),
}

fn refuse(dir: &Path, field: &str, problem: String) -> Error {
    InputError::new(dir.join(FILE).display().to_string(), problem)
        .field(format!("`{field}`"))
        .into()
}

/// The collections to merge: each with the arm label to take from it (`--arm`), or none
/// (a shard, all of whose lines are taken).
fn sources(args: &MergeArgs) -> Result<Vec<(Option<String>, PathBuf)>, Error> {
    if args.arms.is_empty() {
        if args.dirs.len() < 2 {
            return Err(InputError::new(
                "calibench merge",
                "needs the shards to join: two or more run directories, or --arm LABEL=DIR",
            )
            .into());
        }
        return Ok(args.dirs.iter().map(|d| (None, d.clone())).collect());
    }
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
        .collect()
}

/// Shards: every K of one N once, one plan, one harness. `m` (from `dir`) is checked against
/// the first shard's record; `seen` holds the shards checked so far.
fn check_shard(
    (first, first_own, dir0): (&Collection, &str, &Path),
    (m, dir): (&Collection, &Path),
    seen: &mut BTreeMap<u32, PathBuf>,
) -> Result<(), Error> {
    let Some(first_shard) = &first.shard else {
        return Err(refuse(
            dir0,
            "shard",
            "is not a shard (collected without --shard K/N)".into(),
        ));
    };
    let n = first_shard.n;
    {
        let Some(s) = &m.shard else {
            return Err(refuse(
                dir,
                "shard",
                "is not a shard (collected without --shard K/N)".into(),
            ));
        };
        if s.n < 2 || s.k < 1 || s.k > s.n {
            return Err(refuse(
                dir,
                "shard",
                format!(
                    "is shard {}/{}: K runs from 1 to N, and N is 2 or more",
                    s.k, s.n
                ),
            ));
        }
        // The plan hash is the shard's own claim: recomputed from what it says it collected
        // (once for the first shard; another that says the same of its plan hashes alike).
        let own = if std::ptr::eq(first, m) || !first.same_plan_as(m) {
            m.own_plan_hash()
        } else {
            first_own.to_string()
        };
        if own != s.plan {
            return Err(refuse(
                dir,
                "shard.plan",
                format!(
                    "does not match its own plan (its targets, commands and stages): it records {}…, they hash to {}…",
                    short(&s.plan),
                    short(&own)
                ),
            ));
        }
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
            return Err(refuse(
                dir,
                "shard.plan",
                format!(
                    "collects another plan than {}: {}",
                    dir0.display(),
                    plan_difference(first, m, first_shard.k, s.k)
                ),
            ));
        }
        if let Some(other) = seen.insert(s.k, dir.to_path_buf()) {
            return Err(refuse(
                dir,
                "shard",
                format!("is shard {}/{n}, and so is {}", s.k, other.display()),
            ));
        }
        if m.provenance != first.provenance {
            return Err(refuse(
                dir,
                "provenance",
                format!(
                    "was collected by another harness than {}: {}; shards of one collection share one",
                    dir0.display(),
                    harness_difference(first, m, first_shard.k, s.k)
                ),
            ));
        }
    }
    Ok(())
}

/// After every shard is checked: none of 1..N is missing.
fn check_none_missing(n: u32, seen: &BTreeMap<u32, PathBuf>) -> Result<(), Error> {
    if let Some(k) = (1..=n).find(|k| !seen.contains_key(k)) {
        return Err(InputError::new(
            "calibench merge",
            format!("shard {k}/{n} is missing: merging part of a plan would look whole"),
        )
        .hint("give every shard's run directory, 1 to N")
        .into());
    }
    Ok(())
}

/// Collections of different arms: each holds the label taken from it, all collected the same
/// targets, and no label is given twice.
fn check_arms(sources: &[(Option<String>, PathBuf)], records: &[Collection]) -> Result<(), Error> {
    let (first, dir0) = (&records[0], &sources[0].1);
    for ((label, dir), m) in sources.iter().zip(records) {
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
            format!("`{l}` is given twice (--arm number {})", i + 1),
        )
        .into());
    }
    if labels.len() < 2 {
        return Err(InputError::new(
            "--arm",
            "takes one arm label from each of two or more collections: an A/B needs both arms",
        )
        .hint("--arm baseline=runs/last-week --arm treatment=runs/today")
        .into());
    }
    Ok(())
}

pub fn merge(args: &MergeArgs) -> Result<MergeReport, Error> {
    let sources = sources(args)?;
    check_out(&args.out, &sources)?;
    // The output folder is claimed before any work (two merges into one folder: one wins, the
    // other is refused), and let go again when the merge is refused.
    if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::write(parent, e))?;
    }
    match std::fs::create_dir(&args.out) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(
                InputError::new(args.out.display().to_string(), "already exists")
                    .hint("merge writes a new corpus folder; name one that does not exist")
                    .into(),
            )
        }
        Err(e) => return Err(Error::write(&args.out, e)),
    }
    let merged = merge_into(args, sources);
    if merged.is_err() {
        let _ = std::fs::remove_dir(&args.out);
    }
    merged
}

fn merge_into(
    args: &MergeArgs,
    sources: Vec<(Option<String>, PathBuf)>,
) -> Result<MergeReport, Error> {
    // Each record is read, checked and, for a shard after the first, kept only in what the
    // merge still needs (its shard, its stages' counts): every shard's record lists the whole
    // plan, and holding a thousand of them is what made memory follow the shard count.
    let mut records: Vec<Collection> = Vec::with_capacity(sources.len());
    let mut seen: BTreeMap<u32, PathBuf> = BTreeMap::new();
    let mut first_own = String::new();
    for (label, d) in &sources {
        if !d.join(FILE).is_file() {
            let given = match label {
                Some(l) => format!("--arm {l}={}", d.display()),
                None => d.display().to_string(),
            };
            return Err(InputError::new(
                d.display().to_string(),
                format!("is not a collection: it holds no {FILE} (given as `{given}`)"),
            )
            .hint("merge takes the run directories `calibench collect` wrote")
            .into());
        }
        let mut m = read_manifest(d)?;
        if m.status != Status::Complete {
            return Err(refuse(
                d,
                "status",
                format!(
                    "is not complete (status `{}`): a merged corpus would miss its calls",
                    m.status.name()
                ),
            ));
        }
        check_recorded(d, &m)?;
        if args.arms.is_empty() {
            if records.is_empty() {
                first_own = m.own_plan_hash();
            }
            let first = records.first().unwrap_or(&m);
            check_shard((first, &first_own, &sources[0].1), (&m, d), &mut seen)?;
            if !records.is_empty() {
                m.targets = Vec::new();
                m.provenance = None;
                for stage in &mut m.stages {
                    stage.plan = Value::Null;
                }
            }
        }
        records.push(m);
    }
    if args.arms.is_empty() {
        let n = records[0].shard.as_ref().map_or(0, |s| s.n);
        check_none_missing(n, &seen)?;
    } else {
        check_arms(&sources, &records)?;
    }
    let first = &records[0];
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
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut lines: BTreeMap<String, usize> = BTreeMap::new();
    for def in crate::corpus::files::FILES {
        if !matches!(def.made, Made::Collected(_)) {
            continue;
        }
        let mut kept: Vec<Line> = Vec::new();
        let mut at: HashMap<Key, (PathBuf, u64)> = HashMap::new();
        for (source, (label, dir)) in sources.iter().enumerate() {
            let order = Order {
                labels: &label_order,
                targets: &target_rank,
                findings: findings_of(dir)?,
                source,
            };
            for line in lines_of(dir, def, &order)? {
                if label.as_deref().is_some_and(|l| line.call.arm() != Some(l)) {
                    continue;
                }
                in_plan(
                    dir,
                    def.name,
                    &line,
                    &target_rank,
                    records[source].shard.as_ref(),
                )?;
                if let Some((other, m)) = at.insert(line.call.clone(), (dir.clone(), line.rank.3)) {
                    return Err(InputError::new(
                        dir.join(def.name).display().to_string(),
                        format!("records the call {} again (also {}:{m})", line.call, other.join(def.name).display()),
                    )
                    .at_line(line.rank.3)
                    .hint("shards of one plan are disjoint: was one collected twice, or a directory given twice?")
                    .into());
                }
                kept.push(line);
            }
        }
        if kept.is_empty() {
            continue;
        }
        kept.sort_by_key(|l| l.rank);
        let mut bytes = Vec::new();
        for l in &kept {
            bytes.extend_from_slice(&l.text);
            bytes.push(b'\n');
        }
        lines.insert(def.name.to_string(), kept.len());
        files.push((def.name.to_string(), bytes));
    }
    // The controls every collection copied from the corpus (targets.jsonl, sources/), once.
    let dir0 = &sources[0].1;
    let mut controls = Vec::new();
    collect_tree(dir0, Path::new(""), &mut controls)?;
    files.extend(controls);
    let merged = merged_record(args, &sources, &records);
    let text = merged
        .text()
        .map_err(|e| Error::Write(std::io::Error::other(format!("{FILE}: {e}"))))?;
    files.push((FILE.into(), text.into_bytes()));
    rundir::replace_dir(&args.out, &files)?;
    let artifacts_left = sources
        .iter()
        .map(|(_, d)| d.clone())
        .filter(|d| d.join("artifacts").is_dir())
        .collect();
    Ok(MergeReport {
        out: args.out.clone(),
        from: sources.into_iter().map(|(_, d)| d).collect(),
        lines,
        artifacts_left,
    })
}

/// The merged corpus's collect.json: the first collection's, named after the output folder,
/// with every stage's calls summed, the collections it was joined from, and for `--arm` each
/// label's own harness record.
fn merged_record(
    args: &MergeArgs,
    sources: &[(Option<String>, PathBuf)],
    records: &[Collection],
) -> Collection {
    let mut merged = records[0].clone();
    merged.run_id = args
        .out
        .file_name()
        .map_or_else(|| "merged".into(), |n| n.to_string_lossy().into_owned());
    merged.shard = None;
    merged.sequential = None;
    merged.merged = Some(
        sources
            .iter()
            .map(|(_, d)| d.display().to_string())
            .collect(),
    );
    if !args.arms.is_empty() {
        merged.arms = sources.iter().filter_map(|(l, _)| l.clone()).collect();
        let mut p = crate::corpus::collection::Provenance::default();
        for ((label, _), m) in sources.iter().zip(records) {
            let label = label.clone().unwrap_or_default();
            if let Some(r) = m.provenance.as_ref().and_then(|p| p.arms.get(&label)) {
                p.arms.insert(label, r.clone());
            }
        }
        merged.provenance = (!p.arms.is_empty()).then_some(p);
    }
    for (i, stage) in merged.stages.iter_mut().enumerate() {
        let of = |m: &Collection| m.stages.get(i).map_or((0, 0), |s| (s.recorded, s.failed));
        stage.recorded = records.iter().map(|m| of(m).0).sum();
        stage.failed = records.iter().map(|m| of(m).1).sum();
        // Every collection's planned calls: the whole plan's.
        stage.calls = records
            .iter()
            .map(|m| m.stages.get(i).and_then(|s| s.calls))
            .sum();
    }
    merged
}

/// Where a collection's lines stand in one collection of the whole plan.
struct Order<'a> {
    labels: &'a [String],
    targets: &'a HashMap<&'a str, usize>,
    /// Each (arm label, finding id) of the collection's returns, with the return's target: what
    /// a validator or judge call on a finding is about.
    findings: HashMap<(String, String), String>,
    source: usize,
}

impl Order<'_> {
    /// The rank of a line recording `call`, the `line`-th of its file.
    fn rank(&self, call: &Key, line: u64) -> (usize, usize, usize, u64) {
        let arm = call.arm().unwrap_or_default();
        let l = self
            .labels
            .iter()
            .position(|x| x == arm)
            .unwrap_or(usize::MAX);
        // The line's target, as its own fields name it: a return's or a trace's, a validated
        // finding's return's, or a judged item's (a target, or a finding of a return).
        let target = match call {
            Key::Review { target, .. } | Key::Validation { target, .. } => Some(&**target),
            Key::Query { query_id, .. } => Some(&**query_id),
            Key::Judge { item_id, .. } | Key::Verdicts { item_id, .. } => {
                if self.targets.contains_key(&**item_id) {
                    Some(&**item_id)
                } else {
                    self.findings
                        .get(&(arm.to_string(), item_id.to_string()))
                        .map(String::as_str)
                }
            }
            _ => None,
        };
        let t = target
            .and_then(|t| self.targets.get(t).copied())
            .unwrap_or(usize::MAX);
        (l, t, self.source, line)
    }
}

/// The finding ids of `dir`'s returns, with their arm label and target.
fn findings_of(dir: &Path) -> Result<HashMap<(String, String), String>, Error> {
    let path = dir.join(crate::corpus::files::File::Reviews.name());
    let mut out = HashMap::new();
    let Some(bytes) = regular_file(&path)? else {
        return Ok(out);
    };
    let (records, problems) = reviews::parse(&path.display().to_string(), &bytes);
    problems.refuse()?;
    for r in records {
        for f in &r.findings {
            if let Some(id) = f.get("id").and_then(Value::as_str) {
                out.insert((r.arm.clone(), id.to_string()), r.target.clone());
            }
        }
    }
    Ok(out)
}

/// The lines of `dir`'s file of `def`, read by its reader: each with its call and its rank.
fn lines_of(
    dir: &Path,
    def: &crate::corpus::files::Def,
    order: &Order<'_>,
) -> Result<Vec<Line>, Error> {
    let path = dir.join(def.name);
    let Some(bytes) = regular_file(&path)? else {
        return Ok(Vec::new());
    };
    let (calls, problems) = def.calls(&path.display().to_string(), &bytes);
    problems.refuse()?;
    let texts: HashMap<u64, &[u8]> = crate::corpus::nonblank_lines(&bytes).collect();
    Ok(calls
        .into_iter()
        .map(|c| Line {
            rank: order.rank(&c.call, c.line),
            text: texts.get(&c.line).map_or_else(Vec::new, |t| t.to_vec()),
            call: c.call,
        })
        .collect())
}

/// The bytes of `path` when it is a regular file, `None` when there is nothing there. Anything
/// else a collection never writes — a link, a pipe, a device — is refused, never followed: a
/// shard (a CI artifact) must not pull in a file from outside it, or block on a pipe.
fn regular_file(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::read(path, e)),
        Ok(m) if m.file_type().is_file() && m.len() > MAX_FILE => Err(InputError::new(
            path.display().to_string(),
            format!(
                "is {} bytes, more than the {} a collection's file may hold here",
                m.len(),
                MAX_FILE
            ),
        )
        .hint("merge the run directories `calibench collect` wrote; a file this large is none of them")
        .into()),
        Ok(m) if m.file_type().is_file() => Ok(Some(read_file(path)?)),
        Ok(m) => Err(InputError::new(
            path.display().to_string(),
            format!(
                "is {}, not a regular file: a collection holds regular files only",
                if m.file_type().is_symlink() {
                    "a symbolic link"
                } else if m.is_dir() {
                    "a folder"
                } else {
                    "a special file (a pipe, socket or device)"
                }
            ),
        )
        .hint("merge the run directories `calibench collect` wrote, as it wrote them")
        .into()),
    }
}

/// `targets.jsonl` and every file under `sources/` of `dir`, as (relative name, bytes): regular
/// files and folders only.
fn collect_tree(dir: &Path, rel: &Path, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), Error> {
    if rel.as_os_str().is_empty() {
        let name = crate::corpus::files::File::Targets.name();
        if let Some(bytes) = regular_file(&dir.join(name))? {
            out.push((name.into(), bytes));
        }
        let sources = crate::corpus::files::SOURCES;
        match std::fs::symlink_metadata(dir.join(sources)) {
            Ok(m) if m.is_dir() => collect_tree(dir, Path::new(sources), out)?,
            // A link or a special file named so is refused; a plain file is no snapshot folder.
            Ok(_) => drop(regular_file(&dir.join(sources))?),
            Err(_) => {}
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
        let kind = std::fs::symlink_metadata(&path).map_err(|e| Error::read(&path, e))?;
        if kind.is_dir() {
            collect_tree(dir, &name, out)?;
        } else if let Some(bytes) = regular_file(&path)? {
            out.push((name.display().to_string(), bytes));
        }
    }
    Ok(())
}

/// The first 12 characters of a hash.
fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// What differs between two shards' plans, named: "targets: pricing at 4d6db4a7… (shard 1),
/// 9a0c31e2… (shard 2)".
fn plan_difference(a: &Collection, b: &Collection, ka: u32, kb: u32) -> String {
    let side = |x: String, y: String| format!("{x} (shard {ka}), {y} (shard {kb})");
    if a.kind != b.kind {
        return format!(
            "kind: {}",
            side(format!("{:?}", a.kind), format!("{:?}", b.kind))
        );
    }
    if a.command != b.command {
        return format!(
            "command: {}",
            side(a.command.join(" "), b.command.join(" "))
        );
    }
    if a.reviewers != b.reviewers {
        return format!(
            "reviewers: {}",
            side(a.reviewers.join(", "), b.reviewers.join(", "))
        );
    }
    if a.arms != b.arms {
        return format!("arms: {}", side(a.arms.join(", "), b.arms.join(", ")));
    }
    if a.runs != b.runs {
        return format!("runs: {}", side(a.runs.to_string(), b.runs.to_string()));
    }
    for (x, y) in a.targets.iter().zip(&b.targets) {
        if x != y {
            return format!(
                "targets: {}",
                side(
                    format!("{} at {}…", x.name, short(&x.sha256)),
                    format!("{} at {}…", y.name, short(&y.sha256))
                )
            );
        }
    }
    if a.targets.len() != b.targets.len() {
        return format!(
            "targets: {}",
            side(a.targets.len().to_string(), b.targets.len().to_string())
        );
    }
    "the later stages' plans (validators or judges) differ".into()
}

/// What differs between two shards' harness records, named: "environment variable
/// PROMPT_VERSION: 1 (shard 1), 2 (shard 2)".
fn harness_difference(a: &Collection, b: &Collection, ka: u32, kb: u32) -> String {
    let (Some(pa), Some(pb)) = (&a.provenance, &b.provenance) else {
        return format!(
            "shard {} records no harness",
            if a.provenance.is_none() { ka } else { kb }
        );
    };
    for (label, ra) in &pa.arms {
        let Some(rb) = pb.arms.get(label) else {
            return format!("arm label `{label}` is recorded in shard {ka} only");
        };
        if let Some(d) = crate::collect::provenance::compare((label, ra), (label, rb))
            .into_iter()
            .next()
        {
            return d.between(&format!("shard {ka}"), &format!("shard {kb}"));
        }
    }
    "the arm labels recorded differ".into()
}

/// The lines each stage's file holds against what collect.json says the stage recorded: a
/// shard without its files (or with lines deleted) would merge as if its calls were never
/// planned.
fn check_recorded(dir: &Path, m: &Collection) -> Result<(), Error> {
    for stage in m.stages.iter().filter(|s| s.recorded > 0) {
        let name = stage.stage.file(m.kind).name();
        let path = dir.join(name);
        let Some(bytes) = regular_file(&path)? else {
            return Err(InputError::new(
                path.display().to_string(),
                format!(
                    "is missing: {} records {} {} calls",
                    FILE,
                    stage.recorded,
                    stage.stage.name().trim_end_matches('s')
                ),
            )
            .hint("merge the run directories `calibench collect` wrote, whole")
            .into());
        };
        // More lines than recorded: each line is checked below (a call twice, a target
        // outside the plan or the shard).
        let lines = crate::corpus::nonblank_lines(&bytes).count();
        if lines < stage.recorded {
            return Err(InputError::new(
                path.display().to_string(),
                format!(
                    "holds {lines} lines, but {} records {} {} calls",
                    FILE,
                    stage.recorded,
                    stage.stage.name().trim_end_matches('s')
                ),
            )
            .hint("merge the run directories `calibench collect` wrote, as it wrote them")
            .into());
        }
    }
    Ok(())
}

/// The output folder, created fresh outside every input: written inside one, it would be read
/// as part of a shard by the next merge, or replace what it was merged from.
fn check_out(out: &Path, sources: &[(Option<String>, PathBuf)]) -> Result<(), Error> {
    let absolute = |p: &Path| -> PathBuf {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        // The nearest folder that exists, resolved, with the rest of the path after it.
        let mut base = p.as_path();
        let mut rest = Vec::new();
        while !base.exists() {
            match (base.parent(), base.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_os_string());
                    base = parent;
                }
                _ => break,
            }
        }
        let mut resolved = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
        for name in rest.iter().rev() {
            resolved.push(name);
        }
        resolved
    };
    let out_abs = absolute(out);
    for (_, dir) in sources {
        let dir_abs = absolute(dir);
        if out_abs.starts_with(&dir_abs) || dir_abs.starts_with(&out_abs) {
            return Err(InputError::new(
                out.display().to_string(),
                format!(
                    "is inside {} (or holds it): the merged corpus goes outside every input",
                    dir.display()
                ),
            )
            .hint("name a folder beside the run directories, such as runs/merged")
            .into());
        }
    }
    Ok(())
}

/// The most bytes merge reads of one file of a collection (4 GiB).
const MAX_FILE: u64 = 4 << 30;

/// A line's target must be one of the plan's, and (for a shard) one of its shard's: a line on
/// another target was not collected by this plan.
fn in_plan(
    dir: &Path,
    file: &str,
    line: &Line,
    targets: &HashMap<&str, usize>,
    shard: Option<&crate::corpus::collection::ShardEntry>,
) -> Result<(), Error> {
    let target = match &line.call {
        Key::Review { target, .. } | Key::Validation { target, .. } => &**target,
        Key::Query { query_id, .. } => &**query_id,
        _ => return Ok(()),
    };
    let problem = if !targets.contains_key(target) {
        format!(
            "target `{}` is not in the plan",
            crate::text::inline(target)
        )
    } else if let Some(s) = shard.filter(|s| !crate::corpus::collection::holds(s.k, s.n, target)) {
        format!(
            "target `{}` is not in shard {}/{} (its hash puts it in another)",
            crate::text::inline(target),
            s.k,
            s.n
        )
    } else {
        return Ok(());
    };
    Err(
        InputError::new(dir.join(file).display().to_string(), problem)
            .at_line(line.rank.3)
            .hint("merge the run directories `calibench collect` wrote, as it wrote them")
            .into(),
    )
}
