//! Live collection (docs/guides/live-collection.md): run reviewer or agent commands over every target, arm, reviewer
//! and repeat, and record a corpus `run` can replay. `plan` is the pure part: the `[collect]`
//! table, the calls, their argv and the paths they may write.

pub mod arrival;
pub mod plan;
pub mod provenance;
pub mod runner;
pub mod shard;
pub mod stages;

/// What each live command prints, by the name `calibench schema` gives its JSON Schema: a
/// reviewer's return, an agent's query trace, a validator's verdict, a judge's verdict.
pub const RETURNS: [&str; 4] = [
    "review-return",
    "query-trace",
    "validator-verdict",
    "judge-verdict",
];
