//! The documentation: the reference in `docs/` is what the binary prints, every relative link
//! in the README and `docs/` resolves (file and anchor), no text cites a specification that is
//! not in the repository, and the README stays a first screen, not a manual.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod common;

use common::calibench;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The README and every Markdown file under `docs/`.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root().join("README.md"), root().join("corpora/README.md")];
    walk(&root().join("docs"), &mut out);
    out.sort();
    out
}

/// The text outside fenced code blocks and inline code spans.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code spans hold no links.
        let mut inside = false;
        for part in line.split('`') {
            if !inside {
                out += part;
            }
            inside = !inside;
        }
        out.push('\n');
    }
    out
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_` kept, spaces made
/// `-`, the rest dropped; a repeated anchor gets `-1`, `-2`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let mut slug = String::new();
        for c in heading.chars() {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                slug.extend(c.to_lowercase());
            } else if c == ' ' {
                slug.push('-');
            }
        }
        let mut unique = slug.clone();
        let mut n = 1;
        while seen.contains(&unique) {
            unique = format!("{slug}-{n}");
            n += 1;
        }
        seen.insert(unique);
    }
    // Explicit anchors, `<a id="x"></a>`.
    for (i, _) in text.match_indices("<a id=\"") {
        let rest = &text[i + 7..];
        if let Some(end) = rest.find('"') {
            seen.insert(rest[..end].to_string());
        }
    }
    seen
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let prose = prose(&text);
        let mut rest = prose.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            rest = &rest[end..];
            if target.starts_with("http") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target, None),
            };
            let path = if file.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap().join(file)
            };
            if !path.exists() {
                broken.push(format!("{}: {target}: no such file", doc.display()));
                continue;
            }
            if let Some(a) = anchor {
                let at = std::fs::read_to_string(&path).unwrap_or_default();
                if !anchors(&at).contains(a) {
                    broken.push(format!("{}: {target}: no such heading", doc.display()));
                }
            }
        }
    }
    assert!(checked > 50, "{checked} links");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_reference_is_what_the_binary_prints() {
    let printed = calibench().arg("reference").output().unwrap();
    assert!(printed.status.success());
    let committed = std::fs::read(root().join("docs/reference.md")).unwrap();
    assert!(
        printed.stdout == committed,
        "docs/reference.md is not what `calibench reference` prints: run `cargo run -- reference > docs/reference.md`"
    );
}

#[test]
fn no_text_cites_a_specification_outside_the_repository() {
    let mut files = documents();
    fn rust(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                rust(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    rust(&root().join("src"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(!text.contains("SPEC §"), "{} cites SPEC §", f.display());
    }
}

#[test]
fn the_readme_is_a_first_screen_not_a_manual() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 400, "README.md has {lines} lines");
    // What a newcomer needs before anything else: install, the two commands, their own data.
    let first_screen: String = readme.lines().take(60).collect::<Vec<_>>().join("\n");
    for needed in [
        "cargo install --locked --path .",
        "install.sh | sh",
        "cargo run --release -- run",
        "cargo test",
        "reviews.jsonl",
    ] {
        assert!(
            first_screen.contains(needed),
            "the first screen lacks {needed}"
        );
    }
}

/// The README's quickstart shows a run of the hand-written corpus in `tests/fixtures/quickstart`:
/// its experiment is the one the README prints, and its decision and verdict lines are what
/// `calibench run` prints.
#[test]
fn the_readme_quickstart_is_what_the_run_prints() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let corpus = root().join("tests/fixtures/quickstart");
    let experiment = std::fs::read_to_string(corpus.join("experiment.toml")).unwrap();
    let start = readme
        .find("```toml\nname = \"my-ab\"")
        .expect("the quickstart's experiment");
    let shown = &readme[start + "```toml\n".len()..];
    let shown = &shown[..shown.find("```").unwrap()];
    assert_eq!(shown, experiment, "the README's experiment.toml");
    // Every input line the quickstart shows is a line of the corpus the test runs.
    let quickstart = &readme[readme.find("## Your own A/B in five minutes").unwrap()..];
    let quickstart = &quickstart[..quickstart.find("\n## ").unwrap()];
    let mut lines = 0;
    for (shown, file) in [
        ("{\"target\"", "reviews.jsonl"),
        ("{\"item_id\"", "verdicts.jsonl"),
    ] {
        let corpus_lines = std::fs::read_to_string(corpus.join(file)).unwrap();
        for line in quickstart.lines().filter(|l| l.starts_with(shown)) {
            assert!(
                corpus_lines.lines().any(|l| l == line),
                "the README shows a {file} line the corpus does not hold:\n{line}"
            );
            lines += 1;
        }
    }
    assert!(lines >= 4, "{lines} input lines checked");
    let dir = tempfile::tempdir().unwrap();
    let out = calibench()
        .arg("run")
        .arg(&corpus)
        .arg("--runs-dir")
        .arg(dir.path().join("runs"))
        .arg("--reports-dir")
        .arg(dir.path().join("reports"))
        .args(["--no-plots", "--run-id", "my-ab-20261127T000113Z"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let printed = String::from_utf8_lossy(&out.stdout);
    let block = &readme[readme.find("$ calibench run .\n").unwrap()..];
    let block = &block[..block.find("```").unwrap()];
    let mut checked = 0;
    for line in block
        .lines()
        .filter(|l| l.contains("decision:") || l.contains(" - ") || l.contains("verdict:"))
    {
        assert!(
            printed.contains(line),
            "the README shows a line the run does not print:\n{line}\n\n{printed}"
        );
        checked += 1;
    }
    assert!(checked >= 4, "{checked} lines checked");
}

/// Every `calibench sweep` example the README and the threshold-sweep guide show is what the
/// command prints: each shown command is run (from the shown flags) and each line it shows,
/// up to an elided `…`, is a line of the output with the runs folder as shown.
#[test]
fn the_sweep_examples_are_what_the_sweep_prints() {
    let mut checked = 0;
    for doc in ["README.md", "docs/guides/threshold-sweep.md"] {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        for (at, _) in text.match_indices("$ calibench sweep ") {
            let block = &text[at + 2..];
            let block = &block[..block.find("```").unwrap()];
            let mut lines = block.lines();
            let mut command = String::new();
            for line in lines.by_ref() {
                let line = line.trim();
                match line.strip_suffix('\\') {
                    Some(part) => command.push_str(part),
                    None => {
                        command.push_str(line);
                        break;
                    }
                }
            }
            let words: Vec<String> = command
                .split_whitespace()
                .skip(1)
                .map(|w| w.trim_matches('\'').to_string())
                .collect();
            let dir = tempfile::tempdir().unwrap();
            let out = calibench()
                .current_dir(root())
                .args(&words)
                .arg("--runs-dir")
                .arg(dir.path().join("runs"))
                .arg("--reports-dir")
                .arg(dir.path().join("reports"))
                .arg("--no-plots")
                .output()
                .unwrap();
            assert!(out.status.success(), "{doc}: `{command}`: {out:?}");
            let printed = String::from_utf8_lossy(&out.stdout)
                .replace(&format!("{}/", dir.path().display()), "");
            for line in lines.take_while(|l| !l.trim_start().starts_with('…')) {
                assert!(
                    printed.lines().any(|p| p == line),
                    "{doc}: `{command}` does not print\n{line}\n\n{printed}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked} lines checked");
}
