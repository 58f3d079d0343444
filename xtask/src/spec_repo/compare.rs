//! Our schema against the one generated from the TypeScript: the descriptions, and the verdicts
//! of both on every case.

use std::collections::HashSet;
use std::path::Path;

use jsonschema::Validator;
use serde_json::{Value, json};

use super::cases::{Case, Kind};
use crate::shared::{compile, definition_validator};
use crate::workspace::read_json;

/// Every definition and property whose description differs between our `$defs` and the
/// generated schema (the generator also must not lose a definition or a property).
pub(super) fn description_differences(ours: &Value, generated: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let Some(defs) = ours.get("$defs").and_then(Value::as_object) else {
        return vec!["sep-3172.defs.json has no $defs".to_owned()];
    };
    for (name, definition) in defs {
        let Some(theirs) = generated.pointer(&format!("/$defs/{name}")) else {
            found.push(format!("the generated schema has no $defs/{name}"));
            continue;
        };
        let mut compare = |at: &str, ours: &Value, theirs: &Value| {
            if ours.get("description") != theirs.get("description") {
                found.push(format!(
                    "$defs/{name}{at}: description {} in ours, {} generated",
                    shown(ours.get("description")),
                    shown(theirs.get("description"))
                ));
            }
        };
        compare("", definition, theirs);
        let properties = definition.get("properties").and_then(Value::as_object);
        for (property, schema) in properties.into_iter().flatten() {
            let at = format!("/properties/{}", mcp_recovery_model::escape_token(property));
            let missing = json!({"description": format!("(no property {property})")});
            compare(&at, schema, theirs.pointer(&at).unwrap_or(&missing));
        }
    }
    found
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "(none)".to_owned(), Value::to_string)
}

/// Our two validators and the generated schema's two.
pub(super) struct Comparison {
    pub(super) ours_recovery: Validator,
    pub(super) ours_annotations: Validator,
    pub(super) generated_recovery: Validator,
    pub(super) generated_annotations: Validator,
}

/// What a comparison found.
pub(super) struct Outcome {
    pub(super) summary: String,
    pub(super) failures: Vec<String>,
}

impl Comparison {
    pub(super) fn new(defs: &Value, root: &Path, generated: &Value) -> Result<Self, String> {
        let recovery = read_json(&root.join("spec/schema/recovery.schema.json"))?;
        Ok(Self {
            ours_recovery: compile(&recovery, "recovery.schema.json")?,
            ours_annotations: definition_validator(defs, "ToolAnnotations")?,
            generated_recovery: definition_validator(generated, "Recovery")?,
            generated_annotations: definition_validator(generated, "ToolAnnotations")?,
        })
    }

    fn verdicts(&self, case: &Case) -> (bool, bool) {
        match case.kind {
            Kind::Recovery => (
                self.ours_recovery.is_valid(&case.value),
                self.generated_recovery.is_valid(&case.value),
            ),
            Kind::Annotations => (
                self.ours_annotations.is_valid(&case.value),
                self.generated_annotations.is_valid(&case.value),
            ),
        }
    }

    /// Compares every case; a difference outside `excluded`, an excluded case that agrees, an
    /// excluded name that matches no case, or a kind never both accepted and rejected fails.
    pub(super) fn run(&self, cases: &[Case], excluded: &[(&str, &str)]) -> Outcome {
        let mut failures = Vec::new();
        let mut seen = [[0usize; 2]; 2];
        let mut used = HashSet::new();
        let verdict = |accepted: bool| if accepted { "accepts" } else { "rejects" };
        for case in cases {
            let (ours, theirs) = self.verdicts(case);
            seen[usize::from(case.kind == Kind::Annotations)][usize::from(ours)] += 1;
            match excluded.iter().find(|(name, _)| *name == case.name) {
                Some((name, constraint)) => {
                    used.insert(*name);
                    if ours == theirs {
                        failures.push(format!(
                            "{name}: excluded for \"{constraint}\", yet both schemas {} it: drop the exclusion",
                            verdict(ours)
                        ));
                    }
                }
                None if ours != theirs => failures.push(format!(
                    "{}: our schema {} {}, the schema generated from the TypeScript {} it",
                    case.name,
                    verdict(ours),
                    case.value,
                    verdict(theirs)
                )),
                None => {}
            }
        }
        for (name, _) in excluded {
            if !used.contains(name) {
                failures.push(format!("excluded case {name} does not exist"));
            }
        }
        for (index, kind) in ["recovery", "annotations"].iter().enumerate() {
            if seen[index][0] == 0 || seen[index][1] == 0 {
                failures.push(format!(
                    "no {kind} object was both accepted and rejected: the comparison proves nothing"
                ));
            }
        }
        Outcome {
            summary: format!(
                "{} cases agree ({} recovery objects: {} valid, {} invalid; {} annotations objects: {} valid, {} invalid), {} excluded",
                cases.len() - failures.len().min(cases.len()),
                seen[0][0] + seen[0][1],
                seen[0][1],
                seen[0][0],
                seen[1][0] + seen[1][1],
                seen[1][1],
                seen[1][0],
                excluded.len()
            ),
            failures,
        }
    }
}
