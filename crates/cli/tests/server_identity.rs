//! The name a server gives itself, in every protocol revision: `serverInfo.name` of
//! `initialize` up to 2025-11-25, `_meta["io.modelcontextprotocol/serverInfo"]` of every result
//! under 2026-07-28. `suggest` writes it, and `lint` and `rollback` refuse an overlay for
//! another server.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{bin, code};
use serde_json::Value;

const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// The demo server, speaking only `revision`, as the command after `--`.
fn demo(revision: &str) -> Vec<String> {
    vec![
        env!("CARGO_BIN_EXE_mcp-recovery").to_owned(),
        "demo-server".to_owned(),
        "--revisions".to_owned(),
        revision.to_owned(),
    ]
}

#[test]
fn suggest_names_the_server_in_every_revision() {
    for revision in REVISIONS {
        let output = bin()
            .args(["suggest", "--format", "json", "--stdio", "--"])
            .args(demo(revision))
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{revision}: {output:?}");
        let overlay: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(overlay["server"], "mcp-recovery-demo-server", "{revision}");
    }
}

#[test]
fn an_overlay_for_another_server_is_refused_in_every_revision() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("other.toml");
    fs::write(
        &overlay,
        "server = \"other\"\n[tools.x.annotations]\ntitle = \"x\"\n",
    )
    .unwrap();
    let journal = dir.path().join("empty.jsonl");
    fs::write(&journal, "").unwrap();
    let overlay = overlay.to_str().unwrap();
    for revision in REVISIONS {
        for command in [
            vec!["lint", "--overlay", overlay],
            vec![
                "rollback",
                "--journal",
                journal.to_str().unwrap(),
                "--all",
                "--overlay",
                overlay,
            ],
        ] {
            let output = bin()
                .current_dir(dir.path())
                .args(&command)
                .args(["--stdio", "--"])
                .args(demo(revision))
                .output()
                .unwrap();
            assert_eq!(code(&output), 2, "{revision} {command:?}: {output:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains(
                    "the overlay is for server 'other', but the server names itself 'mcp-recovery-demo-server'"
                ),
                "{revision} {command:?}: {stderr}"
            );
        }
    }
}

/// A saved 2026-07-28 `tools/list` names its server in `_meta`: every command that applies an
/// overlay to a saved list refuses one for another server, as it does live.
#[test]
fn an_overlay_for_another_server_is_refused_on_a_saved_list() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("other.toml"),
        "server = \"other\"\n[tools.x.annotations]\ntitle = \"x\"\n",
    )
    .unwrap();
    fs::write(dir.path().join("trace.jsonl"), "").unwrap();
    let tools = r#"{"tools": [{"name": "x", "inputSchema": {"type": "object"}}],
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "saved-server", "version": "1"}}}"#;
    for (file, document) in [
        ("list.json", tools.to_owned()),
        (
            "response.json",
            format!(r#"{{"jsonrpc": "2.0", "id": 1, "result": {tools}}}"#),
        ),
    ] {
        fs::write(dir.path().join(file), document).unwrap();
        for command in [
            vec!["lint", "--overlay", "other.toml", file],
            vec![
                "plan",
                "--tools",
                file,
                "--trace",
                "trace.jsonl",
                "--overlay",
                "other.toml",
            ],
            vec![
                "convert",
                "--to",
                "compensate",
                "--overlay",
                "other.toml",
                file,
            ],
            vec!["profile", "--overlay", "other.toml", file],
        ] {
            let output = bin()
                .current_dir(dir.path())
                .args(&command)
                .output()
                .unwrap();
            assert_eq!(code(&output), 2, "{command:?}: {output:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains(
                    "the overlay is for server 'other', but the server names itself 'saved-server'"
                ),
                "{command:?}: {stderr}"
            );
        }
    }
}
