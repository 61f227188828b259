//! calibench: replay recorded LLM reviewer and agent corpora through a baseline and a treatment
//! confidence configuration, and tell whether the change is better.
//!
//! Data flows one way:
//!
//! ```text
//! commands ─▶ config (experiment.toml) ─▶ pipeline::load (which files make a corpus)
//!     ─▶ replay (the review pipeline and its metrics, the confidence models; pure)
//!     ─▶ stats (α, calibration, bootstraps, paired deltas, Holm and power; pure)
//!     ─▶ trust (the verdict and the lift it guards; pure) · decision (better or not; pure)
//!     ─▶ analysis (assembles model::Metrics: what metrics.json holds)
//!     ─▶ report (Markdown, HTML, plots, tables) · gate · output (JSON or text)
//! ```
//!
//! Module dependencies point down the layers of docs/architecture.md, and `tests/layers.rs`
//! holds them there. Where each rule lives (docs/architecture.md says more; docs/reference.md
//! and docs/guides/ say what each rule is):
//! * `policy`: the replay's vocabulary (mode, scale, review and confidence policies, precision
//!   controls, trust thresholds, an arm, what "better" means).
//! * `config`: the experiment file, typed, defaults resolved, unknown keys refused.
//! * `corpus`: the JSON Lines readers (returns, traces, verdicts, and code review's validator
//!   calls, PR metadata and source snapshots, imported scores), each reading a line through its
//!   serde-derived line type (whose JSON Schema `corpus::files` derives) and then checking the
//!   rules across values; and `pipeline::load`, the one loader `run`, `gate` and `validate`
//!   share, so that `validate` reports exactly what `run` refuses.
//! * `input`: the CSV readers of `alpha` and `calibrate`, and the TOML reader.
//! * `model`: the result model; `analysis` assembles it.
//! * `replay`, `stats`, `trust`, `decision`: the pure core: values in, values out; no files,
//!   clock or global randomness (every bootstrap takes a seed). Code review's precision controls
//!   live in `replay::review` (lint-ignore, the validation pass) and `replay::arm` (skip rules).
//! * `collect`: live collection: the plan and arrival checks (pure) and the runner.
//! * `gate`: the CI regression gate's policy and evaluation.
//! * `sweep`: the threshold sweep (pure): grid, figures, requirements, choice and hold-out;
//!   `analysis::sweep` replays a grid point, `pipeline::sweep` runs one end to end.
//! * `report`: every rendering of the result model; `text` makes corpus strings safe for each
//!   kind of output.
//! * `rundir`: run directories on disk: ids claimed atomically, directories written whole,
//!   litter of killed runs swept.
//! * `commands`: one module per command, doing the reading and writing at the edges; errors
//!   are one enum in `error`, and exit statuses are decided in `exit`.

pub mod analysis;
mod bytes;
pub mod collect;
pub mod commands;
pub mod config;
pub mod corpus;
pub mod decision;
pub mod error;
pub mod exit;
pub mod gate;
pub mod generate;
pub mod human_units;
pub mod humans;
pub mod import;
pub mod input;
pub mod model;
pub mod output;
pub mod pipeline;
pub mod policy;
pub mod replay;
pub mod report;
pub mod rundir;
#[cfg(test)]
mod schema_walk;
pub mod sequential;
pub mod sizing;
pub mod stats;
pub mod sweep;
pub mod text;
mod threads;
pub mod trust;
