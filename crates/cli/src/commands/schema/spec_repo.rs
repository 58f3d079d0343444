//! `schema --spec-repo DIR [--protocol-version V]`: the SEP-3172 changes written into a checkout of the MCP
//! specification repository.
//!
//! Only `schema/<V>/schema.ts` and the example files named by the generator are written. No
//! symbolic link is followed below DIR, every file is replaced atomically (written beside it,
//! then renamed), and each path is reported as written, updated or unchanged.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use mcp_recovery_schema::spec_repo;

use crate::Failure;

/// Writes the TypeScript declarations and the examples into `repo/schema/<version>/`.
pub fn run(repo: &Path, version: &str) -> Result<(), Failure> {
    let version = spec_repo::version(version).map_err(|e| Failure::Usage(e.to_string()))?;
    let shown = |relative: &str| format!("{}/{relative}", repo.display());
    if !repo.is_dir() {
        return Err(Failure::Usage(format!(
            "{} is not a directory (expected a checkout of the MCP specification repository)",
            repo.display()
        )));
    }
    let version_rel = format!("schema/{version}");
    for relative in ["schema", version_rel.as_str()] {
        match kind(&repo.join(relative)) {
            Kind::Dir => {}
            Kind::Missing => {
                return Err(Failure::Usage(format!(
                    "{} does not exist: DIR must be a checkout of the MCP specification repository{}",
                    shown(relative),
                    available_versions(repo)
                )));
            }
            other => return Err(refuse(&shown(relative), other)),
        }
    }
    let mut out = std::io::stdout().lock();

    let schema_rel = format!("{version_rel}/schema.ts");
    let schema_path = repo.join(&schema_rel);
    match kind(&schema_path) {
        Kind::File => {}
        Kind::Missing => {
            return Err(Failure::Usage(format!(
                "{} does not exist: the declarations are added to the version's schema.ts",
                shown(&schema_rel)
            )));
        }
        other => return Err(refuse(&shown(&schema_rel), other)),
    }
    let source = read_bounded(&schema_path, repo, &shown(&schema_rel))?;
    let patched = spec_repo::patch_schema_ts(&source)
        .map_err(|e| Failure::Usage(format!("{}: {e}", shown(&schema_rel))))?;
    let status = if patched == source {
        "unchanged"
    } else {
        replace(&schema_path, &patched, &shown(&schema_rel))?;
        "updated"
    };
    writeln!(
        out,
        "{status} {schema_rel} (ToolAnnotations.recovery and its declarations)"
    )?;

    let examples = spec_repo::example_files().map_err(|e| Failure::Usage(e.to_string()))?;
    for (relative, content) in examples {
        let relative = format!("{version_rel}/{relative}");
        let path = repo.join(&relative);
        ensure_dirs(repo, &relative, &shown)?;
        let status = match kind(&path) {
            Kind::Missing => "wrote",
            Kind::File
                if read_bounded(&path, repo, &shown(&relative)).ok() == Some(content.clone()) =>
            {
                "unchanged"
            }
            Kind::File => "updated",
            other => return Err(refuse(&shown(&relative), other)),
        };
        if status != "unchanged" {
            replace(&path, &content, &shown(&relative))?;
        }
        writeln!(out, "{status} {relative}")?;
    }
    writeln!(
        out,
        "next, in the checkout: npm run generate:schema && npm run check:schema"
    )?;
    Ok(())
}

/// What a path is, without following a final symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Missing,
    Dir,
    File,
    Symlink,
    Other,
}

fn kind(path: &Path) -> Kind {
    match std::fs::symlink_metadata(path) {
        Err(_) => Kind::Missing,
        Ok(meta) if meta.file_type().is_symlink() => Kind::Symlink,
        Ok(meta) if meta.is_dir() => Kind::Dir,
        Ok(meta) if meta.is_file() => Kind::File,
        Ok(_) => Kind::Other,
    }
}

fn refuse(shown: &str, kind: Kind) -> Failure {
    let what = match kind {
        Kind::Symlink => "is a symbolic link, which is never followed",
        Kind::Dir => "is a directory",
        Kind::File => "is a file, not a directory",
        Kind::Missing | Kind::Other => "is not a regular file or directory",
    };
    Failure::Usage(format!("{shown} {what}; nothing was written there"))
}

/// The version directories a checkout has, as a hint for a wrong `--protocol-version`.
fn available_versions(repo: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(repo.join("schema")) else {
        return String::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| spec_repo::is_version(name))
        .collect();
    names.sort();
    if names.is_empty() {
        String::new()
    } else {
        format!(" (versions there: {})", names.join(", "))
    }
}

/// Creates the directories of `relative` below `repo` that are missing; an existing one must be
/// a real directory.
fn ensure_dirs(repo: &Path, relative: &str, shown: &dyn Fn(&str) -> String) -> Result<(), Failure> {
    let mut current = PathBuf::from(repo);
    let mut walked = String::new();
    let parts: Vec<&str> = relative.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        current.push(part);
        if !walked.is_empty() {
            walked.push('/');
        }
        walked.push_str(part);
        match kind(&current) {
            Kind::Dir => {}
            Kind::Missing => {
                std::fs::create_dir(&current).map_err(|source| Failure::WriteFile {
                    path: shown(&walked),
                    source,
                })?;
            }
            other => return Err(refuse(&shown(&walked), other)),
        }
    }
    Ok(())
}

/// Reads a file of the checkout as text, under the size limit of every input (`--max-file-size`).
fn read_bounded(path: &Path, repo: &Path, shown: &str) -> Result<String, Failure> {
    let bytes =
        crate::inputs::read_file(path, repo, crate::inputs::policy()).map_err(|source| {
            Failure::Read {
                path: shown.to_owned(),
                source,
            }
        })?;
    String::from_utf8(bytes).map_err(|e| {
        Failure::Usage(format!(
            "{shown} is not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Writes `content` beside `path` in a new file, then renames it over `path`: a symbolic link
/// created at `path` meanwhile is replaced, never followed.
fn replace(path: &Path, content: &str, shown: &str) -> Result<(), Failure> {
    let fail = |source| Failure::WriteFile {
        path: shown.to_owned(),
        source,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.mcp-recovery-{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .and_then(|mut file| {
            file.write_all(content.as_bytes())
                .and_then(|()| file.sync_all())
        });
    if let Err(source) = written.and_then(|()| std::fs::rename(&temporary, path)) {
        let _ = std::fs::remove_file(&temporary);
        return Err(fail(source));
    }
    Ok(())
}
