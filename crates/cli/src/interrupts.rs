//! SIGINT and SIGTERM of `proxy`: the first closes every session as interrupted (each journals
//! its end, cause `interrupt`, and runs the policy's `on-interrupt`); a second ends the process
//! at once.

use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::Failure;

/// The signal that interrupted the proxy, 0 before one did.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// SIGINT and SIGTERM, blocked on the thread that took them (and every thread it starts from
/// then on) until [`Signals::take`] waits for them.
pub struct Signals {
    #[cfg(unix)]
    set: nix::sys::signal::SigSet,
}

/// Blocks SIGINT and SIGTERM on this thread. Call it before any other thread starts, so that
/// no thread takes them with their default action (which ends the process at once).
pub fn block() -> Result<Signals, Failure> {
    #[cfg(unix)]
    {
        use nix::sys::signal::{SigSet, Signal};
        let mut set = SigSet::empty();
        set.add(Signal::SIGINT);
        set.add(Signal::SIGTERM);
        set.thread_block()
            .map_err(|e| Failure::Usage(format!("cannot take SIGINT and SIGTERM: {e}")))?;
        Ok(Signals { set })
    }
    #[cfg(not(unix))]
    Ok(Signals {})
}

impl Signals {
    /// Waits for the signals on a thread of its own: the first closes every session
    /// ([`mcp_recovery_proxy::interrupt`]), then `then` runs with the exit status (128 + the
    /// signal's number); a second exits at once.
    pub fn take(self, then: impl FnOnce(i32) + Send + 'static) {
        #[cfg(unix)]
        std::thread::spawn(move || {
            let Ok(signal) = self.set.wait() else { return };
            SIGNAL.store(signal as i32, Ordering::SeqCst);
            eprintln!("mcp-recovery proxy: {signal}: closing the sessions (again to end at once)");
            let set = self.set;
            std::thread::spawn(move || {
                if let Ok(again) = set.wait() {
                    eprintln!("mcp-recovery proxy: {again}: ending at once");
                    std::process::exit(128 + again as i32);
                }
            });
            mcp_recovery_proxy::interrupt();
            then(128 + signal as i32);
        });
        #[cfg(not(unix))]
        let _ = then;
    }
}

/// The exit status after an interrupt: 128 + the signal's number, as a shell reports a process
/// the signal ended; `None` before an interrupt.
pub fn exit_code() -> Option<ExitCode> {
    let signal = SIGNAL.load(Ordering::SeqCst);
    u8::try_from(128 + signal)
        .ok()
        .filter(|_| signal > 0)
        .map(ExitCode::from)
}
