//! The arms against each other in the input ledger: each arm's findings (used and malformed),
//! the units (targets, queries, items) one arm has and the other does not (refused when one is
//! a likely typo of another id), reviewers in one arm only, what the harness recorded that
//! differs between the arms, and the judge panel both arms must share.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use super::items::item_text;
use super::loaded::Loaded;
use super::tally::{caveat, file_key};
use crate::config::Experiment;
use crate::corpus::ledger::{Aspect, Caveat, Drifted, FindingsLedger, Inputs, Unpaired};
use crate::corpus::reviews::{Return, Selection};
use crate::error::{InputError, Problems};
use crate::policy::Arm;

/// The returns `arm` reads.
fn returns_of<'a>(selections: &'a [Selection], arm: &Arm) -> &'a [Return] {
    let scale = arm.review.scale();
    selections
        .iter()
        .find(|s| s.source == arm.source && s.scale == scale)
        .map_or(&[], |s| s.returns.as_slice())
}

/// Review corpora: each arm's findings (used and malformed), its unpaired targets, and its
/// reviewers the other arm does not have.
pub(super) fn review_units(
    loaded: &Loaded,
    exp: &Experiment,
    ledger: &mut Inputs,
    refusals: &mut Problems,
    at: &mut Vec<InputError>,
) {
    let Some((name, selections)) = &loaded.corpus.reviews else {
        return;
    };
    let file = file_key(name);
    let mut targets: Vec<BTreeMap<&str, u64>> = Vec::new();
    let mut reviewers: Vec<BTreeMap<&str, (u64, u64)>> = Vec::new();
    // Each reviewer's reported models per arm, with the line of the first return reporting one.
    let mut models: Vec<BTreeMap<&str, (std::collections::BTreeSet<&str>, u64)>> = Vec::new();
    let mut usage = BTreeMap::new();
    for arm in exp.arms() {
        let returns = returns_of(selections, arm);
        usage.insert(
            arm.name.clone(),
            crate::corpus::ledger::UsageLedger {
                calls: returns.len() as u64,
                reported: returns.iter().filter(|r| r.spent().is_some()).count() as u64,
            },
        );
        let mut f = FindingsLedger::default();
        // Each reason's count, and the line of its first finding.
        let mut reasons: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for r in returns {
            f.used += r.findings.len() as u64;
            f.read += (r.findings.len() + r.malformed.len()) as u64;
            for (kind, n, first) in r.malformed.kinds() {
                *f.malformed.entry(kind.to_string()).or_default() += n as u64;
                let e = reasons.entry(kind.to_string()).or_insert((0, first.line));
                e.0 += n as u64;
                e.1 = e.1.min(first.line);
            }
        }
        let malformed = f.read - f.used;
        if malformed > 0 {
            // The commonest reason; ties go to the one seen first.
            let (reason, (count, line)) = reasons
                .iter()
                .max_by(|a, b| a.1 .0.cmp(&b.1 .0).then(b.1 .1.cmp(&a.1 .1)))
                .map(|(k, v)| (k.clone(), *v))
                .unwrap_or_default();
            let field = reason.split(": ").next().unwrap_or("findings").to_string();
            caveat(
                ledger,
                at,
                Caveat::Malformed {
                    arm: arm.name.clone(),
                    malformed,
                    read: f.read,
                    reason: shown_reason(&reason),
                    reason_count: count,
                    first: format!("{file}:{line}"),
                },
                name,
                line,
                &format!("findings[].{field}"),
            );
        }
        ledger.findings.insert(arm.name.clone(), f);
        // Counted in hash tables, then ordered: every return looked up in ordered maps was most
        // of the ledger's work, done while the replay waits (at 100,000 findings 14.7 million
        // instructions of it, 4.5 million since).
        type Table<'a, V> = std::collections::HashMap<&'a str, V, foldhash::fast::RandomState>;
        let mut t: Table<u64> = Table::default();
        let mut who: Table<(u64, u64)> = Table::default();
        let mut m: Table<(std::collections::BTreeSet<&str>, u64)> = Table::default();
        for r in returns {
            let e = t.entry(&r.target).or_insert(r.line);
            *e = (*e).min(r.line);
            let w = who.entry(&r.reviewer).or_insert((0, r.line));
            w.0 += 1;
            w.1 = w.1.min(r.line);
            if let Some(model) = r.model() {
                let e = m.entry(&r.reviewer).or_insert((Default::default(), r.line));
                e.0.insert(model);
                e.1 = e.1.min(r.line);
            }
        }
        targets.push(t.into_iter().collect());
        reviewers.push(who.into_iter().collect());
        models.push(m.into_iter().collect());
    }
    // Counted where any call reported usage: else the corpus records none, and says nothing.
    if usage.values().any(|u| u.reported > 0) {
        ledger.usage = usage;
    }
    if exp.baseline.source == exp.treatment.source {
        return;
    }
    unpaired(
        (ledger, refusals, at),
        name,
        exp,
        [&targets[0], &targets[1]],
        ("targets", "target", "reviewed"),
    );
    if !exp.treatment.differs.iter().any(|d| d == "model") {
        let in_both = |r: &str| reviewers[0].contains_key(r) && reviewers[1].contains_key(r);
        model_drift(
            (ledger, at),
            (name, &file),
            "reviewer",
            [&models[0], &models[1]],
            &in_both,
        );
    }
    for (i, arm) in exp.arms().into_iter().enumerate() {
        for (reviewer, (n, line)) in &reviewers[i] {
            if !reviewers[1 - i].contains_key(reviewer) {
                caveat(
                    ledger,
                    at,
                    Caveat::Reviewer {
                        reviewer: crate::text::terminal(reviewer).into_owned(),
                        arm: arm.name.clone(),
                        returns: *n,
                        first: format!("{file}:{line}"),
                    },
                    name,
                    *line,
                    "reviewer",
                );
            }
        }
    }
}

/// What the collection's harness record says differs between the arms' labels and the
/// treatment does not declare (`differs`): each a caveat at collect.json.
pub(super) fn harness_drift(
    loaded: &Loaded,
    exp: &Experiment,
    ledger: &mut Inputs,
    at: &mut Vec<InputError>,
) {
    let Some((name, record)) = &loaded.collection else {
        return;
    };
    let (b, t) = (&exp.baseline.source, &exp.treatment.source);
    if b == t {
        return;
    }
    let arms = record.provenance.as_ref().map(|p| &p.arms);
    let of = |label: &str| arms.and_then(|a| a.get(label));
    let (Some(rb), Some(rt)) = (of(b), of(t)) else {
        // A collection that records one arm's harness and not the other's (a `merge --arm` of
        // an older collection) cannot be checked for drift: said, never silent.
        for arm in exp.arms() {
            if of(&arm.source).is_none() && record.arms.contains(&arm.source) {
                caveat(
                    ledger,
                    at,
                    Caveat::NoHarness {
                        arm: arm.name.clone(),
                    },
                    name,
                    1,
                    "provenance",
                );
            }
        }
        return;
    };
    let file = file_key(name);
    for d in crate::collect::provenance::compare((b, rb), (t, rt)) {
        if exp.treatment.differs.contains(&d.key) {
            continue;
        }
        caveat(
            ledger,
            at,
            Caveat::Drift {
                what: d.what,
                baseline: d.baseline,
                treatment: d.treatment,
                key: d.key,
                first: file.clone(),
            },
            name,
            1,
            "provenance",
        );
    }
}

/// Each judge of both arms whose reported models (a verdict's `reported_model`) differ between
/// them: harness drift the lift and precision would credit to the treatment. Declared, as a
/// reviewer's model is, by `differs = ["model"]`.
pub(super) fn judge_model_drift(
    loaded: &Loaded,
    exp: &Experiment,
    ledger: &mut Inputs,
    at: &mut Vec<InputError>,
) {
    let Some((name, items)) = &loaded.corpus.verdicts else {
        return;
    };
    if exp.baseline.source == exp.treatment.source
        || exp.treatment.differs.iter().any(|d| d == "model")
    {
        return;
    }
    type Models<'a> = BTreeMap<&'a str, (BTreeSet<&'a str>, u64)>;
    let mut models: [Models; 2] = Default::default();
    let mut judges: [BTreeSet<&str>; 2] = Default::default();
    for item in items {
        let Some(side) = [&exp.baseline, &exp.treatment]
            .iter()
            .position(|a| a.source == item.arm)
        else {
            continue;
        };
        for v in &item.verdicts {
            judges[side].insert(&v.model);
            if let Some(m) = &v.reported_model {
                let e = models[side]
                    .entry(&v.model)
                    .or_insert((BTreeSet::new(), item.line));
                e.0.insert(m);
                e.1 = e.1.min(item.line);
            }
        }
    }
    let in_both = |j: &str| judges[0].contains(j) && judges[1].contains(j);
    let file = file_key(name);
    model_drift(
        (ledger, at),
        (name, &file),
        "judge",
        [&models[0], &models[1]],
        &in_both,
    );
}

/// Each `role` (reviewer, judge) of both arms whose reported models differ between them (a
/// line without one reports none): harness drift the decision would credit to the treatment.
fn model_drift(
    (ledger, at): (&mut Inputs, &mut Vec<InputError>),
    (name, file): (&str, &str),
    role: &str,
    models: [&BTreeMap<&str, (std::collections::BTreeSet<&str>, u64)>; 2],
    in_both: &dyn Fn(&str) -> bool,
) {
    let shown = |set: Option<&(std::collections::BTreeSet<&str>, u64)>| match set {
        Some((s, _)) => s
            .iter()
            .map(|m| crate::text::terminal(m).into_owned())
            .collect::<Vec<_>>()
            .join(", "),
        None => "no model reported".to_string(),
    };
    let reviewers: std::collections::BTreeSet<&str> =
        models[0].keys().chain(models[1].keys()).copied().collect();
    // A reviewer in one arm only is its own caveat.
    for reviewer in reviewers.into_iter().filter(|r| in_both(r)) {
        let (b, t) = (models[0].get(reviewer), models[1].get(reviewer));
        if b.map(|x| &x.0) == t.map(|x| &x.0) {
            continue;
        }
        let line = b.iter().chain(t.iter()).map(|x| x.1).min().unwrap_or(1);
        caveat(
            ledger,
            at,
            Caveat::Drift {
                what: Drifted::Role {
                    role: role.into(),
                    names: vec![reviewer.to_string()],
                    aspect: Aspect::Model,
                },
                baseline: shown(b),
                treatment: shown(t),
                key: "model".into(),
                first: format!("{file}:{line}"),
            },
            name,
            line,
            "model",
        );
    }
}

/// A malformed finding's kind as a caveat says it: its field in backticks.
fn shown_reason(kind: &str) -> String {
    match kind.split_once(": ") {
        Some((field, why)) => format!("`{field}` {why}"),
        None => kind.to_string(),
    }
}

/// Query corpora: the (query, run) pairs one arm recorded and the other did not.
pub(super) fn query_units(
    loaded: &Loaded,
    exp: &Experiment,
    ledger: &mut Inputs,
    refusals: &mut Problems,
    at: &mut Vec<InputError>,
) {
    let Some((name, queries)) = &loaded.corpus.queries else {
        return;
    };
    // What the traces say they spent: each arm's queries, and those that said.
    count_usage(
        ledger,
        exp.arms().into_iter().map(|arm| {
            let mine = queries.iter().filter(|q| q.arm == arm.source);
            let (calls, reported) = mine.fold((0, 0), |(c, r), q| {
                (c + 1, r + u64::from(q.spent.is_some()))
            });
            (arm.name.clone(), calls, reported)
        }),
    );
    let units = queries.iter().map(|q| {
        let id = if q.run == 0 {
            q.query_id.clone()
        } else {
            format!("{} (run {})", q.query_id, q.run)
        };
        (q.arm.as_str(), id, q.line)
    });
    let found = Found {
        name,
        what: ("queries", "query", "recorded"),
    };
    lines_unpaired((ledger, refusals, at), exp, found, units);
}

/// Scores corpora: the items one arm scored and the other did not.
pub(super) fn score_units(
    loaded: &Loaded,
    exp: &Experiment,
    ledger: &mut Inputs,
    refusals: &mut Problems,
    at: &mut Vec<InputError>,
) {
    let Some((name, scores)) = &loaded.corpus.scores else {
        return;
    };
    // What the samples say they spent: each arm's samples (item × repeat), and those that said.
    count_usage(
        ledger,
        exp.arms().into_iter().map(|arm| {
            let mine: Vec<&crate::corpus::scores::Score> =
                scores.iter().filter(|s| s.arm.0 == arm.source).collect();
            let samples = crate::replay::scores::spending(&mine);
            let reported = samples.iter().filter(|(_, _, s)| s.is_some()).count();
            (arm.name.clone(), samples.len() as u64, reported as u64)
        }),
    );
    let units = scores
        .iter()
        .map(|s| (s.arm.0.as_str(), item_text(&s.item), s.line));
    let found = Found {
        name,
        what: ("items", "item", "scored"),
    };
    lines_unpaired((ledger, refusals, at), exp, found, units);
}

/// Adds each arm's calls (queries, samples) and how many reported what they spent to the
/// ledger's usage counts, when any did: else the corpus records none, and says nothing.
fn count_usage(ledger: &mut Inputs, arms: impl Iterator<Item = (String, u64, u64)>) {
    let arms: Vec<(String, u64, u64)> = arms.collect();
    if arms.iter().all(|(_, _, reported)| *reported == 0) {
        return;
    }
    for (arm, calls, reported) in arms {
        let u = ledger.usage.entry(arm).or_default();
        u.calls += calls;
        u.reported += reported;
    }
}

/// A file's units, as [`unpaired`] names them: the file, and what a unit is.
struct Found<'a> {
    name: &'a str,
    what: (&'static str, &'static str, &'static str),
}

/// The units of each arm among `lines` (each a line's recorded label, unit id and line number),
/// with the first line of each, into [`unpaired`].
fn lines_unpaired<'a>(
    out: (&mut Inputs, &mut Problems, &mut Vec<InputError>),
    exp: &Experiment,
    found: Found<'_>,
    lines: impl Iterator<Item = (&'a str, String, u64)> + Clone,
) {
    if exp.baseline.source == exp.treatment.source {
        return;
    }
    let units: Vec<BTreeMap<String, u64>> = exp
        .arms()
        .iter()
        .map(|arm| {
            let mut m: BTreeMap<String, u64> = BTreeMap::new();
            for (_, id, line) in lines.clone().filter(|(label, ..)| *label == arm.source) {
                let e = m.entry(id).or_insert(line);
                *e = (*e).min(line);
            }
            m
        })
        .collect();
    let units: Vec<BTreeMap<&str, u64>> = units
        .iter()
        .map(|m| m.iter().map(|(k, v)| (k.as_str(), *v)).collect())
        .collect();
    unpaired(out, found.name, exp, [&units[0], &units[1]], found.what);
}

/// The most id comparisons a corpus gets for typos: beyond, only case and zero-padding are
/// compared (a hash lookup each), and the caveat says so.
const NEAR_MISS_BUDGET: u64 = 20_000_000;

/// Units one arm has and the other does not: refused when one looks like a typo of another
/// id of the corpus (a near miss), else counted per arm and a caveat.
fn unpaired(
    (ledger, refusals, at): (&mut Inputs, &mut Problems, &mut Vec<InputError>),
    name: &str,
    exp: &Experiment,
    units: [&BTreeMap<&str, u64>; 2],
    (what, one, verb): (&'static str, &'static str, &str),
) {
    let arms = exp.arms();
    let only: [Vec<(&str, u64)>; 2] = [0, 1].map(|i| {
        let mut v: Vec<(&str, u64)> = units[i]
            .iter()
            .filter(|(id, _)| !units[1 - i].contains_key(*id))
            .map(|(id, line)| (*id, *line))
            .collect();
        v.sort_by_key(|(_, line)| *line);
        v
    });
    let all: BTreeSet<&str> = units[0].keys().chain(units[1].keys()).copied().collect();
    let lonely = (only[0].len() + only[1].len()) as u64;
    let pairwise = lonely.saturating_mul(all.len() as u64) <= NEAR_MISS_BUDGET;
    let mut folded: HashMap<String, Vec<&str>> = HashMap::new();
    if !pairwise {
        for id in &all {
            folded
                .entry(crate::text::folded_id(id))
                .or_default()
                .push(id);
        }
    }
    let near_of = |id: &str| -> Option<&str> {
        if pairwise {
            all.iter()
                .copied()
                .filter(|other| crate::text::near_miss(id, other))
                .min_by_key(|other| strsim::osa_distance(id, other))
        } else {
            folded
                .get(&crate::text::folded_id(id))?
                .iter()
                .copied()
                .find(|other| *other != id)
        }
    };
    // Each near miss, once per pair.
    let mut typos: Vec<(u64, &str, &str, usize)> = Vec::new();
    for (i, ids) in only.iter().enumerate() {
        for (id, line) in ids {
            if let Some(near) = near_of(id) {
                if !typos.iter().any(|(_, a, b, _)| *a == near && *b == *id) {
                    typos.push((*line, id, near, i));
                }
            }
        }
    }
    // The likeliest typo first: the pair fewest edits apart, then the first in the file.
    let likeliest = typos
        .iter()
        .min_by_key(|(line, id, near, _)| (strsim::osa_distance(id, near), *line))
        .copied();
    if let Some((line, id, near, i)) = likeliest {
        let where_near = match (units[0].contains_key(near), units[1].contains_key(near)) {
            (true, true) => "in both arms".to_string(),
            (true, false) => format!("in the {} only", arms[0].name),
            _ => format!("in the {} only", arms[1].name),
        };
        refusals.push(
            InputError::new(
                name,
                format!(
                    "{} present in one arm only {} like a typo of another id: `{}` is {verb} in the {} only, and `{}` {where_near} is one slip away",
                    crate::text::count(typos.len() as u64, one, what),
                    if typos.len() == 1 { "looks" } else { "look" },
                    crate::text::terminal(id),
                    arms[i].name,
                    crate::text::terminal(near),
                ),
            )
            .at_line(line)
            .field(format!(
                "field `{}`",
                match what {
                    "queries" => "query_id",
                    "items" => "item",
                    _ => "target",
                }
            ))
            .hint(format!(
                "ids that differ in case, zero-padding or a letter or two name one {one}: correct the id so the arms pair, or rename it if the two really are different {what}"
            )),
        );
        return;
    }
    let field = match what {
        "queries" => "query_id",
        "items" => "item",
        _ => "target",
    };
    for (i, ids) in only.iter().enumerate() {
        let Some((first, line)) = ids.first() else {
            continue;
        };
        let count = ids.len() as u64;
        ledger.unpaired.insert(
            arms[i].name.clone(),
            Unpaired {
                count,
                first: first.to_string(),
                what: what.to_string(),
            },
        );
        caveat(
            ledger,
            at,
            Caveat::Unpaired {
                arm: arms[i].name.clone(),
                count,
                first: crate::text::terminal(first).into_owned(),
                what: what.to_string(),
                unchecked: !pairwise,
            },
            name,
            *line,
            field,
        );
    }
}

/// The judges of each arm's items must be one panel: a lift or a precision over two panels
/// compares the judges, not the arms.
pub(super) fn panels(loaded: &Loaded, exp: &Experiment, exp_path: &Path, refusals: &mut Problems) {
    let Some((name, items)) = &loaded.corpus.verdicts else {
        return;
    };
    let panel = |arm: &Arm| -> BTreeMap<&str, u64> {
        let labels = exp.item_labels(arm);
        let mut m: BTreeMap<&str, u64> = BTreeMap::new();
        for i in items.iter().filter(|i| labels.contains(&i.arm.as_str())) {
            for v in &i.verdicts {
                let e = m.entry(&v.model).or_insert(i.line);
                *e = (*e).min(i.line);
            }
        }
        m
    };
    let (b, t) = (panel(&exp.baseline), panel(&exp.treatment));
    if b.is_empty() || t.is_empty() || b.keys().eq(t.keys()) {
        return;
    }
    let unique = |a: &BTreeMap<&str, u64>, other: &BTreeMap<&str, u64>| -> Vec<(String, u64)> {
        a.iter()
            .filter(|(m, _)| !other.contains_key(*m))
            .map(|(m, l)| (format!("`{}`", crate::text::terminal(m)), *l))
            .collect()
    };
    let (only_b, only_t) = (unique(&b, &t), unique(&t, &b));
    let line = only_b
        .iter()
        .chain(&only_t)
        .map(|(_, l)| *l)
        .min()
        .unwrap_or(1);
    let list = |v: &[(String, u64)], arm: &str| match v.len() {
        0 => None,
        _ => Some(format!(
            "{} {} {arm} items only",
            v.iter()
                .map(|(m, _)| m.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if v.len() == 1 { "judges" } else { "judge" }
        )),
    };
    let said: Vec<String> = [
        list(&only_b, &exp.baseline.name),
        list(&only_t, &exp.treatment.name),
    ]
    .into_iter()
    .flatten()
    .collect();
    refusals.push(
        InputError::new(
            name.as_str(),
            format!(
                "the judge panel differs between the arms: {}; the lift and precision would compare two panels, not two arms",
                said.join("; ")
            ),
        )
        .at_line(line)
        .field("field `verdicts[].model`")
        .hint(format!(
            "judge both arms' items with the same judges (a judge that failed on an item stays listed, with per_dimension null), or compare the panels with `calibench trust`; {} reads these verdicts",
            exp_path.display()
        )),
    );
}
