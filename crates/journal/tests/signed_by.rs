//! `Journal::open_signed_as`: a writer given a journal key appends only to a journal that key
//! has signed record by record, so its next checkpoint never signs history it did not sign.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use mcp_recovery_journal::keys::{self, PublicKey, SecretKey};
use mcp_recovery_journal::{Holder, Journal, JournalError, Kind, read_records};
use serde_json::{Map, Value, json};

struct Keys {
    dir: tempfile::TempDir,
    key: PathBuf,
    public: PublicKey,
    other: PathBuf,
}

fn keys() -> Keys {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("journal.key");
    let other = dir.path().join("other.key");
    let public = keys::generate(&key).unwrap();
    keys::generate(&other).unwrap();
    Keys {
        dir,
        key,
        public,
        other,
    }
}

fn fields(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// Appends `calls` intents to the journal at `path`, signed by `key` when given.
fn append(path: &Path, key: Option<&Path>, calls: std::ops::Range<u64>) {
    let mut journal = Journal::open(path, 1 << 20).unwrap();
    journal.set_sync(false);
    if let Some(key) = key {
        journal.set_key(SecretKey::read(key).unwrap());
    }
    for call in calls {
        journal
            .append("s", Kind::CallIntent, fields(json!({"call": call})))
            .unwrap();
    }
}

/// The journal at `path` opened by a writer whose key's public half is `public`.
fn open_signed(path: &Path, public: &PublicKey) -> Result<Journal, JournalError> {
    Journal::open_signed_as(path, 1 << 20, &Holder::default(), public)
}

/// The fault `open_signed_as` reports, `None` when the journal passes.
fn fault(path: &Path, public: &PublicKey) -> Option<(usize, String)> {
    match open_signed(path, public) {
        Ok(_) => None,
        Err(JournalError::NotSigned { broken, key, path }) => {
            assert_eq!(key, public.id());
            assert!(path.ends_with("journal.jsonl"), "{path}");
            Some((broken.line, broken.reason))
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn a_journal_the_key_signed_record_by_record_passes_and_an_empty_one_too() {
    let k = keys();
    let path = k.dir.path().join("journal.jsonl");
    assert_eq!(fault(&path, &k.public), None);
    append(&path, Some(&k.key), 1..4);
    append(&path, Some(&k.key), 4..6);
    assert_eq!(fault(&path, &k.public), None);
    // The check reads from the start and leaves appends at the end.
    let mut journal = open_signed(&path, &k.public).unwrap();
    journal.set_key(SecretKey::read(&k.key).unwrap());
    journal
        .append("s", Kind::CallIntent, fields(json!({"call": 6})))
        .unwrap();
    drop(journal);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(mcp_recovery_journal::verify(&text).broken.is_none());
    assert_eq!(read_records(&text).unwrap().len(), 12);
    assert_eq!(fault(&path, &k.public), None);
}

#[test]
fn records_written_without_the_key_are_named_at_their_first_line() {
    let k = keys();
    let path = k.dir.path().join("journal.jsonl");
    // Written without a key, then by a writer with the key that did not check: its first
    // checkpoint signs a head over records it never signed.
    append(&path, None, 1..4);
    append(&path, Some(&k.key), 4..6);
    let (line, reason) = fault(&path, &k.public).unwrap();
    assert_eq!(line, 1, "{reason}");
    assert!(
        reason.contains("record seq 1 is not followed by its checkpoint"),
        "{reason}"
    );
    // An unsigned tail after signed records.
    let tail = k.dir.path().join("tail").join("journal.jsonl");
    std::fs::create_dir(tail.parent().unwrap()).unwrap();
    append(&tail, Some(&k.key), 1..3);
    append(&tail, None, 3..4);
    let (line, reason) = fault(&tail, &k.public).unwrap();
    assert_eq!(line, 5, "{reason}");
    assert!(reason.contains("unsigned"), "{reason}");
}

#[test]
fn another_keys_checkpoints_and_a_rewritten_journal_are_refused() {
    let k = keys();
    let path = k.dir.path().join("journal.jsonl");
    append(&path, Some(&k.other), 1..3);
    let (line, reason) = fault(&path, &k.public).unwrap();
    assert_eq!(line, 2, "{reason}");
    assert!(reason.contains("which is not a key given"), "{reason}");
    // Rewritten and rehashed, the checkpoints left out.
    let signed = k.dir.path().join("signed").join("journal.jsonl");
    std::fs::create_dir(signed.parent().unwrap()).unwrap();
    append(&signed, Some(&k.key), 1..4);
    let text = std::fs::read_to_string(&signed).unwrap();
    std::fs::remove_file(&signed).unwrap();
    let mut journal = Journal::open(&signed, 1 << 20).unwrap();
    for mut record in read_records(&text).unwrap() {
        if record["kind"] == "checkpoint" {
            continue;
        }
        record.insert("arguments".into(), json!({"amount": 500}));
        journal.append("s", Kind::CallIntent, record).unwrap();
    }
    drop(journal);
    let (line, reason) = fault(&signed, &k.public).unwrap();
    assert_eq!(line, 1, "{reason}");
    let error = open_signed(&signed, &k.public).err().unwrap().to_string();
    assert!(
        error.contains("journal.jsonl: line 1:") && error.contains("refusing to append"),
        "{error}"
    );
}
