//! The policy: which calls run, which are refused, which wait for a person, and what a failure
//! does. Read from a TOML file (`spec/schema/policy.schema.json`) and overridden by flags.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::classify::Class;
use crate::names::glob_match;

/// What to do with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Forward it.
    Allow,
    /// Refuse it: the client gets a tool error result, the server never sees the call.
    Deny,
    /// Show its impact and wait for an approval (terminal or `--approve-with`).
    Ask,
}

impl Action {
    /// The spelling in files and journals.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny => "deny",
            Action::Ask => "ask",
        }
    }

    /// True when `self` lets less through than `other` (deny, then ask, then allow).
    pub fn is_stricter_than(self, other: Action) -> bool {
        let rank = |action| match action {
            Action::Allow => 0,
            Action::Ask => 1,
            Action::Deny => 2,
        };
        rank(self) > rank(other)
    }
}

/// What a failed call (`isError: true`, a JSON-RPC error or a timeout) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OnFailure {
    /// Compensate the session's completed calls, newest first.
    Rollback,
    /// Show the rollback plan and roll back only when approved.
    Ask,
    /// Journal the failure and do nothing else.
    Record,
}

impl OnFailure {
    /// The spelling in files and journals.
    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Rollback => "rollback",
            OnFailure::Ask => "ask",
            OnFailure::Record => "record",
        }
    }
}

/// What an interrupt (SIGINT, SIGTERM) does to a session's completed calls before the proxy
/// ends. Clients stop their servers with SIGTERM as a matter of course, so the default only
/// records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OnInterrupt {
    /// Journal the session's end (cause `interrupt`) and leave its effects for `rollback`.
    Record,
    /// Compensate the session's completed calls, newest first, then end.
    Rollback,
}

/// The action per class; a class left out is allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClassActions {
    /// Tools that change nothing.
    pub read_only: Option<Action>,
    /// Tools that declare how to undo them.
    pub compensable: Option<Action>,
    /// Tools that declare their effect cannot be undone.
    pub irreversible: Option<Action>,
    /// Tools whose hints or name say they destroy state, with no way back declared.
    pub destructive: Option<Action>,
    /// Tools nothing is known about.
    pub unknown: Option<Action>,
}

impl ClassActions {
    fn get(&self, class: Class) -> Option<Action> {
        match class {
            Class::ReadOnly => self.read_only,
            Class::Compensable => self.compensable,
            Class::Irreversible => self.irreversible,
            Class::Destructive => self.destructive,
            Class::Unknown => self.unknown,
        }
    }
}

/// One rule over tool names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolRule {
    /// A glob over the tool name: `*` any run, `?` one character, ASCII letters in either case.
    #[serde(rename = "match")]
    pub pattern: String,
    /// What to do with a matching call.
    pub action: Action,
}

/// The policy file (TOML).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
#[schemars(title = "mcp-recovery proxy policy")]
pub struct PolicyFile {
    /// What a failed call does (default `record`).
    pub on_failure: Option<OnFailure>,
    /// What an interrupt (SIGINT, SIGTERM) of the proxy does to each session's completed calls
    /// (default `record`).
    pub on_interrupt: Option<OnInterrupt>,
    /// How long a forwarded request may wait for its answer, in seconds (default 60, at most
    /// 604800: 7 days).
    #[schemars(range(min = 1, max = 604_800))]
    pub call_timeout_secs: Option<u64>,
    /// How long an approval may take before it counts as a refusal, in seconds (default 300,
    /// at most 604800: 7 days).
    #[schemars(range(min = 1, max = 604_800))]
    pub approval_timeout_secs: Option<u64>,
    /// What a call to a tool missing from the server's tools/list does (default `deny`).
    pub unlisted_tools: Option<Action>,
    /// The action per class.
    #[serde(default)]
    pub classes: ClassActions,
    /// Rules over tool names, first match wins; they come before the class actions.
    #[serde(default)]
    pub tools: Vec<ToolRule>,
    /// The people who may approve calls, each with a name and a public key.
    #[serde(default)]
    pub approvers: Vec<ApproverEntry>,
    /// Calls that run (or are compensated) only after a quorum of approvers signed an approval;
    /// first match wins. A call the policy denies stays denied.
    #[serde(default)]
    pub approvals: Vec<ApprovalRule>,
    /// Where each pending request of `[[approvals]]` is offered, for the rules that name no
    /// `notify` of their own.
    pub approvals_notify: Option<Notify>,
    /// Where decisions on each pending request of `[[approvals]]` are fetched from, for the
    /// rules that name no `fetch` of their own.
    pub approvals_fetch: Option<Fetch>,
}

/// A URL the proxy polls for signed decisions while a request is pending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Fetch {
    /// `http://` or `https://`; each `{request}` in it becomes the pending request's id. The
    /// answer is one signed decision or an array of them; 404 or `[]` means none yet.
    pub url: String,
    /// Seconds between two fetches (default 2, at most 604800).
    #[schemars(range(min = 1, max = 604_800))]
    pub interval_secs: Option<u64>,
    /// How long one fetch may take, in seconds (default 5, at most 604800).
    #[schemars(range(min = 1, max = 604_800))]
    pub timeout_secs: Option<u64>,
}

/// A webhook that is POSTed each pending request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Notify {
    /// The webhook (`http://` or `https://`).
    pub url: String,
    /// What is POSTed (default `json`, the request as `GET /approvals` lists it).
    pub format: Option<NotifyFormat>,
    /// With `format = "slack"`: the name of the environment variable holding the Slack app's
    /// signing secret, which `POST /approvals/slack` checks each interaction against (the
    /// secret itself never belongs in the file).
    #[schemars(length(min = 1))]
    pub signing_secret_env: Option<String>,
    /// How long one POST may take, in seconds (default 5, at most 604800); a failure is said on
    /// stderr and the request stays pending.
    #[schemars(range(min = 1, max = 604_800))]
    pub timeout_secs: Option<u64>,
}

/// What a notification is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NotifyFormat {
    /// The pending request as JSON.
    Json,
    /// A Slack Block Kit message with Approve and Deny buttons, for an incoming webhook.
    Slack,
}

/// A person who may approve calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ApproverEntry {
    /// The name approval rules and journal records use.
    #[schemars(length(min = 1))]
    pub name: String,
    /// The approver's ed25519 public key: 64 lowercase hex digits, as in the `PATH.pub` that
    /// `mcp-recovery audit keygen PATH` writes.
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub key: String,
    /// The approver's Slack user id (`U…`): a Slack button press by this user, signed with the
    /// signing secret, counts as this approver's decision.
    #[schemars(length(min = 1))]
    pub slack_user: Option<String>,
}

/// Which calls need a quorum, and of whom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRule {
    /// A glob over the tool name (as in `[[tools]]`); with `class` both must match.
    #[serde(rename = "match")]
    pub pattern: Option<String>,
    /// The class of the tool.
    pub class: Option<Class>,
    /// How many distinct approvers of `of` must approve.
    #[schemars(range(min = 1))]
    pub quorum: usize,
    /// The approvers (names from `[[approvers]]`) whose approvals count.
    pub of: Vec<String>,
    /// Where this rule's pending requests are offered (`[approvals.notify]` after the rule);
    /// `[approvals-notify]` when absent.
    pub notify: Option<Notify>,
    /// Where decisions on this rule's pending requests are fetched from (`[approvals.fetch]`
    /// after the rule); `[approvals-fetch]` when absent.
    pub fetch: Option<Fetch>,
}

impl ApprovalRule {
    /// True when a call to `tool` of `class` needs this rule's quorum.
    pub fn matches(&self, tool: &str, class: Class) -> bool {
        self.pattern.as_ref().is_none_or(|p| glob_match(p, tool))
            && self.class.is_none_or(|c| c == class)
    }
}

/// A policy that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The file cannot be read.
    #[error("cannot read policy {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: mcp_recovery_base::read::ReadError,
    },
    /// The file is not a valid policy.
    #[error("policy {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// The TOML parser's message (with line, column and key).
        message: String,
    },
}

/// The largest policy file read.
pub const MAX_POLICY_BYTES: u64 = 1024 * 1024;

impl PolicyFile {
    /// Reads and checks a policy file: a regular file of at most [`MAX_POLICY_BYTES`] of UTF-8
    /// text (a FIFO or a device is refused before it is opened).
    pub fn read(path: &Path) -> Result<PolicyFile, PolicyError> {
        let shown = path.display().to_string();
        let policy = mcp_recovery_base::read::ReadPolicy {
            max_bytes: MAX_POLICY_BYTES,
            follow_links: true,
        };
        let read = |source| PolicyError::Read {
            path: shown.clone(),
            source,
        };
        let bytes =
            mcp_recovery_base::read::read_file(path, Path::new("."), policy).map_err(read)?;
        let text = String::from_utf8(bytes).map_err(|_| {
            read(mcp_recovery_base::read::ReadError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not UTF-8 text",
            )))
        })?;
        PolicyFile::parse(&text).map_err(|message| PolicyError::Invalid {
            path: shown,
            message,
        })
    }

    /// Parses policy TOML.
    pub fn parse(text: &str) -> Result<PolicyFile, String> {
        let file: PolicyFile = toml::from_str(text).map_err(|e| e.to_string().trim().to_owned())?;
        check_secs(file.call_timeout_secs, "call-timeout-secs")?;
        check_secs(file.approval_timeout_secs, "approval-timeout-secs")?;
        file.check_approvals(text)?;
        if let Some(notify) = &file.approvals_notify {
            check_notify(notify, "approvals-notify")?;
        }
        if let Some(fetch) = &file.approvals_fetch {
            check_fetch(fetch, "approvals-fetch")?;
        }
        for (index, rule) in file.approvals.iter().enumerate() {
            if let Some(notify) = &rule.notify {
                check_notify(notify, &format!("approvals[{index}].notify"))?;
            }
            if let Some(fetch) = &rule.fetch {
                check_fetch(fetch, &format!("approvals[{index}].fetch"))?;
            }
        }
        Ok(file)
    }

    /// Where `rule`'s pending requests are offered: its own `notify`, else `[approvals-notify]`.
    pub fn notify_for<'a>(&'a self, rule: &'a ApprovalRule) -> Option<&'a Notify> {
        rule.notify.as_ref().or(self.approvals_notify.as_ref())
    }

    /// Where decisions on `rule`'s pending requests are fetched from: its own `fetch`, else
    /// `[approvals-fetch]`.
    pub fn fetch_for<'a>(&'a self, rule: &'a ApprovalRule) -> Option<&'a Fetch> {
        rule.fetch.as_ref().or(self.approvals_fetch.as_ref())
    }

    /// Every webhook the policy names.
    pub fn notifies(&self) -> impl Iterator<Item = &Notify> {
        self.approvals_notify
            .iter()
            .chain(self.approvals.iter().filter_map(|r| r.notify.as_ref()))
    }

    /// The variables of the environment that hold secrets of the proxy's own (the Slack signing
    /// secrets named by `signing-secret-env`), sorted: a server it starts never inherits them.
    pub fn secret_variables(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .notifies()
            .filter_map(|notify| notify.signing_secret_env.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

fn check_url(url: &str, at: &str) -> Result<(), String> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(format!("{at}.url must be an http:// or https:// URL"))
    }
}

/// The most seconds any wait of a policy may be: 7 days.
pub const MAX_WAIT_SECS: u64 = 7 * 24 * 60 * 60;

/// A number of seconds (`at` names it in errors) is between 1 and [`MAX_WAIT_SECS`].
fn check_secs(secs: Option<u64>, at: &str) -> Result<(), String> {
    match secs {
        Some(0) => Err(format!("{at} must be at least 1")),
        Some(secs) if secs > MAX_WAIT_SECS => Err(format!(
            "{at} = {secs} is more than {MAX_WAIT_SECS} (7 days), the longest wait a policy may set"
        )),
        _ => Ok(()),
    }
}

/// A webhook table (`at` names it in errors) is complete and consistent.
fn check_notify(notify: &Notify, at: &str) -> Result<(), String> {
    check_url(&notify.url, at)?;
    check_secs(notify.timeout_secs, &format!("{at}.timeout-secs"))?;
    let slack = notify.format == Some(NotifyFormat::Slack);
    match notify.signing_secret_env.as_deref() {
        None if slack => Err(format!(
            "{at}: format = \"slack\" needs signing-secret-env, the name of the environment variable holding the signing secret"
        )),
        Some(_) if !slack => Err(format!("{at}.signing-secret-env is for format = \"slack\"")),
        Some("") => Err(format!("{at}.signing-secret-env is empty")),
        _ => Ok(()),
    }
}

/// A fetch table (`at` names it in errors) is usable.
fn check_fetch(fetch: &Fetch, at: &str) -> Result<(), String> {
    check_url(&fetch.url, at)?;
    check_secs(fetch.interval_secs, &format!("{at}.interval-secs"))?;
    check_secs(fetch.timeout_secs, &format!("{at}.timeout-secs"))
}

/// Why a read the proxy would make on its own is not made.
pub(crate) enum Unasked {
    /// The tool is not read-only.
    NotReadOnly(Class),
    /// The policy would ask about it, deny it or offer it to a quorum, by this rule.
    Gated(String),
}

/// A decision and the rule that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// What to do.
    pub action: Action,
    /// Which rule decided, in words (`--deny 'delete_*'`, `tools[1] 'x*'`, `class unknown`).
    pub rule: String,
}

/// The policy in force: the file's settings with the flags laid over them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// The file (or its defaults).
    pub file: PolicyFile,
    /// `--deny GLOB` flags.
    pub deny: Vec<String>,
    /// `--ask GLOB` flags.
    pub ask: Vec<String>,
    /// `--allow GLOB` flags.
    pub allow: Vec<String>,
    /// `--on-failure`, over the file's.
    pub on_failure: Option<OnFailure>,
    /// `--unlisted-tools`, over the file's.
    pub unlisted_tools: Option<Action>,
}

impl Policy {
    /// What a failure does.
    pub fn on_failure(&self) -> OnFailure {
        self.on_failure
            .or(self.file.on_failure)
            .unwrap_or(OnFailure::Record)
    }

    /// What an interrupt does.
    pub fn on_interrupt(&self) -> OnInterrupt {
        self.file.on_interrupt.unwrap_or(OnInterrupt::Record)
    }

    /// What a call to a tool the server did not list does.
    pub fn unlisted_tools(&self) -> Action {
        self.unlisted_tools
            .or(self.file.unlisted_tools)
            .unwrap_or(Action::Deny)
    }

    /// How long a request may wait.
    pub fn call_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.file.call_timeout_secs.unwrap_or(60))
    }

    /// How long an approval may take.
    pub fn approval_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.file.approval_timeout_secs.unwrap_or(300))
    }

    /// The first `[[approvals]]` rule a call to `tool` of `class` falls under.
    pub fn quorum(&self, tool: &str, class: Class) -> Option<&ApprovalRule> {
        self.file.approvals.iter().find(|r| r.matches(tool, class))
    }

    /// Why a read the proxy makes on its own (a before- or after-image, the check before an
    /// undo) may not run: `None` when `read` is read-only and the policy lets it run unasked.
    pub(crate) fn refuses_unasked_read(&self, read: &str, class: Class) -> Option<Unasked> {
        if class != Class::ReadOnly {
            return Some(Unasked::NotReadOnly(class));
        }
        let decision = self.decide(read, class);
        (decision.action != Action::Allow || self.quorum(read, class).is_some())
            .then_some(Unasked::Gated(decision.rule))
    }

    /// Decides a call to `tool` of class `class`: flags first (deny, then ask, then allow, so the
    /// more careful flag wins), then the file's tool rules in order, then its class actions.
    pub fn decide(&self, tool: &str, class: Class) -> Decision {
        let flags = [
            (&self.deny, Action::Deny, "--deny"),
            (&self.ask, Action::Ask, "--ask"),
            (&self.allow, Action::Allow, "--allow"),
        ];
        for (globs, action, flag) in flags {
            if let Some(glob) = globs.iter().find(|g| glob_match(g, tool)) {
                return Decision {
                    action,
                    rule: format!("{flag} '{glob}'"),
                };
            }
        }
        for (index, rule) in self.file.tools.iter().enumerate() {
            if glob_match(&rule.pattern, tool) {
                return Decision {
                    action: rule.action,
                    rule: format!("tools[{index}] '{}'", rule.pattern),
                };
            }
        }
        Decision {
            action: self.file.classes.get(class).unwrap_or(Action::Allow),
            rule: format!("class {class}"),
        }
    }
}

mod approvers;

#[cfg(test)]
mod tests;
