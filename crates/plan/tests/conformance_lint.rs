//! Runs the lint cases of the conformance suite (`spec/conformance/lint/`) against
//! `mcp-recovery-validator`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use common::{cases, read_json};
use mcp_recovery_validator::{LintOptions, Linter, rules};
use serde_json::Value;

/// The rule catalog (`spec/rules.md`); the suite must exercise each code.
const CATALOG: [&str; 26] = [
    "R001", "R002", "R003", "R004", "R005", "R006", "R101", "R102", "R103", "R104", "R105", "R106",
    "R107", "R108", "R109", "R110", "R111", "R112", "R113", "R114", "R116", "R117", "R118", "R119",
    "R201", "R202",
];

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn expected_codes(dir: &Path) -> BTreeSet<String> {
    strings(&read_json(&dir.join("expected-lint.json")))
        .into_iter()
        .collect()
}

fn options(dir: &Path) -> LintOptions {
    let path = dir.join("lint-options.json");
    if !path.exists() {
        return LintOptions::default();
    }
    let value = read_json(&path);
    LintOptions {
        select: strings(&value["select"]),
        ignore: strings(&value["ignore"]),
        ..LintOptions::default()
    }
}

#[test]
fn lint_cases_pass() {
    let dirs = cases("lint");
    let mut failures = Vec::new();
    for dir in &dirs {
        let source = fs::read(dir.join("tools.json")).unwrap();
        let linter = Linter::new(options(dir)).unwrap();
        let report = linter.lint_source(&source);
        let actual: BTreeSet<String> = report
            .diagnostics
            .iter()
            .map(|d| d.code.to_owned())
            .collect();
        let expected = expected_codes(dir);
        if actual != expected {
            let details: Vec<String> = report
                .diagnostics
                .iter()
                .map(|d| format!("    {} {} at {}: {}", d.code, d.name, d.pointer, d.message))
                .collect();
            failures.push(format!(
                "{}: expected {expected:?}, got {actual:?}\n{}",
                dir.file_name().unwrap().to_string_lossy(),
                details.join("\n")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} lint cases fail:\n\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n\n")
    );
}

#[test]
fn lint_cases_cover_every_rule() {
    let covered: BTreeSet<String> = cases("lint")
        .iter()
        .flat_map(|dir| expected_codes(dir))
        .collect();
    let catalog = CATALOG
        .iter()
        .copied()
        .chain(rules().iter().map(|r| r.code));
    // Overlay findings need a second document, which a lint case does not have; their
    // fixtures are under fixtures/invalid/R008 and R009.
    for code in catalog.filter(|code| !matches!(*code, "R008" | "R009")) {
        assert!(covered.contains(code), "no lint case expects {code}");
    }
}
