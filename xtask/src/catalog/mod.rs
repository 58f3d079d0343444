//! `cargo xtask check-catalog`: every overlay of `overlays/` against the published server it
//! names, installed pinned into a temporary directory.
//!
//! For each server: the overlay must lint clean on the live server's `tools/list`; state the
//! workflow must not touch is set up first; a workflow runs through `mcp-recovery proxy
//! --overlay … --on-failure rollback` one call at a time, every call but the last succeeding and
//! the last failing; the failed answer must report every compensation done and none failed or
//! skipped; and the state, observed from outside (the server's own read tools or the file
//! system), must be exactly what it was before the workflow, the set-up state included. The
//! journal must pass `audit verify`. Every step that cannot run fails the check naming it.
//!
//! The check runs here; what a workflow is lives in `case`, the workflows themselves in
//! `workflows`, running one and checking its outcome in `run`, through a proxy `session`.

mod case;
mod run;
mod session;
mod workflows;

use std::path::Path;

use crate::live::{self, timed};

use case::{Case, text};
use run::run_case;
use workflows::{excel_case, filesystem_case, git_case, memory_case};

/// The npm packages the catalog covers, pinned (`server-memory` twice: its 2025 release returns
/// JSON only as text, and one overlay serves both).
const NPM_PACKAGES: &[(&str, &str)] = &[
    ("@modelcontextprotocol/server-memory", "2026.8.31"),
    ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
];
const NPM_OLD_MEMORY: (&str, &str) = ("@modelcontextprotocol/server-memory", "2025.4.25");

/// The PyPI packages, pinned.
const PYPI_PACKAGES: &[&str] = &["mcp-server-git==2026.10.19", "excel-mcp-server==2.2.2"];

/// Runs the whole check, or only the workflows of one overlay (`only`, its file stem); the error
/// names the step and the server that failed.
pub fn check(root: &Path, only: Option<&str>) -> Result<(), String> {
    let binary = timed("build mcp-recovery", || {
        live::build_binary(root, "mcp-recovery", "mcp-recovery")
    })?;
    let tmp_dir = crate::workspace::temp_dir("mcp-recovery-catalog")?;
    let tmp = tmp_dir.path();
    println!("temporary directory: {}", tmp.display());
    let npm = tmp.join("npm");
    let npm_old = tmp.join("npm-old");
    timed("npm install", || live::npm_install(&npm, NPM_PACKAGES))?;
    timed("npm install (old server-memory)", || {
        live::npm_install(&npm_old, &[NPM_OLD_MEMORY])
    })?;
    let venv = tmp.join("venv");
    let mut cases = cases(tmp, &npm, &npm_old, &venv)?;
    untested_overlays(root, &cases)?;
    if let Some(only) = only {
        cases.retain(|case| case.overlay == only);
        if cases.is_empty() {
            return Err(format!(
                "check-catalog: no workflow tests overlays/{only}.toml"
            ));
        }
    }
    if cases
        .iter()
        .any(|case| case.server[0].starts_with(&text(&venv)))
    {
        timed("pip install", || live::venv(&venv, PYPI_PACKAGES))?;
    }
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = timed(&case.label, || run_case(root, &binary, tmp, case)) {
            println!("{e}");
            failures.push(e);
        }
    }
    if failures.is_empty() {
        println!("check-catalog: {} workflows rolled back", cases.len());
        Ok(())
    } else {
        Err(format!(
            "check-catalog: {} of {} failed",
            failures.len(),
            cases.len()
        ))
    }
}

/// Every overlay of `overlays/` must have a workflow here: the catalog holds only tested overlays.
fn untested_overlays(root: &Path, cases: &[Case]) -> Result<(), String> {
    let dir = root.join("overlays");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut untested = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        if let Some(stem) = stem
            && !cases.iter().any(|case| case.overlay == stem)
        {
            untested.push(stem);
        }
    }
    if untested.is_empty() {
        Ok(())
    } else {
        untested.sort();
        Err(format!(
            "check-catalog: overlays/ holds overlays no workflow here tests: {}",
            untested.join(", ")
        ))
    }
}

/// The workflows, with their state directories created under `tmp`.
fn cases(tmp: &Path, npm: &Path, npm_old: &Path, venv: &Path) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    for (version, prefix, unknown_failure) in [
        (NPM_PACKAGES[0].1, npm, false),
        (NPM_OLD_MEMORY.1, npm_old, true),
    ] {
        let script = prefix.join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
        let file = tmp.join(format!("memory-{version}.jsonl"));
        cases.push(memory_case(version, &script, &file, unknown_failure));
    }
    let script = npm.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    cases.push(filesystem_case(&script, &tmp.join("filesystem"))?);
    cases.push(excel_case(
        &venv.join("bin/excel-mcp-server"),
        &tmp.join("excel"),
    )?);
    cases.push(git_case(
        &venv.join("bin/mcp-server-git"),
        &tmp.join("git"),
    )?);
    Ok(cases)
}
