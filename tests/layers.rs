//! Dependencies point one way (docs/architecture.md, "Layers"): each top-level module of
//! `src/` may name (`crate::x`) only modules of lower layers, so the core never reaches up into
//! what renders or runs it. A module's own tests (`#[cfg(test)] mod tests`, at the end of the
//! file) may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom first; the modules of one layer may not name each other either way round
/// unless listed in the same string in that order (lower first).
const LAYERS: &[&[&str]] = &[
    &["bytes", "text", "error", "exit", "threads", "stats"],
    &["output", "rundir"],
    &["policy"],
    &["corpus"],
    &["input", "import"],
    &[
        "replay",
        "trust",
        "decision",
        "sizing",
        "sequential",
        "sweep",
        "humans",
        "human_units",
    ],
    &["model"],
    &["gate", "collect"],
    &["config"],
    &["analysis", "report"],
    &["pipeline"],
    &["generate", "schema_walk", "commands"],
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, but a module's tests kept in a file of their own.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !is_test_module(&path) {
            out.push(path);
        }
    }
}

/// Whether `path` (`src/replay/review/tests.rs`) is a test module its parent declares under
/// `#[cfg(test)]` (in `src/replay/review.rs` or `src/replay/review/mod.rs`): test code, which
/// may reach anywhere, as a test module inside a file may.
fn is_test_module(path: &Path) -> bool {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return false;
    };
    let stem = stem.to_string_lossy();
    let parents = [dir.join("mod.rs"), dir.with_extension("rs")];
    parents.iter().any(|p| {
        std::fs::read_to_string(p).is_ok_and(|text| {
            text.contains(&format!("#[cfg(test)]\nmod {stem};"))
                || text.contains(&format!("#[cfg(test)]\npub(crate) mod {stem};"))
        })
    })
}

/// The top-level module a file belongs to (`src/replay/arm.rs` → `replay`).
fn module_of(path: &Path) -> String {
    let rel = path.strip_prefix(src()).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The modules `text` names as `crate::<module>`, before its test module.
fn named(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or(text);
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // `crate::` in a comment or doc link counts too: a doc that points up is a dependency
        // of the reader's attention, and usually of the code soon after.
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

/// (layer, position in its layer) of each module.
fn ranks() -> BTreeMap<&'static str, (usize, usize)> {
    let mut out = BTreeMap::new();
    for (layer, modules) in LAYERS.iter().enumerate() {
        for (pos, m) in modules.iter().enumerate() {
            out.insert(*m, (layer, pos));
        }
    }
    out
}

#[test]
fn every_module_is_in_a_layer() {
    let ranks = ranks();
    let mut all = Vec::new();
    files(&src(), &mut all);
    let modules: BTreeSet<String> = all
        .iter()
        .map(|p| module_of(p))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    for m in &modules {
        assert!(
            ranks.contains_key(m.as_str()),
            "src/{m} is in no layer of tests/layers.rs (and docs/architecture.md)"
        );
    }
}

#[test]
fn dependencies_point_down() {
    let ranks = ranks();
    let mut all = Vec::new();
    files(&src(), &mut all);
    let mut upward = Vec::new();
    for path in &all {
        let from = module_of(path);
        if from == "lib" || from == "main" {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let Some(&here) = ranks.get(from.as_str()) else {
            continue;
        };
        for to in named(&text) {
            if to == from {
                continue;
            }
            let Some(&there) = ranks.get(to.as_str()) else {
                continue;
            };
            if there >= here {
                upward.push(format!(
                    "{} names crate::{to}, which is not below {from}",
                    path.strip_prefix(src().parent().unwrap())
                        .unwrap()
                        .display()
                ));
            }
        }
    }
    assert!(upward.is_empty(), "{}", upward.join("\n"));
}

#[test]
fn the_check_sees_an_upward_name() {
    // The check can fail: a replay file naming the report is caught.
    let ranks = ranks();
    let names = named(
        "use crate::report::document;\nfn f() {}\n#[cfg(test)]\nmod tests { use crate::cli; }",
    );
    assert_eq!(names, BTreeSet::from(["report".to_string()]));
    assert!(ranks["report"] > ranks["replay"]);
}

#[test]
fn commands_do_not_call_each_other() {
    // A command is a thin edge over the pipeline and the core: what two commands share lives
    // below them (`pipeline`, `gate`, `report`, …), never in one of them.
    let dir = src().join("commands");
    // A command is a file `commands/<name>.rs` or a folder `commands/<name>/`.
    let mut siblings: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let mut inside = Vec::new();
            files(&path, &mut inside);
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            siblings.push((name, inside));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if name != "mod" {
                siblings.push((name, vec![path]));
            }
        }
    }
    let mut calls = Vec::new();
    for (name, paths) in &siblings {
        for path in paths {
            let text = std::fs::read_to_string(path).unwrap();
            let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or(&text);
            // `super::` leads to `commands` from a command's own file (`run.rs`,
            // `collect/mod.rs`), and to the command itself from its parts (`collect/calls.rs`).
            let own_file = path.parent() == Some(dir.as_path())
                || path.file_name().is_some_and(|f| f == "mod.rs");
            let up = if own_file {
                "super::"
            } else {
                "super::super::"
            };
            // The first segment of each such path or `crate::commands::…` path (each item's,
            // in a `use super::{a, b::c}` group): the module of `commands` it names.
            let mut heads: Vec<String> = Vec::new();
            for prefix in [up, "crate::commands::"] {
                for (i, _) in code.match_indices(prefix) {
                    if prefix == "super::" && code[..i].ends_with("super::") {
                        continue;
                    }
                    let rest = &code[i + prefix.len()..];
                    let items = match rest.strip_prefix('{') {
                        Some(group) => &group[..group.find('}').unwrap_or(group.len())],
                        None => &rest[..rest.find([';', '(', ' ', '\n']).unwrap_or(rest.len())],
                    };
                    for item in items.split(',') {
                        let head = item.trim().split("::").next().unwrap_or("").trim();
                        heads.push(head.to_string());
                    }
                }
            }
            for (other, _) in siblings.iter().filter(|(o, _)| o != name) {
                if heads.iter().any(|h| h == other) {
                    calls.push(format!(
                        "{} names the command module {other}",
                        path.strip_prefix(src().parent().unwrap())
                            .unwrap()
                            .display()
                    ));
                }
            }
        }
    }
    assert!(calls.is_empty(), "{}", calls.join("\n"));
}

/// A file's code before its test module.
fn code_of(text: &str) -> &str {
    text.split("#[cfg(test)]\nmod ").next().unwrap_or(text)
}

/// The sibling modules of the folder `dir` (`src/pipeline`): each `.rs` file but `mod.rs`, and
/// each subfolder, with the files that make it.
fn siblings(dir: &Path) -> Vec<(String, Vec<PathBuf>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let mut inside = Vec::new();
            files(&path, &mut inside);
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                inside,
            ));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if stem != "mod" && dir != src() {
                out.push((stem, vec![path]));
            }
        }
    }
    out.sort();
    out
}

/// The siblings `code` (of a file `depth` folders below the folder whose module path from the
/// crate is `module`) names: `super::x` (`super::super::x` one folder down) or
/// `crate::<module>::x`, each item of a `{…}` group.
fn sibling_names(code: &str, depth: usize, module: &str, names: &[String]) -> BTreeSet<String> {
    let up = "super::".repeat(depth);
    let mut out = BTreeSet::new();
    let prefixes = [up.clone(), format!("crate::{module}::")];
    for prefix in prefixes
        .iter()
        .filter(|p| !p.is_empty() && p.as_str() != "crate::::")
    {
        for (i, _) in code.match_indices(prefix.as_str()) {
            // `super::super::x` read as `super::` would name the folder's parent, not a sibling.
            if code[i + prefix.len()..].starts_with("super::") {
                continue;
            }
            if prefix.starts_with("super::") && code[..i].ends_with("super::") {
                continue;
            }
            let rest = &code[i + prefix.len()..];
            let items = match rest.strip_prefix('{') {
                Some(group) => &group[..group.find('}').unwrap_or(group.len())],
                None => {
                    &rest[..rest
                        .find([';', '(', ' ', '\n', ',', '>', ')', '}'])
                        .unwrap_or(rest.len())]
                }
            };
            for item in items.split(',') {
                let head = item.trim().split("::").next().unwrap_or("").trim();
                if names.iter().any(|n| n == head) {
                    out.insert(head.to_string());
                }
            }
        }
    }
    out
}

/// Every circle among the siblings of each folder of `src/`: a file (or subfolder) that names
/// a sibling which, directly or through others, names it back.
fn circles_in(root: &Path) -> Vec<String> {
    let mut dirs = vec![root.to_path_buf()];
    let mut found = Vec::new();
    while let Some(dir) = dirs.pop() {
        let sibs = siblings(&dir);
        let names: Vec<String> = sibs.iter().map(|(n, _)| n.clone()).collect();
        let module = dir
            .strip_prefix(root)
            .unwrap()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("::");
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (name, paths) in &sibs {
            for path in paths {
                let depth = path.strip_prefix(&dir).unwrap().components().count();
                let text = std::fs::read_to_string(path).unwrap();
                let mut named = sibling_names(code_of(&text), depth, &module, &names);
                named.remove(name);
                edges.entry(name.clone()).or_default().extend(named);
            }
        }
        // A circle is a sibling that reaches itself.
        for start in &names {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
            while let Some((at, route)) = stack.pop() {
                for next in edges.get(&at).into_iter().flatten() {
                    if next == start {
                        let mut circle = route.clone();
                        circle.push(start.clone());
                        // Each circle once: from its least member.
                        if route.iter().min() == Some(start) {
                            found.push(format!("{}: {}", dir.display(), circle.join(" -> ")));
                        }
                    } else if seen.insert(next.clone()) {
                        let mut longer = route.clone();
                        longer.push(next.clone());
                        stack.push((next.clone(), longer));
                    }
                }
            }
        }
        for (_, paths) in &sibs {
            if let Some(sub) = paths.first().and_then(|p| p.parent()).filter(|p| *p != dir) {
                if !dirs.contains(&sub.to_path_buf()) && sub.starts_with(&dir) {
                    dirs.push(sub.to_path_buf());
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

// Within a folder too, names point one way: two files that name each other (directly or round
// a longer circle) are one idea in two places, or a third file both should name.
#[test]
fn no_circle_inside_a_folder() {
    let circles = circles_in(&src());
    assert!(circles.is_empty(), "{}", circles.join("\n"));
}

#[test]
fn the_circle_check_sees_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("core/inner")).unwrap();
    std::fs::write(
        root.join("core/mod.rs"),
        "pub mod a;\npub mod b;\npub mod c;\n",
    )
    .unwrap();
    std::fs::write(root.join("core/a.rs"), "use super::b::B;\n").unwrap();
    std::fs::write(root.join("core/b.rs"), "use crate::core::{c, x};\n").unwrap();
    std::fs::write(
        root.join("core/c.rs"),
        "fn f() { super::a::g() }\n#[cfg(test)]\nmod tests { use super::super::b; }\n",
    )
    .unwrap();
    std::fs::write(root.join("core/inner/mod.rs"), "use super::super::a;\n").unwrap();
    let circles = circles_in(root);
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(
        circles[0].ends_with("core: a -> b -> c -> a"),
        "{circles:?}"
    );
    // Without c's call back to a, no circle.
    std::fs::write(root.join("core/c.rs"), "fn f() {}\n").unwrap();
    assert!(circles_in(root).is_empty());
}

/// The most lines a source file may have, and a function outside tests (docs/architecture.md,
/// "Limits"): past them a file holds more than one idea, and a function more than one step.
const FILE_LINES: usize = 1200;
const FUNCTION_LINES: usize = 150;

/// Each function of `text` (before its test module) longer than `limit` lines: (name, first
/// line, lines). rustfmt closes a function's body at the indentation of its `fn` line.
fn long_functions(text: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code_of(text).lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let signature = trimmed
            .trim_start_matches("pub ")
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("const ")
            .trim_start_matches("async ")
            .trim_start_matches("unsafe ");
        let Some(rest) = signature.strip_prefix("fn ") else {
            continue;
        };
        if line.trim_end().ends_with(';') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| l.trim_end() == close) {
            let length = end + 2;
            if length > limit {
                out.push((name, i + 1, length));
            }
        }
    }
    out
}

#[test]
fn no_file_or_function_past_its_limit() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let mut over = Vec::new();
    for path in &all {
        let text = std::fs::read_to_string(path).unwrap();
        let shown = path
            .strip_prefix(src().parent().unwrap())
            .unwrap()
            .display();
        let n = text.lines().count();
        if n > FILE_LINES {
            over.push(format!("{shown}: {n} lines (at most {FILE_LINES})"));
        }
        for (name, line, length) in long_functions(&text, FUNCTION_LINES) {
            over.push(format!(
                "{shown}:{line}: fn {name} is {length} lines (at most {FUNCTION_LINES})"
            ));
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn the_limits_check_sees_a_long_function() {
    let body = "    x();\n".repeat(5);
    let text = format!(
        "pub fn short() {{\n    y();\n}}\n\nimpl A {{\n    pub(crate) fn long(&self) {{\n{body}    }}\n}}\n#[cfg(test)]\nmod tests {{\n    fn also_long() {{\n{body}    }}\n}}\n"
    );
    assert_eq!(long_functions(&text, 5), [("long".to_string(), 6, 7)]);
    assert!(long_functions(&text, 7).is_empty());
}
