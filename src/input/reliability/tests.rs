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

/// What the reader says of `text` at the interval level: it must refuse it.
fn refused(text: &str, layout: Layout) -> InputError {
    refused_at(text, layout, Level::Interval)
}

fn refused_at(text: &str, layout: Layout, level: Level) -> InputError {
    read_str(text, layout, level).unwrap_err()
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

/// The long rows of `long_from_wide` (rater by rater, so each unit is interleaved with the
/// others) put unit by unit, as exports write them.
fn unit_by_unit(long: &str) -> String {
    let mut lines: Vec<&str> = long.lines().skip(1).collect();
    let unit = |l: &str| l.split(',').next().unwrap()[1..].parse::<u32>().unwrap();
    lines.sort_by_key(|l| unit(l)); // stable: raters keep their order within a unit
    format!("unit,rater,value,comment\n{}\n", lines.join("\n"))
}

// The long reader groups a file whose units are contiguous as it reads it, and reads any
// other a second time holding every rating: both give the same units, values in the same
// order, for every level (nominal labels coded alike).
#[test]
fn contiguous_and_interleaved_long_files_read_alike() {
    let interleaved = long_from_wide();
    let contiguous = unit_by_unit(&interleaved);
    assert_ne!(interleaved, contiguous);
    for level in [
        Level::Nominal,
        Level::Ordinal,
        Level::Interval,
        Level::Ratio,
    ] {
        let a = read_str(&interleaved, Layout::Long, level).unwrap();
        let b = read_str(&contiguous, Layout::Long, level).unwrap();
        assert_eq!(a, b, "{level:?}");
    }
    let t = read_str(&contiguous, Layout::Long, Level::Interval).unwrap();
    assert_eq!((t.units.len(), t.raters), (12, 4));
    let a = alpha(&t.units, Level::Interval).unwrap().alpha.unwrap();
    assert!((a - 951.0 / 1120.0).abs() < 1e-12);
    // Labels: the same codes whichever way the file is read.
    let labels = "unit,rater,value\nx,A,low\nx,B,high\ny,A,high\ny,B,high\n";
    let swapped = "unit,rater,value\nx,A,low\ny,A,high\nx,B,high\ny,B,high\n";
    assert_eq!(
        read_str(labels, Layout::Long, Level::Nominal).unwrap(),
        read_str(swapped, Layout::Long, Level::Nominal).unwrap()
    );
}

#[test]
fn a_repeated_rating_is_refused_with_both_lines_whichever_way_the_file_runs() {
    // Contiguous: the unit's two ratings by A on lines 2 and 4.
    let contiguous = "unit,rater,value\nx,A,1\nx,B,2\nx,A,3\ny,A,1\ny,B,1\n";
    // Interleaved: y comes back after x, and A rates x on lines 2 and 6.
    let interleaved = "unit,rater,value\nx,A,1\ny,A,2\nx,B,2\ny,B,1\nx,A,3\n";
    for (text, first, second) in [(contiguous, 2, 4), (interleaved, 2, 6)] {
        let e = refused(text, Layout::Long);
        assert_eq!(e.line, Some(second), "{e}");
        assert!(
            e.problem.contains(&format!(
                "rater `A` rates unit `x` a second time (first on line {first})"
            )),
            "{e}"
        );
    }
    // Blank rows are skipped either way; a row without its unit is refused.
    let blank = "unit,rater,value\nx,A,1\n,,\nx,B,2\ny,A,1\nx,C,1\n";
    let t = read_str(blank, Layout::Long, Level::Interval).unwrap();
    assert_eq!((t.units.len(), t.raters), (2, 3));
    let e = refused("unit,rater,value\nx,A,1\n,B,2\n", Layout::Long);
    assert_eq!(
        (e.line, e.field.as_deref()),
        (Some(3), Some("column \"unit\""))
    );
    let e = refused("unit,rater,value\n", Layout::Long);
    assert!(e.problem.contains("no ratings"), "{e}");
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
    let e = refused("unit,a,b\nu1,1,2\nu1,2,2\n", Layout::UnitsAsRows);
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
fn whole_numbers_read_as_the_float_parser_reads_them() {
    let mut rng = crate::stats::rng::Rng::for_replicate(5, 0);
    let mut cells = CellParser::new(Level::Interval);
    for text in ["0", "007", "100", "999999999999999", "123456789012345"]
        .into_iter()
        .map(String::from)
        .chain((0..2000).map(|_| {
            let digits = 1 + rng.below(15) as usize;
            (0..digits)
                .map(|_| char::from(b'0' + rng.below(10) as u8))
                .collect()
        }))
    {
        assert_eq!(
            cells.parse(&text).unwrap().map(f64::to_bits),
            Some(text.parse::<f64>().unwrap().to_bits()),
            "{text}"
        );
    }
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
    let text = "rater,u1,u2\nA,1,2\nB,3,high\n";
    let e = refused_at(text, Layout::Auto, Level::Ordinal);
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
    let text = "unit,rater,value\n1,a,-2\n1,b,3\n";
    let e = refused_at(text, Layout::Auto, Level::Ratio);
    assert_eq!(e.line, Some(2));
    assert!(e.problem.contains("negative"));
}

#[test]
fn a_rater_rating_a_unit_twice_is_refused() {
    let e = refused("unit,rater,value\n1,a,2\n1,b,3\n1,a,4\n", Layout::Auto);
    assert_eq!(e.line, Some(4));
    assert!(e.problem.contains("first on line 2"), "{}", e.problem);
    let e = refused("rater,u1\nA,1\nA,2\n", Layout::Auto);
    assert_eq!(e.line, Some(3));
}

#[test]
fn ragged_rows_and_empty_files_are_refused() {
    let e = refused("rater,u1,u2\nA,1\n", Layout::Auto);
    assert_eq!(e.line, Some(2));
    assert!(e.problem.contains("fields"), "{}", e.problem);
    assert!(read_str("", Layout::Auto, Level::Interval).is_err());
    assert!(read_str("rater,u1\n", Layout::Auto, Level::Interval).is_err());
    assert!(read_str("rater\nA\n", Layout::Auto, Level::Interval).is_err());
}

#[test]
fn forced_long_layout_names_the_missing_columns() {
    let e = refused("rater,u1\nA,1\n", Layout::Long);
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
