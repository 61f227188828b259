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

/// Whether an environment variable's value is a secret, recorded as its hash only.
pub fn secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET"].iter().any(|s| upper.contains(s))
}

/// The record of a collection of `arms` (recorded labels) by `collect`. `hash` gives the
/// SHA-256 of a file an argument names (relative to the experiment's folder), `None` for an
/// argument that names no file; `env` reads a variable; `sha` hashes a secret's value.
pub fn record(
    collect: &Collect,
    arms: &[String],
    version: &str,
    hash: &dyn Fn(&str) -> Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
    sha: &dyn Fn(&str) -> String,
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
        let files = argv
            .iter()
            .filter_map(|a| Some((a.clone(), hash(a)?)))
            .collect();
        Command { argv, files }
    };
    let env: BTreeMap<String, String> = collect
        .provenance_env
        .iter()
        .map(|name| {
            let value = match env(name) {
                Some(v) if secret(name) => format!("sha256:{}", sha(&v)),
                Some(v) => v,
                None => "(unset)".into(),
            };
            (name.clone(), value)
        })
        .collect();
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
                env: env.clone(),
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
    let names: std::collections::BTreeSet<&String> = b.env.keys().chain(t.env.keys()).collect();
    for name in names {
        let get = |r: &ArmRecord| {
            r.env
                .get(name)
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

    #[test]
    fn secrets_are_hashed() {
        assert!(secret("OPENAI_API_KEY") && secret("hf_token") && secret("MY_SECRET"));
        assert!(!secret("MODEL"));
    }
}
