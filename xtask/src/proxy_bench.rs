//! `cargo xtask bench` (or `cargo xtask bench proxy` alone): what `mcp-recovery proxy` adds to
//! a call. One client (this process) sends `tools/call` to the demo server one call at a time,
//! directly and through the proxy without a journal, with a journal synced to disk before each
//! forward and each answer, and with `--no-fsync`; read-only calls (`get_state`) and effectful
//! ones (`charge_payment`, each kept for a rollback within the proxy's window). Reports p50/p99
//! latency per call, the latency the proxy adds, calls per second, and the proxy's resident
//! memory before the first call, after 1,000 calls and after the last.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::live::build_binary_with;

/// Calls per mode (the journal-and-fsync mode makes fewer: each call waits for two syncs).
const CALLS: usize = 10_000;
const FSYNC_CALLS: usize = 2_000;
/// Calls after which the second memory reading is taken.
const FIRST_READING: usize = 1_000;

/// One client connection over a child's stdio.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl Peer {
    fn start(program: &Path, args: &[String]) -> Result<Peer, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut peer = Peer {
            child,
            stdin,
            stdout,
            line: String::new(),
            next_id: 0,
        };
        peer.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}),
        )?;
        peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(peer)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        writeln!(self.stdin, "{message}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("cannot write to the peer: {e}"))
    }

    /// Sends a request and reads until its answer (the demo server sends nothing else).
    fn request(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            self.line.clear();
            let n = self
                .stdout
                .read_line(&mut self.line)
                .map_err(|e| format!("cannot read from the peer: {e}"))?;
            if n == 0 {
                return Err(format!("the peer closed its stdout during {method}"));
            }
            let message: Value = serde_json::from_str(&self.line)
                .map_err(|e| format!("the peer sent a line that is not JSON: {e}"))?;
            if message["id"] == id {
                if message.get("error").is_some() {
                    return Err(format!("{method} failed: {message}"));
                }
                return Ok(());
            }
        }
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    fn finish(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// What one mode measured.
struct Run {
    mode: &'static str,
    calls: usize,
    latencies: Vec<Duration>,
    wall: Duration,
    /// Resident memory before the first call, after [`FIRST_READING`] calls, after the last.
    rss_kib: [u64; 3],
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn measure(
    mode: &'static str,
    program: &Path,
    args: &[String],
    calls: usize,
    call: &Value,
) -> Result<Run, String> {
    let mut peer = Peer::start(program, args)?;
    let mut rss_kib = [peer.rss_kib(), 0, 0];
    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    for done in 1..=calls {
        let sent = Instant::now();
        peer.request("tools/call", call.clone())?;
        latencies.push(sent.elapsed());
        if done == FIRST_READING {
            rss_kib[1] = peer.rss_kib();
        }
    }
    let wall = started.elapsed();
    rss_kib[2] = peer.rss_kib();
    peer.finish();
    latencies.sort();
    Ok(Run {
        mode,
        calls,
        latencies,
        wall,
        rss_kib,
    })
}

/// Builds the optimized CLI and runs every mode; prints a Markdown table.
pub fn run(root: &Path) -> Result<(), String> {
    let cli = build_binary_with(root, "mcp-recovery", "mcp-recovery", true)?;
    let tmp_dir = crate::live::temp_dir("mcp-recovery-proxy-bench")?;
    let tmp = tmp_dir.path();
    let cli_text = cli.display().to_string();
    let server = [cli_text.clone(), "demo-server".to_owned()];
    let journal = |name: &str| tmp.join(name).display().to_string();
    let proxied = |flags: &[String]| {
        let mut args = vec!["proxy".to_owned()];
        args.extend(flags.iter().cloned());
        args.push("--".to_owned());
        args.extend(server.iter().cloned());
        args
    };
    let read = json!({"name": "get_state", "arguments": {}});
    let effect = json!({"name": "charge_payment",
        "arguments": {"customerId": "bench", "amount": 1, "currency": "EUR"}});
    let no_fsync = |name: &str| {
        proxied(&[
            "--journal".to_owned(),
            journal(name),
            "--no-fsync".to_owned(),
        ])
    };
    let modes: Vec<(&'static str, Vec<String>, usize, &Value)> = vec![
        ("direct", vec!["demo-server".to_owned()], CALLS, &read),
        ("proxy, no journal", proxied(&[]), CALLS, &read),
        (
            "proxy, journal + fsync",
            proxied(&["--journal".to_owned(), journal("fsync.jsonl")]),
            FSYNC_CALLS,
            &read,
        ),
        (
            "proxy, journal --no-fsync",
            no_fsync("nofsync.jsonl"),
            CALLS,
            &read,
        ),
        ("effectful, proxy, no journal", proxied(&[]), CALLS, &effect),
        (
            "effectful, proxy, journal --no-fsync",
            no_fsync("effects.jsonl"),
            CALLS,
            &effect,
        ),
    ];
    let mut runs = Vec::new();
    for (mode, args, calls, call) in modes {
        runs.push(measure(mode, &cli, &args, calls, call)?);
    }
    let direct_p50 = percentile(&runs[0].latencies, 0.5);
    let direct_p99 = percentile(&runs[0].latencies, 0.99);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "\nproxy: sequential tools/call (get_state; effectful: charge_payment) against the demo server ({cli_text})\n"
    );
    println!(
        "| mode | calls | p50 ms | p99 ms | added p50 ms | added p99 ms | calls/s | RSS at 0 MB | RSS at {FIRST_READING} MB | RSS at the end MB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for run in &runs {
        let p50 = percentile(&run.latencies, 0.5);
        let p99 = percentile(&run.latencies, 0.99);
        let rss = |kib: u64| {
            if run.mode == "direct" {
                "-".to_owned()
            } else {
                format!("{:.1}", kib as f64 / 1024.0)
            }
        };
        println!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} | {} | {} | {} |",
            run.mode,
            run.calls,
            ms(p50),
            ms(p99),
            ms(p50) - ms(direct_p50),
            ms(p99) - ms(direct_p99),
            run.calls as f64 / run.wall.as_secs_f64(),
            rss(run.rss_kib[0]),
            rss(run.rss_kib[1]),
            rss(run.rss_kib[2]),
        );
    }
    Ok(())
}
