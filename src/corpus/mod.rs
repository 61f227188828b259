//! Corpora: the recorded files an experiment replays, read and validated into typed values.

pub mod reviews;
pub mod verdicts;
