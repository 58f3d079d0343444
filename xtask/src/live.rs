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

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::workspace::read_json;

/// npm packages and the exact version the captures were taken from.
const NPM_PACKAGES: &[(&str, &str)] = &[
    ("@modelcontextprotocol/server-memory", "2026.8.31"),
    ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
    ("@modelcontextprotocol/server-everything", "2026.8.31"),
];

/// The PyPI package and the version whose tools match `mcp-server-time.json` (earlier releases
/// publish different schemas).
const PYPI_PACKAGE: (&str, &str) = ("mcp-server-time", "2026.10.19");

/// Time limit of one package installation (a cold npm cache takes most of a minute).
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);
/// Time limit of one `mcp-recovery` run against one server, start to shutdown.
const SERVER_TIMEOUT: Duration = Duration::from_secs(60);
/// The per-request limit handed to `mcp-recovery --timeout`, below [`SERVER_TIMEOUT`] so that
/// the binary reports a stuck server itself before this check kills it.
const REQUEST_TIMEOUT_SECS: u64 = 45;
/// Time limit of building `mcp-recovery` (a cold build of the workspace on a small machine).
const BUILD_TIMEOUT: Duration = Duration::from_secs(1800);
/// Time limit of quick probes such as `npm --version`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// How many trailing lines of a failed command's output a message shows.
const TAIL_LINES: usize = 20;

/// One real server: its capture and how to start it once the packages are installed.
struct LiveServer {
    /// Short name used in messages.
    name: &'static str,
    /// File name under `real-servers/`.
    capture: &'static str,
    /// The server command line.
    command: Vec<String>,
}

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

/// Runs one step, printing its name, outcome and duration.
pub fn timed<T>(step: &str, body: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    println!("--> {step}");
    let started = Instant::now();
    let result = body();
    let seconds = started.elapsed().as_secs_f64();
    match &result {
        Ok(_) => println!("    ok ({seconds:.1} s)"),
        Err(_) => println!("    FAILED ({seconds:.1} s)"),
    }
    result
}

/// The four servers, started from the temporary installation.
fn servers(npm_prefix: &Path, python: &PythonServer, allowed: &Path) -> Vec<LiveServer> {
    let bin = |name: &str| path_arg(&npm_prefix.join("node_modules/.bin").join(name));
    vec![
        LiveServer {
            name: "server-memory",
            capture: "server-memory.json",
            command: vec![bin("mcp-server-memory")],
        },
        LiveServer {
            name: "server-filesystem",
            capture: "server-filesystem.json",
            command: vec![bin("mcp-server-filesystem"), path_arg(allowed)],
        },
        LiveServer {
            name: "server-everything",
            capture: "server-everything.json",
            command: vec![bin("mcp-server-everything"), "stdio".to_owned()],
        },
        LiveServer {
            name: "mcp-server-time",
            capture: "mcp-server-time.json",
            // A fixed zone keeps the descriptions, which name the local zone, independent of the
            // machine.
            command: {
                let mut command = python.command.clone();
                command.push("--local-timezone=Etc/UTC".to_owned());
                command
            },
        },
    ]
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Builds one binary of one package and returns the path cargo reports for it.
pub fn build_binary(root: &Path, package: &str, binary: &str) -> Result<PathBuf, String> {
    build_binary_with(root, package, binary, false)
}

/// [`build_binary`], optimized when `release`.
pub fn build_binary_with(
    root: &Path,
    package: &str,
    binary: &str,
    release: bool,
) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(&cargo);
    command
        .args(["build", "--locked", "--package", package, "--bin", binary])
        .args(release.then_some("--release"))
        .arg("--message-format=json-render-diagnostics")
        .current_dir(root);
    let step = format!("step `build {binary}`");
    let output = run_in(command, BUILD_TIMEOUT, &step, false)?;
    if !output.status.success() {
        return Err(output.failure(&step));
    }
    // Cargo names the executable in its artifact message; this follows CARGO_TARGET_DIR and
    // profiles without guessing paths.
    output
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == binary
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("{step}: cargo built no {binary} executable"))
}

/// Installs pinned npm packages under `prefix`.
pub fn npm_install(prefix: &Path, packages: &[(&str, &str)]) -> Result<(), String> {
    let step = "step `npm install`";
    probe("npm", step)?;
    let mut command = Command::new("npm");
    command
        .arg("install")
        .arg("--prefix")
        .arg(prefix)
        .args(["--no-audit", "--no-fund", "--loglevel=error"])
        .args(
            packages
                .iter()
                .map(|(name, version)| format!("{name}@{version}")),
        )
        .env("npm_config_update_notifier", "false");
    let output = run(command, INSTALL_TIMEOUT, step)?;
    if !output.status.success() {
        return Err(output.failure(&format!(
            "{step} (registry unreachable or a pinned version missing?)"
        )));
    }
    for (name, version) in packages {
        let manifest = prefix.join("node_modules").join(name).join("package.json");
        let installed = read_json(&manifest).map_err(|e| format!("{step}: {e}"))?;
        if installed["version"] != *version {
            return Err(format!(
                "{step}: {name} installed as version {}, not the pinned {version}",
                installed["version"]
            ));
        }
    }
    Ok(())
}

/// How to start the Python server once installed.
struct PythonServer {
    command: Vec<String>,
}

/// Installs the pinned PyPI package in a virtual environment under `tmp`, or with
/// `pip install --target` when this Python has no working `venv`.
fn pip_install(tmp: &Path) -> Result<PythonServer, String> {
    let step = "step `pip install`";
    probe("python3", step)?;
    let (name, version) = PYPI_PACKAGE;
    let requirement = format!("{name}=={version}");
    let venv = tmp.join("venv");
    let mut create = Command::new("python3");
    create.args(["-m", "venv"]).arg(&venv);
    let created = run(create, INSTALL_TIMEOUT, step)?;
    let (mut install, server) = if created.status.success() {
        let mut install = Command::new(venv.join("bin/pip"));
        install.arg("install");
        (
            install,
            PythonServer {
                command: vec![path_arg(&venv.join("bin/mcp-server-time"))],
            },
        )
    } else {
        println!(
            "    python3 -m venv failed, installing with pip --target instead:\n{}",
            tail(&created.stderr)
        );
        let target = tmp.join("python");
        let mut install = Command::new("python3");
        install
            .args(["-m", "pip", "install", "--target"])
            .arg(&target);
        // The server runs as a module with the target directory on its path; `env` passes that
        // path on without changing the environment of anything else.
        let command = vec![
            "env".to_owned(),
            format!("PYTHONPATH={}", path_arg(&target)),
            "python3".to_owned(),
            "-m".to_owned(),
            "mcp_server_time".to_owned(),
        ];
        (install, PythonServer { command })
    };
    install
        .args([
            "--quiet",
            "--no-input",
            "--disable-pip-version-check",
            &requirement,
        ])
        .env("PIP_NO_INPUT", "1");
    let output = run(install, INSTALL_TIMEOUT, step)?;
    if !output.status.success() {
        return Err(output.failure(&format!(
            "{step} {requirement} (PyPI unreachable or the pinned version missing?)"
        )));
    }
    Ok(server)
}

/// Fails the step when `program --version` cannot run.
/// A virtual environment at `venv` with `packages` (pinned) installed from PyPI.
pub fn venv(venv: &Path, packages: &[&str]) -> Result<(), String> {
    let step = "step `pip install`";
    probe("python3", step)?;
    let mut create = Command::new("python3");
    create.args(["-m", "venv"]).arg(venv);
    let created = run(create, INSTALL_TIMEOUT, step)?;
    if !created.status.success() {
        return Err(created.failure(&format!("{step}: python3 -m venv")));
    }
    let mut install = Command::new(venv.join("bin/pip"));
    install
        .args([
            "install",
            "--quiet",
            "--no-input",
            "--disable-pip-version-check",
        ])
        .args(packages)
        .env("PIP_NO_INPUT", "1");
    let output = run(install, INSTALL_TIMEOUT, step)?;
    if !output.status.success() {
        return Err(output.failure(&format!(
            "{step} {} (PyPI unreachable or a pinned version missing?)",
            packages.join(" ")
        )));
    }
    Ok(())
}

pub fn probe(program: &str, step: &str) -> Result<(), String> {
    let mut command = Command::new(program);
    command.arg("--version");
    let output = run(command, PROBE_TIMEOUT, step)
        .map_err(|e| format!("{e}\n(is {program} installed and on PATH?)"))?;
    if output.status.success() {
        println!("    {program} {}", output.stdout.trim());
        Ok(())
    } else {
        Err(output.failure(&format!("{step}: `{program} --version`")))
    }
}

/// Fetches and lints one server, then compares the fetched tools with its capture.
fn check_server(binary: &Path, server: &LiveServer, capture_path: &Path) -> Result<(), String> {
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
fn check_overlay(
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
fn check_client_config(binary: &Path, servers: &[LiveServer], tmp: &Path) -> Result<(), String> {
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

/// The tools array, found by the locator every command uses.
fn tools_of(document: &Value) -> Option<&[Value]> {
    mcp_recovery_model::locate_tools(document)
        .ok()
        .map(|location| location.tools)
}

/// Every difference in tool names (set and order) and in each tool's `annotations`, key by key.
fn compare(captured: &[Value], live: &[Value]) -> Vec<String> {
    let name = |tool: &Value| tool["name"].as_str().unwrap_or("<unnamed>").to_owned();
    let captured_names: Vec<String> = captured.iter().map(name).collect();
    let live_names: Vec<String> = live.iter().map(name).collect();
    let mut problems = Vec::new();
    let captured_set: BTreeSet<&String> = captured_names.iter().collect();
    let live_set: BTreeSet<&String> = live_names.iter().collect();
    for missing in captured_set.difference(&live_set) {
        problems.push(format!("tool {missing}: in the capture, not sent live"));
    }
    for extra in live_set.difference(&captured_set) {
        problems.push(format!("tool {extra}: sent live, not in the capture"));
    }
    if captured_set == live_set && captured_names != live_names {
        problems.push(format!(
            "tool order differs: capture {captured_names:?}, live {live_names:?}"
        ));
    }
    for tool in captured {
        let tool_name = name(tool);
        let Some(other) = live.iter().find(|t| name(t) == tool_name) else {
            continue;
        };
        problems.extend(compare_annotations(
            &tool_name,
            &tool["annotations"],
            &other["annotations"],
        ));
    }
    problems
}

/// The differences between two `annotations` values (`Null` when absent), one per key.
fn compare_annotations(tool: &str, captured: &Value, live: &Value) -> Vec<String> {
    match (captured, live) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter()
                .filter_map(|key| {
                    let (x, y) = (a.get(key), b.get(key));
                    (x != y).then(|| {
                        format!(
                            "tool {tool}: annotations.{key}: capture {}, live {}",
                            shown(x),
                            shown(y)
                        )
                    })
                })
                .collect()
        }
        _ if captured == live => Vec::new(),
        _ => vec![format!(
            "tool {tool}: annotations: capture {}, live {}",
            shown(Some(captured).filter(|v| !v.is_null())),
            shown(Some(live).filter(|v| !v.is_null()))
        )],
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "absent".to_owned(), Value::to_string)
}

/// What a finished command printed.
pub struct Output {
    /// How it ended.
    pub status: ExitStatus,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Output {
    /// A failure message with the exit status and the last lines of both streams.
    pub fn failure(&self, what: &str) -> String {
        let mut message = format!("{what}: exited with {}", self.status);
        for (stream, text) in [("stderr", &self.stderr), ("stdout", &self.stdout)] {
            if !text.trim().is_empty() {
                let _ = write!(message, "\n  last {stream} lines:\n{}", tail(text));
            }
        }
        message
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    lines[start..]
        .iter()
        .map(|line| format!("    | {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `command` with no stdin, capturing both streams; when it outlives `limit` it is killed
/// with its whole process group.
pub fn run(command: Command, limit: Duration, what: &str) -> Result<Output, String> {
    run_in(command, limit, what, true)
}

/// Like [`run`], with the process group optional: a build keeps the terminal's group so that
/// Ctrl-C stops it with this check.
pub fn run_in(
    mut command: Command,
    limit: Duration,
    what: &str,
    own_group: bool,
) -> Result<Output, String> {
    use std::os::unix::process::CommandExt as _;

    let shown = format!("{command:?}");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if own_group {
        // Its own process group lets a timeout end the grandchildren too (npm runs node, the
        // binary runs the server), which would otherwise keep running and hold the pipes open.
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("{what}: cannot run {shown}: {e}"))?;
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                kill(&mut child, own_group);
                return Err(format!("{what}: cannot wait for {shown}: {e}"));
            }
        }
    };
    if status.is_none() {
        // Not reaped yet, so the group id still names only what this command started.
        kill(&mut child, own_group);
    }
    let stdout = collect(&stdout);
    let stderr = collect(&stderr);
    match status {
        Some(status) => Ok(Output {
            status,
            stdout,
            stderr,
        }),
        None => {
            let mut message = format!("{what}: timed out after {} s: {shown}", limit.as_secs());
            if !stderr.trim().is_empty() {
                let _ = write!(message, "\n  last stderr lines:\n{}", tail(&stderr));
            }
            Err(message)
        }
    }
}

/// How long to wait for the rest of the output once a command has ended: a descendant that
/// still holds the pipe must not hang the check.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Reads a stream to its end on a thread, so that a full pipe never blocks the child.
fn reader(stream: Option<impl Read + Send + 'static>) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut stream) = stream {
            // A read error ends the capture; what was read so far still helps the message.
            let _ = stream.read_to_end(&mut bytes);
        }
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    receiver
}

/// The text a [`reader`] captured, or a note when the stream stayed open.
fn collect(receiver: &Receiver<String>) -> String {
    receiver
        .recv_timeout(DRAIN_TIMEOUT)
        .unwrap_or_else(|_| "(output still open after the command ended; not read)".to_owned())
}

/// Kills the child (and its process group when it has its own) and reaps it.
fn kill(child: &mut Child, own_group: bool) {
    if own_group {
        // std has no safe call to signal a process group; `kill` is part of every POSIX system.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn same_names_and_annotations_compare_equal() {
        let captured = [
            json!({"name": "lookup", "annotations": {"readOnlyHint": true}}),
            json!({"name": "store"}),
        ];
        // Other fields may differ: only names and annotations are compared.
        let live = [
            json!({"name": "lookup", "description": "x", "annotations": {"readOnlyHint": true}}),
            json!({"name": "store", "inputSchema": {"type": "object"}}),
        ];
        assert!(compare(&captured, &live).is_empty());
    }

    #[test]
    fn every_difference_names_the_tool_and_key() {
        let captured = [
            json!({"name": "lookup", "annotations": {"readOnlyHint": true, "openWorldHint": false}}),
            json!({"name": "store", "annotations": {"destructiveHint": false}}),
            json!({"name": "gone"}),
        ];
        let live = [
            json!({"name": "lookup", "annotations": {"readOnlyHint": false, "idempotentHint": true}}),
            json!({"name": "store"}),
            json!({"name": "new"}),
        ];
        assert_eq!(
            compare(&captured, &live),
            [
                "tool gone: in the capture, not sent live",
                "tool new: sent live, not in the capture",
                "tool lookup: annotations.idempotentHint: capture absent, live true",
                "tool lookup: annotations.openWorldHint: capture false, live absent",
                "tool lookup: annotations.readOnlyHint: capture true, live false",
                "tool store: annotations: capture {\"destructiveHint\":false}, live absent",
            ]
        );
    }

    #[test]
    fn reordered_tools_are_reported() {
        let captured = [json!({"name": "a"}), json!({"name": "b"})];
        let live = [json!({"name": "b"}), json!({"name": "a"})];
        assert_eq!(
            compare(&captured, &live),
            [r#"tool order differs: capture ["a", "b"], live ["b", "a"]"#]
        );
    }

    #[test]
    fn tools_are_found_in_responses_results_and_arrays() {
        let tool = json!({"name": "t"});
        for document in [
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [tool]}}),
            json!({"tools": [tool]}),
            json!([tool]),
        ] {
            assert_eq!(tools_of(&document), Some(&[tool.clone()][..]));
        }
        assert_eq!(tools_of(&json!({"result": {}})), None);
    }

    #[test]
    fn a_command_past_its_limit_is_killed_and_reported() {
        let mut command = Command::new("sleep");
        command.arg("30");
        let started = Instant::now();
        let error = run(command, Duration::from_millis(200), "step `nap`")
            .err()
            .unwrap_or_default();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            error.starts_with("step `nap`: timed out after 0 s"),
            "{error}"
        );
    }

    #[test]
    fn a_failing_command_shows_its_output_tail() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo partial; echo broken >&2; exit 3"]);
        let output = run(command, Duration::from_secs(10), "step `x`")
            .ok()
            .map(|output| output.failure("step `x`"));
        assert_eq!(
            output.as_deref(),
            Some(
                "step `x`: exited with exit status: 3\n  last stderr lines:\n    | broken\n  last stdout lines:\n    | partial"
            )
        );
    }
}
