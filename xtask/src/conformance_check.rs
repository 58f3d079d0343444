//! `cargo xtask check-conformance`: the server scenarios of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance` from npm, pinned, installed into a temporary directory
//! with the TypeScript SDK it runs on) against our own server for them
//! (`xtask/conformance/server.mjs`, on the pinned TypeScript SDK) directly, then through
//! `mcp-recovery proxy --listen … --url …` with the proxy's default settings. Both tallies are
//! printed; the check fails unless every scenario passes directly and the same scenarios pass
//! through the proxy. The suite imports `fs.globSync`, which Node 20 lacks: node runs it with a
//! preload (`node20-fs.mjs`) that supplies one for the suite alone.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::live::{build_binary, npm_install, probe, run, timed};
use crate::workspace::temp_dir;

/// The conformance suite, pinned.
const SUITE: (&str, &str) = ("@modelcontextprotocol/conformance", "0.1.16");
/// The TypeScript SDK our server is written on, pinned (the version `check-proxy` uses).
const SDK: (&str, &str) = ("@modelcontextprotocol/sdk", "1.32.2");
/// Time limit of both suite runs together.
const RUN_TIMEOUT: Duration = Duration::from_secs(900);
/// The files of `xtask/conformance/` the run needs.
const FILES: [&str; 3] = ["run.mjs", "server.mjs", "node20-fs.mjs"];

/// Runs the whole check; the error names the step that failed.
pub fn check(root: &Path) -> Result<(), String> {
    let started = Instant::now();
    probe("node", "step `node --version`")?;
    let cli = timed("build mcp-recovery", || {
        build_binary(root, "mcp-recovery", "mcp-recovery")
    })?;
    let tmp_dir = temp_dir("mcp-recovery-conformance")?;
    let npm = tmp_dir.path().join("npm");
    println!("temporary directory: {}", tmp_dir.path().display());
    timed("npm install", || npm_install(&npm, &[SUITE, SDK]))?;
    for file in FILES {
        let from = root.join("xtask/conformance").join(file);
        std::fs::copy(&from, npm.join(file))
            .map_err(|e| format!("step `setup`: cannot copy {}: {e}", from.display()))?;
    }
    timed(
        "the server scenarios directly and through the proxy",
        || {
            let mut command = Command::new("node");
            command.arg(npm.join("run.mjs")).arg(&cli).current_dir(&npm);
            let output = run(command, RUN_TIMEOUT, "conformance")?;
            print!("{}", output.stdout);
            if !output.status.success() {
                return Err(output.failure("step `the conformance suite through the proxy`"));
            }
            Ok(())
        },
    )?;
    println!(
        "check-conformance: done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
