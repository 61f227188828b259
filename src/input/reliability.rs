//! Reliability data for `calibench alpha` (docs/reference.md).
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

mod fast;

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
    read_as::<Table>(name, bytes, layout, level)
}

/// Reads reliability data keeping who gave each value (for the alt-test), with the same
/// layouts, checks and messages as [`read`].
pub fn read_rated(
    name: &str,
    bytes: &[u8],
    layout: Layout,
    level: Level,
) -> Result<Rated, InputError> {
    read_as::<Rated>(name, bytes, layout, level)
}

/// The ratings with their raters, held sparsely: `values[u]` is unit u's (rater, value) pairs,
/// a missing value left out. Memory follows the ratings, not units × raters (a crowd of
/// 100,000 annotators who each rated three units is 300,000 pairs, not a matrix).
#[derive(Clone, Debug, PartialEq)]
pub struct Rated {
    /// Rater names in order of first appearance (wide: in file order).
    pub raters: Vec<String>,
    /// Unit names in order of first appearance.
    pub units: Vec<String>,
    pub values: Vec<Vec<(usize, f64)>>,
    pub layout: Layout,
    pub warnings: Vec<String>,
}

/// What a reader builds from the rows it reads: α's units, or the ratings with their raters.
trait Grouping: Sized {
    /// From a long file: `rows(sink)` reads every row into `sink`, and may be called again.
    fn long(name: &str, bytes: usize, rows: Rows<'_>) -> Result<Self, InputError>;
    /// From a long CSV file of plain rows, read in parallel when that gives exactly what
    /// [`Grouping::long`] gives (`fast`); `None` sends it to the general reader.
    fn fast_long(_bytes: &[u8], _columns: fast::Columns, _level: Level) -> Option<Self> {
        None
    }
    /// From a wide file, as read.
    fn wide(name: &str, wide: Wide) -> Result<Self, InputError>;
}

type Rows<'a> = &'a mut dyn FnMut(&mut dyn Sink) -> Result<(), Stop>;

/// A wide file as read: one row of values per row name, NaN for a missing value.
struct Wide {
    row_names: Vec<String>,
    column_names: Vec<String>,
    rows: Vec<Vec<f64>>,
    units_as_rows: bool,
}

impl Grouping for Table {
    fn long(name: &str, bytes: usize, rows: Rows<'_>) -> Result<Self, InputError> {
        group_long(name, bytes, rows)
    }
    fn fast_long(bytes: &[u8], columns: fast::Columns, level: Level) -> Option<Self> {
        fast::read(bytes, columns, level)
    }
    fn wide(name: &str, wide: Wide) -> Result<Self, InputError> {
        wide_units(name, wide)
    }
}

impl Grouping for Rated {
    fn long(name: &str, _: usize, rows: Rows<'_>) -> Result<Self, InputError> {
        let mut m = Matrix::default();
        match rows(&mut m) {
            Ok(()) | Err(Stop::Found) | Err(Stop::Interleaved) => {}
            Err(Stop::Bad(e)) => return Err(e),
        }
        if m.units.is_empty() {
            return Err(no_ratings(name));
        }
        if let Some((unit, rater, first, second)) = m.repeated {
            return Err(repeated(name, &unit, &rater, first, second));
        }
        Ok(Rated {
            raters: m.raters,
            units: m.units,
            values: m.values,
            layout: Layout::Long,
            warnings: Vec::new(),
        })
    }
    fn wide(_: &str, w: Wide) -> Result<Self, InputError> {
        let present = |(r, &v): (usize, &f64)| (!v.is_nan()).then_some((r, v));
        let (raters, units, values) = if w.units_as_rows {
            let values = w
                .rows
                .iter()
                .map(|row| row.iter().enumerate().filter_map(present).collect());
            (w.column_names, w.row_names, values.collect())
        } else {
            let values = (0..w.column_names.len())
                .map(|u| {
                    w.rows
                        .iter()
                        .map(|row| &row[u])
                        .enumerate()
                        .filter_map(present)
                        .collect()
                })
                .collect();
            (w.row_names, w.column_names, values)
        };
        Ok(Rated {
            raters,
            units,
            values,
            layout: if w.units_as_rows {
                Layout::UnitsAsRows
            } else {
                Layout::Wide
            },
            warnings: Vec::new(),
        })
    }
}

/// Collects a long file's ratings by unit and rater, remembering the first repeated rating.
#[derive(Default)]
struct Matrix {
    unit_ids: FastMap<u32>,
    rater_ids: FastMap<u32>,
    units: Vec<String>,
    raters: Vec<String>,
    values: Vec<Vec<(usize, f64)>>,
    lines: HashMap<(usize, usize), u64>,
    repeated: Option<(String, String, u64, u64)>,
}

impl Sink for Matrix {
    fn push(&mut self, unit: &str, rater: &str, value: Option<f64>, line: u64) -> Result<(), Stop> {
        // Ids in order of first appearance, a name allocated only when first seen.
        let u = id_of(&mut self.unit_ids, unit) as usize;
        if u == self.units.len() {
            self.units.push(unit.to_string());
            self.values.push(Vec::new());
        }
        let r = id_of(&mut self.rater_ids, rater) as usize;
        if r == self.raters.len() {
            self.raters.push(rater.to_string());
        }
        if let Some(first) = self.lines.insert((u, r), line) {
            self.repeated = Some((unit.to_string(), rater.to_string(), first, line));
            return Err(Stop::Found);
        }
        if let Some(v) = value {
            self.values[u].push((r, v));
        }
        Ok(())
    }
}

fn read_as<G: Grouping>(
    name: &str,
    bytes: &[u8],
    layout: Layout,
    level: Level,
) -> Result<G, InputError> {
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
        (Layout::Long, true) | (Layout::Auto, true) => {
            read_long_csv(name, bytes, &header, level, Route::Fastest)
        }
        (Layout::Wide, _) | (Layout::Auto, false) => {
            read_wide_csv(name, reader, &header, level, false)
        }
        (Layout::UnitsAsRows, _) => read_wide_csv(name, reader, &header, level, true),
    }
}

/// What the first cell of a wide header may say: it names the column of row names.
const ROW_TITLES: [&str; 16] = [
    "",
    "rater",
    "coder",
    "annotator",
    "judge",
    "observer",
    "model",
    "reviewer",
    "labeler",
    "labeller",
    "participant",
    "unit",
    "item",
    "subject",
    "case",
    "id",
];

/// A wide file whose first row is data (`A,1,2,3`) would lose that rater as the header, without
/// a word: a header whose first cell is a rater's name rather than a column title, above columns
/// named only by numbers, is refused. A header of titles (`rater,1,2,3`, `coder,u1,u2`) is read.
fn refuse_data_as_header(
    name: &str,
    header: &[String],
    row_kind: &str,
    expected: &str,
) -> Result<(), InputError> {
    let first = header[0].to_lowercase();
    let title = ROW_TITLES.iter().any(|t| {
        first == *t
            || first.strip_suffix('s') == Some(t)
            || first.replace(['_', ' '], "") == format!("{t}id")
    });
    let numbers = !header[1..].is_empty()
        && header[1..]
            .iter()
            .all(|c| c.parse::<f64>().is_ok_and(f64::is_finite));
    if title || !numbers {
        return Ok(());
    }
    Err(InputError::new(
        name,
        format!(
            "the first row `{}` looks like data, not a header: `{}` is no column title, and the columns are named only by numbers",
            header.join(","),
            header[0]
        ),
    )
    .at_line(1)
    .hint(format!(
        "add a header row above the data: {expected}; if `{}` is the title of the {row_kind} column, call it `{row_kind}`",
        header[0]
    )))
}

/// Turns cell text into a value: `Ok(None)` for missing, a number, or (nominal) a label code.
struct CellParser {
    level: Level,
    labels: HashMap<Key, u32, foldhash::fast::FixedState>,
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
            labels: HashMap::default(),
        }
    }

    fn parse(&mut self, raw: &str) -> Result<Option<f64>, (String, Option<String>)> {
        let text = raw.trim();
        if text.is_empty() || text == "." || text == "NA" {
            return Ok(None);
        }
        // A whole number of up to 15 digits is exactly the f64 `parse` reads it as; most
        // cells are one, and this spares the float parser.
        let digits = text.len() <= 15 && text.bytes().all(|b| b.is_ascii_digit());
        let number = if digits {
            Some(text.bytes().fold(0u64, |n, b| n * 10 + u64::from(b - b'0')) as f64)
        } else {
            text.parse::<f64>().ok().filter(|v| v.is_finite())
        };
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
fn read_wide_csv<G: Grouping>(
    name: &str,
    mut reader: super::CsvReader<'_>,
    header: &[String],
    level: Level,
    units_as_rows: bool,
) -> Result<G, InputError> {
    let (row_kind, column_kind) = if units_as_rows {
        ("unit", "rater")
    } else {
        ("rater", "unit")
    };
    let expected = format!("{row_kind},<{column_kind}1>,<{column_kind}2>,…");
    let column_names = &header[1..];
    refuse_data_as_header(name, header, row_kind, &expected)?;
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
    let mut names: Vec<String> = Vec::new();
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
        names.push(row_name.to_string());
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

    G::wide(
        name,
        Wide {
            row_names: names,
            column_names: column_names.to_vec(),
            rows,
            units_as_rows,
        },
    )
}

/// α's units of a wide file; a file of more raters than units draws a warning.
fn wide_units(name: &str, w: Wide) -> Result<Table, InputError> {
    let Wide {
        column_names,
        rows,
        units_as_rows,
        ..
    } = w;
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

/// A fast, fixed-seed hasher for the long reader's name tables (millions of look-ups; the
/// names are the user's own, so a flooding attack is not a concern here).
type FastMap<V> = HashMap<Box<str>, V, foldhash::fast::FixedState>;

/// Why a pass over a long file stopped early.
enum Stop {
    /// A unit's ratings are not on consecutive rows: read again, holding every rating.
    Interleaved,
    /// Found what the pass looked for (the lines of a repeated rating).
    Found,
    Bad(InputError),
}

impl From<InputError> for Stop {
    fn from(e: InputError) -> Self {
        Stop::Bad(e)
    }
}

/// Where the ratings of a long file go, row by row (`value` `None` for a missing value).
trait Sink {
    fn push(&mut self, unit: &str, rater: &str, value: Option<f64>, line: u64) -> Result<(), Stop>;
}

/// The id of `name` in `map`, given on first sight in order of appearance. Allocates only for
/// a name not seen before.
fn id_of(map: &mut FastMap<u32>, name: &str) -> u32 {
    if let Some(&id) = map.get(name) {
        return id;
    }
    let id = map.len() as u32;
    map.insert(name.into(), id);
    id
}

/// The error of a rater who rates a unit twice, with the lines of both ratings.
fn repeated(name: &str, unit: &str, rater: &str, first: u64, second: u64) -> InputError {
    InputError::new(
        name,
        format!("rater `{rater}` rates unit `{unit}` a second time (first on line {first})"),
    )
    .at_line(second)
    .hint("each rater gives at most one value per unit")
}

/// Groups ratings into units as they arrive, for a file whose units are contiguous (each unit's
/// ratings on consecutive rows, as exports write them unit by unit): only the unit being read
/// is held, so memory stays at the values themselves. A unit that comes back after another
/// stops the pass ([`Stop::Interleaved`]).
struct Streaming<'a> {
    name: &'a str,
    raters: FastMap<u32>,
    /// Hashes of the names of the units begun so far: a unit seen again is interleaved. (Two
    /// names with one hash only send the file to the exact, slower path.)
    begun: std::collections::HashSet<u64, foldhash::fast::FixedState>,
    current: Option<String>,
    /// The current unit's (rater, value or NaN, line).
    ratings: Vec<(u32, f64, u64)>,
    buf: Vec<f64>,
    units: Units,
}

impl<'a> Streaming<'a> {
    fn new(name: &'a str, bytes: usize) -> Self {
        Streaming {
            name,
            raters: FastMap::default(),
            begun: Default::default(),
            current: None,
            ratings: Vec::new(),
            buf: Vec::new(),
            // A row is at least `u,r,v` and a newline: reserving for that many (up to 64 M,
            // 512 MB of address space each) touches no page that is not written, and spares
            // the doubling copies of a growing vector.
            units: Units::with_capacity((bytes / 6).min(1 << 26), (bytes / 6).min(1 << 26)),
        }
    }

    /// Closes the current unit: its values in rater order, a repeated rater refused.
    fn close(&mut self) -> Result<(), InputError> {
        let Some(unit) = &self.current else {
            return Ok(());
        };
        self.ratings.sort_by_key(|&(rater, _, line)| (rater, line));
        if let Some(w) = self.ratings.windows(2).find(|w| w[0].0 == w[1].0) {
            let rater = key_name(&self.raters, w[0].0);
            return Err(repeated(self.name, unit, rater, w[0].2, w[1].2));
        }
        self.buf.clear();
        self.buf
            .extend(self.ratings.iter().map(|r| r.1).filter(|v| !v.is_nan()));
        self.ratings.clear();
        self.units
            .push_unit(&self.buf)
            .map_err(|e| InputError::new(self.name, e.to_string()))
    }

    fn finish(mut self) -> Result<Table, InputError> {
        self.close()?;
        Ok(Table {
            units: self.units,
            raters: self.raters.len(),
            layout: Layout::Long,
            warnings: Vec::new(),
        })
    }
}

impl Sink for Streaming<'_> {
    fn push(&mut self, unit: &str, rater: &str, value: Option<f64>, line: u64) -> Result<(), Stop> {
        if self.current.as_deref() != Some(unit) {
            self.close()?;
            use std::hash::BuildHasher;
            if !self.begun.insert(self.begun.hasher().hash_one(unit)) {
                return Err(Stop::Interleaved);
            }
            match &mut self.current {
                Some(c) => {
                    c.clear();
                    c.push_str(unit);
                }
                None => self.current = Some(unit.to_string()),
            }
        }
        let rater = id_of(&mut self.raters, rater);
        self.ratings.push((rater, value.unwrap_or(f64::NAN), line));
        Ok(())
    }
}

/// One rating of an interleaved long file, held until every row is read.
struct Rating {
    unit: u32,
    rater: u32,
    /// NaN for a missing value.
    value: f64,
}

/// Holds every rating, then groups them by unit: for a file whose units are not contiguous.
#[derive(Default)]
struct Sorting {
    units: FastMap<u32>,
    raters: FastMap<u32>,
    ratings: Vec<Rating>,
}

impl Sink for Sorting {
    fn push(&mut self, unit: &str, rater: &str, value: Option<f64>, _: u64) -> Result<(), Stop> {
        let unit = id_of(&mut self.units, unit);
        let rater = id_of(&mut self.raters, rater);
        self.ratings.push(Rating {
            unit,
            rater,
            value: value.unwrap_or(f64::NAN),
        });
        Ok(())
    }
}

/// The lines of the first two ratings of one (unit, rater).
struct FindLines<'a> {
    unit: &'a str,
    rater: &'a str,
    lines: Vec<u64>,
}

impl Sink for FindLines<'_> {
    fn push(&mut self, unit: &str, rater: &str, _: Option<f64>, line: u64) -> Result<(), Stop> {
        if unit == self.unit && rater == self.rater {
            self.lines.push(line);
            if self.lines.len() == 2 {
                return Err(Stop::Found);
            }
        }
        Ok(())
    }
}

/// Groups a long file's ratings into units, in order of first appearance, each unit's values
/// in order of its raters' first appearance; a rater who rates a unit twice is refused with
/// both lines. `rows(sink)` reads every row into `sink`. A file whose units are contiguous is
/// grouped as it is read; any other is read a second time, holding every rating.
fn group_long(name: &str, bytes: usize, rows: Rows<'_>) -> Result<Table, InputError> {
    let mut streaming = Streaming::new(name, bytes);
    match rows(&mut streaming) {
        Ok(()) | Err(Stop::Found) => {
            if streaming.current.is_none() {
                return Err(no_ratings(name));
            }
            return streaming.finish();
        }
        Err(Stop::Bad(e)) => return Err(e),
        Err(Stop::Interleaved) => {}
    }
    drop(streaming);
    let mut sorting = Sorting::default();
    match rows(&mut sorting) {
        Ok(()) | Err(Stop::Found) | Err(Stop::Interleaved) => {}
        Err(Stop::Bad(e)) => return Err(e),
    }
    let Sorting {
        units: unit_ids,
        raters,
        mut ratings,
    } = sorting;
    ratings.sort_unstable_by_key(|r| (r.unit, r.rater));
    if let Some(w) = ratings
        .windows(2)
        .find(|w| w[0].unit == w[1].unit && w[0].rater == w[1].rater)
    {
        let (unit, rater) = (
            key_name(&unit_ids, w[0].unit),
            key_name(&raters, w[0].rater),
        );
        let mut find = FindLines {
            unit,
            rater,
            lines: Vec::new(),
        };
        if let Err(Stop::Bad(e)) = rows(&mut find) {
            return Err(e);
        }
        let (first, second) = (find.lines.first().copied(), find.lines.get(1).copied());
        return Err(repeated(
            name,
            unit,
            rater,
            first.unwrap_or(0),
            second.unwrap_or(0),
        ));
    }
    let values = ratings.iter().filter(|r| !r.value.is_nan()).count();
    let mut units = Units::with_capacity(unit_ids.len(), values);
    let mut buf = Vec::new();
    let mut i = 0;
    for unit in 0..unit_ids.len() as u32 {
        buf.clear();
        while i < ratings.len() && ratings[i].unit == unit {
            if !ratings[i].value.is_nan() {
                buf.push(ratings[i].value);
            }
            i += 1;
        }
        units
            .push_unit(&buf)
            .map_err(|e| InputError::new(name, e.to_string()))?;
    }
    Ok(Table {
        units,
        raters: raters.len(),
        layout: Layout::Long,
        warnings: Vec::new(),
    })
}

/// `str::trim`, without its Unicode scan for the usual cell that starts and ends with a
/// visible ASCII character.
fn trim(s: &str) -> &str {
    match s.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => s,
        [only] if only.is_ascii_graphic() => s,
        _ => s.trim(),
    }
}

fn no_ratings(name: &str) -> InputError {
    InputError::new(name, "no ratings after the header")
        .hint("long layout has one row per (unit, rater, value)")
}

fn key_name(map: &FastMap<u32>, id: u32) -> &str {
    map.iter().find(|(_, &v)| v == id).map_or("?", |(k, _)| k)
}

/// Which reader reads a long CSV: the parallel one when it can (`fast`), or the general one
/// (what the fast one is tested against).
#[derive(Clone, Copy)]
enum Route {
    Fastest,
    #[cfg_attr(not(test), allow(dead_code))]
    General,
}

/// Reads the long CSV layout. Rows are read as bytes (no per-row allocation); a unit or rater
/// name is validated as UTF-8 and trimmed, and allocated only the first time it is seen.
fn read_long_csv<G: Grouping>(
    name: &str,
    bytes: &[u8],
    header: &[String],
    level: Level,
    route: Route,
) -> Result<G, InputError> {
    let col = |c: &str| header.iter().position(|h| h == c).unwrap_or(0);
    let (unit_col, rater_col, value_col) = (col("unit"), col("rater"), col("value"));
    let columns = fast::Columns {
        unit: unit_col,
        rater: rater_col,
        value: value_col,
        count: header.len(),
    };
    if let Some(grouped) = match route {
        Route::Fastest => G::fast_long(bytes, columns, level),
        Route::General => None,
    } {
        return Ok(grouped);
    }
    G::long(name, bytes.len(), &mut |sink| {
        // Each pass reads from the top, with its own label codes (nominal), so every pass
        // codes the same label the same way.
        let mut cells = CellParser::new(level);
        let (mut reader, _) = csv_with_header(name, bytes, "`unit,rater,value`")?;
        let mut lines = super::Lines::of(&reader);
        let mut record = csv::ByteRecord::new();
        loop {
            match reader.read_byte_record(&mut record) {
                Ok(false) => return Ok(()),
                Ok(true) => {}
                Err(e) => return Err(super::csv_error_in(name, e, &mut lines).into()),
            }
            let line = lines.line(record.position());
            let text = |i: usize| -> Result<&str, InputError> {
                std::str::from_utf8(record.get(i).unwrap_or(b""))
                    .map(trim)
                    .map_err(|_| InputError::new(name, "the row is not valid UTF-8").at_line(line))
            };
            let (unit, rater) = (text(unit_col)?, text(rater_col)?);
            if unit.is_empty() || rater.is_empty() {
                // A blank row is skipped; a row missing only its unit or rater is refused.
                let blank = (0..record.len()).all(|i| text(i).is_ok_and(str::is_empty));
                if blank {
                    continue;
                }
                let field = if unit.is_empty() { "unit" } else { "rater" };
                return Err(InputError::new(name, format!("the {field} is empty"))
                    .at_line(line)
                    .field(format!("column \"{field}\""))
                    .into());
            }
            let value = cells
                .parse(text(value_col)?)
                .map_err(|p| cell_error(name, line, "column \"value\"".into(), p))?;
            sink.push(unit, rater, value, line)?;
        }
    })
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

fn read_jsonl<G: Grouping>(name: &str, bytes: &[u8], level: Level) -> Result<G, InputError> {
    const LINES: Lines = Lines {
        holds: "each line holds one object with unit, rater and value",
        hints: &[("value", "write null for a missing value")],
    };
    G::long(name, bytes.len(), &mut |sink| {
        let mut cells = CellParser::new(level);
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
            sink.push(raw.unit.0.trim(), raw.rater.0.trim(), value, line)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests;
