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
    let mut log = log_of(args, &p, order.clone())?;
    // A stop between batches or during a look is kept, and ends the collection at the next
    // call boundary.
    crate::collect::runner::watch_for_stops();
    if log.stopped.is_some() {
        // Resumed after it had stopped: nothing left to run.
        let mut report = run_with(
            args,
            progress,
            Some(&order[..log.collected()]),
            Some(log.clone()),
        )?;
        report.sequential = Some(log);
        return Ok(report);
    }
    let started = Instant::now();
    // One watch of the harness for every batch: a file changed between two batches is
    // recorded once, with the calls of the whole collection before and after it.
    let watch = std::cell::RefCell::new(super::harness::Watch::new(&p.watched));
    let (batch, budget) = (log.batch, log.max_targets);
    // The first batch holds every target collected before a resume; it reads what the run
    // records against the whole plan, as any resume does.
    let first = (log.collected() + batch).min(budget);
    let all = p.calls.clone();
    let (kind, stages) = (p.collect.kind, p.collect.stages());
    let arms = p.manifest.arms.clone();
    let mut plan = p;
    let mut open = Open::new(args, Some(log.clone()), &mut plan, Some(&order[..first]))?;
    // Each later batch collects its own targets only: the run stays open, nothing it holds is
    // read again, and the reviewers' file is put in plan order once, when it stops. A later
    // stage plans from every return the run holds, so with one each batch's plan holds every
    // target so far, and the file is put in order each time, as a whole collection's is.
    let later = stages.len() > 1;
    let files: Vec<PathBuf> = stages
        .iter()
        .map(|s| open.run_dir.join(stage_file(*s, kind)))
        .collect();
    // With a later stage each batch rewrites the stage files in plan order, so a look cannot
    // read on from where the last one stopped: it reads the whole run (as it must with
    // judges, whose trust is a figure of every item).
    let mut looks = seq::Looks::new(&args.experiment, &open.run_dir, &files, arms, later)?;
    // What the batches' calls left running (a daemon whose parent exited early) dies with
    // the collection, however it ends.
    let _sweep = (!later).then_some(SweepAtEnd);
    let mut total: Option<CollectReport> = None;
    let mut n = first;
    let mut written = Instant::now();
    let mut report = loop {
        let adds = open.adds;
        let report = open.collect(args, progress, &mut plan, &watch, !later)?;
        let (interrupted, complete) = (report.interrupted, report.complete);
        let sum = match total.take() {
            None => report,
            Some(t) => add(t, report, adds),
        };
        if interrupted || !complete {
            open.close(args, &mut plan, &sum)?;
            break sum;
        }
        let decided = match looks.look(order[..n].to_vec()) {
            Ok(d) => d,
            // The calls are paid for and recorded: the collection says it did not finish, and
            // why, so that `run` never replays it as whole.
            Err(e) => {
                let manifest = &mut plan.manifest;
                manifest.status = Status::Incomplete;
                manifest.reason = Some(format!(
                    "sequential: look {} (after {n} targets) failed: {e}",
                    log.looks.len() + 1
                ));
                manifest.sequential = Some(log.clone());
                write_manifest(&open.run_dir, manifest)?;
                return Err(e);
            }
        };
        // Every call the run's stages have recorded, ok or failed.
        let calls = plan.manifest.stages.iter().map(|s| s.recorded).sum();
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
        plan.manifest.sequential = Some(log.clone());
        if log.stopped.is_some() {
            // The reviewers' file in the order of every target collected, as a collection of
            // them all at once leaves it.
            if !later {
                let held: std::collections::HashSet<&str> =
                    order[..n].iter().map(String::as_str).collect();
                let calls = all.iter().filter(|c| held.contains(c.target.name.as_str()));
                sort_reviewers(kind, calls, &open.run_dir)?;
            }
            open.close(args, &mut plan, &sum)?;
            break sum;
        }
        // collect.json is rewritten whole (every target of the plan): after a look at most
        // once a second, and always when the collection stops. A collection killed between
        // two writes resumes from the last look written, and its calls since are recorded
        // and skipped, so it makes the same looks again, without a call.
        if written.elapsed() >= std::time::Duration::from_secs(1) {
            write_manifest(&open.run_dir, &plan.manifest)?;
            written = Instant::now();
        }
        total = Some(sum);
        // The next batch: its own targets, or (with a later stage) every target so far.
        open.next_batch(&plan, !later);
        let next = (n + batch).min(budget);
        plan.select(
            &all,
            if later {
                &order[..next]
            } else {
                &order[n..next]
            },
        );
        n = next;
    };
    drop(open);
    report.seconds = started.elapsed().as_secs_f64();
    report.sequential = Some(log);
    Ok(report)
}

/// The sequential record the collection of `args` goes on with: a resumed one's (its budget
/// and batch kept unless given again), checked to be of the same `order`; else a new one.
fn log_of(args: &CollectArgs, p: &Prepared, order: Vec<String>) -> Result<Sequential, Error> {
    let all = order.len();
    // A resume keeps the budget and batch it was collected with, unless given again.
    let given_budget = args.max_targets.map(|m| (m as usize).min(all));
    let given_batch = args.batch.map(|b| (b as usize).max(1));
    let budget = given_budget.unwrap_or(all);
    let batch = given_batch.unwrap_or(p.collect.limits.concurrency.max(1));
    Ok(match &args.resume {
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
            order,
            batch,
            max_targets: budget,
            looks: Vec::new(),
            stopped: None,
        },
    })
}

/// Ends, when dropped, every process the collection's calls left running.
struct SweepAtEnd;

impl Drop for SweepAtEnd {
    fn drop(&mut self) {
        use crate::collect::runner::descendants;
        descendants::kill_tagged(&descendants::prefix(), None);
    }
}

/// Two collections of one run, one after the other, as one report: counts added, the later
/// one's state. With `adds`, the later one's plan was more calls of the same stages, and the
/// planned calls add up too.
fn add(mut a: CollectReport, b: CollectReport, adds: bool) -> CollectReport {
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
        x.planned = match (batch_adds(adds, x.stage), x.planned, y.planned) {
            (true, Some(a), Some(b)) => Some(a + b),
            _ => y.planned,
        };
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
