//! Shared helpers: the demo server binary, options with short limits, HTTP servers that stop
//! with the test.

#![allow(dead_code)] // each test file uses a different subset

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcp_recovery_client::Options;

/// The demo server binary built for these tests.
pub const SERVER: &str = env!("CARGO_BIN_EXE_mcp-recovery-demo-server");

/// A fixture file of this crate.
pub fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Arguments as owned strings.
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Short limits so that hostile servers fail fast.
pub fn quick() -> Options {
    Options {
        timeout: Duration::from_secs(2),
        shutdown_grace: Duration::from_millis(300),
        ..Options::default()
    }
}

/// Whether a process with this id still exists (Linux: `/proc`).
pub fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// A demo server in HTTP mode, killed when dropped.
pub struct HttpChild {
    child: Child,
    /// The endpoint URL the server printed.
    pub url: String,
}

impl HttpChild {
    /// Starts the server on a free loopback port with extra arguments.
    pub fn start(extra: &[&str]) -> HttpChild {
        let mut child = Command::new(SERVER)
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the demo server");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut url = String::new();
        BufReader::new(stdout)
            .read_line(&mut url)
            .expect("read the URL line");
        HttpChild {
            child,
            url: url.trim().to_string(),
        }
    }
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
