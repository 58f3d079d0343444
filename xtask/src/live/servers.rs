//! The live servers: the pinned packages, how each is started once installed, and the
//! installation of the Python one.

use std::path::Path;
use std::process::Command;

use super::install::{INSTALL_TIMEOUT, probe};
use super::process::{run, tail};

/// npm packages and the exact version the captures were taken from.
pub(super) const NPM_PACKAGES: &[(&str, &str)] = &[
    ("@modelcontextprotocol/server-memory", "2026.8.31"),
    ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
    ("@modelcontextprotocol/server-everything", "2026.8.31"),
];

/// The PyPI package and the version whose tools match `mcp-server-time.json` (earlier releases
/// publish different schemas).
const PYPI_PACKAGE: (&str, &str) = ("mcp-server-time", "2026.10.19");

/// One real server: its capture and how to start it once the packages are installed.
pub(super) struct LiveServer {
    /// Short name used in messages.
    pub(super) name: &'static str,
    /// File name under `real-servers/`.
    pub(super) capture: &'static str,
    /// The server command line.
    pub(super) command: Vec<String>,
}

/// The four servers, started from the temporary installation.
pub(super) fn servers(npm_prefix: &Path, python: &PythonServer, allowed: &Path) -> Vec<LiveServer> {
    let bin = |name: &str| path_arg(&npm_prefix.join("node_modules/.bin").join(name));
    vec![
        LiveServer {
            name: "server-memory",
            capture: "server-memory.json",
            command: vec![bin("mcp-server-memory")],
        },
        LiveServer {
            name: "server-filesystem",
            capture: "server-filesystem.json",
            command: vec![bin("mcp-server-filesystem"), path_arg(allowed)],
        },
        LiveServer {
            name: "server-everything",
            capture: "server-everything.json",
            command: vec![bin("mcp-server-everything"), "stdio".to_owned()],
        },
        LiveServer {
            name: "mcp-server-time",
            capture: "mcp-server-time.json",
            // A fixed zone keeps the descriptions, which name the local zone, independent of the
            // machine.
            command: {
                let mut command = python.command.clone();
                command.push("--local-timezone=Etc/UTC".to_owned());
                command
            },
        },
    ]
}

pub(super) fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// How to start the Python server once installed.
pub(super) struct PythonServer {
    command: Vec<String>,
}

/// Installs the pinned PyPI package in a virtual environment under `tmp`, or with
/// `pip install --target` when this Python has no working `venv`.
pub(super) fn pip_install(tmp: &Path) -> Result<PythonServer, String> {
    let step = "step `pip install`";
    probe("python3", step)?;
    let (name, version) = PYPI_PACKAGE;
    let requirement = format!("{name}=={version}");
    let venv = tmp.join("venv");
    let mut create = Command::new("python3");
    create.args(["-m", "venv"]).arg(&venv);
    let created = run(create, INSTALL_TIMEOUT, step)?;
    let (mut install, server) = if created.status.success() {
        let mut install = Command::new(venv.join("bin/pip"));
        install.arg("install");
        (
            install,
            PythonServer {
                command: vec![path_arg(&venv.join("bin/mcp-server-time"))],
            },
        )
    } else {
        println!(
            "    python3 -m venv failed, installing with pip --target instead:\n{}",
            tail(&created.stderr)
        );
        let target = tmp.join("python");
        let mut install = Command::new("python3");
        install
            .args(["-m", "pip", "install", "--target"])
            .arg(&target);
        // The server runs as a module with the target directory on its path; `env` passes that
        // path on without changing the environment of anything else.
        let command = vec![
            "env".to_owned(),
            format!("PYTHONPATH={}", path_arg(&target)),
            "python3".to_owned(),
            "-m".to_owned(),
            "mcp_server_time".to_owned(),
        ];
        (install, PythonServer { command })
    };
    install
        .args([
            "--quiet",
            "--no-input",
            "--disable-pip-version-check",
            &requirement,
        ])
        .env("PIP_NO_INPUT", "1");
    let output = run(install, INSTALL_TIMEOUT, step)?;
    if !output.status.success() {
        return Err(output.failure(&format!(
            "{step} {requirement} (PyPI unreachable or the pinned version missing?)"
        )));
    }
    Ok(server)
}
