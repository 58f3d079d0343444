//! Threads kept for the connection gate's relays. A client that opens a connection per request
//! would otherwise cost two thread starts (and their stacks) a request; a relay direction that
//! ends leaves its thread waiting for the next one, for at most [`IDLE`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How long a thread with nothing to do waits for work before it ends.
const IDLE: Duration = Duration::from_secs(60);

type Job = Box<dyn FnOnce() + Send>;

/// The threads, and the jobs handed to those waiting.
pub(crate) struct Workers {
    shared: Arc<Shared>,
    jobs: Sender<Job>,
}

struct Shared {
    queue: Mutex<Receiver<Job>>,
    /// Threads waiting for a job that no job has been promised to yet.
    idle: AtomicUsize,
}

impl Workers {
    pub(crate) fn new() -> Workers {
        let (jobs, queue) = channel();
        Workers {
            shared: Arc::new(Shared {
                queue: Mutex::new(queue),
                idle: AtomicUsize::new(0),
            }),
            jobs,
        }
    }

    /// Runs `job` on a waiting thread, or on a new one when none waits: a job never waits for a
    /// thread that is busy.
    pub(crate) fn run(&self, job: impl FnOnce() + Send + 'static) {
        let job: Job = Box::new(job);
        let job = if self.shared.claim() {
            match self.jobs.send(job) {
                Ok(()) => return,
                Err(returned) => returned.0,
            }
        } else {
            job
        };
        let shared = Arc::clone(&self.shared);
        std::thread::spawn(move || {
            job();
            shared.serve();
        });
    }
}

impl Shared {
    /// Promises the next job to a waiting thread, when one is not promised one yet.
    fn claim(&self) -> bool {
        self.idle
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Takes jobs until none comes for [`IDLE`] (and none is promised to this thread).
    fn serve(&self) {
        loop {
            self.idle.fetch_add(1, Ordering::AcqRel);
            let job = loop {
                let next = self
                    .queue
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .recv_timeout(IDLE);
                match next {
                    Ok(job) => break job,
                    // Ends only when no job was promised against it meanwhile.
                    Err(RecvTimeoutError::Timeout) if self.claim() => return,
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            };
            job();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Barrier;

    use super::*;

    /// Jobs that all wait for each other finish: each got a thread of its own, so none waited
    /// behind a busy one; a later job runs on a thread kept from them.
    #[test]
    fn every_job_runs_at_once_and_threads_are_kept() {
        let workers = Workers::new();
        let together = Arc::new(Barrier::new(5));
        let (done, finished) = channel();
        for _ in 0..4 {
            let (together, done) = (Arc::clone(&together), done.clone());
            workers.run(move || {
                together.wait();
                let _ = done.send(std::thread::current().id());
            });
        }
        together.wait();
        let first: Vec<_> = (0..4).map(|_| finished.recv().unwrap()).collect();
        // Wait until the four threads wait for work again, then hand them one more job.
        while workers.shared.idle.load(Ordering::Acquire) < 4 {
            std::thread::yield_now();
        }
        workers.run(move || {
            let _ = done.send(std::thread::current().id());
        });
        let again = finished.recv().unwrap();
        assert!(first.contains(&again));
    }
}
