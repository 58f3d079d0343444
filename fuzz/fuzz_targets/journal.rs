//! The journal reader on any bytes: `verify_reader` never panics, refuses bytes that are not
//! UTF-8, and agrees with `verify` on the same bytes as text, one byte at a time or all at once; a cap below the input's
//! length is an error, never a partial verdict; `read_records` never panics; a journal that
//! verifies reopens with `Journal::open` at its head, and one more record keeps it verifying.

#![no_main]

use std::io::BufReader;

use libfuzzer_sys::fuzz_target;
use mcp_recovery_journal::{
    Journal, Kind, ReadError, Verifier, read_records, verify, verify_reader,
};

fuzz_target!(|data: &[u8]| {
    // Bytes that are not UTF-8 never verify (a line is never decoded lossily).
    let Ok(text) = std::str::from_utf8(data) else {
        let streamed = verify_reader(data, u64::MAX, Verifier::new());
        assert!(streamed.is_ok_and(|r| r.broken.is_some()));
        return;
    };
    let whole = verify(text);
    let streamed = verify_reader(data, u64::MAX, Verifier::new());
    assert_eq!(streamed.as_ref().ok(), Some(&whole));
    let split = verify_reader(BufReader::with_capacity(7, data), data.len() as u64, Verifier::new());
    assert_eq!(split.as_ref().ok(), Some(&whole));
    let lines = data.split_inclusive(|&b| b == b'\n').count();
    assert!(whole.records as usize <= lines);
    if let Some(broken) = &whole.broken {
        assert!(broken.line >= 1 && broken.line <= lines, "{broken:?} of {lines} lines");
        assert_eq!(broken.line as u64, whole.records + 1);
    }
    assert_eq!(whole.head.is_some(), whole.records > 0);
    if !data.is_empty() {
        let capped = verify_reader(data, data.len() as u64 - 1, Verifier::new());
        // Reading stops at the first fault, so only a journal that reads to the end meets the cap.
        if whole.broken.is_none() {
            assert!(matches!(capped, Err(ReadError::TooLarge { .. })));
        }
    }
    let _ = read_records(text);
    if whole.broken.is_some() {
        return;
    }
    if let Some(head) = &whole.head {
        let again = verify_reader(data, u64::MAX, Verifier::expecting_head(head));
        assert_eq!(again.ok().and_then(|r| r.broken), None);
    }
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("journal.jsonl");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let mut journal = match Journal::open(&path, u64::MAX) {
        Ok(journal) => journal,
        Err(e) => panic!("a journal that verifies is refused: {e}"),
    };
    journal.set_sync(false);
    assert_eq!(
        journal.head(),
        whole.head.as_deref().unwrap_or(mcp_recovery_journal::GENESIS)
    );
    if journal.append("fuzz", Kind::Approval, serde_json::Map::new()).is_err() {
        return;
    }
    let grown = std::fs::read(&path).unwrap_or_default();
    let report = verify(&String::from_utf8_lossy(&grown));
    assert_eq!(report.broken, None);
    assert_eq!(report.records, whole.records + 1);
});
