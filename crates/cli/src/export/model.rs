//! A journal read as what happened: per session, its tool calls and compensations (each from
//! its intent to its outcome), its rollbacks and the approvals that decided them. Both export
//! formats are written from this one reading.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::Failure;

/// A record's place: its line, `seq`, time and hash.
#[derive(Debug, Clone)]
pub struct Place {
    /// The `seq` member (the line number when it has none).
    pub seq: u64,
    /// The `time` member as written.
    pub time_text: String,
    /// `time` in nanoseconds since the Unix epoch.
    pub time: u64,
    /// The `hash` member when it is 64 lowercase hex digits, else the sha256 of the line (a
    /// journal exported with `--unverified`).
    pub hash: String,
}

/// A value's size and digest: the bytes of its JSON text as the journal holds it, never the
/// value itself.
#[derive(Debug, Clone)]
pub struct Body {
    /// Bytes of the JSON text.
    pub size: u64,
    /// Lowercase hex sha256 of the JSON text.
    pub sha256: String,
}

/// How a call or compensation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A result without `isError`.
    Ok,
    /// A result with `isError: true`.
    ToolError,
    /// A JSON-RPC error, with its code's text (empty when it has none).
    RpcError(String),
    /// `result: null`: the outcome is unknown (timed out, cancelled, the server exited).
    Unknown(String),
    /// An intent with no outcome record.
    Missing,
    /// Refused by an approval: never sent.
    Refused,
}

impl Outcome {
    /// The outcome in one word or two, as the CSV shows it.
    pub fn label(&self) -> String {
        match self {
            Outcome::Ok => "ok".into(),
            Outcome::ToolError => "tool-error".into(),
            Outcome::RpcError(code) if code.is_empty() => "error".into(),
            Outcome::RpcError(code) => format!("error {code}"),
            Outcome::Unknown(reason) => format!("unknown: {reason}"),
            Outcome::Missing => "no-outcome".into(),
            Outcome::Refused => "refused".into(),
        }
    }

    /// Why this is a failure, or `None` when it is not.
    pub fn failure(&self) -> Option<String> {
        match self {
            Outcome::Ok => None,
            Outcome::ToolError => Some("the tool returned isError: true".into()),
            Outcome::RpcError(code) => Some(format!("JSON-RPC error {code}").trim().to_owned()),
            Outcome::Unknown(reason) => Some(format!("outcome unknown: {reason}")),
            Outcome::Missing => Some("no outcome was recorded".into()),
            Outcome::Refused => Some("refused: never sent".into()),
        }
    }

    /// The `error.type` of the semantic conventions.
    pub fn error_type(&self) -> Option<String> {
        match self {
            Outcome::Ok => None,
            Outcome::ToolError => Some("tool_error".into()),
            Outcome::RpcError(code) if !code.is_empty() => Some(code.clone()),
            Outcome::Unknown(reason) if reason == "timed out" => Some("timeout".into()),
            _ => Some("_OTHER".into()),
        }
    }
}

/// An approval record.
#[derive(Debug, Clone)]
pub struct Approval {
    /// Its place.
    pub place: Place,
    /// `allow` or `deny`.
    pub decision: String,
    /// String members worth showing: `by`, `rule`, `reason`, and an approver's identity.
    pub details: Vec<(&'static str, String)>,
}

impl Approval {
    /// `allow by command`.
    pub fn label(&self) -> String {
        match self.details.iter().find(|(k, _)| *k == "by") {
            Some((_, by)) => format!("{} by {by}", self.decision),
            None => self.decision.clone(),
        }
    }
}

/// Whether an operation is a client's call or a rollback's compensation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// A `tools/call` of the client.
    Call,
    /// A compensating call of a rollback.
    Compensation,
}

/// A call or a compensation.
#[derive(Debug, Clone)]
pub struct Op {
    /// Which.
    pub kind: OpKind,
    /// The tool called.
    pub tool: String,
    /// The proxy's class of the tool (calls only).
    pub class: Option<String>,
    /// The call number within the session (of the call undone, for a compensation).
    pub call: Option<String>,
    /// The client's JSON-RPC id, as text.
    pub request: Option<String>,
    /// For a compensation: the tool it undoes and the attempt number.
    pub undoes: Option<String>,
    /// The attempt number of a compensation.
    pub attempt: Option<String>,
    /// The intent (or, for a refused call, the approval).
    pub start: Place,
    /// The outcome record.
    pub end: Option<Place>,
    /// How it ended.
    pub outcome: Outcome,
    /// The arguments' size and digest.
    pub arguments: Option<Body>,
    /// The result's size and digest.
    pub result: Option<Body>,
    /// The approvals that decided it.
    pub approvals: Vec<Approval>,
    /// The rollback it belongs to (index in the session's rollbacks).
    pub rollback: Option<usize>,
}

impl Op {
    /// Milliseconds from intent to outcome.
    pub fn duration_ms(&self) -> Option<u64> {
        self.end
            .as_ref()
            .map(|end| end.time.saturating_sub(self.start.time) / 1_000_000)
    }
}

/// A rollback: from `rollback.start` to `rollback.end`.
#[derive(Debug, Clone)]
pub struct Rollback {
    /// `rollback.start`.
    pub start: Place,
    /// `rollback.end`, when it was written.
    pub end: Option<Place>,
    /// The time of its last record.
    pub last: u64,
    /// The counts of `rollback.end` (`compensated`, `already`, `failed`, `skipped`).
    pub counts: Vec<(&'static str, String)>,
    /// Its `compensation.skip` records: place, call, tool, status.
    pub skips: Vec<(Place, Vec<(&'static str, String)>)>,
    /// Approvals of the rollback itself (an on-failure `ask`).
    pub approvals: Vec<Approval>,
}

impl Rollback {
    /// Why the rollback counts as failed, if it does.
    pub fn failure(&self) -> Option<String> {
        if self.end.is_none() {
            return Some("the rollback did not finish (no rollback.end)".into());
        }
        let failed = self
            .counts
            .iter()
            .find(|(k, _)| *k == "failed")
            .map(|(_, v)| v.as_str());
        match failed {
            Some(n) if n != "0" => Some(format!("{n} compensation(s) failed")),
            _ => None,
        }
    }
}

/// One session of the journal.
#[derive(Debug, Clone)]
pub struct Session {
    /// The `session` member.
    pub id: String,
    /// Its first record.
    pub first: Place,
    /// The time of its last record.
    pub last: u64,
    /// Calls and compensations, in the order their first record was written.
    pub ops: Vec<Op>,
    /// Rollbacks, in order.
    pub rollbacks: Vec<Rollback>,
    /// Approvals that decided nothing else in the journal.
    pub approvals: Vec<Approval>,
    /// How the proxy reached the server, from `session.start`: `tcp` for a URL, `pipe` for a
    /// command (the conventions' `network.transport`).
    pub transport: Option<&'static str>,
}

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
    /// Open compensations by (session, call number, attempt).
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
                match call.and_then(|c| self.calls.remove(&(s, c))) {
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
    Some((s, op.call.clone()?, op.attempt.clone().unwrap_or_default()))
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
        start: place,
        end: None,
        outcome: Outcome::Missing,
        arguments: record.get("arguments").map(body),
        result: None,
        approvals: Vec::new(),
        rollback: None,
    }
}

/// Completes `op` with its outcome record.
fn finish(op: &mut Op, record: &Map<String, Value>, place: Place) {
    op.end = Some(place);
    let result = record.get("result").filter(|r| !r.is_null());
    op.result = result.map(body);
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

fn body(value: &Value) -> Body {
    // The journal's lines are canonical, so this is the value's text as the line holds it.
    let text = value.to_string();
    Body {
        size: text.len() as u64,
        sha256: hex(&Sha256::digest(text.as_bytes())),
    }
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
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{Outcome, read, unix_nanos};

    /// Approvals go to what they decided: two denials of one call (two approvers) make one
    /// refused call; an allow goes to the intent of the same request and tool, not another.
    #[test]
    fn approvals_join_what_they_decided() {
        let line = |seq: u32, rest: &str| {
            format!(r#"{{"seq":{seq},"session":"s","time":"2026-12-01T08:00:00.00{seq}Z",{rest}}}"#)
        };
        let text = [
            line(
                1,
                r#""kind":"approval","decision":"deny","by":"alice","request":7,"name":"pay""#,
            ),
            line(
                2,
                r#""kind":"approval","decision":"deny","by":"bob","request":7,"name":"pay""#,
            ),
            line(
                3,
                r#""kind":"approval","decision":"allow","by":"carol","request":8,"name":"pay""#,
            ),
            line(
                4,
                r#""kind":"call.intent","call":1,"request":9,"name":"pay","arguments":{}"#,
            ),
            line(
                5,
                r#""kind":"call.intent","call":2,"request":8,"name":"pay","arguments":{}"#,
            ),
            line(
                6,
                r#""kind":"call.outcome","call":2,"request":8,"name":"pay","result":{}"#,
            ),
        ]
        .join("\n");
        let (sessions, _, _) = read(&text, false).unwrap();
        let ops = &sessions[0].ops;
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[0].outcome, Outcome::Refused);
        assert_eq!(ops[0].approvals.len(), 2);
        assert!(ops[1].approvals.is_empty());
        assert_eq!(ops[1].outcome, Outcome::Missing);
        assert_eq!(ops[2].approvals[0].label(), "allow by carol");
        assert_eq!(ops[2].outcome, Outcome::Ok);
        assert_eq!(ops[2].duration_ms(), Some(1));
    }

    #[test]
    fn reads_rfc3339_utc() {
        assert_eq!(unix_nanos("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(
            unix_nanos("2000-02-29T00:00:00.123Z"),
            Some(951_782_400_123_000_000)
        );
        assert_eq!(
            unix_nanos("2026-11-30T23:59:59.999Z"),
            Some(1_796_083_199_999_000_000)
        );
        assert_eq!(
            unix_nanos("2026-11-30T23:59:59Z"),
            Some(1_796_083_199_000_000_000)
        );
        for bad in [
            "",
            "2026-11-30 23:59:59Z",
            "2026-13-01T00:00:00Z",
            "2026-11-30T23:59:59.Z",
        ] {
            assert_eq!(unix_nanos(bad), None, "{bad}");
        }
    }
}
