//! Checking a journal's chain.

use std::collections::BTreeMap;
use std::io::{self, BufRead};
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::broken::{Broken, shown};
use crate::hash::{GENESIS, record_hash};
use crate::keys::PublicKey;
use crate::{canonical, checkpoint, outside};

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// Records that verified (all of them when `broken` is `None`).
    pub records: u64,
    /// The `hash` of the last record that verified.
    pub head: Option<String>,
    /// The first fault, if any.
    pub broken: Option<Broken>,
    /// When the only fault is an incomplete last line (no newline: the journal was cut while
    /// it was written): where it is. `broken` then describes it, and `records` and `head` are
    /// those of the whole lines before it.
    pub torn: Option<Torn>,
}

/// An incomplete last line: its 1-based number and its length, and the byte offset where what
/// a writer sets aside with it begins (the length of the whole lines it keeps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Torn {
    /// 1-based line number.
    pub line: usize,
    /// Where the bytes set aside begin: the line, or the record before it (see `unsigned`).
    pub offset: u64,
    /// The line's length in bytes.
    pub bytes: u64,
    /// With keys ([`Verifier::with_keys`]): the `seq` of the record on the line before, when
    /// that record is the only one no checkpoint signs and the line begins as its checkpoint
    /// would. A writer with a key writes a record and its checkpoint in one write, so the crash
    /// that cut the checkpoint cut that write: the record was never acknowledged, and is left
    /// out and set aside with the line.
    pub unsigned: Option<u64>,
}

impl Torn {
    /// What the line is, in words (without its number).
    pub fn describe(&self) -> String {
        let record = match self.unsigned {
            Some(seq) => format!(
                "; it begins the checkpoint of record seq {seq} on the line before, written with \
                 it, so that record is unsigned and was never acknowledged either"
            ),
            None => String::new(),
        };
        format!(
            "the last line is incomplete ({} bytes without a newline): the journal was truncated \
             while it was written, and the line holds no record{record}",
            self.bytes
        )
    }
}

/// Why [`verify_reader`] could not finish.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The journal is longer than the cap given.
    #[error("it is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The cap in bytes.
        limit: u64,
    },
}

/// Checks a journal one line at a time, keeping only the line at hand and the chain's state.
#[derive(Debug, Clone)]
pub struct Verifier {
    report: Verification,
    prev: String,
    line: usize,
    saved: Option<String>,
    saved_found: bool,
    /// The journal whose side files are checked (`None`: out-of-line members are not).
    side_files: Option<PathBuf>,
    /// The public keys checkpoints must be signed with (`None`: checkpoints are not checked).
    keys: Option<Vec<PublicKey>>,
    /// The first line and seq of the records no valid checkpoint after them covers yet.
    unsigned: Option<(usize, u64)>,
    /// Checkpoints kept elsewhere, by seq: their hash and where each was kept.
    kept: BTreeMap<u64, Vec<(String, String)>>,
    /// Whether every record but a checkpoint must be followed at once by its checkpoint.
    each_signed: bool,
    /// The line a fault is reported at when it is not the line at hand.
    fault_line: Option<usize>,
    /// The bytes of the lines pushed so far.
    offset: u64,
    /// Where the last whole line begins, and the head before it.
    last: (u64, Option<String>),
    /// A last line without its newline, set aside from the checks.
    torn: Option<Torn>,
}

impl Default for Verifier {
    fn default() -> Self {
        Verifier::new()
    }
}

impl Verifier {
    /// A verifier for a whole journal.
    pub fn new() -> Verifier {
        Verifier {
            report: Verification {
                records: 0,
                head: None,
                broken: None,
                torn: None,
            },
            prev: GENESIS.to_owned(),
            line: 0,
            saved: None,
            saved_found: false,
            side_files: None,
            keys: None,
            unsigned: None,
            kept: BTreeMap::new(),
            each_signed: false,
            fault_line: None,
            offset: 0,
            last: (0, None),
            torn: None,
        }
    }

    /// Also checks every `checkpoint` record's signature against `keys` (its key must be one of
    /// them), and that every record is covered by a valid checkpoint after it.
    pub fn with_keys(mut self, keys: Vec<PublicKey>) -> Verifier {
        self.keys = Some(keys);
        self
    }

    /// With [`Verifier::with_keys`], also requires what a writer with the key writes: every
    /// record but a checkpoint followed at once by its checkpoint. A record followed by another
    /// record (one written before the key was used, or by a writer without it) is a fault at
    /// its own line.
    pub fn expecting_each_record_signed(mut self) -> Verifier {
        self.each_signed = true;
        self
    }

    /// Also checks a checkpoint kept elsewhere (see [`checkpoint::kept`]): the journal's record
    /// at `seq` must have `hash`. `source` names where it was kept, for the message.
    pub fn expecting_checkpoint(mut self, seq: u64, hash: String, source: String) -> Verifier {
        self.kept.entry(seq).or_default().push((hash, source));
        self
    }

    /// Also checks every out-of-line member against the side files of the journal at `journal`
    /// (present, of the recorded size and sha256).
    pub fn with_side_files(mut self, journal: impl Into<PathBuf>) -> Verifier {
        self.side_files = Some(journal.into());
        self
    }

    /// A verifier that also checks a head saved earlier: one of the verified records must have
    /// it (the journal may have grown since, never shrunk or been rewritten).
    pub fn expecting_head(saved: &str) -> Verifier {
        Verifier {
            saved: Some(saved.trim().to_ascii_lowercase()),
            ..Verifier::new()
        }
    }

    /// Whether a fault was found (further lines are ignored).
    pub fn is_broken(&self) -> bool {
        self.report.broken.is_some()
    }

    /// Checks the next line, with its `\n` when it has one: only the last line of a file can
    /// lack it, and such a line is not checked but reported as incomplete (see
    /// [`Verification::torn`]): every line the writer writes ends with `\n`, in the same write.
    pub fn push(&mut self, line: &[u8]) {
        if self.is_broken() {
            return;
        }
        self.line += 1;
        if let Some(torn) = self.torn {
            return self.fail_at(torn.line, "a line without its newline is not the last line");
        }
        let offset = self.offset;
        self.offset += line.len() as u64;
        let Some(body) = line.strip_suffix(b"\n") else {
            let seq = self.report.records;
            let checkpoint = format!("{{\"covers\":{seq},\"hash\":\"");
            let begins_as_checkpoint = line.iter().zip(checkpoint.bytes()).all(|(a, b)| *a == b);
            let cut_checkpoint = self.keys.is_some()
                && self.unsigned == Some((self.line - 1, seq))
                && begins_as_checkpoint;
            self.torn = Some(Torn {
                line: self.line,
                offset,
                bytes: line.len() as u64,
                unsigned: cut_checkpoint.then_some(seq),
            });
            return;
        };
        let checked = match std::str::from_utf8(body) {
            Ok(body) => check_line(body, self.report.records + 1, &self.prev),
            Err(e) => Err(format!(
                "the line is not UTF-8 (byte {} of the line)",
                e.valid_up_to() + 1
            )),
        };
        let checked = checked.and_then(|(hash, record)| match &self.side_files {
            Some(journal) => outside::check(&record, journal, None).map(|_| (hash, record)),
            None => Ok((hash, record)),
        });
        let checked = checked.and_then(|(hash, record)| self.signed(&record).map(|_| hash));
        let hash = match checked {
            Err(reason) => return self.fail(reason),
            Ok(hash) => hash,
        };
        self.report.records += 1;
        self.last = (offset, self.report.head.take());
        if self.saved.as_deref() == Some(hash.as_str()) {
            self.saved_found = true;
        }
        self.report.head = Some(hash.clone());
        self.prev = hash;
    }

    /// The checkpoint checks of one record that is sound in the chain: its signature when it
    /// is a checkpoint and keys are given, and the hash a checkpoint kept elsewhere gives its
    /// seq.
    fn signed(&mut self, record: &Map<String, Value>) -> Result<(), String> {
        let seq = self.report.records + 1;
        let hash = record.get("hash").and_then(Value::as_str).unwrap_or("");
        for (kept, source) in self.kept.get(&seq).into_iter().flatten() {
            if kept != hash {
                return Err(format!(
                    "the checkpoint kept in {source} for seq {seq} does not match this record \
                     (the journal was rewritten from here on)"
                ));
            }
        }
        let Some(keys) = &self.keys else {
            return Ok(());
        };
        if record.get("kind").and_then(Value::as_str) == Some("checkpoint") {
            checkpoint::check(record, keys)?;
            self.unsigned = None;
        } else if let Some((line, unsigned)) = self.unsigned.filter(|_| self.each_signed) {
            self.fault_line = Some(line);
            return Err(format!(
                "record seq {unsigned} is not followed by its checkpoint (seq {seq} is another \
                 record): it was written without the key, or the checkpoints were removed"
            ));
        } else if self.unsigned.is_none() {
            self.unsigned = Some((self.line, seq));
        }
        Ok(())
    }

    fn fail(&mut self, reason: String) {
        let line = self.fault_line.take().unwrap_or(self.line);
        self.fail_at(line, reason);
    }

    fn fail_at(&mut self, line: usize, reason: impl Into<String>) {
        self.report.broken = Some(Broken::new(line, reason));
    }

    /// The outcome: the first fault, or else a saved head that no record had.
    pub fn finish(mut self) -> Verification {
        if self.report.broken.is_none()
            && let Some(torn) = self.torn.as_mut().filter(|torn| torn.unsigned.is_some())
        {
            let (offset, head) = self.last.clone();
            torn.offset = offset;
            self.report.records -= 1;
            self.report.head = head;
            self.unsigned = None;
        }
        let mut report = self.report;
        if report.broken.is_none()
            && let Some((line, seq)) = self.unsigned
        {
            report.broken = Some(Broken::new(
                line,
                format!(
                    "records seq {seq} to {} are unsigned: no checkpoint signed by a key given \
                     follows them (the journal was cut after its last checkpoint, or written \
                     without --journal-key)",
                    report.records
                ),
            ));
        }
        if report.broken.is_none()
            && let Some((seq, kept)) = self.kept.range(report.records + 1..).next()
        {
            let source = kept
                .first()
                .map(|(_, source)| source.as_str())
                .unwrap_or("");
            report.broken = Some(Broken::new(
                0,
                format!(
                    "the checkpoint kept in {source} is at seq {seq}, and the journal ends at \
                     seq {}: it was cut back",
                    report.records
                ),
            ));
        }
        if report.broken.is_none()
            && let Some(saved) = self.saved
            && !self.saved_found
        {
            report.broken = Some(Broken::new(
                0,
                format!(
                    "no record has the saved head {}: the journal was truncated or rewritten after it was saved",
                    shown(&saved)
                ),
            ));
        }
        if report.broken.is_none()
            && let Some(torn) = self.torn
        {
            report.broken = Some(Broken::new(torn.line, torn.describe()));
            report.torn = Some(torn);
        }
        report
    }
}

/// Verifies a whole journal: every line a JSON object in sequence, each `prev` the previous
/// `hash`, each `hash` the sha256 of the record's canonical form, the last line complete.
/// Blank lines are not allowed inside a journal (they would let lines be hidden), except one
/// trailing newline.
pub fn verify(text: &str) -> Verification {
    let mut verifier = Verifier::new();
    for line in text.as_bytes().split_inclusive(|&b| b == b'\n') {
        verifier.push(line);
        if verifier.is_broken() {
            break;
        }
    }
    verifier.finish()
}

/// Verifies the journal `reader` yields, as [`verify`] does, one line at a time: memory holds
/// the longest line, never the file. More than `max_bytes` is an error, found before the bytes
/// past the cap are read; reading stops at the first fault.
pub fn verify_reader(
    reader: impl BufRead,
    max_bytes: u64,
    mut verifier: Verifier,
) -> Result<Verification, ReadError> {
    let mut reader = reader.take(max_bytes.saturating_add(1));
    let mut line = Vec::new();
    let mut total: u64 = 0;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        total = total.saturating_add(read as u64);
        if total > max_bytes {
            return Err(ReadError::TooLarge { limit: max_bytes });
        }
        verifier.push(&line);
        if verifier.is_broken() {
            break;
        }
    }
    Ok(verifier.finish())
}

/// Checks one line (without its newline) against the chain; gives its `hash` and the record.
fn check_line(line: &str, seq: u64, prev: &str) -> Result<(String, Map<String, Value>), String> {
    if line.trim().is_empty() {
        return Err("a blank line inside the journal".into());
    }
    let record = match mcp_recovery_model::json::from_str(line) {
        Ok(Value::Object(record)) => record,
        Ok(_) => return Err("the line is not a JSON object".into()),
        Err(e) => return Err(format!("the line is not JSON ({e})")),
    };
    let found_seq = record.get("seq").and_then(Value::as_u64);
    match found_seq {
        None => return Err("no \"seq\" number".into()),
        Some(found) if found > seq => {
            return Err(format!(
                "seq is {found}, expected {seq}: {} line(s) before it were removed, or lines were \
                 reordered",
                found - seq
            ));
        }
        Some(found) if found < seq => {
            return Err(format!(
                "seq is {found}, expected {seq}: lines were reordered or repeated"
            ));
        }
        Some(_) => {}
    }
    let Some(hash) = record.get("hash").and_then(Value::as_str) else {
        return Err("no \"hash\" string".into());
    };
    match record.get("prev").and_then(Value::as_str) {
        None => return Err("no \"prev\" string".into()),
        Some(found) if found != prev => {
            return Err(
                "\"prev\" is not the previous line's hash: lines were removed, reordered or inserted"
                    .into(),
            );
        }
        Some(_) => {}
    }
    let expected = record_hash(&record);
    if hash != expected {
        return Err(format!(
            "the record does not match its hash (it was edited): hash says {}, content gives {expected}",
            shown(hash)
        ));
    }
    // The spec makes every line canonical: the same record spelled otherwise (whitespace, an
    // escaped letter, a duplicate member, reordered members) is not the line that was written.
    let mut written = Vec::with_capacity(line.len());
    canonical::write_object(&record, None, &mut written);
    if written != line.as_bytes() {
        let at = written
            .iter()
            .zip(line.as_bytes())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| written.len().min(line.len()));
        return Err(format!(
            "the line is not in canonical form (it differs from the record's canonical \
             serialization at byte {}): it was rewritten",
            at + 1
        ));
    }
    Ok((expected, record))
}

#[cfg(test)]
mod tests {
    use crate::broken::shown;

    /// A hash someone wrote into the journal reaches the message inert: line breaks, escape
    /// sequences and the bidirectional overrides that reorder what a reader sees are escaped.
    #[test]
    fn hashes_from_the_file_are_shown_inert() {
        assert_eq!(
            shown("ab\u{202e}cd\u{1b}[2J\n"),
            "ab\\u{202e}cd\\u{1b}[2J\\n"
        );
        assert_eq!(shown(&"f".repeat(100)).len(), 64);
    }
}
