//! `mcp-recovery census`: what a corpus of servers declares.

use std::io::Write;
use std::process::ExitCode;

use mcp_recovery_census::{
    CensusBuilder, CensusOptions, census_files_observed, collect_files_listing_missing,
};
use mcp_recovery_model::locate_tools;

use crate::args::documents::{CensusArgs, CensusFormat};
use crate::progress::{self, Progress};
use crate::sources::SourceReport;

use crate::{Failure, pretty};

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
    // Paths given that do not exist: listed as not read, and the run exits 2.
    let mut missing = Vec::new();
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
    if let (Some((_, skipped)), Some(_), CensusFormat::Table) =
        (&servers, &args.server_json, args.format)
    {
        // What a registry entry found before any server started, for the format that does not
        // list sources (a client config says its own).
        skipped.iter().for_each(crate::live::tell);
    }
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
            let (files, not_found) = collect_files_listing_missing(&args.paths);
            missing = not_found;
            let census = census_files_observed(&files, &options, |done, total| {
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
    for error in &missing {
        crate::errors::report(&Failure::Usage(error.to_string()));
    }
    if !missing.is_empty() {
        return Ok(ExitCode::from(2));
    }
    let unfetched = reports.iter().filter(|r| r.status.failed()).count();
    if unfetched > 0 {
        eprintln!("error: {unfetched} server(s) could not be fetched and are not counted");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
