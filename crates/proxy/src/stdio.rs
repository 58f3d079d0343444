//! A session with the client on this process's stdin and stdout.

use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};

use mcp_recovery_journal::Journal;

use crate::error::ProxyError;
use crate::event::{EVENT_BUFFER, Event};
use crate::session::Session;
use crate::settings::{End, Settings};
use crate::spec::UpstreamSpec;
use crate::upstream::Launch;
use crate::wire;

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
pub fn run_on_stdio(
    settings: Settings,
    journal: Option<Journal>,
    upstream: &UpstreamSpec,
) -> Result<End, ProxyError> {
    let (sender, events) = sync_channel(EVENT_BUFFER);
    let upstream = upstream.start(
        settings.policy.call_timeout(),
        &settings.secrets,
        sender.clone(),
    )?;
    std::thread::spawn(move || {
        wire::read_lines(std::io::stdin(), &sender, Event::Client);
    });
    let stdout = std::io::stdout();
    let journal = journal.map(|j| Arc::new(Mutex::new(j)));
    let session = Session::new(settings, journal, events, upstream, stdout.lock());
    Ok(session.run()?)
}
