//! Reading and validating the files users give calibench. Every reader takes bytes and a name
//! for messages, and returns typed data or an [`InputError`] naming file, line and field.

pub mod calibration;
pub mod reliability;

use crate::error::InputError;

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
