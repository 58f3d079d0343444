//! Comparing the tools a server sends live with its capture: names, order and `annotations`.

use std::collections::BTreeSet;

use serde_json::Value;

/// The tools array, found by the locator every command uses.
pub(super) fn tools_of(document: &Value) -> Option<&[Value]> {
    mcp_recovery_model::locate_tools(document)
        .ok()
        .map(|location| location.tools)
}

/// Every difference in tool names (set and order) and in each tool's `annotations`, key by key.
pub(super) fn compare(captured: &[Value], live: &[Value]) -> Vec<String> {
    let name = |tool: &Value| tool["name"].as_str().unwrap_or("<unnamed>").to_owned();
    let captured_names: Vec<String> = captured.iter().map(name).collect();
    let live_names: Vec<String> = live.iter().map(name).collect();
    let mut problems = Vec::new();
    let captured_set: BTreeSet<&String> = captured_names.iter().collect();
    let live_set: BTreeSet<&String> = live_names.iter().collect();
    for missing in captured_set.difference(&live_set) {
        problems.push(format!("tool {missing}: in the capture, not sent live"));
    }
    for extra in live_set.difference(&captured_set) {
        problems.push(format!("tool {extra}: sent live, not in the capture"));
    }
    if captured_set == live_set && captured_names != live_names {
        problems.push(format!(
            "tool order differs: capture {captured_names:?}, live {live_names:?}"
        ));
    }
    for tool in captured {
        let tool_name = name(tool);
        let Some(other) = live.iter().find(|t| name(t) == tool_name) else {
            continue;
        };
        problems.extend(compare_annotations(
            &tool_name,
            &tool["annotations"],
            &other["annotations"],
        ));
    }
    problems
}

/// The differences between two `annotations` values (`Null` when absent), one per key.
fn compare_annotations(tool: &str, captured: &Value, live: &Value) -> Vec<String> {
    match (captured, live) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter()
                .filter_map(|key| {
                    let (x, y) = (a.get(key), b.get(key));
                    (x != y).then(|| {
                        format!(
                            "tool {tool}: annotations.{key}: capture {}, live {}",
                            shown(x),
                            shown(y)
                        )
                    })
                })
                .collect()
        }
        _ if captured == live => Vec::new(),
        _ => vec![format!(
            "tool {tool}: annotations: capture {}, live {}",
            shown(Some(captured).filter(|v| !v.is_null())),
            shown(Some(live).filter(|v| !v.is_null()))
        )],
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "absent".to_owned(), Value::to_string)
}
