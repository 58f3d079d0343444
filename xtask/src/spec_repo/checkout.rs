//! Step 3: `mcp-recovery schema --spec-repo` on a checkout-shaped directory, twice, then the
//! repository's formatting, type and generation steps on the result, and Ajv on the examples.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::tools::Tools;
use crate::codegen::TYPESCRIPT_MODULE;
use crate::live::run;
use crate::workspace::read_json;

/// The rest of a `schema.ts` shaped like the specification's: the `Tool` that refers to the
/// extended interface.
const CHECKOUT_TOOL_TS: &str = r#"
/**
 * A tool the client can call.
 */
export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { $schema?: string; type: "object"; [key: string]: unknown };
  outputSchema?: { $schema?: string; [key: string]: unknown };
  annotations?: ToolAnnotations;
  _meta?: { [key: string]: unknown };
}
"#;

/// A `schema.ts` before the SEP: the module's `ToolAnnotations` without the added member, and a
/// `Tool`.
pub(super) fn checkout_schema_ts(module: &str) -> Result<String, String> {
    let member = mcp_recovery_schema::typescript::added_member().map_err(|e| e.to_string())?;
    let start = module.find("/**").ok_or("the module has no doc comment")?;
    let end = module
        .find("\n}\n")
        .map(|i| i + 3)
        .ok_or("the module declares no interface")?;
    let interface = module[start..end].replace(&format!("\n{member}"), "");
    if interface.contains("recovery?:") {
        return Err("the added member is still in the base interface".to_owned());
    }
    Ok(format!("{interface}{CHECKOUT_TOOL_TS}"))
}

/// What a SEP author does: run `schema --spec-repo` in a checkout (twice: the second run must
/// change nothing), then the repository's own checks on the result.
pub(super) fn spec_repo_flow(
    root: &Path,
    tools: &Tools,
    checkout: &Path,
    generated: &Value,
) -> Result<Vec<String>, String> {
    let mut failures = Vec::new();
    let version_dir = checkout.join("schema/draft");
    std::fs::create_dir_all(&version_dir)
        .map_err(|e| format!("cannot create {}: {e}", version_dir.display()))?;
    let schema_ts = version_dir.join("schema.ts");
    let module_text = std::fs::read_to_string(root.join(TYPESCRIPT_MODULE))
        .map_err(|e| format!("cannot read {TYPESCRIPT_MODULE}: {e}"))?;
    std::fs::write(&schema_ts, checkout_schema_ts(&module_text)?)
        .map_err(|e| format!("cannot write {}: {e}", schema_ts.display()))?;
    tools
        .prettier_check(&[&schema_ts])
        .map_err(|e| format!("the checkout's own schema.ts is not prettier-clean: {e}"))?;

    let examples = mcp_recovery_schema::spec_repo::example_files().map_err(|e| e.to_string())?;
    for (run, expected) in [("first", "wrote"), ("second", "unchanged")] {
        let printed = spec_repo_command(root, checkout)?;
        let schema_status = if run == "first" {
            "updated"
        } else {
            "unchanged"
        };
        let mut wanted = vec![format!("{schema_status} schema/draft/schema.ts")];
        wanted.extend(
            examples
                .iter()
                .map(|(path, _)| format!("{expected} schema/draft/{path}")),
        );
        for line in wanted {
            if !printed.lines().any(|l| l.starts_with(&line)) {
                failures.push(format!(
                    "{run} run of `schema --spec-repo` did not print `{line}`:\n{printed}"
                ));
            }
        }
    }

    let module = root.join(TYPESCRIPT_MODULE);
    tools.prettier_check(&[&schema_ts, &module])?;
    tools.tsc(&schema_ts)?;
    tools.tsc(&module)?;

    let patched = tools.generate(&schema_ts)?;
    let defs = read_json(&root.join("spec/schema/sep-3172.defs.json"))?;
    let names = defs
        .get("$defs")
        .and_then(Value::as_object)
        .map(|d| d.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    for name in names {
        let pointer = if name == "ToolAnnotations" {
            "/$defs/ToolAnnotations/properties/recovery".to_owned()
        } else {
            format!("/$defs/{name}")
        };
        if patched.pointer(&pointer) != generated.pointer(&pointer) {
            failures.push(format!(
                "{pointer} generated from the patched schema.ts differs from the one generated from {TYPESCRIPT_MODULE}"
            ));
        }
    }
    let schema_json = version_dir.join("schema.json");
    std::fs::write(&schema_json, crate::codegen::json(patched))
        .map_err(|e| format!("cannot write {}: {e}", schema_json.display()))?;
    let ajv = tools.ajv_examples(&schema_json, &version_dir.join("examples"))?;
    println!("    checkout: {ajv}");
    Ok(failures)
}

/// Runs `mcp-recovery schema --spec-repo CHECKOUT --protocol-version draft`; returns what it printed.
fn spec_repo_command(root: &Path, checkout: &Path) -> Result<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args(["run", "--quiet", "--locked", "-p", "mcp-recovery", "--"])
        .args(["schema", "--spec-repo"])
        .arg(checkout)
        .args(["--protocol-version", "draft"]);
    // A cold build of the binary on a small machine takes minutes.
    let what = "mcp-recovery schema --spec-repo";
    let output = run(command, Duration::from_secs(1800), what)?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(output.failure(what))
    }
}
