//! The limits, timing and process environment of one connection.

use std::path::PathBuf;
use std::time::Duration;

/// Limits, timing and, for stdio servers, the process environment of one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// How long one request may wait for its answer (default 30 s).
    pub timeout: Duration,
    /// How long the whole connection may take, from starting or reaching the server to the
    /// last page of `tools/list` (default 120 s).
    pub total_timeout: Duration,
    /// Largest message accepted: one stdout line, one HTTP body or one event (default 64 MiB).
    pub max_message_bytes: u64,
    /// Most bytes accepted from the server over the whole connection, all pages and noise
    /// included (default 128 MiB).
    pub max_total_bytes: u64,
    /// Most `tools/list` pages followed before giving up (default 10,000).
    pub max_pages: usize,
    /// How many of the last stderr lines of a stdio server are kept (default 20).
    pub stderr_lines: usize,
    /// How long a stdio server gets to exit after its stdin closes before its process group is
    /// killed (default 1 s).
    pub shutdown_grace: Duration,
    /// Variables added to a stdio server's environment (values are secrets: never shown).
    pub env: Vec<(String, String)>,
    /// Variables of this process's environment a stdio server does not inherit (secrets of
    /// the caller's own); `env` may still set them.
    pub withheld: Vec<String>,
    /// The working directory of a stdio server (default: the client's).
    pub cwd: Option<PathBuf>,
    /// More values to hide in everything printed: those a client config substituted into the
    /// command line, the URL or a header from `${env:…}` and `${input:…}`.
    pub secrets: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(120),
            max_message_bytes: 64 * 1024 * 1024,
            max_total_bytes: 128 * 1024 * 1024,
            max_pages: 10_000,
            stderr_lines: 20,
            shutdown_grace: Duration::from_secs(1),
            env: Vec::new(),
            withheld: Vec::new(),
            cwd: None,
            secrets: Vec::new(),
        }
    }
}
