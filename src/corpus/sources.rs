//! Source snapshots under `sources/<target>/` (docs/reference.md), as lint-ignore reads them (docs/guides/ab-rubric-change.md):
//! which targets have a snapshot, and the text of each file a code finding names. The loader
//! reads the files; this module answers, without IO, whether a line carries a suppression.

use std::collections::BTreeMap;
use std::path::{Component, Path};

/// The lint suppression comments of docs/guides/ab-rubric-change.md, matched as written.
pub const MARKERS: [&str; 11] = [
    "eslint-disable-line",
    "eslint-disable-next-line",
    "# noqa",
    "rubocop:disable",
    "# pylint: disable",
    "# type: ignore",
    "//nolint",
    "#[allow(",
    "@SuppressWarnings",
    "@ts-ignore",
    "@ts-expect-error",
];

/// The snapshots of a corpus: per target with a `sources/<target>/` folder, the lines of each
/// file a finding names that the folder holds (split at line feeds once, when read).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sources {
    targets: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

impl Sources {
    /// Records that `target` has a snapshot folder.
    pub fn add_target(&mut self, target: &str) {
        self.targets.entry(target.to_string()).or_default();
    }

    /// Records the text of `file` in `target`'s snapshot.
    pub fn add_file(&mut self, target: &str, file: &str, text: String) {
        self.targets.entry(target.to_string()).or_default().insert(
            file.to_string(),
            text.split('\n').map(str::to_string).collect(),
        );
    }

    /// Whether `target` has a snapshot folder.
    pub fn has(&self, target: &str) -> bool {
        self.targets.contains_key(target)
    }

    /// Whether `file`'s `line`, or the line before it, carries a suppression comment: `None`
    /// when the target has no snapshot (the measure is unknown, never false); `Some(false)`
    /// when the snapshot lacks the file.
    pub fn suppressed(&self, target: &str, file: &str, line: u32) -> Option<bool> {
        let files = self.targets.get(target)?;
        let Some(lines) = files.get(file) else {
            return Some(false);
        };
        // Lines numbered from 1; line 1 has no line before it, and a line past the end has no
        // text.
        let at = |n: u32| -> Option<&str> {
            (n as usize)
                .checked_sub(1)
                .and_then(|i| lines.get(i))
                .map(String::as_str)
        };
        let carries = |n: u32| at(n).is_some_and(|t| MARKERS.iter().any(|m| t.contains(m)));
        Some(carries(line) || carries(line.saturating_sub(1)))
    }
}

/// Whether `path`, joined to a folder, stays inside it: relative, without `..`, a root or a
/// drive prefix. A finding's `file` and a target's name are both joined this way.
pub fn stays_inside(path: &str) -> bool {
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Sources {
        let mut s = Sources::default();
        s.add_file(
            "pr-1",
            "src/a.ts",
            [
                "// eslint-disable-next-line no-console", // 1
                "console.log(x);",                        // 2
                "let y = 1;",                             // 3
                "",                                       // 4
                "let z = eval(s); // @ts-ignore",         // 5
                "ok();",                                  // 6
                "# noqa two lines above",                 // 7
                "a();",                                   // 8
                "b();",                                   // 9
            ]
            .join("\n"),
        );
        s.add_target("pr-2");
        s
    }

    // docs/guides/ab-rubric-change.md: the line or the line before; two lines above does not count; line 1 has no
    // line before it; past the end has no text; no snapshot is unknown, a missing file is not.
    #[test]
    fn the_line_or_the_line_before_carries_a_marker() {
        let s = snapshot();
        let at = |line| s.suppressed("pr-1", "src/a.ts", line);
        assert_eq!(at(1), Some(true));
        assert_eq!(at(2), Some(true), "the line before carries it");
        assert_eq!(at(3), Some(false), "two lines above does not count");
        assert_eq!(at(5), Some(true));
        assert_eq!(at(6), Some(true));
        assert_eq!(at(7), Some(true));
        assert_eq!(at(9), Some(false), "two lines below a marker");
        assert_eq!(at(10), Some(false), "the line before the end carries none");
        assert_eq!(at(11), Some(false), "past the end");
        assert_eq!(s.suppressed("pr-1", "src/other.ts", 1), Some(false));
        assert_eq!(s.suppressed("pr-2", "src/a.ts", 1), Some(false));
        assert_eq!(s.suppressed("pr-3", "src/a.ts", 1), None);
        let mut one = Sources::default();
        one.add_file("t", "f", "x\n// eslint-disable-line".into());
        assert_eq!(
            one.suppressed("t", "f", 1),
            Some(false),
            "line 1 has no line before it"
        );
        for marker in MARKERS {
            let mut m = Sources::default();
            m.add_file("t", "f", format!("code {marker} x"));
            assert_eq!(m.suppressed("t", "f", 1), Some(true), "{marker}");
        }
        let mut near = Sources::default();
        near.add_file("t", "f", "#noqa\n# pylint:disable\n// nolint".into());
        for line in 1..=3 {
            assert_eq!(
                near.suppressed("t", "f", line),
                Some(false),
                "as written only"
            );
        }
    }

    #[test]
    fn paths_that_would_leave_the_folder() {
        for ok in ["src/a.rs", "a.rs", "./src/a.rs", "dir"] {
            assert!(stays_inside(ok), "{ok}");
        }
        for bad in ["../a.rs", "src/../../a.rs", "/etc/passwd", "", ".."] {
            assert!(!stays_inside(bad), "{bad}");
        }
    }
}
