//! The proxy's newline-delimited JSON-RPC reader (the same reader takes the client's stdin and a
//! server's stdout) on any bytes, written by a child process (`cat`) behind `StdioUpstream`:
//! every line that is UTF-8 and JSON arrives as one message with its exact text (CR and LF
//! stripped), every other non-blank line as one refusal, blank lines not
//! at all, and the stream ends with exactly one clean close; it never panics or hangs.

#![no_main]

use std::sync::mpsc::sync_channel;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_recovery_client::Secrets;
use mcp_recovery_proxy::{Launch, StdioUpstream};

/// What each line must become, in the reader's `Debug` form (`None`: a refusal).
fn expected(data: &[u8]) -> Vec<Option<String>> {
    let mut lines = Vec::new();
    for raw in data.split_inclusive(|&b| b == b'\n') {
        let Ok(text) = std::str::from_utf8(raw) else {
            lines.push(None);
            continue;
        };
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        lines.push(
            // The proxy's reader: each number keeps its text.
            mcp_recovery_model::json::from_str(text)
                .ok()
                .map(|value| format!("Server(Message({value:?}, {text:?}))")),
        );
    }
    lines
}

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let path = dir.path().join("stdout");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let launch = Launch {
        program: "cat".into(),
        args: vec![path.display().to_string()],
        ..Launch::default()
    };
    let (sender, events) = sync_channel(16);
    let Ok(mut upstream) = StdioUpstream::spawn(&launch, &Secrets::default(), sender) else {
        return;
    };
    let mut seen = Vec::new();
    loop {
        let event = match events.recv_timeout(Duration::from_secs(60)) {
            Ok(event) => format!("{event:?}"),
            Err(e) => panic!("the reader did not end the stream: {e}; so far {seen:?}"),
        };
        let closed = event.starts_with("Server(Closed(");
        seen.push(event);
        if closed {
            break;
        }
    }
    upstream.close(Duration::from_secs(5));
    assert_eq!(seen.pop().as_deref(), Some("Server(Closed(None))"));
    let want = expected(data);
    assert_eq!(seen.len(), want.len(), "{seen:?}");
    for (got, want) in seen.iter().zip(&want) {
        match want {
            Some(message) => assert_eq!(got, message),
            None => assert!(
                got.starts_with("Server(Garbage(\"a line that is not "),
                "{got}"
            ),
        }
    }
    // Nothing more arrives after the close.
    assert!(events.recv_timeout(Duration::from_millis(1)).is_err());
});
