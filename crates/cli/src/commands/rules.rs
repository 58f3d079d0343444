//! `rules`: the rule catalog, one line per rule.

use std::io::Write;
use std::process::ExitCode;

use mcp_recovery_validator::{DefaultLevel, rules};

use crate::Failure;
use crate::args::documents::RulesArgs;

/// How a default level is shown: the severity, or `off`.
pub fn level_name(level: DefaultLevel) -> &'static str {
    match level {
        DefaultLevel::On(severity) => severity.as_str(),
        DefaultLevel::Off => "off",
    }
}

/// `rules`: one line per rule, aligned.
pub fn run(_: &RulesArgs) -> Result<ExitCode, Failure> {
    let catalog = rules();
    let name_width = catalog.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let mut out = std::io::stdout().lock();
    for rule in catalog {
        writeln!(
            out,
            "{:<5}  {:<name_width$}  {:<7}  {}",
            rule.code,
            rule.name,
            level_name(rule.default),
            rule.summary
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
