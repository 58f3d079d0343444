//! Installing what a live check runs: a binary of this workspace built by cargo, pinned npm
//! packages, a Python virtual environment with pinned packages, and a probe that a program runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::process::{run, run_in};
use crate::workspace::read_json;

/// Time limit of one package installation (a cold npm cache takes most of a minute).
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);

/// Time limit of building `mcp-recovery` (a cold build of the workspace on a small machine).
const BUILD_TIMEOUT: Duration = Duration::from_secs(1800);
/// Time limit of quick probes such as `npm --version`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Builds one binary of one package and returns the path cargo reports for it.
pub fn build_binary(root: &Path, package: &str, binary: &str) -> Result<PathBuf, String> {
    build_binary_with(root, package, binary, false)
}

/// [`build_binary`], optimized when `release`.
pub fn build_binary_with(
    root: &Path,
    package: &str,
    binary: &str,
    release: bool,
) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(&cargo);
    command
        .args(["build", "--locked", "--package", package, "--bin", binary])
        .args(release.then_some("--release"))
        .arg("--message-format=json-render-diagnostics")
        .current_dir(root);
    let step = format!("step `build {binary}`");
    let output = run_in(command, BUILD_TIMEOUT, &step, false)?;
    if !output.status.success() {
        return Err(output.failure(&step));
    }
    // Cargo names the executable in its artifact message; this follows CARGO_TARGET_DIR and
    // profiles without guessing paths.
    output
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == binary
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("{step}: cargo built no {binary} executable"))
}

/// Installs pinned npm packages under `prefix`.
pub fn npm_install(prefix: &Path, packages: &[(&str, &str)]) -> Result<(), String> {
    let step = "step `npm install`";
    probe("npm", step)?;
    let mut command = Command::new("npm");
    command
        .arg("install")
        .arg("--prefix")
        .arg(prefix)
        .args(["--no-audit", "--no-fund", "--loglevel=error"])
        .args(
            packages
                .iter()
                .map(|(name, version)| format!("{name}@{version}")),
        )
        .env("npm_config_update_notifier", "false");
    let output = run(command, INSTALL_TIMEOUT, step)?;
    if !output.status.success() {
        return Err(output.failure(&format!(
            "{step} (registry unreachable or a pinned version missing?)"
        )));
    }
    for (name, version) in packages {
        let manifest = prefix.join("node_modules").join(name).join("package.json");
        let installed = read_json(&manifest).map_err(|e| format!("{step}: {e}"))?;
        if installed["version"] != *version {
            return Err(format!(
                "{step}: {name} installed as version {}, not the pinned {version}",
                installed["version"]
            ));
        }
    }
    Ok(())
}

/// A virtual environment at `venv` with `packages` (pinned) installed from PyPI.
pub fn venv(venv: &Path, packages: &[&str]) -> Result<(), String> {
    let step = "step `pip install`";
    probe("python3", step)?;
    let mut create = Command::new("python3");
    create.args(["-m", "venv"]).arg(venv);
    let created = run(create, INSTALL_TIMEOUT, step)?;
    if !created.status.success() {
        return Err(created.failure(&format!("{step}: python3 -m venv")));
    }
    let mut install = Command::new(venv.join("bin/pip"));
    install
        .args([
            "install",
            "--quiet",
            "--no-input",
            "--disable-pip-version-check",
        ])
        .args(packages)
        .env("PIP_NO_INPUT", "1");
    let output = run(install, INSTALL_TIMEOUT, step)?;
    if !output.status.success() {
        return Err(output.failure(&format!(
            "{step} {} (PyPI unreachable or a pinned version missing?)",
            packages.join(" ")
        )));
    }
    Ok(())
}

/// Fails the step when `program --version` cannot run.
pub fn probe(program: &str, step: &str) -> Result<(), String> {
    let mut command = Command::new(program);
    command.arg("--version");
    let output = run(command, PROBE_TIMEOUT, step)
        .map_err(|e| format!("{e}\n(is {program} installed and on PATH?)"))?;
    if output.status.success() {
        println!("    {program} {}", output.stdout.trim());
        Ok(())
    } else {
        Err(output.failure(&format!("{step}: `{program} --version`")))
    }
}
