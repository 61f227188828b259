//! What a report says, independent of its format: the verdict, the baseline-vs-treatment table,
//! and a section per part of the run, each opening with a one-line plain reading.
//!
//! [`build`] is pure: it reads the metrics (and the run's manifest for provenance) and returns a
//! [`Document`]; `markdown` and `html` only lay the same document out, so the two formats cannot
//! say different things.

use serde::Deserialize;

use crate::model::{Agreement, Delta, Metrics, PerArm, ScoresSection};
use crate::replay::query_metrics::{CiFigure, QueryArmMetrics};
use crate::replay::review_metrics::{
    ArmMetrics, FailedCall, Id, ACTIONABLE, AUTO_APPLY, DECISIONS, DEMOTED, DISTINCT_VALUES,
    DROPPED, EXTERNALIZED, FAILED_REVIEWERS, FINDINGS_RAW, FYI, LINT_SUPPRESSED, MALFORMED, MERGED,
    ON_SUPPRESSED_LINE, OVER_BUDGET, PRE_EXISTING, REJECTED, SKIPPED, VALIDATED,
    VALIDATION_SELECTED, VALIDATOR_CALLS, VALIDATOR_FAILED, VALIDATOR_MISSING,
};
use crate::replay::{delta_rows, summary_rows, DeltaTable};
use crate::text::fmt_p;
use crate::trust::TrustVerdict;

/// The parts of `manifest.json` a report shows.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Provenance {
    pub run_id: String,
    pub calibench_version: String,
    pub experiment_file: String,
    pub seed: u64,
    pub bootstrap: usize,
    pub started_at: String,
    pub finished_at: String,
    pub inputs: Vec<InputFile>,
    /// `--set KEY=VALUE` overrides of the experiment file, as given.
    #[serde(default)]
    pub overrides: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct InputFile {
    pub path: String,
    pub sha256: String,
    pub bytes: usize,
}

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
    pub sentence: String,
    pub details: Vec<String>,
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
    /// Its word: `better`, `trusted`.
    pub label: &'static str,
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
                label: d.status.label(),
                class: d.status.class(),
                mark: None,
                sentence: &d.sentence,
                details: &d.details,
            },
            Statement {
                id: "verdict",
                what: "Verdict",
                label: v.status.label(),
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
        numeric(fmt_p(p.p_value)),
        numeric(d.p_adjusted.map_or("—".into(), fmt_p)),
        opt(p.mde, places),
    ]
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
pub fn build(m: &Metrics, about: &Provenance, plots: &[&'static str]) -> Document {
    let has = |name: &'static str| plots.contains(&name);
    let verdict = verdict(m);
    let mut sections = Vec::new();
    if let Some(r) = &m.review {
        sections.push(review_section(m, r, &has));
        if let Some(c) = controls_section(m, r, &has) {
            sections.push(c);
        }
    }
    if let Some(q) = &m.queries {
        sections.push(query_section(m, q, &has));
    }
    if let Some(sc) = &m.scores {
        sections.push(scores_section(m, sc, &has));
    }
    if let Some(a) = &m.agreement {
        sections.push(agreement_section(a, &has));
    }
    sections.push(trust_section(m));
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
    let Some(d) = &m.decision else {
        return DecisionLine {
            status: DecisionStatus::None,
            sentence: "No decision: the experiment does not say what better means. Name the metrics that must change, and how, in a [decision] table (for example precision = \"increase\", distinct_values = \"decrease\"), or list primary metrics that have a better direction.".into(),
            details: caveats,
        };
    };
    let details = caveats
        .into_iter()
        .chain(d.order.iter().zip(&d.reasons).filter_map(|(name, reason)| {
            let x = d.metrics.get(name)?;
            Some(format!(
                "{name} ({}): {} — {reason}",
                x.want.name(),
                x.outcome.words()
            ))
        }))
        .collect();
    DecisionLine {
        status: DecisionStatus::Decided(d.verdict),
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
            format!("Incomplete: {note}. Replayed with --allow-incomplete; finish the collection before trusting these figures."),
        );
    }
    v
}

fn trust_verdict(m: &Metrics) -> Verdict {
    let Some(v) = &m.trust else {
        let sentence = if m.scores.is_some() && m.review.is_none() && m.queries.is_none() {
            "No judge panel: the experiment names no scorer in [scores] judges, so every scorer is read as a mechanical measurement and no trust verdict is given."
        } else {
            "No judge verdicts in this corpus: nothing judge-derived is reported, and every figure below comes from replaying the recorded outputs."
        };
        return Verdict {
            status: Status::NoJudges,
            sentence: sentence.into(),
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
                    "Lift (treatment − baseline judge composite): {x:+.3} {} over {} items judged in both arms.",
                    ci(c, 3),
                    l.items
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
                "The judges agree enough to be believed by this experiment's rule: IRR {irr} ≥ the floor {} ([trust] irr_floor), over {} items and {} judges{}. Judge-derived figures are reported.",
                v.thresholds.irr_floor,
                v.items,
                v.judges,
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
                "The judges do not agree enough to be believed (IRR {irr}, {} items, {} judges): {} {} withheld; the mechanical figures stand.",
                v.items,
                v.judges,
                if what.is_empty() { "judge-derived figures".to_string() } else { and_list(&what) },
                if what.len() == 1 { "is" } else { "are" }
            ),
            details: v.trust_reasons.clone(),
        }
    }
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
        parts.push(format!(
            "promotion rate (pooled) {} → {}",
            pct(b.promotion_rate),
            pct(t.promotion_rate)
        ));
    }
    if let Some(sc) = &m.scores {
        const SHOWN: usize = 3;
        for (scorer, d) in sc.delta.iter().take(SHOWN) {
            parts.push(format!(
                "{scorer} {:.3} → {:.3} (p adj. {})",
                d.paired.baseline,
                d.paired.treatment,
                d.p_adjusted.map_or("—".into(), fmt_p)
            ));
        }
        if sc.delta.len() > SHOWN {
            let more = sc.delta.len() - SHOWN;
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

/// "Is this A/B big enough?" for one delta table (docs/guides/ab-rubric-change.md): the sign test's floor when it is
/// above 0.05, the minimum detectable effects of the primary metrics (of the summary's when
/// the experiment names none) beside the observed differences, and the `plan` command that
/// sizes the next study.
fn big_enough(
    m: &Metrics,
    table: crate::replay::DeltaTable,
    deltas: &std::collections::BTreeMap<String, Delta>,
) -> Option<Block> {
    use crate::stats::holm::{pairs_for_floor, sign_test_floor};
    use crate::stats::power::{ALPHA, POWER};
    let pairs = deltas.values().map(|d| d.paired.pairs).max()?;
    let units = table.units();
    let mut s = String::from("Is this A/B big enough?");
    let floor = sign_test_floor(pairs);
    if floor > ALPHA {
        s += &format!(
            " With {pairs} {units} the sign test cannot reach p < {}: record at least {} {units} for {ALPHA}.",
            trim(floor),
            pairs_for_floor(ALPHA)
        );
    }
    let in_table = |c: &crate::replay::Compared| c.table == table && c.per_unit;
    let scores = table == DeltaTable::Scores;
    let chosen: Vec<&str> = if scores {
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
            if scores {
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

/// A p-value floor as a short decimal: 0.125, 0.0625.
fn trim(x: f64) -> String {
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
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
                    p_adjusted: None,
                    wilson: None,
                    mcnemar: None,
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
            "Paired over the units both arms saw (targets for reviews, queries for traces, items for imported scores): the mean difference, its 95% bootstrap interval, the sign test's p, p adjusted by Holm over its family (the decision metrics, else the primary ones, else its table), and the minimum detectable effect (80% power, two-sided 0.05). Rates here are means of per-target rates; the pooled rates (over every finding) are in the arm tables below."
                .into(),
        ),
        header: header(&DELTA_HEADER),
        rows,
    }
}

fn review_section(
    m: &Metrics,
    r: &crate::model::ReviewSection,
    has: &dyn Fn(&'static str) -> bool,
) -> Section {
    let (b, t) = (&r.arms.baseline, &r.arms.treatment);
    let reading = format!(
        "Under {}, findings carry {:.1} distinct confidence values per target against {:.1} under {}; {} of merged findings are promoted against {}, and {} actionable findings per target reach the user against {}.",
        t.policy,
        t.figure(DISTINCT_VALUES.mean()),
        b.figure(DISTINCT_VALUES.mean()),
        b.policy,
        pct(t.promotion_rate),
        pct(b.promotion_rate),
        per_target(t.figure(ACTIONABLE.sum()), t.targets),
        per_target(b.figure(ACTIONABLE.sum()), b.targets),
    );
    // With the precision controls, what reaches the user is what survives the validation pass.
    let reading = match (&b.controls, &t.controls) {
        (Some(_), Some(_)) => {
            reading.replace(
                "actionable findings per target reach the user against",
                "actionable findings per target pass the gate against",
            ) + &format!(
                " After the validation pass, {} per target reach the user against {}.",
                per_target(t.figure(EXTERNALIZED.sum()), t.targets),
                per_target(b.figure(EXTERNALIZED.sum()), b.targets),
            )
        }
        _ => reading,
    };
    let mut blocks = Vec::new();
    if has("review-values") {
        blocks.push(Block::Plot("review-values"));
    }
    let rows = metric_rows(m, &r.delta, delta_rows(DeltaTable::Review));
    let lead = format!(
        "Per target, mean over runs, paired over the {} targets both arms reviewed.",
        r.delta.values().next().map_or(0, |d| d.paired.pairs)
    );
    blocks.push(Block::Table(delta_table(m, &r.delta, rows, &lead)));
    blocks.extend(big_enough(m, DeltaTable::Review, &r.delta));
    if has("review-tiers") {
        blocks.push(Block::Plot("review-tiers"));
    }
    if has("review-rates") {
        blocks.push(Block::Plot("review-rates"));
    }
    blocks.push(Block::Table(arm_table(b, t)));
    let calibration_withheld = withheld(m, "anchor_calibration");
    if calibration_withheld {
        blocks.push(Block::Text(
            "Anchor calibration (judged quality by confidence): withheld, because the judges are not trustworthy.".into(),
        ));
    } else if !b.anchor_calibration.is_empty() || !t.anchor_calibration.is_empty() {
        if has("review-calibration") {
            blocks.push(Block::Plot("review-calibration"));
        }
        blocks.push(Block::Table(anchor_table(b, t)));
    }
    Section {
        id: "review",
        title: format!(
            "Review replay ({} mode)",
            format!("{:?}", r.mode).to_lowercase()
        ),
        reading,
        blocks,
    }
}

/// Code review's precision controls (docs/guides/ab-rubric-change.md), when the experiment replays them: what the
/// validation pass removed and at what cost, what the skip rules saved and hid, and what
/// lint-ignore dropped.
fn controls_section(
    m: &Metrics,
    r: &crate::model::ReviewSection,
    has: &dyn Fn(&'static str) -> bool,
) -> Option<Section> {
    let (b, t) = (&r.arms.baseline, &r.arms.treatment);
    let (cb, ct) = (b.controls.as_ref()?, t.controls.as_ref()?);
    let one = |x: f64| {
        if x.fract() == 0.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    };
    let mut sentences = Vec::new();
    for (arm, a, c) in [("baseline", b, cb), ("treatment", t, ct)] {
        let mut parts = Vec::new();
        if a.figure(VALIDATION_SELECTED.sum()) > 0.0 {
            let judged = match (c.rejected_composite, c.validated_composite) {
                (Some(r), Some(v)) => {
                    format!(" (judges rate the rejected {r:.2} against {v:.2} for the validated)")
                }
                _ if withheld(m, "rejected_composite") => {
                    " (the judges' ratings of them are withheld)".into()
                }
                _ => String::new(),
            };
            let mut lost = Vec::new();
            for (id, what) in [
                (VALIDATOR_FAILED, "failed"),
                (VALIDATOR_MISSING, "had no recorded call"),
                (OVER_BUDGET, "were over budget"),
            ] {
                if a.figure(id.sum()) > 0.0 {
                    lost.push(format!("{} {what}", one(a.figure(id.sum()))));
                }
            }
            let lost = if lost.is_empty() {
                String::new()
            } else {
                format!("; {}", and_list(&lost))
            };
            parts.push(format!(
                "the validator ran on {} findings ({} calls) and rejected {}{judged}{lost}: {} of {} actionable findings reached the user.",
                one(a.figure(VALIDATION_SELECTED.sum())),
                one(a.figure(VALIDATOR_CALLS.sum())),
                one(a.figure(REJECTED.sum())),
                one(a.figure(EXTERNALIZED.sum())),
                one(a.figure(ACTIONABLE.sum())),
            ));
        }
        if c.skipped_targets > 0 {
            parts.push(format!(
                "Skip rules skipped {} target{}, saving {} reviewer calls and hiding {} actionable finding{} ({} at P0/P1).",
                c.skipped_targets,
                if c.skipped_targets == 1 { "" } else { "s" },
                one(c.skipped_calls),
                one(c.lost_actionable),
                if c.lost_actionable == 1.0 { "" } else { "s" },
                one(c.lost_p0_p1),
            ));
        }
        if a.figure(LINT_SUPPRESSED.sum()) > 0.0 {
            parts.push(format!(
                "Lint-ignore dropped {} findings on suppressed lines.",
                one(a.figure(LINT_SUPPRESSED.sum()))
            ));
        }
        if !parts.is_empty() {
            sentences.push(format!("In the {arm} arm, {}", parts.join(" ")));
        }
    }
    if sentences.is_empty() {
        sentences.push("No precision control changed a finding in either arm.".into());
    } else {
        sentences.push("(Counts are summed over targets, mean over runs.)".into());
    }
    let mut blocks = Vec::new();
    if has("review-funnel") {
        blocks.push(Block::Plot("review-funnel"));
    }
    let composite = |x: Option<f64>, a: &str| {
        if withheld(m, a) {
            Cell::Withheld
        } else {
            opt(x, 2)
        }
    };
    let rows = vec![
        figures_row("actionable (the gate's count)", &[ACTIONABLE], b, t),
        figures_row("selected for validation", &[VALIDATION_SELECTED], b, t),
        figures_row("validator calls (the cost)", &[VALIDATOR_CALLS], b, t),
        figures_row("validated / rejected", &[VALIDATED, REJECTED], b, t),
        figures_row(
            "failed / missing / over budget",
            &[VALIDATOR_FAILED, VALIDATOR_MISSING, OVER_BUDGET],
            b,
            t,
        ),
        figures_row("externalized (reach the user)", &[EXTERNALIZED], b, t),
        vec![
            text("judge composite: rejected / validated"),
            pair(
                composite(cb.rejected_composite, "rejected_composite"),
                composite(cb.validated_composite, "validated_composite"),
            ),
            pair(
                composite(ct.rejected_composite, "rejected_composite"),
                composite(ct.validated_composite, "validated_composite"),
            ),
        ],
        vec![
            text("on a suppressed line / lint-suppressed"),
            numeric(format!(
                "{} / {:.2}",
                b.figures
                    .value(ON_SUPPRESSED_LINE.sum())
                    .map_or("unknown".into(), |x| format!("{x:.2}")),
                b.figure(LINT_SUPPRESSED.sum())
            )),
            numeric(format!(
                "{} / {:.2}",
                t.figures
                    .value(ON_SUPPRESSED_LINE.sum())
                    .map_or("unknown".into(), |x| format!("{x:.2}")),
                t.figure(LINT_SUPPRESSED.sum())
            )),
        ],
        vec![
            text("skipped targets / reviewer calls saved"),
            numeric(format!("{} / {:.2}", cb.skipped_targets, cb.skipped_calls)),
            numeric(format!("{} / {:.2}", ct.skipped_targets, ct.skipped_calls)),
        ],
        vec![
            text("hidden by skipping: actionable / P0–P1"),
            numeric(format!("{:.2} / {:.2}", cb.lost_actionable, cb.lost_p0_p1)),
            numeric(format!("{:.2} / {:.2}", ct.lost_actionable, ct.lost_p0_p1)),
        ],
    ];
    blocks.push(Block::Table(Table {
        caption: Some(
            "Per arm: counts summed over targets, mean over runs; skipped targets counted once."
                .into(),
        ),
        header: header(&["", "baseline", "treatment"]),
        rows,
    }));
    let skipped: Vec<String> = [("baseline", b), ("treatment", t)]
        .iter()
        .flat_map(|(arm, a)| {
            let mut seen: Vec<(String, String)> = Vec::new();
            for row in &a.per_target {
                if let crate::replay::review_metrics::Figure::Label(Some(rule)) =
                    row.figure(SKIPPED)
                {
                    if !seen.iter().any(|(t, _)| *t == row.target) {
                        seen.push((row.target.clone(), rule.clone()));
                    }
                }
            }
            seen.into_iter()
                .map(move |(target, rule)| format!("{arm}: {target}, by the rule {rule}"))
        })
        .collect();
    if !skipped.is_empty() {
        blocks.push(Block::Text(
            "Targets the skip rules kept from review:".into(),
        ));
        blocks.push(Block::List(skipped));
    }
    Some(Section {
        id: "controls",
        title: "Precision controls (validation pass, skip rules, lint-ignore)".into(),
        reading: sentences.join(" "),
        blocks,
    })
}

/// Two cells in one: `0.31 / 0.74`, or withheld when either is.
fn pair(a: Cell, b: Cell) -> Cell {
    match (&a, &b) {
        (Cell::Withheld, _) | (_, Cell::Withheld) => Cell::Withheld,
        _ => numeric(format!("{} / {}", a.text(), b.text())),
    }
}

fn per_target(sum: f64, targets: usize) -> String {
    format!("{:.1}", sum / targets.max(1) as f64)
}

fn arm_table(b: &ArmMetrics, t: &ArmMetrics) -> Table {
    let rate = |x: f64, c: Option<[f64; 2]>| numeric(format!("{x:.3} {}", interval(c, 2)));
    let rows: Vec<Vec<Cell>> = vec![
        vec![text("policy"), text(&b.policy), text(&t.policy)],
        vec![
            text("targets × runs"),
            numeric(format!("{} × {}", b.targets, b.runs)),
            numeric(format!("{} × {}", t.targets, t.runs)),
        ],
        figures_row("findings (raw)", &[FINDINGS_RAW], b, t),
        figures_row("merged", &[MERGED], b, t),
        vec![
            text("corroboration rate, pooled over targets [95% Wilson]"),
            rate(b.corroboration_rate, b.rate_ci.corroboration_rate),
            rate(t.corroboration_rate, t.rate_ci.corroboration_rate),
        ],
        vec![
            text("promotion rate, pooled over targets [95% Wilson]"),
            rate(b.promotion_rate, b.rate_ci.promotion_rate),
            rate(t.promotion_rate, t.rate_ci.promotion_rate),
        ],
        figures_row(
            "actionable / FYI / dropped",
            &[ACTIONABLE, FYI, DROPPED],
            b,
            t,
        ),
        figures_row("decisions / auto-apply", &[DECISIONS, AUTO_APPLY], b, t),
        figures_row("demoted / pre-existing", &[DEMOTED, PRE_EXISTING], b, t),
    ];
    Table {
        caption: Some("Per arm: counts summed over targets, mean over runs.".into()),
        header: header(&["", "baseline", "treatment"]),
        rows,
    }
}

/// A row of arm figures (sums over targets), each to 2 places and several joined by " / ": `1.50 / 0.25`.
fn figures_row(label: &str, ids: &[Id], b: &ArmMetrics, t: &ArmMetrics) -> Vec<Cell> {
    let cell = |a: &ArmMetrics| {
        let parts: Vec<String> = ids
            .iter()
            .map(|id| format!("{:.2}", a.figure(id.sum())))
            .collect();
        numeric(parts.join(" / "))
    };
    vec![text(label), cell(b), cell(t)]
}

fn anchor_table(b: &ArmMetrics, t: &ArmMetrics) -> Table {
    let mut rows = Vec::new();
    for (arm, a) in [("baseline", b), ("treatment", t)] {
        for c in &a.anchor_calibration {
            rows.push(vec![
                text(arm),
                text(&c.value),
                numeric(c.count.to_string()),
                num(
                    c.mean_confidence,
                    if a.scale == crate::policy::Scale::Anchor {
                        1
                    } else {
                        3
                    },
                ),
                num(c.mean_composite, 3),
            ]);
        }
    }
    Table {
        caption: Some("Anchor calibration: judged findings by final confidence.".into()),
        header: header(&[
            "arm",
            "confidence",
            "findings",
            "mean confidence",
            "mean judge composite",
        ]),
        rows,
    }
}

fn query_section(
    m: &Metrics,
    q: &crate::model::QuerySection,
    has: &dyn Fn(&'static str) -> bool,
) -> Section {
    let (b, t) = (&q.arms.baseline, &q.arms.treatment);
    let mut reading = format!(
        "The recovery gate fires on {} of queries under {} against {} under {}",
        pct(t.recovery_gate_rate),
        t.policy,
        pct(b.recovery_gate_rate),
        b.policy
    );
    if let (Some(cb), Some(ct)) = (&b.calibration, &t.calibration) {
        reading += &format!(
            "; calibration error (ECE) {}",
            change(cb.calibration.ece, ct.calibration.ece, 3)
        );
    }
    if let (Some(ab), Some(at)) = (b.final_accuracy, t.final_accuracy) {
        reading += &format!("; final accuracy {}", change(ab, at, 3));
    }
    reading += ".";
    let mut blocks = Vec::new();
    blocks.push(Block::Table(query_arm_table(b, t)));
    if has("query-confidence") {
        blocks.push(Block::Plot("query-confidence"));
    }
    let rows = metric_rows(m, &q.delta, delta_rows(DeltaTable::Queries));
    let lead = format!(
        "Paired over the {} (query, run) pairs both arms replayed.",
        q.delta.values().next().map_or(0, |d| d.paired.pairs)
    );
    blocks.push(Block::Table(delta_table(m, &q.delta, rows, &lead)));
    blocks.extend(big_enough(m, DeltaTable::Queries, &q.delta));
    if has("query-reliability") {
        blocks.push(Block::Plot("query-reliability"));
    }
    if b.calibration.is_some() || t.calibration.is_some() {
        blocks.push(Block::Table(bins_table(b, t)));
    }
    Section {
        id: "queries",
        title: "Query replay (confidence models)".into(),
        reading,
        blocks,
    }
}

/// One delta row per scorer of the imported scores, in name order: withheld for a judge scorer
/// of an untrusted panel.
fn scorer_rows(m: &Metrics, sc: &ScoresSection) -> Vec<Vec<Cell>> {
    let held = m.withheld(DeltaTable::Scores);
    let mut names: Vec<&String> = sc.delta.keys().chain(held).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let kind = if sc.judges.contains(name) {
                "judge"
            } else {
                "scorer"
            };
            let label = format!("{name} ({kind})");
            match sc.delta.get(name) {
                Some(d) => delta_row(&label, d, 3),
                None => withheld_row(&label),
            }
        })
        .collect()
}

/// Imported scores: the arms' scorers, the paired delta per scorer, and the
/// model's own calibration where the logs carry confidences.
fn scores_section(m: &Metrics, sc: &ScoresSection, has: &dyn Fn(&'static str) -> bool) -> Section {
    let (b, t) = (&sc.arms.baseline, &sc.arms.treatment);
    let mut parts: Vec<String> = sc
        .delta
        .iter()
        .take(3)
        .map(|(scorer, d)| {
            let p = &d.paired;
            let test = if d.mcnemar.is_some() {
                "McNemar"
            } else {
                "sign test"
            };
            format!(
                "{scorer} {} over {} items ({test} p {})",
                change(p.baseline, p.treatment, 3),
                p.pairs,
                fmt_p(p.p_value)
            )
        })
        .collect();
    if sc.delta.len() > 3 {
        let more = sc.delta.len() - 3;
        parts.push(format!(
            "{more} more {} below",
            if more == 1 { "scorer" } else { "scorers" }
        ));
    }
    let held = m.withheld(DeltaTable::Scores);
    if !held.is_empty() {
        parts.push(format!(
            "the judge scorers' figures are withheld ({})",
            and_list(held)
        ));
    }
    let reading = if parts.is_empty() {
        format!(
            "No scorer scored an item in both arms: {} and {} share no scored item, so nothing is compared.",
            b.source, t.source
        )
    } else {
        format!("{} against {}: {}.", t.source, b.source, parts.join("; "))
    };
    let mut blocks = Vec::new();
    let mut scorers: Vec<&String> = b.scorers.keys().chain(t.scorers.keys()).collect();
    scorers.sort();
    scorers.dedup();
    let figures = |arm: &crate::replay::scores::ScoreArm, scorer: &str| {
        arm.scorers.get(scorer).map_or_else(
            || vec![numeric("—"), numeric("—"), numeric("—")],
            |f| {
                vec![
                    numeric(f.lines.to_string()),
                    numeric(f.missing.to_string()),
                    match f.mean {
                        Some(x) => num(x, 3),
                        None if held.iter().any(|h| h == scorer) => Cell::Withheld,
                        None => numeric("—"),
                    },
                ]
            },
        )
    };
    blocks.push(Block::Table(Table {
        caption: Some(format!(
            "Baseline {} ran task {} ({} items, at most {} repeats of one item); treatment {} ran {} ({} items, at most {} repeats). Lines are item × repeat; a missing line errored or was not scored and counts in no mean (never as 0). Means are over items, each item the mean of its scored repeats.",
            b.source, b.task, b.items, b.repeats, t.source, t.task, t.items, t.repeats
        )),
        header: header(&[
            "scorer",
            "baseline lines",
            "missing",
            "mean",
            "treatment lines",
            "missing",
            "mean",
        ]),
        rows: scorers
            .iter()
            .map(|s| {
                let mut row = vec![text(s.as_str())];
                row.extend(figures(b, s));
                row.extend(figures(t, s));
                row
            })
            .collect(),
    }));
    if b.task != t.task {
        blocks.push(Block::Text(format!(
            "The arms ran different tasks ({} and {}): items are paired by id only, so check that the ids name the same questions.",
            b.task, t.task
        )));
    }
    if has("scores-means") {
        blocks.push(Block::Plot("scores-means"));
    }
    let rows = scorer_rows(m, sc);
    if !rows.is_empty() {
        let lead = "Paired per scorer over the items both arms scored. p: McNemar's exact test where every paired score is 0 or 1 (the sign test over the discordant items), else the exact sign test.";
        blocks.push(Block::Table(delta_table(m, &sc.delta, rows, lead)));
    }
    let discordant: Vec<String> = sc
        .delta
        .iter()
        .filter_map(|(scorer, d)| {
            d.mcnemar.as_ref().map(|c| {
                let items = |n: usize| format!("{n} {}", if n == 1 { "item" } else { "items" });
                format!(
                    "{scorer}: {} scored 1 only under {}, {} only under {}; the other {} agree",
                    items(c.treatment_only),
                    t.source,
                    items(c.baseline_only),
                    b.source,
                    d.paired.pairs - c.treatment_only - c.baseline_only
                )
            })
        })
        .collect();
    if !discordant.is_empty() {
        blocks.push(Block::Text("McNemar's discordant items:".into()));
        blocks.push(Block::List(discordant));
    }
    blocks.extend(big_enough(m, DeltaTable::Scores, &sc.delta));
    let calibrated: Vec<&&String> = scorers
        .iter()
        .filter(|s| {
            [b, t].iter().any(|a| {
                a.scorers
                    .get(s.as_str())
                    .is_some_and(|f| f.calibration.is_some())
            })
        })
        .collect();
    if !calibrated.is_empty() {
        let cal = |a: &crate::replay::scores::ScoreArm, s: &str| {
            a.scorers
                .get(s)
                .and_then(|f| f.calibration.as_ref())
                .map_or_else(
                    || vec![numeric("—"), numeric("—"), numeric("—"), numeric("—")],
                    |c| {
                        vec![
                            numeric(c.n.to_string()),
                            num(c.ece, 3),
                            num(c.brier, 3),
                            opt(c.auroc, 3),
                        ]
                    },
                )
        };
        blocks.push(Block::Table(Table {
            caption: Some("The model's own confidence against whether it was right, over the scored lines that carry both (docs/guides/alpha-and-calibration.md).".into()),
            header: header(&[
                "scorer",
                "baseline n",
                "ECE",
                "Brier",
                "AUROC",
                "treatment n",
                "ECE",
                "Brier",
                "AUROC",
            ]),
            rows: calibrated
                .iter()
                .map(|s| {
                    let mut row = vec![text(s.as_str())];
                    row.extend(cal(b, s));
                    row.extend(cal(t, s));
                    row
                })
                .collect(),
        }));
        if has("scores-reliability") {
            blocks.push(Block::Plot("scores-reliability"));
        }
    }
    let unexplained: usize = [b, t]
        .iter()
        .flat_map(|a| a.scorers.values())
        .map(|f| f.confidence_without_outcome)
        .sum();
    if unexplained > 0 {
        blocks.push(Block::Text(format!(
            "{unexplained} scored lines carry a confidence but no correct field: they are left out of the calibration."
        )));
    }
    Section {
        id: "scores",
        title: "Imported scores".into(),
        reading,
        blocks,
    }
}

fn query_arm_table(b: &QueryArmMetrics, t: &QueryArmMetrics) -> Table {
    let with_ci = |m: &QueryArmMetrics, x: Option<f64>, figure: CiFigure| {
        x.map_or("—".into(), |x| {
            format!("{x:.3} {}", interval(m.interval(figure), 2))
        })
    };
    let cal =
        |m: &QueryArmMetrics,
         f: &dyn Fn(&crate::replay::query_metrics::QueryCalibration) -> String| {
            m.calibration.as_ref().map_or("—".into(), f)
        };
    type Figure = Box<dyn Fn(&QueryArmMetrics) -> String>;
    let figures: Vec<(&str, Figure)> = vec![
        ("policy", Box::new(|m| m.policy.clone())),
        ("queries", Box::new(|m| m.queries.to_string())),
        (
            "mean confidence [95% CI]",
            Box::new(move |m| with_ci(m, Some(m.confidence_mean), CiFigure::ConfidenceMean)),
        ),
        (
            "median confidence",
            Box::new(|m| format!("{:.3}", m.confidence_median)),
        ),
        (
            "distinct values",
            Box::new(|m| m.distinct_values.to_string()),
        ),
        (
            "bands strong / adequate / weak / failed",
            Box::new(|m| {
                let k = &m.bands;
                format!("{} / {} / {} / {}", k.strong, k.adequate, k.weak, k.failed)
            }),
        ),
        (
            "recovery gate fired [95% Wilson]",
            Box::new(move |m| {
                format!(
                    "{} ({}) {}",
                    m.recovery_fired,
                    pct(m.recovery_gate_rate),
                    interval(m.interval(CiFigure::RecoveryGateRate), 2)
                )
            }),
        ),
        (
            "stopped below the stop threshold",
            Box::new(|m| m.stopped.to_string()),
        ),
        (
            "first-pass success",
            Box::new(move |m| with_ci(m, m.first_pass_success, CiFigure::FirstPassSuccess)),
        ),
        (
            "final accuracy",
            Box::new(move |m| with_ci(m, m.final_accuracy, CiFigure::FinalAccuracy)),
        ),
        (
            "recovery success",
            Box::new(move |m| with_ci(m, m.recovery_success, CiFigure::RecoverySuccess)),
        ),
        (
            "ECE [95% CI]",
            Box::new(move |m| {
                cal(m, &|c| {
                    format!("{:.3} {}", c.calibration.ece, interval(c.ece_ci, 3))
                })
            }),
        ),
        (
            "Brier [95% CI]",
            Box::new(move |m| {
                cal(m, &|c| {
                    format!("{:.3} {}", c.calibration.brier, interval(c.brier_ci, 3))
                })
            }),
        ),
        (
            "AUROC",
            Box::new(move |m| {
                cal(m, &|c| {
                    c.calibration
                        .auroc
                        .map_or("—".into(), |a| format!("{a:.3}"))
                })
            }),
        ),
    ];
    let rows = figures
        .iter()
        .map(|(label, f)| {
            let cell = |s: String| {
                if *label == "policy" {
                    text(s)
                } else {
                    numeric(s)
                }
            };
            vec![text(*label), cell(f(b)), cell(f(t))]
        })
        .collect();
    Table {
        caption: Some("Per arm.".into()),
        header: header(&["", "baseline", "treatment"]),
        rows,
    }
}

fn bins_table(b: &QueryArmMetrics, t: &QueryArmMetrics) -> Table {
    let bins = |m: &QueryArmMetrics| {
        m.calibration
            .as_ref()
            .map(|c| c.calibration.bins.clone())
            .unwrap_or_default()
    };
    let (bb, tb) = (bins(b), bins(t));
    let rows = bb
        .iter()
        .zip(&tb)
        .filter(|(x, y)| x.count + y.count > 0)
        .map(|(x, y)| {
            let open = if x.lower == 0.0 { '[' } else { '(' };
            vec![
                text(format!("{open}{:.1}, {:.1}]", x.lower, x.upper)),
                numeric(x.count.to_string()),
                opt(x.mean_confidence, 3),
                opt(x.accuracy, 3),
                numeric(y.count.to_string()),
                opt(y.mean_confidence, 3),
                opt(y.accuracy, 3),
            ]
        })
        .collect();
    Table {
        caption: Some("Reliability bins (non-empty), baseline then treatment.".into()),
        header: header(&[
            "bin",
            "baseline n",
            "confidence",
            "accuracy",
            "treatment n",
            "confidence",
            "accuracy",
        ]),
        rows,
    }
}

fn agreement_section(
    a: &crate::model::AgreementSection,
    has: &dyn Fn(&'static str) -> bool,
) -> Section {
    let mut rows = Vec::new();
    let row = |label: &str, g: &Agreement| {
        vec![
            text(label),
            text(format!("{:?}", g.level).to_lowercase()),
            g.alpha.map_or_else(
                || {
                    text(
                        g.undefined_reason
                            .clone()
                            .unwrap_or_else(|| "undefined".into()),
                    )
                },
                |x| num(x, 3),
            ),
            numeric(
                g.ci.as_ref()
                    .map_or("—".into(), |c| match (c.lower, c.upper) {
                        (Some(lo), Some(hi)) => format!("[{lo:.3}, {hi:.3}]"),
                        _ => "—".into(),
                    }),
            ),
            numeric(g.units.to_string()),
            numeric(g.raters.to_string()),
        ]
    };
    let mut parts = Vec::new();
    if let Some(j) = &a.judges {
        rows.push(row("judges", j));
        if let Some(x) = j.alpha {
            parts.push(format!("the judges agree at α = {x:.3}"));
        }
    }
    let compare = |what: &str, p: &PerArm<Agreement>| match (p.baseline.alpha, p.treatment.alpha) {
        (Some(b), Some(t)) => Some(format!(
            "{what} {} under the treatment (α {t:.3} against {b:.3})",
            if (t - b).abs() < 0.0005 {
                "is unchanged"
            } else if t > b {
                "is higher"
            } else {
                "is lower"
            }
        )),
        _ => None,
    };
    if let Some(r) = &a.reviewers {
        rows.push(row("reviewers · baseline", &r.baseline));
        rows.push(row("reviewers · treatment", &r.treatment));
        parts.extend(compare("agreement among corroborating reviewers", r));
    }
    if let Some(r) = &a.runs {
        rows.push(row("run to run · baseline", &r.baseline));
        rows.push(row("run to run · treatment", &r.treatment));
        parts.extend(compare("run-to-run stability", r));
    }
    if let Some(r) = &a.repeats {
        rows.push(row("repeats · baseline", &r.baseline));
        rows.push(row("repeats · treatment", &r.treatment));
        parts.extend(compare("repeat-to-repeat stability of the scores", r));
    }
    let reading = if parts.is_empty() {
        "No agreement could be computed.".to_string()
    } else {
        capitalized(&parts.join("; ")) + "."
    };
    let mut blocks = vec![Block::Table(Table {
        caption: Some("Krippendorff's α with 95% bootstrap intervals; 0.667 is the usual floor for tentative conclusions, 0.8 for reliable ones.".into()),
        header: header(&["units", "level", "α", "95% CI", "units", "raters"]),
        rows,
    })];
    if has("alpha") {
        blocks.push(Block::Plot("alpha"));
    }
    Section {
        id: "agreement",
        title: "Agreement".into(),
        reading,
        blocks,
    }
}

fn trust_section(m: &Metrics) -> Section {
    let Some(v) = &m.trust else {
        let reading = if m.scores.is_some() && m.review.is_none() && m.queries.is_none() {
            "No judge panel: no scorer is named in [scores] judges, so there is no panel to trust and every scorer's figures are reported as measured."
        } else {
            "No judge verdicts: there is no panel to trust, and nothing judge-derived is reported."
        };
        return Section {
            id: "trust",
            title: "Trust".into(),
            reading: reading.into(),
            blocks: Vec::new(),
        };
    };
    let reading = if v.trustworthy {
        if m.review.is_none() && m.scores.is_some() {
            "Every check passed: the judge scorers' figures and the lift can be believed."
                .to_string()
        } else {
            "Every check passed: the judges' figures (precision, anchor calibration, lift) can be believed.".to_string()
        }
    } else {
        format!(
            "{} {} failed, so every judge-derived figure is withheld.",
            v.trust_reasons.len(),
            if v.trust_reasons.len() == 1 {
                "check"
            } else {
                "checks"
            }
        )
    };
    let mut blocks = vec![Block::Table(checks_table(v))];
    if !v.trust_reasons.is_empty() {
        blocks.push(Block::List(v.trust_reasons.clone()));
    }
    if let Some(note) = &v.irr_note {
        blocks.push(Block::Text(note.clone()));
    }
    let mut worst: Vec<_> = v.per_item_spread.iter().collect();
    worst.sort_by(|a, b| {
        b.spread
            .total_cmp(&a.spread)
            .then(a.item_id.cmp(&b.item_id))
    });
    let top: Vec<Vec<Cell>> = worst
        .iter()
        .take(5)
        .map(|s| {
            vec![
                text(&s.arm),
                text(&s.item_id),
                num(s.spread, 2),
                text(s.dimension.clone().unwrap_or_else(|| "—".into())),
                numeric(format!("{} of {}", s.survivors, s.judges)),
            ]
        })
        .collect();
    if !top.is_empty() {
        blocks.push(Block::Table(Table {
            caption: Some("The items the judges split on most.".into()),
            header: header(&["arm", "item", "spread", "dimension", "surviving judges"]),
            rows: top,
        }));
    }
    if let Some(l) = &m.lift {
        let row = if l.withheld {
            vec![
                text("lift"),
                Cell::Withheld,
                Cell::Withheld,
                numeric(l.items.to_string()),
            ]
        } else {
            vec![
                text("lift"),
                l.value
                    .map_or_else(|| numeric("—"), |x| numeric(format!("{x:+.3}"))),
                numeric(ci(l.ci, 3)),
                numeric(l.items.to_string()),
            ]
        };
        blocks.push(Block::Table(Table {
            caption: Some("Treatment − baseline judge composite, paired by item.".into()),
            header: header(&["", "value", "95% CI", "items"]),
            rows: vec![row],
        }));
    }
    Section {
        id: "trust",
        title: "Trust".into(),
        reading,
        blocks,
    }
}

fn checks_table(v: &TrustVerdict) -> Table {
    let th = &v.thresholds;
    let worst = v
        .per_item_spread
        .iter()
        .map(|s| s.spread)
        .fold(0.0, f64::max);
    let fewest = v.per_item_spread.iter().map(|s| s.survivors).min();
    let mark = |ok: bool| text(if ok { "pass" } else { "fail" });
    // Pass or fail exactly as the verdict decided each check.
    let irr_ok = th.irr_passes(v.inter_rater_reliability);
    let spread_ok = v.per_item_spread.iter().all(|s| th.spread_passes(s.spread));
    let survivors_ok = v
        .per_item_spread
        .iter()
        .all(|s| th.survivors_pass(s.survivors));
    Table {
        caption: Some(format!(
            "The three checks of the trust verdict over {} items and {} judges.",
            v.items, v.judges
        )),
        header: header(&["check", "value", "bound", "result"]),
        rows: vec![
            vec![
                text(format!(
                    "(1) inter-rater reliability (α, {} level)",
                    format!("{:?}", th.level).to_lowercase()
                )),
                opt(v.inter_rater_reliability, 3),
                numeric(format!("≥ {}", th.irr_floor)),
                mark(irr_ok),
            ],
            vec![
                text("(2) largest per-item spread"),
                num(worst, 2),
                numeric(format!("≤ {}", th.spread_ceiling)),
                mark(spread_ok),
            ],
            vec![
                text("(3) fewest surviving judges on an item"),
                numeric(fewest.map_or("—".into(), |f| f.to_string())),
                numeric(format!("≥ {}", th.min_survivors)),
                mark(survivors_ok),
            ],
        ],
    }
}

fn coverage_section(m: &Metrics) -> Section {
    let mut blocks = Vec::new();
    let mut parts = Vec::new();
    if let Some(r) = &m.review {
        let (b, t) = (&r.arms.baseline, &r.arms.treatment);
        parts.push(format!(
            "malformed findings per run: {}; failed reviewer calls per run: {} (baseline → treatment)",
            change(b.figure(MALFORMED.sum()), t.figure(MALFORMED.sum()), 2),
            change(b.figure(FAILED_REVIEWERS.sum()), t.figure(FAILED_REVIEWERS.sum()), 2)
        ));
        blocks.push(Block::Table(Table {
            caption: Some("Counts summed over targets, mean over runs.".into()),
            header: header(&["", "baseline", "treatment"]),
            rows: vec![
                figures_row(
                    "malformed findings (dropped by validation)",
                    &[MALFORMED],
                    b,
                    t,
                ),
                figures_row("failed reviewer calls", &[FAILED_REVIEWERS], b, t),
                figures_row("findings dropped by the gate", &[DROPPED], b, t),
            ],
        }));
        let mut reasons = Vec::new();
        for (arm, a) in [("baseline", b), ("treatment", t)] {
            for (why, count) in &a.malformed_reasons {
                reasons.push(format!("{arm}: {count} × {why}"));
            }
        }
        if !reasons.is_empty() {
            blocks.push(Block::Text(
                "Why findings were malformed (all targets and runs):".into(),
            ));
            blocks.push(Block::List(reasons));
        }
        let rejections: Vec<String> = [("baseline", b), ("treatment", t)]
            .iter()
            .filter_map(|(arm, a)| a.controls.as_ref().map(|c| (arm, c)))
            .flat_map(|(arm, c)| {
                c.rejection_reasons
                    .iter()
                    .map(move |(why, n)| format!("{arm}: {n} × {why}"))
            })
            .collect();
        if !rejections.is_empty() {
            blocks.push(Block::Text(
                "Why the validator rejected findings (all targets and runs):".into(),
            ));
            blocks.push(Block::List(rejections));
        }
        const SHOWN: usize = 12;
        let failed: Vec<(&str, &FailedCall)> = [("baseline", b), ("treatment", t)]
            .into_iter()
            .flat_map(|(arm, a)| a.failed_calls.iter().map(move |c| (arm, c)))
            .collect();
        if !failed.is_empty() {
            let mut items: Vec<String> = failed
                .iter()
                .take(SHOWN)
                .map(|(arm, c)| {
                    format!(
                        "{arm}: {} · {} · run {}: {}",
                        c.target,
                        c.reviewer,
                        c.run,
                        c.reason.as_deref().unwrap_or("no reason recorded")
                    )
                })
                .collect();
            if failed.len() > SHOWN {
                items.push(format!(
                    "… and {} more (`failed_calls` in metrics.json lists them all)",
                    failed.len() - SHOWN
                ));
            }
            blocks.push(Block::Text(
                "Failed reviewer calls (a failed rater, never zero findings):".into(),
            ));
            blocks.push(Block::List(items));
        }
        let mut labels: Vec<&String> = b
            .dropped_by_value
            .keys()
            .chain(t.dropped_by_value.keys())
            .collect();
        labels.sort();
        labels.dedup();
        if !labels.is_empty() {
            let rows = labels
                .iter()
                .map(|l| {
                    let get = |a: &ArmMetrics| {
                        a.dropped_by_value
                            .get(*l)
                            .map_or_else(|| numeric("—"), |x| num(*x, 2))
                    };
                    vec![text(*l), get(b), get(t)]
                })
                .collect();
            blocks.push(Block::Table(Table {
                caption: Some("Dropped findings by confidence (anchor value, or 0.05 bin on the float scale), summed over targets, mean over runs.".into()),
                header: header(&["confidence", "baseline", "treatment"]),
                rows,
            }));
        }
    }
    if let Some(q) = &m.queries {
        let (b, t) = (&q.arms.baseline, &q.arms.treatment);
        parts.push(format!(
            "{} of {} queries ended in an error and {} stopped below the stop threshold under the treatment ({} and {} under the baseline)",
            t.errors, t.queries, t.stopped, b.errors, b.stopped
        ));
        blocks.push(Block::Table(Table {
            caption: None,
            header: header(&["", "baseline", "treatment"]),
            rows: vec![
                vec![
                    text("queries replayed"),
                    numeric(b.queries.to_string()),
                    numeric(t.queries.to_string()),
                ],
                vec![
                    text("with a final outcome (labelled)"),
                    numeric(b.labelled.to_string()),
                    numeric(t.labelled.to_string()),
                ],
                vec![
                    text("ended in an error"),
                    numeric(b.errors.to_string()),
                    numeric(t.errors.to_string()),
                ],
                vec![
                    text("stopped below the stop threshold"),
                    numeric(b.stopped.to_string()),
                    numeric(t.stopped.to_string()),
                ],
            ],
        }));
    }
    if let Some(sc) = &m.scores {
        let (b, t) = (&sc.arms.baseline, &sc.arms.treatment);
        let total = |a: &crate::replay::scores::ScoreArm| -> (usize, usize) {
            a.scorers
                .values()
                .fold((0, 0), |(l, x), f| (l + f.lines, x + f.missing))
        };
        let ((bl, bm), (tl, tm)) = (total(b), total(t));
        parts.push(format!(
            "{tm} of {tl} imported score lines are missing under {} ({bm} of {bl} under {}): errored or unscored samples, counted in no mean",
            t.source, b.source
        ));
        let reasons: Vec<String> = [b, t]
            .iter()
            .flat_map(|a| {
                a.scorers.iter().flat_map(move |(scorer, f)| {
                    f.missing_reasons
                        .iter()
                        .map(move |(why, n)| format!("{} · {scorer}: {n} × {why}", a.source))
                })
            })
            .collect();
        if !reasons.is_empty() {
            blocks.push(Block::Text("Why score lines are missing:".into()));
            blocks.push(Block::List(reasons));
        }
    }
    let reading = if parts.is_empty() {
        "Nothing was replayed.".to_string()
    } else {
        capitalized(&parts.join("; ")) + "."
    };
    Section {
        id: "coverage",
        title: "Coverage".into(),
        reading,
        blocks,
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

fn about_rows(p: &Provenance) -> Vec<(String, String)> {
    let mut rows = vec![
        ("run id".to_string(), p.run_id.clone()),
        ("experiment".into(), p.experiment_file.clone()),
    ];
    // The figures are not the file's alone: say what the command line changed.
    for o in &p.overrides {
        rows.push(("set on the command line".into(), o.clone()));
    }
    rows.extend([
        ("calibench".into(), p.calibench_version.clone()),
        ("started".into(), p.started_at.clone()),
        ("finished".into(), p.finished_at.clone()),
        ("seed".into(), p.seed.to_string()),
        ("bootstrap replicates".into(), p.bootstrap.to_string()),
    ]);
    for f in &p.inputs {
        rows.push((
            format!("input {}", f.path),
            format!("sha256 {} ({} bytes)", f.sha256, f.bytes),
        ));
    }
    rows
}
