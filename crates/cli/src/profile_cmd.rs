//! `mcp-recovery profile`: the guarantee profiles a conforming runtime can reach for each tool
//! and for the server, from the declarations alone, with the missing declaration of every gap.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use mcp_recovery_census::profile::{Profile, ServerProfile, profile_tools};
use mcp_recovery_model::locate_tools;

use crate::cli::ServerArgs;
use crate::inputs::read_json;
use crate::live;
use crate::overlay_cmd::{LoadedOverlay, escape};
use crate::{Failure, pretty};

/// Arguments of `profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// The tools/list document (`-` for stdin); or name a live server with `--stdio`/`--url`.
    #[arg(value_name = "TOOLS", conflicts_with_all = ["stdio", "url"])]
    pub input: Option<PathBuf>,
    /// Apply this overlay (JSON or TOML) first.
    #[arg(long, value_name = "FILE")]
    pub overlay: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ProfileFormat::Human)]
    pub format: ProfileFormat,
    /// A live server to profile.
    #[command(flatten)]
    pub server: ServerArgs,
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
    let overlay = args
        .overlay
        .as_deref()
        .map(LoadedOverlay::read)
        .transpose()?;
    let (mut document, shown) = match live::Server::from_args(&args.server)? {
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
                        "profile needs a tools/list file, or a server: --stdio -- CMD ARGS... or --url URL"
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

/// One row per tool (`yes` or `-` per profile), the server's line, then every gap.
pub fn render(profile: &ServerProfile) -> String {
    let names: Vec<String> = profile.tools.iter().map(|t| escape(&t.tool)).collect();
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
