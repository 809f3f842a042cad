//! Schema-driven conversion between configuration objects and request/response JSON.
//!
//! Terraform's Databricks provider names repeated nested objects as singular blocks (`task`,
//! `parameter`, `library`) where the REST API has plural arrays (`tasks`, `parameters`,
//! `libraries`), and renames a few fields (`git_source.url` is `git_url` on the wire).
//! Kinds declare those differences as a table; everything else maps by name.

use brickform_core::provider::{Nesting, Schema};
use brickform_core::value::{Object, Value};
use serde_json::{Map, Value as Json};

/// `(parent block, configuration name, wire name)`; the parent is `""` at the top level.
pub type Renames = &'static [(&'static str, &'static str, &'static str)];

fn wire_name(renames: Renames, parent: &str, name: &'static str) -> &'static str {
    renames
        .iter()
        .find(|(p, n, _)| *p == parent && *n == name)
        .map(|(_, _, w)| *w)
        .unwrap_or(name)
}

/// The request JSON of an object: unset values and empty lists left out, as the official
/// SDK does, but `false`, `0` and `""` sent when configured.
pub fn to_wire(schema: &Schema, obj: &Object, renames: Renames, parent: &str) -> Json {
    let mut m = Map::new();
    for a in &schema.attributes {
        if let Some(j) = obj.get(a.name).and_then(super::json_of) {
            if matches!(&j, Json::Array(x) if x.is_empty()) {
                continue;
            }
            m.insert(wire_name(renames, parent, a.name).to_string(), j);
        }
    }
    for b in &schema.blocks {
        let key = wire_name(renames, parent, b.name).to_string();
        match (obj.get(b.name), &b.nesting) {
            (Some(Value::Object(o)), _) => {
                m.insert(key, to_wire(&b.schema, o, renames, b.name));
            }
            (Some(Value::List(items)), Nesting::Single) => {
                if let Some(Value::Object(o)) = items.first() {
                    m.insert(key, to_wire(&b.schema, o, renames, b.name));
                }
            }
            (Some(Value::List(items)), _) if !items.is_empty() => {
                let arr = items
                    .iter()
                    .filter_map(|i| match i {
                        Value::Object(o) => Some(to_wire(&b.schema, o, renames, b.name)),
                        _ => None,
                    })
                    .collect();
                m.insert(key, Json::Array(arr));
            }
            _ => {}
        }
    }
    Json::Object(m)
}

/// The configuration-shaped object of a response: only fields the schema knows, nested
/// blocks converted under their own schema.
pub fn from_wire(schema: &Schema, json: &Json, renames: Renames, parent: &str) -> Object {
    let mut out = Object::default();
    let Some(m) = json.as_object() else {
        return out;
    };
    for a in &schema.attributes {
        if a.sensitive {
            continue;
        }
        if let Some(v) = m.get(wire_name(renames, parent, a.name)) {
            out.insert(a.name.to_string(), Value::from_json(v));
        }
    }
    for b in &schema.blocks {
        let Some(v) = m.get(wire_name(renames, parent, b.name)) else {
            continue;
        };
        let converted = match (v, &b.nesting) {
            (Json::Object(_), Nesting::Single) => {
                Value::object(from_wire(&b.schema, v, renames, b.name))
            }
            (Json::Array(items), _) => Value::List(
                items
                    .iter()
                    .map(|i| Value::object(from_wire(&b.schema, i, renames, b.name)))
                    .collect(),
            ),
            (Json::Object(_), _) => Value::List(vec![Value::object(from_wire(
                &b.schema, v, renames, b.name,
            ))]),
            _ => continue,
        };
        out.insert(b.name.to_string(), converted);
    }
    out
}

/// Marks what a complete answer (a GET of the whole object) leaves out as unset: null
/// attributes, no blocks. The service omits unset and cleared fields, and the diff must see
/// them as null — an absent key means "not reported", and would hide a description or a
/// schedule removed outside brickform.
pub fn absent_is_unset(schema: &Schema, obj: &mut Object) {
    for a in schema.attributes.iter().filter(|a| a.can_configure()) {
        obj.entry(a.name.to_string()).or_insert(Value::Null);
    }
    for b in &schema.blocks {
        obj.entry(b.name.to_string()).or_insert(match b.nesting {
            Nesting::Single => Value::Null,
            _ => Value::List(Vec::new()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brickform_core::provider::{AttrType, Attribute, BlockType};

    #[test]
    fn renames_and_omissions_round_trip() {
        let schema = Schema::new()
            .attr(Attribute::optional("name", AttrType::String))
            .attr(Attribute::optional("enabled", AttrType::Bool))
            .block(BlockType::keyed(
                "task",
                "task_key",
                Schema::new().attr(Attribute::required("task_key", AttrType::String)),
            ))
            .block(BlockType::single(
                "git_source",
                Schema::new().attr(Attribute::optional("url", AttrType::String)),
            ));
        const R: Renames = &[("", "task", "tasks"), ("git_source", "url", "git_url")];
        let obj: Object = [
            ("name".to_string(), Value::Null),
            ("enabled".to_string(), Value::Bool(false)),
            (
                "task".to_string(),
                Value::List(vec![Value::Object(
                    [("task_key".to_string(), Value::from("a"))]
                        .into_iter()
                        .collect::<brickform_core::value::Object>()
                        .into(),
                )]),
            ),
            (
                "git_source".to_string(),
                Value::Object(
                    [("url".to_string(), Value::from("https://x"))]
                        .into_iter()
                        .collect::<brickform_core::value::Object>()
                        .into(),
                ),
            ),
        ]
        .into_iter()
        .collect();
        let j = to_wire(&schema, &obj, R, "");
        assert_eq!(
            j,
            serde_json::json!({"enabled": false, "tasks": [{"task_key": "a"}], "git_source": {"git_url": "https://x"}})
        );
        let back = from_wire(&schema, &j, R, "");
        assert_eq!(back["task"], obj["task"]);
        assert_eq!(back["git_source"], obj["git_source"]);
        assert!(!back.contains_key("name"));
        let mut back = back;
        absent_is_unset(&schema, &mut back);
        assert_eq!(back["name"], Value::Null);
        assert_eq!(back["enabled"], Value::Bool(false));
    }
}
