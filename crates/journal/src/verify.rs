//! Checking a journal's chain.

use std::fmt;

use serde_json::Value;

use crate::{GENESIS, record_hash};

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
    /// Every record hash, in order, as far as the chain holds.
    pub hashes: Vec<String>,
    /// The first fault, if any.
    pub broken: Option<Broken>,
}

impl Verification {
    /// Checks a head saved earlier: it must be the hash of one of the verified records (the
    /// journal may have grown since, never shrunk or been rewritten).
    pub fn check_head(&self, saved: &str) -> Result<(), Broken> {
        let saved = saved.trim().to_ascii_lowercase();
        if self.hashes.contains(&saved) {
            return Ok(());
        }
        Err(Broken::new(
            0,
            format!(
                "no record has the saved head {saved}: the journal was truncated or rewritten after it was saved"
            ),
        ))
    }
}

/// Verifies a whole journal: every line a JSON object in sequence, each `prev` the previous
/// `hash`, each `hash` the sha256 of the record's canonical form, the last line complete.
/// Blank lines are not allowed inside a journal (they would let lines be hidden), except one
/// trailing newline.
pub fn verify(text: &str) -> Verification {
    let mut report = Verification {
        records: 0,
        head: None,
        hashes: Vec::new(),
        broken: None,
    };
    if text.is_empty() {
        return report;
    }
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    let last = lines.len();
    let mut prev = GENESIS.to_owned();
    for (index, line) in lines.iter().enumerate() {
        let number = index + 1;
        if let Err(reason) = check_line(line, report.records + 1, &prev) {
            let reason = if number == last && !complete {
                format!("the last line is incomplete (the journal was truncated): {reason}")
            } else {
                reason
            };
            report.broken = Some(Broken::new(number, reason));
            return report;
        }
        if number == last && !complete {
            report.broken = Some(Broken::new(
                number,
                "the last line has no newline: the journal was truncated while it was written",
            ));
            return report;
        }
        // check_line succeeded, so the hash member is a string.
        let hash = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| v.get("hash").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_default();
        report.records += 1;
        report.hashes.push(hash.clone());
        report.head = Some(hash.clone());
        prev = hash;
    }
    report
}

fn check_line(line: &str, seq: u64, prev: &str) -> Result<(), String> {
    if line.trim().is_empty() {
        return Err("a blank line inside the journal".into());
    }
    let record = match serde_json::from_str::<Value>(line) {
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
    let expected = record_hash(&record).map_err(|e| format!("cannot canonicalize: {e}"))?;
    if hash != expected {
        return Err(format!(
            "the record does not match its hash (it was edited): hash says {}, content gives {expected}",
            crate::verify::shown(hash)
        ));
    }
    Ok(())
}

/// A hash from the file, shortened and stripped of control characters for the message.
fn shown(hash: &str) -> String {
    let clean: String = hash.chars().filter(|c| !c.is_control()).take(64).collect();
    clean
}
