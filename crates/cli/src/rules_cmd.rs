//! `rules` and `explain`: the rule catalog and one rule's documentation.

use std::io::Write;

use mcp_recovery_validator::{DefaultLevel, find_rule, rules};

use crate::Failure;
use crate::cli::ExplainArgs;

fn level_name(level: DefaultLevel) -> &'static str {
    match level {
        DefaultLevel::On(severity) => severity.as_str(),
        DefaultLevel::Off => "off",
    }
}

/// `rules`: one line per rule, aligned.
pub fn list() -> Result<(), Failure> {
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
    Ok(())
}

/// `explain CODE|NAME`: the rule's heading, default level and docs.
pub fn explain(args: &ExplainArgs) -> Result<(), Failure> {
    let rule = find_rule(&args.rule).ok_or_else(|| {
        Failure::Usage(format!(
            "unknown rule '{}' (run `mcp-recovery rules` for the catalog)",
            args.rule
        ))
    })?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "# {} {}", rule.code, rule.name)?;
    writeln!(out)?;
    writeln!(out, "Default level: {}", level_name(rule.default))?;
    writeln!(out)?;
    writeln!(out, "{}", rule.summary)?;
    let docs = rule.docs.trim();
    if !docs.is_empty() {
        writeln!(out)?;
        writeln!(out, "{docs}")?;
    }
    Ok(())
}
