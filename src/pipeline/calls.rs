//! The calls a corpus records (docs/reference.md, "The input ledger", `inputs.calls`): per arm,
//! role and name, the calls planned, ok and failed by why. A failed call is an exclusion, as a
//! malformed finding is. An arm none of whose reviewer (or agent) calls succeeded, and a
//! reviewer or judge with no successful call in one arm but some in the other, are refused: the
//! arms would compare different harnesses. Any other failed call is a caveat naming how many,
//! why, the first, and an asymmetry between the arms.

use std::collections::BTreeMap;
use std::path::Path;

use super::loaded::Loaded;
use super::tally::{caveat, file_key};
use crate::config::Experiment;
use crate::corpus::call::Failure;
use crate::corpus::ledger::{CallLedger, Calls, Caveat, FailedCalls, Inputs};
use crate::error::{InputError, Problems};
use crate::policy::Arm;

/// The roles a call is made in, as `inputs.calls` names them.
pub const REVIEWER: &str = "reviewer";
pub const AGENT: &str = "agent";
pub const VALIDATOR: &str = "validator";
pub const JUDGE: &str = "judge";

/// One recorded call as the ledger counts it.
struct Seen<'a> {
    role: &'static str,
    name: &'a str,
    /// `Some(reason)` when it failed.
    failed: Option<Option<&'a str>>,
    /// A reviewer's or agent's repeat.
    run: Option<u32>,
    /// The file it is a line of, and the line.
    file: &'a str,
    line: u64,
    /// What it was about, shown as `label · target · reviewer · run 0` only for the few that
    /// are named (formatting every call's would cost a million strings on a large corpus).
    about: ([&'a str; 3], Option<u32>, &'a str),
}

impl Seen<'_> {
    fn shown(&self) -> String {
        let (parts, run, tail) = self.about;
        let mut words: Vec<String> = parts
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| crate::text::inline(p).into_owned())
            .collect();
        if let Some(r) = run {
            words.push(format!("run {r}"));
        }
        if !tail.is_empty() {
            words.push(crate::text::inline(tail).into_owned());
        }
        words.join(" · ")
    }
}

/// Every call each arm reads, by the role it was made in, in file order: streamed, not
/// collected (at a million findings a list of them was 216,000 calls of 160 bytes an arm,
/// 35 MB, grown by copying).
fn seen<'a>(
    loaded: &'a Loaded,
    exp: &'a Experiment,
    arm: &'a Arm,
) -> impl Iterator<Item = Seen<'a>> + 'a {
    let c = &loaded.corpus;
    let label = arm.source.as_str();
    let scale = arm.review.scale();
    let reviews = c.reviews.iter().flat_map(move |(file, selections)| {
        let returns = selections
            .iter()
            .find(|s| s.source == arm.source && s.scale == scale)
            .map_or(&[][..], |sel| &sel.returns[..]);
        returns.iter().map(move |r| Seen {
            role: REVIEWER,
            name: &r.reviewer,
            failed: r.failed.then_some(r.reason()),
            run: Some(r.run),
            file,
            line: r.line,
            about: ([label, &r.target, &r.reviewer], Some(r.run), ""),
        })
    });
    let queries = c.queries.iter().flat_map(move |(file, queries)| {
        queries
            .iter()
            .filter(move |q| q.arm == label)
            .map(move |q| Seen {
                role: AGENT,
                name: AGENT,
                failed: q.failed.as_ref().map(|r| r.as_deref()),
                run: Some(q.run),
                file,
                line: q.line,
                about: ([label, &q.query_id, ""], Some(q.run), ""),
            })
    });
    let validates = arm.controls.validates(arm.review.review_mode());
    let validations =
        c.validations
            .iter()
            .filter(move |_| validates)
            .flat_map(move |(file, calls)| {
                calls.iter().filter(move |v| v.arm == label).map(move |v| {
                    let failed = v.verdict == crate::corpus::validations::Verdict::Failed;
                    Seen {
                        role: VALIDATOR,
                        name: v.validator.as_deref().unwrap_or(VALIDATOR),
                        failed: failed.then_some(v.reason.as_deref()),
                        run: None,
                        file,
                        line: v.line,
                        about: ([label, &v.target, ""], Some(v.run), &v.finding),
                    }
                })
            });
    let labels = exp.item_labels(arm);
    let verdicts = c.verdicts.iter().flat_map(move |(file, items)| {
        let labels = labels.clone();
        items
            .iter()
            .filter(move |i| labels.contains(&i.arm.as_str()))
            .flat_map(move |item| {
                item.verdicts.iter().map(move |v| Seen {
                    role: JUDGE,
                    name: &v.model,
                    failed: v.scores.is_none().then_some(v.reason.as_deref()),
                    run: None,
                    file,
                    line: item.line,
                    about: ([&item.arm, &item.item_id, &v.model], None, ""),
                })
            })
    });
    reviews.chain(queries).chain(validations).chain(verdicts)
}

/// The calls a collection planned for one name of a role under `label`: its targets (a
/// sequential collection's, as far as it went) times its repeats, when the collection made
/// them; `None` when there is no plan to compare with.
fn planned(loaded: &Loaded, label: &str, role: &str, name: &str) -> Option<u64> {
    let (_, record) = loaded.collection.as_ref()?;
    if !record.arms.iter().any(|a| a == label) {
        return None;
    }
    let planned_role = match record.kind {
        crate::corpus::files::Kind::Reviews => {
            role == REVIEWER && record.reviewers.iter().any(|r| r == name)
        }
        crate::corpus::files::Kind::Queries => role == AGENT,
    };
    if !planned_role {
        return None;
    }
    Some(record.plan_targets().len() as u64 * u64::from(record.runs))
}

/// Counts every call each arm reads into `inputs.calls`, and refuses or caveats its failures.
pub(super) fn account(
    loaded: &Loaded,
    exp_path: &Path,
    exp: &Experiment,
    ledger: &mut Inputs,
    refusals: &mut Problems,
    at: &mut Vec<InputError>,
) {
    let mut firsts: BTreeMap<(String, &str), Vec<Seen>> = BTreeMap::new();
    let mut calls = CallLedger::new();
    let mut repeats: Vec<(usize, Option<(&str, u64)>)> = Vec::new();
    for arm in exp.arms() {
        let arm_calls = calls.entry(arm.name.clone()).or_default();
        let mut runs = std::collections::BTreeSet::new();
        let mut first_run = None;
        // Counted by the names as the corpus holds them, then filed under copies of them once:
        // a million-finding corpus has 432,000 calls, and each copied both names before.
        type ByName<'a> =
            std::collections::HashMap<(&'static str, &'a str), Calls, foldhash::fast::RandomState>;
        let mut by_name = ByName::default();
        for s in seen(loaded, exp, arm) {
            if let Some(run) = s.run {
                runs.insert(run);
                first_run.get_or_insert((s.file, s.line));
            }
            let c: &mut Calls = by_name.entry((s.role, s.name)).or_default();
            match s.failed {
                None => c.ok += 1,
                Some(reason) => {
                    let f = c
                        .failed
                        .entry(Failure::of_reason(reason).key().to_string())
                        .or_insert_with(|| FailedCalls {
                            count: 0,
                            first: format!("{} ({}:{})", s.shown(), file_key(s.file), s.line),
                            example: reason.unwrap_or("").to_string(),
                        });
                    f.count += 1;
                    firsts
                        .entry((arm.name.clone(), s.role))
                        .or_default()
                        .push(s);
                }
            }
        }
        repeats.push((runs.len(), first_run));
        for ((role, name), c) in by_name {
            arm_calls
                .entry(role.to_string())
                .or_default()
                .insert(name.to_string(), c);
        }
        for (role, names) in arm_calls.iter_mut() {
            for (name, c) in names.iter_mut() {
                let recorded = c.ok + c.failed();
                c.planned = planned(loaded, &arm.source, role, name)
                    .unwrap_or(recorded)
                    .max(recorded);
            }
        }
    }
    judge_failures(&calls, &firsts, exp, exp_path, ledger, refusals, at);
    ledger.calls = calls;
    // Repeats that differ between the arms: run-to-run agreement is measured on one side only,
    // and a per-target figure averages over different numbers of runs.
    if let [(b, Some((file, line))), (t, Some(_))] = repeats[..] {
        if b != t {
            caveat(
                ledger,
                at,
                Caveat::Repeats {
                    baseline: b as u64,
                    treatment: t as u64,
                },
                file,
                line,
                "run",
            );
        }
    }
}

/// An arm none of whose reviewer (or agent) calls succeeded, or a reviewer or judge with no
/// successful call in one arm but some in the other: the arms would compare different harnesses.
#[derive(Clone, Debug, PartialEq)]
pub struct AllFailed {
    pub arm: String,
    pub role: String,
    /// The name, for a name that failed in one arm only; `None` for a whole arm.
    pub name: Option<String>,
    pub failed: u64,
    /// Its successful calls in the other arm.
    pub other_ok: u64,
}

impl AllFailed {
    /// "every one of the 72 baseline reviewer calls failed", "judge `strict` has no successful
    /// call in the baseline (all 12 failed) but 12 in the treatment".
    pub fn sentence(&self, other: &str) -> String {
        match &self.name {
            None => format!(
                "arm `{}` has no successful {} call: all {} failed",
                self.arm, self.role, self.failed
            ),
            Some(name) => format!(
                "{} `{}` has no successful call in the {} (all {} failed) but {} in the {other}",
                self.role,
                crate::text::inline(name),
                self.arm,
                self.failed,
                self.other_ok
            ),
        }
    }
}

/// What of `calls` is refused, baseline's first.
pub fn all_failed(calls: &CallLedger, [b, t]: [&str; 2]) -> Vec<AllFailed> {
    let mut out = Vec::new();
    for (arm, other) in [(b, t), (t, b)] {
        let Some(roles) = calls.get(arm) else {
            continue;
        };
        for (role, names) in roles {
            let ok: u64 = names.values().map(|c| c.ok).sum();
            let failed: u64 = names.values().map(Calls::failed).sum();
            if (role == REVIEWER || role == AGENT) && ok == 0 && failed > 0 {
                out.push(AllFailed {
                    arm: arm.to_string(),
                    role: role.clone(),
                    name: None,
                    failed,
                    other_ok: 0,
                });
                continue;
            }
            if role != REVIEWER && role != JUDGE {
                continue;
            }
            for (name, c) in names {
                let other_ok = calls
                    .get(other)
                    .and_then(|r| r.get(role))
                    .and_then(|n| n.get(name))
                    .map_or(0, |c| c.ok);
                if c.ok == 0 && c.failed() > 0 && other_ok > 0 {
                    out.push(AllFailed {
                        arm: arm.to_string(),
                        role: role.clone(),
                        name: Some(name.clone()),
                        failed: c.failed(),
                        other_ok,
                    });
                }
            }
        }
    }
    out
}

/// The refusals and caveats the failed calls make.
fn judge_failures(
    calls: &CallLedger,
    failed: &BTreeMap<(String, &str), Vec<Seen>>,
    exp: &Experiment,
    exp_path: &Path,
    ledger: &mut Inputs,
    refusals: &mut Problems,
    at: &mut Vec<InputError>,
) {
    let [b, t] = exp.arms();
    let refused = all_failed(calls, [&b.name, &t.name]);
    for r in &refused {
        let (arm, other) = if r.arm == b.name { (b, t) } else { (t, b) };
        let Some(seen) = failed.get(&(r.arm.clone(), r.role.as_str())) else {
            continue;
        };
        let mine: Vec<&Seen> = seen
            .iter()
            .filter(|s| r.name.as_deref().is_none_or(|n| s.name == n))
            .collect();
        let Some((failure, first)) = commonest(&mine) else {
            continue;
        };
        let why = format!(
            "{} — {}",
            failure.phrase(),
            crate::text::inline(Failure::detail(first.failed.flatten().unwrap_or("")))
        );
        refusals.push(
            InputError::new(
                first.file,
                format!(
                    "{}, the commonest for {why} (first: {}): the arms would compare different harnesses",
                    r.sentence(&other.name),
                    first.shown()
                ),
            )
            .at_line(first.line)
            .field("field `status`")
            .hint(fix(first, arm, exp, exp_path)),
        );
    }
    for (arm, other) in [(b, t), (t, b)] {
        let Some(roles) = calls.get(&arm.name) else {
            continue;
        };
        for (role, names) in roles {
            if refused.iter().any(|r| r.arm == arm.name && &r.role == role) {
                continue;
            }
            let Some(seen) = failed.get(&(arm.name.clone(), role.as_str())) else {
                continue;
            };
            let seen: Vec<&Seen> = seen.iter().collect();
            let Some((failure, first)) = commonest(&seen) else {
                continue;
            };
            let other_failed: Option<u64> = calls
                .get(&other.name)
                .and_then(|r| r.get(role))
                .map(|n| n.values().map(Calls::failed).sum());
            caveat(
                ledger,
                at,
                Caveat::Failed {
                    arm: arm.name.clone(),
                    role: role.clone(),
                    failed: names.values().map(Calls::failed).sum(),
                    planned: names.values().map(|c| c.planned).sum(),
                    failure,
                    example: first.failed.flatten().unwrap_or("").to_string(),
                    first: first.shown(),
                    only: (other_failed == Some(0)).then(|| other.name.clone()),
                },
                first.file,
                first.line,
                "status",
            );
        }
    }
}

/// The commonest failure among `seen` (ties to the one seen first), and its first call.
fn commonest<'s, 'a>(seen: &[&'s Seen<'a>]) -> Option<(Failure, &'s Seen<'a>)> {
    let mut by: BTreeMap<Failure, (u64, &Seen)> = BTreeMap::new();
    for &s in seen {
        let f = Failure::of_reason(s.failed.flatten());
        let e = by.entry(f).or_insert((0, s));
        e.0 += 1;
        if s.line < e.1.line {
            e.1 = s;
        }
    }
    by.into_iter()
        .max_by(|a, b| a.1 .0.cmp(&b.1 .0).then(b.1 .1.line.cmp(&a.1 .1.line)))
        .map(|(f, (_, s))| (f, s))
}

/// What to change: the arm's `scale` when the output was off it (as for a malformed finding),
/// else the harness.
fn fix(first: &Seen, arm: &Arm, exp: &Experiment, exp_path: &Path) -> String {
    let detail = Failure::detail(first.failed.flatten().unwrap_or(""));
    for scale in ["off the float scale", "off the anchor scale"] {
        if detail.contains(scale) {
            return super::checks::likely_fix(
                &format!("confidence: {scale}"),
                detail,
                &arm.name,
                exp,
                exp_path,
            );
        }
    }
    format!(
        "every call's `reason` is in {}: correct the harness (its command, prompt or output) and collect the arm again",
        file_key(first.file)
    )
}
