//! `cargo xtask bench` (or `cargo xtask bench proxy` alone): what `mcp-recovery proxy` adds to
//! a call. One client (this process) sends `tools/call` to the demo server one call at a time,
//! directly and through the proxy without a journal, with a journal synced to disk before each
//! forward and each answer, and with `--no-fsync`; read-only calls (`get_state`) and effectful
//! ones (`charge_payment`, each kept for a rollback within the proxy's window). Reports p50/p99
//! latency per call, the latency the proxy adds, calls per second, and the proxy's resident
//! memory before the first call, after 1,000 calls and after the last.
//!
//! Then 16 clients at once, each its own session of `proxy --listen` over Streamable HTTP, make
//! effectful calls as fast as they are answered: directly to the demo server, through the proxy
//! without a journal, with a journal synced to disk (group commit: one sync covers every record
//! written while the previous one ran) and with `--no-fsync`. Journaled calls per second and the
//! p99 the journal adds are musts of the bench.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use mcp_recovery_client::{Connection, Options};

use serde_json::{Value, json};

use crate::live::build_binary_with;
use crate::targets::Targets;

/// Calls per mode (the journal-and-fsync mode makes fewer: each call waits for two syncs).
const CALLS: usize = 10_000;
const FSYNC_CALLS: usize = 2_000;
/// Calls after which the second memory reading is taken.
const FIRST_READING: usize = 1_000;
/// Resident memory a read-only call may leave behind on average after the first readings (the
/// allocator settling), in KiB: far below what keeping each call would cost.
const READ_ONLY_GROWTH_KIB: f64 = 0.1;

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

/// Sessions at once, and the effectful calls each makes after one that is not counted.
const SESSIONS: usize = 16;
const SESSION_CALLS: usize = 400;
/// The musts of the journal under concurrent sessions.
const JOURNALED_CALLS_PER_SECOND: f64 = 3_000.0;
const JOURNAL_ADDED_P99_MS: f64 = 5.0;

/// A child serving Streamable HTTP and the URL it named; its output is drained until it exits.
struct Listening {
    child: Child,
    url: String,
}

impl Listening {
    /// Starts `program args…` and waits for the line that names its URL: `prefix` then the URL,
    /// on stderr when `on_stderr`, else on stdout.
    fn start(
        program: &Path,
        args: &[String],
        prefix: &str,
        on_stderr: bool,
    ) -> Result<Listening, String> {
        let mut command = Command::new(program);
        command.args(args).stdin(Stdio::null());
        if on_stderr {
            command.stdout(Stdio::null()).stderr(Stdio::piped());
        } else {
            command.stdout(Stdio::piped()).stderr(Stdio::null());
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let output: Box<dyn Read + Send> = match (child.stderr.take(), child.stdout.take()) {
            (Some(stderr), _) => Box::new(stderr),
            (None, Some(stdout)) => Box::new(stdout),
            (None, None) => return Err("no output to read the URL from".into()),
        };
        let mut lines = BufReader::new(output);
        let mut line = String::new();
        let url = loop {
            line.clear();
            if lines.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} exited before naming its URL",
                    program.display()
                ));
            }
            if let Some(url) = line.trim_end().strip_prefix(prefix) {
                break url.to_owned();
            }
        };
        // Read to the end, so the child never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut lines, &mut std::io::sink()));
        Ok(Listening { child, url })
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// [`SESSIONS`] clients at once, each [`SESSION_CALLS`] calls of `call` over its own session of
/// `url`: every latency, sorted, and the wall time from the first call to the last answer.
fn concurrent(url: &str, call: &Value) -> Result<(Vec<Duration>, Duration), String> {
    let options = Options {
        total_timeout: Duration::from_secs(600),
        ..Options::default()
    };
    let name = call["name"].as_str().unwrap_or_default();
    let arguments = &call["arguments"];
    // Connected one after another: 2026-07-28 clients first try `server/discover`, which
    // sessionless clients share, so connecting at once would mix their request ids.
    let connections = (0..SESSIONS)
        .map(|_| {
            Connection::http(url, Vec::new(), &options)
                .and_then(|mut c| c.call_tool(name, arguments.clone()).map(|_| c))
                .map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let start = Barrier::new(SESSIONS + 1);
    let (latencies, wall) = std::thread::scope(|scope| {
        let clients: Vec<_> = connections
            .into_iter()
            .map(|mut connection| {
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    let mut latencies = Vec::with_capacity(SESSION_CALLS);
                    for _ in 0..SESSION_CALLS {
                        let sent = Instant::now();
                        connection
                            .call_tool(name, arguments.clone())
                            .map_err(|e| e.to_string())?;
                        latencies.push(sent.elapsed());
                    }
                    connection.close();
                    Ok::<_, String>(latencies)
                })
            })
            .collect();
        start.wait();
        let started = Instant::now();
        let latencies: Result<Vec<Vec<Duration>>, String> = clients
            .into_iter()
            .map(|c| c.join().unwrap_or_else(|_| Err("a client panicked".into())))
            .collect();
        (latencies, started.elapsed())
    });
    let mut latencies: Vec<Duration> = latencies?.into_iter().flatten().collect();
    latencies.sort();
    Ok((latencies, wall))
}

/// The concurrent sessions, directly and through `proxy --listen` in three journal modes; prints
/// a Markdown table and checks the journal's musts.
fn concurrent_figures(cli: &Path, tmp: &Path, targets: &mut Targets) -> Result<(), String> {
    let cli_text = cli.display().to_string();
    let effect = json!({"name": "charge_payment",
        "arguments": {"customerId": "bench", "amount": 1, "currency": "EUR"}});
    let listen = |flags: &[&str]| {
        // Room for every session and the one sessionless clients share while they discover,
        // so the cap never closes a session the bench is about to use.
        let mut args = vec![
            "proxy".to_owned(),
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--max-sessions".into(),
            (2 * SESSIONS).to_string(),
        ];
        args.extend(flags.iter().map(|f| (*f).to_owned()));
        args.extend(["--".to_owned(), cli_text.clone(), "demo-server".into()]);
        args
    };
    let journal = |name: &str| tmp.join(name).display().to_string();
    let (synced, unsynced) = (
        journal("listen-fsync.jsonl"),
        journal("listen-nofsync.jsonl"),
    );
    let modes: [(&str, Vec<String>); 4] = [
        (
            "direct",
            vec!["demo-server".into(), "--http".into(), "127.0.0.1:0".into()],
        ),
        ("proxy --listen, no journal", listen(&[])),
        (
            "proxy --listen, journal + fsync",
            listen(&["--journal", &synced]),
        ),
        (
            "proxy --listen, journal --no-fsync",
            listen(&["--journal", &unsynced, "--no-fsync"]),
        ),
    ];
    println!(
        "\nproxy: {SESSIONS} sessions at once over Streamable HTTP, {SESSION_CALLS} effectful calls each (charge_payment)\n"
    );
    println!("| mode | calls | p50 ms | p99 ms | added p50 ms | added p99 ms | calls/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut direct = (Duration::ZERO, Duration::ZERO);
    for (index, (mode, args)) in modes.into_iter().enumerate() {
        let (prefix, on_stderr) = if index == 0 {
            ("", false)
        } else {
            ("mcp-recovery proxy: listening on ", true)
        };
        let server = Listening::start(cli, &args, prefix, on_stderr)?;
        let measured = concurrent(&server.url, &effect);
        server.stop();
        let (latencies, wall) = measured?;
        let (p50, p99) = (percentile(&latencies, 0.5), percentile(&latencies, 0.99));
        if index == 0 {
            direct = (p50, p99);
        }
        let per_second = latencies.len() as f64 / wall.as_secs_f64();
        let added = ms(p99) - ms(direct.1);
        println!(
            "| {mode} | {} | {:.3} | {:.3} | {:.3} | {added:.3} | {per_second:.0} |",
            latencies.len(),
            ms(p50),
            ms(p99),
            ms(p50) - ms(direct.0),
        );
        if mode.ends_with("journal + fsync") {
            targets.check_at_least(
                format!("{SESSIONS} sessions, journaled effectful calls/s with fsync"),
                per_second,
                JOURNALED_CALLS_PER_SECOND,
            );
            targets.check(
                format!("{SESSIONS} sessions, p99 ms the proxy and its synced journal add"),
                added,
                JOURNAL_ADDED_P99_MS,
            );
        }
    }
    Ok(())
}

/// Builds the optimized CLI (or takes `cli`, built before) and runs every mode; prints Markdown
/// tables.
pub fn run(root: &Path, cli: Option<&Path>, targets: &mut Targets) -> Result<(), String> {
    let cli = match cli {
        Some(cli) => cli.to_path_buf(),
        None => build_binary_with(root, "mcp-recovery", "mcp-recovery", true)?,
    };
    let tmp_dir = crate::workspace::temp_dir("mcp-recovery-proxy-bench")?;
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
        if run.mode.starts_with("proxy") {
            // Read-only calls are not kept: after the first readings, memory stays flat.
            let grown = run.rss_kib[2].saturating_sub(run.rss_kib[1]) as f64;
            targets.check(
                format!(
                    "{}: RSS growth per read-only call after the first {FIRST_READING}, KiB",
                    run.mode
                ),
                grown / (run.calls - FIRST_READING) as f64,
                READ_ONLY_GROWTH_KIB,
            );
        }
    }
    concurrent_figures(&cli, tmp, targets)
}
