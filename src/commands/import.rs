//! `calibench import FORMAT LOG... --arm LABEL --into CORPUS_DIR` (docs/guides/importing-logs.md): reads eval logs
//! of Inspect, promptfoo, lm-eval or a plain table as one arm's scores, and writes them into the
//! corpus folder's `scores.jsonl` beside the arms it already holds. Every log is read and
//! checked before the folder is touched; the file is replaced whole (written beside it and
//! renamed) under the folder's lock, so a reader sees the old file or the new one, and two
//! imports into one folder never interleave.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;

use crate::corpus::scores::{self, Score};
use crate::error::{Error, InputError};
use crate::import::{self, Format, Options, Tally};
use crate::output::Render;
use crate::rundir::{replace_file, DirLock};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Writes CORPUS_DIR/scores.jsonl, keeping the arms it holds. Scores come from the \
samples, never from a log's summary; a sample that errored or carries no score is missing, never 0. \
Exit status: 0 imported, 2 a log or the folder cannot be read as one arm (nothing is written)."
)]
pub struct ImportArgs {
    /// The logs' format
    #[arg(value_enum)]
    pub format: crate::import::Format,
    #[arg(required = true, help = Format::logs_help())]
    pub logs: Vec<std::path::PathBuf>,
    /// The label the scores are filed under (an experiment's arm `source`)
    #[arg(long)]
    pub arm: String,
    /// The corpus folder (created if needed)
    #[arg(long, value_name = "CORPUS_DIR")]
    pub into: std::path::PathBuf,
    /// Import an arm the folder already holds again, dropping its earlier lines
    #[arg(long)]
    pub replace: bool,
    /// promptfoo: the prompt × provider cell to read (provider id, prompt label, or
    /// `PROVIDER | PROMPT LABEL`), when the file holds several
    #[arg(long, value_name = "CELL")]
    pub pick: Option<String>,
}

/// What `import` did.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub format: Format,
    pub arm: String,
    pub task: String,
    pub into: PathBuf,
    /// Lines written for the arm.
    pub lines: usize,
    /// Lines of an earlier import of the arm that `--replace` dropped.
    pub replaced: usize,
    /// The arms the file holds now.
    pub arms: Vec<String>,
    pub tally: Tally,
}

pub fn run(args: &ImportArgs) -> Result<Report, Error> {
    let arm = args.arm.trim();
    if arm.is_empty() || arm != args.arm || arm.chars().any(char::is_control) {
        return Err(InputError::new("calibench import", format!("`{}` is not an arm label", args.arm))
            .field("--arm")
            .hint("a label such as baseline or gpt-4o-2024-08: no surrounding blanks, no control characters")
            .into());
    }
    let options = Options {
        pick: args.pick.clone(),
    };
    let imported = import::import(args.format, &args.logs, arm, &options)?;
    std::fs::create_dir_all(&args.into).map_err(|e| Error::write(&args.into, e))?;
    let _lock = DirLock::take_for(
        &args.into,
        "is being imported into",
        "imports into one folder run one at a time: wait for the other to finish",
    )?;
    let path = args.into.join(crate::corpus::files::File::Scores.name());
    let name = path.display().to_string();
    let mut kept: Vec<Score> = Vec::new();
    let mut replaced = 0;
    match std::fs::read(&path) {
        Ok(bytes) => {
            let (existing, problems) = scores::parse(&name, &bytes);
            if !problems.is_empty() {
                return Err(Error::Inputs(problems));
            }
            for s in existing {
                if s.arm.0 == arm {
                    replaced += 1;
                } else {
                    kept.push(s);
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::read(&path, e)),
    }
    if replaced > 0 && !args.replace {
        return Err(InputError::new(
            &name,
            format!(
                "already holds arm `{arm}` ({})",
                crate::text::count(replaced as u64, "line", "lines")
            ),
        )
        .field("--arm")
        .hint("choose another label, or add --replace to import this arm again")
        .into());
    }
    let lines = imported.scores.len();
    kept.extend(imported.scores);
    kept.sort_by(Score::order);
    let mut text = String::new();
    for s in &kept {
        // Plain data: serializing cannot fail.
        text.push_str(&serde_json::to_string(s).unwrap_or_default());
        text.push('\n');
    }
    replace_file(&path, &text)?;
    let arms: BTreeSet<String> = kept.iter().map(|s| s.arm.0.clone()).collect();
    Ok(Report {
        format: args.format,
        arm: arm.to_string(),
        task: imported.task,
        into: path,
        lines,
        replaced,
        arms: arms.into_iter().collect(),
        tally: imported.tally,
    })
}

impl Render for Report {
    fn human(&self) -> String {
        let t = &self.tally;
        let missing: usize = t.missing.values().sum();
        let count = crate::text::count;
        let mut s = format!(
            "imported arm `{}` (task `{}`) into {}: {} from {}, {}; {} scored, {} missing\n",
            self.arm,
            self.task,
            self.into.display(),
            count(self.lines as u64, "line", "lines"),
            count(t.logs as u64, "log", "logs"),
            count(t.samples as u64, "sample", "samples"),
            t.scored,
            missing,
        );
        if self.replaced > 0 {
            s += &format!(
                "  replaced {} of the earlier import of `{}`\n",
                crate::text::count(self.replaced as u64, "line", "lines"),
                self.arm
            );
        }
        for (why, n) in &t.missing {
            s += &format!("  missing ({why}): {n}\n");
        }
        for (how, n) in &t.conversions {
            s += &format!("  converted {how}: {n}\n");
        }
        for (scorer, n) in &t.not_per_item {
            s += &format!("  not a per-item score, not imported: {scorer} ({n} samples)\n");
        }
        if !t.unmapped.is_empty() {
            let fields: Vec<String> = t
                .unmapped
                .iter()
                .map(|(f, n)| format!("{f} ({n})"))
                .collect();
            s += &format!("  not imported: {}\n", fields.join(", "));
        }
        for note in &t.notes {
            s += &format!("  note: {note}\n");
        }
        s += &format!("  arms in the file: {}\n", self.arms.join(", "));
        s
    }
}

impl super::Run for ImportArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        Ok(ctx.answer(&run(&self)?, crate::exit::Verdict::Pass))
    }
}
