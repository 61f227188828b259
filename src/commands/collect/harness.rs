//! The harness watched while a collection runs (docs/guides/live-collection.md, "Provenance and
//! drift"): every file the record hashed (a script, a `--prompt=FILE`, the program found on
//! `PATH`) is hashed again at the start and at the end of each stage, and looked at (its size
//! and modification time) after each recorded call, so that a file edited mid-collection is
//! recorded in collect.json with the calls made before and after it changed — which `run`
//! says as a caveat.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::corpus::collection::Change;

/// The SHA-256 of a regular file, `None` for anything else or what cannot be read.
pub(super) fn sha256(path: &Path) -> Option<String> {
    if !path.is_file() {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    Some(format!("{:x}", Sha256::digest(&bytes)))
}

fn stat(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

struct Watched {
    /// As the record names it: the argument, or the program's name.
    key: String,
    path: PathBuf,
    sha: String,
    stat: Option<(SystemTime, u64)>,
    /// The stage's calls recorded when it was first seen changed.
    seen_at: Option<usize>,
}

/// Every file of the harness, as it was when last hashed. A sequential collection keeps one
/// across its batches, so that a file changed between two batches is recorded once, and a
/// change's counts are the stage's calls over the whole collection.
pub(super) struct Watch {
    files: Vec<Watched>,
    /// The stage's calls recorded before this collection of it began (earlier batches).
    offset: usize,
}

impl Watch {
    /// The files `record` hashed (key → its path and hash).
    pub(super) fn new(record: &BTreeMap<String, (PathBuf, String)>) -> Watch {
        Watch {
            files: record
                .iter()
                .map(|(key, (path, sha))| Watched {
                    key: key.clone(),
                    path: path.clone(),
                    sha: sha.clone(),
                    stat: stat(path),
                    seen_at: None,
                })
                .collect(),
            offset: 0,
        }
    }

    /// At a stage's start, with `earlier` of its calls recorded before (by earlier batches): a
    /// file that changed since it was last hashed changed after those and before any of this
    /// collection's.
    pub(super) fn stage_start(&mut self, earlier: usize) {
        self.offset = earlier;
        for f in &mut self.files {
            if sha256(&f.path).as_deref() != Some(f.sha.as_str()) {
                f.seen_at = Some(earlier);
            }
        }
    }

    /// After a call is recorded, `calls` of the stage's so far: a file whose size or time
    /// moved is marked changed from here (cheap: no file is read).
    pub(super) fn poll(&mut self, calls: usize) {
        for f in self.files.iter_mut().filter(|f| f.seen_at.is_none()) {
            if stat(&f.path) != f.stat {
                f.seen_at = Some(self.offset + calls.saturating_sub(1));
            }
        }
    }

    /// At a stage's end, with `calls` recorded in it: each file whose content is not what it
    /// was, with the calls made before and after the change, and then the file as it is now.
    pub(super) fn stage_end(&mut self, calls: usize) -> Vec<Change> {
        let mut out = Vec::new();
        let calls = self.offset + calls;
        for f in &mut self.files {
            let now = sha256(&f.path).unwrap_or_else(|| "(missing)".to_string());
            if now != f.sha {
                let before = f.seen_at.unwrap_or(calls).min(calls);
                out.push(Change {
                    file: f.key.clone(),
                    before: f.sha.clone(),
                    after: now.clone(),
                    calls_before: before,
                    calls_after: calls - before,
                });
                f.sha = now;
            }
            f.stat = stat(&f.path);
            f.seen_at = None;
        }
        out
    }
}
