//! The harness's own noise beside a decision metric (docs/guides/live-collection.md, "The
//! harness's own noise"): an A/A run's change of the metric, and what it says of the A/B's.

use serde::{Deserialize, Serialize};

use super::signed;

/// One metric's change between two collections of the same configuration (an A/A run): what
/// the harness alone moves it by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Noise {
    /// `null` when the A/A run has no figure for the metric (`missing` says why).
    pub delta: Option<f64>,
    pub ci: Option<[f64; 2]>,
    /// Whether the A/B's own delta lies inside the A/A interval: a change the harness alone
    /// makes as often as not.
    pub inside: bool,
    /// What differs between the A/A's harness and this run's baseline harness (their
    /// collections' records): a floor measured on another harness may not be this one's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<String>,
    /// Why the A/A run has no figure for the metric: its line says so, never nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl Noise {
    /// The noise of an A/A delta, for an A/B whose delta is `ab`.
    pub fn of(delta: f64, ci: Option<[f64; 2]>, ab: Option<f64>) -> Noise {
        let inside = match (ci, ab) {
            (Some([lo, hi]), Some(x)) => x >= lo && x <= hi,
            _ => false,
        };
        Noise {
            delta: Some(delta),
            ci,
            inside,
            differs: Vec::new(),
            missing: None,
        }
    }

    /// A noise floor that has no figure for the metric, and why.
    pub fn missing(why: String) -> Noise {
        Noise {
            delta: None,
            ci: None,
            inside: false,
            differs: Vec::new(),
            missing: Some(why),
        }
    }

    /// "harness noise (A/A) +0.010 [−0.020, +0.040]; this change lies inside it".
    pub fn words(&self, places: usize) -> String {
        let ci = self.ci.map_or(String::new(), |[lo, hi]| {
            format!(" [{}, {}]", signed(lo, places), signed(hi, places))
        });
        let inside = if self.inside {
            "; this change lies inside it: the harness alone moves the metric this much"
        } else {
            ""
        };
        let differs = if self.differs.is_empty() {
            String::new()
        } else {
            format!(
                "; caveat: the A/A was collected by another harness ({}), so this may not be this harness's noise",
                self.differs.join("; ")
            )
        };
        match self.delta {
            Some(delta) => format!(
                "the harness's own noise (A/A) {}{ci}{inside}{differs}",
                signed(delta, places)
            ),
            None => format!(
                "the harness's own noise is not known: {}{differs}",
                self.missing
                    .as_deref()
                    .unwrap_or("the A/A run has no figure for it")
            ),
        }
    }
}
