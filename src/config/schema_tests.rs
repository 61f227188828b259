use super::*;
use crate::schema_walk::{every_key_is_described, property};

/// The JSON Schema is derived from the types the reader uses: every key the example
/// experiments set (arms, review and confidence policies, trust, gate checks, collect) is a
/// property at its place in it.
#[test]
fn the_derived_schema_describes_every_key_of_the_examples() {
    let schema = serde_json::to_value(schemars::schema_for!(RawExperiment)).unwrap();
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
    let mut seen = 0;
    for entry in std::fs::read_dir(&corpora).unwrap() {
        let path = entry.unwrap().path().join("experiment.toml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        parse(&path, &text).unwrap();
        let table: toml::Table = text.parse().unwrap();
        let value = serde_json::to_value(table).unwrap();
        every_key_is_described(&value, &schema, &path.display().to_string(), &[]);
        seen += 1;
    }
    assert!(seen >= 4, "{seen} example experiments");
    // And a key the reader refuses is not in it.
    assert!(property(&schema, &schema, "arms").is_some());
    assert!(property(&schema, &schema, "bootstrapp").is_none());
}
