//! The bias audit (docs/guides/trust.md, "The bias audit"): judges that agree can still agree
//! on a bias. From the verdicts already recorded, four checks of whether the judges' scores move
//! with something other than quality — the arm a finding was returned in, the length of the
//! text they are shown, where an item stood in a call, a reviewer running the judge's own
//! model — each with its estimate, 95% interval, p, and the share of the lift it could
//! account for. A check fails when it is significant (p < 0.05) and could account for at least
//! half of a positive lift. Pure: judged items in, the audit out.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::corpus::verdicts::{weighted, Item};
use crate::stats::power::t_upper;
use crate::stats::regression::{clustered, Fit};

/// Fewer shared findings than this leave the arm check unchecked.
pub const MIN_SHARED: usize = 10;
/// A check is significant below this p.
pub const LEVEL: f64 = 0.05;
/// A significant check fails when it could account for at least this share of the lift.
pub const SHARE: f64 = 0.5;

/// One judged item as the audit reads it.
#[derive(Clone, Debug)]
pub struct Judged<'a> {
    pub item: &'a Item,
    /// Filed under the treatment (else the baseline).
    pub treatment: bool,
    /// The target it belongs to: the items of one target share a cluster.
    pub target: &'a str,
    /// Characters of the text its judges are shown, when known.
    pub chars: Option<f64>,
    /// For a finding: its fingerprint (place and title), numbered across both arms, so that the
    /// same finding in both arms has the same number.
    pub fingerprint: Option<u32>,
    /// For a finding: the model its reviewer reports.
    pub reviewer_model: Option<&'a str>,
}

/// One check's figures, or why it was not made.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Check {
    /// Arm: the mean difference (treatment − baseline) of a shared finding's composite. Length:
    /// the composite's slope per 100 characters. Position: a judge's score's slope per place.
    /// Self: how much higher a judge scores findings of a reviewer running its model than the
    /// other judges do, against its other findings.
    pub estimate: Option<f64>,
    /// 95% interval of the estimate.
    pub ci: Option<[f64; 2]>,
    /// Two-sided p of the estimate against 0.
    pub p: Option<f64>,
    /// Pairs (arm), items (length), verdicts (position, self) it rests on.
    pub n: usize,
    /// How much of the lift the bias could give, in composite points.
    pub impact: Option<f64>,
    /// `impact` as a share of the lift; null when the lift is at or below 0 (nothing to
    /// explain) or the check was not made.
    pub explains: Option<f64>,
    /// Significant (p < 0.05) and could account for at least half of the lift.
    pub failed: bool,
    /// Why it was not checked, or is not applicable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Check {
    fn not_made(n: usize, note: String) -> Check {
        Check {
            n,
            note: Some(note),
            ..Check::default()
        }
    }

    /// Whether it was made (it has an estimate).
    pub fn made(&self) -> bool {
        self.estimate.is_some()
    }

    /// Whether it is significant at [`LEVEL`].
    pub fn significant(&self) -> bool {
        self.p.is_some_and(|p| p < LEVEL)
    }

    /// Its figures from a fitted coefficient, `impact` the lift it could give.
    fn of_fit(fit: &Fit, j: usize, impact: f64, effect: Option<f64>) -> Check {
        Check {
            estimate: Some(fit.coefficients[j]),
            ci: Some(fit.interval(j, LEVEL)),
            p: Some(fit.p(j)),
            n: fit.n,
            ..Check::default()
        }
        .judged(impact, effect)
    }

    /// Sets its impact, share and failure against the lift `effect`.
    fn judged(mut self, impact: f64, effect: Option<f64>) -> Check {
        self.impact = Some(impact);
        self.explains = effect.filter(|e| *e > 0.0).map(|e| impact / e);
        self.failed = self.significant() && self.explains.is_some_and(|s| s >= SHARE);
        self
    }
}

/// The lift after regressing length out, beside the raw one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Adjusted {
    pub value: f64,
    pub ci: [f64; 2],
}

/// The audit: `metrics.json` `bias`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bias {
    /// The change the shares are of: the lift, or, where no item is judged in both arms, the
    /// difference of the arms' mean composites (what precision moves with).
    pub effect: Option<f64>,
    /// `lift` or `mean composite`.
    pub effect_of: String,
    /// The same finding judged in both arms.
    pub arm: Check,
    /// The composite against the characters the judges are shown.
    pub length: Check,
    /// A judge's score against where the item stood in its call.
    pub position: Check,
    /// A judge scoring the findings of a reviewer that runs its own model.
    #[serde(rename = "self")]
    pub self_preference: Check,
    /// Mean characters shown per judged item: baseline, treatment.
    pub mean_chars: Option<[f64; 2]>,
    /// The arms' difference in composite with length regressed out (clustered by target).
    pub adjusted_lift: Option<Adjusted>,
    /// The judges whose reported model a reviewer reports too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub same_model: Vec<String>,
}

impl Bias {
    /// The checks by name, in the report's order.
    pub fn checks(&self) -> [(&'static str, &Check); 4] {
        [
            ("arm", &self.arm),
            ("length", &self.length),
            ("position", &self.position),
            ("self", &self.self_preference),
        ]
    }

    /// Whether any check failed.
    pub fn failed(&self) -> bool {
        self.checks().iter().any(|(_, c)| c.failed)
    }

    /// The failed checks in a reviewer's words, one sentence each.
    pub fn failures(&self) -> Vec<String> {
        let lift = self.effect.map_or("?".into(), signed);
        let of = if self.effect_of == "lift" {
            format!("the lift's {lift}")
        } else {
            format!("the arms' difference of {lift}")
        };
        // "that alone could give +0.046 (53%) of the lift's +0.087"
        let gives = |c: &Check| {
            format!(
                "that alone could give {} ({:.0}%) of {of}",
                signed(c.impact.unwrap_or_default()),
                100.0 * c.explains.unwrap_or_default()
            )
        };
        let mut out = Vec::new();
        let c = &self.arm;
        if c.failed {
            out.push(format!(
                "the judges score the same finding {} higher under the treatment ({} shared findings): {}",
                signed(c.estimate.unwrap_or_default()),
                c.n,
                gives(c)
            ));
        }
        let c = &self.length;
        if c.failed {
            let [b, t] = self.mean_chars.unwrap_or_default();
            out.push(format!(
                "the judges score longer text higher ({} per 100 characters) and the treatment's text is {:.0} characters longer on average: {}",
                signed(c.estimate.unwrap_or_default()),
                t - b,
                gives(c)
            ));
        }
        let c = &self.position;
        if c.failed {
            out.push(format!(
                "the judges score by where an item stands in their call ({} per place) and the arms' items stand at different places: {}",
                signed(c.estimate.unwrap_or_default()),
                gives(c)
            ));
        }
        let c = &self.self_preference;
        if c.failed {
            out.push(format!(
                "judge {} runs the same model as a reviewer and scores that reviewer's findings {} above the other judges, and the treatment holds more of them: {}",
                self.same_model.join(", "),
                signed(c.estimate.unwrap_or_default()),
                gives(c)
            ));
        }
        out
    }
}

/// `+0.050`, `−0.012`.
fn signed(x: f64) -> String {
    if x < 0.0 {
        format!("−{:.3}", -x)
    } else {
        format!("+{x:.3}")
    }
}

/// Audits `items` (filed under the arms); `weights` weigh the judges' dimensions.
pub fn audit(items: &[Judged<'_>], weights: &BTreeMap<String, f64>) -> Bias {
    let composites: Vec<Option<f64>> = items.iter().map(|j| j.item.composite(weights)).collect();
    let (effect, effect_of) = effect(items, &composites);
    let (length, mean_chars, adjusted_lift) = length(items, &composites, effect);
    let (self_preference, same_model) = self_preference(items, weights, effect);
    Bias {
        effect,
        effect_of: effect_of.to_string(),
        arm: arm(items, &composites, effect),
        length,
        position: position(items, weights, effect),
        self_preference,
        mean_chars,
        adjusted_lift,
        same_model,
    }
}

/// The lift (items judged in both arms, paired by id), or the difference of the arms' mean
/// composites when no item is judged in both.
fn effect(items: &[Judged<'_>], composites: &[Option<f64>]) -> (Option<f64>, &'static str) {
    let mut baseline: HashMap<&str, f64> = HashMap::new();
    let mut sums = [(0.0, 0usize); 2];
    for (j, c) in items.iter().zip(composites) {
        let Some(c) = *c else { continue };
        let side = usize::from(j.treatment);
        if !j.treatment {
            baseline.insert(&j.item.item_id, c);
        }
        sums[side].0 += c;
        sums[side].1 += 1;
    }
    // In the items' order, so that the sum (and the figure's last digit) does not depend on
    // a hash table's.
    let mut seen = BTreeSet::new();
    let diffs: Vec<f64> = items
        .iter()
        .zip(composites)
        .filter(|(j, _)| j.treatment && seen.insert(j.item.item_id.as_str()))
        .filter_map(|(j, c)| Some((*c)? - baseline.get(j.item.item_id.as_str())?))
        .collect();
    if !diffs.is_empty() {
        return (Some(diffs.iter().sum::<f64>() / diffs.len() as f64), "lift");
    }
    let mean = |(s, n): (f64, usize)| (n > 0).then(|| s / n as f64);
    let diff = mean(sums[1]).zip(mean(sums[0])).map(|(t, b)| t - b);
    (diff, "mean composite")
}

/// Arm invariance: the same finding (target and fingerprint) judged in both arms, its
/// composites averaged within an arm, compared by a paired t-test.
fn arm(items: &[Judged<'_>], composites: &[Option<f64>], effect: Option<f64>) -> Check {
    let mut sums: BTreeMap<(&str, u32), [(f64, usize); 2]> = BTreeMap::new();
    for (j, c) in items.iter().zip(composites) {
        let (Some(f), Some(c)) = (j.fingerprint, *c) else {
            continue;
        };
        let e = &mut sums.entry((j.target, f)).or_default()[usize::from(j.treatment)];
        e.0 += c;
        e.1 += 1;
    }
    let d: Vec<f64> = sums
        .values()
        .filter(|[b, t]| b.1 > 0 && t.1 > 0)
        .map(|[b, t]| t.0 / t.1 as f64 - b.0 / b.1 as f64)
        .collect();
    let n = d.len();
    if n < MIN_SHARED {
        return Check::not_made(
            n,
            format!(
                "not checked ({} judged in both arms; needs {MIN_SHARED})",
                crate::text::count(n as u64, "shared finding", "shared findings")
            ),
        );
    }
    let mean = d.iter().sum::<f64>() / n as f64;
    let sd = crate::stats::test::sd(&d).unwrap_or(0.0);
    let se = sd / (n as f64).sqrt();
    let half = t_upper(LEVEL / 2.0, (n - 1) as f64) * se;
    let p = crate::stats::test::t_test(&d).unwrap_or(if mean == 0.0 { 1.0 } else { 0.0 });
    Check {
        estimate: Some(mean),
        ci: Some([mean - half, mean + half]),
        p: Some(p),
        n,
        ..Check::default()
    }
    .judged(mean, effect)
}

/// Length: the composite on arm and characters per 100, clustered by target. Its slope, the
/// arms' mean lengths, and the arm's coefficient: the lift adjusted for length.
fn length(
    items: &[Judged<'_>],
    composites: &[Option<f64>],
    effect: Option<f64>,
) -> (Check, Option<[f64; 2]>, Option<Adjusted>) {
    let (mut x, mut y, mut g) = (Vec::new(), Vec::new(), Vec::new());
    let mut chars = [(0.0, 0usize); 2];
    // Findings and whole targets are different kinds of item, with lengths of different
    // orders: where both are judged, each kind has its own intercept.
    let with_len = || items.iter().filter(|j| j.chars.is_some());
    let kinds =
        with_len().any(|j| j.fingerprint.is_some()) && with_len().any(|j| j.fingerprint.is_none());
    for (j, c) in items.iter().zip(composites) {
        let (Some(len), Some(c)) = (j.chars, *c) else {
            continue;
        };
        let t = f64::from(u8::from(j.treatment));
        let mut row = vec![1.0, t, len / 100.0];
        if kinds {
            row.push(f64::from(u8::from(j.fingerprint.is_none())));
        }
        x.push(row);
        y.push(c);
        g.push(j.target);
        let side = &mut chars[usize::from(j.treatment)];
        side.0 += len;
        side.1 += 1;
    }
    if chars[0].1 == 0 || chars[1].1 == 0 {
        let note = "not checked: the text judged is known in one arm only, or in neither".into();
        return (Check::not_made(y.len(), note), None, None);
    }
    let means = [
        chars[0].0 / chars[0].1 as f64,
        chars[1].0 / chars[1].1 as f64,
    ];
    let Some(fit) = clustered(&x, &y, &g) else {
        let note = "not checked: the lengths do not vary, or too few targets to cluster by".into();
        return (Check::not_made(y.len(), note), Some(means), None);
    };
    let impact = fit.coefficients[2] * (means[1] - means[0]) / 100.0;
    let adjusted = Adjusted {
        value: fit.coefficients[1],
        ci: fit.interval(1, LEVEL),
    };
    (
        Check::of_fit(&fit, 2, impact, effect),
        Some(means),
        Some(adjusted),
    )
}

/// Position: each judge's score on arm and the item's place in its call, clustered by target.
fn position(items: &[Judged<'_>], weights: &BTreeMap<String, f64>, effect: Option<f64>) -> Check {
    let (mut x, mut y, mut g) = (Vec::new(), Vec::new(), Vec::new());
    let mut places = [(0.0, 0usize); 2];
    for j in items {
        for v in &j.item.verdicts {
            let (Some(pos), Some(scores)) = (v.position, &v.scores) else {
                continue;
            };
            let Some(s) = weighted(scores.iter().map(|(d, v)| (d.as_str(), *v)), weights) else {
                continue;
            };
            let t = f64::from(u8::from(j.treatment));
            x.push(vec![1.0, t, pos as f64]);
            y.push(s);
            g.push(j.target);
            let side = &mut places[usize::from(j.treatment)];
            side.0 += pos as f64;
            side.1 += 1;
        }
    }
    if y.is_empty() {
        return Check::not_made(
            0,
            "not applicable: no verdict records its position in a judge call".into(),
        );
    }
    let Some(fit) = clustered(&x, &y, &g) else {
        return Check::not_made(
            y.len(),
            "not checked: the positions do not vary, or too few targets to cluster by".into(),
        );
    };
    let mean = |(s, n): (f64, usize)| if n > 0 { s / n as f64 } else { 0.0 };
    let impact = fit.coefficients[2] * (mean(places[1]) - mean(places[0]));
    Check::of_fit(&fit, 2, impact, effect)
}

/// Self-preference: where a judge reports the model a reviewer reports, each of its scores
/// less the other judges' mean on the same item, on whether the item is a finding of such a
/// reviewer, clustered by target.
fn self_preference(
    items: &[Judged<'_>],
    weights: &BTreeMap<String, f64>,
    effect: Option<f64>,
) -> (Check, Vec<String>) {
    let reviewer_models: BTreeSet<&str> = items.iter().filter_map(|j| j.reviewer_model).collect();
    let mut panel: BTreeSet<&str> = BTreeSet::new();
    let mut matched: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut reported = false;
    for j in items {
        for v in &j.item.verdicts {
            panel.insert(&v.model);
            if let Some(m) = &v.reported_model {
                reported = true;
                if reviewer_models.contains(m.as_str()) {
                    matched.entry(&v.model).or_default().insert(m);
                }
            }
        }
    }
    if matched.is_empty() {
        let note = if reported {
            "not applicable: no judge reports a model a reviewer reports"
        } else {
            "not applicable: no judge reports its model"
        };
        return (Check::not_made(0, note.into()), Vec::new());
    }
    let models: BTreeSet<&str> = matched.values().flatten().copied().collect();
    let (mut x, mut y, mut g) = (Vec::new(), Vec::new(), Vec::new());
    let mut share = [(0usize, 0usize); 2];
    for j in items {
        let Some(rm) = j.reviewer_model else { continue };
        let side = &mut share[usize::from(j.treatment)];
        side.0 += usize::from(models.contains(rm));
        side.1 += 1;
        let scores: Vec<(&str, Option<&str>, f64)> = j
            .item
            .verdicts
            .iter()
            .filter_map(|v| {
                let s = weighted(
                    v.scores.as_ref()?.iter().map(|(d, x)| (d.as_str(), *x)),
                    weights,
                )?;
                Some((v.model.as_str(), v.reported_model.as_deref(), s))
            })
            .collect();
        if scores.len() < 2 {
            continue;
        }
        let total: f64 = scores.iter().map(|s| s.2).sum();
        for (judge, model, s) in &scores {
            if !matched.contains_key(judge) {
                continue;
            }
            let others = (total - s) / (scores.len() - 1) as f64;
            let own = model.is_some_and(|m| m == rm);
            x.push(vec![1.0, f64::from(u8::from(own))]);
            y.push(s - others);
            g.push(j.target);
        }
    }
    let judges: Vec<String> = matched.keys().map(|j| format!("`{j}`")).collect();
    let Some(fit) = clustered(&x, &y, &g) else {
        let note = "not checked: the judge scores findings of its own model's reviewer only, or of none, or too few targets to cluster by".into();
        return (Check::not_made(y.len(), note), judges);
    };
    let rate = |(k, n): (usize, usize)| if n > 0 { k as f64 / n as f64 } else { 0.0 };
    let impact = fit.coefficients[1] * matched.len() as f64 / panel.len().max(1) as f64
        * (rate(share[1]) - rate(share[0]));
    (Check::of_fit(&fit, 1, impact, effect), judges)
}

#[cfg(test)]
mod tests;
