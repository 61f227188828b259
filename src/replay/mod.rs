//! Replay: the pure policies that turn recorded outputs into what a configuration would have
//! shown the user. No IO, no clock, no randomness.

pub mod query;
pub mod query_metrics;
pub mod review;
pub mod review_metrics;

use serde::{Deserialize, Serialize};

use crate::stats::calibration::round9;

/// How often one confidence value occurred.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValueCount {
    pub value: f64,
    pub count: usize,
}

/// Every distinct value (compared at 9 decimal places, as the gates compare) with its count,
/// ascending.
pub fn value_counts(values: impl IntoIterator<Item = f64>) -> Vec<ValueCount> {
    let mut sorted: Vec<f64> = values.into_iter().map(round9).collect();
    sorted.sort_unstable_by(f64::total_cmp);
    let mut out: Vec<ValueCount> = Vec::new();
    for v in sorted {
        match out.last_mut() {
            Some(last) if last.value == v => last.count += 1,
            _ => out.push(ValueCount { value: v, count: 1 }),
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
    }
}
