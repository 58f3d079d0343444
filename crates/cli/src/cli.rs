//! Command-line arguments: a public contract (see `docs/architecture.md`); flags are added, never
//! renamed.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// CLICOLOR_FORCE colours off one too, CLICOLOR=0 turns it off), always or never. Files
    /// written with --output-file are never coloured.
    #[arg(
        long,
        global = true,
        value_name = "WHEN",
        default_value = "auto",
        hide_possible_values = true
    )]
    pub color: crate::color::ColorWhen,
}

impl Cli {
    /// Requirements clap lets through when a path is also given (a conflicting argument lifts
    /// `requires`): `--header` needs `--url`, a command after `--` needs `--stdio`. `command` is
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

/// Parses a size: digits, then optionally `K`, `M` or `G` (powers of 1024, `KiB`… and `KB`…
/// read the same).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &text[digits.len()..];
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("unknown unit `{unit}` (use K, M or G)")),
    };
    let number: u64 = digits
        .parse()
        .map_err(|_| "expected a number of bytes such as 1048576, 512K or 100M".to_owned())?;
    if number == 0 {
        return Err("the size must be at least 1 byte".to_owned());
    }
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| "the size is too large".to_owned())
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
    Plan(crate::plan_cmd::PlanArgs),
    /// Move recovery metadata between the SEP-3172 and mcp-compensate carriers.
    ///
    /// Exit status: 0 converted, 1 some metadata has no counterpart (reported on stderr and kept
    /// where it was), 2 the document could not be read.
    Convert(crate::convert_cmd::ConvertArgs),
    /// Draft an overlay declaring recovery for a server that declares none (file or live).
    Suggest(crate::suggest_cmd::SuggestArgs),
    /// The guarantee profiles each tool and the server reach from their declarations.
    Profile(crate::profile_cmd::ProfileArgs),
    /// Measure what a corpus of tools/list documents declares (one file per server).
    Census(crate::census_cmd::CensusArgs),
    /// Run the checkout demo: lint a live server, fail a workflow, roll it back from metadata.
    #[cfg(feature = "demo")]
    Demo(crate::demo::DemoArgs),
    /// Run an MCP server behind the recovery proxy: classify, gate, journal and roll back its
    /// tool calls.
    Proxy(crate::proxy_cmd::ProxyArgs),
    /// Audit a proxy journal.
    Audit(crate::audit_cmd::AuditArgs),
    /// List the calls a proxy holds for its approvers, or sign and send one approver's
    /// decision (`--key FILE --as NAME REQUEST --approve|--deny`).
    ///
    /// With `--pending FILE` (a request as the approvals webhook posted it) or `--print` the
    /// signed decision is printed instead, for a decisions URL the policy names.
    ///
    /// Exit status: 0 listed, counted or printed, 1 the proxy refused the decision (why is printed), 2
    /// the proxy could not be reached or the key read.
    Approve(crate::approve_cmd::ApproveArgs),
    /// Run the compensations of a recorded session against a live server (resumable).
    Rollback(crate::rollback_cmd::RollbackArgs),
    /// Serve the demo's checkout MCP server on stdio (used by `demo`).
    #[cfg(feature = "demo")]
    #[command(hide = true)]
    DemoServer(DemoServerArgs),
}

/// Arguments of the hidden `demo-server` (test hooks of the demo server).
#[cfg(feature = "demo")]
#[derive(Debug, Args)]
pub struct DemoServerArgs {
    /// Append each tools/call (name, arguments) to this file as a JSON line.
    #[arg(long, value_name = "PATH", value_parser = written_path)]
    pub call_log: Option<PathBuf>,
    /// Wait MS milliseconds before answering calls to TOOL (`TOOL=MS`, repeatable).
    #[arg(long, value_name = "TOOL=MS", value_parser = parse_slow)]
    pub slow: Vec<(String, u64)>,
    /// Misbehave on tools/list (hang, crash, garbage, endless-pages, repeat-cursor, huge, chatty).
    #[arg(long, value_name = "MODE", value_parser = str::parse::<mcp_recovery_demo_server::stdio::Hostile>)]
    pub hostile: Option<mcp_recovery_demo_server::stdio::Hostile>,
    /// List the tools without recovery metadata (no `annotations.recovery`, no `_meta`), as a
    /// server that declares none.
    #[arg(long)]
    pub undeclared: bool,
    /// Serve Streamable HTTP at http://ADDR/mcp (loopback only) instead of stdio; the URL is
    /// the first stdout line.
    #[arg(long, value_name = "ADDR", conflicts_with = "hostile")]
    pub http: Option<std::net::SocketAddr>,
    /// With --http: answer as text/event-stream instead of JSON.
    #[arg(long, requires = "http")]
    pub sse: bool,
    /// The protocol revisions spoken: 2025-11-25 (initialize), 2026-07-28 (per-request
    /// versions and server/discover, no initialize) or both.
    #[arg(long, value_name = "R", default_value = "2025-11-25", value_parser = str::parse::<mcp_recovery_demo_server::Revisions>)]
    pub revisions: mcp_recovery_demo_server::Revisions,
}

/// A path the command writes or appends to: `-` would name standard input or output, which
/// cannot be, and an empty path names nothing, so both are refused.
pub fn written_path(text: &str) -> Result<PathBuf, String> {
    match text {
        "-" => {
            Err("`-` names standard input or output, which this path cannot be: name a file".into())
        }
        "" => Err("the path is empty".into()),
        _ => Ok(PathBuf::from(text)),
    }
}

/// Parses `--slow TOOL=MS`.
#[cfg(feature = "demo")]
fn parse_slow(spec: &str) -> Result<(String, u64), String> {
    spec.split_once('=')
        .and_then(|(tool, ms)| Some((tool.to_owned(), ms.parse().ok()?)))
        .ok_or_else(|| format!("{spec:?} is not TOOL=MILLISECONDS"))
}

/// Output formats of `lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Diagnostics with source excerpts, for people.
    Human,
    /// One JSON object (stable, versioned).
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// A Markdown report, for `$GITHUB_STEP_SUMMARY` or a pull-request comment.
    Markdown,
    /// GitLab Code Quality (a Code Climate issue array).
    Gitlab,
    /// JUnit XML, one test suite per document.
    Junit,
}

/// `--output-file FORMAT=PATH`: one more report of the same run, written to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// Its format.
    pub format: Format,
    /// Where it goes.
    pub path: PathBuf,
}

impl std::str::FromStr for OutputFile {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (format, path) = text
            .split_once('=')
            .ok_or_else(|| format!("expected FORMAT=PATH, got '{text}'"))?;
        let format = Format::from_str(format, false).map_err(|_| {
            let names: Vec<String> = Format::value_variants()
                .iter()
                .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_owned()))
                .collect();
            format!("unknown format '{format}' (one of: {})", names.join(", "))
        })?;
        Ok(Self {
            format,
            path: written_path(path)?,
        })
    }
}

/// What `--deny` can make fail a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Deny {
    /// Warnings fail the run like errors.
    Warnings,
}

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

    /// Lint this server of the MCP client config given with --config (repeatable). With it,
    /// --config names a client config (Claude Desktop, Cursor, VS Code) instead of settings.
    #[arg(long = "server", value_name = "NAME", conflicts_with_all = ["stdio", "url", "name"])]
    pub servers: Vec<String>,

    /// Lint every enabled server of the MCP client config given with --config.
    #[arg(long, conflicts_with_all = ["servers", "stdio", "url", "name"])]
    pub all_servers: bool,

    /// The value of `${input:ID}` in a VS Code client config, as ID=VALUE (repeatable; never
    /// shown).
    #[arg(long = "input", value_name = "ID=VALUE")]
    pub inputs: Vec<String>,

    /// Also write the fetched tools/list, pretty-printed as linted, to FILE (a directory, one
    /// NAME.json per server, with several servers).
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

    /// Give up on a request to a server after this many seconds (1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, requires = "fetching",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,

    /// Give up on a server after this many seconds in all (1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 120, requires = "fetching",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub total_timeout: u64,

    /// Also write each fetched tools/list, pretty-printed, to DIR/NAME.json.
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

/// Arguments of `lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Files, directories (walked for *.json, .gitignore respected) or `-` for stdin.
    /// Default: the current directory.
    #[arg(value_name = "PATH", conflicts_with_all = ["stdio", "url", "servers", "all_servers"])]
    pub paths: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Run only these rules (codes or names; repeatable or comma-separated). Replaces `select`
    /// from the config file.
    #[arg(long, value_name = "CODE|NAME", value_delimiter = ',')]
    pub select: Vec<String>,

    /// Never run these rules (codes or names; repeatable or comma-separated). Replaces `ignore`
    /// from the config file.
    #[arg(long, value_name = "CODE|NAME", value_delimiter = ',')]
    pub ignore: Vec<String>,

    /// Also fail the run on warnings.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Vec<Deny>,

    /// Read settings from this file instead of the `mcp-recovery.toml` found upward from the
    /// working directory. With --server or --all-servers, FILE is an MCP client config instead
    /// (its servers are linted; settings are then found as without --config).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Also write a report in FORMAT to PATH (repeatable): one run, several formats.
    #[arg(long = "output-file", value_name = "FORMAT=PATH")]
    pub output_files: Vec<OutputFile>,

    /// Findings listed in this baseline file do not fail the run; a listed finding that no
    /// longer occurs does.
    #[arg(long, value_name = "FILE", conflicts_with = "write_baseline")]
    pub baseline: Option<PathBuf>,

    /// Write every finding of this run to a baseline file (and do not fail on them).
    #[arg(long, value_name = "FILE", value_parser = written_path)]
    pub write_baseline: Option<PathBuf>,
    /// The rule set to run when no rule is selected: `recommended` (the default) or `strict`.
    /// Replaces `extends` from the config file.
    #[arg(long, value_enum, value_name = "SET")]
    pub preset: Option<PresetArg>,

    /// Apply this overlay (JSON or TOML) before linting: declarations for a server that does
    /// not make them itself. Findings about them point into the overlay file.
    #[arg(long, value_name = "FILE")]
    pub overlay: Option<PathBuf>,

    /// Ignore every config file: only the flags and the defaults apply. For CI on pull requests,
    /// where the repository (and so its `mcp-recovery.toml`) is the contributor's.
    #[arg(long, conflicts_with = "config")]
    pub isolated: bool,

    /// Show no progress on stderr (it is only ever drawn on a terminal).
    #[arg(long, short)]
    pub quiet: bool,

    /// Lint the servers an MCP Registry `server.json` declares (or every one in a directory):
    /// each package started with npx, uvx or docker, each remote over Streamable HTTP. Values
    /// come from the entry, then the environment, then the default.
    #[arg(long, value_name = "FILE|DIR",
          conflicts_with_all = ["paths", "stdio", "url", "servers", "all_servers"])]
    pub server_json: Option<PathBuf>,

    /// A live server to lint instead of files.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// The rule sets of `--preset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PresetArg {
    /// True findings worth acting on for any server (the default).
    Recommended,
    /// Every rule: also titles, explicit hints and a reversibility class on every tool.
    Strict,
}

impl PresetArg {
    /// The validator's preset.
    pub fn preset(self) -> mcp_recovery_validator::Preset {
        match self {
            Self::Recommended => mcp_recovery_validator::Preset::Recommended,
            Self::Strict => mcp_recovery_validator::Preset::Strict,
        }
    }
}

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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// The flags a help text spells out (`--key FILE`, `--stdio -- CMD`), `--` itself left out.
    fn flags_in(text: &str) -> Vec<String> {
        let mut flags = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("--") {
            let after = &rest[at + 2..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            let starts_word = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric());
            if starts_word && !name.is_empty() {
                flags.push(name.clone());
            }
            rest = &after[name.len()..];
        }
        flags
    }

    /// A summary that shows how to call a command (as the top-level help lists them) names only
    /// flags that command has: it cannot drift from the command's own usage line.
    #[test]
    fn summaries_name_only_flags_their_command_has() {
        let mut root = Cli::command();
        root.build();
        let global: Vec<String> = root
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_owned))
            .chain(["help".to_owned(), "version".to_owned()])
            .collect();
        // `help` mirrors every command without its arguments.
        let children = |command: &clap::Command| -> Vec<clap::Command> {
            command
                .get_subcommands()
                .filter(|c| c.get_name() != "help")
                .cloned()
                .collect()
        };
        let mut commands = children(&root);
        while let Some(command) = commands.pop() {
            commands.extend(children(&command));
            let own: Vec<&str> = command
                .get_arguments()
                .filter_map(|a| a.get_long())
                .collect();
            let texts = [command.get_about(), command.get_long_about()];
            for text in texts.into_iter().flatten() {
                let text = text.to_string();
                // A usage line is clap's to write, from the arguments themselves.
                assert!(
                    !text.contains("[OPTIONS]")
                        && !text.contains(&format!("`{} ", command.get_name())),
                    "`{}` spells out a usage line of its own: {text}",
                    command.get_name()
                );
                for flag in flags_in(&text) {
                    assert!(
                        own.contains(&flag.as_str()) || global.contains(&flag),
                        "`{}` names --{flag}, which it does not have",
                        command.get_name()
                    );
                }
            }
        }
        assert_eq!(flags_in("a --key FILE -- CMD x--y"), ["key"]);
    }
}
