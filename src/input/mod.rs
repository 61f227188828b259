//! Reading and validating the files users give calibench. Every reader takes bytes and a name
//! for messages, and returns typed data or an [`InputError`] naming file, line and field.

pub mod calibration;
pub mod reliability;
pub mod toml;

use std::collections::HashMap;

use csv::StringRecord;

use crate::error::InputError;

/// A CSV reader over a file's bytes, as [`csv_with_header`] makes it: the cursor keeps the whole
/// file in reach, so that [`Lines`] can number records from it.
pub(crate) type CsvReader<'a> = csv::Reader<std::io::Cursor<&'a [u8]>>;

/// Numbers a CSV reader's records by the file's lines. The csv crate's own count is where it
/// started reading a record, before the line endings and blank lines it skips: one short in a
/// CRLF file (it counts the `\n` of a record's `\r\n` with the next record), and short by
/// every blank line before a record. A record's line here is that of its first byte.
pub(crate) struct Lines<'a> {
    data: &'a [u8],
    /// How far the file is counted, and the line of that byte.
    at: usize,
    line: u64,
}

impl<'a> Lines<'a> {
    pub(crate) fn of(reader: &CsvReader<'a>) -> Self {
        Lines {
            data: reader.get_ref().get_ref(),
            at: 0,
            line: 1,
        }
    }

    /// The line of the record (or error) at `position`. Records come in file order, so the
    /// count goes on from the last one: one pass over the file in all.
    pub(crate) fn line(&mut self, position: Option<&csv::Position>) -> u64 {
        let Some(p) = position else {
            return self.line;
        };
        let mut start = (p.byte() as usize).min(self.data.len());
        while start < self.data.len() && matches!(self.data[start], b'\r' | b'\n') {
            start += 1;
        }
        if start < self.at {
            (self.at, self.line) = (0, 1);
        }
        self.line += self.data[self.at..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        self.at = start;
        self.line
    }
}

/// A CSV reader over `bytes` (a UTF-8 byte-order mark skipped) and its trimmed header names.
/// A header is names, not data: one whose first cell is a number means the file has
/// no header row (its first data row would silently become the header), and one that names a
/// column twice would leave which of the two is read to chance. Both are refused; `expected`
/// is the header the reader wants, shown in the hint.
pub(crate) fn csv_with_header<'a>(
    name: &str,
    bytes: &'a [u8],
    expected: &str,
) -> Result<(CsvReader<'a>, Vec<String>), InputError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(std::io::Cursor::new(bytes));
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| csv_error(name, e))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    if let Some(first) = header
        .first()
        .filter(|h| h.parse::<f64>().is_ok_and(f64::is_finite))
    {
        return Err(InputError::new(
            name,
            format!("the header's first cell `{first}` is a number: the file has no header row"),
        )
        .at_line(1)
        .hint(format!("add a header row above the data: {expected}")));
    }
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(header.len());
    for (i, column) in header.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
        if let Some(first) = seen.insert(column.as_str(), i) {
            return Err(InputError::new(
                name,
                format!(
                    "column `{column}` is named twice in the header (columns {} and {})",
                    first + 1,
                    i + 1
                ),
            )
            .at_line(1)
            .hint("give every column its own name"));
        }
    }
    Ok((reader, header))
}

/// Calls `row(record, line)` for every data row that is not blank, stopping at the first error.
pub(crate) fn for_each_row(
    name: &str,
    reader: &mut CsvReader<'_>,
    mut row: impl FnMut(&StringRecord, u64) -> Result<(), InputError>,
) -> Result<(), InputError> {
    let mut lines = Lines::of(reader);
    let mut record = StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => return Err(csv_error_in(name, e, &mut lines)),
        }
        if record.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        row(&record, lines.line(record.position()))?;
    }
}

/// [`csv_error`], placed on its line by `lines`.
pub(crate) fn csv_error_in(name: &str, e: csv::Error, lines: &mut Lines<'_>) -> InputError {
    let line = e.position().is_some().then(|| lines.line(e.position()));
    let mut err = csv_error(name, e);
    err.line = line.or(err.line);
    err
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

    // Regression (issue 21): `confidence,correct,confidence` read the first column silently.
    #[test]
    fn a_header_naming_a_column_twice_is_refused() {
        let e = super::csv_with_header("t.csv", b"confidence,correct,confidence\n0.5,1,0.9\n", "x")
            .err()
            .unwrap();
        assert_eq!(e.line, Some(1));
        assert_eq!(
            e.problem,
            "column `confidence` is named twice in the header (columns 1 and 3)"
        );
        // Unnamed columns name nothing, so two of them are not a clash.
        assert!(super::csv_with_header("t.csv", b"a,,b,\n1,2,3,4\n", "x").is_ok());
        // A row of data where the header should be: refused as such, before the duplicates.
        let e = super::csv_with_header("t.csv", b"0.5,1,0.5,1\n", "`confidence,correct`")
            .err()
            .unwrap();
        assert!(e.problem.contains("no header row"), "{}", e.problem);
        assert_eq!(
            e.hint.as_deref(),
            Some("add a header row above the data: `confidence,correct`")
        );
    }

    // Regression (issue 34): in a CRLF file every line number was one too low (the csv crate
    // counts a record's `\n` with the next record), in every CSV reader. A CRLF file now gets the
    // numbers its LF twin gets: its rows, a ragged row and a row after a quoted line break.
    #[test]
    fn a_crlf_file_numbers_its_lines_as_an_lf_file_does() {
        let lf = "item,score\na,1\n\nb,\"two\nlines\"\nc,3\nd,4,5\n";
        let crlf = lf.replace('\n', "\r\n");
        let lines = |text: &str| {
            let (mut reader, header) =
                super::csv_with_header("t.csv", text.as_bytes(), "x").unwrap();
            assert_eq!(header, ["item", "score"]);
            let mut rows = Vec::new();
            let e = super::for_each_row("t.csv", &mut reader, |r, line| {
                rows.push((r[0].to_string(), line));
                Ok(())
            })
            .unwrap_err();
            (rows, e.line)
        };
        let (rows, error) = lines(lf);
        assert_eq!(rows, [("a".into(), 2), ("b".into(), 4), ("c".into(), 6)]);
        assert_eq!(error, Some(7));
        assert_eq!(lines(&crlf), (rows, error));
        // The first row of a file written by Windows tools, with a mark and CRLF.
        let marked = format!("\u{feff}{crlf}");
        assert_eq!(lines(&marked).1, Some(7));
    }
}
