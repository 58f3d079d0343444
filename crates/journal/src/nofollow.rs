//! The files kept beside a journal (`JOURNAL.lock`, `JOURNAL.d` and the side files in it) are
//! never reached through a symbolic link at their own name: a link planted there would have its
//! target truncated, written or read in their place. Those it creates (side files, an
//! incomplete last line set aside) take the journal's permissions, so none is readable by more
//! users than the journal.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Refuses `path` when it is a symbolic link, with an error naming it.
pub(crate) fn refuse_link(path: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symbolic link, which is never followed; remove it",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// Opens `path` with `options`, never through a symbolic link at `path` itself (refused with
/// an error naming it); links on the way to it are followed.
pub(crate) fn open(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    refuse_link(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A link planted between the check and the open fails the open.
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    options
        .open(path)
        .map_err(|e| refuse_link(path).err().unwrap_or(e))
}

/// Creates `path`, which must not exist yet, for writing, with the permissions of `journal` (on
/// Unix; elsewhere the default ones).
pub(crate) fn create_like(path: &Path, journal: &File) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(journal.metadata()?.permissions().mode() & 0o777);
    }
    #[cfg(not(unix))]
    let _ = journal;
    options.open(path)
}
