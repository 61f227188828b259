//! The error type of every command. Each variant knows its exit status and how to tell the user
//! what went wrong: which file, which line, which field, and what to do instead.

use std::fmt;
use std::path::Path;

/// A problem with something the user gave calibench: a file, a value, a flag.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct InputError {
    pub file: String,
    /// 1-based line number, when the problem sits on one line.
    pub line: Option<u64>,
    /// The column, key or field at fault.
    pub field: Option<String>,
    pub problem: String,
    /// What to do about it, when calibench knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl InputError {
    pub fn new(file: impl Into<String>, problem: impl Into<String>) -> Self {
        InputError {
            file: file.into(),
            line: None,
            field: None,
            problem: problem.into(),
            hint: None,
        }
    }

    pub fn at_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A TOML error in `text`, placed on the line where it starts.
    pub fn toml(file: impl Into<String>, text: &str, e: &toml::de::Error) -> Self {
        let err = InputError::new(file, e.message().trim_end().to_string());
        match e.span() {
            Some(span) => err.at_line(line_at(text, span.start)),
            None => err,
        }
    }
}

/// The 1-based line of byte `offset` in `text`.
pub fn line_at(text: &str, offset: usize) -> u64 {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
        + 1
}

/// Each part on its line: a line break inside a part (a corpus id quoted in it) is shown
/// escaped, never broken ([`crate::text::inline`]).
impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::text::inline;
        write!(f, "{}", inline(&self.file))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {}", inline(field))?;
        }
        write!(f, ": {}", inline(&self.problem))?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {}", inline(hint))?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// Problems found in the inputs: the first [`Problems::KEPT`] kept whole, the rest only
/// counted. A file of ten million bad lines must cost a count, not ten million messages held in
/// memory (each message is some hundreds of bytes, far more than a short bad line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problems {
    kept: Vec<InputError>,
    /// Problems found past the first `KEPT`.
    more: u64,
}

impl Problems {
    /// How many problems are kept whole: more than anyone reads, few enough to cost nothing.
    pub const KEPT: usize = 1000;

    pub fn push(&mut self, e: InputError) {
        if self.kept.len() < Self::KEPT {
            self.kept.push(e);
        } else {
            self.more += 1;
        }
    }

    /// Every problem found, kept or only counted.
    pub fn total(&self) -> u64 {
        self.kept.len() as u64 + self.more
    }

    /// The problems found but not kept.
    pub fn more(&self) -> u64 {
        self.more
    }

    /// `Ok` when there is no problem; else the error that refuses: the problem itself when
    /// there is one, the list when there are more.
    pub fn refuse(mut self) -> Result<(), Error> {
        match self.total() {
            0 => Ok(()),
            1 => Err(self.kept.remove(0).into()),
            _ => Err(Error::Inputs(self)),
        }
    }

    /// The problems kept whole, in the order found. (There is no `IntoIterator`: passing
    /// problems on with `extend` would lose the count of those not kept; use `append`.)
    pub fn into_kept(self) -> Vec<InputError> {
        self.kept
    }

    /// Adds another collection's problems, kept up to the cap and counted past it.
    pub fn append(&mut self, other: Problems) {
        self.extend(other.kept);
        self.more += other.more;
    }
}

impl std::ops::Deref for Problems {
    type Target = [InputError];

    /// The problems kept whole, in the order found.
    fn deref(&self) -> &[InputError] {
        &self.kept
    }
}

impl Extend<InputError> for Problems {
    fn extend<I: IntoIterator<Item = InputError>>(&mut self, iter: I) {
        iter.into_iter().for_each(|e| self.push(e));
    }
}

impl FromIterator<InputError> for Problems {
    fn from_iter<I: IntoIterator<Item = InputError>>(iter: I) -> Self {
        let mut p = Problems::default();
        p.extend(iter);
        p
    }
}

impl From<Vec<InputError>> for Problems {
    fn from(v: Vec<InputError>) -> Self {
        v.into_iter().collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write the result: {0}")]
    Write(std::io::Error),
    #[error("{}", list(.0))]
    Inputs(Problems),
}

/// Several input problems, one per line, at most 20 shown.
fn list(problems: &Problems) -> String {
    const SHOWN: usize = 20;
    let total = problems.total();
    let mut s = format!("{total} problems in the input:");
    for p in problems.iter().take(SHOWN) {
        s += &format!("\n  {p}");
    }
    if total > SHOWN as u64 {
        let listed = if total > Problems::KEPT as u64 {
            format!("calibench validate lists the first {}", Problems::KEPT)
        } else {
            "calibench validate lists them all".to_string()
        };
        s += &format!("\n  … and {} more ({listed})", total - SHOWN as u64);
    }
    s
}

impl Error {
    pub fn read(path: &Path, source: std::io::Error) -> Self {
        Error::Read {
            path: path.display().to_string(),
            source,
        }
    }

    /// A failed write, naming the path it was writing.
    pub fn write(path: &Path, e: std::io::Error) -> Self {
        Error::Write(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", path.display()),
        ))
    }
}

/// The values serde names in backticks, as in "expected one of `a`, `b`": `["a", "b"]`.
pub(crate) fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// serde's "invalid type: X, expected Y" (or "invalid value: …") as (X, Y).
pub(crate) fn mismatch(message: &str) -> Option<(&str, &str)> {
    message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.rsplit_once(", expected "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_one_based_lines() {
        let text = "a = 1\nb = \nc = 3";
        assert_eq!(line_at(text, 0), 1);
        assert_eq!(line_at(text, 5), 1);
        assert_eq!(line_at(text, 6), 2);
        assert_eq!(line_at(text, 100), 3);
        let e = text.parse::<toml::Table>().unwrap_err();
        let err = InputError::toml("x.toml", text, &e);
        assert_eq!(err.line, Some(2), "{err}");
    }

    #[test]
    fn input_errors_name_file_line_field_and_hint() {
        let e = InputError::new("data.csv", "`x` is not a number")
            .at_line(4)
            .field("column \"value\"")
            .hint("use --level nominal for labels");
        assert_eq!(
            e.to_string(),
            "data.csv:4: column \"value\": `x` is not a number\n  hint: use --level nominal for labels"
        );
        assert_eq!(
            crate::exit::status(&Err(Error::from(e))),
            std::process::ExitCode::from(crate::exit::BAD_INPUT)
        );
    }
}
