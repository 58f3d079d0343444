//! `cargo xtask bench`: lint and census over the generated corpus, against the parse floor; then
//! the plan's figures (alone with `cargo xtask bench plan`) and the proxy's (`proxy_bench`, alone
//! with `cargo xtask bench proxy`).
//!
//! The floor is the time serde_json alone needs to read and parse every file on ONE thread. `lint`
//! runs as `mcp-recovery lint DIR` does (`map_in_order` over the files, results in file order),
//! `census` as `census_paths`, both with `--threads` workers. Each measurement runs in its own
//! child process of this binary (`bench-child MODE`), so each reports its own peak resident memory
//! (`VmHWM`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use mcp_recovery_census::{CensusOptions, census_paths, collect_files};
use mcp_recovery_validator::{LintOptions, Linter, map_in_order};
use serde_json::{Value, json};

use crate::corpus::{CorpusConfig, generate};

const USAGE: &str = "usage: cargo xtask bench [--corpus DIR] [--threads N] [--runs N] | cargo xtask bench proxy|plan";

/// What one child measured.
struct Measurement {
    mode: String,
    seconds: Vec<f64>,
    cpu: Vec<f64>,
    files: u64,
    bytes: u64,
    tools: u64,
    peak_kib: u64,
    start_kib: u64,
}

const MODES: [&str; 4] = ["floor", "lint", "census", "census-no-lint"];

/// One run of `mode` in a child process.
fn child_run(exe: &Path, mode: &str, corpus: &Path, threads: usize) -> Result<Measurement, String> {
    let output = Command::new(exe)
        .args([
            "bench-child",
            mode,
            &corpus.display().to_string(),
            &threads.to_string(),
            "1",
        ])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !output.status.success() {
        return Err(format!(
            "bench-child {mode} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let line: Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("bench-child {mode}: {e}"))?;
    measurement(&line)
}

/// `cargo xtask bench`.
pub fn run(root: &Path, args: &[&str]) -> Result<(), String> {
    if args == ["proxy"] {
        // The measured binaries are built optimized whatever this one is; the client loop here
        // costs both sides of the comparison alike.
        return crate::proxy_bench::run(root);
    }
    if cfg!(debug_assertions) {
        // Timing an unoptimized build measures the wrong thing: rerun optimized.
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args([
                "run",
                "--release",
                "--quiet",
                "--package",
                "xtask",
                "--",
                "bench",
            ])
            .args(args)
            .current_dir(root)
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        return if status.success() {
            Ok(())
        } else {
            Err(format!("optimized bench failed: {status}"))
        };
    }
    if args == ["plan"] {
        return plan_figures(root);
    }
    let mut corpus = root.join("target/bench-corpus");
    let mut threads = 2usize;
    let mut runs = 5usize;
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        let value = it.next().ok_or(USAGE)?;
        match arg {
            "--corpus" => corpus = PathBuf::from(value),
            "--threads" => threads = value.parse().map_err(|_| USAGE)?,
            "--runs" => runs = value.parse().map_err(|_| USAGE)?,
            _ => return Err(USAGE.into()),
        }
    }
    if !corpus.join("manifest.json").is_file() {
        eprintln!("generating the default corpus into {}", corpus.display());
        generate(&corpus, &CorpusConfig::default())?;
    }
    let files = collect_files(std::slice::from_ref(&corpus)).map_err(|e| e.to_string())?;
    let largest = files
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .max()
        .unwrap_or(0);

    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // The modes take turns, one run each per round, so that a change in the machine's speed
    // during the bench weighs on every mode alike; a first round, not counted, fills the page cache.
    let mut results: Vec<Measurement> = Vec::new();
    for round in 0..=runs {
        for (index, mode) in MODES.into_iter().enumerate() {
            let measured = child_run(&exe, mode, &corpus, threads)?;
            if round == 0 {
                continue;
            }
            match results.get_mut(index) {
                Some(m) => {
                    m.seconds.extend(measured.seconds);
                    m.cpu.extend(measured.cpu);
                    m.peak_kib = m.peak_kib.max(measured.peak_kib);
                }
                None => results.push(measured),
            }
        }
    }

    let floor = &results[0];
    // Ratios are taken within each round, then their median.
    let ratio =
        |of: &[f64], to: &[f64]| median(&of.iter().zip(to).map(|(a, b)| a / b).collect::<Vec<_>>());
    println!(
        "corpus: {} ({} files, {:.1} MB, {} tools, largest file {:.1} KB)",
        corpus.display(),
        floor.files,
        floor.bytes as f64 / 1e6,
        floor.tools,
        largest as f64 / 1e3
    );
    println!(
        "threads: {threads} (floor: 1), rounds: {runs}; wall and CPU = median run, × floor = median of the rounds' ratios\n"
    );
    println!(
        "| mode | wall s | tools/s | MB/s | wall × floor | CPU s | CPU × floor | peak RSS MB | RSS at start MB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for m in &results {
        let t = median(&m.seconds);
        let c = median(&m.cpu);
        println!(
            "| {} | {:.3} | {:.0} | {:.1} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} |",
            m.mode,
            t,
            m.tools as f64 / t,
            m.bytes as f64 / 1e6 / t,
            ratio(&m.seconds, &floor.seconds),
            c,
            ratio(&m.cpu, &floor.cpu),
            m.peak_kib as f64 / 1024.0,
            m.start_kib as f64 / 1024.0
        );
    }

    // A 20-tool server linted by a fresh process: what a CI step pays.
    if let Some(file) = twenty_tool_file(&files) {
        let started = Instant::now();
        let line = lint_one(&exe, &file)?;
        let wall = started.elapsed().as_secs_f64();
        println!(
            "\n20-tool file {}: process wall {:.1} ms, of which Linter::new {:.2} ms and lint_source {:.3} ms",
            file.display(),
            wall * 1e3,
            line["new_seconds"].as_f64().unwrap_or(0.0) * 1e3,
            line["lint_seconds"].as_f64().unwrap_or(0.0) * 1e3
        );
    }
    one_large_file(root, &exe)?;
    minified_findings()?;
    plan_figures(root)?;
    crate::proxy_bench::run(root)
}

/// `bench-child lint-one FILE` in a fresh process: its one line of JSON.
fn lint_one(exe: &Path, file: &Path) -> Result<Value, String> {
    let output = Command::new(exe)
        .args([
            "bench-child",
            "lint-one",
            &file.display().to_string(),
            "1",
            "1",
        ])
        .output()
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&output.stdout).map_err(|e| format!("lint-one: {e}"))
}

/// Peak memory of linting one file, over its size, may not pass this: the README's limits
/// table documents it.
const MEMORY_MULTIPLE: f64 = 20.0;

/// One file of 100,000 tools linted by a fresh process: its peak resident memory above the
/// process's start, as a multiple of the file's size, must stay within [`MEMORY_MULTIPLE`].
fn one_large_file(root: &Path, exe: &Path) -> Result<(), String> {
    let dir = root.join("target/bench-large");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let file = dir.join("tools.json");
    let tools: Vec<String> = (0..100_000)
        .map(|i| {
            json!({"name": format!("tool_{i}"),
                "description": format!("Does thing number {i} to the widget store."),
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string"},
                    "count": {"type": "integer"}}, "required": ["id"]},
                "annotations": {"readOnlyHint": i % 2 == 0, "destructiveHint": false,
                    "idempotentHint": true, "openWorldHint": false}})
            .to_string()
        })
        .collect();
    std::fs::write(&file, format!(r#"{{"tools":[{}]}}"#, tools.join(",")))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let line = lint_one(exe, &file)?;
    let kib = |k: &str| line[k].as_u64().unwrap_or(0) as f64 * 1024.0;
    let bytes = line["bytes"].as_u64().unwrap_or(1).max(1) as f64;
    let multiple = (kib("peak_kib") - kib("start_kib")) / bytes;
    println!(
        "
| one file | MB | tools | peak RSS MB | RSS at start MB | (peak − start) ÷ size |
|---|---:|---:|---:|---:|---:|
| {} | {:.1} | {} | {:.1} | {:.1} | {multiple:.1} |",
        file.display(),
        bytes / 1e6,
        line["tools"],
        kib("peak_kib") / 1048576.0,
        kib("start_kib") / 1048576.0,
    );
    if multiple > MEMORY_MULTIPLE {
        return Err(format!(
            "linting one file peaks at {multiple:.1} times its size, above {MEMORY_MULTIPLE}"
        ));
    }
    Ok(())
}

/// A minified (one-line) document with one finding per tool, at two sizes: positions must cost
/// time linear in the file, so ten times the findings take about ten times as long.
fn minified_findings() -> Result<(), String> {
    let linter = Linter::new(LintOptions::default()).map_err(|e| e.to_string())?;
    let mut per_finding = Vec::new();
    println!(
        "
| one-line document | bytes | findings | lint_source s | µs per finding |"
    );
    println!("|---|---:|---:|---:|---:|");
    for tools in [10_000usize, 100_000] {
        let body: Vec<String> = (0..tools)
            .map(|i| {
                format!(
                    r#"{{"name":"t{i}","inputSchema":{{"type":"object"}},"annotations":{{"readOnlyHint":true,"readOnlyHint":true}}}}"#
                )
            })
            .collect();
        let text = format!(r#"{{"tools":[{}]}}"#, body.join(","));
        let started = Instant::now();
        let report = linter.lint_source(text.as_bytes());
        let seconds = started.elapsed().as_secs_f64();
        let findings = report.diagnostics.len();
        let micros = seconds * 1e6 / findings.max(1) as f64;
        per_finding.push(micros);
        println!(
            "| {tools} tools | {} | {findings} | {seconds:.3} | {micros:.2} |",
            text.len()
        );
    }
    if let [small, large] = per_finding[..]
        && large > 3.0 * small
    {
        return Err(format!(
            "positions are not linear: {large:.2} µs per finding at 100,000 against {small:.2} at 10,000"
        ));
    }
    Ok(())
}

/// `plan` of a checkout trace (`fixtures/valid/sep-checkout.json`) at three lengths: reading the
/// trace and planning every step must cost time linear in the calls, and give one compensating
/// call per effectful call.
fn plan_figures(root: &Path) -> Result<(), String> {
    let path = root.join("fixtures/valid/sep-checkout.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let document = mcp_recovery_model::json::from_str(&text).map_err(|e| e.to_string())?;
    let tools = mcp_recovery_plan::load_tools(&document).map_err(|e| e.to_string())?;
    // One order's calls: three with a compensation, then a read-only one.
    let order = |i: usize| {
        [
            json!({"name": "create_order", "arguments": {"cartId": format!("cart-{i}"), "customerId": "cus-1"},
                "result": {"content": [], "structuredContent": {"orderId": format!("ord-{i}")}}}),
            json!({"name": "reserve_inventory", "arguments": {"orderId": format!("ord-{i}")},
                "result": {"content": [], "structuredContent": {"reservationId": format!("res-{i}")}}}),
            json!({"name": "charge_payment", "arguments": {"orderId": format!("ord-{i}"), "amount": 19.99, "currency": "EUR"},
                "result": {"content": [], "structuredContent": {"transactionId": format!("tx-{i}")}}}),
            json!({"name": "get_order", "arguments": {"orderId": format!("ord-{i}")},
                "result": {"content": [], "structuredContent": {"status": "paid"}}}),
        ]
    };
    println!(
        "
| plan of a trace | bytes | calls | compensating calls | parse + plan s | µs per call |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let mut per_call = Vec::new();
    for calls in [1_000usize, 10_000, 100_000] {
        let lines: Vec<String> = (0..calls / 4)
            .flat_map(order)
            .map(|line| line.to_string())
            .collect();
        let trace = lines.join("\n");
        let started = Instant::now();
        let traced = mcp_recovery_plan::parse_trace(&trace).map_err(|e| e.to_string())?;
        let plan = mcp_recovery_plan::build_plan(&tools, &traced);
        let seconds = started.elapsed().as_secs_f64();
        let compensating = plan.calls().count();
        if compensating != calls / 4 * 3 {
            return Err(format!(
                "plan of {calls} calls: {compensating} compensating calls, not {}",
                calls / 4 * 3
            ));
        }
        let micros = seconds * 1e6 / calls as f64;
        per_call.push(micros);
        println!(
            "| {calls} calls | {} | {calls} | {compensating} | {seconds:.3} | {micros:.2} |",
            trace.len()
        );
    }
    if let [small, .., large] = per_call[..]
        && large > 3.0 * small
    {
        return Err(format!(
            "plan is not linear: {large:.2} µs per call at 100,000 against {small:.2} at 1,000"
        ));
    }
    Ok(())
}

fn measurement(line: &Value) -> Result<Measurement, String> {
    let n = |k: &str| {
        line[k]
            .as_u64()
            .ok_or_else(|| format!("bench-child output lacks {k}"))
    };
    Ok(Measurement {
        mode: line["mode"].as_str().unwrap_or("?").to_owned(),
        seconds: line["seconds"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default(),
        cpu: line["cpu_seconds"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default(),
        files: n("files")?,
        bytes: n("bytes")?,
        tools: n("tools")?,
        peak_kib: n("peak_kib")?,
        start_kib: n("start_kib")?,
    })
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    mcp_recovery_census::median_f64(&mut v).unwrap_or(f64::NAN)
}

fn twenty_tool_file(files: &[PathBuf]) -> Option<PathBuf> {
    files.iter().find_map(|p| {
        let bytes = std::fs::read(p).ok()?;
        let doc: Value = serde_json::from_slice(&bytes).ok()?;
        let tools = mcp_recovery_model::locate_tools(&doc).ok()?.tools;
        (tools.len() == 20).then(|| p.clone())
    })
}

/// A field of `/proc/self/status` in KiB (0 where there is no procfs).
fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// CPU time (user + system, all threads) this process has used, in seconds, from
/// `/proc/self/stat` (0 where there is no procfs). Less sensitive than wall time to other load
/// on a shared machine.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesized command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // USER_HZ is 100 on every Linux target Rust supports.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// Runs `work` on every file with `threads` workers, one file per worker at a time; returns
/// (bytes, tools) summed.
fn over_files(
    files: &[PathBuf],
    threads: usize,
    work: &(dyn Fn(&[u8]) -> u64 + Sync),
) -> (u64, u64) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let (mut bytes, mut tools) = (0u64, 0u64);
                    while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                        if let Ok(data) = std::fs::read(path) {
                            bytes += data.len() as u64;
                            tools += work(&data);
                        }
                    }
                    (bytes, tools)
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().ok())
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    })
}

fn tools_in(doc: &Value) -> u64 {
    mcp_recovery_model::locate_tools(doc).map_or(0, |location| location.tools.len() as u64)
}

/// `bench-child MODE PATH THREADS RUNS`: one measurement, printed as one JSON line.
pub fn child(args: &[&str]) -> Result<(), String> {
    let [mode, path, threads, runs] = args else {
        return Err("usage: bench-child MODE PATH THREADS RUNS".into());
    };
    let threads: usize = threads.parse().map_err(|_| "THREADS")?;
    let runs: usize = runs.parse().map_err(|_| "RUNS")?;
    let path = PathBuf::from(path);
    let start_kib = proc_status_kib("VmRSS:");

    if *mode == "lint-one" {
        let t = Instant::now();
        let linter = Linter::new(LintOptions::default()).map_err(|e| e.to_string())?;
        let new_seconds = t.elapsed().as_secs_f64();
        let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
        let t = Instant::now();
        let report = linter.lint_source(&bytes);
        let lint_seconds = t.elapsed().as_secs_f64();
        println!(
            "{}",
            json!({"mode": mode, "new_seconds": new_seconds, "lint_seconds": lint_seconds,
                "tools": report.tools, "bytes": bytes.len(),
                "peak_kib": proc_status_kib("VmHWM:"), "start_kib": start_kib})
        );
        return Ok(());
    }

    let files = collect_files(std::slice::from_ref(&path)).map_err(|e| e.to_string())?;
    let linter = Linter::new(LintOptions::default()).map_err(|e| e.to_string())?;
    let mut seconds = Vec::new();
    let mut cpu = Vec::new();
    let (mut bytes, mut tools) = (0, 0);
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let c = cpu_seconds();
        (bytes, tools) = match *mode {
            "floor" => over_files(&files, 1, &|data| {
                serde_json::from_slice::<Value>(data).map_or(0, |doc| tools_in(&doc))
            }),
            "lint" => {
                let (mut bytes, mut tools) = (0u64, 0u64);
                let lint = |path: &PathBuf| {
                    let data = std::fs::read(path).unwrap_or_default();
                    (data.len() as u64, linter.lint_source(&data))
                };
                let weight = |(size, _): &(u64, _)| usize::try_from(*size).unwrap_or(usize::MAX);
                map_in_order(&files, threads, lint, weight, |(size, report)| {
                    bytes += size;
                    tools += report.tools as u64;
                    Ok::<(), String>(())
                })?;
                (bytes, tools)
            }
            "census" | "census-no-lint" => {
                let options = CensusOptions {
                    lint: *mode == "census",
                    threads,
                    ..CensusOptions::default()
                };
                let census = census_paths(std::slice::from_ref(&path), &options)
                    .map_err(|e| e.to_string())?;
                (census.files.bytes, census.tools)
            }
            other => return Err(format!("unknown bench mode {other}")),
        };
        seconds.push(t.elapsed().as_secs_f64());
        cpu.push(cpu_seconds() - c);
    }
    let line = json!({
        "mode": mode,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "files": files.len(),
        "bytes": bytes,
        "tools": tools,
        "peak_kib": proc_status_kib("VmHWM:"),
        "start_kib": start_kib,
    });
    println!("{line}");
    Ok(())
}
