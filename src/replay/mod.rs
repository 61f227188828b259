//! Replay: the pure policies that turn recorded outputs into what a configuration would have
//! shown the user. No IO, no clock, no randomness.

pub mod arm;
pub mod query;
pub mod query_metrics;
pub mod review;
pub mod review_metrics;

use serde::{Deserialize, Serialize};

use crate::stats::calibration::round9;

/// How often one confidence value occurred.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ValueCount {
    pub value: f64,
    pub count: usize,
}

/// Every distinct value (compared at 9 decimal places, as the gates compare) with its count,
/// ascending.
pub fn value_counts(values: impl IntoIterator<Item = f64>) -> Vec<ValueCount> {
    merge_counts(values.into_iter().map(|v| ValueCount {
        value: round9(v),
        count: 1,
    }))
}

/// Pools counts of values already rounded (as [`value_counts`] gives them), ascending.
pub fn merge_counts(parts: impl IntoIterator<Item = ValueCount>) -> Vec<ValueCount> {
    let mut parts: Vec<ValueCount> = parts.into_iter().collect();
    parts.sort_unstable_by(|a, b| a.value.total_cmp(&b.value));
    let mut out: Vec<ValueCount> = Vec::new();
    for p in parts {
        match out.last_mut() {
            Some(last) if last.value == p.value => last.count += p.count,
            _ => out.push(p),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_counts_merge_values_equal_at_nine_decimals() {
        let counts = value_counts([0.65, 0.55 + 0.1, 0.5, 1.0]);
        assert_eq!(
            counts,
            vec![
                ValueCount {
                    value: 0.5,
                    count: 1
                },
                ValueCount {
                    value: 0.65,
                    count: 2
                },
                ValueCount {
                    value: 1.0,
                    count: 1
                },
            ]
        );
        assert!(value_counts([]).is_empty());
        // Pooling counts gives what counting everything at once gives.
        let pooled = merge_counts(
            value_counts([0.5, 0.65])
                .into_iter()
                .chain(value_counts([0.65, 1.0])),
        );
        assert_eq!(pooled, counts);
    }
}
