//! Sessions a journal shows ended by an interrupt, closed by the proxy (`--listen`: idle, or
//! to make room) or cut off (no `session.end`: the proxy was killed or crashed), with calls
//! that may have taken effect and no rollback since.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// A session left with effects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    /// Its id in the journal.
    pub session: String,
    /// The `cause` of its `session.end`, `None` when it has none.
    pub cause: Option<String>,
    /// The numbers of its calls that may have taken effect since its last rollback: not
    /// read-only, and not failed (an unknown outcome counts).
    pub calls: Vec<u64>,
}

impl Unfinished {
    /// How it ended, after its name: "ended by an interrupt", "was closed when idle", "was
    /// closed to make room", or, without a `session.end`, "was cut off (the proxy was killed or
    /// crashed)".
    pub fn how(&self) -> &'static str {
        match self.cause.as_deref() {
            Some("interrupt") => "ended by an interrupt",
            Some("idle") => "was closed when idle",
            Some("evicted") => "was closed to make room",
            _ => "was cut off (the proxy was killed or crashed)",
        }
    }
}

/// Every session of `records` (a journal's, in order) that did not end normally and has calls
/// left that may have taken effect, in the order they started. A session without a
/// `session.end` counts only when no writer holds the journal any more: the caller's to know.
pub fn unfinished(records: &[Map<String, Value>]) -> Vec<Unfinished> {
    let mut sessions: Vec<Unfinished> = Vec::new();
    let mut ended: Vec<bool> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for record in records {
        let text = |name: &str| record.get(name).and_then(Value::as_str);
        let Some(id) = text("session") else { continue };
        let at = *index.entry(id.to_owned()).or_insert_with(|| {
            sessions.push(Unfinished {
                session: id.to_owned(),
                cause: None,
                calls: Vec::new(),
            });
            ended.push(false);
            sessions.len() - 1
        });
        let session = &mut sessions[at];
        let call = record.get("call").and_then(Value::as_u64);
        match (text("kind"), call) {
            (Some("call.intent"), Some(call)) if text("class") != Some("read-only") => {
                session.calls.push(call);
            }
            (Some("call.outcome"), Some(call)) if failed(record) => {
                session.calls.retain(|&c| c != call);
            }
            (Some("rollback.end"), _) => session.calls.clear(),
            (Some("session.end"), _) => {
                ended[at] = true;
                session.cause = text("cause").map(str::to_owned);
            }
            _ => {}
        }
    }
    sessions
        .into_iter()
        .zip(ended)
        .filter(|(session, ended)| {
            let abnormal = !ended
                || matches!(
                    session.cause.as_deref(),
                    Some("interrupt" | "idle" | "evicted")
                );
            abnormal && !session.calls.is_empty()
        })
        .map(|(session, _)| session)
        .collect()
}

/// A call outcome that says the call failed: a JSON-RPC error, or `isError: true`.
fn failed(record: &Map<String, Value>) -> bool {
    record.get("error").is_some_and(|e| !e.is_null())
        || record
            .get("result")
            .and_then(|r| r.get("isError"))
            .and_then(Value::as_bool)
            == Some(true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn records(values: Value) -> Vec<Map<String, Value>> {
        values
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_object().cloned())
            .collect()
    }

    #[test]
    fn sessions_cut_off_or_interrupted_with_effects_are_named() {
        let journal = records(json!([
            {"session": "a", "kind": "session.start"},
            {"session": "a", "kind": "call.intent", "call": 1, "class": "compensable"},
            {"session": "a", "kind": "call.outcome", "call": 1, "result": {}},
            {"session": "a", "kind": "session.end", "cause": "client-closed"},
            {"session": "b", "kind": "session.start"},
            {"session": "b", "kind": "call.intent", "call": 1, "class": "read-only"},
            {"session": "b", "kind": "call.intent", "call": 2, "class": "unknown"},
            {"session": "b", "kind": "call.outcome", "call": 2, "result": {"isError": true}},
            {"session": "b", "kind": "call.intent", "call": 3, "class": "compensable"},
            {"session": "b", "kind": "session.end", "cause": "interrupt"},
            {"session": "c", "kind": "session.start"},
            {"session": "c", "kind": "call.intent", "call": 1, "class": "compensable"},
            {"session": "c", "kind": "rollback.end"},
            {"session": "c", "kind": "session.end", "cause": "interrupt"},
            {"session": "d", "kind": "session.start"},
            {"session": "d", "kind": "call.intent", "call": 1, "class": "irreversible"},
            {"session": "d", "kind": "call.outcome", "call": 1, "result": null},
        ]));
        let found = unfinished(&journal);
        let named: Vec<(&str, Option<&str>, &[u64])> = found
            .iter()
            .map(|u| (u.session.as_str(), u.cause.as_deref(), u.calls.as_slice()))
            .collect();
        assert_eq!(
            named,
            [("b", Some("interrupt"), &[3][..]), ("d", None, &[1][..])]
        );
    }
}
