//! A run's `pairs.csv`: every decision-ready delta's units, one row per unit (and repeat), as
//! `tables::pairs` writes it. `plan` resamples them; a noise floor pairs its units with the
//! A/B's.

use serde::Deserialize;

use crate::error::InputError;

/// The file's name in a run directory.
pub const FILE: &str = "pairs.csv";

/// One row of a run's `pairs.csv`, as `tables::pairs` writes it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct PairRecord {
    pub table: String,
    pub metric: String,
    pub unit: String,
    pub run: Option<u32>,
    pub baseline: f64,
    pub treatment: f64,
    pub difference: f64,
}

/// Reads a pairs table; a row that does not parse is refused with its line and column.
pub fn read(name: &str, bytes: &[u8]) -> Result<Vec<PairRecord>, InputError> {
    let mut reader = csv::Reader::from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| InputError::new(name, format!("not a CSV table: {e}")).at_line(1))?
        .clone();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            InputError::new(name, format!("not a CSV row: {e}")).at_line(line)
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let row: PairRecord = record.deserialize(Some(&headers)).map_err(|e| {
            let column = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => err
                    .field()
                    .and_then(|i| headers.get(i as usize))
                    .map(str::to_string),
                _ => None,
            };
            let mut error = InputError::new(name, e.to_string()).at_line(line);
            if let Some(c) = column {
                error = error.field(format!("column `{c}`"));
            }
            error.hint(
                "this file is written by `calibench run`; re-run the experiment to rewrite it",
            )
        })?;
        if !row.difference.is_finite() {
            return Err(InputError::new(name, "is not a finite number")
                .at_line(line)
                .field("column `difference`"));
        }
        rows.push(row);
    }
    Ok(rows)
}
