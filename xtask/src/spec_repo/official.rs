//! Step 4: the examples against the official 2026-07-28 `schema.json` with our definitions
//! merged in, as JSON and as generated from the TypeScript, with this crate's validator and Ajv.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::tools::Tools;
use crate::codegen::TYPESCRIPT_DIR;
use crate::shared::{examples_validate, merge_in_force, official_schema_with};
use crate::workspace::read_json;

/// The examples (and the official ones) against the official schema with our definitions
/// merged, as JSON and as generated from the TypeScript, with both validators.
pub(super) fn official_examples(
    root: &Path,
    data: &Path,
    tools: &Tools,
    tmp: &Path,
    generated: &Value,
) -> Result<Vec<String>, String> {
    let mut failures = Vec::new();
    let drop_in = read_json(&root.join("spec/schema/sep-3172.defs.json"))?;
    let as_json = official_schema_with(data, &drop_in, "sep-3172.defs.json")?;
    let as_typescript = official_with_generated(data, generated)?;
    let examples = root.join(TYPESCRIPT_DIR).join("examples");
    let official = data.join("mcp-schema/examples-2026-07-28");
    for (what, merged) in [
        ("sep-3172.defs.json", &as_json),
        (
            "the definitions generated from the TypeScript",
            &as_typescript,
        ),
    ] {
        merge_in_force(merged, what, &mut failures)?;
        let ours = examples_validate(merged, &examples, &mut failures)?;
        let theirs = examples_validate(merged, &official, &mut failures)?;
        println!(
            "    {ours} examples and {theirs} official examples validate against the official schema with {what}"
        );
    }
    let merged_path = tmp.join("schema-2026-07-28-with-sep-3172.json");
    std::fs::write(&merged_path, crate::codegen::json(as_typescript))
        .map_err(|e| format!("cannot write {}: {e}", merged_path.display()))?;
    for dir in [&examples, &official] {
        match tools.ajv_examples(&merged_path, dir) {
            Ok(summary) => println!("    {}: {summary}", dir.display()),
            Err(message) => failures.push(message),
        }
    }
    Ok(failures)
}

/// The official schema as the specification repository would generate it after the SEP: the
/// generated definitions added, and `recovery` added to its own `ToolAnnotations`.
fn official_with_generated(data: &Path, generated: &Value) -> Result<Value, String> {
    let mut defs: Map<String, Value> = generated
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .ok_or("the generated schema has no $defs")?;
    let recovery = defs
        .get("ToolAnnotations")
        .and_then(|t| t.pointer("/properties/recovery"))
        .cloned()
        .ok_or("the generated ToolAnnotations has no recovery property")?;
    defs.remove("ToolAnnotations");
    let mut merged =
        official_schema_with(data, &json!({"$defs": defs}), "the generated definitions")?;
    let properties = merged
        .pointer_mut("/$defs/ToolAnnotations/properties")
        .and_then(Value::as_object_mut)
        .ok_or("the official ToolAnnotations has no properties")?;
    properties.insert("recovery".to_owned(), recovery);
    Ok(merged)
}
