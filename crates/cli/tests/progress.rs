//! Progress on stderr: drawn when stderr is a terminal (a pseudo-terminal here), never with
//! `--quiet`, never when stderr is a pipe or a file.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{bin_in, root};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};

/// Runs `command` with stderr on a new pseudo-terminal; returns everything written to it.
fn stderr_on_a_terminal(command: &mut Command) -> String {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = File::options()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    // Drop our handle on the slave (the child has its own): the master reads until it closes.
    command.stderr(Stdio::null());
    let reader = std::thread::spawn(move || {
        let mut master = File::from(master);
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        // Linux ends a pseudo-terminal's output with EIO once every slave is closed.
        while let Ok(n) = master.read(&mut chunk) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&chunk[..n]);
        }
        bytes
    });
    child.wait().unwrap();
    String::from_utf8_lossy(&reader.join().unwrap()).into_owned()
}

/// A client config with a server that answers nothing in time and one that cannot start.
fn servers(dir: &Path) {
    let config = serde_json::json!({"mcpServers": {
        "slow": {"command": "sleep", "args": ["30"]},
        "absent": {"command": "./no-such-server"},
    }});
    std::fs::write(dir.join("mcp.json"), config.to_string()).unwrap();
}

fn lint_servers(dir: &Path, extra: &[&str]) -> Command {
    let mut command = bin_in(dir);
    command
        .args(["lint", "--config", "mcp.json", "--all-servers"])
        .args(["--total-timeout", "1", "--format", "json"])
        .args(extra);
    command
}

#[test]
fn lint_over_servers_shows_which_is_starting_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    servers(dir.path());
    let shown = stderr_on_a_terminal(&mut lint_servers(dir.path(), &[]));
    assert!(shown.contains("starting mcp.json#slow"), "{shown}");
    assert!(shown.contains("/2 servers"), "{shown}");
    // The errors still reach the terminal, whole.
    assert!(
        shown.contains("error: server mcp.json#absent: could not start"),
        "{shown}"
    );

    let quiet = stderr_on_a_terminal(&mut lint_servers(dir.path(), &["--quiet"]));
    assert!(
        !quiet.contains("starting") && !quiet.contains("servers ·"),
        "{quiet}"
    );
    assert!(quiet.contains("error: server mcp.json#absent"), "{quiet}");

    // A pipe gets the errors and nothing else.
    let output = lint_servers(dir.path(), &[]).output().unwrap();
    let piped = String::from_utf8(output.stderr).unwrap();
    assert!(
        !piped.contains("starting") && !piped.contains('\u{1b}'),
        "{piped}"
    );
    assert!(
        piped
            .lines()
            .all(|l| l.starts_with("error: ") || l.starts_with("  ")),
        "{piped}"
    );
}

#[test]
fn census_over_files_counts_them_on_a_terminal_only() {
    let fixtures = root().join("fixtures");
    let census = |extra: &[&str]| {
        let mut command = bin_in(&root());
        command
            .args(["census", "--format", "json"])
            .args(extra)
            .arg(&fixtures);
        command
    };
    let shown = stderr_on_a_terminal(&mut census(&[]));
    assert!(shown.contains(" files · "), "{shown}");
    let quiet = stderr_on_a_terminal(&mut census(&["-q"]));
    assert!(!quiet.contains(" files · "), "{quiet}");
    let output = census(&[]).output().unwrap();
    assert!(output.status.success());
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn suggest_says_what_it_is_doing_on_a_terminal_only() {
    let tools = root().join("fixtures/valid/compensate-record-store.json");
    let suggest = |extra: &[&str]| {
        let mut command = bin_in(&root());
        command.arg("suggest").args(extra).arg(&tools);
        command
    };
    let shown = stderr_on_a_terminal(&mut suggest(&[]));
    assert!(shown.contains("drafting recovery for"), "{shown}");
    let quiet = stderr_on_a_terminal(&mut suggest(&["--quiet"]));
    let output = suggest(&[]).output().unwrap();
    let piped = String::from_utf8(output.stderr).unwrap();
    // Without progress, a terminal gets exactly what a pipe gets (line ends aside).
    assert_eq!(quiet.replace("\r\n", "\n"), piped);
    assert!(!piped.contains("drafting") && !piped.contains("linting the draft"));
}
