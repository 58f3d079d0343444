//! Progress of long runs on stderr (which server is starting, files done of total, elapsed):
//! drawn only when stderr is a terminal and `--quiet` is not given, and cleared when the run
//! ends, so logs, pipes and CI never see any of it.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the elapsed time is redrawn.
const TICK: Duration = Duration::from_millis(120);

/// A progress line, or nothing.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

/// Whether progress is drawn: stderr is a terminal and the run is not `--quiet`.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

impl Progress {
    /// A count of `total` steps (`12/40 files · 3s`), when `shown`.
    pub fn counter(shown: bool, total: usize, unit: &str) -> Self {
        let bar = shown.then(|| {
            let style = ProgressStyle::with_template(&format!(
                "{{spinner}} {{pos}}/{{len}} {unit} · {{elapsed}} {{wide_msg}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
            let bar = ProgressBar::with_draw_target(
                Some(u64::try_from(total).unwrap_or(u64::MAX)),
                ProgressDrawTarget::stderr(),
            )
            .with_style(style);
            bar.enable_steady_tick(TICK);
            bar
        });
        Self { bar }
    }

    /// A spinner with a message and the time elapsed, when `shown`.
    pub fn spinner(shown: bool) -> Self {
        let bar = shown.then(|| {
            let style = ProgressStyle::with_template("{spinner} {msg} · {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            let bar =
                ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(style);
            bar.enable_steady_tick(TICK);
            bar
        });
        Self { bar }
    }

    /// Says what is happening now (`message` must already be inert).
    pub fn say(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }

    /// One more step done.
    pub fn step(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// `done` steps done in all.
    pub fn step_to(&self, done: usize) {
        if let Some(bar) = &self.bar {
            bar.set_position(u64::try_from(done).unwrap_or(u64::MAX));
        }
    }

    /// Runs `f` (which writes to stderr) with the progress line out of the way, so that the two
    /// never mix.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }
}

impl Drop for Progress {
    /// The line disappears when the work is done (or given up on).
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
