//! `fetch`: the merged raw tools/list of a live server, printed or saved.

use std::io::Write;
use std::process::ExitCode;

use mcp_recovery_base::text::escape_controls;

use crate::args::documents::FetchArgs;
use crate::{Failure, live, save};

/// `fetch`: the merged raw tools/list of a live server, or with `--save` of several.
pub fn run(args: &FetchArgs) -> Result<ExitCode, Failure> {
    let Some(servers) = live::servers(&args.server, args.config.as_deref())? else {
        return Err(Failure::Usage(
            "fetch needs a server: --stdio -- CMD ARGS..., --url URL or --config FILE --server NAME"
                .to_owned(),
        ));
    };
    let several = servers.len() > 1;
    if several && args.server.save.is_none() {
        return Err(Failure::Usage(
            "fetch prints one server's tools/list: name one --server, or give --save DIR for \
             several"
                .to_owned(),
        ));
    }
    let mut out = std::io::stdout().lock();
    let mut failed = None;
    let saves = args
        .server
        .save
        .as_deref()
        .map(|save| save::save_paths(save, &servers, several));
    for (i, server) in servers.iter().enumerate() {
        let text = match server.fetch(args.server.verbose) {
            Ok(value) => live::document_text(&value)?,
            Err(error) if several => {
                live::report(server, error);
                failed = Some(server.name());
                continue;
            }
            Err(error) => return Err(Failure::server(server.name())(error)),
        };
        match saves.as_ref().and_then(|paths| paths.get(i)) {
            Some(path) => {
                save::save(path, &text)?;
                if several {
                    let shown = path.display().to_string();
                    writeln!(out, "{}", escape_controls(&shown))?;
                } else {
                    out.write_all(text.as_bytes())?;
                }
            }
            None => out.write_all(text.as_bytes())?,
        }
    }
    match failed {
        Some(name) => Err(Failure::Usage(format!(
            "not every server could be fetched (the last that failed: {name})"
        ))),
        None => Ok(ExitCode::SUCCESS),
    }
}
