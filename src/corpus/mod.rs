//! Corpora: the recorded files an experiment replays, read and validated into typed values.

pub mod queries;
pub mod reviews;
pub mod verdicts;

use serde_json::{Map, Value};

use crate::error::InputError;

/// The non-blank lines of a JSON Lines file, numbered from 1, each parsed as one JSON object;
/// a line that is not valid UTF-8 or not an object is an error naming it, with `hint`.
pub(crate) fn objects<'a>(
    name: &'a str,
    bytes: &'a [u8],
    hint: &'static str,
) -> impl Iterator<Item = Result<(u64, Map<String, Value>), InputError>> + 'a {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, raw)| raw.iter().any(|b| !b.is_ascii_whitespace()))
        .map(move |(i, raw)| {
            let line = i as u64 + 1;
            let text = std::str::from_utf8(raw)
                .map_err(|_| InputError::new(name, "the line is not valid UTF-8").at_line(line))?;
            serde_json::from_str(text).map(|o| (line, o)).map_err(|e| {
                InputError::new(name, format!("not a JSON object: {e}"))
                    .at_line(line)
                    .hint(hint)
            })
        })
}

/// The distinct arm labels of a file's records, sorted and joined for a hint.
pub(crate) fn label_list<'a>(labels: impl Iterator<Item = &'a str>) -> String {
    let mut v: Vec<&str> = labels.collect();
    v.sort_unstable();
    v.dedup();
    v.join(", ")
}
