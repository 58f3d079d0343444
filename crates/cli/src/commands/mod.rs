//! One module per command of `mcp-recovery`, each with a `run` function taking its arguments.
//!
//! A command is made of three pieces: its arguments (a clap struct in `crate::args`, or for
//! `suggest` and `profile` beside their `run`), a variant of `crate::args::Command`, and a
//! module here. Adding one is one new file under `commands/`, one enum variant and one arm of
//! the dispatch `match` in `main.rs`. `run` returns the exit code (or `()` for commands that only
//! print and exit 0); a `Failure` becomes exit status 2 in `main`.
//!
//! What several commands use (reading inputs, reaching live servers, rendering findings, the
//! journal helpers) lives outside this directory, so that commands never import one another
//! except for the few helpers `rollback` takes from `proxy` and `explain` from `rules`. The
//! demo (`demo`, `demo-server`) is the `demo` module beside this one, built only with the
//! `demo` feature.

pub mod approve;
pub mod audit;
pub mod census;
pub mod convert;
pub mod explain;
pub mod fetch;
pub mod lint;
pub mod plan;
pub mod profile;
pub mod proxy;
pub mod rollback;
pub mod rules;
pub mod schema;
pub mod suggest;
