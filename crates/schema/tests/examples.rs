//! The examples under `spec/examples/` and the JSON blocks of `spec/recovery-metadata.md` are
//! valid, round-trip through the model, and say what the text says they say.

// Test helpers outside `#[test]` functions may panic too: a failed check is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{definition, errors, examples, schema_for_example, spec_dir, validator};
use mcp_recovery_model::{Compensate, Recovery, Tool, ToolsList};
use mcp_recovery_schema::{
    COMPENSATE_SCHEMA, OVERLAY_SCHEMA, RECOVERY_SCHEMA, SEP_DEFS, TOOL_SCHEMA, TOOLS_LIST_SCHEMA,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Deserializes into `T` and back; the result must equal the input.
fn round_trip_as<T: DeserializeOwned + Serialize>(what: &str, value: &Value) {
    let typed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{what}: the model cannot read it: {e}"));
    let back = serde_json::to_value(typed).unwrap();
    assert_eq!(&back, value, "{what}: the model does not round-trip it");
}

fn round_trip(schema: &str, what: &str, value: &Value) {
    match schema {
        TOOL_SCHEMA => round_trip_as::<Tool>(what, value),
        TOOLS_LIST_SCHEMA => round_trip_as::<ToolsList>(what, value),
        RECOVERY_SCHEMA => round_trip_as::<Recovery>(what, value),
        COMPENSATE_SCHEMA => round_trip_as::<Compensate>(what, value),
        OVERLAY_SCHEMA => {
            round_trip_as::<mcp_recovery_model::OverlayDocument>(what, value);
            let text = value.to_string();
            mcp_recovery_model::Overlay::parse(&text, mcp_recovery_model::OverlayFormat::Json)
                .unwrap_or_else(|e| panic!("{what}: not an overlay: {e}"));
        }
        other => panic!("{what}: no model type for {other}"),
    }
}

/// The tools an example holds: itself, or the tools of a tools/list result.
fn tools_of(schema: &str, value: &Value) -> Vec<Tool> {
    let tools = match schema {
        TOOL_SCHEMA => vec![value.clone()],
        TOOLS_LIST_SCHEMA => value["tools"].as_array().cloned().unwrap_or_default(),
        _ => Vec::new(),
    };
    tools
        .into_iter()
        .map(|t| serde_json::from_value(t).unwrap())
        .collect()
}

#[test]
fn examples_validate_round_trip_and_parse() {
    let all = examples();
    assert!(all.len() >= 8, "expected the full set of examples");
    let annotations = definition(SEP_DEFS, "ToolAnnotations");
    for (name, value) in &all {
        let Some(schema) = schema_for_example(name) else {
            panic!(
                "{name}: the name must end in .tool.json, .tools-list.json, .recovery.json, .compensate.json or .overlay.json"
            );
        };
        let validator = validator(schema);
        assert!(
            validator.is_valid(value),
            "{name}: {:?}",
            errors(&validator, value)
        );
        round_trip(schema, name, value);
        for tool in tools_of(schema, value) {
            if let Some(a) = &tool.annotations {
                let a = serde_json::to_value(a).unwrap();
                assert!(
                    annotations.is_valid(&a),
                    "{name}: the drop-in ToolAnnotations rejects it"
                );
            }
            for declared in tool.declared_recovery() {
                for binding in declared.compensation.iter().flat_map(|c| &c.bindings) {
                    assert!(
                        binding.binding.is_ok(),
                        "{name} {}: {:?}",
                        binding.parameter,
                        binding.binding
                    );
                }
            }
        }
    }
}

#[test]
fn examples_mean_what_their_names_say() {
    for (name, value) in examples() {
        let Some(schema) = schema_for_example(&name) else {
            continue;
        };
        for tool in tools_of(schema, &value) {
            let declared = tool.declared_recovery();
            if name.contains(".both-carriers.") {
                assert_eq!(declared.len(), 2, "{name}");
                assert!(
                    declared[0].agrees_with(&declared[1]),
                    "{name}: the carriers disagree"
                );
            }
            if name.contains(".template-constant.") {
                let bindings = &declared[0].compensation.as_ref().unwrap().bindings;
                let kinds: Vec<_> = bindings
                    .iter()
                    .map(|b| match b.binding {
                        Ok(mcp_recovery_model::Binding::Expression(_)) => "expression",
                        Ok(mcp_recovery_model::Binding::Template(_)) => "template",
                        Ok(mcp_recovery_model::Binding::Constant(_)) => "constant",
                        Ok(mcp_recovery_model::Binding::Map(_)) => "map",
                        Ok(mcp_recovery_model::Binding::Before(_)) => "before",
                        Err(_) => "error",
                    })
                    .collect();
                for kind in ["expression", "template", "constant"] {
                    assert!(kinds.contains(&kind), "{name} lacks a {kind} binding");
                }
            }
            if name.contains(".self-inverse.") {
                let compensation = declared[0].compensation.as_ref().unwrap();
                assert_eq!(compensation.tool, tool.name, "{name}");
            }
        }
    }
}

/// What a marker comment before a ```json block of the spec text asks of the block.
#[derive(Debug)]
enum Marker {
    /// The block is the example file of that name.
    Example(String),
    /// The block is valid against the schema (`tool`, `recovery`, `sep-3172#ToolAnnotations`…).
    Valid(String),
    /// The block is rejected by the schema.
    Invalid(String),
}

/// Every ```json block of a markdown text, with the marker comment on the line before it.
fn json_blocks(markdown: &str) -> Vec<(usize, Option<Marker>, String)> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().starts_with("```json") {
            let start = i + 1;
            let marker = i.checked_sub(1).and_then(|p| {
                let comment = lines[p]
                    .trim()
                    .strip_prefix("<!--")?
                    .strip_suffix("-->")?
                    .trim();
                let (kind, arg) = comment.split_once(':')?;
                let arg = arg.trim().to_owned();
                match kind.trim() {
                    "example" => Some(Marker::Example(arg)),
                    "valid" => Some(Marker::Valid(arg)),
                    "invalid" => Some(Marker::Invalid(arg)),
                    _ => None,
                }
            });
            let mut end = start;
            while end < lines.len() && !lines[end].trim_start().starts_with("```") {
                end += 1;
            }
            blocks.push((start, marker, lines[start..end].join("\n")));
            i = end;
        }
        i += 1;
    }
    blocks
}

/// `tool` or `sep-3172#ToolAnnotations` → (schema file, compiled validator).
fn marked_validator(spec: &str) -> (&'static str, jsonschema::Validator) {
    let (document, def) = match spec.split_once('#') {
        Some((document, def)) => (document, Some(def)),
        None => (spec, None),
    };
    let file = mcp_recovery_schema::schemas()
        .into_iter()
        .map(|(file, _)| file)
        .find(|file| file.split('.').next() == Some(document))
        .unwrap_or_else(|| panic!("unknown schema {document}"));
    let validator = match def {
        Some(def) => definition(file, def),
        None => validator(file),
    };
    (file, validator)
}

#[test]
fn spec_text_json_blocks_are_tested() {
    let path = spec_dir().join("recovery-metadata.md");
    let markdown = std::fs::read_to_string(&path).unwrap();
    let examples = examples();
    let blocks = json_blocks(&markdown);
    assert!(blocks.len() >= 8, "the spec text should show its examples");
    let mut referenced = Vec::new();
    for (line, marker, text) in blocks {
        let at = format!("recovery-metadata.md:{line}");
        let value: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{at}: not JSON: {e}"));
        match marker {
            None => panic!("{at}: a ```json block needs a marker comment (example/valid/invalid)"),
            Some(Marker::Example(file)) => {
                let Some((_, expected)) = examples.iter().find(|(name, _)| *name == file) else {
                    panic!("{at}: spec/examples/{file} does not exist");
                };
                assert_eq!(&value, expected, "{at}: differs from spec/examples/{file}");
                referenced.push(file);
            }
            Some(Marker::Valid(spec)) => {
                let (file, validator) = marked_validator(&spec);
                assert!(
                    validator.is_valid(&value),
                    "{at}: {:?}",
                    errors(&validator, &value)
                );
                if !spec.contains('#') {
                    round_trip(file, &at, &value);
                }
            }
            Some(Marker::Invalid(spec)) => {
                let (_, validator) = marked_validator(&spec);
                assert!(!validator.is_valid(&value), "{at}: {spec} accepts it");
            }
        }
    }
    for (name, _) in &examples {
        assert!(
            referenced.contains(name),
            "spec/examples/{name} is not shown in the spec text"
        );
    }
}

#[test]
fn marker_parsing() {
    let text = "a\n<!-- valid: tool -->\n```json\n{}\n```\n```json\n[]\n```\n";
    let blocks = json_blocks(text);
    assert_eq!(blocks.len(), 2);
    assert!(matches!(&blocks[0].1, Some(Marker::Valid(s)) if s == "tool"));
    assert_eq!(blocks[0].2, "{}");
    assert!(blocks[1].1.is_none());
}
