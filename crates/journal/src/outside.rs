//! Members too large for a line: their canonical bytes go to a content-addressed side file,
//! `JOURNAL.d/sha256-<hex>`, and the record keeps `null` in their place plus their digest and
//! size under `outOfLine`.
//!
//! A server answering with a 40 MiB result must not be able to grow the journal past the cap
//! every reader and the next writer enforce; a line stays at most [`INLINE_MAX_BYTES`] per
//! member, and a side file at most [`SIDE_FILE_MAX_BYTES`], the one limit of writing and reading
//! it. A member larger than that is not kept at all (`"kept": false`): only its digest and size;
//! nor are the arguments of a refused call, of which an audit needs no more. Side files count
//! against the journal's cap with the journal itself.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::hash::hex;
use crate::nofollow;

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

/// The member a `kind` record never keeps: of a refused call's `arguments` its `approval`
/// record (one that denies) keeps only their digest and size, as of a member too large to keep.
fn never_kept(kind: &str, record: &Map<String, Value>) -> Option<&'static str> {
    let refused = record.get("decision").and_then(Value::as_str) == Some("deny");
    (kind == "approval" && refused).then_some("arguments")
}

/// A member's canonical bytes, bound for the side file named by their digest.
pub(crate) struct SideFile {
    digest: String,
    bytes: Vec<u8>,
}

/// Moves every member of a `kind` record longer than [`INLINE_MAX_BYTES`] (other than
/// `reserved`) out of the line, and gives the side files to write before the record; the
/// arguments of a refused call, and a member larger than [`SIDE_FILE_MAX_BYTES`], leave only
/// their digest and size (`"kept": false`).
pub(crate) fn move_out(
    record: &mut Map<String, Value>,
    kind: &str,
    reserved: &[&str],
) -> Vec<SideFile> {
    let mut moved = Map::new();
    let mut side_files: Vec<SideFile> = Vec::new();
    let never_kept = never_kept(kind, record);
    for (name, value) in record.iter_mut() {
        if reserved.contains(&name.as_str()) || name == OUT_OF_LINE {
            continue;
        }
        let digest_only = never_kept == Some(name.as_str());
        let mut bytes = Vec::new();
        canonical::write(value, &mut bytes);
        if bytes.len() <= INLINE_MAX_BYTES && !digest_only {
            continue;
        }
        let digest = hex(&Sha256::digest(&bytes));
        let mut entry = Map::new();
        entry.insert("sha256".into(), Value::from(digest.as_str()));
        entry.insert("bytes".into(), Value::from(bytes.len()));
        if digest_only || bytes.len() as u64 > SIDE_FILE_MAX_BYTES {
            entry.insert("kept".into(), Value::Bool(false));
        } else if side_files.iter().all(|side| side.digest != digest) {
            side_files.push(SideFile { digest, bytes });
        }
        moved.insert(name.clone(), Value::Object(entry));
        *value = Value::Null;
    }
    if !moved.is_empty() {
        record.insert(OUT_OF_LINE.into(), Value::Object(moved));
    }
    side_files
}

/// The bytes of every regular file in the side-file directory of `journal` (0 when there is
/// none), from their metadata alone: what the side files already take of the journal's cap.
pub(crate) fn side_bytes(journal: &Path) -> io::Result<u64> {
    let entries = match std::fs::read_dir(side_dir(journal)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        entries => entries?,
    };
    let mut total = 0u64;
    for entry in entries {
        // Not through a link: a link is no side file.
        let metadata = entry?.metadata()?;
        if metadata.is_file() {
            total = total.saturating_add(metadata.len());
        }
    }
    Ok(total)
}

impl SideFile {
    /// Its size.
    pub(crate) fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Whether `journal`'s side-file directory holds it already: its name is its content's
    /// digest, so a file of that name and size costs nothing more.
    pub(crate) fn present(&self, journal: &Path) -> io::Result<bool> {
        let dir = side_dir(journal);
        nofollow::refuse_link(&dir)?;
        let path = dir.join(format!("sha256-{}", self.digest));
        nofollow::refuse_link(&path)?;
        Ok(std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == self.len()))
    }

    /// Writes it beside `journal`: to a temporary name, synced, then renamed, so a crash never
    /// leaves a partial file under the final name.
    /// It takes the permissions of the journal file `like`.
    pub(crate) fn write(&self, journal: &Path, like: &File) -> io::Result<()> {
        let (digest, bytes) = (&self.digest, &self.bytes);
        let dir = side_dir(journal);
        nofollow::refuse_link(&dir)?;
        let path = dir.join(format!("sha256-{digest}"));
        nofollow::refuse_link(&path)?;
        std::fs::create_dir_all(&dir)?;
        let temporary = dir.join(format!(".sha256-{digest}.{}", std::process::id()));
        // What a crash left under this name, a link included, is replaced, never written
        // through.
        let _ = std::fs::remove_file(&temporary);
        let written = nofollow::create_like(&temporary, like).and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_data()
        });
        if let Err(e) = written {
            // A full disk keeps no partial copy.
            let _ = std::fs::remove_file(&temporary);
            return Err(e);
        }
        std::fs::rename(&temporary, &path)?;
        // The directory entry reaches the disk before the record naming it does.
        File::open(&dir)?.sync_all()
    }
}

/// Why an out-of-line member cannot be read back or does not match its record.
fn side_fault(name: &str, why: impl std::fmt::Display) -> String {
    format!("the out-of-line \"{name}\" {why}")
}

/// The side files read back in one run: each once, however many records name it, and at most
/// `budget` bytes in all.
pub(crate) struct ReadBack {
    budget: u64,
    read: u64,
    values: HashMap<String, Value>,
}

/// Checks the `outOfLine` member of a record against the side files of `journal`; with `load`,
/// also gives back each kept member's value (parsed from its side file, or as read before).
pub(crate) fn check(
    record: &Map<String, Value>,
    journal: &Path,
    mut load: Option<&mut ReadBack>,
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
            let kind = record
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if size <= SIDE_FILE_MAX_BYTES && never_kept(kind, record) != Some(name.as_str()) {
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
        if let Some(back) = load.as_deref_mut() {
            if let Some(value) = back.values.get(digest) {
                values.push((name.clone(), value.clone()));
                continue;
            }
            back.read = back.read.saturating_add(size);
            if back.read > back.budget {
                return Err(format!(
                    "the out-of-line members read back are larger than the limit of {} bytes",
                    back.budget
                ));
            }
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
        if let Some(back) = load.as_deref_mut() {
            let value = mcp_recovery_model::json::from_slice(&bytes)
                .map_err(|e| side_fault(name, format!("in {shown} is not JSON: {e}")))?;
            back.values.insert(digest.to_owned(), value.clone());
            values.push((name.clone(), value));
        }
    }
    Ok(values)
}

/// A side file, refused past [`SIDE_FILE_MAX_BYTES`] before the bytes past it are read.
fn read_capped(path: &Path) -> io::Result<Vec<u8>> {
    if let Some(dir) = path.parent() {
        nofollow::refuse_link(dir)?;
    }
    let file = nofollow::open(path, OpenOptions::new().read(true))?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    mcp_recovery_base::read::read_up_to(file, SIDE_FILE_MAX_BYTES, 0)?.ok_or_else(|| {
        io::Error::other(format!(
            "larger than the limit of {SIDE_FILE_MAX_BYTES} bytes"
        ))
    })
}

/// The journal text with the out-of-line members of `session`'s records (every session's when
/// `None`) put back in their lines, for readers of the calls (`plan`, `rollback`): the lines given
/// back are not the journal's (their hashes no longer match). Only the records `read_back`
/// accepts are read back, each side file once however many records name it, at most `budget`
/// bytes in all; in the others each out-of-line member is given as `{}`, present and empty (a
/// result not read back still says its call completed).
pub fn inline_out_of_line(
    text: &str,
    journal: &Path,
    session: Option<&str>,
    budget: u64,
    read_back: &mut dyn FnMut(&Map<String, Value>) -> bool,
) -> Result<String, crate::broken::Broken> {
    let mut out = String::with_capacity(text.len());
    let mut back = ReadBack {
        budget,
        read: 0,
        values: HashMap::new(),
    };
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
        let values = if read_back(&record) {
            check(&record, journal, Some(&mut back)).map_err(fail)?
        } else {
            let moved = record.get(OUT_OF_LINE).and_then(Value::as_object);
            moved
                .into_iter()
                .flat_map(|moved| moved.keys())
                .map(|name| (name.clone(), Value::Object(Map::new())))
                .collect()
        };
        record.extend(values);
        record.remove(OUT_OF_LINE);
        let mut bytes = Vec::new();
        canonical::write_object(&record, None, &mut bytes);
        out.push_str(&String::from_utf8_lossy(&bytes));
        out.push('\n');
    }
    Ok(out)
}
