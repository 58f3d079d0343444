//! Signed journal checkpoints through the binary: `proxy --journal-key` signs every record,
//! `--checkpoint-to` ships each checkpoint, and `audit verify --key` / `--checkpoints`, the
//! Python verifier of `spec/journal.md` and `rollback --key` all refuse a journal rewritten
//! with every hash recomputed, cut back, stripped of checkpoints or re-signed with another key.
// The demo server is the binary's hidden `demo-server`: without the `demo` feature there is none.
#![cfg(feature = "demo")]
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{bin_in, code, initialize_params, run_in};
use mcp_recovery_journal::keys::{self, SecretKey};
use mcp_recovery_journal::{Holder, Journal, Kind};
use serde_json::{Map, Value, json};
use sha2::Digest;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-recovery");

/// A proxied checkout (reserve, charge) against the demo server, through `proxy FLAGS`; the
/// proxy's exit status must be 0.
fn checkout(dir: &Path, flags: &[&str], log: &Path) {
    let (mut child, mut stdin, mut lines) =
        common::spawn_piped(bin_in(dir).arg("proxy").args(flags).args([
            "--",
            BIN,
            "demo-server",
            "--call-log",
            log.to_str().unwrap(),
        ]));
    let calls = [
        json!({"name": "reserve_inventory", "arguments": {"sku": "sku-widget", "quantity": 2}}),
        json!({"name": "charge_payment",
               "arguments": {"customerId": "c", "amount": 3, "currency": "EUR"}}),
    ];
    let mut requests = vec![("initialize", initialize_params())];
    requests.extend(calls.into_iter().map(|c| ("tools/call", c)));
    for (id, (method, params)) in requests.into_iter().enumerate() {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{request}").unwrap();
        loop {
            let message: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            if message["id"] == id {
                break;
            }
        }
        if id == 0 {
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
            )
            .unwrap();
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The records of a journal's text.
fn records(text: &[u8]) -> Vec<Map<String, Value>> {
    mcp_recovery_journal::read_records(std::str::from_utf8(text).unwrap()).unwrap()
}

/// What a forger with write access does: every record written again, through the journal
/// writer, so every `prev` and `hash` is recomputed. `edit` changes a record (or drops it);
/// a checkpoint is kept with its `covers` and `head` updated to the rewritten chain (its old
/// signature copied), unless `key` re-signs the whole journal, which drops the old ones.
fn rewritten(
    text: &[u8],
    path: &Path,
    key: Option<&Path>,
    mut edit: impl FnMut(&mut Map<String, Value>) -> bool,
) -> Vec<u8> {
    let _ = std::fs::remove_file(path);
    // A child another test forks may hold the previous writer's lock until it execs: wait.
    let holder = Holder {
        wait: Duration::from_secs(10),
        ..Holder::default()
    };
    let mut journal = Journal::open_as(path, 64 << 20, &holder).unwrap();
    journal.set_sync(false);
    if let Some(key) = key {
        journal.set_key(SecretKey::read(key).unwrap());
    }
    let mut written = 0u64;
    for mut record in records(text) {
        let kind = record["kind"].as_str().unwrap().to_owned();
        if (key.is_some() && kind == "checkpoint") || !edit(&mut record) {
            continue;
        }
        let session = record["session"].as_str().unwrap().to_owned();
        if kind == "checkpoint" {
            record.insert("covers".into(), Value::from(written));
            record.insert("head".into(), Value::from(journal.head()));
        }
        let written_now = journal
            .append(&session, Kind::parse(&kind).unwrap(), record)
            .unwrap();
        written = written_now["seq"].as_u64().unwrap() + u64::from(key.is_some());
    }
    drop(journal);
    std::fs::read(path).unwrap()
}

/// `rollback --all` of the signed journal with its key and `extra` flags, against a new demo
/// server.
fn rollback(s: &Signed, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "rollback",
        "--all",
        "--journal",
        s.journal.to_str().unwrap(),
        "--journal-key",
        s.key.to_str().unwrap(),
    ];
    args.extend(extra);
    args.extend(["--stdio", "--", BIN, "demo-server"]);
    args.extend(["--call-log", s.log.to_str().unwrap()]);
    run_in(s.dir.path(), &args)
}

/// `(exit status, the line named or 0)` of a verifier's output.
fn verdict(status: Option<i32>, out: &str) -> (i32, usize) {
    let line = out
        .split("line ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    (status.unwrap(), line)
}

struct Signed {
    dir: tempfile::TempDir,
    journal: PathBuf,
    key: PathBuf,
    other: PathBuf,
    kept: PathBuf,
    log: PathBuf,
}

/// A signed journal of one checkout, its checkpoints shipped to `kept/`.
fn signed() -> Signed {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let key = dir.path().join("journal.key");
    let other = dir.path().join("other.key");
    let kept = dir.path().join("kept");
    let log = dir.path().join("calls.jsonl");
    keys::generate(&key).unwrap();
    keys::generate(&other).unwrap();
    std::fs::create_dir(&kept).unwrap();
    let ship = format!("cat >> '{}'", kept.join("shipped.jsonl").display());
    let flags = [
        "--journal",
        journal.to_str().unwrap(),
        "--journal-key",
        key.to_str().unwrap(),
        "--checkpoint-to",
        &ship,
    ];
    checkout(dir.path(), &flags, &log);
    Signed {
        dir,
        journal,
        key,
        other,
        kept,
        log,
    }
}

/// Every record is followed by its checkpoint, each shipped once; `audit verify --key` and
/// `--checkpoints` accept the journal, and another key does not.
#[test]
fn the_proxy_signs_every_record_and_ships_every_checkpoint() {
    let s = signed();
    let all = records(&std::fs::read(&s.journal).unwrap());
    assert!(all.len() >= 10, "{all:?}");
    for pair in all.chunks(2) {
        assert_ne!(pair[0]["kind"], "checkpoint");
        assert_eq!(pair[1]["kind"], "checkpoint");
        assert_eq!(pair[1]["head"], pair[0]["hash"]);
        assert_eq!(pair[1]["covers"], pair[0]["seq"]);
    }
    let shipped = records(&std::fs::read(s.kept.join("shipped.jsonl")).unwrap());
    let kept: Vec<_> = all.iter().filter(|r| r["kind"] == "checkpoint").collect();
    assert_eq!(shipped.iter().collect::<Vec<_>>(), kept);
    let journal = s.journal.to_str().unwrap();
    let public = keys::public_path(&s.key);
    let kept_dir = s.kept.to_str().unwrap();
    let ok = common::audit_verify_args(
        s.dir.path(),
        &[
            journal,
            "--key",
            public.to_str().unwrap(),
            "--checkpoints",
            kept_dir,
        ],
    );
    assert_eq!(code(&ok), 0, "{}", String::from_utf8_lossy(&ok.stdout));
    let other = keys::public_path(&s.other);
    let wrong =
        common::audit_verify_args(s.dir.path(), &[journal, "--key", other.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&wrong.stdout);
    assert_eq!(code(&wrong), 1, "{out}");
    assert!(
        out.contains("line 2: checkpoint seq 2: signed with key"),
        "{out}"
    );
}

/// Untouched, edited and rehashed, a checkpoint removed, cut back, re-signed with another key:
/// `audit verify --key` (and `--checkpoints`) and the Python verifier agree on each, and only
/// the untouched journal passes.
#[test]
fn signed_journals_agree_with_the_reference_verifier() {
    let s = signed();
    let text = std::fs::read(&s.journal).unwrap();
    let scratch = s.dir.path().join("scratch.jsonl");
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let n = lines.len();
    let edited = rewritten(&text, &scratch, None, |record| {
        if record["kind"] == "call.intent" && record["name"] == "reserve_inventory" {
            record["arguments"]["quantity"] = json!(20);
        }
        true
    });
    let mut first_checkpoint = true;
    let unchecked = rewritten(&text, &scratch, None, |record| {
        let drop = record["kind"] == "checkpoint" && first_checkpoint;
        first_checkpoint &= !drop;
        !drop
    });
    let resigned = rewritten(&text, &scratch, Some(&s.other), |record| {
        if record["kind"] == "call.intent" && record["name"] == "charge_payment" {
            record["arguments"]["amount"] = json!(0);
        }
        true
    });
    // The key's holder rewrites the journal and signs it again: only the kept copies catch it.
    let same_key = rewritten(&text, &scratch, Some(&s.key), |record| {
        if record["kind"] == "call.intent" && record["name"] == "charge_payment" {
            record["arguments"]["amount"] = json!(0);
        }
        true
    });
    let cases: Vec<(&str, Vec<u8>, usize, bool)> = vec![
        // name, bytes, the line `audit verify --key` names (0: none), with --checkpoints
        ("untouched", text.clone(), 0, false),
        ("edited and rehashed", edited, 2, false),
        ("first checkpoint removed and rehashed", unchecked, 3, false),
        (
            "last checkpoint removed",
            lines[..n - 1].concat(),
            n - 1,
            false,
        ),
        (
            "cut back to an earlier signed head",
            lines[..n - 2].concat(),
            0,
            false,
        ),
        (
            "cut back, checked against the kept checkpoints",
            lines[..n - 2].concat(),
            0,
            true,
        ),
        ("re-signed with another key", resigned, 2, false),
        ("re-signed with the journal key", same_key.clone(), 0, false),
        (
            "re-signed, checked against the kept checkpoints",
            same_key,
            2,
            true,
        ),
    ];
    let verifier = common::python_verifier(s.dir.path());
    let public = keys::public_path(&s.key);
    let mut disagreements = Vec::new();
    for (name, bytes, line, with_kept) in &cases {
        let path = s
            .dir
            .path()
            .join(format!("{}.jsonl", name.replace([' ', ','], "-")));
        std::fs::write(&path, bytes).unwrap();
        let mut flags = vec![path.to_str().unwrap(), "--key", public.to_str().unwrap()];
        if *with_kept {
            flags.extend(["--checkpoints", s.kept.to_str().unwrap()]);
        }
        let ours = run_in(s.dir.path(), &[&["audit", "verify"], &flags[..]].concat());
        let theirs = Command::new("python3")
            .arg(&verifier)
            .args(&flags)
            .output()
            .unwrap();
        let ours_out = String::from_utf8_lossy(&ours.stdout).into_owned();
        let theirs_out = String::from_utf8_lossy(&theirs.stdout).into_owned();
        let (ours_status, ours_at) = verdict(ours.status.code(), &ours_out);
        let (theirs_status, theirs_at) = verdict(theirs.status.code(), &theirs_out);
        let expected_ok = *name == "untouched"
            || (name.starts_with("cut back to") && !with_kept)
            || *name == "re-signed with the journal key";
        if ours_status != theirs_status
            || ours_at != theirs_at
            || ours_at != *line
            || (ours_status == 0) != expected_ok
        {
            disagreements.push(format!(
                "{name}: audit verify {ours_status} ({}), python {theirs_status} ({})",
                ours_out.trim(),
                String::from_utf8_lossy(&theirs.stderr).trim().to_owned() + theirs_out.trim()
            ));
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
    // Each failure names the checkpoint that failed, or the unsigned tail, or the cut.
    let expect = [
        ("edited-and-rehashed", "the signature does not verify"),
        (
            "first-checkpoint-removed-and-rehashed",
            "the signature does not verify",
        ),
        ("last-checkpoint-removed", "are unsigned"),
        (
            "cut-back--checked-against-the-kept-checkpoints",
            "it was cut back",
        ),
        ("re-signed-with-another-key", "which is not a key given"),
        (
            "re-signed--checked-against-the-kept-checkpoints",
            "line 2: the checkpoint kept in",
        ),
    ];
    for (file, words) in expect {
        let path = s.dir.path().join(format!("{file}.jsonl"));
        let mut args = vec![path.to_str().unwrap(), "--key", public.to_str().unwrap()];
        if file.contains("kept") {
            args.extend(["--checkpoints", s.kept.to_str().unwrap()]);
        }
        let out = common::audit_verify_args(s.dir.path(), &args);
        let out = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.contains(words), "{file}: {out}");
    }
}

/// Where the kept checkpoints are read from: a link to a kept file is read (a journal cut back
/// fails against it), a directory that keeps none is refused, and so is a kept checkpoint of a
/// seq no journal has. Both verifiers agree on each.
#[cfg(unix)]
#[test]
fn kept_checkpoints_are_read_through_links_and_an_empty_keep_is_refused() {
    let s = signed();
    let text = std::fs::read(&s.journal).unwrap();
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let cut = s.dir.path().join("cut.jsonl");
    std::fs::write(&cut, lines[..lines.len() - 2].concat()).unwrap();
    let linked = s.dir.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(s.kept.join("shipped.jsonl"), linked.join("shipped.jsonl")).unwrap();
    let empty = s.dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let zero = s.dir.path().join("zero");
    std::fs::create_dir(&zero).unwrap();
    let mut record: Value = serde_json::from_slice(lines[1]).unwrap();
    record["seq"] = json!(0);
    record.as_object_mut().unwrap().remove("hash");
    let hash: String = sha2::Sha256::digest(mcp_recovery_journal::canonical(&record))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    record["hash"] = json!(hash);
    std::fs::write(zero.join("k.jsonl"), format!("{record}\n")).unwrap();
    let verifier = common::python_verifier(s.dir.path());
    let public = keys::public_path(&s.key);
    for (journal, kept, status) in [
        (&cut, &linked, 1),
        (&s.journal, &linked, 0),
        (&s.journal, &empty, 2),
        (&s.journal, &zero, 2),
    ] {
        let flags = [
            journal.to_str().unwrap(),
            "--key",
            public.to_str().unwrap(),
            "--checkpoints",
            kept.to_str().unwrap(),
        ];
        let ours = run_in(s.dir.path(), &[&["audit", "verify"], &flags[..]].concat());
        let theirs = Command::new("python3")
            .arg(&verifier)
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(
            (code(&ours), theirs.status.code()),
            (status, Some(status)),
            "{flags:?}: {ours:?} {theirs:?}"
        );
    }
}

/// The forgery of the journal's own threat: two `compensation.outcome` records appended with
/// recomputed hashes. `rollback --key` refuses the journal, saying where, and sends nothing.
#[test]
fn rollback_refuses_forged_records_after_the_last_checkpoint() {
    let s = signed();
    let mut journal = Journal::open(&s.journal, 64 << 20).unwrap();
    let session = records(&std::fs::read(&s.journal).unwrap())[0]["session"]
        .as_str()
        .unwrap()
        .to_owned();
    for (call, name) in [(2, "refund_payment"), (1, "release_inventory")] {
        let fields = json!({"call": call, "undoes": call, "name": name, "arguments": {},
                            "attempt": 1, "result": {"content": [], "isError": false}});
        journal
            .append(
                &session,
                Kind::CompensationOutcome,
                fields.as_object().unwrap().clone(),
            )
            .unwrap();
    }
    drop(journal);
    let public = keys::public_path(&s.key);
    let server = [BIN, "demo-server", "--call-log", s.log.to_str().unwrap()];
    let mut args = vec![
        "rollback",
        "--journal",
        s.journal.to_str().unwrap(),
        "--key",
        public.to_str().unwrap(),
        "--stdio",
        "--",
    ];
    args.extend(server);
    let refused = run_in(s.dir.path(), &args);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(code(&refused), 2, "{err}");
    assert!(
        err.contains("refusing to act on it") && err.contains("are unsigned"),
        "{err}"
    );
    let log = std::fs::read_to_string(&s.log).unwrap_or_default();
    assert!(!log.contains("refund_payment"), "{log}");
}

/// A `--checkpoint-to` command that fails or hangs is noted on stderr and the proxy goes on;
/// `rollback --journal-key` signs what it appends.
#[test]
fn a_failing_checkpoint_command_does_not_stop_the_proxy() {
    let s = signed();
    let flags = [
        "--journal",
        s.journal.to_str().unwrap(),
        "--journal-key",
        s.key.to_str().unwrap(),
        "--checkpoint-to",
        "exit 3",
    ];
    checkout(s.dir.path(), &flags, &s.log);
    let public = keys::public_path(&s.key);
    let rolled = rollback(&s, &["--key", public.to_str().unwrap()]);
    // A fresh demo server has no reservation to release: the rollback may report attention,
    // never refuse the journal.
    assert_ne!(
        code(&rolled),
        2,
        "{}",
        String::from_utf8_lossy(&rolled.stderr)
    );
    let verified = common::audit_verify_args(
        s.dir.path(),
        &[
            s.journal.to_str().unwrap(),
            "--key",
            public.to_str().unwrap(),
        ],
    );
    assert_eq!(
        code(&verified),
        0,
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    let all = records(&std::fs::read(&s.journal).unwrap());
    assert!(all.iter().any(|r| r["kind"] == "rollback.end"));
    assert_eq!(all.last().unwrap()["kind"], "checkpoint");
}

/// The journal rewritten by someone without the key: the charge's amount changed, every hash
/// recomputed, every checkpoint left out. Gives its bytes, written over the journal.
fn laundered(s: &Signed) -> Vec<u8> {
    let text = std::fs::read(&s.journal).unwrap();
    let scratch = s.dir.path().join("laundered.jsonl");
    let bytes = rewritten(&text, &scratch, None, |record| {
        if record["kind"] == "call.intent" && record["name"] == "charge_payment" {
            record["arguments"]["amount"] = json!(3000);
        }
        record["kind"] != "checkpoint"
    });
    std::fs::write(&s.journal, &bytes).unwrap();
    bytes
}

/// A proxy given the journal key refuses a journal it did not sign record by record (rewritten
/// and rehashed with its checkpoints left out, written without a key, signed by another key),
/// naming the journal and the first line not covered, and appends nothing: its checkpoints
/// would sign the forger's records, and `audit verify --key` would pass them.
#[test]
fn a_proxy_with_the_journal_key_refuses_a_journal_it_did_not_sign() {
    let s = signed();
    let journal = s.journal.to_str().unwrap();
    let key = s.key.to_str().unwrap();
    let proxy = |dir: &Path, key: &str| {
        run_in(
            dir,
            &[
                "proxy",
                "--journal",
                journal,
                "--journal-key",
                key,
                "--",
                BIN,
                "demo-server",
                "--call-log",
                s.log.to_str().unwrap(),
            ],
        )
    };
    let original = std::fs::read(&s.journal).unwrap();
    let bytes = laundered(&s);
    let refused = proxy(s.dir.path(), key);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(code(&refused), 2, "{err}");
    assert!(
        err.contains("journal.jsonl: line 1:")
            && err.contains("record seq 1 is not followed by its checkpoint")
            && err.contains("refusing to append"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&s.journal).unwrap(),
        bytes,
        "nothing appended"
    );
    let public = keys::public_path(&s.key);
    let verified =
        common::audit_verify_args(s.dir.path(), &[journal, "--key", public.to_str().unwrap()]);
    assert_eq!(code(&verified), 1, "the laundered journal still fails");

    // Signed by another key: refused at its first checkpoint.
    std::fs::write(&s.journal, &original).unwrap();
    let refused = proxy(s.dir.path(), s.other.to_str().unwrap());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(code(&refused), 2, "{err}");
    assert!(
        err.contains("line 2: checkpoint seq 2: signed with key"),
        "{err}"
    );
}

/// `rollback --journal-key` checks the journal with the key's public half, as `--key` does:
/// the laundered journal is refused before anything is planned or sent, with `--dry-run` too,
/// and so are forged records after the last checkpoint.
#[test]
fn rollback_with_the_journal_key_verifies_the_journal_with_it() {
    let s = signed();
    let rollback = |extra: &[&str]| {
        let output = rollback(&s, extra);
        (
            code(&output),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let original = std::fs::read(&s.journal).unwrap();
    let bytes = laundered(&s);
    let (status, err) = rollback(&["--dry-run"]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains("refusing to act on it") && err.contains("line 1:"),
        "{err}"
    );
    let (status, err) = rollback(&[]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains("journal.jsonl: line 1:") && err.contains("refusing to append"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&s.journal).unwrap(),
        bytes,
        "nothing appended"
    );
    let log = std::fs::read_to_string(&s.log).unwrap_or_default();
    assert!(!log.contains("refund_payment"), "{log}");

    // Forged outcomes appended after the last checkpoint: an unsigned tail.
    std::fs::write(&s.journal, &original).unwrap();
    let session = records(&original)[0]["session"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut journal = Journal::open(&s.journal, 64 << 20).unwrap();
    let fields = json!({"call": 2, "undoes": "charge_payment", "name": "refund_payment",
                        "arguments": {}, "attempt": 1, "result": {"content": []}});
    journal
        .append(
            &session,
            Kind::CompensationOutcome,
            fields.as_object().unwrap().clone(),
        )
        .unwrap();
    drop(journal);
    for extra in [&["--dry-run"][..], &[]] {
        let (status, err) = rollback(extra);
        assert_eq!(status, 2, "{err}");
        assert!(err.contains("unsigned"), "{err}");
    }
}

/// `rollback --checkpoint-to` ships the checkpoints of the records it appends, so a journal cut
/// back to before the rollback fails against the kept copies as one cut back.
#[test]
fn rollback_ships_the_checkpoints_of_its_own_records() {
    let s = signed();
    let text = std::fs::read(&s.journal).unwrap();
    let ship = format!("cat >> '{}'", s.kept.join("rollback.jsonl").display());
    let output = rollback(&s, &["--checkpoint-to", &ship]);
    // A new server holds none of the checkout's state: both compensations fail, journaled.
    assert_eq!(code(&output), 1, "{output:?}");
    let all = records(&std::fs::read(&s.journal).unwrap());
    let appended: Vec<_> = all[records(&text).len()..]
        .iter()
        .filter(|r| r["kind"] == "checkpoint")
        .collect();
    assert!(!appended.is_empty());
    let shipped = records(&std::fs::read(s.kept.join("rollback.jsonl")).unwrap());
    assert_eq!(shipped.iter().collect::<Vec<_>>(), appended);
    let cut = s.dir.path().join("cut.jsonl");
    std::fs::write(&cut, &text).unwrap();
    let public = keys::public_path(&s.key);
    for (journal, status) in [(&s.journal, 0), (&cut, 1)] {
        let output = common::audit_verify_args(
            s.dir.path(),
            &[
                journal.to_str().unwrap(),
                "--key",
                public.to_str().unwrap(),
                "--checkpoints",
                s.kept.to_str().unwrap(),
            ],
        );
        assert_eq!(code(&output), status, "{output:?}");
    }
}

/// A crash inside the last write of a signed journal cuts the checkpoint written with its
/// record: `audit verify --key` (and the spec's verifier) names the incomplete line and the
/// unsigned record before it; `proxy --journal-key` and `rollback --journal-key` set both
/// aside, say so, and go on, leaving a journal the key signed all of.
#[test]
fn a_checkpoint_a_crash_cut_is_set_aside_with_its_record() {
    let s = signed();
    let text = std::fs::read(&s.journal).unwrap();
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let n = lines.len();
    let kept: usize = lines[..n - 2].iter().map(|l| l.len()).sum();
    let record = lines[n - 2].len();
    let public = keys::public_path(&s.key);
    let journal = s.journal.to_str().unwrap();
    let verify = || {
        let output =
            common::audit_verify_args(s.dir.path(), &[journal, "--key", public.to_str().unwrap()]);
        (
            code(&output),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let proxy = || {
        let args = ["proxy", "--journal", journal, "--journal-key"];
        let server = ["--", BIN, "demo-server"];
        run_in(
            s.dir.path(),
            &[&args[..], &[s.key.to_str().unwrap()], &server].concat(),
        )
    };
    let aside = |cut: &[u8]| {
        let digest: String = sha2::Sha256::digest(&cut[kept..])
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        PathBuf::from(format!("{journal}.torn-{}", &digest[..16]))
    };
    // Cut in the middle of the checkpoint, and right after its first bytes.
    for (half, writer) in [(lines[n - 1].len() / 2, "proxy"), (5, "rollback")] {
        let cut = text[..kept + record + half].to_vec();
        std::fs::write(&s.journal, &cut).unwrap();
        let (status, out) = verify();
        assert_eq!(status, 1, "{out}");
        assert!(
            out.contains(&format!("{} records, chain intact", n - 2))
                && out.contains(&format!("line {n}: the last line is incomplete"))
                && out.contains(&format!("record seq {} on the line before", n - 1)),
            "{out}"
        );
        let output = if writer == "proxy" {
            proxy()
        } else {
            let dry = rollback(&s, &["--dry-run"]);
            let err = String::from_utf8_lossy(&dry.stderr);
            assert_eq!(code(&dry), 0, "{err}");
            assert!(err.contains("it is left out"), "{err}");
            rollback(&s, &[])
        };
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(!err.contains("refusing"), "{err}");
        assert!(
            err.contains(&format!("record seq {} on the line before", n - 1))
                && err.contains(&format!("both were moved to {}", aside(&cut).display())),
            "{err}"
        );
        assert_eq!(std::fs::read(aside(&cut)).unwrap(), &cut[kept..]);
        let now = std::fs::read(&s.journal).unwrap();
        assert_eq!(&now[..kept], &cut[..kept]);
        assert!(now.len() > kept, "the writer appended its records");
        assert_eq!(verify().0, 0);
    }
}
