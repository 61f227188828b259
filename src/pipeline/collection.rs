//! A corpus folder that is a collection (it holds `collect.json`): read through the record's
//! type, and replayed only once every call is recorded, unless the user asks to replay it as it
//! is.

use std::path::Path;

use super::loaded::Loaded;
use super::read::read;
use crate::corpus::collection::{Collection, Status};
use crate::error::{Error, InputError};

/// A collect run directory replays only once every call is recorded: an interrupted one holds
/// partial arms, which would replay as if they were whole. A record that does not read is
/// refused naming its field: its harness record would otherwise go unchecked.
pub(super) fn check_collection(loaded: &mut Loaded, path: &Path, allow: bool) -> Result<(), Error> {
    let name = path.display().to_string();
    let bytes = read(path, &mut loaded.inputs)?;
    let record = match Collection::read(&name, &bytes) {
        Ok(r) => r,
        Err(e) => {
            loaded.refusals.push(e);
            return Ok(());
        }
    };
    loaded.collection = Some((name.clone(), record.clone()));
    let status = record.status;
    if status == Status::Complete {
        return Ok(());
    }
    let why = record
        .reason
        .as_deref()
        .map_or_else(String::new, |r| format!(": {}", crate::text::inline(r)));
    let note = format!(
        "{name} says the collection did not finish (status `{}`{why}): some calls are not recorded, so arms may be partial",
        status.name()
    );
    if allow {
        loaded.incomplete = Some(note);
        loaded.collecting = record.arms;
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let runs_dir = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let resume = record.resume_command(runs_dir);
    loaded.refusals.push(
        InputError::new(
            &name,
            format!(
                "is an unfinished collection (status `{}`{why}): replaying it would replay partial arms as if they were whole",
                status.name()
            ),
        )
        .field("`status`")
        .hint(format!(
            "finish it first: {resume}; or replay it as it is with --allow-partial, and every decision line says it is partial"
        )),
    );
    Ok(())
}

/// A collection is whole only with every target of its plan (a sequential collection's, as far
/// as it went): one shard of several, or a collection whose lines were deleted, holds fewer.
/// Refused naming what is missing, unless `--allow-partial`: then a caveat on every decision
/// line, as for a collection that did not finish.
pub(super) fn check_plan(
    loaded: &Loaded,
    exp: &crate::config::Experiment,
    ledger: &mut crate::corpus::ledger::Inputs,
    refusals: &mut crate::error::Problems,
    at: &mut Vec<InputError>,
) {
    use crate::corpus::ledger::Caveat;
    let Some((name, record)) = &loaded.collection else {
        return;
    };
    let partial =
        |what: String, ledger: &mut crate::corpus::ledger::Inputs, at: &mut Vec<InputError>| {
            super::tally::caveat(ledger, at, Caveat::Partial { what }, name, 1, "targets");
        };
    if record.status != Status::Complete {
        // Refused by `check_collection` unless allowed; allowed, it is said on every line.
        if loaded.allow_partial {
            partial(
                format!(
                    "{} says the collection did not finish (status `{}`{})",
                    super::tally::file_key(name),
                    record.status.name(),
                    record
                        .reason
                        .as_deref()
                        .map_or_else(String::new, |r| format!(": {}", crate::text::inline(r)))
                ),
                ledger,
                at,
            );
        }
        return;
    }
    let plan = record.plan_targets();
    let field = if record.sequential.is_some() {
        "field `sequential.order`"
    } else {
        "field `targets`"
    };
    let mut checked: Vec<&str> = Vec::new();
    for arm in exp.arms() {
        if !record.arms.contains(&arm.source) || checked.contains(&arm.source.as_str()) {
            continue;
        }
        checked.push(&arm.source);
        let held = held_targets(loaded, &arm.source);
        let missing: Vec<&str> = plan.iter().copied().filter(|t| !held.contains(t)).collect();
        let Some(first) = missing.first() else {
            continue;
        };
        let of = format!(
            "{} of {} targets of the plan",
            plan.len() - missing.len(),
            plan.len()
        );
        let (what, hint) = match &record.shard {
            Some(s) => (
                format!("shard {}/{}: {of}", s.k, s.n),
                "merge the shards (calibench merge OUT SHARD...), or replay it with --allow-partial".to_string(),
            ),
            None => (
                format!(
                    "arm label `{}` holds {of} (first missing: `{}`)",
                    crate::text::inline(&arm.source),
                    crate::text::inline(first)
                ),
                "its lines were deleted, or it is part of a collection: collect it again, or replay it with --allow-partial".to_string(),
            ),
        };
        if loaded.allow_partial {
            partial(what, ledger, at);
        } else {
            refusals.push(
                InputError::new(name, format!("{what}: replaying it would replay part of the plan as if it were the whole"))
                    .field(field)
                    .hint(hint),
            );
        }
        // One shard is one cause, whichever arm finds it first.
        if record.shard.is_some() {
            return;
        }
    }
}

/// The targets (queries) an arm label has lines on, failed calls included.
fn held_targets<'a>(loaded: &'a Loaded, label: &str) -> std::collections::HashSet<&'a str> {
    let c = &loaded.corpus;
    let mut held = std::collections::HashSet::new();
    if let Some((_, selections)) = &c.reviews {
        for s in selections.iter().filter(|s| s.source == label) {
            held.extend(s.returns.iter().map(|r| &*r.target));
        }
    }
    if let Some((_, queries)) = &c.queries {
        held.extend(
            queries
                .iter()
                .filter(|q| q.arm == label)
                .map(|q| q.query_id.as_str()),
        );
    }
    held
}

/// Each file of the harness a collection saw change while it ran: a caveat naming it and the
/// calls made before and after (its lines come from two harnesses).
pub(super) fn harness_changes(
    loaded: &Loaded,
    ledger: &mut crate::corpus::ledger::Inputs,
    at: &mut Vec<InputError>,
) {
    let Some((name, record)) = &loaded.collection else {
        return;
    };
    for stage in &record.stages {
        for c in &stage.changed {
            super::tally::caveat(
                ledger,
                at,
                crate::corpus::ledger::Caveat::Changed {
                    file: c.file.clone(),
                    stage: stage.stage.name().to_string(),
                    before: c.calls_before as u64,
                    // Every call of the stage after the change: a sequential collection's
                    // later batches were made with the changed file too.
                    after: (stage.recorded.max(c.calls_before + c.calls_after) - c.calls_before)
                        as u64,
                },
                name,
                1,
                "stages",
            );
        }
    }
}
