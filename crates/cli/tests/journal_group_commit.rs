//! The journal under many sessions of `proxy --listen` at once, whose records share their syncs
//! (group commit): a `kill -9` of the proxy while every session is calling leaves a journal that
//! `audit verify` accepts, holding the intent and the outcome of every call a client was answered.
// The demo server is the binary's hidden `demo-server`: without the `demo` feature there is none.
#![cfg(feature = "demo")]
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc::channel;

use common::{Running, audit_verify, bin_in, journal_kinds};
use mcp_recovery_client::{Connection, Options};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");
/// Sessions calling at once.
const SESSIONS: usize = 8;
/// Answers received, over all sessions, before the proxy is killed.
const ANSWERS_BEFORE_KILL: usize = 160;

#[test]
fn kill_9_under_concurrent_sessions_loses_no_intent_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let mut child = bin_in(dir.path())
        .args(["proxy", "--listen", "127.0.0.1:0", "--journal"])
        .arg(&journal)
        .args(["--", BIN, "demo-server"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut proxy = Running(child);
    let url = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the proxy exited");
        if let Some(url) = line
            .trim_end()
            .strip_prefix("mcp-recovery proxy: listening on ")
        {
            break url.to_owned();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));

    // Connected one after another: 2026-07-28 clients first try `server/discover`, which
    // sessionless clients share, so connecting at once would mix their request ids. Then each
    // session calls until the proxy is gone; every answer is reported with the customer it
    // named, which is unique per call.
    let (answered, answers) = channel::<String>();
    let clients: Vec<_> = (0..SESSIONS)
        .map(|session| {
            let mut connection = Connection::http(&url, Vec::new(), &Options::default()).unwrap();
            let answered = answered.clone();
            std::thread::spawn(move || {
                for call in 0.. {
                    let customer = format!("c{session}-{call}");
                    let arguments = json!({"customerId": customer, "amount": 1, "currency": "EUR"});
                    match connection.call_tool("charge_payment", arguments) {
                        Ok(result) if result["isError"] != true => {
                            if answered.send(customer).is_err() {
                                return;
                            }
                        }
                        _ => return,
                    }
                }
            })
        })
        .collect();
    drop(answered);
    let mut seen: Vec<String> = answers.iter().take(ANSWERS_BEFORE_KILL).collect();
    assert_eq!(
        seen.len(),
        ANSWERS_BEFORE_KILL,
        "the sessions stopped early"
    );
    // SIGKILL while the sessions are still calling.
    proxy.0.kill().unwrap();
    proxy.0.wait().unwrap();
    seen.extend(answers.iter());
    for client in clients {
        client.join().unwrap();
    }

    let (code, out) = audit_verify(dir.path(), &journal);
    assert_eq!(code, 0, "audit verify refused the journal: {out}");
    let customers = |kind: &str| -> HashSet<String> {
        journal_kinds(&journal, kind)
            .iter()
            .filter(|r| r["name"] == "charge_payment")
            .filter_map(|r| r["arguments"]["customerId"].as_str().map(str::to_owned))
            .collect()
    };
    let (intents, outcomes) = (customers("call.intent"), customers("call.outcome"));
    for customer in &seen {
        assert!(
            intents.contains(customer),
            "no intent for the answered call of {customer}"
        );
        assert!(
            outcomes.contains(customer),
            "no outcome for the answered call of {customer}"
        );
    }
    // An outcome never comes without its intent.
    assert!(outcomes.is_subset(&intents));
}
