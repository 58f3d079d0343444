//! Work over many inputs on several threads, with results handed on in the inputs' order.
//!
//! `lint` of many files reads and lints them on every core, and prints as one thread would: a
//! result is handed on only when every earlier one has been. At most `2 × threads` results exist
//! at once (in work, waiting for their turn or being handed on), so memory is bounded by the files in flight,
//! whatever the number of files or the size of the slowest one.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// What the workers and the caller share.
struct State<R> {
    /// The next input to start.
    next: usize,
    /// How many results were handed on.
    emitted: usize,
    /// Finished results waiting for their turn.
    done: BTreeMap<usize, R>,
    /// Set when the caller stops early or a worker panicked: workers take no more inputs.
    stop: bool,
    /// Set when a worker panicked, so the caller stops waiting for its result.
    panicked: bool,
}

struct Shared<R> {
    state: Mutex<State<R>>,
    changed: Condvar,
}

impl<R> Shared<R> {
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State<R>>) -> MutexGuard<'a, State<R>> {
        self.changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Tells the caller when a worker unwinds, so that it never waits for a result that will not come.
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
/// the order of `items`, on the calling thread. The first error of `emit` stops the workers and
/// is returned; a panic in `work` is resumed on the calling thread.
///
/// With one thread (or one item) everything runs on the calling thread.
pub fn map_in_order<T, R, E>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T) -> R + Sync,
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
    // Items started but not yet handed on; with the one being handed on, 2 × threads in all.
    let window = 2 * threads - 1;
    let shared = Shared {
        state: Mutex::new(State {
            next: 0,
            emitted: 0,
            done: BTreeMap::new(),
            stop: false,
            panicked: false,
        }),
        changed: Condvar::new(),
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let _guard = PanicGuard(&shared);
                loop {
                    let index = {
                        let mut state = shared.lock();
                        while !state.stop
                            && state.next < items.len()
                            && state.next >= state.emitted + window
                        {
                            state = shared.wait(state);
                        }
                        if state.stop || state.next >= items.len() {
                            break;
                        }
                        state.next += 1;
                        state.next - 1
                    };
                    let result = work(&items[index]);
                    shared.lock().done.insert(index, result);
                    shared.changed.notify_all();
                }
            });
        }
        let mut outcome = Ok(());
        for index in 0..items.len() {
            let result = {
                let mut state = shared.lock();
                loop {
                    if let Some(result) = state.done.remove(&index) {
                        state.emitted = index + 1;
                        break Some(result);
                    }
                    if state.panicked {
                        break None;
                    }
                    state = shared.wait(state);
                }
            };
            shared.changed.notify_all();
            let Some(result) = result else { break };
            if let Err(error) = emit(result) {
                outcome = Err(error);
                break;
            }
        }
        shared.lock().stop = true;
        shared.changed.notify_all();
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
                |n| {
                    seen.push(n);
                    Ok(())
                },
            );
            assert_eq!(outcome, Ok(()));
            assert_eq!(seen, items, "{threads} threads");
        }
    }

    #[test]
    fn at_most_two_results_per_thread_exist_at_once() {
        let items: Vec<usize> = (0..200).collect();
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
            |_| {
                let now = alive.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                Held(&alive)
            },
            |held| {
                drop(held);
                Ok(())
            },
        );
        assert_eq!(outcome, Ok(()));
        assert!(most.load(Ordering::SeqCst) <= 4, "{most:?}");
        assert_eq!(alive.load(Ordering::SeqCst), 0);
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
        assert!(started.load(Ordering::SeqCst) <= 11 + 4);
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
                |_| Ok::<(), ()>(()),
            )
        });
        assert!(caught.is_err());
    }
}
