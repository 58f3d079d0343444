//! `mcp-recovery census`: what a corpus of servers declares.

use std::process::ExitCode;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_census::{
    CensusBuilder, CensusOptions, FileSeen, census_files_observed, collect_files_listing_missing,
};
use mcp_recovery_model::locate_tools;

use crate::allowed_hosts::AllowedHosts;
use crate::args::documents::{CensusArgs, CensusFormat};
use crate::progress::{self, Progress};
use crate::sources::{Kind, SourceReport, Status};

use crate::{Failure, pretty};

/// Runs `census`.
pub fn run(args: &CensusArgs) -> Result<ExitCode, Failure> {
    let options = CensusOptions {
        top_signatures: args.top,
        lint: !args.no_lint,
        read: crate::inputs::policy(),
        ..CensusOptions::default()
    };
    // Every source gets a report: each live server, or each file.
    let mut sources: Option<Vec<SourceReport>> = None;
    let live = args.live.is_some() || args.server_json.is_some();
    let allowed = AllowedHosts::new(&args.server.allow_hosts);
    let servers = match (&args.live, &args.server_json) {
        (Some(config), _) => Some(crate::live::configured_sources(
            config,
            &args.server.inputs,
            &allowed,
            &[],
            &args.server.options(),
        )?),
        (None, Some(path)) => Some(crate::server_json::with_real_host(&allowed, |host| {
            crate::server_json::load(path, &args.server.options(), host)
        })?),
        (None, None) => None,
    };
    if let (Some((_, skipped)), Some(_)) = (&servers, &args.server_json) {
        // What a registry entry found before any server started, whatever the format, so that
        // stderr names every source not counted (a client config says its own).
        skipped.iter().for_each(crate::live::tell);
    }
    let census = match servers {
        Some((servers, skipped)) => {
            let mut builder =
                CensusBuilder::new(&options).map_err(|e| Failure::Usage(e.to_string()))?;
            let reports = sources.insert(skipped);
            let progress =
                Progress::counter(progress::wanted(args.quiet), servers.len(), "servers");
            let saves = args
                .server
                .save
                .as_deref()
                .map(|save| crate::save::save_paths(save, &servers, true));
            for (i, server) in servers.iter().enumerate() {
                progress.say(format!("starting {}", server.name()));
                let fetched = server.fetch_full(args.server.verbose);
                progress.step();
                match fetched {
                    Ok(fetched) => {
                        let text = crate::live::document_text(&fetched.tools)?;
                        if let Some(path) = saves.as_ref().and_then(|paths| paths.get(i)) {
                            crate::save::save(path, &text)?;
                        }
                        let seen = builder.add_bytes_seen(server.name(), text.as_bytes());
                        let tools = locate_tools(&fetched.tools).map_or(0, |t| t.tools.len());
                        let findings = seen.findings.map(count);
                        reports.push(SourceReport {
                            protocol: Some(fetched.protocol),
                            ..SourceReport::linted(&server.name(), server.kind(), tools, findings)
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
            let (files, _) = collect_files_listing_missing(&args.paths);
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
            sources = Some(census.sources.iter().map(file_source).collect());
            census
        }
    };
    let reports = sources.as_deref().unwrap_or_default();
    let text = match args.format {
        CensusFormat::Table => census.render_table(),
        CensusFormat::Markdown => {
            let mut text = census.render_markdown();
            if live {
                // Files not read are among the files that are not tools lists already.
                text.push_str(&crate::render::markdown::unlinted_table(
                    reports,
                    "Not counted",
                ));
            }
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
    crate::written::print(&text)?;
    if let Some(path) = &args.svg {
        crate::written::write(path, census.render_svg().as_bytes())?;
    }
    if !live {
        // Over files, one that cannot be read (or a path given that does not exist) is part of
        // the corpus, counted and listed; the run names it and exits 2.
        let unread: Vec<&SourceReport> = reports.iter().filter(|r| r.status.failed()).collect();
        for report in &unread {
            // The reason names the file.
            eprintln!("error: {}", report.reason());
        }
        return Ok(if unread.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(2)
        });
    }
    let unfetched = reports.iter().filter(|r| r.status.failed()).count();
    if unfetched > 0 {
        eprintln!("error: {unfetched} server(s) could not be fetched and are not counted");
        return Ok(ExitCode::from(2));
    }
    if !reports.iter().any(|r| r.status == Status::Linted) {
        // Every server was skipped: nothing was counted, which is no pass.
        eprintln!(
            "error: no server could be counted ({} skipped)",
            reports.len()
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// A count of the census as the count of a report.
fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The source report of one file of a census over files: `linted` (read, counted and, unless
/// `--no-lint`, linted: `findings` is then `null`), or `unreadable` with why.
fn file_source(seen: &FileSeen) -> SourceReport {
    let name = escape_controls(&seen.path);
    match &seen.not_read {
        Some(reason) => SourceReport::not_linted(
            &name,
            Kind::File,
            Status::Unreadable,
            &format!("cannot read {name}: {reason}"),
        ),
        None => SourceReport::linted(
            &name,
            Kind::File,
            count(seen.tools),
            seen.findings.map(count),
        ),
    }
}
