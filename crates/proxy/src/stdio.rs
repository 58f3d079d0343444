//! A session with the client on this process's stdin and stdout.

use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use mcp_recovery_journal::Journal;

use crate::error::ProxyError;
use crate::event::{Budget, CLIENT_BYTES, EVENT_BUFFER, Event, read_metered};
use crate::session::Session;
use crate::settings::{End, Settings};
use crate::spec::UpstreamSpec;
use crate::upstream::{Launch, StdioUpstream, Upstream};

/// Runs one stdio session: the client on this process's stdin/stdout, the server started as
/// `launch` says.
pub fn run_stdio(
    settings: Settings,
    journal: Option<Journal>,
    launch: &Launch,
) -> Result<End, ProxyError> {
    run_on_stdio(settings, journal, &UpstreamSpec::Stdio(launch.clone()))
}

/// Runs one session with the client on this process's stdin/stdout and `upstream` behind.
///
/// The client's reader holds each line's bytes until the session has handled it (and the
/// bytes queued for a child's stdin as well), and waits while they pass
/// [`CLIENT_BYTES`]: a client that floods the proxy is slowed down to the server's pace, and
/// the server's answers keep flowing meanwhile.
pub fn run_on_stdio(
    settings: Settings,
    journal: Option<Journal>,
    upstream: &UpstreamSpec,
) -> Result<End, ProxyError> {
    let (sender, events) = sync_channel(EVENT_BUFFER);
    let upstream = start_upstream(upstream, &settings, sender.clone())?;
    let budget = upstream
        .budget()
        .unwrap_or_else(|| Budget::new(CLIENT_BYTES));
    std::thread::spawn(move || {
        read_metered(std::io::stdin(), &sender, &budget, Event::MeteredClient);
    });
    let stdout = std::io::stdout();
    let journal = journal.map(|j| Arc::new(Mutex::new(j)));
    let session = Session::new(settings, journal, events, upstream, stdout.lock());
    Ok(session.run()?)
}

/// Starts `spec`'s server for a session of `settings`: a child never inherits the variables
/// of the proxy's environment that hold its own secrets
/// ([`PolicyFile::secret_variables`](crate::policy::PolicyFile::secret_variables)).
pub(crate) fn start_upstream(
    spec: &UpstreamSpec,
    settings: &Settings,
    events: SyncSender<Event>,
) -> Result<Upstream, ProxyError> {
    match spec {
        UpstreamSpec::Stdio(launch) => StdioUpstream::spawn_withholding(
            launch,
            &settings.policy.file.secret_variables(),
            &settings.secrets,
            events,
        )
        .map(Upstream::Stdio)
        .map_err(|source| ProxyError::Spawn {
            command: spec.describe(),
            source,
        }),
        UpstreamSpec::Http { .. } => {
            spec.start(settings.policy.call_timeout(), &settings.secrets, events)
        }
    }
}
