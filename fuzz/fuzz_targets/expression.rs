//! `RuntimeExpression::parse` on any text: it never panics, errors point at a character
//! boundary inside the text, an accepted expression prints back to the same text and parses
//! to the same value, and the published regular expression accepts exactly what the parser does.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_recovery_model::{RuntimeExpression, expression_pattern};
use regex::Regex;

static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("^(?:{})$", expression_pattern(false)))
        .unwrap_or_else(|e| panic!("the expression pattern does not compile: {e}"))
});

fuzz_target!(|text: &str| {
    match RuntimeExpression::parse(text) {
        Ok(expression) => {
            let shown = expression.to_string();
            assert_eq!(shown, text, "display does not give back the parsed text");
            assert_eq!(RuntimeExpression::parse(&shown).as_ref(), Ok(&expression));
            assert!(
                PATTERN.is_match(text),
                "parsed but the pattern rejects {text:?}"
            );
        }
        Err(error) => {
            assert!(
                text.is_char_boundary(error.offset),
                "offset {} is not a character boundary of {text:?}",
                error.offset
            );
            assert!(
                !PATTERN.is_match(text),
                "rejected but the pattern accepts {text:?}"
            );
        }
    }
});
