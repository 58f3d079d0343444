//! Newline-delimited JSON-RPC: bounded line reading on a thread, and the message shapes the
//! proxy looks at.

use std::io::{BufRead, Read};
use std::sync::mpsc::SyncSender;

use mcp_recovery_model::json::with;
use serde_json::{Map, Value, json};

/// Largest line accepted from either side (64 MiB); a longer one is dropped with a warning.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One line from a peer.
#[derive(Debug)]
pub enum Line {
    /// A JSON value and the exact text it came from (forwarded as is).
    Message(Value, String),
    /// Not JSON, too long or not UTF-8: what was wrong (the text is never echoed).
    Garbage(String),
    /// The peer closed the stream (or reading failed: the reason).
    Closed(Option<String>),
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
            Ok(_) if buffer.len() > MAX_LINE_BYTES => Line::Garbage(format!(
                "a line longer than {} MiB was dropped",
                MAX_LINE_BYTES / (1024 * 1024)
            )),
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

fn parse_line(bytes: &[u8]) -> Line {
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

/// The `id` of a request or response, as a map key (`None` for notifications).
pub fn id_key(message: &Value) -> Option<String> {
    message.get("id").map(Value::to_string)
}

/// The method of a request or notification.
pub fn method(message: &Value) -> Option<&str> {
    message.get("method").and_then(Value::as_str)
}

/// True for a request (method and id).
pub fn is_request(message: &Value) -> bool {
    method(message).is_some() && message.get("id").is_some()
}

/// True for a response (id, no method).
pub fn is_response(message: &Value) -> bool {
    method(message).is_none() && message.get("id").is_some()
}

/// A JSON-RPC error response.
pub fn error_response(id: &Value, code: i64, message: &str) -> Value {
    with(
        json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}}),
        [("id", id.clone())],
    )
}

/// A tool error result (`isError: true`) the model can read.
pub fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
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
}
