//! `cargo xtask bench`: `mcp-recovery lint` and `census` against the plain parse floor, then the
//! plan's figures (alone with `cargo xtask bench plan`) and the proxy's (`proxy_bench`, alone with
//! `cargo xtask bench proxy`).
//!
//! The floor is `xtask/floor`, a program outside the workspace with its own lockfile: a plain
//! `serde_json` (default features) reading every file and parsing it into a `Value`, one file at a
//! time on one thread. Every figure is a whole process, the floor's as the CLI's, started through
//! `xtask bench-measure`, which waits for it and reads its wall time, CPU time and peak resident
//! memory (`getrusage` of its one child). The modes take turns within a round, a ratio is taken
//! within each round, and the tables give the median round and the median ratio.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use mcp_recovery_census::collect_files;
use mcp_recovery_validator::{LintOptions, Linter};
use serde_json::{Value, json};

use crate::corpus::{CorpusConfig, SHAPES, generate, large_file_text};
use crate::live::build_binary_with;
use crate::targets::Targets;

const USAGE: &str = "usage: cargo xtask bench [corpus|shapes|small|large] [--corpus DIR] [--runs N] | cargo xtask bench proxy|plan";

/// The musts of the bench: a figure above its limit fails `cargo xtask bench`.
const LINT_LIMIT: f64 = 1.0;
const CENSUS_LIMIT: f64 = 0.75;
const SMALL_FILE_LIMIT: f64 = 3.0;
const MEMORY_LIMIT: f64 = 8.0;

/// Rounds of the small file (each a few milliseconds).
const SMALL_ROUNDS: usize = 31;

/// One whole-process run.
#[derive(Debug, Clone, Copy)]
struct Sample {
    wall: f64,
    cpu: f64,
    peak_kib: u64,
}

/// A command line the bench times, under the name its table gives it.
struct Mode {
    name: &'static str,
    argv: Vec<String>,
}

impl Mode {
    fn new(name: &'static str, program: &Path, args: &[&str], path: &Path) -> Self {
        let mut argv = vec![program.display().to_string()];
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        argv.push(path.display().to_string());
        Self { name, argv }
    }
}

/// `bench-measure PROGRAM ARGS...`: runs the program with its output discarded and prints one
/// JSON line: its wall time, CPU time (user + system) and peak resident memory, and its exit code.
/// Run as a process of its own, so that the usage of its children is the program's alone.
pub fn measure_command(args: &[&str]) -> Result<(), String> {
    let [program, rest @ ..] = args else {
        return Err("usage: bench-measure PROGRAM ARGS...".into());
    };
    let started = Instant::now();
    let output = Command::new(program)
        .args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let wall = started.elapsed().as_secs_f64();
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .map_err(|e| format!("getrusage: {e}"))?;
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    println!(
        "{}",
        json!({"wall": wall, "cpu": seconds(usage.user_time()) + seconds(usage.system_time()),
            // Linux gives the maximum resident set in KiB.
            "peak_kib": usage.max_rss(), "code": output.status.code(),
            "stderr": String::from_utf8_lossy(&output.stderr)})
    );
    Ok(())
}

/// One run of `mode` through `bench-measure`. Exit codes 0 and 1 (findings) are runs; anything
/// else fails the bench with the program's words.
fn sample(exe: &Path, mode: &Mode) -> Result<Sample, String> {
    let output = Command::new(exe)
        .arg("bench-measure")
        .args(&mode.argv)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let line: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("bench-measure {}: {e}", mode.name))?;
    if !matches!(line["code"].as_i64(), Some(0 | 1)) {
        return Err(format!(
            "{} exited with {}: {}",
            mode.argv.join(" "),
            line["code"],
            line["stderr"].as_str().unwrap_or("")
        ));
    }
    Ok(Sample {
        wall: line["wall"].as_f64().unwrap_or(f64::NAN),
        cpu: line["cpu"].as_f64().unwrap_or(f64::NAN),
        peak_kib: line["peak_kib"].as_u64().unwrap_or(0),
    })
}

/// `rounds` rounds of every mode in turn, after one round that is not counted (it fills the
/// page cache); the samples of each mode, in round order.
fn rounds(exe: &Path, modes: &[Mode], rounds: usize) -> Result<Vec<Vec<Sample>>, String> {
    let mut samples = vec![Vec::new(); modes.len()];
    for round in 0..=rounds {
        for (mode, samples) in modes.iter().zip(&mut samples) {
            let measured = sample(exe, mode)?;
            if round > 0 {
                samples.push(measured);
            }
        }
    }
    Ok(samples)
}

/// The median of the rounds' ratios of `of` to `to`, by `field`.
fn ratio(of: &[Sample], to: &[Sample], field: fn(&Sample) -> f64) -> f64 {
    median(
        &of.iter()
            .zip(to)
            .map(|(a, b)| field(a) / field(b))
            .collect::<Vec<_>>(),
    )
}

fn median_of(samples: &[Sample], field: fn(&Sample) -> f64) -> f64 {
    median(&samples.iter().map(field).collect::<Vec<_>>())
}

fn peak_mb(samples: &[Sample]) -> f64 {
    samples.iter().map(|s| s.peak_kib).max().unwrap_or(0) as f64 * 1024.0 / 1e6
}

/// Builds the floor (`xtask/floor`, its own lockfile, optimized) into `target/floor`.
fn build_floor(root: &Path) -> Result<PathBuf, String> {
    let manifest = root.join("xtask/floor/Cargo.toml");
    let target = root.join("target/floor");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "build",
            "--release",
            "--locked",
            "--quiet",
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building {} failed: {status}", manifest.display()));
    }
    Ok(target.join("release/mcp-recovery-bench-floor"))
}

/// `cargo xtask bench`.
pub fn run(root: &Path, args: &[&str]) -> Result<(), String> {
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
    if args.first() == Some(&"proxy") {
        // The clients run in this (optimized) process, sharing the two cores with the proxy and
        // the server. `--cli PATH` measures a CLI built before (two builds compared in turns
        // under the same conditions).
        let cli = match &args[1..] {
            [] => None,
            ["--cli", path] => Some(Path::new(path)),
            _ => return Err("usage: cargo xtask bench proxy [--cli PATH]".into()),
        };
        let mut targets = Targets::default();
        crate::proxy_bench::run(root, cli, &mut targets)?;
        return targets.report();
    }
    if args == ["plan"] {
        return plan_figures(root);
    }
    let (only, args) = match args {
        [only @ ("corpus" | "shapes" | "small" | "large"), rest @ ..] => (Some(*only), rest),
        _ => (None, args),
    };
    let mut corpus = root.join("target/bench-corpus");
    let mut runs = 5usize;
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        let value = it.next().ok_or(USAGE)?;
        match arg {
            "--corpus" => corpus = PathBuf::from(value),
            "--runs" => runs = value.parse().map_err(|_| USAGE)?,
            _ => return Err(USAGE.into()),
        }
    }
    if !corpus.join("manifest.json").is_file() {
        eprintln!("generating the default corpus into {}", corpus.display());
        generate(&corpus, &CorpusConfig::default())?;
    }
    let floor = build_floor(root)?;
    let cli = build_binary_with(root, "mcp-recovery", "mcp-recovery", true)?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut targets = Targets::default();

    if only == Some("shapes") {
        shape_figures(root, &exe, &floor, &cli, runs, &mut targets)?;
        return targets.report();
    }
    if only == Some("large") {
        large_files(root, &exe, &floor, &cli, runs.min(3), &mut targets)?;
        return targets.report();
    }
    if only == Some("small") {
        let files = collect_files(&[corpus.clone()]).map_err(|e| e.to_string())?;
        let (_, _, twenty) = survey(&files);
        let file = twenty.ok_or("the corpus has no file of 20 tools")?;
        small_file_figures(&exe, &floor, &cli, &file, &mut targets)?;
        return targets.report();
    }
    corpus_figures(&exe, &floor, &cli, &corpus, runs, &mut targets)?;
    if only == Some("corpus") {
        return targets.report();
    }
    shape_figures(root, &exe, &floor, &cli, runs, &mut targets)?;
    large_files(root, &exe, &floor, &cli, runs.min(3), &mut targets)?;
    minified_findings()?;
    plan_figures(root)?;
    crate::proxy_bench::run(root, None, &mut targets)?;
    targets.report()
}

/// What the corpus holds: files, bytes, tools, and a file of exactly 20 tools.
fn survey(files: &[PathBuf]) -> (u64, u64, Option<PathBuf>) {
    let (mut bytes, mut tools, mut twenty) = (0u64, 0u64, None);
    for path in files {
        let Ok(data) = std::fs::read(path) else {
            continue;
        };
        bytes += data.len() as u64;
        let count = serde_json::from_slice::<Value>(&data)
            .ok()
            .and_then(|doc| {
                mcp_recovery_model::locate_tools(&doc)
                    .ok()
                    .map(|l| l.tools.len())
            })
            .unwrap_or(0);
        tools += count as u64;
        if count == 20 && twenty.is_none() {
            twenty = Some(path.clone());
        }
    }
    (bytes, tools, twenty)
}

/// `lint` and `census` of the whole corpus, and `lint` of one 20-tool file, against the floor.
fn corpus_figures(
    exe: &Path,
    floor: &Path,
    cli: &Path,
    corpus: &Path,
    runs: usize,
    targets: &mut Targets,
) -> Result<(), String> {
    let files = collect_files(&[corpus.to_path_buf()]).map_err(|e| e.to_string())?;
    let (bytes, tools, twenty) = survey(&files);
    let modes = [
        Mode::new("floor", floor, &[], corpus),
        Mode::new("lint", cli, &["lint", "--isolated"], corpus),
        Mode::new("census", cli, &["census"], corpus),
        Mode::new("census --no-lint", cli, &["census", "--no-lint"], corpus),
    ];
    let samples = rounds(exe, &modes, runs)?;
    println!(
        "corpus: {} ({} files, {:.1} MB, {tools} tools); {runs} rounds; wall and CPU: the median round; \
         × floor: the median of the rounds' ratios; whole processes\n",
        corpus.display(),
        files.len(),
        bytes as f64 / 1e6,
    );
    println!(
        "| mode | wall s | tools/s | MB/s | wall × floor | CPU s | CPU × floor | peak RSS MB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let wall = |s: &Sample| s.wall;
    let cpu = |s: &Sample| s.cpu;
    for (mode, samples_of) in modes.iter().zip(&samples) {
        let t = median_of(samples_of, wall);
        println!(
            "| {} | {t:.3} | {:.0} | {:.1} | {:.2} | {:.2} | {:.2} | {:.1} |",
            mode.name,
            tools as f64 / t,
            bytes as f64 / 1e6 / t,
            ratio(samples_of, &samples[0], wall),
            median_of(samples_of, cpu),
            ratio(samples_of, &samples[0], cpu),
            peak_mb(samples_of),
        );
    }
    targets.check(
        "`lint` of the corpus, wall × floor".into(),
        ratio(&samples[1], &samples[0], wall),
        LINT_LIMIT,
    );
    targets.check(
        "`census` of the corpus, wall × floor".into(),
        ratio(&samples[2], &samples[0], wall),
        CENSUS_LIMIT,
    );

    let file = twenty.ok_or("the corpus has no file of 20 tools")?;
    small_file_figures(exe, floor, cli, &file, targets)
}

/// `lint` and `census` against the floor on a corpus of each shape (`corpus::SHAPES`): the
/// targets hold on every shape, not only on the default corpus's mix.
fn shape_figures(
    root: &Path,
    exe: &Path,
    floor: &Path,
    cli: &Path,
    runs: usize,
    targets: &mut Targets,
) -> Result<(), String> {
    let wall = |s: &Sample| s.wall;
    println!(
        "\n| shape ({runs} rounds) | files | MB | tools | floor s | lint × floor | census × floor | lint CPU × floor |\n|---|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (i, shape) in SHAPES.iter().enumerate() {
        let dir = root.join(format!("target/bench-shapes/{i}"));
        shape.write(&dir)?;
        let files = collect_files(std::slice::from_ref(&dir)).map_err(|e| e.to_string())?;
        let (bytes, tools, _) = survey(&files);
        let modes = [
            Mode::new("floor", floor, &[], &dir),
            Mode::new("lint", cli, &["lint", "--isolated"], &dir),
            Mode::new("census", cli, &["census"], &dir),
        ];
        let samples = rounds(exe, &modes, runs)?;
        let (lint, census) = (
            ratio(&samples[1], &samples[0], wall),
            ratio(&samples[2], &samples[0], wall),
        );
        println!(
            "| {} | {} | {:.1} | {tools} | {:.3} | {lint:.2} | {census:.2} | {:.2} |",
            shape.name,
            files.len(),
            bytes as f64 / 1e6,
            median_of(&samples[0], wall),
            ratio(&samples[1], &samples[0], |s| s.cpu),
        );
        targets.check(
            format!("`lint`, {}, wall × floor", shape.name),
            lint,
            LINT_LIMIT,
        );
        targets.check(
            format!("`census`, {}, wall × floor", shape.name),
            census,
            CENSUS_LIMIT,
        );
    }
    Ok(())
}

/// A 20-tool server linted by a fresh process, what a pre-commit hook pays, against the floor's
/// process on the same file (`cargo xtask bench small` alone).
fn small_file_figures(
    exe: &Path,
    floor: &Path,
    cli: &Path,
    file: &Path,
    targets: &mut Targets,
) -> Result<(), String> {
    let wall = |s: &Sample| s.wall;
    let cpu = |s: &Sample| s.cpu;
    let modes = [
        Mode::new("floor", floor, &[], file),
        Mode::new("lint", cli, &["lint", "--isolated"], file),
    ];
    let samples = rounds(exe, &modes, SMALL_ROUNDS)?;
    let multiple = ratio(&samples[1], &samples[0], wall);
    println!(
        "\n| 20-tool file {} ({SMALL_ROUNDS} rounds) | wall ms | CPU ms | wall × floor | peak RSS MB |\n|---|---:|---:|---:|---:|",
        file.display()
    );
    for (mode, samples_of) in modes.iter().zip(&samples) {
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.1} |",
            mode.name,
            median_of(samples_of, wall) * 1e3,
            median_of(samples_of, cpu) * 1e3,
            ratio(samples_of, &samples[0], wall),
            peak_mb(samples_of),
        );
    }
    targets.check(
        "`lint` of one 20-tool file, wall × floor".into(),
        multiple,
        SMALL_FILE_LIMIT,
    );
    Ok(())
}

/// Peak resident memory (and time) of `lint` and `census` of one large file, of each shape, as a
/// multiple of the file's size.
fn large_files(
    root: &Path,
    exe: &Path,
    floor: &Path,
    cli: &Path,
    runs: usize,
    targets: &mut Targets,
) -> Result<(), String> {
    let dir = root.join("target/bench-large");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    println!(
        "\n| one file | MB | mode | wall s | wall × floor | CPU s | peak RSS MB | peak ÷ size |\n|---|---:|---|---:|---:|---:|---:|---:|"
    );
    for (name, rich) in [("minimal.json", false), ("rich.json", true)] {
        let file = dir.join(name);
        let text = large_file_text(rich);
        std::fs::write(&file, &text).map_err(|e| format!("{}: {e}", file.display()))?;
        let size = text.len() as f64;
        // Past the default cap on one input's size, which this file is meant to exceed.
        let cap = ["--max-file-size", "1G"];
        let modes = [
            Mode::new("floor", floor, &[], &file),
            Mode::new(
                "lint",
                cli,
                &[&cap[..], &["lint", "--isolated"]].concat(),
                &file,
            ),
            Mode::new("census", cli, &[&cap[..], &["census"]].concat(), &file),
        ];
        let samples = rounds(exe, &modes, runs)?;
        for (mode, samples_of) in modes.iter().zip(&samples) {
            let multiple = peak_mb(samples_of) * 1e6 / size;
            println!(
                "| {} ({} tools) | {:.1} | {} | {:.3} | {:.2} | {:.2} | {:.1} | {multiple:.1} |",
                file.display(),
                if rich { 120_000 } else { 300_000 },
                size / 1e6,
                mode.name,
                median_of(samples_of, |s| s.wall),
                ratio(samples_of, &samples[0], |s| s.wall),
                median_of(samples_of, |s| s.cpu),
                peak_mb(samples_of),
            );
            if mode.name != "floor" {
                targets.check(
                    format!("`{}` of {name}, peak RSS ÷ file size", mode.name),
                    multiple,
                    MEMORY_LIMIT,
                );
            }
        }
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

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    mcp_recovery_census::median_f64(&mut v).unwrap_or(f64::NAN)
}
