//! The audit journal of `mcp-recovery proxy`: append-only JSON Lines, one record per line, each
//! committing to the one before it with sha256 over its canonical form (RFC 8785, numbers as
//! written).
//!
//! A record is a JSON object with at least
//!
//! * `seq` — 1 on the first line, one more on every following line;
//! * `time` — RFC 3339 UTC with milliseconds, when the record was written;
//! * `session` — the downstream connection the record belongs to;
//! * `kind` — what happened (see [`Kind`]);
//! * `prev` — the previous record's `hash` (64 zeros on the first line);
//! * `hash` — lowercase hex sha256 of the canonical form of the record without `hash`.
//!
//! Call outcome records also carry `name`, `arguments` and `result` (the `CallToolResult`, or
//! `null` when the outcome is unknown), so a journal reads as a `plan` trace. Lines are written
//! in canonical form and, unless asked otherwise, synced to disk before [`Journal::append`]
//! returns. `spec/journal.md` specifies the format for verifiers written without this crate.
//!
//! ```
//! use mcp_recovery_journal::{Journal, Kind, verify};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("journal.jsonl");
//! let mut journal = Journal::open(&path, 64 << 20).unwrap();
//! let fields = json!({"call": 1, "name": "charge_payment", "arguments": {"amount": 5}});
//! journal.append("s-1", Kind::CallIntent, fields.as_object().unwrap().clone()).unwrap();
//! let text = std::fs::read_to_string(&path).unwrap();
//! let report = verify(&text);
//! assert!(report.broken.is_none());
//! assert_eq!(report.records, 1);
//! ```

mod broken;
mod canonical;
pub mod checkpoint;
mod error;
mod group;
mod hash;
pub mod keys;
mod lock;
mod nofollow;
mod outside;
pub mod time;
mod torn;
mod verify;

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

pub use broken::Broken;
pub use error::JournalError;
pub use group::Pending;
use hash::record_hash;
pub use hash::{GENESIS, canonical};
pub use lock::{Holder, lock_path};
pub use outside::{
    INLINE_MAX_BYTES, OUT_OF_LINE, READ_BACK_MAX_BYTES, SIDE_FILE_MAX_BYTES, inline_out_of_line,
    side_dir,
};
use time::rfc3339_now;
pub use torn::SetAside;
pub use verify::{ReadError, Torn, Verification, Verifier, verify, verify_reader};

/// What a record says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// A downstream connection began (upstream, policy summary, classification).
    SessionStart,
    /// A downstream connection ended.
    SessionEnd,
    /// A tool call is about to be forwarded (written and synced before it is).
    CallIntent,
    /// A tool call's result (`result: null` when it never arrived).
    CallOutcome,
    /// A policy, terminal or command decision on a call or compensation.
    Approval,
    /// A rollback began: which calls it covers and why.
    RollbackStart,
    /// A rollback step that is not executed (failed, unknown outcome, irreversible…), and why.
    CompensationSkip,
    /// A compensating call is about to be sent.
    CompensationIntent,
    /// A compensating call's result (`result: null` when it never arrived).
    CompensationOutcome,
    /// A rollback ended, with its counts.
    RollbackEnd,
    /// The journal key's signature of the record before it (see [`checkpoint`]).
    Checkpoint,
}

impl Kind {
    /// Every kind, in the order `spec/journal.md` lists them.
    pub const ALL: [Kind; 11] = [
        Kind::SessionStart,
        Kind::SessionEnd,
        Kind::CallIntent,
        Kind::CallOutcome,
        Kind::Approval,
        Kind::RollbackStart,
        Kind::CompensationSkip,
        Kind::CompensationIntent,
        Kind::CompensationOutcome,
        Kind::RollbackEnd,
        Kind::Checkpoint,
    ];

    /// The `kind` member's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::SessionStart => "session.start",
            Kind::SessionEnd => "session.end",
            Kind::CallIntent => "call.intent",
            Kind::CallOutcome => "call.outcome",
            Kind::Approval => "approval",
            Kind::RollbackStart => "rollback.start",
            Kind::CompensationSkip => "compensation.skip",
            Kind::CompensationIntent => "compensation.intent",
            Kind::CompensationOutcome => "compensation.outcome",
            Kind::RollbackEnd => "rollback.end",
            Kind::Checkpoint => "checkpoint",
        }
    }

    /// The kind with this spelling.
    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// The members [`Journal::append`] sets itself, never moved out of line.
const RESERVED: [&str; 6] = ["seq", "time", "session", "kind", "prev", "hash"];

/// Receives each checkpoint line as written (without its newline), once it is durable.
pub type CheckpointSink = Box<dyn FnMut(&str) + Send>;

struct Signer {
    key: keys::SecretKey,
    sink: Option<CheckpointSink>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signer({:?})", self.key)
    }
}

/// An open journal, positioned after its last record, and the only writer of it while open.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
    seq: u64,
    head: String,
    sync: bool,
    size: u64,
    /// The bytes of the side files (every regular file in `JOURNAL.d`), which share `max_bytes`
    /// with the journal.
    side_bytes: u64,
    max_bytes: u64,
    /// The key that signs a checkpoint after every record, and who is handed each one.
    signer: Option<Signer>,
    /// The syncs, shared by the records of every writer ([`Journal::append_pending`]).
    group: Arc<group::Group>,
    /// The incomplete last line moved out of the file when it was opened.
    set_aside: Option<SetAside>,
    /// The holder file (`JOURNAL.lock`), held open and locked with the journal.
    _lock: File,
}

impl Journal {
    /// Opens (creating when missing) a journal for appending. An existing file is verified
    /// first, one line at a time; a broken one is refused, so a new record never commits to
    /// tampered history. An incomplete last line, and nothing else wrong, is what a crash inside
    /// a write leaves: it is moved to its own file and the journal cut back to its whole lines
    /// (see [`Journal::set_aside`]). A file longer than `max_bytes`, or one that is not a
    /// regular file, is refused before it is read; no append takes it, with its side files,
    /// past `max_bytes`. Fails at once when another writer holds the journal.
    pub fn open(path: &Path, max_bytes: u64) -> Result<Journal, JournalError> {
        Journal::open_as(path, max_bytes, &Holder::default())
    }

    /// [`Journal::open`], as `holder`: the journal's lock is taken first (waiting at most
    /// `holder.wait` for another writer), whatever path to the file is given, and held until
    /// the journal is dropped.
    pub fn open_as(path: &Path, max_bytes: u64, holder: &Holder) -> Result<Journal, JournalError> {
        Journal::open_with(path, max_bytes, holder, None)
    }

    /// [`Journal::open_as`] for a writer that signs with the key whose public half is `key`
    /// ([`Journal::set_key`]): what the journal holds must be signed by it, as a writer with it
    /// leaves it (the chain, every checkpoint signed by `key` over the record just before it,
    /// and every other record followed at once by its checkpoint), else it is refused
    /// ([`JournalError::NotSigned`]), so its checkpoints never sign records it did not sign:
    /// records written without the key, a journal rewritten and rehashed with its checkpoints
    /// left out, one signed by another key. An empty journal passes. An incomplete last line
    /// that begins as the checkpoint of the one unsigned record before it is set aside with that
    /// record (see [`Torn::unsigned`]).
    pub fn open_signed_as(
        path: &Path,
        max_bytes: u64,
        holder: &Holder,
        key: &keys::PublicKey,
    ) -> Result<Journal, JournalError> {
        Journal::open_with(path, max_bytes, holder, Some(key))
    }

    fn open_with(
        path: &Path,
        max_bytes: u64,
        holder: &Holder,
        key: Option<&keys::PublicKey>,
    ) -> Result<Journal, JournalError> {
        let shown = path.display().to_string();
        let io_error = |source| JournalError::Io {
            path: shown.clone(),
            source,
        };
        match std::fs::metadata(path) {
            Ok(metadata) if !metadata.is_file() => {
                return Err(JournalError::NotRegular { path: shown });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(e)),
        }
        nofollow::refuse_link(&side_dir(path)).map_err(io_error)?;
        let (file, lock) = lock::acquire(path, holder)?;
        let too_large = || JournalError::TooLarge {
            path: shown.clone(),
            limit: max_bytes,
        };
        let size = file.metadata().map_err(io_error)?.len();
        if size > max_bytes {
            return Err(too_large());
        }
        let verifier = match key {
            Some(key) => Verifier::new()
                .with_keys(vec![key.clone()])
                .expecting_each_record_signed(),
            None => Verifier::new(),
        };
        let report = match verify_reader(BufReader::new(&file), max_bytes, verifier) {
            Ok(report) => report,
            Err(ReadError::TooLarge { .. }) => return Err(too_large()),
            Err(ReadError::Io(e)) => return Err(io_error(e)),
        };
        let mut size = size;
        let set_aside = match (report.broken, report.torn) {
            (_, Some(torn)) => {
                size = torn.offset;
                Some(torn::set_aside(&file, path, torn).map_err(io_error)?)
            }
            (Some(broken), None) => {
                return Err(match key {
                    Some(key) => JournalError::NotSigned {
                        path: shown,
                        key: key.id(),
                        broken,
                    },
                    None => JournalError::Broken {
                        path: shown,
                        broken,
                    },
                });
            }
            (None, None) => None,
        };
        let side_bytes = outside::side_bytes(path).map_err(|source| JournalError::Io {
            path: side_dir(path).display().to_string(),
            source,
        })?;
        let group = group::Group::new(file.try_clone().map_err(io_error)?, shown);
        Ok(Journal {
            file,
            group,
            path: path.to_path_buf(),
            seq: report.records,
            head: report.head.unwrap_or_else(|| GENESIS.to_owned()),
            sync: true,
            size,
            side_bytes,
            max_bytes,
            signer: None,
            set_aside,
            _lock: lock,
        })
    }

    /// The incomplete last line this writer found when it opened the journal, and the file it
    /// moved it to (with the unsigned record before it, if any): a writer says so, as its
    /// records follow the whole records before them.
    pub fn set_aside(&self) -> Option<&SetAside> {
        self.set_aside.as_ref()
    }

    /// Whether every append waits for the data to reach the disk (the default). Turning it off
    /// trades crash safety for speed; the chain is the same.
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    /// Signs the chain head with `key` in a `checkpoint` record after every record appended
    /// from now on, written and synced with it, so no durable record is left unsigned. A
    /// journal that holds records is opened with [`Journal::open_signed_as`] first.
    pub fn set_key(&mut self, key: keys::SecretKey) {
        self.signer = Some(Signer { key, sink: None });
    }

    /// Hands every checkpoint line written from now on to `sink`, after it is written (and
    /// synced); only with a key ([`Journal::set_key`]).
    pub fn set_checkpoint_sink(&mut self, sink: CheckpointSink) {
        if let Some(signer) = &mut self.signer {
            signer.sink = Some(sink);
        }
    }

    /// The hash of the last record ([`GENESIS`] for an empty journal): save it to detect a
    /// later truncation with `audit verify --head`.
    pub fn head(&self) -> &str {
        &self.head
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record: `fields` plus `seq`, `time`, `session`, `kind`, `prev` and `hash`
    /// (those six replace any member of the same name). A member longer than
    /// [`INLINE_MAX_BYTES`] goes to a side file (see [`side_dir`]). Returns the record as
    /// written, once it is on disk (unless the journal does not sync); a record that would take
    /// the file and its side files together past the cap is refused, and nothing of it written.
    pub fn append(
        &mut self,
        session: &str,
        kind: Kind,
        fields: Map<String, Value>,
    ) -> Result<Map<String, Value>, JournalError> {
        let (record, pending) = self.append_pending(session, kind, fields)?;
        pending.wait()?;
        Ok(record)
    }

    /// [`Journal::append`] without waiting for the disk: the record is written (the next
    /// record chains to it) and [`Pending::wait`] returns once it is durable. Writers that
    /// share a journal behind a lock append under it and wait after releasing it, so one sync
    /// covers the records of every writer that appended while the previous sync ran. With a
    /// checkpoint sink ([`Journal::set_checkpoint_sink`]) the record is synced before this
    /// returns, so the sink is only handed durable checkpoints.
    pub fn append_pending(
        &mut self,
        session: &str,
        kind: Kind,
        fields: Map<String, Value>,
    ) -> Result<(Map<String, Value>, Pending), JournalError> {
        let io_error = |source| JournalError::Io {
            path: self.path.display().to_string(),
            source,
        };
        // A writer stopped by bytes it could not cut back writes nothing after them.
        self.group.stopped()?;
        let mut record = fields;
        record.remove(OUT_OF_LINE);
        let side_files = outside::move_out(&mut record, kind.as_str(), &RESERVED);
        let (hash, mut lines, record) =
            self.seal(record, self.seq + 1, session, kind, self.head.clone());
        let line_end = lines.len();
        let mut checkpoint = None;
        if let Some(signer) = &self.signer {
            let fields = checkpoint::fields(&signer.key, self.seq + 1, &hash);
            let (hash, line, _) = self.seal(
                fields,
                self.seq + 2,
                session,
                Kind::Checkpoint,
                hash.clone(),
            );
            lines.extend_from_slice(&line);
            checkpoint = Some(hash);
        }
        // A side file already there (its name is its content's digest) costs nothing more.
        let mut new = Vec::new();
        for side_file in side_files {
            if !side_file.present(&self.path).map_err(io_error)? {
                new.push(side_file);
            }
        }
        let added: u64 = new.iter().map(outside::SideFile::len).sum();
        let total = [self.size, lines.len() as u64, self.side_bytes, added]
            .into_iter()
            .fold(0u64, u64::saturating_add);
        if total > self.max_bytes {
            return Err(JournalError::Full {
                path: self.path.display().to_string(),
                limit: self.max_bytes,
            });
        }
        // Each side file is synced before the record naming it is written.
        for side_file in new {
            side_file.write(&self.path, &self.file).map_err(io_error)?;
            self.side_bytes += side_file.len();
        }
        // One write per record and its checkpoint: a crash leaves at most one incomplete last
        // line, which the next writer sets aside; a write that fails is cut back at once.
        if let Err(error) = self.file.write_all(&lines) {
            return Err(self.cut_back(error));
        }
        let pending = Pending {
            number: self.group.written(),
            group: self.sync.then(|| Arc::clone(&self.group)),
        };
        self.size += lines.len() as u64;
        self.seq += 1;
        self.head = hash;
        let Some(checkpoint) = checkpoint else {
            return Ok((record, pending));
        };
        self.seq += 1;
        self.head = checkpoint;
        let Some(sink) = self.signer.as_mut().and_then(|s| s.sink.as_mut()) else {
            return Ok((record, pending));
        };
        pending.wait()?;
        sink(&String::from_utf8_lossy(&lines[line_end..lines.len() - 1]));
        let durable = Pending {
            group: None,
            number: 0,
        };
        Ok((record, durable))
    }

    /// After a write that failed (a full disk, an I/O error): the file cut back to its last
    /// whole record, synced, and the write's error. When even that fails, the writer stops:
    /// every wait for a record not yet durable, and every later append, fails, so nothing is
    /// written or acknowledged after the incomplete bytes.
    fn cut_back(&self, error: io::Error) -> JournalError {
        let path = self.path.display().to_string();
        match self
            .file
            .set_len(self.size)
            .and_then(|()| self.file.sync_all())
        {
            Ok(()) => JournalError::Io {
                path,
                source: error,
            },
            Err(cut) => {
                let stopped = io::Error::new(
                    error.kind(),
                    format!(
                        "a record could not be written ({error}), nor the incomplete bytes it \
                         left cut back ({cut}); nothing more is written to the journal"
                    ),
                );
                self.group.stop(&stopped);
                JournalError::Io {
                    path,
                    source: stopped,
                }
            }
        }
    }

    /// `fields` as record `seq` after `prev`: its hash, its canonical line with `\n`, and the
    /// record.
    fn seal(
        &self,
        mut record: Map<String, Value>,
        seq: u64,
        session: &str,
        kind: Kind,
        prev: String,
    ) -> (String, Vec<u8>, Map<String, Value>) {
        record.insert("seq".into(), Value::from(seq));
        record.insert("time".into(), Value::from(rfc3339_now()));
        record.insert("session".into(), Value::from(session));
        record.insert("kind".into(), Value::from(kind.as_str()));
        record.insert("prev".into(), Value::from(prev));
        record.remove("hash");
        let hash = record_hash(&record);
        record.insert("hash".into(), Value::from(hash.clone()));
        let mut line = Vec::new();
        canonical::write_object(&record, None, &mut line);
        line.push(b'\n');
        (hash, line, record)
    }
}

/// Parses every line of a journal (blank lines skipped) into records, without checking the
/// chain: call [`verify`] for that. A line that is not a JSON object is an error naming it.
pub fn read_records(text: &str) -> Result<Vec<Map<String, Value>>, Broken> {
    let mut records = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match mcp_recovery_model::json::from_str(line) {
            Ok(Value::Object(record)) => records.push(record),
            Ok(_) => return Err(Broken::new(index + 1, "the line is not a JSON object")),
            Err(e) => return Err(Broken::new(index + 1, format!("the line is not JSON: {e}"))),
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests;
