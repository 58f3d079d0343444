//! The approvers' webhooks: a pending request posted to where they are told of it, and the
//! decisions fetched from where they leave them.

use mcp_recovery_base::text::escape_controls;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::policy::{Notify, NotifyFormat};
use crate::slack;

/// The largest decision body read.
pub(crate) const MAX_DECISION_BYTES: usize = 16 * 1024;

/// The most decisions read from one fetch of a decisions URL, and the largest answer.
const MAX_FETCHED_DECISIONS: usize = 64;
const MAX_FETCHED_BYTES: usize = MAX_FETCHED_DECISIONS * MAX_DECISION_BYTES;

/// POSTs `request` (as `GET /approvals` lists it) to the webhook; a failure is said on stderr.
pub fn notify(notify: &Notify, request: &Map<String, Value>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(notify.timeout_secs.unwrap_or(5))))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let body = match notify.format {
        Some(NotifyFormat::Slack) => slack::message(request),
        Some(NotifyFormat::Json) | None => Value::Object(request.clone()),
    }
    .to_string();
    let failed = match agent
        .post(&notify.url)
        .header("Content-Type", "application/json")
        .send(body.as_bytes())
    {
        Ok(response) if response.status().is_success() => None,
        Ok(response) => Some(format!("HTTP {}", response.status().as_u16())),
        // The error would name the URL, which may carry a token: only its kind is said.
        Err(ureq::Error::Timeout(_)) => Some("timed out".into()),
        Err(_) => Some("the webhook could not be reached".into()),
    };
    if let Some(why) = failed {
        eprintln!(
            "mcp-recovery proxy: notifying the approvers of request {} failed: {}",
            request["request"].as_str().unwrap_or_default(),
            escape_controls(&why)
        );
    }
}

/// The decisions `url` offers: its answer is one decision or an array of them, and 404 is none.
/// The URL is never said (it may carry a token).
pub(crate) fn fetch_decisions(agent: &ureq::Agent, url: &str) -> Result<Vec<Value>, String> {
    use std::io::Read;
    let mut response = match agent.get(url).call() {
        Ok(response) => response,
        Err(ureq::Error::Timeout(_)) => return Err("fetching decisions timed out".into()),
        Err(_) => return Err("the decisions URL could not be reached".into()),
    };
    match response.status().as_u16() {
        200 => {}
        404 => return Ok(Vec::new()),
        status => return Err(format!("the decisions URL answered HTTP {status}")),
    }
    let mut body = Vec::new();
    response
        .body_mut()
        .as_reader()
        .take(MAX_FETCHED_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|_| "reading the fetched decisions failed".to_owned())?;
    if body.len() > MAX_FETCHED_BYTES {
        return Err(format!(
            "the fetched decisions are more than {MAX_FETCHED_BYTES} bytes"
        ));
    }
    match serde_json::from_slice(&body) {
        Ok(Value::Array(decisions)) if decisions.len() <= MAX_FETCHED_DECISIONS => Ok(decisions),
        Ok(Value::Array(_)) => Err(format!(
            "more than {MAX_FETCHED_DECISIONS} decisions were fetched at once"
        )),
        Ok(decision @ Value::Object(_)) => Ok(vec![decision]),
        _ => Err("the fetched answer is neither a decision nor an array of them".into()),
    }
}
