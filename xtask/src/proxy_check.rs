//! `cargo xtask check-proxy`: real MCP SDK clients (TypeScript `@modelcontextprotocol/sdk` from
//! npm, Python `mcp` from PyPI, one pinned version each, installed into a temporary directory)
//! drive `mcp-recovery proxy -- mcp-recovery-demo-server` through a checkout whose third step
//! fails; the proxy must roll it back. The TypeScript client runs twice: on stdio, and with its
//! StreamableHTTPClientTransport against `proxy --listen`. Each journal then verifies with `audit verify` and with
//! the independent Python verifier of `spec/journal.md`, both find tampering at the right line,
//! and `plan --trace JOURNAL` reads it. The published `@modelcontextprotocol/server-everything`
//! (pinned) is then driven by the TypeScript SDK client directly and through the proxy, and
//! both must see the same tools, results, notifications and server-to-client requests. Fails
//! loudly when an install fails.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::live::{build_binary, npm_install, run, timed};
use crate::workspace::temp_dir;

/// The TypeScript SDK, pinned.
const NPM_SDK: (&str, &str) = ("@modelcontextprotocol/sdk", "1.32.2");
/// The reference server with notifications and server-to-client requests, pinned (the version
/// `check-live-servers` uses).
const EVERYTHING: (&str, &str) = ("@modelcontextprotocol/server-everything", "2026.8.31");
/// The Python SDK, pinned.
const PYPI_SDK: &str = "mcp==2.3.0";
/// Time limit of one client run.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(180);

/// Runs the whole check; the error names the step that failed.
pub fn check(root: &Path) -> Result<(), String> {
    let started = Instant::now();
    let cli = timed("build mcp-recovery", || {
        build_binary(root, "mcp-recovery", "mcp-recovery")
    })?;
    let server = timed("build mcp-recovery-demo-server", || {
        build_binary(root, "mcp-recovery-demo-server", "mcp-recovery-demo-server")
    })?;
    let tmp_dir = temp_dir("mcp-recovery-proxy")?;
    let tmp = tmp_dir.path();
    println!("temporary directory: {}", tmp.display());
    let verifier = tmp.join("verify_journal.py");
    timed("extract the verifier of spec/journal.md", || {
        extract_verifier(root, &verifier)
    })?;
    let npm = tmp.join("npm");
    timed("npm install", || npm_install(&npm, &[NPM_SDK, EVERYTHING]))?;
    let venv = tmp.join("venv");
    timed("pip install", || crate::live::venv(&venv, &[PYPI_SDK]))?;
    let python = venv.join("bin/python");

    let clients = root.join("xtask/proxy-clients");
    let script = npm.join("workflow.mjs");
    std::fs::copy(clients.join("workflow.mjs"), &script)
        .map_err(|e| format!("step `setup`: cannot copy workflow.mjs: {e}"))?;
    let tools = tmp.join("tools.json");
    timed("fetch the demo tools", || {
        fetch_tools(&cli, &server, &tools)
    })?;

    let transparency = npm.join("transparency.mjs");
    std::fs::copy(clients.join("transparency.mjs"), &transparency)
        .map_err(|e| format!("step `setup`: cannot copy transparency.mjs: {e}"))?;
    timed("server-everything directly and through the proxy", || {
        let mut command = Command::new("node");
        command
            .arg(&transparency)
            .arg(&cli)
            .arg(npm.join("node_modules/.bin/mcp-server-everything"))
            .current_dir(&npm);
        let output = run(command, CLIENT_TIMEOUT, "transparency")?;
        if !output.status.success() {
            return Err(output.failure("step `server-everything through the proxy`"));
        }
        print!("{}", output.stdout);
        Ok(())
    })?;

    let runs = [
        ("TypeScript SDK", Command::new("node"), script.clone(), "ts"),
        // The same client over Streamable HTTP: the proxy listens on loopback.
        ("TypeScript SDK over HTTP", node_http(), script, "ts-http"),
        (
            "Python SDK",
            Command::new(&python),
            clients.join("workflow.py"),
            "py",
        ),
    ];
    for (name, mut command, script, tag) in runs {
        let journal = tmp.join(format!("journal-{tag}.jsonl"));
        timed(&format!("{name} through the proxy"), || {
            command
                .arg(&script)
                .arg(&cli)
                .arg(&server)
                .arg(&journal)
                .current_dir(script.parent().unwrap_or(tmp));
            let output = run(command, CLIENT_TIMEOUT, name)?;
            if !output.status.success() {
                return Err(output.failure(&format!("step `{name} through the proxy`")));
            }
            print!("{}", output.stdout);
            Ok(())
        })?;
        timed(&format!("{name} journal"), || {
            check_journal(&cli, &python, &verifier, &tools, &journal)
        })?;
    }
    println!(
        "check-proxy: 2 SDK clients (3 runs) and server-everything in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `node` running the workflow in its Streamable HTTP mode.
fn node_http() -> Command {
    let mut command = Command::new("node");
    command.env("MCP_RECOVERY_CHECK_MODE", "http");
    command
}

/// Writes the Python block of `spec/journal.md` to `out`.
fn extract_verifier(root: &Path, out: &Path) -> Result<(), String> {
    let spec = root.join("spec/journal.md");
    let text = std::fs::read_to_string(&spec)
        .map_err(|e| format!("cannot read {}: {e}", spec.display()))?;
    let code = text
        .split("```python\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .ok_or_else(|| format!("{} has no ```python block", spec.display()))?;
    std::fs::write(out, code).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

fn fetch_tools(cli: &Path, server: &Path, out: &Path) -> Result<(), String> {
    let mut command = Command::new(cli);
    command.args(["fetch", "--stdio", "--"]).arg(server);
    let output = run(command, CLIENT_TIMEOUT, "fetch")?;
    if !output.status.success() {
        return Err(output.failure("step `fetch the demo tools`"));
    }
    std::fs::write(out, output.stdout).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// The journal verifies both ways, holds the rollback, reads as a trace, and every kind of
/// tampering is found at the right line by both verifiers.
fn check_journal(
    cli: &Path,
    python: &Path,
    verifier: &Path,
    tools: &Path,
    journal: &Path,
) -> Result<(), String> {
    let text = std::fs::read_to_string(journal)
        .map_err(|e| format!("cannot read {}: {e}", journal.display()))?;
    for needle in [
        "\"kind\":\"approval\"",
        "\"kind\":\"rollback.start\"",
        "\"kind\":\"compensation.outcome\"",
        "\"name\":\"refund_payment\"",
        "\"name\":\"release_inventory\"",
    ] {
        if !text.contains(needle) {
            return Err(format!("{}: no record with {needle}", journal.display()));
        }
    }
    verify_both(cli, python, verifier, journal, None)?;

    let mut plan = Command::new(cli);
    plan.arg("plan")
        .arg("--tools")
        .arg(tools)
        .arg("--trace")
        .arg(journal);
    let output = run(plan, CLIENT_TIMEOUT, "plan")?;
    if !output.status.success() || !output.stdout.contains("refund_payment") {
        return Err(output.failure("plan --trace JOURNAL"));
    }

    let lines: Vec<&str> = text.lines().collect();
    if lines.len() < 6 {
        return Err(format!(
            "{}: only {} records",
            journal.display(),
            lines.len()
        ));
    }
    let join = |lines: &[&str]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let mut edited = lines.clone();
    let changed = lines[3].replacen("\"session\":\"", "\"session\":\"x", 1);
    edited[3] = &changed;
    let mut removed = lines.clone();
    removed.remove(2);
    let mut reordered = lines.clone();
    reordered.swap(4, 5);
    let truncated = &text[..text.len() - 7];
    let cases = [
        ("edited", join(&edited), 4),
        ("removed", join(&removed), 3),
        ("reordered", join(&reordered), 5),
        ("truncated", truncated.to_owned(), lines.len()),
    ];
    for (what, tampered, line) in cases {
        let path = journal.with_extension(format!("{what}.jsonl"));
        std::fs::write(&path, tampered)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        verify_both(cli, python, verifier, &path, Some(line))
            .map_err(|e| format!("{what} journal: {e}"))?;
    }
    Ok(())
}

/// Runs both verifiers; `broken` is the line they must name (None: both must pass).
fn verify_both(
    cli: &Path,
    python: &Path,
    verifier: &Path,
    journal: &Path,
    broken: Option<usize>,
) -> Result<(), String> {
    let mut ours = Command::new(cli);
    ours.args(["audit", "verify"]).arg(journal);
    let ours = run(ours, CLIENT_TIMEOUT, "audit verify")?;
    let mut theirs = Command::new(python);
    theirs.arg(verifier).arg(journal);
    let theirs = run(theirs, CLIENT_TIMEOUT, "the Python verifier")?;
    match broken {
        None => {
            if !ours.status.success() {
                return Err(ours.failure("audit verify"));
            }
            if !theirs.status.success() {
                return Err(theirs.failure("the Python verifier of spec/journal.md"));
            }
        }
        Some(line) => {
            let at = format!("line {line}:");
            if ours.status.code() != Some(1) || !ours.stdout.contains(&at) {
                return Err(ours.failure(&format!("audit verify should name {at}")));
            }
            let truncated = theirs.stdout.contains("truncated");
            if theirs.status.code() != Some(1) || !(theirs.stdout.contains(&at) || truncated) {
                return Err(theirs.failure(&format!("the Python verifier should name {at}")));
            }
        }
    }
    Ok(())
}
