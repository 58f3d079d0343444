//! What one session holds: the state every stage reads and updates, and the records of the
//! requests it waits on.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Receiver;
use std::time::Instant;

use mcp_recovery_model::Tool;
use mcp_recovery_plan::TracedCall;
use serde_json::{Map, Value};

use crate::classify::Classification;
use crate::event::Event;
use crate::rollback::Reply;
use crate::settings::{Closing, Settings, SharedJournal};
use crate::upstream::Upstream;

use super::input::Input;

/// Effectful calls that left the in-memory window since the last rollback (call numbers).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Evicted {
    pub(super) count: u64,
    pub(super) first: u64,
    pub(super) last: u64,
}

/// Where an answer to the client goes: a place in a batch's answer (batch number, index).
pub(super) type Slot = (u64, usize);

/// The answers to a batch's requests, sent as one array once every request is answered.
#[derive(Debug, Default)]
pub(super) struct Batch {
    /// One entry per request of the batch; `None` while unanswered (or cancelled).
    pub(super) answers: Vec<Option<String>>,
    /// Requests still waiting for their answer.
    pub(super) open: usize,
    /// Every element of the batch has been handled.
    pub(super) sealed: bool,
}

/// A forwarded client request waiting for its answer.
#[derive(Debug)]
pub(super) struct Pending {
    /// The id exactly as the client spelled it (answers get this spelling back).
    pub(super) id: Value,
    pub(super) method: String,
    pub(super) deadline: Instant,
    pub(super) call: Option<CallContext>,
    /// A `tools/list` without a cursor: its answer may become the classification list.
    pub(super) first_page: bool,
    /// Set when the request came in a batch: where its answer goes.
    pub(super) batch: Option<Slot>,
    /// For a `tasks/result`: the task whose result it fetches.
    pub(super) task: Option<String>,
}

/// The forwarded client requests waiting for their answer, by id key, with their deadlines in
/// order (so the next one is found without looking at every request).
#[derive(Debug, Default)]
pub(super) struct Requests {
    by_key: HashMap<String, Pending>,
    deadlines: BTreeSet<(Instant, String)>,
}

impl Requests {
    pub(super) fn insert(&mut self, key: String, pending: Pending) {
        self.deadlines.insert((pending.deadline, key.clone()));
        if let Some(earlier) = self.by_key.insert(key.clone(), pending) {
            self.deadlines.remove(&(earlier.deadline, key));
        }
    }

    /// The request of `key`, no longer waited for.
    pub(super) fn remove(&mut self, key: &str) -> Option<Pending> {
        let pending = self.by_key.remove(key)?;
        self.deadlines.remove(&(pending.deadline, key.to_owned()));
        Some(pending)
    }

    pub(super) fn contains_key(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    pub(super) fn len(&self) -> usize {
        self.by_key.len()
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &Pending> {
        self.by_key.values()
    }

    /// The earliest deadline.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|(deadline, _)| *deadline)
    }

    /// The requests whose deadline is `now` or earlier, earliest first, no longer waited for.
    pub(super) fn take_expired(&mut self, now: Instant) -> Vec<Pending> {
        let mut expired = Vec::new();
        while let Some((deadline, _)) = self.deadlines.first()
            && *deadline <= now
        {
            if let Some((_, key)) = self.deadlines.pop_first()
                && let Some(pending) = self.by_key.remove(&key)
            {
                expired.push(pending);
            }
        }
        expired
    }

    /// Every request, no longer waited for.
    pub(super) fn take_all(&mut self) -> Vec<Pending> {
        self.deadlines.clear();
        self.by_key.drain().map(|(_, pending)| pending).collect()
    }
}

/// Requests given up unanswered (timed out, cancelled by the client) while the server may still
/// answer them, by id key: the newest [`UNSETTLED`], so that a late answer is never passed to a
/// client that gave up on it (nor taken for the answer to a later request reusing the id), and
/// a call's is journaled as its real outcome (a call's outcome was journaled unknown).
#[derive(Debug, Default)]
pub(super) struct Unsettled {
    /// By key: when it was remembered (a count), the call (none for another request), its id
    /// as the client spelled it, and why it was given up.
    by_key: HashMap<String, (u64, Option<CallContext>, Value, String)>,
    order: VecDeque<(u64, String)>,
    count: u64,
}

/// How many requests [`Unsettled`] remembers.
pub(super) const UNSETTLED: usize = 1024;

impl Unsettled {
    /// Remembers the request of `key`, forgetting the oldest past [`UNSETTLED`].
    pub(super) fn insert(
        &mut self,
        key: String,
        call: Option<CallContext>,
        request: Value,
        why: String,
    ) {
        self.count += 1;
        self.by_key
            .insert(key.clone(), (self.count, call, request, why));
        self.order.push_back((self.count, key));
        while self.by_key.len() > UNSETTLED || self.order.len() > 2 * UNSETTLED {
            let Some((count, oldest)) = self.order.pop_front() else {
                break;
            };
            // An entry forgotten out of turn (answered, or remembered again) stays in the
            // order until it comes up.
            if self
                .by_key
                .get(&oldest)
                .is_some_and(|entry| entry.0 == count)
            {
                self.by_key.remove(&oldest);
            }
        }
    }

    /// Whether a request given up under `key` may still be answered.
    pub(super) fn contains(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    /// The request of `key` (its call, its id as spelled and why it was given up), forgotten.
    pub(super) fn remove(&mut self, key: &str) -> Option<(Option<CallContext>, Value, String)> {
        let (_, call, request, why) = self.by_key.remove(key)?;
        Some((call, request, why))
    }
}

/// A call the server runs as a task (it answered with a `CreateTaskResult`): its outcome is
/// journaled when `tasks/result` brings the call's own result.
#[derive(Debug)]
pub(super) struct Running {
    pub(super) call: CallContext,
    /// The `tools/call`'s id, as the client spelled it.
    pub(super) request: Value,
}

#[derive(Debug, Clone)]
pub(super) struct CallContext {
    pub(super) number: u64,
    pub(super) name: String,
    pub(super) arguments: Map<String, Value>,
    /// The before-image taken for it, when an overlay declares one for the tool.
    pub(super) before: Option<Map<String, Value>>,
    /// The after-image taken once it succeeded, when the overlay's before-image asks for it.
    pub(super) after: Option<Map<String, Value>>,
    /// The call's own rollback scope, when it is not the session's (see `scope`).
    pub(super) scope: Option<String>,
}

/// One session between a client and a server.
pub struct Session<W: Write> {
    pub(super) settings: Settings,
    pub(super) journal: Option<SharedJournal>,
    pub(super) events: Receiver<Event>,
    pub(super) upstream: Upstream,
    pub(super) downstream: W,
    pub(super) pending: Requests,
    /// Calls given up unanswered whose answer may still come.
    pub(super) unsettled: Unsettled,
    /// Calls running as tasks, by task id.
    pub(super) tasks: HashMap<String, Running>,
    pub(super) waiting: HashSet<String>,
    pub(super) replies: HashMap<String, Reply>,
    pub(super) deferred: VecDeque<Input>,
    pub(super) tools: Option<Vec<Tool>>,
    pub(super) classes: HashMap<String, Classification>,
    pub(super) request_meta: Option<Map<String, Value>>,
    /// The upstream's `serverInfo.name`, once it has said it.
    pub(super) server_name: Option<String>,
    /// What a rollback needs of the calls completed since the last one: effectful calls only,
    /// each with only the parts of its result the planner reads, at most `rollback_window`.
    pub(super) completed: VecDeque<(Value, TracedCall)>,
    pub(super) evicted: Evicted,
    pub(super) calls: u64,
    pub(super) own_ids: u64,
    pub(super) client_closed: bool,
    pub(super) server_closed: Option<String>,
    /// Why the proxy closes the session, once it does.
    pub(super) closing: Option<Closing>,
    /// Set while effectful calls no rollback has covered are left, for whoever shares it.
    pub(super) effects_flag: Option<Arc<AtomicBool>>,
    pub(super) rolling_back: bool,
    /// The negotiated protocol revision: the server's `initialize` result, or a 2026-07-28
    /// client's per-request `_meta`.
    pub(super) revision: Option<String>,
    pub(super) batches: HashMap<u64, Batch>,
    pub(super) next_batch: u64,
    /// While a batch's element is handled: where the proxy's own answer to it goes.
    pub(super) current: Option<Slot>,
    /// Called once when the journal fails, before the session answers what it forwarded.
    pub(super) on_stop: Option<Box<dyn FnOnce() + Send>>,
    /// Each call is a rollback scope of its own (the session's clients send no session id).
    pub(super) call_scopes: bool,
    /// The scopes opened so far.
    pub(super) scopes: u64,
    /// The scope of the call being gated.
    pub(super) scope: Option<String>,
}

/// The prefix of the proxy's own request ids upstream.
pub(super) const OWN_ID_PREFIX: &str = "mcp-recovery-proxy-";

impl<W: Write> Session<W> {
    /// Keeps `flag` set while the session has effectful calls no rollback has covered.
    pub(crate) fn share_effects(&mut self, flag: Arc<AtomicBool>) {
        self.effects_flag = Some(flag);
    }

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
            pending: Requests::default(),
            unsettled: Unsettled::default(),
            tasks: HashMap::new(),
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
            closing: None,
            effects_flag: None,
            rolling_back: false,
            revision: None,
            batches: HashMap::new(),
            next_batch: 0,
            current: None,
            on_stop: None,
            call_scopes: false,
            scopes: 0,
            scope: None,
        }
    }

    /// Makes each call a rollback scope of its own: for a session shared by clients that send
    /// no session id, so that no client's failure rolls back another's calls.
    pub(crate) fn scoped_by_call(mut self) -> Self {
        self.call_scopes = true;
        self
    }

    /// Has `hook` called when the journal fails, before the session answers the requests it
    /// forwarded and stops.
    pub(crate) fn on_journal_failure(mut self, hook: impl FnOnce() + Send + 'static) -> Self {
        self.on_stop = Some(Box::new(hook));
        self
    }
}
