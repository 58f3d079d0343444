//! Checking a journal's chain.

use std::fmt;
use std::io::{self, BufRead};
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::{GENESIS, canonical, outside, record_hash};

/// The first fault of a journal: its 1-based line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// 1-based line number (0 when the fault is not at a line, such as a missing head).
    pub line: usize,
    /// Why, in words.
    pub reason: String,
}

impl Broken {
    /// A fault at `line`.
    pub fn new(line: usize, reason: impl Into<String>) -> Broken {
        Broken {
            line,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.reason)
        } else {
            write!(f, "line {}: {}", self.line, self.reason)
        }
    }
}

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// Records that verified (all of them when `broken` is `None`).
    pub records: u64,
    /// The `hash` of the last record that verified.
    pub head: Option<String>,
    /// The first fault, if any.
    pub broken: Option<Broken>,
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
            },
            prev: GENESIS.to_owned(),
            line: 0,
            saved: None,
            saved_found: false,
            side_files: None,
        }
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
    /// lack it, and such a line is reported as a truncation.
    pub fn push(&mut self, line: &[u8]) {
        if self.is_broken() {
            return;
        }
        self.line += 1;
        let (body, complete) = match line.strip_suffix(b"\n") {
            Some(body) => (body, true),
            None => (line, false),
        };
        let checked = match std::str::from_utf8(body) {
            Ok(body) => check_line(body, self.report.records + 1, &self.prev),
            Err(e) => Err(format!(
                "the line is not UTF-8 (byte {} of the line)",
                e.valid_up_to() + 1
            )),
        };
        let checked = checked.and_then(|(hash, record)| match &self.side_files {
            Some(journal) => outside::check(&record, journal, false).map(|_| hash),
            None => Ok(hash),
        });
        let hash = match checked {
            Err(reason) if !complete => {
                let reason =
                    format!("the last line is incomplete (the journal was truncated): {reason}");
                return self.fail(reason);
            }
            Err(reason) => return self.fail(reason),
            Ok(_) if !complete => {
                return self.fail(
                    "the last line has no newline: the journal was truncated while it was written"
                        .to_owned(),
                );
            }
            Ok(hash) => hash,
        };
        self.report.records += 1;
        if self.saved.as_deref() == Some(hash.as_str()) {
            self.saved_found = true;
        }
        self.report.head = Some(hash.clone());
        self.prev = hash;
    }

    fn fail(&mut self, reason: String) {
        self.report.broken = Some(Broken::new(self.line, reason));
    }

    /// The outcome: the first fault, or else a saved head that no record had.
    pub fn finish(self) -> Verification {
        let mut report = self.report;
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
                "seq is {found}, expected {seq}: {} line(s) before it were removed",
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

/// A hash from the file, shortened and stripped of control characters for the message.
fn shown(hash: &str) -> String {
    let clean: String = hash.chars().filter(|c| !c.is_control()).take(64).collect();
    clean
}
