//! Undo from a before-image: `plan` picks the undo by what the read before the call found, and a
//! malformed before-image declaration stops the command naming the file and the pointer.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{assert_overlay_refused, lint_json, plan_json, root};
use serde_json::{Value, json};

const TOOLS: &str = "fixtures/overlays/files.tools.json";
const OVERLAY: &str = "fixtures/overlays/files.overlay.toml";
const TRACE: &str = "fixtures/overlays/files.trace.jsonl";

#[test]
fn the_undo_follows_what_the_read_found() {
    let (status, report) = lint_json(&root(), &["--overlay", OVERLAY, TOOLS]);
    assert_eq!(status, 0, "{report:#}");
    let plan = plan_json(TOOLS, Some(OVERLAY), TRACE);
    let steps: Vec<(&str, &Value, &str)> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["status"].as_str().unwrap(),
                &s["call"],
                s["reason"].as_str().unwrap(),
            )
        })
        .collect();
    // Newest first: a read that got no answer, no before-image at all, a file that did not
    // exist (moved out of the way), a file that did (its old text written back).
    assert_eq!(steps[0].0, "unavailable");
    assert!(
        steps[0]
            .2
            .contains("got no result (no answer within 30000 ms)"),
        "{plan:#}"
    );
    assert_eq!(steps[1].0, "unavailable");
    assert!(
        steps[1].2.contains("none was recorded for this call"),
        "{plan:#}"
    );
    assert_eq!(
        steps[2].1,
        &json!({"name": "move_file", "arguments": {"source": "b.txt", "destination": "b.txt.rolled-back"}})
    );
    assert!(
        steps[2].2.ends_with("(the read before the call: missing)"),
        "{plan:#}"
    );
    assert_eq!(
        steps[3].1,
        &json!({"name": "write_file", "arguments": {"path": "a.txt", "content": "old text"}})
    );
    assert!(
        steps[3].2.ends_with("(the read before the call: found)"),
        "{plan:#}"
    );

    // Without a declared undo for what the read found, the effect stays and the step says so.
    let dir = tempfile::tempdir().unwrap();
    let only_found = dir.path().join("o.toml");
    let text = fs::read_to_string(root().join(OVERLAY)).unwrap();
    let cut = text.find("[tools.write_file.before.missing]").unwrap();
    fs::write(&only_found, &text[..cut]).unwrap();
    let plan = plan_json(TOOLS, Some(only_found.to_str().unwrap()), TRACE);
    assert_eq!(plan["steps"][2]["status"], "irreversible", "{plan:#}");
    assert!(
        plan["steps"][2]["reason"]
            .as_str()
            .unwrap()
            .contains("the target was missing, and the overlay declares no undo for that"),
        "{plan:#}"
    );
}

#[test]
fn malformed_before_images_name_the_file_and_the_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.toml");
    let cases = [
        ("read = \"read_file\"\n", "/tools/write_file/before"),
        (
            "read = \"read_file\"\narguments = { path = \"$response.body#/path\" }\nfound = { operationId = \"write_file\" }\n",
            "/tools/write_file/before/arguments/path",
        ),
        (
            "read = \"read_file\"\nfound = { operationId = \"write_file\", parameters = { content = \"$before.txt\" } }\n",
            "/tools/write_file/before/found/parameters/content",
        ),
        (
            "read = \"read_file\"\nwhen = \"found\"\nfound = { operationId = \"write_file\" }\n",
            "/tools/write_file/before/when",
        ),
    ];
    for (declaration, pointer) in cases {
        let text = format!("[tools.write_file.before]\n{declaration}");
        assert_overlay_refused(&path, &text, TOOLS, pointer);
    }
}

/// A before-image undo is a declared recovery: at `strict`, `write_file` (which has one) draws
/// neither R201 nor R202, while `move_file` (which the overlay leaves undeclared) still does.
#[test]
fn a_before_image_counts_as_a_declared_recovery() {
    let (_, report) = lint_json(
        &root(),
        &["--preset", "strict", "--overlay", OVERLAY, TOOLS],
    );
    let undeclared: Vec<(&str, &str)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| matches!(d["code"].as_str(), Some("R201" | "R202")))
        .map(|d| (d["code"].as_str().unwrap(), d["tool"].as_str().unwrap()))
        .collect();
    assert_eq!(undeclared, [("R201", "move_file")], "{report:#}");
}

/// The tools a before-image names must be listed: each one that is not is R101 at its place in
/// the overlay, a further call of an undo (`then`) included.
#[test]
fn tools_a_before_image_names_must_be_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.toml");
    fs::write(
        &path,
        "[tools.write_file.before]\nread = \"read_fil\"\nfound = { operationId = \"write_file\", then = [{ operationId = \"write_file\" }, { operationId = \"remove_file\" }] }\nmissing = { operationId = \"delete_file\" }\n",
    )
    .unwrap();
    let (status, report) = lint_json(&root(), &["--overlay", path.to_str().unwrap(), TOOLS]);
    assert_eq!(status, 1, "{report:#}");
    let found: Vec<(&str, &str, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["pointer"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("R101", "/tools/write_file/before/read", 2),
            (
                "R101",
                "/tools/write_file/before/found/then/1/operationId",
                3
            ),
            ("R101", "/tools/write_file/before/missing/operationId", 4),
        ],
        "{report:#}"
    );
    assert_eq!(
        report["diagnostics"][0]["help"],
        "did you mean 'read_file'?"
    );
}

/// Only a before-image's undo has a before-image: a carrier's compensation that reads one (as a
/// reference or as a map binding's array) is R104 at its place, never a compensation that is
/// unavailable only when it is needed.
#[test]
fn a_carrier_never_reads_a_before_image() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.toml");
    fs::write(
        &path,
        "[tools.write_file.annotations.recovery]\nstrategy = \"compensation\"\ncompensatingOperation.operationId = \"write_file\"\ncompensatingOperation.parameters = { path = \"$request.body#/path\", content = \"$before.text\" }\n\n[tools.move_file.annotations.recovery]\nstrategy = \"compensation\"\ncompensatingOperation.operationId = \"move_file\"\ncompensatingOperation.parameters.source = { \"$map\" = \"$before.body#/paths\", \"$each\" = \"$item\" }\n",
    )
    .unwrap();
    let (status, report) = lint_json(&root(), &["--overlay", path.to_str().unwrap(), TOOLS]);
    assert_eq!(status, 1, "{report:#}");
    let found: Vec<(&str, &str, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "R104")
        .map(|d| {
            (
                d["tool"].as_str().unwrap(),
                d["pointer"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "write_file",
                "/tools/write_file/annotations/recovery/compensatingOperation/parameters/content",
                4
            ),
            (
                "move_file",
                "/tools/move_file/annotations/recovery/compensatingOperation/parameters/source",
                9
            ),
        ],
        "{report:#}"
    );
}

/// A Python MCP server of the files under `ROOT` (`argv[1]`), with the tools of `argv[2]`.
const FILE_SERVER: &str = r#"
import json, os, sys
root, tools = sys.argv[1], json.load(open(sys.argv[2]))["tools"]
def text(t, error=False):
    return {"content": [{"type": "text", "text": t}], "isError": error}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, result = message["method"], {}
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "files", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call":
        name, args = message["params"]["name"], message["params"].get("arguments", {})
        path = lambda key: os.path.join(root, args[key])
        if name == "read_file":
            try:
                result = text(open(path("path")).read())
            except OSError as e:
                result = text(str(e), True)
        elif name == "write_file":
            open(path("path"), "w").write(args["content"])
            result = text("written")
        elif name == "move_file":
            if os.path.exists(path("destination")):
                result = text("destination exists", True)
            else:
                os.rename(path("source"), path("destination"))
                result = text("moved")
    else:
        error = {"code": -32601, "message": "no such method"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// A directory with `files/a.txt` ("v1"), the server, and the overlay with `unchanged = true`;
/// and the server's command line.
fn unchanged_setup() -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("files")).unwrap();
    fs::write(dir.path().join("files/a.txt"), "v1").unwrap();
    fs::write(dir.path().join("files.py"), FILE_SERVER).unwrap();
    let overlay = fs::read_to_string(root().join(OVERLAY)).unwrap().replace(
        "[tools.write_file.before]\n",
        "[tools.write_file.before]\nunchanged = true\n",
    );
    fs::write(dir.path().join("o.toml"), overlay).unwrap();
    let server = [
        "python3".to_owned(),
        "files.py".to_owned(),
        "files".to_owned(),
        root().join(TOOLS).display().to_string(),
    ];
    (dir, server.to_vec())
}

/// Writes through `mcp-recovery proxy`, each answered before the next is sent.
fn write_through_proxy(dir: &std::path::Path, server: &[String], writes: &[(&str, &str)]) {
    use std::io::Write;
    let mut command = common::bin_in(dir);
    command
        .args(["proxy", "--journal", "j.jsonl", "--overlay", "o.toml", "--"])
        .args(server);
    let (mut child, mut stdin, mut lines) = common::spawn_piped(&mut command);
    let mut ask = |id: usize, method: &str, params: Value| {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{request}").unwrap();
        loop {
            let message: Value =
                serde_json::from_str(&lines.next().expect("an answer").unwrap()).unwrap();
            if message["id"] == id {
                assert!(message["result"]["isError"] != true, "{message}");
                return;
            }
        }
    };
    ask(0, "initialize", common::initialize_params());
    for (i, (path, content)) in writes.iter().enumerate() {
        let arguments = json!({"path": path, "content": content});
        ask(
            i + 1,
            "tools/call",
            json!({"name": "write_file", "arguments": arguments}),
        );
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

fn rollback(dir: &std::path::Path, server: &[String], dry_run: bool) -> (i32, String) {
    let mut args = vec!["rollback", "--journal", "j.jsonl", "--overlay", "o.toml"];
    if dry_run {
        args.push("--dry-run");
    }
    args.extend(["--stdio", "--"]);
    args.extend(server.iter().map(String::as_str));
    let output = common::run_in(dir, &args);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    (
        common::code(&output),
        format!("{text}{}", String::from_utf8_lossy(&output.stderr)),
    )
}

/// A file a person changed after the proxied write keeps the change: `rollback` reads it again,
/// finds it is not what the write left, makes no undo and says so (exit 1); `--dry-run` shows
/// the condition.
#[test]
fn rollback_never_overwrites_a_later_change() {
    let (dir, server) = unchanged_setup();
    write_through_proxy(dir.path(), &server, &[("a.txt", "v2 by the agent")]);
    let outcome = &common::journal_kinds(&dir.path().join("j.jsonl"), "call.outcome")[0];
    assert_eq!(
        outcome["after"]["result"]["content"][0]["text"],
        "v2 by the agent"
    );
    fs::write(dir.path().join("files/a.txt"), "v3 by a person").unwrap();

    let (status, out) = rollback(dir.path(), &server, true);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("made only while 'read_file' returns what it did after the call"),
        "{out}"
    );
    let (status, out) = rollback(dir.path(), &server, false);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("needs attention: 'write_file' (call ")
            && out.contains(
                "(changed): 'write_file' was not undone: what 'read_file' returns has changed since the call"
            ),
        "{out}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("files/a.txt")).unwrap(),
        "v3 by a person"
    );
    let skips = common::journal_kinds(&dir.path().join("j.jsonl"), "compensation.skip");
    assert_eq!(skips[0]["status"], "changed");
}

/// Two writes of one file and a new file roll back fully: each undo finds what its own call
/// left, the later write's undo having restored what the earlier one left.
#[test]
fn rollback_undoes_a_chain_of_writes_to_one_file() {
    let (dir, server) = unchanged_setup();
    write_through_proxy(
        dir.path(),
        &server,
        &[("a.txt", "v2"), ("b.txt", "new"), ("a.txt", "v3")],
    );
    let (status, out) = rollback(dir.path(), &server, false);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("3 compensated"), "{out}");
    let files = dir.path().join("files");
    assert_eq!(fs::read_to_string(files.join("a.txt")).unwrap(), "v1");
    assert!(!files.join("b.txt").exists());
    assert_eq!(
        fs::read_to_string(files.join("b.txt.rolled-back")).unwrap(),
        "new"
    );
}
