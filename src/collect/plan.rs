//! Live collection, the pure part (docs/guides/live-collection.md): the `[collect]` table, and the calls it plans —
//! one per (arm, target, reviewer, run) — with their argv and the paths they may write. Names
//! that reach a path are reduced to `[A-Za-z0-9._-]`, never `..` and never a separator, so no
//! reviewer or target name can write outside the run directory.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::input::toml::Spanned;
use serde::{Deserialize, Serialize};

use crate::corpus::collection::{Kind, Stage};
use crate::error::{line_at, InputError};

/// A parsed `[collect]` table.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Collect {
    pub kind: Kind,
    /// argv with `{reviewer}`, `{target}`, `{target_path}`, `{arm}`, `{run}` placeholders.
    pub command: Vec<String>,
    /// Reviewer personas; one unnamed reviewer for query collection.
    pub reviewers: Vec<String>,
    /// The glob of target files, relative to the experiment's folder.
    pub targets: String,
    pub runs: u32,
    /// How the reviewers' (or agent's) calls run, and the later stages' unless they override it.
    #[serde(flatten)]
    pub limits: Limits,
    /// `[collect.validators]`: validator calls over the collected findings (docs/guides/live-collection.md).
    pub validators: Option<Validators>,
    /// `[collect.judges]`: judge panels over the collected findings and targets (docs/guides/live-collection.md).
    pub judges: Option<Judges>,
    /// Environment variables whose values the collection's provenance records (a credential's
    /// only as set or unset).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provenance_env: Vec<String>,
    /// Where fields were written, for errors found later (a missing program, no targets).
    #[serde(skip)]
    pub lines: Lines,
}

/// How one stage's calls are run: `[collect]`'s values unless the stage's table sets its own.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Limits {
    pub concurrency: usize,
    #[serde(rename = "timeout_s", serialize_with = "seconds")]
    pub timeout: Duration,
    pub retries: u32,
    /// The wait before the first retry; each next one waits twice as long.
    #[serde(rename = "backoff_s", serialize_with = "seconds")]
    pub backoff: Duration,
}

impl Limits {
    /// `[collect]`'s defaults: 4 calls at once, 300 s each, one retry after 1 s.
    pub const DEFAULT: Limits = Limits {
        concurrency: 4,
        timeout: Duration::from_secs(300),
        retries: 1,
        backoff: Duration::from_secs(1),
    };
}

impl Overrides {
    /// These limits where set, else `base`'s.
    pub fn over(&self, base: Limits) -> Limits {
        Limits {
            concurrency: self.concurrency.unwrap_or(base.concurrency),
            timeout: self.timeout.unwrap_or(base.timeout),
            retries: self.retries.unwrap_or(base.retries),
            backoff: self.backoff.unwrap_or(base.backoff),
        }
    }
}

/// A stage table's own limits, each `None` when `[collect]`'s applies.
#[serde_with::skip_serializing_none]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Overrides {
    pub concurrency: Option<usize>,
    #[serde(rename = "timeout_s", serialize_with = "some_seconds")]
    pub timeout: Option<Duration>,
    pub retries: Option<u32>,
    #[serde(rename = "backoff_s", serialize_with = "some_seconds")]
    pub backoff: Option<Duration>,
}

/// `[collect.validators]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Validators {
    /// argv with the [`VALIDATOR_PLACEHOLDERS`].
    pub command: Vec<String>,
    #[serde(flatten)]
    pub limits: Overrides,
    /// The line of `command`, for errors found when collecting.
    #[serde(skip)]
    pub line: u64,
}

/// `[collect.judges]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judges {
    /// argv with the [`JUDGE_PLACEHOLDERS`].
    pub command: Vec<String>,
    /// Judge names, in the order their verdicts are written.
    pub judges: Vec<String>,
    pub items: Items,
    /// The dimensions every judge scores, each in [0, 1].
    pub dimensions: Vec<String>,
    #[serde(flatten)]
    pub limits: Overrides,
    #[serde(skip)]
    pub line: u64,
}

/// What the judges judge (docs/guides/live-collection.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Items {
    /// Every merged finding of every arm, whatever became of it.
    Findings,
    /// Every (arm, target): the whole-target item whose lift the trust verdict guards (docs/guides/trust.md).
    Targets,
    Both,
}

impl Items {
    pub fn findings(self) -> bool {
        matches!(self, Items::Findings | Items::Both)
    }
    pub fn targets(self) -> bool {
        matches!(self, Items::Targets | Items::Both)
    }
}

impl Collect {
    /// The stages the table declares, in the order they run.
    pub fn stages(&self) -> Vec<Stage> {
        let mut out = vec![Stage::Reviewers];
        if self.validators.is_some() {
            out.push(Stage::Validators);
        }
        if self.judges.is_some() {
            out.push(Stage::Judges);
        }
        out
    }

    /// A later stage's limits: its own where its table sets them, else `[collect]`'s.
    pub fn limits_with(&self, own: &Overrides) -> Limits {
        own.over(self.limits)
    }
}

fn some_seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// The lines of the `[collect]` fields whose problems only show when collecting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lines {
    pub command: u64,
    pub reviewers: u64,
    pub targets: u64,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// The one reviewer of a query collection: the agent runs once per target.
pub const AGENT: &str = "agent";

/// The placeholders `command` may use, each replaced as a whole argument.
pub const PLACEHOLDERS: &[&str] = &["{reviewer}", "{target}", "{target_path}", "{arm}", "{run}"];

/// The placeholders `[collect.validators]`'s command may use.
pub const VALIDATOR_PLACEHOLDERS: &[&str] = &[
    "{finding_id}",
    "{arm}",
    "{target}",
    "{target_path}",
    "{run}",
];

/// The placeholders `[collect.judges]`'s command may use.
pub const JUDGE_PLACEHOLDERS: &[&str] =
    &["{judge}", "{item_id}", "{arm}", "{target}", "{target_path}"];

/// Declares a `[collect]` table as written, read by serde with the position of each value (its
/// JSON Schema is derived from it), with the four keys of how its calls run: `concurrency`,
/// `timeout_s`, `retries` and `backoff_s`, each documented by the strings given (a stage's
/// table: that it overrides `[collect]`'s).
macro_rules! raw_table {
    (
        $(#[$meta:meta])* struct $name:ident { $($before:tt)* }
        stage { $($after:tt)* }
    ) => {
        raw_table! {
            $(#[$meta])* struct $name { $($before)* }
            limits [
                "Overrides `[collect]`'s `concurrency` for this stage.",
                "Overrides `[collect]`'s `timeout_s` for this stage.",
                "Overrides `[collect]`'s `retries` for this stage.",
                "Overrides `[collect]`'s `backoff_s` for this stage.",
            ]
            { $($after)* }
        }
    };
    (
        $(#[$meta:meta])* struct $name:ident { $($before:tt)* }
        limits [$concurrency:literal, $timeout:literal, $retries:literal, $backoff:literal $(,)?]
        { $($after:tt)* }
    ) => {
        $(#[$meta])*
        #[derive(Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($before)*
            #[doc = $concurrency]
            concurrency: Option<Spanned<i64>>,
            #[doc = $timeout]
            timeout_s: Option<Spanned<f64>>,
            #[doc = $retries]
            retries: Option<Spanned<i64>>,
            #[doc = $backoff]
            backoff_s: Option<Spanned<f64>>,
            $($after)*
        }

        impl $name {
            /// The limits as written, checked; `table` prefixes the field names in errors.
            fn limits(&self, table: &str, error: &Report<'_>) -> Result<Overrides, InputError> {
                let f = |name: &str| format!("{table}{name}");
                Ok(Overrides {
                    concurrency: whole(&self.concurrency, &f("concurrency"), 1, error)?
                        .map(|x| x as usize),
                    timeout: seconds_in(&self.timeout_s, TIMEOUT, &f("timeout_s"), error)?,
                    retries: whole(&self.retries, &f("retries"), 0, error)?.map(|x| x as u32),
                    backoff: seconds_in(&self.backoff_s, BACKOFF, &f("backoff_s"), error)?,
                })
            }
        }
    };
}

raw_table! {
    /// An experiment's `[collect]` table as written.
    struct RawCollect {
        /// `reviews` (default) or `queries`.
        kind: Option<Spanned<String>>,
        /// The argv of one call, with placeholders {reviewer}, {target}, {target_path}, {arm},
        /// {run}.
        command: Spanned<Vec<String>>,
        /// The reviewer personas, each called once per target and run (`{reviewer}`).
        reviewers: Option<Spanned<Vec<String>>>,
        /// A glob, relative to the experiment file, of the targets to review.
        targets: Spanned<String>,
        /// Repeats of every call, for test-retest stability (`{run}` from 0). Default 1.
        runs: Option<Spanned<i64>>,
    }
    limits [
        "Calls running at once. Default 4.",
        "Seconds a call may take before it is killed, with what it started, and recorded as \
         failed. Default 300.",
        "Further attempts of a call that failed. Default 1.",
        "Seconds before the first retry, doubling after each. Default 1.",
    ]
    {
        /// Validator calls over the collected findings (docs/guides/live-collection.md).
        validators: Option<RawValidators>,
        /// Judge panels over the collected findings and targets (docs/guides/live-collection.md).
        judges: Option<RawJudges>,
        /// Environment variables recorded in collect.json's provenance: their values, but only
        /// whether it is set for one whose name (KEY, TOKEN, SECRET, PASS, PWD, AUTH, CRED,
        /// COOKIE, SESSION, PRIVATE, CERT, SIGNATURE, in any case) or value (a key prefix such
        /// as `sk-`, `ghp_` or `AKIA`, a JWT, 32 or more characters of base64 or hex) looks like
        /// a credential: never its value or a hash of it, in any output.
        /// `["MODEL", "PROMPT_VERSION"]`.
        provenance_env: Option<Vec<String>>,
    }
}

raw_table! {
    /// `[collect.validators]` as written.
    struct RawValidators {
        /// The argv of one validator call, with placeholders {finding_id}, {arm}, {target},
        /// {target_path}, {run}.
        command: Spanned<Vec<String>>,
    }
    stage {}
}

raw_table! {
    /// `[collect.judges]` as written.
    struct RawJudges {
        /// The argv of one judge call, with placeholders {judge}, {item_id}, {arm}, {target},
        /// {target_path}.
        command: Spanned<Vec<String>>,
        /// Judge names, in the order their verdicts are written.
        judges: Spanned<Vec<String>>,
        /// `findings` (default), `targets` or `both`.
        items: Option<Spanned<String>>,
        /// The dimensions every judge scores in [0, 1].
        dimensions: Spanned<Vec<String>>,
    }
    stage {}
}

/// The `[collect]` table of an experiment file, read with the rest of it by `config`.
pub fn in_experiment(file: &Path, text: &str, raw: RawCollect) -> Result<Collect, InputError> {
    let name = file.display().to_string();
    let line = |offset: usize| line_at(text, offset);
    let error = |span: std::ops::Range<usize>, field: &str, problem: String| {
        InputError::new(&name, problem)
            .at_line(line(span.start))
            .field(format!("`collect.{field}`"))
    };
    let kinds = [("reviews", Kind::Reviews), ("queries", Kind::Queries)];
    let kind = choice(
        &raw.kind,
        "kind",
        &kinds,
        "is not a kind: use reviews or queries",
        &error,
    )?;
    let command = argv(&raw.command, "command", PLACEHOLDERS, &error)?;
    let reviewers = match (&raw.reviewers, kind) {
        (Some(r), Kind::Reviews) => {
            if r.get_ref().is_empty() {
                return Err(error(r.span(), "reviewers", "is empty".into()));
            }
            if let Some(bad) = r.get_ref().iter().find(|n| n.trim().is_empty()) {
                return Err(error(
                    r.span(),
                    "reviewers",
                    format!("{bad:?} is not a name"),
                ));
            }
            r.get_ref().clone()
        }
        (None, Kind::Reviews) => {
            return Err(InputError::new(&name, "names no reviewers")
                .field("`collect.reviewers`")
                .hint("reviewers = [\"coherence\", \"feasibility\"]"))
        }
        (Some(r), Kind::Queries) => {
            return Err(error(
                r.span(),
                "reviewers",
                "is for kind = \"reviews\"; a query collection runs the agent once per target"
                    .into(),
            ))
        }
        (None, Kind::Queries) => vec![AGENT.to_string()],
    };
    let runs = whole(&raw.runs, "runs", 1, &error)?.unwrap_or(1) as u32;
    let limits = raw.limits("", &error)?.over(Limits::DEFAULT);
    // The review stages have nothing to read in a query collection.
    let review_only = |span, field: &str, what: &str| match kind {
        Kind::Queries => Err(error(
            span,
            field,
            format!("{what}; a query collection has none"),
        )),
        Kind::Reviews => Ok(()),
    };
    let validators = raw
        .validators
        .map(|v| {
            review_only(v.command.span(), "validators", "validates review findings")?;
            Ok(Validators {
                command: argv(
                    &v.command,
                    "validators.command",
                    VALIDATOR_PLACEHOLDERS,
                    &error,
                )?,
                limits: v.limits("validators.", &error)?,
                line: line(v.command.span().start),
            })
        })
        .transpose()?;
    let judges = raw
        .judges
        .map(|j| {
            let what = "judges review findings and targets";
            review_only(j.command.span(), "judges", what)?;
            judges_table(j, &error, &line)
        })
        .transpose()?;
    if raw.targets.get_ref().trim().is_empty() {
        return Err(error(raw.targets.span(), "targets", "is empty".into()));
    }
    let provenance_env = raw.provenance_env.clone().unwrap_or_default();
    for (i, name) in provenance_env.iter().enumerate() {
        let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(InputError::new(
                file.display().to_string(),
                format!("`{name}` is not an environment variable's name (letters, digits and _)"),
            )
            .field(format!("`collect.provenance_env.{i}`")));
        }
    }
    Ok(Collect {
        kind,
        command,
        reviewers,
        targets: raw.targets.get_ref().clone(),
        runs,
        limits,
        validators,
        judges,
        provenance_env,
        lines: Lines {
            command: line(raw.command.span().start),
            reviewers: raw.reviewers.as_ref().map_or(0, |r| line(r.span().start)),
            targets: line(raw.targets.span().start),
        },
    })
}

/// How a table's field problem is reported: its span, its path under `collect.`, the problem.
type Report<'a> = dyn Fn(std::ops::Range<usize>, &str, String) -> InputError + 'a;

/// One of `options` by name; the first when the key is absent.
fn choice<T: Copy>(
    raw: &Option<Spanned<String>>,
    field: &str,
    options: &[(&str, T)],
    refusal: &str,
    error: &Report<'_>,
) -> Result<T, InputError> {
    let Some(raw) = raw else {
        return Ok(options[0].1);
    };
    match options.iter().find(|(name, _)| name == raw.get_ref()) {
        Some(&(_, value)) => Ok(value),
        None => Err(error(
            raw.span(),
            field,
            format!("`{}` {refusal}", raw.get_ref()),
        )),
    }
}

/// An argv list: a program first, placeholders only as whole arguments and only `allowed` ones.
fn argv(
    raw: &Spanned<Vec<String>>,
    field: &str,
    allowed: &[&str],
    error: &Report<'_>,
) -> Result<Vec<String>, InputError> {
    let command = raw.get_ref().clone();
    if command.is_empty() || command[0].trim().is_empty() {
        return Err(error(raw.span(), field, "names no program".into()).hint(
            "an argv list, e.g. [\"./reviewers/review.sh\", \"{reviewer}\", \"{target}\", \"{arm}\"]",
        ));
    }
    if let Some(arg) = command
        .iter()
        .find(|a| a.contains('{') && a.contains('}') && !allowed.contains(&a.as_str()))
    {
        return Err(error(
            raw.span(),
            field,
            format!(
                "`{arg}` is not a placeholder here; placeholders stand alone as whole arguments: {}",
                allowed.join(", ")
            ),
        ));
    }
    Ok(command)
}

/// A whole number from `min` to 100000, or `None` when not written.
fn whole(
    v: &Option<Spanned<i64>>,
    field: &str,
    min: i64,
    error: &Report<'_>,
) -> Result<Option<i64>, InputError> {
    let Some(v) = v else { return Ok(None) };
    let x = *v.get_ref();
    if x < min || x > 100_000 {
        return Err(error(
            v.span(),
            field,
            format!("{x} is out of range: a whole number from {min} to 100000"),
        ));
    }
    Ok(Some(x))
}

/// Seconds within `range`, written as `[0, 3600]` or `(0, 86400]` in the refusal, or `None`
/// when not written.
fn seconds_in(
    v: &Option<Spanned<f64>>,
    (range, shown): (fn(f64) -> bool, &str),
    field: &str,
    error: &Report<'_>,
) -> Result<Option<Duration>, InputError> {
    let Some(t) = v else { return Ok(None) };
    let x = *t.get_ref();
    if !(x.is_finite() && range(x)) {
        return Err(error(
            t.span(),
            field,
            format!("{x} is not a number of seconds in {shown}"),
        ));
    }
    Ok(Some(Duration::from_secs_f64(x)))
}

/// A call's timeout: more than nothing, at most a day.
const TIMEOUT: (fn(f64) -> bool, &str) = (|x| x > 0.0 && x <= 86_400.0, "(0, 86400]");
/// The wait before a retry: at most an hour.
const BACKOFF: (fn(f64) -> bool, &str) = (|x| (0.0..=3600.0).contains(&x), "[0, 3600]");

/// Names a stage lists: at least one, none blank, none twice.
fn names(
    raw: &Spanned<Vec<String>>,
    field: &str,
    error: &Report<'_>,
) -> Result<Vec<String>, InputError> {
    let list = raw.get_ref();
    if list.is_empty() {
        return Err(error(raw.span(), field, "is empty".into()));
    }
    for (i, name) in list.iter().enumerate() {
        if name.trim().is_empty() {
            return Err(error(raw.span(), field, format!("{name:?} is not a name")));
        }
        if list[..i].contains(name) {
            return Err(error(
                raw.span(),
                field,
                format!("`{name}` is listed twice"),
            ));
        }
    }
    Ok(list.clone())
}

fn judges_table(
    j: RawJudges,
    error: &Report<'_>,
    line: &dyn Fn(usize) -> u64,
) -> Result<Judges, InputError> {
    let items = [
        ("findings", Items::Findings),
        ("targets", Items::Targets),
        ("both", Items::Both),
    ];
    let refusal = "is not findings, targets or both";
    let items = choice(&j.items, "judges.items", &items, refusal, error)?;
    let judges = names(&j.judges, "judges.judges", error)?;
    Ok(Judges {
        command: argv(&j.command, "judges.command", JUDGE_PLACEHOLDERS, error)?,
        judges,
        items,
        dimensions: names(&j.dimensions, "judges.dimensions", error)?,
        limits: j.limits("judges.", error)?,
        line: line(j.command.span().start),
    })
}

/// A name reduced to `[A-Za-z0-9._-]` for use as one path component: other characters become
/// `_`, and so does a `.` that begins the name or follows another `.`, so the result is never
/// `.` or `..`, holds no `..`, and is never a hidden file. An empty name becomes `_`.
pub fn safe_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut previous = None;
    for c in name.chars() {
        let keep = c.is_ascii_alphanumeric()
            || matches!(c, '_' | '-')
            || (c == '.' && previous.is_some() && previous != Some('.'));
        out.push(if keep { c } else { '_' });
        previous = Some(c);
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// A target: its name (as recorded in the corpus) and the file whose content goes on stdin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub path: PathBuf,
}

impl Target {
    /// The target named by its file stem (`documents/plan.md` → `plan`).
    pub fn from_path(path: &Path) -> Target {
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        Target {
            name,
            path: path.to_path_buf(),
        }
    }
}

/// One call of the command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The recorded arm label (an arm's `source`).
    pub arm: String,
    pub target: Target,
    pub reviewer: String,
    pub run: u32,
    pub argv: Vec<String>,
    /// Where the command may write its full-detail return, relative to the run directory.
    pub artifact: PathBuf,
}

impl Call {
    /// The call as its line in the corpus records it (`corpus::call`): a recorded line of this
    /// call means done. A query collection's one reviewer is the agent, which its traces do not
    /// name: the call is the query's.
    pub fn call(&self, kind: Kind) -> crate::corpus::call::Call {
        use crate::corpus::call::Call as Recorded;
        match kind {
            Kind::Reviews => Recorded::Review {
                arm: self.arm.as_str().into(),
                target: self.target.name.as_str().into(),
                reviewer: self.reviewer.as_str().into(),
                run: self.run,
            },
            Kind::Queries => Recorded::Query {
                arm: self.arm.as_str().into(),
                query_id: self.target.name.as_str().into(),
                run: self.run,
            },
        }
    }
}

/// Every call, in a stable order: arm, target, reviewer, run. `arms` are the distinct recorded
/// labels to collect (two arms reading one label are collected once).
pub fn plan(collect: &Collect, arms: &[String], targets: &[Target]) -> Vec<Call> {
    let mut calls = Vec::new();
    for arm in arms {
        for target in targets {
            for reviewer in &collect.reviewers {
                for run in 0..collect.runs {
                    let argv = collect
                        .command
                        .iter()
                        .map(|a| match a.as_str() {
                            "{reviewer}" => reviewer.clone(),
                            "{target}" => target.name.clone(),
                            "{target_path}" => target.path.display().to_string(),
                            "{arm}" => arm.clone(),
                            "{run}" => run.to_string(),
                            other => other.to_string(),
                        })
                        .collect();
                    let artifact = Path::new("artifacts")
                        .join(safe_name(arm))
                        .join(safe_name(&target.name))
                        .join(format!("{}-r{run}.json", safe_name(reviewer)));
                    calls.push(Call {
                        arm: arm.clone(),
                        target: target.clone(),
                        reviewer: reviewer.clone(),
                        run,
                        argv,
                        artifact,
                    });
                }
            }
        }
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"name = "x"
[collect]
command = ["./reviewers/review.sh", "{reviewer}", "{target}", "{arm}"]   # argv; never a shell string
reviewers = ["coherence", "feasibility", "product-lens"]
targets = "documents/*.md"
runs = 3
concurrency = 4
timeout_s = 300
retries = 1
"#;

    /// The `[collect]` table of an experiment text, read alone.
    fn parse(text: &str) -> Result<Option<Collect>, InputError> {
        #[derive(Deserialize)]
        struct Only {
            collect: Option<RawCollect>,
        }
        let file = Path::new("e/experiment.toml");
        let only: Only =
            toml::from_str(text).map_err(|e| InputError::toml("e/experiment.toml", text, &e))?;
        only.collect
            .map(|c| in_experiment(file, text, c))
            .transpose()
    }

    #[test]
    fn the_spec_example_parses() {
        let c = parse(EXAMPLE).unwrap().unwrap();
        assert_eq!(c.kind, Kind::Reviews);
        assert_eq!(c.command.len(), 4);
        assert_eq!(c.reviewers, ["coherence", "feasibility", "product-lens"]);
        assert_eq!(c.runs, 3);
        assert_eq!(c.limits, Limits::DEFAULT);
        assert_eq!(parse("name = \"x\"\n").unwrap(), None);
    }

    #[test]
    fn bad_tables_are_refused_with_line_and_field() {
        for (text, needle) in [
            ("[collect]\ncommand = []\ntargets = \"*.md\"\nreviewers = [\"a\"]\n", "e/experiment.toml:2: `collect.command`: names no program"),
            ("[collect]\ncommand = \"./r.sh {reviewer}\"\ntargets = \"*.md\"\n", "invalid type"),
            ("[collect]\ncommand = [\"r\", \"--as={reviewer}\"]\ntargets = \"*.md\"\nreviewers = [\"a\"]\n", "placeholders stand alone"),
            ("[collect]\ncommand = [\"r\"]\ntargets = \"*.md\"\n", "names no reviewers"),
            ("[collect]\ncommand = [\"r\"]\ntargets = \"*.md\"\nreviewers = [\"a\"]\nruns = 0\n", "e/experiment.toml:5: `collect.runs`: 0 is out of range"),
            ("[collect]\ncommand = [\"r\"]\ntargets = \"*.md\"\nreviewers = [\"a\"]\ntimeout_s = -1\n", "not a number of seconds"),
            ("[collect]\ncommand = [\"r\"]\ntargets = \"*.md\"\nreviewers = [\"a\"]\nshell = true\n", "unknown field `shell`"),
            ("[collect]\nkind = \"traces\"\ncommand = [\"r\"]\ntargets = \"*.md\"\n", "is not a kind"),
            ("[collect]\nkind = \"queries\"\ncommand = [\"r\"]\ntargets = \"*.md\"\nreviewers = [\"a\"]\n", "is for kind = \"reviews\""),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_stage_writes_only_the_limits_it_overrides() {
        let o = Overrides {
            concurrency: Some(2),
            timeout: Some(Duration::from_millis(1500)),
            ..Overrides::default()
        };
        let json = serde_json::to_string(&o).unwrap();
        assert_eq!(json, r#"{"concurrency":2,"timeout_s":1.5}"#);
    }

    #[test]
    fn names_never_leave_their_path_component() {
        crate::text::assert_maps(
            safe_name,
            &[
                ("../../escape", "___.__escape"),
                ("..", "__"),
                (".", "_"),
                (".hidden", "_hidden"),
                ("", "_"),
                ("product lens/α", "product_lens__"),
                ("feasibility-2.v1", "feasibility-2.v1"),
            ],
        );
        for name in [
            "../../escape",
            "..",
            "/etc/passwd",
            "a\\b",
            "C:x",
            "\0",
            "a...b",
            "...",
        ] {
            let safe = safe_name(name);
            assert!(!safe.contains('/') && !safe.contains('\\') && !safe.contains(".."));
            assert!(!safe.starts_with('.'), "{name:?} → {safe:?}");
            assert_eq!(
                Path::new(&safe).components().count(),
                1,
                "{name:?} → {safe:?}"
            );
        }
    }

    #[test]
    fn the_plan_substitutes_whole_arguments_and_keeps_paths_inside() {
        let c = parse(EXAMPLE).unwrap().unwrap();
        let targets = [Target::from_path(Path::new("documents/plan.md"))];
        let arms = ["baseline".to_string(), "treatment".to_string()];
        let calls = plan(
            &Collect {
                reviewers: vec!["coherence".into(), "../../escape".into()],
                ..c
            },
            &arms,
            &targets,
        );
        assert_eq!(calls.len(), 2 * 2 * 3);
        assert_eq!(
            calls[0].argv,
            ["./reviewers/review.sh", "coherence", "plan", "baseline"]
        );
        assert_eq!(
            calls[0].artifact,
            Path::new("artifacts/baseline/plan/coherence-r0.json")
        );
        let escape = calls.iter().find(|c| c.reviewer == "../../escape").unwrap();
        // The name itself goes to the command and the corpus; only its path is reduced.
        assert_eq!(escape.argv[1], "../../escape");
        assert_eq!(
            escape.artifact,
            Path::new("artifacts/baseline/plan/___.__escape-r0.json")
        );
        for call in &calls {
            assert!(call
                .artifact
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_))));
        }
        assert_eq!(calls.last().unwrap().run, 2);
    }
}
