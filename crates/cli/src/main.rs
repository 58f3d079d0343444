//! The mcp-recovery command line: lint tools/list documents and live servers, list and explain
//! rules, print the generated schemas. Each command lives in its own module; this file parses
//! the arguments and dispatches.
//!
//! Exit status: 0 clean, 1 findings at the failing level, 2 the tool could not run (with a
//! one-line reason on stderr).

mod approve_cmd;
mod audit_cmd;
mod audit_quorum;
mod baseline;
mod census_cmd;
mod checkpoints;
mod cli;
mod client_config;
mod color;
mod config;
mod convert_cmd;
#[cfg(feature = "demo")]
mod demo;
mod errors;
mod export;
mod fetch_cmd;
mod inputs;
mod lint;
mod live;
mod overlay_cmd;
mod overrides;
mod plan_cmd;
mod profile_cmd;
mod progress;
mod proxy_cmd;
mod proxy_http;
mod render;
mod rollback_cmd;
mod rules_cmd;
mod schema_cmd;
mod server_json;
mod sources;
mod spec_repo_cmd;
mod suggest_cmd;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command};
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
        Some(color::ColorWhen::Always) => clap::ColorChoice::Always,
        Some(color::ColorWhen::Never) => clap::ColorChoice::Never,
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
    let done = |result: Result<(), Failure>| result.map(|()| ExitCode::SUCCESS);
    let result = match cli.command {
        Command::Lint(args) => lint::run(&args),
        Command::Rules => done(rules_cmd::list()),
        Command::Explain(args) => done(rules_cmd::explain(&args)),
        Command::Schema(args) => done(schema_cmd::run(&args)),
        Command::Fetch(args) => done(fetch_cmd::run(&args)),
        Command::Plan(args) => plan_cmd::run(&args),
        Command::Convert(args) => convert_cmd::run(&args),
        Command::Suggest(args) => suggest_cmd::run(&args),
        Command::Profile(args) => profile_cmd::run(&args),
        Command::Census(args) => census_cmd::run(&args),
        #[cfg(feature = "demo")]
        Command::Demo(args) => demo::run(&args),
        Command::Proxy(args) => proxy_cmd::run(&args),
        Command::Audit(args) => audit_cmd::run(&args),
        Command::Approve(args) => approve_cmd::run(&args),
        Command::Rollback(args) => rollback_cmd::run(&args),
        #[cfg(feature = "demo")]
        Command::DemoServer(args) => demo::serve(&args),
    };
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
