//! The check a step makes before its first call when its overlay's before-image declares
//! `unchanged`: the read, made again, must still return the after-image; otherwise the target
//! changed since the call and the step is not made (putting the before-image back would destroy
//! that change).

use std::time::Duration;

use mcp_recovery_model::Tool;
use mcp_recovery_plan::Check;

use super::effects::{Effects, Reply};
use crate::classify::classify;
use crate::policy::{Policy, Unasked};

/// Why a step is not made: its skip's status and reason.
pub(super) struct Refused {
    pub status: &'static str,
    pub reason: String,
}

/// Makes the check's read and compares its answer with the after-image: `None` when the target
/// is as the call left it. The read runs only as the proxy ran it after the call: a listed,
/// read-only tool the policy lets run unasked.
pub(super) fn verify(
    effects: &mut dyn Effects,
    tools: &[Tool],
    policy: &Policy,
    undone: &str,
    check: &Check,
    timeout: Duration,
) -> Option<Refused> {
    let read = check.name.as_str();
    let unchecked = |why: String| {
        Some(Refused {
            status: "unchecked",
            reason: format!(
                "'{undone}' was not undone: its undo is made only while '{read}' returns what it did after the call, and {why}"
            ),
        })
    };
    let Some(tool) = tools.iter().find(|t| t.name == read) else {
        return unchecked(format!("the server does not list '{read}'"));
    };
    match policy.refuses_unasked_read(read, classify(Some(tool)).class) {
        Some(Unasked::NotReadOnly(class)) => {
            return unchecked(format!(
                "'{read}' is {}, not read-only, so it is not run for the check",
                class.as_str()
            ));
        }
        Some(Unasked::Gated(rule)) => {
            return unchecked(format!(
                "the policy does not let '{read}' run unasked ({rule})"
            ));
        }
        None => {}
    }
    match effects.call_tool(read, &check.arguments, timeout) {
        Reply::Result(result) if check.unchanged(&result) => None,
        Reply::Result(_) => Some(Refused {
            status: "changed",
            reason: format!(
                "'{undone}' was not undone: what '{read}' returns has changed since the call, so undoing it now could destroy a later change"
            ),
        }),
        Reply::Error(error) => unchecked(format!("'{read}' answered with an error ({error})")),
        Reply::Lost(why) => unchecked(format!("'{read}' got no answer ({why})")),
    }
}
