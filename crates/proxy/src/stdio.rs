//! A session with the client on this process's stdin and stdout.

use std::io::Write;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use mcp_recovery_base::text::json_inert;
use mcp_recovery_journal::Journal;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::error::ProxyError;
use crate::event::{Budget, CLIENT_BYTES, EVENT_BUFFER, Event, read_metered};
use crate::session::Session;
use crate::settings::{End, Settings};
use crate::spec::UpstreamSpec;
use crate::upstream::{Launch, StdioUpstream, Upstream};
use crate::wire::{Line, error_response, id_value_key, is_request, method};

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
///
/// A session stopped by its journal leaves no request unanswered: each one the client is still
/// owed gets an error saying the journal cannot be written before the proxy exits.
pub fn run_on_stdio(
    settings: Settings,
    journal: Option<Journal>,
    upstream: &UpstreamSpec,
) -> Result<End, ProxyError> {
    let (sender, events) = sync_channel(EVENT_BUFFER);
    let _running = crate::interrupt::register(&sender);
    let upstream = start_upstream(upstream, &settings, sender.clone())?;
    let budget = upstream
        .budget()
        .unwrap_or_else(|| Budget::new(CLIENT_BYTES));
    let owed = Arc::new(Owed::default());
    let asked = Arc::clone(&owed);
    std::thread::spawn(move || {
        read_metered(std::io::stdin(), &sender, &budget, |line, credit| {
            asked.asked(&line);
            Event::MeteredClient(line, credit)
        });
    });
    let downstream = Answers {
        client: std::io::stdout().lock(),
        owed: Arc::clone(&owed),
    };
    let journal = journal.map(|j| Arc::new(Mutex::new(j)));
    let session = Session::new(settings, journal, events, upstream, downstream);
    let end = session.run();
    if end.is_err() {
        owed.refuse_all(&mut std::io::stdout().lock());
    }
    Ok(end?)
}

/// A request the client sent and has not been answered.
struct Request {
    key: String,
    id: Value,
    method: String,
    /// The batch it came in, numbered in the order batches came.
    batch: Option<usize>,
}

/// The client's requests not answered yet, in the order they came, and how many batches came.
#[derive(Default)]
struct Owed(Mutex<(Vec<Request>, usize)>);

/// What the proxy's writing to the client shows of a message: whether it answers, and which id.
#[derive(Deserialize)]
struct Answer {
    id: Option<Value>,
    method: Option<IgnoredAny>,
}

impl Owed {
    /// Notes the requests of a line from the client; one it cancels is owed nothing.
    fn asked(&self, line: &Line) {
        let Line::Message(message, _) = line else {
            return;
        };
        let (requests, batches) = &mut *self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (elements, batch) = match message {
            Value::Array(elements) => {
                *batches += 1;
                (elements.as_slice(), Some(*batches))
            }
            single => (std::slice::from_ref(single), None),
        };
        for element in elements {
            if method(element) == Some("notifications/cancelled") {
                let cancelled = element.pointer("/params/requestId").and_then(id_value_key);
                requests.retain(|r| Some(&r.key) != cancelled.as_ref());
            }
            let key = element.get("id").and_then(id_value_key);
            if let (Some(key), Some(method), true) = (key, method(element), is_request(element)) {
                requests.push(Request {
                    key,
                    id: element["id"].clone(),
                    method: method.to_owned(),
                    batch,
                });
            }
        }
    }

    /// Takes the requests one line written to the client answers off the list (a line is one
    /// message, or a batch's array of answers).
    fn answered(&self, line: &[u8]) {
        let answers = if line.trim_ascii_start().starts_with(b"[") {
            serde_json::from_slice::<Vec<Answer>>(line).unwrap_or_default()
        } else {
            serde_json::from_slice::<Answer>(line).map_or_else(|_| Vec::new(), |a| vec![a])
        };
        let (requests, _) = &mut *self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for answer in answers.into_iter().filter(|a| a.method.is_none()) {
            let key = answer.id.as_ref().and_then(id_value_key);
            if let Some(at) = requests.iter().position(|r| Some(&r.key) == key.as_ref()) {
                requests.remove(at);
            }
        }
    }

    /// The journal stopped the session, which answered the requests it forwarded: answers every
    /// request still owed with an error saying it was not forwarded, a batch's answers in one
    /// array.
    fn refuse_all(&self, client: &mut impl Write) {
        let (requests, _) =
            std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        let mut lines: Vec<(Option<usize>, Vec<String>)> = Vec::new();
        // The session answered every request it forwarded: these it never forwarded.
        for request in requests {
            let message = format!(
                "mcp-recovery proxy cannot write its journal, so it stopped: this {} was not \
                 forwarded",
                request.method
            );
            let answer = error_response(&request.id, -32603, &message).to_string();
            match lines.last_mut() {
                Some((batch, answers)) if batch.is_some() && *batch == request.batch => {
                    answers.push(answer);
                }
                _ => lines.push((request.batch, vec![answer])),
            }
        }
        for (batch, answers) in lines {
            let text = match batch {
                Some(_) => format!("[{}]", answers.join(",")),
                None => answers.concat(),
            };
            let _ = writeln!(client, "{}", json_inert(&text));
        }
        let _ = client.flush();
    }
}

/// The client's side of a stdio session: every line the session writes, each in one write,
/// takes the requests it answers off what is owed.
struct Answers<W> {
    client: W,
    owed: Arc<Owed>,
}

impl<W: Write> Write for Answers<W> {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        self.client.write_all(line)?;
        self.owed.answered(line);
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.client.flush()
    }
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
            command: settings.upstream.clone(),
            source,
        }),
        UpstreamSpec::Http { .. } => {
            spec.start(settings.policy.call_timeout(), &settings.secrets, events)
        }
    }
}
