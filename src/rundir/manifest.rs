//! `manifest.json`, the record a run directory keeps of where its figures came from: the run's
//! id, calibench's version, the command line, the experiment file and (for a run) the
//! experiment as read, its `--set` overrides, every input read with its SHA-256, the seed, the
//! bootstrap replicates and when it ran. One type: `run` and `sweep` write it; `report`,
//! `plan`, `accept` and `gate RUN_DIR` read it back, every problem named by field and line.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

/// The name of the record in a run directory.
pub const FILE: &str = "manifest.json";

/// `manifest.json`. `E` is the experiment as the run read it: written whole, and read back as
/// [`IgnoredAny`] by what needs only the rest (the experiment is read from its file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest<E = IgnoredAny> {
    pub run_id: String,
    pub calibench_version: String,
    pub command_line: Vec<String>,
    pub experiment_file: String,
    /// The experiment as read, defaults resolved (a run's; a sweep records none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<E>,
    /// `--set KEY=VALUE` overrides of the experiment file, as given (a run records them when
    /// there are any, a sweep always).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overrides: Option<Vec<String>>,
    /// Every file read, in order (a run's; a sweep records none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<InputFile>>,
    pub seed: u64,
    pub bootstrap: usize,
    pub started_at: String,
    pub finished_at: String,
}

/// An input file a run read: its path as given, its SHA-256 and its size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputFile {
    pub path: String,
    pub sha256: String,
    pub bytes: usize,
}

impl<E> Manifest<E> {
    /// The `--set` overrides, none when it records none.
    pub fn overrides(&self) -> &[String] {
        self.overrides.as_deref().unwrap_or_default()
    }

    /// The inputs it records, none for a sweep.
    pub fn inputs(&self) -> &[InputFile] {
        self.inputs.as_deref().unwrap_or_default()
    }
}

impl<E: Serialize> Manifest<E> {
    /// The record as a run directory holds it: pretty JSON and a newline.
    pub fn text(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_s_and_a_sweep_s_manifest_read_back_as_written() {
        let run: Manifest<serde_json::Value> = Manifest {
            run_id: "r".into(),
            calibench_version: "0.1.0".into(),
            command_line: vec!["calibench".into(), "run".into()],
            experiment_file: "e/experiment.toml".into(),
            experiment: Some(serde_json::json!({"name": "e"})),
            overrides: None,
            inputs: Some(vec![InputFile {
                path: "e/reviews.jsonl".into(),
                sha256: "00".into(),
                bytes: 3,
            }]),
            seed: 7,
            bootstrap: 2000,
            started_at: "2026-12-04T00:00:00Z".into(),
            finished_at: "2026-12-04T00:00:01Z".into(),
        };
        let text = String::from_utf8(run.text().unwrap()).unwrap();
        assert!(!text.contains("overrides"), "{text}");
        let back: Manifest = serde_json::from_str(&text).unwrap();
        assert_eq!(back.inputs(), run.inputs());
        assert!(back.experiment.is_some() && back.overrides().is_empty());
        // A sweep records its overrides even when there are none, and no inputs.
        let sweep: Manifest<()> = Manifest {
            experiment: None,
            overrides: Some(Vec::new()),
            inputs: None,
            ..back.clone().map_experiment()
        };
        let text = String::from_utf8(sweep.text().unwrap()).unwrap();
        assert!(
            text.contains("\"overrides\": []") && !text.contains("inputs"),
            "{text}"
        );
    }

    impl Manifest {
        fn map_experiment(self) -> Manifest<()> {
            Manifest {
                run_id: self.run_id,
                calibench_version: self.calibench_version,
                command_line: self.command_line,
                experiment_file: self.experiment_file,
                experiment: None,
                overrides: self.overrides,
                inputs: self.inputs,
                seed: self.seed,
                bootstrap: self.bootstrap,
                started_at: self.started_at,
                finished_at: self.finished_at,
            }
        }
    }
}
