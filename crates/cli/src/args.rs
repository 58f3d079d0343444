//! Command-line arguments: a public contract (see `docs/architecture.md`); flags are added, never
//! renamed. This file holds the command line as a whole (`Cli`); the command enum is declared with
//! the command registry in `commands/mod.rs`. The options of each command are in `args/`, one
//! file per group of commands (or beside the command's `run`), with the value parsers they share
//! in `args/values.rs`.

pub mod audit;
#[cfg(feature = "demo")]
pub mod demo;
pub mod documents;
pub mod lint;
pub mod proxy;
pub mod server;
pub mod values;

use clap::Parser;

use crate::args::values::{ColorWhen, parse_size};
use crate::commands::Command;

/// Linter and toolkit for MCP tool recovery metadata (SEP-3172 and dev.chronomcp/compensate).
#[derive(Debug, Parser)]
#[command(name = "mcp-recovery", version, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,

    /// Largest input read, in bytes (suffixes K, M, G: powers of 1024). Larger files, and
    /// standard input past it, are refused.
    #[arg(long, global = true, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    pub max_file_size: u64,

    /// Read inputs and config files through symbolic links that resolve outside the tree being
    /// read (the working directory; a discovered config's own directory). Refused by default:
    /// a link committed to a repository could otherwise print any file of the CI machine.
    #[arg(long, global = true)]
    pub follow_links: bool,

    /// When to colour terminal output: auto (on a terminal, unless NO_COLOR is set;
    /// CLICOLOR_FORCE colours off one too, CLICOLOR=0 turns it off), always or never. Files a
    /// command writes are never coloured.
    #[arg(
        long,
        global = true,
        value_name = "WHEN",
        default_value = "auto",
        hide_possible_values = true
    )]
    pub color: ColorWhen,
}

impl Cli {
    /// Requirements clap lets through when a path is also given (a conflicting argument lifts
    /// `requires`): `--header` needs `--url`, a command after `--` needs `--stdio`; and the
    /// server flags `rollback` has no use for (`--save`, `--all-servers`), refused. `command` is
    /// the parsed command line's (its colours and usage lines are those of the run).
    pub fn check_server_args(&self, command: &mut clap::Command) {
        let (name, server) = match &self.command {
            Command::Lint(args) => ("lint", &args.server),
            Command::Fetch(args) => ("fetch", &args.server),
            Command::Suggest(args) => ("suggest", &args.server),
            Command::Profile(args) => ("profile", &args.server),
            Command::Rollback(args) => ("rollback", &args.server),
            _ => return,
        };
        let problem = if !server.headers.is_empty() && server.url.is_none() {
            Some("--header needs --url")
        } else if name == "rollback" && server.save.is_some() {
            Some(
                "rollback writes no tools/list: --save applies to lint, fetch, profile and suggest",
            )
        } else if name == "rollback" && server.all_servers {
            Some("rollback reaches one server: name it with --server NAME")
        } else if !server.command.is_empty() && !server.stdio {
            Some("a server command after `--` needs --stdio")
        } else {
            None
        };
        if let Some(problem) = problem {
            // Exits with clap's usage status (2), under the subcommand's usage line.
            let command = match command.find_subcommand_mut(name) {
                Some(sub) => sub,
                None => command,
            };
            command
                .error(clap::error::ErrorKind::ArgumentConflict, problem)
                .exit();
        }
    }
}

#[cfg(test)]
mod tests;
