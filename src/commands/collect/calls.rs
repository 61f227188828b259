//! The stages' calls: the validators' and judges' planned from what the reviewers returned,
//! each stage run, and its lines written as they finish.

use super::*;

/// What a stage's calls share.
pub(super) struct StageContext<'a> {
    pub(super) args: &'a CollectArgs,
    pub(super) p: &'a Prepared,
    pub(super) run_dir: &'a Path,
    pub(super) run_dir_abs: &'a Path,
    pub(super) run_id: &'a str,
    pub(super) progress: bool,
    pub(super) watch: &'a std::cell::RefCell<super::harness::Watch>,
    /// A batch of a sequential collection whose later batches add to its reviewer stage: its
    /// reviewers' file is put in plan order, and what its calls left running is looked for and
    /// ended, once, when the collection stops, not after each batch.
    pub(super) batch: bool,
}

/// One stage, planned: its calls in plan order with their keys, and how they are run.
pub(super) struct Planned {
    pub(super) stage: Stage,
    pub(super) kind: Kind,
    pub(super) file: PathBuf,
    pub(super) program: PathBuf,
    pub(super) limits: Limits,
    pub(super) jobs: Vec<Job>,
    pub(super) keys: Vec<Key>,
    /// What each call is about, for the summary's failures and `--dry-run`.
    pub(super) about: Vec<String>,
    pub(super) protocol: Arc<dyn Protocol>,
}

impl StageContext<'_> {
    /// The reviewers (or agent) stage, over the calls `place` found unrecorded.
    pub(super) fn reviewers(&self, recorded: &HashSet<Key>) -> Result<StageReport, Error> {
        let p = self.p;
        let file = self.run_dir.join(p.collect.kind.file().name());
        let stdin: HashMap<&str, Arc<Vec<u8>>> = p
            .stdin
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let jobs = p
            .calls
            .iter()
            .map(|c| Job {
                argv: c.argv.clone(),
                stdin: stdin
                    .get(c.target.name.as_str())
                    .cloned()
                    .unwrap_or_default(),
                artifact: Some(c.artifact.clone()),
            })
            .collect();
        let planned = Planned {
            stage: Stage::Reviewers,
            kind: p.collect.kind,
            file,
            program: p.program.clone(),
            limits: p.collect.limits,
            jobs,
            keys: p.calls.iter().map(|c| c.call(p.collect.kind)).collect(),
            about: p
                .calls
                .iter()
                .map(|c| {
                    format!(
                        "{} · {} · {} · run {}",
                        c.arm, c.target.name, c.reviewer, c.run
                    )
                })
                .collect(),
            protocol: Arc::new(Returns {
                kind: p.collect.kind,
                calls: p.calls.clone(),
                expect: arm_expectations(&p.exp, &p.collect),
            }),
        };
        self.execute(planned, recorded)
    }

    /// The validators or the judges, planned from the reviewer returns the run holds.
    pub(super) fn later(&self, stage: Stage) -> Result<StageReport, Error> {
        let p = self.p;
        let reviews_path = self.run_dir.join(Kind::Reviews.file().name());
        let file = self.run_dir.join(stage_file(stage, p.collect.kind));
        if self.args.dry_run && !reviews_path.is_file() {
            // Nothing collected yet: the stage is planned from the returns once they are.
            let mut r = StageReport::new(stage, file);
            r.status = StageStatus::Planned;
            return Ok(r);
        }
        let bytes = read_file(&reviews_path)?;
        let name = reviews_path.display().to_string();
        let (records, problems) = reviews::parse(&name, &bytes);
        problems.refuse()?;
        let mut index = reviews::Index::default();
        records.iter().for_each(|r| index.add(r));
        let loaded = load::targets_and_sources(self.run_dir, &index)?;
        loaded.refusals.refuse()?;
        let targets = loaded.corpus.targets.map(|(_, t)| t).unwrap_or_default();
        let paths: HashMap<String, PathBuf> = p
            .targets
            .iter()
            .map(|t| (t.name.clone(), t.path.clone()))
            .collect();
        let collected = Collected {
            mode: p.exp.mode,
            arms: p.exp.arms(),
            records: &records,
            targets: &targets,
            sources: loaded.corpus.sources.as_ref(),
            paths: &paths,
        };
        let subjects = stages::subjects(&collected);
        // The judges' plan, kept to gather their calls into verdicts once all are recorded.
        let mut panel: Option<Arc<Verdicts>> = None;
        // Each stage's calls: the job, its key, and what it is about.
        let (mut jobs, mut keys, mut about) = (Vec::new(), Vec::new(), Vec::new());
        let (own, protocol): (&plan::Overrides, Arc<dyn Protocol>) = match stage {
            Stage::Validators => {
                let v = p.collect.validators.as_ref().expect("declared stage");
                let selected: Vec<_> = subjects.iter().filter(|s| s.selected).cloned().collect();
                for s in &selected {
                    jobs.push(Job {
                        argv: substitute(&v.command, |ph| match ph {
                            "{finding_id}" => Some(s.id.clone()),
                            "{arm}" => Some(s.arm.clone()),
                            "{target}" => Some(s.target.clone()),
                            "{target_path}" => Some(path_of(&paths, &s.target)),
                            "{run}" => Some(s.run.to_string()),
                            _ => None,
                        }),
                        stdin: Arc::new(json_line(&s.object)),
                        artifact: None,
                    });
                    keys.push(Key::Validation {
                        arm: s.arm.as_str().into(),
                        target: s.target.as_str().into(),
                        run: s.run,
                        finding: s.id.as_str().into(),
                    });
                    about.push(format!("{} · {}", s.arm, s.id));
                }
                (&v.limits, Arc::new(Validations { subjects: selected }))
            }
            // The judges (the reviewers' stage never comes here).
            _ => {
                let j = p.collect.judges.as_ref().expect("declared stage");
                let verdicts = Arc::new(Verdicts {
                    items: stages::judge_items(&collected, &subjects, j),
                    judges: j.judges.clone(),
                    dimensions: j.dimensions.clone(),
                });
                for item in &verdicts.items {
                    let stdin = Arc::new(json_line(&item.object));
                    for judge in &j.judges {
                        jobs.push(Job {
                            argv: substitute(&j.command, |ph| match ph {
                                "{judge}" => Some(judge.clone()),
                                "{item_id}" => Some(item.item_id.clone()),
                                "{arm}" => Some(item.arm.clone()),
                                "{target}" => Some(item.target.clone()),
                                "{target_path}" => Some(path_of(&paths, &item.target)),
                                _ => None,
                            }),
                            stdin: stdin.clone(),
                            artifact: None,
                        });
                        keys.push(Key::Judge {
                            arm: item.arm.as_str().into(),
                            item_id: item.item_id.as_str().into(),
                            judge: judge.as_str().into(),
                        });
                        about.push(format!("{} · {} · {judge}", item.arm, item.item_id));
                    }
                }
                panel = Some(verdicts.clone());
                (&j.limits, verdicts)
            }
        };
        let planned = Planned {
            stage,
            kind: Kind::Reviews,
            file,
            program: p.stage_programs[&stage].clone(),
            limits: p.collect.limits_with(own),
            jobs,
            keys,
            about,
            protocol,
        };
        let recorded = read_keys(&planned)?;
        let report = self.execute(planned, &recorded)?;
        if let Some(verdicts) = panel.filter(|_| report.status == StageStatus::Complete) {
            self.write_verdicts(&report.file, &verdicts)?;
        }
        Ok(report)
    }

    /// `verdicts.jsonl` from the judge calls' lines, once all are recorded.
    fn write_verdicts(&self, calls_file: &Path, verdicts: &Verdicts) -> Result<(), Error> {
        let text = String::from_utf8_lossy(&read_file(calls_file)?).into_owned();
        let mut calls = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(o)) => calls.push(o),
                _ => {
                    return Err(InputError::new(
                        calls_file.display().to_string(),
                        "holds a line that is not a JSON object",
                    )
                    .into())
                }
            }
        }
        let path = self
            .run_dir
            .join(crate::corpus::files::File::Verdicts.name());
        let lines = stages::verdict_lines(verdicts, &calls);
        if lines.is_empty() {
            // Nothing was judged: no file, rather than one `run` would refuse as no evidence.
            return Ok(());
        }
        let mut out = String::new();
        for line in lines {
            out.push_str(&serde_json::to_string(&line).map_err(|e| {
                Error::Write(std::io::Error::other(format!("verdicts.jsonl: {e}")))
            })?);
            out.push('\n');
        }
        rundir::replace_file(&path, &out)
    }

    /// Runs what `planned` holds that `recorded` does not, appending each line as its call
    /// ends; when every call is recorded, rewrites the file in plan order.
    fn execute(&self, planned: Planned, recorded: &HashSet<Key>) -> Result<StageReport, Error> {
        let started = Instant::now();
        let mut report = StageReport::new(planned.stage, planned.file.clone());
        report.planned = Some(planned.jobs.len());
        report.already_recorded = planned
            .keys
            .iter()
            .filter(|k| recorded.contains(*k))
            .count();
        if self.args.dry_run {
            report.status = StageStatus::Planned;
            report.calls = Some(
                planned
                    .jobs
                    .iter()
                    .zip(&planned.keys)
                    .zip(&planned.about)
                    .map(|((job, key), about)| DryCall {
                        about: about.clone(),
                        argv: job.argv.clone(),
                        artifact: job.artifact.as_ref().map(|a| self.run_dir.join(a)),
                        recorded: recorded.contains(key),
                    })
                    .collect(),
            );
            return Ok(report);
        }
        let pending: Vec<(usize, Job)> = planned
            .jobs
            .iter()
            .enumerate()
            .filter(|(i, _)| !recorded.contains(&planned.keys[*i]))
            .map(|(i, j)| (i, j.clone()))
            .collect();
        let ctx = Context {
            program: planned.program.clone(),
            cwd: self.p.exp_dir.clone(),
            run_dir: self.run_dir_abs.to_path_buf(),
            run_id: self.run_id.to_string(),
            stage: planned.stage.name(),
            limits: planned.limits,
            protocol: planned.protocol.clone(),
            sweep: !self.batch,
        };
        let file = &planned.file;
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .map_err(|e| Error::write(file, e))?;
        let mut writer = Writer {
            out,
            about: &planned.about,
            bar: (self.progress && !pending.is_empty())
                .then(|| progress_bar(planned.stage, pending.len())),
            report: &mut report,
            watch: self.watch,
        };
        let ended = runner::run(ctx, pending, &mut writer);
        let Writer { out, bar, .. } = writer;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        let ended = ended.map_err(|e| Error::write(file, e))?;
        out.sync_all().map_err(|e| Error::write(file, e))?;
        drop(out);
        report.abandoned = ended.abandoned;
        report.not_started = ended.not_started;
        let done = report.already_recorded + report.ok + report.failed == planned.jobs.len();
        report.status = if done {
            if !self.batch || planned.stage != Stage::Reviewers {
                in_plan_order(file, &planned)?;
            }
            StageStatus::Complete
        } else {
            StageStatus::Interrupted
        };
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }
}

impl StageReport {
    pub(super) fn new(stage: Stage, file: PathBuf) -> StageReport {
        StageReport {
            stage,
            file,
            status: StageStatus::Waiting,
            planned: None,
            already_recorded: 0,
            ok: 0,
            failed: 0,
            failures: BTreeMap::new(),
            failed_examples: Vec::new(),
            abandoned: 0,
            not_started: 0,
            seconds: 0.0,
            calls: None,
            changed: Vec::new(),
        }
    }
}

/// The file a stage appends its lines to.
pub(super) fn stage_file(stage: Stage, kind: Kind) -> &'static str {
    stage.file(kind).name()
}

/// What a stage runs, recorded in `collect.json` so that a resume runs the same.
pub(super) fn stage_plan_value(collect: &Collect, stage: Stage) -> Value {
    match stage {
        Stage::Reviewers => serde_json::json!({"command": collect.command}),
        Stage::Validators => serde_json::json!({
            "command": collect.validators.as_ref().map(|v| &v.command),
        }),
        Stage::Judges => serde_json::json!({
            "command": collect.judges.as_ref().map(|j| &j.command),
            "judges": collect.judges.as_ref().map(|j| &j.judges),
            "items": collect.judges.as_ref().map(|j| j.items),
            "dimensions": collect.judges.as_ref().map(|j| &j.dimensions),
        }),
    }
}

/// An argv with each placeholder replaced, as a whole argument.
pub(super) fn substitute(
    command: &[String],
    value: impl Fn(&str) -> Option<String>,
) -> Vec<String> {
    command
        .iter()
        .map(|a| value(a).unwrap_or_else(|| a.clone()))
        .collect()
}

pub(super) fn path_of(paths: &HashMap<String, PathBuf>, target: &str) -> String {
    paths
        .get(target)
        .map_or_else(String::new, |p| p.display().to_string())
}

/// One JSON object and a newline: a call's stdin.
pub(super) fn json_line(object: &Map<String, Value>) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(object).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// The bar drawn on stderr while a stage's calls run: done/total, failures, elapsed and ETA.
pub(super) fn progress_bar(stage: Stage, calls: usize) -> ProgressBar {
    let bar = output::progress_bar(
        calls,
        &format!(
            "{{spinner}} {} [{{bar:30}}] {{pos}}/{{len}} calls, {{msg}} ({{elapsed}}, ETA {{eta}})",
            stage.name()
        ),
    );
    bar.set_message("0 failed");
    bar
}

/// The single writer: appends each finished call's line whole, then counts it.
pub(super) struct Writer<'a> {
    pub(super) out: std::fs::File,
    pub(super) about: &'a [String],
    pub(super) bar: Option<ProgressBar>,
    pub(super) report: &'a mut StageReport,
    pub(super) watch: &'a std::cell::RefCell<super::harness::Watch>,
}

impl Sink for Writer<'_> {
    fn record(&mut self, finished: Finished) -> std::io::Result<()> {
        let mut line = serde_json::to_string(&finished.line).map_err(std::io::Error::other)?;
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        match finished.failure {
            None => self.report.ok += 1,
            Some(kind) => {
                self.report.failed += 1;
                *self.report.failures.entry(kind).or_default() += 1;
                if self.report.failed_examples.len() < 5 {
                    let reason = finished
                        .line
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    self.report
                        .failed_examples
                        .push(format!("{}: {reason}", self.about[finished.index]));
                }
            }
        }
        self.watch
            .borrow_mut()
            .poll(self.report.ok + self.report.failed);
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{} failed", self.report.failed));
            bar.inc(1);
        }
        Ok(())
    }

    fn interrupted(&mut self, level: u8, running: usize) {
        let message = if level == 1 {
            format!(
                "stopping: no new calls; waiting for {} to finish or time out (interrupt again to kill them)",
                crate::text::count(running as u64, "running call", "running calls")
            )
        } else {
            format!(
                "killing {}; they are not recorded",
                crate::text::count(running as u64, "running call", "running calls")
            )
        };
        match &self.bar {
            Some(bar) => bar.println(message),
            None => eprintln!("{message}"),
        }
    }
}
