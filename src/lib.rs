//! calibench: replay recorded LLM reviewer and agent corpora through a baseline and a treatment
//! confidence configuration, and tell whether the change is better.
//!
//! Data flows one way: `cli` (arguments) → `input` (read and validate files into typed values)
//! → `stats` (pure statistics: no IO, no clock, no global randomness) → `commands` (assemble one
//! result per command) → `output` (JSON or human text on stdout). Errors are one enum in `error`;
//! exit statuses are decided in `exit`.

pub mod analysis;
pub mod cli;
pub mod collect;
pub mod commands;
pub mod config;
pub mod corpus;
pub mod error;
pub mod exit;
pub mod gate;
pub mod generate;
pub mod input;
pub mod output;
pub mod replay;
pub mod report;
pub mod rundir;
pub mod stats;
pub mod text;
pub mod trust;
