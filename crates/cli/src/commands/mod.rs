//! One module per command of `mcp-recovery`, each with a `run` function taking its arguments and
//! returning the exit code (a `Failure` becomes exit status 2 in `main`).
//!
//! The list below is the whole registry: each line names a command's arguments and its module,
//! and stands for the module's `mod` line, the variant of [`Command`] (its doc comment is the
//! command's help) and the arm of the dispatch `match` in [`Command::run`]. Adding a command is
//! one new file here and one line in the list; its arguments may sit in `crate::args` or beside
//! its `run`. A trailing `if CFG` builds the command only under that `cfg`.
//!
//! What several commands use (reading inputs, reaching live servers, rendering findings, the
//! journal helpers) lives outside this directory, so that commands never import one another
//! except for the few helpers `rollback` takes from `proxy`, `explain` from `rules` and `demo`
//! from `plan`.

use std::process::ExitCode;

use crate::Failure;
use crate::args::audit::AuditArgs;
#[cfg(feature = "demo")]
use crate::args::demo::{DemoArgs, DemoServerArgs};
use crate::args::documents::{
    CensusArgs, ConvertArgs, ExplainArgs, FetchArgs, PlanArgs, RulesArgs, SchemaArgs,
};
use crate::args::lint::LintArgs;
use crate::args::proxy::{ApproveArgs, ProxyArgs, RollbackArgs};

/// Declares each command's module, the [`Command`] enum and its dispatch from one list.
macro_rules! commands {
    ($(
        $(#[$attr:meta])*
        $variant:ident($args:ty) => mod $module:ident $(if $cfg:meta)?,
    )*) => {
        $(
            $(#[cfg($cfg)])?
            pub mod $module;
        )*

        /// The subcommands.
        #[derive(Debug, clap::Subcommand)]
        pub enum Command {
            $(
                $(#[cfg($cfg)])?
                $(#[$attr])*
                $variant($args),
            )*
        }

        impl Command {
            /// Runs the command.
            pub fn run(self) -> Result<ExitCode, Failure> {
                match self {
                    $(
                        $(#[cfg($cfg)])?
                        Command::$variant(args) => $module::run(&args),
                    )*
                }
            }
        }
    };
}

commands! {
    /// Lint tools/list documents (files, directories, stdin) or a live server.
    ///
    /// Exit status: 0 clean, 1 findings at the failing level (errors; warnings too under
    /// `--deny warnings`; infos never), 2 the linter could not run.
    Lint(LintArgs) => mod lint,
    /// List the rule catalog: code, name, default level, summary.
    Rules(RulesArgs) => mod rules,
    /// Print the documentation of one rule.
    Explain(ExplainArgs) => mod explain,
    /// Print one generated JSON Schema, or write all of them to a directory, or write the
    /// SEP-3172 TypeScript and examples into a checkout of the MCP specification repository.
    Schema(SchemaArgs) => mod schema,
    /// Fetch the complete tools/list of a live server and print it as JSON.
    Fetch(FetchArgs) => mod fetch,
    /// Print the compensation plan for a recorded trace of tool calls.
    Plan(PlanArgs) => mod plan,
    /// Move recovery metadata between the SEP-3172 and mcp-compensate carriers.
    ///
    /// Exit status: 0 converted, 1 some metadata has no counterpart (reported on stderr and kept
    /// where it was), 2 the document could not be read.
    Convert(ConvertArgs) => mod convert,
    /// Draft an overlay declaring recovery for a server that declares none (file or live).
    Suggest(suggest::SuggestArgs) => mod suggest,
    /// The guarantee profiles each tool and the server reach from their declarations.
    Profile(profile::ProfileArgs) => mod profile,
    /// Measure what a corpus of tools/list documents declares (one file per server).
    Census(CensusArgs) => mod census,
    /// Run the checkout demo: lint a live server, fail a workflow, roll it back from metadata.
    Demo(DemoArgs) => mod demo if feature = "demo",
    /// Run an MCP server behind the recovery proxy: classify, gate, journal and roll back its
    /// tool calls.
    Proxy(ProxyArgs) => mod proxy,
    /// Audit a proxy journal.
    Audit(AuditArgs) => mod audit,
    /// List the calls a proxy holds for its approvers, or sign and send one approver's
    /// decision (`--key FILE --as NAME REQUEST --approve|--deny`).
    ///
    /// With `--pending FILE` (a request as the approvals webhook posted it) or `--print` the
    /// signed decision is printed instead, for a decisions URL the policy names.
    ///
    /// Exit status: 0 listed, counted or printed, 1 the proxy refused the decision (why is printed), 2
    /// the proxy could not be reached or the key read.
    Approve(ApproveArgs) => mod approve,
    /// Run the compensations of a recorded session against a live server (resumable).
    Rollback(RollbackArgs) => mod rollback,
    /// Serve the demo's checkout MCP server on stdio (used by `demo`).
    #[command(hide = true)]
    DemoServer(DemoServerArgs) => mod demo_server if feature = "demo",
}
