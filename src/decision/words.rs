//! The decision in words: one sentence per metric, the reason and the headline.

use super::*;

/// "precision rose 0.61 → 0.74 (p adj. 0.004)": the metric, how it moved, and what that means
/// for the decision.
pub fn sentence(d: &MetricDecision, w: &Words) -> String {
    let name = &w.name;
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
    let change = if w.difference {
        match delta {
            d if d > 0.0 => format!("{name} rose to {}", signed(d, w.places)),
            d if d < 0.0 => format!("{name} fell to {}", signed(d, w.places)),
            _ => format!("{name} stayed at 0"),
        }
    } else {
        moved(name, b, t, delta, w.places)
    };
    // A change read as a share of the baseline says the share too.
    let change = match d.relative_change.filter(|_| d.relative) {
        Some(r) => format!("{change} ({})", percent(r)),
        None => change,
    };
    // Each outcome names the p it was judged by: an improvement its own test's p (each part
    // of "better" at the plain level), a regression the Holm-adjusted one.
    let p = d
        .p_value
        .map_or("no p-value".to_string(), |p| format!("p {}", fmt_p(p)));
    let p_adj = d
        .p_adjusted
        .map_or("no p-value".to_string(), |p| format!("p adj. {}", fmt_p(p)));
    let units = |n: usize| format!("{n} {}", if n == 1 { singular(w.units) } else { w.units });
    let needs = |why: &str| match d.needed {
        Some(n) if n > MAX_STATED => format!(
            "needs more than {}{why}",
            crate::text::thousands(MAX_STATED)
        ),
        Some(n) => format!("needs ≈ {}{why}", crate::text::thousands(n)),
        None => "no count of units could".to_string(),
    };
    match d.outcome {
        Outcome::Improved => format!("{change} ({p})"),
        Outcome::Regressed => match d.margin {
            Some(_) => format!(
                "{change}, a loss beyond its margin of {} ({p_adj}, against the margin's edge; {})",
                margin_words(d),
                bound_against_margin(d, w.places, true)
            ),
            None => format!("{change} ({p_adj})"),
        },
        Outcome::InsideNoise => format!(
            "{change} ({p} by its own test), but net of the harness's own noise the change could be none"
        ),
        Outcome::Held => format!(
            "{change}: held within its margin of {} ({})",
            margin_words(d),
            margin_bound(d, w.places)
        ),
        Outcome::Underpowered if d.pairs < MIN_LABELLED_PAIRS && d.needed == Some(MIN_LABELLED_PAIRS as u64) && w.units == "labelled items" => format!(
            "{change} but {} are too few to decide on (needs ≥ {MIN_LABELLED_PAIRS} labelled pairs; has {})",
            units(d.pairs),
            d.pairs
        ),
        // A guard without a margin that neither improved nor regressed: what was and was not
        // shown, whether or not the A/B could have seen a regression.
        Outcome::NoRegressionDetected => {
            format!(
                "{change}: no regression detected ({p_adj}; no margin given, so it is not shown to hold)"
            )
        }
        Outcome::Underpowered => match d.margin {
            Some(margin) => {
                let moved = d.relative_change.filter(|_| d.relative).unwrap_or(delta);
                let past = moved * d.want.good_sign() <= -margin;
                let count = match d.needed {
                    None if past => "no count of units could: the change observed is past it".to_string(),
                    None if d.relative => "no count is stated for a relative change".to_string(),
                    None => "no count can be stated: the differences do not vary".to_string(),
                    Some(_) => needs(" to show it"),
                };
                format!(
                    "{change} but {} cannot show it stays within its margin of {} ({}; {count})",
                    units(d.pairs),
                    margin_words(d),
                    margin_bound(d, w.places)
                )
            }
            None => {
                let why = match d.min_effect {
                    Some(x) => format!(" to detect a change of {}, the smallest that matters", as_written(d, x)),
                    None => " if the true change is as large as observed".to_string(),
                };
                format!("{change} but {} cannot show it ({p}; {})", units(d.pairs), needs(&why))
            }
        },
        Outcome::NoEffectDetected => match d.min_effect {
            Some(x) => format!(
                "{change}, and {} would have shown a change of {}: no effect detected ({p})",
                units(d.pairs),
                as_written(d, x)
            ),
            None if delta == 0.0 => format!("{change}: no effect"),
            None if delta * d.want.good_sign() < 0.0 => format!(
                "{change}, the other way from the {} it must make, and not significantly: no effect detected ({p})",
                d.want.name()
            ),
            None => format!(
                "{change}, which {} can tell from no change: no effect detected ({p})",
                units(d.pairs)
            ),
        },
        Outcome::Withheld | Outcome::Unmeasured => change,
    }
}

/// Where a guard's interval ends on its unsafe side, against its margin: "the lower bound of its
/// 95% t-interval is −0.011, above −0.02".
/// A margin as written: "0.02", or "10%" for a share of the baseline.
fn margin_words(d: &MetricDecision) -> String {
    as_written(d, d.margin.unwrap_or_default())
}

/// A margin or smallest effect as written: in the metric's units ("0.02"), or as a share of
/// the baseline ("10%").
fn as_written(d: &MetricDecision, x: f64) -> String {
    if d.relative {
        format!("{}%", crate::text::fmt_num(100.0 * x))
    } else {
        crate::text::fmt_num(x)
    }
}

/// A relative change: "+12.4%", "−3.0%".
fn percent(x: f64) -> String {
    let p = 100.0 * x;
    if p < 0.0 {
        format!("−{:.1}%", -p)
    } else {
        format!("+{p:.1}%")
    }
}

fn margin_bound(d: &MetricDecision, places: usize) -> String {
    bound_against_margin(d, places, false)
}

/// A guard's bound against its margin: the unsafe side's (what "held" reads), or with `safe`
/// the safe side's (what "regressed" reads: "the upper bound … is −0.061, below −0.05").
fn bound_against_margin(d: &MetricDecision, places: usize, safe: bool) -> String {
    let m = d.margin.unwrap_or_default();
    let margin = margin_words(d);
    let interval = match d.test {
        _ if d.relative => "interval of the relative change (Fieller's)",
        Test::PairedT => "t-interval",
        Test::Mcnemar => "score interval (Newcombe's, for paired proportions)",
        Test::Bootstrap => "bootstrap interval",
        Test::PpiT => "t-interval (PPI++)",
    };
    let Some([lo, hi]) = d.margin_ci else {
        return format!("its differences do not vary, so no {interval} can be drawn");
    };
    let places = places + 1;
    // For a metric that must not fall the edge is −m: the unsafe bound is the lower one, the
    // safe one the upper; mirrored for one that must not rise.
    let rising = d.want.good_sign() > 0.0;
    let (which, bound) = match (rising, safe) {
        (true, false) | (false, true) => ("lower", lo),
        (true, true) | (false, false) => ("upper", hi),
    };
    let edge = if rising { -m } else { m };
    let side = match (bound > edge, bound < edge) {
        (true, _) => "above",
        (_, true) => "below",
        _ => "at",
    };
    let shown = if d.relative {
        percent(bound)
    } else {
        signed(bound, places)
    };
    format!(
        "the {which} bound of its 95% {interval} is {shown}, {side} {}{margin}",
        if rising { "−" } else { "+" }
    )
}

/// "precision rose 0.61 → 0.74": the metric and how it moved, with enough decimals (up to
/// six) to show the two values apart; "stayed at" when they are equal.
fn moved(name: &str, b: f64, t: f64, delta: f64, places: usize) -> String {
    if delta == 0.0 {
        return format!("{name} stayed at {b:.places$}");
    }
    let how = if delta > 0.0 { "rose" } else { "fell" };
    let shown = (places..=6)
        .map(|p| (format!("{b:.p$}"), format!("{t:.p$}")))
        .find(|(bs, ts)| bs != ts);
    match shown {
        Some((bs, ts)) => format!("{name} {how} {bs} → {ts}"),
        None => format!("{name} {how} by less than 0.000001 from {b:.places$}"),
    }
}

/// A signed figure: `+0.031`, `−0.052`.
pub(crate) fn signed(x: f64, places: usize) -> String {
    if x < 0.0 {
        format!("−{:.places$}", -x)
    } else {
        format!("+{x:.places$}")
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
            // Inconclusive: what must move, and any guard whose margin was not shown (each
            // blocks better).
            Verdict::Inconclusive => {
                m.want.must_move() || (m.margin.is_some() && m.outcome != Outcome::Held)
            }
            Verdict::Better => m.want.must_move(),
        })
        .map(|(_, r)| r.as_str())
        .collect();
    let mut s = capitalised(&deciding.join("; "));
    if d.verdict == Verdict::Better {
        let guards: Vec<&MetricDecision> =
            d.metrics.values().filter(|m| !m.want.must_move()).collect();
        // Shown to hold: within a margin, or improved outright; not shown: no margin, and no
        // significant move either way.
        let shown = guards
            .iter()
            .filter(|m| matches!(m.outcome, Outcome::Held | Outcome::Improved))
            .count();
        let unshown = guards
            .iter()
            .filter(|m| m.outcome == Outcome::NoRegressionDetected)
            .count();
        s += match (shown, unshown) {
            (0, 0) => "",
            (1, 0) => "; the guard held",
            (_, 0) => "; the guards held",
            (0, 1) => "; the guard did not regress, though with no margin given it is not shown to hold",
            (0, _) => "; no guard regressed, though with no margin given they are not shown to hold",
            _ => "; the guards with a margin or a significant improvement held, and the others did not regress (no margin given: not shown to hold)",
        };
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
