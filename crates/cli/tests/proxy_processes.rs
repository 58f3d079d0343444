//! What the proxy starts never outlives what it was started for: a stdio server (and what it
//! starts) ends with the proxy however the proxy ends, an `--approve-with` or `--checkpoint-to`
//! command's whole process group ends at its timeout, a hanging checkpoint command never holds
//! up the calls, and what a killed `--listen` proxy leaves in the temporary directory is removed
//! when the next one starts.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(all(feature = "demo", target_os = "linux"))]

mod common;

use std::io::{BufReader, Lines, Read, Write};
use std::path::Path;
use std::process::{ChildStdin, ChildStdout};
use std::time::{Duration, Instant};

use common::{Running, bin_in, wait_for};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");

/// Whether process `pid` is still running (a zombie has ended: only its parent's wait is left).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit(')').next().unwrap_or_default().trim_start();
        !state.starts_with('Z') && !state.starts_with('X')
    })
}

/// The process ids written to `file`, one or more a line, once there are at least `count`.
fn pids(file: &Path, count: usize) -> Vec<u32> {
    let mut found = Vec::new();
    wait_for("the process ids", || {
        found = std::fs::read_to_string(file)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|word| word.parse().ok())
            .collect();
        found.len() >= count
    });
    found
}

/// Waits (bounded) until none of `pids` runs.
fn all_gone(pids: &[u32]) {
    wait_for("every process to end", || {
        !pids.iter().any(|&pid| running(pid))
    });
}

/// A proxy on stdio.
struct Proxy {
    child: Running,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Proxy {
    fn start(dir: &Path, flags: &[&str], server: &[&str]) -> Proxy {
        let mut command = bin_in(dir);
        command.arg("proxy").args(flags).arg("--").args(server);
        let (child, stdin, lines) = common::spawn_piped(&mut command);
        Proxy {
            child: Running(child),
            stdin: Some(stdin),
            lines,
            next_id: 0,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method});
        message["params"] = params;
        self.send(&message);
        loop {
            let line = self.lines.next().expect("an answer").unwrap();
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == self.next_id && answer.get("method").is_none() {
                return answer;
            }
        }
    }

    fn initialize(&mut self) {
        self.request("initialize", common::initialize_params());
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let mut params = json!({"name": name});
        params["arguments"] = arguments;
        self.request("tools/call", params)["result"].clone()
    }

    /// Closes stdin and waits (bounded) for the proxy to exit: its exit status.
    fn finish(mut self) -> std::process::ExitStatus {
        self.stdin = None;
        let mut status = None;
        wait_for("the proxy to exit", || {
            status = self.child.0.try_wait().unwrap();
            status.is_some()
        });
        status.unwrap()
    }
}

/// The demo server behind the proxy, logging its calls to `log`.
fn demo(log: &Path) -> Vec<String> {
    vec![
        BIN.to_owned(),
        "demo-server".to_owned(),
        "--call-log".to_owned(),
        log.display().to_string(),
    ]
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// `kill -9` of the proxy ends its server and what the server started: the server's process
/// group has a reaper that outlives the proxy just long enough to end it.
#[test]
fn a_server_and_its_children_end_with_a_killed_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pids");
    let script = format!("sleep 1000 & echo $$ $! > '{}'; wait", file.display());
    let mut proxy = Proxy::start(dir.path(), &[], &["sh", "-c", &script]);
    let started = pids(&file, 2);
    assert!(started.iter().all(|&pid| running(pid)), "{started:?}");
    proxy.child.0.kill().unwrap();
    proxy.child.0.wait().unwrap();
    all_gone(&started);
}

/// An approver that times out has its whole process group killed: what it started in the
/// background is gone too.
#[test]
fn an_approver_that_times_out_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let file = dir.path().join("pids");
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "approval-timeout-secs = 1\n").unwrap();
    let approver = format!("sleep 1000 & echo $! > '{}'; wait", file.display());
    let mut proxy = Proxy::start(
        dir.path(),
        &[
            "--policy",
            policy.to_str().unwrap(),
            "--ask",
            "reserve_inventory",
            "--approve-with",
            &approver,
        ],
        &strs(&demo(&log)),
    );
    proxy.initialize();
    let refused = proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 1}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    all_gone(&pids(&file, 1));
    proxy.finish();
}

/// A checkpoint command that hangs holds up no call (each is handed over off the journal's
/// path), and every process it started is gone once the proxy has exited.
#[test]
fn a_hanging_checkpoint_command_stalls_no_call_and_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let file = dir.path().join("pids");
    let journal = dir.path().join("journal.jsonl");
    let key = dir.path().join("journal.key");
    mcp_recovery_journal::keys::generate(&key).unwrap();
    let hanging = format!("sleep 1000 & echo $! >> '{}'; wait", file.display());
    let mut proxy = Proxy::start(
        dir.path(),
        &[
            "--journal",
            journal.to_str().unwrap(),
            "--journal-key",
            key.to_str().unwrap(),
            "--checkpoint-to",
            &hanging,
        ],
        &strs(&demo(&log)),
    );
    let begun = Instant::now();
    proxy.initialize();
    for _ in 0..3 {
        let reserved = proxy.call(
            "reserve_inventory",
            json!({"sku": "sku-widget", "quantity": 1}),
        );
        assert!(reserved.get("isError").is_none(), "{reserved}");
    }
    // Each call writes two records; a stalled sink would cost 10 s a record.
    let took = begun.elapsed();
    assert!(took < Duration::from_secs(8), "the calls took {took:?}");
    let started = pids(&file, 1);
    let status = proxy.finish();
    assert!(status.success(), "{status}");
    let started = pids(&file, started.len());
    assert!(started.iter().all(|&pid| !running(pid)), "{started:?}");
}

/// The socket a `--listen` proxy's connection gate relays to sits in a private directory (mode
/// 0700, so no other user can reach the HTTP server behind the gate), named with the proxy's
/// process id. A proxy killed with `kill -9` leaves it; the next proxy removes it when it
/// starts, so nothing of the killed one remains.
#[test]
fn a_killed_listener_leaves_nothing_in_the_temporary_directory() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let log = dir.path().join("calls.jsonl");
    let server = demo(&log);
    let mut args = vec!["--"];
    args.extend(strs(&server));
    let env = [("TMPDIR", tmp.to_str().unwrap())];
    let in_tmp = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&tmp)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    let (mut killed, url, _stderr) = common::listen(dir.path(), &args, &env);
    // A request goes through the gate to the HTTP server behind it.
    let address = common::address_of(&url);
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    write!(
        stream,
        "GET /elsewhere HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    let left = in_tmp();
    let own = format!("mcp-recovery-proxy-{}-", killed.0.id());
    assert!(left.len() == 1 && left[0].starts_with(&own), "{left:?}");
    let mode = std::fs::metadata(tmp.join(&left[0]))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    killed.0.kill().unwrap();
    killed.0.wait().unwrap();
    assert_eq!(in_tmp(), left);

    let (mut next, _url, _stderr) = common::listen(dir.path(), &args, &env);
    let now = in_tmp();
    let own = format!("mcp-recovery-proxy-{}-", next.0.id());
    assert!(now.len() == 1 && now[0].starts_with(&own), "{now:?}");
    next.0.kill().unwrap();
    next.0.wait().unwrap();
}

/// Sends `signal` to the proxy and waits (bounded) for its exit status.
fn signal(proxy: &mut Proxy, signal: rustix::process::Signal) -> std::process::ExitStatus {
    let pid = rustix::process::Pid::from_child(&proxy.child.0);
    rustix::process::kill_process(pid, signal).unwrap();
    let mut status = None;
    wait_for("the proxy to exit", || {
        status = proxy.child.0.try_wait().unwrap();
        status.is_some()
    });
    status.unwrap()
}

/// A proxy with `flags` in front of the demo server: one inventory reserved, then `sent` to
/// the proxy; its exit status.
fn reserved_then(
    dir: &Path,
    flags: &[&str],
    log: &Path,
    sent: rustix::process::Signal,
) -> std::process::ExitStatus {
    let mut proxy = Proxy::start(dir, flags, &strs(&demo(log)));
    proxy.initialize();
    let reserved = proxy.call(
        "reserve_inventory",
        json!({"sku": "sku-widget", "quantity": 1}),
    );
    assert!(reserved.get("isError").is_none(), "{reserved}");
    signal(&mut proxy, sent)
}

/// SIGTERM journals the session's end with its cause and the calls whose effects stay (the
/// default `on-interrupt` only records); the next proxy on the journal names the session and
/// the command that rolls it back. With `on-interrupt = "rollback"`, SIGINT rolls it back.
#[test]
fn an_interrupt_is_journaled_named_at_the_next_start_and_may_roll_back() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let journal = dir.path().join("journal.jsonl");
    let flags = ["--journal", journal.to_str().unwrap()];
    let status = reserved_then(dir.path(), &flags, &log, rustix::process::Signal::TERM);
    assert_eq!(status.code(), Some(128 + 15), "{status}");
    let ends = common::journal_kinds(&journal, "session.end");
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0]["cause"], "interrupt");
    assert_eq!(ends[0]["effectsLeft"], json!([1]));
    let session = ends[0]["session"].as_str().unwrap().to_owned();
    assert_eq!(common::calls_at_server(&log, "release_inventory"), 0);

    let mut args = vec!["proxy", "--journal", journal.to_str().unwrap(), "--"];
    let server = demo(&log);
    args.extend(strs(&server));
    let next = bin_in(dir.path())
        .args(&args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(
        stderr.contains(&format!("session {session} ended by an interrupt"))
            && stderr.contains(&format!("--session {session} --stdio -- "))
            && stderr.contains("mcp-recovery rollback --journal "),
        "{stderr}"
    );

    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "on-interrupt = \"rollback\"\n").unwrap();
    let flags = [
        "--journal",
        journal.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ];
    let status = reserved_then(dir.path(), &flags, &log, rustix::process::Signal::INT);
    assert_eq!(status.code(), Some(128 + 2), "{status}");
    assert_eq!(common::calls_at_server(&log, "release_inventory"), 1);
    let starts = common::journal_kinds(&journal, "rollback.start");
    assert_eq!(
        starts.last().unwrap()["trigger"],
        json!({"interrupt": true})
    );
    let last = common::journal_kinds(&journal, "session.end");
    assert_eq!(last.last().unwrap()["cause"], "interrupt");
    assert_eq!(last.last().unwrap()["effectsLeft"], json!([]));
}

/// `rollback` without `--session` lists the sessions with effects left saying how each ended,
/// as a proxy started on the journal names them: one interrupted, one cut off by `kill -9`.
#[test]
fn rollback_names_interrupted_and_cut_off_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let journal = dir.path().join("journal.jsonl");
    let flags = ["--journal", journal.to_str().unwrap()];
    reserved_then(dir.path(), &flags, &log, rustix::process::Signal::TERM);
    reserved_then(dir.path(), &flags, &log, rustix::process::Signal::KILL);
    let sessions: Vec<String> = common::journal_kinds(&journal, "session.start")
        .iter()
        .map(|start| start["session"].as_str().unwrap().to_owned())
        .collect();
    let [interrupted, cut] = sessions.as_slice() else {
        panic!("{sessions:?}")
    };
    let args = vec!["rollback", "--journal", journal.to_str().unwrap()];
    let server = demo(&log);
    let listed = |extra: &[&str]| {
        let mut args = args.clone();
        args.extend(extra);
        args.extend(["--stdio", "--"]);
        args.extend(strs(&server));
        let output = bin_in(dir.path()).args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let line = |session: &str| {
            let found = stdout.lines().find(|l| l.contains(session));
            found
                .unwrap_or_else(|| panic!("{session} in {stdout}"))
                .to_owned()
        };
        (line(interrupted), line(cut))
    };
    let (first, second) = listed(&[]);
    assert!(first.ends_with("; it ended by an interrupt"), "{first}");
    let killed = "; it was cut off (the proxy was killed or crashed)";
    assert!(second.ends_with(killed), "{second}");
    // A dry run takes no lock: a session without its end may still be running.
    let (first, second) = listed(&["--dry-run"]);
    assert!(first.ends_with("; it ended by an interrupt"), "{first}");
    let unsure = "; it has no session.end (cut off, or its proxy still runs)";
    assert!(second.ends_with(unsure), "{second}");
}
