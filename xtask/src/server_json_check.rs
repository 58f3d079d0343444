//! `cargo xtask check-server-json`: the MCP Registry `server.json` entries of three published,
//! credential-free servers (`crates/cli/tests/server-json/credential-free/`: two npm packages
//! started with `npx`, one PyPI package started with `uvx`) are linted live by one run of
//! `mcp-recovery lint --server-json DIR --format json`. Every entry must be linted, with its
//! protocol revision and tools, and the run must not fail to run (exit 2).
//!
//! uv (for `uvx`) is installed pinned from PyPI into a temporary virtual environment; npm and
//! uv caches live in the same temporary directory. Nothing is skipped: a missing tool fails the
//! step that needs it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::live::{build_binary, probe, run, timed};
use crate::workspace::temp_dir;

/// The uv release installed for `uvx`.
const UV: &str = "uv==0.13.8";
/// Time limit of installing uv.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);
/// Time limit of the lint run: three cold package downloads and starts.
const LINT_TIMEOUT: Duration = Duration::from_secs(900);
/// The entries, relative to the repository.
const ENTRIES: &str = "crates/cli/tests/server-json/credential-free";

/// Runs the check; the error names the step that failed.
pub fn check(root: &Path) -> Result<(), String> {
    let binary = timed("build mcp-recovery", || {
        build_binary(root, "mcp-recovery", "mcp-recovery")
    })?;
    let tmp_dir = temp_dir("mcp-recovery-server-json")?;
    let tmp = tmp_dir.path();
    println!("temporary directory: {}", tmp.display());
    let venv = tmp.join("venv");
    timed("uv from PyPI", || {
        probe("python3", "step `uv from PyPI`")?;
        probe("npx", "step `uv from PyPI`")?;
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(&venv);
        let created = run(create, INSTALL_TIMEOUT, "python3 -m venv")?;
        if !created.status.success() {
            return Err(created.failure("python3 -m venv"));
        }
        let mut pip = Command::new(venv.join("bin/pip"));
        pip.args(["install", "--quiet", "--disable-pip-version-check", UV]);
        let installed = run(pip, INSTALL_TIMEOUT, "pip install uv")?;
        if installed.status.success() {
            Ok(())
        } else {
            Err(installed.failure("pip install uv"))
        }
    })?;
    timed(
        "lint --server-json of three published servers, live",
        || {
            let path = std::env::var("PATH").unwrap_or_default();
            let mut lint = Command::new(&binary);
            lint.current_dir(root)
                .args(["lint", "--format", "json", "--timeout", "120"])
                .args(["--total-timeout", "600", "--server-json", ENTRIES])
                .env("PATH", format!("{}:{path}", venv.join("bin").display()))
                .env("npm_config_cache", tmp.join("npm-cache"))
                .env("npm_config_update_notifier", "false")
                .env("UV_CACHE_DIR", tmp.join("uv-cache"))
                .env("UV_TOOL_DIR", tmp.join("uv-tools"))
                // The machine's own Python serves uvx: nothing is downloaded but the package.
                .env("UV_PYTHON_DOWNLOADS", "never");
            let output = run(lint, LINT_TIMEOUT, "lint --server-json")?;
            if output.status.code() == Some(2) || output.status.code().is_none() {
                return Err(output.failure("lint --server-json (some entry was not linted)"));
            }
            let report: Value = serde_json::from_str(&output.stdout)
                .map_err(|e| format!("lint --server-json: the report is not JSON: {e}"))?;
            let sources = report["sources"].as_array().cloned().unwrap_or_default();
            if sources.len() != 3 {
                return Err(format!(
                    "lint --server-json: expected 3 sources, got {}:\n{}",
                    sources.len(),
                    output.stdout
                ));
            }
            for source in &sources {
                let linted = source["status"] == "linted"
                    && source["kind"] == "server-json"
                    && source["protocol"].is_string()
                    && source["tools"].as_u64().is_some_and(|n| n > 0);
                if !linted {
                    return Err(format!("lint --server-json: {source} was not linted live"));
                }
                println!(
                    "    {}: {} tools, protocol {}",
                    source["name"].as_str().unwrap_or("?"),
                    source["tools"],
                    source["protocol"].as_str().unwrap_or("?")
                );
            }
            Ok(())
        },
    )
}
