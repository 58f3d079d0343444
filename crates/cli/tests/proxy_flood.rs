//! `proxy` under a flood, end to end: a client pipelining thousands of calls at a server that
//! reads one line at a time is answered in full and every call journaled; a client flooding
//! the proxy while it waits for its own request is held back rather than buffered; and the
//! server never sees the secrets the proxy reads from its environment.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");

/// Long enough for any of these runs; only a hang reaches it.
const HANG: Duration = Duration::from_secs(300);

const HANDSHAKE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

/// A server in `sed`: it answers each line before it reads the next (so once its stdout is
/// full it reads nothing more), lists one tool (unless `list` is false: then `tools/list` is
/// never answered) and answers every other request.
fn sed_server(dir: &Path, list: bool) -> Vec<String> {
    let list_rule = if list {
        r#"/"method":"tools\/list"/{s/^.*"id":("[^"]*"|[0-9]+).*$/{"jsonrpc":"2.0","id":\1,"result":{"tools":[{"name":"create_item","inputSchema":{"type":"object"}}]}}/;b
}"#
    } else {
        r#"/"method":"tools\/list"/d"#
    };
    let script = format!(
        r#"/"method":"notifications\//d
{list_rule}
/^\{{"jsonrpc":"2.0","id":[0-9]+,"method":"ping"/{{s/^\{{"jsonrpc":"2.0","id":([0-9]+),.*$/{{"jsonrpc":"2.0","id":\1,"result":{{}}}}/;b
}}
/"method":"tools\/call"/{{s/^\{{"jsonrpc":"2.0","id":([0-9]+),.*$/{{"jsonrpc":"2.0","id":\1,"result":{{"content":[{{"type":"text","text":"done"}}]}}}}/;b
}}
s/^.*"id":("[^"]*"|[0-9]+).*$/{{"jsonrpc":"2.0","id":\1,"result":{{}}}}/
"#
    );
    let path = dir.join("server.sed");
    std::fs::write(&path, script).unwrap();
    vec![
        "sed".into(),
        "-u".into(),
        "-E".into(),
        "-f".into(),
        path.display().to_string(),
    ]
}

/// Starts the proxy with `args`, in `dir`.
fn proxy(dir: &Path, args: &[String]) -> Child {
    Command::new(BIN)
        .current_dir(dir)
        .arg("proxy")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Writes `lines` to the proxy on a thread, reads its answers until `expected` numeric ids are
/// answered (calling `answered` then), closes its stdin and waits for it to exit: the answers.
fn drive(mut child: Child, lines: Vec<String>, expected: usize) -> Vec<Value> {
    let mut stdin = child.stdin.take().unwrap();
    let (closing, close) = channel::<()>();
    let writer = std::thread::spawn(move || {
        for line in lines {
            if stdin.write_all(line.as_bytes()).is_err() {
                return;
            }
        }
        // Kept open until every answer is in: a closed stdin ends the session.
        let _ = close.recv();
    });
    let stdout = child.stdout.take().unwrap();
    let (sender, answers) = channel();
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut numbered = 0;
        for line in BufReader::new(stdout).lines() {
            let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
            numbered += usize::from(message["id"].is_u64());
            got.push(message);
            if numbered == expected {
                break;
            }
        }
        let _ = sender.send(got);
    });
    let got = answers.recv_timeout(HANG);
    let _ = closing.send(());
    if got.is_err() {
        let _ = child.kill();
    }
    writer.join().unwrap();
    let got = got.expect("the proxy stopped answering");
    let (done, exited) = channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = done.send(());
        status
    });
    exited.recv_timeout(HANG).expect("the proxy did not exit");
    waiter.join().unwrap().unwrap();
    got
}

#[test]
fn thousands_of_pipelined_calls_at_a_server_reading_one_line_at_a_time_are_all_answered() {
    const CALLS: usize = 3000;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut args: Vec<String> = ["--journal", "journal.jsonl", "--allow", "*", "--"]
        .map(String::from)
        .to_vec();
    args.extend(sed_server(dir, true));
    let mut lines = vec![HANDSHAKE.to_owned()];
    for id in 0..CALLS {
        let pad = "A".repeat(id * 7919 % 5001);
        lines.push(format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"create_item\",\"arguments\":{{\"id\":\"x{id}\",\"pad\":\"{pad}\"}}}}}}\n"
        ));
    }
    let answers = drive(proxy(dir, &args), lines, CALLS);
    let mut ids: Vec<u64> = answers
        .iter()
        .filter(|a| a["result"]["content"][0]["text"] == "done")
        .filter_map(|a| a["id"].as_u64())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..CALLS as u64).collect::<Vec<_>>());
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let outcomes = journal
        .lines()
        .filter(|line| line.contains(r#""kind":"call.outcome""#))
        .count();
    assert_eq!(outcomes, CALLS);
}

/// The most memory the proxy's process has held, in KiB.
#[cfg(target_os = "linux")]
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_client_flooding_the_proxy_while_it_waits_for_its_own_request_is_held_back() {
    // 1000 requests of 64 KiB (64 MiB; kept, they would take twice that) while the proxy's
    // tools/list goes unanswered for 5 s.
    const PINGS: usize = 1000;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("policy.toml"), "call-timeout-secs = 5\n").unwrap();
    let mut args: Vec<String> = ["--policy", "policy.toml", "--"].map(String::from).to_vec();
    args.extend(sed_server(dir, false));
    let pad = "A".repeat(64 * 1024);
    let mut lines = vec![HANDSHAKE.to_owned()];
    for id in 0..PINGS {
        lines.push(format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\",\"params\":{{\"pad\":\"{pad}\"}}}}\n"
        ));
    }
    let child = proxy(dir, &args);
    let pid = child.id();
    let (peak, measured) = channel();
    // Read while the proxy still runs: once every answer is in, before its stdin closes.
    let watcher = std::thread::spawn(move || {
        let mut highest = 0;
        while measured.try_recv().is_err() {
            if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status"))
                && status.contains("VmHWM")
            {
                highest = highest.max(peak_kib(pid));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        highest
    });
    let answers = drive(child, lines, PINGS);
    let _ = peak.send(());
    let highest = watcher.join().unwrap();
    let answered = answers.iter().filter(|a| a["id"].is_u64()).count();
    assert_eq!(answered, PINGS);
    assert!(
        highest < 100 * 1024,
        "the proxy held {highest} KiB for 64 MiB of client input"
    );
}

#[test]
fn the_server_never_sees_the_slack_signing_secret() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("policy.toml"),
        "[approvals-notify]\nurl = \"http://127.0.0.1:9/hook\"\nformat = \"slack\"\n\
         signing-secret-env = \"FLOOD_TEST_SLACK_SECRET\"\n",
    )
    .unwrap();
    let output = Command::new(BIN)
        .current_dir(dir)
        .args(["proxy", "--policy", "policy.toml", "--", "sh", "-c"])
        .arg(
            "echo \"secret=${FLOOD_TEST_SLACK_SECRET-unset} other=${FLOOD_TEST_OTHER-unset}\" \
             > seen.txt",
        )
        .env("FLOOD_TEST_SLACK_SECRET", "s3cr3t-value")
        .env("FLOOD_TEST_OTHER", "visible")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.code().is_some());
    let seen = std::fs::read_to_string(dir.join("seen.txt")).unwrap();
    assert_eq!(seen.trim(), "secret=unset other=visible");
}

/// Neither does the server `rollback` starts.
#[test]
fn the_server_a_rollback_starts_never_sees_the_slack_signing_secret() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("policy.toml"),
        "[approvals-notify]\nurl = \"http://127.0.0.1:9/hook\"\nformat = \"slack\"\n\
         signing-secret-env = \"ROLLBACK_TEST_SLACK_SECRET\"\n",
    )
    .unwrap();
    let script = "echo \"secret=${ROLLBACK_TEST_SLACK_SECRET-unset} other=${ROLLBACK_TEST_OTHER-unset}\" \
                  > seen.txt; exec \"$0\" demo-server";
    let run = |args: &[&str]| {
        Command::new(BIN)
            .current_dir(dir)
            .args(args)
            .env("ROLLBACK_TEST_SLACK_SECRET", "s3cr3t-value")
            .env("ROLLBACK_TEST_OTHER", "visible")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .unwrap()
    };
    // A journal of a session that made no call.
    run(&["proxy", "--journal", "j.jsonl", "--", BIN, "demo-server"]);
    std::fs::remove_file(dir.join("seen.txt")).ok();
    let output = run(&[
        "rollback",
        "--journal",
        "j.jsonl",
        "--policy",
        "policy.toml",
        "--dry-run",
        "--stdio",
        "--",
        "sh",
        "-c",
        script,
        BIN,
    ]);
    assert!(output.status.code().is_some());
    let seen = std::fs::read_to_string(dir.join("seen.txt")).unwrap();
    assert_eq!(seen.trim(), "secret=unset other=visible");
}
