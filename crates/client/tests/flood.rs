//! A server that floods stdout with pings and never reads its stdin must not grow the client:
//! replies are dropped once the bounded queue to its stdin is full. Alone in its test binary so
//! that the peak memory it reads is its own.

// A failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use mcp_recovery_client::{ClientError, Connection, Options};

/// Peak resident memory of this process so far, in KiB (Linux).
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_ping_flood_while_never_reading_stdin_stays_bounded() {
    let before = peak_kib();
    let options = Options {
        timeout: Duration::from_secs(3),
        shutdown_grace: Duration::from_millis(100),
        ..Options::default()
    };
    let flood = r#"exec yes '{"jsonrpc":"2.0","id":"p","method":"ping"}'"#;
    let error = Connection::stdio("sh", &["-c".into(), flood.into()], &options).unwrap_err();
    // Either the wait runs out, or the handshake that follows finds the stdin queue full.
    let refused = matches!(&error, ClientError::Protocol { detail, .. }
        if detail.contains("has not read its stdin"));
    assert!(
        matches!(error, ClientError::Timeout { .. }) || refused,
        "{error}"
    );
    let grown_mib = peak_kib().saturating_sub(before) / 1024;
    assert!(grown_mib < 64, "the client grew by {grown_mib} MiB");
}
