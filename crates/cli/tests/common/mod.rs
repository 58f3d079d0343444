//! Shared helpers of the command-line tests: the binary with a fixed environment, run from the
//! workspace root so that paths in output read `fixtures/...`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The workspace root (where `fixtures/` lives).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python verifier of `spec/journal.md`, written to `dir`.
pub fn python_verifier(dir: &Path) -> PathBuf {
    let spec = std::fs::read_to_string(root().join("spec/journal.md")).unwrap();
    let code = spec
        .split("```python\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("spec/journal.md has a Python block");
    let path = dir.join("verify.py");
    std::fs::write(&path, code).unwrap();
    path
}

/// The binary, run in `dir`, with an environment that makes output deterministic: no colors,
/// a fixed width for help and diagnostics.
pub fn bin_in(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-recovery"));
    cmd.current_dir(dir)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR");
    cmd
}

/// The binary, run from the workspace root.
pub fn bin() -> Command {
    bin_in(&root())
}

/// Runs the binary with `args` from `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin_in(dir).args(args).output().expect("the binary runs")
}

/// Exit code of a finished run.
pub fn code(output: &Output) -> i32 {
    output.status.code().expect("exited normally")
}

/// `plan --format json --tools TOOLS --trace TRACE [--overlay OVERLAY]` from the repository
/// root: the plan, which must have been made.
pub fn plan_json(tools: &str, overlay: Option<&str>, trace: &str) -> Value {
    let mut cmd = bin();
    cmd.current_dir(root()).args([
        "plan", "--format", "json", "--tools", tools, "--trace", trace,
    ]);
    if let Some(overlay) = overlay {
        cmd.args(["--overlay", overlay]);
    }
    let output = cmd.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The `call` of each step of a plan, in order.
pub fn planned_calls(plan: &Value) -> Vec<&Value> {
    plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["call"])
        .collect()
}

/// Writes `text` to the overlay `path` and lints TOOLS (from the repository root) with it: the
/// overlay is refused (exit 2) with a message naming the file and `pointer`.
pub fn assert_overlay_refused(path: &Path, text: &str, tools: &str, pointer: &str) {
    std::fs::write(path, text).unwrap();
    let output = bin()
        .current_dir(root())
        .args(["lint", "--overlay", path.to_str().unwrap(), tools])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2, "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let file = path.file_name().unwrap().to_string_lossy();
    // The file, then its line and column: `o.toml:3:1: at /tools/…`.
    let placed = stderr.split(&format!("{file}:")).skip(1).any(|rest| {
        let mut parts = rest.splitn(3, ':');
        let mut number = || parts.next().is_some_and(|n| n.parse::<usize>().is_ok());
        number() && number()
    });
    assert!(placed && stderr.contains(pointer), "{text}: {stderr}");
}

/// `lint --format json` on `args` from `dir`, parsed.
pub fn lint_json(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut full = vec!["lint", "--format", "json"];
    full.extend_from_slice(args);
    let output = run_in(dir, &full);
    let value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "json output ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (code(&output), value)
}

/// The codes of the diagnostics of a JSON report.
pub fn codes(report: &Value) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .expect("diagnostics array")
        .iter()
        .map(|d| d["code"].as_str().expect("code").to_owned())
        .collect()
}

/// A tools/list document written by the tests (not from `fixtures/`): `create_order` whose
/// compensator is `compensator`, bound from `$response.body#/orderId`.
pub fn order_tools(compensator: &str, output_schema: bool, idempotent: bool) -> String {
    let output_schema = if output_schema {
        r#","outputSchema": {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]}"#
    } else {
        ""
    };
    format!(
        r#"{{
  "tools": [
    {{
      "name": "create_order",
      "inputSchema": {{"type": "object", "properties": {{"sku": {{"type": "string"}}}}, "required": ["sku"]}}{output_schema},
      "annotations": {{
        "destructiveHint": false,
        "recovery": {{
          "strategy": "compensation",
          "compensatingOperation": {{
            "operationId": "{compensator}",
            "parameters": {{"orderId": "$response.body#/orderId"}}
          }}
        }}
      }}
    }},
    {{
      "name": "cancel_order",
      "inputSchema": {{"type": "object", "properties": {{"orderId": {{"type": "string"}}}}, "required": ["orderId"]}},
      "annotations": {{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": {idempotent}}}
    }}
  ]
}}
"#
    )
}

/// The records of a JSONL journal, parsed.
pub fn journal_records(journal: &Path) -> Vec<Value> {
    std::fs::read_to_string(journal)
        .expect("the journal is readable")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each journal line is JSON"))
        .collect()
}

/// The records of one kind.
pub fn journal_kinds(journal: &Path, kind: &str) -> Vec<Value> {
    journal_records(journal)
        .into_iter()
        .filter(|r| r["kind"] == kind)
        .collect()
}

/// `audit verify JOURNAL` from `dir`: its exit code and stdout (checked as
/// [`audit_verify_args`] checks it).
pub fn audit_verify(dir: &Path, journal: &Path) -> (i32, String) {
    let output = audit_verify_args(dir, &[&journal.display().to_string()]);
    (
        code(&output),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// `audit verify ARGS` from `dir`, checked against the verifier of spec/journal.md given the
/// same journal and flags: both must say whether the journal verifies, and name the same line
/// when the Python one names any (it names none for a cut-off last line). `--head` is ours
/// alone; with it only ours runs.
pub fn audit_verify_args(dir: &Path, args: &[&str]) -> Output {
    let ours = run_in(dir, &[&["audit", "verify"], args].concat());
    if args.contains(&"--head") {
        return ours;
    }
    let theirs = Command::new("python3")
        .current_dir(dir)
        .arg(python_verifier(dir))
        .args(args)
        .output()
        .expect("python3 runs");
    let line = |out: &[u8]| -> Option<usize> {
        let out = String::from_utf8_lossy(out);
        out.split("line ").nth(1)?.split(':').next()?.parse().ok()
    };
    let (our_line, their_line) = (line(&ours.stdout), line(&theirs.stdout));
    assert!(
        ours.status.code() == theirs.status.code()
            && (their_line.is_none() || our_line == their_line),
        "audit verify {args:?} and the verifier of spec/journal.md disagree:\n\
         ours ({:?}): {}\ntheirs ({:?}): {}{}",
        ours.status.code(),
        String::from_utf8_lossy(&ours.stdout),
        theirs.status.code(),
        String::from_utf8_lossy(&theirs.stdout),
        String::from_utf8_lossy(&theirs.stderr),
    );
    ours
}

/// The `params` of a 2025-11-25 `initialize` request from a test client.
pub fn initialize_params() -> Value {
    serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}})
}

/// A child that is killed when the test ends, whatever happens.
pub struct Running(pub Child);

/// `proxy --listen 127.0.0.1:0 ARGS…` run in `dir` with `env` added: the child, its URL and
/// its stderr lines (read to the end, so the proxy's stderr never closes).
pub fn listen(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Running, String, std::sync::mpsc::Receiver<String>) {
    let mut child = bin_in(dir)
        .args(["proxy", "--listen", "127.0.0.1:0"])
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            let _ = sender.send(line);
        }
    });
    let running = Running(child);
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the proxy names its address");
        if let Some(url) = line.strip_prefix("mcp-recovery proxy: listening on ") {
            return (running, url.to_owned(), lines);
        }
    }
}

/// The `HOST:PORT` of an `http://` URL.
pub fn address_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned()
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The binary's demo server over HTTP on a free loopback port, logging its calls to `log`,
/// started with `extra`; its URL. Its state outlives every connection to it.
pub fn demo_http_with(log: &Path, extra: &[&str]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-recovery"))
        .args(["demo-server", "--http", "127.0.0.1:0", "--call-log"])
        .arg(log)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    (Running(child), url.trim().to_owned())
}

/// [`demo_http_with`] without extra flags.
pub fn demo_http(log: &Path) -> (Running, String) {
    demo_http_with(log, &[])
}

/// The calls a demo server's `--call-log` recorded, by tool name.
pub fn calls_at_server(log: &Path, name: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|line| serde_json::from_str::<Value>(line).unwrap()["name"] == name)
        .count()
}

/// Polls `done` every 20 ms, failing after 30 s.
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Spawns `command` with its stdin and stdout piped and its stderr discarded: the child, its
/// stdin, and its stdout read line by line.
pub fn spawn_piped(command: &mut Command) -> (Child, ChildStdin, Lines<BufReader<ChildStdout>>) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, stdin, lines)
}

/// Checks a `lint --format json` report against the schema the documentation publishes.
pub fn assert_lint_report(report: &Value) {
    let path = root().join("docs/schemas/lint-report.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{report}");
}

/// Checks a SARIF log against the OASIS SARIF 2.1.0 schema in `../shared/data` beside the
/// repository, where CI keeps it (`cargo xtask check-shared` requires it); without it, only the
/// shape the tests read is there.
pub fn assert_sarif(log: &Value) {
    assert_eq!(log["version"], "2.1.0", "{log}");
    assert!(log["runs"][0]["invocations"][0].is_object(), "{log}");
    let path = root().join("../shared/data/sarif-schema-2.1.0.json");
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let schema: Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .build(&schema)
        .unwrap();
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{log}");
}

/// A Python MCP server whose `create_order` answers with `PAD` bytes of padding beside the
/// order id, logging each call.
const BIG_SERVER: &str = r#"
import json, sys
tools = json.load(open(sys.argv[1]))["tools"]
log = open(sys.argv[2], "a")
pad = int(sys.argv[3])
orders = 0
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, result = message["method"], {}
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "big", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call":
        params = message["params"]
        log.write(json.dumps({"name": params["name"], "arguments": params.get("arguments")}) + "\n")
        log.flush()
        orders += 1
        order = {"orderId": f"o-{orders}", "padding": "x" * pad}
        result = {"content": [{"type": "text", "text": "ok"}], "structuredContent": order}
        if params["name"] == "fail_order":
            result = {"content": [{"type": "text", "text": "failed"}], "isError": True}
    else:
        error = {"code": -32601, "message": "no such method"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// The command line of [`BIG_SERVER`] with `create_order`, `cancel_order` and `extra` tools,
/// `pad` bytes of padding and its call log at `log`.
pub fn big_server(dir: &Path, extra: &[Value], log: &Path, pad: usize) -> Vec<String> {
    let tools = dir.join("tools.json");
    let mut list: Value = serde_json::from_str(&order_tools("cancel_order", true, true)).unwrap();
    list["tools"]
        .as_array_mut()
        .unwrap()
        .extend_from_slice(extra);
    std::fs::write(&tools, list.to_string()).unwrap();
    let script = dir.join("big.py");
    std::fs::write(&script, BIG_SERVER).unwrap();
    [
        "python3".to_owned(),
        script.display().to_string(),
        tools.display().to_string(),
        log.display().to_string(),
        pad.to_string(),
    ]
    .to_vec()
}

/// The order ids `cancel_order` was called with, in order.
pub fn cancelled(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|c| c["name"] == "cancel_order")
        .map(|c| c["arguments"]["orderId"].clone())
        .collect()
}
