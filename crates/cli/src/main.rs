//! The mcp-recovery command line. `args` parses it; `commands` holds one module per command and
//! the registry that dispatches to them; the other modules are what several commands share
//! (inputs, live servers, rendering, journals, client configs, server.json).
//!
//! The commands:
//! - `lint`: check tools/list documents (files, directories, stdin), live servers (`--stdio`,
//!   `--url`, the servers of a client config or of a registry `server.json`) against the rule
//!   catalog, with config files, baselines, overlays and seven output formats.
//! - `rules`: the rule catalog, one line per rule.
//! - `explain`: the documentation of one rule.
//! - `schema`: the generated JSON Schemas (list, print one, write all), or the SEP-3172 additions
//!   written into a checkout of the MCP specification repository (`--spec-repo`).
//! - `fetch`: the complete tools/list of a live server, as JSON.
//! - `plan`: the compensation plan for a recorded trace of tool calls or a proxy journal.
//! - `convert`: recovery metadata moved between the SEP-3172 and mcp-compensate carriers.
//! - `suggest`: a draft overlay declaring recovery for a server that declares none.
//! - `profile`: the guarantee profiles each tool and the server reach from their declarations.
//! - `census`: what a corpus of tools/list documents (or of live servers) declares.
//! - `demo`: the checkout demo, with its MCP server started as the hidden `demo-server` (both
//!   only with the `demo` feature).
//! - `proxy`: an MCP server run behind the recovery proxy, which classifies, gates, journals and
//!   rolls back its tool calls.
//! - `audit`: a proxy journal verified (`verify`), exported as OpenTelemetry spans or CSV
//!   (`export`), or a key pair for its checkpoints written (`keygen`).
//! - `approve`: the calls a proxy holds for its approvers listed, or one approver's signed
//!   decision sent or printed.
//! - `rollback`: the compensations of a recorded session run against a live server (resumable).
//!
//! Exit status: 0 clean, 1 findings at the failing level, 2 the tool could not run (with a
//! one-line reason on stderr).

mod allowed_hosts;
mod args;
mod audit_quorum;
mod baseline;
mod checkpoints;
mod client_config;
mod color;
mod commands;
mod config;
mod errors;
mod export;
mod inputs;
mod interrupts;
mod live;
mod overlay;
mod overrides;
mod progress;
mod proxy_http;
mod read_back;
mod render;
mod save;
mod server_json;
mod sources;
mod torn;
mod written;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::args::Cli;

use crate::errors::Failure;
use crate::render::pretty;

/// mimalloc: `lint` and `census` build and free millions of small values; with the system
/// allocator that was a third of their time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The command line, with clap's own help, usage and errors coloured as `--color` says; the
/// errors found after parsing (`Cli::check_server_args`) are coloured the same way.
fn parse() -> Cli {
    let choice = match color::requested(std::env::args_os()) {
        Some(args::values::ColorWhen::Always) => clap::ColorChoice::Always,
        Some(args::values::ColorWhen::Never) => clap::ColorChoice::Never,
        _ => clap::ColorChoice::Auto,
    };
    let mut command = Cli::command().color(choice);
    let matches = command
        .try_get_matches_from_mut(std::env::args_os())
        .unwrap_or_else(|e| e.exit());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit());
    cli.check_server_args(&mut command);
    cli
}

fn main() -> ExitCode {
    // clap exits with 2 on usage errors (and 0 for --help/--version), as the contract wants.
    let cli = parse();
    errors::exit_2_on_panic();
    color::init(cli.color);
    inputs::set_policy(inputs::ReadPolicy {
        max_bytes: cli.max_file_size,
        follow_links: cli.follow_links,
    });
    let result = cli.command.run();
    match result {
        Ok(code) => code,
        // A reader that stops early (`lint … | head -1`) is not an error: end quietly, as
        // ripgrep does.
        Err(Failure::Write(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(failure) => {
            errors::report(&failure);
            ExitCode::from(2)
        }
    }
}
