//! The sequential decision (docs/guides/stop-when-you-know.md), pure: each decision metric's
//! per-unit differences in arrival order become an anytime-valid confidence sequence
//! ([`crate::stats::sequence`]) at level 0.05/m for m metrics (Bonferroni: valid at every look
//! and under any stopping rule), and after every arrival the decision is read off the bounds:
//! `better` once every metric is decided favourably, `worse` as soon as one regressed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::{Want, Wanted};
use crate::stats::sequence;

/// The family's level: α_m = ALPHA / m.
pub const ALPHA: f64 = 0.05;

/// One decision metric's differences in arrival order.
#[derive(Clone, Debug, PartialEq)]
pub struct Stream {
    pub wanted: Wanted,
    /// The per-unit values' range [lo, hi]: a difference lies in [−(hi − lo), hi − lo].
    pub range: [f64; 2],
    /// The look (arrivals so far, from 1) at which each difference arrived, non-decreasing.
    pub looks: Vec<usize>,
    /// treatment − baseline, one per unit that both arms have.
    pub d: Vec<f64>,
}

/// What a metric's bounds say at a look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Reading {
    /// A metric that must move, shown to move the wanted way.
    Improved,
    /// Shown to move the wrong way (beyond the margin, for a guard).
    Regressed,
    /// A guard whose unsafe bound lies within its margin (0 without one).
    Held,
    Undecided,
}

impl Reading {
    pub fn words(self) -> &'static str {
        match self {
            Reading::Improved => "improved",
            Reading::Regressed => "regressed",
            Reading::Held => "held",
            Reading::Undecided => "undecided",
        }
    }

    fn favourable(self) -> bool {
        matches!(self, Reading::Improved | Reading::Held)
    }
}

/// The sequential verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Better,
    Worse,
    Undecided,
    /// A decision metric is judge-derived and the judges are not trusted: no sequence runs on
    /// what `run` withholds.
    Withheld,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Undecided => "undecided",
            Verdict::Withheld => "withheld",
        }
    }
}

/// One metric's sequence and what it decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricSequence {
    pub want: Want,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// The per-unit values' range.
    pub range: [f64; 2],
    /// The look at which each unit's difference arrived.
    pub t: Vec<usize>,
    /// The sequence's bounds on the mean difference after each unit.
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    /// The first look at which the metric was decided (improved, held or regressed).
    pub decided_at: Option<usize>,
    /// Its reading where the collection stopped (at the last look when it did not).
    pub outcome: Reading,
}

impl MetricSequence {
    /// The bounds after the units that had arrived by `look`; (−R, R) before any.
    pub fn at(&self, look: usize) -> [f64; 2] {
        let n = self.t.partition_point(|&t| t <= look);
        let r = self.range[1] - self.range[0];
        match n {
            0 => [-r, r],
            n => [self.lower[n - 1], self.upper[n - 1]],
        }
    }

    /// The units of this metric that had arrived by `look`.
    pub fn units_at(&self, look: usize) -> usize {
        self.t.partition_point(|&t| t <= look)
    }
}

/// The sequential decision over every decision metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sequential {
    /// Each metric's level: 0.05 / m.
    pub alpha: f64,
    /// How the units were ordered: "collect.json" or "seeded permutation (seed N)".
    pub order: String,
    /// What a unit is ("targets", "queries", "items").
    pub unit_name: String,
    /// The first look at which the verdict was better or worse.
    pub stopped_at: Option<usize>,
    /// Units (looks) in the corpus.
    pub units: usize,
    /// Units a collection that stopped at the decision would not have collected.
    pub saved: usize,
    pub verdict: Verdict,
    /// Decision metrics withheld with the judges' figures: the verdict is `withheld`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<String>,
    pub metrics: BTreeMap<String, MetricSequence>,
}

/// What `bounds` say of a metric wanted as `w`: see [`Reading`]. A guard without a margin has
/// margin 0: it holds only when shown not to move the wrong way at all.
pub fn read(w: &Wanted, [lo, hi]: [f64; 2]) -> Reading {
    let margin = w.margin.unwrap_or(0.0);
    // Bounds in the direction of "good": the good side's bound and the bad side's.
    let (good_lo, good_hi) = if w.want.good_sign() > 0.0 {
        (lo, hi)
    } else {
        (-hi, -lo)
    };
    if w.want.must_move() {
        if good_lo > 0.0 {
            Reading::Improved
        } else if good_hi < 0.0 {
            Reading::Regressed
        } else {
            Reading::Undecided
        }
    } else if good_lo > -margin {
        Reading::Held
    } else if good_hi < -margin {
        Reading::Regressed
    } else {
        Reading::Undecided
    }
}

/// The verdict of readings: worse when one regressed, better when all are favourable.
fn verdict_of(readings: impl Iterator<Item = Reading> + Clone) -> Verdict {
    if readings.clone().any(|r| r == Reading::Regressed) {
        Verdict::Worse
    } else if readings.clone().all(Reading::favourable) {
        Verdict::Better
    } else {
        Verdict::Undecided
    }
}

/// The sequential decision over `streams` (named), `units` looks in all. Errs naming the
/// metric when a difference lies outside its range. A metric `run` withheld has no stream: see
/// [`withhold`].
pub fn decide(
    streams: &[(String, Stream)],
    units: usize,
    order: String,
    unit_name: &str,
) -> Result<Sequential, String> {
    let alpha = ALPHA / streams.len().max(1) as f64;
    let mut metrics = BTreeMap::new();
    for (name, s) in streams {
        let r = s.range[1] - s.range[0];
        let (lower, upper) = sequence::of_differences(&s.d, r, alpha).ok_or_else(|| {
            let worst = s.d.iter().fold(0.0f64, |m, d| m.max(d.abs()));
            format!(
                "`{name}`: a per-unit difference of {} lies outside ±{} (its range [{}, {}])",
                crate::text::fmt_num(worst),
                crate::text::fmt_num(r),
                crate::text::fmt_num(s.range[0]),
                crate::text::fmt_num(s.range[1])
            )
        })?;
        let mut m = MetricSequence {
            want: s.wanted.want,
            margin: s.wanted.margin,
            range: s.range,
            t: s.looks.clone(),
            lower,
            upper,
            decided_at: None,
            outcome: Reading::Undecided,
        };
        m.decided_at =
            m.t.iter()
                .zip(m.lower.iter().zip(&m.upper))
                .find(|(_, (&lo, &hi))| read(&s.wanted, [lo, hi]) != Reading::Undecided)
                .map(|(&t, _)| t);
        metrics.insert(name.clone(), (s.wanted.clone(), m));
    }
    // The verdict can change only where some metric's bounds do: at a decided_at.
    let mut looks: Vec<usize> = metrics.values().filter_map(|(_, m)| m.decided_at).collect();
    looks.sort_unstable();
    let stopped_at = looks.into_iter().find(|&look| {
        verdict_of(metrics.values().map(|(w, m)| read(w, m.at(look)))) != Verdict::Undecided
    });
    let at = stopped_at.unwrap_or(units);
    let verdict = verdict_of(metrics.values().map(|(w, m)| read(w, m.at(at))));
    let metrics = metrics
        .into_iter()
        .map(|(name, (w, mut m))| {
            m.outcome = read(&w, m.at(at));
            (name, m)
        })
        .collect();
    Ok(Sequential {
        alpha,
        order,
        unit_name: unit_name.to_string(),
        stopped_at,
        units,
        saved: stopped_at.map_or(0, |s| units - s),
        verdict,
        withheld: Vec::new(),
        metrics,
    })
}

/// `s` with the metrics `names` withheld (judge-derived under judges that are not trusted):
/// nothing is decided on a figure `run` does not report, so the verdict is `withheld` and no
/// stop is claimed.
pub fn withhold(mut s: Sequential, names: Vec<String>) -> Sequential {
    if !names.is_empty() {
        s.verdict = Verdict::Withheld;
        s.stopped_at = None;
        s.saved = 0;
        s.withheld = names;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::Rng;

    fn wanted(want: Want, margin: Option<f64>) -> Wanted {
        Wanted {
            margin,
            ..Wanted::plain("m", want)
        }
    }

    #[test]
    fn readings_follow_the_bounds_and_the_margin() {
        let inc = wanted(Want::Increase, None);
        assert_eq!(read(&inc, [0.01, 0.2]), Reading::Improved);
        assert_eq!(read(&inc, [-0.2, -0.01]), Reading::Regressed);
        assert_eq!(read(&inc, [-0.1, 0.1]), Reading::Undecided);
        let dec = wanted(Want::Decrease, None);
        assert_eq!(read(&dec, [-0.2, -0.01]), Reading::Improved);
        let guard = wanted(Want::NoDecrease, Some(0.05));
        assert_eq!(read(&guard, [-0.04, 0.1]), Reading::Held);
        assert_eq!(read(&guard, [-0.06, 0.1]), Reading::Undecided);
        assert_eq!(read(&guard, [-0.2, -0.06]), Reading::Regressed);
        // A fall shown, but within the margin, holds: the margin says it does not matter.
        assert_eq!(read(&guard, [-0.04, -0.01]), Reading::Held);
        let bare = wanted(Want::NoIncrease, None);
        assert_eq!(read(&bare, [-0.1, -0.001]), Reading::Held);
        assert_eq!(read(&bare, [-0.1, 0.001]), Reading::Undecided);
    }

    fn stream(want: Want, d: Vec<f64>) -> Stream {
        Stream {
            wanted: wanted(want, None),
            range: [0.0, 1.0],
            looks: (1..=d.len()).collect(),
            d,
        }
    }

    #[test]
    fn a_clear_effect_stops_early_and_saves_the_rest() {
        let mut rng = Rng::for_replicate(3, 0);
        let d: Vec<f64> = (0..400)
            .map(|_| f64::from(rng.unit_f64() < 0.5) - f64::from(rng.unit_f64() < 0.1))
            .collect();
        let s = decide(
            &[("m".into(), stream(Want::Increase, d))],
            400,
            "test".into(),
            "targets",
        )
        .unwrap();
        assert_eq!(s.verdict, Verdict::Better);
        let at = s.stopped_at.unwrap();
        assert!(at < 100, "{at}");
        assert_eq!(s.saved, 400 - at);
        assert_eq!(s.metrics["m"].decided_at, Some(at));
        assert_eq!(s.metrics["m"].outcome, Reading::Improved);
    }

    #[test]
    fn worse_as_soon_as_one_regresses() {
        let up = stream(Want::Increase, vec![0.0; 300]);
        let down = stream(Want::NoDecrease, vec![-0.6; 300]);
        let s = decide(
            &[("a".into(), up), ("b".into(), down)],
            300,
            "test".into(),
            "targets",
        )
        .unwrap();
        assert_eq!(s.verdict, Verdict::Worse);
        assert_eq!(s.metrics["b"].outcome, Reading::Regressed);
        assert_eq!(s.alpha, 0.025);
    }

    #[test]
    fn a_difference_outside_the_range_is_named() {
        let e = decide(
            &[("acc".into(), stream(Want::Increase, vec![0.5, 1.5]))],
            2,
            "test".into(),
            "items",
        )
        .unwrap_err();
        assert!(
            e.contains("`acc`: a per-unit difference of 1.5 lies outside ±1"),
            "{e}"
        );
    }

    /// The promise: on A/A streams (both arms one distribution) the share of streams in which
    /// the sequence ever excludes 0, looking after every unit, is at most α. 1,000 seeded
    /// streams of 500 units each, for a 0/1 outcome and a skewed continuous score.
    #[test]
    fn on_a_a_streams_the_sequence_excludes_0_at_most_alpha_of_the_time() {
        for (shape, draw) in [
            (
                "0/1 outcome",
                (|r: &mut Rng| f64::from(r.unit_f64() < 0.3)) as fn(&mut Rng) -> f64,
            ),
            ("skewed score", |r: &mut Rng| r.unit_f64().powi(4)),
        ] {
            let streams = 1000;
            let mut ever = 0;
            for i in 0..streams {
                let mut rng = Rng::for_replicate(20261127, i);
                let d: Vec<f64> = (0..500).map(|_| draw(&mut rng) - draw(&mut rng)).collect();
                let (lo, hi) = sequence::of_differences(&d, 1.0, ALPHA).unwrap();
                ever += usize::from(lo.iter().zip(&hi).any(|(l, h)| *l > 0.0 || *h < 0.0));
            }
            let rate = ever as f64 / streams as f64;
            eprintln!("A/A {shape}: {ever} of {streams} streams ever excluded 0 ({rate})");
            assert!(rate <= ALPHA, "{shape}: {rate}");
        }
    }
}
