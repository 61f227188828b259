//! The pure statistics core: Krippendorff's α and its bootstraps, calibration, percentiles and
//! the seeded random numbers they use. Values in, values out: no files, no clock, no global
//! random state.

pub mod alpha;
pub mod alttest;
pub mod bootstrap;
pub mod calibration;
pub mod hedged;
pub mod holm;
pub mod judges;
pub mod paired;
pub mod patterns;
pub mod power;
pub mod ppi;
pub mod quantile;
pub mod ratio;
pub mod regression;
pub mod rng;
pub mod sequence;
pub mod test;

/// For the statistics' tests: `a` equals `b` to within 1e-9.
#[cfg(test)]
#[track_caller]
pub(crate) fn assert_close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} vs {b}");
}
