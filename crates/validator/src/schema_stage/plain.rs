//! A check that a value surely satisfies the tool schema, without the compiled schema.
//!
//! Compiling the tool schema costs more than linting a small file; most tools use none of the
//! schema's harder keywords (recovery bindings with their patterns, alternatives, conditions).
//! This check reads the schema document itself and evaluates only its plainest keywords, each
//! exactly as JSON Schema 2020-12 defines it: `type`, `properties`, `required`,
//! `additionalProperties`, `items`, `enum` and `const` of strings, booleans and null, and local
//! `$ref`s into `$defs`. It answers `true` only when every keyword it meets is one of these (or an
//! annotation that asserts nothing) and the value passes it; any other keyword, or a value it
//! cannot judge plainly, answers `false`, which says nothing: the compiled schema decides. So a
//! tool it accepts has no violation, and every other tool is checked as before.

use serde_json::{Map, Value};

/// Deeper than any path through the tool schema; a cycle of references stops here.
const MAX_DEPTH: usize = 64;

/// Whether `instance` surely satisfies the schema document `root`.
pub(crate) fn surely_valid(root: &Value, instance: &Value) -> bool {
    holds(root, root, instance, 0)
}

/// Whether `instance` surely satisfies `schema`, a schema inside `root`.
fn holds(root: &Value, schema: &Value, instance: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match schema {
        Value::Bool(accepts) => *accepts,
        Value::Object(keywords) => keywords.iter().all(|(keyword, value)| {
            keyword_holds(root, schema, keywords, keyword, value, instance, depth)
        }),
        _ => false,
    }
}

/// Whether one keyword of `keywords` surely holds for `instance`.
fn keyword_holds(
    root: &Value,
    schema: &Value,
    keywords: &Map<String, Value>,
    keyword: &str,
    value: &Value,
    instance: &Value,
    depth: usize,
) -> bool {
    let next = depth + 1;
    match keyword {
        // Annotations: they assert nothing.
        "$comment" | "title" | "description" | "examples" | "default" | "deprecated"
        | "readOnly" | "writeOnly" | "$defs" => true,
        // The dialect and the base of references: only where the whole document says them.
        "$schema" | "$id" => std::ptr::eq(schema, root),
        "type" => match value {
            Value::String(name) => is_of_type(name, instance),
            Value::Array(names) => names
                .iter()
                .any(|name| name.as_str().is_some_and(|name| is_of_type(name, instance))),
            _ => false,
        },
        "enum" => value
            .as_array()
            .is_some_and(|options| options.iter().any(|option| plainly_equal(option, instance))),
        "const" => plainly_equal(value, instance),
        "$ref" => value
            .as_str()
            .and_then(|reference| local_definition(root, reference))
            .is_some_and(|target| holds(root, target, instance, next)),
        "properties" => match (value, instance) {
            (Value::Object(properties), Value::Object(members)) => {
                properties.iter().all(|(name, subschema)| {
                    members
                        .get(name)
                        .is_none_or(|member| holds(root, subschema, member, next))
                })
            }
            (Value::Object(_), _) => true,
            _ => false,
        },
        "required" => match (value, instance) {
            (Value::Array(names), Value::Object(members)) => names
                .iter()
                .all(|name| name.as_str().is_some_and(|name| members.contains_key(name))),
            (Value::Array(names), _) => names.iter().all(Value::is_string),
            _ => false,
        },
        "additionalProperties" => {
            let Value::Object(members) = instance else {
                return true;
            };
            let declared = match keywords.get("properties") {
                Some(Value::Object(properties)) => Some(properties),
                None => None,
                Some(_) => return false,
            };
            members
                .iter()
                .filter(|(name, _)| declared.is_none_or(|declared| !declared.contains_key(*name)))
                .all(|(_, member)| holds(root, value, member, next))
        }
        "items" => match instance {
            Value::Array(items) => items.iter().all(|item| holds(root, value, item, next)),
            _ => true,
        },
        _ => false,
    }
}

/// Whether `instance` is of the JSON Schema type `name`. An integer is accepted only when it is
/// written as one; a number such as `1.0` is left to the compiled schema.
fn is_of_type(name: &str, instance: &Value) -> bool {
    match name {
        "null" => instance.is_null(),
        "boolean" => instance.is_boolean(),
        "object" => instance.is_object(),
        "array" => instance.is_array(),
        "string" => instance.is_string(),
        "number" => instance.is_number(),
        "integer" => instance.is_i64() || instance.is_u64(),
        _ => false,
    }
}

/// Equality of two strings, booleans or nulls; any other pair is left to the compiled schema.
fn plainly_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Null, Value::Null) => true,
        _ => false,
    }
}

/// The target of a reference `#/$defs/NAME` whose name needs no escaping.
fn local_definition<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let name = reference.strip_prefix("#/$defs/")?;
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if !plain {
        return None;
    }
    root.get("$defs")?.get(name)
}

#[cfg(test)]
mod tests;
