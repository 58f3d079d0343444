//! How a census runs, and why it could not run at all.

use std::path::PathBuf;

use mcp_recovery_base::read::ReadPolicy;
use mcp_recovery_validator::UnknownRule;

/// How a census runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CensusOptions {
    /// How many signatures to list by name (the rest are summed as "other").
    pub top_signatures: usize,
    /// Lint every document and count findings per rule.
    pub lint: bool,
    /// Worker threads; each holds at most one file at a time.
    pub threads: usize,
    /// How files are read: larger than the cap, not regular, or behind a link that leaves the
    /// working directory, they are listed as not read, never loaded (the limits of `lint`).
    pub read: ReadPolicy,
}

impl Default for CensusOptions {
    fn default() -> Self {
        Self {
            top_signatures: 10,
            lint: true,
            threads: 2,
            read: ReadPolicy::default(),
        }
    }
}

/// Why a census could not run at all (bad input files never cause this).
#[derive(Debug, thiserror::Error)]
pub enum CensusError {
    /// A path given on the command line cannot be read.
    #[error("cannot read {path}: {source}")]
    Input {
        /// The path as given.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The lint configuration names an unknown rule.
    #[error(transparent)]
    Lint(#[from] UnknownRule),
}
