//! Work over many inputs on several threads, with results handed on in the inputs' order.
//!
//! `lint` of many files reads and lints them on every core, and prints as one thread would: a
//! result is handed on only when every earlier one has been. Workers run ahead of the oldest
//! unfinished input, so that a large file does not leave the other cores idle: always by up to
//! `2 × threads` inputs, and by up to `16 × threads` while the results waiting for their turn weigh
//! less than [`WAITING_BUDGET`] (a lint result weighs its file's bytes). Memory is therefore bounded
//! by the files in flight, whatever the number of files or the size of the slowest one.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The weight of the results waiting for their turn past which workers run ahead by no more than
/// `2 × threads` inputs.
pub const WAITING_BUDGET: usize = 16 << 20;

/// What the workers and the caller share.
struct State<R> {
    /// The next input to start.
    next: usize,
    /// How many results were handed on.
    emitted: usize,
    /// Finished results waiting for their turn, with their weights.
    done: BTreeMap<usize, (R, usize)>,
    /// The weights of `done`, summed.
    waiting: usize,
    /// Set when the caller stops early or a worker panicked: workers take no more inputs.
    stop: bool,
    /// Set when a worker panicked, so the caller stops waiting for its result.
    panicked: bool,
    /// Threads waiting for a change: a change is announced only when one waits, since an
    /// announcement costs a system call and small inputs change the state thousands of times.
    sleepers: usize,
}

struct Shared<R> {
    state: Mutex<State<R>>,
    changed: Condvar,
}

impl<R> Shared<R> {
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for a change of the state.
    fn sleep<'a>(&self, mut guard: MutexGuard<'a, State<R>>) -> MutexGuard<'a, State<R>> {
        guard.sleepers += 1;
        let mut guard = self
            .changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner);
        guard.sleepers -= 1;
        guard
    }

    /// Releases the state, announcing the change to the threads waiting for one.
    fn release(&self, guard: MutexGuard<'_, State<R>>) {
        let wake = guard.sleepers > 0;
        drop(guard);
        if wake {
            self.changed.notify_all();
        }
    }
}

/// Tells the other threads when one unwinds, so that none waits for a result or a change that
/// will not come.
struct PanicGuard<'a, R>(&'a Shared<R>);

impl<R> Drop for PanicGuard<'_, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut state = self.0.lock();
            state.stop = true;
            state.panicked = true;
            self.0.changed.notify_all();
        }
    }
}

/// Runs `work` on each item with up to `threads` workers and calls `emit` with each result, in
/// the order of `items`, on the calling thread; `weight` tells what a result holds (in bytes). The
/// first error of `emit` stops the workers and is returned; a panic in `work` is resumed on the
/// calling thread.
///
/// With one thread (or one item) everything runs on the calling thread; with more, the calling
/// thread is one of the workers.
pub fn map_in_order<T, R, E>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T) -> R + Sync,
    weight: impl Fn(&R) -> usize + Sync,
    mut emit: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().try_for_each(|item| emit(work(item)));
    }
    // Items started but not yet handed on, besides the one being handed on.
    let may_start = |state: &State<R>| {
        let ahead = state.next - state.emitted;
        ahead < 2 * threads - 1 || (ahead < 16 * threads - 1 && state.waiting < WAITING_BUDGET)
    };
    let shared = Shared {
        state: Mutex::new(State {
            next: 0,
            emitted: 0,
            done: BTreeMap::new(),
            waiting: 0,
            stop: false,
            panicked: false,
            sleepers: 0,
        }),
        changed: Condvar::new(),
    };
    // The next input to start, when the run goes on and the window allows one.
    let claim = |state: &mut State<R>| {
        let open = !state.stop && state.next < items.len() && may_start(state);
        open.then(|| {
            state.next += 1;
            state.next - 1
        })
    };
    let finish = |index: usize, result: R| {
        let weight = weight(&result);
        let mut state = shared.lock();
        state.waiting += weight;
        state.done.insert(index, (result, weight));
        shared.release(state);
    };
    std::thread::scope(|scope| {
        // The calling thread is one of the workers.
        for _ in 1..threads {
            scope.spawn(|| {
                let _guard = PanicGuard(&shared);
                loop {
                    let mut state = shared.lock();
                    let index = loop {
                        if state.stop || state.next >= items.len() {
                            break None;
                        }
                        if let Some(index) = claim(&mut state) {
                            break Some(index);
                        }
                        state = shared.sleep(state);
                    };
                    drop(state);
                    let Some(index) = index else { break };
                    finish(index, work(&items[index]));
                }
            });
        }
        // The calling thread hands the results on in order and, while the one it needs is not
        // in, starts the next input itself rather than wait.
        let _guard = PanicGuard(&shared);
        let mut outcome = Ok(());
        for index in 0..items.len() {
            let result = loop {
                let mut state = shared.lock();
                if let Some((result, weight)) = state.done.remove(&index) {
                    state.emitted = index + 1;
                    state.waiting -= weight;
                    shared.release(state);
                    break Some(result);
                }
                if state.panicked {
                    break None;
                }
                if let Some(started) = claim(&mut state) {
                    drop(state);
                    finish(started, work(&items[started]));
                } else {
                    drop(shared.sleep(state));
                }
            };
            let Some(result) = result else { break };
            if let Err(error) = emit(result) {
                outcome = Err(error);
                break;
            }
        }
        let mut state = shared.lock();
        state.stop = true;
        shared.release(state);
        outcome
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn results_come_in_the_order_of_the_items() {
        let items: Vec<u64> = (0..500).collect();
        for threads in [1, 2, 3, 8] {
            let mut seen = Vec::new();
            let outcome: Result<(), ()> = map_in_order(
                &items,
                threads,
                |n| {
                    // Uneven work, so that later items often finish first.
                    std::hint::black_box((0..(n % 7) * 1000).sum::<u64>());
                    *n
                },
                |_| 1,
                |n| {
                    seen.push(n);
                    Ok(())
                },
            );
            assert_eq!(outcome, Ok(()));
            assert_eq!(seen, items, "{threads} threads");
        }
    }

    /// The most results of `weight` each that exist at once over a run of 400 items on 2 threads.
    fn most_alive(weight: usize) -> usize {
        let items: Vec<usize> = (0..400).collect();
        let alive = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        /// Counts itself while it exists.
        struct Held<'a>(&'a AtomicUsize);
        impl Drop for Held<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let outcome: Result<(), ()> = map_in_order(
            &items,
            2,
            |n| {
                let now = alive.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                if n % 50 == 0 {
                    // A slow item, for the others to run ahead of.
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Held(&alive)
            },
            |_| weight,
            |held| {
                drop(held);
                Ok(())
            },
        );
        assert_eq!(outcome, Ok(()));
        assert_eq!(alive.load(Ordering::SeqCst), 0);
        most.load(Ordering::SeqCst)
    }

    #[test]
    fn heavy_results_keep_two_per_thread_at_most() {
        let most = most_alive(WAITING_BUDGET);
        assert!(most <= 4, "{most}");
    }

    #[test]
    fn light_results_let_workers_run_ahead_of_a_slow_item_boundedly() {
        let most = most_alive(1);
        assert!((5..=32).contains(&most), "{most}");
    }

    #[test]
    fn the_first_error_stops_the_run() {
        let items: Vec<usize> = (0..10_000).collect();
        let started = AtomicUsize::new(0);
        let mut emitted = Vec::new();
        let outcome = map_in_order(
            &items,
            2,
            |n| {
                started.fetch_add(1, Ordering::SeqCst);
                *n
            },
            |_| 1,
            |n| {
                if n == 10 {
                    return Err(format!("item {n}"));
                }
                emitted.push(n);
                Ok(())
            },
        );
        assert_eq!(outcome, Err("item 10".to_owned()));
        assert_eq!(emitted, (0..10).collect::<Vec<_>>());
        // The window bounds what was started after the error.
        assert!(started.load(Ordering::SeqCst) <= 11 + 32);
    }

    #[test]
    fn a_panicking_worker_ends_the_run_instead_of_hanging_it() {
        let items: Vec<usize> = (0..100).collect();
        let caught = std::panic::catch_unwind(|| {
            map_in_order(
                &items,
                2,
                |n| {
                    assert_ne!(*n, 37, "item 37");
                    *n
                },
                |_| 1,
                |_| Ok::<(), ()>(()),
            )
        });
        assert!(caught.is_err());
    }
}
