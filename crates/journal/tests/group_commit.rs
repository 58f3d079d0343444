//! Group commit: records appended by writers sharing one journal are made durable by shared
//! syncs, and every writer's wait ends once its own records are.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used)]

use std::sync::Mutex;

use mcp_recovery_journal::{Journal, Kind, verify};
use serde_json::json;

/// Writers sharing one synced journal behind a lock, each waiting for its records outside
/// it: every wait returns, and the file is one unbroken chain of every record, each session's
/// in the order it wrote them.
#[test]
fn writers_sharing_syncs_leave_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let journal = Mutex::new(Journal::open(&path, 1 << 24).unwrap());
    std::thread::scope(|scope| {
        for writer in 0..8 {
            let journal = &journal;
            scope.spawn(move || {
                for call in 0..25 {
                    let fields = json!({"call": call, "name": "t"});
                    let (_, pending) = journal
                        .lock()
                        .unwrap()
                        .append_pending(
                            &format!("s-{writer}"),
                            Kind::CallIntent,
                            fields.as_object().unwrap().clone(),
                        )
                        .unwrap();
                    pending.wait().unwrap();
                }
            });
        }
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let report = verify(&text);
    assert_eq!(report.broken, None);
    assert_eq!(report.records, 200);
    for writer in 0..8 {
        let session = format!("s-{writer}");
        let calls: Vec<i64> = text
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .filter(|record| record["session"] == session.as_str())
            .map(|record| record["call"].as_i64().unwrap())
            .collect();
        assert_eq!(calls, (0..25).collect::<Vec<_>>());
    }
}

/// A journal that does not sync hands out records that are durable as far as it goes.
#[test]
fn an_unsynced_journal_never_waits() {
    let dir = tempfile::tempdir().unwrap();
    let mut journal = Journal::open(&dir.path().join("j.jsonl"), 1 << 20).unwrap();
    journal.set_sync(false);
    let fields = json!({"call": 1}).as_object().unwrap().clone();
    let (_, pending) = journal
        .append_pending("s", Kind::CallIntent, fields)
        .unwrap();
    pending.wait().unwrap();
    let text = std::fs::read_to_string(dir.path().join("j.jsonl")).unwrap();
    assert_eq!(verify(&text).records, 1);
}
