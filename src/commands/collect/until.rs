//! `collect --until-decided` (docs/guides/stop-when-you-know.md): the targets in a seeded
//! random order, a batch at a time (every stage of a batch before the next look), the
//! sequential decision read after each batch from what the run holds, and no more launched once
//! it is better or worse or the budget is spent. collect.json records the order, each look and
//! why it stopped; a resume continues from the last look, and `run --sequential` of the
//! finished collection reproduces the decision it stopped on.

use super::*;

use crate::pipeline::sequential as seq;

pub(super) fn run(args: &CollectArgs, progress: bool) -> Result<CollectReport, Error> {
    let p = prepare(args)?;
    let file = p.exp_path.display().to_string();
    // What the sequences decide on is checked before anything is collected.
    seq::qualify(&p.exp, &file)?;
    let names: std::collections::BTreeSet<String> =
        p.targets.iter().map(|t| t.name.clone()).collect();
    let order = seq::permutation(&names, p.exp.seed);
    let all = order.len();
    // A resume keeps the budget and batch it was collected with, unless given again.
    let given_budget = args.max_targets.map(|m| (m as usize).min(all));
    let given_batch = args.batch.map(|b| (b as usize).max(1));
    let budget = given_budget.unwrap_or(all);
    let batch = given_batch.unwrap_or(p.collect.limits.concurrency.max(1));
    let mut log = match &args.resume {
        Some(id) => {
            let was = read_manifest(&args.runs_dir.join(id))?;
            let manifest = args.runs_dir.join(id).join(FILE).display().to_string();
            match was.sequential {
                Some(log) if log.order == order => {
                    let max_targets = given_budget.unwrap_or(log.max_targets);
                    // A larger budget goes on from where the smaller one stopped.
                    let collected = log.collected();
                    let stopped = log
                        .stopped
                        .clone()
                        .filter(|s| s != "budget" || max_targets <= collected);
                    Sequential {
                        batch: given_batch.unwrap_or(log.batch),
                        max_targets,
                        stopped,
                        ..log
                    }
                }
                Some(_) => {
                    return Err(InputError::new(
                        manifest,
                        "was collected in another order of targets (another seed or other targets)",
                    )
                    .field("`sequential.order`")
                    .hint("resume with the experiment as it was, or start a new collection")
                    .into())
                }
                None => {
                    return Err(InputError::new(
                        manifest,
                        "is not a sequential collection (it has no `sequential` record)",
                    )
                    .field("`--until-decided`")
                    .hint("resume it without --until-decided, or start a new collection with it")
                    .into())
                }
            }
        }
        None => Sequential {
            order: order.clone(),
            batch,
            max_targets: budget,
            looks: Vec::new(),
            stopped: None,
        },
    };
    // A stop between batches or during a look is kept, and ends the collection at the next
    // call boundary.
    crate::collect::runner::watch_for_stops();
    // One watch of the harness for every batch: a file changed between two batches is
    // recorded once, with the calls of the whole collection before and after it.
    let watch = std::cell::RefCell::new(super::harness::Watch::new(&p.watched));
    let mut total: Option<CollectReport> = None;
    let mut args = args.clone();
    let (batch, budget) = (log.batch, log.max_targets);
    while log.stopped.is_none() {
        let n = (log.collected() + batch).min(budget);
        // Prepared once: each batch collects from a copy of the plan, not from the experiment
        // and every target read and hashed again (that made each look cost as much as the
        // whole plan).
        let report = run_prepared(
            &args,
            progress,
            Some(&order[..n]),
            Some(log.clone()),
            p.clone(),
            Some(&watch),
        )?;
        args.resume = Some(report.run_id.clone());
        args.run_id = None;
        let run_dir = report.run_dir.clone();
        let (interrupted, complete) = (report.interrupted, report.complete);
        total = Some(match total {
            None => report,
            Some(t) => add(t, report),
        });
        if interrupted || !complete {
            break;
        }
        let decided = match seq::replay(&args.experiment, &run_dir, order[..n].to_vec()) {
            Ok(d) => d,
            // The calls are paid for and recorded: the collection says it did not finish, and
            // why, so that `run` never replays it as whole.
            Err(e) => {
                let mut manifest = read_manifest(&run_dir)?;
                manifest.status = Status::Incomplete;
                manifest.reason = Some(format!(
                    "sequential: look {} (after {n} targets) failed: {e}",
                    log.looks.len() + 1
                ));
                manifest.sequential = Some(log.clone());
                write_manifest(&run_dir, &manifest)?;
                return Err(e);
            }
        };
        // Every call the run's stages have recorded, ok or failed.
        let mut manifest = read_manifest(&run_dir)?;
        let calls = manifest.stages.iter().map(|s| s.recorded).sum();
        log.looks.push(Look {
            targets: n,
            calls,
            verdict: decided.verdict.name().to_string(),
        });
        // Only a decision stops it: an undecided look, or one whose judged figures are withheld
        // (the judges may agree once more items are in), goes on.
        if matches!(
            decided.verdict,
            crate::sequential::Verdict::Better | crate::sequential::Verdict::Worse
        ) {
            log.stopped = Some(decided.verdict.name().to_string());
        } else if n >= budget {
            log.stopped = Some("budget".into());
        }
        manifest.sequential = Some(log.clone());
        write_manifest(&run_dir, &manifest)?;
    }
    let mut report = match total {
        Some(t) => t,
        // Resumed after it had stopped: nothing left to run.
        None => run_with(
            &args,
            progress,
            Some(&order[..log.collected()]),
            Some(log.clone()),
        )?,
    };
    report.sequential = Some(log);
    Ok(report)
}

/// Two collections of one run, one after the other, as one report: counts added, the later
/// one's state.
fn add(mut a: CollectReport, b: CollectReport) -> CollectReport {
    for (x, y) in a.stages.iter_mut().zip(&b.stages) {
        x.ok += y.ok;
        x.failed += y.failed;
        for (k, v) in &y.failures {
            *x.failures.entry(*k).or_default() += v;
        }
        for e in &y.failed_examples {
            if x.failed_examples.len() < 5 {
                x.failed_examples.push(e.clone());
            }
        }
        x.seconds += y.seconds;
        x.status = y.status;
        x.planned = y.planned;
        x.abandoned = y.abandoned;
        x.not_started = y.not_started;
    }
    a.interrupted = b.interrupted;
    a.complete = b.complete;
    a.resume_command = b.resume_command;
    a.replay_command = b.replay_command;
    a
}

/// "stopped after 34 of 120 targets (better): 408 calls instead of about 1,440 for all 120".
pub(super) fn summary(log: &Sequential) -> String {
    let all = log.order.len();
    let (n, calls) = log.looks.last().map_or((0, 0), |l| (l.targets, l.calls));
    let why = match log.stopped.as_deref() {
        Some("budget") => format!(
            "undecided at its budget of {}",
            crate::text::count(log.max_targets as u64, "target", "targets")
        ),
        Some(v) => format!("decided: {v}"),
        None => "not decided yet".into(),
    };
    // The later stages' calls grow with the targets as the reviewers' do: the calls made per
    // target so far, over every target.
    let instead = if n > 0 && n < all {
        let whole = (calls as f64 / n as f64 * all as f64).round() as usize;
        format!(
            " instead of about {} for all {all}",
            crate::text::thousands(whole as u64)
        )
    } else {
        String::new()
    };
    format!(
        "{} after {n} of {all} targets ({why}): {}{instead}; {}",
        if log.stopped.is_some() {
            "stopped"
        } else {
            "paused"
        },
        if calls == 1 {
            "1 call".to_string()
        } else {
            format!("{} calls", crate::text::thousands(calls as u64))
        },
        crate::text::count(log.looks.len() as u64, "look", "looks")
    )
}
