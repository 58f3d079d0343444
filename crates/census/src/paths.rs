//! A census over files and directories: the files found, then read, parsed and linted by a
//! bounded number of workers, each holding one file at a time.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::builder::CensusBuilder;
use crate::examine::{FileCensus, read_and_examine};
use crate::metrics::Census;
use crate::options::{CensusError, CensusOptions};

/// Expands the given paths: files as given, directories walked for documents by the rule of
/// [`mcp_recovery_base::walk`], the one `lint DIR` uses too.
///
/// A given path that does not exist is an error; unreadable entries inside a directory are
/// returned so the census lists them.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CensusError> {
    let (files, missing) = collect_files_listing_missing(paths);
    match missing.into_iter().next() {
        Some(error) => Err(error),
        None => Ok(files),
    }
}

/// [`collect_files`], except that a given path that cannot be read is kept as a file (the
/// census lists it as not read, with why) and its error returned beside the files, in order.
pub fn collect_files_listing_missing(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<CensusError>) {
    let mut files = Vec::new();
    let mut missing = Vec::new();
    for path in paths {
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(source) => {
                files.push(path.clone());
                missing.push(CensusError::Input {
                    path: path.clone(),
                    source,
                });
                continue;
            }
        };
        if !meta.is_dir() {
            files.push(path.clone());
            continue;
        }
        let walk = mcp_recovery_base::walk::json_documents(path);
        files.extend(walk.documents);
        // An entry the walker could not name is reported as the directory itself.
        files.extend(
            walk.errors
                .into_iter()
                .map(|e| e.path.unwrap_or_else(|| path.clone())),
        );
    }
    files.dedup();
    (files, missing)
}

/// Files a worker examines before it hands their results on.
pub(crate) const BATCH: usize = 16;

/// Runs a census over files and directories (walked for `*.json`, one file per server).
///
/// Up to [`CensusOptions::threads`] workers each read, parse and lint one file at a time and send
/// back only counters, so memory stays bounded by the largest files.
pub fn census_paths(paths: &[PathBuf], options: &CensusOptions) -> Result<Census, CensusError> {
    census_paths_observed(paths, options, |_, _| {})
}

/// [`census_paths`], calling `observe(done, total)` once the files are found (`done` 0) and
/// after each file is counted: for a progress display.
pub fn census_paths_observed(
    paths: &[PathBuf],
    options: &CensusOptions,
    observe: impl FnMut(usize, usize),
) -> Result<Census, CensusError> {
    census_files_observed(&collect_files(paths)?, options, observe)
}

/// [`census_paths_observed`] over files already found (by [`collect_files`] or
/// [`collect_files_listing_missing`]): each is read and counted, one that cannot be read is
/// listed as such.
pub fn census_files_observed(
    files: &[PathBuf],
    options: &CensusOptions,
    mut observe: impl FnMut(usize, usize),
) -> Result<Census, CensusError> {
    observe(0, files.len());
    let mut builder = CensusBuilder::new(options)?;
    let threads = options.threads.clamp(1, files.len().max(1));
    let next = AtomicUsize::new(0);
    // The workers borrow the linter while this thread merges into the builder.
    let linter = builder.linter.take();
    let policy = options.read;
    let (sender, receiver) = mpsc::sync_channel::<Vec<(usize, FileCensus)>>(2 * threads);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let sender = sender.clone();
            let (files, next, linter) = (files, &next, linter.as_ref());
            scope.spawn(move || {
                // Results go a batch at a time (they are counters, not documents), so the
                // merging thread is woken once a batch rather than once a file.
                let mut batch = Vec::with_capacity(BATCH);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else { break };
                    batch.push((i, read_and_examine(path, linter, policy)));
                    if batch.len() == BATCH
                        && sender
                            .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                            .is_err()
                    {
                        return;
                    }
                }
                let _ = sender.send(batch);
            });
        }
        drop(sender);
        let mut done = 0;
        for (i, file) in receiver.into_iter().flatten() {
            builder.add_file_at(i, file);
            done += 1;
            observe(done, files.len());
        }
    });
    builder.linter = linter;
    Ok(builder.finish())
}
