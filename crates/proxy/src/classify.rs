//! Classification of tools: what a call to each may do, and how we know.

use std::fmt;

use mcp_recovery_model::{Hint, Reversibility, Tool};
use serde::{Deserialize, Serialize};

/// What a call to a tool may do to the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Changes nothing.
    ReadOnly,
    /// Changes something and declares how to undo it.
    Compensable,
    /// Changes something that cannot be undone.
    Irreversible,
    /// May destroy or overwrite state, and declares no way back.
    Destructive,
    /// Nothing says what it does: treated as possibly changing anything.
    Unknown,
}

impl Class {
    /// Every class, in the order the documentation lists them.
    pub const ALL: [Class; 5] = [
        Class::ReadOnly,
        Class::Compensable,
        Class::Irreversible,
        Class::Destructive,
        Class::Unknown,
    ];

    /// The policy file's spelling (`read-only`).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::ReadOnly => "read-only",
            Class::Compensable => "compensable",
            Class::Irreversible => "irreversible",
            Class::Destructive => "destructive",
            Class::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a classification comes from, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Declared recovery metadata (either carrier, or an overlay's undo from a before-image).
    Metadata,
    /// MCP's `readOnlyHint` / `destructiveHint`.
    Hints,
    /// The tool's name (can only make a tool look more dangerous, never safe).
    Name,
    /// Nothing: the tool is not listed, or says nothing.
    None,
}

impl Source {
    /// The spelling shown and journaled.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Metadata => "metadata",
            Source::Hints => "hints",
            Source::Name => "name",
            Source::None => "none",
        }
    }
}

/// A tool's class and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classification {
    /// The class.
    pub class: Class,
    /// Where it comes from.
    pub source: Source,
}

/// Words that mark a tool name as destroying state.
const DESTRUCTIVE_WORDS: [&str; 13] = [
    "delete",
    "remove",
    "drop",
    "destroy",
    "purge",
    "wipe",
    "erase",
    "truncate",
    "overwrite",
    "kill",
    "terminate",
    "revoke",
    "reset",
];

/// Classifies one tool: explicit metadata (an overlay's before-image undo first), then hints,
/// then the name; nothing means unknown.
/// When both carriers declare and disagree, the tool is unknown (neither is trusted).
pub fn classify(tool: Option<&Tool>) -> Classification {
    let Some(tool) = tool else {
        return Classification {
            class: Class::Unknown,
            source: Source::None,
        };
    };
    // An overlay's undo from a before-image decides the plan ahead of any carrier.
    if tool.before_image().is_some() {
        return Classification {
            class: Class::Compensable,
            source: Source::Metadata,
        };
    }
    let declared = tool.declared_recovery();
    if let [first, second] = declared.as_slice()
        && !first.agrees_with(second)
    {
        return Classification {
            class: Class::Unknown,
            source: Source::Metadata,
        };
    }
    if let Some(declaration) = declared.first() {
        let class = match declaration.reversibility {
            Reversibility::Readonly => Class::ReadOnly,
            Reversibility::Compensable => Class::Compensable,
            Reversibility::Irreversible => Class::Irreversible,
        };
        return Classification {
            class,
            source: Source::Metadata,
        };
    }
    if tool.hint(Hint::ReadOnly) == Some(true) {
        return Classification {
            class: Class::ReadOnly,
            source: Source::Hints,
        };
    }
    if tool.hint(Hint::Destructive) == Some(true) {
        return Classification {
            class: Class::Destructive,
            source: Source::Hints,
        };
    }
    if name_is_destructive(&tool.name) {
        return Classification {
            class: Class::Destructive,
            source: Source::Name,
        };
    }
    Classification {
        class: Class::Unknown,
        source: Source::None,
    }
}

/// True when a word of the name (split at `_ - . /`, spaces and case changes) is destructive.
fn name_is_destructive(name: &str) -> bool {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if (!c.is_alphanumeric() || (c.is_uppercase() && previous_lower)) && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase();
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
    }
    words.push(word);
    words
        .iter()
        .any(|w| DESTRUCTIVE_WORDS.contains(&w.as_str()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(value: serde_json::Value) -> Tool {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn explicit_metadata_wins_over_hints_and_names() {
        let compensable = tool(json!({
            "name": "delete_item", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "destructiveHint": true},
            "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
                "compensation": {"toolName": "restore_item", "parameterMapping": {}}}}
        }));
        assert_eq!(
            classify(Some(&compensable)),
            Classification {
                class: Class::Compensable,
                source: Source::Metadata
            }
        );
    }

    #[test]
    fn a_before_image_undo_makes_a_tool_compensable() {
        let mut listed = json!({"tools": [
            {"name": "write_file", "inputSchema": {"type": "object"},
             "annotations": {"destructiveHint": true}},
            {"name": "read_file", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": true}}
        ]});
        mcp_recovery_model::Overlay::parse(
            "[tools.write_file.before]\nread = \"read_file\"\nfound = { operationId = \"write_file\" }\n",
            mcp_recovery_model::OverlayFormat::Toml,
        )
        .unwrap()
        .apply(&mut listed);
        let write = tool(listed["tools"][0].clone());
        assert_eq!(
            classify(Some(&write)),
            Classification {
                class: Class::Compensable,
                source: Source::Metadata
            }
        );
    }

    #[test]
    fn hints_then_names_then_unknown() {
        let read = tool(
            json!({"name": "drop_table", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}}),
        );
        assert_eq!(classify(Some(&read)).class, Class::ReadOnly);
        let destructive = tool(json!({"name": "x", "inputSchema": {"type": "object"},
            "annotations": {"destructiveHint": true}}));
        assert_eq!(classify(Some(&destructive)).class, Class::Destructive);
        for name in ["deleteFile", "repo.purge", "db-drop", "RESET_ALL"] {
            let named = tool(json!({"name": name, "inputSchema": {"type": "object"}}));
            assert_eq!(
                classify(Some(&named)),
                Classification {
                    class: Class::Destructive,
                    source: Source::Name
                },
                "{name}"
            );
        }
        // A harmless-sounding name is still unknown, never inferred safe.
        for name in ["get_weather", "list_files", "dropdown_values"] {
            let named = tool(json!({"name": name, "inputSchema": {"type": "object"}}));
            assert_eq!(classify(Some(&named)).class, Class::Unknown, "{name}");
        }
        assert_eq!(classify(None).class, Class::Unknown);
    }
}
