//! `cargo xtask codegen [--check]`: every file generated from code, in one table.

use std::path::Path;

use serde_json::Value;

/// Produces the complete content of one generated file.
type Generator = fn() -> Result<String, String>;

/// Every generated file with a fixed path: its path relative to the repository root, and its
/// generator. [`generated_files`] adds the examples, whose number comes from the model.
pub const GENERATED: &[(&str, Generator)] = &[
    ("spec/schema/recovery.schema.json", || {
        Ok(json(mcp_recovery_schema::recovery_schema()))
    }),
    ("spec/schema/compensate.schema.json", || {
        Ok(json(mcp_recovery_schema::compensate_schema()))
    }),
    ("spec/schema/tool.schema.json", || {
        Ok(json(mcp_recovery_schema::tool_schema()))
    }),
    // The linter's own copy, inside its crate so that the published crate carries it.
    ("crates/validator/src/schema_stage/tool.schema.json", || {
        Ok(json(mcp_recovery_schema::tool_schema()))
    }),
    ("spec/schema/tools-list.schema.json", || {
        Ok(json(mcp_recovery_schema::tools_list_schema()))
    }),
    ("spec/schema/overlay.schema.json", || {
        Ok(json(mcp_recovery_schema::overlay_schema()))
    }),
    ("spec/schema/sep-3172.defs.json", || {
        Ok(json(mcp_recovery_schema::sep_defs()))
    }),
    (TYPESCRIPT_MODULE, || {
        mcp_recovery_schema::typescript::module().map_err(|e| e.to_string())
    }),
    ("spec/rules.md", || {
        Ok(mcp_recovery_validator::rules_markdown())
    }),
    ("spec/schema/policy.schema.json", || {
        Ok(json(mcp_recovery_schema::schema_document::<
            mcp_recovery_proxy::PolicyFile,
        >(
            "policy.schema.json",
            "the mcp-recovery-proxy `PolicyFile` type",
        )))
    }),
    ("spec/schema/mcp-recovery-toml.schema.json", || {
        Ok(json(mcp_recovery_validator::config_schema()))
    }),
];

/// The standalone TypeScript module of the SEP-3172 definitions.
pub const TYPESCRIPT_MODULE: &str = "spec/typescript/sep-3172.ts";
/// Where the examples go, laid out as in a protocol version directory of the specification.
pub const TYPESCRIPT_DIR: &str = "spec/typescript";

/// Directories whose every file must come from [`generated_files`]; anything else there is stale.
const GENERATED_DIRS: &[&str] = &["spec/schema", TYPESCRIPT_DIR];

/// Every generated file: path relative to the repository root, and content.
pub fn generated_files() -> Result<Vec<(String, String)>, String> {
    let mut files = Vec::new();
    for (path, generator) in GENERATED {
        files.push((
            (*path).to_owned(),
            generator().map_err(|e| format!("{path}: {e}"))?,
        ));
    }
    let examples = mcp_recovery_schema::spec_repo::example_files().map_err(|e| e.to_string())?;
    for (path, content) in examples {
        files.push((format!("{TYPESCRIPT_DIR}/{path}"), content));
    }
    Ok(files)
}

/// Pretty-printed JSON with a trailing newline, as committed.
pub(crate) fn json(value: Value) -> String {
    mcp_recovery_schema::spec_repo::pretty(&value)
}

/// Writes every generated file under `root`, or with `check` only reports the stale ones.
pub fn generate(root: &Path, check: bool) -> Result<(), String> {
    let mut stale = Vec::new();
    let files = generated_files()?;
    for (relative, content) in &files {
        let path = root.join(relative);
        if std::fs::read_to_string(&path).is_ok_and(|current| current == *content) {
            continue;
        }
        if check {
            stale.push(relative.clone());
            continue;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, content)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {relative}");
    }
    let strays = strays(root, &files)?;
    if !stale.is_empty() || !strays.is_empty() {
        let mut message = String::from("generated files are out of date:");
        for path in &stale {
            message.push_str(&format!("\n  {path}"));
        }
        for path in &strays {
            message.push_str(&format!(
                "\n  {path} (not produced by any generator; delete it)"
            ));
        }
        if !stale.is_empty() {
            message.push_str("\nrun `cargo xtask codegen`");
        }
        return Err(message);
    }
    Ok(())
}

/// Files inside [`GENERATED_DIRS`] (at any depth) that no generator produces.
fn strays(root: &Path, files: &[(String, String)]) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    let mut pending: Vec<String> = GENERATED_DIRS.iter().map(|d| (*d).to_owned()).collect();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot list {dir}: {e}"))?;
            let relative = format!("{dir}/{}", entry.file_name().to_string_lossy());
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(relative);
            } else if !files.iter().any(|(path, _)| *path == relative) {
                found.push(relative);
            }
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo test` fails when a committed generated file differs from what the code produces.
    #[test]
    fn generated_files_are_fresh() {
        if let Err(message) = generate(&crate::workspace::repo_root(), true) {
            panic!("{message}");
        }
    }

    #[test]
    fn every_schema_document_is_generated() {
        for (name, value) in mcp_recovery_schema::schemas() {
            let path = format!("spec/schema/{name}");
            let generator = GENERATED.iter().find(|(p, _)| *p == path);
            let Some((_, generator)) = generator else {
                panic!("{path} is missing from the codegen table");
            };
            assert_eq!(generator(), Ok(json(value)), "{path}");
        }
    }

    #[test]
    fn check_mode_reports_stale_and_stray_files_without_writing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let schema_dir = dir.join("spec/schema");
        std::fs::create_dir_all(&schema_dir).unwrap();
        std::fs::write(schema_dir.join("tool.schema.json"), "{}\n").unwrap();
        std::fs::write(schema_dir.join("old.schema.json"), "{}\n").unwrap();
        let tool_examples = dir.join(TYPESCRIPT_DIR).join("examples/Tool");
        std::fs::create_dir_all(&tool_examples).unwrap();
        std::fs::write(tool_examples.join("old.json"), "{}\n").unwrap();
        let message = generate(dir, true).unwrap_err();
        assert!(
            message.contains("spec/schema/tool.schema.json"),
            "{message}"
        );
        assert!(
            message.contains("spec/schema/recovery.schema.json"),
            "{message}"
        );
        assert!(
            message.contains("old.schema.json (not produced"),
            "{message}"
        );
        assert!(
            message.contains("spec/typescript/examples/Tool/old.json (not produced"),
            "{message}"
        );
        assert!(message.contains(TYPESCRIPT_MODULE), "{message}");
        assert!(message.contains("run `cargo xtask codegen`"), "{message}");
        assert_eq!(
            std::fs::read_to_string(schema_dir.join("tool.schema.json")).unwrap(),
            "{}\n"
        );

        std::fs::remove_file(schema_dir.join("old.schema.json")).unwrap();
        std::fs::remove_file(tool_examples.join("old.json")).unwrap();
        generate(dir, false).unwrap();
        generate(dir, true).unwrap();
    }
}
