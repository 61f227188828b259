//! What a collection records of the harness that made each arm's lines (collect.json
//! `provenance`; docs/guides/live-collection.md, "Provenance and drift"): read by `run` to
//! compare the arms, and kept in a run's ledger to compare a noise floor with.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// collect.json `provenance`: each recorded arm label's harness.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub arms: BTreeMap<String, ArmRecord>,
}

/// One arm label's harness.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArmRecord {
    pub calibench: String,
    /// Each `provenance_env` variable's value (`(unset)` when unset), but a credential's.
    pub env: BTreeMap<String, String>,
    /// Each `provenance_env` variable whose name or value looks like a credential: only whether
    /// it was set, never its value or a hash of it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: BTreeMap<String, bool>,
    /// Role (`reviewer`, `validator`, `judge`) → name → its command.
    pub roles: BTreeMap<String, BTreeMap<String, Command>>,
}

/// One role's command as the arm ran it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Command {
    pub argv: Vec<String>,
    /// Each argument that names a file, with the file's SHA-256.
    pub files: BTreeMap<String, String>,
}
