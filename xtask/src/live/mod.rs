//! `cargo xtask check-live-servers`: lint real published MCP servers live and compare what they
//! send with the captures in `../shared/data/real-servers/`.
//!
//! Pinned packages are installed into a fresh temporary directory (never into the repository),
//! each server is started by `mcp-recovery fetch --stdio` and `mcp-recovery lint --stdio`, the lint
//! must report no error, and the fetched tools must have the same names and `annotations` as the
//! capture. Then all of them, written into a Cursor-style `mcp.json`, are linted in one run of
//! `mcp-recovery lint --config mcp.json --all-servers --verbose`, which must lint every server
//! without an error and name the protocol revision each one spoke. The overlay of
//! `spec/examples/server-memory.overlay.json` is applied to the live server-memory and to its
//! capture: it must lint clean, a misspelt tool in it must be R008, and `plan` with it must
//! compensate `create_relations` with `delete_relations`. Every external command runs
//! under a time limit, and every step that cannot run fails
//! the check with a message naming the step: this check must never pass by skipping work.
//!
//! The check runs here; the servers and their packages are in `servers`, the steps against them
//! in `checks` (comparing tools in `compare`). `install` and `process`, which install pinned
//! packages and run commands under a time limit, serve the other live checks too.

mod checks;
mod compare;
mod install;
mod process;
mod servers;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::time::Instant;

pub use install::{INSTALL_TIMEOUT, build_binary, build_binary_with, npm_install, probe, venv};
pub use process::{Output, run, run_in, timed};

use checks::{check_client_config, check_overlay, check_server};
use servers::{NPM_PACKAGES, pip_install, servers};

/// Runs the whole check; the error names the step that failed.
pub fn check(root: &Path) -> Result<(), String> {
    let started = Instant::now();
    let captures = crate::workspace::data_dir(root, "real-servers", "this check")
        .map_err(|e| format!("step `shared data`: {e}"))?;

    let binary = timed("build mcp-recovery", || {
        build_binary(root, "mcp-recovery", "mcp-recovery")
    })?;
    let tmp_dir = crate::workspace::temp_dir("mcp-recovery-live")?;
    let tmp = tmp_dir.path();
    println!("temporary directory: {}", tmp.display());

    let npm_prefix = tmp.join("npm");
    timed("npm install", || npm_install(&npm_prefix, NPM_PACKAGES))?;
    let python = timed("pip install", || pip_install(tmp))?;

    let allowed = tmp.join("allowed");
    std::fs::create_dir(&allowed).map_err(|e| {
        format!(
            "step `setup`: cannot create {} for the filesystem server: {e}",
            allowed.display()
        )
    })?;
    let servers = servers(&npm_prefix, &python, &allowed);

    let mut failures = Vec::new();
    for server in &servers {
        let outcome = timed(&format!("server {}", server.name), || {
            check_server(&binary, server, &captures.join(server.capture))
        });
        if let Err(message) = outcome {
            failures.push(message);
        }
    }
    let outcome = timed("client config with every server", || {
        check_client_config(&binary, &servers, tmp)
    });
    if let Err(message) = outcome {
        failures.push(message);
    }
    let outcome = timed("an overlay for server-memory, live and saved", || {
        check_overlay(&binary, root, &servers, &captures, tmp)
    });
    if let Err(message) = outcome {
        failures.push(message);
    }
    println!(
        "check-live-servers: {} servers in {:.1} s",
        servers.len(),
        started.elapsed().as_secs_f64()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} live servers failed:\n\n{}",
            failures.len(),
            servers.len(),
            failures.join("\n\n")
        ))
    }
}
