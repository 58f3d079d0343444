//! The steps against the live servers: each server fetched, linted and compared with its
//! capture; all of them linted from one client config; the server-memory overlay applied.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::compare::{compare, tools_of};
use super::process::{Output, run};
use super::servers::{LiveServer, path_arg};
use crate::workspace::read_json;

/// Time limit of one `mcp-recovery` run against one server, start to shutdown.
const SERVER_TIMEOUT: Duration = Duration::from_secs(60);
/// The per-request limit handed to `mcp-recovery --timeout`, below [`SERVER_TIMEOUT`] so that
/// the binary reports a stuck server itself before this check kills it.
const REQUEST_TIMEOUT_SECS: u64 = 45;

/// Fetches and lints one server, then compares the fetched tools with its capture.
pub(super) fn check_server(
    binary: &Path,
    server: &LiveServer,
    capture_path: &Path,
) -> Result<(), String> {
    let label = format!("server {} (`{}`)", server.name, server.command.join(" "));
    let capture = read_json(capture_path).map_err(|e| format!("{label}: capture: {e}"))?;
    let captured = tools_of(&capture)
        .ok_or_else(|| format!("{label}: {} has no tools array", capture_path.display()))?;

    let timeout = REQUEST_TIMEOUT_SECS.to_string();
    let mut fetch = Command::new(binary);
    fetch
        .args(["fetch", "--timeout", &timeout, "--stdio", "--"])
        .args(&server.command);
    let fetched = run(fetch, SERVER_TIMEOUT, &format!("{label}: fetch"))?;
    if !fetched.status.success() {
        return Err(fetched.failure(&format!("{label}: mcp-recovery fetch")));
    }
    let document: Value = serde_json::from_str(&fetched.stdout)
        .map_err(|e| format!("{label}: mcp-recovery fetch printed no JSON: {e}"))?;
    let live = tools_of(&document)
        .ok_or_else(|| format!("{label}: mcp-recovery fetch printed JSON without a tools array"))?;

    let mut lint = Command::new(binary);
    lint.args([
        "lint",
        "--format",
        "json",
        "--timeout",
        &timeout,
        "--stdio",
        "--",
    ])
    .args(&server.command);
    let linted = run(lint, SERVER_TIMEOUT, &format!("{label}: lint"))?;
    let report: Value = serde_json::from_str(&linted.stdout).map_err(|e| {
        linted.failure(&format!(
            "{label}: mcp-recovery lint printed no JSON report ({e})"
        ))
    })?;
    let summary = &report["summary"];
    let errors = summary["errors"].as_u64();
    println!(
        "    {} tools fetched; lint: {} tools, {} errors, {} warnings, {} infos",
        live.len(),
        summary["tools"],
        summary["errors"],
        summary["warnings"],
        summary["infos"]
    );

    let mut problems = Vec::new();
    if errors != Some(0) || !linted.status.success() {
        let mut message = format!(
            "lint reported {} errors and exited with {}",
            summary["errors"], linted.status
        );
        for diagnostic in report["diagnostics"].as_array().into_iter().flatten() {
            if diagnostic["severity"] == "error" {
                let _ = write!(
                    message,
                    "\n    {} {} tool {} at {}: {}",
                    diagnostic["code"],
                    diagnostic["name"],
                    diagnostic["tool"],
                    diagnostic["pointer"],
                    diagnostic["message"]
                );
            }
        }
        problems.push(message);
    }
    problems.extend(compare(captured, live));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{label}:\n  {}", problems.join("\n  ")))
    }
}

/// Applies the server-memory overlay of `spec/examples/` to the live server and to its capture.
pub(super) fn check_overlay(
    binary: &Path,
    root: &Path,
    servers: &[LiveServer],
    captures: &Path,
    tmp: &Path,
) -> Result<(), String> {
    let label = "overlay for server-memory";
    let server = servers
        .iter()
        .find(|s| s.name == "server-memory")
        .ok_or_else(|| format!("{label}: server-memory is not among the live servers"))?;
    let overlay = root.join("spec/examples/server-memory.overlay.json");
    let text = std::fs::read_to_string(&overlay)
        .map_err(|e| format!("{label}: cannot read {}: {e}", overlay.display()))?;
    let misspelt = tmp.join("misspelt.overlay.json");
    let wrong = text.replace("\"delete_observations\"", "\"delete_observationz\"");
    if wrong == text {
        return Err(format!(
            "{label}: {} names no delete_observations",
            overlay.display()
        ));
    }
    std::fs::write(&misspelt, wrong)
        .map_err(|e| format!("{label}: cannot write {}: {e}", misspelt.display()))?;

    let lint = |overlay: &Path, target: &[String]| -> Result<(Output, Value), String> {
        let mut command = Command::new(binary);
        command
            .args(["lint", "--format", "json", "--overlay"])
            .arg(overlay)
            .args(target);
        let output = run(command, SERVER_TIMEOUT, &format!("{label}: lint"))?;
        let report = serde_json::from_str(&output.stdout)
            .map_err(|e| output.failure(&format!("{label}: lint printed no JSON report ({e})")))?;
        Ok((output, report))
    };
    let mut live = vec!["--stdio".to_owned(), "--".to_owned()];
    live.extend(server.command.iter().cloned());
    let saved = vec![path_arg(&captures.join(server.capture))];
    for (what, target) in [("live", &live), ("saved", &saved)] {
        let (output, report) = lint(&overlay, target)?;
        if !output.status.success() || report["summary"]["errors"] != 0 {
            return Err(output.failure(&format!("{label}: the {what} list with the overlay")));
        }
        let (output, report) = lint(&misspelt, target)?;
        let unknown = report["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| d["code"] == "R008" && d["tool"] == "delete_observationz");
        if output.status.code() != Some(1) || !unknown {
            return Err(output.failure(&format!(
                "{label}: the {what} list with a misspelt overlay tool must be R008"
            )));
        }
    }

    let mut fetch = Command::new(binary);
    fetch.arg("fetch").args(&live);
    let fetched = run(fetch, SERVER_TIMEOUT, &format!("{label}: fetch"))?;
    if !fetched.status.success() {
        return Err(fetched.failure(&format!("{label}: fetch")));
    }
    let tools = tmp.join("server-memory.tools.json");
    let trace = tmp.join("server-memory.trace.jsonl");
    let relations = serde_json::json!([{"from": "a", "to": "b", "relationType": "knows"}]);
    let call = serde_json::json!({
        "name": "create_relations",
        "arguments": {"relations": relations},
        "result": {"content": [{"type": "text", "text": "created"}],
                   "structuredContent": {"relations": relations}},
    });
    std::fs::write(&tools, &fetched.stdout)
        .and_then(|()| std::fs::write(&trace, format!("{call}\n")))
        .map_err(|e| format!("{label}: cannot write the plan's inputs: {e}"))?;
    let mut plan = Command::new(binary);
    plan.args(["plan", "--format", "json", "--tools"])
        .arg(&tools)
        .arg("--trace")
        .arg(&trace)
        .arg("--overlay")
        .arg(&overlay);
    let planned = run(plan, SERVER_TIMEOUT, &format!("{label}: plan"))?;
    let steps: Value = serde_json::from_str(&planned.stdout)
        .map_err(|e| planned.failure(&format!("{label}: plan printed no JSON ({e})")))?;
    let step = &steps["steps"][0];
    if step["status"] != "compensate"
        || step["call"]["name"] != "delete_relations"
        || step["call"]["arguments"]["relations"] != relations
    {
        return Err(planned.failure(&format!(
            "{label}: plan must compensate create_relations with delete_relations, got {step}"
        )));
    }
    println!(
        "    overlay: live and saved lists lint clean, R008 on a misspelt tool, plan compensates"
    );
    Ok(())
}

/// Writes every server into a Cursor-style `mcp.json` (`mcpServers`, `command` and `args`) and
/// lints them all in one run: no errors, one section per server, each revision named.
pub(super) fn check_client_config(
    binary: &Path,
    servers: &[LiveServer],
    tmp: &Path,
) -> Result<(), String> {
    let label = "client config";
    let mut entries = serde_json::Map::new();
    for server in servers {
        let (command, args) = server
            .command
            .split_first()
            .ok_or_else(|| format!("{label}: server {} has no command", server.name))?;
        entries.insert(
            server.name.to_owned(),
            serde_json::json!({"command": command, "args": args}),
        );
    }
    let config = tmp.join("mcp.json");
    let text = serde_json::json!({ "mcpServers": entries }).to_string();
    std::fs::write(&config, text)
        .map_err(|e| format!("{label}: cannot write {}: {e}", config.display()))?;
    let timeout = REQUEST_TIMEOUT_SECS.to_string();
    let mut lint = Command::new(binary);
    lint.args([
        "lint",
        "--format",
        "json",
        "--verbose",
        "--timeout",
        &timeout,
    ])
    .arg("--config")
    .arg(&config)
    .arg("--all-servers");
    let limit = SERVER_TIMEOUT * u32::try_from(servers.len()).unwrap_or(u32::MAX);
    let linted = run(lint, limit, &format!("{label}: lint --all-servers"))?;
    let report: Value = serde_json::from_str(&linted.stdout).map_err(|e| {
        linted.failure(&format!(
            "{label}: mcp-recovery lint printed no JSON report ({e})"
        ))
    })?;
    let mut problems = Vec::new();
    if !linted.status.success() || report["summary"]["errors"].as_u64() != Some(0) {
        problems.push(linted.failure("lint --all-servers did not pass"));
    }
    for server in servers {
        let prefix = format!("server {}#{}: protocol ", config.display(), server.name);
        match linted.stderr.lines().find_map(|l| l.strip_prefix(&prefix)) {
            Some(revision) => println!("    {}: protocol {revision}", server.name),
            None => problems.push(format!("no protocol revision reported for {}", server.name)),
        }
    }
    println!(
        "    {} servers, {} tools linted from one config",
        servers.len(),
        report["summary"]["tools"]
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{label}:\n  {}", problems.join("\n  ")))
    }
}
