//! `mcp-recovery convert`: move recovery metadata from one carrier to the other.

use std::io::Write;
use std::process::ExitCode;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_model::{NoteKind, convert_document};

use crate::args::documents::ConvertArgs;
use crate::inputs::{not_a_tools_list, read_json};
use crate::{Failure, pretty};

/// Runs `convert`. Exit status 1 when some metadata could not be converted (each case is
/// reported on stderr), 0 otherwise.
pub fn run(args: &ConvertArgs) -> Result<ExitCode, Failure> {
    let mut document = read_json(&args.input)?;
    crate::overlay::apply_optional(args.overlay.as_deref(), &mut document)?;
    let converted =
        convert_document(&document, args.to).map_err(|e| not_a_tools_list(&args.input, &e))?;
    let text = format!("{}\n", pretty(&converted.document, "the document")?);
    match &args.output {
        Some(path) => crate::written::write(path, text.as_bytes())?,
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    let mut stderr = std::io::stderr().lock();
    for note in &converted.notes {
        let label = match note.kind {
            NoteKind::NotConverted => "not converted",
            NoteKind::KeptInSource => "kept in source",
        };
        // The note quotes the tool's name and its fields: one inert line whatever they hold.
        writeln!(stderr, "{label}: {}", escape_controls(&note.to_string()))?;
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
