//! How a command reaches live servers: one named on the command line (`ServerArgs`) or those of a
//! client config (`ConfigServerArgs`).

use std::path::PathBuf;

use clap::Args;

use crate::allowed_hosts::{AllowedHost, allowed_host};
use crate::args::values::written_path;

/// Where a live server is reached.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Start the server as a child process speaking MCP over stdio: `--stdio -- CMD ARGS...`.
    #[arg(long, requires = "command", conflicts_with = "url")]
    pub stdio: bool,

    /// Connect to a server over Streamable HTTP.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// Extra HTTP header for `--url`, as 'Name: value' (repeatable).
    #[arg(long = "header", value_name = "'K: V'", requires = "url")]
    pub headers: Vec<String>,

    /// Give up on a request to the server after this many seconds (1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,

    /// Give up after this many seconds in all (1 to 86400): starting or reaching the server, the
    /// protocol handshake and every page of tools/list (each server of a config on its own).
    #[arg(long, value_name = "SECONDS", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub total_timeout: u64,

    /// Add a variable to the environment of a stdio server, as K=V (repeatable). Its value is
    /// replaced by *** wherever the server echoes it.
    #[arg(long = "env", value_name = "K=V", conflicts_with = "url")]
    pub env: Vec<String>,

    /// Reach this server of the MCP client config given with --config (repeatable). With it,
    /// --config names a client config (Claude Desktop, Cursor, VS Code) instead of settings.
    #[arg(long = "server", value_name = "NAME", conflicts_with_all = ["stdio", "url", "name"])]
    pub servers: Vec<String>,

    /// Reach every enabled server of the MCP client config given with --config.
    #[arg(long, conflicts_with_all = ["servers", "stdio", "url", "name"])]
    pub all_servers: bool,

    /// The value of `${input:ID}` in a VS Code client config, as ID=VALUE (repeatable; never
    /// shown).
    #[arg(long = "input", value_name = "ID=VALUE")]
    pub inputs: Vec<String>,

    /// Let a value of this environment that a client config (`${env:NAME}`) or a `server.json`
    /// remote names go into the URL or headers of an HTTP server at HOST (any port) or HOST:PORT
    /// (repeatable). Any other such server is not contacted.
    #[arg(long = "allow-host", value_name = "HOST[:PORT]", value_parser = allowed_host)]
    pub allow_hosts: Vec<AllowedHost>,

    /// Also write the fetched tools/list, pretty-printed, to FILE (with several servers, a
    /// directory of one NAME.json per server, two servers never sharing a file).
    #[arg(long, value_name = "FILE", value_parser = written_path)]
    pub save: Option<PathBuf>,

    /// Say on stderr which protocol revision each server spoke.
    #[arg(long, short)]
    pub verbose: bool,

    /// How the server is named in output (`file` of its diagnostics). Default: `stdio:PROGRAM`
    /// (no arguments, which may hold secrets) or the URL without credentials, query or fragment.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// The server command and its arguments (after `--`, with `--stdio`).
    #[arg(last = true, value_name = "CMD", requires = "stdio")]
    pub command: Vec<String>,
}

/// How `census --live` and `census --server-json` reach their servers (`fetching`: either flag).
#[derive(Debug, Clone, Args)]
pub struct ConfigServerArgs {
    /// The value of `${input:ID}` in a VS Code client config, as ID=VALUE (repeatable; never
    /// shown).
    #[arg(long = "input", value_name = "ID=VALUE", requires = "live")]
    pub inputs: Vec<String>,

    /// Let a value of this environment that a client config (`${env:NAME}`) or a `server.json`
    /// remote names go into the URL or headers of an HTTP server at HOST (any port) or HOST:PORT
    /// (repeatable). Any other such server is not contacted.
    #[arg(long = "allow-host", value_name = "HOST[:PORT]", requires = "fetching",
          value_parser = allowed_host)]
    pub allow_hosts: Vec<AllowedHost>,

    /// Give up on a request to a server after this many seconds (1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, requires = "fetching",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,

    /// Give up on a server after this many seconds in all (1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 120, requires = "fetching",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub total_timeout: u64,

    /// Also write each fetched tools/list, pretty-printed, to DIR/NAME.json (two servers never
    /// sharing a file).
    #[arg(long, value_name = "DIR", requires = "fetching", value_parser = written_path)]
    pub save: Option<PathBuf>,

    /// Say on stderr which protocol revision each server spoke.
    #[arg(long, short, requires = "fetching")]
    pub verbose: bool,
}

impl ConfigServerArgs {
    /// The client options of these flags.
    pub fn options(&self) -> mcp_recovery_client::Options {
        mcp_recovery_client::Options {
            timeout: std::time::Duration::from_secs(self.timeout),
            total_timeout: std::time::Duration::from_secs(self.total_timeout),
            ..mcp_recovery_client::Options::default()
        }
    }
}
