//! Plain tools: names, descriptions, input and output schemas, hint annotations.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::rng::Rng;
use super::tables::{DESCRIPTIONS, FIELDS, NOUNS, TOOL_COUNT_BUCKETS, VERBS_READ, VERBS_WRITE};

/// One tool under construction.
pub(super) struct Draft {
    pub(super) name: String,
    pub(super) signature: String,
    pub(super) tool: Map<String, Value>,
    pub(super) facts_sep: bool,
    pub(super) facts_compensate: bool,
    pub(super) classes: BTreeSet<&'static str>,
}

fn annotations_for(signature: &str, rng: &mut Rng) -> Option<Map<String, Value>> {
    let mut a = Map::new();
    if rng.chance(150_000) {
        a.insert("title".into(), json!("Tool"));
    }
    for (c, key) in signature.chars().zip([
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ]) {
        match c {
            'T' => {
                a.insert(key.into(), Value::Bool(true));
            }
            'F' => {
                a.insert(key.into(), Value::Bool(false));
            }
            _ => {}
        }
    }
    (!a.is_empty()).then_some(a)
}

pub(super) fn schema_header(rng: &mut Rng) -> (Option<&'static str>, &'static str) {
    match rng.below(3) {
        0 => (
            Some("http://json-schema.org/draft-07/schema#"),
            "definitions",
        ),
        1 => (
            Some("https://json-schema.org/draft/2020-12/schema"),
            "$defs",
        ),
        _ => (None, "$defs"),
    }
}

fn leaf_schema(rng: &mut Rng, field: &str) -> Value {
    match rng.below(7) {
        0 => json!({"type": "string", "description": format!("The {}.", field.replace('_', " "))}),
        1 => json!({"type": "string", "format": *rng.pick(&["uri", "date-time", "email", "uuid"])}),
        2 => json!({"type": "string", "enum": ["low", "medium", "high"], "default": "medium"}),
        3 => {
            json!({"type": "integer", "minimum": 1, "maximum": 100 + rng.below(900), "default": 20})
        }
        4 => json!({"type": "number", "minimum": 0}),
        5 => json!({"type": "boolean", "default": false}),
        _ => json!({"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 50}),
    }
}

/// A realistic object schema: leaves, a nested object, sometimes a `$ref` into `$defs`
/// (2020-12) or `definitions` (draft-07).
fn object_schema(rng: &mut Rng, fields: usize) -> Value {
    let (dialect, defs_key) = schema_header(rng);
    let mut schema = Map::new();
    if let Some(d) = dialect {
        schema.insert("$schema".into(), json!(d));
    }
    schema.insert("type".into(), json!("object"));
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut defs = Map::new();
    for _ in 0..fields {
        let field = *rng.pick(FIELDS);
        if properties.contains_key(field) {
            continue;
        }
        let value = match rng.below(8) {
            0 => {
                let inner = *rng.pick(FIELDS);
                json!({"type": "object", "properties": {inner: leaf_schema(rng, inner), "id": {"type": "string"}},
                       "required": ["id"], "additionalProperties": false})
            }
            1 => {
                defs.insert(
                    "reference".into(),
                    json!({"type": "object", "properties": {"id": {"type": "string"}, "kind": {"type": "string"}},
                           "required": ["id"]}),
                );
                json!({"$ref": format!("#/{defs_key}/reference")})
            }
            _ => leaf_schema(rng, field),
        };
        if rng.chance(450_000) {
            required.push(json!(field));
        }
        properties.insert(field.into(), value);
    }
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    if !defs.is_empty() {
        schema.insert(defs_key.into(), Value::Object(defs));
    }
    if rng.chance(300_000) {
        schema.insert("additionalProperties".into(), json!(false));
    }
    Value::Object(schema)
}

pub(super) fn plain_tool(rng: &mut Rng, name: &str, signature: &str) -> Map<String, Value> {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(name));
    if rng.chance(300_000) {
        tool.insert("title".into(), json!(name.replace('_', " ")));
    }
    tool.insert(
        "description".into(),
        json!(format!(
            "{} {}",
            rng.pick(DESCRIPTIONS),
            rng.pick(DESCRIPTIONS)
        )),
    );
    let fields = rng.below(7);
    tool.insert("inputSchema".into(), object_schema(rng, fields));
    if rng.chance(350_000) {
        let fields = rng.range(1, 5);
        tool.insert("outputSchema".into(), object_schema(rng, fields));
    }
    if let Some(a) = annotations_for(signature, rng) {
        tool.insert("annotations".into(), Value::Object(a));
    }
    if rng.chance(50_000) {
        tool.insert("execution".into(), json!({"taskSupport": "optional"}));
    }
    tool
}

pub(super) fn draw_tool_count(rng: &mut Rng) -> usize {
    let weights: Vec<u32> = TOOL_COUNT_BUCKETS.iter().map(|b| b.2).collect();
    let (low, high, _) = TOOL_COUNT_BUCKETS[rng.weighted(&weights)];
    rng.range(low, high)
}

pub(super) fn unique_name(rng: &mut Rng, used: &mut BTreeSet<String>, read_only: bool) -> String {
    let verb = if read_only {
        rng.pick(VERBS_READ)
    } else {
        rng.pick(VERBS_WRITE)
    };
    let base = format!("{verb}_{}", rng.pick(NOUNS));
    let mut name = base.clone();
    let mut n = 2;
    while used.contains(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    used.insert(name.clone());
    name
}
