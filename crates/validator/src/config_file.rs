//! `mcp-recovery.toml` as written: the serde types it is read with (every string keeps its byte
//! range, so a mistake can point at its place), and the JSON Schema derived from them (the TOML
//! document read as JSON, as taplo and editors validate it).

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use crate::{Preset, Severity, rules};

/// File name of the generated schema under `spec/schema/`.
pub const CONFIG_SCHEMA: &str = "mcp-recovery-toml.schema.json";

/// Settings of `mcp-recovery lint`, found in the working directory or the nearest ancestor that has the file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mcp-recovery.toml")]
pub struct ConfigFile {
    /// The rule set that runs when `select` is empty: `recommended` (the default) or `strict`.
    #[serde(default)]
    #[schemars(with = "PresetName")]
    pub extends: Option<Spanned<String>>,
    /// Run only these rules (advisory rules run only when listed). Empty: the default rules.
    #[serde(default)]
    #[schemars(with = "Vec<RuleName>")]
    pub select: Vec<Spanned<String>>,
    /// Never run these rules.
    #[serde(default)]
    #[schemars(with = "Vec<RuleName>")]
    pub ignore: Vec<Spanned<String>>,
    /// Levels that fail the run besides errors.
    #[serde(default)]
    #[schemars(with = "Vec<DenyLevel>")]
    pub deny: Vec<Spanned<String>>,
    /// Severity by rule code or name.
    #[serde(default)]
    #[schemars(with = "SeverityTable")]
    pub severity: BTreeMap<Spanned<String>, Spanned<String>>,
    /// Settings for some files or tools, applied in order after the top-level ones.
    #[serde(default)]
    #[schemars(with = "Vec<OverrideFile>")]
    pub overrides: Vec<Spanned<OverrideFile>>,
}

/// One `[[overrides]]` table as written; it needs `files` or `tools` (the schema says so with
/// `anyOf`, its fields' descriptions say the rest).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "override", transform = without_description, extend("anyOf" = [
    { "required": ["files"], "properties": { "files": { "minItems": 1 } } },
    { "required": ["tools"], "properties": { "tools": { "minItems": 1 } } },
]))]
pub struct OverrideFile {
    /// Globs over the file as given (`*` within a segment, `**` across); a pattern without `/` also matches the file name.
    #[serde(default)]
    #[schemars(with = "Vec<Pattern>")]
    pub files: Vec<Spanned<String>>,
    /// Globs over the tool's name; findings without a tool never match.
    #[serde(default)]
    #[schemars(with = "Vec<Pattern>")]
    pub tools: Vec<Spanned<String>>,
    /// Run only these rules in this scope (replaces the selection).
    #[serde(default)]
    #[schemars(with = "Vec<RuleName>", length(min = 1))]
    pub select: Option<Vec<Spanned<String>>>,
    /// Do not run these rules in this scope.
    #[serde(default)]
    #[schemars(with = "Vec<RuleName>")]
    pub ignore: Vec<Spanned<String>>,
    /// Severity by rule code or name.
    #[serde(default)]
    #[schemars(with = "SeverityTable")]
    pub severity: BTreeMap<Spanned<String>, Spanned<String>>,
}

/// Leaves a definition described by its fields only.
fn without_description(schema: &mut Schema) {
    schema.remove("description");
}

/// Schema of a rule entry: a code or name of the catalog, shared as `$defs/rule`.
enum RuleName {}

impl JsonSchema for RuleName {
    fn schema_name() -> Cow<'static, str> {
        "rule".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut names: Vec<&str> = rules().iter().map(|rule| rule.code).collect();
        names.extend(rules().iter().map(|rule| rule.name));
        json_schema!({
            "description": "A rule code (`R101`) or name (`dangling-operation-id`).",
            "enum": names,
        })
    }
}

/// Defines a schema-only type whose schema is written in place: `{ "enum": [...] }` or another
/// literal schema.
macro_rules! inline_schema {
    ($(#[$doc:meta])* $name:ident => $schema:expr) => {
        $(#[$doc])*
        enum $name {}

        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                $schema
            }
        }
    };
}

inline_schema!(
    /// Schema of `extends`: a preset's name.
    PresetName => json_schema!({
        "enum": Preset::ALL.iter().map(|preset| preset.as_str()).collect::<Vec<_>>(),
    })
);

inline_schema!(
    /// Schema of a `deny` entry.
    DenyLevel => json_schema!({ "enum": ["warnings"] })
);

inline_schema!(
    /// Schema of a severity value.
    SeverityName => json_schema!({
        "enum": ([Severity::Error, Severity::Warning, Severity::Info].map(Severity::as_str)),
    })
);

inline_schema!(
    /// Schema of a glob pattern of an override.
    Pattern => json_schema!({ "type": "string", "minLength": 1 })
);

/// Schema of a `severity` table: rule codes or names to severities.
enum SeverityTable {}

impl JsonSchema for SeverityTable {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "SeverityTable".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "propertyNames": generator.subschema_for::<RuleName>(),
            "additionalProperties": generator.subschema_for::<SeverityName>(),
        })
    }
}

/// Order of keywords within one schema object, so the document reads top-down; keywords not
/// listed keep their place after these.
const KEYWORD_ORDER: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "type",
    "minItems",
    "propertyNames",
    "additionalProperties",
    "anyOf",
    "required",
    "items",
    "properties",
    "minLength",
    "enum",
];

/// Sorts the keywords of `schema` and of every schema in it by [`KEYWORD_ORDER`], `$defs` last,
/// and drops `default`: an absent key means an empty list or table, which needs no saying (and
/// an absent `extends` is not `null`).
fn order_keywords(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            object.remove("default");
            let rank = |key: &str| {
                KEYWORD_ORDER
                    .iter()
                    .position(|known| *known == key)
                    .unwrap_or(if key == "$defs" {
                        KEYWORD_ORDER.len() + 1
                    } else {
                        KEYWORD_ORDER.len()
                    })
            };
            let mut entries: Vec<(String, Value)> = std::mem::take(object).into_iter().collect();
            entries.sort_by_key(|(key, _)| rank(key));
            for (key, mut value) in entries {
                if key == "properties" || key == "$defs" {
                    // A map of names to schemas: keep the names in order, sort each schema.
                    if let Value::Object(named) = &mut value {
                        named.values_mut().for_each(order_keywords);
                    }
                } else if key != "enum" && key != "required" {
                    order_keywords(&mut value);
                }
                object.insert(key, value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(order_keywords),
        _ => {}
    }
}

/// The schema of `mcp-recovery.toml`, derived from [`ConfigFile`].
pub fn config_schema() -> Value {
    let mut schema =
        mcp_recovery_schema::schema_document::<ConfigFile>(CONFIG_SCHEMA, "the rule catalog");
    order_keywords(&mut schema);
    schema
}
