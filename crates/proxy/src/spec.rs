//! The server behind the proxy as configured, before it is started or reached.

use std::sync::mpsc::SyncSender;
use std::time::Duration;

use mcp_recovery_client::{Header, Secrets, Target};

use crate::error::ProxyError;
use crate::event::Event;
use crate::upstream::{HttpUpstream, Launch, StdioUpstream, Upstream};

/// The server behind the proxy, before it is started or reached.
#[derive(Debug, Clone)]
pub enum UpstreamSpec {
    /// A command run as a child on stdio (no shell).
    Stdio(Launch),
    /// A Streamable HTTP endpoint.
    Http {
        /// The URL (`http://` or `https://`).
        url: String,
        /// Headers sent with every request (values are never shown).
        headers: Vec<Header>,
    },
}

impl UpstreamSpec {
    /// The command line or the URL, without secrets (journaled at the start of a session).
    pub fn describe(&self) -> String {
        self.target().to_string()
    }

    fn target(&self) -> Target {
        match self.clone() {
            UpstreamSpec::Stdio(launch) => Target::Stdio {
                program: launch.program,
                args: launch.args,
            },
            UpstreamSpec::Http { url, headers } => Target::Http { url, headers },
        }
    }

    /// Starts the child or prepares the endpoint; its messages arrive on `events`. A child's
    /// stderr is shown with every one of `secrets` replaced.
    pub fn start(
        &self,
        timeout: Duration,
        secrets: &Secrets,
        events: SyncSender<Event>,
    ) -> Result<Upstream, ProxyError> {
        match self {
            UpstreamSpec::Stdio(launch) => StdioUpstream::spawn(launch, secrets, events)
                .map(Upstream::Stdio)
                .map_err(|source| ProxyError::Spawn {
                    command: self.describe(),
                    source,
                }),
            UpstreamSpec::Http { url, headers } => Ok(Upstream::Http(HttpUpstream::new(
                url,
                headers.clone(),
                timeout,
                events,
            ))),
        }
    }
}
