//! The overlay a draft becomes: one entry per suggestion, in the carrier its bindings fit.

use std::collections::BTreeMap;

use mcp_recovery_model::COMPENSATE_META_KEY;
use serde_json::{Map, Value, json};

use super::types::{Proposal, Suggestion, Suggestions};

impl Suggestion {
    /// The overlay entry of this suggestion: the mcp-compensate carrier when its bindings are
    /// paths of the subset, else the SEP-3172 carrier with the overlay's forms (map bindings, a
    /// text reader), or a before-image.
    pub fn entry(&self) -> Value {
        let notes = self.notes();
        match &self.proposal {
            Proposal::Compensable {
                compensator,
                mapping,
                reader,
            } => {
                let paths: Option<BTreeMap<&String, String>> =
                    mapping.iter().map(|(k, b)| Some((k, b.path()?))).collect();
                match (paths, reader) {
                    (Some(paths), None) => json!({"_meta": {COMPENSATE_META_KEY: {
                        "reversibility": "compensable",
                        "compensation": {"toolName": compensator, "parameterMapping": paths},
                        "notes": notes,
                    }}}),
                    _ => {
                        let parameters: Map<String, Value> = mapping
                            .iter()
                            .map(|(k, b)| (k.clone(), b.expression()))
                            .collect();
                        let mut entry = json!({"annotations": {"recovery": {
                            "strategy": "compensation",
                            "compensatingOperation": {
                                "operationId": compensator,
                                "parameters": parameters,
                            },
                            "notes": notes,
                        }}});
                        if let Some(reader) = reader {
                            entry["result"] = json!({"from": reader.from, "schema": reader.schema});
                        }
                        entry
                    }
                }
            }
            Proposal::Before {
                read,
                arguments,
                write,
                content,
            } => {
                let place: Map<String, Value> = arguments
                    .iter()
                    .map(|(parameter, given)| {
                        (
                            parameter.clone(),
                            Value::String(format!("$request.body#/{given}")),
                        )
                    })
                    .collect();
                let mut parameters = place.clone();
                parameters.insert(content.clone(), Value::String("$before.text".to_owned()));
                json!({"before": {
                    "read": read,
                    "arguments": place,
                    "found": {"operationId": write, "parameters": parameters},
                }})
            }
            Proposal::Irreversible => json!({"_meta": {COMPENSATE_META_KEY: {
                "reversibility": "irreversible",
                "notes": notes,
            }}}),
        }
    }
}

impl Suggestions {
    /// The overlay document declaring every suggestion, with the confidence and reason in
    /// `notes` where the carrier has them.
    pub fn overlay(&self, server: Option<&str>) -> Value {
        let tools: Map<String, Value> = self
            .suggestions
            .iter()
            .map(|s| (s.tool.clone(), s.entry()))
            .collect();
        let mut document = Map::new();
        if let Some(server) = server {
            document.insert("server".to_owned(), Value::String(server.to_owned()));
        }
        document.insert("tools".to_owned(), Value::Object(tools));
        Value::Object(document)
    }
}
