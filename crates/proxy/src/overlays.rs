//! Overlays in the proxy: recovery declared by the user for a server that declares none, merged
//! into the list the proxy classifies and plans rollbacks from. What the client receives in
//! `tools/list` is never changed.

use mcp_recovery_base::text::escape_controls;
use std::collections::{HashMap, HashSet};

use mcp_recovery_model::{Overlay, OverlayIssue};
use serde_json::Value;

/// One overlay file, parsed, with the name it is reported under.
#[derive(Debug, Clone)]
pub struct NamedOverlay {
    /// The file as given.
    pub shown: String,
    /// Its declarations.
    pub overlay: Overlay,
    /// Line and column in the file of each JSON pointer into the overlay (for the notes).
    pub positions: HashMap<String, (usize, usize)>,
}

impl NamedOverlay {
    /// The file, with the line and column of `pointer` when known.
    fn place(&self, pointer: &str) -> String {
        match self.positions.get(pointer) {
            Some((line, column)) => format!("{}:{line}:{column}", escape_controls(&self.shown)),
            None => escape_controls(&self.shown).into_owned(),
        }
    }
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
    /// server's value (or an earlier overlay's). An overlay for a server other than `server`
    /// (the upstream's `serverInfo.name`, when known) is not applied. Each of these, each
    /// disagreement and each overlay tool the server does not list is said once per session,
    /// on stderr, naming the file, line and column, the tool and the JSON pointer.
    pub fn merge(&mut self, tools: &[Value], server: Option<&str>) -> Vec<Value> {
        let mut merged = tools.to_vec();
        let mut added: Vec<String> = Vec::new();
        let mut notes = Vec::new();
        for named in &self.list {
            if let (Some(expected), Some(actual)) = (named.overlay.server(), server)
                && expected != actual
            {
                notes.push(format!(
                    "overlay {}: it is for server '{}', but the server names itself '{}'; the overlay is not used",
                    named.place("/server"),
                    escape_controls(expected),
                    escape_controls(actual)
                ));
                continue;
            }
            let applied = named.overlay.apply_to(&mut merged, "");
            for issue in &applied.issues {
                notes.push(describe(named, issue, &added));
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
fn describe(named: &NamedOverlay, issue: &OverlayIssue, added: &[String]) -> String {
    match issue {
        OverlayIssue::UnknownTool {
            tool,
            overlay_pointer,
        } => format!(
            "overlay {} at {}: the server has no tool '{}'; the entry is not used",
            named.place(overlay_pointer),
            escape_controls(overlay_pointer),
            escape_controls(tool)
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
                named.place(overlay_pointer),
                escape_controls(overlay_pointer),
                escape_controls(field.trim_start_matches('/')),
                escape_controls(tool)
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
            positions: HashMap::from([("/tools/gone".to_owned(), (3, 1))]),
        }
    }

    #[test]
    fn an_overlay_for_another_server_is_not_used() {
        let mut overlays = Overlays::new(vec![overlay(
            "server = \"other\"\n[tools.a.annotations]\nidempotentHint = true\n",
        )]);
        let tools = [json!({"name": "a", "inputSchema": {"type": "object"}})];
        let merged = overlays.merge(&tools, Some("demo"));
        assert!(merged[0].get("annotations").is_none());
        assert!(
            overlays.reported.iter().any(|n| n
                == "overlay o.toml: it is for server 'other', but the server names itself 'demo'; the overlay is not used"),
            "{:?}",
            overlays.reported
        );
        // Before the server has named itself, and for the server named, it is used.
        for server in [None, Some("other")] {
            let merged = overlays.merge(&tools, server);
            assert_eq!(merged[0]["annotations"]["idempotentHint"], true);
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
        let merged = overlays.merge(&tools, None);
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
                .any(|n| n.contains("o.toml:3:1 at /tools/gone: the server has no tool 'gone'"))
        );
        overlays.merge(&tools, None);
        assert_eq!(overlays.reported.len(), 3);
        // The input itself is never changed.
        assert!(tools[0]["annotations"].get("idempotentHint").is_none());
    }
}
