//! The decision (docs/reference.md, "The decision"): is the treatment better, worse, or not yet
//! knowable? "Trusted" says the judges agree; this says what the A/B shows. Pure: the metrics
//! go in, the decision comes out.
//!
//! The experiment names each decision metric with the way it must move (`[decision]`, or the
//! `primary` metrics whose catalogue entry declares a better direction). The decision metrics
//! are one Holm family (`analysis` adjusts their p-values together). Then, per metric:
//! * **improved**: its delta lies the wanted way with `p_adjusted` < 0.05;
//! * **regressed**: it lies the other way with `p_adjusted` < 0.05 (a guard's only outcome that
//!   counts against the treatment);
//! * **underpowered**: neither, and the A/B was too small to tell: the delta is inside its
//!   minimum detectable effect, or the sign test cannot reach 0.05 with so few pairs. It says how
//!   many units would, at the observed delta (as `calibench plan` counts them);
//! * **no effect detected**: neither, and the A/B was big enough to see the delta had it been
//!   real (or no difference was observed at all);
//! * **withheld**: judge-derived while the judges are not trusted; **unmeasured**: no unit has
//!   it in both arms.
//!
//! The verdict: `withheld` when a decision metric is withheld; else `worse` when any regressed;
//! else `better` when every metric that must move improved; else `inconclusive`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::{Want, Wanted};
use crate::stats::holm::{pairs_for_floor, sign_test_floor};
use crate::stats::power::{needed_at, ALPHA};

/// The decision's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Better,
    Worse,
    Inconclusive,
    Withheld,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Withheld => "withheld",
        }
    }
}

/// What became of one decision metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Improved,
    Regressed,
    Underpowered,
    NoEffectDetected,
    Withheld,
    Unmeasured,
}

impl Outcome {
    pub fn words(self) -> &'static str {
        match self {
            Outcome::Improved => "improved",
            Outcome::Regressed => "regressed",
            Outcome::Underpowered => "underpowered",
            Outcome::NoEffectDetected => "no effect detected",
            Outcome::Withheld => "withheld",
            Outcome::Unmeasured => "unmeasured",
        }
    }
}

/// One decision metric, its figures and its outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricDecision {
    pub want: Want,
    /// Both arms' means over the paired units, and treatment − baseline.
    pub baseline: Option<f64>,
    pub treatment: Option<f64>,
    pub delta: Option<f64>,
    pub ci: Option<[f64; 2]>,
    /// Holm over the decision metrics.
    pub p_adjusted: Option<f64>,
    pub mde: Option<f64>,
    /// The units paired.
    pub pairs: usize,
    pub outcome: Outcome,
    /// For an underpowered metric: the units an A/B needs to show the observed delta (80% power
    /// at two-sided 0.05, and enough pairs for the sign test to reach 0.05); null when no count
    /// can be stated.
    pub needed: Option<u64>,
}

/// The decision: its verdict, every decision metric, and one sentence per metric saying what
/// became of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Decision {
    pub verdict: Verdict,
    pub metrics: BTreeMap<String, MetricDecision>,
    /// One sentence per metric, in `order`.
    pub reasons: Vec<String>,
    /// The decision metrics in the experiment's order: those that must move, then the guards.
    #[serde(default)]
    pub order: Vec<String>,
    /// What a pair is for each metric's sentences ("targets", "queries", "items").
    #[serde(default)]
    pub units: BTreeMap<String, String>,
    /// The input ledger's caveats (docs/reference.md, "The input ledger"): what the run read
    /// that could change this decision without being seen. Every decision line says how many.
    #[serde(default)]
    pub caveats: Vec<String>,
}

/// One decision metric's figures, as the run measured them.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub baseline: f64,
    pub treatment: f64,
    pub delta: f64,
    pub ci: Option<[f64; 2]>,
    pub p_adjusted: Option<f64>,
    pub mde: Option<f64>,
    pub pairs: usize,
}

/// What the decision reads of one metric.
#[derive(Clone, Debug, PartialEq)]
pub enum Reading {
    Measured(Measured),
    /// Judge-derived, and the judges are not trusted.
    Withheld,
    /// No unit has it in both arms.
    Unmeasured,
}

/// One metric's outcome from what the run measured, in a decision of `family` metrics. The
/// family's strictest Holm level, 0.05 / `family` (the level its smallest p must clear), is the
/// one the sign test's floor is held to, and the one an underpowered metric's count is for.
pub fn outcome(want: Want, reading: &Reading, family: usize) -> (Outcome, Option<u64>) {
    let m = match reading {
        Reading::Withheld => return (Outcome::Withheld, None),
        Reading::Unmeasured => return (Outcome::Unmeasured, None),
        Reading::Measured(m) => m,
    };
    let significant = m.p_adjusted.is_some_and(|p| p < ALPHA);
    let good = m.delta * want.good_sign();
    if significant && good > 0.0 {
        return (Outcome::Improved, None);
    }
    if significant && good < 0.0 {
        return (Outcome::Regressed, None);
    }
    // Nothing moved at all: there is no difference to size a bigger study for.
    if m.delta == 0.0 {
        return (Outcome::NoEffectDetected, None);
    }
    let level = ALPHA / family.max(1) as f64;
    let inside_mde = m.mde.is_some_and(|x| m.delta.abs() < x);
    let floor = sign_test_floor(m.pairs) > level;
    if inside_mde || floor {
        let sign_test = pairs_for_floor(level) as u64;
        let needed = match m.mde.map(|x| needed_at(x, m.pairs, m.delta, level)) {
            Some(None) => None,
            Some(Some(n)) => Some(n.max(sign_test)),
            None => Some(sign_test),
        };
        return (Outcome::Underpowered, needed);
    }
    (Outcome::NoEffectDetected, None)
}

/// The decision over `metrics`, each with its reading, its words and decimals for sentences,
/// and what a unit is.
pub fn decide(metrics: &[(Wanted, Reading, Words)]) -> Decision {
    let mut out = BTreeMap::new();
    let mut units = BTreeMap::new();
    let mut reasons = Vec::new();
    let mut order = Vec::new();
    for (w, reading, words) in metrics {
        let (o, needed) = outcome(w.want, reading, metrics.len());
        let m = match reading {
            Reading::Measured(m) => Some(m),
            _ => None,
        };
        let d = MetricDecision {
            want: w.want,
            baseline: m.map(|m| m.baseline),
            treatment: m.map(|m| m.treatment),
            delta: m.map(|m| m.delta),
            ci: m.and_then(|m| m.ci),
            p_adjusted: m.and_then(|m| m.p_adjusted),
            mde: m.and_then(|m| m.mde),
            pairs: m.map_or(0, |m| m.pairs),
            outcome: o,
            needed,
        };
        reasons.push(sentence(&d, words));
        units.insert(w.metric.clone(), words.units.to_string());
        order.push(w.metric.clone());
        out.insert(w.metric.clone(), d);
    }
    let any = |o: Outcome| out.values().any(|d| d.outcome == o);
    let verdict = if any(Outcome::Withheld) {
        Verdict::Withheld
    } else if any(Outcome::Regressed) {
        Verdict::Worse
    } else if out
        .values()
        .filter(|d| d.want.must_move())
        .all(|d| d.outcome == Outcome::Improved)
    {
        Verdict::Better
    } else {
        Verdict::Inconclusive
    };
    Decision {
        verdict,
        metrics: out,
        reasons,
        order,
        units,
        caveats: Vec::new(),
    }
}

/// How a metric is written in sentences.
#[derive(Clone, Debug, PartialEq)]
pub struct Words {
    /// "distinct values", "precision".
    pub name: String,
    /// Decimals of its figures.
    pub places: usize,
    /// What a unit is: "targets", "queries", "items".
    pub units: &'static str,
}

/// "precision rose 0.61 → 0.74 (p adj. 0.004)": the metric, how it moved, and what that means
/// for the decision.
pub fn sentence(d: &MetricDecision, w: &Words) -> String {
    let (name, places) = (&w.name, w.places);
    let (Some(b), Some(t), Some(delta)) = (d.baseline, d.treatment, d.delta) else {
        return match d.outcome {
            Outcome::Withheld => {
                format!("{name} is judge-derived, and the judges are not trusted: withheld")
            }
            _ => format!(
                "{name}: no {} has it in both arms, so it is unmeasured",
                singular(w.units)
            ),
        };
    };
    let moved = if delta > 0.0 {
        "rose"
    } else if delta < 0.0 {
        "fell"
    } else {
        "stayed"
    };
    let (bs, ts) = (format!("{b:.places$}"), format!("{t:.places$}"));
    let change = if delta == 0.0 {
        format!("{name} stayed at {bs}")
    } else if bs == ts {
        // A change below the figures' decimals: said, not shown as "0.82 → 0.82".
        format!("{name} {moved} by {:.1e} from {bs}", delta.abs())
    } else {
        format!("{name} {moved} {bs} → {ts}")
    };
    let p = d
        .p_adjusted
        .map_or("no p-value".to_string(), |p| format!("p adj. {}", fmt_p(p)));
    match d.outcome {
        Outcome::Improved | Outcome::Regressed => format!("{change} ({p})"),
        Outcome::Underpowered => {
            let needs = match d.needed {
                Some(n) => format!("needs ≈ {n}"),
                None => "no count of units could".to_string(),
            };
            format!(
                "{change} but {} {} cannot show it ({p}; {needs})",
                d.pairs,
                if d.pairs == 1 {
                    singular(w.units)
                } else {
                    w.units
                }
            )
        }
        Outcome::NoEffectDetected if delta == 0.0 => format!("{change}: no effect"),
        Outcome::NoEffectDetected => format!(
            "{change}, which {} {} can tell from no change: no effect detected ({p})",
            d.pairs, w.units
        ),
        Outcome::Withheld | Outcome::Unmeasured => change,
    }
}

/// Why the verdict is what it is, as one sentence without the verdict: "Precision rose 0.61 →
/// 0.74 (p adj. 0.004)". It names the metrics that decided it: the regressed ones when worse,
/// the withheld when withheld, every metric that must move otherwise (and a guard's only when
/// it did not hold).
pub fn reason(d: &Decision) -> String {
    let deciding: Vec<&str> = d
        .order
        .iter()
        .filter_map(|name| d.metrics.get(name))
        .zip(&d.reasons)
        .filter(|(m, _)| match d.verdict {
            Verdict::Worse => m.outcome == Outcome::Regressed,
            Verdict::Withheld => m.outcome == Outcome::Withheld,
            _ => m.want.must_move(),
        })
        .map(|(_, r)| r.as_str())
        .collect();
    let mut s = capitalised(&deciding.join("; "));
    if d.verdict == Verdict::Better {
        let guards = d.metrics.values().filter(|m| !m.want.must_move()).count();
        if guards > 0 {
            s += &format!(
                "; {} that must not move the other way held",
                if guards == 1 {
                    "the guard"
                } else {
                    "the guards"
                }
            );
        }
    }
    s
}

/// The decision in words, verdict first: "better. Precision rose 0.61 → 0.74 (p adj. 0.004)";
/// "better — with 1 caveat. …" when the inputs carry caveats.
pub fn headline(d: &Decision) -> String {
    format!("{}. {}", label(d), reason(d))
}

/// The verdict's word with the count of caveats: "better", "better — with 2 caveats".
pub fn label(d: &Decision) -> String {
    format!(
        "{}{}",
        d.verdict.name(),
        crate::corpus::ledger::with_caveats(d.caveats.len())
    )
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

fn singular(units: &str) -> &str {
    units
        .strip_suffix("ies")
        .map_or_else(|| units.strip_suffix('s').unwrap_or(units), |_| "query")
}

fn fmt_p(p: f64) -> String {
    crate::text::fmt_p(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(delta: f64, p: f64, mde: Option<f64>, pairs: usize) -> Reading {
        Reading::Measured(Measured {
            baseline: 0.5,
            treatment: 0.5 + delta,
            delta,
            ci: None,
            p_adjusted: Some(p),
            mde,
            pairs,
        })
    }

    #[test]
    fn each_outcome_by_hand() {
        use Outcome::*;
        let up = Want::Increase;
        let o = |want, (delta, p, mde, pairs), family| {
            outcome(want, &measured(delta, p, mde, pairs), family)
        };
        // Significant the wanted way: improved; the other way: regressed, for a guard too.
        assert_eq!(o(up, (0.2, 0.01, Some(0.1), 40), 1).0, Improved);
        assert_eq!(o(up, (-0.2, 0.01, Some(0.1), 40), 1).0, Regressed);
        assert_eq!(
            o(Want::NoDecrease, (-0.2, 0.01, Some(0.1), 40), 1).0,
            Regressed
        );
        assert_eq!(
            o(Want::Decrease, (-0.2, 0.01, Some(0.1), 40), 1).0,
            Improved
        );
        // A significant move the good way is improved for a guard as well.
        assert_eq!(
            o(Want::NoIncrease, (-0.2, 0.01, Some(0.1), 40), 1).0,
            Improved
        );
        // Not significant, inside the MDE: underpowered, needing n·(mde/δ)² units:
        // 40 · (0.1 / 0.05)² = 160.
        assert_eq!(
            o(up, (0.05, 0.3, Some(0.1), 40), 1),
            (Underpowered, Some(160))
        );
        // Not significant, outside the MDE, with enough pairs: no effect detected.
        assert_eq!(o(up, (0.15, 0.3, Some(0.1), 40), 1).0, NoEffectDetected);
        // Four pairs cannot reach 0.05 on the sign test (floor 0.125): underpowered even
        // outside the MDE, needing at least the 6 the sign test needs.
        assert_eq!(o(up, (0.15, 0.3, Some(0.1), 4), 1), (Underpowered, Some(6)));
        // 4 · (0.3 / 0.1)² = 36 beats the floor's 6.
        assert_eq!(o(up, (0.1, 0.3, Some(0.3), 4), 1), (Underpowered, Some(36)));
        // Nothing moved: no effect, nothing to size.
        assert_eq!(
            o(up, (0.0, 1.0, Some(0.1), 40), 1),
            (NoEffectDetected, None)
        );
        // A figure without per-unit differences (ECE) has no MDE: only the floor can bind.
        assert_eq!(o(up, (0.05, 0.3, None, 40), 1).0, NoEffectDetected);
        // p exactly 0.05 is not below it.
        assert_eq!(o(up, (0.2, 0.05, Some(0.1), 40), 1).0, NoEffectDetected);
        // In a family of two, the count is for 0.025: the sign test needs 7 pairs (2 · 0.5⁶ =
        // 0.031 > 0.025), and the power count grows by ((z₀.₉₈₇₅ + z₀.₈) / (z₀.₉₇₅ + z₀.₈))² =
        // (3.0824 / 2.8016)² = 1.2105: 160 · 1.2105 = 193.7 → 194.
        assert_eq!(o(up, (0.15, 0.3, Some(0.1), 4), 2), (Underpowered, Some(7)));
        assert_eq!(
            o(up, (0.05, 0.3, Some(0.1), 40), 2),
            (Underpowered, Some(194))
        );
        // Six pairs reach 0.031 alone, but not 0.025, Holm's first step over two: underpowered.
        assert_eq!(o(up, (0.15, 0.0625, Some(0.1), 6), 1).0, NoEffectDetected);
        assert_eq!(
            o(up, (0.15, 0.0625, Some(0.1), 6), 2),
            (Underpowered, Some(7))
        );
        assert_eq!(outcome(up, &Reading::Withheld, 1), (Withheld, None));
        assert_eq!(outcome(up, &Reading::Unmeasured, 1), (Unmeasured, None));
    }

    fn wanted(metric: &str, want: Want) -> Wanted {
        Wanted {
            metric: metric.into(),
            want,
        }
    }

    fn words(name: &str) -> Words {
        Words {
            name: name.replace('_', " "),
            places: 2,
            units: "targets",
        }
    }

    #[test]
    fn each_verdict_by_hand() {
        let better = measured(0.2, 0.01, Some(0.1), 40);
        let flat = measured(0.05, 0.3, Some(0.1), 40);
        let worse = measured(-0.2, 0.01, Some(0.1), 40);
        let d = |rows: Vec<(&str, Want, Reading)>| {
            decide(
                &rows
                    .into_iter()
                    .map(|(n, w, r)| (wanted(n, w), r, words(n)))
                    .collect::<Vec<_>>(),
            )
        };
        use Want::*;
        let says = |rows, verdict, words: &str| {
            let v = d(rows);
            assert_eq!((v.verdict, headline(&v).as_str()), (verdict, words));
        };
        // Every metric that must move improved: the guard decides. Held: better; regressed:
        // worse, whatever improved.
        for (guard, verdict, words) in [
            (
                flat.clone(),
                Verdict::Better,
                "better. Precision rose 0.50 → 0.70 (p adj. 0.010); the guard that must not move the other way held",
            ),
            (
                worse.clone(),
                Verdict::Worse,
                "worse. Final accuracy fell 0.50 → 0.30 (p adj. 0.010)",
            ),
        ] {
            let rows = vec![
                ("precision", Increase, better.clone()),
                ("final_accuracy", NoDecrease, guard),
            ];
            says(rows, verdict, words);
        }
        // One must-move metric underpowered: inconclusive, saying what it needs.
        let short = measured(-0.05, 0.3, Some(0.1), 40);
        says(
            vec![
                ("precision", Increase, better.clone()),
                ("distinct_values", Decrease, short),
            ],
            Verdict::Inconclusive,
            "inconclusive. Precision rose 0.50 → 0.70 (p adj. 0.010); distinct values fell 0.50 → 0.45 but 40 targets cannot show it (p adj. 0.300; needs ≈ 194)",
        );
        // A judge-derived metric under untrusted judges: withheld, before worse.
        let v = d(vec![
            ("precision", Increase, Reading::Withheld),
            ("final_accuracy", NoDecrease, worse),
        ]);
        assert_eq!(v.verdict, Verdict::Withheld);
        assert!(headline(&v).starts_with("withheld. Precision is judge-derived"));
        // Unmeasured: inconclusive.
        let v = d(vec![("precision", Increase, Reading::Unmeasured)]);
        assert_eq!(v.verdict, Verdict::Inconclusive);
        assert_eq!(v.metrics["precision"].outcome, Outcome::Unmeasured);
    }
}
