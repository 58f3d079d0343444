//! Rollback scopes: a session is one, unless its clients send no session id (2026-07-28 under
//! `--listen`), in which case each call is a scope of its own: journaled under a session of its
//! own, never rolled back with another's calls, nor rolling any back.

use std::io::Write;

use mcp_recovery_journal::{JournalError, Kind};
use serde_json::{Map, Value, json};

use crate::wire::members;

use super::state::Session;

impl<W: Write> Session<W> {
    /// The journal session the records being written belong to: the scope of the call being
    /// gated, else the session's own.
    pub(super) fn scope(&self) -> &str {
        self.scope.as_deref().unwrap_or(&self.settings.session)
    }

    /// The `session.start` record of this session, or of one of its scopes (`connection`: the
    /// session whose upstream it shares).
    pub(super) fn start_record(&self, connection: Option<&str>) -> Map<String, Value> {
        let mut record = members(json!({
            "upstream": self.settings.upstream,
            "onFailure": self.settings.policy.on_failure().as_str(),
            "version": env!("CARGO_PKG_VERSION"),
        }));
        if let Some(connection) = connection {
            record.insert("connection".into(), Value::from(connection));
        }
        record
    }

    /// In a session whose every call is its own scope, opens the scope of the call about to be
    /// gated: `SESSION-N`, the Nth of the session.
    pub(super) fn open_scope(&mut self) -> Result<(), JournalError> {
        if !self.call_scopes {
            return Ok(());
        }
        self.scopes += 1;
        let scope = format!("{}-{}", self.settings.session, self.scopes);
        let record = self.start_record(Some(&self.settings.session));
        self.record_in(&scope, Kind::SessionStart, record)?;
        self.scope = Some(scope);
        Ok(())
    }

    /// Ends the scope of a call, which is over (answered, refused, or its outcome unknown). Its
    /// `session.end` holds `reason` alone: the call's own record says whether it left effects.
    pub(super) fn close_scope(&mut self, scope: &str, reason: &str) -> Result<(), JournalError> {
        self.record_in(scope, Kind::SessionEnd, members(json!({"reason": reason})))
    }
}
