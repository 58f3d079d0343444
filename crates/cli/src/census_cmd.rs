//! `mcp-recovery census`: what a corpus of servers declares.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use mcp_recovery_census::{CensusBuilder, CensusOptions, census_paths_observed};
use mcp_recovery_model::locate_tools;

use crate::progress::{self, Progress};
use crate::sources::SourceReport;

use crate::{Failure, pretty};

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
    pub server: crate::cli::ConfigServerArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CensusFormat::Table)]
    pub format: CensusFormat,
    /// Also draw the hint-signature distribution as an SVG bar chart into this file.
    #[arg(long, value_name = "FILE", value_parser = crate::cli::written_path)]
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

/// Runs `census`.
pub fn run(args: &CensusArgs) -> Result<ExitCode, Failure> {
    let options = CensusOptions {
        top_signatures: args.top,
        lint: !args.no_lint,
        read: crate::inputs::policy(),
        ..CensusOptions::default()
    };
    // Live servers each get a report (files are accounted by the census itself).
    let mut sources: Option<Vec<SourceReport>> = None;
    let servers = match (&args.live, &args.server_json) {
        (Some(config), _) => Some(crate::live::configured_sources(
            config,
            &args.server.inputs,
            &[],
            &args.server.options(),
        )?),
        (None, Some(path)) => Some(crate::server_json::with_real_host(|host| {
            crate::server_json::load(path, &args.server.options(), host)
        })?),
        (None, None) => None,
    };
    let census = match servers {
        Some((servers, skipped)) => {
            let mut builder =
                CensusBuilder::new(&options).map_err(|e| Failure::Usage(e.to_string()))?;
            let reports = sources.insert(skipped);
            let progress =
                Progress::counter(progress::wanted(args.quiet), servers.len(), "servers");
            for server in &servers {
                progress.say(format!("starting {}", server.name()));
                let fetched = server.fetch_full(args.server.verbose);
                progress.step();
                match fetched {
                    Ok(fetched) => {
                        let text = crate::live::document_text(&fetched.tools)?;
                        if let Some(dir) = &args.server.save {
                            crate::live::save(&crate::live::save_path(dir, server, true), &text)?;
                        }
                        builder.add_bytes(server.name(), text.as_bytes());
                        let tools = locate_tools(&fetched.tools).map_or(0, |t| t.tools.len());
                        reports.push(SourceReport {
                            protocol: Some(fetched.protocol),
                            ..SourceReport::linted(&server.name(), server.kind(), tools, None)
                        });
                    }
                    Err(error) => {
                        reports.push(progress.suspend(|| crate::live::report(server, error)));
                    }
                }
            }
            builder.finish()
        }
        None => {
            let shown = progress::wanted(args.quiet);
            let mut progress = None;
            let census = census_paths_observed(&args.paths, &options, |done, total| {
                progress
                    .get_or_insert_with(|| Progress::counter(shown, total, "files"))
                    .step_to(done);
            })
            .map_err(|e| Failure::Usage(e.to_string()))?;
            drop(progress);
            if census.files.total == 0 {
                let named: Vec<String> =
                    args.paths.iter().map(|p| p.display().to_string()).collect();
                return Err(Failure::Usage(format!(
                    "no *.json documents found in {}: nothing to count",
                    named.join(", ")
                )));
            }
            census
        }
    };
    let reports = sources.as_deref().unwrap_or_default();
    let text = match args.format {
        CensusFormat::Table => census.render_table(),
        CensusFormat::Markdown => {
            let mut text = census.render_markdown();
            text.push_str(&crate::render::markdown::unlinted_table(
                reports,
                "Not counted",
            ));
            text
        }
        CensusFormat::Json => {
            let mut value = serde_json::to_value(&census)
                .map_err(|e| Failure::Usage(format!("cannot serialize the census: {e}")))?;
            if let (Some(reports), Some(object)) = (&sources, value.as_object_mut()) {
                let records = reports.iter().map(SourceReport::to_json).collect();
                object.insert("sources".into(), serde_json::Value::Array(records));
            }
            format!("{}\n", pretty(&value, "the census")?)
        }
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if let Some(path) = &args.svg {
        std::fs::write(path, census.render_svg()).map_err(|source| Failure::WriteFile {
            path: path.display().to_string(),
            source,
        })?;
    }
    let unfetched = reports.iter().filter(|r| r.status.failed()).count();
    if unfetched > 0 {
        eprintln!("error: {unfetched} server(s) could not be fetched and are not counted");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
