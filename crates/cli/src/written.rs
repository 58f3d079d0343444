//! Files a command writes (reports, baselines, drafts, saves): each is written to a temporary
//! file beside it and renamed over it once complete. A run that fails leaves what was there, a
//! reader never sees half a file, and a symbolic link in its place is replaced, never followed
//! out of the tree.

use std::io::Write;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::Failure;

/// A file being written; [`Replacing::commit`] puts it in place.
pub struct Replacing {
    file: NamedTempFile,
    path: PathBuf,
}

impl Replacing {
    /// Starts writing `path` (its directory must exist): fails at once when it cannot be.
    pub fn start(path: &Path) -> Result<Self, Failure> {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let file = NamedTempFile::new_in(dir).map_err(|source| failure(path, source))?;
        Ok(Self {
            file,
            path: path.to_owned(),
        })
    }

    /// Where the text goes until it is committed.
    pub fn writer(&mut self) -> &mut std::fs::File {
        self.file.as_file_mut()
    }

    /// Replaces the file with what was written (readable by all, as a new file would be).
    pub fn commit(self) -> Result<(), Failure> {
        let Self { file, path } = self;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let readable = std::fs::Permissions::from_mode(0o644);
            std::fs::set_permissions(file.path(), readable).map_err(|e| failure(&path, e))?;
        }
        file.as_file().sync_all().map_err(|e| failure(&path, e))?;
        file.persist(&path).map_err(|e| failure(&path, e.error))?;
        Ok(())
    }
}

/// Writes `bytes` as the whole of `path`, replacing it.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let mut replacing = Replacing::start(path)?;
    replacing
        .writer()
        .write_all(bytes)
        .map_err(|e| failure(path, e))?;
    replacing.commit()
}

fn failure(path: &Path, source: std::io::Error) -> Failure {
    Failure::WriteFile {
        path: path.display().to_string(),
        source,
    }
}

/// Writes a command's report to stdout. A reader that stops early (`census … | head -1`) loses
/// the rest, and the run goes on: the files it writes are still written and its exit status
/// still says what became of every source.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
