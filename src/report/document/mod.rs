//! What a report says, independent of its format: the verdict, the baseline-vs-treatment table,
//! and a section per part of the run, each opening with a one-line plain reading.
//!
//! [`build`] is pure: it reads the metrics (and the run's manifest for provenance) and returns a
//! [`Document`]; `markdown` and `html` only lay the same document out, so the two formats cannot
//! say different things.

mod agreement;
mod humans;
mod queries;
mod review;
mod scores;
mod sequential;

use agreement::{agreement_section, coverage_section, trust_section};
use humans::{humans_section, lift_human_section};
use queries::query_section;
use review::{controls_section, figures_row, review_section};
use scores::{scorer_rows, scores_section};

use crate::rundir::manifest::Manifest;

use crate::model::{Agreement, Delta, Metrics, PerArm, ScoresSection};
use crate::replay::query_metrics::{CiFigure, QueryArmMetrics};
use crate::replay::review_metrics::{
    ArmMetrics, FailedCall, Id, ACTIONABLE, AUTO_APPLY, DECISIONS, DEMOTED, DISTINCT_VALUES,
    DROPPED, EXTERNALIZED, FAILED_REVIEWERS, FINDINGS_RAW, FYI, LINT_SUPPRESSED, MALFORMED, MERGED,
    ON_SUPPRESSED_LINE, OVER_BUDGET, PRE_EXISTING, REJECTED, SKIPPED, VALIDATED,
    VALIDATION_SELECTED, VALIDATOR_CALLS, VALIDATOR_FAILED, VALIDATOR_MISSING,
};
use crate::replay::{delta_rows, summary_rows, DeltaTable};
use crate::text::count;
use crate::text::fmt_p;
use crate::trust::TrustVerdict;

#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    pub title: String,
    pub run_id: String,
    /// Better, worse or not yet knowable: the report's first line.
    pub decision: DecisionLine,
    pub verdict: Verdict,
    /// One line for the index page.
    pub headline: String,
    /// The baseline-vs-treatment table of the figures that decide.
    pub summary: Table,
    pub sections: Vec<Section>,
    /// Where the numbers came from.
    pub about: Vec<(String, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The judges agree enough; judge-derived figures are reported.
    Trusted,
    /// The judges do not agree enough; judge-derived figures are withheld.
    Withheld,
    /// No judge verdicts: every figure is mechanical replay.
    NoJudges,
    /// Most of an arm's findings were malformed: whatever the judges say, the figures may
    /// describe a corpus read on the wrong terms.
    Suspect,
}

impl Status {
    /// The verdict in words, as every format shows it.
    pub fn label(self) -> &'static str {
        match self {
            Status::Trusted => "trusted",
            Status::Withheld => "withheld",
            Status::NoJudges => "no judges",
            Status::Suspect => "inputs suspect",
        }
    }

    /// Its style class in the HTML report and index.
    pub fn class(self) -> &'static str {
        match self {
            Status::Trusted => "trusted",
            Status::Withheld => "withheld",
            Status::NoJudges => "no-judges",
            Status::Suspect => "suspect",
        }
    }
}

/// The decision in words, for every format: its status, one sentence with the deciding numbers,
/// and one line per decision metric.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionLine {
    pub status: DecisionStatus,
    /// How many caveats of the input ledger the decision carries.
    pub caveats: usize,
    pub sentence: String,
    pub details: Vec<String>,
}

impl DecisionLine {
    /// Its word with the caveats: "better", "better — with 2 caveats".
    pub fn label(&self) -> String {
        format!(
            "{}{}",
            self.status.label(),
            crate::corpus::ledger::with_caveats(self.caveats)
        )
    }
}

/// The decision's verdict, or none asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionStatus {
    Decided(crate::decision::Verdict),
    /// The experiment names no decision metric.
    None,
}

impl DecisionStatus {
    pub fn label(self) -> &'static str {
        match self {
            DecisionStatus::Decided(v) => v.name(),
            DecisionStatus::None => "no decision",
        }
    }

    /// Its style class in the HTML report and index.
    pub fn class(self) -> &'static str {
        match self {
            DecisionStatus::Decided(v) => v.name(),
            DecisionStatus::None => "undecided",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub status: Status,
    /// One sentence.
    pub sentence: String,
    /// The trust reasons when withheld; the lift when trusted.
    pub details: Vec<String>,
}

/// The decision or the trust verdict as every format opens with it.
pub struct Statement<'a> {
    /// `decision` or `verdict`: its anchor, and its name in the terminal summary.
    pub id: &'static str,
    /// `Decision` or `Verdict`.
    pub what: &'static str,
    /// Its word: `better`, `trusted`, `better — with 1 caveat`.
    pub label: String,
    /// Its style class in the HTML report.
    pub class: &'static str,
    /// The mark the Markdown report puts before it, if any.
    pub mark: Option<&'static str>,
    pub sentence: &'a str,
    pub details: &'a [String],
}

impl Document {
    /// The decision, then the trust verdict.
    pub fn statements(&self) -> [Statement<'_>; 2] {
        let (d, v) = (&self.decision, &self.verdict);
        [
            Statement {
                id: "decision",
                what: "Decision",
                label: d.label(),
                class: d.status.class(),
                mark: None,
                sentence: &d.sentence,
                details: &d.details,
            },
            Statement {
                id: "verdict",
                what: "Verdict",
                label: v.status.label().to_string(),
                class: v.status.class(),
                mark: Some(match v.status {
                    Status::Trusted => "✅",
                    Status::Withheld => "⚠️",
                    Status::NoJudges => "ℹ️",
                    Status::Suspect => "⛔",
                }),
                sentence: &v.sentence,
                details: &v.details,
            },
        ]
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// Anchor for links.
    pub id: &'static str,
    pub title: String,
    /// One line of what changed, in plain words.
    pub reading: String,
    pub blocks: Vec<Block>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    Table(Table),
    /// A plot by name (`plots/<name>.png`).
    Plot(&'static str),
    Text(String),
    List(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    /// A number (right-aligned).
    Num(String),
    /// A judge-derived figure held back because the judges are not trustworthy.
    Withheld,
}

impl Cell {
    pub fn text(&self) -> &str {
        match self {
            Cell::Text(s) | Cell::Num(s) => s,
            Cell::Withheld => "withheld",
        }
    }
}

fn text(s: impl Into<String>) -> Cell {
    Cell::Text(s.into())
}

fn numeric(s: impl Into<String>) -> Cell {
    Cell::Num(s.into())
}

fn num(x: f64, places: usize) -> Cell {
    numeric(format!("{x:.places$}"))
}

fn opt(x: Option<f64>, places: usize) -> Cell {
    x.map_or_else(|| numeric("—"), |v| num(v, places))
}

fn ci(c: Option<[f64; 2]>, places: usize) -> String {
    c.map_or("—".into(), |[lo, hi]| {
        format!("[{lo:+.places$}, {hi:+.places$}]")
    })
}

fn interval(c: Option<[f64; 2]>, places: usize) -> String {
    c.map_or("—".into(), |[lo, hi]| {
        format!("[{lo:.places$}, {hi:.places$}]")
    })
}

fn pct(x: f64) -> String {
    format!("{:.0}%", 100.0 * x)
}

/// "more" / "fewer"-style comparison words for a reading.
fn change(b: f64, t: f64, places: usize) -> String {
    let (bs, ts) = (format!("{b:.places$}"), format!("{t:.places$}"));
    if bs == ts {
        format!("unchanged at {ts}")
    } else {
        format!("{bs} → {ts}")
    }
}

const DELTA_HEADER: [&str; 8] = [
    "metric",
    "baseline",
    "treatment",
    "delta",
    "95% CI",
    "p",
    "p adj.",
    "MDE",
];

fn header(cols: &[&str]) -> Vec<String> {
    cols.iter().map(|c| c.to_string()).collect()
}

fn delta_row(label: &str, d: &Delta, places: usize) -> Vec<Cell> {
    let p = &d.paired;
    vec![
        text(label),
        num(p.baseline, places),
        num(p.treatment, places),
        numeric(format!("{:+.places$}", p.delta)),
        numeric(ci(p.ci, places)),
        numeric(p.p_value.map_or("—".into(), fmt_p)),
        numeric(d.p_adjusted.map_or("—".into(), fmt_p)),
        opt(p.mde, places),
    ]
}

/// The plots the run drew (`--no-plots`: none).
#[derive(Clone, Copy)]
pub(super) struct Plots<'a>(&'a [&'static str]);

impl Plots<'_> {
    /// The plot `name`, when the run drew it.
    fn get(&self, name: &'static str) -> Option<Block> {
        self.0.contains(&name).then_some(Block::Plot(name))
    }
}

/// A section's delta table: `rows`, captioned `lead` and how its p-values were adjusted.
fn delta_table(
    m: &Metrics,
    deltas: &std::collections::BTreeMap<String, Delta>,
    rows: Vec<Vec<Cell>>,
    lead: &str,
) -> Table {
    Table {
        caption: Some(format!("{lead} {}", adjusted_caption(m, deltas))),
        header: header(&DELTA_HEADER),
        rows,
    }
}

/// The delta table of a replayed section, every catalogue metric of `table` in order, captioned
/// `lead` (given the pairs), then "Is this A/B big enough?".
fn catalogue_deltas(
    m: &Metrics,
    table: DeltaTable,
    deltas: &std::collections::BTreeMap<String, Delta>,
    lead: impl Fn(usize) -> String,
) -> Vec<Block> {
    let rows = metric_rows(m, deltas, delta_rows(table));
    let pairs = deltas.values().next().map_or(0, |d| d.paired.pairs);
    let mut blocks = vec![Block::Table(delta_table(m, deltas, rows, &lead(pairs)))];
    blocks.extend(big_enough(m, table, deltas));
    blocks
}

/// One row per metric listed, (name, label, decimals): its delta, or a withheld row where the
/// judges' figures were withheld; nothing for a metric the run did not measure.
fn metric_rows(
    m: &Metrics,
    deltas: &std::collections::BTreeMap<String, Delta>,
    metrics: Vec<(&str, &str, usize)>,
) -> Vec<Vec<Cell>> {
    metrics
        .into_iter()
        .filter_map(|(name, label, places)| match deltas.get(name) {
            Some(d) => Some(delta_row(label, d, places)),
            None if withheld(m, name) => Some(withheld_row(label)),
            None => None,
        })
        .collect()
}

fn withheld_row(label: &str) -> Vec<Cell> {
    vec![
        text(label),
        Cell::Withheld,
        Cell::Withheld,
        Cell::Withheld,
        Cell::Withheld,
        numeric("—"),
        numeric("—"),
        numeric("—"),
    ]
}

/// Builds the report of one run. `plots` names the plots that were drawn; a section shows a
/// plot only when it is among them (`--no-plots` passes none).
pub fn build(m: &Metrics, about: &Manifest, plots: &[&'static str]) -> Document {
    let drawn = Plots(plots);
    let verdict = verdict(m);
    let mut sections = Vec::new();
    if let Some(r) = &m.review {
        sections.push(review_section(m, r, drawn));
        if let Some(c) = controls_section(m, r, drawn) {
            sections.push(c);
        }
    }
    if let Some(q) = &m.queries {
        sections.push(query_section(m, q, drawn));
    }
    if let Some(sc) = &m.scores {
        sections.push(scores_section(m, sc, drawn));
    }
    if let Some(a) = &m.agreement {
        sections.push(agreement_section(a, drawn));
    }
    sections.push(trust_section(m));
    if let Some(seq) = &m.sequential {
        sections.push(sequential::section(seq, drawn));
    }
    if let Some(h) = &m.humans {
        sections.push(humans_section(m, h, drawn));
    }
    if let Some(l) = &m.lift_human {
        sections.push(lift_human_section(m, l, drawn));
    }
    sections.push(coverage_section(m));
    Document {
        title: format!("calibench report: {}", m.experiment),
        run_id: m.run_id.clone(),
        decision: decision_line(m),
        headline: headline(m, &verdict),
        verdict,
        summary: summary(m),
        sections,
        about: about_rows(about),
    }
}

/// The decision, or how to ask for one; led by what is wrong with the inputs, when something
/// is (an unfinished collection, an arm mostly malformed): a decision on them is no better than
/// they are.
fn decision_line(m: &Metrics) -> DecisionLine {
    let mut caveats = Vec::new();
    if let Some(note) = &m.incomplete {
        caveats.push(format!("Incomplete: {note}."));
    }
    for s in &m.inputs_suspect {
        caveats.push(format!("Inputs suspect: {}.", s.sentence()));
    }
    let ledger = m.inputs.as_ref().map_or(&[][..], |i| i.caveats.as_slice());
    caveats.extend(
        ledger
            .iter()
            .map(|c| format!("Caveat, {}: {c}.", c.title())),
    );
    let Some(d) = &m.decision else {
        return DecisionLine {
            status: DecisionStatus::None,
            caveats: ledger.len(),
            sentence: "No decision: the experiment does not say what better means. Name the metrics that must change, and how, in a [decision] table (for example precision = \"increase\", distinct_values = \"decrease\"), or list primary metrics that have a better direction.".into(),
            details: caveats,
        };
    };
    let details = caveats
        .into_iter()
        .chain(
            m.sequential
                .iter()
                .map(|s| format!("sequential: {}", sequential::sentence(s))),
        )
        .chain(d.order.iter().zip(&d.reasons).filter_map(|(name, reason)| {
            let x = d.metrics.get(name)?;
            let noise = x.noise.as_ref().map_or(String::new(), |n| {
                let units = d.units.get(name).map_or("units", String::as_str);
                format!("; {}", n.words(3, units))
            });
            Some(format!(
                "{name} ({}): {} — {reason}{noise}",
                x.want.name(),
                x.outcome.words()
            ))
        }))
        .collect();
    DecisionLine {
        status: DecisionStatus::Decided(d.verdict),
        caveats: d.caveats.len(),
        sentence: format!("{}.", crate::decision::reason(d)),
        details,
    }
}

fn withheld(m: &Metrics, metric: &str) -> bool {
    m.withheld(DeltaTable::Review).iter().any(|x| x == metric)
}

/// `s` with its first letter in upper case.
fn sentence_case(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// The verdict, led by a warning when the run replayed an unfinished collection on purpose, and
/// replaced by *inputs suspect* when most of an arm's findings were malformed (the judges'
/// verdict is then one of its details).
fn verdict(m: &Metrics) -> Verdict {
    let mut v = trust_verdict(m);
    if !m.inputs_suspect.is_empty() {
        let judges = format!("Judges: {}. {}", v.status.label(), v.sentence);
        let mut details: Vec<String> = m
            .inputs_suspect
            .iter()
            .map(|s| format!("{}. To fix: {}.", sentence_case(&s.sentence()), s.fix))
            .collect();
        details.push(judges);
        details.append(&mut v.details);
        v = Verdict {
            status: Status::Suspect,
            sentence: "Most findings of an arm are malformed, so the figures below describe only the few that could be read: the corpus is probably read on the wrong scale or in the wrong mode.".into(),
            details,
        };
    }
    if let Some(note) = &m.incomplete {
        v.details.insert(
            0,
            format!("Incomplete: {note}. Replayed with --allow-partial; finish the collection before trusting these figures."),
        );
    }
    v
}

/// Why a run has no trust verdict, as the verdict at the top and the Trust section say it:
/// imported scores with no scorer named a judge, or no judge verdicts at all.
struct NoPanel {
    verdict: &'static str,
    section: &'static str,
}

impl NoPanel {
    fn of(m: &Metrics) -> NoPanel {
        if m.scores.is_some() && m.review.is_none() && m.queries.is_none() {
            NoPanel {
                verdict: "No judge panel: the experiment names no scorer in [scores] judges, so every scorer is read as a mechanical measurement and no trust verdict is given.",
                section: "No judge panel: no scorer is named in [scores] judges, so there is no panel to trust and every scorer's figures are reported as measured.",
            }
        } else {
            NoPanel {
                verdict: "No judge verdicts in this corpus: nothing judge-derived is reported, and every figure below comes from replaying the recorded outputs.",
                section: "No judge verdicts: there is no panel to trust, and nothing judge-derived is reported.",
            }
        }
    }
}

fn trust_verdict(m: &Metrics) -> Verdict {
    let Some(v) = &m.trust else {
        return Verdict {
            status: Status::NoJudges,
            sentence: NoPanel::of(m).verdict.into(),
            details: Vec::new(),
        };
    };
    let irr = v
        .inter_rater_reliability
        .map_or("not computable".into(), |a| format!("{a:.3}"));
    if v.trustworthy {
        let mut details = Vec::new();
        if let Some(l) = &m.lift {
            details.push(match (l.value, l.ci) {
                (Some(x), c) => format!(
                    "Lift (treatment − baseline judge composite): {x:+.3} {} over {} judged in both arms.",
                    ci(c, 3),
                    count(l.items as u64, "item", "items")
                ),
                (None, _) => format!(
                    "Lift: none ({}).",
                    l.note.as_deref().unwrap_or("no item judged in both arms")
                ),
            });
        }
        Verdict {
            status: Status::Trusted,
            sentence: format!(
                "The judges agree enough to be believed by this experiment's rule: IRR {irr} ≥ the floor {} ([trust] irr_floor), over {} and {}{}. Judge-derived figures are reported.",
                v.thresholds.irr_floor,
                count(v.items as u64, "item", "items"),
                count(v.judges as u64, "judge", "judges"),
                guideline(v.inter_rater_reliability)
            ),
            details,
        }
    } else {
        let held = m.withheld(DeltaTable::Review);
        let mut what: Vec<String> = held.iter().map(|h| h.replace('_', " ")).collect();
        let judges = m.withheld(DeltaTable::Scores);
        if !judges.is_empty() {
            what.push(format!(
                "the judge {} {}",
                if judges.len() == 1 {
                    "scorer"
                } else {
                    "scorers"
                },
                and_list(judges)
            ));
        }
        if m.lift.is_some() {
            what.push("the lift".into());
        }
        Verdict {
            status: Status::Withheld,
            sentence: format!(
                "The judges are not trusted ({}, {}): {}. {} {} withheld; the mechanical figures stand.",
                count(v.items as u64, "item", "items"),
                count(v.judges as u64, "judge", "judges"),
                failed_checks(v, &irr),
                capitalized(&if what.is_empty() { "judge-derived figures".to_string() } else { and_list(&what) }),
                if what.len() == 1 { "is" } else { "are" }
            ),
            details: v.trust_reasons.clone(),
        }
    }
}

/// Which of the trust verdict's checks failed, and on how many items, with the key that sets
/// each threshold: "check (2) failed: 1 item spreads more than 0.5 ([trust] spread_ceiling);
/// IRR 0.837 is above its floor 0.2".
fn failed_checks(v: &TrustVerdict, irr: &str) -> String {
    let failed = v.failures();
    let t = &v.thresholds;
    let mut parts = Vec::new();
    if failed.irr {
        parts.push(format!(
            "check (1) failed: the judges' agreement IRR {irr} is below the floor {} ([trust] irr_floor)",
            t.irr_floor
        ));
    }
    if failed.spread > 0 {
        parts.push(format!(
            "check (2) failed: {} more than {} ([trust] spread_ceiling)",
            count(
                failed.spread as u64,
                "item's judges spread",
                "items' judges spread"
            ),
            t.spread_ceiling
        ));
    }
    if failed.survivors > 0 {
        parts.push(format!(
            "check (3) failed: {} fewer than {} surviving judges ([trust] min_survivors)",
            count(failed.survivors as u64, "item keeps", "items keep"),
            t.min_survivors
        ));
    }
    parts.extend(v.other_reasons().iter().cloned());
    if !failed.irr {
        parts.push(format!(
            "their agreement, IRR {irr}, is above its floor {}",
            t.irr_floor
        ));
    }
    parts.join("; ")
}

/// Where α stands against Krippendorff's own guideline (α ≥ 0.800 to rely on the data, ≥ 0.667
/// for tentative conclusions): the trust gate's floor is the experiment's choice, and a reader
/// should see both.
fn guideline(alpha: Option<f64>) -> &'static str {
    match alpha {
        Some(a) if a >= 0.8 => "; that is also above Krippendorff's 0.800 for reliable conclusions",
        Some(a) if a >= 0.667 => "; Krippendorff's guideline counts it tentative (≥ 0.667, below 0.800 for reliable conclusions)",
        Some(_) => "; note that Krippendorff's own guideline asks for 0.667 even for tentative conclusions, so read the judge-derived figures with care",
        None => "",
    }
}

fn headline(m: &Metrics, v: &Verdict) -> String {
    let mut parts = Vec::new();
    if m.incomplete.is_some() {
        parts.push("INCOMPLETE collection".to_string());
    }
    if !m.inputs_suspect.is_empty() {
        parts.push("INPUTS SUSPECT (most findings of an arm malformed)".to_string());
    }
    let judges = match (v.status, &m.trust) {
        (Status::Suspect, Some(t)) if t.trustworthy => Status::Trusted,
        (Status::Suspect, Some(_)) => Status::Withheld,
        (Status::Suspect, None) => Status::NoJudges,
        (other, _) => other,
    };
    parts.push(match judges {
        Status::Trusted => "judges trusted".to_string(),
        Status::Withheld => "judges not trusted".to_string(),
        Status::NoJudges if m.scores.is_some() && m.review.is_none() && m.queries.is_none() => {
            "no judge panel".to_string()
        }
        Status::NoJudges => "no judge verdicts".to_string(),
        Status::Suspect => unreachable!("the judges' status was taken above"),
    });
    if let Some(l) = &m.lift {
        parts.push(match (l.withheld, l.value) {
            (true, _) => "lift withheld".into(),
            (false, Some(x)) => format!("lift {x:+.3} {}", ci(l.ci, 3)),
            (false, None) => "no lift".into(),
        });
    }
    // What a target (or a query) costs in each arm, where the calls reported it
    // (docs/reference.md, "Cost and latency").
    use crate::replay::usage::{Part, ITEM_USAGE, QUERY_USAGE};
    let costs = [
        (
            m.review.as_ref().map(|r| &r.delta),
            crate::replay::review_metrics::COST_USD.metric().name,
            "target",
        ),
        (
            m.queries.as_ref().map(|q| &q.delta),
            Part::cost_of(&QUERY_USAGE),
            "query",
        ),
        (
            m.scores.as_ref().map(|s| &s.delta),
            Part::cost_of(&ITEM_USAGE),
            "item",
        ),
    ];
    for (table, name, per) in costs {
        let Some(d) = table.and_then(|t| t.get(name)) else {
            continue;
        };
        let relative = d.relative.map_or(String::new(), |r| {
            let interval = r.ci.map_or(String::new(), |[lo, hi]| {
                format!(" [{:+.0}%, {:+.0}%]", 100.0 * lo, 100.0 * hi)
            });
            format!(" ({:+.0}%{interval})", 100.0 * r.value)
        });
        parts.push(format!(
            "cost per {per} ${:.4} → ${:.4}{relative}",
            d.paired.baseline, d.paired.treatment
        ));
    }
    if !m.primary.is_empty() {
        parts.extend(m.primary.iter().map(|name| primary_part(m, name)));
        return parts.join(" · ");
    }
    if let Some(r) = &m.review {
        let (b, t) = (&r.arms.baseline, &r.arms.treatment);
        parts.push(format!(
            "distinct values per target {:.1} → {:.1}",
            b.figure(DISTINCT_VALUES.mean()),
            t.figure(DISTINCT_VALUES.mean())
        ));
        // The table's figure (the mean per target), as the table shows it, so the two agree.
        match r.delta.get("promotion_rate") {
            Some(d) => parts.push(format!(
                "promotion rate (mean per target) {:.3} → {:.3}",
                d.paired.baseline, d.paired.treatment
            )),
            None => parts.push(format!(
                "promotion rate (pooled) {} → {}",
                pct(b.promotion_rate),
                pct(t.promotion_rate)
            )),
        }
    }
    if let Some(sc) = &m.scores {
        const SHOWN: usize = 3;
        let scorers = sc.scorer_deltas().count();
        for (scorer, d) in sc.scorer_deltas().take(SHOWN) {
            parts.push(format!(
                "{scorer} {:.3} → {:.3} (p adj. {})",
                d.paired.baseline,
                d.paired.treatment,
                d.p_adjusted.map_or("—".into(), fmt_p)
            ));
        }
        if scorers > SHOWN {
            let more = scorers - SHOWN;
            parts.push(format!(
                "{more} more {}",
                if more == 1 { "scorer" } else { "scorers" }
            ));
        }
        for judge in m.withheld(DeltaTable::Scores) {
            parts.push(format!("{judge} withheld"));
        }
    }
    if let Some(q) = &m.queries {
        let (b, t) = (&q.arms.baseline, &q.arms.treatment);
        parts.push(format!(
            "recovery gate {} → {}",
            pct(b.recovery_gate_rate),
            pct(t.recovery_gate_rate)
        ));
        if let (Some(cb), Some(ct)) = (&b.calibration, &t.calibration) {
            parts.push(format!(
                "ECE {:.3} → {:.3}",
                cb.calibration.ece, ct.calibration.ece
            ));
        }
    }
    parts.join(" · ")
}

/// A primary metric in the headline: both arms, and the adjusted p-value of its family.
fn primary_part(m: &Metrics, name: &str) -> String {
    let Some(c) = crate::replay::compared_named(name) else {
        return format!("{name}: unknown metric");
    };
    let (words, places) = (name.replace('_', " "), c.places);
    match m.delta(name) {
        Some(d) => format!(
            "{words} {:.places$} → {:.places$} (p adj. {})",
            d.paired.baseline,
            d.paired.treatment,
            d.p_adjusted.map_or("—".into(), fmt_p)
        ),
        None if withheld(m, name) => format!("{words} withheld"),
        None => format!("{words}: no pairs"),
    }
}

/// "Is this A/B big enough?" for one delta table (docs/guides/ab-rubric-change.md): McNemar's
/// floor when it is above 0.05, the minimum detectable effects of the metrics the decision
/// reads (else the primary metrics, else the summary's) beside the observed differences, and
/// the `plan` command that sizes the next study.
fn big_enough(
    m: &Metrics,
    table: crate::replay::DeltaTable,
    deltas: &std::collections::BTreeMap<String, Delta>,
) -> Option<Block> {
    use crate::stats::holm::{pairs_for_floor, sign_test_floor};
    use crate::stats::power::{ALPHA, POWER};
    use crate::stats::test::Test;
    deltas.values().map(|d| d.paired.pairs).max()?;
    let units = table.units();
    let mut s = String::from("Is this A/B big enough?");
    // McNemar's exact test (0/1 outcomes) cannot go below 2·0.5ⁿ with n discordant units.
    let floored: Vec<String> = deltas
        .iter()
        .filter(|(_, d)| d.paired.test == Test::Mcnemar)
        .filter_map(|(name, d)| {
            // None discordant: nothing differs, and nothing is there to test.
            let n = d.paired.discordant.filter(|&n| n > 0)?;
            (sign_test_floor(n) > ALPHA).then(|| format!("{name} has {n}"))
        })
        .collect();
    if !floored.is_empty() {
        s += &format!(
            " McNemar's exact test (0/1 outcomes) cannot reach p < {ALPHA} with fewer than {} discordant {units} (those whose outcome differs between the arms): {}.",
            pairs_for_floor(ALPHA),
            floored.join(", ")
        );
    }
    let in_table = |c: &crate::replay::Compared| c.table == table && c.per_unit;
    let scores = table == DeltaTable::Scores;
    // The metrics the decision reads from this table, in its order.
    let decided: Vec<&str> = m.decision.as_ref().map_or_else(Vec::new, |d| {
        d.order
            .iter()
            .filter(|n| deltas.contains_key(n.as_str()))
            .filter(|n| crate::replay::compared_named(n).is_none_or(|c| in_table(&c)))
            .map(String::as_str)
            .collect()
    });
    let chosen: Vec<&str> = if !decided.is_empty() {
        decided.clone()
    } else if scores {
        deltas.keys().map(String::as_str).collect()
    } else if m.primary.is_empty() {
        crate::replay::compared()
            .into_iter()
            .filter(|c| in_table(c) && c.label.is_some())
            .map(|c| c.name)
            .collect()
    } else {
        m.primary
            .iter()
            .filter_map(|n| crate::replay::compared_named(n))
            .filter(in_table)
            .map(|c| c.name)
            .collect()
    };
    let reported: Vec<(&str, &Delta)> = chosen
        .into_iter()
        .filter_map(|name| deltas.get(name).map(|d| (name, d)))
        .collect();
    let mdes: Vec<String> = reported
        .iter()
        .map(|(name, d)| {
            format!(
                "{name} {} (observed {:+.3})",
                d.paired.mde.map_or("—".into(), |x| format!("{x:.3}")),
                d.paired.delta
            )
        })
        .collect();
    if !mdes.is_empty() {
        s += &format!(
            " The smallest true differences it would detect with {:.0}% power at two-sided {ALPHA}{}: {}.",
            100.0 * POWER,
            if !decided.is_empty() {
                ", the decision's metrics"
            } else if scores {
                ", per scorer"
            } else if m.primary.is_empty() {
                " (no primary metrics named: the summary's)"
            } else {
                ", primary metrics"
            },
            mdes.join("; ")
        );
    }
    // An observed difference inside its MDE: the A/B could not have told it from none.
    let under = |d: &Delta| d.paired.mde.is_some_and(|x| d.paired.delta.abs() < x);
    let small: Vec<&str> = reported
        .iter()
        .filter(|(_, d)| under(d))
        .map(|(name, _)| *name)
        .collect();
    if !small.is_empty() {
        s += &format!(
            " {}: the observed difference is smaller than the MDE, so a result of no change there says little.",
            and_list(&small.iter().map(|n| n.to_string()).collect::<Vec<_>>()),
        );
    }
    // The command for the metric most in need of a bigger A/B: the first whose observed
    // difference is inside its MDE, else the first whose differences vary.
    let plannable = |d: &Delta| d.paired.mde.is_some_and(|x| x > 0.0) && d.paired.delta != 0.0;
    let pick = reported
        .iter()
        .find(|(_, d)| plannable(d) && under(d))
        .or_else(|| reported.iter().find(|(_, d)| plannable(d)));
    if let Some((name, _)) = pick {
        s += &format!(
            " How many {units} the next A/B needs: calibench plan runs/{} --metric {} (add --effect for the difference that matters).",
            m.run_id,
            crate::output::shell_quote(name)
        );
    }
    Some(Block::Text(s))
}

/// What `p adj.` and `MDE` mean in a delta table.
fn adjusted_caption(m: &Metrics, deltas: &std::collections::BTreeMap<String, Delta>) -> String {
    let primary = deltas.keys().filter(|k| m.primary.contains(k)).count();
    let family = deltas.len() - primary;
    let holm = if primary > 0 {
        format!(
            "p adj.: Holm's adjustment over the {} primary metrics ({primary} here) and, for the rest, over this table's other {family}",
            m.primary.len()
        )
    } else {
        format!("p adj.: Holm's adjustment over this table's {family} p-values")
    };
    format!("{holm}. MDE: the smallest true difference these pairs would detect with 80% power at two-sided 0.05 (— for a figure that is not a mean of per-unit differences, or with fewer than 2 pairs).")
}

/// The figures that decide, one row each, from both halves of the run.
fn summary(m: &Metrics) -> Table {
    let mut rows = Vec::new();
    if let Some(r) = &m.review {
        rows.extend(metric_rows(m, &r.delta, summary_rows(DeltaTable::Review)));
    }
    if let Some(l) = &m.lift {
        let label = "judge composite (lift)";
        if l.withheld {
            rows.push(withheld_row(label));
        } else if let Some(p) = &l.paired {
            rows.push(delta_row(
                label,
                &Delta {
                    paired: p.clone(),
                    // Adjusted where it joins a family (a decision or primary metric).
                    p_adjusted: l.p_adjusted,
                    wilson: None,
                    mcnemar: None,
                    relative: None,
                },
                3,
            ));
        }
    }
    if let Some(q) = &m.queries {
        rows.extend(metric_rows(m, &q.delta, summary_rows(DeltaTable::Queries)));
    }
    if let Some(sc) = &m.scores {
        rows.extend(scorer_rows(m, sc));
    }
    Table {
        caption: Some(
            "Paired over the units both arms saw (targets for reviews, queries for traces, items for imported scores): the mean difference, its 95% bootstrap interval, the p-value of that mean (McNemar's exact test where every unit's value is 0 or 1, else the paired t-test), p adjusted by Holm over its family (the decision metrics, else the primary ones, else its table), and the minimum detectable effect by that test (80% power, two-sided 0.05). Rates here are means of per-target rates; the pooled rates (over every finding) are in the arm tables below."
                .into(),
        ),
        header: header(&DELTA_HEADER),
        rows,
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

fn about_rows(p: &Manifest) -> Vec<(String, String)> {
    let mut rows = vec![
        ("run id".to_string(), p.run_id.clone()),
        ("experiment".into(), p.experiment_file.clone()),
    ];
    // The figures are not the file's alone: say what the command line changed.
    for o in p.overrides() {
        rows.push(("set on the command line".into(), o.clone()));
    }
    rows.extend([
        ("calibench".into(), p.calibench_version.clone()),
        ("started".into(), p.started_at.clone()),
        ("finished".into(), p.finished_at.clone()),
        ("seed".into(), p.seed.to_string()),
        ("bootstrap replicates".into(), p.bootstrap.to_string()),
    ]);
    for f in p.inputs() {
        rows.push((
            format!("input {}", f.path),
            format!("sha256 {} ({} bytes)", f.sha256, f.bytes),
        ));
    }
    rows
}
