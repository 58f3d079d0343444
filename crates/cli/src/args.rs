//! Command-line arguments: a public contract (see `docs/architecture.md`); flags are added, never
//! renamed. This file holds the command line as a whole (`Cli`) and the command enum; the options
//! of each command are in `args/`, one file per group of commands, with the value parsers they
//! share in `args/values.rs`.

pub mod audit;
#[cfg(feature = "demo")]
pub mod demo;
pub mod documents;
pub mod lint;
pub mod proxy;
pub mod server;
pub mod values;

use clap::{Parser, Subcommand};

use crate::args::audit::AuditArgs;
#[cfg(feature = "demo")]
use crate::args::demo::{DemoArgs, DemoServerArgs};
use crate::args::documents::{
    CensusArgs, ConvertArgs, ExplainArgs, FetchArgs, PlanArgs, SchemaArgs,
};
use crate::args::lint::LintArgs;
use crate::args::proxy::{ApproveArgs, ProxyArgs, RollbackArgs};
use crate::args::values::{ColorWhen, parse_size};
use crate::commands::profile::ProfileArgs;
use crate::commands::suggest::SuggestArgs;

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

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lint tools/list documents (files, directories, stdin) or a live server.
    ///
    /// Exit status: 0 clean, 1 findings at the failing level (errors; warnings too under
    /// `--deny warnings`; infos never), 2 the linter could not run.
    Lint(LintArgs),
    /// List the rule catalog: code, name, default level, summary.
    Rules,
    /// Print the documentation of one rule.
    Explain(ExplainArgs),
    /// Print one generated JSON Schema, or write all of them to a directory, or write the
    /// SEP-3172 TypeScript and examples into a checkout of the MCP specification repository.
    Schema(SchemaArgs),
    /// Fetch the complete tools/list of a live server and print it as JSON.
    Fetch(FetchArgs),
    /// Print the compensation plan for a recorded trace of tool calls.
    Plan(PlanArgs),
    /// Move recovery metadata between the SEP-3172 and mcp-compensate carriers.
    ///
    /// Exit status: 0 converted, 1 some metadata has no counterpart (reported on stderr and kept
    /// where it was), 2 the document could not be read.
    Convert(ConvertArgs),
    /// Draft an overlay declaring recovery for a server that declares none (file or live).
    Suggest(SuggestArgs),
    /// The guarantee profiles each tool and the server reach from their declarations.
    Profile(ProfileArgs),
    /// Measure what a corpus of tools/list documents declares (one file per server).
    Census(CensusArgs),
    /// Run the checkout demo: lint a live server, fail a workflow, roll it back from metadata.
    #[cfg(feature = "demo")]
    Demo(DemoArgs),
    /// Run an MCP server behind the recovery proxy: classify, gate, journal and roll back its
    /// tool calls.
    Proxy(ProxyArgs),
    /// Audit a proxy journal.
    Audit(AuditArgs),
    /// List the calls a proxy holds for its approvers, or sign and send one approver's
    /// decision (`--key FILE --as NAME REQUEST --approve|--deny`).
    ///
    /// With `--pending FILE` (a request as the approvals webhook posted it) or `--print` the
    /// signed decision is printed instead, for a decisions URL the policy names.
    ///
    /// Exit status: 0 listed, counted or printed, 1 the proxy refused the decision (why is printed), 2
    /// the proxy could not be reached or the key read.
    Approve(ApproveArgs),
    /// Run the compensations of a recorded session against a live server (resumable).
    Rollback(RollbackArgs),
    /// Serve the demo's checkout MCP server on stdio (used by `demo`).
    #[cfg(feature = "demo")]
    #[command(hide = true)]
    DemoServer(DemoServerArgs),
}

#[cfg(test)]
mod tests;
