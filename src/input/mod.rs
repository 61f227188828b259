//! Reading and validating the files users give calibench. Every reader takes bytes and a name
//! for messages, and returns typed data or an [`InputError`] naming file, line and field.

pub mod calibration;
pub mod reliability;

use csv::StringRecord;

use crate::error::InputError;

/// A CSV reader over `bytes` (a UTF-8 byte-order mark skipped) and its trimmed header names.
pub(crate) fn csv_with_header<'a>(
    name: &str,
    bytes: &'a [u8],
) -> Result<(csv::Reader<&'a [u8]>, Vec<String>), InputError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|e| csv_error(name, e))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    Ok((reader, header))
}

/// Calls `row(record, line)` for every data row that is not blank, stopping at the first error.
pub(crate) fn for_each_row(
    name: &str,
    reader: &mut csv::Reader<&[u8]>,
    mut row: impl FnMut(&StringRecord, u64) -> Result<(), InputError>,
) -> Result<(), InputError> {
    let mut record = StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => return Err(csv_error(name, e)),
        }
        if record.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        row(&record, record.position().map_or(0, |p| p.line()))?;
    }
}

/// Converts a CSV parser error into an input error at its line.
pub(crate) fn csv_error(name: &str, e: csv::Error) -> InputError {
    let line = e.position().map(|p| p.line());
    let problem = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("the row has {len} fields but the header has {expected_len}")
        }
        csv::ErrorKind::Utf8 { .. } => "the row is not valid UTF-8".to_string(),
        _ => format!("unreadable CSV: {e}"),
    };
    let err = InputError::new(name, problem);
    match line {
        Some(l) => err.at_line(l),
        None => err,
    }
}

/// "the header has no `a` column" / "no `a` or `b` column" / "no `a`, `b` or `c` column".
pub(crate) fn missing_columns(missing: &[&str]) -> String {
    let names: Vec<String> = missing.iter().map(|c| format!("`{c}`")).collect();
    let list = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("the header has no {list} column")
}

#[cfg(test)]
mod tests {
    #[test]
    fn missing_columns_reads_as_a_sentence() {
        assert_eq!(
            super::missing_columns(&["a"]),
            "the header has no `a` column"
        );
        assert_eq!(
            super::missing_columns(&["a", "b", "c"]),
            "the header has no `a`, `b` or `c` column"
        );
    }
}
