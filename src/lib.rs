//! calibench: replay recorded LLM reviewer and agent corpora through a baseline and a treatment
//! confidence configuration, and tell whether the change is better.
//!
//! Data flows one way:
//!
//! ```text
//! cli ─▶ config (experiment.toml, §3) ─▶ corpus::load (which files make a corpus, §2)
//!     ─▶ replay (review pipeline §4.1–4.2, confidence models §4.3; pure)
//!     ─▶ stats (α §4.4, calibration §4.5, bootstraps, paired deltas, Holm and power §4.8; pure)
//!     ─▶ trust (the verdict and the lift it guards, §4.6; pure)
//!     ─▶ analysis (one result model: what metrics.json holds, §5)
//!     ─▶ report (Markdown, HTML, plots, tables) · gate (§7) · output (JSON or text)
//! ```
//!
//! Where each part of the specification lives:
//! * `config`: the experiment file, typed, defaults resolved, unknown keys refused (§3).
//! * `corpus`: the JSON Lines readers (§2.1–2.3, and §2.5–2.6's validator calls, PR metadata
//!   and source snapshots), each reading a line through its serde-derived
//!   line type (whose JSON Schema `corpus::schema` derives) and then checking the rules across
//!   values; and `corpus::load`, the one loader `run`, `gate` and `validate` share, so that
//!   `validate` reports exactly what `run` refuses.
//! * `input`: the CSV readers of `alpha` and `calibrate` (§2.4).
//! * `replay`, `stats`, `trust`: the pure core: values in, values out; no files, clock or
//!   global randomness (every bootstrap takes a seed). Code review's precision controls
//!   (§4.7) live in `replay::review` (lint-ignore, the validation pass) and `replay::arm`
//!   (skip rules).
//! * `collect`: live collection (§8): the plan and arrival checks (pure) and the runner.
//! * `gate`: the CI regression gate's policy and evaluation (§7).
//! * `report`: every rendering of the result model; `text` makes corpus strings safe for each
//!   kind of output (§6).
//! * `rundir`: run directories on disk: ids claimed atomically, directories written whole,
//!   litter of killed runs swept (§5).
//! * `commands`: one module per command, doing the reading and writing at the edges; errors
//!   are one enum in `error`, and exit statuses are decided in `exit`.

pub mod analysis;
pub mod cli;
pub mod collect;
pub mod commands;
pub mod config;
pub mod corpus;
pub mod decision;
pub mod error;
pub mod exit;
pub mod gate;
pub mod generate;
pub mod import;
pub mod input;
pub mod output;
pub mod replay;
pub mod report;
pub mod rundir;
#[cfg(test)]
mod schema_walk;
pub mod stats;
pub mod text;
pub mod trust;
