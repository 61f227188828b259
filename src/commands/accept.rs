//! `calibench accept RUN_DIR [--to DIR]`: stores a run's `metrics.json` (and its
//! `manifest.json`, to say where it came from) as the accepted baseline that gate policies
//! compare changes against. The accepted directory is itself a run directory: `gate` and
//! `report` read it like any other.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, InputError};
use crate::output::Render;
use crate::pipeline::{read_file, stored::read_run};
use crate::rundir::replace_dir;

#[derive(Debug, clap::Args)]
pub struct AcceptArgs {
    /// The run whose metrics become the accepted baseline (runs/<run-id>)
    pub run_dir: std::path::PathBuf,
    /// Where to store it (default: `accepted` beside the run, e.g. runs/accepted)
    #[arg(long)]
    pub to: Option<std::path::PathBuf>,
}

/// What `accept` did.
#[derive(Clone, Debug, Serialize)]
pub struct Accepted {
    pub run_id: String,
    pub to: PathBuf,
    /// The run it replaced, if the directory held one.
    pub replaced: Option<String>,
}

const FILES: [&str; 2] = ["metrics.json", crate::rundir::manifest::FILE];

pub fn run(args: &AcceptArgs) -> Result<Accepted, Error> {
    // read_run checks both files parse as calibench wrote them and name the same run.
    let (metrics, _) = read_run(&args.run_dir)?;
    let to = args.to.clone().unwrap_or_else(|| {
        args.run_dir
            .parent()
            .unwrap_or(Path::new(""))
            .join("accepted")
    });
    if same_dir(&to, &args.run_dir) {
        return Err(
            InputError::new(to.display().to_string(), "is the run directory itself")
                .field("`--to`")
                .hint("accept into another directory, such as runs/accepted")
                .into(),
        );
    }
    let replaced = if to.exists() {
        check_replaceable(&to)?;
        read_run(&to).ok().map(|(m, _)| m.run_id)
    } else {
        None
    };
    let mut files = Vec::new();
    for name in FILES {
        files.push((name.to_string(), read_file(&args.run_dir.join(name))?));
    }
    replace_dir(&to, &files)?;
    Ok(Accepted {
        run_id: metrics.run_id,
        to,
        replaced,
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `accept` replaces the directory whole, so it must hold nothing but an earlier acceptance.
fn check_replaceable(to: &Path) -> Result<(), Error> {
    if !to.is_dir() {
        return Err(
            InputError::new(to.display().to_string(), "is a file, not a directory")
                .field("`--to`")
                .into(),
        );
    }
    let entries = std::fs::read_dir(to).map_err(|e| Error::read(to, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::read(to, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !FILES.contains(&name.as_str()) {
            return Err(InputError::new(
                to.display().to_string(),
                format!("holds {name}, which accept would delete"),
            )
            .field("`--to`")
            .hint("accept replaces the whole directory: give one of its own, such as runs/accepted")
            .into());
        }
    }
    Ok(())
}

impl Render for Accepted {
    fn human(&self) -> String {
        let mut s = format!(
            "accepted {} → {}\n",
            self.run_id,
            self.to.join("metrics.json").display()
        );
        if let Some(old) = &self.replaced {
            s += &format!("  (it replaces {old})\n");
        }
        s
    }
}

impl super::Run for AcceptArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        Ok(ctx.answer(&run(&self)?, crate::exit::Verdict::Pass))
    }
}
