//! Calls that need a quorum of approvers: each waits on the [`Board`] as a pending request until
//! enough distinct approvers have sent a valid signed approval, one has sent a valid signed
//! deny, or the approval timeout has passed (a deny). Decisions arrive over HTTP
//! (`GET /approvals`, `POST /approvals/{request}`) or from a decisions URL the policy names, as
//! signed statements (spec/journal.md), or as Slack button presses signed with the Slack app's
//! signing secret (`POST /approvals/slack`).

use mcp_recovery_base::text::escape_controls;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

pub use mcp_recovery_journal::canonical;
use mcp_recovery_journal::keys::PublicKey;
pub use mcp_recovery_journal::time::{parse_rfc3339, rfc3339, unix_now};
use mcp_recovery_model::json::with;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::policy::{ApprovalRule, Fetch, MAX_WAIT_SECS, PolicyFile};
use crate::slack::{self, SlackHeaders};
use crate::webhooks;
use crate::wire::members;

/// The `type` of a decision statement.
pub const DECISION_TYPE: &str = "mcp-recovery/decision";

/// The pending requests of one proxy and the approvers who may decide them.
#[derive(Debug)]
pub struct Board {
    approvers: HashMap<String, PublicKey>,
    /// Slack user id to approver name.
    slack_users: HashMap<String, String>,
    /// The Slack signing secrets of the webhooks whose environment variables are set.
    slack_secrets: Vec<Vec<u8>>,
    open: Mutex<HashMap<String, Open>>,
    changed: Condvar,
}

/// A pending request.
#[derive(Debug)]
struct Open {
    /// What `GET /approvals` shows of it (arguments already redacted).
    shown: Map<String, Value>,
    digest: String,
    need: usize,
    of: Vec<String>,
    counted: Vec<Value>,
    denied: Option<String>,
}

/// What a pending call is: everything an approver is shown, and the arguments as sent.
#[derive(Debug, Clone)]
pub struct Pending<'a> {
    /// The session the call belongs to.
    pub session: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// The arguments as the server would get them (the call digest covers these).
    pub arguments: &'a Map<String, Value>,
    /// The arguments as shown (secrets replaced).
    pub shown_arguments: Value,
    /// The tool's class.
    pub class: &'a str,
    /// The compensation that would undo the call (`null` when none is declared), or, for a
    /// compensating call, what it undoes.
    pub compensation: Value,
}

impl Pending<'_> {
    /// The call digest of the request. When what approvers are shown differs from what was sent
    /// (a secret was replaced), nobody outside can recompute it anyway, so it is salted with 16
    /// random bytes the proxy keeps to itself: a digest shown to approvers and journaled is then
    /// no way to test guesses of the secret.
    fn digest(&self) -> Result<String, String> {
        let (session, tool, arguments) = (self.session, self.tool, self.arguments);
        if matches!(&self.shown_arguments, Value::Object(shown) if shown == arguments) {
            return Ok(call_digest(session, tool, arguments));
        }
        let salt = random_hex()?;
        let call = with(
            json!({"session": session, "tool": tool, "salt": salt}),
            [("arguments", Value::Object(arguments.clone()))],
        );
        Ok(format!("sha256:{}", hex(&Sha256::digest(canonical(&call)))))
    }
}

/// How a quorum ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// True when the quorum approved.
    pub approved: bool,
    /// Why, in words.
    pub reason: String,
    /// The members the approval record carries: `approvalRequest`, `callDigest`, `quorum`, `decisions`.
    pub record: Map<String, Value>,
}

/// A decision the board refused: an HTTP status and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 400, 403, 404 or 409.
    pub status: u16,
    /// Why, in words.
    pub reason: String,
}

fn refuse(status: u16, reason: impl Into<String>) -> Refusal {
    Refusal {
        status,
        reason: reason.into(),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Board {
    /// The board for `file`'s approvers; `None` when the policy has no `[[approvals]]`.
    pub fn new(file: &PolicyFile) -> Option<Arc<Board>> {
        if file.approvals.is_empty() {
            return None;
        }
        let approvers = file
            .approvers
            .iter()
            .filter_map(|a| Some((a.name.clone(), PublicKey::from_hex(&a.key).ok()?)))
            .collect();
        let slack_users = file
            .approvers
            .iter()
            .filter_map(|a| Some((a.slack_user.clone()?, a.name.clone())))
            .collect();
        let slack_secrets = file
            .notifies()
            .filter_map(|n| std::env::var_os(n.signing_secret_env.as_ref()?))
            .filter(|s| !s.is_empty())
            .map(|s| s.into_encoded_bytes())
            .collect();
        Some(Arc::new(Board {
            approvers,
            slack_users,
            slack_secrets,
            open: Mutex::new(HashMap::new()),
            changed: Condvar::new(),
        }))
    }

    /// Offers `pending` to the approvers of `rule` and waits at most `timeout` for the quorum,
    /// polling `fetch` for decisions meanwhile when given. `offered` is told the request (as
    /// `GET /approvals` lists it) once it can be decided. A `timeout` past the longest wait a
    /// policy may set (7 days) is that longest.
    pub fn decide(
        self: &Arc<Self>,
        rule: &ApprovalRule,
        fetch: Option<&Fetch>,
        pending: &Pending<'_>,
        timeout: Duration,
        offered: impl FnOnce(&Map<String, Value>),
    ) -> Outcome {
        let id = match random_hex() {
            Ok(id) => id,
            Err(why) => return self.ended(None, rule, String::new(), false, why),
        };
        let timeout = timeout.min(Duration::from_secs(MAX_WAIT_SECS));
        let digest = match pending.digest() {
            Ok(digest) => digest,
            Err(why) => return self.ended(None, rule, String::new(), false, why),
        };
        // The wait ends when the approvers are told it does, however long telling them takes.
        let now = Instant::now();
        let deadline = now.checked_add(timeout).unwrap_or(now);
        let expires = rfc3339(unix_now().saturating_add(timeout.as_secs()));
        let shown = members(with(
            json!({"request": id, "tool": pending.tool, "class": pending.class,
                "session": pending.session, "expires": expires, "callDigest": digest,
                "quorum": {"need": rule.quorum, "of": rule.of}}),
            [
                ("arguments", pending.shown_arguments.clone()),
                ("compensation", pending.compensation.clone()),
            ],
        ));
        lock(&self.open).insert(
            id.clone(),
            Open {
                shown: shown.clone(),
                digest: digest.clone(),
                need: rule.quorum,
                of: rule.of.clone(),
                counted: Vec::new(),
                denied: None,
            },
        );
        offered(&shown);
        if let Some(fetch) = fetch {
            let (board, fetch, id) = (Arc::clone(self), fetch.clone(), id.clone());
            std::thread::spawn(move || board.poll(&fetch, &id, deadline));
        }
        let mut open = lock(&self.open);
        while let Some(request) = open.get(&id) {
            if request.denied.is_some() || request.counted.len() >= request.need {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            open = self
                .changed
                .wait_timeout(open, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let request = open.remove(&id);
        drop(open);
        let (approved, reason) = match &request {
            Some(Open {
                denied: Some(by), ..
            }) => (false, format!("denied by {by}")),
            Some(r) if r.counted.len() >= r.need => (
                true,
                format!("approved by {} of {}", r.counted.len(), r.of.len()),
            ),
            Some(r) => (
                false,
                format!(
                    "{} of the {} approvals needed arrived within {} s",
                    r.counted.len(),
                    r.need,
                    timeout.as_secs()
                ),
            ),
            None => (false, "the request was lost".into()),
        };
        let counted = request.map(|r| r.counted).unwrap_or_default();
        let mut outcome = self.ended(Some(&id), rule, digest, approved, reason);
        outcome
            .record
            .insert("decisions".into(), Value::Array(counted));
        outcome
    }

    fn ended(
        &self,
        id: Option<&str>,
        rule: &ApprovalRule,
        digest: String,
        approved: bool,
        reason: String,
    ) -> Outcome {
        let mut record = Map::new();
        if let Some(id) = id {
            record.insert("approvalRequest".into(), Value::from(id));
            record.insert("callDigest".into(), Value::from(digest));
        }
        record.insert("quorum".into(), json!({"need": rule.quorum, "of": rule.of}));
        record.insert("decisions".into(), Value::Array(Vec::new()));
        Outcome {
            approved,
            reason,
            record,
        }
    }

    /// The pending requests, oldest expiry first.
    pub fn list(&self) -> Vec<Value> {
        let mut listed: Vec<Value> = lock(&self.open)
            .values()
            .map(|o| Value::Object(o.shown.clone()))
            .collect();
        listed.sort_by(|a, b| a["expires"].as_str().cmp(&b["expires"].as_str()));
        listed
    }

    /// Counts the signed decision `body` for request `id` (`via` says how it came), or says
    /// why it is refused; a refused decision is counted nowhere.
    pub fn submit(&self, id: &str, body: &[u8], via: &str) -> Result<String, Refusal> {
        let decision: Value = serde_json::from_slice(body)
            .map_err(|e| refuse(400, format!("the body is not JSON: {e}")))?;
        self.submit_value(id, &decision, via)
    }

    /// Counts the signed `decision` for request `id`, or says why it is refused.
    fn submit_value(&self, id: &str, decision: &Value, via: &str) -> Result<String, Refusal> {
        let (statement, key, signature) = match (
            decision.get("statement"),
            decision.get("key").and_then(Value::as_str),
            decision.get("signature").and_then(Value::as_str),
        ) {
            (Some(Value::Object(statement)), Some(key), Some(signature)) => {
                (statement, key, signature)
            }
            _ => {
                return Err(refuse(
                    400,
                    "a decision is {\"statement\": {...}, \"key\": KEY_ID, \"signature\": HEX}",
                ));
            }
        };
        let text = |name: &str| statement.get(name).and_then(Value::as_str);
        let names = ["type", "request", "call", "decision", "expires", "approver"];
        if statement.len() != names.len() || names.iter().any(|n| text(n).is_none()) {
            return Err(refuse(
                400,
                "the statement has exactly the string members type, request, call, decision, expires and approver",
            ));
        }
        let member = |name: &str| text(name).unwrap_or_default();
        if member("type") != DECISION_TYPE {
            return Err(refuse(
                400,
                format!("the statement's type is not {DECISION_TYPE}"),
            ));
        }
        let verdict = member("decision");
        if verdict != "approve" && verdict != "deny" {
            return Err(refuse(400, "the decision is neither approve nor deny"));
        }
        if member("request") != id {
            return Err(refuse(400, "the statement is for another request"));
        }
        let expires = parse_rfc3339(member("expires"))
            .ok_or_else(|| refuse(400, "expires is not an RFC 3339 UTC time"))?;
        if expires <= unix_now() {
            return Err(refuse(400, "the decision has expired"));
        }
        let approver = member("approver");
        let shown = escape_controls(approver);
        let public = self
            .approvers
            .get(approver)
            .ok_or_else(|| refuse(403, format!("'{shown}' is not an approver of the policy")))?;
        if public.id() != key {
            return Err(refuse(
                403,
                format!("the key is not the one the policy gives '{shown}'"),
            ));
        }
        if !public.verify(&canonical(&Value::Object(statement.clone())), signature) {
            return Err(refuse(403, "the signature does not verify"));
        }
        let entry = with(
            json!({"approver": approver, "via": via, "key": key, "signature": signature,
                "at": rfc3339(unix_now())}),
            [("statement", Value::Object(statement.clone()))],
        );
        self.count(id, approver, verdict, Some(member("call")), entry)
    }

    /// Counts a Slack interaction (`body` as posted, `headers` its signature headers), or says
    /// why it is refused; a refused interaction is counted nowhere.
    pub fn submit_slack(&self, headers: &SlackHeaders, body: &[u8]) -> Result<String, Refusal> {
        let mut checked = Err("Slack interactions need approvals-notify.signing-secret-env");
        for secret in &self.slack_secrets {
            checked = Ok(slack::verify(secret, headers, body, unix_now()));
            if checked == Ok(Ok(())) {
                break;
            }
        }
        checked
            .map_err(|why| refuse(404, why))?
            .map_err(|why| refuse(401, why))?;
        let press = slack::parse(body).map_err(|why| refuse(400, why))?;
        let approver = self.slack_users.get(&press.user).ok_or_else(|| {
            refuse(
                403,
                format!(
                    "Slack user '{}' is not an approver of the policy",
                    escape_controls(&press.user)
                ),
            )
        })?;
        let entry = json!({"approver": approver, "via": "slack", "slackUser": press.user,
            "decision": press.verdict, "request": press.request,
            "slackTimestamp": headers.timestamp, "slackSignature": headers.signature,
            "bodySha256": format!("sha256:{}", hex(&Sha256::digest(body))),
            "at": rfc3339(unix_now())});
        self.count(&press.request, approver, press.verdict, None, entry)
    }

    /// Counts `approver`'s `verdict` on request `id` (whose call digest must be `digest`, when
    /// given) as `entry`, once per approver.
    fn count(
        &self,
        id: &str,
        approver: &str,
        verdict: &str,
        digest: Option<&str>,
        entry: Value,
    ) -> Result<String, Refusal> {
        let shown = escape_controls(approver);
        let mut open = lock(&self.open);
        let request = open
            .get_mut(id)
            .ok_or_else(|| refuse(404, "no such request is pending (decided or expired)"))?;
        if digest.is_some_and(|d| d != request.digest) {
            return Err(refuse(400, "the call digest is not the pending call's"));
        }
        if !request.of.iter().any(|n| n == approver) {
            return Err(refuse(
                403,
                format!("'{shown}' is not one of this request's approvers"),
            ));
        }
        let counted = |d: &Value| d["approver"].as_str() == Some(approver);
        if request.counted.iter().any(counted) {
            return Err(refuse(409, format!("'{shown}' has decided already")));
        }
        request.counted.push(entry);
        if verdict == "deny" {
            request.denied = Some(format!("'{shown}'"));
        }
        drop(open);
        self.changed.notify_all();
        Ok(format!("counted {verdict} by '{shown}'"))
    }

    /// Fetches `fetch.url` for decisions on request `id` until it is decided or `deadline`
    /// passes, counting each valid one as `via: "url"`. A decision counted already, or one for
    /// a request no longer pending, is passed over; any other refusal is said on stderr once.
    fn poll(&self, fetch: &Fetch, id: &str, deadline: Instant) {
        let url = fetch.url.replace("{request}", id);
        let timeout = Duration::from_secs(fetch.timeout_secs.unwrap_or(5));
        let interval = Duration::from_secs(fetch.interval_secs.unwrap_or(2));
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .build()
            .into();
        let mut said = std::collections::HashSet::new();
        let mut say = |why: String| {
            if said.insert(why.clone()) {
                eprintln!(
                    "mcp-recovery proxy: a decision fetched for request {id} is not counted: {}",
                    escape_controls(&why)
                );
            }
        };
        while Instant::now() < deadline && self.is_open(id) {
            match webhooks::fetch_decisions(&agent, &url) {
                Ok(decisions) => {
                    for decision in &decisions {
                        match self.submit_value(id, decision, "url") {
                            Ok(_) => {}
                            Err(r) if r.status == 404 || r.status == 409 => {}
                            Err(r) => say(r.reason),
                        }
                    }
                }
                Err(why) => say(why),
            }
            let open = lock(&self.open);
            let now = Instant::now();
            if now >= deadline || !open.contains_key(id) {
                break;
            }
            let wait = interval.min(deadline - now);
            drop(self.changed.wait_timeout(open, wait));
        }
    }

    fn is_open(&self, id: &str) -> bool {
        lock(&self.open).contains_key(id)
    }
}

/// `sha256:` + the hex sha256 of the canonical form of
/// `{"session": SESSION, "tool": NAME, "arguments": ARGUMENTS}`.
pub fn call_digest(session: &str, tool: &str, arguments: &Map<String, Value>) -> String {
    let call = with(
        json!({"session": session, "tool": tool}),
        [("arguments", Value::Object(arguments.clone()))],
    );
    format!("sha256:{}", hex(&Sha256::digest(canonical(&call))))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// 16 random bytes in hex: a request id, or a salt.
fn random_hex() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("cannot draw random bytes: {e}"))?;
    Ok(hex(&bytes))
}
