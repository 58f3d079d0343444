//! `cargo xtask check-shared`: checks against real data that lives beside the repository.
//!
//! `../shared/data` exists beside CI, never in the repository nor on a user's machine, so these
//! checks are not `#[test]`s; they fail loudly when the folder is missing rather than pass silently.

use std::path::{Path, PathBuf};

use jsonschema::Validator;
use mcp_recovery_model::{Tool, ToolsList};
use serde_json::{Value, json};

use crate::workspace::{data_dir, read_json};

/// The official MCP schema revision the drop-in definitions are merged into.
const MCP_SCHEMA: &str = "mcp-schema/2026-07-28.schema.json";
/// Official examples, one folder per `$defs` name.
const MCP_EXAMPLES: &str = "mcp-schema/examples-2026-07-28";

/// Census of `../shared/data/real-servers/`: fails loudly when the folder is missing, or when
/// the real servers are anything but clean tools lists.
pub fn census_shared(root: &Path) -> Result<(), String> {
    let dir = data_dir(root, "real-servers", "the census check")?;
    let census = mcp_recovery_census::census_paths(
        std::slice::from_ref(&dir),
        &mcp_recovery_census::CensusOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    print!("{}", census.render_table());
    if census.servers == 0 || census.files.not_tools_lists > 0 {
        return Err(format!(
            "census of {}: expected only tools lists, got {:?}",
            dir.display(),
            census.not_tools_lists
        ));
    }
    let errors = census.lint.as_ref().map_or(0, |l| l.errors);
    if errors > 0 {
        return Err(format!(
            "census of {}: the linter reports {errors} error(s) on real servers",
            dir.display()
        ));
    }
    Ok(())
}

/// Runs every shared-data check and reports all failures together.
pub fn check(root: &Path) -> Result<(), String> {
    let data = data_dir(root, "", "check-shared")?;
    let mut failures = Vec::new();
    let tool_schema = read_json(&root.join("spec/schema/tool.schema.json"))?;
    let tool_validator = compile(&tool_schema, "spec/schema/tool.schema.json")?;

    let mut tools = Vec::new();
    for dir in ["real-servers", "peers"] {
        for path in json_files(&data.join(dir))? {
            let document = read_json(&path)?;
            let Some(list) = tools_of(&document) else {
                failures.push(format!("{}: no tools array found", path.display()));
                continue;
            };
            tools.extend(list.iter().map(|tool| (path.clone(), tool.clone())));
            if let Some(result) = document.get("result") {
                round_trip::<ToolsList>(&path, "the tools/list result", result, &mut failures);
            }
        }
    }
    let official_tools = json_files(&data.join(MCP_EXAMPLES).join("Tool"))?;
    for path in &official_tools {
        tools.push((path.clone(), read_json(path)?));
    }
    if tools.is_empty() {
        return Err(format!("no tools found under {}", data.display()));
    }
    for (path, tool) in &tools {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("<unnamed>");
        for error in tool_validator.iter_errors(tool) {
            failures.push(format!(
                "{} tool {name}: tool.schema.json rejects it at {}: {error}",
                path.display(),
                error.instance_path()
            ));
        }
        round_trip::<Tool>(path, &format!("tool {name}"), tool, &mut failures);
    }
    println!(
        "{} tools validate against tool.schema.json and round-trip",
        tools.len()
    );

    let examples = merged_schema_accepts_official_examples(root, &data, &mut failures)?;
    println!(
        "{examples} official examples validate against the MCP schema with sep-3172.defs.json merged"
    );

    let captures = captures_lint_without_errors(&data, &mut failures)?;
    println!("{captures} real tools/list captures lint without errors");

    let results = sarif_validates(root, &data, &mut failures)?;
    println!("`lint --format sarif fixtures/` ({results} results) validates against SARIF 2.1.0");
    let notifications = sarif_of_failed_servers_validates(root, &data, &mut failures)?;
    println!(
        "`lint --format sarif` of servers that failed ({notifications} notifications) validates \
         against SARIF 2.1.0"
    );

    census_shared(root)?;

    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} shared-data checks failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        ))
    }
}

/// Merges the drop-in `$defs` into the official schema and validates every official example
/// against the definition its folder names; returns how many examples were checked.
fn merged_schema_accepts_official_examples(
    root: &Path,
    data: &Path,
    failures: &mut Vec<String>,
) -> Result<usize, String> {
    let drop_in = read_json(&root.join("spec/schema/sep-3172.defs.json"))?;
    let merged = official_schema_with(data, &drop_in, "sep-3172.defs.json")?;
    let checked = examples_validate(&merged, &data.join(MCP_EXAMPLES), failures)?;

    merge_in_force(&merged, "sep-3172.defs.json", failures)?;
    Ok(checked)
}

/// The merge must be in force: the merged `Tool` rejects a malformed recovery.
pub(crate) fn merge_in_force(
    merged: &Value,
    what: &str,
    failures: &mut Vec<String>,
) -> Result<(), String> {
    let tool = definition_validator(merged, "Tool")?;
    let bad = json!({
        "name": "charge",
        "inputSchema": {"type": "object"},
        "annotations": {"recovery": {"strategy": 1, "compensatingOperation": {"operationId": "refund", "parameters": {}}}}
    });
    if tool.is_valid(&bad) {
        failures.push(format!(
            "the MCP schema merged with {what} accepts a recovery whose strategy is a number"
        ));
    }
    Ok(())
}

/// Every capture of a real server, and the peer's tool list, lints with zero errors.
fn captures_lint_without_errors(data: &Path, failures: &mut Vec<String>) -> Result<usize, String> {
    let linter =
        mcp_recovery_validator::Linter::new(mcp_recovery_validator::LintOptions::default())
            .map_err(|e| e.to_string())?;
    let mut count = 0;
    for dir in ["real-servers", "peers"] {
        for path in json_files(&data.join(dir))? {
            let bytes =
                std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let report = linter.lint_source(&bytes);
            if report.tools == 0 {
                failures.push(format!("{}: linted as holding no tools", path.display()));
            }
            for d in report
                .diagnostics
                .iter()
                .filter(|d| d.severity == mcp_recovery_validator::Severity::Error)
            {
                failures.push(format!(
                    "{}: {} {} at {}: {}",
                    path.display(),
                    d.code,
                    d.name,
                    d.pointer,
                    d.message
                ));
            }
            count += 1;
        }
    }
    Ok(count)
}

/// The SARIF log of `mcp-recovery lint --format sarif ARGS` run in `dir`, which must exit with
/// `expected`, checked against the OASIS SARIF 2.1.0 schema (rejections go to `failures`).
fn sarif_of(
    root: &Path,
    data: &Path,
    dir: &Path,
    args: &[&str],
    expected: i32,
    failures: &mut Vec<String>,
) -> Result<Value, String> {
    let schema = read_json(&data.join("sarif-schema-2.1.0.json"))?;
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .build(&schema)
        .map_err(|e| format!("the SARIF schema does not compile: {e}"))?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = std::process::Command::new(cargo)
        .current_dir(dir)
        .args(["run", "--quiet", "--locked", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .args(["-p", "mcp-recovery", "--", "lint", "--format", "sarif"])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run mcp-recovery: {e}"))?;
    if output.status.code() != Some(expected) {
        return Err(format!(
            "`mcp-recovery lint --format sarif {}` exited with {} (expected {expected}): {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let sarif: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("the SARIF output is not JSON: {e}"))?;
    for error in validator.iter_errors(&sarif) {
        failures.push(format!(
            "SARIF output of `lint {}` rejected at {}: {error}",
            args.join(" "),
            error.instance_path()
        ));
    }
    Ok(sarif)
}

/// `mcp-recovery lint --format sarif fixtures/` validates against the OASIS SARIF 2.1.0 schema.
fn sarif_validates(root: &Path, data: &Path, failures: &mut Vec<String>) -> Result<usize, String> {
    // Exit 1: the invalid fixtures have findings, which is what this check needs.
    let sarif = sarif_of(root, data, root, &["fixtures"], 1, failures)?;
    let results = sarif
        .pointer("/runs/0/results")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if results == 0 {
        failures.push("the SARIF output of the invalid fixtures has no results".to_owned());
    }
    Ok(results)
}

/// The SARIF log of a client config whose servers fail to start, exit early or are disabled
/// validates too, with `executionSuccessful: false` and a notification per server.
fn sarif_of_failed_servers_validates(
    root: &Path,
    data: &Path,
    failures: &mut Vec<String>,
) -> Result<usize, String> {
    let dir = crate::workspace::temp_dir("mcp-recovery-sarif")?;
    let config = serde_json::json!({"mcpServers": {
        "absent": {"command": "./no-such-server"},
        "exits": {"command": "sh", "args": ["-c", "echo 'no token' >&2; exit 3"]},
        "off": {"command": "sh", "disabled": true},
    }});
    std::fs::write(dir.path().join("mcp.json"), config.to_string())
        .map_err(|e| format!("cannot write the client config: {e}"))?;
    let args = ["--config", "mcp.json", "--all-servers"];
    let sarif = sarif_of(root, data, dir.path(), &args, 2, failures)?;
    let invocation = sarif.pointer("/runs/0/invocations/0");
    if invocation.and_then(|i| i.get("executionSuccessful")) != Some(&Value::Bool(false)) {
        failures.push("the SARIF of servers that failed says the run succeeded".to_owned());
    }
    let notifications = invocation
        .and_then(|i| i.get("toolExecutionNotifications"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if notifications != 3 {
        failures.push(format!(
            "the SARIF of three servers not linted has {notifications} notifications"
        ));
    }
    Ok(notifications)
}

/// The official MCP schema with the `$defs` of `drop_in` merged into its own (`ToolAnnotations`
/// replaced); `what` names the drop-in in messages.
pub(crate) fn official_schema_with(
    data: &Path,
    drop_in: &Value,
    what: &str,
) -> Result<Value, String> {
    let mut merged = read_json(&data.join(MCP_SCHEMA))?;
    let (Some(defs), Some(new_defs)) = (
        merged.get_mut("$defs").and_then(Value::as_object_mut),
        drop_in.get("$defs").and_then(Value::as_object),
    ) else {
        return Err(format!("both the MCP schema and {what} must have $defs"));
    };
    if !defs.contains_key("ToolAnnotations") {
        return Err("the MCP schema has no ToolAnnotations definition to extend".to_owned());
    }
    for (name, definition) in new_defs {
        defs.insert(name.clone(), definition.clone());
    }
    Ok(merged)
}

/// Validates every `<TypeName>/*.json` under `examples` against `$defs/<TypeName>` of `schema`;
/// returns how many examples were checked (none is an error).
pub(crate) fn examples_validate(
    schema: &Value,
    examples: &Path,
    failures: &mut Vec<String>,
) -> Result<usize, String> {
    let mut checked = 0;
    let mut folders = std::fs::read_dir(examples)
        .map_err(|e| format!("cannot list {}: {e}", examples.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect::<Vec<_>>();
    folders.sort();
    for folder in folders {
        let definition = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let validator = definition_validator(schema, &definition)?;
        for path in json_files(&folder)? {
            let example = read_json(&path)?;
            for error in validator.iter_errors(&example) {
                failures.push(format!(
                    "{}: the merged schema's {definition} rejects it at {}: {error}",
                    path.display(),
                    error.instance_path()
                ));
            }
            checked += 1;
        }
    }
    if checked == 0 {
        return Err(format!("no examples found under {}", examples.display()));
    }
    Ok(checked)
}

/// A validator for one `$defs` entry of `schema`.
pub(crate) fn definition_validator(schema: &Value, definition: &str) -> Result<Validator, String> {
    if schema.pointer(&format!("/$defs/{definition}")).is_none() {
        return Err(format!(
            "the MCP schema has no $defs/{definition} (an examples folder names it)"
        ));
    }
    // Only the definitions: the document's own root keywords must not apply.
    let rooted = json!({
        "$schema": schema["$schema"],
        "$defs": schema["$defs"],
        "$ref": format!("#/$defs/{definition}"),
    });
    compile(&rooted, &format!("$defs/{definition}"))
}

pub(crate) fn compile(schema: &Value, what: &str) -> Result<Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| format!("{what} does not compile: {e}"))
}

/// Deserializes `value` into `T` and serializes it back; any difference is a failure.
fn round_trip<T>(path: &Path, what: &str, value: &Value, failures: &mut Vec<String>)
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let back = serde_json::from_value::<T>(value.clone())
        .map_err(|e| e.to_string())
        .and_then(|typed| serde_json::to_value(typed).map_err(|e| e.to_string()));
    match back {
        Ok(back) if back == *value => {}
        Ok(_) => failures.push(format!(
            "{} {what}: the model does not round-trip it losslessly",
            path.display()
        )),
        Err(e) => failures.push(format!(
            "{} {what}: the model cannot read it: {e}",
            path.display()
        )),
    }
}

/// The tools, found by the locator every command uses.
fn tools_of(document: &Value) -> Option<&[Value]> {
    mcp_recovery_model::locate_tools(document)
        .ok()
        .map(|location| location.tools)
}

/// The `*.json` files of a directory, sorted; a missing directory is an error.
pub(crate) fn json_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("no JSON files in {}", dir.display()));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the shared folder the checks fail with a message, never pass silently.
    #[test]
    fn missing_shared_data_fails_loudly() {
        // `../shared` of a fresh directory does not exist.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let message = check(&root).unwrap_err();
        assert!(message.contains("shared data not found"), "{message}");
    }

    #[test]
    fn tools_are_found_in_every_accepted_shape() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}});
        for document in [
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}),
            json!({"tools": [tool]}),
            json!([tool]),
        ] {
            assert_eq!(
                tools_of(&document).map(<[Value]>::len),
                Some(1),
                "{document}"
            );
        }
        assert!(tools_of(&json!({"result": {}})).is_none());
    }
}
