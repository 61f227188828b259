//! A run directory as stored: read back (`metrics.json` and `manifest.json`, every problem
//! named by file, line and field) for `report`, `plan`, `accept` and `gate RUN_DIR`; and a
//! report rendered and written beside the others.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::read_file;
use crate::error::{Error, InputError};
use crate::model::Metrics;
use crate::report::{self, Rendered};
use crate::rundir::manifest::{self, Manifest};
use crate::rundir::{self, replace_dir};

/// Renders, turning a drawing failure into an error that names the run.
pub fn render(m: &Metrics, about: &Manifest, with_plots: bool) -> Result<Rendered, Error> {
    report::render(m, about, with_plots).map_err(|e| {
        Error::Write(std::io::Error::other(format!(
            "report of {}: {e}",
            about.run_id
        )))
    })
}

/// Reads what a report is rendered from. Every problem names the file, line and field.
pub fn read_run(run_dir: &Path) -> Result<(Metrics, Manifest), Error> {
    if !run_dir.is_dir() {
        return Err(
            InputError::new(run_dir.display().to_string(), "is not a run directory")
                .hint("give a directory that `calibench run` wrote, such as runs/<run-id>")
                .into(),
        );
    }
    let path = run_dir.join("metrics.json");
    if let Ok(raw) = read_file(&path) {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&raw) {
            refuse_sweep(
                &path,
                &v,
                "report, plan and accept read a run of an experiment",
            )?;
        }
    }
    let metrics: Metrics = read_json(&path)?;
    let about: Manifest = read_json(&run_dir.join(manifest::FILE))?;
    if about.run_id != metrics.run_id {
        return Err(InputError::new(
            run_dir.join(manifest::FILE).display().to_string(),
            format!(
                "names run `{}` but metrics.json names `{}`",
                about.run_id, metrics.run_id
            ),
        )
        .field("run_id")
        .hint("the two files come from different runs; re-run the experiment")
        .into());
    }
    // The id names the report's folder: it must be one plain name, whatever the file says.
    rundir::check_id(
        &about.run_id,
        &run_dir.join(manifest::FILE).display().to_string(),
    )
    .map_err(|e| e.field("`run_id`"))?;
    Ok((metrics, about))
}

/// A sweep's run directory is not a run: its `metrics.json` holds a `sweep`, and its report is
/// the sweep's own. `what` says what the command reads instead.
pub fn refuse_sweep(path: &Path, metrics: &serde_json::Value, what: &str) -> Result<(), Error> {
    if metrics.get("sweep").is_some() && metrics.get("experiment").is_none() {
        return Err(InputError::new(
            path.display().to_string(),
            "is a threshold sweep's metrics.json, not a run's",
        )
        .field("`sweep`")
        .hint(format!(
            "{what} (`calibench run` writes one); a sweep's report is written by `calibench sweep` (or `calibench run` for a declared [[sweep]]): re-run it to rewrite the report"
        ))
        .into());
    }
    Ok(())
}

/// A JSON file a run directory holds, read as `T`: every problem named by file, line and
/// field.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, Error> {
    let bytes = read_file(path)?;
    let de = &mut serde_json::Deserializer::from_slice(&bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        let mut problem = InputError::new(path.display().to_string(), inner.to_string())
            .at_line(inner.line() as u64)
            .hint("this file is written by `calibench run`; re-run the experiment to rewrite it");
        if field != "." {
            problem = problem.field(field);
        }
        problem.into()
    })
}

/// Writes `reports_dir/<run-id>` through a temporary directory, replacing an earlier rendering
/// of the same run whole.
pub fn write(reports_dir: &Path, run_id: &str, rendered: &Rendered) -> Result<PathBuf, Error> {
    replace_dir(&reports_dir.join(run_id), &rendered.files)
}
