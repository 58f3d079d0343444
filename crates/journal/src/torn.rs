//! An incomplete last line, which a crash inside a write leaves and which no caller was ever
//! told is durable: the next writer moves it (with the record before it, when the line is that
//! record's checkpoint: see [`Torn::unsigned`]) to `JOURNAL.torn-<digest>` beside the journal
//! and cuts the journal back to the whole records it keeps, so the journal is whole again and
//! nothing is deleted.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::hash::hex;
use crate::verify::Torn;

/// An incomplete last line the journal was cut back from when it was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// The file that now holds the bytes set aside.
    pub path: PathBuf,
    /// The line's 1-based number in the journal.
    pub line: usize,
    /// The line's length in bytes.
    pub bytes: u64,
    /// The `seq` of the unsigned record set aside with the line, which was its checkpoint.
    pub unsigned: Option<u64>,
}

/// The file the bytes an incomplete last line of `journal` leaves to set aside are moved to:
/// `JOURNAL.torn-` and the first 16 hex digits of the bytes' sha256.
fn side_path(journal: &Path, bytes: &[u8]) -> PathBuf {
    let mut name = journal.as_os_str().to_owned();
    name.push(".torn-");
    name.push(&hex(&Sha256::digest(bytes))[..16]);
    PathBuf::from(name)
}

/// Moves the incomplete last line `torn` of the journal `file` (at `journal`), and everything
/// from `torn.offset` on, to its own file, synced, then cuts the journal back to `torn.offset`,
/// synced. A file of that name already holding the same bytes (a cut that a crash interrupted)
/// is kept; one holding other bytes, or a link, is refused.
pub(crate) fn set_aside(file: &File, journal: &Path, torn: Torn) -> io::Result<SetAside> {
    let mut reader = file.try_clone()?;
    reader.seek(SeekFrom::Start(torn.offset))?;
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes)?;
    let path = side_path(journal, &bytes);
    let shown = path.display();
    match crate::nofollow::create_like(&path, file) {
        Ok(mut aside) => {
            aside.write_all(&bytes)?;
            aside.sync_all()?;
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let same =
                std::fs::symlink_metadata(&path)?.is_file() && std::fs::read(&path)? == bytes;
            if !same {
                return Err(io::Error::new(
                    e.kind(),
                    format!("{shown} exists and does not hold the bytes to set aside"),
                ));
            }
        }
        Err(e) => return Err(io::Error::new(e.kind(), format!("{shown}: {e}"))),
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // The new name reaches the disk before the bytes leave the journal.
        File::open(dir)?.sync_all()?;
    }
    file.set_len(torn.offset)?;
    file.sync_all()?;
    Ok(SetAside {
        path,
        line: torn.line,
        bytes: torn.bytes,
        unsigned: torn.unsigned,
    })
}
