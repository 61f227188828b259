//! How the catalogue's figures are written: each target's row and each arm's figures as one
//! JSON object keyed by the catalogue's names, read back the same way (a key the catalogue names
//! and the file lacks is an error), and described to JSON Schema from the same entries.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::*;

impl Serialize for Figure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Figure::Count(n) => s.serialize_u64(*n as u64),
            Figure::Real(x) => s.serialize_f64(*x),
            Figure::Optional(x) => x.get().serialize(s),
            Figure::ByValue(by) => by.serialize(s),
            Figure::OptionalCount(n) => n.get().map(|n| n as u64).serialize(s),
            Figure::Label(l) => l.serialize(s),
            Figure::Absent => s.serialize_none(),
        }
    }
}

impl Kind {
    fn read(self, v: serde_json::Value) -> Result<Figure, serde_json::Error> {
        Ok(match self {
            Kind::Count => Figure::Count(serde_json::from_value(v)?),
            Kind::Real => Figure::Real(serde_json::from_value(v)?),
            Kind::Optional => Figure::optional(serde_json::from_value(v)?),
            Kind::ByValue => Figure::ByValue(serde_json::from_value(v)?),
            Kind::OptionalCount => Figure::optional_count(serde_json::from_value(v)?),
            Kind::Label => Figure::label(serde_json::from_value::<Option<String>>(v)?.as_deref()),
        })
    }

    fn schema(self, g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        match self {
            Kind::Count => g.subschema_for::<usize>(),
            Kind::Real => g.subschema_for::<f64>(),
            Kind::Optional => g.subschema_for::<Option<f64>>(),
            Kind::ByValue => g.subschema_for::<BTreeMap<String, usize>>(),
            Kind::OptionalCount => g.subschema_for::<Option<usize>>(),
            Kind::Label => g.subschema_for::<Option<String>>(),
        }
    }
}

impl Serialize for TargetMetrics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let written = self
            .figures
            .iter()
            .filter(|f| **f != Figure::Absent)
            .count();
        let mut map = s.serialize_map(Some(2 + written))?;
        map.serialize_entry("target", &self.target)?;
        map.serialize_entry("run", &self.run)?;
        for (m, f) in REVIEW_METRICS.iter().zip(&self.figures) {
            if *f != Figure::Absent {
                map.serialize_entry(m.name, f)?;
            }
        }
        map.end()
    }
}

/// Takes the catalogue-named key `name` out of a JSON object read back.
fn take<E: serde::de::Error>(
    map: &mut serde_json::Map<String, serde_json::Value>,
    name: &str,
    what: &str,
) -> Result<serde_json::Value, E> {
    map.remove(name)
        .ok_or_else(|| E::custom(format!("{what} lacks `{name}`")))
}

impl<'de> Deserialize<'de> for TargetMetrics {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = serde_json::Map::deserialize(d)?;
        let what = "a per_target row";
        let target =
            serde_json::from_value(take(&mut map, "target", what)?).map_err(D::Error::custom)?;
        let run = serde_json::from_value(take(&mut map, "run", what)?).map_err(D::Error::custom)?;
        let figures = REVIEW_METRICS
            .iter()
            .map(|m| match map.remove(m.name) {
                // A run without the precision controls or usage does not write their figures.
                None if m.optional_in_run() => Ok(Figure::Absent),
                None => Err(D::Error::custom(format!("{what} lacks `{}`", m.name))),
                Some(v) => m
                    .kind
                    .read(v)
                    .map_err(|e| D::Error::custom(format!("`{}`: {e}", m.name))),
            })
            .collect::<Result<_, _>>()?;
        Ok(TargetMetrics {
            target,
            run,
            figures,
            calibration_sums: BTreeMap::new(),
            values: Vec::new(),
        })
    }
}

impl schemars::JsonSchema for TargetMetrics {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "TargetMetrics".into()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut properties = serde_json::Map::new();
        properties.insert("target".into(), g.subschema_for::<String>().to_value());
        properties.insert("run".into(), g.subschema_for::<u32>().to_value());
        let mut required = vec!["target".to_string(), "run".to_string()];
        for m in &REVIEW_METRICS {
            properties.insert(m.name.into(), m.kind.schema(g).to_value());
            if !m.optional_in_run() {
                required.push(m.name.to_string());
            }
        }
        schemars::json_schema!({
            "description": "Metrics of one (target, run): one figure per catalogue entry.",
            "type": "object",
            "properties": properties,
            "required": required,
        })
    }
}

impl Serialize for ArmFigures {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for ((name, i, _), x) in arm_figure_names().iter().zip(&self.values) {
            // Precision-control figures are written when the experiment replays the controls
            // (lint-ignore's, null when no target has a snapshot), usage figures when the
            // corpus records usage.
            if self.has(&REVIEW_METRICS[*i]) {
                map.serialize_entry(name, x)?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ArmFigures {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = serde_json::Map::deserialize(d)?;
        let present = |of: fn(&ReviewMetric) -> bool| {
            arm_figure_names()
                .iter()
                .any(|(name, i, _)| of(&REVIEW_METRICS[*i]) && map.contains_key(name))
        };
        let (controls, usage) = (present(|m| m.precision), present(|m| m.usage));
        arm_figure_names()
            .iter()
            .map(|(name, i, _)| match map.remove(name) {
                None if REVIEW_METRICS[*i].optional_in_run() => Ok(None),
                None => Err(D::Error::custom(format!("an arm lacks `{name}`"))),
                Some(v) => serde_json::from_value::<Option<f64>>(v)
                    .map_err(|e| D::Error::custom(format!("`{name}`: {e}"))),
            })
            .collect::<Result<_, _>>()
            .map(|values| ArmFigures {
                values,
                controls,
                usage,
            })
    }
}

impl schemars::JsonSchema for ArmFigures {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ArmFigures".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for (name, i, _) in arm_figure_names() {
            let m = &REVIEW_METRICS[*i];
            let schema = if m.kind == Kind::OptionalCount {
                g.subschema_for::<Option<f64>>()
            } else {
                g.subschema_for::<f64>()
            };
            properties.insert(name.clone(), schema.to_value());
            if !m.optional_in_run() {
                required.push(name.clone());
            }
        }
        schemars::json_schema!({
            "type": "object",
            "properties": properties,
            "required": required,
        })
    }
}
