//! `calibench init [DIR] --kind doc|code|queries|scores`: a corpus folder to start from, with a
//! few example lines made here from fixed rules (no randomness, so every `init` writes the same
//! bytes) and a commented `experiment.toml` that shows every key of its kind with its default and
//! a one-line meaning, and runs as written. A folder that holds anything is refused: `init` never
//! mixes its examples into someone's data.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::{Error, InputError};
use crate::generate::starter::{files, kind_name};
use crate::output::Render;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Writes DIR/experiment.toml (every key of its kind, with its default and what it \
means) and a few example lines of each corpus file the kind reads; `calibench run DIR` runs them. \
Exit status: 0 written, 2 DIR is not empty (nothing is written)."
)]
pub struct InitArgs {
    /// The folder to make (default: the current one, which must then be empty)
    pub dir: Option<std::path::PathBuf>,
    /// What the corpus holds
    #[arg(long, value_enum)]
    pub kind: crate::generate::starter::InitKind,
}

/// What `init` wrote.
#[derive(Clone, Debug, Serialize)]
pub struct Initialised {
    pub dir: PathBuf,
    pub kind: &'static str,
    pub files: Vec<String>,
}

impl Render for Initialised {
    fn human(&self) -> String {
        let dir = crate::text::shell_arg(&self.dir.display().to_string());
        let article = if self.kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!(
            "wrote {article} {} corpus to {dir}: {}\n  run it:      calibench run {dir}\n  then write your own lines over the examples (`calibench schema` prints each file's JSON Schema) and check them with `calibench validate {dir}`\n",
            self.kind,
            self.files.join(", ")
        )
    }
}

/// `--kind`'s value as it is typed.
fn flag(kind: crate::generate::starter::InitKind) -> String {
    use clap::ValueEnum;
    kind.to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

pub fn run(args: &InitArgs) -> Result<Initialised, Error> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let shown = dir.display().to_string();
    if dir.is_file() {
        return Err(
            InputError::new(shown, "is a file; init makes a corpus folder")
                .hint(format!(
                    "name a new folder: calibench init my-corpus --kind {}",
                    flag(args.kind)
                ))
                .into(),
        );
    }
    if dir.is_dir() {
        let mut entries = std::fs::read_dir(&dir).map_err(|e| Error::read(&dir, e))?;
        if let Some(first) = entries.next() {
            let first = first.map_err(|e| Error::read(&dir, e))?;
            return Err(InputError::new(
                shown,
                format!(
                    "is not empty (it holds {}): init writes example lines, and never beside someone's data",
                    first.file_name().to_string_lossy()
                ),
            )
            .hint(format!(
                "name a new folder: calibench init my-corpus --kind {}",
                flag(args.kind)
            ))
            .into());
        }
    }
    let mut files = files(args.kind);
    // The experiment is named after its folder, as a run of it would be by default.
    let folder = dir
        .canonicalize()
        .ok()
        .unwrap_or_else(|| dir.clone())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    if let Some(folder) = folder.filter(|f| {
        !f.is_empty()
            && f.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    }) {
        for (name, text) in &mut files {
            if name == "experiment.toml" {
                for example in ["\"my-review\"", "\"my-agent\"", "\"my-eval\""] {
                    *text = text.replacen(
                        &format!("name = {example}"),
                        &format!("name = \"{folder}\""),
                        1,
                    );
                }
            }
        }
    }
    if dir.is_dir() {
        // An empty folder that exists (the current one, say): each file whole, or not at all.
        for (name, text) in &files {
            crate::rundir::replace_file(&dir.join(name), text)?;
        }
    } else {
        let bytes: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|(n, t)| (n.clone(), t.clone().into_bytes()))
            .collect();
        crate::rundir::replace_dir(&dir, &bytes)?;
    }
    Ok(Initialised {
        dir,
        kind: kind_name(args.kind),
        files: files.into_iter().map(|(n, _)| n).collect(),
    })
}

impl super::Run for InitArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        Ok(ctx.answer(&run(&self)?, crate::exit::Verdict::Pass))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::reference::{combined, resolve};
    use crate::config::RawExperiment;
    use crate::generate::starter::{experiment, InitKind};
    use serde_json::Value;

    /// Every key an experiment may hold, by its dotted path (`arms.baseline.review.scale`).
    fn keys(node: &Value, root: &Value, at: &str, out: &mut Vec<String>) {
        let node = resolve(node, root);
        for n in combined(node, &["anyOf", "oneOf", "allOf"]) {
            keys(n, root, at, out);
        }
        if let Some(items) = node.get("items") {
            keys(items, root, at, out);
        }
        for (k, v) in node
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let path = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            out.push(path.clone());
            keys(v, root, &path, out);
        }
    }

    /// Whether `word` stands in `text` as a word of its own (not inside `float-gates`).
    fn has_word(text: &str, word: &str) -> bool {
        let is_part = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
        text.match_indices(word).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + word.len()..].chars().next();
            !before.is_some_and(is_part) && !after.is_some_and(is_part)
        })
    }

    // Issue 35: the experiment `init` writes shows every key of its kind. The keys come from the
    // experiment's derived JSON Schema (what `calibench schema experiment` prints), so a key
    // added to the experiment and not to these templates fails here.
    #[test]
    fn each_template_shows_every_key_of_its_kind() {
        let schema = serde_json::to_value(schemars::schema_for!(RawExperiment)).unwrap();
        let mut all = Vec::new();
        keys(&schema, &schema, "", &mut all);
        all.sort();
        all.dedup();
        for kind in [
            InitKind::Doc,
            InitKind::Code,
            InitKind::Queries,
            InitKind::Scores,
        ] {
            let text = experiment(kind);
            let wanted = all.iter().filter(|k| {
                let review = k.contains(".review");
                let confidence = k.contains(".confidence");
                let scores = k.starts_with("scores");
                let elsewhere =
                    k.starts_with("trust") || k.starts_with("gate") || k.starts_with("collect");
                // A review key of the other mode's policies only.
                let other_mode = |only: &[&str]| review && only.iter().any(|c| k.ends_with(c));
                match kind {
                    InitKind::Doc => !(confidence || scores || other_mode(&CODE_ONLY)),
                    InitKind::Code => !(confidence || scores || other_mode(&DOC_ONLY)),
                    InitKind::Queries => !review && !scores && !elsewhere && *k != "mode",
                    // A sweep replays reviews or queries, not imported scores.
                    InitKind::Scores => {
                        !review
                            && !confidence
                            && !elsewhere
                            && !k.starts_with("sweep")
                            && *k != "mode"
                            && *k != "primary"
                    }
                }
            });
            for key in wanted {
                let last = key.rsplit('.').next().unwrap();
                assert!(has_word(&text, last), "{kind:?}: `{key}` is not shown");
            }
        }
    }

    const CODE_ONLY: [&str; 9] = [
        "gate",
        "p0_gate",
        "review_mode",
        "demote_reviewers",
        "validation",
        "validation_budget",
        "route",
        "skip",
        "lint_ignore",
    ];
    const DOC_ONLY: [&str; 6] = ["gates", "P0", "P1", "P2", "P3", "fyi_floor"];

    #[test]
    fn every_kind_writes_the_same_bytes_twice() {
        for kind in [
            InitKind::Doc,
            InitKind::Code,
            InitKind::Queries,
            InitKind::Scores,
        ] {
            assert_eq!(files(kind), files(kind));
        }
    }
}
