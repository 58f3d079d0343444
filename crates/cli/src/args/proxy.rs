//! Arguments of the commands around the proxy: `proxy`, `rollback`, `approve`, and the policy
//! and journal-lock flags the first two share.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use mcp_recovery_journal::Holder;
use mcp_recovery_proxy::DEFAULT_ROLLBACK_WINDOW;

use crate::allowed_hosts::{AllowedHost, allowed_host};
use crate::args::server::ServerArgs;
use crate::args::values::written_path;

/// Arguments of `proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Append every call, approval and compensation to this hash-chained journal.
    #[arg(long, value_name = "FILE", value_parser = written_path)]
    pub journal: Option<PathBuf>,
    /// Sign the chain head with this secret key (from `audit keygen`) each time records are
    /// written: a `checkpoint` record after every record, in the same write and sync. A journal
    /// that holds records is first verified against the key: one with a record it did not sign
    /// is refused, and nothing is appended.
    #[arg(long, value_name = "FILE")]
    pub journal_key: Option<PathBuf>,
    /// Hand each checkpoint, as one JSON line on stdin, to this shell command (to keep it where
    /// the journal's writer cannot rewrite it); at most 10 s each, a failure is noted on stderr
    /// and the proxy goes on.
    #[arg(long, value_name = "CMD", requires = "journal_key")]
    pub checkpoint_to: Option<String>,
    /// The policy file (TOML; schema in spec/schema/policy.schema.json).
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// What a call to a tool the server did not list does (over the policy's `unlisted-tools`;
    /// default deny).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub unlisted_tools: Option<ActionArg>,
    /// Do not wait for each journal record to reach the disk (faster; a crash may lose the
    /// last records).
    #[arg(long)]
    pub no_fsync: bool,
    /// Apply this overlay (JSON or TOML) to the server's tools before they are classified and
    /// planned from (repeatable; the server's own declarations win). The client's tools/list
    /// is passed on unchanged.
    #[arg(long = "overlay", value_name = "FILE")]
    pub overlays: Vec<PathBuf>,
    /// Keep this many of a session's latest effectful calls in memory for a rollback; older
    /// ones are read back from --journal, and without one a rollback reports them as not
    /// compensated.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ROLLBACK_WINDOW)]
    pub rollback_window: usize,
    /// The MCP client config (Claude Desktop, Cursor, VS Code) whose --server to start.
    #[arg(
        long,
        value_name = "FILE",
        requires = "server",
        conflicts_with_all = ["command", "url"]
    )]
    pub config: Option<PathBuf>,
    /// Start this server of the --config file, as the config describes it.
    #[arg(long, value_name = "NAME", requires = "config")]
    pub server: Option<String>,
    /// The value of `${input:ID}` in a VS Code client config, as ID=VALUE (repeatable; never
    /// shown).
    #[arg(long = "input", value_name = "ID=VALUE", requires = "config")]
    pub inputs: Vec<String>,
    /// Let a value of this environment that the --config entry names (`${env:NAME}`) go into
    /// the URL or headers of an HTTP server at HOST (any port) or HOST:PORT (repeatable).
    #[arg(long = "allow-host", value_name = "HOST[:PORT]", requires = "config",
          value_parser = allowed_host)]
    pub allow_hosts: Vec<AllowedHost>,
    /// Add a variable to the server's environment, as K=V (repeatable; never shown).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Where the server is and how the client connects.
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Waiting for another writer of the journal.
    #[command(flatten)]
    pub lock: LockArgs,
    /// Take the signed decisions for calls the policy's `[[approvals]]` gate at this loopback
    /// address (`GET /approvals`, `POST /approvals/{request}`); with --listen they are taken
    /// under its address instead.
    #[arg(long, value_name = "ADDR", conflicts_with = "listen")]
    pub approvals_listen: Option<std::net::SocketAddr>,
    /// The server command and its arguments (after `--`), unless --config or --url names it.
    #[arg(
        last = true,
        value_name = "CMD",
        required_unless_present_any = ["config", "url"],
        conflicts_with = "url"
    )]
    pub command: Vec<String>,
}

/// Transport flags of `proxy`.
#[derive(Debug, Args)]
pub struct TransportArgs {
    /// Forward to a Streamable HTTP server at this URL instead of starting a command.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Extra HTTP header for `--url`, as 'Name: value' (repeatable; `${VAR}` reads the
    /// environment; values are never shown).
    #[arg(long = "header", value_name = "'K: V'", requires = "url")]
    pub headers: Vec<String>,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (loopback only unless
    /// --allow-remote; port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// Let --listen bind an address other than loopback (anyone who can reach it can call the
    /// server's tools).
    #[arg(long, requires = "listen")]
    pub allow_remote: bool,
    /// An Origin accepted besides loopback ones, as scheme://host[:port] (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    pub allow_origin: Vec<String>,
    /// Most sessions (Mcp-Session-Id) open at once with --listen.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub max_sessions: u16,
    /// Most connections open at once with --listen; one more is answered 503 with
    /// Retry-After.
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub max_connections: u16,
    /// Seconds a request to --listen has to arrive whole (head and body, however it trickles)
    /// and a connection may stay idle between requests.
    #[arg(long, value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u16).range(1..=3600))]
    pub request_timeout: u16,
}

/// The journal-lock flag shared by `proxy` and `rollback`.
#[derive(Debug, Args)]
pub struct LockArgs {
    /// When another proxy or rollback is writing the journal, wait up to SECONDS for it to
    /// finish instead of failing at once.
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    pub wait_lock: u64,
}

impl LockArgs {
    /// The lock holder `mcp-recovery COMMAND` (no arguments: they may carry secrets).
    pub fn holder(&self, command: &str) -> Holder {
        Holder {
            command: format!("mcp-recovery {command}"),
            wait: std::time::Duration::from_secs(self.wait_lock),
        }
    }
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

/// `--unlisted-tools` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ActionArg {
    /// Forward the call.
    Allow,
    /// Ask before forwarding it.
    Ask,
    /// Refuse it.
    Deny,
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

/// Arguments of `rollback`. Of the server flags, `--save` and `--all-servers` do not apply
/// (rollback reaches one server and writes no tools/list): hidden here, refused if given.
#[derive(Debug, Args)]
#[command(mut_arg("save", |a| a.hide(true)), mut_arg("all_servers", |a| a.hide(true)))]
pub struct RollbackArgs {
    /// The journal of the session to roll back (compensations are appended to it).
    #[arg(long, value_name = "FILE", value_parser = written_path)]
    pub journal: PathBuf,
    /// The session to roll back (default: the only session with effects left: compensations
    /// not yet done, or effects needing attention never reported; when several have some,
    /// they are listed and nothing is done unless --all is given).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Print what would be done; call nothing and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The policy that gates the compensating calls.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Apply this overlay (JSON or TOML) to the server's tools before planning (repeatable; the
    /// server's own declarations win).
    #[arg(long = "overlay", value_name = "FILE")]
    pub overlays: Vec<PathBuf>,
    /// The MCP client config (Claude Desktop, Cursor, VS Code) whose --server to reach.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The live server.
    #[command(flatten)]
    pub server: ServerArgs,
    /// Roll back every session with effects left, newest first.
    #[arg(long, conflicts_with = "session")]
    pub all: bool,
    /// Waiting for another writer of the journal.
    #[command(flatten)]
    pub lock: LockArgs,
    /// Sign the chain head with this secret key (from `audit keygen`) each time records are
    /// written: a `checkpoint` record after every record, in the same write and sync. A journal
    /// that holds records is first verified against the key: one with a record it did not sign
    /// is refused, and nothing is appended.
    #[arg(long, value_name = "FILE")]
    pub journal_key: Option<PathBuf>,
    /// Hand each checkpoint of the rollback's own records to this shell command, as `proxy
    /// --checkpoint-to` does, so that they cannot be cut back unnoticed either.
    #[arg(long, value_name = "CMD", requires = "journal_key")]
    pub checkpoint_to: Option<String>,
    /// Before acting, check every checkpoint's signature with this public key (repeatable: any
    /// of them), and that every record is covered by one; a journal that fails is refused.
    #[arg(long = "key", value_name = "PUB")]
    pub keys: Vec<PathBuf>,
    /// Take the signed decisions for compensations the policy's `[[approvals]]` gate at this
    /// loopback address (`GET /approvals`, `POST /approvals/{request}`), as `proxy` does;
    /// --dry-run takes none.
    #[arg(long, value_name = "ADDR")]
    pub approvals_listen: Option<SocketAddr>,
}

/// Arguments of `approve`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("verdict").args(["approve", "deny"]).requires("request"))]
#[command(group = clap::ArgGroup::new("from").args(["url", "pending"]).required(true))]
pub struct ApproveArgs {
    /// The proxy's approvals endpoint: `http://HOST:PORT` of its --approvals-listen or
    /// --listen address (`/approvals` is added when missing).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Read the pending request from FILE (`-`: stdin), as the approvals webhook posted it or
    /// `GET /approvals` listed it, instead of asking a proxy; the decision is printed, for a
    /// decisions URL the policy names (`[approvals.fetch]`).
    #[arg(long, value_name = "FILE")]
    pub pending: Option<PathBuf>,
    /// Print the signed decision on stdout instead of sending it to the proxy.
    #[arg(long)]
    pub print: bool,
    /// The approver's secret key (written by `mcp-recovery audit keygen`).
    #[arg(long, value_name = "FILE", requires = "name")]
    pub key: Option<PathBuf>,
    /// The approver's name in the policy.
    #[arg(long = "as", value_name = "NAME", requires = "key")]
    pub name: Option<String>,
    /// The request to decide (its id, as listed); without it the pending requests are listed.
    #[arg(value_name = "REQUEST", requires_all = ["key", "verdict"])]
    pub request: Option<String>,
    /// Approve the request.
    #[arg(long)]
    pub approve: bool,
    /// Deny the request.
    #[arg(long)]
    pub deny: bool,
    /// Give up on the proxy after this many seconds (1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}
