//! `mcp-recovery profile`: the guarantee profiles a conforming runtime can reach for each tool
//! and for the server, from the declarations alone, with the missing declaration of every gap.

use mcp_recovery_base::text::escape_controls;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use mcp_recovery_adoption::profile::{Profile, ServerProfile, profile_tools};
use mcp_recovery_model::locate_tools;

use crate::args::server::ServerArgs;
use crate::inputs::read_json;
use crate::allowed_hosts::AllowedHosts;
use crate::live;
use crate::overlay::{LoadedOverlay, OverlayArg};
use crate::sources::{SourceReport, Status};
use crate::{Failure, pretty};

/// Arguments of `profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// The tools/list document (`-` for stdin); or name a live server with `--stdio`/`--url`.
    #[arg(value_name = "TOOLS", conflicts_with_all = ["stdio", "url", "servers", "all_servers"])]
    pub input: Option<PathBuf>,
    /// Apply this overlay (JSON or TOML) first.
    #[arg(long, value_name = "FILE")]
    pub overlay: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ProfileFormat::Human)]
    pub format: ProfileFormat,
    /// Profile the servers an MCP Registry `server.json` declares (or every one in a
    /// directory): packages started with npx, uvx or docker, remotes over Streamable HTTP. The
    /// JSON output is then `{"profiles": [...], "sources": [...]}`.
    #[arg(long, value_name = "FILE|DIR",
          conflicts_with_all = ["input", "stdio", "url", "overlay", "servers", "all_servers"])]
    pub server_json: Option<PathBuf>,
    /// A live server to profile.
    #[command(flatten)]
    pub server: ServerArgs,
    /// The MCP client config (Claude Desktop, Cursor, VS Code) whose --server NAME to profile;
    /// with --all-servers (or several --server), every one, the JSON output then being
    /// `{"profiles": [...], "sources": [...]}`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input", "stdio", "url", "server_json"])]
    pub config: Option<PathBuf>,
}

/// Output formats of `profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfileFormat {
    /// A table per tool, then the gaps.
    Human,
    /// `{"tools": [...], "reached": [...]}`.
    Json,
}

/// Runs `profile`.
pub fn run(args: &ProfileArgs) -> Result<ExitCode, Failure> {
    if let Some(path) = &args.server_json {
        let base = live::options(&args.server)?;
        let allowed = AllowedHosts::new(&args.server.allow_hosts);
        let (servers, sources) = crate::server_json::with_real_host(&allowed, |host| {
            crate::server_json::load(path, &base, host)
        })?;
        // Whatever the format, stderr names every entry not run (a client config says its own).
        sources.iter().for_each(live::tell);
        return run_servers(args, servers, sources);
    }
    if args.server.all_servers || args.server.servers.len() > 1 {
        if args.overlay.is_some() {
            return Err(Failure::Usage(
                "--overlay applies to one server: name it with --server NAME".to_owned(),
            ));
        }
        let (servers, sources) =
            live::server_sources(&args.server, args.config.as_deref())?.unwrap_or_default();
        return run_servers(args, servers, sources);
    }
    let overlay = args
        .overlay
        .as_deref()
        .map(LoadedOverlay::read)
        .transpose()?;
    let server = live::one_server(&args.server, args.config.as_deref(), "profile")?;
    let (mut document, shown) = match server {
        Some(server) => {
            let shown = server.name();
            let (document, name) = server
                .fetch_named(args.server.verbose)
                .map_err(Failure::server(shown.clone()))?;
            if let Some(overlay) = &overlay {
                overlay.check_server(name.as_deref())?;
            }
            (document, shown)
        }
        None => {
            let Some(path) = &args.input else {
                return Err(Failure::Usage(
                    "profile needs a tools/list file, or a server: --stdio -- CMD ARGS..., \
                         --url URL or --config FILE --server NAME"
                        .to_owned(),
                ));
            };
            (read_json(path)?, path.display().to_string())
        }
    };
    if let Some(overlay) = &overlay {
        overlay.apply(&mut document)?;
    }
    let tools = locate_tools(&document)
        .map_err(|e| Failure::Usage(format!("{shown}: {e}")))?
        .tools;
    let profile = profile_tools(tools);
    let mut out = std::io::stdout().lock();
    match args.format {
        ProfileFormat::Json => writeln!(out, "{}", pretty(&profile, "the profiles")?)?,
        ProfileFormat::Human => write!(out, "{}", render(&profile))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `profile --server-json` (every server the entries declare) and `profile --config FILE
/// --all-servers`: each server profiled, and what became of each, `sources` holding those that
/// were not run already (exit 2 when one could not be fetched, or none was).
fn run_servers(
    args: &ProfileArgs,
    servers: Vec<live::Server>,
    mut sources: Vec<SourceReport>,
) -> Result<ExitCode, Failure> {
    let mut profiles = Vec::new();
    for server in &servers {
        let fetched = match server.fetch_full(args.server.verbose) {
            Ok(fetched) => fetched,
            Err(error) => {
                sources.push(live::report(server, error));
                continue;
            }
        };
        let name = server.name();
        let tools = match locate_tools(&fetched.tools) {
            Ok(located) => located.tools,
            Err(e) => {
                let reason = format!("the tools/list is not a list of tools: {e}");
                eprintln!("error: server {name}: {reason}");
                sources.push(SourceReport::not_linted(
                    &name,
                    server.kind(),
                    Status::ProtocolError,
                    &reason,
                ));
                continue;
            }
        };
        sources.push(SourceReport {
            protocol: Some(fetched.protocol),
            ..SourceReport::linted(&name, server.kind(), tools.len(), None)
        });
        profiles.push((name, profile_tools(tools)));
    }
    let mut out = String::new();
    match args.format {
        ProfileFormat::Json => {
            let mut records = Vec::new();
            for (name, profile) in &profiles {
                let mut record = serde_json::to_value(profile)
                    .map_err(|e| Failure::Usage(format!("cannot serialize the profiles: {e}")))?;
                if let Some(object) = record.as_object_mut() {
                    object.insert("source".into(), name.clone().into());
                }
                records.push(record);
            }
            let sources: Vec<_> = sources.iter().map(SourceReport::to_json).collect();
            let document = serde_json::json!({ "profiles": records, "sources": sources });
            out = format!("{}\n", pretty(&document, "the profiles")?);
        }
        ProfileFormat::Human => {
            for (i, (name, profile)) in profiles.iter().enumerate() {
                let gap = if i > 0 { "\n" } else { "" };
                out.push_str(&format!("{gap}{name}:\n{}", render(profile)));
            }
            for source in sources.iter().filter(|s| s.status != Status::Linted) {
                out.push_str(&format!(
                    "\nnot profiled: {} ({}): {}\n",
                    source.name,
                    source.status.as_str(),
                    source.reason()
                ));
            }
        }
    }
    crate::written::print(&out)?;
    let failed = sources.iter().any(|s| s.status.failed());
    Ok(if failed || profiles.is_empty() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// One row per tool (`yes` or `-` per profile), the server's line, then every gap.
pub fn render(profile: &ServerProfile) -> String {
    let names: Vec<String> = profile
        .tools
        .iter()
        .map(|t| escape_controls(&t.tool).into_owned())
        .collect();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .chain(["tool".len(), "server".len()])
        .max()
        .unwrap_or(4);
    let mut out = format!("{:<width$}", "tool");
    for p in Profile::ALL {
        out.push_str(&format!("  {}", p.as_str()));
    }
    out.push('\n');
    let row = |label: &str, reached: &[Profile]| {
        let mut line = format!("{label:<width$}");
        for p in Profile::ALL {
            let mark = if reached.contains(&p) { "yes" } else { "-" };
            line.push_str(&format!("  {mark:<w$}", w = p.as_str().len()));
        }
        format!("{}\n", line.trim_end())
    };
    for (tool, name) in profile.tools.iter().zip(&names) {
        out.push_str(&row(name, &tool.reached));
    }
    out.push_str(&row("server", &profile.reached));
    let gaps: Vec<_> = profile
        .tools
        .iter()
        .zip(&names)
        .flat_map(|(t, name)| t.gaps.iter().map(move |g| (name, g)))
        .collect();
    if !gaps.is_empty() {
        out.push_str("\nmissing declarations:\n");
        for (name, gap) in gaps {
            out.push_str(&format!(
                "  {name}: {} ({}): {}\n",
                gap.profile.as_str(),
                gap.profile.anomalies(),
                gap.missing
            ));
        }
    }
    out
}
