//! Judged items in the input ledger: each verdict and human label must name a target, finding,
//! query or scored item of its arm (refused otherwise, with the nearest known id), and a label
//! must carry every dimension the judges score on its item.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::loaded::Loaded;
use super::tally::{Fate, Reader, Tally};
use crate::corpus::files::{File, Noun};
use crate::corpus::ledger::{Inputs, Reason};
use crate::corpus::Corpus;
use crate::error::{InputError, Problems};

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
        loaded: &Loaded,
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
pub(super) fn item_text(item: &crate::corpus::ItemId) -> String {
    match item {
        crate::corpus::ItemId::Number(n) => n.to_string(),
        crate::corpus::ItemId::Text(t) => t.clone(),
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
fn kinds(loaded: &Loaded) -> &'static str {
    let c = &loaded.corpus;
    match (c.reviews.is_some(), c.queries.is_some(), c.scores.is_some()) {
        (true, false, false) => "target or finding id",
        (false, true, false) => "query id",
        (false, false, true) => "scored item",
        _ => "target, finding id, query id or scored item",
    }
}

/// What the judged items of a corpus are checked against: the ids its files hold, what an id
/// may be, and whether lines under a label no arm reads were refused already (then what follows
/// from them, items that name their targets, is not said again).
pub(super) struct Judged {
    known: Known,
    kinds: &'static str,
    pub(super) cascade: bool,
}

impl Judged {
    /// Built once every file is read, before any is accounted for.
    pub(super) fn of(
        loaded: &Loaded,
        reader: Reader<'_>,
        index: &crate::corpus::reviews::Index,
        ledger: &Inputs,
    ) -> Judged {
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
        // Lines of a replayed file under a label no arm reads are refused: what follows from
        // them (items that name their targets, targets then in one arm only) is not said again.
        let c = &loaded.corpus;
        let unread =
            |label: &str| reader.exp.is_some() && reader.fate(label, false) == Fate::Unread;
        let cascade = ledger
            .files
            .get(File::Reviews.name())
            .is_some_and(|f| f.excluded(Reason::LabelUnread) > 0)
            || c.queries
                .iter()
                .flat_map(|(_, q)| q)
                .any(|q| unread(&q.arm))
            || c.scores
                .iter()
                .flat_map(|(_, s)| s)
                .any(|s| unread(&s.arm.0));
        Judged {
            known,
            kinds: kinds(loaded),
            cascade,
        }
    }
}

/// `verdicts.jsonl`'s lines into the ledger: each item must name a target, finding, query or
/// scored item of its arm.
pub(super) fn verdicts(
    corpus: &Corpus,
    reader: Reader<'_>,
    judging: &Judged,
    refused: &Problems,
    (ledger, refusals): (&mut Inputs, &mut Problems),
) {
    let Some((name, items)) = &corpus.verdicts else {
        return;
    };
    let noun = File::Verdicts.def().noun;
    let mut tally = Tally::new(name, noun, reader, refused);
    let mut unknown = Unknown::default();
    for i in items {
        let source = reader.source_of(&i.arm);
        tally.line(&i.arm, i.line, true, || {
            if judging.known.has(source, &i.item_id) {
                return None;
            }
            unknown.add(
                i.line,
                &i.item_id,
                &i.arm,
                judging.known.nearest(source, &i.item_id),
            );
            Some((Reason::ItemUnknown, i.item_id.clone()))
        });
    }
    let total = items.len() as u64 + refused.total();
    if let Some(e) = unknown
        .refusal(name, noun, total, judging.kinds)
        .filter(|_| !judging.cascade)
    {
        refusals.push(e);
    }
    tally.close(ledger, refusals);
}

/// `labels.jsonl`'s lines into the ledger: each label must name an item of its arm that a judge
/// scored, with every dimension the judges score on it.
pub(super) fn labels(
    corpus: &Corpus,
    reader: Reader<'_>,
    judging: &Judged,
    refused: &Problems,
    (ledger, refusals): (&mut Inputs, &mut Problems),
) {
    let Some((name, labels)) = &corpus.labels else {
        return;
    };
    let noun = File::Labels.def().noun;
    // What the judges scored on each judged item: the dimensions a label must have.
    let mut judged: HashMap<(&str, &str), (u64, BTreeSet<&str>)> = HashMap::new();
    if let Some((_, items)) = &corpus.verdicts {
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
    let mut tally = Tally::new(name, noun, reader, refused);
    let mut unknown = Unknown::default();
    let mut partial: Option<InputError> = None;
    let mut on_judged = 0;
    let mut read = 0;
    for l in labels {
        let source = reader.source_of(&l.arm);
        tally.line(&l.arm, l.line, true, || {
            read += 1;
            if !judging.known.has(source, &l.item_id) {
                unknown.add(l.line, &l.item_id, &l.arm, judging.known.nearest(source, &l.item_id));
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
    let total = labels.len() as u64 + refused.total();
    if let Some(e) = unknown
        .refusal(name, noun, total, judging.kinds)
        .filter(|_| !judging.cascade)
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
    tally.close(ledger, refusals);
}
