//! The input ledger (docs/reference.md, "The input ledger"): what became of every line of every
//! corpus file and of every finding inside a return. Each line ends in exactly one place,
//! **used** or **excluded** for a named [`Reason`]; nothing is dropped without a count, and what
//! could change a decision without being seen is a [`Caveat`].
//!
//! A file's `lines` is never set: it grows only through [`FileLedger::used`] and
//! [`FileLedger::exclude`], so `lines = used + Σ excluded` holds by construction, and a test
//! holds `lines` to the file's non-blank lines for every example corpus and reproducer.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a line was not used. Each reason is named once here: its key in `metrics.json`, what it
/// means and what to do about it (the reference's table is printed from [`Reason::ALL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// Filed under an `arm` label the experiment lists in `ignore_labels`.
    LabelIgnored,
    /// Filed under an `arm` label neither arm reads (a run refuses it).
    LabelUnread,
    /// Not a record calibench can read (a run refuses it).
    Refused,
    /// Names an item that is no target, finding, query or item of its arm (a run refuses it).
    ItemUnknown,
    /// A human label on an item no judge scored.
    ItemNotJudged,
    /// An imported score that is `null`: the sample errored or was not scored.
    MissingScore,
    /// A validator call of an arm label whose arms do not run the validation pass.
    ValidationOff,
    /// Metadata of a target no arm has a return on.
    NoReturn,
}

impl Reason {
    pub const ALL: [Reason; 8] = [
        Reason::LabelIgnored,
        Reason::LabelUnread,
        Reason::Refused,
        Reason::ItemUnknown,
        Reason::ItemNotJudged,
        Reason::MissingScore,
        Reason::ValidationOff,
        Reason::NoReturn,
    ];

    /// Its key under `excluded`.
    pub fn key(self) -> &'static str {
        match self {
            Reason::LabelIgnored => "label-ignored",
            Reason::LabelUnread => "label-unread",
            Reason::Refused => "refused",
            Reason::ItemUnknown => "item-unknown",
            Reason::ItemNotJudged => "item-not-judged",
            Reason::MissingScore => "missing-score",
            Reason::ValidationOff => "validation-off",
            Reason::NoReturn => "no-return",
        }
    }

    /// Whether a run refuses the lines (they are listed as problems, and `validate` counts
    /// them here too).
    pub fn refuses(self) -> bool {
        matches!(
            self,
            Reason::LabelUnread | Reason::Refused | Reason::ItemUnknown
        )
    }

    /// The reason whose key is `key`.
    pub fn of_key(key: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.key() == key)
    }

    /// What it means, and how to fix it when it is a mistake.
    pub fn meaning(self) -> &'static str {
        match self {
            Reason::LabelIgnored => "the line's `arm` is listed in `ignore_labels`: a recording of another arm than the two compared. Counted, never a caveat.",
            Reason::LabelUnread => "the line's `arm` is a label neither arm's `source` reads; a run refuses it (a typo must not halve an arm). Correct the label or the arm's `source`, or list the label in `ignore_labels`.",
            Reason::Refused => "the line is not a record calibench can read (`calibench validate` names the field); a run refuses it.",
            Reason::ItemUnknown => "a verdict or label whose `item_id` is no target or finding `id` of its arm (review corpora), no query id (query corpora) or no item (scores); a run refuses it.",
            Reason::ItemNotJudged => "a human label on a target or finding no judge scored: there is nothing to compare it with. Label judged items, or judge this one.",
            Reason::MissingScore => "an imported score that is `null`: the sample errored or was not scored (its `missing` says why). Missing, never a 0.",
            Reason::ValidationOff => "a validator call recorded under an arm label whose arms do not run the validation pass (`validation = \"never\"`, or `auto` where the pipeline skips it).",
            Reason::NoReturn => "target metadata (`targets.jsonl`) for a target no arm has a return on.",
        }
    }
}

/// Where the first line of one reason is, and what it held.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Excluded {
    pub count: u64,
    pub first_line: u64,
    /// What the first line held that excluded it: its label, item, or the problem.
    pub example: String,
}

/// One corpus file: every non-blank line, used or excluded by reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileLedger {
    /// Non-blank lines: `used` plus every excluded count.
    pub lines: u64,
    pub used: u64,
    #[serde(default)]
    pub excluded: BTreeMap<String, Excluded>,
}

impl FileLedger {
    /// `n` lines used.
    pub fn used(&mut self, n: u64) {
        self.lines += n;
        self.used += n;
    }

    /// `n` lines excluded for `reason`, the first of them on `line`, holding `example`.
    pub fn exclude(&mut self, reason: Reason, n: u64, line: u64, example: impl FnOnce() -> String) {
        if n == 0 {
            return;
        }
        self.lines += n;
        match self.excluded.get_mut(reason.key()) {
            Some(e) => {
                e.count += n;
                if line < e.first_line {
                    e.first_line = line;
                    e.example = example();
                }
            }
            None => {
                self.excluded.insert(
                    reason.key().to_string(),
                    Excluded {
                        count: n,
                        first_line: line,
                        example: example(),
                    },
                );
            }
        }
    }

    /// Lines excluded for `reason`.
    pub fn excluded(&self, reason: Reason) -> u64 {
        self.excluded.get(reason.key()).map_or(0, |e| e.count)
    }

    /// Every line accounted for once.
    pub fn balances(&self) -> bool {
        self.lines == self.used + self.excluded.values().map(|e| e.count).sum::<u64>()
    }
}

/// The findings one arm read: those it used and those dropped as malformed, by reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FindingsLedger {
    pub read: u64,
    pub used: u64,
    /// By field and kind of rule broken (`confidence: off the anchor scale`).
    #[serde(default)]
    pub malformed: BTreeMap<String, u64>,
}

/// The units (targets, queries, items) of one arm the other arm does not have.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Unpaired {
    pub count: u64,
    /// The first, in the order of its file.
    pub first: String,
    /// What a unit is: `targets`, `queries` or `items`.
    pub what: String,
}

/// The calls one name of one role made in one arm (`inputs.calls`): planned, ok, and failed
/// by why. A failed call is an exclusion, as a malformed finding is: `planned = ok + Σ failed
/// + not recorded`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Calls {
    /// The calls its plan holds: a collection's (collect.json), else the calls its lines record.
    pub planned: u64,
    pub ok: u64,
    /// By failure (`output`, `timeout`, `exit`, `start`, `reported`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed: BTreeMap<String, FailedCalls>,
}

impl Calls {
    /// Calls recorded failed, for any reason.
    pub fn failed(&self) -> u64 {
        self.failed.values().map(|f| f.count).sum()
    }
}

/// The calls that failed for one reason: how many, the first, and what it said.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FailedCalls {
    pub count: u64,
    /// The first call, as `label · target · reviewer · run 0`, and its line.
    pub first: String,
    /// Its recorded reason.
    pub example: String,
}

/// `inputs.calls`: arm → role (`reviewer`, `agent`, `validator`, `judge`) → name → calls.
pub type CallLedger = BTreeMap<String, BTreeMap<String, BTreeMap<String, Calls>>>;

/// The input ledger, as `metrics.json` `inputs` holds it and `validate --json` prints it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Inputs {
    /// Per corpus file, by its name (`reviews.jsonl`).
    pub files: BTreeMap<String, FileLedger>,
    /// Per arm, by its name.
    #[serde(default)]
    pub findings: BTreeMap<String, FindingsLedger>,
    /// Per arm, by its name: units only that arm has.
    #[serde(default)]
    pub unpaired: BTreeMap<String, Unpaired>,
    /// Per arm, role and name: the calls planned, ok and failed (docs/reference.md, "The
    /// input ledger").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub calls: CallLedger,
    /// Per arm, when any call records what it spent: how many calls there were (reviewer
    /// calls, query traces, imported samples) and how many reported it (docs/reference.md,
    /// "Cost and latency").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub usage: BTreeMap<String, UsageLedger>,
    /// What the run read that could change its decision without being seen, one caveat per
    /// cause (`metrics.json` records each as its kind, fields and sentence).
    #[serde(default, with = "stored")]
    #[schemars(with = "Vec<Caveat>")]
    pub caveats: Vec<Caveat>,
    /// Whether the corpus records the harness that made it (collect.json `provenance`), so
    /// that the arms' commands, files, environment and calibench version were compared.
    #[serde(default)]
    pub provenance: bool,
    /// Per arm, by its name: the harness that made its lines, as the collection recorded it
    /// (what a noise floor is compared with).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub harness: BTreeMap<String, super::harness::ArmRecord>,
}

impl Inputs {
    /// The ledger of the file `name`, started empty.
    pub fn file(&mut self, name: &str) -> &mut FileLedger {
        self.files.entry(name.to_string()).or_default()
    }

    /// Records caveat `c`, unless it has a cause already recorded: then it joins that caveat
    /// (one environment variable or file every reviewer shares, one model they all report, is
    /// one caveat naming the roles it touches). Whether `c` is a caveat of its own.
    pub fn caveat(&mut self, c: Caveat) -> bool {
        for held in &mut self.caveats {
            if held.join(&c) {
                return false;
            }
        }
        self.caveats.push(c);
        true
    }
}

/// One arm's reviewer calls, and how many of them reported what they spent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UsageLedger {
    pub calls: u64,
    pub reported: u64,
}

/// Something the run read that could change its decision without being seen. The run
/// completes; each caveat is one sentence with its count and first example
/// (docs/reference.md), put into words here and nowhere else. `metrics.json` records a caveat
/// as its `kind`, its fields and its `sentence` ([`stored`]); a stored run's caveat of an
/// earlier version, a bare sentence, reads back as [`Caveat::Recorded`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Caveat {
    /// Findings an arm read and dropped as malformed.
    Malformed {
        arm: String,
        malformed: u64,
        read: u64,
        /// The commonest reason, how many it accounts for, and where the first is.
        reason: String,
        reason_count: u64,
        first: String,
    },
    /// Units one arm has and the other does not (none a near miss of another id).
    Unpaired {
        arm: String,
        count: u64,
        first: String,
        /// `targets`, `queries` or `items`.
        what: String,
        /// Set when there were too many to compare each with every id for a typo.
        unchecked: bool,
    },
    /// A reviewer with returns in one arm only.
    Reviewer {
        reviewer: String,
        arm: String,
        returns: u64,
        first: String,
    },
    /// Something the harness records that differs between the arms and that the treatment does
    /// not declare (`[arms.treatment] differs`).
    Drift {
        what: Drifted,
        baseline: String,
        treatment: String,
        /// The `differs` entry that would declare it.
        key: String,
        first: String,
    },
    /// Calls of one role in one arm that failed (none of them all of a name's calls, which is
    /// refused).
    #[serde(rename = "failed-calls")]
    Failed {
        arm: String,
        role: String,
        failed: u64,
        planned: u64,
        /// The commonest failure, and the first such call's reason and identity.
        failure: crate::corpus::call::Failure,
        example: String,
        first: String,
        /// The other arm's name when none of its calls of the role failed.
        only: Option<String>,
    },
    /// A harness file that changed while a stage ran.
    Changed {
        file: String,
        stage: String,
        before: u64,
        after: u64,
    },
    /// A collection replayed with fewer targets than its plan (`--allow-partial`).
    Partial { what: String },
    /// An arm of a collection with no record of its harness.
    NoHarness { arm: String },
    /// The arms hold different numbers of repeats (runs) per target.
    Repeats { baseline: u64, treatment: u64 },
    /// A check of the judges' bias audit failed under `[trust] bias = "warn"`: its words.
    Bias { says: String },
    /// A caveat as an earlier version's `metrics.json` recorded it: its sentence alone.
    Recorded { sentence: String },
}

/// What of the harness differs between the arms.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Drifted {
    /// calibench's version.
    Version,
    /// An environment variable the collection records (`provenance_env`).
    Env(String),
    /// A credential the collection records only as set or unset.
    Secret(String),
    /// What the named commands of one role run (`command`), the files their arguments name
    /// (`files`), or the model they report (`model`).
    Role {
        role: String,
        names: Vec<String>,
        aspect: Aspect,
    },
}

/// What of a role's commands differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Aspect {
    Command,
    Files,
    Model,
}

impl Aspect {
    fn word(self) -> &'static str {
        match self {
            Aspect::Command => "command",
            Aspect::Files => "files",
            Aspect::Model => "model",
        }
    }
}

impl std::fmt::Display for Drifted {
    /// "calibench's version", "environment variable MODEL", "reviewer `coherence` model",
    /// "reviewers `a` and `b` files".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Drifted::Version => f.write_str("calibench's version"),
            Drifted::Env(name) | Drifted::Secret(name) => {
                write!(f, "environment variable {name}")
            }
            Drifted::Role {
                role,
                names,
                aspect,
            } => {
                let shown: Vec<String> = names
                    .iter()
                    .map(|n| format!("`{}`", crate::text::terminal(n)))
                    .collect();
                match shown.split_last() {
                    Some((last, [])) => write!(f, "{role} {last} {}", aspect.word()),
                    Some((last, rest)) => {
                        write!(
                            f,
                            "{role}s {} and {last} {}",
                            rest.join(", "),
                            aspect.word()
                        )
                    }
                    None => write!(f, "{role} {}", aspect.word()),
                }
            }
        }
    }
}

impl Caveat {
    /// The caveat as one sentence.
    pub fn sentence(&self) -> String {
        match self {
            Caveat::Malformed {
                arm,
                malformed,
                read,
                reason,
                reason_count,
                first,
            } => {
                let others = malformed - reason_count;
                let rest = if others == 0 {
                    String::new()
                } else {
                    format!(
                        ", and {} for other reasons",
                        crate::text::count(others, "finding", "findings")
                    )
                };
                format!(
                    "{malformed} of {read} {arm} findings {} dropped as malformed: {reason} (first: {first}){rest}",
                    if *malformed == 1 { "was" } else { "were" }
                )
            }
            Caveat::Unpaired {
                arm,
                count,
                first,
                what,
                unchecked,
            } => {
                let (one, verb) = match what.as_str() {
                    "queries" => ("query", "recorded"),
                    "items" => ("item", "scored"),
                    _ => ("target", "reviewed"),
                };
                let noun = if *count == 1 { one } else { what };
                let were = if *count == 1 { "was" } else { "were" };
                let them = if *count == 1 { "is" } else { "are" };
                let checked = if *unchecked {
                    " (too many to compare each with every id for a typo: only case and zero-padding were checked)"
                } else {
                    ""
                };
                format!(
                    "{count} {noun} {were} {verb} in the {arm} only and {them} not paired (first: {first}){checked}"
                )
            }
            Caveat::Reviewer {
                reviewer,
                arm,
                returns,
                first,
            } => format!(
                "reviewer `{reviewer}` has returns in the {arm} only ({}, first: {first}): its findings weigh on one side",
                crate::text::count(*returns, "return", "returns")
            ),
            Caveat::Drift {
                what,
                baseline,
                treatment,
                key,
                first,
            } => {
                let declare = format!("the decision credits it to the treatment: if it is the change, declare it with [arms.treatment] differs = [\"{key}\"]");
                if let Drifted::Secret(_) = what {
                    // A credential's value is never told: only where it was set.
                    let arm = if baseline == "set" { "baseline" } else { "treatment" };
                    return format!(
                        "{what} was set in one arm only, the {arm} (first: {first}); {declare}"
                    );
                }
                let differ = match what {
                    Drifted::Role { names, .. } if names.len() > 1 => "differ",
                    _ => "differs",
                };
                format!(
                    "{what} {differ} between the arms: {baseline} (baseline), {treatment} (treatment) (first: {first}); {declare}"
                )
            }
            Caveat::Failed {
                arm,
                role,
                failed,
                planned,
                failure,
                example,
                first,
                only,
            } => {
                let only = only.as_ref().map_or_else(String::new, |other| {
                    format!("; none of the {other}'s failed, so the arms compare different sets of calls")
                });
                let detail = crate::text::inline(crate::corpus::call::Failure::detail(example));
                let why = match (failure, detail.is_empty()) {
                    (_, true) => " (their lines give no reason".to_string(),
                    (crate::corpus::call::Failure::Reported, false) => format!(": {detail} ("),
                    (f, false) => format!(": {} — {detail} (", f.phrase()),
                };
                let sep = if detail.is_empty() { "; " } else { "" };
                format!("{failed} of {planned} {arm} {role} calls failed{why}{sep}first: {first}){only}")
            }
            Caveat::Changed {
                file,
                stage,
                before,
                after,
            } if *before == 0 => format!(
                "{} changed before the {stage} stage ran: its {} were made with the changed file, every earlier call with the file as the collection recorded it",
                crate::text::inline(file),
                crate::text::count(*after, "call", "calls"),
            ),
            Caveat::Changed {
                file,
                stage,
                before,
                after,
            } => format!(
                "{} changed while the {stage} stage ran: {} {} made before the change and {} after, by different harnesses",
                crate::text::inline(file),
                crate::text::count(*before, "call", "calls"),
                if *before == 1 { "was" } else { "were" },
                crate::text::count(*after, "call", "calls"),
            ),
            Caveat::Partial { what } => format!(
                "{what}: replayed with --allow-partial, so the decision is about part of the plan"
            ),
            Caveat::Repeats {
                baseline,
                treatment,
            } => format!(
                "the arms hold different repeats: {} in the baseline, {treatment} in the treatment, so run-to-run agreement and per-target means rest on different numbers of runs",
                crate::text::count(*baseline, "run per target", "runs per target")
            ),
            Caveat::NoHarness { arm } => format!(
                "the {arm} has no record of its harness (collect.json `provenance`): drift between the arms cannot be checked"
            ),
            Caveat::Bias { says } => format!(
                "the judges may be biased: {says}; the judge-derived figures stand because [trust] bias = \"warn\""
            ),
            Caveat::Recorded { sentence } => sentence.clone(),
        }
    }

    /// Takes `other` in when the two have one cause: the same change of one role's commands,
    /// files or reported model in several of its names. Whether it did.
    fn join(&mut self, other: &Caveat) -> bool {
        let (
            Caveat::Drift {
                what:
                    Drifted::Role {
                        role,
                        names,
                        aspect,
                    },
                baseline,
                treatment,
                key,
                ..
            },
            Caveat::Drift {
                what:
                    Drifted::Role {
                        role: role2,
                        names: names2,
                        aspect: aspect2,
                    },
                baseline: baseline2,
                treatment: treatment2,
                key: key2,
                ..
            },
        ) = (&mut *self, other)
        else {
            return false;
        };
        if (&*role, &*aspect, &*baseline, &*treatment, &*key)
            != (role2, aspect2, baseline2, treatment2, key2)
        {
            return false;
        }
        for n in names2 {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        true
    }
}

impl std::fmt::Display for Caveat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence())
    }
}

impl JsonSchema for Caveat {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Caveat".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let kinds: Vec<&str> = Caveat::KINDS.iter().map(|(k, _)| *k).collect();
        schemars::json_schema!({
            "description": "One caveat: its kind, the fields of its cause, and its sentence with its count and first example. An earlier version's run records the sentence alone.",
            "oneOf": [
                {
                    "type": "object",
                    "required": ["kind", "sentence"],
                    "properties": {
                        "kind": {"enum": kinds},
                        "sentence": {"type": "string"}
                    }
                },
                {"type": "string"}
            ]
        })
    }
}

impl Caveat {
    /// Every kind, as `metrics.json` and the gate's `allow_caveats` name it, with its words.
    pub const KINDS: [(&'static str, &'static str); 11] = [
        ("malformed", "malformed findings"),
        ("unpaired", "unpaired units"),
        ("reviewer", "a reviewer in one arm"),
        ("drift", "harness drift"),
        ("failed-calls", "failed calls"),
        ("changed", "a harness file changed"),
        ("partial", "a partial collection"),
        ("no-harness", "no harness record"),
        ("repeats", "unequal repeats"),
        ("bias", "a judges' bias"),
        ("recorded", "recorded by an earlier version"),
    ];

    /// Its kind, as `metrics.json` records it (`"drift"`, `"failed-calls"`).
    pub fn kind(&self) -> &'static str {
        let tag = serde_json::to_value(self).ok().and_then(|v| {
            v.get("kind")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        });
        Caveat::KINDS
            .iter()
            .find(|(k, _)| Some(*k) == tag.as_deref())
            .map_or("recorded", |(k, _)| k)
    }

    /// Its kind in words: "harness drift", "failed calls".
    pub fn title(&self) -> &'static str {
        let kind = self.kind();
        Caveat::KINDS
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or("a caveat", |(_, t)| t)
    }
}

/// How `metrics.json` holds a list of caveats: each as its kind and fields with its sentence
/// beside them, so that a reader (the gate, a dashboard) can act on the kind and a person can
/// read the sentence. A bare sentence (an earlier version's run) reads as
/// [`Caveat::Recorded`]; anything else is an error naming the caveat.
pub mod stored {
    use super::Caveat;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;

    pub fn serialize<S: Serializer>(caveats: &[Caveat], s: S) -> Result<S::Ok, S::Error> {
        let mut out = Vec::with_capacity(caveats.len());
        for c in caveats {
            let mut v = serde_json::to_value(c).map_err(serde::ser::Error::custom)?;
            if let Value::Object(o) = &mut v {
                o.insert("sentence".to_string(), Value::String(c.sentence()));
            }
            out.push(v);
        }
        out.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Caveat>, D::Error> {
        let values = Vec::<Value>::deserialize(d)?;
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                read(v).map_err(|e| serde::de::Error::custom(format!("caveat {}: {e}", i + 1)))
            })
            .collect()
    }

    /// A stored list (absent: none), or what is wrong with its first unreadable caveat.
    pub fn read_list(v: &Value) -> Result<Vec<Caveat>, String> {
        match v {
            Value::Null => Ok(Vec::new()),
            Value::Array(list) => list
                .iter()
                .enumerate()
                .map(|(i, c)| read(c.clone()).map_err(|e| format!("caveat {}: {e}", i + 1)))
                .collect(),
            other => Err(format!("is {other}, not a list of caveats")),
        }
    }

    /// One stored caveat.
    pub fn read(v: Value) -> Result<Caveat, String> {
        match v {
            Value::String(sentence) => Ok(Caveat::Recorded { sentence }),
            v @ Value::Object(_) => serde_json::from_value(v).map_err(|e| e.to_string()),
            other => Err(format!(
                "is {other}, not a caveat (an object with a kind, or a sentence)"
            )),
        }
    }
}

/// "with 1 caveat", "with 2 caveats": what a decision line adds, empty without caveats.
pub fn with_caveats(n: usize) -> String {
    match n {
        0 => String::new(),
        n => format!(
            " — with {}",
            crate::text::count(n as u64, "caveat", "caveats")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_grow_only_by_what_becomes_of_them() {
        let mut f = FileLedger::default();
        f.used(5);
        f.exclude(Reason::LabelIgnored, 3, 9, || "v3".into());
        f.exclude(Reason::LabelIgnored, 2, 4, || "v4".into());
        f.exclude(Reason::MissingScore, 0, 1, || unreachable!());
        assert_eq!((f.lines, f.used), (10, 5));
        let e = &f.excluded["label-ignored"];
        assert_eq!((e.count, e.first_line, e.example.as_str()), (5, 4, "v4"));
        assert!(f.balances());
        assert_eq!(f.excluded(Reason::MissingScore), 0);
    }

    #[test]
    fn every_reason_has_its_own_key_and_meaning() {
        let keys: std::collections::BTreeSet<&str> = Reason::ALL.iter().map(|r| r.key()).collect();
        assert_eq!(keys.len(), Reason::ALL.len());
        assert!(Reason::ALL.iter().all(|r| r.meaning().ends_with('.')));
    }

    #[test]
    fn caveats_read_as_one_sentence_with_count_and_first() {
        let m = Caveat::Malformed {
            arm: "treatment".into(),
            malformed: 28,
            read: 81,
            reason: "`confidence` off the anchor scale".into(),
            reason_count: 28,
            first: "reviews.jsonl:14".into(),
        };
        assert_eq!(m.sentence(), "28 of 81 treatment findings were dropped as malformed: `confidence` off the anchor scale (first: reviews.jsonl:14)");
        let u = |count, what: &str| Caveat::Unpaired {
            arm: "baseline".into(),
            count,
            first: "design-07".into(),
            what: what.into(),
            unchecked: false,
        };
        assert_eq!(
            u(3, "targets").sentence(),
            "3 targets were reviewed in the baseline only and are not paired (first: design-07)"
        );
        assert_eq!(
            u(1, "queries").sentence(),
            "1 query was recorded in the baseline only and is not paired (first: design-07)"
        );
        assert_eq!(with_caveats(0), "");
        assert_eq!(with_caveats(1), " — with 1 caveat");
        assert_eq!(with_caveats(2), " — with 2 caveats");
    }

    /// One caveat of every kind.
    fn one_of_each() -> Vec<Caveat> {
        vec![
            Caveat::Malformed {
                arm: "treatment".into(),
                malformed: 2,
                read: 9,
                reason: "`confidence` off the scale".into(),
                reason_count: 1,
                first: "reviews.jsonl:3".into(),
            },
            Caveat::Unpaired {
                arm: "baseline".into(),
                count: 1,
                first: "q-1".into(),
                what: "queries".into(),
                unchecked: true,
            },
            Caveat::Reviewer {
                reviewer: "scope".into(),
                arm: "treatment".into(),
                returns: 4,
                first: "reviews.jsonl:8".into(),
            },
            Caveat::Drift {
                what: Drifted::Role {
                    role: "judge".into(),
                    names: vec!["strict".into(), "lenient".into()],
                    aspect: Aspect::Model,
                },
                baseline: "m-1".into(),
                treatment: "m-2".into(),
                key: "judge.model".into(),
                first: "verdicts.jsonl:1".into(),
            },
            Caveat::Drift {
                what: Drifted::Env("MODEL".into()),
                baseline: "a".into(),
                treatment: "b".into(),
                key: "env.MODEL".into(),
                first: "collect.json".into(),
            },
            Caveat::Failed {
                arm: "baseline".into(),
                role: "reviewer".into(),
                failed: 1,
                planned: 10,
                failure: crate::corpus::call::Failure::Timeout,
                example: "timed out".into(),
                first: "reviews.jsonl:2".into(),
                only: Some("treatment".into()),
            },
            Caveat::Changed {
                file: "rubric.md".into(),
                stage: "review".into(),
                before: 3,
                after: 4,
            },
            Caveat::Partial {
                what: "3 of 5 targets".into(),
            },
            Caveat::NoHarness {
                arm: "treatment".into(),
            },
            Caveat::Repeats {
                baseline: 1,
                treatment: 2,
            },
            Caveat::Bias {
                says: "the judges score longer text higher".into(),
            },
            Caveat::Recorded {
                sentence: "an earlier version's caveat".into(),
            },
        ]
    }

    // Issue 63: a caveat is stored as its kind and fields with its sentence, and reads back as
    // the same typed caveat, so the gate reads kinds, not text; every kind has its words.
    #[test]
    fn a_stored_caveat_reads_back_as_its_kind() {
        #[derive(Serialize, Deserialize)]
        struct Holder {
            #[serde(with = "stored")]
            caveats: Vec<Caveat>,
        }
        let all = one_of_each();
        let json = serde_json::to_value(Holder {
            caveats: all.clone(),
        })
        .unwrap();
        let kinds: Vec<&str> = all.iter().map(Caveat::kind).collect();
        for (c, v) in all.iter().zip(json["caveats"].as_array().unwrap()) {
            assert_eq!(v["kind"], c.kind());
            assert_eq!(v["sentence"], c.sentence());
        }
        for (k, _) in Caveat::KINDS {
            assert!(kinds.contains(&k), "no caveat of kind {k} is tested");
        }
        let back: Holder = serde_json::from_value(json).unwrap();
        assert_eq!(back.caveats, all);
        // An earlier version's bare sentence is a recorded caveat; anything else is an error
        // naming the caveat.
        let old: Holder =
            serde_json::from_value(serde_json::json!({"caveats": ["said once"]})).unwrap();
        assert_eq!(old.caveats[0].kind(), "recorded");
        assert_eq!(old.caveats[0].sentence(), "said once");
        let bad = serde_json::from_value::<Holder>(
            serde_json::json!({"caveats": ["ok", {"kind": "drift"}]}),
        );
        let e = bad.err().unwrap().to_string();
        assert!(e.starts_with("caveat 2: missing field"), "{e}");
        assert!(serde_json::from_value::<Holder>(serde_json::json!({"caveats": [3]})).is_err());
    }

    // Regression (issue 63): one MODEL change (or one shared prompt file edited) was a caveat per
    // reviewer. A caveat of one cause joins the first: one caveat naming every role it touches.
    #[test]
    fn one_cause_is_one_caveat_naming_the_roles_it_touches() {
        let drift = |name: &str, aspect, treatment: &str| Caveat::Drift {
            what: Drifted::Role {
                role: "reviewer".into(),
                names: vec![name.into()],
                aspect,
            },
            baseline: "claude-x".into(),
            treatment: treatment.into(),
            key: "model".into(),
            first: format!("reviews.jsonl:{}", name.len()),
        };
        let mut inputs = Inputs::default();
        assert!(inputs.caveat(drift("coherence", Aspect::Model, "claude-y")));
        assert!(!inputs.caveat(drift("feasibility", Aspect::Model, "claude-y")));
        assert!(!inputs.caveat(drift("scope", Aspect::Model, "claude-y")));
        // Another value, another aspect, another kind: other causes.
        assert!(inputs.caveat(drift("scope", Aspect::Model, "claude-z")));
        assert!(inputs.caveat(drift("scope", Aspect::Files, "claude-y")));
        assert!(inputs.caveat(Caveat::Drift {
            what: Drifted::Env("MODEL".into()),
            baseline: "claude-x".into(),
            treatment: "claude-y".into(),
            key: "env.MODEL".into(),
            first: "collect.json".into(),
        }));
        assert_eq!(inputs.caveats.len(), 4);
        assert_eq!(
            inputs.caveats[0].sentence(),
            "reviewers `coherence`, `feasibility` and `scope` model differ between the arms: claude-x (baseline), claude-y (treatment) (first: reviews.jsonl:9); the decision credits it to the treatment: if it is the change, declare it with [arms.treatment] differs = [\"model\"]"
        );
        assert!(inputs.caveats[1]
            .sentence()
            .starts_with("reviewer `scope` model differs between the arms"));
        // Written as its kind and fields, read back as the same caveat.
        let json = serde_json::to_string(&inputs.caveats[3]).unwrap();
        let back: Caveat = serde_json::from_str(&json).unwrap();
        assert_eq!(back, inputs.caveats[3]);
    }
}
