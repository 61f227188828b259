//! Test support: walks a value's keys through a derived JSON Schema.

use serde_json::Value;

/// The schema node at a `$ref`, or the node itself.
fn resolve<'a>(node: &'a Value, root: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => &root["$defs"][r.rsplit('/').next().unwrap_or(r)],
        None => node,
    }
}

/// The schema of `key` below `node`, looking through optional and tagged variants.
pub fn property<'a>(node: &'a Value, root: &'a Value, key: &str) -> Option<&'a Value> {
    let node = resolve(node, root);
    if let Some(p) = node.get("properties").and_then(|p| p.get(key)) {
        return Some(p);
    }
    // A map: any key, each value of one schema.
    if let Some(p) = node.get("additionalProperties").filter(|p| p.is_object()) {
        return Some(p);
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| node.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(|alt| property(alt, root, key))
}

/// The schema of an array's items below `node`.
fn items<'a>(node: &'a Value, root: &'a Value) -> &'a Value {
    let node = resolve(node, root);
    node.get("items")
        .or_else(|| {
            node.get("anyOf")
                .and_then(Value::as_array)
                .and_then(|a| a.iter().find_map(|x| x.get("items")))
        })
        .unwrap_or(&Value::Null)
}

/// Panics naming the first key of `value` (at any depth) that `schema` does not describe at its
/// place. Keys listed in `opaque` hold free-form values the walk does not enter.
pub fn every_key_is_described(value: &Value, schema: &Value, at: &str, opaque: &[&str]) {
    walk(value, schema, schema, at, opaque);
}

fn walk(value: &Value, node: &Value, root: &Value, at: &str, opaque: &[&str]) {
    match value {
        Value::Object(o) => {
            for (key, v) in o {
                let here = format!("{at}.{key}");
                let child =
                    property(node, root, key).unwrap_or_else(|| panic!("the schema lacks {here}"));
                if !opaque.contains(&key.as_str()) {
                    walk(v, child, root, &here, opaque);
                }
            }
        }
        Value::Array(a) => {
            let item = items(node, root);
            for v in a {
                walk(v, item, root, at, opaque);
            }
        }
        _ => {}
    }
}
