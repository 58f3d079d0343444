//! The TypeScript declarations say what the JSON Schema says, and the examples in the
//! specification repository's layout are valid. (`cargo xtask check-spec-repo` runs the
//! specification's own generator on the declarations; these checks need no npm.)

// Test helpers outside `#[test]` functions may panic too: a failed check is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{definition, errors, validator};
use mcp_recovery_schema::typescript::{added_member, declarations, module};
use mcp_recovery_schema::{SEP_DEFS, TOOL_SCHEMA, sep_defs};
use serde_json::Value;

/// The value of every `@pattern` tag in `text`, in order.
fn pattern_tags(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("* @pattern "))
        .map(str::to_owned)
        .collect()
}

/// The text of the declaration of `name`, from its JSDoc to its end.
fn declaration<'a>(text: &'a str, name: &str) -> &'a str {
    let (keyword, end) = [("export interface ", "\n}\n"), ("export type ", ";\n")]
        .iter()
        .find_map(|(k, end)| text.find(&format!("{k}{name} ")).map(|at| (at, *end)))
        .unwrap_or_else(|| panic!("{name} is not declared"));
    let start = text[..keyword].rfind("/**").unwrap();
    let end = text[keyword..]
        .find(end)
        .map_or(text.len(), |i| keyword + i);
    &text[start..end]
}

#[test]
fn every_definition_is_declared_once_with_its_description() {
    let text = module().unwrap();
    let defs = sep_defs();
    let defs = defs["$defs"].as_object().unwrap();
    for (name, schema) in defs {
        let declared = text.matches(&format!("export interface {name} ")).count()
            + text.matches(&format!("export type {name} ")).count();
        assert_eq!(declared, 1, "{name}");
        let block = declaration(&text, name);
        if let Some(description) = schema["description"].as_str() {
            assert!(
                block.starts_with(&format!("/**\n * {description}\n")),
                "{name}: {block}"
            );
        }
        for (property, property_schema) in schema["properties"].as_object().into_iter().flatten() {
            let optional = if schema["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|p| p == property))
            {
                ""
            } else {
                "?"
            };
            let description = property_schema["description"].as_str().unwrap();
            let member = format!("   * {description}\n   */\n  {property}{optional}: ");
            assert!(block.contains(&member), "{name}.{property}: {block}");
        }
    }
    // The spec-repository pieces are the module's pieces.
    assert!(text.contains(&declarations().unwrap()));
    assert!(text.contains(&added_member().unwrap()));
}

#[test]
fn each_pattern_tag_is_the_schema_pattern() {
    let text = module().unwrap();
    let expression = pattern_tags(declaration(&text, "RuntimeExpression"));
    let binding = pattern_tags(declaration(&text, "RecoveryBinding"));
    assert_eq!((expression.len(), binding.len()), (1, 1));
    let expression = regex::Regex::new(&expression[0]).unwrap();
    let binding = regex::Regex::new(&binding[0]).unwrap();
    let expression_schema = definition(SEP_DEFS, "RuntimeExpression");
    let binding_schema = definition(SEP_DEFS, "RecoveryBinding");
    let samples = [
        "$response.body#/id",
        "$request.body",
        "$response.body#/a~1b/~0c/`",
        "$request.query.a b",
        "$response.header.X-Trace",
        "$response.header.a@b",
        "$statusCode",
        "$bogus",
        "$response.body#/a~2",
        "$",
        "order {$request.body#/id} of {$response.body#/n}",
        "{{$url}}",
        "{$url",
        "{$nope}",
        "{not an expression}",
        "plain text",
        "",
        "`@/ */",
        "{$response.body#/a/`@}",
    ];
    for sample in samples {
        let value = Value::String(sample.to_owned());
        assert_eq!(
            expression.is_match(sample),
            expression_schema.is_valid(&value),
            "RuntimeExpression {sample:?}"
        );
        assert_eq!(
            binding.is_match(sample),
            binding_schema.is_valid(&value),
            "RecoveryBinding {sample:?}"
        );
    }
}

#[test]
fn the_type_tag_admits_every_json_type() {
    let text = module().unwrap();
    let block = declaration(&text, "RecoveryBinding");
    let tag = block
        .lines()
        .find_map(|l| l.strip_prefix(" * @TJS-type "))
        .unwrap();
    let types: Vec<String> = serde_json::from_str(tag).unwrap();
    assert_eq!(
        types,
        ["string", "number", "boolean", "null", "object", "array"]
    );
    assert!(block.contains("@remarks"), "{block}");
}

#[test]
fn the_examples_are_valid_tools_in_the_spec_repository_layout() {
    let examples = mcp_recovery_schema::examples::tool_examples().unwrap();
    assert!(examples.len() >= 4);
    let tool = validator(TOOL_SCHEMA);
    let annotations = definition(SEP_DEFS, "ToolAnnotations");
    let text = module().unwrap();
    for example in &examples {
        assert_eq!(example.path(), format!("examples/Tool/{}", example.file));
        assert!(example.file.ends_with(".json"));
        assert_eq!(
            errors(&tool, &example.value),
            Vec::<String>::new(),
            "{}",
            example.file
        );
        assert!(
            annotations.is_valid(&example.value["annotations"]),
            "{}",
            example.file
        );
        // The declarations show each example.
        let include = format!("{{@includeCode ./{}}}", example.path());
        assert!(text.contains(&include), "{include}");
    }
}
