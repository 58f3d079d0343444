//! Settings merged from the config and the flags, and the levels that fail a run.

use super::outcome::fails;
use super::settings::merge;
use crate::args::lint::LintArgs;
use crate::config::Config;
use clap::Parser;
use mcp_recovery_validator::Severity;

fn lint_args(argv: &[&str]) -> LintArgs {
    let mut full = vec!["mcp-recovery", "lint"];
    full.extend_from_slice(argv);
    match crate::args::Cli::parse_from(full).command {
        crate::commands::Command::Lint(args) => args,
        other => panic!("not lint: {other:?}"),
    }
}

#[test]
fn flags_replace_config_lists() {
    let config = Config {
        preset: None,
        select: vec!["R101".into()],
        ignore: vec!["R114".into()],
        deny_warnings: false,
        severity: [("R108".to_owned(), Severity::Error)].into(),
        overrides: Vec::new(),
    };
    let settings = merge(
        config.clone(),
        &lint_args(&["--select", "R102,R103", "--select", "R104"]),
    );
    assert_eq!(settings.options.select, ["R102", "R103", "R104"]);
    assert_eq!(settings.options.ignore, ["R114"]);
    assert_eq!(
        settings.options.severity.get("R108"),
        Some(&Severity::Error)
    );
    assert!(!settings.deny_warnings);
    let settings = merge(
        config,
        &lint_args(&["--deny", "warnings", "--ignore", "R107"]),
    );
    assert_eq!(settings.options.select, ["R101"]);
    assert_eq!(settings.options.ignore, ["R107"]);
    assert!(settings.deny_warnings);
}

#[test]
fn failing_levels() {
    assert!(fails(Severity::Error, false));
    assert!(!fails(Severity::Warning, false));
    assert!(fails(Severity::Warning, true));
    assert!(!fails(Severity::Info, true));
}
