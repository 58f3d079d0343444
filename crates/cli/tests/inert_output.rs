//! Every class of character that can drive a terminal or reorder what a reader sees — C0 and C1
//! controls, bidirectional controls, line and paragraph separators, invisible format characters —
//! fed through each command that prints text taken from input, and found nowhere raw.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Output, Stdio};

use common::{bin_in, run_in};
use mcp_recovery_base::text::is_unsafe_char;
use serde_json::{Value, json};

/// One of each class: an OSC title and a bell, CSI by ESC and by its C1 byte, NEL, bidi
/// override and isolate, the right-to-left and Arabic marks, the line and paragraph separators,
/// a zero-width space, a carriage return and a line feed.
const HOSTILE: &str = "\u{1b}]0;t\u{7}\u{1b}[2J\u{9b}1m\u{85}\u{202e}\u{2066}\u{200f}\u{61c}\u{2028}\u{2029}\u{200b}\r\n";

/// A server's tools: a create/delete pair (so `suggest` weighs an undo and says why not), a tool that fails,
/// every name and description carrying [`HOSTILE`].
fn hostile_tools() -> Value {
    let tool = |name: &str, description: &str| {
        json!({
            "name": name,
            "description": format!("{description} {HOSTILE}"),
            "inputSchema": {
                "type": "object",
                "properties": {format!("id{HOSTILE}"): {"type": "string"}},
            },
        })
    };
    json!({"tools": [
        tool(&format!("create_note{HOSTILE}"), "Creates a note"),
        tool(&format!("delete_note{HOSTILE}"), "Deletes a note"),
        tool(&format!("fail{HOSTILE}"), "Always fails"),
    ]})
}

/// Every line of both streams holds no unsafe character: line feeds end lines, nothing else.
fn assert_inert(what: &str, output: &Output) {
    for stream in [&output.stdout, &output.stderr] {
        let text = String::from_utf8_lossy(stream);
        for line in text.split('\n') {
            let raw: Vec<char> = line.chars().filter(|c| is_unsafe_char(*c)).collect();
            assert!(raw.is_empty(), "{what}: raw {raw:?} in {line:?}");
        }
    }
}

fn write_tools(dir: &Path) {
    let text = serde_json::to_string(&hostile_tools()).unwrap();
    std::fs::write(dir.join("tools.json"), text).unwrap();
}

#[test]
fn lint_suggest_profile_and_census_print_input_inert() {
    let dir = tempfile::tempdir().unwrap();
    write_tools(dir.path());
    for args in [
        &["lint", "tools.json"][..],
        &["lint", "--format", "markdown", "tools.json"],
        &["suggest", "tools.json"],
        &["profile", "tools.json"],
        &["profile", "--format", "markdown", "tools.json"],
        &["census", "tools.json"],
    ] {
        let output = run_in(dir.path(), args);
        assert!(
            !output.stdout.is_empty() || !output.stderr.is_empty(),
            "{args:?} printed nothing"
        );
        assert_inert(&args.join(" "), &output);
    }
    // The escaped form is what shows: the reader still sees that something was there.
    let suggested = run_in(dir.path(), &["suggest", "tools.json"]);
    let shown = String::from_utf8_lossy(&suggested.stderr);
    assert!(shown.contains("\\u{202e}"), "{shown}");
}

/// Runs `args` in `dir`, asserts that it printed something, all of it inert, and returns it.
fn run_inert(dir: &Path, args: &[&str]) -> Output {
    let output = run_in(dir, args);
    assert!(
        !output.stdout.is_empty() || !output.stderr.is_empty(),
        "{args:?} printed nothing"
    );
    assert_inert(&args.join(" "), &output);
    output
}

/// Both streams of `output`, as one text.
fn printed(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

#[test]
fn census_prints_hostile_file_names_inert() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    let tools = serde_json::to_string(&hostile_tools()).unwrap();
    std::fs::write(corpus.join(format!("server{HOSTILE}.json")), tools).unwrap();
    // Files that are not tools lists are listed by name, with a reason that may quote them.
    std::fs::write(
        corpus.join(format!("broken{HOSTILE}`|.json")),
        "{\"tools\": [",
    )
    .unwrap();
    let message = serde_json::to_string(&format!("down{HOSTILE}")).unwrap();
    std::fs::write(
        corpus.join(format!("error{HOSTILE}.json")),
        format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":1,"message":{message}}}}}"#),
    )
    .unwrap();
    let named = format!("corpus/broken{HOSTILE}`|.json");
    for args in [
        &["census", "corpus"][..],
        &["census", "--format", "markdown", "corpus"],
        &["census", "--no-lint", "corpus"],
        &["census", &named],
        &["census", "--format", "markdown", &named],
    ] {
        let output = run_inert(dir.path(), args);
        let shown = printed(&output);
        // Markdown escapes the same inert text for a table cell.
        let (bell, bidi) = if args.contains(&"markdown") {
            (
                "broken\\\\u\\{1b\\}\\]0\\;t\\\\u\\{7\\}",
                "\\\\u\\{202e\\}\\\\u\\{2066\\}",
            )
        } else {
            ("broken\\u{1b}]0;t\\u{7}", "\\u{202e}\\u{2066}")
        };
        assert!(shown.contains(bell), "{shown}");
        assert!(shown.contains(bidi), "{shown}");
    }
    // A file that does not exist is named inert in the error too.
    let missing = format!("missing{HOSTILE}.json");
    let output = run_inert(dir.path(), &["census", &missing]);
    assert_ne!(common::code(&output), 0);
}

/// Tools whose recovery metadata `convert` cannot fully carry over: names, unknown fields and
/// bindings carrying [`HOSTILE`], so each note quotes it.
fn convertible_tools() -> Value {
    let recovery = |parameters: Value, extra: (&str, Value)| {
        let mut recovery = json!({
            "strategy": "compensation",
            "compensatingOperation": {"operationId": format!("undo{HOSTILE}"), "parameters": parameters},
        });
        recovery[extra.0] = extra.1;
        recovery
    };
    json!({"tools": [
        {
            "name": format!("kept{HOSTILE}"),
            "inputSchema": {"type": "object"},
            "annotations": {"recovery": recovery(json!({}), (&format!("x-{HOSTILE}"), json!(1)))},
        },
        {
            "name": format!("stuck{HOSTILE}"),
            "inputSchema": {"type": "object"},
            "annotations": {"recovery": recovery(
                json!({format!("p{HOSTILE}"): format!("$response.header.E{HOSTILE}")}),
                ("timeoutMs", json!(5)),
            )},
        },
    ]})
}

#[test]
fn convert_prints_notes_inert() {
    let dir = tempfile::tempdir().unwrap();
    let text = serde_json::to_string(&convertible_tools()).unwrap();
    std::fs::write(dir.path().join("tools.json"), text).unwrap();
    let output = run_inert(dir.path(), &["convert", "--to", "compensate", "tools.json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("kept in source: kept\\u{1b}]0;t"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not converted: stuck\\u{1b}]0;t"),
        "{stderr}"
    );
    assert!(stderr.contains("\\u{202e}\\u{2066}"), "{stderr}");
    run_inert(
        dir.path(),
        &[
            "convert",
            "--to",
            "compensate",
            "-o",
            "out.json",
            "tools.json",
        ],
    );
    let missing = format!("missing{HOSTILE}.json");
    run_inert(dir.path(), &["convert", "--to", "sep3172", &missing]);
}

#[test]
fn plan_prints_hostile_paths_and_tool_names_inert() {
    let dir = tempfile::tempdir().unwrap();
    let mut tools = hostile_tools();
    // A tool the model cannot read: `plan` warns about it, naming the file and the tool.
    tools["tools"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": format!("broken{HOSTILE}"), "inputSchema": format!("no{HOSTILE}")}));
    let tools_path = format!("tools{HOSTILE}.json");
    std::fs::write(
        dir.path().join(&tools_path),
        serde_json::to_string(&tools).unwrap(),
    )
    .unwrap();
    let call = |name: &str| {
        json!({"name": format!("{name}{HOSTILE}"), "arguments": {format!("id{HOSTILE}"): HOSTILE},
               "result": {"content": [{"type": "text", "text": HOSTILE}]}})
    };
    let trace = [call("create_note"), call("broken"), call("unknown")]
        .map(|c| c.to_string())
        .join("\n");
    let trace_path = format!("trace{HOSTILE}.jsonl");
    std::fs::write(dir.path().join(&trace_path), trace + "\n").unwrap();
    for format in ["human", "json"] {
        let output = run_inert(
            dir.path(),
            &[
                "plan",
                "--format",
                format,
                "--tools",
                &tools_path,
                "--trace",
                &trace_path,
            ],
        );
        assert!(output.status.success(), "{}", printed(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("warning: tools\\u{1b}]0;t"), "{stderr}");
    }
    // Failures name the hostile paths inert too: a trace that is not a trace, a missing file.
    std::fs::write(dir.path().join(&trace_path), format!("not json {HOSTILE}")).unwrap();
    let missing = format!("missing{HOSTILE}.json");
    for args in [
        &["plan", "--tools", &tools_path, "--trace", &trace_path][..],
        &["plan", "--tools", &missing, "--trace", &trace_path],
        &["plan", "--tools", &tools_path, "--trace", &missing],
    ] {
        let output = run_inert(dir.path(), args);
        assert_ne!(common::code(&output), 0, "{}", printed(&output));
    }
}

/// A server whose tool names, results and errors carry [`HOSTILE`]: `fail…` always fails.
const UPSTREAM: &str = r#"
import json, sys
tools = json.load(open("tools.json"))["tools"]
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "hostile", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call":
        name = message["params"]["name"]
        sys.stderr.write("called " + name + "\n")
        sys.stderr.flush()
        result = {"content": [{"type": "text", "text": "result of " + name}],
                  "isError": name.startswith("fail")}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

#[test]
fn proxy_notes_and_rollback_reports_print_input_inert() {
    let dir = tempfile::tempdir().unwrap();
    write_tools(dir.path());
    std::fs::write(dir.path().join("upstream.py"), UPSTREAM).unwrap();
    // An overlay that pairs the hostile create with its delete, and names a tool the server does
    // not have (a note the proxy prints about it).
    let key = |name: &str| serde_json::to_string(&format!("{name}{HOSTILE}")).unwrap();
    let section = |tool: &str| {
        format!(
            "[tools.{}.annotations.recovery]\nstrategy = \"compensation\"\n\
             compensatingOperation.operationId = {}\n\
             compensatingOperation.parameters = {{}}\n\n",
            key(tool),
            key("delete_note")
        )
    };
    let overlay = section("create_note") + &section("missing");
    std::fs::write(dir.path().join("overlay.toml"), overlay).unwrap();
    let mut child = bin_in(dir.path())
        .args([
            "proxy",
            "--journal",
            "journal.jsonl",
            "--overlay",
            "overlay.toml",
            "--on-failure",
            "rollback",
            "--unlisted-tools",
            "deny",
            "--",
            "python3",
            "upstream.py",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut answers = BufReader::new(child.stdout.take().unwrap()).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": common::initialize_params()}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": format!("create_note{HOSTILE}"), "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": format!("unknown{HOSTILE}"), "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
               "params": {"name": format!("fail{HOSTILE}"), "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 6, "method": format!("bogus{HOSTILE}")}),
    ];
    let mut client_lines = Vec::new();
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
        // One call at a time: each waits for its answer, a JSON-RPC message on one line.
        if let Some(id) = message.get("id") {
            loop {
                let line = answers.next().expect("an answer").unwrap();
                client_lines.push(line.clone());
                let answer: Value = serde_json::from_str(&line).unwrap();
                if &answer["id"] == id {
                    break;
                }
            }
        }
    }
    // A line that is not JSON at all, with every class in it.
    writeln!(stdin, "not json {}", HOSTILE.replace(['\n', '\r'], "")).unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    // What the proxy says to the client itself (refusals, errors) quotes names escaped too; the
    // server's own lines pass as it wrote them (this one writes JSON in ASCII).
    for line in &client_lines {
        let raw: Vec<char> = line.chars().filter(|c| is_unsafe_char(*c)).collect();
        assert!(raw.is_empty(), "proxy stdout: raw {raw:?} in {line:?}");
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The server's stderr passed through escaped.
    assert!(stderr.contains("called create_note\\u{1b}]0;t"), "{stderr}");
    // The rollback undid the create with its hostile-named compensation.
    assert!(stderr.contains("1 compensated"), "{stderr}");
    assert!(stderr.contains("\\u{202e}"), "{stderr}");
    assert_inert("proxy stderr", &output);
    let rollback = run_in(
        dir.path(),
        &["rollback", "--journal", "journal.jsonl", "--dry-run"],
    );
    assert_inert("rollback --dry-run", &rollback);
    let verify = run_in(dir.path(), &["audit", "verify", "journal.jsonl"]);
    assert_inert("audit verify", &verify);
}
