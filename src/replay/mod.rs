//! Replay: the pure policies that turn recorded outputs into what a configuration would have
//! shown the user. No IO, no clock, no randomness.

pub mod query;
pub mod query_metrics;
pub mod review;
pub mod review_metrics;
