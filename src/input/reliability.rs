//! Reliability data for `calibench alpha` (SPEC §2.4).
//!
//! * **long** CSV: a header with `unit`, `rater` and `value` columns (others ignored), one row
//!   per rating; JSON Lines with the same three keys is accepted too (`value: null` = missing).
//! * **wide** CSV: header `rater,<unit1>,<unit2>,…`, one row per rater; with `--units-as-rows`
//!   the transpose, header `unit,<rater1>,<rater2>,…`, one row per unit. A wide file with more
//!   raters than units is read but draws a warning naming that flag: it is probably transposed.
//! * `auto`: long if the header names `unit`, `rater` and `value`, else wide. A file whose first
//!   non-blank character is `{` is JSON Lines (long only).
//!
//! An empty cell, `.` or `NA` is missing. At the nominal level any label is a category, and
//! numeric strings compare as numbers (`1` and `1.0` are one category); the other levels need
//! finite numbers, and ratio needs them non-negative. A rater who rates one unit twice is an
//! error, not a silent overwrite. Every problem names the file, line and column.
//!
//! Readers take bytes, not paths, so that they can be fuzzed and tested without files.

use std::collections::HashMap;

use super::{csv_with_header, for_each_row, missing_columns};
use crate::corpus::{Id, Lines};
use crate::error::InputError;
use crate::stats::alpha::{Level, Units};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Auto,
    Long,
    /// `rater,<unit1>,<unit2>,…`: one row per rater.
    Wide,
    /// `unit,<rater1>,<rater2>,…`: one row per unit, as R irr, irrCAC, SPSS KALPHA and pandas
    /// write it (`--units-as-rows`).
    UnitsAsRows,
}

impl Layout {
    /// The name `calibench alpha` reports.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Auto => "auto",
            Layout::Long => "long",
            Layout::Wide => "wide",
            Layout::UnitsAsRows => "wide, units as rows",
        }
    }
}

/// The data as read, with what the summary reports about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// One entry per unit in the file, including units with fewer than two values.
    pub units: Units,
    pub raters: usize,
    /// The layout actually read (`Long`, `Wide` or `UnitsAsRows`).
    pub layout: Layout,
    /// What the command should tell the user on stderr: the data was read, but may not mean
    /// what the user thinks (a wide file with more raters than units is probably transposed).
    pub warnings: Vec<String>,
}

/// Reads reliability data from `bytes`; `name` is how errors refer to the file.
pub fn read(name: &str, bytes: &[u8], layout: Layout, level: Level) -> Result<Table, InputError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'{') {
        if matches!(layout, Layout::Wide | Layout::UnitsAsRows) {
            return Err(InputError::new(name, "JSON Lines input is always long")
                .hint("drop --layout wide and --units-as-rows, or give a wide layout as CSV"));
        }
        return read_jsonl(name, bytes, level);
    }

    let expected = match layout {
        Layout::Long => "`unit,rater,value`",
        Layout::Wide => "`rater,<unit1>,<unit2>,…`",
        Layout::UnitsAsRows => "`unit,<rater1>,<rater2>,…`",
        Layout::Auto => "`unit,rater,value` (long) or `rater,<unit1>,<unit2>,…` (wide)",
    };
    let (reader, header) = csv_with_header(name, bytes, expected)?;
    if header.iter().all(|h| h.is_empty()) {
        return Err(InputError::new(name, "the file is empty: no header row")
            .at_line(1)
            .hint("long layout needs a `unit,rater,value` header; wide a `rater,<unit>,…` one"));
    }
    let has = |col: &str| header.iter().any(|h| h == col);
    let long = has("unit") && has("rater") && has("value");
    match (layout, long) {
        (Layout::Long, false) => {
            let missing: Vec<&str> = ["unit", "rater", "value"]
                .into_iter()
                .filter(|c| !has(c))
                .collect();
            Err(InputError::new(name, missing_columns(&missing))
                .at_line(1)
                .hint("long layout needs columns named unit, rater and value"))
        }
        (Layout::Long, true) | (Layout::Auto, true) => read_long_csv(name, reader, &header, level),
        (Layout::Wide, _) | (Layout::Auto, false) => {
            read_wide_csv(name, reader, &header, level, false)
        }
        (Layout::UnitsAsRows, _) => read_wide_csv(name, reader, &header, level, true),
    }
}

/// Turns cell text into a value: `Ok(None)` for missing, a number, or (nominal) a label code.
struct CellParser {
    level: Level,
    labels: HashMap<Key, u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Number(u64),
    Label(String),
}

impl CellParser {
    fn new(level: Level) -> Self {
        CellParser {
            level,
            labels: HashMap::new(),
        }
    }

    fn parse(&mut self, raw: &str) -> Result<Option<f64>, (String, Option<String>)> {
        let text = raw.trim();
        if text.is_empty() || text == "." || text == "NA" {
            return Ok(None);
        }
        let number = text.parse::<f64>().ok().filter(|v| v.is_finite());
        if self.level == Level::Nominal {
            let key = match number {
                Some(v) => Key::Number((v + 0.0).to_bits()),
                None => Key::Label(text.to_string()),
            };
            let next = self.labels.len() as u32;
            return Ok(Some(f64::from(*self.labels.entry(key).or_insert(next))));
        }
        match number {
            None => Err((
                format!("`{text}` is not a finite number, and the {} level needs numbers", self.level),
                Some("use --level nominal for category labels; `.`, `NA` or an empty cell mark a missing value".into()),
            )),
            Some(v) if self.level == Level::Ratio && v < 0.0 => Err((
                format!("{text} is negative; the ratio level needs values with a true zero (≥ 0)"),
                Some("use --level interval for values that can be negative".into()),
            )),
            Some(v) => Ok(Some(v)),
        }
    }
}

fn cell_error(
    name: &str,
    line: u64,
    field: String,
    (problem, hint): (String, Option<String>),
) -> InputError {
    let e = InputError::new(name, problem).at_line(line).field(field);
    match hint {
        Some(h) => e.hint(h),
        None => e,
    }
}

/// Reads either wide layout: one row per rater (`rater,<unit1>,…`) or, with `units_as_rows`,
/// one row per unit (`unit,<rater1>,…`, the transpose many tools write).
fn read_wide_csv(
    name: &str,
    mut reader: csv::Reader<&[u8]>,
    header: &[String],
    level: Level,
    units_as_rows: bool,
) -> Result<Table, InputError> {
    let (row_kind, column_kind) = if units_as_rows {
        ("unit", "rater")
    } else {
        ("rater", "unit")
    };
    let expected = format!("{row_kind},<{column_kind}1>,<{column_kind}2>,…");
    let column_names = &header[1..];
    if column_names.is_empty() {
        return Err(
            InputError::new(name, format!("the header names no {column_kind}"))
                .at_line(1)
                .hint(format!(
                    "this layout is `{expected}`; long layout needs unit, rater and value columns"
                )),
        );
    }

    let mut cells = CellParser::new(level);
    let mut row_names: HashMap<String, u64> = HashMap::new();
    // One row of values per rater (or unit); NaN marks a missing value (values are finite
    // otherwise).
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for_each_row(name, &mut reader, |record, line| {
        let row_name = record.get(0).unwrap_or("").trim();
        if row_name.is_empty() {
            return Err(
                InputError::new(name, format!("the {row_kind} name is empty"))
                    .at_line(line)
                    .field(format!("column \"{}\"", header[0])),
            );
        }
        if let Some(first) = row_names.insert(row_name.to_string(), line) {
            return Err(InputError::new(
                name,
                format!("{row_kind} `{row_name}` has a second row (the first is on line {first})"),
            )
            .at_line(line));
        }
        let mut row = Vec::with_capacity(column_names.len());
        for (i, raw) in record.iter().skip(1).enumerate() {
            let value = cells.parse(raw).map_err(|p| {
                cell_error(name, line, format!("column \"{}\"", column_names[i]), p)
            })?;
            row.push(value.unwrap_or(f64::NAN));
        }
        rows.push(row);
        Ok(())
    })?;
    if rows.is_empty() {
        return Err(
            InputError::new(name, format!("no {row_kind} rows after the header"))
                .hint(format!("this layout has one row per {row_kind}")),
        );
    }

    let values = rows.iter().flatten().filter(|v| !v.is_nan()).count();
    let push = |units: &mut Units, buf: &[f64]| {
        // Values were checked finite by the cell parser.
        units
            .push_unit(buf)
            .map_err(|e| InputError::new(name, e.to_string()))
    };
    let mut buf = Vec::new();
    let mut warnings = Vec::new();
    let (units, raters) = if units_as_rows {
        let mut units = Units::with_capacity(rows.len(), values);
        for row in &rows {
            buf.clear();
            buf.extend(row.iter().copied().filter(|v| !v.is_nan()));
            push(&mut units, &buf)?;
        }
        (units, column_names.len())
    } else {
        let mut units = Units::with_capacity(column_names.len(), values);
        for u in 0..column_names.len() {
            buf.clear();
            buf.extend(rows.iter().map(|r| r[u]).filter(|v| !v.is_nan()));
            push(&mut units, &buf)?;
        }
        if rows.len() > column_names.len() {
            warnings.push(format!(
                "{name}: {} raters (rows) but only {} units (columns): the file is probably one \
                 row per unit, as R irr, irrCAC, SPSS KALPHA and pandas write it; if so, read it \
                 with --units-as-rows",
                rows.len(),
                column_names.len()
            ));
        }
        (units, rows.len())
    };
    Ok(Table {
        units,
        raters,
        layout: if units_as_rows {
            Layout::UnitsAsRows
        } else {
            Layout::Wide
        },
        warnings,
    })
}

/// One rating of the long layout before grouping.
struct Rating {
    unit: u32,
    rater: u32,
    /// NaN for a missing value.
    value: f64,
    line: u64,
}

/// Groups long-layout ratings into units, refusing a rater who rates a unit twice.
struct LongBuilder {
    units: HashMap<String, u32>,
    raters: HashMap<String, u32>,
    ratings: Vec<Rating>,
}

impl LongBuilder {
    fn new() -> Self {
        LongBuilder {
            units: HashMap::new(),
            raters: HashMap::new(),
            ratings: Vec::new(),
        }
    }

    fn push(&mut self, unit: &str, rater: &str, value: Option<f64>, line: u64) {
        let next = self.units.len() as u32;
        let unit = *self.units.entry(unit.to_string()).or_insert(next);
        let next = self.raters.len() as u32;
        let rater = *self.raters.entry(rater.to_string()).or_insert(next);
        self.ratings.push(Rating {
            unit,
            rater,
            value: value.unwrap_or(f64::NAN),
            line,
        });
    }

    fn finish(mut self, name: &str) -> Result<Table, InputError> {
        if self.ratings.is_empty() {
            return Err(InputError::new(name, "no ratings after the header")
                .hint("long layout has one row per (unit, rater, value)"));
        }
        self.ratings.sort_by_key(|r| (r.unit, r.rater, r.line));
        for pair in self.ratings.windows(2) {
            if pair[0].unit == pair[1].unit && pair[0].rater == pair[1].rater {
                let unit = key_name(&self.units, pair[0].unit);
                let rater = key_name(&self.raters, pair[0].rater);
                return Err(InputError::new(
                    name,
                    format!(
                        "rater `{rater}` rates unit `{unit}` a second time (first on line {})",
                        pair[0].line
                    ),
                )
                .at_line(pair[1].line)
                .hint("each rater gives at most one value per unit"));
            }
        }
        let values = self.ratings.iter().filter(|r| !r.value.is_nan()).count();
        let mut units = Units::with_capacity(self.units.len(), values);
        let mut buf = Vec::new();
        let mut i = 0;
        for unit in 0..self.units.len() as u32 {
            buf.clear();
            while i < self.ratings.len() && self.ratings[i].unit == unit {
                if !self.ratings[i].value.is_nan() {
                    buf.push(self.ratings[i].value);
                }
                i += 1;
            }
            units
                .push_unit(&buf)
                .map_err(|e| InputError::new(name, e.to_string()))?;
        }
        Ok(Table {
            units,
            raters: self.raters.len(),
            layout: Layout::Long,
            warnings: Vec::new(),
        })
    }
}

fn key_name(map: &HashMap<String, u32>, id: u32) -> &str {
    map.iter()
        .find(|(_, &v)| v == id)
        .map_or("?", |(k, _)| k.as_str())
}

fn read_long_csv(
    name: &str,
    mut reader: csv::Reader<&[u8]>,
    header: &[String],
    level: Level,
) -> Result<Table, InputError> {
    let col = |c: &str| header.iter().position(|h| h == c).unwrap_or(0);
    let (unit_col, rater_col, value_col) = (col("unit"), col("rater"), col("value"));
    let mut cells = CellParser::new(level);
    let mut builder = LongBuilder::new();
    for_each_row(name, &mut reader, |record, line| {
        let get = |i: usize| record.get(i).unwrap_or("").trim();
        let (unit, rater) = (get(unit_col), get(rater_col));
        for (field, text) in [("unit", unit), ("rater", rater)] {
            if text.is_empty() {
                return Err(InputError::new(name, format!("the {field} is empty"))
                    .at_line(line)
                    .field(format!("column \"{field}\"")));
            }
        }
        let value = cells
            .parse(get(value_col))
            .map_err(|p| cell_error(name, line, "column \"value\"".into(), p))?;
        builder.push(unit, rater, value, line);
        Ok(())
    })?;
    builder.finish(name)
}

/// One line of a long JSON Lines reliability file as written.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct RawRating {
    pub unit: Id,
    pub rater: Id,
    /// A number, a string the level reads (`"3"`, `"NA"`), or null for a missing value.
    #[serde(deserialize_with = "written")]
    #[schemars(required)]
    pub value: Option<RawValue>,
}

/// A rating's value as written.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(untagged, expecting = "must be a number, a string or null")]
pub enum RawValue {
    Number(serde_json::Number),
    Text(String),
}

/// An `Option` that must be written: `null` is `None`, a missing key is refused.
fn written<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<RawValue>, D::Error> {
    serde::Deserialize::deserialize(d)
}

fn read_jsonl(name: &str, bytes: &[u8], level: Level) -> Result<Table, InputError> {
    let mut cells = CellParser::new(level);
    let mut builder = LongBuilder::new();
    const LINES: Lines = Lines {
        holds: "each line holds one object with unit, rater and value",
        hints: &[("value", "write null for a missing value")],
    };
    for raw in crate::corpus::records::<RawRating>(name, bytes, &LINES) {
        let (line, raw) = raw?;
        let text = match &raw.value {
            None => None,
            Some(RawValue::Number(n)) => Some(n.to_string()),
            Some(RawValue::Text(s)) => Some(s.clone()),
        };
        let value = match text {
            None => None,
            Some(t) => cells
                .parse(&t)
                .map_err(|p| cell_error(name, line, "field `value`".into(), p))?,
        };
        builder.push(raw.unit.0.trim(), raw.rater.0.trim(), value, line);
    }
    builder.finish(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::alpha::alpha;

    const WIDE: &str = "rater,1,2,3,4,5,6,7,8,9,10,11,12
A,1,2,3,3,2,1,4,1,2,.,.,.
B,1,2,3,3,2,2,4,1,2,5,.,3
C,.,3,3,3,2,3,4,2,2,5,1,.
D,1,2,3,3,2,4,4,1,2,5,1,.
";

    fn read_str(text: &str, layout: Layout, level: Level) -> Result<Table, InputError> {
        read("t.csv", text.as_bytes(), layout, level)
    }

    fn long_from_wide() -> String {
        let mut out = String::from("unit,rater,value,comment\n");
        for row in WIDE.lines().skip(1) {
            let cells: Vec<&str> = row.split(',').collect();
            for (u, v) in cells[1..].iter().enumerate() {
                out.push_str(&format!("u{},{},{},x\n", u + 1, cells[0], v));
            }
        }
        out
    }

    #[test]
    fn wide_reference_example_reads_and_matches() {
        let t = read_str(WIDE, Layout::Auto, Level::Interval).unwrap();
        assert_eq!((t.units.len(), t.raters, t.layout), (12, 4, Layout::Wide));
        let a = alpha(&t.units, Level::Interval).unwrap().alpha.unwrap();
        assert!((a - 951.0 / 1120.0).abs() < 1e-12);
    }

    /// The canonical example as R irr, irrCAC, SPSS KALPHA and pandas write it: one row per unit.
    fn units_as_rows() -> String {
        let rows: Vec<Vec<&str>> = WIDE.lines().map(|r| r.split(',').collect()).collect();
        let mut out = String::from("unit");
        for row in &rows[1..] {
            out += &format!(",{}", row[0]);
        }
        out.push('\n');
        for u in 1..rows[0].len() {
            out += rows[0][u];
            for row in &rows[1..] {
                out += &format!(",{}", row[u]);
            }
            out.push('\n');
        }
        out
    }

    // Regression (issue 18): a transposed file was read with units as raters, silently.
    #[test]
    fn units_as_rows_reads_the_transpose_and_matches_the_reference() {
        let text = units_as_rows();
        let t = read_str(&text, Layout::UnitsAsRows, Level::Interval).unwrap();
        assert_eq!((t.units.len(), t.raters), (12, 4));
        assert_eq!(t.layout, Layout::UnitsAsRows);
        assert!(t.warnings.is_empty());
        let wide = read_str(WIDE, Layout::Wide, Level::Interval).unwrap();
        assert_eq!(t.units, wide.units);
        let a = alpha(&t.units, Level::Interval).unwrap().alpha.unwrap();
        assert!((a - 951.0 / 1120.0).abs() < 1e-12);

        // Read as rater rows, the same file has 12 "raters" and 4 "units": a warning says so.
        let misread = read_str(&text, Layout::Auto, Level::Interval).unwrap();
        assert_eq!((misread.units.len(), misread.raters), (4, 12));
        assert_eq!(misread.warnings.len(), 1);
        assert!(
            misread.warnings[0].contains("--units-as-rows"),
            "{:?}",
            misread.warnings
        );
        assert!(misread.warnings[0].contains("12 raters (rows) but only 4 units"));
        // The proper orientation draws none.
        assert!(wide.warnings.is_empty());
    }

    #[test]
    fn units_as_rows_refuses_a_unit_twice_and_jsonl() {
        let e = read_str(
            "unit,a,b\nu1,1,2\nu1,2,2\n",
            Layout::UnitsAsRows,
            Level::Interval,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(
            e.problem.contains("unit `u1` has a second row"),
            "{}",
            e.problem
        );
        let e = read(
            "t.jsonl",
            b"{\"unit\":1}\n",
            Layout::UnitsAsRows,
            Level::Interval,
        )
        .unwrap_err();
        assert!(e.problem.contains("always long"));
    }

    // Regression (issue 21): with no header row, the first rater's values became unit names
    // and α came out 1.000 instead of 0.923.
    #[test]
    fn a_wide_file_without_a_header_row_is_refused() {
        let headless: String = WIDE.lines().skip(1).map(|l| format!("{l}\n")).collect();
        let numeric = headless
            .replace('A', "1")
            .replace('B', "2")
            .replace('C', "3")
            .replace('D', "4");
        let e = read_str(&numeric, Layout::Auto, Level::Interval).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.problem.contains("no header row"), "{}", e.problem);
        assert!(e.hint.unwrap().contains("`rater,<unit1>,<unit2>,…` (wide)"));
        let e = read_str(&numeric, Layout::UnitsAsRows, Level::Interval).unwrap_err();
        assert!(e.hint.unwrap().contains("unit,<rater1>,<rater2>,…"));
    }

    #[test]
    fn long_layout_gives_the_same_units_as_wide() {
        let long = read_str(&long_from_wide(), Layout::Auto, Level::Ordinal).unwrap();
        let wide = read_str(WIDE, Layout::Wide, Level::Ordinal).unwrap();
        assert_eq!(long.layout, Layout::Long);
        assert_eq!(long.units, wide.units);
        assert_eq!(long.raters, 4);
    }

    #[test]
    fn jsonl_long_layout_reads_numbers_strings_and_nulls() {
        let text = r#"{"unit": "a", "rater": "x", "value": 1}
{"unit": "a", "rater": "y", "value": "1.0"}

{"unit": 7, "rater": "x", "value": null}
{"unit": 7, "rater": "y", "value": "NA"}
"#;
        let t = read("t.jsonl", text.as_bytes(), Layout::Auto, Level::Nominal).unwrap();
        assert_eq!(t.units.len(), 2);
        assert_eq!(t.units.unit(0).len(), 2);
        assert_eq!(
            t.units.unit(0)[0],
            t.units.unit(0)[1],
            "1 and \"1.0\" are one category"
        );
        assert!(t.units.unit(1).is_empty());
    }

    #[test]
    fn nominal_accepts_labels_and_numeric_strings_compare_as_numbers() {
        let t = read_str(
            "rater,u1,u2,u3\nA,yes,1,no\nB,yes,1.00,yes\n",
            Layout::Auto,
            Level::Nominal,
        )
        .unwrap();
        assert_eq!(t.units.unit(0)[0], t.units.unit(0)[1]);
        assert_eq!(t.units.unit(1)[0], t.units.unit(1)[1]);
        assert_ne!(t.units.unit(2)[0], t.units.unit(2)[1]);
    }

    #[test]
    fn numeric_levels_refuse_labels_with_line_and_column() {
        let e = read_str(
            "rater,u1,u2\nA,1,2\nB,3,high\n",
            Layout::Auto,
            Level::Ordinal,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(e.field.as_deref(), Some("column \"u2\""));
        assert!(
            e.problem.contains("`high` is not a finite number"),
            "{}",
            e.problem
        );
        assert!(e.hint.unwrap().contains("--level nominal"));
    }

    #[test]
    fn ratio_refuses_negative_values() {
        let e = read_str(
            "unit,rater,value\n1,a,-2\n1,b,3\n",
            Layout::Auto,
            Level::Ratio,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.problem.contains("negative"));
    }

    #[test]
    fn a_rater_rating_a_unit_twice_is_refused() {
        let e = read_str(
            "unit,rater,value\n1,a,2\n1,b,3\n1,a,4\n",
            Layout::Auto,
            Level::Interval,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.problem.contains("first on line 2"), "{}", e.problem);
        let e = read_str("rater,u1\nA,1\nA,2\n", Layout::Auto, Level::Interval).unwrap_err();
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn ragged_rows_and_empty_files_are_refused() {
        let e = read_str("rater,u1,u2\nA,1\n", Layout::Auto, Level::Interval).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.problem.contains("fields"), "{}", e.problem);
        assert!(read_str("", Layout::Auto, Level::Interval).is_err());
        assert!(read_str("rater,u1\n", Layout::Auto, Level::Interval).is_err());
        assert!(read_str("rater\nA\n", Layout::Auto, Level::Interval).is_err());
    }

    #[test]
    fn forced_long_layout_names_the_missing_columns() {
        let e = read_str("rater,u1\nA,1\n", Layout::Long, Level::Interval).unwrap_err();
        assert_eq!(e.problem, "the header has no `unit` or `value` column");
    }

    #[test]
    fn jsonl_errors_name_line_and_field() {
        let e = read(
            "t.jsonl",
            b"{\"unit\":1,\"rater\":\"a\",\"value\":1}\n{\"unit\":1}\n",
            Layout::Auto,
            Level::Interval,
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(2), Some("field `rater`"))
        );
        let e = read(
            "t.jsonl",
            b"{\"unit\":1,\"rater\":\"a\",\"value\":[1]}\n",
            Layout::Auto,
            Level::Interval,
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("field `value`"));
        let e = read("t.jsonl", b"{\"unit\":1,\n", Layout::Auto, Level::Interval).unwrap_err();
        assert!(e.problem.starts_with("not a JSON object"));
    }

    #[test]
    fn byte_order_mark_and_blank_rows_are_tolerated() {
        let text = format!("\u{feff}{}", "rater,u1,u2\nA,1,2\n,,\nB,1,3\n");
        let t = read_str(&text, Layout::Auto, Level::Interval).unwrap();
        assert_eq!(t.raters, 2);
    }
}
