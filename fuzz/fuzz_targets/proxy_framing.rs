//! The proxy's session on any client and server byte streams: the input up to its first NUL is
//! what the client writes, the rest what the server writes unprompted; both go through the real
//! line reader into a `Session` whose policy denies `purge_*`, in front of a scripted server
//! that answers every request it gets (each element of a batch too, as a lenient server would).
//! Every `tools/call` the server receives must already be journaled as `call.intent` (same name,
//! same id) and be allowed by the policy: never a name matching the denied glob in any case,
//! never a name no tools/list named. The server never receives a batch or a `tools/call`
//! without an id, and the session never panics or hangs.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use mcp_recovery_journal::Journal;
use mcp_recovery_proxy::{
    Approver, DEFAULT_ROLLBACK_WINDOW, Overlays, Policy, PolicyFile, Settings, glob_match,
    run_scripted,
};
use serde_json::Value;

const DENIED: &str = "purge_*";
const TOOLS: &str = r#"[{"name":"purge_everything","inputSchema":{"type":"object"}},{"name":"get_state","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},{"name":"put_thing","inputSchema":{"type":"object"}}]"#;

/// The `call.intent` records on disk now, as (name, request id).
fn intents(journal: &Path) -> Vec<(Value, Value)> {
    let text = std::fs::read_to_string(journal).unwrap_or_default();
    text.lines()
        .filter_map(|line| mcp_recovery_model::json::from_str(line).ok())
        .filter(|record: &Value| record["kind"] == "call.intent")
        .map(|record| (record["name"].clone(), record["request"].clone()))
        .collect()
}

/// The scripted server: checks each message it receives, then answers it.
fn server(journal: PathBuf, unprompted: String) -> impl FnMut(&str) -> Vec<String> + Send {
    let mut calls = 0usize;
    move |line: &str| {
        let message = mcp_recovery_model::json::from_str(line)
            .unwrap_or_else(|e| panic!("the session sent a line that is not JSON ({e}): {line:?}"));
        assert!(message.is_object(), "the session forwarded a batch: {line}");
        let method = message["method"].as_str().unwrap_or_default();
        let Some(id) = message.get("id") else {
            assert_ne!(
                method, "tools/call",
                "a tools/call without an id reached the server"
            );
            return Vec::new();
        };
        if method == "tools/call" {
            calls += 1;
            let name = message["params"]["name"].clone();
            let on_disk = intents(&journal);
            assert!(
                calls <= on_disk.len(),
                "{calls} calls, {} intents",
                on_disk.len()
            );
            assert!(
                on_disk.iter().any(|(n, r)| *n == name && r == id),
                "not journaled first: {line}"
            );
            let name = name.as_str().unwrap_or_default();
            assert!(
                !glob_match(DENIED, name),
                "a denied tool was called: {line}"
            );
            assert!(
                TOOLS.contains(&format!("\"{name}\"")) || unprompted.contains(name),
                "an unlisted tool was called: {line}"
            );
        }
        if method.is_empty() {
            return Vec::new();
        }
        let result = match method {
            "initialize" => {
                let asked = message["params"]["protocolVersion"]
                    .as_str()
                    .unwrap_or("2025-11-25");
                let asked = serde_json::to_string(asked).unwrap_or_default();
                format!(
                    r#"{{"protocolVersion":{asked},"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"scripted","version":"1"}}}}"#
                )
            }
            "tools/list" => format!(r#"{{"tools":{TOOLS}}}"#),
            "tools/call" => r#"{"content":[{"type":"text","text":"done"}]}"#.to_owned(),
            _ => "{}".to_owned(),
        };
        vec![format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
        )]
    }
}

fuzz_target!(|data: &[u8]| {
    let (client, server_bytes) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let path = dir.path().join("journal.jsonl");
    let Ok(journal) = Journal::open(&path, 1 << 30) else {
        return;
    };
    let Ok(file) = PolicyFile::parse("call-timeout-secs = 5\napproval-timeout-secs = 1\n") else {
        return;
    };
    let settings = Settings {
        policy: Policy {
            file,
            deny: vec![DENIED.into()],
            ..Policy::default()
        },
        approver: Approver::Command("exit 1".into()),
        session: "fuzz".into(),
        upstream: "scripted".into(),
        overlays: Overlays::default(),
        secrets: mcp_recovery_client::Secrets::default(),
        rollback_window: DEFAULT_ROLLBACK_WINDOW,
        approvals: None,
    };
    let unprompted = String::from_utf8_lossy(server_bytes).into_owned();
    let run = run_scripted(
        settings,
        Some(Arc::new(Mutex::new(journal))),
        client.to_vec(),
        server_bytes.to_vec(),
        server(path.clone(), unprompted),
    );
    // A journal that fails ends the session with an error; nothing else does here.
    run.end.expect("the session ends cleanly");
    // What the client gets is newline-delimited JSON (the server's lines and the proxy's own).
    for line in run.output.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        assert!(
            mcp_recovery_model::json::from_slice(line).is_ok(),
            "{:?}",
            String::from_utf8_lossy(line)
        );
    }
});
