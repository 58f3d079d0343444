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
    /// The command line or the URL, shell-quoted, without headers or environment (its words
    /// may still hold secrets: what is shown or journaled goes through `Secrets::redact`).
    pub fn describe(&self) -> String {
        self.target().to_string()
    }

    /// The `mcp-recovery rollback` command line that rolls back `session` of `journal` against
    /// this server, each word shell-quoted, with every one of `secrets` replaced (and without
    /// its headers or environment, which are never shown).
    pub fn rollback_command(
        &self,
        journal: &std::path::Path,
        session: &str,
        secrets: &Secrets,
    ) -> String {
        let shown = |word: &str| quoted(&secrets.redact(word));
        let server = match self {
            UpstreamSpec::Stdio(launch) => {
                let words: Vec<String> = std::iter::once(&launch.program)
                    .chain(&launch.args)
                    .map(|word| shown(word))
                    .collect();
                format!("--stdio -- {}", words.join(" "))
            }
            UpstreamSpec::Http { .. } => format!("--url {}", shown(&self.describe())),
        };
        format!(
            "mcp-recovery rollback --journal {} --session {} {server}",
            quoted(&journal.display().to_string()),
            quoted(session)
        )
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
                    command: secrets.redact(&self.describe()).into_owned(),
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

/// `word` quoted for a POSIX shell where it needs to be.
fn quoted(word: &str) -> String {
    Target::Stdio {
        program: word.to_owned(),
        args: Vec::new(),
    }
    .to_string()
}
