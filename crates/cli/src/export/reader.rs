//! Reading a journal into its sessions ([`super::model`]): each record put in its place, calls
//! and compensations from their intent to their outcome, rollbacks, approvals; and the time and
//! digest helpers the exports share.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::Failure;
use crate::export::model::{Approval, Body, Op, OpKind, Outcome, Place, Rollback, Session};

/// Builds the sessions of a journal's lines (blank lines skipped), in the order they begin.
/// A line that is not a JSON object with a `session` string and an RFC 3339 UTC `time` is an
/// error naming it, or, with `skip_unreadable` (a journal exported unverified), left out and
/// counted: the count and the first such line's fault come back with the sessions.
pub fn read(
    text: &str,
    skip_unreadable: bool,
) -> Result<(Vec<Session>, usize, Option<String>), Failure> {
    let mut reader = Reader::default();
    let (mut skipped, mut first) = (0, None);
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match record_at(line, index + 1) {
            Ok((session, record, place)) => reader.record(&session, &record, place),
            Err(fault) if skip_unreadable => {
                skipped += 1;
                first.get_or_insert(fault);
            }
            Err(fault) => return Err(Failure::Usage(fault)),
        }
    }
    Ok((reader.finish(), skipped, first))
}

/// The record of line `number`, with its session and place.
fn record_at(line: &str, number: usize) -> Result<(String, Map<String, Value>, Place), String> {
    let at = |reason: &str| format!("line {number}: {reason}");
    let record = match mcp_recovery_model::json::from_str(line) {
        Ok(Value::Object(record)) => record,
        Ok(_) => return Err(at("the line is not a JSON object")),
        Err(e) => return Err(at(&format!("the line is not JSON ({e})"))),
    };
    let Some(session) = text_of(&record, "session") else {
        return Err(at("no \"session\" string"));
    };
    let time_text = text_of(&record, "time").unwrap_or_default();
    let Some(time) = unix_nanos(&time_text) else {
        return Err(at("\"time\" is not an RFC 3339 UTC time"));
    };
    let hash = match text_of(&record, "hash") {
        Some(h) if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            h.to_ascii_lowercase()
        }
        _ => hex(&Sha256::digest(line.as_bytes())),
    };
    let place = Place {
        seq: record
            .get("seq")
            .and_then(Value::as_u64)
            .unwrap_or(number as u64),
        time_text,
        time,
        hash,
    };
    Ok((session, record, place))
}

/// An approval waiting for what it decided, with its record.
type Pending = (Approval, Map<String, Value>);

#[derive(Default)]
struct Reader {
    sessions: Vec<Session>,
    by_id: HashMap<String, usize>,
    /// Open calls by (session, call number): the op's index.
    calls: HashMap<(usize, String), usize>,
    /// Open compensations by (session, call number, attempt and part).
    compensations: HashMap<(usize, String, String), usize>,
    /// The open rollback of each session.
    open_rollback: HashMap<usize, usize>,
    /// Approvals not yet matched to what they decided, per session, with the record.
    pending: HashMap<usize, Vec<Pending>>,
}

impl Reader {
    fn record(&mut self, session: &str, record: &Map<String, Value>, place: Place) {
        let s = match self.by_id.get(session) {
            Some(&s) => s,
            None => {
                self.sessions.push(Session {
                    id: session.to_owned(),
                    first: place.clone(),
                    last: place.time,
                    ops: Vec::new(),
                    rollbacks: Vec::new(),
                    approvals: Vec::new(),
                    transport: None,
                });
                self.by_id
                    .insert(session.to_owned(), self.sessions.len() - 1);
                self.sessions.len() - 1
            }
        };
        let time = place.time;
        let sess = &mut self.sessions[s];
        sess.last = sess.last.max(time);
        if let Some(&r) = self.open_rollback.get(&s) {
            let rollback = &mut sess.rollbacks[r];
            rollback.last = rollback.last.max(time);
        }
        match text_of(record, "kind").as_deref() {
            Some("approval") => self.approval(s, record, place),
            Some("call.intent") => {
                let mut op = new_op(OpKind::Call, record, place);
                op.approvals = self.take_pending(s, |r| {
                    !flag(r, "compensation")
                        && !flag(r, "rollback")
                        && r.get("request") == record.get("request")
                        && r.get("name") == record.get("name")
                });
                let key = op.call.clone();
                let index = self.push_op(s, op);
                if let Some(call) = key {
                    self.calls.insert((s, call), index);
                }
            }
            Some("call.outcome") => {
                let call = number_text(record, "call");
                // Kept: an answer that came late (`late`) finishes the same call again.
                match call.and_then(|c| self.calls.get(&(s, c)).copied()) {
                    Some(index) => finish(&mut self.sessions[s].ops[index], record, place),
                    // An outcome whose intent is not in the journal: the call as far as known.
                    None => {
                        let mut op = new_op(OpKind::Call, record, place.clone());
                        finish(&mut op, record, place);
                        self.push_op(s, op);
                    }
                }
            }
            Some("rollback.start") => {
                let approvals = self.take_pending(s, |r| flag(r, "rollback"));
                let sess = &mut self.sessions[s];
                sess.rollbacks.push(Rollback {
                    last: place.time,
                    start: place,
                    end: None,
                    counts: Vec::new(),
                    skips: Vec::new(),
                    approvals,
                });
                self.open_rollback.insert(s, sess.rollbacks.len() - 1);
            }
            Some("rollback.end") => {
                if let Some(r) = self.open_rollback.remove(&s) {
                    let rollback = &mut self.sessions[s].rollbacks[r];
                    rollback.counts = ["compensated", "already", "failed", "skipped"]
                        .into_iter()
                        .filter_map(|k| Some((k, number_text(record, k)?)))
                        .collect();
                    rollback.end = Some(place);
                }
            }
            Some("compensation.skip") => {
                if let Some(&r) = self.open_rollback.get(&s) {
                    let details = ["call", "name", "status", "reason"]
                        .into_iter()
                        .filter_map(|k| {
                            Some((k, text_of(record, k).or_else(|| number_text(record, k))?))
                        })
                        .collect();
                    self.sessions[s].rollbacks[r].skips.push((place, details));
                }
            }
            Some("compensation.intent") => {
                let mut op = new_op(OpKind::Compensation, record, place);
                op.approvals = self.take_pending(s, |r| {
                    flag(r, "compensation") && r.get("name") == record.get("name")
                });
                op.rollback = self.open_rollback.get(&s).copied();
                let key = compensation_key(s, &op);
                let index = self.push_op(s, op);
                if let Some(key) = key {
                    self.compensations.insert(key, index);
                }
            }
            Some("compensation.outcome") => {
                let probe = new_op(OpKind::Compensation, record, place.clone());
                let found = compensation_key(s, &probe).and_then(|k| self.compensations.remove(&k));
                match found {
                    Some(index) => finish(&mut self.sessions[s].ops[index], record, place),
                    None => {
                        let mut op = probe;
                        op.rollback = self.open_rollback.get(&s).copied();
                        finish(&mut op, record, place);
                        self.push_op(s, op);
                    }
                }
            }
            Some("session.start") => {
                if let Some(upstream) = text_of(record, "upstream") {
                    let url = upstream.starts_with("http://") || upstream.starts_with("https://");
                    self.sessions[s].transport = Some(if url { "tcp" } else { "pipe" });
                }
            }
            // session.end and kinds this reader does not know.
            _ => {}
        }
    }

    fn approval(&mut self, s: usize, record: &Map<String, Value>, place: Place) {
        let decision = text_of(record, "decision").unwrap_or_default();
        let details = [
            ("by", "by"),
            ("rule", "rule"),
            ("reason", "reason"),
            ("approver", "approver"),
            ("key_id", "keyId"),
        ]
        .into_iter()
        .filter_map(|(name, member)| Some((name, text_of(record, member)?)))
        .collect();
        let approval = Approval {
            place: place.clone(),
            decision: decision.clone(),
            details,
            deciders: deciders(record),
        };
        // A refused call is never sent: it has no intent, so its approvals are its only
        // records. Several decisions on one call (one per approver) make one refused call.
        if decision == "deny" && !flag(record, "compensation") && !flag(record, "rollback") {
            let mut approvals = self.take_pending(s, |r| {
                !flag(r, "compensation")
                    && !flag(r, "rollback")
                    && r.get("request") == record.get("request")
                    && r.get("name") == record.get("name")
            });
            approvals.push(approval);
            let request = record.get("request").and_then(id_text);
            let tool = text_of(record, "name").unwrap_or_default();
            let ops = &mut self.sessions[s].ops;
            match ops.last_mut() {
                Some(last)
                    if last.outcome == Outcome::Refused
                        && last.request == request
                        && last.tool == tool =>
                {
                    last.approvals.extend(approvals);
                }
                _ => {
                    let mut op = new_op(OpKind::Call, record, place);
                    op.outcome = Outcome::Refused;
                    op.approvals = approvals;
                    self.push_op(s, op);
                }
            }
            return;
        }
        self.pending
            .entry(s)
            .or_default()
            .push((approval, record.clone()));
    }

    fn take_pending(
        &mut self,
        s: usize,
        matches: impl Fn(&Map<String, Value>) -> bool,
    ) -> Vec<Approval> {
        let Some(pending) = self.pending.get_mut(&s) else {
            return Vec::new();
        };
        let (taken, kept) = std::mem::take(pending)
            .into_iter()
            .partition(|(_, record)| matches(record));
        *pending = kept;
        taken.into_iter().map(|(approval, _)| approval).collect()
    }

    fn push_op(&mut self, s: usize, op: Op) -> usize {
        let ops = &mut self.sessions[s].ops;
        ops.push(op);
        ops.len() - 1
    }

    fn finish(mut self) -> Vec<Session> {
        for (s, pending) in self.pending {
            let approvals = pending.into_iter().map(|(approval, _)| approval);
            self.sessions[s].approvals.extend(approvals);
        }
        self.sessions
    }
}

fn compensation_key(s: usize, op: &Op) -> Option<(usize, String, String)> {
    let attempt = op.attempt.clone().unwrap_or_default();
    let key = match &op.part {
        Some(part) => format!("{attempt}/{part}"),
        None => attempt,
    };
    Some((s, op.call.clone()?, key))
}

/// An operation as its first record describes it; its outcome is `Missing` until finished.
fn new_op(kind: OpKind, record: &Map<String, Value>, place: Place) -> Op {
    Op {
        kind,
        tool: text_of(record, "name").unwrap_or_default(),
        class: text_of(record, "class"),
        call: number_text(record, "call"),
        request: record.get("request").and_then(id_text),
        undoes: text_of(record, "undoes"),
        attempt: number_text(record, "attempt"),
        part: number_text(record, "part"),
        start: place,
        end: None,
        outcome: Outcome::Missing,
        arguments: body(record, "arguments"),
        result: None,
        approvals: Vec::new(),
        rollback: None,
    }
}

/// Completes `op` with its outcome record.
fn finish(op: &mut Op, record: &Map<String, Value>, place: Place) {
    op.end = Some(place);
    let result = record.get("result").filter(|r| !r.is_null());
    op.result = body(record, "result");
    op.outcome = if let Some(error) = record.get("error").filter(|e| !e.is_null()) {
        let code = error.get("code").and_then(id_text).unwrap_or_default();
        Outcome::RpcError(code)
    } else if let Some(result) = result {
        if result.get("isError") == Some(&Value::Bool(true)) {
            Outcome::ToolError
        } else {
            Outcome::Ok
        }
    } else {
        Outcome::Unknown(text_of(record, "reason").unwrap_or_else(|| "no result".into()))
    };
}

/// The size and digest of `record`'s member `name`: as its `outOfLine` entry gives them for a
/// member kept beside the journal or not kept (the same form), else of its value in the line.
fn body(record: &Map<String, Value>, name: &str) -> Option<Body> {
    let moved = record
        .get(mcp_recovery_journal::OUT_OF_LINE)
        .and_then(|m| m.get(name));
    if let Some(moved) = moved {
        return Some(Body {
            size: moved.get("bytes").and_then(Value::as_u64)?,
            sha256: moved.get("sha256").and_then(Value::as_str)?.to_owned(),
        });
    }
    // The journal's lines are canonical, so this is the value's text as the line holds it.
    let text = record.get(name).filter(|v| !v.is_null())?.to_string();
    Some(Body {
        size: text.len() as u64,
        sha256: hex(&Sha256::digest(text.as_bytes())),
    })
}

/// Who decided a quorum approval: each counted decision's approver and key id (`slack:USER`
/// for a Slack decision, which has no key), in the order they were counted.
fn deciders(record: &Map<String, Value>) -> Vec<(String, String)> {
    let Some(decisions) = record.get("decisions").and_then(Value::as_array) else {
        return Vec::new();
    };
    decisions
        .iter()
        .filter_map(Value::as_object)
        .map(|decision| {
            let name = text_of(decision, "approver").unwrap_or_default();
            let id = match (text_of(decision, "key"), text_of(decision, "slackUser")) {
                (Some(key), _) => key,
                (None, Some(user)) => format!("slack:{user}"),
                (None, None) => String::new(),
            };
            (name, id)
        })
        .collect()
}

fn flag(record: &Map<String, Value>, name: &str) -> bool {
    record.get(name) == Some(&Value::Bool(true))
}

fn text_of(record: &Map<String, Value>, name: &str) -> Option<String> {
    record.get(name).and_then(Value::as_str).map(str::to_owned)
}

/// A number member as its JSON text.
fn number_text(record: &Map<String, Value>, name: &str) -> Option<String> {
    match record.get(name)? {
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A JSON-RPC id (or error code) as text: a string as itself, a number as written.
fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` as nanoseconds since the Unix epoch.
pub fn unix_nanos(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't')
        || bytes[13] != b':'
        || bytes[16] != b':'
        || !matches!(bytes[bytes.len() - 1], b'Z' | b'z')
    {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let fraction = &text[19..text.len() - 1];
    let nanos = match fraction.strip_prefix('.') {
        None if fraction.is_empty() => 0,
        Some(f) if !f.is_empty() && f.len() <= 9 && f.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{f:0<9}").parse::<i64>().ok()?
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second;
    u64::try_from(seconds)
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(u64::try_from(nanos).ok()?)
}

/// Howard Hinnant's civil-to-days algorithm (proleptic Gregorian calendar).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests;
