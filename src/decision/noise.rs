//! The harness's own noise beside a decision metric (docs/guides/live-collection.md, "The
//! harness's own noise"): an A/A run's change of the metric, and the A/B's change net of it.
//! A metric improves only when its own test and the net change both clear 0, and it is said to
//! lie inside the harness's noise exactly when the net change's interval includes 0, so the two
//! never meet on one line.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{signed, Measured};
use crate::stats::power::t_upper;
use crate::stats::test::{mean, sd};

/// Shared units the net change pairs on; fewer, and the two deltas are taken as independent.
pub const MIN_SHARED: usize = 10;

/// An A/A run's figure for one metric: its delta, interval and the per-unit differences it
/// rests on.
#[derive(Clone, Debug, PartialEq)]
pub struct AaFigure {
    pub delta: f64,
    pub ci: Option<[f64; 2]>,
    pub sd: Option<f64>,
    pub pairs: usize,
    /// treatment − baseline per unit id.
    pub units: BTreeMap<String, f64>,
}

/// What the decision reads of a noise floor for one metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Floor {
    /// The A/A's figure, or why it has none.
    pub aa: Result<AaFigure, String>,
    /// What differs between the A/A's harness and this run's baseline harness.
    pub differs: Vec<String>,
    /// The A/B's per-unit differences of the metric, by unit id.
    pub ab_units: BTreeMap<String, f64>,
}

/// The A/B's change net of the harness's: the A/B delta minus the A/A delta.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Net {
    pub delta: f64,
    /// 95%: the paired t-interval of the per-unit net differences over the shared units, else
    /// delta ± t · √(sd²_AB/n_AB + sd²_AA/n_AA) on Welch's degrees of freedom; null when
    /// neither can be drawn.
    pub ci: Option<[f64; 2]>,
    /// The units it rests on: the shared units when paired, else both runs' together.
    pub units: usize,
    /// Whether it pairs the units both runs share (at least 10 of them).
    pub paired: bool,
}

impl Net {
    /// Whether the interval lies wholly on the side of `sign` (+1: above 0).
    pub fn clears(&self, sign: f64) -> bool {
        self.ci
            .is_some_and(|[lo, hi]| if sign > 0.0 { lo > 0.0 } else { hi < 0.0 })
    }

    /// Whether the interval includes 0: the harness alone could make this change.
    pub fn includes_zero(&self) -> bool {
        self.ci.is_some_and(|[lo, hi]| lo <= 0.0 && hi >= 0.0)
    }

    /// The net change of `ab` (with its per-unit differences `ab_units`) against the A/A's.
    pub fn of(ab: &Measured, ab_units: &BTreeMap<String, f64>, aa: &AaFigure) -> Net {
        let shared: Vec<f64> = ab_units
            .iter()
            .filter_map(|(unit, d)| aa.units.get(unit).map(|a| d - a))
            .collect();
        if shared.len() >= MIN_SHARED {
            let n = shared.len() as f64;
            let delta = mean(&shared);
            let ci = sd(&shared).map(|s| {
                let half = t_upper(0.025, n - 1.0) * s / n.sqrt();
                [delta - half, delta + half]
            });
            return Net {
                delta,
                ci,
                units: shared.len(),
                paired: true,
            };
        }
        let delta = ab.delta - aa.delta;
        let variance = |sd: Option<f64>, n: usize| {
            sd.filter(|_| n >= 2)
                .map(|s| (s * s / n as f64, n as f64 - 1.0))
        };
        let ci = match (variance(ab.sd, ab.pairs), variance(aa.sd, aa.pairs)) {
            (Some((va, da)), Some((vb, db))) if va + vb > 0.0 => {
                // Welch–Satterthwaite.
                let df = (va + vb).powi(2) / (va * va / da + vb * vb / db);
                let half = t_upper(0.025, df) * (va + vb).sqrt();
                Some([delta - half, delta + half])
            }
            (Some(_), Some(_)) => Some([delta, delta]),
            _ => None,
        };
        Net {
            delta,
            ci,
            units: ab.pairs + aa.pairs,
            paired: false,
        }
    }
}

/// One metric's change between two collections of the same configuration (an A/A run): what
/// the harness alone moves it by, and the A/B's change net of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Noise {
    /// `null` when the A/A run has no figure for the metric (`missing` says why).
    pub delta: Option<f64>,
    pub ci: Option<[f64; 2]>,
    /// Whether the net change's interval includes 0: a change the harness alone could make.
    /// Never true of an improved metric.
    pub inside: bool,
    /// The A/B's change net of the harness's; null when the A/A has no figure or the A/B none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<Net>,
    /// What differs between the A/A's harness and this run's baseline harness (their
    /// collections' records): a floor measured on another harness may not be this one's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<String>,
    /// Why the A/A run has no figure for the metric: its line says so, never nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl Floor {
    /// The noise beside an A/B whose figure is `ab` (none when unmeasured or withheld).
    pub fn noise(&self, ab: Option<&Measured>) -> Noise {
        match &self.aa {
            Ok(aa) => {
                let net = ab.map(|ab| Net::of(ab, &self.ab_units, aa));
                Noise {
                    delta: Some(aa.delta),
                    ci: aa.ci,
                    inside: net.as_ref().is_some_and(Net::includes_zero),
                    net,
                    differs: self.differs.clone(),
                    missing: None,
                }
            }
            Err(why) => Noise {
                delta: None,
                ci: None,
                inside: false,
                net: None,
                differs: self.differs.clone(),
                missing: Some(why.clone()),
            },
        }
    }
}

impl Noise {
    /// "the harness's own noise (A/A) +0.010 [−0.020, +0.040]; net of it +0.035 [+0.004,
    /// +0.066] over 40 shared targets" and, when the net interval includes 0, "inside the
    /// harness's noise".
    pub fn words(&self, places: usize, units: &str) -> String {
        let interval = |ci: Option<[f64; 2]>| {
            ci.map_or(String::new(), |[lo, hi]| {
                format!(" [{}, {}]", signed(lo, places), signed(hi, places))
            })
        };
        let differs = if self.differs.is_empty() {
            String::new()
        } else {
            format!(
                "; caveat: the A/A was collected by another harness ({}), so this may not be this harness's noise",
                self.differs.join("; ")
            )
        };
        let Some(delta) = self.delta else {
            return format!(
                "the harness's own noise is not known: {}{differs}",
                self.missing
                    .as_deref()
                    .unwrap_or("the A/A run has no figure for it")
            );
        };
        let net = match &self.net {
            Some(net) => {
                let over = if net.paired {
                    format!("paired over {} shared {units}", net.units)
                } else {
                    format!(
                        "the two runs taken as independent: they share fewer than {MIN_SHARED} {units}"
                    )
                };
                let verdict = if self.inside {
                    ": inside the harness's noise (net of it, the change could be none)"
                } else if net.ci.is_none() {
                    ": no interval can be drawn for it"
                } else {
                    ""
                };
                format!(
                    "; net of it {}{} ({over}){verdict}",
                    signed(net.delta, places),
                    interval(net.ci)
                )
            }
            None => String::new(),
        };
        format!(
            "the harness's own noise (A/A) {}{}{net}{differs}",
            signed(delta, places),
            interval(self.ci)
        )
    }
}
