//! A child runs in a process group of its own, so that everything it starts (`npx` runs
//! `node`, a shell script runs the real server, `sh -c` runs a pipeline) can be ended with it.
//!
//! The standard library can create the group (`CommandExt::process_group`) but not signal it;
//! `rustix` does that without `unsafe` in this crate (it is already in the dependency graph of
//! the workspace through `tempfile`, and wraps `kill(2)` with a negative pid safely).

use std::process::{Child, Command};

/// Puts the child about to be spawned into a new process group whose id is its pid.
pub fn isolate(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        command.process_group(0);
    }
    #[cfg(not(unix))]
    let _ = command;
}

/// Sends SIGKILL to the child's whole process group. Harmless when the group is already empty.
pub fn kill_group(child: &Child) {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal, kill_process_group};
        if let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) {
            // ESRCH: nothing is left in the group, which is the goal.
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
}

/// Ends a child's process group when this process ends, however it ends (`kill -9`
/// included): a shell in that group, deaf to hangups and interrupts, that waits for its stdin
/// to close and then sends SIGKILL to the whole group, itself included. Its stdin is a pipe
/// whose only writer is this process, so it closes when this process exits or drops the
/// reaper. The group keeps its id while the reaper is in it, so the signal never reaches a
/// group that took over the number.
///
/// What it cannot end: a process that left the group (`setsid`, `setpgid`: a server that
/// daemonizes), or any process once the reaper itself was killed on its own.
#[cfg(unix)]
#[derive(Debug)]
pub struct Reaper {
    watcher: Child,
}

#[cfg(unix)]
impl Reaper {
    /// Starts the reaper of the group of `child` (spawned after [`isolate`]). Fails when the
    /// group is already empty, or the shell cannot start.
    pub fn watch(child: &Child) -> std::io::Result<Reaper> {
        use std::os::unix::process::CommandExt as _;
        use std::process::Stdio;
        let group = i32::try_from(child.id()).map_err(std::io::Error::other)?;
        let watcher = Command::new("sh")
            .args(["-c", "trap '' HUP INT TERM; read -r line; kill -KILL 0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(group)
            .spawn()?;
        Ok(Reaper { watcher })
    }
}

#[cfg(unix)]
impl Drop for Reaper {
    /// Ends the group (the reaper reads the end of its stdin) and waits for the reaper.
    fn drop(&mut self) {
        drop(self.watcher.stdin.take());
        let _ = self.watcher.wait();
    }
}
