//! Helpers shared by the integration tests; a failed check panics, failing the test.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use jsonschema::Validator;
use serde_json::{Value, json};

/// The repository's `spec/` folder.
pub fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec")
}

/// A compiled validator for a generated document, by file name.
pub fn validator(file: &str) -> Validator {
    let schema = mcp_recovery_schema::schema(file).unwrap_or_else(|| panic!("no schema {file}"));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{file} does not compile: {e}"))
}

/// A compiled validator for one definition of a generated document.
pub fn definition(file: &str, name: &str) -> Validator {
    let document = mcp_recovery_schema::schema(file).unwrap_or_else(|| panic!("no schema {file}"));
    assert!(
        document.pointer(&format!("/$defs/{name}")).is_some(),
        "{file} has no $defs/{name}"
    );
    // Only the definitions: the document's own root keywords must not apply.
    let schema = json!({
        "$schema": document["$schema"],
        "$defs": document["$defs"],
        "$ref": format!("#/$defs/{name}"),
    });
    jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("{file}#{name} does not compile: {e}"))
}

/// The schema file an example is validated against, from its name's final suffix.
pub fn schema_for_example(file_name: &str) -> Option<&'static str> {
    [
        (".tools-list.json", mcp_recovery_schema::TOOLS_LIST_SCHEMA),
        (".tool.json", mcp_recovery_schema::TOOL_SCHEMA),
        (".recovery.json", mcp_recovery_schema::RECOVERY_SCHEMA),
        (".compensate.json", mcp_recovery_schema::COMPENSATE_SCHEMA),
        (".overlay.json", mcp_recovery_schema::OVERLAY_SCHEMA),
    ]
    .into_iter()
    .find(|(suffix, _)| file_name.ends_with(suffix))
    .map(|(_, schema)| schema)
}

/// Every file of `spec/examples/`, sorted, with its parsed JSON.
pub fn examples() -> Vec<(String, Value)> {
    let dir = spec_dir().join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, value)
        })
        .collect()
}

/// The validation errors of `instance`, rendered for assertion messages.
pub fn errors(validator: &Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}
