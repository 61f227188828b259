//! Gate policies (docs/guides/ci-gate.md): `gate.toml`, or the `[gate]` table of an experiment. Parsing is
//! pure (text in, policy or the first problem out) and refuses anything a gate could not
//! honestly evaluate: unknown keys, paths that can never exist or do not name a number, checks
//! with no bound, bounds no value can meet, and relative bounds with no accepted run.

use std::path::{Path, PathBuf};

use crate::input::toml::Spanned;
use serde::{Deserialize, Serialize};

use super::schema::{self, MetricPath};
use crate::error::{line_at, InputError};

/// A parsed policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Policy {
    /// Where it was read from, for messages: `gate.toml`, or `experiment.toml [gate]`.
    pub source: String,
    /// Fail unless the run's trust verdict says the judges agree (default true).
    pub require_trustworthy: bool,
    /// Fail unless the run's decision is one of these (empty: the decision is not checked).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub require_decision: Vec<crate::decision::Verdict>,
    /// The caveats `require_decision` lets a decision carry (docs/reference.md, "The input
    /// ledger"); by default none: a decision with a caveat fails it, naming each.
    #[serde(skip_serializing_if = "Allowed::is_none")]
    pub allow_caveats: Allowed,
    pub checks: Vec<Check>,
}

/// A check that bounds a change and names no accepted run compares with the one `calibench
/// accept` stores by default: `accepted/metrics.json` in the runs folder. The policy is read
/// before the runs folder is known, so it holds this place and [`Policy::in_runs`] fills it.
pub const RUNS_ACCEPTED: &str = "<runs>/accepted/metrics.json";

impl Policy {
    /// The policy with every check that names no accepted run comparing with
    /// `runs/accepted/metrics.json`, where `calibench accept` puts it.
    pub fn in_runs(mut self, runs: &Path) -> Policy {
        for c in &mut self.checks {
            if c.baseline.as_deref() == Some(Path::new(RUNS_ACCEPTED)) {
                c.baseline = Some(runs.join("accepted").join("metrics.json"));
            }
        }
        self
    }

    /// The accepted runs the checks compare against, each once, in first-use order.
    pub fn baselines(&self) -> Vec<&Path> {
        let mut out: Vec<&Path> = Vec::new();
        for b in self.checks.iter().filter_map(|c| c.baseline.as_deref()) {
            if !out.contains(&b) {
                out.push(b);
            }
        }
        out
    }
}

/// One `[[check]]`: a metric and the bounds it must meet.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// `name` if given, else the metric path.
    pub name: String,
    #[serde(serialize_with = "display")]
    pub metric: MetricPath,
    pub bounds: Vec<Bound>,
    /// The accepted `metrics.json` for `max_increase` / `max_decrease`, resolved against the
    /// policy file's folder.
    pub baseline: Option<PathBuf>,
    /// Where the check starts in its file.
    pub line: u64,
}

fn display<S: serde::Serializer>(p: &MetricPath, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(p)
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// value ≥ bound
    Min(f64),
    /// value ≤ bound
    Max(f64),
    /// value − accepted ≤ bound
    MaxIncrease(f64),
    /// accepted − value ≤ bound
    MaxDecrease(f64),
}

impl Bound {
    pub fn key(self) -> &'static str {
        match self {
            Bound::Min(_) => "min",
            Bound::Max(_) => "max",
            Bound::MaxIncrease(_) => "max_increase",
            Bound::MaxDecrease(_) => "max_decrease",
        }
    }

    pub fn limit(self) -> f64 {
        match self {
            Bound::Min(x) | Bound::Max(x) | Bound::MaxIncrease(x) | Bound::MaxDecrease(x) => x,
        }
    }

    pub fn relative(self) -> bool {
        matches!(self, Bound::MaxIncrease(_) | Bound::MaxDecrease(_))
    }
}

/// A gate policy as written (`gate.toml`, or an experiment's `[gate]` table), read by serde
/// with the position of each value; its JSON Schema is derived from it.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    /// Fail unless the judges are trusted (default true).
    require_trustworthy: Option<bool>,
    /// Fail unless the run's decision is this verdict (`"better"`) or one of these
    /// (`["better", "inconclusive"]`).
    require_decision: Option<Spanned<RequiredDecision>>,
    /// Let `require_decision` pass a decision whose inputs carry caveats: `true` for any, or a
    /// list of the kinds it may carry (`["partial", "unpaired"]`: malformed, unpaired,
    /// reviewer, drift, failed-calls, changed, partial, no-harness, repeats, recorded); default
    /// false: a decision with a caveat fails it, naming each.
    allow_caveats: Option<Spanned<RawAllowed>>,
    /// The accepted `metrics.json` that `max_increase` and `max_decrease` compare against,
    /// relative to the policy file's folder; the default of every check. Without one, a check
    /// compares with `accepted/metrics.json` in the runs folder, where `calibench accept` puts
    /// it.
    baseline: Option<Spanned<String>>,
    /// The checks: `[[check]]` in a `gate.toml`, `[[gate.check]]` in an experiment.
    #[serde(default)]
    check: Vec<Spanned<RawCheck>>,
}

/// The caveats a policy lets `require_decision` pass.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Allowed {
    /// `true` or `false`: every caveat, or none.
    All(bool),
    /// The kinds it lets pass (`Caveat::kind`).
    Kinds(Vec<String>),
}

impl Allowed {
    fn is_none(&self) -> bool {
        *self == Allowed::All(false)
    }

    /// Whether a decision may carry `c`.
    pub fn allows(&self, c: &crate::corpus::ledger::Caveat) -> bool {
        match self {
            Allowed::All(all) => *all,
            Allowed::Kinds(kinds) => kinds.iter().any(|k| k == c.kind()),
        }
    }
}

/// `allow_caveats` as written: a boolean or a list of kinds.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum RawAllowed {
    All(bool),
    Kinds(Vec<String>),
}

/// `require_decision`: one verdict or a list of them.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
enum RequiredDecision {
    One(crate::decision::Verdict),
    Any(Vec<crate::decision::Verdict>),
}

impl<'de> Deserialize<'de> for RequiredDecision {
    /// Read by hand, so that a wrong value is told what it may be (`awesome` is not one of
    /// better, …), not that it matched no variant of an enum.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let verdict = |v: &toml::Value| -> Result<crate::decision::Verdict, D::Error> {
            use crate::decision::Verdict::*;
            let all = [Better, Worse, Inconclusive, Withheld];
            let names = "better, worse, inconclusive, withheld";
            match v {
                toml::Value::String(s) => {
                    all.into_iter().find(|v| v.name() == s).ok_or_else(|| {
                        let near = all
                            .iter()
                            .find(|v| v.name().eq_ignore_ascii_case(s))
                            .map(|v| format!("; did you mean `{}`?", v.name()))
                            .unwrap_or_default();
                        D::Error::custom(format_args!("`{s}` is not one of {names}{near}"))
                    })
                }
                other => Err(D::Error::custom(format_args!(
                    "must be a verdict ({names}) or a list of them, not {}",
                    other.type_str()
                ))),
            }
        };
        match toml::Value::deserialize(d)? {
            toml::Value::Array(items) => items
                .iter()
                .map(verdict)
                .collect::<Result<Vec<_>, _>>()
                .map(RequiredDecision::Any),
            one => verdict(&one).map(RequiredDecision::One),
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    /// What the check is called in the output, JUnit and summary (default: its metric).
    name: Option<String>,
    /// A dotted path into metrics.json (`calibench gate --list-metrics`).
    metric: Option<Spanned<String>>,
    /// Fails when the value is below this.
    min: Option<Spanned<f64>>,
    /// Fails when the value is above this.
    max: Option<Spanned<f64>>,
    /// Fails when the value rose by more than this from the accepted run.
    max_increase: Option<Spanned<f64>>,
    /// Fails when the value fell by more than this from the accepted run.
    max_decrease: Option<Spanned<f64>>,
    /// This check's own accepted `metrics.json`, overriding the policy's.
    baseline: Option<Spanned<String>>,
}

/// Parses a `gate.toml`. `file` names it in messages; relative `baseline` paths are resolved
/// against its folder.
pub fn parse(file: &Path, text: &str) -> Result<Policy, InputError> {
    let ctx = Ctx::new(file, text, "");
    let raw: RawPolicy = crate::input::toml::read_toml_file(&ctx.file, text)?;
    ctx.build(raw, file.display().to_string())
}

/// The `[gate]` table of an experiment file, read with the rest of it by `config`.
pub fn in_experiment(file: &Path, text: &str, raw: RawPolicy) -> Result<Policy, InputError> {
    Ctx::new(file, text, "gate.").build(raw, format!("{} [gate]", file.display()))
}

struct Ctx<'a> {
    file: String,
    text: &'a str,
    dir: PathBuf,
    /// `gate.` inside an experiment, so fields read as the user wrote them.
    prefix: &'static str,
}

impl<'a> Ctx<'a> {
    fn new(file: &Path, text: &'a str, prefix: &'static str) -> Self {
        Ctx {
            file: file.display().to_string(),
            text,
            dir: file.parent().unwrap_or(Path::new("")).to_path_buf(),
            prefix,
        }
    }

    fn line(&self, offset: usize) -> u64 {
        line_at(self.text, offset)
    }

    fn error<T>(&self, at: &Spanned<T>, field: &str, problem: impl Into<String>) -> InputError {
        InputError::new(&self.file, problem)
            .at_line(self.line(at.span().start))
            .field(format!("`{}{field}`", self.prefix))
    }

    fn build(&self, raw: RawPolicy, source: String) -> Result<Policy, InputError> {
        let default_baseline = raw.baseline.as_ref().map(|b| self.dir.join(b.get_ref()));
        if let Some(b) = &raw.baseline {
            if b.get_ref().trim().is_empty() {
                return Err(self.error(b, "baseline", "is empty"));
            }
        }
        let mut checks = Vec::new();
        for spanned in &raw.check {
            checks.push(self.check(spanned, default_baseline.as_ref())?);
        }
        let require_trustworthy = raw.require_trustworthy.unwrap_or(true);
        let require_decision = match &raw.require_decision {
            None => Vec::new(),
            Some(r) => match r.get_ref() {
                RequiredDecision::One(v) => vec![*v],
                RequiredDecision::Any(vs) if vs.is_empty() => {
                    return Err(self
                        .error(r, "require_decision", "is an empty list: no decision could pass")
                        .hint("require_decision = \"better\", or a list such as [\"better\", \"inconclusive\"]"))
                }
                RequiredDecision::Any(vs) => vs.clone(),
            },
        };
        if checks.is_empty() && !require_trustworthy && require_decision.is_empty() {
            return Err(InputError::new(&self.file, "the gate checks nothing")
                .field(format!("`{}check`", self.prefix))
                .hint(
                    "add a [[check]] with a metric and a bound, set require_trustworthy = true, or require_decision = \"better\"",
                ));
        }
        let allow_caveats = match &raw.allow_caveats {
            Some(a) if require_decision.is_empty() => {
                return Err(self
                    .error(a, "allow_caveats", "has nothing to allow: the policy has no require_decision")
                    .hint("allow_caveats lets require_decision pass a decision whose inputs carry caveats; set require_decision, or drop it"))
            }
            Some(a) => match a.get_ref() {
                RawAllowed::All(all) => Allowed::All(*all),
                RawAllowed::Kinds(kinds) => {
                    let known: Vec<&str> = crate::corpus::ledger::Caveat::KINDS
                        .iter()
                        .map(|(k, _)| *k)
                        .collect();
                    if let Some(k) = kinds.iter().find(|k| !known.contains(&k.as_str())) {
                        return Err(self
                            .error(a, "allow_caveats", format!("`{k}` is not a kind of caveat"))
                            .hint(format!("the kinds are {}; or true for any", known.join(", "))));
                    }
                    Allowed::Kinds(kinds.clone())
                }
            },
            None => Allowed::All(false),
        };
        Ok(Policy {
            source,
            require_trustworthy,
            require_decision,
            allow_caveats,
            checks,
        })
    }

    fn check(
        &self,
        spanned: &Spanned<RawCheck>,
        default_baseline: Option<&PathBuf>,
    ) -> Result<Check, InputError> {
        let raw = spanned.get_ref();
        let line = self.line(spanned.span().start);
        let Some(metric_text) = &raw.metric else {
            return Err(InputError::new(&self.file, "this check names no metric")
                .at_line(line)
                .field(format!("`{}check.metric`", self.prefix))
                .hint("metric is a dotted path into metrics.json, e.g. agreement.judges.alpha"));
        };
        let metric = MetricPath::parse(metric_text.get_ref())
            .and_then(|p| schema::number_at(&p).map(|()| p))
            .map_err(|problem| {
                self.error(metric_text, "check.metric", problem).hint(
                    "`calibench gate --list-metrics` lists every path to a number in metrics.json",
                )
            })?;

        let mut bounds = Vec::new();
        for (key, value, make) in [
            ("min", &raw.min, Bound::Min as fn(f64) -> Bound),
            ("max", &raw.max, Bound::Max),
            ("max_increase", &raw.max_increase, Bound::MaxIncrease),
            ("max_decrease", &raw.max_decrease, Bound::MaxDecrease),
        ] {
            let Some(v) = value else { continue };
            let x = *v.get_ref();
            let field = format!("check.{key}");
            if !x.is_finite() {
                return Err(self.error(v, &field, format!("{x} is not a finite number")));
            }
            if key.starts_with("max_") && x < 0.0 {
                return Err(self
                    .error(
                        v,
                        &field,
                        format!("{x} is negative: no change could ever pass"),
                    )
                    .hint(
                        "to demand a better value than the accepted run, bound it with min or max",
                    ));
            }
            bounds.push(make(x));
        }
        if bounds.is_empty() {
            return Err(InputError::new(
                &self.file,
                format!("the check of `{metric}` sets no bound"),
            )
            .at_line(line)
            .field(format!("`{}check`", self.prefix))
            .hint("add min, max, max_increase or max_decrease"));
        }
        if let (Some(lo), Some(hi)) = (&raw.min, &raw.max) {
            if lo.get_ref() > hi.get_ref() {
                return Err(self.error(
                    lo,
                    "check.min",
                    format!(
                        "min {} is above max {}: no value can pass",
                        lo.get_ref(),
                        hi.get_ref()
                    ),
                ));
            }
        }
        let relative = bounds.iter().any(|b| b.relative());
        let baseline = match (&raw.baseline, relative) {
            (Some(b), true) if b.get_ref().trim().is_empty() => {
                return Err(self.error(b, "check.baseline", "is empty"))
            }
            (Some(b), true) => Some(self.dir.join(b.get_ref())),
            (Some(b), false) => {
                return Err(self
                    .error(
                        b,
                        "check.baseline",
                        "is set, but no max_increase or max_decrease uses it",
                    )
                    .hint("min and max are absolute; drop baseline, or bound the change"))
            }
            // No accepted run named: the one `calibench accept` stores in the runs folder.
            (None, true) => Some(
                default_baseline
                    .cloned()
                    .unwrap_or_else(|| PathBuf::from(RUNS_ACCEPTED)),
            ),
            (None, false) => None,
        };
        Ok(Check {
            name: raw.name.clone().unwrap_or_else(|| metric.to_string()),
            metric,
            bounds,
            baseline,
            line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Policy, InputError> {
        parse(Path::new("ci/gate.toml"), text)
    }

    const EXAMPLE: &str = r#"require_trustworthy = true
[[check]]
metric = "queries.arms.treatment.recovery_gate_rate"   # dotted path into metrics.json
max = 0.20
[[check]]
metric = "agreement.judges.alpha"
min = 0.667
[[check]]
metric = "queries.arms.treatment.calibration.ece"
max_increase = 0.02                                    # against a stored accepted run
baseline = "runs/accepted/metrics.json"
"#;

    #[test]
    fn the_spec_example_parses() {
        let p = parse_str(EXAMPLE).unwrap();
        assert!(p.require_trustworthy);
        assert_eq!(p.checks.len(), 3);
        assert_eq!(p.checks[0].bounds, [Bound::Max(0.20)]);
        assert_eq!(p.checks[0].line, 2);
        assert_eq!(p.checks[1].name, "agreement.judges.alpha");
        assert_eq!(p.checks[1].bounds, [Bound::Min(0.667)]);
        assert_eq!(p.checks[2].bounds, [Bound::MaxIncrease(0.02)]);
        assert_eq!(
            p.checks[2].baseline.as_deref(),
            Some(Path::new("ci/runs/accepted/metrics.json"))
        );
        assert_eq!(p.baselines(), [Path::new("ci/runs/accepted/metrics.json")]);
    }

    #[test]
    fn integers_are_bounds_too_and_a_top_level_baseline_is_the_default() {
        let p = parse_str(
            "require_trustworthy = false\nbaseline = \"acc/metrics.json\"\n\
             [[check]]\nname = \"anchors\"\nmetric = \"review.arms.treatment.distinct_values_max\"\nmax = 5\n\
             [[check]]\nmetric = \"lift.value\"\nmin = 0\nmax_decrease = 0.05\n",
        )
        .unwrap();
        assert!(!p.require_trustworthy);
        assert_eq!(p.checks[0].name, "anchors");
        assert_eq!(p.checks[0].bounds, [Bound::Max(5.0)]);
        assert_eq!(p.checks[0].baseline, None);
        assert_eq!(
            p.checks[1].bounds,
            [Bound::Min(0.0), Bound::MaxDecrease(0.05)]
        );
        assert_eq!(
            p.checks[1].baseline.as_deref(),
            Some(Path::new("ci/acc/metrics.json"))
        );
    }

    fn refused(text: &str) -> String {
        parse_str(text).unwrap_err().to_string()
    }

    #[test]
    fn unknown_keys_are_refused_with_their_line() {
        let e = refused("[[check]]\nmetric = \"lift.value\"\nmn = 0\n");
        assert!(e.starts_with("ci/gate.toml:"), "{e}");
        assert!(
            e.contains("`check.0.mn`: unknown key `mn` — did you mean `min`?"),
            "{e}"
        );
        let e = refused("require_trustworthy = true\nthreshold = 3\n");
        assert!(e.contains("ci/gate.toml:2"), "{e}");
        assert!(e.contains("`threshold`: unknown key `threshold`"), "{e}");
    }

    #[test]
    fn impossible_paths_are_refused_with_line_and_field() {
        let e = refused("[[check]]\nmetric = \"agreement.judges.alpah\"\nmin = 0.6\n");
        assert!(
            e.starts_with("ci/gate.toml:2: `check.metric`: `agreement.judges` has no `alpah`; did you mean `alpha`?"),
            "{e}"
        );
        assert!(e.contains("--list-metrics"), "{e}");
        let e = refused("[[check]]\nmetric = \"trust.trustworthy\"\nmin = 1\n");
        assert!(e.contains("require_trustworthy"), "{e}");
    }

    #[test]
    fn a_change_bound_without_a_baseline_compares_with_the_runs_accepted_run() {
        let p = parse_str("[[check]]\nmetric = \"lift.value\"\nmax_increase = 0.1\n").unwrap();
        assert_eq!(
            p.checks[0].baseline.as_deref(),
            Some(Path::new(RUNS_ACCEPTED))
        );
        let p = p.in_runs(Path::new("out/runs"));
        assert_eq!(
            p.checks[0].baseline.as_deref(),
            Some(Path::new("out/runs/accepted/metrics.json"))
        );
    }

    #[test]
    fn checks_that_could_never_be_evaluated_are_refused() {
        for (text, needle) in [
            ("[[check]]\nmin = 1\n", "names no metric"),
            ("[[check]]\nmetric = \"lift.value\"\n", "sets no bound"),
            (
                "[[check]]\nmetric = \"lift.value\"\nmin = 0.5\nmax = 0.2\n",
                "min 0.5 is above max 0.2",
            ),
            (
                "[[check]]\nmetric = \"lift.value\"\nmin = 0\nbaseline = \"a.json\"\n",
                "no max_increase or max_decrease uses it",
            ),
            (
                "[[check]]\nmetric = \"lift.value\"\nmax_decrease = -0.1\nbaseline = \"a.json\"\n",
                "negative",
            ),
            (
                "[[check]]\nmetric = \"lift.value\"\nmax = nan\n",
                "not a finite number",
            ),
            ("require_trustworthy = false\n", "checks nothing"),
            (
                "require_trustworthy = \"yes\"\n",
                "must be a boolean, not string",
            ),
            (
                "[[check]]\nmetric = \"lift.value\"\nmax = \"0.2\"\n",
                "`check.0.max`: must be",
            ),
        ] {
            let e = refused(text);
            assert!(e.contains(needle), "{text:?}: {e}");
            assert!(e.starts_with("ci/gate.toml:"), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_policy_of_trust_alone_is_a_policy() {
        let p = parse_str("").unwrap();
        assert!(p.require_trustworthy);
        assert!(p.checks.is_empty());
    }

    /// The `[gate]` table of an experiment text, read alone.
    fn parse_in_experiment(file: &Path, text: &str) -> Result<Option<Policy>, InputError> {
        #[derive(Deserialize)]
        struct Only {
            gate: Option<RawPolicy>,
        }
        let only: Only = toml::from_str(text)
            .map_err(|e| InputError::toml(file.display().to_string(), text, &e))?;
        only.gate.map(|g| in_experiment(file, text, g)).transpose()
    }

    #[test]
    fn the_gate_table_of_an_experiment_is_read_with_the_experiment_lines() {
        let text = "name = \"x\"\n[arms.baseline]\nsource = \"b\"\n\n[gate]\nrequire_trustworthy = false\n\
                    baseline = \"accepted/metrics.json\"\n[[gate.check]]\nmetric = \"lift.value\"\n\
                    max_decrease = 0.1\n";
        let p = parse_in_experiment(Path::new("corpora/x/experiment.toml"), text)
            .unwrap()
            .unwrap();
        assert_eq!(p.source, "corpora/x/experiment.toml [gate]");
        assert_eq!(p.checks[0].line, 8);
        assert_eq!(
            p.checks[0].baseline.as_deref(),
            Some(Path::new("corpora/x/accepted/metrics.json"))
        );
        assert_eq!(
            parse_in_experiment(Path::new("e.toml"), "name = \"x\"\n").unwrap(),
            None
        );
        let e = parse_in_experiment(
            Path::new("e.toml"),
            "[gate]\n[[gate.check]]\nmetric = \"lift.valu\"\nmin = 0\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("e.toml:3: `gate.check.metric`:"), "{e}");
    }
}
