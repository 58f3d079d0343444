//! The HTTP sides of `proxy`: `--url` for an upstream Streamable HTTP server, `--listen` to
//! serve Streamable HTTP to the client instead of stdio.

use std::net::SocketAddr;

use clap::Args;
use mcp_recovery_client::{Header, Target};
use mcp_recovery_journal::Journal;
use mcp_recovery_proxy::{Limits, Listener, Settings, UpstreamSpec, escape, serve};

use crate::Failure;

/// Transport flags of `proxy`.
#[derive(Debug, Args)]
pub struct TransportArgs {
    /// Forward to a Streamable HTTP server at this URL instead of starting a command.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Extra HTTP header for `--url`, as 'Name: value' (repeatable; `${VAR}` reads the
    /// environment; values are never shown).
    #[arg(long = "header", value_name = "'K: V'", requires = "url")]
    pub headers: Vec<String>,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (loopback only unless
    /// --allow-remote; port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// Let --listen bind an address other than loopback (anyone who can reach it can call the
    /// server's tools).
    #[arg(long, requires = "listen")]
    pub allow_remote: bool,
    /// An Origin accepted besides loopback ones, as scheme://host[:port] (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    pub allow_origin: Vec<String>,
    /// Most sessions (Mcp-Session-Id) open at once with --listen.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub max_sessions: u16,
    /// Most connections open at once with --listen; one more is answered 503 with
    /// Retry-After.
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub max_connections: u16,
    /// Seconds a request to --listen has to arrive whole (head and body, however it trickles)
    /// and a connection may stay idle between requests.
    #[arg(long, value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u16).range(1..=3600))]
    pub request_timeout: u16,
}

impl TransportArgs {
    /// The upstream `--url` names, with its headers, if any.
    pub fn http_target(&self) -> Result<Option<Target>, Failure> {
        let Some(url) = &self.url else {
            return Ok(None);
        };
        let headers = self
            .headers
            .iter()
            .map(|spec| Header::parse(spec))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Failure::Usage(e.to_string()))?;
        Ok(Some(Target::Http {
            url: url.clone(),
            headers,
        }))
    }

    /// Serves `--listen` until the process is stopped.
    pub fn listen(
        &self,
        address: SocketAddr,
        settings: &Settings,
        journal: Option<Journal>,
        upstream: &UpstreamSpec,
    ) -> Failure {
        let listener = Listener {
            address,
            allow_remote: self.allow_remote,
            allowed_origins: self.allow_origin.clone(),
            limits: Limits {
                max_sessions: usize::from(self.max_sessions),
                max_connections: usize::from(self.max_connections),
                io_timeout: std::time::Duration::from_secs(u64::from(self.request_timeout)),
                ..Limits::default()
            },
        };
        let journal = journal.map(|j| std::sync::Arc::new(std::sync::Mutex::new(j)));
        let outcome = serve(&listener, settings, journal, upstream, |bound| {
            if !bound.ip().is_loopback() {
                eprintln!(
                    "mcp-recovery proxy: WARNING: listening on {bound}, which is not loopback: \
                     anyone who can reach it can call the tools of {}",
                    escape(&upstream.describe())
                );
            }
            eprintln!("mcp-recovery proxy: listening on http://{bound}/mcp");
        });
        match outcome {
            Ok(()) => Failure::Usage("the listener stopped".into()),
            Err(e) => Failure::Usage(e.to_string()),
        }
    }
}
