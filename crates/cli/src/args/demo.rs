//! Arguments of `demo` and of the hidden `demo-server` it starts.

use std::path::PathBuf;

use clap::Args;

use crate::args::values::written_path;

/// Arguments of `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Give up on the demo server after this many seconds per request (1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}

/// Arguments of the hidden `demo-server` (test hooks of the demo server).
#[cfg(feature = "demo")]
#[derive(Debug, Args)]
pub struct DemoServerArgs {
    /// Append each tools/call (name, arguments) to this file as a JSON line.
    #[arg(long, value_name = "PATH", value_parser = written_path)]
    pub call_log: Option<PathBuf>,
    /// Wait MS milliseconds before answering calls to TOOL (`TOOL=MS`, repeatable).
    #[arg(long, value_name = "TOOL=MS", value_parser = parse_slow)]
    pub slow: Vec<(String, u64)>,
    /// Misbehave on tools/list (hang, crash, garbage, repeated-name, endless-pages, repeat-cursor,
    /// huge, chatty).
    #[arg(long, value_name = "MODE", value_parser = str::parse::<mcp_recovery_demo_server::stdio::Hostile>)]
    pub hostile: Option<mcp_recovery_demo_server::stdio::Hostile>,
    /// List the tools without recovery metadata (no `annotations.recovery`, no `_meta`), as a
    /// server that declares none.
    #[arg(long)]
    pub undeclared: bool,
    /// Serve Streamable HTTP at http://ADDR/mcp (loopback only) instead of stdio; the URL is
    /// the first stdout line.
    #[arg(long, value_name = "ADDR", conflicts_with = "hostile")]
    pub http: Option<std::net::SocketAddr>,
    /// With --http: answer as text/event-stream instead of JSON.
    #[arg(long, requires = "http")]
    pub sse: bool,
    /// The protocol revisions spoken: 2025-11-25 (initialize), 2026-07-28 (per-request
    /// versions and server/discover, no initialize) or both.
    #[arg(long, value_name = "R", default_value = "2025-11-25", value_parser = str::parse::<mcp_recovery_demo_server::Revisions>)]
    pub revisions: mcp_recovery_demo_server::Revisions,
}

/// Parses `--slow TOOL=MS`.
#[cfg(feature = "demo")]
fn parse_slow(spec: &str) -> Result<(String, u64), String> {
    spec.split_once('=')
        .and_then(|(tool, ms)| Some((tool.to_owned(), ms.parse().ok()?)))
        .ok_or_else(|| format!("{spec:?} is not TOOL=MILLISECONDS"))
}
