//! `cargo xtask check-examples`: each server of `examples/` (TypeScript on
//! `@modelcontextprotocol/sdk`, Python on `mcp` with FastMCP, Rust on `rmcp`) is built with its
//! real SDK, pinned, in a temporary directory; `mcp-recovery lint --preset strict --stdio` must
//! find nothing in it, and a workflow whose second step fails, driven through
//! `mcp-recovery proxy --on-failure rollback` by the TypeScript SDK client
//! (`xtask/examples-check/workflow.mjs`), must leave its notes as they were. Nothing is skipped:
//! a missing tool fails the step that needs it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::live::{build_binary, probe, run, run_in, timed};
use crate::workspace::temp_dir;

/// Time limit of installing an SDK.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);
/// Time limit of building the Rust example (rmcp and tokio from scratch on a small machine).
const BUILD_TIMEOUT: Duration = Duration::from_secs(1800);
/// Time limit of one lint or workflow run.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `command` (limit `limit`) and requires success; `what` names it in the error.
fn succeed(command: Command, limit: Duration, what: &str) -> Result<String, String> {
    let output = run(command, limit, what)?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(output.failure(what))
    }
}

/// Copies the files of `from` (recursively, without build output) into `to`.
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        let name = entry.file_name();
        if ["node_modules", "build", "target", "__pycache__"].contains(&&*name.to_string_lossy()) {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        if source.is_dir() {
            copy_dir(&source, &target)?;
        } else {
            std::fs::copy(&source, &target)
                .map_err(|e| format!("cannot copy {}: {e}", source.display()))?;
        }
    }
    Ok(())
}

/// Runs the whole check; the error names the step that failed.
pub fn check(root: &Path) -> Result<(), String> {
    let cli = timed("build mcp-recovery", || {
        build_binary(root, "mcp-recovery", "mcp-recovery")
    })?;
    let tmp_dir = temp_dir("mcp-recovery-examples")?;
    let tmp = tmp_dir.path();
    println!("temporary directory: {}", tmp.display());
    let examples = root.join("examples");

    let typescript = tmp.join("typescript");
    timed("TypeScript example: npm ci and tsc", || {
        probe("npm", "step `TypeScript example`")?;
        copy_dir(&examples.join("typescript"), &typescript)?;
        let mut install = Command::new("npm");
        install
            .current_dir(&typescript)
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .env("npm_config_cache", tmp.join("npm-cache"))
            .env("npm_config_update_notifier", "false");
        succeed(install, INSTALL_TIMEOUT, "npm ci")?;
        let mut build = Command::new("npm");
        build.current_dir(&typescript).args(["run", "build"]);
        succeed(build, RUN_TIMEOUT, "npm run build (tsc)").map(drop)
    })?;

    let python = tmp.join("python");
    let venv = tmp.join("venv");
    timed("Python example: pip install -r requirements.txt", || {
        probe("python3", "step `Python example`")?;
        copy_dir(&examples.join("python"), &python)?;
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(&venv);
        succeed(create, INSTALL_TIMEOUT, "python3 -m venv")?;
        let mut pip = Command::new(venv.join("bin/pip"));
        pip.args(["install", "--quiet", "--disable-pip-version-check", "-r"])
            .arg(python.join("requirements.txt"));
        succeed(pip, INSTALL_TIMEOUT, "pip install -r requirements.txt").map(drop)
    })?;

    let rust_target = tmp.join("rust-target");
    let rust = timed("Rust example: cargo build --locked", || {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut build = Command::new(cargo);
        build
            .current_dir(examples.join("rust"))
            .args(["build", "--locked", "--quiet"])
            .env("CARGO_TARGET_DIR", &rust_target);
        let output = run_in(build, BUILD_TIMEOUT, "cargo build (examples/rust)", false)?;
        if !output.status.success() {
            return Err(output.failure("cargo build (examples/rust)"));
        }
        Ok(rust_target.join("debug/mcp-recovery-example-notes"))
    })?;

    let workflow = typescript.join("workflow.mjs");
    std::fs::copy(root.join("xtask/examples-check/workflow.mjs"), &workflow)
        .map_err(|e| format!("step `setup`: cannot copy workflow.mjs: {e}"))?;
    let servers: [(&str, &Path, Vec<String>); 3] = [
        (
            "TypeScript (@modelcontextprotocol/sdk)",
            &typescript,
            vec![
                "node".into(),
                typescript.join("build/server.js").display().to_string(),
            ],
        ),
        (
            "Python (mcp, FastMCP)",
            &python,
            vec![
                venv.join("bin/python").display().to_string(),
                python.join("server.py").display().to_string(),
            ],
        ),
        (
            "Rust (rmcp)",
            &rust_target,
            vec![rust.display().to_string()],
        ),
    ];
    let mut failures = Vec::new();
    for (i, (name, dir, server)) in servers.iter().enumerate() {
        let journal = tmp.join(format!("journal-{i}.jsonl"));
        let outcome = timed(&format!("{name}: lint at strict, then a rollback"), || {
            lint_clean(&cli, dir, server)?;
            rolls_back(&cli, &workflow, &journal, server)
        });
        if let Err(message) = outcome {
            failures.push(message);
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n\n"))
    }
}

/// `lint --preset strict --stdio` finds nothing in the server, which lists its three tools.
fn lint_clean(cli: &Path, dir: &Path, server: &[String]) -> Result<(), String> {
    let mut lint = Command::new(cli);
    lint.current_dir(dir)
        .args([
            "lint",
            "--isolated",
            "--preset",
            "strict",
            "--format",
            "json",
            "--stdio",
            "--",
        ])
        .args(server);
    let output = run(lint, RUN_TIMEOUT, "lint --stdio")?;
    let report: Value = serde_json::from_str(&output.stdout)
        .map_err(|_| output.failure("lint --stdio (no JSON report)"))?;
    let findings = report["diagnostics"]
        .as_array()
        .map_or(usize::MAX, Vec::len);
    if output.status.code() != Some(0) || findings != 0 || report["summary"]["tools"] != 3 {
        return Err(format!(
            "lint --preset strict --stdio: {findings} findings, exit {:?}, expected none over 3 \
             tools:\n{}",
            output.status.code(),
            output.stdout
        ));
    }
    println!("    0 findings at strict over 3 tools");
    Ok(())
}

/// The failing workflow through the proxy rolls back and leaves the notes as they were.
fn rolls_back(
    cli: &Path,
    workflow: &Path,
    journal: &Path,
    server: &[String],
) -> Result<(), String> {
    // The script sits in the TypeScript example, whose node_modules has the SDK client.
    let mut node = Command::new("node");
    node.arg(workflow).arg(cli).arg(journal).args(server);
    let stdout = succeed(node, RUN_TIMEOUT, "the failing workflow through the proxy")?;
    print!("    {stdout}");
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Every TypeScript, Python and Rust block of `docs/server-authors.md` is quoted exactly from
    /// its example, so the guide cannot drift from the code that is checked.
    #[test]
    fn the_guide_quotes_the_examples_exactly() {
        let root = crate::workspace::repo_root();
        let guide =
            std::fs::read_to_string(root.join("docs/server-authors.md")).unwrap_or_default();
        let mut quoted = 0;
        for (fence, example) in [
            ("```ts\n", "examples/typescript/src/server.ts"),
            ("```python\n", "examples/python/server.py"),
            ("```rust\n", "examples/rust/src/main.rs"),
        ] {
            let code = std::fs::read_to_string(root.join(example)).unwrap_or_default();
            for block in guide.split(fence).skip(1) {
                let block = block.split("```").next().unwrap_or_default();
                assert!(code.contains(block), "{example} does not hold:\n{block}");
                quoted += 1;
            }
        }
        assert!(quoted >= 6, "only {quoted} blocks quoted");
    }
}
