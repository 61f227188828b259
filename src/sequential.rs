//! The sequential decision (docs/guides/stop-when-you-know.md), pure: each decision metric's
//! per-unit differences in arrival order become an anytime-valid confidence sequence at level
//! 0.05/m for m metrics (Bonferroni: valid at every look and under any stopping rule) — by
//! [`Method`]: the hedged-capital betting sequence ([`crate::stats::hedged`], the default) or
//! the empirical-Bernstein one ([`crate::stats::sequence`]) — and after every arrival the
//! decision is read off the bounds: `better` once every metric is decided favourably, `worse`
//! as soon as one regressed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::{Want, Wanted};
use crate::stats::sequence;

/// The family's level: α_m = ALPHA / m.
pub const ALPHA: f64 = 0.05;

/// Which confidence sequence runs.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Waudby-Smith & Ramdas's hedged-capital betting sequence, two bettors a side
    /// (truncations ½ and 1): confseq 0.0.11's `betting_cs` with those strategies.
    #[default]
    Hedged,
    /// Their predictable plug-in empirical-Bernstein sequence: confseq 0.0.11's
    /// `predmix_empbern_twosided_cs(truncation=0.5)`. What runs stored before `method` was
    /// recorded used.
    EmpiricalBernstein,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Hedged => "hedged",
            Method::EmpiricalBernstein => "empirical-bernstein",
        }
    }

    /// What a run stored before `method` was recorded ran.
    fn stored_before() -> Method {
        Method::EmpiricalBernstein
    }

    /// The two-sided level-`alpha` sequence of differences `d` ∈ [−`range`, `range`] on the
    /// difference's own scale: each d mapped to (d + R)/(2R) ∈ [0, 1], the sequence, each bound
    /// mapped back by 2R·b − R. `None` when a difference lies outside the range (the caller
    /// names it) or the range is not positive.
    pub fn of_differences(self, d: &[f64], range: f64, alpha: f64) -> Option<(Vec<f64>, Vec<f64>)> {
        sequence::of_differences_with(d, range, |x| match self {
            Method::Hedged => crate::stats::hedged::two_sided(x, alpha),
            Method::EmpiricalBernstein => sequence::two_sided(x, alpha),
        })
    }
}

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
    /// The confidence sequence that ran.
    #[serde(default = "Method::stored_before")]
    pub method: Method,
    /// The unit ids in the order the sequence ran on them, so anyone can recompute every bound
    /// (a run stored before this list was kept: empty).
    #[serde(deserialize_with = "ids_or_description")]
    pub order: Vec<String>,
    /// How the units were ordered: "collect.json" or "seeded permutation (seed N)".
    #[serde(default)]
    pub order_from: String,
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

/// `order` as it is stored: the unit ids; a run stored before they were kept wrote its
/// description there (now `order_from`), which reads as no ids.
fn ids_or_description<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Ids(Vec<String>),
        // Read to tell it from a list, and let go.
        Description(#[allow(dead_code)] String),
    }
    Ok(match Stored::deserialize(d)? {
        Stored::Ids(ids) => ids,
        Stored::Description(_) => Vec::new(),
    })
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
    method: Method,
    order: Vec<String>,
    order_from: String,
    unit_name: &str,
) -> Result<Sequential, String> {
    let mut fresh = Sequences::default();
    decide_with(streams, method, (order, order_from), unit_name, &mut fresh)
}

/// Each metric's sequence as an earlier decision left it, which a later one over the same
/// streams with more units extends by those units alone (a sequential collection's looks):
/// the hedged sequence's grid of capitals costs what a look adds, not the whole stream.
#[derive(Clone, Debug, Default)]
pub struct Sequences(BTreeMap<String, Kept>);

#[derive(Clone, Debug)]
struct Kept {
    range: f64,
    alpha: f64,
    /// The values on [0, 1] the sequence holds.
    x: Vec<f64>,
    running: crate::stats::hedged::Running,
}

impl Sequences {
    /// [`Method::of_differences`] of the metric `name`'s differences `d`, from the sequence
    /// kept of it when `d` begins with what it holds.
    fn of_differences(
        &mut self,
        name: &str,
        method: Method,
        d: &[f64],
        range: f64,
        alpha: f64,
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        if method != Method::Hedged {
            return method.of_differences(d, range, alpha);
        }
        sequence::of_differences_with(d, range, |x| {
            use crate::stats::hedged::{Running, BREAKS, TRUNCATIONS};
            let fresh = || Kept {
                range,
                alpha,
                x: Vec::new(),
                running: Running::new(alpha, BREAKS, &TRUNCATIONS),
            };
            let kept = self.0.entry(name.to_string()).or_insert_with(fresh);
            let held = kept.x.len();
            if kept.range != range || kept.alpha != alpha || x.get(..held) != Some(&kept.x[..]) {
                *kept = fresh();
            }
            let new = &x[kept.x.len()..];
            kept.running.extend(new);
            kept.x.extend_from_slice(new);
            (kept.running.lower.clone(), kept.running.upper.clone())
        })
    }
}

/// [`decide`] extending the sequences `kept` (and keeping them for the next decision), in
/// the order `order` described by `order_from`.
pub fn decide_with(
    streams: &[(String, Stream)],
    method: Method,
    (order, order_from): (Vec<String>, String),
    unit_name: &str,
    kept: &mut Sequences,
) -> Result<Sequential, String> {
    let units = order.len();
    let alpha = ALPHA / streams.len().max(1) as f64;
    let mut metrics = BTreeMap::new();
    for (name, s) in streams {
        let r = s.range[1] - s.range[0];
        let bounds = kept.of_differences(name, method, &s.d, r, alpha);
        let (lower, upper) = bounds.ok_or_else(|| {
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
        method,
        order,
        order_from,
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

    fn ids(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("u{i}")).collect()
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
            Method::Hedged,
            ids(400),
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
            Method::Hedged,
            ids(300),
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
            Method::Hedged,
            ids(2),
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
    /// the sequence ever excludes 0, looking after every unit, is at most α: for each method,
    /// seeded streams of a 0/1 outcome and a skewed continuous score (1,000 of 500 units for
    /// the empirical-Bernstein sequence; 400 of 300 for the hedged one, whose grid costs more).
    #[test]
    fn on_a_a_streams_the_sequence_excludes_0_at_most_alpha_of_the_time() {
        for (method, streams, units) in [
            (Method::EmpiricalBernstein, 1000, 500),
            (Method::Hedged, 400, 300),
        ] {
            for (shape, draw) in [
                (
                    "0/1 outcome",
                    (|r: &mut Rng| f64::from(r.unit_f64() < 0.3)) as fn(&mut Rng) -> f64,
                ),
                ("skewed score", |r: &mut Rng| r.unit_f64().powi(4)),
            ] {
                let mut ever = 0;
                for i in 0..streams {
                    let mut rng = Rng::for_replicate(20261127, i);
                    let d: Vec<f64> = (0..units)
                        .map(|_| draw(&mut rng) - draw(&mut rng))
                        .collect();
                    let (lo, hi) = method.of_differences(&d, 1.0, ALPHA).unwrap();
                    ever += usize::from(lo.iter().zip(&hi).any(|(l, h)| *l > 0.0 || *h < 0.0));
                }
                let rate = ever as f64 / streams as f64;
                eprintln!(
                    "A/A {} {shape}: {ever} of {streams} streams ever excluded 0 ({rate})",
                    method.name()
                );
                assert!(rate <= ALPHA, "{} {shape}: {rate}", method.name());
            }
        }
    }
}

/// The sequence's cost against the fixed size `plan` names, by seeded simulation.
#[cfg(test)]
mod cost {
    use crate::stats::hedged::{two_sided_until, BREAKS, TRUNCATIONS};
    use crate::stats::power::{mcnemar_needed, needed_for};
    use crate::stats::rng::Rng;
    use crate::stats::test::Test;

    // The promise: at the effect `plan` sizes a fixed A/B of about 200 units for, the
    // sequential decision (one increase metric, α 0.05, the hedged-capital sequence) reaches
    // "improved" after at most twice the fixed size, as the median of 200 seeded streams, on 0/1
    // outcomes and on scores in [0, 1] whose per-unit differences have sd 0.1, 0.2 and 0.3.
    // Measured: 1.37×, 1.83×, 1.21×, 1.17×; the empirical-Bernstein sequence on the same
    // streams (printed beside, not held to it): 1.30×, ≥ 4.0× (its median hits the 4× cap),
    // 2.25×, 1.74×.
    #[test]
    fn the_sequence_needs_at_most_twice_the_fixed_size() {
        let kinds: [(&str, f64, f64); 4] = [
            ("0/1 outcomes, 50% → 64%", 0.0, 0.14),
            ("scores, differences of sd 0.1", 0.1, 0.02),
            ("scores, differences of sd 0.2", 0.2, 0.04),
            ("scores, differences of sd 0.3", 0.3, 0.06),
        ];
        for (what, sd, effect) in kinds {
            let fixed = if sd == 0.0 {
                mcnemar_needed(0.5, effect, 0.05, 0.8).unwrap()
            } else {
                needed_for(Test::PairedT, sd, effect, 0.05, 0.8).unwrap()
            } as usize;
            let cap = 4 * fixed;
            let median = |mut stops: Vec<usize>| {
                stops.sort_unstable();
                (stops[99] + stops[100]) as f64 / 2.0
            };
            let (stops, eb): (Vec<usize>, Vec<usize>) = (0..200u64)
                .map(|s| {
                    let mut rng = Rng::for_replicate(20261205, s);
                    let x: Vec<f64> = (0..cap)
                        .map(|_| {
                            let d = if sd == 0.0 {
                                f64::from(u8::from(rng.unit_f64() < 0.5 + effect))
                                    - f64::from(u8::from(rng.unit_f64() < 0.5))
                            } else {
                                (effect + sd * rng.normal()).clamp(-1.0, 1.0)
                            };
                            (d + 1.0) / 2.0
                        })
                        .collect();
                    let (lo, _) = two_sided_until(&x, 0.05, BREAKS, &TRUNCATIONS, |lo, _| lo > 0.5);
                    let hedged = if lo.last().is_some_and(|&l| l > 0.5) {
                        lo.len()
                    } else {
                        cap + 1
                    };
                    let (lo, _) = crate::stats::sequence::two_sided(&x, 0.05);
                    let eb = lo.iter().position(|&l| l > 0.5).map_or(cap + 1, |t| t + 1);
                    (hedged, eb)
                })
                .unzip();
            let (median, eb) = (median(stops), median(eb));
            let ratio = median / fixed as f64;
            eprintln!(
                "{what}: fixed {fixed}, sequential median {median} ({ratio:.2}×); empirical Bernstein {eb} ({:.2}×, capped at {cap})",
                eb / fixed as f64
            );
            assert!(ratio <= 2.0, "{what}: {ratio:.2}× the fixed size");
        }
    }
}
