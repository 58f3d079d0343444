//! The JSON Schema of `mcp-recovery.toml` (the TOML document read as JSON, as taplo and
//! editors validate it), with the rule catalog's codes and names as the allowed rule values.

use serde_json::{Value, json};

use crate::rules;

/// File name of the generated schema under `spec/schema/`.
pub const CONFIG_SCHEMA: &str = "mcp-recovery-toml.schema.json";

/// The schema of `mcp-recovery.toml`.
pub fn config_schema() -> Value {
    let mut names: Vec<&str> = rules().iter().map(|rule| rule.code).collect();
    names.extend(rules().iter().map(|rule| rule.name));
    let rule_list = |description: &str| {
        json!({
            "description": description,
            "type": "array",
            "items": { "$ref": "#/$defs/rule" },
        })
    };
    let severity = json!({
        "description": "Severity by rule code or name.",
        "type": "object",
        "propertyNames": { "$ref": "#/$defs/rule" },
        "additionalProperties": { "enum": ["error", "warning", "info"] },
    });
    let patterns = |description: &str| {
        json!({
            "description": description,
            "type": "array",
            "items": { "type": "string", "minLength": 1 },
        })
    };
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://mcp-recovery.github.io/mcp-recovery/schema/{CONFIG_SCHEMA}"),
        "$comment": "Generated from the rule catalog by `cargo xtask codegen`; do not edit.",
        "title": "mcp-recovery.toml",
        "description": "Settings of `mcp-recovery lint`, found in the working directory or the nearest ancestor that has the file.",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "extends": {
                "description": "The rule set that runs when `select` is empty: `recommended` (the default) or `strict`.",
                "enum": crate::Preset::ALL.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
            },
            "select": rule_list("Run only these rules (advisory rules run only when listed). Empty: the default rules."),
            "ignore": rule_list("Never run these rules."),
            "deny": {
                "description": "Levels that fail the run besides errors.",
                "type": "array",
                "items": { "enum": ["warnings"] },
            },
            "severity": severity,
            "overrides": {
                "description": "Settings for some files or tools, applied in order after the top-level ones.",
                "type": "array",
                "items": { "$ref": "#/$defs/override" },
            },
        },
        "$defs": {
            "rule": {
                "description": "A rule code (`R101`) or name (`dangling-operation-id`).",
                "enum": names,
            },
            "override": {
                "type": "object",
                "additionalProperties": false,
                "anyOf": [
                    { "required": ["files"], "properties": { "files": { "minItems": 1 } } },
                    { "required": ["tools"], "properties": { "tools": { "minItems": 1 } } },
                ],
                "properties": {
                    "files": patterns("Globs over the file as given (`*` within a segment, `**` across); a pattern without `/` also matches the file name."),
                    "tools": patterns("Globs over the tool's name; findings without a tool never match."),
                    "select": {
                        "description": "Run only these rules in this scope (replaces the selection).",
                        "type": "array",
                        "minItems": 1,
                        "items": { "$ref": "#/$defs/rule" },
                    },
                    "ignore": rule_list("Do not run these rules in this scope."),
                    "severity": severity,
                },
            },
        },
    })
}
