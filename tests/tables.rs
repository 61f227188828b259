//! Many runs, one table (docs/guides/reports.md): every table of a run carries its `run_id`
//! (and the review, query and score tables their `arm`), so two runs' Parquet files read
//! together are one table that says which run each row came from.

mod common;

use std::fs::File;
use std::path::Path;

use common::calibench;
use polars::prelude::*;

fn read(path: &Path) -> DataFrame {
    ParquetReader::new(File::open(path).unwrap())
        .finish()
        .unwrap()
}

#[test]
fn two_runs_tables_read_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (id, corpus) in [
        ("one", "corpora/doc-review-ab"),
        // Runs whose tables have the same columns: a corpus that records usage adds its four
        // cost columns (docs/reference.md, "Cost and latency").
        ("two", "corpora/judge-bias"),
    ] {
        calibench()
            .current_dir(root)
            .args([
                "run",
                corpus,
                "--run-id",
                id,
                "--no-plots",
                "--bootstrap",
                "50",
                "-q",
            ])
            .arg("--runs-dir")
            .arg(dir.path().join("runs"))
            .arg("--reports-dir")
            .arg(dir.path().join("reports"))
            .assert()
            .success();
    }
    for table in ["targets", "findings", "pairs"] {
        let frames: Vec<DataFrame> = ["one", "two"]
            .iter()
            .map(|id| read(&dir.path().join(format!("runs/{id}/{table}.parquet"))))
            .collect();
        assert_eq!(
            frames[0].get_column_names()[0].as_str(),
            "run_id",
            "{table}"
        );
        let rows = frames[0].height() + frames[1].height();
        let mut all = frames[0].clone();
        all.vstack_mut(&frames[1]).unwrap();
        assert_eq!(all.height(), rows, "{table}");
        let ids = all
            .column("run_id")
            .unwrap()
            .as_materialized_series()
            .unique()
            .unwrap();
        assert_eq!(ids.len(), 2, "{table}");
        if table != "pairs" {
            let arms = all
                .column("arm")
                .unwrap()
                .as_materialized_series()
                .unique()
                .unwrap();
            assert_eq!(arms.len(), 2, "{table}");
        }
        // The CSV says the same.
        let csv =
            std::fs::read_to_string(dir.path().join(format!("runs/one/{table}.csv"))).unwrap();
        assert!(csv.starts_with("run_id,"), "{table}");
        assert!(csv.lines().nth(1).unwrap().starts_with("one,"), "{table}");
    }
}
