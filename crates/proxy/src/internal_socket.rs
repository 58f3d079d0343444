//! The Unix socket a gate relays its admitted connections to, for the HTTP server behind it.
//!
//! It is `http.sock` in a private directory (mode 0700) of the temporary directory, so no other
//! user can connect to it and bypass the gate. The directory is removed when the socket is
//! dropped; its name holds the process id (`PREFIX<pid>-<random>`), and binding first removes
//! the directories of the same prefix and owner whose process no longer runs, so what a killed
//! proxy left is gone at the next start.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::path::Path;

/// Where the HTTP server listens, for the gate to connect to.
pub(crate) struct InternalSocket {
    address: SocketAddr,
    /// The private directory holding the socket file.
    _dir: tempfile::TempDir,
}

impl InternalSocket {
    /// Binds a fresh socket; `prefix` names what it serves.
    pub(crate) fn bind(prefix: &str) -> std::io::Result<(InternalSocket, UnixListener)> {
        let tmp = std::env::temp_dir();
        reclaim(&tmp, prefix);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{prefix}{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&tmp)?;
        let listener = UnixListener::bind(dir.path().join("http.sock"))?;
        let address = listener.local_addr()?;
        Ok((InternalSocket { address, _dir: dir }, listener))
    }

    /// A new connection to the HTTP server.
    pub(crate) fn connect(&self) -> std::io::Result<UnixStream> {
        UnixStream::connect_addr(&self.address)
    }
}

/// Removes the directories `PREFIX<pid>-…` in `tmp` owned by this user whose process has
/// ended; what cannot be read or removed is left.
fn reclaim(tmp: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let ours = std::fs::symlink_metadata(entry.path())
            .is_ok_and(|meta| meta.is_dir() && meta.uid() == me);
        if ours && !running(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether process `pid` runs (a process of another user counts as running).
fn running(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}
