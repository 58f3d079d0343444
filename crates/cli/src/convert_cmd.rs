//! `mcp-recovery convert`: move recovery metadata from one carrier to the other.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use mcp_recovery_model::{Carrier, NoteKind, convert_document};

use crate::inputs::{not_a_tools_list, read_json};
use crate::{Failure, pretty};

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
    #[arg(long, short, value_name = "FILE", value_parser = crate::cli::written_path)]
    pub output: Option<PathBuf>,
    /// Apply this overlay (JSON or TOML) first, so its declarations are converted and written
    /// into the document.
    #[arg(long, value_name = "FILE")]
    pub overlay: Option<PathBuf>,
}

/// Runs `convert`. Exit status 1 when some metadata could not be converted (each case is
/// reported on stderr), 0 otherwise.
pub fn run(args: &ConvertArgs) -> Result<ExitCode, Failure> {
    let mut document = read_json(&args.input)?;
    crate::overlay_cmd::apply_optional(args.overlay.as_deref(), &mut document)?;
    let converted =
        convert_document(&document, args.to).map_err(|e| not_a_tools_list(&args.input, &e))?;
    let text = format!("{}\n", pretty(&converted.document, "the document")?);
    match &args.output {
        Some(path) => std::fs::write(path, text).map_err(|source| Failure::WriteFile {
            path: path.display().to_string(),
            source,
        })?,
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    let mut stderr = std::io::stderr().lock();
    for note in &converted.notes {
        let label = match note.kind {
            NoteKind::NotConverted => "not converted",
            NoteKind::KeptInSource => "kept in source",
        };
        writeln!(stderr, "{label}: {note}")?;
    }
    let incomplete = converted
        .notes
        .iter()
        .any(|n| n.kind == NoteKind::NotConverted);
    Ok(if incomplete {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
