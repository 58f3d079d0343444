//! The whole lint pipeline on any bytes: `lint_source` never panics and its spans lie inside the
//! source; when the bytes are JSON, `lint_value` on the parsed document never panics either and
//! finds the same diagnostics, without spans.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_recovery_validator::{LintOptions, Linter};
use serde_json::Value;

static DEFAULT: LazyLock<Linter> = LazyLock::new(|| {
    Linter::new(LintOptions::default())
        .unwrap_or_else(|e| panic!("the default options name unknown rules: {e}"))
});

fuzz_target!(|data: &[u8]| {
    let report = DEFAULT.lint_source(data);
    for diagnostic in &report.diagnostics {
        if let Some(span) = &diagnostic.span {
            assert!(
                span.start <= span.end && span.end <= data.len(),
                "span {}..{} outside {} bytes: {diagnostic:?}",
                span.start,
                span.end,
                data.len()
            );
        }
    }
    if let Ok(document) = serde_json::from_slice::<Value>(data) {
        let from_value = DEFAULT.lint_value(&document);
        assert!(from_value.diagnostics.iter().all(|d| d.span.is_none()));
        assert_eq!(from_value.tools, report.tools);
    }
});
