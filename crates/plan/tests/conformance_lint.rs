//! Runs the lint cases of the conformance suite (`spec/conformance/lint/`) against
//! `mcp-recovery-validator`, one test case per directory (`lint::<case>`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use common::{cases, read_json};
use libtest_mimic::{Arguments, Failed, Trial};
use mcp_recovery_validator::{LintOptions, Linter, rules};
use serde_json::Value;

fn main() {
    let mut trials = vec![Trial::test(
        "lint::cases_cover_every_rule",
        lint_cases_cover_every_rule,
    )];
    for dir in cases("lint") {
        let name = format!("lint::{}", dir.file_name().unwrap().to_string_lossy());
        trials.push(Trial::test(name, move || lint_case(&dir)));
    }
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}

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

/// Lints one case and compares the codes reported with the expected ones.
fn lint_case(dir: &Path) -> Result<(), Failed> {
    let source = fs::read(dir.join("tools.json")).unwrap();
    let linter = Linter::new(options(dir)).unwrap();
    let report = linter.lint_source(&source);
    let actual: BTreeSet<String> = report
        .diagnostics
        .iter()
        .map(|d| d.code.to_owned())
        .collect();
    let expected = expected_codes(dir);
    if actual == expected {
        return Ok(());
    }
    let details: Vec<String> = report
        .diagnostics
        .iter()
        .map(|d| format!("    {} {} at {}: {}", d.code, d.name, d.pointer, d.message))
        .collect();
    Err(format!(
        "expected {expected:?}, got {actual:?}\n{}",
        details.join("\n")
    )
    .into())
}

/// The suite exercises every rule of the catalog (the validator's rule table).
fn lint_cases_cover_every_rule() -> Result<(), Failed> {
    let covered: BTreeSet<String> = cases("lint")
        .iter()
        .flat_map(|dir| expected_codes(dir))
        .collect();
    // Overlay findings need a second document, which a lint case does not have; their
    // fixtures are under fixtures/invalid/R008, R009 and R120 (a before-image, which only an
    // overlay declares).
    let missing: Vec<&str> = rules()
        .iter()
        .map(|r| r.code)
        .filter(|code| !matches!(*code, "R008" | "R009" | "R120") && !covered.contains(*code))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("no lint case expects {missing:?}").into())
    }
}
