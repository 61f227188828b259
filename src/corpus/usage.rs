//! What a recorded call spent (docs/reference.md, "Cost and latency"): the tokens its model read
//! and wrote and what it cost, as a return may carry them in `usage`, and the wall time
//! `collect` measured (`elapsed_ms`). Each part is optional; a part written wrong (a negative
//! count, a cost that is a string) refuses the line, naming it.

use schemars::JsonSchema;
use serde::{de, Deserialize, Deserializer, Serialize};

/// A call's `usage` object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Tokens the model read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Tokens the model wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// What the call cost, in US dollars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<Amount>,
}

/// Two parts added: the sum where both are known, else the one that is.
fn sum<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

impl Usage {
    /// Two calls' together: a part either reports is their sum.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: sum(self.input_tokens, other.input_tokens),
            output_tokens: sum(self.output_tokens, other.output_tokens),
            cost_usd: sum(self.cost_usd.map(|c| c.0), other.cost_usd.map(|c| c.0)).map(Amount),
        }
    }
}

/// A non-negative finite number (a cost, a duration).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Amount(#[schemars(range(min = 0))] pub f64);

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let x = f64::deserialize(d)?;
        if !x.is_finite() || x < 0.0 {
            return Err(de::Error::custom(format!("{x} is not 0 or more")));
        }
        Ok(Amount(x))
    }
}

/// What one call, or the calls of a (target, run), spent: the sums of what they reported, and
/// how many reported each part.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    pub elapsed_ms: Option<f64>,
}

impl Spent {
    /// A call's: its `usage` and `elapsed_ms`, `None` when it reports neither.
    pub fn of(usage: Option<Usage>, elapsed_ms: Option<Amount>) -> Option<Spent> {
        let u = usage.unwrap_or_default();
        let s = Spent {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cost_usd: u.cost_usd.map(|c| c.0),
            elapsed_ms: elapsed_ms.map(|e| e.0),
        };
        (s != Spent::default()).then_some(s)
    }

    /// Both calls' together: a part reported by either is their sum, the other's taken as 0.
    pub fn plus(self, other: Spent) -> Spent {
        Spent {
            input_tokens: sum(self.input_tokens, other.input_tokens),
            output_tokens: sum(self.output_tokens, other.output_tokens),
            cost_usd: sum(self.cost_usd, other.cost_usd),
            elapsed_ms: sum(self.elapsed_ms, other.elapsed_ms),
        }
    }
}

/// What evaluating cost: every judge call's usage summed, over both arms (the cost of
/// evaluating is never an arm's). `metrics.json` `evaluation`, when any judge reported usage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Evaluation {
    /// Judge calls (verdicts, failed ones included).
    pub judge_calls: u64,
    /// Those that reported usage.
    pub reported: u64,
    pub cost_usd: Option<f64>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

impl Evaluation {
    /// Of `usages`, one per judge call; `None` when none reported any.
    pub fn of(usages: impl IntoIterator<Item = Option<Usage>>) -> Option<Evaluation> {
        let mut e = Evaluation::default();
        let mut spent: Option<Spent> = None;
        for u in usages {
            e.judge_calls += 1;
            if let Some(s) = Spent::of(u, None) {
                e.reported += 1;
                spent = Some(spent.map_or(s, |t| t.plus(s)));
            }
        }
        let s = spent?;
        e.cost_usd = s.cost_usd;
        e.input_tokens = s.input_tokens;
        e.output_tokens = s.output_tokens;
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_is_zero_or_more_and_parts_add() {
        let u: Usage = serde_json::from_str(r#"{"input_tokens": 10, "cost_usd": 0.25}"#).unwrap();
        assert_eq!(u.cost_usd, Some(Amount(0.25)));
        let e = serde_json::from_str::<Usage>(r#"{"cost_usd": -1}"#).unwrap_err();
        assert!(e.to_string().contains("-1 is not 0 or more"), "{e}");
        assert!(serde_json::from_str::<Usage>(r#"{"cost_usd": "0.2"}"#).is_err());
        assert!(serde_json::from_str::<Usage>(r#"{"input_tokens": -3}"#).is_err());
        assert!(serde_json::from_str::<Usage>(r#"{"tokens": 3}"#).is_err());
        let a = Spent::of(Some(u), Some(Amount(1200.0))).unwrap();
        let b = Spent::of(None, Some(Amount(800.0))).unwrap();
        let both = a.plus(b);
        assert_eq!(both.elapsed_ms, Some(2000.0));
        assert_eq!(both.cost_usd, Some(0.25));
        assert_eq!(both.input_tokens, Some(10));
        assert_eq!(both.output_tokens, None);
        assert_eq!(Spent::of(None, None), None);
        let e = Evaluation::of([Some(u), None, Some(u)]).unwrap();
        assert_eq!((e.judge_calls, e.reported), (3, 2));
        assert_eq!(e.cost_usd, Some(0.5));
        assert_eq!(e.input_tokens, Some(20));
        assert_eq!(Evaluation::of([None, None]), None);
    }
}
