//! Protocol revisions and how the client settles on one with a server.
//!
//! Revision 2026-07-28 has no `initialize`: every request names its version and the client's
//! capabilities in `params._meta`, and `server/discover` tells what the server supports. Earlier
//! revisions (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05) open a session with the
//! `initialize` handshake. The client asks `server/discover` first and falls back to the
//! handshake when the server does not know that method.

use serde_json::{Map, Value, json};

use crate::error::ClientError;
use mcp_recovery_base::text::excerpt;

use crate::text::EXCERPT_CHARS;
use crate::versions::{HANDSHAKE_VERSIONS, LATEST_VERSION};

/// JSON-RPC code of `HeaderMismatchError`.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// JSON-RPC code of `UnsupportedProtocolVersionError`.
pub(crate) const UNSUPPORTED_VERSION: i64 = -32022;

/// How a connection settled its protocol revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Negotiation {
    /// `server/discover`; every request carries the version in `_meta` (2026-07-28).
    Discover,
    /// The `initialize` handshake (2025-11-25 and earlier).
    Initialize,
}

impl Negotiation {
    /// How verbose output names it.
    pub fn describe(self) -> &'static str {
        match self {
            Negotiation::Discover => "server/discover, version in each request's _meta",
            Negotiation::Initialize => "initialize handshake",
        }
    }
}

/// The client's identity, as both `clientInfo` and `io.modelcontextprotocol/clientInfo`.
pub(crate) fn client_info() -> Value {
    json!({"name": "mcp-recovery", "version": env!("CARGO_PKG_VERSION")})
}

/// `params` with the per-request `_meta` of 2026-07-28 merged in (an existing `_meta` keeps
/// its other members).
pub(crate) fn with_request_meta(params: Option<Value>, version: &str) -> Value {
    let mut params = match params {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            json!(version),
        );
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            json!({}),
        );
        meta.insert("io.modelcontextprotocol/clientInfo".into(), client_info());
    }
    Value::Object(params)
}

/// The `supportedVersions` of a `server/discover` result (each escaped and bounded).
pub(crate) fn supported_versions(result: &Value) -> Result<Vec<String>, String> {
    match result.get("supportedVersions") {
        Some(Value::Array(items)) => items
            .iter()
            .take(64)
            .map(|item| match item {
                Value::String(version) => Ok(excerpt(version, EXCERPT_CHARS)),
                other => Err(format!(
                    "`supportedVersions` holds a non-string: {}",
                    excerpt(&other.to_string(), EXCERPT_CHARS)
                )),
            })
            .collect(),
        Some(_) => Err("`supportedVersions` is not an array".into()),
        None => Err("the result has no `supportedVersions`".into()),
    }
}

/// What the client does after `server/discover` or a version refusal named the server's
/// versions.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Keep speaking 2026-07-28.
    Latest,
    /// Fall back to the handshake with this version.
    Handshake(&'static str),
}

/// The newest revision both sides support.
pub(crate) fn choose(supported: &[String]) -> Option<Choice> {
    if supported.iter().any(|v| v == LATEST_VERSION) {
        return Some(Choice::Latest);
    }
    HANDSHAKE_VERSIONS
        .iter()
        .find(|known| supported.iter().any(|v| v == *known))
        .map(|known| Choice::Handshake(known))
}

/// Whether a failed `server/discover` means "this server predates 2026-07-28", so that the
/// `initialize` handshake should be tried: any JSON-RPC error (method not found, invalid
/// request, "not initialized") or an HTTP refusal of the request as such.
pub(crate) fn predates_discover(error: &ClientError) -> bool {
    match error {
        ClientError::Rpc { .. } => true,
        ClientError::HttpStatus { status, .. } => matches!(status, 400 | 404 | 405 | 406 | 415),
        _ => false,
    }
}

/// A JSON-RPC error object turned into the client's error for `method`; `requested` is the
/// version the request named.
pub(crate) fn rpc_error(method: &str, requested: &str, error: &Value) -> ClientError {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = excerpt(
        error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)"),
        2 * EXCERPT_CHARS,
    );
    let data = error.get("data");
    match code {
        UNSUPPORTED_VERSION => ClientError::UnsupportedProtocolVersion {
            method: method.to_string(),
            requested: data
                .and_then(|d| d.get("requested"))
                .and_then(Value::as_str)
                .map_or_else(|| requested.to_string(), |v| excerpt(v, EXCERPT_CHARS)),
            supported: data
                .map(|d| supported_versions(&json!({"supportedVersions": d.get("supported")})))
                .and_then(Result::ok)
                .unwrap_or_default(),
        },
        HEADER_MISMATCH => ClientError::HeaderMismatch {
            method: method.to_string(),
            message,
        },
        _ => ClientError::Rpc {
            method: method.to_string(),
            code,
            message,
            data: data.cloned().map(Box::new),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_merged_into_params() {
        let params = with_request_meta(Some(json!({"cursor": "c", "_meta": {"k": 1}})), "v");
        assert_eq!(params["cursor"], "c");
        assert_eq!(params["_meta"]["k"], 1);
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "v"
        );
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        let bare = with_request_meta(None, "v");
        assert_eq!(
            bare["_meta"]["io.modelcontextprotocol/clientInfo"]["name"],
            "mcp-recovery"
        );
    }

    #[test]
    fn the_newest_common_version_wins() {
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            choose(&list(&["2025-06-18", "2026-07-28"])),
            Some(Choice::Latest)
        );
        assert_eq!(
            choose(&list(&["2025-03-26", "2025-06-18"])),
            Some(Choice::Handshake("2025-06-18"))
        );
        assert_eq!(choose(&list(&["2099-01-01"])), None);
    }

    #[test]
    fn version_errors_get_their_own_variants() {
        let refused = json!({"code": -32022, "message": "no",
                             "data": {"requested": "2026-07-28", "supported": ["2025-06-18"]}});
        let error = rpc_error("server/discover", "2026-07-28", &refused);
        assert_eq!(
            error.to_string(),
            "no protocol version in common: `server/discover` asked for 2026-07-28, the server \
             supports 2025-06-18; this client speaks 2026-07-28, 2025-11-25, 2025-06-18, \
             2025-03-26, 2024-11-05"
        );
        let mismatch = json!({"code": -32020, "message": "header says 2025-11-25"});
        let error = rpc_error("tools/list", "2026-07-28", &mismatch);
        assert!(
            matches!(error, ClientError::HeaderMismatch { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("header says 2025-11-25"));
    }
}
