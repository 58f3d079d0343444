//! What `plan` and `rollback` read back of a journal's side files: the out-of-line members of
//! the calls a plan may compensate from them, never those of a tool the plan takes as read-only
//! (of such a call it needs only that it completed).

use std::collections::HashMap;
use std::path::Path;

use mcp_recovery_journal::{Broken, Kind, READ_BACK_MAX_BYTES, inline_out_of_line};
use mcp_recovery_plan::{Status, ToolList, TracedCall, build_plan};
use serde_json::{Map, Value};

/// `text`, the journal at `journal`, with the out-of-line members of `session`'s calls (every
/// session's when `None`) read back, but for calls of tools the plan takes as read-only.
pub fn inline(
    text: &str,
    journal: &Path,
    session: Option<&str>,
    tools: &ToolList,
) -> Result<String, Broken> {
    let mut read_only: HashMap<String, bool> = HashMap::new();
    let calls = [Kind::CallIntent.as_str(), Kind::CallOutcome.as_str()];
    let mut needed = |record: &Map<String, Value>| {
        let kind = record.get("kind").and_then(Value::as_str).unwrap_or("");
        let Some(name) = record.get("name").and_then(Value::as_str) else {
            return true;
        };
        if !calls.contains(&kind) {
            return true;
        }
        let completed = TracedCall::new(name, Map::new(), Some(Map::new()));
        !*read_only.entry(name.to_owned()).or_insert_with(|| {
            build_plan(tools, &[completed])
                .steps
                .first()
                .is_some_and(|step| step.status == Status::ReadOnly)
        })
    };
    inline_out_of_line(text, journal, session, READ_BACK_MAX_BYTES, &mut needed)
}
