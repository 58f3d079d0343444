//! Reading a POST: its body, at most the listener's cap, and the messages in it, refused as a
//! whole when the proxy cannot forward them.

use mcp_recovery_base::text::escape_controls;
use std::io::Read;

use serde_json::Value;
use tiny_http::Request;

use crate::ambiguous::findings;
use crate::note::note;
use crate::wire::{Shape, error_response, shape};

use super::config::BATCH_REVISION;
use super::http::{Body, header, json_response, plain, rpc_error};

/// Reads a request body of at most `cap` bytes.
pub(super) fn read_body(request: &mut Request, cap: usize) -> Result<Vec<u8>, Body> {
    let too_large = || {
        plain(
            413,
            &format!("the request body is larger than {} bytes", cap),
        )
    };
    if request.body_length().is_some_and(|length| length > cap) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    request
        .as_reader()
        .take(cap as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| plain(400, &format!("reading the request body failed: {e}")))?;
    if body.len() > cap {
        return Err(too_large());
    }
    Ok(body)
}

/// The messages of a POST's body: one, or the elements of a batch (of the one revision with
/// batches). Refused as a whole (the answer to send) when the body is not JSON, an empty batch
/// or a batch of another revision, or holds anything that is not a valid JSON-RPC message or
/// whose member names parsers read differently (see `ambiguous`).
pub(super) fn messages(request: &Request, body: &[u8]) -> Result<Vec<Value>, Body> {
    let parsed = std::str::from_utf8(body).ok().and_then(|text| {
        Some((
            text,
            mcp_recovery_model::json::from_str_noting_repeats(text).ok()?,
        ))
    });
    let Some((text, (value, repeated))) = parsed else {
        return Err(rpc_error(400, -32700, "parse error: the body is not JSON"));
    };
    unambiguous(&value, text, repeated)?;
    let messages = match value {
        Value::Array(batch) if batch.is_empty() => {
            return Err(rpc_error(400, -32600, "an empty batch"));
        }
        Value::Array(batch) => {
            if let Some(version) = header(request, "MCP-Protocol-Version")
                .filter(|version| version.trim() != BATCH_REVISION)
            {
                note(&format!(
                    "refused a batch under protocol {}: batches exist only in {BATCH_REVISION}",
                    escape_controls(&version)
                ));
                return Err(rpc_error(
                    400,
                    -32600,
                    &format!(
                        "a JSON-RPC batch is not allowed: MCP-Protocol-Version names a \
                         revision without batches (only {BATCH_REVISION} has them)"
                    ),
                ));
            }
            batch
        }
        single => vec![single],
    };
    if messages.iter().any(|m| !m.is_object()) {
        return Err(rpc_error(400, -32600, "not a JSON-RPC message"));
    }
    // What the session would refuse with id null (an id that is null, a fraction, an object
    // or a boolean) is refused here, in this POST's own answer.
    if let Some(why) = messages.iter().find_map(|m| match shape(m) {
        Shape::Invalid(why) => Some(why),
        _ => None,
    }) {
        note(&format!("refused an invalid message: {why}"));
        let message = format!("invalid request: {why}; nothing in this POST was forwarded");
        return Err(rpc_error(400, -32600, &message));
    }
    Ok(messages)
}

/// Refuses a body in which some object writes a member name twice or holds names that servers
/// matching names regardless of case read as one (or as one the proxy reads): judged on the
/// text, since the value keeps only one of two members of one name. The answer names the
/// request's id when there is one request and its id is not itself in doubt.
fn unambiguous(value: &Value, text: &str, repeated: bool) -> Result<(), Body> {
    let found = findings(text);
    let why = match found.iter().flatten().next() {
        Some(finding) => finding.ambiguity.describe(),
        None if repeated => "some object writes a member name twice".to_owned(),
        None => return Ok(()),
    };
    note(&format!(
        "refused a POST whose member names are ambiguous: {why}"
    ));
    let id = match (value, found.as_slice()) {
        (Value::Object(_), [Some(finding)]) if !finding.id_unsure => match shape(value) {
            Shape::Request(_) => value.get("id").cloned(),
            _ => None,
        },
        _ => None,
    };
    let message = format!(
        "invalid request: ambiguous member names: {why}; nothing in this POST was forwarded"
    );
    Err(json_response(
        400,
        &error_response(&id.unwrap_or(Value::Null), -32600, &message),
    ))
}
