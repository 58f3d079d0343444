//! The `pattern`s in the schemas agree with the model's parsers, both as Rust regexes and as
//! evaluated by a JSON Schema validator.

// Test helpers outside `#[test]` functions may panic too: a failed check is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::LazyLock;

use common::definition;
use jsonschema::Validator;
use mcp_recovery_model::{
    Binding, JsonPath, JsonPointer, RuntimeExpression, Source, Template, TemplatePart,
    expression_pattern, jsonpath_pattern, template_pattern,
};
use mcp_recovery_schema::TOOL_SCHEMA;
use proptest::prelude::*;
use regex::Regex;
use serde_json::json;

static EXPRESSION_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("^{}$", expression_pattern(false))).unwrap());
static TEMPLATE_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(&template_pattern()).unwrap());
static JSONPATH_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(&jsonpath_pattern()).unwrap());
static EXPRESSION_SCHEMA: LazyLock<Validator> =
    LazyLock::new(|| definition(TOOL_SCHEMA, "RuntimeExpression"));
static BINDING_SCHEMA: LazyLock<Validator> =
    LazyLock::new(|| definition(TOOL_SCHEMA, "RecoveryBinding"));
static JSONPATH_SCHEMA: LazyLock<Validator> =
    LazyLock::new(|| definition(TOOL_SCHEMA, "CompensateJsonPath"));

/// The regex, the schema and the parser give one verdict on `text` as a runtime expression.
fn expression_verdict(text: &str) -> bool {
    let parsed = RuntimeExpression::parse(text).is_ok();
    assert_eq!(
        EXPRESSION_RE.is_match(text),
        parsed,
        "regex vs parser on {text:?}"
    );
    assert_eq!(
        EXPRESSION_SCHEMA.is_valid(&json!(text)),
        parsed,
        "schema vs parser on {text:?}"
    );
    parsed
}

/// The regexes, the schema and the parser give one verdict on `text` as a SEP-3172 binding.
fn binding_verdict(text: &str) -> bool {
    let parsed = Binding::parse_sep(&json!(text)).is_ok();
    let regex = EXPRESSION_RE.is_match(text) || TEMPLATE_RE.is_match(text);
    assert_eq!(regex, parsed, "regexes vs parser on {text:?}");
    assert_eq!(
        BINDING_SCHEMA.is_valid(&json!(text)),
        parsed,
        "schema vs parser on {text:?}"
    );
    parsed
}

/// The regex, the schema and the parser give one verdict on `text` as a subset JSONPath.
fn jsonpath_verdict(text: &str) -> bool {
    let parsed = JsonPath::parse(text).is_ok();
    assert_eq!(
        JSONPATH_RE.is_match(text),
        parsed,
        "regex vs parser on {text:?}"
    );
    assert_eq!(
        JSONPATH_SCHEMA.is_valid(&json!(text)),
        parsed,
        "schema vs parser on {text:?}"
    );
    parsed
}

#[test]
fn expression_samples() {
    let valid = [
        "$url",
        "$method",
        "$statusCode",
        "$request.body",
        "$request.body#",
        "$request.body#/",
        "$request.body#/user/uuid",
        "$response.body#/transactionId",
        "$response.body#/a~0b/c~1d/",
        "$response.body#/caf\u{e9}/\u{1f600}",
        "$response.body#/with space/{braces}",
        "$response.body#/line\nbreak",
        "$request.header.X-Request-Id",
        "$request.header.!#$%&'*+-.^_`|~",
        "$response.header.Server",
        "$request.query.",
        "$request.query.a b?c=d",
        "$request.path.id",
        "$request.path.\u{7f}",
    ];
    for text in valid {
        assert!(expression_verdict(text), "{text} should be valid");
    }
    let invalid = [
        "",
        "$",
        "url",
        "$URL",
        "$url/",
        "$urlx",
        "$methods",
        "$statusCode ",
        " $url",
        "$request",
        "$request.",
        "$request.bdy",
        "$request.body/x",
        "$response.body#transactionId",
        "$response.body#/a~",
        "$response.body#/a~2",
        "$response.body##/a",
        "$request.header.",
        "$request.header.a b",
        "$request.header.caf\u{e9}",
        "$request.header.a:b",
        "$request.query.caf\u{e9}",
        "$request.path.\u{0}",
        "$request.cookie.a",
    ];
    for text in invalid {
        assert!(!expression_verdict(text), "{text:?} should be invalid");
    }
}

#[test]
fn binding_samples() {
    let valid = [
        "$response.body#/id",
        "",
        "plain text",
        "{not $ an expression}",
        "cost: $5",
        "order-{$request.body#/orderId}",
        "{$request.body#/a}-{$response.body#/b}",
        "{$url}",
        "a{b}c{$response.body}",
        "{{$request.body#/a}",
        "trailing {",
        "}{$response.body#/x}}",
        "{$response.body#/caf\u{e9}}",
    ];
    for text in valid {
        assert!(binding_verdict(text), "{text:?} should be valid");
    }
    let invalid = [
        "$response.body#transactionId",
        "$nope",
        "id-{$response.body#transactionId}",
        "id-{$response.body#/x",
        "{$}",
        "{$url }",
        "{$request.query.a}b{$request.header.}",
        "x{$response.body#/a~2}",
    ];
    for text in invalid {
        assert!(!binding_verdict(text), "{text:?} should be invalid");
    }
    // Every non-string value is a constant.
    for constant in [
        json!(1),
        json!(1.5),
        json!(true),
        json!(null),
        json!([]),
        json!({"a": "$x"}),
    ] {
        assert!(BINDING_SCHEMA.is_valid(&constant), "{constant}");
        assert!(Binding::parse_sep(&constant).is_ok(), "{constant}");
    }
}

#[test]
fn jsonpath_samples() {
    let valid = [
        "$.input.id",
        "$.input.a.b.c",
        "$.input._x1",
        "$.input.caf\u{e9}",
        "$.output.structuredContent",
        "$.output.structuredContent.transactionId",
        "$['input']['a b']",
        "$[\"output\"][\"structuredContent\"][\"x\"]",
        "$.input[ 'a' ]",
        "$.input['it\\'s']",
        "$.input[\"x/y\"]",
        "$.input['\\u00e9\\ud83d\\ude00']",
        "$.input['\\b\\f\\n\\r\\t\\/\\\\']",
        "$.input['']",
    ];
    for text in valid {
        assert!(jsonpath_verdict(text), "{text} should be valid");
    }
    let invalid = [
        "",
        "$",
        "$.",
        "$.input",
        "$.output",
        "$.output.content[0].text",
        "$.output.structuredcontent",
        "$.input.items[0]",
        "$.input[-1]",
        "$.input[0:2]",
        "$.input.*",
        "$.input[*]",
        "$..id",
        "$.input..id",
        "$.input[?@.a]",
        "$.input['a','b']",
        "$.input['a'",
        "$.input['a",
        "$.input.1a",
        "$.input.a-b",
        "$.input.a b",
        "$.state.x",
        "input.id",
        "$response.body#/id",
        "$.input['\\x']",
        "$.input['\u{1}']",
        "$.input.id ",
    ];
    for text in invalid {
        assert!(!jsonpath_verdict(text), "{text:?} should be invalid");
    }
}

/// The limits the spec text documents: escapes the patterns cannot follow.
#[test]
fn documented_jsonpath_limits() {
    // An escaped spelling of a root name: the parser decodes it, the pattern does not.
    let escaped_root = "$['\\u0069nput'].id";
    assert!(JsonPath::parse(escaped_root).is_ok());
    assert!(!JSONPATH_RE.is_match(escaped_root));
    assert!(!JSONPATH_SCHEMA.is_valid(&json!(escaped_root)));
    // A lone surrogate escape: the parser rejects it, the pattern cannot pair surrogates.
    let lone_surrogate = "$.input['\\ud800']";
    assert!(JsonPath::parse(lone_surrogate).is_err());
    assert!(JSONPATH_RE.is_match(lone_surrogate));
    assert!(JSONPATH_SCHEMA.is_valid(&json!(lone_surrogate)));
}

fn arb_pointer() -> impl Strategy<Value = Option<JsonPointer>> {
    proptest::option::of(
        proptest::collection::vec("[a-zA-Z0-9 ~/{}#$.\u{e9}\u{1f600}-]{0,5}", 0..4)
            .prop_map(JsonPointer::from_tokens),
    )
}

fn arb_source() -> impl Strategy<Value = Source> {
    prop_oneof![
        "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,8}".prop_map(Source::Header),
        "[\\x01-\\x7f]{0,8}".prop_map(Source::Query),
        "[\\x01-\\x7f]{0,8}".prop_map(Source::Path),
        arb_pointer().prop_map(Source::Body),
    ]
}

fn arb_expression() -> impl Strategy<Value = RuntimeExpression> {
    prop_oneof![
        Just(RuntimeExpression::Url),
        Just(RuntimeExpression::Method),
        Just(RuntimeExpression::StatusCode),
        arb_source().prop_map(RuntimeExpression::Request),
        arb_source().prop_map(RuntimeExpression::Response),
    ]
}

/// Expressions that can sit inside `{…}`: no `}` in them, since the first `}` closes them.
fn arb_embeddable() -> impl Strategy<Value = RuntimeExpression> {
    arb_expression().prop_filter("contains '}'", |e| !e.to_string().contains('}'))
}

fn arb_template() -> impl Strategy<Value = Template> {
    let part = prop_oneof![
        "[a-z {}/#~.-]{1,6}".prop_map(TemplatePart::Literal),
        arb_embeddable().prop_map(TemplatePart::Expression),
    ];
    proptest::collection::vec(part, 0..5).prop_map(|parts| Template { parts })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_expressions_match(expression in arb_expression()) {
        let text = expression.to_string();
        prop_assert!(expression_verdict(&text), "{} rejected", text);
        prop_assert!(binding_verdict(&text), "{} rejected as a binding", text);
    }

    #[test]
    fn generated_templates_match(template in arb_template()) {
        let text = template.to_string();
        prop_assert!(binding_verdict(&text), "{} rejected", text);
    }

    #[test]
    fn generated_paths_match(
        names in proptest::collection::vec("[a-zA-Z0-9_ '\"\\\\/\u{e9}.\\[\\]-]{0,5}", 0..4),
        output in any::<bool>(),
    ) {
        let side = if output { mcp_recovery_model::BodySide::Response } else { mcp_recovery_model::BodySide::Request };
        prop_assume!(output || !names.is_empty());
        let text = JsonPath { side, names }.to_string();
        prop_assert!(jsonpath_verdict(&text), "{} rejected", text);
    }

    #[test]
    fn expression_regex_agrees_on_near_misses(
        text in "\\$(url|method|statusCode|(request|response)\\.(header\\.|query\\.|path\\.|body|bdy)?)?[a-z~0-2/#.{} \u{e9}]{0,8}"
    ) {
        expression_verdict(&text);
        binding_verdict(&text);
    }

    #[test]
    fn binding_regex_agrees_on_near_misses(
        text in "([a-z {}]{0,3}(\\{\\$(url|request\\.body#?|response\\.(body|header\\.)))?[/~01a }#]{0,4}){0,3}"
    ) {
        binding_verdict(&text);
    }

    #[test]
    fn jsonpath_regex_agrees_without_unicode_escapes(
        text in "\\$(\\.input|\\.output\\.structuredContent|\\['input'\\]|\\.output)?[.\\['\"a-z0-9_*?:,\\\\ \\]\u{e9}]{0,12}"
    ) {
        // `\u` escapes are the documented limit (see `documented_jsonpath_limits`).
        prop_assume!(!text.contains("\\u"));
        jsonpath_verdict(&text);
    }
}
