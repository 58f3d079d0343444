//! Members too large for a line: their canonical bytes go to a content-addressed side file,
//! `JOURNAL.d/sha256-<hex>`, and the record keeps `null` in their place plus their digest and
//! size under `outOfLine`.
//!
//! A server answering with a 40 MiB result must not be able to grow the journal past the cap
//! every reader and the next writer enforce; a line stays at most [`INLINE_MAX_BYTES`] per
//! member, and a side file at most [`SIDE_FILE_MAX_BYTES`], the one limit of writing and reading
//! it. A member larger than that is not kept at all (`"kept": false`): only its digest and size.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::hash::hex;

/// A member whose canonical form is longer than this is written out of line.
pub const INLINE_MAX_BYTES: usize = 64 * 1024;

/// The largest side file written, and the largest read back (the proxy's message limit).
pub const SIDE_FILE_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The most `plan` and `rollback` read back from side files in one run: four side files of the
/// largest size.
pub const READ_BACK_MAX_BYTES: u64 = 4 * SIDE_FILE_MAX_BYTES;

/// The member naming what was moved out of line.
pub const OUT_OF_LINE: &str = "outOfLine";

/// The side-file directory of the journal at `journal`: `JOURNAL.d` beside it.
pub fn side_dir(journal: &Path) -> PathBuf {
    let mut name = journal.as_os_str().to_owned();
    name.push(".d");
    PathBuf::from(name)
}

/// Moves every member of `record` longer than [`INLINE_MAX_BYTES`] (other than `reserved`) to
/// a side file of `journal`, synced before the record that names it is written.
pub(crate) fn move_out(
    record: &mut Map<String, Value>,
    journal: &Path,
    reserved: &[&str],
) -> io::Result<()> {
    let mut moved = Map::new();
    for (name, value) in record.iter_mut() {
        if reserved.contains(&name.as_str()) || name == OUT_OF_LINE {
            continue;
        }
        let mut bytes = Vec::new();
        canonical::write(value, &mut bytes);
        if bytes.len() <= INLINE_MAX_BYTES {
            continue;
        }
        let digest = hex(&Sha256::digest(&bytes));
        let mut entry = Map::new();
        entry.insert("sha256".into(), Value::from(digest.as_str()));
        entry.insert("bytes".into(), Value::from(bytes.len()));
        if bytes.len() as u64 <= SIDE_FILE_MAX_BYTES {
            write_side_file(journal, &digest, &bytes)?;
        } else {
            entry.insert("kept".into(), Value::Bool(false));
        }
        moved.insert(name.clone(), Value::Object(entry));
        *value = Value::Null;
    }
    if !moved.is_empty() {
        record.insert(OUT_OF_LINE.into(), Value::Object(moved));
    }
    Ok(())
}

/// Writes a side file once (its name is its content's digest): to a temporary name, synced,
/// then renamed, so a crash never leaves a partial file under the final name.
fn write_side_file(journal: &Path, digest: &str, bytes: &[u8]) -> io::Result<()> {
    let dir = side_dir(journal);
    let path = dir.join(format!("sha256-{digest}"));
    if std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64) {
        return Ok(());
    }
    std::fs::create_dir_all(&dir)?;
    let temporary = dir.join(format!(".sha256-{digest}.{}", std::process::id()));
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_data()?;
    drop(file);
    std::fs::rename(&temporary, &path)?;
    // The directory entry reaches the disk before the record naming it does.
    File::open(&dir)?.sync_all()
}

/// Why an out-of-line member cannot be read back or does not match its record.
fn side_fault(name: &str, why: impl std::fmt::Display) -> String {
    format!("the out-of-line \"{name}\" {why}")
}

/// Checks the `outOfLine` member of a record against the side files of `journal`; with `load`,
/// also gives back each kept member's value (parsed from its side file).
pub(crate) fn check(
    record: &Map<String, Value>,
    journal: &Path,
    load: bool,
) -> Result<Vec<(String, Value)>, String> {
    let Some(moved) = record.get(OUT_OF_LINE) else {
        return Ok(Vec::new());
    };
    let Value::Object(moved) = moved else {
        return Err(format!("\"{OUT_OF_LINE}\" is not an object"));
    };
    let mut values = Vec::new();
    for (name, entry) in moved {
        let digest = entry.get("sha256").and_then(Value::as_str);
        let size = entry.get("bytes").and_then(Value::as_u64);
        let (Some(digest), Some(size)) = (digest, size) else {
            return Err(side_fault(
                name,
                "has no \"sha256\" string or \"bytes\" number",
            ));
        };
        if record.get(name) != Some(&Value::Null) {
            return Err(side_fault(name, "is not null in the record"));
        }
        if digest.len() != 64
            || !digest
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(side_fault(
                name,
                "has a \"sha256\" that is not 64 lowercase hex digits",
            ));
        }
        if entry.get("kept") == Some(&Value::Bool(false)) {
            if size <= SIDE_FILE_MAX_BYTES {
                return Err(side_fault(
                    name,
                    "is not kept though it is within the limit",
                ));
            }
            continue;
        }
        if size > SIDE_FILE_MAX_BYTES {
            return Err(side_fault(
                name,
                format!("is larger than the limit of {SIDE_FILE_MAX_BYTES} bytes"),
            ));
        }
        let path = side_dir(journal).join(format!("sha256-{digest}"));
        let shown = path.display();
        let bytes = read_capped(&path)
            .map_err(|e| side_fault(name, format!("cannot be read from {shown}: {e}")))?;
        if bytes.len() as u64 != size {
            return Err(side_fault(
                name,
                format!(
                    "is {} bytes in {shown}, the record says {size}",
                    bytes.len()
                ),
            ));
        }
        if hex(&Sha256::digest(&bytes)) != digest {
            return Err(side_fault(
                name,
                format!("in {shown} does not match its sha256 (it was edited)"),
            ));
        }
        if load {
            let value = mcp_recovery_model::json::from_slice(&bytes)
                .map_err(|e| side_fault(name, format!("in {shown} is not JSON: {e}")))?;
            values.push((name.clone(), value));
        }
    }
    Ok(values)
}

/// A side file, refused past [`SIDE_FILE_MAX_BYTES`] before the bytes past it are read.
fn read_capped(path: &Path) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    mcp_recovery_base::read::read_up_to(file, SIDE_FILE_MAX_BYTES, 0)?.ok_or_else(|| {
        io::Error::other(format!(
            "larger than the limit of {SIDE_FILE_MAX_BYTES} bytes"
        ))
    })
}

/// The journal text with every out-of-line member of `session`'s records (every session's
/// when `None`) put back in its line, for readers of the calls (`plan`, `rollback`): the lines
/// given back are not the journal's (their hashes no longer match); at most `budget` bytes are
/// read back in all.
pub fn inline_out_of_line(
    text: &str,
    journal: &Path,
    session: Option<&str>,
    budget: u64,
) -> Result<String, crate::broken::Broken> {
    let mut out = String::with_capacity(text.len());
    let mut read: u64 = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let fail = |reason: String| crate::broken::Broken::new(index + 1, reason);
        if !line.contains(OUT_OF_LINE) {
            out.push_str(line);
            continue;
        }
        let Ok(Value::Object(mut record)) = mcp_recovery_model::json::from_str(line) else {
            out.push_str(line);
            continue;
        };
        let own = record.get("session").and_then(Value::as_str);
        if session.is_some_and(|wanted| own != Some(wanted)) || !record.contains_key("hash") {
            out.push_str(line);
            continue;
        }
        for (name, value) in check(&record, journal, true).map_err(fail)? {
            let mut bytes = Vec::new();
            canonical::write(&value, &mut bytes);
            read = read.saturating_add(bytes.len() as u64);
            if read > budget {
                return Err(fail(format!(
                    "the out-of-line members read back are larger than the limit of {budget} bytes"
                )));
            }
            record.insert(name, value);
        }
        record.remove(OUT_OF_LINE);
        let mut bytes = Vec::new();
        canonical::write_object(&record, None, &mut bytes);
        out.push_str(&String::from_utf8_lossy(&bytes));
        out.push('\n');
    }
    Ok(out)
}
