//! The instances both schemas judge: every recovery and annotations object of the fixtures,
//! conformance cases and examples, and mutations of each.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::codegen::TYPESCRIPT_DIR;

/// Values put into `parameters` of every recovery object: each binding kind, each malformed
/// kind, and the JSON types the generator is known to mistranslate (`null`, non-integers).
pub(super) const BINDING_PROBES: &[&str] = &[
    r#""$response.body#/id""#,
    r#""$request.body""#,
    r#""$response.body#/a~1b/~0c""#,
    r#""$request.query.name""#,
    r#""$response.header.X-Trace""#,
    r#""$statusCode""#,
    r#""$bogus""#,
    r#""$response.body#/a~2""#,
    r#""$response.body/id""#,
    r#""$""#,
    r#""order {$request.body#/id} of {$response.body#/n}""#,
    r#""{{$url}}""#,
    r#""{$url""#,
    r#""{$nope}""#,
    r#""prefix {not an expression}""#,
    r#""plain text""#,
    r#""""#,
    r#""`@/ */""#,
    "0",
    "-3",
    "1.5",
    "1e300",
    "true",
    "null",
    r##"{"nested": {"$ref": "#/x"}}"##,
    r#"[1, "$bogus"]"#,
];

/// What a compared instance is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An `annotations.recovery` value.
    Recovery,
    /// A whole `annotations` value.
    Annotations,
}

/// One instance both schemas judge.
#[derive(Debug, Clone)]
pub(super) struct Case {
    pub(super) name: String,
    pub(super) kind: Kind,
    pub(super) value: Value,
}

/// The directories whose JSON files feed the comparison.
const CASE_DIRS: &[&str] = &[
    "fixtures",
    "spec/conformance",
    "spec/examples",
    TYPESCRIPT_DIR,
];

/// Every recovery and annotations object in the fixtures, conformance cases and examples, and
/// the mutations of each.
pub(super) fn cases(root: &Path) -> Result<Vec<Case>, String> {
    let mut files = Vec::new();
    for dir in CASE_DIRS {
        walk_json(&root.join(dir), &mut files)?;
    }
    files.sort();
    let mut found = Vec::new();
    for path in &files {
        let relative = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let Ok(bytes) = std::fs::read(path) else {
            return Err(format!("cannot read {relative}"));
        };
        // Fixtures that are not JSON at all (R001) have no object to compare.
        let Ok(document) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        found.extend(document_cases(&relative, &document));
    }
    let mut seen = HashSet::new();
    let mut all = Vec::new();
    for case in found {
        let mutations = mutations(&case);
        for case in std::iter::once(case).chain(mutations) {
            if seen.insert((case.kind == Kind::Recovery, case.value.to_string())) {
                all.push(case);
            }
        }
    }
    Ok(all)
}

fn walk_json(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk_json(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    Ok(())
}

/// The recovery and annotations objects of one document: a lone recovery object
/// (`*.recovery.json`), a tool, or a `tools/list` in any accepted shape.
pub(super) fn document_cases(file: &str, document: &Value) -> Vec<Case> {
    if file.ends_with(".recovery.json") {
        return vec![Case {
            name: format!("{file}#"),
            kind: Kind::Recovery,
            value: document.clone(),
        }];
    }
    let (base, tools): (String, Vec<&Value>) = match mcp_recovery_model::locate_tools(document) {
        Ok(location) => (
            location.pointer().to_owned(),
            location.tools.iter().collect(),
        ),
        Err(_) if document.get("name").is_some() => (String::new(), vec![document]),
        Err(_) => return Vec::new(),
    };
    let single = tools.len() == 1 && std::ptr::eq(tools[0], document);
    let mut cases = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let at = if single {
            String::new()
        } else {
            format!("{base}/{index}")
        };
        let Some(annotations) = tool.get("annotations") else {
            continue;
        };
        cases.push(Case {
            name: format!("{file}#{at}/annotations"),
            kind: Kind::Annotations,
            value: annotations.clone(),
        });
        if let Some(recovery) = annotations.get("recovery") {
            cases.push(Case {
                name: format!("{file}#{at}/annotations/recovery"),
                kind: Kind::Recovery,
                value: recovery.clone(),
            });
        }
    }
    cases
}

/// Variants of a case that each break (or keep) one constraint.
pub(super) fn mutations(case: &Case) -> Vec<Case> {
    let Some(object) = case.value.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut variant = |label: String, value: Value| {
        out.push(Case {
            name: format!("{} with {label}", case.name),
            kind: case.kind,
            value,
        });
    };
    let with = |pointer: &str, value: Value| -> Option<Value> {
        let mut copy = Value::Object(object.clone());
        let (parent, key) = pointer.rsplit_once('/')?;
        copy.pointer_mut(parent)?
            .as_object_mut()?
            .insert(key.to_owned(), value);
        Some(copy)
    };
    match case.kind {
        Kind::Recovery => {
            if object
                .get("compensatingOperation")
                .and_then(|c| c.get("parameters"))
                .is_some_and(Value::is_object)
            {
                for probe in BINDING_PROBES {
                    let Ok(value) = serde_json::from_str::<Value>(probe) else {
                        continue;
                    };
                    if let Some(mutated) = with("/compensatingOperation/parameters/probe", value) {
                        variant(format!("parameters/probe = {probe}"), mutated);
                    }
                }
            }
            for (pointer, value) in [
                ("/strategy", json!(1)),
                ("/strategy", json!("rollback")),
                ("/compensatingOperation/operationId", json!(7)),
                ("/compensatingOperation/parameters", json!([])),
                ("/compensatingOperation", Value::Null),
                ("/x-note", json!("kept")),
            ] {
                if let Some(mutated) = with(pointer, value.clone()) {
                    variant(format!("{pointer} = {value}"), mutated);
                }
            }
            let mut without = object.clone();
            if without.remove("compensatingOperation").is_some() {
                variant(
                    "no compensatingOperation".to_owned(),
                    Value::Object(without),
                );
            }
        }
        Kind::Annotations => {
            for (pointer, value) in [
                ("/readOnlyHint", json!("yes")),
                ("/title", json!(5)),
                ("/recovery", json!(1)),
                ("/recovery", json!({})),
                ("/x-vendor", json!({"a": 1})),
            ] {
                if let Some(mutated) = with(pointer, value.clone()) {
                    variant(format!("{pointer} = {value}"), mutated);
                }
            }
        }
    }
    out
}
