//! `mcp-recovery approve`: list the calls a proxy holds for a quorum of approvers, or sign and
//! send one approver's decision on one of them. An approval is signed only for the call shown:
//! the call digest is recomputed from the shown session, tool and arguments first.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use mcp_recovery_base::text::{REDACTED, escape_controls};
use mcp_recovery_journal::keys::SecretKey;
use mcp_recovery_model::holds_text;
use mcp_recovery_proxy::{DECISION_TYPE, call_digest, canonical};
use serde_json::{Value, json};

use crate::Failure;
use crate::args::proxy::ApproveArgs;

/// The largest answer read from the proxy.
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;

/// Runs `approve`: exit 0 listed or counted, 1 the proxy refused the decision (why is printed)
/// or an approval was not signed because the call shown is not the call its digest names (why
/// is said on stderr), 2 the proxy could not be reached or the key read.
pub fn run(args: &ApproveArgs) -> Result<ExitCode, Failure> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(args.timeout.max(1))))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let (base, pending) = match (&args.url, &args.pending) {
        (Some(url), _) => {
            let base = endpoint(url);
            let (status, listing) = exchange(&agent, &base, None)?;
            if status != 200 {
                return Err(Failure::Usage(format!(
                    "{} answered HTTP {status}",
                    escape_controls(&base)
                )));
            }
            let pending = listing["pending"].as_array().cloned().unwrap_or_default();
            (Some(base), pending)
        }
        (None, Some(file)) => (None, read_pending(file)?),
        (None, None) => unreachable!("clap requires --url or --pending"),
    };
    let at = match (&base, &args.pending) {
        (Some(base), _) => escape_controls(base).into_owned(),
        (None, file) => {
            crate::inputs::Input::named(file.as_deref().unwrap_or("-".as_ref())).display()
        }
    };
    let (Some(request), Some(key), Some(name)) = (&args.request, &args.key, &args.name) else {
        print_pending(&pending)?;
        return Ok(ExitCode::SUCCESS);
    };
    let Some(found) = pending
        .iter()
        .find(|p| p["request"].as_str() == Some(request))
    else {
        return Err(Failure::Usage(format!(
            "no request {} is pending at {at}",
            escape_controls(request),
        )));
    };
    for member in ["callDigest", "expires"] {
        if !found[member].is_string() {
            return Err(Failure::Usage(format!(
                "the pending request {} at {at} has no string `{member}`",
                escape_controls(request)
            )));
        }
    }
    // A deny is signed as asked: it can only stop the pending call, whatever that is.
    if !args.deny {
        match shown_call(found) {
            Shown::Bound => {}
            // The proxy's own listing: what it shows redacted is what it holds.
            Shown::Redacted if base.is_some() => eprintln!(
                "note: the arguments of request {} are shown with a secret replaced by \
                 {REDACTED}; the call digest cannot be recomputed from them, so this approval \
                 rests on the proxy at {at} showing the call it holds",
                escape_controls(request)
            ),
            unbound => {
                eprintln!(
                    "error: not signed: the pending request {} at {at} {}",
                    escape_controls(request),
                    unbound.why()
                );
                return Ok(ExitCode::from(1));
            }
        }
    }
    let secret = SecretKey::read(key).map_err(|e| Failure::Usage(e.to_string()))?;
    let statement = json!({
        "type": DECISION_TYPE,
        "request": request,
        "call": found["callDigest"],
        "decision": if args.deny { "deny" } else { "approve" },
        "expires": found["expires"],
        "approver": name,
    });
    let signature = secret.sign(&canonical(&statement));
    let body = json!({"statement": statement, "key": secret.public().id(),
        "signature": signature});
    let Some(base) = base.filter(|_| !args.print) else {
        println!("{}", mcp_recovery_base::text::json_inert(&body.to_string()));
        return Ok(ExitCode::SUCCESS);
    };
    let url = format!("{base}/{request}");
    let (status, answer) = exchange(&agent, &url, Some(&body))?;
    let said = answer["message"]
        .as_str()
        .or_else(|| answer["error"].as_str())
        .unwrap_or_default();
    if status == 200 {
        println!("{}", escape_controls(said));
        Ok(ExitCode::SUCCESS)
    } else {
        println!("refused (HTTP {status}): {}", escape_controls(said));
        Ok(ExitCode::from(1))
    }
}

/// How the call a pending request shows stands to the call its digest names.
enum Shown {
    /// The shown session, tool and arguments recompute the digest.
    Bound,
    /// They do not, and the arguments hold a secret replaced by [`REDACTED`].
    Redacted,
    /// They do not, and nothing was redacted: the call shown is not the one the digest names.
    Other,
    /// No session, tool or arguments are shown.
    Missing,
}

impl Shown {
    fn why(&self) -> String {
        match self {
            Shown::Bound => String::new(),
            Shown::Redacted => format!(
                "shows its arguments with a secret replaced by {REDACTED}, so the call its \
                 digest names cannot be recomputed from what is shown and an approval would not \
                 be bound to it; review the call in the listing of the proxy's approvals \
                 endpoint (`approve --url URL`), or deny it"
            ),
            Shown::Other => "shows a call that is not the call its digest names (its session, \
                             tool or arguments are not those of the call the proxy holds), so \
                             an approval would sign another call than the one shown"
                .into(),
            Shown::Missing => "does not show the session, tool and arguments of its call, so \
                               the call its digest names cannot be checked against what is shown"
                .into(),
        }
    }
}

/// Whether the call `pending` shows (its `session`, `tool` and `arguments`) is the call its
/// `callDigest` names, the digest recomputed as the proxy computes it.
fn shown_call(pending: &Value) -> Shown {
    let (Some(session), Some(tool), Some(arguments)) = (
        pending["session"].as_str(),
        pending["tool"].as_str(),
        pending["arguments"].as_object(),
    ) else {
        return Shown::Missing;
    };
    if pending["callDigest"].as_str() == Some(call_digest(session, tool, arguments).as_str()) {
        Shown::Bound
    } else if holds_text(&pending["arguments"], REDACTED) {
        Shown::Redacted
    } else {
        Shown::Other
    }
}

/// The pending request(s) of a file: one request object, an array of them, or a `GET
/// /approvals` listing.
fn read_pending(file: &std::path::Path) -> Result<Vec<Value>, Failure> {
    let input = crate::inputs::Input::named(file);
    let bytes = input.read()?;
    let shown = input.display();
    let value = mcp_recovery_model::json::from_slice(&bytes)
        .map_err(|e| Failure::Usage(format!("{shown}: not JSON: {e}")))?;
    match value {
        Value::Object(mut listing) if listing.contains_key("pending") => {
            match listing.remove("pending") {
                Some(Value::Array(pending)) => Ok(pending),
                _ => Err(Failure::Usage(format!("{shown}: /pending is not an array"))),
            }
        }
        request @ Value::Object(_) => Ok(vec![request]),
        Value::Array(pending) => Ok(pending),
        _ => Err(Failure::Usage(format!(
            "{shown}: not a pending request (an object with `request`, `callDigest` and `expires`)"
        ))),
    }
}

fn endpoint(url: &str) -> String {
    let url = url.trim_end_matches('/');
    if url.ends_with("/approvals") {
        url.to_owned()
    } else {
        format!("{url}/approvals")
    }
}

/// GETs `url` (or POSTs `body` to it); the status and the JSON answer.
fn exchange(agent: &ureq::Agent, url: &str, body: Option<&Value>) -> Result<(u16, Value), Failure> {
    let sent = match body {
        Some(body) => agent
            .post(url)
            .header("Content-Type", "application/json")
            .send(body.to_string().as_bytes()),
        None => agent.get(url).call(),
    };
    let mut response = sent.map_err(|e| {
        Failure::Usage(format!(
            "cannot reach {}: {}",
            escape_controls(url),
            escape_controls(&e.to_string())
        ))
    })?;
    let status = response.status().as_u16();
    let mut text = String::new();
    response
        .body_mut()
        .as_reader()
        .take(MAX_ANSWER_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| {
            Failure::Usage(format!(
                "reading the answer of {} failed: {e}",
                escape_controls(url)
            ))
        })?;
    let value = mcp_recovery_model::json::from_str(&text).map_err(|e| {
        Failure::Usage(format!(
            "{} did not answer JSON ({status}): {e}",
            escape_controls(url)
        ))
    })?;
    Ok((status, value))
}

/// One block per pending request; every value is escaped JSON text or an escaped string.
fn print_pending(pending: &[Value]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    if pending.is_empty() {
        writeln!(out, "no request is pending").map_err(Failure::Write)?;
    }
    for request in pending {
        let text = |name: &str| match &request[name] {
            Value::String(text) => escape_controls(text).into_owned(),
            other => escape_controls(&other.to_string()).into_owned(),
        };
        let block = format!(
            "request {}\n  tool: {}\n  arguments: {}\n  class: {}\n  compensation: {}\n  \
             session: {}\n  expires: {}\n  quorum: {} of {}\n",
            text("request"),
            text("tool"),
            text("arguments"),
            text("class"),
            text("compensation"),
            text("session"),
            text("expires"),
            escape_controls(&request["quorum"]["need"].to_string()),
            escape_controls(&request["quorum"]["of"].to_string()),
        );
        out.write_all(block.as_bytes()).map_err(Failure::Write)?;
    }
    Ok(())
}
