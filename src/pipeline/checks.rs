//! The corpus checked against the experiment that reads it: arms most of whose findings are
//! malformed (and the likely fix), code review's files in doc mode, and primary and decision
//! metrics the corpus cannot measure.

use std::path::Path;

use super::loaded::Loaded;
use crate::config::Experiment;
use crate::corpus::files::File;
use crate::corpus::{reviews, Corpus, MalformedShare};
use crate::error::InputError;

/// Validator calls, PR metadata and source snapshots are code review's: a doc
/// experiment would read past them without a word.
pub(super) fn refuse_controls_in_doc_mode(loaded: &mut Loaded, exp_path: &Path, exp: &Experiment) {
    if exp.mode != crate::policy::Mode::Doc {
        return;
    }
    let c = &loaded.corpus;
    let names: Vec<String> = [
        c.validations.as_ref().map(|(n, _)| n.clone()),
        c.targets.as_ref().map(|(n, _)| n.clone()),
    ]
    .into_iter()
    .flatten()
    .chain(c.sources.is_some().then(|| "sources/".to_string()))
    .collect();
    for name in names {
        loaded.refusals.push(
            InputError::new(
                name,
                "is read in code mode only, but the experiment's mode is doc",
            )
            .hint(format!(
                "set mode = \"code\" in {} if this is a code review corpus, or move the file away",
                exp_path.display()
            )),
        );
    }
}

/// Arms whose findings are all malformed are refused, and arms more than half of whose findings
/// are are recorded as suspect: either is what a corpus read on the wrong scale or in
/// the wrong mode looks like, and its figures would otherwise read like a result.
pub(super) fn malformed_shares(loaded: &mut Loaded, exp_path: &Path, exp: &Experiment) {
    let Some((name, selections)) = &loaded.corpus.reviews else {
        return;
    };
    for arm in exp.arms() {
        let scale = arm.review.scale();
        let Some(sel) = selections
            .iter()
            .find(|s| s.source == arm.source && s.scale == scale)
        else {
            continue;
        };
        let valid: usize = sel.returns.iter().map(|r| r.findings.len()).sum();
        // Each reason's count and its first finding.
        let mut kinds: std::collections::BTreeMap<String, (usize, &reviews::Malformed)> =
            std::collections::BTreeMap::new();
        let mut malformed = 0;
        for (kind, n, m) in sel.returns.iter().flat_map(|r| r.malformed.kinds()) {
            malformed += n;
            let entry = kinds.entry(kind.to_string()).or_insert((0, m));
            entry.0 += n;
            if m.line < entry.1.line {
                entry.1 = m;
            }
        }
        if malformed == 0 || malformed * 2 <= valid + malformed {
            continue;
        }
        // The commonest reason; ties go to the reason seen first in the file.
        let Some((reason, (count, first))) = kinds
            .into_iter()
            .max_by(|a, b| a.1 .0.cmp(&b.1 .0).then(b.1 .1.line.cmp(&a.1 .1.line)))
        else {
            continue;
        };
        let share = MalformedShare {
            arm: arm.name.clone(),
            malformed,
            findings: valid + malformed,
            reason_count: count,
            fix: likely_fix(&reason, &first.reason, &arm.name, exp, exp_path),
            reason,
        };
        if valid > 0 {
            loaded.suspect.push(share);
            continue;
        }
        loaded.refusals.push(
            InputError::new(
                name,
                format!(
                    "arm `{}` has no valid finding: all {} of the findings it reads are malformed, {} of them for {}",
                    arm.name, share.findings, share.reason_count, share.reason
                ),
            )
            .at_line(first.line)
            .field(format!("field `findings[{}].{}`", first.index, first.field))
            .hint(share.fix),
        );
    }
}

/// What to change when most of an arm's findings are malformed for `reason` (`example`: the
/// first one's own words, with its value): the arm's `scale` when confidences are off it, a
/// division by 100 when they read as percentages, the experiment's `mode` when findings lack
/// the fields of its mode, and otherwise the findings themselves.
pub(super) fn likely_fix(
    reason: &str,
    example: &str,
    arm: &str,
    exp: &Experiment,
    exp_path: &Path,
) -> String {
    let file = exp_path.display();
    let missing = |fields: &[&str]| fields.iter().any(|f| reason == format!("{f}: is missing"));
    let (doc_only, code_only) = (
        ["section", "finding_type"],
        [
            "file",
            "line",
            "owner",
            "requires_verification",
            "pre_existing",
        ],
    );
    if reason.ends_with("off the anchor scale") {
        format!("confidences in [0, 1] are on the float scale: set scale = \"float\" in [arms.{arm}.review] of {file}, or record them as 0, 25, 50, 75 or 100")
    } else if reason.ends_with("off the float scale") {
        // The value the first one carries: an anchor, or a percentage such as 62.
        let value = example
            .split_whitespace()
            .find_map(|w| w.parse::<f64>().ok());
        match value {
            Some(x) if x > 1.0 && x <= 100.0 && ![0.0, 25.0, 50.0, 75.0, 100.0].contains(&x) => format!(
                "confidences such as {} look like percentages: divide them by 100 to record them in [0, 1] (the anchor scale takes only 0, 25, 50, 75 and 100)",
                crate::text::fmt_num(x)
            ),
            _ => format!("confidences of 0, 25, 50, 75 or 100 are on the anchor scale: set scale = \"anchor\" in [arms.{arm}.review] of {file}, or record them in [0, 1]"),
        }
    } else if exp.mode == crate::policy::Mode::Doc
        && (missing(&doc_only) || reason.starts_with("autofix_class: `advisory`"))
    {
        format!("these look like code findings (file, line, owner): set mode = \"code\" in {file}")
    } else if exp.mode == crate::policy::Mode::Code && missing(&code_only) {
        format!("these look like document findings (section, finding_type): set mode = \"doc\" in {file}")
    } else {
        format!("correct the findings: `calibench validate {file}` lists each one with its line")
    }
}

/// A refusal of the experiment's `[scores] judges`, at its line.
pub(super) fn judges_error(
    exp_path: &Path,
    exp: &Experiment,
    problem: &str,
    hint: &str,
) -> InputError {
    let e = InputError::new(exp_path.display().to_string(), problem).field("`scores.judges`");
    match exp.judges_line {
        Some(line) => e.at_line(line),
        None => e,
    }
    .hint(hint)
}

/// Why the corpus (and the experiment's mode) cannot measure the compared metric `c`: the
/// file it needs (judges for a lift, and human labels for the lift in human units), or code
/// review's precision controls in doc mode. `None` when it can.
fn unmeasurable(c: &crate::replay::Compared, corpus: &Corpus, exp: &Experiment) -> Option<String> {
    use crate::replay::DeltaTable;
    let needs = |file: File| {
        Some(format!(
            "needs {}, which the corpus does not have",
            file.name()
        ))
    };
    match c.table {
        DeltaTable::Review if corpus.reviews.is_none() => needs(File::Reviews),
        DeltaTable::Queries if corpus.queries.is_none() => needs(File::Queries),
        DeltaTable::Review if c.judged && corpus.verdicts.is_none() => needs(File::Verdicts),
        DeltaTable::Lift if corpus.verdicts.is_none() && exp.scores.judges.is_empty() => {
            Some(format!(
                "needs {} (or [scores] judges), which the corpus does not have",
                File::Verdicts.name()
            ))
        }
        DeltaTable::LiftHuman if corpus.verdicts.is_none() => needs(File::Verdicts),
        DeltaTable::LiftHuman if corpus.labels.is_none() => needs(File::Labels),
        DeltaTable::Review if c.controls && exp.mode != crate::policy::Mode::Code => Some(
            "is measured by code review's precision controls (the validation pass, skip rules, lint-ignore), but mode is doc".to_string(),
        ),
        DeltaTable::Review
            if c.controls
                && exp.arms().iter().all(|a| a.controls.is_off())
                && corpus.validations.is_none()
                && corpus.targets.is_none()
                && corpus.sources.is_none() =>
        {
            Some("is measured by code review's precision controls, which neither arm turns on and the corpus does not record (validations.jsonl, targets.jsonl, sources/)".to_string())
        }
        _ => None,
    }
}

/// A primary metric the corpus cannot measure would leave the headline and its Holm family
/// without it: refused, naming the file it needs.
pub(super) fn refuse_unmeasured_primary(loaded: &mut Loaded, exp_path: &Path, exp: &Experiment) {
    use crate::replay::compared_named;
    let corpus = &loaded.corpus;
    for name in &exp.primary {
        let Some(c) = compared_named(name) else {
            continue; // refused as the experiment was read
        };
        if let Some(why) = unmeasurable(&c, corpus, exp) {
            let mut e = InputError::new(
                exp_path.display().to_string(),
                format!("primary metric `{name}` {why}"),
            )
            .field("`primary`");
            if let Some(line) = exp.primary_line {
                e = e.at_line(line);
            }
            loaded.refusals.push(e.hint(format!(
                "name metrics this corpus measures in {}",
                exp.corpus.display()
            )));
        }
    }
}

/// A `[decision]` metric the corpus cannot measure would leave the decision without it: a
/// catalogue metric whose file is missing, `lift` without judges, or a name that is neither a
/// compared metric, `lift`, nor a scorer of `scores.jsonl` (with the nearest name).
pub(super) fn refuse_undecidable(loaded: &mut Loaded, exp_path: &Path, exp: &Experiment) {
    use crate::replay::{compared, decidable, LIFTS};
    let corpus = &loaded.corpus;
    let scorers: std::collections::BTreeSet<&str> = corpus
        .scores
        .iter()
        .flat_map(|(_, lines)| lines.iter().map(|l| l.scorer.0.as_str()))
        .collect();
    let error = |problem: String, hint: String| {
        let e = InputError::new(exp_path.display().to_string(), problem).hint(hint);
        let e = e.field("`decision`");
        match exp.decision_line {
            Some(l) => e.at_line(l),
            None => e,
        }
    };
    for w in &exp.decision {
        let name = w.metric.as_str();
        let missing = match decidable(name) {
            // A scorer named like a catalogue metric the corpus cannot measure: the catalogue's
            // name wins, so the scorer could never be decided on.
            Some(c) if scorers.contains(name) && unmeasurable(&c, corpus, exp).is_some() => {
                loaded.refusals.push(error(
                    format!("`{name}` is both a metric of the catalogue (which this corpus cannot measure) and a scorer of scores.jsonl: the catalogue's name wins, so the scorer would never be decided on"),
                    "import the scorer under another name (its log's scorer name, renamed before `calibench import`), then decide on that name".to_string(),
                ));
                continue;
            }
            Some(c) => unmeasurable(&c, corpus, exp),
            None if scorers.contains(name) => None,
            None => {
                let mut names: Vec<&str> = compared().iter().map(|c| c.name).collect();
                names.extend(LIFTS.iter().map(|c| c.name));
                let lifts = LIFTS.map(|c| format!("`{}`", c.name)).join(", ");
                names.extend(scorers.iter().copied());
                let near = crate::text::nearest(name, &names)
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                loaded.refusals.push(error(
                    format!("`{name}` is not a compared metric, {lifts}, or a scorer of the corpus{near}"),
                    format!("a decision metric is a key of review.delta or queries.delta, {lifts}, or an imported scorer: {}", names.join(", ")),
                ));
                continue;
            }
        };
        if let Some(why) = missing {
            loaded.refusals.push(error(
                format!("decision metric `{name}` {why}"),
                format!(
                    "decide on metrics this corpus measures in {}",
                    exp.corpus.display()
                ),
            ));
        }
    }
}
