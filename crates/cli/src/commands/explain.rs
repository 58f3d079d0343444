//! `explain`: the documentation of one rule.

use std::io::Write;
use std::process::ExitCode;

use mcp_recovery_validator::find_rule;

use crate::Failure;
use crate::args::documents::ExplainArgs;
use crate::commands::rules::level_name;

/// `explain CODE|NAME`: the rule's heading, default level and docs.
pub fn run(args: &ExplainArgs) -> Result<ExitCode, Failure> {
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
    Ok(ExitCode::SUCCESS)
}
