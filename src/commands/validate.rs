//! `calibench validate CORPUS_OR_EXPERIMENT`: every problem in the inputs, with file and line.
//!
//! Given an experiment (or a folder holding `experiment.toml`), findings are also checked
//! against each arm's confidence scale, as `run` would; given a bare corpus folder, only the
//! records are checked, since the scale is the experiment's to declare.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::read_file;
use crate::cli::ValidateArgs;
use crate::config;
use crate::corpus::{queries, reviews, verdicts};
use crate::error::{Error, InputError};
use crate::exit::Verdict;
use crate::output::Render;

#[derive(Clone, Debug, Serialize)]
pub struct Validation {
    pub checked: Vec<String>,
    pub problems: Vec<Problem>,
    /// What could not be checked, and why.
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    pub file: String,
    pub line: Option<u64>,
    pub field: Option<String>,
    pub problem: String,
    /// `refused` stops a run; `malformed` findings are dropped and counted (refused under --strict).
    pub kind: &'static str,
}

impl Problem {
    fn from(e: &InputError, kind: &'static str) -> Self {
        Problem {
            file: e.file.clone(),
            line: e.line,
            field: e.field.clone(),
            problem: e.problem.clone(),
            kind,
        }
    }
}

impl Validation {
    pub fn verdict(&self) -> Verdict {
        if self.problems.is_empty() {
            Verdict::Pass
        } else {
            Verdict::BadInput
        }
    }
}

pub fn run(args: &ValidateArgs) -> Result<Validation, Error> {
    let path = &args.corpus_or_experiment;
    let experiment_path: Option<PathBuf> = if path.is_dir() {
        Some(path.join("experiment.toml")).filter(|p| p.is_file())
    } else if path.is_file() {
        Some(path.clone())
    } else {
        return Err(Error::read(
            path,
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    };
    let mut v = Validation {
        checked: Vec::new(),
        problems: Vec::new(),
        notes: Vec::new(),
    };
    let (corpus_dir, experiment) = match &experiment_path {
        Some(p) => {
            v.checked.push(p.display().to_string());
            let text = String::from_utf8_lossy(&read_file(p)?).into_owned();
            match config::parse(p, &text) {
                Ok(e) => (e.corpus.clone(), Some(e)),
                Err(e) => {
                    v.problems.push(Problem::from(&e, "refused"));
                    (p.parent().unwrap_or(Path::new(".")).to_path_buf(), None)
                }
            }
        }
        None => {
            v.notes.push(format!(
                "no experiment.toml in {}: findings are not checked against a confidence scale",
                path.display()
            ));
            (path.clone(), None)
        }
    };

    let reviews_path = corpus_dir.join("reviews.jsonl");
    if reviews_path.is_file() {
        let name = reviews_path.display().to_string();
        v.checked.push(name.clone());
        let (records, problems) = reviews::parse(&name, &read_file(&reviews_path)?);
        v.problems
            .extend(problems.iter().map(|e| Problem::from(e, "refused")));
        if let Some(exp) = &experiment {
            let mut seen_sources = Vec::new();
            for arm in exp.arms() {
                let scale = arm.review.scale();
                if seen_sources.contains(&(arm.source.clone(), scale)) {
                    continue; // both arms read the same findings on the same scale
                }
                seen_sources.push((arm.source.clone(), scale));
                let returns = reviews::select(&records, &arm.source, exp.mode, scale);
                if returns.is_empty() {
                    v.notes.push(format!(
                        "arm `{}` reads recorded arm `{}`, which {name} does not contain",
                        arm.name, arm.source
                    ));
                }
                for r in &returns {
                    for m in &r.malformed {
                        let mut p = Problem::from(&m.to_error(&name), "malformed");
                        p.problem = format!("{} (arm `{}`)", p.problem, arm.name);
                        v.problems.push(p);
                    }
                }
            }
        }
    }
    let queries_path = corpus_dir.join("queries.jsonl");
    if queries_path.is_file() {
        let name = queries_path.display().to_string();
        v.checked.push(name.clone());
        let (all, problems) = queries::parse(&name, &read_file(&queries_path)?);
        v.problems
            .extend(problems.iter().map(|e| Problem::from(e, "refused")));
        if let Some(exp) = &experiment {
            for arm in exp.arms() {
                if let Err(e) = queries::select(&name, &all, &arm.name, &arm.source) {
                    v.problems.push(Problem::from(&e, "refused"));
                }
            }
        }
    }
    let verdicts_path = corpus_dir.join("verdicts.jsonl");
    if verdicts_path.is_file() {
        let name = verdicts_path.display().to_string();
        v.checked.push(name.clone());
        let (items, problems) = verdicts::parse(&name, &read_file(&verdicts_path)?);
        v.problems
            .extend(problems.iter().map(|e| Problem::from(e, "refused")));
        if problems.is_empty() {
            // What `run` would refuse: nothing to trust, or no verdict under either arm.
            let judged = match &experiment {
                Some(exp) => crate::analysis::judged_items(exp, &name, &items),
                None => Ok(items),
            };
            let refusal = match judged {
                Ok(judged) if judged.is_empty() => {
                    Some(InputError::new(&name, crate::trust::NO_EVIDENCE))
                }
                Ok(_) => None,
                Err(e) => Some(e),
            };
            v.problems
                .extend(refusal.iter().map(|e| Problem::from(e, "refused")));
        }
    }
    if v.checked.iter().all(|c| c.ends_with("experiment.toml")) {
        v.problems.push(Problem {
            file: corpus_dir.display().to_string(),
            line: None,
            field: None,
            problem: "holds no reviews.jsonl, queries.jsonl or verdicts.jsonl".into(),
            kind: "refused",
        });
    }
    Ok(v)
}

impl Render for Validation {
    fn human(&self) -> String {
        let mut s = String::new();
        for p in &self.problems {
            let mut e = InputError::new(&p.file, &p.problem);
            e.line = p.line;
            e.field = p.field.clone();
            s += &format!("{e}\n");
        }
        for n in &self.notes {
            s += &format!("note: {n}\n");
        }
        let refused = self.problems.iter().filter(|p| p.kind == "refused").count();
        let malformed = self.problems.len() - refused;
        if self.problems.is_empty() {
            s += &format!("no problems in {}\n", self.checked.join(", "));
        } else {
            s += &format!(
                "{} problems: {refused} that refuse a run, {malformed} malformed findings that a run drops and counts\n",
                self.problems.len()
            );
        }
        s
    }
}
