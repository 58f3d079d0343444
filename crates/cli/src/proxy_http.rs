//! The HTTP sides of `proxy`: `--url` for an upstream Streamable HTTP server, `--listen` to
//! serve Streamable HTTP to the client instead of stdio.

use mcp_recovery_base::text::escape_controls;
use std::net::SocketAddr;

use mcp_recovery_client::{Header, Target};
use mcp_recovery_journal::Journal;
use mcp_recovery_proxy::{Limits, Listener, Settings, UpstreamSpec, serve};

use crate::Failure;
use crate::args::proxy::TransportArgs;

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
                    escape_controls(&settings.upstream)
                );
            }
            // One write, so that a reader of the stream never sees half the address.
            let line = format!("mcp-recovery proxy: listening on http://{bound}/mcp\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
        });
        match outcome {
            Ok(()) => Failure::Usage("the listener stopped".into()),
            Err(e) => Failure::Usage(e.to_string()),
        }
    }
}
