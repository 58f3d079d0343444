//! The trace format: one completed tool call per line (JSON Lines), in completion order.
//!
//! ```text
//! {"name": "charge_payment", "arguments": {"amount": 5}, "result": {"content": [], "structuredContent": {"transactionId": "T-1"}}}
//! {"name": "ship_order", "arguments": {"orderId": "O-7"}, "result": null}
//! ```
//!
//! * `name` (string, required) names the tool that was called.
//! * `arguments` (object, optional) is what it was called with; absent means `{}`.
//! * `result` (required) is the `CallToolResult` object the server returned, or `null` when the
//!   outcome is unknown (the call timed out, the connection dropped, the orchestrator crashed).
//!   Requiring the member makes "no result recorded" an explicit statement, never an accident.
//!   A result that is not the call's own (a task's `CreateTaskResult`, a `resultType` other than
//!   `complete`) is read as [`TracedCall::completion`] says.
//!
//! * `redacted` (boolean, optional): `true` when the recorder replaced a secret inside the line
//!   with `***` (the proxy's journal does, for the secrets it was given). Such a line's values
//!   are not the ones sent or returned, so a compensating argument read from it that holds `***`
//!   is never sent: its step is unavailable.
//! * `before` and `after` (objects, optional): the before-image and after-image of a tool whose
//!   overlay undoes it from a before-image (`spec/recovery-metadata.md` §12.4).
//!
//! Other members are ignored, so a recorder may add timestamps or ids. Blank lines are skipped.
//!
//! The journal of `mcp-recovery proxy` (`spec/journal.md`) reads as a trace directly: a line
//! with a `kind` member and a `hash` is a journal record. Its `call.outcome` records are the
//! calls; a `call.intent` that no `call.outcome` of the same `session` and `call` follows is a
//! call with an unknown outcome, placed where it was sent; every other record is skipped.
//! [`parse_session_trace`] keeps one session's calls.

use serde_json::{Map, Value};

/// The member of a trace line or journal record saying a secret in it was replaced by `***`.
pub const REDACTED_MEMBER: &str = "redacted";

/// What a recorded result says of whether its call completed ([`TracedCall::completion`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion<'a> {
    /// No result was recorded.
    Unknown,
    /// The result is the call's own: it completed, successfully or with `isError`.
    Complete,
    /// `resultType: "input_required"`: the server asked for input before doing the call; the
    /// client's retry is a call of its own.
    InputRequired,
    /// The server runs the call as a task (its id, when it gave one a string); the call's own
    /// result is not in this one.
    Task(Option<&'a str>),
    /// A `resultType` other than `complete` and `input_required`.
    UnknownType(&'a Value),
}

/// One completed call, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct TracedCall {
    /// The tool that was called.
    pub name: String,
    /// The arguments it was called with (`{}` when the trace omits them).
    pub arguments: Map<String, Value>,
    /// The `CallToolResult` object, or `None` when the outcome is unknown.
    pub result: Option<Map<String, Value>>,
    /// The before-image, when an overlay declares one for the tool and it was taken: the read
    /// run before the call, `{"name", "arguments", "result"}` (`result` null, with a `reason`,
    /// when the read got no result).
    pub before: Option<Map<String, Value>>,
    /// The after-image, when an overlay's before-image asks for the check (`unchanged`) and it
    /// was taken: the same read run again right after the call succeeded, in the same shape as
    /// `before`.
    pub after: Option<Map<String, Value>>,
    /// True when the line says a secret in it was replaced by `***` (its `redacted` member).
    pub redacted: bool,
}

impl TracedCall {
    /// A call with a known result.
    pub fn new(
        name: impl Into<String>,
        arguments: Map<String, Value>,
        result: Option<Map<String, Value>>,
    ) -> Self {
        Self {
            name: name.into(),
            arguments,
            result,
            before: None,
            after: None,
            redacted: false,
        }
    }

    /// The same call with its before-image.
    pub fn with_before(mut self, before: Option<Map<String, Value>>) -> Self {
        self.before = before;
        self
    }

    /// The same call with its after-image.
    pub fn with_after(mut self, after: Option<Map<String, Value>>) -> Self {
        self.after = after;
        self
    }

    /// True when the server answered with `isError: true`.
    pub fn is_error(&self) -> bool {
        self.result
            .as_ref()
            .and_then(|r| r.get("isError"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// What the result says of the call's completion. A result of 2026-07-28 names its type in
    /// `resultType` (absent means `complete`); a 2025-11-25 server that runs the call as a task
    /// answers with a `CreateTaskResult` (a `task` object and no `content`), whose own result
    /// comes later from `tasks/result`.
    pub fn completion(&self) -> Completion<'_> {
        let Some(result) = &self.result else {
            return Completion::Unknown;
        };
        match result.get("resultType") {
            None => {}
            Some(Value::String(kind)) if kind == "complete" => {}
            Some(Value::String(kind)) if kind == "input_required" => {
                return Completion::InputRequired;
            }
            Some(other) => return Completion::UnknownType(other),
        }
        if !result.contains_key("content")
            && let Some(Value::Object(task)) = result.get("task")
        {
            return Completion::Task(task.get("taskId").and_then(Value::as_str));
        }
        Completion::Complete
    }

    /// The result's `structuredContent`, the only thing `$response.body` may read; a
    /// `structuredContent` of `null` is absent (MCP omits an absent field, so `null` says the
    /// same thing).
    pub fn structured_content(&self) -> Option<&Value> {
        self.result
            .as_ref()?
            .get("structuredContent")
            .filter(|content| !content.is_null())
    }

    /// Reads one trace line that is already parsed as JSON.
    pub fn from_value(value: &Value) -> Result<Self, TraceLineError> {
        let Value::Object(line) = value else {
            return Err(TraceLineError::NotAnObject {
                found: mcp_recovery_model::json_type_name(value),
            });
        };
        let name = match line.get("name") {
            Some(Value::String(name)) => name.clone(),
            Some(other) => {
                return Err(TraceLineError::NameNotAString {
                    found: mcp_recovery_model::json_type_name(other),
                });
            }
            None => return Err(TraceLineError::MissingName),
        };
        let arguments = match line.get("arguments") {
            None => Map::new(),
            Some(Value::Object(arguments)) => arguments.clone(),
            Some(other) => {
                return Err(TraceLineError::ArgumentsNotAnObject {
                    found: mcp_recovery_model::json_type_name(other),
                });
            }
        };
        let result = match line.get("result") {
            None => return Err(TraceLineError::MissingResult),
            Some(Value::Null) => None,
            Some(Value::Object(result)) => {
                if let Some(flag) = result.get("isError")
                    && !flag.is_boolean()
                {
                    return Err(TraceLineError::IsErrorNotABoolean {
                        found: mcp_recovery_model::json_type_name(flag),
                    });
                }
                Some(result.clone())
            }
            Some(other) => {
                return Err(TraceLineError::ResultNotAnObject {
                    found: mcp_recovery_model::json_type_name(other),
                });
            }
        };
        let image = |member: &'static str| match line.get(member) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(image)) => Ok(Some(image.clone())),
            Some(other) => Err(TraceLineError::ImageNotAnObject {
                member,
                found: mcp_recovery_model::json_type_name(other),
            }),
        };
        let before = image("before")?;
        let after = image("after")?;
        let redacted = match line.get(REDACTED_MEMBER) {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(other) => {
                return Err(TraceLineError::RedactedNotABoolean {
                    found: mcp_recovery_model::json_type_name(other),
                });
            }
        };
        Ok(Self {
            name,
            arguments,
            result,
            before,
            after,
            redacted,
        })
    }
}

/// What is wrong with one trace line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceLineError {
    /// The line is not JSON.
    #[error("not JSON: {message}")]
    InvalidJson {
        /// The parser's message.
        message: String,
    },
    /// The line is JSON but not an object.
    #[error("a trace line must be an object, found {found}")]
    NotAnObject {
        /// JSON type found.
        found: &'static str,
    },
    /// `name` is missing.
    #[error("missing \"name\"")]
    MissingName,
    /// `name` is not a string.
    #[error("\"name\" must be a string, found {found}")]
    NameNotAString {
        /// JSON type found.
        found: &'static str,
    },
    /// `arguments` is not an object.
    #[error("\"arguments\" must be an object, found {found}")]
    ArgumentsNotAnObject {
        /// JSON type found.
        found: &'static str,
    },
    /// `result` is missing.
    #[error("missing \"result\" (write null when the outcome is unknown)")]
    MissingResult,
    /// `result` is neither an object nor null.
    #[error("\"result\" must be a CallToolResult object or null, found {found}")]
    ResultNotAnObject {
        /// JSON type found.
        found: &'static str,
    },
    /// `before` or `after` is present but not an object (or `null`).
    #[error("\"{member}\" must be an object or null, found {found}")]
    ImageNotAnObject {
        /// The member: `before` or `after`.
        member: &'static str,
        /// JSON type found.
        found: &'static str,
    },
    /// `redacted` is not a boolean.
    #[error("\"redacted\" must be a boolean, found {found}")]
    RedactedNotABoolean {
        /// JSON type found.
        found: &'static str,
    },
    /// `result.isError` is not a boolean.
    #[error("\"result.isError\" must be a boolean, found {found}")]
    IsErrorNotABoolean {
        /// JSON type found.
        found: &'static str,
    },
}

/// A trace that cannot be read, with the 1-based line of the fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("trace line {line}: {error}")]
pub struct TraceError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub error: TraceLineError,
}

/// Parses a JSON Lines trace; blank lines are skipped, the first bad line is an error.
pub fn parse_trace(text: &str) -> Result<Vec<TracedCall>, TraceError> {
    Ok(parse_lines(text, None)?
        .into_iter()
        .map(|(_, call)| call)
        .collect())
}

/// [`parse_trace`] keeping only the journal records of one session (plain trace lines, which
/// belong to no session, are kept too).
pub fn parse_session_trace(text: &str, session: &str) -> Result<Vec<TracedCall>, TraceError> {
    Ok(parse_session_calls(text, session)?
        .into_iter()
        .map(|(_, call)| call)
        .collect())
}

/// [`parse_session_trace`] with each call's journal `call` member (null for plain trace lines),
/// which compensation records refer to.
pub fn parse_session_calls(
    text: &str,
    session: &str,
) -> Result<Vec<(Value, TracedCall)>, TraceError> {
    parse_lines(text, Some(session))
}

/// The session ids of a journal, in order of first appearance.
pub fn trace_sessions(text: &str) -> Vec<String> {
    let mut sessions: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Ok(Value::Object(record)) = mcp_recovery_model::json::from_str(line)
            && let Some(Value::String(session)) = record.get("session")
            && !sessions.contains(session)
        {
            sessions.push(session.clone());
        }
    }
    sessions
}

/// What a line of a trace or journal is.
enum Line {
    Call(TracedCall),
    Intent(Value, TracedCall),
    Outcome(Value, TracedCall),
    Skip,
}

fn classify(value: &Value, session: Option<&str>) -> Result<Line, TraceLineError> {
    let Value::Object(record) = value else {
        return TracedCall::from_value(value).map(Line::Call);
    };
    let (Some(Value::String(kind)), true) = (record.get("kind"), record.contains_key("hash"))
    else {
        return TracedCall::from_value(value).map(Line::Call);
    };
    let own = record.get("session").and_then(Value::as_str);
    if session.is_some_and(|wanted| own != Some(wanted)) {
        return Ok(Line::Skip);
    }
    // Sessions are told apart by the caller (one session) or by the key (every session).
    let key = || {
        Value::from(vec![
            Value::from(own.unwrap_or_default()),
            record.get("call").cloned().unwrap_or(Value::Null),
        ])
    };
    match kind.as_str() {
        "call.outcome" => Ok(Line::Outcome(key(), TracedCall::from_value(value)?)),
        "call.intent" => {
            let mut intent = record.clone();
            intent.insert("result".into(), Value::Null);
            Ok(Line::Intent(
                key(),
                TracedCall::from_value(&Value::Object(intent))?,
            ))
        }
        _ => Ok(Line::Skip),
    }
}

/// (`[session, call]` key or null, call) in trace order.
fn parse_lines(text: &str, session: Option<&str>) -> Result<Vec<(Value, TracedCall)>, TraceError> {
    // (position, key, call): an outcome sits where it completed, an unanswered intent where
    // it was sent.
    let mut calls: Vec<(usize, Value, TracedCall)> = Vec::new();
    let mut open: Vec<(Value, usize, TracedCall)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        // A UTF-8 byte order mark may open the file; it is not part of the first line's JSON.
        let line = if index == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        if line.trim().is_empty() {
            continue;
        }
        let fail = |error| TraceError {
            line: index + 1,
            error,
        };
        let (value, repeated) =
            mcp_recovery_model::json::from_str_noting_repeats(line).map_err(|e| {
                fail(TraceLineError::InvalidJson {
                    message: e.to_string(),
                })
            })?;
        if repeated {
            return Err(fail(TraceLineError::InvalidJson {
                message: "some object writes a member name twice: which value is meant is not \
                          known"
                    .to_owned(),
            }));
        }
        match classify(&value, session).map_err(fail)? {
            Line::Call(call) => calls.push((index, Value::Null, call)),
            Line::Intent(key, call) => open.push((key, index, call)),
            Line::Outcome(key, mut call) => {
                // The before-image is journaled with the intent, and so is a secret it held.
                if let Some(at) = open.iter().position(|(k, _, _)| *k == key) {
                    let (_, _, intent) = open.remove(at);
                    if call.before.is_none() {
                        call.before = intent.before;
                    }
                    call.redacted |= intent.redacted;
                } else if let Some((_, _, earlier)) =
                    calls.iter_mut().find(|(_, k, _)| !k.is_null() && *k == key)
                {
                    // An answer that came after the outcome was written unknown (`late`)
                    // supersedes it; the call keeps its place.
                    if call.before.is_none() {
                        call.before = earlier.before.take();
                    }
                    call.redacted |= earlier.redacted;
                    *earlier = call;
                    continue;
                }
                open.retain(|(k, _, _)| *k != key);
                calls.push((index, key, call));
            }
            Line::Skip => {}
        }
    }
    calls.extend(
        open.into_iter()
            .map(|(key, index, call)| (index, key, call)),
    );
    calls.sort_by_key(|(index, _, _)| *index);
    Ok(calls
        .into_iter()
        .map(|(_, key, call)| (key.get(1).cloned().unwrap_or(Value::Null), call))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_lines_skipping_blanks() {
        let text = "\n{\"name\":\"a\",\"arguments\":{\"x\":1},\"result\":{\"content\":[]}}\n  \n{\"name\":\"b\",\"result\":null,\"at\":\"t\"}\r\n";
        let calls = parse_trace(text).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].arguments.get("x"), Some(&json!(1)));
        assert!(calls[1].arguments.is_empty());
        assert_eq!(calls[1].result, None);
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("{\"name\":\"a\",\"result\":null}\n{oops", 2, "not JSON"),
            ("[1]", 1, "must be an object"),
            ("{\"result\":null}", 1, "missing \"name\""),
            (
                "{\"name\":3,\"result\":null}",
                1,
                "\"name\" must be a string",
            ),
            (
                "{\"name\":\"a\",\"arguments\":[],\"result\":null}",
                1,
                "\"arguments\"",
            ),
            ("\n\n{\"name\":\"a\"}", 3, "missing \"result\""),
            ("{\"name\":\"a\",\"result\":\"ok\"}", 1, "CallToolResult"),
            (
                "{\"name\":\"a\",\"result\":{\"isError\":\"yes\"}}",
                1,
                "isError",
            ),
        ];
        for (text, line, needle) in cases {
            let error = parse_trace(text).unwrap_err();
            assert_eq!(error.line, line, "{text}");
            let message = error.to_string();
            assert!(
                message.starts_with(&format!("trace line {line}: ")),
                "{message}"
            );
            assert!(message.contains(needle), "{message}");
        }
    }

    #[test]
    fn is_error_and_structured_content() {
        let call = TracedCall::from_value(&json!({
            "name": "a",
            "result": {"isError": true, "structuredContent": {"k": 1}}
        }))
        .unwrap();
        assert!(call.is_error());
        assert_eq!(call.structured_content(), Some(&json!({"k": 1})));
    }

    #[test]
    fn journals_read_as_traces() {
        let journal = concat!(
            "{\"seq\":1,\"kind\":\"session.start\",\"session\":\"a\",\"hash\":\"h\"}\n",
            "{\"seq\":2,\"kind\":\"call.intent\",\"session\":\"a\",\"call\":1,\"name\":\"x\",\"arguments\":{\"k\":1},\"hash\":\"h\"}\n",
            "{\"seq\":3,\"kind\":\"call.intent\",\"session\":\"a\",\"call\":2,\"name\":\"y\",\"hash\":\"h\"}\n",
            "{\"seq\":4,\"kind\":\"call.intent\",\"session\":\"b\",\"call\":1,\"name\":\"z\",\"hash\":\"h\"}\n",
            "{\"seq\":5,\"kind\":\"call.outcome\",\"session\":\"a\",\"call\":1,\"name\":\"x\",\"arguments\":{\"k\":1},\"result\":{\"content\":[]},\"hash\":\"h\"}\n",
            "{\"seq\":6,\"kind\":\"approval\",\"session\":\"a\",\"hash\":\"h\"}\n",
            "{\"seq\":7,\"kind\":\"call.outcome\",\"session\":\"b\",\"call\":1,\"name\":\"z\",\"result\":null,\"hash\":\"h\"}\n",
        );
        let calls = parse_trace(journal).unwrap();
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        // y was sent and never answered: unknown, where it was sent.
        assert_eq!(names, ["y", "x", "z"]);
        assert_eq!(calls[0].result, None);
        assert!(calls[1].result.is_some());
        let a = parse_session_trace(journal, "a").unwrap();
        let names: Vec<&str> = a.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["y", "x"]);
        assert_eq!(trace_sessions(journal), ["a", "b"]);
        let ids: Vec<Value> = parse_session_calls(journal, "a")
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(ids, [json!(2), json!(1)]);
        // A secret lost from the intent's before-image marks the call, whatever its outcome says.
        let journal = concat!(
            "{\"kind\":\"call.intent\",\"session\":\"a\",\"call\":1,\"name\":\"x\",\"before\":{\"name\":\"r\",\"result\":{\"content\":[]}},\"redacted\":true,\"hash\":\"h\"}\n",
            "{\"kind\":\"call.outcome\",\"session\":\"a\",\"call\":1,\"name\":\"x\",\"result\":{\"content\":[]},\"hash\":\"h\"}\n",
        );
        let calls = parse_trace(journal).unwrap();
        assert!(calls[0].redacted && calls[0].before.is_some(), "{calls:?}");
        // An answer that came after the outcome was written unknown supersedes it, in its place.
        let journal = concat!(
            "{\"kind\":\"call.intent\",\"session\":\"a\",\"call\":1,\"name\":\"x\",\"before\":{\"name\":\"r\",\"result\":{\"content\":[]}},\"hash\":\"h\"}\n",
            "{\"kind\":\"call.outcome\",\"session\":\"a\",\"call\":1,\"name\":\"x\",\"result\":null,\"reason\":\"timed out\",\"hash\":\"h\"}\n",
            "{\"kind\":\"call.outcome\",\"session\":\"a\",\"call\":2,\"name\":\"y\",\"result\":{\"content\":[]},\"hash\":\"h\"}\n",
            "{\"kind\":\"call.outcome\",\"session\":\"a\",\"call\":1,\"name\":\"x\",\"result\":{\"content\":[]},\"late\":\"timed out\",\"hash\":\"h\"}\n",
        );
        let calls = parse_trace(journal).unwrap();
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["x", "y"]);
        assert!(
            calls[0].result.is_some() && calls[0].before.is_some(),
            "{calls:?}"
        );
        // A plain trace line with a `kind` of its own is still a call.
        let plain = parse_trace("{\"name\":\"p\",\"kind\":\"mine\",\"result\":null}").unwrap();
        assert_eq!(plain.len(), 1);
    }
}
