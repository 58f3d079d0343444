//! One proxied session: every message passes between the client and the server; `tools/call`
//! requests are classified, gated and journaled, and a failure may roll the session back.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_recovery_client::Secrets;
use mcp_recovery_journal::{Journal, JournalError, Kind};
use mcp_recovery_model::Tool;
use mcp_recovery_model::json::{to_value, with};
use mcp_recovery_plan::{Planner, Status, TracedCall, parse_session_calls};
use serde_json::{Map, Value, json};

use crate::approval::{Approver, Verdict, escape};
use crate::classify::{Class, Classification, classify};
use crate::overlays::Overlays;
use crate::policy::{Action, Decision, OnFailure, Policy, fold_name};
use crate::quorum::{Board, Pending as Offered};
use crate::rollback::{Effects, ROLLBACK_META_KEY, Reply, Report, rollback};
use crate::upstream::Upstream;
use crate::wire::{
    BATCH_REVISION, Line, REQUEST_METHODS, Shape, error_response, id_key, id_value_key,
    is_response, method, params, shape, success, tool_error,
};

/// Something that happened on either side.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A line from the client.
    Client(Line),
    /// A line from the server.
    Server(Line),
}

/// How the session is run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The policy in force.
    pub policy: Policy,
    /// Who decides `ask`.
    pub approver: Approver,
    /// The session id journaled with every record.
    pub session: String,
    /// What the upstream is (command line or URL, no secrets), journaled at the start.
    pub upstream: String,
    /// Declarations merged into the server's tools before they are classified and planned from.
    pub overlays: Overlays,
    /// Values never written to the journal (replaced by `***`).
    pub secrets: Secrets,
    /// How many of the session's effectful completed calls are kept in memory for a rollback
    /// (see [`DEFAULT_ROLLBACK_WINDOW`]).
    pub rollback_window: usize,
    /// Where calls the policy's `[[approvals]]` gate wait for their quorum.
    pub approvals: Option<Arc<Board>>,
}

/// The default [`Settings::rollback_window`]. Older calls are read back from the journal
/// when a rollback needs them; without a journal the rollback reports them as not compensated.
pub const DEFAULT_ROLLBACK_WINDOW: usize = 1000;

/// Effectful calls that left the in-memory window since the last rollback (call numbers).
#[derive(Debug, Clone, Copy, Default)]
struct Evicted {
    count: u64,
    first: u64,
    last: u64,
}

/// Where an answer to the client goes: a place in a batch's answer (batch number, index).
type Slot = (u64, usize);

/// The answers to a batch's requests, sent as one array once every request is answered.
#[derive(Debug, Default)]
struct Batch {
    /// One entry per request of the batch; `None` while unanswered (or cancelled).
    answers: Vec<Option<String>>,
    /// Requests still waiting for their answer.
    open: usize,
    /// Every element of the batch has been handled.
    sealed: bool,
}

/// A forwarded client request waiting for its answer.
#[derive(Debug)]
struct Pending {
    /// The id exactly as the client spelled it (answers get this spelling back).
    id: Value,
    method: String,
    deadline: Instant,
    call: Option<CallContext>,
    /// A `tools/list` without a cursor: its answer may become the classification list.
    first_page: bool,
    /// Set when the request came in a batch: where its answer goes.
    batch: Option<Slot>,
}

#[derive(Debug, Clone)]
struct CallContext {
    number: u64,
    name: String,
    arguments: Map<String, Value>,
    /// The before-image taken for it, when an overlay declares one for the tool.
    before: Option<Map<String, Value>>,
}

/// Why a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The client closed its side.
    ClientClosed,
    /// The server exited or closed its stdout.
    ServerClosed(String),
}

/// A journal several sessions append to (the records of each carry its session id).
pub type SharedJournal = Arc<Mutex<Journal>>;

/// One session between a client and a server.
pub struct Session<W: Write> {
    settings: Settings,
    journal: Option<SharedJournal>,
    events: Receiver<Event>,
    upstream: Upstream,
    downstream: W,
    pending: HashMap<String, Pending>,
    waiting: HashSet<String>,
    replies: HashMap<String, Reply>,
    deferred: VecDeque<Line>,
    tools: Option<Vec<Tool>>,
    classes: HashMap<String, Classification>,
    request_meta: Option<Map<String, Value>>,
    /// The upstream's `serverInfo.name`, once it has said it.
    server_name: Option<String>,
    /// What a rollback needs of the calls completed since the last one: effectful calls only,
    /// each with only the parts of its result the planner reads, at most `rollback_window`.
    completed: VecDeque<(Value, TracedCall)>,
    evicted: Evicted,
    calls: u64,
    own_ids: u64,
    client_closed: bool,
    server_closed: Option<String>,
    rolling_back: bool,
    /// The negotiated protocol revision: the server's `initialize` result, or a 2026-07-28
    /// client's per-request `_meta`.
    revision: Option<String>,
    batches: HashMap<u64, Batch>,
    next_batch: u64,
    /// While a batch's element is handled: where the proxy's own answer to it goes.
    current: Option<Slot>,
}

/// The prefix of the proxy's own request ids upstream.
const OWN_ID_PREFIX: &str = "mcp-recovery-proxy-";

fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The human side: stderr, one line per note, control characters escaped. A closed stderr
/// loses the note but never stops the proxy.
pub(crate) fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "mcp-recovery proxy: {}", escape(text));
}

impl<W: Write> Session<W> {
    /// A session over an upstream already started; `events` carries both sides' lines.
    pub fn new(
        settings: Settings,
        journal: Option<SharedJournal>,
        events: Receiver<Event>,
        upstream: Upstream,
        downstream: W,
    ) -> Session<W> {
        Session {
            settings,
            journal,
            events,
            upstream,
            downstream,
            pending: HashMap::new(),
            waiting: HashSet::new(),
            replies: HashMap::new(),
            deferred: VecDeque::new(),
            tools: None,
            classes: HashMap::new(),
            request_meta: None,
            server_name: None,
            completed: VecDeque::new(),
            evicted: Evicted::default(),
            calls: 0,
            own_ids: 0,
            client_closed: false,
            server_closed: None,
            rolling_back: false,
            revision: None,
            batches: HashMap::new(),
            next_batch: 0,
            current: None,
        }
    }

    /// Runs until the client closes (and its requests are answered) or the server exits.
    pub fn run(mut self) -> Result<End, JournalError> {
        self.record(
            Kind::SessionStart,
            fields(json!({
                "upstream": self.settings.upstream,
                "onFailure": self.settings.policy.on_failure().as_str(),
                "version": env!("CARGO_PKG_VERSION"),
            })),
        )?;
        let end = loop {
            if let Some(line) = self.deferred.pop_front() {
                self.on_client(line)?;
                continue;
            }
            if let Some(reason) = self.server_closed.clone() {
                self.fail_pending(&format!("the server exited ({reason})"))?;
                break End::ServerClosed(reason);
            }
            if self.client_closed && self.pending.is_empty() {
                break End::ClientClosed;
            }
            let wait = self.next_wait();
            match self.events.recv_timeout(wait) {
                Ok(Event::Client(line)) => self.on_client(line)?,
                Ok(Event::Server(line)) => self.on_server(line)?,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.server_closed
                        .get_or_insert_with(|| "disconnected".into());
                }
            }
            self.expire()?;
        };
        self.upstream.close(Duration::from_secs(2));
        let reason = match &end {
            End::ClientClosed => "client closed".to_owned(),
            End::ServerClosed(reason) => format!("server exited: {reason}"),
        };
        self.record(Kind::SessionEnd, fields(json!({"reason": reason})))?;
        Ok(end)
    }

    fn next_wait(&self) -> Duration {
        let now = Instant::now();
        self.pending
            .values()
            .map(|p| p.deadline.saturating_duration_since(now))
            .min()
            .unwrap_or(Duration::from_secs(1))
            .clamp(Duration::from_millis(1), Duration::from_secs(1))
    }

    fn record(&mut self, kind: Kind, fields: Map<String, Value>) -> Result<(), JournalError> {
        if let Some(journal) = &self.journal {
            let mut fields = Value::Object(fields);
            self.settings.secrets.redact_value(&mut fields);
            // Written under the lock, synced outside it: one sync covers the records every
            // session writes meanwhile, and this one returns only once its record is on disk.
            let pending = {
                let mut journal = journal.lock().unwrap_or_else(PoisonError::into_inner);
                journal.append_pending(&self.settings.session, kind, self::fields(fields))?
            };
            pending.1.wait()?;
        }
        Ok(())
    }

    fn send_client(&mut self, text: &str) {
        let mut line = Vec::with_capacity(text.len() + 1);
        line.extend_from_slice(text.as_bytes());
        line.push(b'\n');
        if self
            .downstream
            .write_all(&line)
            .and_then(|()| self.downstream.flush())
            .is_err()
        {
            self.client_closed = true;
        }
    }

    fn send_client_value(&mut self, message: &Value) {
        self.send_client(&message.to_string());
    }

    fn send_server(&mut self, text: &str) {
        if let Err(e) = self.upstream.send(text) {
            self.server_closed
                .get_or_insert_with(|| format!("cannot write to it: {e}"));
        }
    }

    /// An answer to the client: written at once, or kept for its batch's array.
    fn answer(&mut self, slot: Option<Slot>, text: String) {
        let Some((number, index)) = slot else {
            return self.send_client(&text);
        };
        let Some(batch) = self.batches.get_mut(&number) else {
            return self.send_client(&text);
        };
        if let Some(entry @ None) = batch.answers.get_mut(index) {
            *entry = Some(text);
            batch.open -= 1;
        }
        self.flush_batch(number);
    }

    /// A request of a batch that will get no answer (cancelled by the client).
    fn forget(&mut self, slot: Option<Slot>) {
        if let Some((number, _)) = slot
            && let Some(batch) = self.batches.get_mut(&number)
        {
            batch.open = batch.open.saturating_sub(1);
            self.flush_batch(number);
        }
    }

    /// Sends a batch's answers as one array once all are in (nothing when none are).
    fn flush_batch(&mut self, number: u64) {
        let done = self
            .batches
            .get(&number)
            .is_some_and(|b| b.sealed && b.open == 0);
        if !done {
            return;
        }
        let Some(batch) = self.batches.remove(&number) else {
            return;
        };
        let answers: Vec<String> = batch.answers.into_iter().flatten().collect();
        if !answers.is_empty() {
            self.send_client(&format!("[{}]", answers.join(",")));
        }
    }

    /// The proxy's own answer to the client message being handled.
    fn reply(&mut self, message: &Value) {
        self.answer(self.current, message.to_string());
    }

    fn on_client(&mut self, line: Line) -> Result<(), JournalError> {
        let (message, text) = match line {
            Line::Message(message, text) => (message, text),
            Line::Garbage(reason) => {
                note(&format!("client: {reason}"));
                self.send_client_value(&error_response(&Value::Null, -32700, "parse error"));
                return Ok(());
            }
            Line::Closed(_) => {
                self.client_closed = true;
                return Ok(());
            }
        };
        match message {
            Value::Array(items) => self.on_batch(items),
            message => self.on_message(message, &text),
        }
    }

    /// A JSON-RPC batch: in a 2025-03-26 session each element is handled as if it came alone
    /// and the answers go back as one array; in any other (or before a revision is known)
    /// nothing is forwarded and each request gets an error.
    fn on_batch(&mut self, items: Vec<Value>) -> Result<(), JournalError> {
        if items.is_empty() {
            note("client: an empty batch was refused");
            self.send_client_value(&error_response(
                &Value::Null,
                -32600,
                "an empty batch is not a request",
            ));
            return Ok(());
        }
        if self.revision.as_deref() != Some(BATCH_REVISION) {
            let revision = match &self.revision {
                Some(revision) => format!("this session speaks {revision}"),
                None => "this session has no protocol revision yet".to_owned(),
            };
            let why = format!(
                "JSON-RPC batches exist only in MCP {BATCH_REVISION} and {revision}: nothing in the batch was forwarded"
            );
            note(&format!(
                "client: a batch of {} was refused: {why}",
                items.len()
            ));
            let errors: Vec<Value> = items
                .iter()
                .filter(|item| !matches!(shape(item), Shape::Notification | Shape::Response))
                .map(|item| {
                    let id = item.get("id").cloned().unwrap_or(Value::Null);
                    error_response(&id, -32600, &why)
                })
                .collect();
            if !errors.is_empty() {
                self.send_client_value(&Value::Array(errors));
            }
            return Ok(());
        }
        let number = self.next_batch;
        self.next_batch += 1;
        self.batches.insert(number, Batch::default());
        for item in items {
            let answered = !matches!(shape(&item), Shape::Notification | Shape::Response);
            self.current = match self.batches.get_mut(&number) {
                Some(batch) if answered => {
                    batch.answers.push(None);
                    batch.open += 1;
                    Some((number, batch.answers.len() - 1))
                }
                _ => None,
            };
            let text = item.to_string();
            let outcome = self.on_message(item, &text);
            self.current = None;
            outcome?;
        }
        if let Some(batch) = self.batches.get_mut(&number) {
            batch.sealed = true;
        }
        self.flush_batch(number);
        Ok(())
    }

    /// One message from the client (alone or an element of a batch).
    fn on_message(&mut self, message: Value, text: &str) -> Result<(), JournalError> {
        let key = match shape(&message) {
            Shape::Invalid(why) => {
                note(&format!("client: an invalid message was refused: {why}"));
                let answer = format!("invalid request: {why}; it was not forwarded");
                self.reply(&error_response(&Value::Null, -32600, &answer));
                return Ok(());
            }
            Shape::Response => {
                self.send_server(text);
                return Ok(());
            }
            Shape::Notification => return self.on_notification(&message, text),
            Shape::Request(key) => key,
        };
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let method = method(&message).unwrap_or_default().to_owned();
        if self.pending.contains_key(&key) || self.waiting.contains(&key) {
            note(&format!(
                "client: a {method} whose id {id} is already pending was refused"
            ));
            let answer = format!(
                "an id already pending: a request with the id {id} is unanswered; this {method} was not forwarded"
            );
            self.reply(&error_response(&id, -32600, &answer));
            return Ok(());
        }
        // A 2026-07-28 client's requests carry the version, and the proxy's own copy the
        // latest one; a client that falls back to `initialize` stops carrying it.
        let meta = message
            .pointer("/params/_meta")
            .and_then(Value::as_object)
            .filter(|meta| meta.contains_key("io.modelcontextprotocol/protocolVersion"));
        if let Some(Value::String(version)) =
            meta.and_then(|meta| meta.get("io.modelcontextprotocol/protocolVersion"))
        {
            self.revision = Some(version.clone());
        }
        self.request_meta = meta.map(|meta| {
            let mut template = meta.clone();
            template.remove("progressToken");
            template
        });
        if method == "tools/call" {
            return self.on_call(&message, text, key);
        }
        let first_page =
            method == "tools/list" && message.pointer("/params/cursor").is_none_or(Value::is_null);
        self.pending.insert(
            key,
            Pending {
                id,
                method,
                deadline: Instant::now() + self.settings.policy.call_timeout(),
                call: None,
                first_page,
                batch: self.current,
            },
        );
        self.send_server(text);
        Ok(())
    }

    /// A notification from the client. One whose method is a request method is a request in
    /// disguise that no gate or journal would see: dropped.
    fn on_notification(&mut self, message: &Value, text: &str) -> Result<(), JournalError> {
        let method = method(message).unwrap_or_default();
        if REQUEST_METHODS.contains(&method) {
            note(&format!(
                "client: a {method} without an id was dropped: a request method sent as a notification is never forwarded"
            ));
            return Ok(());
        }
        if method == "notifications/cancelled"
            && let Some(spelled) = self.on_cancelled(message)?
        {
            // The server hears the id as the request spelled it.
            let mut cancel = message.clone();
            cancel["params"]["requestId"] = spelled;
            self.send_server(&cancel.to_string());
        } else {
            self.send_server(text);
        }
        if method == "notifications/initialized" && self.tools.is_none() {
            self.fetch_tools();
        }
        Ok(())
    }

    /// Ends the cancelled request (matched by value); returns its id as the request spelled it
    /// when the cancellation spelled it otherwise.
    fn on_cancelled(&mut self, message: &Value) -> Result<Option<Value>, JournalError> {
        let Some(request) = message.pointer("/params/requestId") else {
            return Ok(None);
        };
        let Some(pending) = id_value_key(request).and_then(|key| self.pending.remove(&key)) else {
            return Ok(None);
        };
        if let Some(call) = &pending.call {
            // The server need not answer a cancelled request: its outcome is unknown.
            self.finish_call(call, &pending.id, None, Some("cancelled by the client"))?;
        }
        self.forget(pending.batch);
        Ok((*request != pending.id).then_some(pending.id))
    }

    fn on_server(&mut self, line: Line) -> Result<(), JournalError> {
        let (mut message, text) = match line {
            Line::Message(message, text) => (message, text),
            Line::Garbage(reason) => {
                note(&format!("server: {reason}"));
                return Ok(());
            }
            Line::Closed(reason) => {
                self.server_closed = Some(reason.unwrap_or_else(|| "its stdout closed".into()));
                return Ok(());
            }
        };
        if is_response(&message) {
            self.observe_server_name(&message);
            let key = id_key(&message).unwrap_or_default();
            if self.waiting.contains(&key) {
                let reply = match (message.get("result"), message.get("error")) {
                    (Some(result), _) => Reply::Result(result.clone()),
                    (None, Some(error)) => Reply::Error(error.clone()),
                    (None, None) => Reply::Lost("an answer with neither result nor error".into()),
                };
                self.replies.insert(key, reply);
                return Ok(());
            }
            if key.contains(OWN_ID_PREFIX) {
                // A late answer to a request of ours that already timed out.
                return Ok(());
            }
            let mut slot = None;
            let mut text = text;
            if let Some(pending) = self.pending.remove(&key) {
                if pending.method == "initialize"
                    && let Some(Value::String(version)) = message.pointer("/result/protocolVersion")
                {
                    self.revision = Some(version.clone());
                }
                if let Some(call) = &pending.call {
                    let result = message.get("result").and_then(Value::as_object).cloned();
                    let failed = match &result {
                        Some(result) => result.get("isError") == Some(&Value::Bool(true)),
                        None => true,
                    };
                    let error = message.get("error").cloned();
                    self.finish_call_with(call, &pending.id, result, None, error)?;
                    if failed && let Some(report) = self.on_failure(&call.name)? {
                        tell(&mut message, &report.for_client(&call.name));
                        text = message.to_string();
                    }
                } else if pending.first_page && pending.method == "tools/list" {
                    self.observe_tools(&message);
                }
                // The client hears its id as it spelled it (`1e0`, not the server's `1.0`).
                if message.get("id") != Some(&pending.id) {
                    let mut respelled = message;
                    respelled["id"] = pending.id.clone();
                    text = respelled.to_string();
                }
                slot = pending.batch;
            }
            self.answer(slot, text);
            return Ok(());
        }
        if method(&message) == Some("notifications/tools/list_changed") {
            self.tools = None;
        }
        self.send_client(&text);
        Ok(())
    }

    /// The name the server gives itself: in its `initialize` result, or (2026-07-28) in any
    /// result's `_meta`.
    fn observe_server_name(&mut self, message: &Value) {
        let name = message
            .get("result")
            .and_then(mcp_recovery_model::server_name);
        if let Some(name) = name
            && self.server_name.as_deref() != Some(name)
        {
            self.server_name = Some(name.to_owned());
        }
    }

    fn observe_tools(&mut self, message: &Value) {
        let complete = message
            .pointer("/result/nextCursor")
            .is_none_or(Value::is_null);
        if let (true, Some(Value::Array(tools))) = (complete, message.pointer("/result/tools")) {
            self.set_tools(tools);
        }
    }

    fn set_tools(&mut self, tools: &[Value]) {
        let merged;
        let tools = if self.settings.overlays.is_empty() {
            tools
        } else {
            merged = self
                .settings
                .overlays
                .merge(tools, self.server_name.as_deref());
            &merged
        };
        let parsed: Vec<Tool> = tools
            .iter()
            .filter_map(|t| Tool::from_json(t).ok())
            .collect();
        let changed = self.tools.as_ref().is_none_or(|old| {
            old.len() != parsed.len() || old.iter().zip(&parsed).any(|(a, b)| a.name != b.name)
        });
        self.classes = parsed
            .iter()
            .map(|t| (t.name.clone(), classify(Some(t))))
            .collect();
        if changed {
            let mut names: Vec<&String> = self.classes.keys().collect();
            names.sort();
            let mut table = String::from("mcp-recovery proxy: tool classes\n");
            for name in names {
                let c = self.classes[name];
                let decision = self.settings.policy.decide(name, c.class);
                table.push_str(&format!(
                    "  {:<32} {:<13} from {:<9} {}\n",
                    escape(name),
                    c.class.as_str(),
                    c.source.as_str(),
                    decision.action.as_str()
                ));
            }
            let _ = std::io::stderr().write_all(table.as_bytes());
        }
        self.tools = Some(parsed);
    }

    /// Fetches the whole tool list with requests of our own (answers never reach the client).
    fn fetch_tools(&mut self) {
        let mut all = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut seen = HashSet::new();
        for _ in 0..1000 {
            let mut request = Map::new();
            if let Some(cursor) = &cursor {
                request.insert("cursor".into(), cursor.clone());
            }
            if let Some(meta) = &self.request_meta {
                request.insert("_meta".into(), Value::Object(meta.clone()));
            }
            let timeout = self.settings.policy.call_timeout();
            match self.request_upstream("tools/list", Value::Object(request), timeout) {
                Reply::Result(result) => {
                    if let Some(Value::Array(tools)) = result.get("tools") {
                        all.extend(tools.iter().cloned());
                    }
                    match result.get("nextCursor") {
                        Some(next) if !next.is_null() && seen.insert(next.to_string()) => {
                            cursor = Some(next.clone());
                        }
                        _ => break,
                    }
                }
                Reply::Error(error) => {
                    note(&format!(
                        "tools/list failed ({error}): no tool is listed, so every call counts as unlisted"
                    ));
                    break;
                }
                Reply::Lost(reason) => {
                    note(&format!(
                        "tools/list failed ({reason}): no tool is listed, so every call counts as unlisted"
                    ));
                    break;
                }
            }
        }
        self.set_tools(&all);
    }

    /// Sends a request of our own and waits for its answer, forwarding everything else.
    fn request_upstream(&mut self, method: &str, params: Value, timeout: Duration) -> Reply {
        self.own_ids += 1;
        let id = format!("{OWN_ID_PREFIX}{}", self.own_ids);
        let key = id_value_key(&Value::from(id.as_str())).unwrap_or_default();
        let request = with(
            json!({"jsonrpc": "2.0", "id": id, "method": method}),
            [("params", params)],
        );
        self.waiting.insert(key.clone());
        self.send_server(&request.to_string());
        let deadline = Instant::now() + timeout;
        let reply = loop {
            if let Some(reply) = self.replies.remove(&key) {
                break reply;
            }
            if let Some(reason) = &self.server_closed {
                break Reply::Lost(format!("the server exited ({reason})"));
            }
            let now = Instant::now();
            if now >= deadline {
                let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": id, "reason": "timed out"}});
                self.send_server(&cancel.to_string());
                break Reply::Lost(format!("no answer within {} ms", timeout.as_millis()));
            }
            let wait = (deadline - now).min(self.next_wait());
            let outcome = match self.events.recv_timeout(wait) {
                Ok(Event::Server(line)) => self.on_server(line),
                // Answers to the server's own requests (a ping, roots/list) go on at once: the
                // server may be waiting for them before it answers us.
                Ok(Event::Client(Line::Message(message, text))) if is_response(&message) => {
                    self.send_server(&text);
                    Ok(())
                }
                Ok(Event::Client(line)) => {
                    self.deferred.push_back(line);
                    Ok(())
                }
                Err(RecvTimeoutError::Timeout) => Ok(()),
                Err(RecvTimeoutError::Disconnected) => {
                    self.server_closed
                        .get_or_insert_with(|| "disconnected".into());
                    Ok(())
                }
            };
            if let Err(e) = outcome.and_then(|()| self.expire()) {
                break Reply::Lost(format!("the journal failed: {e}"));
            }
        };
        self.waiting.remove(&key);
        reply
    }

    fn on_call(&mut self, message: &Value, text: &str, key: String) -> Result<(), JournalError> {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let params = params(message);
        let Some(Value::String(name)) = params.get("name") else {
            self.reply(&error_response(
                &id,
                -32602,
                "tools/call needs a string \"name\"",
            ));
            return Ok(());
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments.clone(),
            Some(_) => {
                self.reply(&error_response(
                    &id,
                    -32602,
                    "tools/call \"arguments\" must be an object",
                ));
                return Ok(());
            }
        };
        let name = name.clone();
        if self.tools.is_none() {
            self.fetch_tools();
        }
        let classification = self.classes.get(&name).copied().unwrap_or(Classification {
            class: Class::Unknown,
            source: crate::classify::Source::None,
        });
        let unlisted = self.unlisted(&name);
        let mut decision = self.settings.policy.decide(&name, classification.class);
        if unlisted.is_some() {
            let action = self.settings.policy.unlisted_tools();
            if action.is_stricter_than(decision.action) {
                decision = Decision {
                    action,
                    rule: "unlisted-tools".into(),
                };
            }
        }
        let base = with(
            json!({"name": name, "class": classification.class.as_str(),
                "classSource": classification.source.as_str(), "rule": decision.rule}),
            [
                ("request", id.clone()),
                ("arguments", Value::Object(arguments.clone())),
            ],
        );
        let mut quorum = None;
        let verdict = match decision.action {
            Action::Deny => Some(Verdict {
                approved: false,
                by: "policy",
                reason: match &unlisted {
                    Some(why) => format!("denied by {}: {why}", decision.rule),
                    None => format!("denied by {}", decision.rule),
                },
            }),
            _ if self.quorum_rule(&name, classification.class).is_some() => {
                let impact = self.impact(&name, &arguments, classification, &decision.rule);
                let (verdict, record) = self.ask_quorum(&impact, &arguments, classification.class);
                quorum = record;
                Some(verdict)
            }
            Action::Allow => None,
            Action::Ask => {
                let impact = self.impact(&name, &arguments, classification, &decision.rule);
                let timeout = self.settings.policy.approval_timeout();
                Some(self.settings.approver.ask(&impact, timeout))
            }
        };
        if let Some(verdict) = &verdict {
            let mut record = fields(base.clone());
            record.extend(quorum.unwrap_or_default());
            record.insert(
                "decision".into(),
                Value::from(if verdict.approved { "allow" } else { "deny" }),
            );
            record.insert("by".into(), Value::from(verdict.by));
            record.insert("reason".into(), Value::from(verdict.reason.as_str()));
            self.record(Kind::Approval, record)?;
            if !verdict.approved {
                note(&format!("refused {name}: {}", verdict.reason));
                let text = format!(
                    "mcp-recovery proxy refused this call to '{name}' ({}); the server was not called",
                    verdict.reason
                );
                self.reply(&success(&id, tool_error(&text)));
                return Ok(());
            }
        }
        self.calls += 1;
        let before = self.before_image(&name, &arguments);
        let call = CallContext {
            number: self.calls,
            name,
            arguments,
            before,
        };
        let mut record = fields(base);
        record.insert("call".into(), Value::from(call.number));
        if let Some(before) = &call.before {
            record.insert("before".into(), Value::Object(before.clone()));
        }
        // The intent is on disk before the server sees the call.
        if let Err(e) = self.record(Kind::CallIntent, record) {
            note(&format!(
                "cannot journal the call, so it is not forwarded: {e}"
            ));
            self.reply(&error_response(
                &id,
                -32603,
                "mcp-recovery proxy cannot write its journal; the call was not forwarded",
            ));
            return Err(e);
        }
        self.pending.insert(
            key,
            Pending {
                id,
                method: "tools/call".into(),
                deadline: Instant::now() + self.settings.policy.call_timeout(),
                call: Some(call),
                first_page: false,
                batch: self.current,
            },
        );
        self.send_server(text);
        Ok(())
    }

    /// The `[[approvals]]` rule a call to `name` of `class` waits on, when there is a board.
    fn quorum_rule(&self, name: &str, class: Class) -> Option<&crate::policy::ApprovalRule> {
        self.settings.approvals.as_ref()?;
        self.settings.policy.quorum(name, class)
    }

    /// Offers the call `impact` describes (its `tool`, `class`, `session`, `compensation`, or
    /// for a compensating call what it `undoes`) to its quorum and waits for it. Returns the
    /// verdict and the members the approval record gets (`None` when no rule applies).
    fn ask_quorum(
        &self,
        impact: &Value,
        arguments: &Map<String, Value>,
        class: Class,
    ) -> (Verdict, Option<Map<String, Value>>) {
        let tool = impact["tool"].as_str().unwrap_or_default();
        let (Some(board), Some(rule)) = (&self.settings.approvals, self.quorum_rule(tool, class))
        else {
            return (
                Verdict {
                    approved: true,
                    by: "policy",
                    reason: "no quorum applies".into(),
                },
                None,
            );
        };
        let mut shown = Value::Object(arguments.clone());
        self.settings.secrets.redact_value(&mut shown);
        let mut compensation = match impact.get("undoes") {
            Some(undoes) => with(json!({"undoes": undoes}), []),
            None => impact.get("compensation").cloned().unwrap_or(Value::Null),
        };
        self.settings.secrets.redact_value(&mut compensation);
        let offered = Offered {
            session: &self.settings.session,
            tool,
            arguments,
            shown_arguments: shown,
            class: class.as_str(),
            compensation,
        };
        let file = &self.settings.policy.file;
        let outcome = board.decide(
            rule,
            file.fetch_for(rule),
            &offered,
            self.settings.policy.approval_timeout(),
            |request| {
                if let Some(notify) = file.notify_for(rule) {
                    crate::quorum::notify(notify, request);
                }
                note(&format!(
                    "'{}' waits for {} approval(s) as request {}",
                    escape(tool),
                    rule.quorum,
                    request["request"].as_str().unwrap_or_default()
                ));
            },
        );
        let verdict = Verdict {
            approved: outcome.approved,
            by: "quorum",
            reason: outcome.reason,
        };
        (verdict, Some(outcome.record))
    }

    /// Why `name` counts as unlisted (`None` when the server listed it): not in the server's
    /// tools/list, naming the listed tool it looks like after case folding and the mapping of
    /// look-alike characters, if one does.
    fn unlisted(&self, name: &str) -> Option<String> {
        let tools = self.tools.as_deref().unwrap_or_default();
        if tools.iter().any(|t| t.name == name) {
            return None;
        }
        let folded = fold_name(name);
        let shown = escape(name);
        Some(match tools.iter().find(|t| fold_name(&t.name) == folded) {
            Some(like) => format!(
                "'{shown}' is not in the server's tools/list; it looks like the listed '{}'",
                escape(&like.name)
            ),
            None => format!("'{shown}' is not in the server's tools/list"),
        })
    }

    /// What an `ask` shows: the call, its class, and the compensation that would undo it,
    /// resolved from the arguments as far as possible before the call runs.
    fn impact(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        classification: Classification,
        rule: &str,
    ) -> Value {
        let tools = self.tools.as_deref().unwrap_or_default();
        let tool = tools.iter().find(|t| t.name == name);
        let declared = tool.and_then(|t| t.declared_recovery().into_iter().next());
        let compensation = declared.and_then(|d| d.compensation).map(|c| {
            // Resolving against an empty result shows what the arguments alone determine.
            let probe = TracedCall::new(
                name,
                arguments.clone(),
                Some(fields(json!({"content": [], "structuredContent": {}}))),
            );
            let step = Planner::new(tools).resolve_step(&probe);
            let bindings: Map<String, Value> = c
                .bindings
                .iter()
                .map(|b| (b.parameter.clone(), b.raw.clone()))
                .collect();
            match step.call {
                Some(planned) if step.status == Status::Compensate => with(
                    json!({"tool": planned.name}),
                    [
                        ("arguments", Value::Object(planned.arguments)),
                        ("resolved", Value::Bool(true)),
                    ],
                ),
                _ => with(
                    json!({"tool": c.tool}),
                    [
                        ("parameters", Value::Object(bindings)),
                        ("resolved", Value::Bool(false)),
                        (
                            "note",
                            "some parameters come from the result, known after the call".into(),
                        ),
                    ],
                ),
            }
        });
        let mut impact = json!({
            "type": "call",
            "session": self.settings.session,
            "tool": name,
            "arguments": {},
            "class": classification.class.as_str(),
            "classSource": classification.source.as_str(),
            "rule": rule,
        });
        // Set in its place after the fact: `json!` would respell the numbers of the arguments.
        impact["arguments"] = Value::Object(arguments.clone());
        impact["compensation"] = compensation.unwrap_or(Value::Null);
        impact
    }

    fn finish_call(
        &mut self,
        call: &CallContext,
        request: &Value,
        result: Option<Map<String, Value>>,
        reason: Option<&str>,
    ) -> Result<(), JournalError> {
        self.finish_call_with(call, request, result, reason, None)
    }

    fn finish_call_with(
        &mut self,
        call: &CallContext,
        request: &Value,
        result: Option<Map<String, Value>>,
        reason: Option<&str>,
        error: Option<Value>,
    ) -> Result<(), JournalError> {
        let mut record = fields(with(
            json!({"call": call.number, "name": call.name}),
            [
                ("request", request.clone()),
                ("arguments", Value::Object(call.arguments.clone())),
                ("result", result.clone().map_or(Value::Null, Value::Object)),
            ],
        ));
        if let Some(reason) = reason {
            record.insert("reason".into(), Value::from(reason));
        }
        if let Some(error) = error {
            record.insert("error".into(), error);
        }
        // The outcome is on disk before the client sees the answer.
        self.record(Kind::CallOutcome, record)?;
        self.retain(call, result);
        Ok(())
    }

    /// Keeps what a rollback will need of a completed call: nothing for a read-only tool or a
    /// failed call (neither is ever compensated), else the name, the arguments and the parts of
    /// the result the planner reads. The oldest retained call leaves past the window.
    fn retain(&mut self, call: &CallContext, result: Option<Map<String, Value>>) {
        let read_only = self
            .classes
            .get(&call.name)
            .is_some_and(|c| c.class == Class::ReadOnly);
        let traced = TracedCall::new(call.name.clone(), call.arguments.clone(), result)
            .with_before(call.before.clone());
        if read_only || traced.is_error() {
            return;
        }
        // A result an overlay reads from text keeps its text content.
        let reads_text = self.tools.iter().flatten().any(|tool| {
            tool.name == call.name
                && tool
                    .overlay_meta()
                    .is_some_and(|m| m.contains_key(mcp_recovery_model::RESULT_SECTION))
        });
        self.completed
            .push_back((Value::from(call.number), compact(traced, reads_text)));
        while self.completed.len() > self.settings.rollback_window {
            let Some((Value::Number(number), _)) = self.completed.pop_front() else {
                continue;
            };
            let number = number.as_u64().unwrap_or_default();
            if self.evicted.count == 0 {
                self.evicted.first = number;
            }
            self.evicted.count += 1;
            self.evicted.last = number;
        }
    }

    /// The calls a rollback covers: those past the window read back from the journal, then the
    /// retained ones. When the older ones cannot be read back, says which were left out.
    fn rollback_calls(&self) -> (Vec<(Value, TracedCall)>, Option<String>) {
        let evicted = self.evicted;
        let retained = self.completed.clone();
        if evicted.count == 0 {
            return (retained.into(), None);
        }
        let missing = |why: &str| {
            let which = if evicted.count == 1 {
                format!("1 earlier effectful call (call {}) is", evicted.first)
            } else {
                format!(
                    "{} earlier effectful calls (calls {} to {}) are",
                    evicted.count, evicted.first, evicted.last
                )
            };
            format!(
                "{which} beyond the rollback window of {} and {why}: not compensated",
                self.settings.rollback_window
            )
        };
        let Some(journal) = &self.journal else {
            return (
                retained.into(),
                Some(missing("the proxy runs without a journal")),
            );
        };
        let path = journal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .path()
            .to_path_buf();
        let session = self.settings.session.as_str();
        let older = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                // Big results are beside the journal; the plan binds from them.
                mcp_recovery_journal::inline_out_of_line(
                    &text,
                    &path,
                    Some(session),
                    mcp_recovery_journal::READ_BACK_MAX_BYTES,
                )
                .map_err(|e| e.to_string())
            })
            .and_then(|text| parse_session_calls(&text, session).map_err(|e| e.to_string()));
        let older = match older {
            Ok(calls) => calls,
            Err(e) => {
                let why = format!("the journal cannot be read back ({e})");
                return (retained.into(), Some(missing(&why)));
            }
        };
        let mut calls: Vec<(Value, TracedCall)> = older
            .into_iter()
            .filter_map(|(key, call)| {
                let number = key.as_u64()?;
                (evicted.first..=evicted.last)
                    .contains(&number)
                    .then(|| (Value::from(number), call))
            })
            .collect();
        calls.extend(retained);
        (calls, None)
    }

    /// Answers every request whose deadline passed; a timed-out call's outcome is unknown.
    fn expire(&mut self) -> Result<(), JournalError> {
        let now = Instant::now();
        let expired: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in expired {
            let Some(pending) = self.pending.remove(&key) else {
                continue;
            };
            let secs = self.settings.policy.call_timeout().as_secs();
            let message = format!(
                "mcp-recovery proxy: the server did not answer {} within {secs} s",
                pending.method
            );
            let mut cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"reason": "timed out"}});
            cancel["params"]["requestId"] = pending.id.clone();
            self.send_server(&cancel.to_string());
            let mut answer = error_response(&pending.id, -32001, &message);
            if let Some(call) = &pending.call {
                self.finish_call(call, &pending.id, None, Some("timed out"))?;
                // The rollback runs first, so the answer can say what it did.
                if let Some(report) = self.on_failure(&call.name)? {
                    tell(&mut answer, &report.for_client(&call.name));
                }
            }
            self.answer(pending.batch, answer.to_string());
        }
        Ok(())
    }

    /// The server is gone: every waiting request gets an error, calls an unknown outcome.
    fn fail_pending(&mut self, why: &str) -> Result<(), JournalError> {
        let pending: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        for p in pending {
            if let Some(call) = &p.call {
                self.finish_call(call, &p.id, None, Some(why))?;
            }
            let message = format!("mcp-recovery proxy: {why} before answering {}", p.method);
            self.answer(p.batch, error_response(&p.id, -32000, &message).to_string());
        }
        Ok(())
    }

    /// Takes the before-image an overlay declares for `name`: runs the declared read with
    /// arguments bound from the call's, before the call is journaled and forwarded. The read is
    /// sent only to a tool the server listed, that is read-only, and that the policy lets run
    /// without asking anyone (it is not journaled as a call of its own, so nothing else may
    /// pass that way); what it returned, or why nothing, is kept.
    fn before_image(
        &mut self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Option<Map<String, Value>> {
        let tools = self.tools.as_deref()?;
        let image = tools.iter().find(|t| t.name == name)?.before_image()?;
        let listed = tools.iter().any(|t| t.name == image.read);
        let mut record = Map::new();
        record.insert("name".into(), Value::from(image.read.as_str()));
        let read_arguments = match mcp_recovery_plan::read_arguments(&image, arguments) {
            Ok(read_arguments) => read_arguments,
            Err(failures) => {
                record.insert("result".into(), Value::Null);
                record.insert("reason".into(), Value::from(failures.join("; ")));
                return Some(record);
            }
        };
        record.insert("arguments".into(), Value::Object(read_arguments.clone()));
        if !listed {
            record.insert("result".into(), Value::Null);
            record.insert(
                "reason".into(),
                Value::from(format!(
                    "the server does not list '{}', so it was not called",
                    image.read
                )),
            );
            return Some(record);
        }
        if let Some(why) = self.unasked_read_refused(&image.read) {
            record.insert("result".into(), Value::Null);
            record.insert("reason".into(), Value::from(why));
            return Some(record);
        }
        let timeout = self.settings.policy.call_timeout();
        match self.call_tool(&image.read, &read_arguments, timeout) {
            Reply::Result(result) => {
                record.insert("result".into(), result);
            }
            Reply::Error(error) => {
                record.insert("result".into(), Value::Null);
                record.insert("error".into(), error);
            }
            Reply::Lost(reason) => {
                record.insert("result".into(), Value::Null);
                record.insert("reason".into(), Value::from(reason));
            }
        }
        Some(record)
    }

    /// Why the proxy does not run `read` for a before-image: a tool that is not read-only, or
    /// one the policy would ask about, deny, or offer to a quorum.
    fn unasked_read_refused(&self, read: &str) -> Option<String> {
        let class = self.classes.get(read).map_or(Class::Unknown, |c| c.class);
        if class != Class::ReadOnly {
            return Some(format!(
                "'{read}' is {}, not read-only, so the proxy does not run it for a before-image",
                class.as_str()
            ));
        }
        let decision = self.settings.policy.decide(read, class);
        if decision.action != Action::Allow || self.quorum_rule(read, class).is_some() {
            return Some(format!(
                "the policy does not let '{read}' run unasked ({}), so the proxy does not run it for a before-image",
                decision.rule
            ));
        }
        None
    }

    /// A call failed: the policy's `on-failure` decides what happens to the session's completed
    /// calls. Runs before the failed call's answer is forwarded, so the client sees the state
    /// after the rollback.
    fn on_failure(&mut self, name: &str) -> Result<Option<Report>, JournalError> {
        if self.rolling_back || self.server_closed.is_some() {
            return Ok(None);
        }
        let run = match self.settings.policy.on_failure() {
            OnFailure::Record => false,
            OnFailure::Rollback => true,
            OnFailure::Ask => {
                let tools = self.tools.clone().unwrap_or_default();
                let (calls, beyond) = self.rollback_calls();
                let calls: Vec<TracedCall> = calls.into_iter().map(|(_, c)| c).collect();
                let plan = Planner::new(&tools).build_plan(&calls);
                let impact = with(
                    json!({"type": "rollback", "session": self.settings.session,
                        "failed": name, "beyondWindow": beyond}),
                    [("plan", to_value(&plan).unwrap_or(Value::Null))],
                );
                let timeout = self.settings.policy.approval_timeout();
                let verdict = self.settings.approver.ask(&impact, timeout);
                self.record(
                    Kind::Approval,
                    fields(json!({"rollback": true, "failed": name,
                        "decision": if verdict.approved { "allow" } else { "deny" },
                        "by": verdict.by, "reason": verdict.reason})),
                )?;
                verdict.approved
            }
        };
        if !run {
            return Ok(None);
        }
        let (calls, beyond) = self.rollback_calls();
        self.completed.clear();
        self.evicted = Evicted::default();
        let tools = self.tools.clone().unwrap_or_default();
        let policy = self.settings.policy.clone();
        let timeout = policy.call_timeout();
        self.rolling_back = true;
        let result = rollback(
            self,
            &tools,
            &policy,
            &calls,
            &HashMap::new(),
            json!({"failed": name}),
            timeout,
            beyond.as_deref(),
        );
        self.rolling_back = false;
        let report = result?;
        note(&format!(
            "rolled back after '{name}' failed: {} compensated, {} failed, {} skipped",
            report.compensated, report.failed, report.skipped
        ));
        for line in &report.attention {
            note(&format!("needs attention: {line}"));
        }
        Ok(Some(report))
    }
}

/// Adds what a rollback did to the failed answer the client receives: to a result, a text item
/// and `_meta[ROLLBACK_META_KEY]`; to a JSON-RPC error, `error.data[ROLLBACK_META_KEY]` with the
/// same text in its `text` member. A member the server sent in another shape (a `content` or
/// `_meta` that is not what MCP says, a `data` that is not an object) is left as it is.
fn tell(answer: &mut Value, (meta, text): &(Value, String)) {
    if let Some(Value::Object(result)) = answer.get_mut("result") {
        if let Value::Array(content) = result
            .entry("content")
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            content.push(json!({"type": "text", "text": text}));
        }
        if let Value::Object(own) = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()))
        {
            own.insert(ROLLBACK_META_KEY.to_owned(), meta.clone());
        }
    } else if let Some(Value::Object(error)) = answer.get_mut("error") {
        let data = error
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(data) = data {
            let mut told = meta.clone();
            told["text"] = Value::String(text.clone());
            data.insert(ROLLBACK_META_KEY.to_owned(), told);
        }
    }
}

impl<W: Write> Effects for Session<W> {
    fn call_tool(
        &mut self,
        name: &str,
        arguments: &Map<String, Value>,
        timeout: Duration,
    ) -> Reply {
        let mut params = with(
            json!({"name": name}),
            [("arguments", Value::Object(arguments.clone()))],
        );
        if let Some(meta) = &self.request_meta {
            params["_meta"] = Value::Object(meta.clone());
        }
        self.request_upstream("tools/call", params, timeout)
    }

    fn approve(&mut self, impact: &Value) -> Verdict {
        let timeout = self.settings.policy.approval_timeout();
        self.settings.approver.ask(impact, timeout)
    }

    fn journal(&mut self, kind: Kind, fields: Map<String, Value>) -> Result<(), JournalError> {
        self.record(kind, fields)
    }

    fn approve_quorum(
        &mut self,
        impact: &Value,
        arguments: &Map<String, Value>,
        class: Class,
    ) -> Option<(Verdict, Map<String, Value>)> {
        let (verdict, record) = self.ask_quorum(impact, arguments, class);
        Some((verdict, record?))
    }

    fn unsent(&mut self) -> Option<String> {
        let reason = self.server_closed.as_ref()?;
        Some(format!("the server exited ({reason})"))
    }
}

/// A call with only what the planner reads of its result: `isError` and `structuredContent`,
/// and `content` only when an overlay declares the tool's result is read from its text (text
/// content is otherwise never parsed, so it is dropped).
fn compact(call: TracedCall, reads_text: bool) -> TracedCall {
    let keys: &[&str] = if reads_text {
        &["isError", "structuredContent", "content"]
    } else {
        &["isError", "structuredContent"]
    };
    let result = call.result.map(|mut full| {
        let mut kept = Map::new();
        for &key in keys {
            if let Some(value) = full.remove(key) {
                kept.insert(key.to_owned(), value);
            }
        }
        kept
    });
    TracedCall::new(call.name, call.arguments, result).with_before(call.before)
}
