//! The classify stage: the server's tools (overlays merged) and the class of each, fetched
//! before the first call that needs them.

use std::collections::HashSet;
use std::io::Write;

use mcp_recovery_base::text::escape_controls;

use mcp_recovery_model::Tool;
use serde_json::{Map, Value, json};

use crate::classify::{Class, Classification, Source, classify};
use crate::names::fold_name;
use crate::note::note;
use crate::rollback::Reply;

use super::state::Session;

impl<W: Write> Session<W> {
    /// The class of `name`, the server's tools fetched first when the session has none yet;
    /// a tool it does not know is unknown.
    pub(super) fn classification(&mut self, name: &str) -> Classification {
        if self.tools.is_none() {
            self.fetch_tools();
        }
        self.classes.get(name).copied().unwrap_or(Classification {
            class: Class::Unknown,
            source: Source::None,
        })
    }

    pub(super) fn set_tools(&mut self, tools: &[Value]) {
        let merged;
        let tools = if self.settings.overlays.is_empty() {
            tools
        } else {
            merged = self
                .settings
                .overlays
                .merge(tools, self.server_name.as_deref());
            &merged
        };
        let mut unreadable = Vec::new();
        let parsed: Vec<Tool> = tools
            .iter()
            .filter_map(|raw| listed_tool(raw, &mut unreadable))
            .collect();
        let changed = self.tools.as_ref().is_none_or(|old| {
            old.len() != parsed.len() || old.iter().zip(&parsed).any(|(a, b)| a.name != b.name)
        });
        if changed {
            for why in unreadable {
                note(&why);
            }
        }
        self.classes = parsed
            .iter()
            .map(|t| (t.name.clone(), classify(Some(t))))
            .collect();
        if changed {
            let mut names: Vec<&String> = self.classes.keys().collect();
            names.sort();
            let mut table = String::from("mcp-recovery proxy: tool classes\n");
            for name in names {
                let c = self.classes[name];
                let decision = self.settings.policy.decide(name, c.class);
                table.push_str(&format!(
                    "  {:<32} {:<13} from {:<9} {}\n",
                    escape_controls(name),
                    c.class.as_str(),
                    c.source.as_str(),
                    decision.action.as_str()
                ));
            }
            let _ = std::io::stderr().write_all(table.as_bytes());
        }
        self.tools = Some(parsed);
    }

    /// Fetches the whole tool list with requests of our own (answers never reach the client).
    pub(super) fn fetch_tools(&mut self) {
        let mut all = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut seen = HashSet::new();
        for _ in 0..1000 {
            let mut request = Map::new();
            if let Some(cursor) = &cursor {
                request.insert("cursor".into(), cursor.clone());
            }
            if let Some(meta) = &self.request_meta {
                request.insert("_meta".into(), Value::Object(meta.clone()));
            }
            let timeout = self.settings.policy.call_timeout();
            match self.request_upstream("tools/list", Value::Object(request), timeout) {
                Reply::Result(result) => {
                    if let Some(Value::Array(tools)) = result.get("tools") {
                        all.extend(tools.iter().cloned());
                    }
                    match result.get("nextCursor") {
                        Some(next) if !next.is_null() && seen.insert(next.to_string()) => {
                            cursor = Some(next.clone());
                        }
                        _ => break,
                    }
                }
                Reply::Error(error) => {
                    note(&format!(
                        "tools/list failed ({error}): no tool is listed, so every call counts as unlisted"
                    ));
                    break;
                }
                Reply::Lost(reason) => {
                    note(&format!(
                        "tools/list failed ({reason}): no tool is listed, so every call counts as unlisted"
                    ));
                    break;
                }
            }
        }
        self.set_tools(&all);
    }

    /// Why `name` counts as unlisted (`None` when the server listed it).
    pub(super) fn unlisted(&self, name: &str) -> Option<String> {
        unlisted(self.tools.as_deref().unwrap_or_default(), name)
    }
}

/// Why `name` counts as unlisted (`None` when the server listed it): not in the server's
/// tools/list, naming the listed tool it looks like after case folding and the mapping of
/// look-alike characters, if one does.
pub(super) fn unlisted(tools: &[Tool], name: &str) -> Option<String> {
    if tools.iter().any(|t| t.name == name) {
        return None;
    }
    let folded = fold_name(name);
    let shown = escape_controls(name);
    Some(match tools.iter().find(|t| fold_name(&t.name) == folded) {
        Some(like) => format!(
            "'{shown}' is not in the server's tools/list; it looks like the listed '{}'",
            escape_controls(&like.name)
        ),
        None => format!("'{shown}' is not in the server's tools/list"),
    })
}

/// A tool the server listed, as the stages read it. A tool whose annotations, `_meta` or output
/// schema cannot be read is still listed by its name (a broken declaration must not make a
/// listed tool count as unlisted, nor be trusted): it is read without them, and with an open
/// input schema when that cannot be read either; why goes to `unreadable`. Only an entry
/// without a string name is no tool at all.
fn listed_tool(raw: &Value, unreadable: &mut Vec<String>) -> Option<Tool> {
    let error = match Tool::from_json(raw) {
        Ok(tool) => return Some(tool),
        Err(error) => error,
    };
    let name = raw.get("name")?.as_str()?;
    unreadable.push(format!(
        "tool '{}' is read without its annotations and _meta: {error}",
        escape_controls(name)
    ));
    let mut bare = json!({"name": name, "inputSchema": {"type": "object"}});
    if let Some(schema) = raw.get("inputSchema") {
        bare["inputSchema"] = schema.clone();
    }
    Tool::from_json(&bare)
        .ok()
        .or_else(|| Tool::from_json(&json!({"name": name, "inputSchema": {"type": "object"}})).ok())
}
