//! Overlays in the proxy: recovery declared by the user for a server that declares none, merged
//! into the list the proxy classifies and plans rollbacks from. What the client receives in
//! `tools/list` is never changed.

use std::collections::HashSet;

use mcp_recovery_model::{Overlay, OverlayIssue};
use serde_json::Value;

use crate::approval::escape;

/// One overlay file, parsed, with the name it is reported under.
#[derive(Debug, Clone)]
pub struct NamedOverlay {
    /// The file as given.
    pub shown: String,
    /// Its declarations.
    pub overlay: Overlay,
}

/// The overlays of a session, applied in the order given, and what was already said about them.
#[derive(Debug, Clone, Default)]
pub struct Overlays {
    list: Vec<NamedOverlay>,
    reported: HashSet<String>,
}

impl Overlays {
    /// The overlays to apply, first given first.
    pub fn new(list: Vec<NamedOverlay>) -> Overlays {
        Overlays {
            list,
            reported: HashSet::new(),
        }
    }

    /// Whether there is no overlay.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// `tools` with every overlay merged in: a field the server declares itself keeps the
    /// server's value (or an earlier overlay's). Each disagreement and each overlay tool the
    /// server does not list is said once per session, on stderr, naming the file, the tool and
    /// the JSON pointer in the overlay.
    pub fn merge(&mut self, tools: &[Value]) -> Vec<Value> {
        let mut merged = tools.to_vec();
        let mut added: Vec<String> = Vec::new();
        let mut notes = Vec::new();
        for named in &self.list {
            let applied = named.overlay.apply_to(&mut merged, "");
            for issue in &applied.issues {
                notes.push(describe(&named.shown, issue, &added));
            }
            added.extend(
                applied
                    .origins
                    .iter()
                    .map(|o| format!("{}{}", o.tool_pointer, o.field)),
            );
        }
        for note in notes {
            if self.reported.insert(note.clone()) {
                eprintln!("mcp-recovery proxy: {note}");
            }
        }
        merged
    }
}

/// One line about an overlay declaration that was not used; `added` holds the document pointers
/// of the fields earlier overlays supplied.
fn describe(file: &str, issue: &OverlayIssue, added: &[String]) -> String {
    match issue {
        OverlayIssue::UnknownTool {
            tool,
            overlay_pointer,
        } => format!(
            "overlay {} at {}: the server has no tool '{}'; the entry is not used",
            escape(file),
            escape(overlay_pointer),
            escape(tool)
        ),
        OverlayIssue::Conflict {
            tool,
            field,
            overlay_pointer,
            document_pointer,
        } => {
            let whose = if added.iter().any(|p| p == document_pointer) {
                "an earlier overlay declares"
            } else {
                "the server declares"
            };
            format!(
                "overlay {} at {}: {whose} {} of tool '{}' differently; that declaration is used",
                escape(file),
                escape(overlay_pointer),
                escape(field.trim_start_matches('/')),
                escape(tool)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use mcp_recovery_model::OverlayFormat;
    use serde_json::json;

    use super::*;

    fn overlay(text: &str) -> NamedOverlay {
        NamedOverlay {
            shown: "o.toml".into(),
            overlay: Overlay::parse(text, OverlayFormat::Toml).unwrap_or_else(|e| panic!("{e}")),
        }
    }

    #[test]
    fn the_server_wins_and_each_issue_is_said_once() {
        let mut overlays = Overlays::new(vec![
            overlay(
                "[tools.a.annotations]\nidempotentHint = true\n[tools.gone.annotations]\ntitle = \"x\"\n",
            ),
            overlay("[tools.a.annotations]\nidempotentHint = false\ntitle = \"A\"\n"),
        ]);
        let tools = [json!({"name": "a", "inputSchema": {"type": "object"},
                            "annotations": {"title": "own"}})];
        let merged = overlays.merge(&tools);
        assert_eq!(merged[0]["annotations"]["idempotentHint"], true);
        assert_eq!(merged[0]["annotations"]["title"], "own");
        assert_eq!(overlays.reported.len(), 3, "{:?}", overlays.reported);
        assert!(
            overlays
                .reported
                .iter()
                .any(|n| n.contains("an earlier overlay declares annotations/idempotentHint"))
        );
        assert!(
            overlays
                .reported
                .iter()
                .any(|n| n.contains("the server declares annotations/title"))
        );
        assert!(
            overlays
                .reported
                .iter()
                .any(|n| n.contains("at /tools/gone: the server has no tool 'gone'"))
        );
        overlays.merge(&tools);
        assert_eq!(overlays.reported.len(), 3);
        // The input itself is never changed.
        assert!(tools[0]["annotations"].get("idempotentHint").is_none());
    }
}
