//! Policies the proxy refuses before it starts, naming the file and the member: a wait past
//! 7 days, two approvers sharing one key or one Slack user, a weak key.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(feature = "demo")]

mod common;

use std::path::Path;

use common::{code, run_in};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");

/// A policy of alice, bob and carol (keys made by `audit keygen`) with the Slack `users`, and a
/// rule of two of them, after `head`.
fn policy(dir: &Path, head: &str, users: [&str; 3]) -> String {
    let mut text = format!("{head}\n");
    for (index, name) in ["alice", "bob", "carol"].into_iter().enumerate() {
        if !dir.join(format!("{name}.pub")).exists() {
            assert_eq!(code(&run_in(dir, &["audit", "keygen", name])), 0);
        }
        let key = std::fs::read_to_string(dir.join(format!("{name}.pub"))).unwrap();
        let key = key.trim();
        text.push_str(&format!(
            "[[approvers]]\nname = \"{name}\"\nkey = \"{key}\"\nslack-user = \"{}\"\n\n",
            users[index]
        ));
    }
    text + "[[approvals]]\nmatch = \"charge_*\"\nquorum = 2\nof = [\"alice\", \"bob\", \"carol\"]\n"
}

/// The proxy started with `text` as its policy: its exit status and stderr.
fn start(dir: &Path, text: &str) -> (i32, String) {
    std::fs::write(dir.join("p.toml"), text).unwrap();
    let output = run_in(
        dir,
        &[
            "proxy",
            "--policy",
            "p.toml",
            "--approvals-listen",
            "127.0.0.1:0",
            "--",
            BIN,
            "demo-server",
        ],
    );
    (
        code(&output),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

const USERS: [&str; 3] = ["UALICE", "UBOB", "UCAROL"];

/// An approval timeout past 7 days (which no RFC 3339 expiry or clock could carry) is refused
/// by name, whatever its size; 7 days is not.
#[test]
fn waits_past_seven_days_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for (member, secs) in [
        ("approval-timeout-secs", "1000000000000"),
        ("approval-timeout-secs", "9223372036854775807"),
        ("call-timeout-secs", "18446744073709551615"),
    ] {
        let (status, stderr) = start(dir, &policy(dir, &format!("{member} = {secs}"), USERS));
        assert_eq!(status, 2, "{stderr}");
        assert!(
            stderr.contains("p.toml")
                && stderr.contains(&format!("{member} = {secs} is more than 604800 (7 days)")),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let text = policy(dir, "approval-timeout-secs = 604800", USERS);
    std::fs::write(dir.join("ok.toml"), text).unwrap();
    // A policy within the bounds is taken: the proxy starts, and ends with its client.
    let output = common::bin_in(dir)
        .args([
            "proxy",
            "--policy",
            "ok.toml",
            "--approvals-listen",
            "127.0.0.1:0",
            "--",
            BIN,
            "demo-server",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("ok.toml"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Two approvers with one key, or one Slack user, are refused naming both and the line, so one
/// person cannot meet a quorum of two alone.
#[test]
fn approvers_sharing_a_key_or_a_slack_user_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut text = policy(dir, "", USERS);
    let alice = std::fs::read_to_string(dir.join("alice.pub")).unwrap();
    let bob = std::fs::read_to_string(dir.join("bob.pub")).unwrap();
    text = text.replace(bob.trim(), alice.trim());
    let (status, stderr) = start(dir, &text);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("p.toml")
            && stderr.contains(
                "approvers[1].key is given twice, to 'bob' (line 9) and to approvers[0] ('alice')"
            ),
        "{stderr}"
    );
    let (status, stderr) = start(dir, &policy(dir, "", ["U1", "U2", "U1"]));
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains(
            "approvers[2].slack-user: 'U1' is given twice, to 'carol' (line 15) and to \
             approvers[0] ('alice')"
        ),
        "{stderr}"
    );
}

/// A weak key (here the identity point) is refused by name.
#[test]
fn weak_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let good = policy(dir, "", USERS);
    let alice = std::fs::read_to_string(dir.join("alice.pub")).unwrap();
    let identity = format!("01{}", "0".repeat(62));
    let (status, stderr) = start(dir, &good.replace(alice.trim(), &identity));
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("p.toml")
            && stderr.contains("approvers[0].key (of 'alice'): ")
            && stderr.contains("small order"),
        "{stderr}"
    );
}
