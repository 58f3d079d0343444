//! `--format github` on crafted input: no tool name, file name or message can start or alter a
//! workflow command. Every line is one command, and there is one per diagnostic.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{code, lint_json, run_in};
use serde_json::json;

const EVIL: [&str; 6] = [
    "evil\n::error::pwned",
    "evil\r\n::warning file=x,line=1::pwned",
    "100%0A::error::pwned",
    "a::b",
    "x,title=pwned",
    "k:v,w:z",
];

/// Tools whose names (and compensators' names) are crafted.
fn evil_document() -> String {
    let tools: Vec<_> = EVIL
        .iter()
        .map(|name| {
            json!({
                "name": name,
                "inputSchema": {"type": "object"},
                "annotations": {
                    "recovery": {
                        "strategy": "compensation",
                        "compensatingOperation": {
                            "operationId": format!("undo {name}"),
                            "parameters": {}
                        }
                    }
                }
            })
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "tools": tools })).unwrap()
}

#[test]
fn crafted_names_cannot_inject_commands() {
    let dir = tempfile::tempdir().unwrap();
    let file = "we,ird:name%0A.json";
    std::fs::write(dir.path().join(file), evil_document()).unwrap();

    let (_, report) = lint_json(dir.path(), &[file]);
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert!(
        !diagnostics.is_empty(),
        "crafted names must be reported: {report}"
    );

    let output = run_in(dir.path(), &["lint", "--format", "github", file]);
    assert_eq!(code(&output), 1);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.split('\n').filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), diagnostics.len(), "{stdout}");
    for line in &lines {
        assert!(!line.contains('\r'), "{line:?}");
        let (name, rest) = line
            .strip_prefix("::")
            .and_then(|l| l.split_once(' '))
            .unwrap_or_else(|| panic!("not a command: {line:?}"));
        assert!(["error", "warning", "notice"].contains(&name), "{line:?}");
        // Properties end at the first `::`; none of them may contain `:` or `,` of its own.
        let (properties, _message) = rest.split_once("::").unwrap();
        let keys: Vec<&str> = properties
            .split(',')
            .map(|p| p.split_once('=').unwrap().0)
            .collect();
        assert_eq!(
            keys,
            ["file", "line", "col", "endLine", "endColumn", "title"],
            "{line:?}"
        );
        assert!(
            properties.starts_with("file=we%2Cird%3Aname%250A.json,"),
            "{line:?}"
        );
    }
}
