//! Overlays (`lint`, `plan`, `convert`, `profile` with `--overlay`), `suggest`, `profile` and the
//! rule presets, end to end through the binary.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{bin, code, codes, lint_json, root, run_in};
use serde_json::{Value, json};

const TOOLS: &str = "fixtures/overlays/notes.tools.json";
const OVERLAY: &str = "fixtures/overlays/notes.overlay.toml";
const BAD_OVERLAY: &str = "fixtures/overlays/notes.bad-overlay.json";
const TRACE: &str = "fixtures/overlays/notes.trace.jsonl";

fn stdout_json(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn a_good_overlay_lints_clean() {
    let (status, report) = lint_json(&root(), &["--overlay", OVERLAY, TOOLS]);
    assert_eq!(status, 0, "{report:#}");
    assert_eq!(report["summary"]["files"], 2);
    assert_eq!(report["summary"]["tools"], 6);
    assert!(codes(&report).is_empty(), "{report:#}");
}

#[test]
fn findings_in_overlay_declarations_point_into_the_overlay() {
    let (status, report) = lint_json(&root(), &["--overlay", BAD_OVERLAY, TOOLS]);
    assert_eq!(status, 1, "{report:#}");
    let found: Vec<(String, String, String, u64, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["file"].as_str().unwrap().to_owned(),
                d["pointer"].as_str().unwrap().to_owned(),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
            )
        })
        .collect();
    let at = |code: &str, pointer: &str, line: u64, column: u64| {
        (
            code.to_owned(),
            BAD_OVERLAY.to_owned(),
            pointer.to_owned(),
            line,
            column,
        )
    };
    assert_eq!(
        found,
        [
            at("R008", "/tools/create_notes", 4, 5),
            at("R009", "/tools/pinNote/annotations/destructiveHint", 8, 42),
            at(
                "R107",
                "/tools/pinNote/_meta/dev.chronomcp~1compensate/compensation/parameterMapping/noteId",
                11,
                82
            ),
        ]
    );
    // The near miss is named.
    let r007 = &report["diagnostics"][0];
    assert_eq!(r007["help"], "did you mean 'create_note'?");
}

#[test]
fn toml_overlay_findings_carry_lines_and_columns() {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(root().join(TOOLS), dir.path().join("tools.json")).unwrap();
    fs::write(
        dir.path().join("o.toml"),
        "[tools.create_note.annotations.recovery]\nstrategy = \"compensation\"\n\
         compensatingOperation = { operationId = \"delete_note\", parameters = { noteId = \"$response.body#/noteID\" } }\n",
    )
    .unwrap();
    let (status, report) = lint_json(dir.path(), &["--overlay", "o.toml", "tools.json"]);
    assert_eq!(status, 0, "{report:#}");
    let d = &report["diagnostics"][0];
    // The outputSchema allows other properties, so the misspelt field may be absent (R108).
    assert_eq!(d["code"], "R108", "{report:#}");
    assert_eq!(d["file"], "o.toml");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(3), Some(80))
    );
}

#[test]
fn malformed_overlays_exit_2_naming_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(root().join(TOOLS), dir.path().join("tools.json")).unwrap();
    for (name, text, expected) in [
        ("a.toml", "tools = [", "a.toml:1:"),
        (
            "b.json",
            "{\"tools\": {\"x\": {\"inputSchema\": {}}}}",
            "at /tools/x/inputSchema",
        ),
        ("c.json", "{\"tools\": 1}", "at /tools:"),
        ("d.json", "[1", "not valid JSON (line 1"),
    ] {
        fs::write(dir.path().join(name), text).unwrap();
        let output = run_in(dir.path(), &["lint", "--overlay", name, "tools.json"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(code(&output), 2, "{name}: {stderr}");
        assert!(
            stderr.contains(name) && stderr.contains(expected),
            "{name}: {stderr}"
        );
    }
    let output = run_in(
        dir.path(),
        &["lint", "--overlay", "missing.toml", "tools.json"],
    );
    assert_eq!(code(&output), 2);
    let output = run_in(
        dir.path(),
        &["lint", "--overlay", "a.toml", "tools.json", "."],
    );
    assert_eq!(code(&output), 2, "an overlay applies to one document");
}

#[test]
fn plan_rolls_back_with_the_overlay_and_not_without() {
    let plan = |overlay: Option<&str>| {
        let mut cmd = bin();
        cmd.args([
            "plan", "--format", "json", "--tools", TOOLS, "--trace", TRACE,
        ]);
        if let Some(overlay) = overlay {
            cmd.args(["--overlay", overlay]);
        }
        let output = cmd.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let plan = stdout_json(&output);
        plan["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["tool"].as_str().unwrap().to_owned(),
                    s["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect::<Vec<_>>()
    };
    let with = plan(Some(OVERLAY));
    let statuses: Vec<&str> = with.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        statuses,
        ["irreversible", "compensate", "compensate"],
        "{with:?}"
    );
    let without = plan(None);
    assert!(
        without.iter().all(|(_, s)| s != "compensate"),
        "{without:?}"
    );
    let output = bin()
        .args([
            "plan",
            "--tools",
            TOOLS,
            "--trace",
            TRACE,
            "--overlay",
            BAD_OVERLAY,
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("notes.bad-overlay.json:4:5") && stderr.contains("R008"),
        "{stderr}"
    );
}

#[test]
fn convert_writes_overlay_declarations_into_the_document() {
    let output = bin()
        .args(["convert", "--to", "compensate", "--overlay", OVERLAY, TOOLS])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let document = stdout_json(&output);
    let create = &document["result"]["tools"][0];
    assert_eq!(
        create["_meta"]["dev.chronomcp/compensate"]["compensation"]["toolName"],
        "delete_note"
    );
}

#[test]
fn suggest_drafts_an_overlay_that_lints_clean() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    fs::copy(root().join(TOOLS), &tools).unwrap();
    for out in ["draft.json", "draft.toml"] {
        let output = run_in(dir.path(), &["suggest", "tools.json", "--out", out]);
        assert!(output.status.success(), "{output:?}");
        let report = String::from_utf8_lossy(&output.stderr);
        assert!(
            report.contains("create_note: compensated by delete_note"),
            "{report}"
        );
        let (status, lint) = lint_json(dir.path(), &["--overlay", out, "tools.json"]);
        assert_eq!(status, 0, "{lint:#}");
        assert!(codes(&lint).is_empty(), "{lint:#}");
    }
    let output = run_in(dir.path(), &["suggest", "tools.json"]);
    let draft = stdout_json(&output);
    let tools = draft["tools"].as_object().unwrap();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["create_note", "pinNote", "unpinNote", "send-digest"]
    );
    let carrier = &tools["send-digest"]["_meta"]["dev.chronomcp/compensate"];
    assert_eq!(carrier["reversibility"], "irreversible");
    assert!(
        carrier["notes"].as_str().unwrap().contains("confidence"),
        "{carrier}"
    );
    let mapping = &tools["create_note"]["_meta"]["dev.chronomcp/compensate"]["compensation"]["parameterMapping"];
    assert_eq!(mapping["noteId"], "$.output.structuredContent.noteId");
}

#[test]
fn suggest_drafts_copies_edits_and_noun_qualified_fields_that_lint_clean() {
    let dir = tempfile::tempdir().unwrap();
    let text = json!({"type": "string"});
    let object = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required});
    let hints = |read_only: bool, destructive: bool, idempotent: bool| {
        json!({"readOnlyHint": read_only, "destructiveHint": destructive,
            "idempotentHint": idempotent, "openWorldHint": false})
    };
    let kinds = |values: Value| json!({"type": "string", "enum": values});
    let tools = json!({"tools": [
        {"name": "copy_sheet", "annotations": hints(false, false, false), "inputSchema": object(
            json!({"path": text, "sheet": text, "new_name": text}),
            json!(["path", "sheet", "new_name"]))},
        {"name": "delete_sheet", "annotations": hints(false, true, true), "inputSchema": object(
            json!({"path": text, "sheet": text}), json!(["path", "sheet"]))},
        {"name": "read_file", "annotations": hints(true, false, true), "inputSchema": object(
            json!({"path": text}), json!(["path"]))},
        {"name": "write_file", "annotations": hints(false, true, true), "inputSchema": object(
            json!({"path": text, "content": text}), json!(["path", "content"]))},
        {"name": "edit_block", "annotations": hints(false, true, false), "inputSchema": object(
            json!({"file_path": text, "old_string": text, "new_string": text}),
            json!(["file_path", "old_string", "new_string"]))},
        {"name": "create-index", "annotations": hints(false, false, false), "inputSchema": object(
            json!({"collection": text}), json!(["collection"])),
         "outputSchema": object(
            json!({"collection": text, "indexName": text,
                "indexType": kinds(json!(["classic", "vectorSearch", "search"]))}),
            json!(["collection", "indexName", "indexType"]))},
        {"name": "drop-index", "annotations": hints(false, true, true), "inputSchema": object(
            json!({"collection": text, "indexName": text,
                "type": kinds(json!(["classic", "search"]))}),
            json!(["collection", "indexName", "type"]))}
    ]});
    fs::write(dir.path().join("tools.json"), tools.to_string()).unwrap();
    let output = run_in(
        dir.path(),
        &["suggest", "tools.json", "--out", "draft.toml"],
    );
    assert!(output.status.success(), "{output:?}");
    let report = String::from_utf8_lossy(&output.stderr);
    for line in [
        "copy_sheet: compensated by delete_sheet",
        "edit_block: undone from a before-image (read_file then write_file)",
        "create-index: compensated by drop-index",
    ] {
        assert!(report.contains(line), "{report}");
    }
    let draft = fs::read_to_string(dir.path().join("draft.toml")).unwrap();
    assert!(draft.contains(r#"sheet = "$.input.new_name""#), "{draft}");
    assert!(
        draft.contains(r#"path = "$request.body#/file_path""#),
        "{draft}"
    );
    assert!(
        draft.contains(r#"type = "$.output.structuredContent.indexType""#),
        "{draft}"
    );
    let (status, lint) = lint_json(dir.path(), &["--overlay", "draft.toml", "tools.json"]);
    assert_eq!(status, 0, "{lint:#}");
    assert!(codes(&lint).is_empty(), "{lint:#}");
}

#[test]
fn profile_names_the_missing_declarations() {
    let output = bin()
        .args(["profile", "--format", "json", TOOLS])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let plain = stdout_json(&output);
    assert_eq!(plain["reached"], serde_json::json!([]));
    let output = bin()
        .args(["profile", "--format", "json", "--overlay", OVERLAY, TOOLS])
        .output()
        .unwrap();
    let overlaid = stdout_json(&output);
    let pin = &overlaid["tools"][2];
    assert_eq!(pin["tool"], "pinNote");
    assert_eq!(
        pin["reached"],
        serde_json::json!(["unknown-safe", "compensation-safe", "externally-mediated"])
    );
    assert!(
        pin["gaps"][0]["missing"]
            .as_str()
            .unwrap()
            .contains("staged"),
        "{pin:#}"
    );
    let human = bin().args(["profile", TOOLS]).output().unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("missing declarations:"), "{text}");
    assert!(
        text.contains("`annotations.idempotentHint: true`"),
        "{text}"
    );
}

#[test]
fn strict_preset_from_flag_and_config() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tools.json"),
        r#"{"tools": [{"name": "write_note", "inputSchema": {"type": "object"}}]}"#,
    )
    .unwrap();
    let (status, report) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!((status, codes(&report).len()), (0, 0), "{report:#}");
    let (_, strict) = lint_json(dir.path(), &["--preset", "strict", "tools.json"]);
    let expected = ["R201", "R202", "R301", "R302"];
    assert_eq!(codes(&strict), expected, "{strict:#}");
    fs::write(
        dir.path().join("mcp-recovery.toml"),
        "extends = \"strict\"\n",
    )
    .unwrap();
    let (_, configured) = lint_json(dir.path(), &["tools.json"]);
    assert_eq!(codes(&configured), expected);
    let (_, flag_wins) = lint_json(dir.path(), &["--preset", "recommended", "tools.json"]);
    assert!(codes(&flag_wins).is_empty());
}

#[cfg(feature = "demo")]
#[test]
fn live_overlay_checks_the_server_name() {
    let exe = env!("CARGO_BIN_EXE_mcp-recovery");
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("other.toml"),
        "server = \"someone-else\"\n[tools.charge_payment.annotations]\ntitle = \"Charge\"\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("demo.toml"),
        "server = \"mcp-recovery-demo-server\"\n[tools.no_such_tool.annotations]\ntitle = \"x\"\n",
    )
    .unwrap();
    let output = run_in(
        dir.path(),
        &[
            "lint",
            "--overlay",
            "other.toml",
            "--stdio",
            "--",
            exe,
            "demo-server",
        ],
    );
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("'someone-else'"), "{stderr}");
    let (status, report) = lint_json(
        dir.path(),
        &[
            "--overlay",
            "demo.toml",
            "--stdio",
            "--",
            exe,
            "demo-server",
        ],
    );
    assert_eq!(status, 1, "{report:#}");
    let d = &report["diagnostics"][0];
    assert_eq!(
        (d["code"].as_str(), d["file"].as_str()),
        (Some("R008"), Some("demo.toml"))
    );
    assert_eq!(d["line"], 2);
}

/// A step of a session: the tool, and its arguments from the results so far.
type Step<'a> = (&'a str, &'a dyn Fn(&[Value]) -> Value);

/// The demo server without its declarations.
#[cfg(feature = "demo")]
const UNDECLARED_DEMO: [&str; 3] = [
    env!("CARGO_BIN_EXE_mcp-recovery"),
    "demo-server",
    "--undeclared",
];

/// One client session through `proxy --journal` in front of `server` (a command): each step
/// names a tool and builds its arguments from the results so far.
fn journal_session(
    dir: &std::path::Path,
    journal: &std::path::Path,
    server: &[&str],
    steps: &[Step<'_>],
) {
    use std::io::Write;
    let mut command = common::bin_in(dir);
    command
        .args(["proxy", "--journal"])
        .arg(journal)
        .arg("--")
        .args(server);
    let (mut child, mut stdin, mut lines) = common::spawn_piped(&mut command);
    let mut answer =
        |stdin: &mut std::process::ChildStdin, id: usize, method: &str, params: Value| {
            let request =
                serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            writeln!(stdin, "{request}").unwrap();
            stdin.flush().unwrap();
            loop {
                let line: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
                if line["id"] == id && line.get("method").is_none() {
                    return line["result"].clone();
                }
            }
        };
    answer(&mut stdin, 0, "initialize", common::initialize_params());
    writeln!(
        stdin,
        r#"{{"jsonrpc": "2.0", "method": "notifications/initialized"}}"#
    )
    .unwrap();
    let mut results = Vec::new();
    for (id, (name, arguments)) in steps.iter().enumerate() {
        let params = serde_json::json!({"name": name, "arguments": arguments(&results)});
        let result = answer(&mut stdin, id + 1, "tools/call", params);
        assert_ne!(result["isError"], true, "{name}: {result}");
        results.push(result);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[cfg(feature = "demo")]
#[test]
fn suggest_learns_from_journals() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    let fetched = run_in(
        dir.path(),
        &[
            "fetch",
            "--stdio",
            "--",
            env!("CARGO_BIN_EXE_mcp-recovery"),
            "demo-server",
            "--undeclared",
        ],
    );
    assert!(fetched.status.success(), "{fetched:?}");
    fs::write(&tools, &fetched.stdout).unwrap();
    let reserve = |_: &[Value]| serde_json::json!({"sku": "sku-widget", "quantity": 1});
    let release = |results: &[Value]| {
        let id = &results.last().unwrap()["structuredContent"]["reservationId"];
        serde_json::json!({"reservationId": id})
    };
    let release_first = |results: &[Value]| {
        let id = &results[0]["structuredContent"]["reservationId"];
        serde_json::json!({"reservationId": id})
    };
    let (first, second) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    journal_session(
        dir.path(),
        &first,
        &UNDECLARED_DEMO,
        &[
            ("reserve_inventory", &reserve),
            ("release_inventory", &release),
        ],
    );
    journal_session(
        dir.path(),
        &second,
        &UNDECLARED_DEMO,
        &[
            ("reserve_inventory", &reserve),
            ("release_inventory", &release),
        ],
    );
    let drafted = |journals: &[&str]| {
        let mut args = vec!["suggest", "tools.json"];
        for journal in journals {
            args.extend(["--journal", journal]);
        }
        let output = run_in(dir.path(), &args);
        assert!(output.status.success(), "{output:?}");
        (
            stdout_json(&output),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (draft, _) = drafted(&["a.jsonl", "b.jsonl"]);
    let carrier = &draft["tools"]["reserve_inventory"]["_meta"]["dev.chronomcp/compensate"];
    assert_eq!(
        carrier["compensation"]["toolName"], "release_inventory",
        "{draft:#}"
    );
    assert!(
        carrier["notes"]
            .as_str()
            .unwrap()
            .contains("seen in 2 of 2 session(s)"),
        "{carrier}"
    );
    // A session releasing an earlier reservation than the last one made contradicts the
    // binding: the pair is left out, saying why.
    let third = dir.path().join("c.jsonl");
    journal_session(
        dir.path(),
        &third,
        &UNDECLARED_DEMO,
        &[
            ("reserve_inventory", &reserve),
            ("reserve_inventory", &reserve),
            ("release_inventory", &release_first),
        ],
    );
    let (draft, report) = drafted(&["a.jsonl", "b.jsonl", "c.jsonl"]);
    assert!(
        draft["tools"].get("reserve_inventory").is_none(),
        "{draft:#}"
    );
    assert!(
        report.contains("left out  reserve_inventory → release_inventory: the journal shows"),
        "{report}"
    );
    // A journal that is not JSON lines is refused naming the file and the line.
    // So is a file whose lines are no journal records, or records written ambiguously.
    for (lines, said) in [
        (
            "{\"kind\": \"call.outcome\", \"hash\": \"0\"}\nnot json\n",
            "line 1: a call.outcome record without /session",
        ),
        ("{\"x\": 1}\n", "line 1: not a journal record"),
        ("42\n", "line 1: not a journal record"),
        (
            "{\"name\": \"reserve_inventory\", \"arguments\": {}, \"result\": null}\n",
            "line 1: not a journal record",
        ),
        (
            "{\"kind\": \"call.outcome\", \"kind\": \"x\", \"hash\": \"0\"}\n",
            "line 1: a member name is written twice",
        ),
    ] {
        fs::write(dir.path().join("bad.jsonl"), lines).unwrap();
        let output = run_in(
            dir.path(),
            &["suggest", "tools.json", "--journal", "bad.jsonl"],
        );
        assert_eq!(code(&output), 2, "{lines}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&format!("bad.jsonl: {said}")), "{stderr}");
    }
}

#[test]
fn toml_drafts_keep_names_inert_in_their_comments() {
    let dir = tempfile::tempdir().unwrap();
    let tools =
        r#"{"tools": [{"name": "send\n[tools.x]\nmail", "inputSchema": {"type": "object"}}]}"#;
    fs::write(dir.path().join("tools.json"), tools).unwrap();
    let output = run_in(
        dir.path(),
        &["suggest", "tools.json", "--out", "draft.toml"],
    );
    assert!(output.status.success(), "{output:?}");
    let draft = fs::read_to_string(dir.path().join("draft.toml")).unwrap();
    assert!(
        draft.contains("# send\\n[tools.x]\\nmail: drafted by"),
        "{draft}"
    );
    let (status, lint) = lint_json(dir.path(), &["--overlay", "draft.toml", "tools.json"]);
    assert_eq!(status, 0, "{lint:#}");
}

/// A server in the manner of FastMCP: `create_issue` returns its issue as a JSON string in
/// `structuredContent.result` (and in a text item); `delete_issue` takes the issue's key.
const TEXT_RESULT_SERVER: &str = r#"
import json, sys
tools = [
    {"name": "create_issue", "description": "Create an issue.",
     "inputSchema": {"type": "object", "properties": {"summary": {"type": "string"}},
                     "required": ["summary"]},
     "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}},
                      "required": ["result"], "x-fastmcp-wrap-result": True}},
    {"name": "delete_issue", "description": "Delete an issue.",
     "inputSchema": {"type": "object", "properties": {"issue_key": {"type": "string"}},
                     "required": ["issue_key"]}},
]
made = 0
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, params = message["method"], message.get("params", {})
    if method == "initialize":
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "issues", "version": "1.0.0"}}
    elif method == "tools/list":
        result = {"tools": tools}
    elif method != "tools/call":
        error = {"code": -32601, "message": "method not found"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    elif params["name"] == "create_issue":
        made += 1
        text = json.dumps({"message": "created", "issue": {"key": "PROJ-%d" % made, "id": made}})
        result = {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}}
    else:
        result = {"content": [{"type": "text", "text": "deleted " + params["arguments"]["issue_key"]}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

#[test]
fn suggest_learns_a_binding_from_results_that_hold_json_as_text() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("server.py"), TEXT_RESULT_SERVER).unwrap();
    let server = ["python3", "server.py"];
    let fetched = run_in(
        dir.path(),
        &["fetch", "--stdio", "--", server[0], server[1]],
    );
    assert!(fetched.status.success(), "{fetched:?}");
    fs::write(dir.path().join("tools.json"), &fetched.stdout).unwrap();
    let create = |_: &[Value]| json!({"summary": "s"});
    let delete = |results: &[Value]| {
        let text = results.last().unwrap()["structuredContent"]["result"].as_str();
        let created: Value = serde_json::from_str(text.unwrap()).unwrap();
        json!({"issue_key": created["issue"]["key"]})
    };
    for journal in ["a.jsonl", "b.jsonl"] {
        let steps: [Step<'_>; 2] = [("create_issue", &create), ("delete_issue", &delete)];
        journal_session(dir.path(), &dir.path().join(journal), &server, &steps);
    }
    let output = run_in(
        dir.path(),
        &[
            "suggest",
            "tools.json",
            "--journal",
            "a.jsonl",
            "--journal",
            "b.jsonl",
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let draft = stdout_json(&output);
    let entry = &draft["tools"]["create_issue"];
    let operation = &entry["annotations"]["recovery"]["compensatingOperation"];
    assert_eq!(operation["operationId"], "delete_issue", "{draft:#}");
    assert_eq!(
        operation["parameters"]["issue_key"],
        "$response.body#/issue/key"
    );
    assert_eq!(entry["result"]["from"], "fastmcp-result");
    assert_eq!(
        entry["result"]["schema"]["properties"]["issue"]["required"],
        json!(["key"])
    );
    // The draft, as an overlay, lints clean against the list it was drafted for.
    fs::write(dir.path().join("draft.json"), &output.stdout).unwrap();
    let (status, report) = lint_json(dir.path(), &["tools.json", "--overlay", "draft.json"]);
    assert_eq!(status, 0, "{report:#}");
}
