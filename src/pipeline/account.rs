//! The input ledger of a loaded corpus (docs/reference.md, "The input ledger"): every line of
//! every file used or excluded for a named reason, every finding used or malformed, the units
//! one arm has and the other does not, and the caveats a decision carries. The refusals that
//! keep a mistake from changing a decision unseen are made here too, beside the counts that
//! find them: lines under a label no arm reads, items that resolve to nothing, ids one typo
//! apart, two judge panels, labels without every dimension the judges score.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use crate::config::Experiment;
use crate::corpus::ledger::{Caveat, FileLedger, FindingsLedger, Inputs, Reason, Unpaired};
use crate::corpus::reviews::{Return, Selection};
use crate::corpus::{count_label, LabelCounts};
use crate::error::{InputError, Problems};
use crate::policy::Arm;

/// The name a file has in the ledger and in caveats: its file name, without the folder.
pub fn file_key(name: &str) -> String {
    Path::new(name)
        .file_name()
        .map_or_else(|| name.to_string(), |f| f.to_string_lossy().into_owned())
}

/// The experiment a corpus is read for, when there is one.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    pub exp: Option<(&'a Path, &'a Experiment)>,
}

/// What becomes of the lines under one `arm` label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Read,
    Ignored,
    Unread,
}

impl Reader<'_> {
    /// The fate of lines filed under `label`; `items`: judged items, which an arm's name files
    /// too. Without an experiment every label is read.
    fn fate(&self, label: &str, items: bool) -> Fate {
        match self.exp {
            None => Fate::Read,
            Some((_, exp)) if exp.ignores(label) => Fate::Ignored,
            Some((_, exp)) if exp.reads(label, items) => Fate::Read,
            Some(_) => Fate::Unread,
        }
    }

    /// The recorded label (an arm's `source`) whose lines the items under `label` are about.
    fn source_of<'b>(&'b self, label: &'b str) -> &'b str {
        let Some((_, exp)) = self.exp else {
            return label;
        };
        if exp.arms().iter().any(|a| a.source == label) {
            return label;
        }
        exp.arms()
            .into_iter()
            .find(|a| a.name == label)
            .map_or(label, |a| a.source.as_str())
    }
}

/// What one line of a file is, for its ledger: a noun for messages.
#[derive(Clone, Copy)]
pub struct Noun {
    pub one: &'static str,
    pub many: &'static str,
}

/// One file's lines, accounted for one at a time.
pub struct Tally<'a> {
    name: &'a str,
    noun: Noun,
    reader: Reader<'a>,
    ledger: FileLedger,
    unread: LabelCounts,
    /// Every label the file's lines carry, for the refusal's hint.
    labels: BTreeSet<String>,
}

impl<'a> Tally<'a> {
    /// A file's tally, starting with the lines its reader refused (`problems`, one per line).
    pub fn new(name: &'a str, noun: Noun, reader: Reader<'a>, refused: &Problems) -> Self {
        let mut ledger = FileLedger::default();
        let first = refused.iter().filter_map(|p| p.line).min().unwrap_or(0);
        let example = refused
            .iter()
            .find(|p| p.line == Some(first))
            .map(|p| p.problem.clone())
            .unwrap_or_default();
        ledger.exclude(Reason::Refused, refused.total(), first, || example);
        Tally {
            name,
            noun,
            reader,
            ledger,
            unread: LabelCounts::new(),
            labels: BTreeSet::new(),
        }
    }

    fn saw(&mut self, label: &str) {
        if !self.labels.contains(label) {
            self.labels.insert(label.to_string());
        }
    }

    /// `n` lines under `label`, the first on `line`, all read alike (reviews.jsonl's, counted as
    /// they stream).
    pub fn label(&mut self, label: &str, n: u64, line: u64) {
        self.saw(label);
        match self.reader.fate(label, false) {
            Fate::Read => self.ledger.used(n),
            Fate::Ignored => self
                .ledger
                .exclude(Reason::LabelIgnored, n, line, || label.to_string()),
            Fate::Unread => {
                self.ledger
                    .exclude(Reason::LabelUnread, n, line, || label.to_string());
                for _ in 0..n {
                    count_label(&mut self.unread, label, line);
                }
            }
        }
    }

    /// One line under `label`: when an arm reads it, `used` unless `why` names a reason.
    pub fn line(
        &mut self,
        label: &str,
        line: u64,
        items: bool,
        why: impl FnOnce() -> Option<(Reason, String)>,
    ) {
        self.saw(label);
        match self.reader.fate(label, items) {
            Fate::Read => match why() {
                None => self.ledger.used(1),
                Some((reason, example)) => self.ledger.exclude(reason, 1, line, || example),
            },
            Fate::Ignored => self
                .ledger
                .exclude(Reason::LabelIgnored, 1, line, || label.to_string()),
            Fate::Unread => {
                self.ledger
                    .exclude(Reason::LabelUnread, 1, line, || label.to_string());
                count_label(&mut self.unread, label, line);
            }
        }
    }

    /// The file's ledger into `inputs`, and the refusal of the lines under labels no arm reads.
    pub fn close(self, inputs: &mut Inputs, refusals: &mut Problems) {
        if let (false, Some((exp_path, exp))) = (self.unread.is_empty(), self.reader.exp) {
            refusals.push(unread(
                (self.name, self.noun, self.ledger.lines),
                &self.unread,
                &self.labels,
                exp_path,
                exp,
            ));
        }
        let key = file_key(self.name);
        debug_assert!(self.ledger.balances());
        inputs.files.insert(key, self.ledger);
    }
}

/// The refusal of lines filed under labels neither arm reads, naming each label, its count
/// and first line, and the nearest label an arm reads.
fn unread(
    (name, noun, total): (&str, Noun, u64),
    unread: &LabelCounts,
    labels: &BTreeSet<String>,
    exp_path: &Path,
    exp: &Experiment,
) -> InputError {
    let n: u64 = unread.values().map(|c| c.lines).sum();
    let first = unread.values().map(|c| c.first).min().unwrap_or(0);
    let which: Vec<String> = unread
        .iter()
        .map(|(label, c)| {
            format!(
                "`{}` ({}, first on line {})",
                crate::text::terminal(label),
                crate::text::count(c.lines, "line", "lines"),
                c.first
            )
        })
        .collect();
    let sources: Vec<&str> = exp.arms().iter().map(|a| a.source.as_str()).collect();
    let near = unread
        .keys()
        .find_map(|label| {
            sources
                .iter()
                .find(|s| crate::text::near_miss(label, s))
                .map(|s| format!("; did you mean `{s}`?"))
        })
        .unwrap_or_default();
    let reads = format!(
        "arm `baseline` reads `{}` and arm `treatment` reads `{}`",
        exp.baseline.source, exp.treatment.source
    );
    let mut shown: Vec<&String> = unread.keys().collect();
    shown.truncate(3);
    let ignore = shown
        .iter()
        .map(|l| format!("\"{}\"", crate::text::terminal(l)))
        .collect::<Vec<_>>()
        .join(", ");
    InputError::new(
        name,
        format!(
            "{n} of {total} {} {} filed under a label neither arm reads, and would silently leave the run: {}{near}",
            if total == 1 { noun.one } else { noun.many },
            if n == 1 { "is" } else { "are" },
            which.join(", ")
        ),
    )
    .at_line(first)
    .field("field `arm`")
    .hint(format!(
        "the file's labels: {}; {reads}: correct the lines' `arm`, or an arm's `source` in {}; a corpus recorded with more arms than this experiment compares lists the others in ignore_labels = [{ignore}]",
        crate::corpus::label_list(labels.iter().map(String::as_str)),
        exp_path.display()
    ))
}

/// What judged items (verdicts, human labels) may name, per recorded label: the targets and
/// finding ids of its returns, its query ids, its scored items. Built only for the ids asked
/// about, so a million findings cost a lookup each, not a copy.
struct Known {
    /// Per recorded label, each id asked about and whether the corpus has it.
    found: HashMap<String, HashMap<String, bool>>,
    /// A few known ids per recorded label, for the nearest-value hint.
    some: HashMap<String, Vec<String>>,
}

impl<'a> Known {
    fn of(
        loaded: &super::load::Loaded,
        index: &crate::corpus::reviews::Index,
        asked: impl Iterator<Item = (&'a str, &'a str)>,
    ) -> Known {
        let mut found: HashMap<String, HashMap<String, bool>> = HashMap::new();
        for (source, id) in asked {
            let ids = match found.get_mut(source) {
                Some(ids) => ids,
                None => found.entry(source.to_string()).or_default(),
            };
            if !ids.contains_key(id) {
                ids.insert(id.to_string(), false);
            }
        }
        let mut some: HashMap<String, Vec<String>> = HashMap::new();
        if found.is_empty() {
            // Nothing names an id: there is nothing to look up, nor to suggest.
            return Known { found, some };
        }
        let mut see = |source: &str, id: &str| {
            if let Some(f) = found.get_mut(source).and_then(|ids| ids.get_mut(id)) {
                *f = true;
            }
            match some.get_mut(source) {
                Some(ids) if ids.len() < 10_000 => ids.push(id.to_string()),
                Some(_) => {}
                None => {
                    some.insert(source.to_string(), vec![id.to_string()]);
                }
            }
        };
        let corpus = &loaded.corpus;
        if let Some((_, selections)) = &corpus.reviews {
            let mut seen: HashSet<&str> = HashSet::new();
            for sel in selections {
                // Two scales of one source hold the same returns.
                if !seen.insert(&sel.source) {
                    continue;
                }
                for r in &sel.returns {
                    see(&sel.source, &r.target);
                    for f in &r.findings {
                        if let Some(id) = &f.id {
                            see(&sel.source, id);
                        }
                    }
                    for id in r.malformed.ids() {
                        see(&sel.source, id);
                    }
                }
            }
            if selections.is_empty() {
                // No experiment selected returns (none was given, or it was refused): the
                // index of the records read holds each arm's targets and finding ids.
                for (arm, id) in index.arm_ids() {
                    see(arm, id);
                }
            }
        }
        if let Some((_, queries)) = &corpus.queries {
            for q in queries {
                see(&q.arm, &q.query_id);
            }
        }
        if let Some((_, scores)) = &corpus.scores {
            for s in scores {
                see(&s.arm.0, &item_text(&s.item));
            }
        }
        for ids in some.values_mut() {
            ids.sort_unstable();
            ids.dedup();
        }
        Known { found, some }
    }

    fn has(&self, source: &str, id: &str) -> bool {
        self.found
            .get(source)
            .and_then(|ids| ids.get(id))
            .copied()
            .unwrap_or(false)
    }

    /// The known id of `source` nearest `id`, when one is a likely typo of it.
    fn nearest(&self, source: &str, id: &str) -> Option<&str> {
        self.some
            .get(source)?
            .iter()
            .filter(|k| crate::text::near_miss(id, k))
            .min_by_key(|k| strsim::osa_distance(id, k))
            .map(String::as_str)
    }
}

/// A scored item's id as text, as a verdict's `item_id` writes it.
fn item_text(item: &crate::corpus::scores::ItemId) -> String {
    match item {
        crate::corpus::scores::ItemId::Number(n) => n.to_string(),
        crate::corpus::scores::ItemId::Text(t) => t.clone(),
    }
}

/// The first line whose item resolves to nothing, per file, for the refusal.
#[derive(Default)]
struct Unknown {
    count: u64,
    first: Option<(u64, String, String, Option<String>)>,
}

impl Unknown {
    fn add(&mut self, line: u64, item: &str, arm: &str, near: Option<&str>) {
        self.count += 1;
        if self.first.as_ref().is_none_or(|(l, ..)| line < *l) {
            self.first = Some((
                line,
                item.to_string(),
                arm.to_string(),
                near.map(str::to_string),
            ));
        }
    }

    fn refusal(&self, name: &str, noun: Noun, total: u64, kinds: &str) -> Option<InputError> {
        let (line, item, arm, near) = self.first.as_ref()?;
        let near = near
            .as_ref()
            .map(|n| format!("; did you mean `{}`?", crate::text::terminal(n)))
            .unwrap_or_default();
        Some(
            InputError::new(
                name,
                format!(
                    "{} of {total} {} {} an item that is no {kinds} of its arm: first `{}` (arm `{}`){near}",
                    self.count,
                    if total == 1 { noun.one } else { noun.many },
                    if self.count == 1 { "names" } else { "name" },
                    crate::text::terminal(item),
                    crate::text::terminal(arm)
                ),
            )
            .at_line(*line)
            .field("field `item_id`")
            .hint(format!("an item_id names a {kinds} recorded under the same arm label; correct the id, or the line's `arm`")),
        )
    }
}

/// What an item id may be, by the corpus's files.
fn kinds(loaded: &super::load::Loaded) -> &'static str {
    let c = &loaded.corpus;
    match (c.reviews.is_some(), c.queries.is_some(), c.scores.is_some()) {
        (true, false, false) => "target or finding id",
        (false, true, false) => "query id",
        (false, false, true) => "scored item",
        _ => "target, finding id, query id or scored item",
    }
}

/// Accounts for every file read into memory, and checks the corpus across files: called once
/// every file is read. `index`: the records of `reviews.jsonl` as read, for `targets.jsonl`
/// and judged items without an experiment.
pub fn finish(
    loaded: &mut super::load::Loaded,
    reader: Reader<'_>,
    index: &crate::corpus::reviews::Index,
    parse_problems: &BTreeMap<&'static str, Problems>,
) {
    let no_problems = Problems::default();
    let refused = |file: &str| parse_problems.get(file).unwrap_or(&no_problems);
    let mut ledger = std::mem::take(&mut loaded.ledger);
    let mut refusals = Problems::default();

    // Judged items: each must name a target, finding, query or item of its arm.
    let known = {
        let verdicts = loaded.corpus.verdicts.iter().flat_map(|(_, items)| {
            items
                .iter()
                .map(|i| (reader.source_of(&i.arm), i.item_id.as_str()))
        });
        let labels = loaded.corpus.labels.iter().flat_map(|(_, labels)| {
            labels
                .iter()
                .map(|l| (reader.source_of(&l.arm), &*l.item_id))
        });
        Known::of(loaded, index, verdicts.chain(labels))
    };
    let kinds = kinds(loaded);
    // Lines of a replayed file under a label no arm reads are refused: what follows from
    // them (items that name their targets, targets then in one arm only) is not said again.
    let c = &loaded.corpus;
    let unread = |label: &str| reader.exp.is_some() && reader.fate(label, false) == Fate::Unread;
    let cascade = ledger
        .files
        .get("reviews.jsonl")
        .is_some_and(|f| f.excluded(Reason::LabelUnread) > 0)
        || c.queries
            .iter()
            .flat_map(|(_, q)| q)
            .any(|q| unread(&q.arm))
        || c.scores
            .iter()
            .flat_map(|(_, s)| s)
            .any(|s| unread(&s.arm.0));

    if let Some((name, items)) = &loaded.corpus.verdicts {
        let noun = Noun {
            one: "verdict line",
            many: "verdict lines",
        };
        let mut tally = Tally::new(name, noun, reader, refused("verdicts.jsonl"));
        let mut unknown = Unknown::default();
        for i in items {
            let source = reader.source_of(&i.arm);
            tally.line(&i.arm, i.line, true, || {
                if known.has(source, &i.item_id) {
                    return None;
                }
                unknown.add(
                    i.line,
                    &i.item_id,
                    &i.arm,
                    known.nearest(source, &i.item_id),
                );
                Some((Reason::ItemUnknown, i.item_id.clone()))
            });
        }
        let total = items.len() as u64 + refused("verdicts.jsonl").total();
        if let Some(e) = unknown
            .refusal(name, noun, total, kinds)
            .filter(|_| !cascade)
        {
            refusals.push(e);
        }
        tally.close(&mut ledger, &mut refusals);
    }

    if let Some((name, labels)) = &loaded.corpus.labels {
        let noun = Noun {
            one: "label line",
            many: "label lines",
        };
        // What the judges scored on each judged item: the dimensions a label must have.
        let mut judged: HashMap<(&str, &str), (u64, BTreeSet<&str>)> = HashMap::new();
        if let Some((_, items)) = &loaded.corpus.verdicts {
            for i in items {
                let dims: BTreeSet<&str> = i
                    .survivors()
                    .flat_map(|s| s.keys().map(String::as_str))
                    .collect();
                if !dims.is_empty() {
                    judged.insert((&i.arm, &i.item_id), (i.line, dims));
                }
            }
        }
        let weights = reader.exp.map(|(_, e)| &e.trust.dimension_weights);
        let counts = |d: &str| weights.is_none_or(|w| w.get(d).is_none_or(|&x| x > 0.0));
        let mut tally = Tally::new(name, noun, reader, refused("labels.jsonl"));
        let mut unknown = Unknown::default();
        let mut partial: Option<InputError> = None;
        let mut on_judged = 0;
        let mut read = 0;
        for l in labels {
            let source = reader.source_of(&l.arm);
            tally.line(&l.arm, l.line, true, || {
                read += 1;
                if !known.has(source, &l.item_id) {
                    unknown.add(l.line, &l.item_id, &l.arm, known.nearest(source, &l.item_id));
                    return Some((Reason::ItemUnknown, l.item_id.to_string()));
                }
                let Some((vline, dims)) = judged.get(&(&*l.arm, &*l.item_id))
                else {
                    return Some((Reason::ItemNotJudged, l.item_id.to_string()));
                };
                on_judged += 1;
                let lacks: Vec<&&str> = dims
                    .iter()
                    .filter(|d| counts(d) && !l.scores.contains_key(d))
                    .collect();
                if let (Some(first), None) = (lacks.first(), &partial) {
                    partial = Some(
                        crate::corpus::field_error(
                            name,
                            l.line,
                            "per_dimension",
                            format!(
                                "lacks `{first}`, which the judges score on item `{}` (arm `{}`, verdicts.jsonl line {vline}): a composite over fewer dimensions is another quantity",
                                crate::text::terminal(&l.item_id),
                                crate::text::terminal(&l.arm)
                            ),
                        )
                        .hint("label every dimension the judges score on the item, or give the dimension no weight in [trust] dimension_weights"),
                    );
                }
                None
            });
        }
        let total = labels.len() as u64 + refused("labels.jsonl").total();
        if let Some(e) = unknown
            .refusal(name, noun, total, kinds)
            .filter(|_| !cascade)
        {
            refusals.push(e);
        }
        refusals.extend(partial);
        if read > 0 && on_judged == 0 && unknown.count == 0 {
            let example = labels
                .first()
                .map_or(String::new(), |l| l.item_id.to_string());
            refusals.push(
                InputError::new(
                    name.as_str(),
                    format!(
                        "no label names an item the judges scored (the first names `{}`): the labels would be ignored",
                        crate::text::terminal(&example)
                    ),
                )
                .at_line(labels.first().map_or(1, |l| l.line))
                .field("field `item_id`")
                .hint("labels name the item_id and arm of a verdicts.jsonl line with at least one judge's scores"),
            );
        }
        tally.close(&mut ledger, &mut refusals);
    }

    if let Some((name, queries)) = &loaded.corpus.queries {
        let noun = Noun {
            one: "query",
            many: "queries",
        };
        let mut tally = Tally::new(name, noun, reader, refused("queries.jsonl"));
        for q in queries {
            tally.line(&q.arm, q.line, false, || None);
        }
        tally.close(&mut ledger, &mut refusals);
    }

    if let Some((name, scores)) = &loaded.corpus.scores {
        let noun = Noun {
            one: "score line",
            many: "score lines",
        };
        let mut tally = Tally::new(name, noun, reader, refused("scores.jsonl"));
        for s in scores {
            tally.line(&s.arm.0, s.line, false, || {
                s.score.is_none().then(|| {
                    (
                        Reason::MissingScore,
                        s.missing.clone().unwrap_or_else(|| "null".into()),
                    )
                })
            });
        }
        tally.close(&mut ledger, &mut refusals);
    }

    if let Some((name, calls)) = &loaded.corpus.validations {
        let noun = Noun {
            one: "validator call",
            many: "validator calls",
        };
        let validating = |label: &str| match reader.exp {
            None => true,
            Some((_, exp)) => exp
                .arms()
                .iter()
                .filter(|a| a.source == label)
                .any(|a| a.controls.validates(a.review.review_mode())),
        };
        let mut tally = Tally::new(name, noun, reader, refused("validations.jsonl"));
        for c in calls {
            tally.line(&c.arm, c.line, false, || {
                (!validating(&c.arm)).then(|| (Reason::ValidationOff, c.arm.clone()))
            });
        }
        tally.close(&mut ledger, &mut refusals);
    }

    if let Some((name, targets)) = &loaded.corpus.targets {
        let noun = Noun {
            one: "target",
            many: "targets",
        };
        let reviewed: BTreeSet<&str> = match (reader.exp, &loaded.corpus.reviews) {
            (Some(_), Some((_, selections))) => selections
                .iter()
                .flat_map(|s| s.returns.iter().map(|r| r.target.as_str()))
                .collect(),
            _ => index.targets.iter().map(String::as_str).collect(),
        };
        let mut file = Tally::new(name, noun, Reader { exp: None }, refused("targets.jsonl"));
        for t in targets {
            file.line("", t.line, false, || {
                (!reviewed.contains(t.target.as_str()))
                    .then(|| (Reason::NoReturn, t.target.clone()))
            });
        }
        file.close(&mut ledger, &mut refusals);
    }

    let mut at = Vec::new();
    let mut cascaded = (Inputs::default(), Problems::default(), Vec::new());
    let (units_ledger, units_refusals, units_at) = if cascade {
        (&mut cascaded.0, &mut cascaded.1, &mut cascaded.2)
    } else {
        (&mut ledger, &mut refusals, &mut at)
    };
    if let Some((_, exp)) = reader.exp {
        review_units(loaded, exp, units_ledger, units_refusals, units_at);
        query_units(loaded, exp, units_ledger, units_refusals, units_at);
        score_units(loaded, exp, units_ledger, units_refusals, units_at);
        harness_drift(loaded, exp, units_ledger, units_at);
    }
    ledger.provenance = loaded.provenance.is_some();
    // The findings each arm read stand whatever else is wrong.
    ledger.findings.append(&mut cascaded.0.findings);
    if let Some((exp_path, exp)) = reader.exp {
        panels(loaded, exp, exp_path, &mut refusals);
        // Lines of other recorded arms are counted above, and read no further.
        if !exp.ignore_labels.is_empty() {
            if let Some((_, items)) = &mut loaded.corpus.verdicts {
                items.retain(|i| !exp.ignores(&i.arm));
            }
            if let Some((_, labels)) = &mut loaded.corpus.labels {
                labels.retain(|l| !exp.ignores(&l.arm));
            }
        }
    }
    loaded.refusals.append(refusals);
    loaded.ledger = ledger;
    loaded.caveats_at = at;
}

/// A caveat into the ledger, and the refusal `--strict` makes of it, at its file and line.
fn caveat(
    ledger: &mut Inputs,
    at: &mut Vec<InputError>,
    c: Caveat,
    file: &str,
    line: u64,
    field: &str,
) {
    let sentence = c.sentence();
    at.push(
        InputError::new(file, format!("{sentence} (--strict refuses every caveat)"))
            .at_line(line)
            .field(format!("field `{field}`"))
            .hint("correct the input, or run without --strict: the run then completes and says the caveat on every decision line"),
    );
    ledger.caveats.push(sentence);
}

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
fn review_units(
    loaded: &super::load::Loaded,
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
    for arm in exp.arms() {
        let returns = returns_of(selections, arm);
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
            if let Some(model) = &r.model {
                let e = m.entry(&r.reviewer).or_insert((Default::default(), r.line));
                e.0.insert(model);
                e.1 = e.1.min(r.line);
            }
        }
        targets.push(t.into_iter().collect());
        reviewers.push(who.into_iter().collect());
        models.push(m.into_iter().collect());
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
        model_drift(ledger, at, name, &file, [&models[0], &models[1]], &in_both);
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
fn harness_drift(
    loaded: &super::load::Loaded,
    exp: &Experiment,
    ledger: &mut Inputs,
    at: &mut Vec<InputError>,
) {
    let Some((name, p)) = &loaded.provenance else {
        return;
    };
    let (b, t) = (&exp.baseline.source, &exp.treatment.source);
    let (Some(rb), Some(rt)) = (p.arms.get(b), p.arms.get(t)) else {
        return;
    };
    if b == t {
        return;
    }
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

/// Each reviewer of both arms whose reported models differ between them (a return without
/// `model` reports none): harness drift the decision would credit to the treatment.
fn model_drift(
    ledger: &mut Inputs,
    at: &mut Vec<InputError>,
    name: &str,
    file: &str,
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
                what: format!("reviewer `{}` model", crate::text::terminal(reviewer)),
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
fn query_units(
    loaded: &super::load::Loaded,
    exp: &Experiment,
    ledger: &mut Inputs,
    refusals: &mut Problems,
    at: &mut Vec<InputError>,
) {
    let Some((name, queries)) = &loaded.corpus.queries else {
        return;
    };
    if exp.baseline.source == exp.treatment.source {
        return;
    }
    let units: Vec<BTreeMap<String, u64>> = exp
        .arms()
        .iter()
        .map(|arm| {
            let mut m: BTreeMap<String, u64> = BTreeMap::new();
            for q in queries.iter().filter(|q| q.arm == arm.source) {
                let id = if q.run == 0 {
                    q.query_id.clone()
                } else {
                    format!("{} (run {})", q.query_id, q.run)
                };
                let e = m.entry(id).or_insert(q.line);
                *e = (*e).min(q.line);
            }
            m
        })
        .collect();
    let units: Vec<BTreeMap<&str, u64>> = units
        .iter()
        .map(|m| m.iter().map(|(k, v)| (k.as_str(), *v)).collect())
        .collect();
    unpaired(
        (ledger, refusals, at),
        name,
        exp,
        [&units[0], &units[1]],
        ("queries", "query", "recorded"),
    );
}

/// Scores corpora: the items one arm scored and the other did not.
fn score_units(
    loaded: &super::load::Loaded,
    exp: &Experiment,
    ledger: &mut Inputs,
    refusals: &mut Problems,
    at: &mut Vec<InputError>,
) {
    let Some((name, scores)) = &loaded.corpus.scores else {
        return;
    };
    if exp.baseline.source == exp.treatment.source {
        return;
    }
    let units: Vec<BTreeMap<String, u64>> = exp
        .arms()
        .iter()
        .map(|arm| {
            let mut m: BTreeMap<String, u64> = BTreeMap::new();
            for s in scores.iter().filter(|s| s.arm.0 == arm.source) {
                let e = m.entry(item_text(&s.item)).or_insert(s.line);
                *e = (*e).min(s.line);
            }
            m
        })
        .collect();
    let units: Vec<BTreeMap<&str, u64>> = units
        .iter()
        .map(|m| m.iter().map(|(k, v)| (k.as_str(), *v)).collect())
        .collect();
    unpaired(
        (ledger, refusals, at),
        name,
        exp,
        [&units[0], &units[1]],
        ("items", "item", "scored"),
    );
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
                what,
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
fn panels(
    loaded: &super::load::Loaded,
    exp: &Experiment,
    exp_path: &Path,
    refusals: &mut Problems,
) {
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
