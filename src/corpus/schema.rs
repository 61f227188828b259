//! The JSON Schema of each corpus file's line, derived from the type its reader deserializes the
//! line into: a field added to `RawQuery` is in the `queries` schema without another word.
//! The rules across values (a judge once per item, a tool's evidence by kind, a finding's field
//! rules under an arm's scale) are the readers'; a schema states the shape and each value's range.

use schemars::{schema_for, Schema};

use super::{
    labels::RawLabel, queries::RawQuery, reviews::RawReturn, scores::Score, targets::RawTarget,
    validations::RawValidation, verdicts::RawItem,
};

/// Derives one line type's schema.
type Derive = fn() -> Schema;

/// One corpus file: the stem of its name (`reviews` for `reviews.jsonl`), what it holds, and
/// how its line's schema is derived.
pub struct CorpusFile {
    pub stem: &'static str,
    pub holds: &'static str,
    derive: Derive,
}

impl CorpusFile {
    /// The line type's schema, titled after the file ("reviews.jsonl line").
    pub fn schema(&self) -> Schema {
        let mut schema = (self.derive)();
        let title = format!("{}.jsonl line", self.stem);
        schema.insert("title".into(), title.into());
        schema
    }
}

/// Every corpus file calibench reads, in the order the docs list them.
pub const FILES: &[CorpusFile] = &[
    file::<RawReturn>("reviews", "reviewer returns"),
    file::<RawQuery>("queries", "agent query traces"),
    file::<RawItem>("verdicts", "judge verdicts"),
    file::<RawValidation>("validations", "validator verdicts"),
    file::<RawTarget>("targets", "target metadata"),
    file::<Score>("scores", "imported scores"),
    file::<RawLabel>("labels", "human labels"),
];

/// A corpus file whose lines deserialize as `T`.
const fn file<T: schemars::JsonSchema>(stem: &'static str, holds: &'static str) -> CorpusFile {
    CorpusFile {
        stem,
        holds,
        derive: || schema_for!(T),
    }
}

/// The schema of a line of the corpus file `stem` (`reviews`, `queries`, `verdicts`,
/// `validations`, `targets`, `scores`, `labels`).
pub fn of(stem: &str) -> Option<Schema> {
    FILES
        .iter()
        .find(|f| f.stem == stem)
        .map(CorpusFile::schema)
}

/// The stems [`of`] knows, for a message naming them.
pub fn stems() -> Vec<&'static str> {
    FILES.iter().map(|f| f.stem).collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::schema_walk::every_key_is_described;

    /// Every key of every example corpus line is a property at its place in its file's derived
    /// schema, and every line reads: the schema and the reader come from one type.
    #[test]
    fn the_derived_schemas_describe_every_key_of_the_example_corpora() {
        let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
        let mut lines = 0;
        for entry in std::fs::read_dir(&corpora).unwrap() {
            for file in FILES {
                let path = entry
                    .as_ref()
                    .unwrap()
                    .path()
                    .join(format!("{}.jsonl", file.stem));
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let schema = serde_json::to_value(file.schema()).unwrap();
                for (i, line) in text.lines().enumerate() {
                    let value: serde_json::Value = serde_json::from_str(line).unwrap();
                    let at = format!("{}:{}", path.display(), i + 1);
                    every_key_is_described(&value, &schema, &at, &["findings"]);
                    lines += 1;
                }
            }
        }
        assert!(lines > 1000, "{lines} example lines");
        assert_eq!(
            stems(),
            [
                "reviews",
                "queries",
                "verdicts",
                "validations",
                "targets",
                "scores",
                "labels"
            ]
        );
        assert!(of("sources").is_none());
        // The walk can fail: a key no schema describes, at depth.
        let q = serde_json::to_value(of("queries").unwrap()).unwrap();
        let typo = serde_json::json!({"query_id": "q", "tools": [{"tool": "find", "hitz": 1}]});
        let walked = std::panic::catch_unwind(|| every_key_is_described(&typo, &q, "typo", &[]));
        assert!(walked.is_err());
    }

    /// The ranges and requirements the readers enforce are stated in the schemas.
    #[test]
    fn the_schemas_state_the_readers_ranges_and_requirements() {
        let q = serde_json::to_value(of("queries").unwrap()).unwrap();
        let required = |v: &serde_json::Value| v["required"].clone();
        assert_eq!(required(&q), serde_json::json!(["query_id", "tools"]));
        let tool = &q["$defs"]["RawTool"];
        assert_eq!(tool["properties"]["score"]["maximum"], 1);
        assert_eq!(tool["properties"]["attempt"]["minimum"], 1);
        let v = serde_json::to_value(of("verdicts").unwrap()).unwrap();
        let verdict = &v["$defs"]["RawVerdict"];
        assert_eq!(
            required(verdict),
            serde_json::json!(["model", "per_dimension"])
        );
        // Written, but `null` for a judge that failed.
        let scores = &verdict["properties"]["per_dimension"];
        assert_eq!(scores["type"], serde_json::json!(["object", "null"]));
        assert_eq!(scores["minProperties"], 1);
        let r = serde_json::to_value(of("reviews").unwrap()).unwrap();
        assert_eq!(r["else"]["required"], serde_json::json!(["findings"]));
        assert_eq!(r["$defs"]["Text"]["pattern"], "\\S");
    }
}
