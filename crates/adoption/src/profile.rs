//! Guarantee profiles: which anomaly classes a conforming runtime can exclude for a tool, and for
//! a whole server, from its declarations alone (defined in `spec/profiles.md`).

use std::collections::HashSet;

use mcp_recovery_model::{Hint, Reversibility, ToolAnnotations, ToolMeta};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A guarantee profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// No duplicated, missing or orphaned effect under an unknown outcome (A1–A3).
    UnknownSafe,
    /// No surviving residue of an aborted workflow (A4).
    CompensationSafe,
    /// No premature or contaminated effect (A5–A6).
    SpeculationSafe,
    /// No conflicting effect and no phantom compensation (A7–A8).
    ExternallyMediated,
}

impl Profile {
    /// The four, in the order of the anomaly catalog.
    pub const ALL: [Profile; 4] = [
        Self::UnknownSafe,
        Self::CompensationSafe,
        Self::SpeculationSafe,
        Self::ExternallyMediated,
    ];

    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownSafe => "unknown-safe",
            Self::CompensationSafe => "compensation-safe",
            Self::SpeculationSafe => "speculation-safe",
            Self::ExternallyMediated => "externally-mediated",
        }
    }

    /// The anomalies it excludes.
    pub fn anomalies(self) -> &'static str {
        match self {
            Self::UnknownSafe => "A1-A3",
            Self::CompensationSafe => "A4",
            Self::SpeculationSafe => "A5-A6",
            Self::ExternallyMediated => "A7-A8",
        }
    }
}

/// A profile a tool does not reach, and the declaration that is missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gap {
    /// The profile.
    pub profile: Profile,
    /// What to declare (the exact key), or why no declaration can close the gap.
    pub missing: String,
}

/// One tool's profiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolProfile {
    /// The tool's name (`<unnamed>` when it has none).
    pub tool: String,
    /// The profiles it reaches, in catalog order.
    pub reached: Vec<Profile>,
    /// The profiles it does not reach, each with its missing declaration.
    pub gaps: Vec<Gap>,
}

/// A server's profiles: it reaches a profile when every tool does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerProfile {
    /// Per tool, in list order.
    pub tools: Vec<ToolProfile>,
    /// The profiles every tool reaches, in catalog order.
    pub reached: Vec<Profile>,
}

impl ServerProfile {
    /// Whether the server reaches `profile`.
    pub fn reaches(&self, profile: Profile) -> bool {
        self.reached.contains(&profile)
    }

    /// How many tools reach `profile`.
    pub fn tools_reaching(&self, profile: Profile) -> usize {
        self.tools
            .iter()
            .filter(|t| t.reached.contains(&profile))
            .count()
    }
}

/// What the profiles read from one tool.
#[derive(Debug, Default)]
struct Facts {
    read_only: bool,
    idempotent: bool,
    compensable: bool,
    dangling: bool,
    irreversible: bool,
    closed_world: bool,
    scoped: bool,
}

const COMPENSATE: &str = "_meta[\"dev.chronomcp/compensate\"]";

fn facts(tool: &Value, names: &HashSet<&str>) -> Facts {
    // Only the annotations and `_meta` are read: schemas are never copied.
    let annotations = tool
        .get("annotations")
        .and_then(|a| ToolAnnotations::deserialize(a).ok())
        .unwrap_or_default();
    let meta = tool
        .get("_meta")
        .and_then(|m| ToolMeta::deserialize(m).ok())
        .unwrap_or_default();
    let hint = |h: Hint| match h {
        Hint::ReadOnly => annotations.read_only_hint,
        Hint::Destructive => annotations.destructive_hint,
        Hint::Idempotent => annotations.idempotent_hint,
        Hint::OpenWorld => annotations.open_world_hint,
    };
    let class = meta.compensate.as_ref().map(|c| c.reversibility);
    let read_only = match class {
        Some(Reversibility::Readonly) => hint(Hint::ReadOnly) != Some(false),
        Some(_) => false,
        None => hint(Hint::ReadOnly) == Some(true) && annotations.recovery.is_none(),
    };
    let declared: Vec<_> = annotations
        .recovery
        .iter()
        .filter_map(|r| r.normalize())
        .chain(meta.compensate.iter().map(|c| c.normalize()))
        .collect();
    let targets: Vec<&str> = declared
        .iter()
        .filter_map(|d| d.compensation.as_ref().map(|c| c.tool.as_str()))
        .collect();
    Facts {
        read_only,
        idempotent: hint(Hint::Idempotent) == Some(true),
        compensable: !targets.is_empty() && targets.iter().all(|t| names.contains(t)),
        dangling: targets.iter().any(|t| !names.contains(t)),
        irreversible: class == Some(Reversibility::Irreversible),
        closed_world: hint(Hint::OpenWorld) == Some(false),
        scoped: meta
            .compensate
            .as_ref()
            .and_then(|c| c.side_effect_scope.as_ref())
            .is_some_and(|s| !s.is_empty()),
    }
}

fn gap(profile: Profile, facts: &Facts) -> Option<String> {
    if facts.read_only {
        return None;
    }
    match profile {
        Profile::UnknownSafe => (!facts.idempotent).then(|| {
            "`annotations.idempotentHint: true` (a repeated call has no further effect), or \
             `annotations.readOnlyHint: true`"
                .to_owned()
        }),
        Profile::CompensationSafe => {
            if facts.compensable || facts.irreversible {
                None
            } else if facts.dangling {
                Some("a compensation whose tool the server lists".to_owned())
            } else {
                Some(format!(
                    "`{COMPENSATE}.reversibility` (\"compensable\" with a `compensation`, or \
                     \"irreversible\"), or `annotations.recovery`"
                ))
            }
        }
        Profile::SpeculationSafe => {
            if facts.irreversible {
                None
            } else if facts.compensable {
                Some(
                    "a staged release (dry run, or hold with expiry): the effect is released \
                     before the workflow resolves and only undone afterwards; no MCP field \
                     declares staging"
                        .to_owned(),
                )
            } else {
                Some(format!(
                    "`{COMPENSATE}.reversibility` (an \"irreversible\" tool is held until the \
                     workflow commits)"
                ))
            }
        }
        Profile::ExternallyMediated => {
            let mut missing = Vec::new();
            if !facts.closed_world {
                missing.push(
                    "`annotations.openWorldHint: false` (no outside party observes the effect)",
                );
            }
            if !facts.scoped {
                missing.push(
                    "`_meta[\"dev.chronomcp/compensate\"].sideEffectScope` (the resources it writes)",
                );
            }
            (!missing.is_empty()).then(|| missing.join(" and "))
        }
    }
}

/// The profiles of every tool of a tools array (raw tool objects, as listed) and of the server.
pub fn profile_tools(tools: &[Value]) -> ServerProfile {
    let names: HashSet<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let profiles: Vec<ToolProfile> = tools
        .iter()
        .map(|tool| profile_tool(tool, &names))
        .collect();
    ServerProfile {
        reached: Profile::ALL
            .into_iter()
            .filter(|p| profiles.iter().all(|t| t.reached.contains(p)))
            .collect(),
        tools: profiles,
    }
}

/// The profiles of one tool of a list whose tools have `names`.
pub fn profile_tool(tool: &Value, names: &HashSet<&str>) -> ToolProfile {
    let facts = facts(tool, names);
    let mut reached = Vec::new();
    let mut gaps = Vec::new();
    for profile in Profile::ALL {
        match gap(profile, &facts) {
            None => reached.push(profile),
            Some(missing) => gaps.push(Gap { profile, missing }),
        }
    }
    ToolProfile {
        tool: tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("<unnamed>")
            .to_owned(),
        reached,
        gaps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reached(tools: Value) -> Vec<Vec<Profile>> {
        let Value::Array(tools) = tools else {
            unreachable!()
        };
        profile_tools(&tools)
            .tools
            .into_iter()
            .map(|t| t.reached)
            .collect()
    }

    #[test]
    fn each_declaration_reaches_its_profile() {
        use Profile::*;
        let got = reached(json!([
            {"name": "read", "annotations": {"readOnlyHint": true}},
            {"name": "plain"},
            {"name": "retry", "annotations": {"idempotentHint": true}},
            {"name": "undo", "annotations": {"idempotentHint": true},
             "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
                "compensation": {"toolName": "retry", "parameterMapping": {}},
                "sideEffectScope": ["db"]}}},
            {"name": "mail", "annotations": {"openWorldHint": true},
             "_meta": {"dev.chronomcp/compensate": {"reversibility": "irreversible"}}},
            {"name": "dangling", "annotations": {"recovery": {"strategy": "compensation",
                "compensatingOperation": {"operationId": "gone", "parameters": {}}}}},
            {"name": "closed", "annotations": {"openWorldHint": false},
             "_meta": {"dev.chronomcp/compensate": {"reversibility": "irreversible",
                "sideEffectScope": ["ledger"]}}},
            {"name": "conflicted", "annotations": {"readOnlyHint": false},
             "_meta": {"dev.chronomcp/compensate": {"reversibility": "readonly"}}}
        ]));
        assert_eq!(
            got,
            vec![
                Profile::ALL.to_vec(),
                vec![],
                vec![UnknownSafe],
                vec![UnknownSafe, CompensationSafe],
                vec![CompensationSafe, SpeculationSafe],
                vec![],
                vec![CompensationSafe, SpeculationSafe, ExternallyMediated],
                vec![],
            ]
        );
    }

    #[test]
    fn a_server_reaches_what_every_tool_reaches_and_gaps_name_keys() {
        let tools = vec![
            json!({"name": "a", "annotations": {"readOnlyHint": true}}),
            json!({"name": "b", "annotations": {"idempotentHint": true}}),
        ];
        let server = profile_tools(&tools);
        assert_eq!(server.reached, vec![Profile::UnknownSafe]);
        assert_eq!(server.tools_reaching(Profile::CompensationSafe), 1);
        let gap = &server.tools[1].gaps[0];
        assert_eq!(gap.profile, Profile::CompensationSafe);
        assert!(
            gap.missing
                .contains("_meta[\"dev.chronomcp/compensate\"].reversibility")
        );
        let dangling = profile_tools(&[json!({"name": "x", "_meta": {"dev.chronomcp/compensate":
            {"reversibility": "compensable", "compensation": {"toolName": "y", "parameterMapping": {}}}}})]);
        assert!(dangling.tools[0].gaps[1].missing.contains("lists"));
        assert!(profile_tools(&[]).reached.len() == 4);
    }
}
