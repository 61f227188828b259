//! `calibench reference`: the reference of every input file, experiment key, gate-policy key,
//! metric and command, as Markdown, generated from the types calibench reads with (their JSON
//! Schemas, the metric catalogues, the command-line definition). `docs/reference.md` is its
//! output, and a test holds the two equal, so the reference cannot drift from the code.

use clap::CommandFactory;
use serde_json::Value;

use super::Cli;
use crate::config::RawExperiment;
use crate::corpus::{files, reviews};
use crate::error::Error;
use crate::generate::starter::InitKind;
use crate::output::Render;
use crate::policy::{Mode, Scale};

/// The reference, as Markdown.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(transparent)]
pub struct Reference(pub String);

impl Render for Reference {
    fn human(&self) -> String {
        self.0.clone()
    }
}

pub fn run() -> Result<Reference, Error> {
    Ok(Reference(markdown()))
}

/// The whole reference. Pure.
pub fn markdown() -> String {
    let mut s = String::from(
        "# calibench reference\n\n\
         Every input file, experiment key, gate-policy key, metric and command, generated from the \
         types calibench reads with: `calibench reference` prints this file, and a test checks \
         that it matches. How to use them is in the [guides](guides/); what the figures mean is in \
         each guide and in [the decision](#the-decision).\n\n\
         - [Input files](#input-files)\n\
         - [The input ledger](#the-input-ledger)\n\
         - [Experiment: `experiment.toml`](#experiment-experimenttoml)\n\
         - [Gate policy: `gate.toml` or `[gate]`](#gate-policy-gatetoml-or-gate)\n\
         - [The decision](#the-decision)\n\
         - [Metrics](#metrics)\n\
         - [Cost and latency](#cost-and-latency)\n\
         - [Commands and exit status](#commands-and-exit-status)\n\n",
    );
    s += &input_files();
    s += &ledger();
    s += &experiment_keys();
    s += &gate_keys();
    s += DECISION;
    s += &metrics();
    s += &cost();
    s += &commands();
    s
}

/// What a call spent: where it is read from and the figures made of it, from their
/// declarations.
fn cost() -> String {
    use crate::replay::{review_metrics, usage};
    let review: Vec<String> = review_metrics::REVIEW_METRICS
        .iter()
        .filter(|m| m.usage)
        .map(|m| format!("`{}`", m.name))
        .collect();
    let names = |parts: &[usage::Part]| -> String {
        parts
            .iter()
            .map(|u| format!("`{}`", u.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "## Cost and latency\n\n\
         A reviewer return, a query trace, a judge verdict and an imported score line may say what \
         its call spent: `usage {{input_tokens, output_tokens, cost_usd}}` (each optional, 0 or more; \
         anything else is a malformed line with its reason) and `elapsed_ms`. `calibench collect` \
         writes each accepted call's wall time as `elapsed_ms`, from launch to exit of the attempt \
         that returned, unless the command printed its own (a harness that times its model call \
         keeps that). `calibench import` carries promptfoo's `cost`, `latencyMs` and \
         `response.tokenUsage`, and Inspect's `model_usage` tokens (and `total_cost` where the \
         log has it) and `total_time`; lm-eval logs hold none.\n\n\
         - **Per target** (review): {review}, summed over the target's reviewer calls and \
         averaged over its runs; a target the arm skips makes no call and costs 0. Per arm: \
         `<name>_mean`, and `latency_p95_ms`, the 95th percentile over targets, a figure of the \
         whole set with a distribution-free 95% interval in the arm's `ci` (two order \
         statistics, given 72 targets or more).\n\
         - **Per query** (traces): {queries}; per arm `<name>_mean` and `query_latency_p95_ms`.\n\
         - **Per item** (imported scores, `scores.delta`): {items}; per arm `<name>_mean` and \
         `item_latency_p95_ms`. A sample's usage is counted once, however many scorers it has.\n\
         - **The judges' cost** is the cost of evaluating, `evaluation` in `metrics.json`, summed \
         over both arms and never part of an arm's.\n\n\
         Each is compared as a paired delta over the units both arms report it for, and as a \
         **relative** change, treatment ÷ baseline − 1 of the paired means, with Fieller's 95% \
         interval (`<delta>.relative {{value, ci, p_edge}}`; `ci` is null when the baseline mean \
         is not shown to differ from 0). A guard with a percentage margin reads on that interval \
         (see [the decision](#the-decision)); a sweep of reviewer returns carries `cost_usd` at \
         every point and `--frontier cost_usd:precision` marks the points no other beats on both \
         (docs/guides/threshold-sweep.md).\n\n\
         A guard and the decision line it gives, from `tests/cost.rs` (a reviewer whose \
         treatment prompt is 30% longer, over eight documents):\n\n\
         ```toml\n[decision]\ndistinct_values = \"decrease\"\ncost_usd = {{ want = \"no-increase\", margin = \"10%\" }}\n```\n\n\
         ```text\ncost per target (USD) rose 0.0257 → 0.0298 (+16.0%), a loss beyond its margin of 10% \
         (p adj. <0.001, against the margin's edge; the lower bound of its 95% interval of the relative \
         change (Fieller's) is +15.2%, above +10%)\n```\n\n",
        review = review.join(", "),
        queries = names(&usage::QUERY_USAGE),
        items = names(&usage::ITEM_USAGE),
    )
}

/// One row of a field table.
struct Row {
    path: String,
    kind: String,
    required: bool,
    /// The default, when the schema states one that fits in a cell.
    default: Option<String>,
    meaning: String,
    /// The variants of a tagged table this key belongs to (`policy = "anchored"`), when it
    /// does not belong to all of them.
    only: Vec<String>,
    /// The default under each of `only`'s variants, in its order.
    defaults: Vec<Option<String>>,
}

/// The node a `$ref` points at, or the node.
pub(crate) fn resolve<'a>(node: &'a Value, root: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => &root["$defs"][r.rsplit('/').next().unwrap_or(r)],
        None => node,
    }
}

/// The subschemas a node combines under `keywords` (`anyOf`, `oneOf`, `allOf`).
pub(crate) fn combined<'a>(
    node: &'a Value,
    keywords: &'a [&str],
) -> impl Iterator<Item = &'a Value> + 'a {
    keywords
        .iter()
        .filter_map(|k| node.get(*k).and_then(Value::as_array))
        .flatten()
}

/// A value's type in words: `string`, `one of a, b`, `list of string`, `number in [0, 1]`.
fn kind(node: &Value, root: &Value) -> String {
    let node = resolve(node, root);
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = values
            .iter()
            .map(|v| match v {
                Value::String(s) => format!("`{s}`"),
                other => format!("`{other}`"),
            })
            .collect();
        return format!("one of {}", names.join(", "));
    }
    if let Some(c) = node.get("const") {
        return format!(
            "`{}`",
            c.as_str().map_or_else(|| c.to_string(), str::to_string)
        );
    }
    for alt in ["anyOf", "oneOf"] {
        if let Some(alts) = node.get(alt).and_then(Value::as_array) {
            let kinds: Vec<String> = alts
                .iter()
                .map(|a| kind(a, root))
                .filter(|k| k != "null")
                .collect();
            let mut kinds_unique: Vec<String> = Vec::new();
            for k in kinds {
                if !kinds_unique.contains(&k) {
                    kinds_unique.push(k);
                }
            }
            return kinds_unique.join(" or ");
        }
    }
    let types: Vec<&str> = match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types == ["null"] {
        // The absent alternative of an optional value, which the "required" column says.
        return "null".into();
    }
    let types: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
    let base = match types.as_slice() {
        ["array"] => format!(
            "list of {}",
            node.get("items").map_or("values".into(), |i| kind(i, root))
        ),
        ["object"] if node.get("properties").is_none() => match node.get("additionalProperties") {
            Some(v) if v.is_object() => format!("table of {}", kind(v, root)),
            _ => "table".into(),
        },
        [one] => one.to_string(),
        [] => "value".into(),
        many => many.join(" or "),
    };
    let range = match (node.get("minimum"), node.get("maximum")) {
        (Some(lo), Some(hi)) => format!(" in [{lo}, {hi}]"),
        (Some(lo), None) => format!(" ≥ {lo}"),
        (None, Some(hi)) => format!(" ≤ {hi}"),
        _ => String::new(),
    };
    base + &range
}

/// Every field below `node`, depth first, each with its dotted path.
fn rows(node: &Value, root: &Value, prefix: &str, out: &mut Vec<Row>) {
    let node = resolve(node, root);
    for n in combined(node, &["anyOf", "allOf"]) {
        rows(n, root, prefix, out);
    }
    if let Some(variants) = node.get("oneOf").and_then(Value::as_array) {
        tagged(variants, root, prefix, out);
    }
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties: Vec<(&String, &Value)> = node
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .collect();
    let mut listed: Vec<&str> = Vec::new();
    for &(k, v) in &properties {
        if listed.contains(&k.as_str()) {
            continue;
        }
        // Sibling tables of one type (the two arms) are listed once, as `<baseline|treatment>`.
        let same: Vec<&str> = match v.get("$ref") {
            Some(r) if resolve(v, root).get("properties").is_some() => properties
                .iter()
                .filter(|(_, w)| w.get("$ref") == Some(r))
                .map(|(n, _)| n.as_str())
                .collect(),
            _ => vec![k.as_str()],
        };
        listed.extend(&same);
        let name = if same.len() > 1 {
            format!("<{}>", same.join("|"))
        } else {
            k.clone()
        };
        let path = format!("{prefix}{name}");
        if out.iter().any(|r| r.path == path) {
            continue;
        }
        let inner = resolve(v, root);
        let meaning = v
            .get("description")
            .or_else(|| inner.get("description"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .replace('\n', " ");
        out.push(Row {
            path: path.clone(),
            kind: kind(v, root),
            required: same.iter().all(|n| required.contains(n)),
            default: v.get("default").and_then(default_cell),
            meaning,
            only: Vec::new(),
            defaults: Vec::new(),
        });
        // Into a table's keys, an enum's alternatives and a list's items.
        let items = inner.get("items").unwrap_or(&Value::Null);
        if items.is_object() && resolve(items, root).get("properties").is_some() {
            rows(items, root, &format!("{path}[]."), out);
        } else if inner.get("properties").is_some()
            || inner.get("anyOf").is_some()
            || inner.get("oneOf").is_some()
        {
            rows(v, root, &format!("{path}."), out);
        }
    }
}

/// The variants of a table told apart by one key with a constant value (`policy`): that key
/// as one row naming every value, and each other key marked with the variants that take it.
fn tagged(variants: &[Value], root: &Value, prefix: &str, out: &mut Vec<Row>) {
    let tag_of = |v: &Value| -> Option<(String, String)> {
        resolve(v, root)
            .get("properties")?
            .as_object()?
            .iter()
            .find_map(|(k, p)| Some((k.clone(), p.get("const")?.as_str()?.to_string())))
    };
    let tags: Vec<(String, String)> = variants.iter().filter_map(tag_of).collect();
    if tags.len() != variants.len() || tags.iter().any(|(k, _)| *k != tags[0].0) {
        // Not a tagged table: its alternatives' keys, as they come.
        for v in variants {
            rows(v, root, prefix, out);
        }
        return;
    }
    let key = &tags[0].0;
    let values: Vec<String> = tags.iter().map(|(_, t)| format!("`{t}`")).collect();
    let meanings: Vec<String> = variants
        .iter()
        .zip(&tags)
        .filter_map(|(v, (_, t))| {
            let d = resolve(v, root).get("description")?.as_str()?;
            let d = d.replace('\n', " ");
            let mut c = d.chars();
            let d: String = c
                .next()
                .map_or_else(String::new, |f| f.to_lowercase().chain(c).collect());
            Some(format!("`{t}`: {d}"))
        })
        .collect();
    let first = out.len();
    out.push(Row {
        path: format!("{prefix}{key}"),
        kind: format!("one of {}", values.join(", ")),
        required: true,
        default: None,
        meaning: meanings.join(" "),
        only: Vec::new(),
        defaults: Vec::new(),
    });
    for (v, (_, tag)) in variants.iter().zip(&tags) {
        let mut own = Vec::new();
        rows(v, root, prefix, &mut own);
        for row in own {
            if row.path == format!("{prefix}{key}") {
                continue;
            }
            match out[first..].iter_mut().find(|r| r.path == row.path) {
                Some(r) => {
                    r.only.push(tag.clone());
                    r.defaults.push(row.default);
                }
                None => out.push(Row {
                    only: vec![tag.clone()],
                    defaults: vec![row.default.clone()],
                    ..row
                }),
            }
        }
    }
    for r in &mut out[first + 1..] {
        // A default that differs by variant is given for each: `0.7` (`flat-mean`), ….
        if r.defaults.iter().any(|d| *d != r.defaults[0]) {
            let each: Vec<String> = r
                .defaults
                .iter()
                .zip(&r.only)
                .filter_map(|(d, t)| Some(format!("{} (`{t}`)", d.as_ref()?)))
                .collect();
            r.default = Some(each.join(", "));
        }
        if r.only.len() == tags.len() {
            r.only.clear();
        }
    }
}

/// A default short enough for a table cell: a number, a string, a boolean or a short list.
fn default_cell(v: &Value) -> Option<String> {
    match v {
        Value::Null | Value::Object(_) => None,
        Value::String(s) => Some(format!("`{s}`")),
        Value::Array(a) if a.is_empty() => Some("`[]`".into()),
        Value::Array(_) => None,
        other => Some(format!("`{other}`")),
    }
}

fn table(rows: &[Row], with_required: bool) -> String {
    let cell = |t: &str| t.replace('|', "\\|");
    let mut s = if with_required {
        String::from("| field | type | required | meaning |\n|---|---|---|---|\n")
    } else {
        String::from("| key | type | default | meaning |\n|---|---|---|---|\n")
    };
    for r in rows {
        let mut meaning = r.meaning.clone();
        if !r.only.is_empty() {
            let tags: Vec<String> = r.only.iter().map(|t| format!("`{t}`")).collect();
            let note = format!("Only with {}.", tags.join(", "));
            meaning = if meaning.is_empty() {
                note
            } else {
                format!("{meaning} {note}")
            };
        }
        let middle = if with_required {
            if r.required { "yes" } else { "no" }.to_string()
        } else {
            r.default.clone().unwrap_or_default()
        };
        s += &format!(
            "| `{}` | {} | {} | {} |\n",
            r.path,
            cell(&r.kind),
            cell(&middle),
            cell(&meaning)
        );
    }
    s
}

fn schema_rows(schema: Value) -> Vec<Row> {
    let mut out = Vec::new();
    rows(&schema, &schema, "", &mut out);
    out
}

/// A first line of each file, as `calibench init` writes it.
fn example_line(file: files::File) -> Option<String> {
    use files::File;
    let kind = match file {
        File::Reviews | File::Verdicts => InitKind::Doc,
        File::Queries => InitKind::Queries,
        File::Scores => InitKind::Scores,
        _ => return None,
    };
    crate::generate::starter::files(kind)
        .into_iter()
        .find(|(n, _)| n == file.name())
        .and_then(|(_, text)| text.lines().next().map(str::to_string))
}

fn input_files() -> String {
    let mut s = String::from(
        "## Input files\n\n\
         A corpus is a folder of JSON Lines files, one JSON object per line (blank lines are \
         ignored; an object that repeats a key at any depth is refused). Any other top-level \
         `*.jsonl` in the folder is refused, so a misnamed file is never ignored. \
         `calibench schema NAME` prints each file's JSON Schema; `calibench validate FOLDER` \
         checks a folder against them. A line of each, as `calibench init` writes it, follows \
         its table.\n\n",
    );
    for f in files::corpus() {
        s += &format!("### `{}`: {}\n\n", f.name, f.holds);
        let schema = serde_json::to_value(f.schema()).unwrap_or(Value::Null);
        if let Some(d) = schema.get("description").and_then(Value::as_str) {
            s += &format!("{d}\n\n");
        }
        s += &file_rules(f);
        s += &table(&schema_rows(schema), true);
        if f.file == files::File::Reviews {
            for (mode, scale, what) in [
                (
                    Mode::Doc,
                    Scale::Float,
                    "A document finding (`mode = \"doc\"`)",
                ),
                (
                    Mode::Code,
                    Scale::Float,
                    "A code finding (`mode = \"code\"`)",
                ),
            ] {
                s += &format!(
                    "\n{what}, an element of `findings`. `confidence` is a number in [0, 1] \
                     under `scale = \"float\"` or one of 0, 25, 50, 75, 100 under \
                     `scale = \"anchor\"`; a finding that breaks a rule is malformed, dropped \
                     and counted:\n\n"
                );
                s += &table(&schema_rows(reviews::finding_schema(mode, scale)), true);
            }
        }
        if let Some(line) = example_line(f.file) {
            s += &format!("\n```json\n{line}\n```\n");
        }
        s += "\n";
    }
    s
}

/// What the corpus file table declares of a file beyond its fields: the call a line is (its
/// key), where a line may end in the ledger, and what it is checked against.
fn file_rules(f: &files::Def) -> String {
    let key: Vec<String> = f.key.iter().map(|k| format!("`{k}`")).collect();
    let excluded: Vec<String> = f
        .excluded
        .iter()
        .map(|r| format!("`{}`", r.key()))
        .collect();
    let filed = match f.arm {
        Some(field) => format!(" Each line is filed under the arm label its `{field}` names."),
        None => String::new(),
    };
    let last = excluded.last().cloned().unwrap_or_default();
    let excluded = match excluded.len() {
        0 | 1 => last,
        n => format!("{} or {last}", excluded[..n - 1].join(", ")),
    };
    format!(
        "A line's key is ({}), the call it records: a second line with the same key is refused.{filed} The [ledger](#the-input-ledger) uses each line or excludes it as {excluded}. Checked: {}.\n\n",
        key.join(", "),
        f.checks
    )
}

/// The input ledger: what becomes of every line, each exclusion reason from its declaration,
/// the refusals that keep a mistake from changing a decision unseen, and the caveats.
fn ledger() -> String {
    use crate::corpus::ledger::Reason;
    let mut s = String::from(LEDGER);
    s += "| reason | refuses a run | meaning |\n|---|---|---|\n";
    for r in Reason::ALL {
        s += &format!(
            "| `{}` | {} | {} |\n",
            r.key(),
            if r.refuses() { "yes" } else { "no" },
            r.meaning()
        );
    }
    s += LEDGER_RULES;
    s += "Each caveat is stored in `inputs.caveats` and `decision.caveats` as its `kind`, the \
          fields of its cause and its `sentence`; a gate policy's `allow_caveats` takes `true` \
          or a list of these kinds, and JUnit counts them as `caveats.<kind>` properties:\n\n\
          | kind | what |\n|---|---|\n";
    for (kind, title) in crate::corpus::ledger::Caveat::KINDS {
        s += &format!("| `{kind}` | {title} |\n");
    }
    s + "\n"
}

const LEDGER: &str = "## The input ledger\n\n\
Every line of every corpus file, and every finding inside a return, ends in exactly one place: \
**used**, or **excluded** for a named reason. `metrics.json` `inputs` holds, per file, `lines` \
(its non-blank lines), `used` and `excluded` by reason (`count`, `first_line` and an `example`), \
with `lines = used + Σ excluded`; per arm, the `findings` it `read`, `used` and dropped as \
`malformed` by reason; per arm, the `unpaired` units (targets, queries or items) only it has \
(`count`, `first`); per arm, role (`reviewer`, `agent`, `validator`, `judge`) and name, the \
`calls` `planned`, `ok` and `failed` by failure (`count`, `first` call, an `example` reason); \
per arm, the `harness` its collection recorded (collect.json `provenance`); and the `caveats`. \
`calibench validate --json` prints the same object without replaying; the report's Coverage \
section shows it as tables.\n\n\
**Calls are lines.** A line that says `status: failed` (a reviewer return, an agent trace, a \
validator call) and a judge's `per_dimension: null` is a failed call, counted in \
`inputs.calls`, never read as an empty review or a zero. Its `reason`, as `collect` records \
it, begins with what failed: `could not start`, `exited non-zero`, `timed out`, `invalid \
output`; any other reason (or none) is `reported`. A collection's plan (collect.json) sets \
`planned`; a hand-written corpus plans the calls it records.\n\n";

const LEDGER_RULES: &str =
    "\n**Refused** (exit 2, naming the file, line and field, the count, the first \
example and the nearest known value), so that no mistake changes a decision unseen:\n\n\
- lines of any corpus file filed under an `arm` label neither arm's `source` reads (a verdict or \
label may also be filed under an arm's name), unless the experiment lists the label in \
`ignore_labels` (a corpus recorded with more arms than it compares): those are counted as \
`label-ignored`, never refused and never a caveat;\n\
- a verdict or label whose `item_id` is no target or finding `id` of its arm (review corpora), \
no query id (query corpora) or no scored item (scores corpora);\n\
- a target, query or item present in one arm only whose id is one slip from another id of the \
corpus: equal but for case or zero-padding (`design-4` beside `design-04`), or within two edits \
(one under five characters), unless the two read as members of one series (their numbers \
differ, as `q7` and `q1`, or they differ in one single-character part, as `plan-a` and \
`plan-b`);\n\
- a judge panel that differs between the arms (a `model` that judges one arm's items only);\n\
- a `labels.jsonl` line that leaves out a dimension the judges score on its item (unless the \
dimension weighs 0 in `[trust] dimension_weights`), and a `labels.jsonl` none of whose lines \
names a judged item;\n\
- an arm none of whose reviewer (or agent) calls succeeded, and a reviewer or judge with no \
successful call in one arm while it has some in the other: the arms would compare different \
harnesses (the message names the commonest reason and, for output off the arm's scale, the \
`scale` key that reads it);\n\
- a collection (a folder with `collect.json`) that did not finish, one shard of several, or one \
holding fewer targets than its plan (lines deleted): \"shard 1/3: 7 of 24 targets of the plan\"; \
`run --allow-partial` replays it, with a caveat on every decision line;\n\
- a review policy key of the other mode (`gate`, `p0_gate`, `review_mode`, `demote_reviewers` \
in doc mode; `gates`, `fyi_floor` in code mode), and a threshold strictly between 0 and 1 on \
the anchor scale (0.75 for 75).\n\n\
**Caveats** (the run completes; each is one sentence with its count and first example): \
findings of an arm dropped as malformed (a missing field whose key is one slip away says \
\"did you mean\"); units one arm has and the other does not; a reviewer with returns in one arm \
only; failed calls (\"24 of 72 baseline reviewer calls failed: invalid output — `confidence` 68 \
is off the float scale (first: …)\", naming the other arm when none of its calls failed); a \
harness file that changed while a collection ran; the arms' harnesses differing (collect.json \
`provenance`: commands, the files they name, environment, calibench's version; a credential \
only as set or unset), or an arm's harness not recorded; arms holding different repeats per \
target; a collection replayed with `--allow-partial`. They are printed on stderr, listed in `inputs.caveats` and `decision.caveats`, counted on \
every decision line (\"better — with 2 caveats\": terminal, report, index and gate summary), \
refused by `run --strict`, and fail a gate's `require_decision` unless the policy sets \
`allow_caveats = true` or lists their kinds. More than half of an arm's findings malformed also marks the run \
*inputs suspect*.\n\n";

fn experiment_keys() -> String {
    let schema = serde_json::to_value(schemars::schema_for!(RawExperiment)).unwrap_or(Value::Null);
    let rows: Vec<Row> = schema_rows(schema)
        .into_iter()
        .filter(|r| !r.path.starts_with("gate."))
        .collect();
    format!(
        "## Experiment: `experiment.toml`\n\n\
         An experiment names a corpus and two arms, `baseline` and `treatment`. An unknown key is \
         refused with the key it most likely meant. `calibench init DIR --kind doc` writes one \
         with every key and its default; `calibench schema experiment` prints its JSON Schema. \
         Policy keys left out take the policy's defaults, on the arm's scale. `[gate]` takes the \
         keys of a [gate policy](#gate-policy-gatetoml-or-gate).\n\n{}\n",
        table(&rows, false)
    )
}

fn gate_keys() -> String {
    let schema = serde_json::to_value(schemars::schema_for!(crate::gate::policy::RawPolicy))
        .unwrap_or(Value::Null);
    format!(
        "## Gate policy: `gate.toml` or `[gate]`\n\n\
         A check names a metric path (listed under [Metrics](#metric-paths)) and its bounds; a \
         metric that is missing or null fails its check, never passes. `max_increase` and \
         `max_decrease` compare with an accepted run (`calibench accept RUN_DIR`).\n\n{}\n",
        table(&schema_rows(schema), false)
    )
}

const DECISION: &str = "## The decision\n\n\
The report's first line answers: is the treatment **better**, **worse**, or not yet knowable \
(**inconclusive**, or **withheld**)? The experiment's `[decision]` table names each metric with \
the way it must move: `increase` or `decrease` (it must move that way, significantly) or \
`no-decrease`, `no-increase` (it must not move the other way: a guard). Without the table, the \
`primary` metrics decide, each whose catalogue entry has a better direction (see \
[Metrics](#metrics)). A decision metric is a compared metric, `lift`, `lift_human`, or an \
imported scorer.\n\n\
A metric may be a table instead of a word: `final_accuracy = { want = \"no-decrease\", margin = \
0.02 }` makes a guard a **non-inferiority** check (it may fall by less than 0.02 and still \
hold); `precision = { want = \"increase\", min_effect = 0.03 }` names the smallest change that \
matters, which sizes \"needs ≈ N\" and `calibench plan` instead of the noisy observed change. A \
margin belongs to a guard and `min_effect` to a metric that must move; both are above 0. For \
what calls spent ([cost and latency](#cost-and-latency): `cost_usd`, `query_cost_usd`, \
`item_latency_ms`, ...) either may be a percentage of the baseline: `cost_usd = { want = \
\"no-increase\", margin = \"10%\" }` holds when the upper bound of the relative change's 95% \
interval (Fieller's, `<delta>.relative`) \
is below +10%, and regresses when the change lies beyond it with its test against the edge \
(`relative.p_edge`, Holm-adjusted) below 0.05; the decision records `relative: true`, the \
change as `relative_change`, and the relative interval as `margin_ci`.\n\n\
- **The test.** Each delta's p-value is a test of its mean: McNemar's exact test where every unit \
is 0 or 1 in both arms (a pass/fail figure), else the paired t-test; ECE, a figure of the whole \
set, by its bootstrap; the lift in human units by the t-test of its PPI++ estimate. The minimum \
detectable effect, \"needs ≈ N\" and `plan` are all for that same test.\n\
- **\"Better\" is an intersection-union claim**: it is wrong only if one of its parts is, so \
each part is judged at the plain level. A metric **improved** when its delta lies the wanted way \
with its own two-sided p (`p_value`) < 0.05; its line names that p (\"p 0.012\").\n\
- **\"Worse\" is a union claim**: any one regression makes it, so the regression tests are \
Holm-adjusted over the decision metrics (`decision.metrics.<m>.p_adjusted`). A metric without a \
margin **regressed** when its delta lies the other way with that adjusted p < 0.05; its line \
names it (\"p adj. 0.004\"). The tables' `p_adjusted` stays Holm over each table's family.\n\
- A guard with a margin m **held** when the unsafe bound of its test's 95% interval (the \
t-interval of the mean; Newcombe's score interval for pass/fail units: `margin_ci`) lies within \
the margin, a significant loss smaller than m included; it **regressed** when the safe-side \
bound lies beyond −m (its test against −m, Holm-adjusted); otherwise it is **underpowered** (not \
shown), with the units that would show it held. A guard without a margin that did not regress \
reads **no regression detected**: not shown to hold.\n\
- With a noise floor (`noise_floor`), a metric improves only when the change net of the \
harness (the A/B's delta minus the A/A's, with an interval combining both) clears 0 too; one whose \
own test shows the change but whose net interval includes 0 is **inside the harness's noise**.\n\
- A metric that must move and did neither is **underpowered** when the A/B was too small to \
tell (its `min_effect`, else the observed change, is inside its minimum detectable effect, or \
McNemar's test cannot reach 0.05 with so few changed units), with how many units an A/B needs: \
80% power at two-sided 0.05 by its test, the level its claim is judged at, as `calibench plan` \
counts them, for `min_effect` if given (else \"if the true change is as large as observed\"). \
Otherwise it is **no effect detected**; so is a change the other way from the one it must make.\n\
- The lift in human units decides only on at least 10 labelled pairs; fewer is underpowered.\n\
- A judge-derived metric (precision, the lift, a judge scorer) is **withheld** when the judges \
are not trusted; a metric no unit has in both arms is **unmeasured**.\n\n\
The verdict: **withheld** when a decision metric is withheld; else **worse** when any regressed; \
else **better** when every `increase`/`decrease` metric improved and every guard with a margin \
held; else **inconclusive**. The input ledger's caveats ride on it (\"better — with 1 caveat\"). \
`metrics.json` holds it under `decision` (`verdict`, and per metric `want`, `delta`, `ci`, \
`p_value`, `p_adjusted`, `mde`, `outcome`, `needed`, `test`, `margin` and `margin_ci` or \
`min_effect`, `noise`, with \
one sentence each in `reasons`); a gate policy can require it with `require_decision`.\n\n";

fn metrics() -> String {
    use crate::replay::{compared, Better, DeltaTable};
    let better = |b: Option<Better>| match b {
        Some(Better::Higher) => "higher",
        Some(Better::Lower) => "lower",
        None => "—",
    };
    let mut s = String::from(
        "## Metrics\n\n\
         Each compared metric gets a paired delta (treatment − baseline over the units both arms \
         saw: targets for reviews, (query, run) pairs for traces), its 95% bootstrap interval, \
         the p-value of its mean (`test`: McNemar's exact test for pass/fail units, else the \
         paired t-test), `p_adjusted` (Holm) and the minimum detectable effect `mde` by that \
         test. \
         \"Better\" is the direction in which `primary` alone decides; an imported scorer has \
         none, and `[decision]` names its way.\n\n",
    );
    for (table, title) in [
        (
            DeltaTable::Review,
            "Review metrics (`review.delta`, per target, mean over runs)",
        ),
        (
            DeltaTable::Queries,
            "Query metrics (`queries.delta`, per query)",
        ),
        (
            DeltaTable::Scores,
            "What imported samples spent (`scores.delta`, per item, beside the scorers)",
        ),
    ] {
        s += &format!("### {title}\n\n| name | in the report | better |\n|---|---|---|\n");
        for c in compared().into_iter().filter(|c| c.table == table) {
            s += &format!("| `{}` | {} | {} |\n", c.name, c.words(), better(c.better));
        }
        s += "\n";
    }
    s += "`lift` is the mean paired difference of the judges' composite (treatment − baseline), \
          over the items judged in both arms; better: higher. An imported scorer's delta is keyed \
          by its name as the log wrote it (`scores.delta.<scorer>`).\n\n";
    let (patterns, key_sets) = (
        crate::gate::schema::number_patterns(),
        crate::gate::schema::key_sets()
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>(),
    );
    s += "### Metric paths\n\nEvery path a gate check can name (`calibench gate --list-metrics`). \
          `<i>` is a list index from 0, `{0|1}` the lower or upper end of an interval, `<key>` any \
          key of that table (in double quotes when it holds a dot); the other `<names>` follow \
          the list.\n\n```text\n";
    for m in &patterns {
        s += m;
        s.push('\n');
    }
    s += "```\n\n";
    for (label, keys) in &key_sets {
        s += &format!("- `<{label}>`: {}\n", keys.join(", "));
    }
    s + "\n"
}

fn commands() -> String {
    let cli = Cli::command();
    let mut s = String::from(
        "## Commands and exit status\n\n\
         `calibench COMMAND --help` lists each command's flags. Every command takes `--json` \
         (its result as JSON on stdout; `run` prints one metrics object per experiment, one per \
         line), `--quiet` and `--color auto|always|never`.\n\n| command | does |\n|---|---|\n",
    );
    for sub in cli.get_subcommands() {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        s += &format!(
            "| `calibench {}` | {} |\n",
            sub.get_name(),
            about.replace('\n', " ")
        );
    }
    s += "\n| exit status | meaning |\n|---|---|\n\
          | 0 | done (and, for `gate`/`trust`/`alttest`, passed) |\n\
          | 1 | the answer is no: a gate check failed, the judges are not trustworthy |\n\
          | 2 | bad input or usage; nothing was computed from it, nothing half-written |\n\
          | 130 | `collect` was interrupted; what it recorded is whole and resumes with `--resume` |\n";
    s
}

/// `calibench reference` takes no arguments.
#[derive(Debug, clap::Args)]
pub struct ReferenceArgs {}

impl super::Run for ReferenceArgs {
    fn run(self, ctx: &super::Context) -> Result<super::Answer, Error> {
        Ok(ctx.answer(&run()?, crate::exit::Verdict::Pass))
    }
}
