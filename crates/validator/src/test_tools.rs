//! Tools to test the readers of a tool with: every fixture's, valid ones of every shape the
//! tool schema describes, and variants of each.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The tools of every JSON fixture that holds a tools array.
pub(crate) fn fixture_tools() -> Vec<Value> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures"),
        &mut files,
    );
    let mut tools = Vec::new();
    for file in files {
        let Ok(document) = serde_json::from_slice::<Value>(&std::fs::read(&file).unwrap()) else {
            continue;
        };
        let array = document
            .pointer("/result/tools")
            .or_else(|| document.get("tools"))
            .or(Some(&document))
            .and_then(Value::as_array);
        tools.extend(array.into_iter().flatten().cloned());
    }
    tools
}

/// Values put in place of a member to probe each keyword.
fn probes() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(1),
        json!(-1),
        json!(1.0),
        json!("x"),
        json!("object"),
        json!([]),
        json!(["x"]),
        json!([1]),
        json!({}),
        json!({"type": "object"}),
        json!({"type": "array"}),
        json!({"src": 1}),
    ]
}

/// `value` with each member (to `depth` levels) removed, and replaced by each probe.
pub(crate) fn variants(value: &Value, depth: usize, out: &mut Vec<Value>) {
    if depth == 0 {
        return;
    }
    let keys: Vec<String> = match value {
        Value::Object(map) => map.keys().cloned().collect(),
        Value::Array(items) => (0..items.len()).map(|i| i.to_string()).collect(),
        _ => return,
    };
    for key in keys {
        let mut removed = value.clone();
        match &mut removed {
            Value::Object(map) => {
                map.shift_remove(&key);
            }
            Value::Array(items) => {
                items.remove(key.parse::<usize>().unwrap());
            }
            _ => unreachable!(),
        }
        out.push(removed);
        let member = match value {
            Value::Object(map) => &map[&key],
            Value::Array(items) => &items[key.parse::<usize>().unwrap()],
            _ => unreachable!(),
        };
        for probe in probes() {
            out.push(with_member(value, &key, probe));
        }
        let mut inner = Vec::new();
        variants(member, depth - 1, &mut inner);
        out.extend(inner.into_iter().map(|v| with_member(value, &key, v)));
    }
}

fn with_member(value: &Value, key: &str, member: Value) -> Value {
    let mut changed = value.clone();
    match &mut changed {
        Value::Object(map) => {
            map.insert(key.to_owned(), member);
        }
        Value::Array(items) => items[key.parse::<usize>().unwrap()] = member,
        _ => unreachable!(),
    }
    changed
}

/// Tools of every shape the schema describes, each valid.
pub(crate) fn shapes() -> Vec<Value> {
    vec![
        json!({"name": "a", "inputSchema": {"type": "object"}}),
        json!({
            "name": "b", "title": "B", "description": "d",
            "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            "outputSchema": {"type": "object", "$schema": "s"},
            "annotations": {"readOnlyHint": false, "destructiveHint": true,
                "idempotentHint": false, "openWorldHint": true, "title": "B"},
            "_meta": {"other": 1},
            "icons": [{"src": "https://x/i.png", "mimeType": "image/png", "sizes": ["48x48"],
                "theme": "dark"}],
            "execution": {"taskSupport": "optional"},
            "extra": [1, 2]
        }),
        json!({
            "name": "c", "inputSchema": {"type": "object"},
            "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
                "operationId": "u", "parameters": {"id": "$response.body#/id"}}}}
        }),
        json!({
            "name": "d", "inputSchema": {"type": "object"},
            "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
                "compensation": {"toolName": "u", "parameterMapping": {"id": "$.output.structuredContent.id"},
                    "timeoutMs": 5, "maxRetries": 0}}}
        }),
    ]
}
