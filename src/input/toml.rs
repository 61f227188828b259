//! TOML files read through serde-derived raw types (`experiment.toml`, `gate.toml`): serde's
//! refusals in calibench's words, each placed on the line of the key at fault, with the key a
//! misspelling most likely meant. The experiment reader (`config`) adds its own checks to
//! [`Ctx`]; the gate policy reads its file with [`read_toml_file`].

use crate::error::{backticked, mismatch, InputError};

/// A value and where its file wrote it, for errors found after parsing. Read as TOML's own
/// `Spanned`; its JSON Schema is the value's, since the position is the reader's business and
/// not the format's — so a raw table's fields need no schema override.
#[derive(Debug)]
pub struct Spanned<T>(toml::Spanned<T>);

impl<T> std::ops::Deref for Spanned<T> {
    type Target = toml::Spanned<T>;
    fn deref(&self) -> &toml::Spanned<T> {
        &self.0
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Spanned<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        toml::Spanned::deserialize(d).map(Spanned)
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Spanned<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// Reads `text` as `T`, naming the dotted path, line and problem of the first thing serde
/// refuses: an unknown key (with the keys known there), a missing one, a value of the wrong
/// type or not among the choices.
pub(crate) fn read_toml<T: serde::de::DeserializeOwned>(ctx: &Ctx<'_>) -> Result<T, InputError> {
    let de = toml::de::Deserializer::parse(ctx.text).map_err(|e| {
        let err = InputError::toml(ctx.name, ctx.text, &e);
        InputError {
            problem: format!("not valid TOML: {}", err.problem),
            ..err
        }
    })?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        // serde's path, as the dotted keys this file's errors use: `check[0]` is `check.0`,
        // and a position wrapper (`Spanned`) is no key.
        let path = e.path().to_string();
        let path = path
            .split('.')
            .filter(|p| !p.is_empty() && !p.starts_with("$__serde_spanned"))
            .map(|p| p.replace('[', ".").replace(']', ""))
            .collect::<Vec<_>>()
            .join(".");
        let inner = e.into_inner();
        ctx.serde_error(&path, inner.message().trim_end(), inner.span())
    })
}

/// Reads a whole TOML file `name` as `T`, with `read_toml`'s messages: for files other than
/// the experiment that are read through serde-derived raw types (`gate.toml`).
pub fn read_toml_file<T: serde::de::DeserializeOwned>(
    name: &str,
    text: &str,
) -> Result<T, InputError> {
    read_toml(&Ctx::new(name, text))
}

/// "unknown key `polciy` — did you mean `policy`?": a key no table of the file takes, with the
/// known key it most likely meant.
pub fn unknown_key(key: &str, near: Option<&str>) -> String {
    match near {
        Some(n) => format!("unknown key `{key}` — did you mean `{n}`?"),
        None => format!("unknown key `{key}`"),
    }
}

/// The backquoted words of a serde message: `a`, `b` → [a, b].
/// Whether serde's description of a refused value (`string "high"`, `integer `5``,
/// `floating point `1.5``, `boolean `true``) is this TOML value.
fn unexpected_is(got: &str, v: &toml::de::DeValue<'_>) -> bool {
    use toml::de::DeValue;
    let literal = |prefix: &str| {
        got.strip_prefix(prefix)
            .map(|rest| rest.trim_matches(|c| c == '`' || c == '"').to_string())
    };
    match v {
        DeValue::String(s) => literal("string ").is_some_and(|l| l == s.as_ref()),
        DeValue::Integer(i) => literal("integer ").is_some_and(|l| l == i.to_string()),
        DeValue::Float(f) => literal("floating point ").is_some_and(|l| l == f.to_string()),
        DeValue::Boolean(b) => literal("boolean ").is_some_and(|l| l == b.to_string()),
        _ => false,
    }
}

/// The byte offset where `parts` is set in `table`: its last key (or array element).
fn key_offset(table: &toml::de::DeTable, parts: &[&str]) -> Option<usize> {
    let (first, rest) = parts.split_first()?;
    let (key, value) = table.iter().find(|(k, _)| k.get_ref() == first)?;
    if rest.is_empty() {
        return Some(key.span().start);
    }
    value_offset(value.get_ref(), rest)
}

fn value_offset(value: &toml::de::DeValue, parts: &[&str]) -> Option<usize> {
    use toml::de::DeValue;
    match value {
        DeValue::Table(table) => key_offset(table, parts),
        DeValue::Array(items) => {
            let (first, rest) = parts.split_first()?;
            let item = items.get(first.parse::<usize>().ok()?)?;
            if rest.is_empty() {
                Some(item.span().start)
            } else {
                value_offset(item.get_ref(), rest)
            }
        }
        _ => None,
    }
}

/// A TOML file being read: its name for messages, its text, and (parsed only when an error
/// needs a line) where each key is.
pub(crate) struct Ctx<'a> {
    pub(crate) name: &'a str,
    /// What serde reads: the file, with any `--set` overrides applied.
    pub(crate) text: &'a str,
    /// The file as written, whose lines errors name.
    source: &'a str,
    /// The `--set` overrides `text` holds beyond the file: an error at one of their keys names
    /// the override rather than a line.
    overrides: &'a [Override],
    /// The file with the position of every key, to place an error on its line; parsed only
    /// when an error needs a line.
    spans: std::cell::OnceCell<Option<toml::Spanned<toml::de::DeTable<'a>>>>,
    /// `text` as tables, to find the key that holds a refused value.
    tables: std::cell::OnceCell<Option<toml::Spanned<toml::de::DeTable<'a>>>>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(name: &'a str, text: &'a str) -> Self {
        Ctx::with_overrides(name, text, text, &[])
    }

    /// A file `source` read as `text`, which is `source` with `overrides` applied.
    pub(crate) fn with_overrides(
        name: &'a str,
        text: &'a str,
        source: &'a str,
        overrides: &'a [Override],
    ) -> Self {
        Ctx {
            name,
            text,
            source,
            overrides,
            spans: std::cell::OnceCell::new(),
            tables: std::cell::OnceCell::new(),
        }
    }

    /// The override that set `path`, a table above it or a key below it.
    fn override_at(&self, path: &str) -> Option<&Override> {
        self.overrides.iter().rev().find(|o| {
            o.key == path
                || o.key.starts_with(&format!("{path}."))
                || path.starts_with(&format!("{}.", o.key))
        })
    }

    /// The line where the dotted `path` (`arms.treatment.review.policy`) is set: the position
    /// of its last key, found by walking the document table by table, so a key is found in its
    /// own table and not in the first table that has a key of that name. `None` when the path
    /// is not in the file (a missing key is then placed on its table).
    pub(crate) fn line_of(&self, path: &str) -> Option<u64> {
        // `sweep[0].require` is the first `[[sweep]]` table's key.
        let path = path.replace('[', ".").replace(']', "");
        let parts: Vec<&str> = path.split('.').collect();
        let spans = self
            .spans
            .get_or_init(|| toml::de::DeTable::parse(self.source).ok());
        let offset = key_offset(spans.as_ref()?.get_ref(), &parts)?;
        Some(crate::error::line_at(self.source, offset))
    }

    pub(crate) fn error(&self, path: &str, problem: impl Into<String>) -> InputError {
        if let Some(o) = self.override_at(path) {
            // Set on the command line, not on a line of the file.
            return InputError::new(format!("{} ({} {o})", self.name, o.flag), problem)
                .field(format!("`{path}`"));
        }
        let e = InputError::new(self.name, problem).field(format!("`{path}`"));
        // A key inside an inline table (`weights = { reads = 2 }`) sits on its parent's line.
        let mut at = Some(path);
        let mut line = None;
        while let (Some(p), None) = (at, line) {
            line = self.line_of(p);
            at = p.rsplit_once('.').map(|(parent, _)| parent);
        }
        match line {
            Some(l) => e.at_line(l),
            None => e,
        }
    }

    /// The table at the dotted `path` (the document's top for the empty path), as written.
    pub(crate) fn table_at(&self, path: &str) -> Option<&toml::de::DeTable<'_>> {
        let tables = self
            .tables
            .get_or_init(|| toml::de::DeTable::parse(self.text).ok());
        let mut table = tables.as_ref()?.get_ref();
        for part in path.split('.').filter(|p| !p.is_empty()) {
            match table.iter().find(|(k, _)| k.get_ref() == part)?.1.get_ref() {
                toml::de::DeValue::Table(t) => table = t,
                _ => return None,
            }
        }
        Some(table)
    }

    /// The dotted path of the first key, at or below the table at `path` and breadth first,
    /// for which `hit(key, value)` holds.
    pub(crate) fn find(
        &self,
        path: &str,
        hit: &dyn Fn(&str, &toml::de::DeValue<'_>) -> bool,
    ) -> Option<String> {
        use toml::de::DeValue;
        let mut queue = vec![(path.to_string(), self.table_at(path)?)];
        while !queue.is_empty() {
            let mut next = Vec::new();
            for (at, t) in queue {
                for (k, v) in t.iter() {
                    let here = if at.is_empty() {
                        k.get_ref().to_string()
                    } else {
                        format!("{at}.{}", k.get_ref())
                    };
                    if hit(k.get_ref(), v.get_ref()) {
                        return Some(here);
                    }
                    // A value in an array (`skip = ["stale"]`): the key holding it.
                    if let DeValue::Array(items) = v.get_ref() {
                        if let Some(i) = items.iter().position(|x| hit(k.get_ref(), x.get_ref())) {
                            return Some(format!("{here}.{i}"));
                        }
                    }
                    if let DeValue::Table(inner) = v.get_ref() {
                        next.push((here, inner));
                    }
                }
            }
            queue = next;
        }
        None
    }

    /// What serde refused at `path`, in the words of this file's other errors.
    pub(crate) fn serde_error(
        &self,
        path: &str,
        message: &str,
        span: Option<std::ops::Range<usize>>,
    ) -> InputError {
        let join = |key: &str| {
            if path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            }
        };
        let located = |e: InputError| match (e.line, span.clone()) {
            // serde's spans are in `text`, which is the file only when nothing is overridden.
            (None, Some(s)) if self.overrides.is_empty() => {
                e.at_line(crate::error::line_at(self.text, s.start))
            }
            _ => e,
        };
        if let Some(rest) = message.strip_prefix("unknown field `") {
            let (key, expected) = rest.split_once('`').unwrap_or((rest, ""));
            let known = backticked(expected);
            // The path ends at the key, or, inside a `policy`-tagged table (read as a whole),
            // at the table: then the key is found below it.
            let field = if path.rsplit('.').next() == Some(key) {
                path.to_string()
            } else {
                self.find(path, &|k, _| k == key)
                    .unwrap_or_else(|| join(key))
            };
            let e = self.error(&field, unknown_key(key, crate::text::nearest(key, &known)));
            return located(if known.is_empty() {
                e.hint("this table takes no keys")
            } else {
                e.hint(format!("known keys here: {}", known.join(", ")))
            });
        }
        if let Some(rest) = message.strip_prefix("missing field `") {
            let key = rest.split('`').next().unwrap_or(rest);
            // A misspelt required key is reported as what it is, not as the key it meant being
            // missing (`polciy = "anchored"` in a table that must say `policy`).
            if let Some(typo) = self.key_near(path, key) {
                let field = join(&typo);
                return self.error(&field, unknown_key(&typo, Some(key)));
            }
            let e = self.error(&join(key), "is missing");
            return located(match key {
                "arms" | "baseline" | "treatment" => {
                    e.hint("an experiment has exactly two arms, [arms.baseline] and [arms.treatment]")
                }
                "policy" => e.hint("policy = \"anchored\" or \"float-gates\" under [review]; \"flat-mean\" or \"category-max\" under [confidence]"),
                _ => e,
            });
        }
        if let Some(rest) = message.strip_prefix("unknown variant `") {
            let (value, expected) = rest.split_once('`').unwrap_or((rest, ""));
            // Inside a `policy`-tagged table (read as a whole) the path ends at the table: the
            // field is the key below it that holds the value (`policy` itself, or `normalize`).
            let field = self
                .find(path, &|_, v| v.as_str() == Some(value))
                .filter(|f| f != path)
                .unwrap_or_else(|| path.to_string());
            return located(self.error(
                &field,
                format!(
                    "`{value}` is not one of {}",
                    backticked(expected).join(", ")
                ),
            ));
        }
        // "invalid type: string \"x\", expected a boolean" → "must be a boolean, not string "x""
        let problem = match mismatch(message) {
            Some((got, want)) => {
                let want = match want {
                    "u64" | "usize" | "u32" => "a non-negative integer",
                    "i64" => "an integer",
                    "f64" => "a number",
                    other => other,
                };
                format!("must be {want}, not {got}")
            }
            None => message.to_string(),
        };
        // Inside a tagged table, the field is the key below it holding the refused value.
        let field = mismatch(message)
            .and_then(|(got, _)| self.find(path, &|_, v| unexpected_is(got, v)))
            .unwrap_or_else(|| path.to_string());
        located(self.error(if field.is_empty() { "(top)" } else { &field }, problem))
    }

    /// A key of the table at `path` that is not `key` but close enough to be its misspelling.
    pub(crate) fn key_near(&self, path: &str, key: &str) -> Option<String> {
        self.table_at(path)?
            .iter()
            .map(|(k, _)| k.get_ref())
            .find(|k| *k != key && crate::text::nearest(k, &[key]).is_some())
            .map(|k| k.to_string())
    }
}

/// `--set KEY=VALUE`: one dotted key of a TOML file set as if the file said it. The value is
/// read as TOML (`50`, `true`, `"x"`, `[1, 2]`), and as a string when it is not TOML
/// (`--set arms.treatment.review.policy=anchored`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    pub key: String,
    pub value: String,
    /// Where it was given, for messages: `--set KEY=VALUE`, or `--vary KEY=VALUES` for one
    /// grid point of a sweep.
    pub flag: &'static str,
}

impl std::fmt::Display for Override {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

impl std::str::FromStr for Override {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (key, value) = assignment(s, "VALUE", "arms.treatment.review.actionable_from", "50")?;
        Ok(Override {
            key: key.to_string(),
            value: canonical(value)?,
            flag: "--set",
        })
    }
}

/// One value as written on the command line, in its TOML form (`75 # a note` is `75`, `'x'` is
/// `"x"`): what messages echo and what is applied. A word that is not TOML stays as written
/// (it is read as a string). Refused: a line break, or text that holds more than one value (a
/// second key would be ignored, and the echo would show it).
pub fn canonical(value: &str) -> Result<String, String> {
    if value.contains(['\n', '\r']) {
        return Err(format!(
            "`{}` holds a line break: a value is one TOML value on one line",
            crate::text::one_line(value)
        ));
    }
    match format!("v = {value}").parse::<toml::Table>() {
        Ok(t) if t.len() == 1 => Ok(t
            .get("v")
            .map_or_else(|| value.to_string(), ToString::to_string)),
        Ok(_) => Err(format!("`{value}` is more than one TOML value")),
        Err(_) => Ok(value.to_string()),
    }
}

/// A comma list of values, split at the commas outside brackets and quotes: `25,50` is two
/// values, `["closed","reviewed"],[]` two lists.
pub fn split_list(values: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in values.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(values[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(values[start..].trim());
    out
}

/// `KEY=VALUE` split at the first `=`, the key a dotted key with no empty part, both trimmed;
/// `what` names the right side and the example shows a key and value, for the messages.
pub fn assignment<'a>(
    s: &'a str,
    what: &str,
    example_key: &str,
    example_value: &str,
) -> Result<(&'a str, &'a str), String> {
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not KEY={what} (e.g. {example_key}={example_value})"))?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(|p| p.trim().is_empty()) {
        return Err(format!("`{key}` is not a dotted key (e.g. {example_key})"));
    }
    Ok((key, value.trim()))
}

impl Override {
    /// The value as TOML, or as a string when it is not TOML.
    fn toml_value(&self) -> toml::Value {
        format!("v = {}", self.value)
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(self.value.clone()))
    }
}

/// `text` with `overrides` applied, in order, as TOML to read again; `None` when `text` is not
/// TOML (reading the file as written then says why). A key whose parent is a value, not a
/// table, is refused, naming the override.
pub(crate) fn apply(
    name: &str,
    text: &str,
    overrides: &[Override],
) -> Result<Option<String>, InputError> {
    let Ok(mut doc) = text.parse::<toml::Table>() else {
        return Ok(None);
    };
    for o in overrides {
        let parts: Vec<&str> = o.key.split('.').map(str::trim).collect();
        let (last, parents) = parts.split_last().expect("a key has a part");
        let mut table = &mut doc;
        for (i, part) in parents.iter().enumerate() {
            let entry = table
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            match entry {
                toml::Value::Table(t) => table = t,
                other => {
                    return Err(InputError::new(
                        format!("{name} ({} {o})", o.flag),
                        format!(
                            "`{}` is {}, not a table: --set cannot set a key inside it",
                            parts[..=i].join("."),
                            other.type_str()
                        ),
                    )
                    .field(format!("`{}`", o.key)))
                }
            }
        }
        table.insert(last.to_string(), o.toml_value());
    }
    toml::to_string(&doc)
        .map(Some)
        .map_err(|e| InputError::new(name, format!("cannot apply --set: {e}")))
}
