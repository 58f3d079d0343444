//! A stdio server runs in a process group of its own, so that everything it starts (`npx` runs
//! `node`, a shell script runs the real server) can be ended with it.
//!
//! The standard library can create the group (`CommandExt::process_group`) but not signal it;
//! `rustix` does that without `unsafe` in this crate (it is already in the dependency graph of
//! the workspace through `tempfile`, and wraps `kill(2)` with a negative pid safely).

use std::process::{Child, Command};

/// Puts the child about to be spawned into a new process group whose id is its pid.
pub(crate) fn isolate(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        command.process_group(0);
    }
    #[cfg(not(unix))]
    let _ = command;
}

/// Sends SIGKILL to the child's whole process group. Harmless when the group is already empty.
pub(crate) fn kill_group(child: &Child) {
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
