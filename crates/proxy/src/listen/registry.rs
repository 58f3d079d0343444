//! The session registry: the sessions open on a listener, each opened with its upstream and
//! the thread that runs it, and closed when idle or to make room.

use std::collections::{HashMap, VecDeque};

use mcp_recovery_base::text::escape_controls;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{ProxyError, new_session_id};
use crate::event::{Budget, CLIENT_BYTES, EVENT_BUFFER};
use crate::note::note;
use crate::session::Session;
use crate::settings::Closing;
use crate::settings::{Settings, SharedJournal};
use crate::spec::UpstreamSpec;

use super::config::{Listener, SESSIONLESS};
use super::downstream::{Downstream, Routes, Writer};
use super::http::{Body, lock, rpc_error};

/// Everything the handler threads share.
pub(super) struct Hub {
    pub(super) listener: Listener,
    pub(super) settings: Settings,
    pub(super) journal: Option<SharedJournal>,
    pub(super) upstream: UpstreamSpec,
    pub(super) sessions: Mutex<HashMap<String, Arc<Downstream>>>,
    /// Held while the sessionless session is found or opened.
    pub(super) opening: Mutex<()>,
    /// The sessions the proxy closed with effects left, newest last (at most [`CLOSED_KEPT`]):
    /// their `Mcp-Session-Id`, journal id and why.
    pub(super) closed: Mutex<VecDeque<(String, String, Closing)>>,
}

/// Closed sessions with effects left that a client's next request is told about.
const CLOSED_KEPT: usize = 1024;

impl Hub {
    /// The 404 answer to a request of session `id`, which is not open, when the proxy closed it
    /// with effects left: it says so and how to roll them back.
    pub(super) fn gone(&self, id: &str) -> Option<Body> {
        let closed = lock(&self.closed)
            .iter()
            .find(|(key, _, _)| key == id)
            .map(|(_, journal_id, closing)| (journal_id.clone(), *closing));
        let (journal_id, closing) = closed?;
        let why = match closing {
            Closing::Idle => "it was idle for longer than the limit",
            _ => "the most sessions were open and a new one needed room",
        };
        let undo = match &self.journal {
            Some(_) => format!(
                "`mcp-recovery rollback --session {journal_id}` with the journal and the server \
                 named on the proxy's stderr undoes them"
            ),
            None => "no journal was kept, so nothing can undo them".to_owned(),
        };
        let message = format!(
            "mcp-recovery proxy: this session ({journal_id}) was closed because {why}; the \
             effects of its calls were left in place, not undone: {undo}. Start a new session; \
             do not take the earlier calls as undone."
        );
        Some(rpc_error(404, -32001, &escape_controls(&message)))
    }

    /// Closes `downstream` (open under `id`) for `closing`; when it has effects left, the
    /// command that rolls it back is noted on stderr and the next request of its client is told
    /// ([`Hub::gone`]).
    fn close(&self, id: String, downstream: &Downstream, closing: Closing) {
        if downstream.effects.load(Ordering::SeqCst) {
            if let Some(journal) = &self.journal {
                let path = lock(journal).path().to_path_buf();
                let command = self.upstream.rollback_command(
                    &path,
                    &downstream.journal_id,
                    &self.settings.secrets,
                );
                note(&format!(
                    "session {} was closed with effects left in place; `{command}` rolls them \
                     back",
                    downstream.journal_id
                ));
            }
            let mut closed = lock(&self.closed);
            if closed.len() >= CLOSED_KEPT {
                closed.pop_front();
            }
            closed.push_back((id, downstream.journal_id.clone(), closing));
        }
        downstream.end(closing);
    }

    pub(super) fn find(&self, id: &str) -> Option<Arc<Downstream>> {
        let found = lock(&self.sessions).get(id).cloned();
        if let Some(found) = &found {
            *lock(&found.last_used) = Instant::now();
        }
        found
    }

    /// How long a stream waits for the next message: a call, its approval and a rollback
    /// after it are each bounded by the policy, so this is too.
    pub(super) fn patience(&self) -> Duration {
        let policy = &self.settings.policy;
        policy.call_timeout() * 3 + policy.approval_timeout() * 2 + Duration::from_secs(30)
    }

    /// The session of the clients that send no `Mcp-Session-Id`, opened on first use.
    pub(super) fn sessionless(self: &Arc<Hub>) -> Result<Arc<Downstream>, Body> {
        let _turn = lock(&self.opening);
        if let Some(found) = self.find(SESSIONLESS) {
            return Ok(found);
        }
        self.open(Some(SESSIONLESS.to_owned()))
            .map(|(_, downstream)| downstream)
    }

    /// Opens a session under `key` (a fresh random id when `None`): its upstream and the
    /// thread that runs it.
    pub(super) fn open(
        self: &Arc<Hub>,
        key: Option<String>,
    ) -> Result<(String, Arc<Downstream>), Body> {
        let failed = |e: ProxyError| {
            note(&e.to_string());
            rpc_error(502, -32000, &format!("mcp-recovery proxy: {e}"))
        };
        let sessionless = key.as_deref() == Some(SESSIONLESS);
        let (id, journal_id) = match (key.map_or_else(new_session_id, Ok), new_session_id()) {
            (Ok(id), Ok(journal_id)) => (id, journal_id),
            (Err(e), _) | (_, Err(e)) => return Err(failed(e)),
        };
        self.make_room()?;
        let (sender, events) = sync_channel(EVENT_BUFFER);
        let upstream = crate::stdio::start_upstream(&self.upstream, &self.settings, sender.clone())
            .map_err(failed)?;
        let budget = upstream
            .budget()
            .unwrap_or_else(|| Budget::new(CLIENT_BYTES));
        let downstream = Arc::new(Downstream {
            journal_id: journal_id.clone(),
            events: sender,
            budget,
            routes: Mutex::new(Routes::default()),
            last_used: Mutex::new(Instant::now()),
            ended: AtomicBool::new(false),
            effects: Arc::new(AtomicBool::new(false)),
            revision: Mutex::new(None),
        });
        let mut settings = self.settings.clone();
        settings.session = journal_id.clone();
        let writer = Writer {
            downstream: Arc::clone(&downstream),
            line: Vec::new(),
        };
        let stopping = Arc::clone(&downstream);
        let mut session = Session::new(settings, self.journal.clone(), events, upstream, writer)
            .on_journal_failure(move || stopping.stopping());
        if sessionless {
            // 2026-07-28 clients send no session id: no call of one is rolled back with another's.
            session = session.scoped_by_call();
        }
        session.share_effects(Arc::clone(&downstream.effects));
        lock(&self.sessions).insert(id.clone(), Arc::clone(&downstream));
        note(&format!("session {journal_id} opened"));
        let hub = Arc::clone(self);
        let key = id.clone();
        let running = Arc::clone(&downstream);
        let registration = crate::interrupt::register(&downstream.events);
        std::thread::spawn(move || {
            let end = session.run();
            drop(registration);
            if end.is_err() {
                running.stop();
            }
            running.ended.store(true, Ordering::SeqCst);
            running.close_streams();
            let mut sessions = lock(&hub.sessions);
            // A stopped session stays, to refuse its client's next requests saying why; clients
            // without a session open a new one.
            let kept = end.is_err() && key != SESSIONLESS;
            if !kept && sessions.get(&key).is_some_and(|d| Arc::ptr_eq(d, &running)) {
                sessions.remove(&key);
            }
            drop(sessions);
            match end {
                Ok(end) => note(&format!("session {} ended: {end:?}", running.journal_id)),
                Err(e) => note(&format!("session {} stopped: {e}", running.journal_id)),
            }
        });
        Ok((id, downstream))
    }

    /// At the session cap, closes the least recently used session with nothing pending (no
    /// request waiting for its answer, no POST stream open), one without effects left first,
    /// so clients that never send DELETE do not lock new ones out; refuses (503) only when every
    /// session is busy.
    pub(super) fn make_room(&self) -> Result<(), Body> {
        let mut sessions = lock(&self.sessions);
        if sessions.len() < self.listener.limits.max_sessions {
            return Ok(());
        }
        let oldest = sessions
            .iter()
            .filter(|(_, d)| d.at_rest())
            .min_by_key(|(_, d)| (d.effects.load(Ordering::SeqCst), *lock(&d.last_used)))
            .map(|(id, _)| id.clone());
        let Some((id, downstream)) = oldest.and_then(|id| sessions.remove_entry(&id)) else {
            return Err(rpc_error(
                503,
                -32000,
                &format!(
                    "mcp-recovery proxy: {} sessions are open and busy, the most allowed",
                    sessions.len()
                ),
            ));
        };
        drop(sessions);
        note(&format!(
            "session {} closed to make room: {} sessions were open, the most allowed, and it \
             was the least recently used with nothing pending",
            downstream.journal_id, self.listener.limits.max_sessions
        ));
        self.close(id, &downstream, Closing::Evicted);
        Ok(())
    }

    /// Closes the sessions idle for longer than the limit.
    pub(super) fn close_idle(&self) {
        let now = Instant::now();
        let idle = self.listener.limits.idle;
        let mut sessions = lock(&self.sessions);
        let stale: Vec<String> = sessions
            .iter()
            .filter(|(_, d)| {
                let routes = lock(&d.routes);
                routes.streams.is_empty()
                    && routes.waiting.is_empty()
                    && now.duration_since(*lock(&d.last_used)) > idle
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in stale {
            if let Some((id, downstream)) = sessions.remove_entry(&id) {
                note(&format!("session {} idle: closed", downstream.journal_id));
                self.close(id, &downstream, Closing::Idle);
            }
        }
    }
}
