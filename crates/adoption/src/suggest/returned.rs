//! What a tool's description says its result returns ("Returns its name and cells."), for a
//! tool that declares no schema of its result: a compensator parameter of a returned name is
//! read from the result's JSON text, which a drafted reader checks.

use mcp_recovery_model::Tool;
use serde_json::{Map, Value, json};

use super::fields::{simple, types};
use super::reader::fastmcp_wrapper;
use super::types::Reader;

/// The types a value read from text may take for a binding drafted from a returned name.
const SCALARS: [&str; 4] = ["string", "integer", "number", "boolean"];

/// The names a description says the tool returns: the items of each sentence `Returns its A,
/// B and C.` (or `Returns the …`), lowercase. An item of more than one word (`the name of the
/// original`) names nothing.
pub(crate) fn returned_names(description: &str) -> Vec<String> {
    let mut names = Vec::new();
    for sentence in description.split(['.', '\n', ';', ':']) {
        let Some(rest) = sentence.trim().strip_prefix("Returns ") else {
            continue;
        };
        let Some(items) = rest
            .strip_prefix("its ")
            .or_else(|| rest.strip_prefix("the "))
        else {
            continue;
        };
        for item in items.split(',').flat_map(|part| part.split(" and ")) {
            let item = item.trim();
            if !item.is_empty() && simple(item) {
                names.push(item.to_ascii_lowercase());
            }
        }
    }
    names
}

/// The result schema and reader to draft for the compensator's required parameters the forward
/// tool's description says it returns, and those parameters; `None` when it names none of them
/// or the tool declares a schema of its result (a FastMCP string wrapper aside). Each is read
/// with the parameter's one scalar type, so a text that lacks it or holds another type leaves
/// the compensation unavailable at run time.
pub(crate) fn described_result(
    forward: &Tool,
    needed: &[String],
    wanted: &Map<String, Value>,
) -> Option<(Value, Reader, Vec<String>)> {
    let from = match &forward.output_schema {
        None => "text",
        Some(schema) if fastmcp_wrapper(schema) => "fastmcp-result",
        Some(_) => return None,
    };
    let named = returned_names(forward.description.as_deref().unwrap_or_default());
    let mut properties = Map::new();
    for parameter in needed {
        let Some(target) = wanted.get(parameter) else {
            continue;
        };
        let [kind]: [String; 1] = match types(target).try_into() {
            Ok(kind) => kind,
            Err(_) => continue,
        };
        if simple(parameter)
            && SCALARS.contains(&kind.as_str())
            && named.contains(&parameter.to_ascii_lowercase())
        {
            properties.insert(parameter.clone(), json!({"type": kind}));
        }
    }
    if properties.is_empty() {
        return None;
    }
    let fields: Vec<String> = properties.keys().cloned().collect();
    let schema = json!({"type": "object", "required": fields, "properties": properties});
    Some((schema.clone(), Reader { from, schema }, fields))
}
