//! `JsonPath::parse` on any text: it never panics, errors point at a character boundary, an
//! accepted path prints to a canonical form that parses to the same path and that the published
//! regular expression accepts, and its runtime expression converts back to the same path.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_recovery_model::{JsonPath, RuntimeExpression, jsonpath_pattern};
use regex::Regex;

static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&jsonpath_pattern())
        .unwrap_or_else(|e| panic!("the JSONPath pattern does not compile: {e}"))
});

fuzz_target!(|text: &str| {
    // The pattern's documented limits: it does not check surrogate pairing in `\u` escapes, and
    // it recognizes the root segments only when they are spelled without escapes.
    let has_unicode_escape = text.contains("\\u");
    match JsonPath::parse(text) {
        Ok(path) => {
            let shown = path.to_string();
            assert_eq!(JsonPath::parse(&shown).as_ref(), Ok(&path), "{shown}");
            assert!(
                PATTERN.is_match(&shown),
                "pattern rejects canonical {shown:?}"
            );
            assert!(
                has_unicode_escape || PATTERN.is_match(text),
                "parsed but the pattern rejects {text:?}"
            );
            let expression = path.to_expression();
            assert_eq!(JsonPath::from_expression(&expression).as_ref(), Some(&path));
            assert_eq!(
                RuntimeExpression::parse(&expression.to_string()).as_ref(),
                Ok(&expression)
            );
        }
        Err(error) => {
            assert!(
                text.is_char_boundary(error.offset),
                "offset {} is not a character boundary of {text:?}",
                error.offset
            );
            assert!(
                has_unicode_escape || !PATTERN.is_match(text),
                "rejected but the pattern accepts {text:?}"
            );
        }
    }
});
