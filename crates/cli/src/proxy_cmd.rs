//! `mcp-recovery proxy`: put the recovery proxy in front of an MCP server (a command on stdio or
//! a Streamable HTTP URL), serving the client on stdio or on a loopback HTTP address.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use mcp_recovery_journal::Journal;
use mcp_recovery_proxy::{
    Approver, End, OnFailure, Policy, PolicyFile, ProxyError, Settings, new_session_id,
    run_on_stdio,
};

use crate::Failure;

/// Arguments of `proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Append every call, approval and compensation to this hash-chained journal.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// The policy file (TOML; schema in spec/schema/policy.schema.json).
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Do not wait for each journal record to reach the disk (faster; a crash may lose the
    /// last records).
    #[arg(long)]
    pub no_fsync: bool,
    /// Where the server is and how the client connects.
    #[command(flatten)]
    pub transport: crate::proxy_http::TransportArgs,
    /// The server command and its arguments (after `--`).
    #[arg(
        last = true,
        value_name = "CMD",
        required_unless_present = "url",
        conflicts_with = "url"
    )]
    pub command: Vec<String>,
}

/// The policy flags shared by `proxy` and `rollback`.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// The policy file (TOML).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// What a failed call does (over the file's `on-failure`; default record).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub on_failure: Option<OnFailureArg>,
    /// Allow calls to tools matching this glob (repeatable; over the file).
    #[arg(long, value_name = "GLOB")]
    pub allow: Vec<String>,
    /// Ask before calls to tools matching this glob (repeatable; over the file).
    #[arg(long, value_name = "GLOB")]
    pub ask: Vec<String>,
    /// Refuse calls to tools matching this glob (repeatable; over the file and the other flags).
    #[arg(long, value_name = "GLOB")]
    pub deny: Vec<String>,
    /// Decide `ask` with this shell command instead of the terminal: it reads the impact as
    /// JSON on stdin, exit status 0 approves.
    #[arg(long, value_name = "CMD")]
    pub approve_with: Option<String>,
}

/// `--on-failure` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnFailureArg {
    /// Compensate the session's completed calls, newest first.
    Rollback,
    /// Show the rollback plan and roll back only when approved.
    Ask,
    /// Journal the failure only.
    Record,
}

impl PolicyArgs {
    /// The policy in force and its approver.
    pub fn resolve(&self) -> Result<(Policy, Approver), Failure> {
        let file = match &self.policy {
            Some(path) => PolicyFile::read(path).map_err(|e| Failure::Usage(e.to_string()))?,
            None => PolicyFile::default(),
        };
        let policy = Policy {
            file,
            deny: self.deny.clone(),
            ask: self.ask.clone(),
            allow: self.allow.clone(),
            on_failure: self.on_failure.map(|f| match f {
                OnFailureArg::Rollback => OnFailure::Rollback,
                OnFailureArg::Ask => OnFailure::Ask,
                OnFailureArg::Record => OnFailure::Record,
            }),
        };
        let approver = match &self.approve_with {
            Some(command) => Approver::Command(command.clone()),
            None => Approver::Terminal,
        };
        Ok((policy, approver))
    }
}

/// Opens the journal named by a flag, if any.
pub fn open_journal(path: Option<&PathBuf>, fsync: bool) -> Result<Option<Journal>, Failure> {
    let Some(path) = path else {
        return Ok(None);
    };
    let mut journal = Journal::open(path).map_err(|e| Failure::Usage(e.to_string()))?;
    journal.set_sync(fsync);
    Ok(Some(journal))
}

/// Runs `proxy`: exit 0 when the client closed the session, 2 when the server could not start
/// or the journal failed, 1 when the server exited first.
pub fn run(args: &ProxyArgs) -> Result<ExitCode, Failure> {
    let (policy, approver) = args.policy.resolve()?;
    let journal = open_journal(args.journal.as_ref(), !args.no_fsync)?;
    let upstream = args.transport.upstream(&args.command)?;
    let settings = Settings {
        policy,
        approver,
        session: new_session_id().map_err(|e| Failure::Usage(e.to_string()))?,
        upstream: upstream.describe(),
    };
    if let Some(address) = args.transport.listen {
        return Err(args
            .transport
            .listen(address, &settings, journal, &upstream));
    }
    match run_on_stdio(settings, journal, &upstream) {
        Ok(End::ClientClosed) => Ok(ExitCode::SUCCESS),
        Ok(End::ServerClosed(reason)) => {
            eprintln!(
                "mcp-recovery proxy: the server exited: {}",
                mcp_recovery_proxy::escape(&reason)
            );
            Ok(ExitCode::from(1))
        }
        Err(ProxyError::Spawn { command, source }) => Err(Failure::Usage(format!(
            "cannot start the server {command}: {source}"
        ))),
        Err(e @ (ProxyError::Journal(_) | ProxyError::Listen { .. } | ProxyError::Random(_))) => {
            Err(Failure::Usage(e.to_string()))
        }
    }
}
