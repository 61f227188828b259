//! The tables' CSV text, written straight from a frame's arrays, byte for byte what polars' CSV
//! writer writes with its defaults: `,` between fields and `\n` after each row, a header of the
//! column names, a text quoted only when it holds `,`, `"`, `\n` or `\r` (with each `"`
//! doubled), `""` for an empty text and nothing for a missing value, `true`/`false`, integers
//! in full and floats as their shortest round-trip text (`zmij`, the formatter polars uses).
//!
//! polars' writer spends most of a findings table's time looking for a character to quote with
//! two searches per text, each a call for a few bytes; here one pass looks at sixteen bytes at
//! a time.
//! A frame holding a column of any other type is written by polars' writer instead
//! ([`handles`]); the tests hold both to the same text.

use std::io::Write;

use crate::bytes::ByteSet;
use polars::prelude::*;

/// A table's CSV text, a frame at a time, to `out`.
pub struct Csv<W: Write> {
    out: W,
    /// One frame's text, written to `out` in one call.
    text: Vec<u8>,
}

impl<W: Write> Csv<W> {
    /// Starts the table: its header, the names of `schema`'s columns.
    pub fn new(out: W, schema: &Schema) -> PolarsResult<Self> {
        let mut csv = Csv {
            out,
            text: Vec::new(),
        };
        for (i, name) in schema.iter_names().enumerate() {
            if i > 0 {
                csv.text.push(b',');
            }
            text(&mut csv.text, name.as_bytes());
        }
        csv.text.push(b'\n');
        csv.flush()?;
        Ok(csv)
    }

    /// Writes `df`'s rows, its columns in the order of the header.
    pub fn frame(&mut self, df: &DataFrame) -> PolarsResult<()> {
        // Each array column as one chunk; a column of one value (the run's id) has none.
        let arrays: Vec<Option<Series>> = df
            .columns()
            .iter()
            .map(|c| {
                c.as_scalar_column()
                    .is_none()
                    .then(|| c.as_materialized_series().rechunk())
            })
            .collect();
        let cells = df
            .columns()
            .iter()
            .zip(&arrays)
            .map(|(c, array)| match (array, c.as_scalar_column()) {
                (Some(series), _) => Cells::of(series),
                // Its text once, written on every row.
                (None, Some(s)) => {
                    let one = s.scalar().clone().into_series(c.name().clone());
                    let mut text = Vec::new();
                    Cells::of(&one)?.write(0, &mut text);
                    Ok(Cells::Same(text))
                }
                (None, None) => unreachable!("a column is an array or one value"),
            })
            .collect::<PolarsResult<Vec<Cells<'_>>>>()?;
        for row in 0..df.height() {
            for (i, column) in cells.iter().enumerate() {
                if i > 0 {
                    self.text.push(b',');
                }
                column.write(row, &mut self.text);
            }
            self.text.push(b'\n');
            // A table written as one frame (the pairs', the targets') goes out a megabyte at a
            // time, not grown whole first.
            if self.text.len() >= FLUSH_AT {
                self.flush()?;
            }
        }
        self.flush()
    }

    fn flush(&mut self) -> PolarsResult<()> {
        self.out.write_all(&self.text)?;
        self.text.clear();
        Ok(())
    }
}

/// How much CSV text is held before it is written.
const FLUSH_AT: usize = 1 << 20;

/// Whether every column of `schema` is of a type written here.
pub fn handles(schema: &Schema) -> bool {
    schema.iter_values().all(|dtype| {
        dtype.is_integer()
            || matches!(
                dtype,
                DataType::String
                    | DataType::Boolean
                    | DataType::Float32
                    | DataType::Float64
                    | DataType::Null
            )
    })
}

/// One column's cells, by type.
enum Cells<'a> {
    Text(Box<dyn Fn(usize) -> Option<&'a str> + 'a>),
    Flag(Box<dyn Fn(usize) -> Option<bool> + 'a>),
    /// Integers, as 64 bits (formatting an `i128` costs several times more).
    Signed(Box<dyn Fn(usize) -> Option<i64> + 'a>),
    Unsigned(Box<dyn Fn(usize) -> Option<u64> + 'a>),
    Real(Box<dyn Fn(usize) -> Option<f64> + 'a>),
    Real32(Box<dyn Fn(usize) -> Option<f32> + 'a>),
    Missing,
    Same(Vec<u8>),
}

impl<'a> Cells<'a> {
    /// `series` (of one chunk) as cells to write.
    fn of(series: &'a Series) -> PolarsResult<Self> {
        fn one<T>(chunks: impl Iterator<Item = T>) -> PolarsResult<T> {
            let mut chunks = chunks;
            match (chunks.next(), chunks.next()) {
                (Some(chunk), None) => Ok(chunk),
                _ => Err(PolarsError::ComputeError(
                    "a CSV column is written from one chunk".into(),
                )),
            }
        }
        // Each column's one array, read a cell at a time.
        macro_rules! cells {
            ($kind:ident, $get:ident) => {{
                let a = one(series.$get()?.downcast_iter())?;
                Cells::$kind(Box::new(move |i| a.get(i)))
            }};
        }
        macro_rules! whole {
            ($kind:ident, $get:ident, $as:ty) => {{
                let a = one(series.$get()?.downcast_iter())?;
                Cells::$kind(Box::new(move |i| a.get(i).map(<$as>::from)))
            }};
        }
        Ok(match series.dtype() {
            DataType::String => cells!(Text, str),
            DataType::Boolean => cells!(Flag, bool),
            DataType::Float64 => cells!(Real, f64),
            DataType::Float32 => cells!(Real32, f32),
            DataType::UInt8 => whole!(Unsigned, u8, u64),
            DataType::UInt16 => whole!(Unsigned, u16, u64),
            DataType::UInt32 => whole!(Unsigned, u32, u64),
            DataType::UInt64 => whole!(Unsigned, u64, u64),
            DataType::Int8 => whole!(Signed, i8, i64),
            DataType::Int16 => whole!(Signed, i16, i64),
            DataType::Int32 => whole!(Signed, i32, i64),
            DataType::Int64 => whole!(Signed, i64, i64),
            DataType::Null => Cells::Missing,
            other => {
                return Err(PolarsError::ComputeError(
                    format!("no CSV text for a column of {other}").into(),
                ))
            }
        })
    }

    /// Row `i`'s cell, appended to `out` (nothing for a missing value).
    fn write(&self, i: usize, out: &mut Vec<u8>) {
        match self {
            Cells::Text(get) => {
                if let Some(s) = get(i) {
                    text(out, s.as_bytes());
                }
            }
            Cells::Flag(get) => {
                if let Some(b) = get(i) {
                    out.extend_from_slice(if b { b"true" } else { b"false" });
                }
            }
            Cells::Signed(get) => whole(out, get(i)),
            Cells::Unsigned(get) => whole(out, get(i)),
            Cells::Real(get) => {
                if let Some(x) = get(i) {
                    out.extend_from_slice(zmij::Buffer::new().format(x).as_bytes());
                }
            }
            Cells::Real32(get) => {
                if let Some(x) = get(i) {
                    out.extend_from_slice(zmij::Buffer::new().format(x).as_bytes());
                }
            }
            Cells::Missing => {}
            Cells::Same(text) => out.extend_from_slice(text),
        }
    }
}

/// An integer cell: its digits, or nothing for a missing value.
fn whole(out: &mut Vec<u8>, n: Option<impl itoa::Integer>) {
    if let Some(n) = n {
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }
}

/// The bytes that make a text quoted: `,` `"` `\n` `\r`.
const QUOTED: ByteSet = ByteSet::new(b",\"\n\r", false);

/// Whether `s` holds a byte that makes it quoted.
fn needs_quotes(s: &[u8]) -> bool {
    QUOTED.find(s, 0).is_some()
}

/// Whether a text would be read as a formula by a spreadsheet: it begins with `=`, `+`, `-`,
/// `@`, a tab or a carriage return (OWASP's rule for CSV injection). Corpus strings (ids,
/// titles, names) reach the tables as written, so a target named `=cmd|' /C calc'!A0` would.
pub fn formula(s: &[u8]) -> bool {
    matches!(s.first(), Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r'))
}

/// A frame with each text a spreadsheet would read as a formula behind a `'` ([`formula`]):
/// what the CSV writer writes of it, for polars' writer to write the same.
pub fn guarded(df: &DataFrame) -> PolarsResult<DataFrame> {
    let columns = df
        .columns()
        .iter()
        .map(|c| -> PolarsResult<Column> {
            if c.dtype() != &DataType::String {
                return Ok(c.clone());
            }
            let texts: StringChunked = c
                .str()?
                .iter()
                .map(|t| {
                    t.map(|t| match formula(t.as_bytes()) {
                        true => format!("'{t}"),
                        false => t.to_string(),
                    })
                })
                .collect();
            Ok(texts.with_name(c.name().clone()).into_column())
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    DataFrame::new(df.height(), columns)
}

/// A text field: as it is, or quoted with its quotes doubled when it holds a byte that needs
/// it; `""` when empty, which an empty field (a missing value) is not. A text a spreadsheet
/// would read as a formula is written behind a `'`, which shows it as text.
fn text(out: &mut Vec<u8>, s: &[u8]) {
    if s.is_empty() {
        out.extend_from_slice(b"\"\"");
        return;
    }
    let guard: &[u8] = if formula(s) { b"'" } else { b"" };
    if !needs_quotes(s) {
        out.extend_from_slice(guard);
        out.extend_from_slice(s);
        return;
    }
    out.push(b'"');
    out.extend_from_slice(guard);
    for part in s.split_inclusive(|&b| b == b'"') {
        out.extend_from_slice(part);
        if part.ends_with(b"\"") {
            out.push(b'"');
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What polars' own writer makes of `df`.
    fn polars_text(df: &DataFrame) -> String {
        let mut text = Vec::new();
        CsvWriter::new(&mut text)
            .include_header(true)
            .finish(&mut df.clone())
            .unwrap();
        String::from_utf8(text).unwrap()
    }

    fn ours(frames: &[DataFrame]) -> String {
        let mut text = Vec::new();
        let mut csv = Csv::new(&mut text, frames[0].schema()).unwrap();
        for df in frames {
            csv.frame(df).unwrap();
        }
        String::from_utf8(text).unwrap()
    }

    // Texts that are quoted and texts that are not, with every byte polars looks for, missing
    // values of every type, floats at their edges and integers at theirs, and a column of one
    // value: the same text polars writes, whole or a frame at a time.
    #[test]
    fn a_frame_is_written_as_polars_writes_it() {
        let texts: Vec<Option<&str>> = vec![
            Some("plain"),
            Some(""),
            None,
            Some("a,b"),
            Some("say \"hi\""),
            Some("\""),
            Some("line\nbreak"),
            Some("cr\rhere"),
            Some("both \"q\", and comma"),
            Some("  spaces  "),
            Some("tab\there"),
            Some("ünïcødé — ‘quotes’"),
            Some("a long title that runs well past thirty-two bytes, with a comma"),
            Some("a long title that runs well past thirty-two bytes and has none"),
            Some(";"),
            Some("'single'"),
        ];
        let n = texts.len();
        let floats = [
            0.0,
            -0.0,
            0.1,
            0.65,
            1.0,
            100.0,
            1e-7,
            1.5e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            2.0 / 3.0,
            123_456_789.125,
            -42.5,
            5e-324,
        ];
        let mut df = DataFrame::new(
            n,
            vec![
                Column::new("text".into(), &texts),
                Column::new(
                    "count".into(),
                    (0..n as u64).map(|i| i * 1_000_003).collect::<Vec<_>>(),
                ),
                Column::new(
                    "maybe count".into(),
                    (0..n as u32)
                        .map(|i| (i % 3 != 0).then_some(i))
                        .collect::<Vec<_>>(),
                ),
                Column::new(
                    "signed".into(),
                    (0..n as i64)
                        .map(|i| {
                            if i % 2 == 0 {
                                i64::MIN + i
                            } else {
                                i64::MAX - i
                            }
                        })
                        .collect::<Vec<_>>(),
                ),
                Column::new("real".into(), &floats[..n]),
                Column::new(
                    "maybe real".into(),
                    floats[..n]
                        .iter()
                        .enumerate()
                        .map(|(i, x)| (i % 4 != 1).then_some(*x))
                        .collect::<Vec<_>>(),
                ),
                Column::new(
                    "single".into(),
                    floats[..n].iter().map(|x| *x as f32).collect::<Vec<f32>>(),
                ),
                Column::new(
                    "flag".into(),
                    (0..n)
                        .map(|i| match i % 3 {
                            0 => Some(true),
                            1 => Some(false),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                ),
                Column::full_null("nothing".into(), n, &DataType::Null),
                Column::new(
                    "quoted, \"name\"".into(),
                    (0..n as i32).map(|i| -i).collect::<Vec<_>>(),
                ),
            ],
        )
        .unwrap();
        df.insert_column(
            0,
            Column::new_scalar(
                "run_id".into(),
                Scalar::new(
                    DataType::String,
                    AnyValue::StringOwned("run, \"one\"".into()),
                ),
                n,
            ),
        )
        .unwrap();
        assert!(handles(df.schema()));
        let whole = polars_text(&df);
        assert_eq!(ours(std::slice::from_ref(&df)), whole);
        let parts = [df.slice(0, 5), df.slice(5, 1), df.slice(6, n - 6)];
        assert_eq!(ours(&parts), whole);
        // A frame of several chunks per column is written as one.
        let mut chunked = df.slice(0, 5);
        chunked.vstack_mut(&df.slice(5, n - 5)).unwrap();
        assert_eq!(ours(&[chunked]), whole);
    }

    #[test]
    fn a_frame_larger_than_what_is_held_is_written_whole() {
        // Rows of about 60 bytes, three times what is held before a write: the text goes out
        // in several writes, and reads as polars writes the frame.
        let n = 3 * FLUSH_AT / 60;
        let texts: Vec<String> = (0..n)
            .map(|i| format!("row {i}, a text long enough to cross the boundary"))
            .collect();
        let df = DataFrame::new(
            n,
            vec![
                Column::new("text".into(), &texts),
                Column::new("n".into(), (0..n as u64).collect::<Vec<_>>()),
            ],
        )
        .unwrap();
        let whole = polars_text(&df);
        assert!(whole.len() > 2 * FLUSH_AT, "{} bytes", whole.len());
        assert_eq!(ours(std::slice::from_ref(&df)), whole);
    }

    // Each of the four bytes is found wherever it sits, and no other (how, sixteen bytes at a
    // time or eight, `crate::bytes` tests).
    #[test]
    fn a_text_is_quoted_for_exactly_the_four_bytes() {
        for len in [1, 7, 8, 9, 15, 16, 17, 20, 31, 32, 33, 47] {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut s = vec![b'a'; len];
                    s[at] = b;
                    let want = matches!(b, b',' | b'"' | b'\n' | b'\r');
                    assert_eq!(needs_quotes(&s), want, "byte {b} at {at} of {len}");
                }
            }
        }
    }

    // Regression (hostile-4/13): a target named `=cmd|' /C calc'!A0` became a live formula when
    // a table was opened in a spreadsheet. A text that begins with `=`, `+`, `-`, `@`, a tab or a
    // carriage return is written behind a `'`; numbers are not texts and stay as they are; the
    // same text polars writes of the guarded frame.
    #[test]
    fn a_text_a_spreadsheet_would_run_is_written_behind_a_quote() {
        let texts = [
            "=cmd|' /C calc'!A0",
            "+44",
            "-3",
            "@SUM(1+1)",
            "\tx",
            "\rx",
            "=a,b",
            "a=b",
            "'already'",
        ];
        let df = DataFrame::new(
            texts.len(),
            vec![
                Column::new("text".into(), &texts),
                Column::new("n".into(), [-1i64, -2, -3, -4, -5, -6, -7, -8, -9]),
            ],
        )
        .unwrap();
        let text = ours(std::slice::from_ref(&df));
        assert_eq!(text, polars_text(&guarded(&df).unwrap()));
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(
            lines[..5],
            [
                "text,n",
                "'=cmd|' /C calc'!A0,-1",
                "'+44,-2",
                "'-3,-3",
                "'@SUM(1+1),-4"
            ]
        );
        assert!(
            text.contains("\"'\rx\",-6") && text.contains("\"'=a,b\",-7"),
            "{text}"
        );
        assert!(
            text.contains("\na=b,-8\n") && text.contains("\n'already',-9\n"),
            "{text}"
        );
    }

    #[test]
    fn a_column_of_another_type_is_left_to_polars() {
        let df = DataFrame::new(1, vec![Column::new("bytes".into(), [&b"\x00"[..]])]).unwrap();
        assert!(!handles(df.schema()));
    }
}
