//! Predictions for `calibench calibrate`: a CSV with `confidence` and `correct` columns (others
//! ignored). `correct` is 0/1 or true/false (any case); `confidence` a number in [0, 1].

use super::{csv_with_header, for_each_row, missing_columns};
use crate::error::InputError;

#[derive(Clone, Debug, PartialEq)]
pub struct Predictions {
    pub confidence: Vec<f64>,
    pub correct: Vec<bool>,
}

pub fn read(name: &str, bytes: &[u8]) -> Result<Predictions, InputError> {
    let (mut reader, header) = csv_with_header(name, bytes, "`confidence,correct`")?;
    let find = |col: &str| header.iter().position(|h| h == col);
    let (Some(conf_col), Some(correct_col)) = (find("confidence"), find("correct")) else {
        let missing: Vec<&str> = ["confidence", "correct"]
            .into_iter()
            .filter(|c| find(c).is_none())
            .collect();
        return Err(InputError::new(name, missing_columns(&missing))
            .at_line(1)
            .hint("calibrate reads a CSV with a `confidence,correct` header"));
    };

    let mut out = Predictions {
        confidence: Vec::new(),
        correct: Vec::new(),
    };
    for_each_row(name, &mut reader, |record, line| {
        let raw = record.get(conf_col).unwrap_or("").trim();
        let confidence = raw
            .parse::<f64>()
            .ok()
            .filter(|p| (0.0..=1.0).contains(p))
            .ok_or_else(|| {
                InputError::new(name, format!("`{raw}` is not a number in [0, 1]"))
                    .at_line(line)
                    .field("column \"confidence\"")
            })?;
        let raw = record.get(correct_col).unwrap_or("").trim();
        let correct = match raw.to_ascii_lowercase().as_str() {
            "1" | "true" => true,
            "0" | "false" => false,
            _ => {
                return Err(
                    InputError::new(name, format!("`{raw}` is not 0, 1, true or false"))
                        .at_line(line)
                        .field("column \"correct\""),
                )
            }
        };
        out.confidence.push(confidence);
        out.correct.push(correct);
        Ok(())
    })?;
    if out.confidence.is_empty() {
        return Err(InputError::new(name, "no predictions after the header")
            .hint("one row per prediction: confidence,correct"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_spellings_of_correct_and_ignores_other_columns() {
        let p = read(
            "p.csv",
            b"id,confidence,correct\na,0.9,1\nb,0.2,FALSE\nc,1,true\n",
        )
        .unwrap();
        assert_eq!(p.confidence, [0.9, 0.2, 1.0]);
        assert_eq!(p.correct, [true, false, true]);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = read("p.csv", b"confidence,correct\n0.5,1\n1.2,0\n").unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(3), Some("column \"confidence\""))
        );
        let e = read("p.csv", b"confidence,correct\n0.5,yes\n").unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(2), Some("column \"correct\""))
        );
        let e = read("p.csv", b"conf,correct\n0.5,1\n").unwrap_err();
        assert_eq!(e.problem, "the header has no `confidence` column");
        assert!(read("p.csv", b"confidence,correct\n").is_err());
        assert!(read("p.csv", b"confidence,correct\nNaN,1\n").is_err());
    }
}
