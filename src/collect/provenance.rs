//! What a collection records of the harness that made it (docs/guides/live-collection.md,
//! "Provenance and drift"), pure: per recorded arm label, role and name, the command's argv
//! (its `{arm}`, `{reviewer}` and `{judge}` filled in, per-call placeholders kept), the SHA-256
//! of every file the argv names; per arm, calibench's version and the `[collect]
//! provenance_env` variables. And the comparison of two arms' records: what differs, each as
//! the `differs` key that would declare it.

use std::collections::BTreeMap;

use super::plan::Collect;
use crate::corpus::collection::{ArmRecord, Command, Provenance};
use crate::corpus::ledger::{Aspect, Drifted};

/// What a credential's name holds, case aside (docs/guides/live-collection.md, "Secrets").
const CREDENTIAL_NAMES: [&str; 12] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "PWD",
    "AUTH",
    "CRED",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "CERT",
    "SIGNATURE",
];

/// How recognised keys begin: OpenAI's and Anthropic's, GitHub's, AWS's access key ids,
/// Slack's, and a bearer header.
const CREDENTIAL_PREFIXES: [&str; 10] = [
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "xox",
    "Bearer ",
];

/// Whether an environment variable's name looks like a credential's.
pub fn credential_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    CREDENTIAL_NAMES.iter().any(|s| upper.contains(s))
}

/// Whether a value looks like a credential: a recognised key prefix, a JSON Web Token (three
/// base64url parts, the first `eyJ`), or 32 or more characters of base64 or hex with a digit
/// and a letter among them (a path, which begins `/` or `.`, is not one).
pub fn credential_value(value: &str) -> bool {
    let v = value.trim();
    if CREDENTIAL_PREFIXES.iter().any(|p| v.starts_with(p)) {
        return true;
    }
    let base64 = |c: char| c.is_ascii_alphanumeric() || "+/=_-".contains(c);
    let parts: Vec<&str> = v.split('.').collect();
    if v.starts_with("eyJ") && parts.len() == 3 && parts.iter().all(|p| p.chars().all(base64)) {
        return true;
    }
    v.chars().count() >= 32
        && !v.starts_with(['/', '.'])
        && v.chars().all(base64)
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().any(|c| c.is_ascii_alphabetic())
}

/// The record of a collection of `arms` (recorded labels) by `collect`. `hash` gives the
/// SHA-256 of a file an argument names (relative to the experiment's folder; with `true`, the
/// program `argv[0]` names, found on `PATH` as the runner finds it), `None` for an argument
/// that names no file; the value of a `--flag=FILE` argument is tried as a file too. `env`
/// reads a variable. A variable whose name or value looks
/// like a credential is recorded only as set or unset: never its value, nor a hash of it (a
/// short secret is found again from its hash).
pub fn record(
    collect: &Collect,
    arms: &[String],
    version: &str,
    hash: &dyn Fn(&str, bool) -> Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Provenance {
    let command = |template: &[String], fill: &[(&str, &str)]| {
        let argv: Vec<String> = template
            .iter()
            .map(|a| {
                fill.iter().fold(
                    a.clone(),
                    |a, (k, v)| if a == *k { v.to_string() } else { a },
                )
            })
            .collect();
        let mut files = BTreeMap::new();
        for (i, a) in argv.iter().enumerate() {
            if let Some(h) = hash(a, i == 0) {
                files.insert(a.clone(), h);
            } else if let Some((_, value)) = a.split_once('=') {
                if let Some(h) = hash(value, false) {
                    files.insert(value.to_string(), h);
                }
            }
        }
        Command { argv, files }
    };
    let (mut values, mut secrets) = (BTreeMap::new(), BTreeMap::new());
    for name in &collect.provenance_env {
        match env(name) {
            Some(v) if credential_name(name) || credential_value(&v) => {
                secrets.insert(name.clone(), true);
            }
            None if credential_name(name) => {
                secrets.insert(name.clone(), false);
            }
            Some(v) => {
                values.insert(name.clone(), v);
            }
            None => {
                values.insert(name.clone(), "(unset)".to_string());
            }
        }
    }
    let mut out = Provenance::default();
    for arm in arms {
        let mut roles: BTreeMap<String, BTreeMap<String, Command>> = BTreeMap::new();
        let reviewers = roles.entry("reviewer".into()).or_default();
        for reviewer in &collect.reviewers {
            let fill = [("{arm}", arm.as_str()), ("{reviewer}", reviewer.as_str())];
            // Query collection's one unnamed reviewer is the agent (`agent`).
            reviewers.insert(reviewer.clone(), command(&collect.command, &fill));
        }
        if let Some(v) = &collect.validators {
            roles.entry("validator".into()).or_default().insert(
                "validator".into(),
                command(&v.command, &[("{arm}", arm.as_str())]),
            );
        }
        if let Some(j) = &collect.judges {
            let judges = roles.entry("judge".into()).or_default();
            for judge in &j.judges {
                let fill = [("{arm}", arm.as_str()), ("{judge}", judge.as_str())];
                judges.insert(judge.clone(), command(&j.command, &fill));
            }
        }
        out.arms.insert(
            arm.clone(),
            ArmRecord {
                calibench: version.to_string(),
                env: values.clone(),
                secrets: secrets.clone(),
                roles,
            },
        );
    }
    out
}

/// One difference between two arms' records: what, its value in each, and the `differs` key
/// that declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub what: Drifted,
    pub baseline: String,
    pub treatment: String,
    pub key: String,
}

impl Difference {
    /// The difference between two records named by their sides (`shard 1`, `this run`):
    /// "environment variable MODEL: x (shard 1), y (shard 2)"; a credential's value is never
    /// told, only that it is set on one side.
    pub fn between(&self, first: &str, second: &str) -> String {
        if matches!(self.what, Drifted::Secret(_)) {
            return format!("{} is set in {first} or {second} only, not both", self.what);
        }
        format!(
            "{}: {} ({first}), {} ({second})",
            self.what, self.baseline, self.treatment
        )
    }
}

/// What differs between the arms' records, beyond the arm's own label in its argv (a command
/// that passes `{arm}` runs the same program for both).
pub fn compare(
    (b_label, b): (&str, &ArmRecord),
    (t_label, t): (&str, &ArmRecord),
) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut differ = |what: Drifted, x: String, y: String, key: &str| {
        if x != y {
            out.push(Difference {
                what,
                baseline: x,
                treatment: y,
                key: key.to_string(),
            });
        }
    };
    differ(
        Drifted::Version,
        b.calibench.clone(),
        t.calibench.clone(),
        "calibench",
    );
    // A variable is a credential when either record says so (its name, or a value recorded as
    // set or unset), or when a value recorded before this rule was a hash of one: then only
    // whether it was set is told, never a value.
    let names: std::collections::BTreeSet<&String> = [b, t]
        .iter()
        .flat_map(|r| r.env.keys().chain(r.secrets.keys()))
        .collect();
    for name in names {
        let secret = |r: &ArmRecord| {
            r.secrets.contains_key(name.as_str())
                || credential_name(name)
                || r.env
                    .get(name.as_str())
                    .is_some_and(|v| v.starts_with("sha256:") || credential_value(v))
        };
        if secret(b) || secret(t) {
            let set = |r: &ArmRecord| match (r.secrets.get(name.as_str()), r.env.get(name.as_str()))
            {
                (Some(set), _) => *set,
                (None, Some(v)) => v != "(unset)",
                (None, None) => false,
            };
            let word = |set: bool| if set { "set" } else { "unset" }.to_string();
            differ(
                Drifted::Secret(name.clone()),
                word(set(b)),
                word(set(t)),
                &format!("env.{name}"),
            );
            continue;
        }
        let get = |r: &ArmRecord| {
            r.env
                .get(name.as_str())
                .cloned()
                .unwrap_or_else(|| "(not recorded)".into())
        };
        differ(
            Drifted::Env(name.clone()),
            get(b),
            get(t),
            &format!("env.{name}"),
        );
    }
    let shown = |argv: &[String], label: &str| {
        argv.iter()
            .map(|a| {
                if a == label {
                    "{arm}".to_string()
                } else {
                    a.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (role, names) in &b.roles {
        let Some(other) = t.roles.get(role) else {
            continue;
        };
        for (name, cb) in names {
            let Some(ct) = other.get(name) else {
                continue;
            };
            let what = |aspect| Drifted::Role {
                role: role.clone(),
                names: vec![name.clone()],
                aspect,
            };
            differ(
                what(Aspect::Command),
                shown(&cb.argv, b_label),
                shown(&ct.argv, t_label),
                "command",
            );
            let files = |c: &Command| {
                c.files
                    .iter()
                    .map(|(f, h)| format!("{f} {}", &h[..h.len().min(12)]))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            // The same argument naming another file's content (a prompt edited between the
            // arms), compared on the files both name.
            if shown(&cb.argv, b_label) == shown(&ct.argv, t_label) {
                differ(what(Aspect::Files), files(cb), files(ct), "files");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(version: &str, prompt_hash: &str, model: &str) -> ArmRecord {
        let mut roles = BTreeMap::new();
        roles.insert(
            "reviewer".to_string(),
            BTreeMap::from([(
                "coherence".to_string(),
                Command {
                    argv: vec!["./review.sh".into(), "prompt.md".into(), "x".into()],
                    files: BTreeMap::from([("prompt.md".to_string(), prompt_hash.to_string())]),
                },
            )]),
        );
        ArmRecord {
            calibench: version.into(),
            env: BTreeMap::from([("MODEL".to_string(), model.to_string())]),
            secrets: BTreeMap::new(),
            roles,
        }
    }

    #[test]
    fn differences_are_named_with_the_key_that_declares_them() {
        let b = arm("0.1.0", "aaaaaaaaaaaaaaaa", "claude-x");
        assert!(compare(("x", &b), ("x", &b)).is_empty());
        let t = arm("0.2.0", "bbbbbbbbbbbbbbbb", "claude-y");
        let d = compare(("x", &b), ("x", &t));
        let keys: Vec<&str> = d.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(keys, ["calibench", "env.MODEL", "files"]);
        assert_eq!(d[1].baseline, "claude-x");
        assert_eq!(d[2].what.to_string(), "reviewer `coherence` files");
    }

    #[test]
    fn the_arm_label_in_an_argv_is_not_drift() {
        let mut b = arm("0.1.0", "a", "m");
        let mut t = b.clone();
        b.roles
            .get_mut("reviewer")
            .unwrap()
            .get_mut("coherence")
            .unwrap()
            .argv[2] = "float".into();
        t.roles
            .get_mut("reviewer")
            .unwrap()
            .get_mut("coherence")
            .unwrap()
            .argv[2] = "anchored".into();
        assert!(compare(("float", &b), ("anchored", &t)).is_empty());
        assert_eq!(compare(("float", &b), ("other", &t)).len(), 1);
    }

    // Regression (hostile-4/06): PASSWORD, AUTH, COOKIE and the like were recorded raw, and
    // KEY/TOKEN values as an unsalted hash a short secret is found again from.
    #[test]
    fn credentials_are_told_by_name_or_by_value() {
        for name in [
            "OPENAI_API_KEY",
            "hf_token",
            "MY_SECRET",
            "PASSWORD",
            "DB_PASS",
            "PGPWD",
            "AUTH",
            "CREDENTIALS",
            "COOKIE",
            "SESSION_ID",
            "PRIVATE_PEM",
            "TLS_CERT",
            "REQUEST_SIGNATURE",
        ] {
            assert!(credential_name(name), "{name}");
        }
        assert!(!credential_name("MODEL") && !credential_name("PROMPT_VERSION"));
        for value in [
            "sk-ant-api03-abc",
            "ghp_0123456789",
            "AKIAIOSFODNN7EXAMPLE",
            "Bearer abc.def",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
            "0123456789abcdef0123456789abcdef",
            "c2VjcmV0LXRoYXQtaXMtbG9uZy1lbm91Z2gx",
        ] {
            assert!(credential_value(value), "{value}");
        }
        for value in [
            "claude-3-5-sonnet-20241022",
            "v2",
            "/home/ci/models/llama-3-70b-instruct-q4",
            "gpt-4o",
            "abcdefghijklmnopqrstuvwxyzabcdefgh",
        ] {
            assert!(!credential_value(value), "{value}");
        }
    }

    #[test]
    fn a_credential_is_recorded_as_set_or_unset_and_compared_so() {
        let mut b = arm("0.1.0", "a", "m");
        let mut t = b.clone();
        b.secrets.insert("API_KEY".into(), true);
        t.secrets.insert("API_KEY".into(), true);
        // Both set: nothing can be compared, and nothing is said.
        assert!(compare(("x", &b), ("x", &t)).is_empty());
        t.secrets.insert("API_KEY".into(), false);
        let d = compare(("x", &b), ("x", &t));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].what, Drifted::Secret("API_KEY".into()));
        assert_eq!(
            (d[0].baseline.as_str(), d[0].treatment.as_str()),
            ("set", "unset")
        );
        // A record of before the rule holds a hash: its value is never shown either.
        let (mut b, mut t) = (arm("0.1.0", "a", "m"), arm("0.1.0", "a", "m"));
        b.env.insert("OPENAI_API_KEY".into(), "sha256:00".into());
        t.env.insert("OPENAI_API_KEY".into(), "sha256:11".into());
        let d = compare(("x", &b), ("x", &t));
        assert!(d.iter().all(|d| !d.baseline.contains("sha256")), "{d:?}");
    }
}
