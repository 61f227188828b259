//! Run directories on disk (docs/guides/reports.md): run ids, claiming an id atomically, writing a directory
//! whole or not at all, the times a manifest records, and sweeping up after killed processes.
//!
//! The guarantees, and how each is kept:
//! * **A run never looks whole before it is.** Files are written into a hidden partial
//!   directory beside the final one and renamed into place at the end.
//! * **An existing run is never replaced, by this run or a concurrent one.** An id is claimed by
//!   creating its partial directory, `.<id>.partial`, with `create_dir`, which the kernel makes
//!   exclusive: two processes cannot both create it. The holder then checks that no finished
//!   run has the id and renames the partial directory onto it at the end. A default id whose
//!   claim or run exists moves to the next free suffix (`-2`, `-3`, …); a given `--run-id` is
//!   refused instead.
//! * **A killed run leaves no lasting litter.** The claim holds an owner file with the holder's
//!   process id. The next run into the same folder removes partial directories whose owner is
//!   gone (and puts back a directory a killed replacement had moved aside), and says so.
//!
//! This is the IO edge of the program: nothing in the pure core calls it.

pub mod manifest;
pub mod pairs;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::{Error, InputError};

/// The longest run id: ids become directory names, and a claim adds a few characters to them
/// (file systems allow 255 bytes).
pub const MAX_ID_LEN: usize = 200;

/// The owner file inside a claim: the holder's process id, removed just before the rename.
const OWNER: &str = ".calibench-owner";
/// How long an ownerless claim is left alone: it may be a claim made a moment ago whose owner
/// file is not written yet.
const OWNERLESS_GRACE: Duration = Duration::from_secs(60);
/// How far a default id looks for a free suffix before giving up.
const MAX_SUFFIX: u32 = 10_000;

/// Checks a run id: one plain path component of at most [`MAX_ID_LEN`] characters. `origin`
/// names where the id came from in the message (`--run-id`, a file).
pub fn check_id(id: &str, origin: &str) -> Result<(), InputError> {
    let plain = !id.is_empty()
        && id != "."
        && id != ".."
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    const RULE: &str =
        "a run id is one plain name of letters, digits, `.`, `_` and `-`, at most 200 characters";
    if !plain {
        return Err(InputError::new(origin, format!("`{id}` is not a usable run id")).hint(RULE));
    }
    let length = id.len();
    if length > MAX_ID_LEN {
        let problem =
            format!("the run id is {length} characters long; at most {MAX_ID_LEN} are allowed");
        return Err(InputError::new(origin, problem).hint(RULE));
    }
    Ok(())
}

/// `base` reduced to run-id characters (anything else becomes `-`) and to [`MAX_ID_LEN`] less
/// room for a suffix.
fn clean_base(base: &str) -> String {
    let cleaned: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(MAX_ID_LEN - 6)
        .collect();
    // A default id begins with a letter or a digit: one that began `-` would read as a flag
    // (`calibench report -script-…`), one that began `.` as a hidden folder.
    match cleaned.trim_start_matches(['-', '.', '_']) {
        "" => format!("run{cleaned}"),
        rest if rest.len() < cleaned.len() => format!("run-{rest}"),
        _ => cleaned,
    }
}

/// `2026-11-21T22:30:00Z`: the times a manifest records.
pub fn timestamp(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t)
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `20261121T223000Z`: the time part of a default run id.
pub fn compact_time(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t)
        .format("%Y%m%dT%H%M%SZ")
        .to_string()
}

/// Which id a new run takes.
#[derive(Clone, Debug)]
pub enum RunId {
    /// The user named it: taken, or refused when it is in use.
    Given(String),
    /// A default made from this base: the base, or the first free `base-N`.
    Default(String),
}

impl RunId {
    /// The id the run would take if nothing were in the way (for `--dry-run`).
    pub fn preview(&self) -> String {
        match self {
            RunId::Given(id) => id.clone(),
            RunId::Default(base) => clean_base(base),
        }
    }
}

/// Tries `id`'s candidates in order with `try_one`, which answers `Ok(Err(why))` for a taken
/// one: a given id is refused with that reason, a default one moves to the next suffix.
fn first_free<T>(
    runs_dir: &Path,
    id: &RunId,
    mut try_one: impl FnMut(&str) -> Result<Result<T, String>, Error>,
) -> Result<T, Error> {
    std::fs::create_dir_all(runs_dir).map_err(|e| Error::write(runs_dir, e))?;
    let base = id.preview();
    for n in 1..=MAX_SUFFIX {
        let candidate = if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        match try_one(&candidate)? {
            Ok(claimed) => return Ok(claimed),
            Err(taken) if matches!(id, RunId::Given(_)) => {
                return Err(
                    InputError::new(runs_dir.join(&candidate).display().to_string(), taken)
                        .hint("choose another --run-id; calibench never overwrites a run")
                        .into(),
                )
            }
            Err(_) => {}
        }
    }
    Err(InputError::new(
        runs_dir.display().to_string(),
        format!("every run id from `{base}` to `{base}-{MAX_SUFFIX}` is taken"),
    )
    .hint("give a --run-id, or another --runs-dir")
    .into())
}

/// Creates `runs_dir/<id>` for a run that is written in place rather than renamed at the end
/// (a live collection, which must stay resumable): `create_dir` is exclusive, so the directory
/// itself is the claim. Returns the id taken.
pub fn create_live(runs_dir: &Path, id: &RunId) -> Result<String, Error> {
    first_free(runs_dir, id, |candidate| {
        if runs_dir.join(format!(".{candidate}.partial")).exists() {
            return Ok(Err("is being written by another calibench run".into()));
        }
        let dir = runs_dir.join(candidate);
        match std::fs::create_dir(&dir) {
            Ok(()) => Ok(Ok(candidate.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Ok(Err("already exists".into()))
            }
            Err(e) => Err(Error::write(&dir, e)),
        }
    })
}

/// The lock file of a run directory written in place.
pub const LOCK: &str = ".calibench.lock";

/// An exclusive hold on a run directory that a live collection writes in place (docs/guides/live-collection.md): one
/// process collects into a run at a time, so no call is made twice and no line written twice.
/// It is an advisory `flock` on `.calibench.lock` in the directory, which holds the holder's
/// process id; the kernel releases it when the process ends, however it ends. The file stays
/// (removing it would let a waiting process and a new one lock two different files).
#[derive(Debug)]
pub struct DirLock {
    _file: std::fs::File,
}

impl DirLock {
    /// Takes the lock on `dir` for a collection, or refuses naming the process that holds it.
    pub fn take(dir: &Path) -> Result<DirLock, Error> {
        DirLock::take_for(
            dir,
            "is being collected into",
            "one collection writes a run at a time: wait for it to finish or stop it, then --resume",
        )
    }

    /// Takes the lock on `dir`, or refuses saying the folder `doing` by the process that holds
    /// it, with `hint`.
    pub fn take_for(dir: &Path, doing: &str, hint: &str) -> Result<DirLock, Error> {
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsRawFd;
        let path = dir.join(LOCK);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| Error::write(&path, e))?;
        // SAFETY: flock(2) on a descriptor this File owns; it reads no memory of ours.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if !locked {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let who = if holder.is_empty() {
                "another calibench process".to_string()
            } else {
                format!("another calibench process (process {holder})")
            };
            return Err(
                InputError::new(dir.display().to_string(), format!("{doing} by {who}"))
                    .hint(hint)
                    .into(),
            );
        }
        let write = |file: &mut std::fs::File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.rewind()?;
            write!(file, "{}", std::process::id())?;
            file.flush()
        };
        write(&mut file).map_err(|e| Error::write(&path, e))?;
        Ok(DirLock { _file: file })
    }
}

/// A run id this process holds until it commits the run or drops the claim.
#[derive(Debug)]
pub struct Claim {
    id: String,
    partial: PathBuf,
    final_dir: PathBuf,
    committed: bool,
    /// The runs folder, when this claim created it: a run that never commits leaves no empty
    /// folder behind either.
    created_root: Option<PathBuf>,
}

impl Claim {
    /// Claims an id under `runs_dir` (created if needed); see the module docs.
    pub fn new(runs_dir: &Path, id: RunId) -> Result<Claim, Error> {
        let created = !runs_dir.exists();
        let mut claim = first_free(runs_dir, &id, |candidate| {
            Self::try_claim(runs_dir, candidate)
        })
        .inspect_err(|_| {
            if created {
                let _ = std::fs::remove_dir(runs_dir);
            }
        })?;
        claim.created_root = created.then(|| runs_dir.to_path_buf());
        Ok(claim)
    }

    /// `Ok(Ok(claim))`, or `Ok(Err(why))` when `id` is taken.
    fn try_claim(runs_dir: &Path, id: &str) -> Result<Result<Claim, String>, Error> {
        let final_dir = runs_dir.join(id);
        if final_dir.exists() {
            return Ok(Err("already exists".into()));
        }
        let partial = runs_dir.join(format!(".{id}.partial"));
        match std::fs::create_dir(&partial) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder =
                    owner(&partial).map_or_else(String::new, |pid| format!(" (process {pid})"));
                return Ok(Err(format!(
                    "is being written by another calibench run{holder}"
                )));
            }
            Err(e) => return Err(Error::write(&partial, e)),
        }
        let claim = Claim {
            id: id.to_string(),
            partial,
            final_dir,
            committed: false,
            created_root: None,
        };
        std::fs::write(claim.partial.join(OWNER), std::process::id().to_string())
            .map_err(|e| Error::write(&claim.partial, e))?;
        // A run that finished between the check above and the claim has renamed its own claim
        // away, so ours succeeded: look again now that no one else can take the id.
        if claim.final_dir.exists() {
            return Ok(Err("already exists".into())); // dropping the claim removes it
        }
        Ok(Ok(claim))
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Writes files of the run (paths relative to the run directory) into the claim by `write`,
    /// straight to disk: a large table is never held whole in memory. It becomes part
    /// of the run at [`Claim::commit`], and goes with the claim if the run never commits.
    pub fn write_with<const N: usize>(
        &self,
        files: [&str; N],
        write: impl FnOnce(&mut [std::io::BufWriter<std::fs::File>; N]) -> std::io::Result<()>,
    ) -> Result<(), Error> {
        let run = || -> std::io::Result<()> {
            let mut open = Vec::with_capacity(N);
            for file in files {
                open.push(std::io::BufWriter::new(std::fs::File::create(
                    self.partial.join(file),
                )?));
            }
            let Ok(mut out) = <[_; N]>::try_from(open) else {
                unreachable!("one writer per file")
            };
            write(&mut out)?;
            out.iter_mut().try_for_each(std::io::Write::flush)
        };
        run().map_err(|e| Error::write(&self.final_dir, e))
    }

    /// Writes `files` (paths relative to the run directory) and renames the whole directory
    /// into place. On failure nothing is left: the claim is removed when dropped.
    pub fn commit(mut self, files: &[(String, Vec<u8>)]) -> Result<PathBuf, Error> {
        write_files(&self.partial, files).map_err(|e| Error::write(&self.final_dir, e))?;
        std::fs::remove_file(self.partial.join(OWNER))
            .map_err(|e| Error::write(&self.partial, e))?;
        // Only a process that ignores claims can have made the final directory since.
        if self.final_dir.exists() {
            return Err(InputError::new(
                self.final_dir.display().to_string(),
                "appeared while this run was being written",
            )
            .hint("another program wrote there; calibench never overwrites a run")
            .into());
        }
        std::fs::rename(&self.partial, &self.final_dir)
            .map_err(|e| Error::write(&self.final_dir, e))?;
        self.committed = true;
        Ok(self.final_dir.clone())
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.partial);
            if let Some(root) = &self.created_root {
                let _ = std::fs::remove_dir(root); // only if empty: a concurrent run may be there
            }
        }
    }
}

/// Writes each file under `dir`, creating folders as needed.
fn write_files(dir: &Path, files: &[(String, Vec<u8>)]) -> std::io::Result<()> {
    for (file, bytes) in files {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    Ok(())
}

/// Writes `files` into a temporary sibling of `final_dir`, then renames it into place; an
/// existing `final_dir` is replaced only once the new one is whole (a re-rendered report, a
/// newly accepted run). On any failure the temporary directory is removed and `final_dir` is as
/// it was: a reader never sees half a directory.
pub fn replace_dir(final_dir: &Path, files: &[(String, Vec<u8>)]) -> Result<PathBuf, Error> {
    let parent = final_dir.parent().unwrap_or(Path::new("."));
    let name = final_dir
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    sweep_before_replacing(parent, &name);
    let pid = std::process::id();
    let partial = parent.join(format!(".{name}.partial-{pid}"));
    let old = parent.join(format!(".{name}.old-{pid}"));
    let write_all = || -> std::io::Result<()> {
        let _ = std::fs::remove_dir_all(&partial);
        std::fs::create_dir_all(&partial)?;
        write_files(&partial, files)?;
        if final_dir.exists() {
            std::fs::rename(final_dir, &old)?;
        }
        std::fs::rename(&partial, final_dir)?;
        let _ = std::fs::remove_dir_all(&old);
        Ok(())
    };
    write_all().map_err(|e| {
        let _ = std::fs::remove_dir_all(&partial);
        Error::write(final_dir, e)
    })?;
    Ok(final_dir.to_path_buf())
}

/// Writes one file through a temporary sibling and a rename, creating its folder: a reader
/// sees the old file or the whole new one, never half of it.
pub fn replace_file(path: &Path, text: &str) -> Result<(), Error> {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let parent = path.parent().filter(|d| !d.as_os_str().is_empty());
    sweep_before_replacing(parent.unwrap_or(Path::new(".")), &name);
    let tmp = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    dir.map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&tmp, text))
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::write(path, e)
        })
}

/// Before `name` in `dir` is replaced, what a killed earlier replacement of it left is removed
/// (or, for a directory it had moved aside, put back), and said in one line on stderr: every
/// folder calibench writes into is swept by the next command that writes there, not only runs
/// and reports.
fn sweep_before_replacing(dir: &Path, name: &str) {
    if let Some(message) = describe_sweep(&sweep(dir, Some(name))) {
        crate::output::print_warning(&message);
    }
}

/// `path` made absolute with symbolic links and `..` resolved as far as it exists, so that two
/// spellings of one folder compare equal (the rest is appended as written, `.` dropped).
pub fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                match part {
                    std::path::Component::ParentDir => {
                        out.pop();
                    }
                    std::path::Component::CurDir => {}
                    other => out.push(other.as_os_str()),
                }
            }
            return out;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// What a sweep did with one piece of litter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Swept {
    /// A partial directory or file whose process is gone, removed.
    Removed(PathBuf),
    /// A directory a killed replacement had moved aside, put back under its name.
    Restored(PathBuf),
}

/// Removes what killed processes left in `dir`: claims (`.<id>.partial` whose owner is gone),
/// temporary directories and files (`.<name>.partial-<pid>`), and directories moved aside
/// during a replacement (`.<name>.old-<pid>`), which go back under their name when nothing
/// took their place. Litter of a live process is left alone. Returns what it did; a folder
/// that does not exist has nothing to sweep.
pub fn sweep_stale(dir: &Path) -> Vec<Swept> {
    sweep(dir, None)
}

/// [`sweep_stale`] for the litter of one name only (`.<name>.partial-<pid>`,
/// `.<name>.old-<pid>`): what a killed [`replace_file`] or [`replace_dir`] of `name` left.
fn sweep(dir: &Path, only: Option<&str>) -> Vec<Swept> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Some(hidden) = name.strip_prefix('.') else {
            continue;
        };
        let named = |marker: &str| split_pid(hidden, marker).map(|(stem, _)| stem);
        if only.is_some_and(|o| named(".partial-") != Some(o) && named(".old-") != Some(o)) {
            continue;
        }
        if hidden.ends_with(".partial") {
            let stale = match owner(&path) {
                Some(pid) => !alive(pid),
                None => age(&path).is_some_and(|a| a > OWNERLESS_GRACE),
            };
            if stale && remove(&path) {
                done.push(Swept::Removed(path));
            }
        } else if let Some((_, pid)) = split_pid(hidden, ".partial-") {
            if !alive(pid) && remove(&path) {
                done.push(Swept::Removed(path));
            }
        } else if let Some((stem, pid)) = split_pid(hidden, ".old-") {
            if alive(pid) {
                continue;
            }
            let original = dir.join(stem);
            if !original.exists() && std::fs::rename(&path, &original).is_ok() {
                done.push(Swept::Restored(original));
            } else if remove(&path) {
                done.push(Swept::Removed(path));
            }
        }
    }
    done.sort_by(|a, b| a.path().cmp(b.path()));
    done
}

impl Swept {
    fn path(&self) -> &Path {
        match self {
            Swept::Removed(p) | Swept::Restored(p) => p,
        }
    }
}

/// One line for the user about what a sweep did, or `None` when it did nothing.
pub fn describe_sweep(swept: &[Swept]) -> Option<String> {
    if swept.is_empty() {
        return None;
    }
    let list: Vec<String> = swept
        .iter()
        .map(|s| match s {
            Swept::Removed(p) => format!("removed {}", p.display()),
            Swept::Restored(p) => format!("restored {}", p.display()),
        })
        .collect();
    Some(format!(
        "cleaned up after killed calibench processes: {}",
        list.join(", ")
    ))
}

/// `("name", pid)` from `name<marker><pid>`.
fn split_pid<'a>(hidden: &'a str, marker: &str) -> Option<(&'a str, u32)> {
    let at = hidden.rfind(marker)?;
    let pid = hidden[at + marker.len()..].parse().ok()?;
    Some((&hidden[..at], pid))
}

/// The process id in a claim's owner file.
fn owner(claim: &Path) -> Option<u32> {
    std::fs::read_to_string(claim.join(OWNER))
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn age(path: &Path) -> Option<Duration> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    SystemTime::now().duration_since(modified).ok()
}

fn remove(path: &Path) -> bool {
    if path.is_dir() {
        std::fs::remove_dir_all(path).is_ok()
    } else {
        std::fs::remove_file(path).is_ok()
    }
}

/// Whether process `pid` exists (ours or another user's).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 sends nothing; it only asks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    // Regression (hostile-4/17 j): an experiment named `<script>…` gave the default id
    // `-script-…`, which `calibench report` then read as a flag.
    #[test]
    fn a_default_id_begins_with_a_letter_or_a_digit() {
        assert_eq!(clean_base("<script>x-2026"), "run-script-x-2026");
        assert_eq!(clean_base(".hidden"), "run-hidden");
        assert_eq!(clean_base("***"), "run---");
        assert_eq!(clean_base("doc-review-ab-2026"), "doc-review-ab-2026");
    }

    use super::*;

    fn files() -> Vec<(String, Vec<u8>)> {
        vec![
            ("metrics.json".into(), b"{}".to_vec()),
            ("sub/a.csv".into(), b"x".to_vec()),
        ]
    }

    #[test]
    fn times_are_utc_in_both_forms() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_300_200);
        assert_eq!(timestamp(t), "2026-11-21T22:30:00Z"); // `date -u -d @1795300200`
        assert_eq!(compact_time(t), "20261121T223000Z");
        assert_eq!(timestamp(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(1_709_164_800);
        assert_eq!(timestamp(leap), "2024-02-29T00:00:00Z");
    }

    #[test]
    fn ids_are_one_short_plain_component() {
        assert!(check_id("r1.b_c-2", "--run-id").is_ok());
        for bad in ["", ".", "..", "a/b", "a b", "é"] {
            assert!(check_id(bad, "--run-id").is_err(), "{bad}");
        }
        assert!(check_id(&"x".repeat(MAX_ID_LEN), "--run-id").is_ok());
        let e = check_id(&"x".repeat(300), "--run-id")
            .unwrap_err()
            .to_string();
        assert!(e.contains("300 characters long"), "{e}");
    }

    #[test]
    fn a_default_id_moves_to_the_next_free_suffix_and_a_given_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = Claim::new(dir.path(), RunId::Default("r1".into())).unwrap();
        let b = Claim::new(dir.path(), RunId::Default("r1".into())).unwrap();
        assert_eq!((a.id(), b.id()), ("r1", "r1-2"));
        let e = Claim::new(dir.path(), RunId::Given("r1".into())).unwrap_err();
        assert!(e
            .to_string()
            .contains("is being written by another calibench run (process"));
        a.commit(&files()).unwrap();
        let e = Claim::new(dir.path(), RunId::Given("r1".into())).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        let c = Claim::new(dir.path(), RunId::Default("r1".into())).unwrap();
        assert_eq!(c.id(), "r1-3");
        b.commit(&files()).unwrap();
        assert!(dir.path().join("r1-2/sub/a.csv").is_file());
        assert!(!dir.path().join("r1-2").join(OWNER).exists());
    }

    #[test]
    fn a_dropped_claim_leaves_nothing_and_frees_the_id() {
        let dir = tempfile::tempdir().unwrap();
        drop(Claim::new(dir.path(), RunId::Given("x".into())).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // Nor the runs folder it had to create.
        drop(Claim::new(&dir.path().join("runs"), RunId::Given("x".into())).unwrap());
        assert!(!dir.path().join("runs").exists());
        assert_eq!(
            Claim::new(dir.path(), RunId::Given("x".into()))
                .unwrap()
                .id(),
            "x"
        );
    }

    #[test]
    fn a_run_directory_is_locked_by_one_holder_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let held = DirLock::take(dir.path()).unwrap();
        // flock locks belong to an open file description: a second open in this process
        // contends like another process would.
        let e = DirLock::take(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains(&format!("(process {})", std::process::id())),
            "{e}"
        );
        drop(held);
        assert!(DirLock::take(dir.path()).is_ok());
    }

    #[test]
    fn resolved_folds_spellings_of_one_folder() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        std::fs::create_dir(&runs).unwrap();
        assert_eq!(resolved(&runs.join(".")), resolved(&runs));
        assert_eq!(resolved(&dir.path().join("x/../runs")), resolved(&runs));
        assert_eq!(
            resolved(&dir.path().join("runs/new/../new")),
            resolved(&runs).join("new")
        );
    }

    /// A process id that is not running: a child that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn the_sweep_removes_a_dead_process_litter_and_restores_what_it_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dead_pid();
        let claim = dir.path().join(".r1.partial");
        std::fs::create_dir(&claim).unwrap();
        std::fs::write(claim.join(OWNER), dead.to_string()).unwrap();
        let temp = dir.path().join(format!(".report.partial-{dead}"));
        std::fs::create_dir(&temp).unwrap();
        let moved = dir.path().join(format!(".accepted.old-{dead}"));
        std::fs::create_dir(&moved).unwrap();
        std::fs::write(moved.join("metrics.json"), "{}").unwrap();
        // A live process's litter stays: ours.
        let live = dir
            .path()
            .join(format!(".mine.partial-{}", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let held = Claim::new(dir.path(), RunId::Given("held".into())).unwrap();

        let swept = sweep_stale(dir.path());
        assert_eq!(swept.len(), 3, "{swept:?}");
        assert!(swept.contains(&Swept::Removed(claim.clone())));
        assert!(swept.contains(&Swept::Removed(temp.clone())));
        assert!(swept.contains(&Swept::Restored(dir.path().join("accepted"))));
        assert!(!claim.exists() && !temp.exists());
        assert!(dir.path().join("accepted/metrics.json").is_file());
        assert!(live.exists());
        assert!(describe_sweep(&swept).unwrap().contains("removed"));
        assert!(sweep_stale(dir.path()).is_empty());
        assert_eq!(held.id(), "held");
    }
}
