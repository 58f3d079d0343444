//! `rules` lists the catalog (the snapshot is the public list of codes); `explain` works for
//! every rule, by code and by name.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{bin, code, root, run_in};
use insta_cmd::assert_cmd_snapshot;
use mcp_recovery_validator::rules;

#[test]
fn rules_lists_the_catalog() {
    assert_cmd_snapshot!(bin().arg("rules"));
    let output = run_in(&root(), &["rules"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!rules().is_empty());
    assert_eq!(stdout.lines().count(), rules().len());
    for (line, rule) in stdout.lines().zip(rules()) {
        assert!(line.starts_with(rule.code), "{line}");
        assert!(line.contains(rule.name), "{line}");
        assert!(line.ends_with(rule.summary), "{line}");
    }
}

#[test]
fn explain_works_for_every_rule() {
    assert!(!rules().is_empty());
    for rule in rules() {
        for key in [
            rule.code.to_owned(),
            rule.code.to_ascii_lowercase(),
            rule.name.to_owned(),
        ] {
            let output = run_in(&root(), &["explain", &key]);
            assert_eq!(code(&output), 0, "{key}");
            let stdout = String::from_utf8(output.stdout).unwrap();
            assert!(
                stdout.starts_with(&format!("# {} {}\n", rule.code, rule.name)),
                "{stdout}"
            );
            assert!(stdout.contains(rule.summary), "{key}");
            assert!(!rule.docs.trim().is_empty(), "{} has docs", rule.code);
            assert!(stdout.contains(rule.docs.trim()), "{key}");
        }
    }
}

#[test]
fn explain_snapshot() {
    assert_cmd_snapshot!(bin().args(["explain", "R106"]));
}

#[test]
fn explain_unknown_rule_exits_2() {
    let output = run_in(&root(), &["explain", "R999"]);
    assert_eq!(code(&output), 2);
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "error: unknown rule 'R999' (run `mcp-recovery rules` for the catalog)\n"
    );
}
