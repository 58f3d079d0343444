//! `schema`: list the generated JSON Schemas, print one, or write all of them; with
//! `--spec-repo`, write the SEP-3172 additions into the MCP specification repository.

mod spec_repo;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use mcp_recovery_base::text::escape_controls;

use crate::args::documents::SchemaArgs;
use crate::{Failure, pretty};

/// `schema`: list, print one, or write all.
pub fn run(args: &SchemaArgs) -> Result<ExitCode, Failure> {
    if let Some(repo) = &args.spec_repo {
        return spec_repo::run(repo, &args.protocol_version).map(|()| ExitCode::SUCCESS);
    }
    let schemas = mcp_recovery_schema::schemas();
    let short = |file: &str| {
        file.strip_suffix(".schema.json")
            .or_else(|| file.strip_suffix(".json"))
            .unwrap_or(file)
            .to_owned()
    };
    let mut out = std::io::stdout().lock();
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|source| Failure::WriteFile {
            path: dir.display().to_string(),
            source,
        })?;
        for (file, value) in &schemas {
            let path = dir.join(file);
            let text = format!("{}\n", pretty(value, "the schema")?);
            write_new(dir, file, text.as_bytes()).map_err(|source| Failure::WriteFile {
                path: path.display().to_string(),
                source,
            })?;
            writeln!(out, "{}", escape_controls(&path.display().to_string()))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(name) = &args.name else {
        for (file, _) in &schemas {
            writeln!(out, "{file}")?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let (_, value) = schemas
        .iter()
        .find(|(file, _)| file == name || short(file) == *name)
        .ok_or_else(|| {
            let known: Vec<String> = schemas.iter().map(|(f, _)| short(f)).collect();
            Failure::Usage(format!(
                "unknown schema '{name}' (one of: {})",
                known.join(", ")
            ))
        })?;
    writeln!(out, "{}", pretty(value, "the schema")?)?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` as `dir/file` without ever following a symbolic link placed in `dir`: into a
/// new file (`create_new` fails on anything already there, a link included), then renamed over
/// the target, which replaces a link itself rather than the file it points to.
fn write_new(dir: &Path, file: &str, bytes: &[u8]) -> std::io::Result<()> {
    let mut attempt = 0u32;
    loop {
        let temporary = dir.join(format!(".{file}.{}-{attempt}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(mut handle) => {
                let written = handle.write_all(bytes).and_then(|()| handle.sync_all());
                drop(handle);
                let result = written.and_then(|()| std::fs::rename(&temporary, dir.join(file)));
                if result.is_err() {
                    let _ = std::fs::remove_file(&temporary);
                }
                return result;
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => {
                attempt += 1;
            }
            Err(error) => return Err(error),
        }
    }
}
