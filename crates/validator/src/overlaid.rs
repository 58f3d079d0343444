//! Linting a `tools/list` document with an overlay applied: one merged view for the rules, and
//! every finding about an overlay declaration reported against the overlay file.

use std::collections::{HashMap, HashSet};

use mcp_recovery_model::{Applied, JsonPointer, Overlay, OverlayIssue};
use serde_json::Value;

use crate::codes::Rule;
use crate::diagnostic::Report;
use crate::finding::Finding;
use crate::linter::{Linter, duplicate_keys};
use crate::load;
use crate::rules::{overlay_conflict, overlay_unknown_tool};
use crate::span::{LineIndex, Place, locate};

/// The outcome of linting a document with an overlay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OverlaidReport {
    /// Findings about the server's own document (pointers and spans into it).
    pub document: Report,
    /// Findings about the overlay's declarations (pointers and spans into the overlay text).
    pub overlay: Report,
}

impl Linter {
    /// Lints the bytes of a document with `overlay` (parsed from `overlay_text`) applied.
    pub fn lint_source_with_overlay(
        &self,
        source: &[u8],
        overlay: &Overlay,
        overlay_text: &str,
    ) -> OverlaidReport {
        match load::parse(source) {
            Ok(parsed) => {
                let (tools, mut own, declared) = self.check_overlaid(&parsed.document, overlay);
                if parsed.repeats_a_name && self.enabled(Rule::DuplicateKey) {
                    duplicate_keys(source, &parsed.document, &mut own);
                }
                OverlaidReport {
                    document: self.finish(tools, own, Some(source), true),
                    overlay: self.finish_overlay(tools, declared, overlay, overlay_text),
                }
            }
            Err(finding) => OverlaidReport {
                document: self.finish(0, vec![*finding], Some(source), true),
                overlay: Report::default(),
            },
        }
    }

    /// Lints a parsed document (from a live server) with `overlay` applied; the document's
    /// findings have no spans, the overlay's do.
    pub fn lint_value_with_overlay(
        &self,
        document: &Value,
        overlay: &Overlay,
        overlay_text: &str,
    ) -> OverlaidReport {
        let (tools, own, declared) = self.check_overlaid(document, overlay);
        let text = if own.is_empty() {
            None
        } else {
            serde_json::to_vec(document).ok()
        };
        OverlaidReport {
            document: self.finish(tools, own, text.as_deref(), false),
            overlay: self.finish_overlay(tools, declared, overlay, overlay_text),
        }
    }

    /// Merges, runs every stage, and splits the findings between document and overlay.
    fn check_overlaid(
        &self,
        document: &Value,
        overlay: &Overlay,
    ) -> (usize, Vec<Finding>, Vec<Finding>) {
        let array = match load::tools_of(document) {
            Ok(array) => array,
            Err(finding) => return (0, vec![*finding], Vec::new()),
        };
        let names: Vec<&str> = array
            .tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .collect();
        let mut merged = document.clone();
        let applied = match merged.pointer_mut(array.pointer()) {
            Some(Value::Array(tools)) => overlay.apply_to(tools, array.pointer()),
            _ => Applied::default(),
        };
        let mut declared = issues(&applied, &names);
        let (tools, findings) = self.check(&merged);
        let mut own = Vec::with_capacity(findings.len());
        for mut finding in findings {
            match applied.overlay_pointer_of(&finding.pointer) {
                Some(pointer) => {
                    finding.pointer = pointer;
                    declared.push(finding);
                }
                None => own.push(finding),
            }
        }
        (tools, own, declared)
    }

    fn finish_overlay(
        &self,
        tools: usize,
        findings: Vec<Finding>,
        overlay: &Overlay,
        text: &str,
    ) -> Report {
        let mut report = match overlay.spans() {
            Some(spans) => {
                let places: HashMap<String, Place> = spans
                    .iter()
                    .map(|(pointer, span)| {
                        let place = Place {
                            key: span.key.clone(),
                            value: span.value.clone(),
                        };
                        (pointer.clone(), place)
                    })
                    .collect();
                self.finish_with(tools, findings, Some(text.as_bytes()), true, |_, _| {
                    places.clone()
                })
            }
            None => self.finish(tools, findings, Some(text.as_bytes()), true),
        };
        // The overlay declares no tools of its own; the count belongs to the document.
        report.tools = 0;
        report
    }
}

fn issues(applied: &Applied, names: &[&str]) -> Vec<Finding> {
    applied
        .issues
        .iter()
        .map(|issue| match issue {
            OverlayIssue::UnknownTool {
                tool,
                overlay_pointer,
            } => overlay_unknown_tool::unknown_tool(overlay_pointer, tool, names),
            OverlayIssue::Conflict {
                tool,
                field,
                overlay_pointer,
                document_pointer,
            } => overlay_conflict::conflict(overlay_pointer, tool, field, document_pointer),
        })
        .collect()
}

/// The line and column (1-based) of every member of an overlay in its text, by JSON pointer
/// into the overlay (a member's key when it has one, else its value), for messages that point
/// into the overlay file from outside the linter.
pub fn overlay_positions(overlay: &Overlay, text: &str) -> HashMap<String, (usize, usize)> {
    let index = LineIndex::new(text.as_bytes());
    let at = |key: Option<&std::ops::Range<usize>>, value: &std::ops::Range<usize>| {
        index.position(key.map_or(value.start, |k| k.start))
    };
    if let Some(spans) = overlay.spans() {
        return spans
            .iter()
            .map(|(pointer, span)| (pointer.clone(), at(span.key.as_ref(), &span.value)))
            .collect();
    }
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return HashMap::new();
    };
    let mut pointers = Vec::new();
    collect_pointers(&value, &JsonPointer::root(), &mut pointers);
    let wanted: HashSet<&str> = pointers.iter().map(String::as_str).collect();
    locate(text.as_bytes(), &wanted)
        .into_iter()
        .map(|(pointer, place)| (pointer, at(place.key.as_ref(), &place.value)))
        .collect()
}

fn collect_pointers(value: &Value, at: &JsonPointer, out: &mut Vec<String>) {
    out.push(at.to_string());
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                collect_pointers(member, &at.join(key.as_str()), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_pointers(item, &at.join(i.to_string()), out);
            }
        }
        _ => {}
    }
}
