//! JSON-RPC 2.0 messages as the client sees them while it waits for one response.

use mcp_recovery_model::json::with;
use serde_json::{Value, json};

/// One message received from the server, sorted by what the client must do with it.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// The response to the request being waited for (its `result` or `error` is inside).
    Answer(Value),
    /// A request from the server; the client must reply with this message.
    ServerRequest(Value),
    /// A notification, a response to some other id, or anything else to skip.
    Ignore,
    /// Not a JSON-RPC message at all (the detail says why).
    Invalid(String),
}

/// Sorts one parsed message relative to the request `id` being waited for.
/// Why a message the server wrote means nothing for sure: a member name written twice in one
/// object (a reader takes the first value, this client's parser the last).
pub(crate) const REPEATED: &str =
    "some object in it writes a member name twice, so which value is meant is not known";

/// One message as the server wrote it: `None` when it is not JSON, `Some(Err)` when some object
/// in it writes a member name twice.
pub(crate) fn parse(bytes: &[u8]) -> Option<Result<Value, &'static str>> {
    let text = std::str::from_utf8(bytes).ok()?;
    match mcp_recovery_model::json::from_str_noting_repeats(text).ok()? {
        (value, false) => Some(Ok(value)),
        (_, true) => Some(Err(REPEATED)),
    }
}

pub(crate) fn classify(message: Value, id: &Value) -> Incoming {
    let Value::Object(map) = &message else {
        let kind = if message.is_array() {
            "a JSON array (batch)"
        } else {
            "not a JSON object"
        };
        return Incoming::Invalid(format!("the message is {kind}"));
    };
    let has_outcome = map.contains_key("result") || map.contains_key("error");
    match (map.get("method"), map.get("id")) {
        (Some(Value::String(method)), Some(request_id)) => {
            Incoming::ServerRequest(reply_to_server_request(request_id, method))
        }
        (Some(Value::String(_)), None) => Incoming::Ignore,
        (Some(_), _) => Incoming::Invalid("`method` is not a string".into()),
        (None, Some(response_id)) if has_outcome => {
            // A server that could not parse our request answers with a null id: that error is ours.
            let ours = response_id == id || (response_id.is_null() && map.contains_key("error"));
            if ours {
                Incoming::Answer(message)
            } else {
                Incoming::Ignore
            }
        }
        (None, _) => Incoming::Invalid("neither a request, a notification nor a response".into()),
    }
}

/// The client's reply to a request the server sent while the client was waiting: `ping` gets
/// its empty result; everything else (sampling, roots, elicitation) is declined, since the
/// client declared no capabilities.
fn reply_to_server_request(id: &Value, method: &str) -> Value {
    let reply = if method == "ping" {
        json!({"jsonrpc": "2.0", "result": {}})
    } else {
        json!({
            "jsonrpc": "2.0",
            "error": {"code": -32601, "message": "method not supported by this client"}
        })
    };
    with(reply, [("id", id.clone())])
}

/// A request message.
pub(crate) fn request(id: u64, method: &str, params: Option<Value>) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let (Some(params), Value::Object(map)) = (params, &mut message) {
        map.insert("params".into(), params);
    }
    message
}

/// A notification message.
pub(crate) fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_messages() {
        let id = json!(7);
        let answer = json!({"jsonrpc": "2.0", "id": 7, "result": {}});
        assert!(matches!(classify(answer, &id), Incoming::Answer(_)));
        let other = json!({"jsonrpc": "2.0", "id": 6, "result": {}});
        assert!(matches!(classify(other, &id), Incoming::Ignore));
        let parse_error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700}});
        assert!(matches!(classify(parse_error, &id), Incoming::Answer(_)));
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
        assert!(matches!(classify(log, &id), Incoming::Ignore));
        assert!(matches!(classify(json!([1]), &id), Incoming::Invalid(_)));
        assert!(matches!(
            classify(json!({"id": 7}), &id),
            Incoming::Invalid(_)
        ));
        assert!(matches!(
            classify(json!({"method": 1}), &id),
            Incoming::Invalid(_)
        ));
    }

    #[test]
    fn answers_ping_and_declines_the_rest() {
        let ping = json!({"jsonrpc": "2.0", "id": "s1", "method": "ping"});
        let Incoming::ServerRequest(reply) = classify(ping, &json!(1)) else {
            panic!()
        };
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": "s1", "result": {}}));
        let roots = json!({"jsonrpc": "2.0", "id": 9, "method": "roots/list"});
        let Incoming::ServerRequest(reply) = classify(roots, &json!(1)) else {
            panic!()
        };
        assert_eq!(reply["error"]["code"], -32601);
    }
}
