//! Census of MCP `tools/list` corpora: what servers declare about their tools.
//!
//! One file is one server. The census reads each file once, counts hint usage (the four
//! `ToolAnnotations` hints, keeping an explicit `false` apart from an omitted field), hint
//! signatures, `destructiveHint` applicability and declared recovery in both carriers, and lints
//! the parsed document with [`mcp_recovery_validator::Linter`]. Every metric is defined in
//! `spec/census.md`.
//!
//! Files are processed in a bounded window (one file per worker thread at a time), so memory is
//! bounded by the largest files, not by the corpus.
//!
//! ```
//! use mcp_recovery_census::{CensusBuilder, CensusOptions};
//!
//! let mut census = CensusBuilder::new(&CensusOptions::default()).unwrap();
//! census.add_bytes("a.json", br#"{"tools": [
//!     {"name": "get", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
//!     {"name": "put", "inputSchema": {"type": "object"}}
//! ]}"#);
//! census.add_bytes("notes.json", br#"{"title": "not a server"}"#);
//! let census = census.finish();
//! assert_eq!(census.servers, 1);
//! assert_eq!(census.tools, 2);
//! assert_eq!(census.hints.any.count, 1);
//! assert_eq!(census.files.not_tools_lists, 1);
//! ```

mod builder;
mod examine;
mod metrics;
mod options;
mod paths;
mod render;
mod signature;

pub use builder::{CensusBuilder, median_f64, median_u64};
pub use examine::NotToolsReason;
pub use metrics::{
    Census, Destructive, FORMAT_VERSION, FileCounts, FileSeen, HintCounts, HintUsage, LintSummary,
    NotToolsFile, ProfileShare, RecoveryUsage, ReversibilityCounts, RuleFindings, ServerSpread,
    Share, SignatureShare, Signatures,
};
pub use options::{CensusError, CensusOptions};
pub use paths::{
    census_files_observed, census_paths, census_paths_observed, collect_files,
    collect_files_listing_missing,
};
pub use signature::{HintState, Signature};

#[cfg(test)]
mod tests;
