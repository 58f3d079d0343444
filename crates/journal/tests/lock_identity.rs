//! One writer per journal file, however its path is spelled: the same path, a symlink to the
//! file, a symlink to its directory, a hard link and a `dir/../` spelling all meet the first
//! writer's lock, and get it once the first writer is dropped.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::panic)]
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_recovery_journal::{Holder, Journal, JournalError, Kind, lock_path, verify};
use serde_json::Map;

const CAP: u64 = 1 << 20;

fn first_writer() -> Holder {
    Holder {
        command: "first writer".into(),
        wait: Duration::ZERO,
    }
}

/// The directory, the journal in it (`dir/j.jsonl`, one record) and the other spellings of it,
/// each with its name.
fn spellings() -> (tempfile::TempDir, PathBuf, Vec<(&'static str, PathBuf)>) {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("dir");
    std::fs::create_dir(&inner).unwrap();
    let path = inner.join("j.jsonl");
    let mut journal = Journal::open(&path, CAP).unwrap();
    journal.append("s", Kind::SessionStart, Map::new()).unwrap();
    drop(journal);
    std::os::unix::fs::symlink(&path, dir.path().join("file-link.jsonl")).unwrap();
    std::os::unix::fs::symlink(&inner, dir.path().join("dir-link")).unwrap();
    std::fs::hard_link(&path, dir.path().join("hard.jsonl")).unwrap();
    std::fs::create_dir(inner.join("sub")).unwrap();
    let spellings = vec![
        ("the same path", path.clone()),
        ("a symlink to the file", dir.path().join("file-link.jsonl")),
        (
            "a symlink to its directory",
            dir.path().join("dir-link/j.jsonl"),
        ),
        ("a hard link", dir.path().join("hard.jsonl")),
        ("a dir/../ spelling", inner.join("sub/../j.jsonl")),
        ("a relative path", relative(&path)),
    ];
    (dir, path, spellings)
}

/// `path` (absolute) spelled from the current directory: up to the root, then down.
fn relative(path: &Path) -> PathBuf {
    let here = std::env::current_dir().unwrap();
    let mut relative = PathBuf::new();
    for _ in here.components().skip(1) {
        relative.push("..");
    }
    relative.join(path.strip_prefix("/").unwrap())
}

fn refused(path: &Path) -> String {
    match Journal::open(path, CAP) {
        Err(error @ JournalError::Locked { .. }) => error.to_string(),
        Err(error) => panic!("{}: not refused as locked: {error}", path.display()),
        Ok(_) => panic!("{}: a second writer got the lock", path.display()),
    }
}

/// Every other spelling of the path is refused while the first writer holds the journal, and
/// gets it, appending to the same chain, once the first writer is dropped.
#[test]
fn every_spelling_of_a_journal_meets_one_lock() {
    let (_dir, path, spellings) = spellings();
    for (name, second) in &spellings {
        let first = Journal::open_as(&path, CAP, &first_writer()).unwrap();
        let error = refused(second);
        assert!(
            error.contains("another writer holds its lock"),
            "{name}: {error}"
        );
        drop(first);
        let mut second = Journal::open(second, CAP).unwrap();
        second.append("s", Kind::SessionEnd, Map::new()).unwrap();
    }
    let report = verify(&std::fs::read_to_string(&path).unwrap());
    assert!(report.broken.is_none(), "{:?}", report.broken);
    assert_eq!(report.records, 1 + spellings.len() as u64);
}

/// Whichever spelling holds the journal, every other one is refused.
#[test]
fn a_writer_by_any_spelling_keeps_out_every_other() {
    let (_dir, _path, spellings) = spellings();
    for (name, first) in &spellings {
        let holder = Journal::open_as(first, CAP, &first_writer()).unwrap();
        for (other, second) in &spellings {
            let error = refused(second);
            assert!(
                error.contains("another writer holds its lock"),
                "{name} then {other}: {error}"
            );
        }
        drop(holder);
    }
}

/// The second writer names the first (pid, command, since when) by every spelling but a hard
/// link, whose holder file is found by name; by that one it still says another writer holds it.
#[test]
fn the_holder_is_named_by_every_spelling_but_a_hard_link() {
    let (_dir, path, spellings) = spellings();
    let first = Journal::open_as(&path, CAP, &first_writer()).unwrap();
    let named = format!("pid {} (first writer) since 20", std::process::id());
    for (name, second) in &spellings {
        let error = refused(second);
        if *name == "a hard link" {
            assert!(!error.contains(&named), "{name}: {error}");
            assert!(error.contains("another writer holds its lock"), "{error}");
        } else {
            assert!(error.contains(&named), "{name}: {error}");
        }
    }
    drop(first);
}

/// One holder file per journal, found from every spelling that resolves to the file's name.
#[test]
fn the_holder_file_is_found_by_the_file_and_not_by_the_spelling() {
    let (_dir, path, spellings) = spellings();
    let canonical = lock_path(&path);
    for (name, spelled) in &spellings {
        if *name != "a hard link" {
            assert_eq!(lock_path(spelled), canonical, "{name}");
        }
    }
}

/// A writer that waits gets the journal once the first, held by another spelling, lets go.
#[test]
fn a_waiting_writer_gets_the_journal_through_a_symlink() {
    let (dir, path, _spellings) = spellings();
    let first = Journal::open_as(&path, CAP, &first_writer()).unwrap();
    let released = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(first);
    });
    // A wait longer than a clock can count (`--wait-lock 18446744073709551615`) waits.
    let waiting = Holder {
        command: "second".into(),
        wait: Duration::from_secs(u64::MAX),
    };
    let link = dir.path().join("file-link.jsonl");
    let start = std::time::Instant::now();
    let mut second = Journal::open_as(&link, CAP, &waiting).unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "{:?}",
        start.elapsed()
    );
    released.join().unwrap();
    second.append("s", Kind::SessionEnd, Map::new()).unwrap();
    assert_eq!(verify(&std::fs::read_to_string(&path).unwrap()).records, 2);
}

/// A journal that does not exist yet is created by its first writer, here through a symlink
/// to where it will be, and locked all the same; reading it while it is held is not refused.
#[test]
fn a_new_journal_is_created_locked_and_stays_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.jsonl");
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    let mut first = Journal::open_as(&link, CAP, &first_writer()).unwrap();
    assert!(path.is_file());
    let error = refused(&path);
    let named = format!("pid {} (first writer) since 20", std::process::id());
    assert!(error.contains(&named), "{error}");
    first.append("s", Kind::SessionStart, Map::new()).unwrap();
    let report = verify(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(report.records, 1);
    drop(first);
    Journal::open(&path, CAP).unwrap();
}

/// A holder file left by a writer that has let go does not name it while another writer, by a
/// hard link, holds the journal.
#[test]
fn a_writer_that_let_go_is_not_named() {
    let (dir, path, _spellings) = spellings();
    drop(Journal::open_as(&path, CAP, &first_writer()).unwrap());
    let hard = Holder {
        command: "by the hard link".into(),
        wait: Duration::ZERO,
    };
    let held = Journal::open_as(&dir.path().join("hard.jsonl"), CAP, &hard).unwrap();
    let error = refused(&path);
    assert!(!error.contains("first writer"), "{error}");
    assert!(error.contains("another writer holds its lock"), "{error}");
    drop(held);
}
