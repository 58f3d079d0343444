//! Reading the object schemas of tools: required fields and properties, declared types, and
//! whether a value of one schema fits a parameter of another.

use serde_json::{Map, Value};

/// The `required` names and `properties` of an object schema.
pub(crate) fn object_fields(schema: Option<&Value>) -> (Vec<String>, Map<String, Value>) {
    let required = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    (required, properties)
}

/// The JSON types a property schema declares (`type` only; none when it does not say).
pub(crate) fn types(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether a value of schema `source` fits a parameter of schema `target`: both declare types
/// and they meet (`integer` fits `number`), and arrays have items of meeting types.
pub(crate) fn fits(source: &Value, target: &Value) -> bool {
    let (from, to) = (types(source), types(target));
    if from.is_empty() || to.is_empty() {
        return false;
    }
    let meets = from.iter().any(|f| {
        to.iter()
            .any(|t| f == t || (f == "integer" && t == "number"))
    });
    if !meets {
        return false;
    }
    // An object fits when it has every property the parameter requires.
    if from.iter().all(|t| t == "object") && to.iter().all(|t| t == "object") {
        let (needed, _) = object_fields(Some(target));
        let (_, offered) = object_fields(Some(source));
        if !needed.iter().all(|n| offered.contains_key(n)) {
            return false;
        }
    }
    if from.iter().any(|t| t == "array") && to.iter().any(|t| t == "array") {
        return match (source.get("items"), target.get("items")) {
            (Some(a), Some(b)) => fits(a, b) || (types(a).is_empty() && types(b).is_empty()),
            (None, None) => true,
            _ => false,
        };
    }
    true
}

/// A name the JSONPath subset can write with dots.
pub(crate) fn simple(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
