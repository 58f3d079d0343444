//! The demo server's declared list lints clean: no error, warning or info, even with the
//! advisory rules selected.

// Helpers shared by the tests fail loudly, like the tests themselves.
#![allow(clippy::panic)]

use mcp_recovery_demo_server::tools;
use mcp_recovery_validator::{LintOptions, Linter, rules};

fn findings(options: LintOptions) -> Vec<String> {
    let Ok(linter) = Linter::new(options) else {
        panic!("the options name known rules")
    };
    let report = linter.lint_value(&tools());
    assert_eq!(report.tools, 7);
    report
        .diagnostics
        .iter()
        .map(|d| format!("{} {} {}: {}", d.code, d.pointer, d.name, d.message))
        .collect()
}

#[test]
fn default_rules_find_nothing() {
    assert_eq!(findings(LintOptions::default()), Vec::<String>::new());
}

#[test]
fn every_rule_finds_nothing() {
    let select = rules().iter().map(|rule| rule.code.to_string()).collect();
    assert_eq!(
        findings(LintOptions {
            select,
            ..LintOptions::default()
        }),
        Vec::<String>::new()
    );
}

#[test]
fn the_served_text_lints_clean_too() {
    let Ok(linter) = Linter::new(LintOptions::default()) else {
        panic!("default options")
    };
    let text = serde_json::to_vec_pretty(&tools()).unwrap_or_default();
    assert!(linter.lint_source(&text).diagnostics.is_empty());
}

#[test]
fn a_broken_copy_does_not_lint_clean() {
    // Guards the tests above: the linter does look at the demo's declarations.
    let mut broken = tools();
    broken["tools"][2]["outputSchema"]["required"] = serde_json::json!([]);
    broken["tools"][3]["annotations"]["idempotentHint"] = serde_json::json!(false);
    let Ok(linter) = Linter::new(LintOptions::default()) else {
        panic!("default options")
    };
    let codes: Vec<&str> = linter
        .lint_value(&broken)
        .diagnostics
        .iter()
        .map(|d| d.code)
        .collect();
    assert!(codes.contains(&"R108"), "{codes:?}");
    assert!(codes.contains(&"R114"), "{codes:?}");
}
