//! `calibench schema NAME` (docs/guides/live-collection.md): the JSON Schema of each thing a live command must print
//! and of each corpus file's line, on stdout, so that a model API's structured-output mode can
//! be held to it. Every schema is derived from the type its reader deserializes into (or, for
//! a finding, the type that states `validate`'s field rules); a test holds each schema and its
//! reader to the same verdict on every example corpus line and on a set of malformed ones.

use serde_json::{json, Value};

use crate::collect::stages::{JudgeVerdict, ValidatorVerdict};
use crate::config::RawExperiment;
use crate::corpus::{files, reviews};
use crate::error::{Error, InputError};
use crate::output::Render;
use crate::policy::{Mode, Scale};

#[derive(Debug, clap::Args)]
#[command(after_help = schema_help())]
pub struct SchemaArgs {
    /// What to describe: a command's output, a corpus file's stem, or experiment (listed below)
    pub name: String,
    /// The confidence scale a finding is held to (review-return, reviews)
    #[arg(long, value_enum)]
    pub scale: Option<ScaleArg>,
    /// The review mode whose finding fields apply (review-return, reviews)
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// The dimensions a judge scores, comma-separated (judge-verdict)
    #[arg(long, value_name = "A,B")]
    pub dimensions: Option<String>,
}

/// A printed schema.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(transparent)]
pub struct Printed(pub Value);

impl Render for Printed {
    fn human(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.0).unwrap_or_default();
        text.push('\n');
        text
    }
}

pub fn run(args: &SchemaArgs) -> Result<Printed, Error> {
    schema(args).map(Printed)
}

/// Every name `schema` knows, for the message naming them.
pub fn names() -> Vec<&'static str> {
    let mut out: Vec<&str> = crate::collect::RETURNS.to_vec();
    out.extend(files::stems());
    out.push("experiment");
    out
}

fn refuse(field: &str, problem: String) -> Error {
    InputError::new("calibench schema", problem)
        .field(field.to_string())
        .into()
}

/// The schema `args` names.
pub fn schema(args: &SchemaArgs) -> Result<Value, Error> {
    let name = args.name.as_str();
    let findings = |required: bool| -> Result<Option<Value>, Error> {
        match (args.scale, args.mode) {
            (Some(scale), Some(mode)) => Ok(Some(reviews::finding_schema(mode.into(), scale.into()))),
            (None, None) if !required => Ok(None),
            _ => Err(refuse(
                "`--scale`, `--mode`",
                format!("`{name}` needs both --scale (anchor|float) and --mode (doc|code): a finding's fields depend on them"),
            )),
        }
    };
    let not_here = |flag: &str, set: bool| -> Result<(), Error> {
        if set {
            return Err(refuse(flag, format!("{flag} is not an option of `{name}`")));
        }
        Ok(())
    };
    if name != "judge-verdict" {
        not_here("--dimensions", args.dimensions.is_some())?;
    }
    if !matches!(name, "reviews" | "review-return") {
        not_here("--scale", args.scale.is_some())?;
        not_here("--mode", args.mode.is_some())?;
    }
    let derived = |s: schemars::Schema| serde_json::to_value(s).unwrap_or(Value::Null);
    let out = match name {
        "reviews" => {
            let mut s = files::schema_of("reviews").map(derived).unwrap_or_default();
            match findings(false)? {
                Some(f) => embed_findings(&mut s, f),
                // Neither flag: a finding's shape in either mode, on either scale; --mode and
                // --scale narrow it to what one arm reads.
                None => embed_findings(&mut s, any_finding()),
            }
            s
        }
        "review-return" => {
            let mut s = files::schema_of("reviews").map(derived).unwrap_or_default();
            // The call names target, arm, reviewer and run; a return may repeat them.
            s["required"] = json!([]);
            s["title"] = json!("review return");
            s["description"] = json!(
                "What a [collect] reviewer command prints on stdout (docs/guides/live-collection.md): the compact return; identity fields, when present, must name the call."
            );
            if let Some(f) = findings(true)? {
                embed_findings(&mut s, f);
            }
            s
        }
        "query-trace" => {
            let mut s = files::schema_of("queries").map(derived).unwrap_or_default();
            s["required"] = json!(["tools"]);
            s["title"] = json!("query trace");
            s["description"] = json!(
                "What a [collect] agent command (kind = \"queries\") prints on stdout (docs/guides/live-collection.md); query_id, arm and run, when present, must name the call."
            );
            s
        }
        "validator-verdict" => derived(schemars::schema_for!(ValidatorVerdict)),
        "judge-verdict" => {
            let Some(dimensions) = &args.dimensions else {
                return Err(refuse(
                    "`--dimensions`",
                    "`judge-verdict` needs --dimensions a,b: a verdict holds exactly the declared dimensions".into(),
                ));
            };
            let dims: Vec<&str> = dimensions.split(',').map(str::trim).collect();
            if dims.iter().any(|d| d.is_empty()) {
                return Err(refuse(
                    "`--dimensions`",
                    format!("{dimensions:?} names an empty dimension"),
                ));
            }
            let mut s = derived(schemars::schema_for!(JudgeVerdict));
            let score = json!({"type": "number", "minimum": 0, "maximum": 1});
            s["properties"]["per_dimension"] = json!({
                "description": "A score in [0, 1] for each declared dimension, and no other.",
                "type": "object",
                "properties": dims.iter().map(|d| (d.to_string(), score.clone())).collect::<serde_json::Map<_, _>>(),
                "required": dims,
                "additionalProperties": false,
            });
            s
        }
        "experiment" => derived(schemars::schema_for!(RawExperiment)),
        stem => match files::schema_of(stem) {
            Some(s) => derived(s),
            None => {
                return Err(refuse(
                    "NAME",
                    format!(
                        "`{stem}` is not a schema calibench knows: {}",
                        names().join(", ")
                    ),
                ))
            }
        },
    };
    Ok(out)
}

/// Puts a finding's schema under `findings.items` of a return's, its definitions beside the
/// return's so that every `$ref` resolves from the one document.
/// A doc or a code finding, its confidence on either scale: `schema reviews` without `--mode`
/// and `--scale`.
fn any_finding() -> Value {
    let mut defs = serde_json::Map::new();
    let mut variants = Vec::new();
    for mode in [Mode::Doc, Mode::Code] {
        let mut f = reviews::finding_schema(mode, Scale::Float);
        let anchor = reviews::finding_schema(mode, Scale::Anchor);
        f["properties"]["confidence"] = json!({
            "anyOf": [f["properties"]["confidence"].clone(), anchor["properties"]["confidence"].clone()],
            "description": "float scale (a number in [0, 1]) or anchor scale (0, 25, 50, 75, 100), as the reading arm's `scale` says"
        });
        if let Some(Value::Object(d)) = f.as_object_mut().and_then(|o| o.remove("$defs")) {
            // The code finding's definitions are the wider (`advisory` is a code class).
            defs.extend(d);
        }
        if let Some(o) = f.as_object_mut() {
            o.remove("$schema");
        }
        f["description"] = json!(match mode {
            Mode::Doc => "a doc finding (mode = \"doc\")",
            Mode::Code => "a code finding (mode = \"code\")",
        });
        variants.push(f);
    }
    // A finding that breaks its rules is dropped and counted by the arm that reads it, never a
    // refusal of its line: the line's schema shows the shapes and accepts any finding (`true`).
    variants.push(Value::Bool(true));
    json!({
        "anyOf": variants,
        "description": "A finding of either mode (the first two shapes). A finding that breaks its rules is dropped and counted by the arm that reads it, not a refusal of the line, so any value is accepted here; `calibench schema reviews --mode doc|code --scale float|anchor` gives the shape one arm reads, strictly.",
        "$defs": defs,
    })
}

fn embed_findings(schema: &mut Value, mut finding: Value) {
    if let Some(Value::Object(defs)) = finding.as_object_mut().and_then(|f| f.remove("$defs")) {
        if let Some(Value::Object(root)) = schema.get_mut("$defs") {
            root.extend(defs);
        }
    }
    if let Some(f) = finding.as_object_mut() {
        f.remove("$schema");
    }
    schema["properties"]["findings"]["items"] = finding;
}

impl From<ScaleArg> for Scale {
    fn from(s: ScaleArg) -> Scale {
        match s {
            ScaleArg::Anchor => Scale::Anchor,
            ScaleArg::Float => Scale::Float,
        }
    }
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Doc => Mode::Doc,
            ModeArg::Code => Mode::Code,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ScaleArg {
    Anchor,
    Float,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    Doc,
    Code,
}

/// `schema --help`'s list of names, from the names `schema` knows.
fn schema_help() -> String {
    format!(
        "Names: {} (review-return with --scale and --mode, judge-verdict with --dimensions); the corpus files {} (reviews optionally with --scale and --mode); experiment for experiment.toml.",
        crate::collect::RETURNS.join(", "),
        files::stems().join(", ")
    )
}

impl super::Run for SchemaArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        Ok(ctx.answer(&run(&self)?, crate::exit::Verdict::Pass))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::collect::arrival::{self, Expect};
    use crate::collect::stages;
    use crate::corpus::collection::Kind;
    use crate::corpus::{queries, targets, validations, verdicts};

    fn args(
        name: &str,
        scale: Option<Scale>,
        mode: Option<Mode>,
        dims: Option<&str>,
    ) -> SchemaArgs {
        SchemaArgs {
            name: name.into(),
            scale: scale.map(|s| match s {
                Scale::Anchor => ScaleArg::Anchor,
                Scale::Float => ScaleArg::Float,
            }),
            mode: mode.map(|m| match m {
                Mode::Doc => ModeArg::Doc,
                Mode::Code => ModeArg::Code,
            }),
            dimensions: dims.map(str::to_string),
        }
    }

    /// The schema, compiled by an independent validator (which also checks it is a schema).
    fn compiled(a: &SchemaArgs) -> jsonschema::Validator {
        let s = schema(a).unwrap();
        jsonschema::validator_for(&s).unwrap_or_else(|e| panic!("{}: {e}", a.name))
    }

    /// Whether the reader of corpus file `stem` reports no problem on `line` read alone (with
    /// `finding`'s scale and mode, its findings are held to their field rules too).
    fn reader_accepts(stem: &str, line: &str, finding: Option<(Mode, Scale)>) -> bool {
        let bytes = line.as_bytes();
        match stem {
            "reviews" => {
                let (records, problems) = reviews::parse("x", bytes);
                problems.is_empty()
                    && finding.is_none_or(|(mode, scale)| {
                        records.iter().all(|r| {
                            r.findings
                                .iter()
                                .all(|f| reviews::Unchecked::check(f, mode, scale).is_ok())
                        })
                    })
            }
            "queries" => queries::parse("x", bytes).1.is_empty(),
            "verdicts" => verdicts::parse("x", bytes).1.is_empty(),
            "validations" => {
                let p = validations::parse("x", bytes);
                p.problems.is_empty() && p.malformed.is_empty()
            }
            "targets" => targets::parse("x", bytes).1.is_empty(),
            "scores" => crate::corpus::scores::parse("x", bytes).1.is_empty(),
            "labels" => crate::corpus::labels::parse("x", bytes).1.is_empty(),
            other => panic!("{other}"),
        }
    }

    fn agree(stem: &str, line: &str, finding: Option<(Mode, Scale)>, v: &jsonschema::Validator) {
        let value: Value = serde_json::from_str(line).unwrap();
        let reader = reader_accepts(stem, line, finding);
        let schema = v.is_valid(&value);
        assert_eq!(
            reader, schema,
            "{stem} {finding:?}: the reader says {reader}, the schema {schema}, on {line}"
        );
    }

    /// Malformed lines of each corpus file, each of which both the reader and the schema refuse.
    const MALFORMED: &[(&str, &str)] = &[
        (
            "reviews",
            r#"{"arm": "a", "reviewer": "r", "findings": []}"#,
        ),
        (
            "reviews",
            r#"{"target": "", "arm": "a", "reviewer": "r", "findings": []}"#,
        ),
        ("reviews", r#"{"target": "t", "arm": "a", "reviewer": "r"}"#),
        (
            "reviews",
            r#"{"target": "t", "arm": "a", "reviewer": "r", "findings": {}}"#,
        ),
        (
            "reviews",
            r#"{"target": "t", "arm": "a", "reviewer": "r", "run": -1, "findings": []}"#,
        ),
        (
            "reviews",
            r#"{"target": "t", "arm": "a", "reviewer": "r", "status": "broken", "findings": []}"#,
        ),
        (
            "reviews",
            r#"{"target": "t", "arm": "a", "reviewer": "r", "findings": [], "residual_risks": "x"}"#,
        ),
        (
            "scores",
            r#"{"arm": "a", "task": "t", "item": 1.5, "repeat": 1, "scorer": "m", "score": 1, "source": "s"}"#,
        ),
        (
            "scores",
            r#"{"arm": "a", "task": "t", "item": 1, "repeat": 0, "scorer": "m", "score": 1, "source": "s"}"#,
        ),
        (
            "scores",
            r#"{"arm": "a", "task": "t", "item": 1, "repeat": 1, "scorer": "m", "source": "s"}"#,
        ),
        (
            "scores",
            r#"{"arm": "a", "task": "t", "item": 1, "repeat": 1, "scorer": "m", "score": 1, "confidence": 2, "source": "s"}"#,
        ),
        (
            "labels",
            r#"{"item_id": "f1", "arm": "a", "annotator": "ann", "per_dimension": {"real": 1.5}}"#,
        ),
        (
            "labels",
            r#"{"item_id": "f1", "arm": "a", "annotator": "ann", "per_dimension": {}}"#,
        ),
        (
            "labels",
            r#"{"item_id": "f1", "arm": "a", "per_dimension": {"real": 1}}"#,
        ),
        // Regression (issue 34): a finite 1e308 made an item's mean infinite and its interval NaN.
        (
            "scores",
            r#"{"arm": "a", "task": "t", "item": 1, "repeat": 1, "scorer": "m", "score": -1e308, "source": "s"}"#,
        ),
        ("queries", r#"{"tools": []}"#),
        (
            "queries",
            r#"{"query_id": "q", "tools": [{"tool": "grep", "phase": "later"}]}"#,
        ),
        (
            "queries",
            r#"{"query_id": "q", "tools": [{"tool": "grep", "hits": -2}]}"#,
        ),
        (
            "queries",
            r#"{"query_id": "q", "tools": [{"tool": "read", "score": 1.5}]}"#,
        ),
        (
            "queries",
            r#"{"query_id": "q", "tools": [{"tool": "grep", "attempt": 0}]}"#,
        ),
        (
            "verdicts",
            r#"{"item_id": "i", "arm": "a", "verdicts": [{"model": "m", "per_dimension": {"real": 1.5}}]}"#,
        ),
        (
            "verdicts",
            r#"{"item_id": "i", "arm": "a", "verdicts": [{"model": "m"}]}"#,
        ),
        (
            "verdicts",
            r#"{"item_id": "i", "arm": "a", "verdicts": [{"model": "m", "per_dimension": {}}]}"#,
        ),
        ("verdicts", r#"{"arm": "a", "verdicts": []}"#),
        (
            "validations",
            r#"{"arm": "a", "target": "t", "finding": "f"}"#,
        ),
        (
            "validations",
            r#"{"arm": "a", "target": "t", "finding": "f", "validated": "yes"}"#,
        ),
        (
            "validations",
            r#"{"arm": "a", "target": "t", "validated": true}"#,
        ),
        (
            "validations",
            r#"{"arm": "a", "target": "t", "finding": "f", "status": "done", "validated": true}"#,
        ),
        ("targets", r#"{"pr": {"state": "OPEN"}}"#),
        (
            "targets",
            r#"{"target": "t", "pr": {"state": "REOPENED", "title": "x"}}"#,
        ),
    ];

    /// Findings each broken in one field, for the field-rule schemas.
    const BROKEN_FINDINGS: &[&str] = &[
        r#"{"title": "", "severity": "P1", "section": "s", "finding_type": "error", "autofix_class": "manual", "confidence": 50}"#,
        r#"{"title": "t", "severity": "P9", "section": "s", "finding_type": "error", "autofix_class": "manual", "confidence": 50}"#,
        r#"{"title": "t", "severity": "P1", "section": "s", "finding_type": "typo", "autofix_class": "manual", "confidence": 50}"#,
        r#"{"title": "t", "severity": "P1", "section": "s", "finding_type": "error", "autofix_class": "advisory", "confidence": 50}"#,
        r#"{"title": "t", "severity": "P1", "section": "s", "finding_type": "error", "autofix_class": "manual", "confidence": 62}"#,
        r#"{"title": "t", "severity": "P1", "section": "s", "finding_type": "error", "autofix_class": "manual", "confidence": 0.5, "evidence": []}"#,
        r#"{"title": "t", "severity": "P1", "file": " ", "line": 3, "autofix_class": "advisory", "owner": "human", "requires_verification": false, "pre_existing": false, "confidence": 0.5}"#,
        r#"{"title": "t", "severity": "P1", "file": "a.rs", "line": 0, "autofix_class": "advisory", "owner": "human", "requires_verification": false, "pre_existing": false, "confidence": 0.5}"#,
        r#"{"title": "t", "severity": "P1", "file": "a.rs", "line": 3, "autofix_class": "advisory", "owner": "bot", "requires_verification": false, "pre_existing": false, "confidence": 0.5}"#,
        r#"{"title": "t", "severity": "P1", "file": "a.rs", "line": 3, "autofix_class": "advisory", "owner": "human", "pre_existing": false, "confidence": 0.5}"#,
        r#"{"title": "t", "severity": "P1", "file": "a.rs", "line": 3, "autofix_class": "advisory", "owner": "human", "requires_verification": false, "pre_existing": false, "confidence": 75}"#,
    ];

    /// A line meets its file's schema exactly when the reader reports no problem on it: every
    /// example corpus line (reviews also under each arm's scale and the experiment's mode), and
    /// every malformed line above.
    #[test]
    fn the_readers_and_the_schemas_agree_on_every_example_and_malformed_line() {
        let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
        let mut checked = 0;
        let mut dirs: Vec<_> = std::fs::read_dir(&corpora)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        dirs.sort();
        for dir in dirs {
            let exp = crate::pipeline::load::experiment(&dir.join("experiment.toml"), &[])
                .ok()
                .map(|(e, _)| e);
            for stem in files::stems() {
                let Ok(text) = std::fs::read_to_string(dir.join(format!("{stem}.jsonl"))) else {
                    continue;
                };
                let bare = compiled(&args(stem, None, None, None));
                // Under each arm's scale and mode, for the lines of the label it reads.
                let arms: Vec<(String, Mode, Scale)> = match (&exp, stem) {
                    (Some(e), "reviews") => e
                        .arms()
                        .iter()
                        .map(|a| (a.source.clone(), e.mode, a.review.scale()))
                        .collect(),
                    _ => Vec::new(),
                };
                let ruled: Vec<(&str, Mode, Scale, jsonschema::Validator)> = arms
                    .iter()
                    .map(|(label, mode, scale)| {
                        let v = compiled(&args(stem, Some(*scale), Some(*mode), None));
                        (label.as_str(), *mode, *scale, v)
                    })
                    .collect();
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    agree(stem, line, None, &bare);
                    let value: Value = serde_json::from_str(line).unwrap();
                    for (label, mode, scale, v) in &ruled {
                        if value["arm"] == *label {
                            agree(stem, line, Some((*mode, *scale)), v);
                        }
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 1500, "{checked} example lines");
        // Lines the examples lack but calibench writes. Regression (issue 34): the schema
        // refused `"score": null`, which import writes for every errored sample.
        let (stem, line) = (
            "scores",
            r#"{"arm": "a", "task": "t", "item": 1, "repeat": 1, "scorer": "m", "score": null, "missing": "error: timeout", "source": "s"}"#,
        );
        let v = compiled(&args(stem, None, None, None));
        assert!(reader_accepts(stem, line, None), "{line}");
        agree(stem, line, None, &v);
        for (stem, line) in MALFORMED {
            let v = compiled(&args(stem, None, None, None));
            assert!(!reader_accepts(stem, line, None), "{line}");
            agree(stem, line, None, &v);
        }
        for (mode, scale) in [(Mode::Doc, Scale::Anchor), (Mode::Code, Scale::Float)] {
            let v = compiled(&args("reviews", Some(scale), Some(mode), None));
            for f in BROKEN_FINDINGS {
                let line =
                    format!(r#"{{"target": "t", "arm": "a", "reviewer": "r", "findings": [{f}]}}"#);
                agree("reviews", &line, Some((mode, scale)), &v);
            }
        }
    }

    /// What the schemas cannot say, and the readers refuse: checks across values of one line.
    /// Named here so that a change to either side shows.
    #[test]
    fn what_only_the_readers_check_is_listed() {
        for (stem, line) in [
            // A judge named twice in one item.
            (
                "verdicts",
                r#"{"item_id": "i", "arm": "a", "verdicts": [{"model": "m", "per_dimension": {"real": 1}}, {"model": "m", "per_dimension": {"real": 0}}]}"#,
            ),
            // More relevant files than files read.
            (
                "queries",
                r#"{"query_id": "q", "tools": [{"tool": "read", "files": 2, "relevant": 3}]}"#,
            ),
            // A key repeated in one object (a JSON parser keeps one of them).
            ("targets", r#"{"target": "t", "target": "u"}"#),
        ] {
            let v = compiled(&args(stem, None, None, None));
            let value: Value = serde_json::from_str(line).unwrap();
            assert!(!reader_accepts(stem, line, None), "{line}");
            assert!(v.is_valid(&value), "{line}");
        }
    }

    /// What a command prints is accepted exactly when it meets its schema.
    #[test]
    fn the_protocols_and_their_schemas_agree() {
        let judge = compiled(&args("judge-verdict", None, None, Some("real,important")));
        for out in [
            r#"{"per_dimension": {"real": 1, "important": 0.5}}"#,
            r#"{"per_dimension": {"real": 1, "important": 0.5}, "rationale": "why"}"#,
            r#"{"per_dimension": {"real": 1}}"#,
            r#"{"per_dimension": {"real": 1, "important": 0.5, "novel": 0.2}}"#,
            r#"{"per_dimension": {"real": 1.2, "important": 0.5}}"#,
            r#"{"per_dimension": {"real": "high", "important": 0.5}}"#,
            r#"{"scores": {"real": 1, "important": 0.5}}"#,
        ] {
            let ok =
                stages::judge_scores(out.as_bytes(), &["real".into(), "important".into()]).is_ok();
            let value: Value = serde_json::from_str(out).unwrap();
            assert_eq!(ok, judge.is_valid(&value), "{out}");
        }
        let validator = compiled(&args("validator-verdict", None, None, None));
        for out in [
            r#"{"validated": true}"#,
            r#"{"validated": false, "reason": "handled in caller", "reasoning": "…"}"#,
            r#"{"validated": "yes"}"#,
            r#"{"reason": "looks fine"}"#,
            r#"{"validated": true, "reason": 3}"#,
        ] {
            let ok = stages::validator_verdict(out.as_bytes()).is_ok();
            let value: Value = serde_json::from_str(out).unwrap();
            assert_eq!(ok, validator.is_valid(&value), "{out}");
        }
        let expect = Expect {
            kind: Kind::Reviews,
            mode: Mode::Doc,
            scales: vec![Scale::Anchor],
        };
        let review = compiled(&args(
            "review-return",
            Some(Scale::Anchor),
            Some(Mode::Doc),
            None,
        ));
        let good = r#"{"title": "t", "severity": "P1", "section": "s", "finding_type": "error", "autofix_class": "manual", "confidence": 50}"#;
        for out in [
            format!(r#"{{"findings": [{good}]}}"#),
            format!(r#"{{"findings": [{good}], "residual_risks": ["r"]}}"#),
            r#"{"findings": []}"#.to_string(),
            r#"{"findings": {}}"#.to_string(),
            r#"{"residual_risks": []}"#.to_string(),
        ]
        .into_iter()
        .chain(
            BROKEN_FINDINGS[..6]
                .iter()
                .map(|f| format!(r#"{{"findings": [{f}]}}"#)),
        ) {
            let ok = arrival::accept(out.as_bytes(), &arrival::example_call(), &expect).is_ok();
            let value: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(ok, review.is_valid(&value), "{out}");
        }
        let trace = compiled(&args("query-trace", None, None, None));
        let q = Expect {
            kind: Kind::Queries,
            ..expect
        };
        for out in [
            r#"{"tools": []}"#,
            r#"{"query": "where?", "tools": [{"tool": "grep", "hits": 2}], "correct": true}"#,
            r#"{"tools": [{"tool": "grep", "phase": "later"}]}"#,
            r#"{"correct": true}"#,
        ] {
            let ok = arrival::accept(out.as_bytes(), &arrival::example_call(), &q).is_ok();
            let value: Value = serde_json::from_str(out).unwrap();
            assert_eq!(ok, trace.is_valid(&value), "{out}");
        }
    }

    // Issue 35: `schema --help` listed the corpus files by hand and missed `scores`.
    #[test]
    fn help_lists_every_name() {
        let help = schema_help();
        for name in names() {
            assert!(help.contains(name), "{name} is not in: {help}");
        }
    }

    #[test]
    fn names_and_options_are_checked() {
        for (a, needle) in [
            (
                args("nope", None, None, None),
                "is not a schema calibench knows",
            ),
            (
                args("review-return", None, None, None),
                "needs both --scale",
            ),
            (
                args("reviews", Some(Scale::Float), None, None),
                "needs both --scale",
            ),
            (
                args("judge-verdict", None, None, None),
                "needs --dimensions",
            ),
            (
                args("judge-verdict", None, None, Some("a,,b")),
                "empty dimension",
            ),
            (
                args("queries", Some(Scale::Float), None, None),
                "--scale is not an option",
            ),
            (
                args("targets", None, None, Some("a")),
                "--dimensions is not an option",
            ),
        ] {
            let e = schema(&a).unwrap_err().to_string();
            assert!(e.contains(needle), "{}: {e}", a.name);
        }
        for name in names() {
            let a = match name {
                "review-return" => args(name, Some(Scale::Float), Some(Mode::Code), None),
                "judge-verdict" => args(name, None, None, Some("real")),
                _ => args(name, None, None, None),
            };
            compiled(&a);
        }
    }
}
