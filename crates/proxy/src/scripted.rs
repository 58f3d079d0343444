//! A session run in-process against a scripted server: the seam the crate's own tests (and
//! fuzzing) drive a [`Session`] through, without a child process or a socket.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_recovery_journal::JournalError;

use crate::event::{EVENT_BUFFER, Event};
use crate::session::Session;
use crate::settings::{End, Settings, SharedJournal};
use crate::upstream::{ScriptedUpstream, Upstream};
use crate::wire::{Line, parse_line, read_lines};

/// What a session against a scripted server did.
#[derive(Debug)]
pub struct ScriptRun {
    /// How the session ended.
    pub end: Result<End, JournalError>,
    /// Every byte the session wrote to the client.
    pub output: Vec<u8>,
    /// Every message the session sent the server, in order.
    pub received: Vec<String>,
}

/// Runs one session in-process: `client` read by the proxy's line reader as the client's stream
/// (it ends with the bytes), and a [`ScriptedUpstream`] server that answers each message it gets
/// with the lines `answer` returns, after sending the lines of `server` unprompted. Both peers'
/// lines pass through the same reader as on stdio.
pub fn run_scripted(
    settings: Settings,
    journal: Option<SharedJournal>,
    client: Vec<u8>,
    server: Vec<u8>,
    mut answer: impl FnMut(&str) -> Vec<String> + Send + 'static,
) -> ScriptRun {
    let (sender, events) = std::sync::mpsc::sync_channel(EVENT_BUFFER);
    let (upstream, sent) = ScriptedUpstream::new();
    let unprompted = sender.clone();
    let script = std::thread::spawn(move || {
        // The server's own bytes, without their end: the script's server stays up.
        let (lines, read) = std::sync::mpsc::sync_channel(EVENT_BUFFER);
        let reader = std::thread::spawn(move || read_lines(server.as_slice(), &lines, |l| l));
        for line in read {
            if !matches!(line, Line::Closed(_)) && unprompted.send(Event::Server(line)).is_err() {
                break;
            }
        }
        let _ = reader.join();
        let mut received = Vec::new();
        for message in sent {
            for reply in answer(&message) {
                let _ = unprompted.send(Event::Server(parse_line(reply.as_bytes())));
            }
            received.push(message);
        }
        received
    });
    let client_events = sender;
    let client_reader =
        std::thread::spawn(move || read_lines(client.as_slice(), &client_events, Event::Client));
    let output = SharedOutput::default();
    let session = Session::new(
        settings,
        journal,
        events,
        Upstream::Scripted(upstream),
        output.clone(),
    );
    let end = session.run();
    let _ = client_reader.join();
    let received = script.join().unwrap_or_default();
    let output = std::mem::take(&mut *output.0.lock().unwrap_or_else(PoisonError::into_inner));
    ScriptRun {
        end,
        output,
        received,
    }
}

/// The client's side of a scripted session: what the session writes, kept.
#[derive(Debug, Clone, Default)]
struct SharedOutput(Arc<Mutex<Vec<u8>>>);

impl Write for SharedOutput {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        out.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
