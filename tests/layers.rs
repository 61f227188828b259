//! Dependencies point one way (docs/architecture.md, "Layers"): each top-level module of
//! `src/` may name (`crate::x`) only modules of lower layers, so the core never reaches up into
//! what renders or runs it. A module's own tests (`#[cfg(test)] mod tests`, at the end of the
//! file) may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom first; the modules of one layer may not name each other either way round
/// unless listed in the same string in that order (lower first).
const LAYERS: &[&[&str]] = &[
    &["bytes", "text", "error", "exit", "stats"],
    &["output", "rundir"],
    &["policy"],
    &["corpus"],
    &["input", "import"],
    &[
        "replay",
        "trust",
        "decision",
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

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
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
