//! `mcp-recovery approve` signs an approval only for the call it was shown: the call digest is
//! recomputed from the pending request's session, tool and arguments, from a file (`--pending`)
//! and from a proxy's listing (`--url`, here a stand-in endpoint), and a request whose shown call
//! does not give its digest is refused unsigned.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::sync::mpsc::{Receiver, channel};

use common::{code, run_in};
use mcp_recovery_journal::keys::PublicKey;
use mcp_recovery_proxy::{call_digest, canonical};
use serde_json::{Value, json};

const REQUEST: &str = "946bef1c377587d6e025ad4fd26c48dd";

/// The pending request of a charge of `amount` as the proxy lists it, with `shown` as the
/// arguments it shows (the digest is always of the charge as sent).
fn pending(amount: u64, shown: Value) -> Value {
    let arguments = json!({"customerId": "c", "amount": amount, "currency": "EUR"});
    let session = "35e921dbd0b93ce8290db20daaa07b1b";
    let digest = call_digest(session, "charge_payment", arguments.as_object().unwrap());
    json!({"request": REQUEST, "tool": "charge_payment", "class": "compensable",
        "session": session, "expires": "2099-12-04T21:22:21Z", "callDigest": digest,
        "quorum": {"need": 2, "of": ["alice", "bob"]}, "arguments": shown})
}

/// `approve --pending FILE --key alice --as alice REQUEST VERDICT` with `request` in FILE: the
/// exit code, stdout and stderr.
fn approve_file(dir: &Path, request: &Value, verdict: &str) -> (i32, String, String) {
    std::fs::write(dir.join("pending.json"), request.to_string()).unwrap();
    let output = run_in(
        dir,
        &[
            "approve",
            "--pending",
            "pending.json",
            "--key",
            "alice",
            "--as",
            "alice",
            REQUEST,
            verdict,
        ],
    );
    (
        code(&output),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn keys(dir: &Path) -> PublicKey {
    assert_eq!(code(&run_in(dir, &["audit", "keygen", "alice"])), 0);
    PublicKey::read(&dir.join("alice.pub")).unwrap()
}

#[test]
fn an_approval_is_signed_only_for_the_call_shown() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let public = keys(dir);
    let real = json!({"customerId": "c", "amount": 99999, "currency": "EUR"});

    // Shown as it is: signed, for the digest of what is shown.
    let honest = pending(99999, real.clone());
    let (status, out, err) = approve_file(dir, &honest, "--approve");
    assert_eq!(status, 0, "{out}{err}");
    let decision: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(decision["statement"]["call"], honest["callDigest"]);
    assert!(public.verify(
        &canonical(&decision["statement"]),
        decision["signature"].as_str().unwrap()
    ));

    // Shown with another amount than the charge its digest names: nothing is signed.
    let mut relayed = pending(99999, real.clone());
    relayed["arguments"]["amount"] = json!(1);
    let (status, out, err) = approve_file(dir, &relayed, "--approve");
    assert_eq!(status, 1, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("not signed") && err.contains("not the call its digest names"),
        "{err}"
    );
    // Another session or tool shown is refused the same way.
    for (member, value) in [("session", "another"), ("tool", "refund_payment")] {
        let mut other = honest.clone();
        other[member] = json!(value);
        let (status, out, err) = approve_file(dir, &other, "--approve");
        assert_eq!(status, 1, "{member}: {out}{err}");
    }
    // A request that shows no arguments cannot be checked: refused.
    let mut bare = honest.clone();
    bare.as_object_mut().unwrap().remove("arguments");
    let (status, _, err) = approve_file(dir, &bare, "--approve");
    assert_eq!(status, 1, "{err}");
    assert!(
        err.contains("does not show the session, tool and arguments"),
        "{err}"
    );

    // A deny is signed as asked: it can only stop the pending call.
    let (status, out, err) = approve_file(dir, &relayed, "--deny");
    assert_eq!(status, 0, "{out}{err}");
    let decision: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(decision["statement"]["decision"], "deny");

    // Shown with a secret replaced: the digest cannot be recomputed, so a file is refused,
    // pointing at the proxy's own listing.
    let mut redacted = honest.clone();
    redacted["arguments"]["customerId"] = json!("***");
    let (status, out, err) = approve_file(dir, &redacted, "--approve");
    assert_eq!(status, 1, "{out}{err}");
    assert!(
        err.contains("secret replaced by ***") && err.contains("approve --url"),
        "{err}"
    );
    // `***` that is the value sent (the digest recomputes) is no reason to refuse.
    let sent = json!({"customerId": "c", "note": "***"});
    let digest = call_digest("s", "charge_payment", sent.as_object().unwrap());
    let starred = json!({"request": REQUEST, "tool": "charge_payment", "session": "s",
        "expires": "2099-12-04T21:22:21Z", "callDigest": digest, "arguments": sent});
    let (status, out, err) = approve_file(dir, &starred, "--approve");
    assert_eq!(status, 0, "{out}{err}");
}

/// A stand-in approvals endpoint listing `pending`: its URL and the decisions POSTed to it.
fn endpoint(pending: Value) -> (String, Receiver<Value>) {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!("http://{}", server.server_addr().to_ip().unwrap());
    let (sent, received) = channel();
    std::thread::spawn(move || {
        for mut request in server.incoming_requests() {
            let answer = if *request.method() == tiny_http::Method::Post {
                let mut body = String::new();
                request.as_reader().read_to_string(&mut body).unwrap();
                let _ = sent.send(serde_json::from_str::<Value>(&body).unwrap());
                json!({"message": "counted"})
            } else {
                json!({"pending": [pending.clone()]})
            };
            let _ = request.respond(tiny_http::Response::from_string(answer.to_string()));
        }
    });
    (url, received)
}

fn approve_url(dir: &Path, url: &str) -> (i32, String) {
    let output = run_in(
        dir,
        &[
            "approve",
            "--url",
            url,
            "--key",
            "alice",
            "--as",
            "alice",
            REQUEST,
            "--approve",
        ],
    );
    (
        code(&output),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

#[test]
fn the_listing_of_a_proxy_is_checked_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    keys(dir);
    let real = json!({"customerId": "c", "amount": 99999, "currency": "EUR"});

    // A listing whose shown call is not the one its digest names: nothing is sent.
    let mut relayed = pending(99999, real.clone());
    relayed["arguments"]["amount"] = json!(1);
    let (url, received) = endpoint(relayed);
    let (status, said) = approve_url(dir, &url);
    assert_eq!(status, 1, "{said}");
    assert!(said.contains("not the call its digest names"), "{said}");
    assert!(received.try_recv().is_err(), "a decision was sent");

    // The proxy's own listing shows a secret replaced: signed on its word, and said so.
    let mut redacted = pending(99999, real);
    redacted["arguments"]["customerId"] = json!("***");
    let digest = redacted["callDigest"].clone();
    let (url, received) = endpoint(redacted);
    let (status, said) = approve_url(dir, &url);
    assert_eq!(status, 0, "{said}");
    assert!(said.contains("cannot be recomputed"), "{said}");
    let decision = received.try_recv().unwrap();
    assert_eq!(decision["statement"]["call"], digest);
}
