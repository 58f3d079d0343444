//! Arguments of the commands over documents and the catalog: `explain`, `schema`, `fetch`,
//! `plan`, `convert`, `census`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use mcp_recovery_model::Carrier;

use crate::args::server::{ConfigServerArgs, ServerArgs};
use crate::args::values::written_path;

/// Arguments of `rules`: none of its own.
#[derive(Debug, Args)]
pub struct RulesArgs {}

/// Arguments of `explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Rule code (`R106`) or name (`unresolvable-pointer`).
    #[arg(value_name = "CODE|NAME")]
    pub rule: String,
}

/// Arguments of `schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write every schema into this directory (created if missing) instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "name", value_parser = written_path)]
    pub out: Option<PathBuf>,

    /// Add `ToolAnnotations.recovery` and its declarations to `schema/<VERSION>/schema.ts` of this
    /// checkout of the MCP specification repository, and the examples to
    /// `schema/<VERSION>/examples/Tool/`. Nothing else is touched; symbolic links are never
    /// followed; running it again changes only what the generator changed.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "name"], value_parser = written_path)]
    pub spec_repo: Option<PathBuf>,

    /// The protocol version directory under `schema/` for `--spec-repo`: `draft` (where schema
    /// changes are proposed) or a date such as 2026-07-28.
    #[arg(
        long,
        value_name = "VERSION",
        requires = "spec_repo",
        default_value = mcp_recovery_schema::spec_repo::DEFAULT_VERSION
    )]
    pub protocol_version: String,

    /// Schema to print, by file name (`tool.schema.json`) or short name (`tool`).
    /// Without a name (and without `--out`), lists the available schemas.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

/// Arguments of `fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The MCP client config whose --server to fetch (Claude Desktop, Cursor, VS Code).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The server to fetch from.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Arguments of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The tools/list document (JSON-RPC response, `{"tools": [...]}` or an array; `-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub tools: PathBuf,
    /// The trace: JSON Lines, one completed call per line in completion order,
    /// `{"name": …, "arguments": {…}, "result": <CallToolResult> | null}` (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,
    /// With a proxy journal as the trace: plan only this session's calls.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = PlanFormat::Human)]
    pub format: PlanFormat,
    /// Apply this overlay (JSON or TOML) to the tools before planning.
    #[arg(long, value_name = "FILE")]
    pub overlay: Option<PathBuf>,
}

/// Output formats of `plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// An aligned table.
    Human,
    /// `{"steps": [...]}`.
    Json,
}

/// Arguments of `convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The carrier to move recovery metadata into: `sep3172` (annotations.recovery) or
    /// `compensate` (_meta["dev.chronomcp/compensate"]).
    #[arg(long, value_name = "CARRIER")]
    pub to: Carrier,
    /// The tools/list document to convert (`-` for stdin). It is never modified.
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// Write the converted document here instead of stdout.
    #[arg(long, short, value_name = "FILE", value_parser = written_path)]
    pub output: Option<PathBuf>,
    /// Apply this overlay (JSON or TOML) first, so its declarations are converted and written
    /// into the document.
    #[arg(long, value_name = "FILE")]
    pub overlay: Option<PathBuf>,
}

/// Arguments of `census`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("fetching").args(["live", "server_json"]))]
pub struct CensusArgs {
    /// Files or directories (walked for `*.json`), one tools/list document per server.
    #[arg(value_name = "PATH", required_unless_present_any = ["live", "server_json"])]
    pub paths: Vec<PathBuf>,
    /// Fetch every enabled server of this MCP client config (Claude Desktop, Cursor, VS Code)
    /// and count them instead of files.
    #[arg(long, value_name = "CONFIG", conflicts_with = "paths")]
    pub live: Option<PathBuf>,
    /// Fetch the servers an MCP Registry `server.json` declares (or every one in a directory)
    /// and count them instead of files: packages started with npx, uvx or docker, remotes over
    /// Streamable HTTP.
    #[arg(long, value_name = "FILE|DIR", conflicts_with_all = ["paths", "live"])]
    pub server_json: Option<PathBuf>,
    /// Live servers: `${input:ID}` values, timeouts, `--save DIR`, `--verbose`.
    #[command(flatten)]
    pub server: ConfigServerArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CensusFormat::Table)]
    pub format: CensusFormat,
    /// Also draw the hint-signature distribution as an SVG bar chart into this file.
    #[arg(long, value_name = "FILE", value_parser = written_path)]
    pub svg: Option<PathBuf>,
    /// How many hint signatures to list by name.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Skip linting (no findings per rule; faster).
    #[arg(long)]
    pub no_lint: bool,
    /// Show no progress on stderr (it is only ever drawn on a terminal).
    #[arg(long, short)]
    pub quiet: bool,
}

/// Output formats of `census`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CensusFormat {
    /// An aligned table.
    Table,
    /// One JSON object.
    Json,
    /// A Markdown report.
    Markdown,
}
