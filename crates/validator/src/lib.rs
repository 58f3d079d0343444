//! Validation of MCP `tools/list` documents and their recovery metadata.
//!
//! One call turns the bytes of a document into [`Diagnostic`]s: parse (R001), shape (R002),
//! schema (R003), then the semantic rules of the catalog ([`rules`]).
//!
//! ```
//! use mcp_recovery_validator::{LintOptions, Linter};
//!
//! let linter = Linter::new(LintOptions::default()).unwrap();
//! let report = linter.lint_source(br#"{"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}"#);
//! assert_eq!(report.tools, 1);
//! assert!(report.diagnostics.is_empty());
//! ```

mod catalog;
mod codes;
mod config_file;
mod context;
mod diagnostic;
mod finding;
mod level;
mod linter;
mod load;
mod overlaid;
mod rules;
mod schema_stage;
mod span;
#[cfg(test)]
mod test_tools;

pub use catalog::{find_rule, rules, rules_markdown};
pub use config_file::{CONFIG_SCHEMA, ConfigFile, OverrideFile, config_schema};
pub use diagnostic::{Diagnostic, Report, Severity, Span, escape_xml};
pub use level::{DefaultLevel, Preset, RULES_DOC_URL, RuleInfo};
pub use linter::{LintOptions, Linter, READ_IN_PARTS_FROM, UnknownRule};
pub use overlaid::{OverlaidReport, overlay_positions};
pub use span::{LineIndex, json_place, repeated_member};
