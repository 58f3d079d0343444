//! `plan`, `convert`, `census` and `demo` end to end through the binary.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{bin, root};
use serde_json::{Value, json};

fn json_stdout(output: &std::process::Output) -> Value {
    mcp_recovery_model::json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

/// Every plan case of the conformance suite gives, through the CLI, the expected steps.
#[test]
fn plan_matches_the_conformance_suite() {
    let dir = root().join("spec/conformance/plan");
    let mut cases = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let case = entry.unwrap().path();
        let output = bin()
            .args(["plan", "--format", "json", "--tools"])
            .arg(case.join("tools.json"))
            .arg("--trace")
            .arg(case.join("trace.jsonl"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", case.display());
        let actual = json_stdout(&output);
        let expected: Value = mcp_recovery_model::json::from_str(
            &fs::read_to_string(case.join("expected-plan.json")).unwrap(),
        )
        .unwrap();
        let steps = |v: &Value| -> Vec<Value> {
            v["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| json!([s["tool"], s["status"], s["call"]]))
                .collect()
        };
        assert_eq!(steps(&actual), steps(&expected), "{}", case.display());
        cases += 1;
    }
    assert!(cases >= 30, "only {cases} plan cases");
}

#[test]
fn plan_table_and_errors() {
    let case = root().join("spec/conformance/plan/041-lifo-checkout");
    let output = bin()
        .args(["plan", "--tools"])
        .arg(case.join("tools.json"))
        .arg("--trace")
        .arg(case.join("trace.jsonl"))
        .output()
        .unwrap();
    assert!(output.status.success());
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(table.starts_with("#  tool"), "{table}");
    assert!(!table.contains('\x1b'), "no colors when NO_COLOR is set");

    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.jsonl");
    fs::write(
        &trace,
        "{\"name\": \"x\", \"arguments\": {}, \"result\": null}\nnot json\n",
    )
    .unwrap();
    let output = bin()
        .args(["plan", "--tools"])
        .arg(case.join("tools.json"))
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("trace.jsonl") && stderr.contains("line 2"),
        "{stderr}"
    );
}

/// SEP-3172 → compensate → SEP-3172 gives back the document, and the lint stays clean.
#[test]
fn convert_round_trips_through_the_cli() {
    let original = root().join("spec/conformance/lint/001-clean-sep3172/tools.json");
    let dir = tempfile::tempdir().unwrap();
    let there = dir.path().join("compensate.json");
    let back = dir.path().join("sep3172.json");
    let status = bin()
        .args(["convert", "--to", "compensate", "-o"])
        .arg(&there)
        .arg(&original)
        .status()
        .unwrap();
    assert!(status.success());
    let converted: Value = serde_json::from_str(&fs::read_to_string(&there).unwrap()).unwrap();
    assert!(converted.to_string().contains("dev.chronomcp/compensate"));
    assert!(!converted.to_string().contains("compensatingOperation"));
    let status = bin()
        .args(["convert", "--to", "sep3172", "-o"])
        .arg(&back)
        .arg(&there)
        .status()
        .unwrap();
    assert!(status.success());
    let restored: Value = serde_json::from_str(&fs::read_to_string(&back).unwrap()).unwrap();
    let input: Value = serde_json::from_str(&fs::read_to_string(&original).unwrap()).unwrap();
    assert_eq!(restored, input);
    let lint = bin().arg("lint").arg(&there).arg(&back).output().unwrap();
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
}

/// What has no counterpart is reported on stderr with exit 1, and left where it was.
#[test]
fn convert_reports_what_it_cannot_move() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tools.json");
    let document = json!({"tools": [{
        "name": "send_email",
        "inputSchema": {"type": "object"},
        "_meta": {"dev.chronomcp/compensate": {"reversibility": "irreversible"}}
    }]});
    fs::write(&input, document.to_string()).unwrap();
    let output = bin()
        .args(["convert", "--to", "sep3172"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(json_stdout(&output), document);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("not converted: send_email: /tools/0/_meta/dev.chronomcp~1compensate"),
        "{stderr}"
    );
    // The input file is never touched.
    assert_eq!(fs::read_to_string(&input).unwrap(), document.to_string());
}

#[test]
fn census_counts_the_valid_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("signatures.svg");
    let output = bin()
        .args(["census", "--format", "json", "--svg"])
        .arg(&svg)
        .arg("fixtures/valid")
        .output()
        .unwrap();
    assert!(output.status.success());
    let census = json_stdout(&output);
    let files = fs::read_dir(root().join("fixtures/valid")).unwrap().count() as u64;
    assert_eq!(census["files"]["total"].as_u64(), Some(files));
    assert_eq!(census["files"]["not_tools_lists"].as_u64(), Some(0));
    assert!(fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}

/// The README's first command: the rollback restores the starting state, and the run leaves
/// nothing behind in the temporary directory.
#[cfg(feature = "demo")]
#[test]
fn demo_restores_the_state() {
    let tmp = tempfile::tempdir().unwrap();
    let output = bin()
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("7 tools, 0 errors, 0 warnings"), "{stdout}");
    assert!(stdout.contains("✓ refund_payment"), "{stdout}");
    assert!(stdout.contains("✓ release_inventory"), "{stdout}");
    assert!(stdout.contains("state restored"), "{stdout}");
    assert!(stdout.contains("the proxy compensated 2 calls"), "{stdout}");
    assert!(stdout.contains("chain intact"), "{stdout}");
    assert!(stdout.contains("✓ state restored by the proxy"), "{stdout}");
    assert!(!stdout.contains('\x1b'), "no colors when NO_COLOR is set");
    let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Every command accepts the same documents: a JSON-RPC response without `jsonrpc` included.
#[test]
fn every_command_accepts_the_same_documents() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    let document = json!({"id": 1, "result": {"tools": [
        {"name": "charge", "inputSchema": {"type": "object"},
         "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
             "operationId": "refund", "parameters": {"id": "$request.body#/id"}}}}},
        {"name": "refund", "inputSchema": {"type": "object"}, "annotations": {"idempotentHint": true}},
        {"name": "broken", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}}
    ]}});
    fs::write(&tools, document.to_string()).unwrap();
    let trace = dir.path().join("trace.jsonl");
    fs::write(
        &trace,
        json!({"name": "charge", "arguments": {"id": "C-1"}, "result": {"content": []}})
            .to_string(),
    )
    .unwrap();
    let plan = bin()
        .args(["plan", "--format", "json", "--tools"])
        .arg(&tools)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(plan.status.code(), Some(0), "{plan:?}");
    let plan_json = json_stdout(&plan);
    assert_eq!(plan_json["steps"][0]["status"], "compensate");
    let stderr = String::from_utf8(plan.stderr).unwrap();
    assert!(stderr.contains("'broken' at /result/tools/2"), "{stderr}");
    let convert = bin()
        .args(["convert", "--to", "compensate"])
        .arg(&tools)
        .output()
        .unwrap();
    assert_eq!(convert.status.code(), Some(0), "{convert:?}");
    let census = bin()
        .args(["census", "--format", "json"])
        .arg(&tools)
        .output()
        .unwrap();
    assert_eq!(json_stdout(&census)["servers"], 1);
    let lint = bin()
        .args(["lint", "--format", "json"])
        .arg(&tools)
        .output()
        .unwrap();
    assert_eq!(json_stdout(&lint)["summary"]["tools"], 3);
}

/// A pointer that indexes an array has no mcp-compensate counterpart: exit 1 with a note.
#[test]
fn convert_refuses_array_index_pointers() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tools.json");
    fs::write(
        &input,
        json!([{"name": "t", "inputSchema": {"type": "object"},
            "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
                "operationId": "u", "parameters": {"id": "$response.body#/items/0/id"}}}}}])
        .to_string(),
    )
    .unwrap();
    let output = bin()
        .args(["convert", "--to", "compensate"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("index an array"), "{stderr}");
}

/// A census of a directory without documents says so and exits 2.
#[test]
fn census_of_nothing_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = bin().arg("census").arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("no *.json documents"), "{stderr}");
}

/// Runs `command` with its stdout closed by the reader before anything is read; asserts it exits
/// `expected` and says nothing of the closed pipe on stderr.
fn assert_quiet_on_broken_pipe(command: &mut std::process::Command, expected: i32) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the pipe before the output is written.
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(expected), "{command:?}: {stderr}");
    assert!(!stderr.contains("error:"), "{command:?}: {stderr}");
}

/// A reader that stops early is not an error: `lint … | head -1` exits 0 without a message.
#[test]
fn broken_pipe_exits_0_quietly() {
    assert_quiet_on_broken_pipe(bin().args(["rules"]), 0);
}

/// Every report format ends quietly when its reader goes away, and the exit status still says
/// what was found (`--deny warnings` fails the run): the report is larger than a pipe buffer, so
/// the writer is certainly still writing when the pipe breaks.
#[test]
fn broken_pipe_is_quiet_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.json");
    let tools: Vec<_> = (0..3000)
        .map(|i| {
            json!({"name": format!("tool_{i}"), "inputSchema": {"type": "object"},
                "annotations": {"recovery": {"strategy": "manual-only"}}})
        })
        .collect();
    fs::write(&path, json!({ "tools": tools }).to_string()).unwrap();
    let failing = bin()
        .args(["lint", "--deny", "warnings", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(failing.status.code(), Some(1));
    for format in [
        "human", "json", "sarif", "github", "markdown", "gitlab", "junit",
    ] {
        assert_quiet_on_broken_pipe(
            bin()
                .args(["lint", "--deny", "warnings", "--format", format])
                .arg(&path),
            1,
        );
    }
}

/// `lint DIR` and `census DIR` read the same documents: `*.json` in any case, hidden
/// directories and gitignored files skipped, links not followed.
#[test]
fn lint_and_census_walk_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    for sub in ["sub", ".hidden", "ignored"] {
        fs::create_dir_all(tree.join(sub)).unwrap();
    }
    fs::write(tree.join(".gitignore"), "skipped.json\nignored/\n").unwrap();
    // Every document is broken, so that both commands name each file they read.
    for name in [
        "a.json",
        "B.JSON",
        "c.Json",
        "sub/d.json",
        ".hidden/e.json",
        ".f.json",
        "skipped.json",
        "ignored/g.json",
        "notes.txt",
        "json",
    ] {
        fs::write(tree.join(name), "[").unwrap();
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(tree.join("a.json"), tree.join("link.json")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(tree.join("sub"), tree.join("linked")).unwrap();
    let expected = [
        "tree/B.JSON",
        "tree/a.json",
        "tree/c.Json",
        "tree/sub/d.json",
    ];

    let (status, report) = common::lint_json(dir.path(), &["tree"]);
    assert_eq!(status, 1, "{report}");
    let linted: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert_eq!(linted, expected, "{report}");

    let output = common::run_in(dir.path(), &["census", "--format", "json", "tree"]);
    assert!(output.status.success(), "{output:?}");
    let census = json_stdout(&output);
    let counted: Vec<&str> = census["not_tools_lists"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(counted, expected, "{census}");
    assert_eq!(
        census["files"]["total"].as_u64(),
        Some(expected.len() as u64)
    );
}

#[test]
fn audit_keygen_writes_a_pair_once_and_keeps_the_secret_private() {
    let dir = tempfile::tempdir().unwrap();
    let output = common::run_in(dir.path(), &["audit", "keygen", "approver"]);
    assert_eq!(common::code(&output), 0, "{output:?}");
    let public = std::fs::read_to_string(dir.path().join("approver.pub")).unwrap();
    let secret = std::fs::read_to_string(dir.path().join("approver")).unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains(public.trim()), "{stdout}");
    assert!(!stdout.contains(secret.trim()), "the secret was printed");
    assert_eq!(public.trim().len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(dir.path().join("approver")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
    // A key is never overwritten.
    let again = common::run_in(dir.path(), &["audit", "keygen", "approver"]);
    assert_eq!(common::code(&again), 2);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("approver")).unwrap(),
        secret
    );
}

/// A document or trace line that writes a member name twice is refused, naming the file (or the
/// line): a reader sees the first value, a parser takes the last, so which is meant is not known.
#[test]
fn members_written_twice_are_refused_wherever_a_command_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let tools = fs::read_to_string(root().join("fixtures/overlays/notes.tools.json")).unwrap();
    fs::write(
        dir.path().join("twice.json"),
        r#"{"tools": [], "tools": []}"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("deep.json"),
        "{\"tools\": [{\"name\": \"a\", \"inputSchema\": {\"type\": \"object\"}, \
         \"x\\u001b[2J\": 1, \"x\\u001b[2J\": 2}]}",
    )
    .unwrap();
    fs::write(dir.path().join("tools.json"), &tools).unwrap();
    let call = r#"{"name": "create_note", "name": "pin_note", "arguments": {}, "result": {"structuredContent": {}}}"#;
    fs::write(dir.path().join("trace.jsonl"), format!("{call}\n")).unwrap();
    for (args, said) in [
        (
            &["convert", "twice.json", "--to", "sep3172"][..],
            "twice.json at /tools: the member `tools` is written more than once",
        ),
        (
            &["plan", "--tools", "twice.json", "--trace", "trace.jsonl"],
            "twice.json at /tools: the member `tools`",
        ),
        (
            &["suggest", "deep.json"],
            "deep.json at /tools/0/x\\u{1b}[2J: the member `x\\u{1b}[2J`",
        ),
        (
            &["plan", "--tools", "tools.json", "--trace", "trace.jsonl"],
            "member name twice",
        ),
    ] {
        let output = bin().current_dir(dir.path()).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert!(!stderr.contains('\u{1b}'), "{args:?}: {stderr}");
    }
}

/// A trace that is not UTF-8 is refused naming the line where it stops being text.
#[test]
fn a_trace_that_is_not_text_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let tools = fs::read_to_string(root().join("fixtures/overlays/notes.tools.json")).unwrap();
    fs::write(dir.path().join("tools.json"), &tools).unwrap();
    fs::write(
        dir.path().join("trace.jsonl"),
        b"{\"name\": \"create_note\", \"arguments\": {}}\n{\"name\": \"x\xff\"}\n",
    )
    .unwrap();
    let output = bin()
        .current_dir(dir.path())
        .args(["plan", "--tools", "tools.json", "--trace", "trace.jsonl"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("trace.jsonl: line 2: not UTF-8 text"),
        "{stderr}"
    );
}
