//! Newline-delimited JSON-RPC: bounded line reading on a thread, and the message shapes the
//! proxy looks at.

use std::io::{BufRead, Read};
use std::sync::mpsc::SyncSender;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_model::json::with;
use serde_json::{Map, Value, json};

mod leading;

use crate::ambiguous::fold;
use crate::names::fold_name;

/// `value`'s members (none when it is not an object): the fields of a journal record built with
/// `json!` or [`with`].
pub(crate) fn members(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Largest line accepted from either side (64 MiB); a longer one is dropped with a warning.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One line from a peer.
#[derive(Debug)]
pub enum Line {
    /// A JSON value and the exact text it came from (forwarded as is).
    Message(Value, String),
    /// Not JSON or not UTF-8: what was wrong (the text is never echoed).
    Garbage(String),
    /// Longer than [`MAX_LINE_BYTES`], dropped: the `id` its text begins with, when found.
    Oversized(Option<Value>),
    /// The peer closed the stream (or reading failed: the reason).
    Closed(Option<String>),
}

/// What is said of a line longer than [`MAX_LINE_BYTES`].
pub(crate) fn oversized() -> String {
    format!(
        "a line longer than {} MiB was dropped",
        MAX_LINE_BYTES / (1024 * 1024)
    )
}

/// Reads lines from `input` until it ends, sending each through `send(line)`; a bounded
/// channel behind `send` keeps a flooding peer from growing memory.
pub fn read_lines<T>(input: impl Read, sender: &SyncSender<T>, wrap: impl Fn(Line) -> T) {
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, input);
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let outcome = read_bounded_line(&mut reader, &mut buffer);
        let line = match outcome {
            Ok(0) => Line::Closed(None),
            Ok(_) if buffer.len() > MAX_LINE_BYTES => Line::Oversized(leading::id(&buffer)),
            Ok(_) => parse_line(&buffer),
            Err(e) => Line::Closed(Some(e.to_string())),
        };
        let closed = matches!(line, Line::Closed(_));
        let blank = matches!(&line, Line::Garbage(reason) if reason.is_empty());
        if !blank && sender.send(wrap(line)).is_err() {
            return;
        }
        if closed {
            return;
        }
    }
}

/// Reads one line into `buffer`, keeping at most `MAX_LINE_BYTES + 1` bytes of it (the rest is
/// read and discarded). Returns the bytes consumed.
pub(crate) fn read_bounded_line(
    reader: &mut impl BufRead,
    buffer: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut consumed = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(consumed);
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..=end], true),
            None => (available, false),
        };
        let room = (MAX_LINE_BYTES + 1).saturating_sub(buffer.len());
        buffer.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len();
        reader.consume(used);
        consumed += used;
        if done {
            return Ok(consumed);
        }
    }
}

/// One line's bytes (without or with its line break) as the reader gives them.
pub fn parse_line(bytes: &[u8]) -> Line {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Line::Garbage("a line that is not UTF-8 was dropped".into());
    };
    let text = text.trim_end_matches(['\n', '\r']);
    if text.trim().is_empty() {
        return Line::Garbage(String::new());
    }
    match mcp_recovery_model::json::from_str(text) {
        Ok(value) => Line::Message(value, text.to_owned()),
        Err(e) => Line::Garbage(format!("a line that is not JSON was dropped ({e})")),
    }
}

/// Every MCP request method, either direction: the `method` constants of the request types in
/// the 2025-11-25 and 2026-07-28 schemas (between them, every earlier revision's requests too).
/// A message with one of these methods and no id is a request in disguise: never forwarded.
pub const REQUEST_METHODS: &[&str] = &[
    "completion/complete",
    "elicitation/create",
    "initialize",
    "logging/setLevel",
    "ping",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/templates/list",
    "resources/unsubscribe",
    "roots/list",
    "sampling/createMessage",
    "server/discover",
    "subscriptions/listen",
    "tasks/cancel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tools/call",
    "tools/list",
];

/// The request method that `method` is spelled like without being it (`Tools/call`,
/// `tools/call `, `tools/call` with a zero-width space or in fullwidth letters): a server that
/// looks methods up loosely would run it past every gate, so it is never passed on.
pub fn respelled_method(method: &str) -> Option<&'static str> {
    if REQUEST_METHODS.contains(&method) {
        return None;
    }
    let folded = fold_name(method.trim());
    REQUEST_METHODS
        .iter()
        .find(|known| fold_name(known) == folded)
        .copied()
}

/// The one protocol revision whose transports carry JSON-RPC batches (2025-03-26; they were
/// removed from MCP after it).
pub const BATCH_REVISION: &str = "2025-03-26";

/// What a message from a peer is, by the JSON-RPC rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A method and an id the proxy can match (its [`id_key`]).
    Request(String),
    /// A method and no id.
    Notification,
    /// An id and no method.
    Response,
    /// Not a valid request (not an object, a method that is not a string, an id that is null or
    /// neither a string nor an integer): what is wrong.
    Invalid(&'static str),
}

/// Classifies one message.
pub fn shape(message: &Value) -> Shape {
    let Value::Object(object) = message else {
        return Shape::Invalid("a message must be a JSON object");
    };
    match (object.get("method"), object.get("id")) {
        (None, Some(_)) => Shape::Response,
        (None, None) => Shape::Invalid("a message needs a method or an id"),
        (Some(Value::String(_)), None) => Shape::Notification,
        (Some(Value::String(_)), Some(id)) => match id_value_key(id) {
            Some(key) => Shape::Request(key),
            None => Shape::Invalid("a request id must be a string or an integer"),
        },
        (Some(_), _) => Shape::Invalid("a method must be a string"),
    }
}

/// The `id` of a request or response as a map key: the same for every spelling of one JSON
/// value (`1`, `1.0`, `1e0` and `10e-1` are one id, `"1"` another); `None` for notifications and
/// for ids that are neither a string nor an integer-valued number.
pub fn id_key(message: &Value) -> Option<String> {
    message.get("id").and_then(id_value_key)
}

/// The map key of one id value (see [`id_key`]).
pub fn id_value_key(id: &Value) -> Option<String> {
    match id {
        Value::String(text) => Some(format!("s:{text}")),
        Value::Number(number) => integer_key(&number.to_string()).map(|key| format!("n:{key}")),
        _ => None,
    }
}

/// The largest integer every JSON-RPC peer reads exactly: 2^53 − 1. A JavaScript server reads
/// numbers as doubles, so `9007199254740993` and `9007199254740992` are one id to it.
pub const MAX_EXACT_ID: u64 = (1 << 53) - 1;

/// Why a request's id cannot be passed on even though [`id_value_key`] keys it: a number past
/// ±[`MAX_EXACT_ID`], which some servers cannot tell from its neighbours; `None` for an id every
/// peer reads as the proxy does (a string, or an integer within the range).
pub fn inexact_id(id: &Value) -> Option<String> {
    let Value::Number(number) = id else {
        return None;
    };
    let text = number.to_string();
    let exact = integer_key(&text).is_some_and(|key| {
        let (digits, exponent) = key
            .trim_start_matches('-')
            .split_once('e')
            .unwrap_or(("0", "0"));
        let exponent: usize = exponent.parse().unwrap_or(usize::MAX);
        digits.len().saturating_add(exponent) <= 16
            && format!("{digits}{}", "0".repeat(exponent))
                .parse::<u64>()
                .is_ok_and(|value| value <= MAX_EXACT_ID)
    });
    (!exact).then(|| {
        format!(
            "a numeric request id must be an integer between -{MAX_EXACT_ID} and {MAX_EXACT_ID} (2^53 - 1): a server that reads numbers as doubles cannot tell a larger one from its neighbours"
        )
    })
}

/// The exact value of a JSON number's text, as `[-]DIGITSeEXP` with no leading or trailing
/// zeros in DIGITS (`0` for zero, whatever its sign), when it is an integer; `None` for a
/// fraction, or an exponent too large to say exactly. No floating point: `1e400` and
/// `10000000000000000000001` keep every digit.
fn integer_key(text: &str) -> Option<String> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, "0"),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits_only(whole) || !digits_only(fraction) {
        return None;
    }
    let exponent: i64 = exponent
        .strip_prefix('+')
        .unwrap_or(exponent)
        .parse()
        .ok()?;
    let digits = format!("{whole}{fraction}");
    let significant = digits.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return Some("0".into());
    }
    let shift = i64::try_from(significant.len() - trimmed.len()).ok()?;
    let fraction_len = i64::try_from(fraction.len()).ok()?;
    let exponent = exponent.checked_add(shift)?.checked_sub(fraction_len)?;
    if exponent < 0 {
        return None;
    }
    let sign = if negative { "-" } else { "" };
    Some(format!("{sign}{trimmed}e{exponent}"))
}

/// The method of a request or notification.
pub fn method(message: &Value) -> Option<&str> {
    message.get("method").and_then(Value::as_str)
}

/// True for a request (method and id).
pub fn is_request(message: &Value) -> bool {
    method(message).is_some() && message.get("id").is_some()
}

/// True for a response (id, no method). A message holding a member whose name only folds to
/// `method` (`Method`, `METHOD`) is none, whichever side sent it: a peer that matches names
/// regardless of case reads it as a request, so it is never passed on as an answer.
pub fn is_response(message: &Value) -> bool {
    method(message).is_none()
        && message.get("id").is_some()
        && !message.as_object().is_some_and(|object| {
            object
                .keys()
                .any(|name| name != "method" && fold(name) == "method")
        })
}

/// A JSON-RPC error response. Its message, like every text of the proxy's own, has each unsafe
/// character escaped: it quotes names, methods and ids taken from input.
pub fn error_response(id: &Value, code: i64, message: &str) -> Value {
    let message = escape_controls(message);
    with(
        json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}}),
        [("id", id.clone())],
    )
}

/// A tool error result (`isError: true`) the model can read, unsafe characters escaped.
pub fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": escape_controls(text)}], "isError": true})
}

/// A JSON-RPC success response.
pub fn success(id: &Value, result: Value) -> Value {
    with(
        json!({"jsonrpc": "2.0"}),
        [("id", id.clone()), ("result", result)],
    )
}

/// `params` as an object (empty when absent).
pub fn params(message: &Value) -> Map<String, Value> {
    match message.get("params") {
        Some(Value::Object(params)) => params.clone(),
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::sync_channel;

    use super::*;

    #[test]
    fn lines_garbage_and_end() {
        let input = "{\"a\":1}\n\nnot json\n{\"b\":2}";
        let (sender, receiver) = sync_channel(16);
        read_lines(input.as_bytes(), &sender, |line| line);
        drop(sender);
        let lines: Vec<Line> = receiver.iter().collect();
        assert!(matches!(&lines[0], Line::Message(_, text) if text == "{\"a\":1}"));
        assert!(matches!(&lines[1], Line::Garbage(reason) if reason.contains("not JSON")));
        assert!(matches!(&lines[2], Line::Message(v, _) if v["b"] == 2));
        assert!(matches!(&lines[3], Line::Closed(None)));
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn a_line_over_the_limit_is_dropped_keeping_its_id() {
        let big = "x".repeat(MAX_LINE_BYTES);
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":\"{big}\"}}\n{{\"result\":\"{big}\",\"id\":5}}\n{{\"b\":2}}\n"
        );
        let (sender, receiver) = sync_channel(16);
        read_lines(input.as_bytes(), &sender, |line| line);
        drop(sender);
        let lines: Vec<Line> = receiver.iter().collect();
        assert!(matches!(&lines[0], Line::Oversized(Some(id)) if *id == 4));
        // Its id comes after the limit: not known.
        assert!(matches!(&lines[1], Line::Oversized(None)));
        assert!(matches!(&lines[2], Line::Message(v, _) if v["b"] == 2));
    }

    fn key(text: &str) -> Option<String> {
        id_value_key(&mcp_recovery_model::json::from_str(text).unwrap())
    }

    #[test]
    fn ids_are_keyed_by_value() {
        for same in ["1.0", "1e0", "10e-1", "0.1e1", "1E+0", "0.01e2"] {
            assert_eq!(key(same), key("1"), "{same}");
        }
        assert_eq!(key("1"), Some("n:1e0".into()));
        assert_eq!(key("-0"), key("0"));
        assert_eq!(key("0.000e5"), key("0"));
        assert_ne!(key("\"1\""), key("1"));
        assert_eq!(key("\"1\""), Some("s:1".into()));
        assert_eq!(key("1200"), key("12e2"));
        assert_ne!(key("-5"), key("5"));
        // Past f64: every digit counts.
        assert_ne!(
            key("10000000000000000000001"),
            key("10000000000000000000000")
        );
        assert_eq!(key("1e400"), key("10e399"));
        assert_ne!(key("1e400"), key("1e401"));
        for invalid in [
            "1.5",
            "1e-1",
            "null",
            "true",
            "[1]",
            "{}",
            "1e99999999999999999999",
        ] {
            assert_eq!(key(invalid), None, "{invalid}");
        }
    }

    #[test]
    fn ids_past_two_to_the_53_are_inexact() {
        let inexact = |text: &str| inexact_id(&mcp_recovery_model::json::from_str(text).unwrap());
        for exact in [
            "0",
            "-0",
            "1",
            "9007199254740991",
            "-9007199254740991",
            "9.007199254740991e15",
            "90071992547409910e-1",
            "1e15",
            "\"9007199254740993\"",
            "\"x\"",
        ] {
            assert_eq!(inexact(exact), None, "{exact}");
        }
        for past in [
            "9007199254740992",
            "9007199254740993",
            "-9007199254740993",
            "1e16",
            "1e400",
            "10000000000000000000001",
            "0.5",
        ] {
            assert!(inexact(past).is_some(), "{past}");
        }
    }

    #[test]
    fn a_case_variant_of_method_is_no_response() {
        let of = |text: &str| is_response(&mcp_recovery_model::json::from_str(text).unwrap());
        assert!(of(r#"{"id":1,"result":{}}"#));
        assert!(of(r#"{"id":1,"result":{"Method":"x"}}"#));
        assert!(!of(r#"{"id":1,"Method":"tools/call"}"#));
        assert!(!of(r#"{"id":1,"METHOD":"tools/call","result":{}}"#));
        assert!(!of(r#"{"id":1,"method":"tools/call"}"#));
    }

    #[test]
    fn shapes() {
        let shape_of = |text: &str| shape(&mcp_recovery_model::json::from_str(text).unwrap());
        assert_eq!(
            shape_of(r#"{"method":"m","id":2}"#),
            Shape::Request("n:2e0".into())
        );
        assert_eq!(shape_of(r#"{"method":"m"}"#), Shape::Notification);
        assert_eq!(shape_of(r#"{"id":2,"result":{}}"#), Shape::Response);
        for invalid in [
            r#"{"method":"m","id":null}"#,
            r#"{"method":"m","id":0.5}"#,
            "3",
            "\"x\"",
            r#"{"method":1}"#,
            "{}",
        ] {
            assert!(matches!(shape_of(invalid), Shape::Invalid(_)), "{invalid}");
        }
    }
}
