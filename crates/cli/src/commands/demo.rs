//! `mcp-recovery demo`: the whole story on a checkout whose last step fails.
//!
//! The demo server runs as a child process of this very binary (`mcp-recovery demo-server`),
//! spoken to over stdio by the same client `lint --stdio` uses. Nothing below names a
//! compensating tool: the plan comes from the metadata the server declares.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mcp_recovery_client::{Connection, Options, Target};
use mcp_recovery_plan::{Planner, Status, TracedCall, load_tools};
use mcp_recovery_validator::{LintOptions, Linter, Severity};
use serde_json::{Map, Value, json};

use crate::Failure;
use crate::args::demo::DemoArgs;
use crate::color::{BAD, BOLD, DIM, GOOD, paint, stdout_color};
use crate::commands::plan::render_plan;

/// The checkout workflow: reserve, charge, ship (the carrier rejects the shipment).
fn workflow() -> [(&'static str, Value); 3] {
    [
        (
            "reserve_inventory",
            json!({"sku": "sku-widget", "quantity": 2}),
        ),
        (
            "charge_payment",
            json!({"customerId": "cus-42", "amount": 59.97, "currency": "EUR"}),
        ),
        (
            "create_shipment",
            json!({"reservationId": "{reservationId}", "address": "1 Main St", "simulateFailure": true}),
        ),
    ]
}

struct Demo {
    color: bool,
    out: anstream::AutoStream<std::io::StdoutLock<'static>>,
}

impl Demo {
    fn heading(&mut self, n: u8, text: &str) -> std::io::Result<()> {
        let title = paint(self.color, BOLD, &format!("{n}. {text}"));
        writeln!(self.out, "\n{title}")
    }

    fn line(&mut self, text: &str) -> std::io::Result<()> {
        writeln!(self.out, "   {text}")
    }

    fn ok(&self, text: &str) -> String {
        paint(self.color, GOOD, text)
    }

    fn bad(&self, text: &str) -> String {
        paint(self.color, BAD, text)
    }

    fn dim(&self, text: &str) -> String {
        paint(self.color, DIM, text)
    }

    /// The mark of a call's outcome.
    fn mark(&self, failed: bool) -> String {
        if failed {
            self.bad("✗")
        } else {
            self.ok("✓")
        }
    }
}

/// Whether a `CallToolResult` reports a failed call.
fn is_error(result: &Value) -> bool {
    result.get("isError").and_then(Value::as_bool) == Some(true)
}

fn server(timeout: u64) -> Result<(Target, Connection), Failure> {
    let program = std::env::current_exe()
        .map_err(|e| Failure::Usage(format!("cannot locate this program: {e}")))?
        .display()
        .to_string();
    let target = Target::Stdio {
        program,
        args: vec!["demo-server".to_owned()],
    };
    let options = Options {
        timeout: Duration::from_secs(timeout),
        ..Options::default()
    };
    let connection =
        Connection::open(&target, &options).map_err(Failure::server(target.to_string()))?;
    Ok((target, connection))
}

fn call(
    target: &Target,
    connection: &mut Connection,
    name: &str,
    arguments: Value,
) -> Result<Value, Failure> {
    connection
        .call_tool(name, arguments)
        .map_err(Failure::server(target.to_string()))
}

fn state(target: &Target, connection: &mut Connection) -> Result<Value, Failure> {
    let result = call(target, connection, "get_state", json!({}))?;
    Ok(result
        .get("structuredContent")
        .cloned()
        .unwrap_or(Value::Null))
}

/// Runs the workflow; returns the trace. `{reservationId}` in an argument is filled from the
/// first step's result, as an agent would.
fn run_workflow(
    demo: &mut Demo,
    target: &Target,
    connection: &mut Connection,
    print: bool,
) -> Result<Vec<TracedCall>, Failure> {
    let mut trace = Vec::new();
    let mut reservation = Value::Null;
    for (name, mut arguments) in workflow() {
        if arguments.get("reservationId") == Some(&json!("{reservationId}")) {
            arguments["reservationId"] = reservation.clone();
        }
        let result = call(target, connection, name, arguments.clone())?;
        if name == "reserve_inventory" {
            reservation = result
                .pointer("/structuredContent/reservationId")
                .cloned()
                .unwrap_or(Value::Null);
        }
        let failed = is_error(&result);
        if print {
            let mark = demo.mark(failed);
            let outcome = if failed {
                demo.bad(&first_text(&result))
            } else {
                demo.dim(&compact(
                    result.get("structuredContent").unwrap_or(&Value::Null),
                ))
            };
            demo.line(&format!("{mark} {name:<18} {}", compact(&arguments)))?;
            demo.line(&format!("  {:<18} → {outcome}", ""))?;
        }
        let (Value::Object(arguments), Value::Object(result)) = (arguments, result) else {
            return Err(Failure::Usage(format!(
                "the demo server answered {name} with something other than an object"
            )));
        };
        trace.push(TracedCall::new(name, arguments, Some(result)));
    }
    Ok(trace)
}

fn first_text(result: &Value) -> String {
    result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or("error")
        .to_owned()
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// One line per part of the shop's state, for the side-by-side comparison.
fn state_lines(state: &Value) -> Vec<(String, String)> {
    let entries = |key: &str| {
        state
            .get(key)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let inventory = entries("inventory")
        .iter()
        .map(|(sku, n)| format!("{sku} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let list = |key: &str| {
        let map: Map<String, Value> = entries(key);
        if map.is_empty() {
            "none".to_owned()
        } else {
            map.keys().cloned().collect::<Vec<_>>().join(", ")
        }
    };
    vec![
        ("inventory".to_owned(), inventory),
        ("reservations".to_owned(), list("reservations")),
        ("charges".to_owned(), list("charges")),
        ("shipments".to_owned(), list("shipments")),
    ]
}

/// Runs `demo`. Exit status 0 when the rollback restored the starting state, 1 otherwise.
pub fn run(args: &DemoArgs) -> Result<ExitCode, Failure> {
    let color = stdout_color();
    let mut demo = Demo {
        color,
        out: anstream::stdout().lock(),
    };
    let title = paint(color, BOLD, "mcp-recovery demo");
    writeln!(
        demo.out,
        "{title}: a checkout whose last step fails, rolled back from declared metadata"
    )?;

    let (target, mut connection) = server(args.timeout)?;
    let start = state(&target, &mut connection)?;

    demo.heading(1, "Lint the live server")?;
    let tools_list = connection
        .list_tools()
        .map_err(Failure::server(target.to_string()))?;
    let report = Linter::new(LintOptions::default())?.lint_value(&tools_list);
    let count = |s: Severity| {
        report
            .diagnostics
            .iter()
            .filter(|d| d.severity == s)
            .count()
    };
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let verdict = if errors == 0 {
        demo.ok("clean")
    } else {
        demo.bad("broken")
    };
    demo.line(&format!(
        "checkout server over stdio: {} tools, {errors} errors, {warnings} warnings — {verdict}",
        report.tools
    ))?;

    demo.heading(2, "Run the workflow")?;
    let trace = run_workflow(&mut demo, &target, &mut connection, true)?;

    demo.heading(3, "Plan the compensation (reverse completion order)")?;
    let tools = load_tools(&tools_list).map_err(|e| Failure::Usage(format!("{target}: {e}")))?;
    let plan = Planner::for_list(&tools).build_plan(&trace);
    for line in render_plan(&plan, color).lines() {
        demo.line(line)?;
    }

    demo.heading(4, "Compensate")?;
    for planned in plan.calls() {
        let arguments = Value::Object(planned.arguments.clone());
        let result = call(&target, &mut connection, &planned.name, arguments.clone())?;
        let mark = demo.mark(is_error(&result));
        demo.line(&format!(
            "{mark} {:<18} {}",
            planned.name,
            compact(&arguments)
        ))?;
    }
    let skipped = plan
        .steps
        .iter()
        .filter(|s| s.status != Status::Compensate)
        .map(|s| format!("{} ({})", s.tool, s.status))
        .collect::<Vec<_>>();
    if !skipped.is_empty() {
        demo.line(&demo.dim(&format!("nothing to undo for {}", skipped.join(", "))))?;
    }
    let recovered = state(&target, &mut connection)?;
    connection.close();

    // The same workflow against a fresh server, by an orchestrator that ignores the metadata.
    let (baseline_target, mut baseline) = server(args.timeout)?;
    let mut quiet = Demo {
        color,
        out: anstream::stdout().lock(),
    };
    run_workflow(&mut quiet, &baseline_target, &mut baseline, false)?;
    let unaware = state(&baseline_target, &mut baseline)?;
    baseline.close();

    demo.heading(5, "Compare the final state")?;
    let (with, without) = (state_lines(&recovered), state_lines(&unaware));
    let width = with
        .iter()
        .map(|(_, v)| v.chars().count())
        .max()
        .unwrap_or(0)
        .max(13);
    demo.line(&demo.dim(&format!(
        "{:<13} {:<width$}   {}",
        "", "with recovery", "recovery-unaware"
    )))?;
    for ((label, a), (_, b)) in with.iter().zip(&without) {
        let b_text = if a == b { b.clone() } else { demo.bad(b) };
        demo.line(&format!("{label:<13} {a:<width$}   {b_text}"))?;
    }
    demo.heading(
        6,
        "The same workflow through `mcp-recovery proxy --on-failure rollback`",
    )?;
    let through_proxy = run_through_proxy(&mut demo, args.timeout)?;

    let restored = recovered == start && through_proxy;
    writeln!(demo.out)?;
    if restored {
        let verdict = demo.ok("✓ state restored: identical to the start");
        demo.line(&verdict)?;
        Ok(ExitCode::SUCCESS)
    } else {
        let verdict = demo.bad("✗ the state differs from the start");
        demo.line(&verdict)?;
        Ok(ExitCode::from(1))
    }
}

/// The demo's journal in the temporary directory, removed with its lock file however the run
/// ends.
struct DemoJournal(PathBuf);

impl DemoJournal {
    fn remove(&self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(mcp_recovery_journal::lock_path(&self.0));
    }
}

impl Drop for DemoJournal {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The workflow again with the proxy in front of the server: the proxy rolls back by itself
/// when the shipment fails, and its journal verifies. True when the state is back at the start.
fn run_through_proxy(demo: &mut Demo, timeout: u64) -> Result<bool, Failure> {
    let program = std::env::current_exe()
        .map_err(|e| Failure::Usage(format!("cannot locate this program: {e}")))?
        .display()
        .to_string();
    let journal = DemoJournal(
        std::env::temp_dir().join(format!("mcp-recovery-demo-{}.jsonl", std::process::id())),
    );
    journal.remove();
    let target = Target::Stdio {
        program: program.clone(),
        args: vec![
            "proxy".to_owned(),
            "--on-failure".to_owned(),
            "rollback".to_owned(),
            "--journal".to_owned(),
            journal.0.display().to_string(),
            "--".to_owned(),
            program,
            "demo-server".to_owned(),
        ],
    };
    let options = Options {
        timeout: Duration::from_secs(timeout),
        ..Options::default()
    };
    let mut connection =
        Connection::open(&target, &options).map_err(Failure::server(target.to_string()))?;
    let start = state(&target, &mut connection)?;
    run_workflow(demo, &target, &mut connection, true)?;
    let end = state(&target, &mut connection)?;
    connection.close();
    let text = std::fs::read_to_string(&journal.0).unwrap_or_default();
    let report = mcp_recovery_journal::verify(&text);
    let compensations = text
        .lines()
        .filter(|l| l.contains("\"kind\":\"compensation.outcome\""))
        .count();
    demo.line(&format!(
        "the proxy compensated {compensations} calls before answering the failed one"
    ))?;
    let chain = if report.broken.is_none() {
        demo.ok(&format!("{} records, chain intact", report.records))
    } else {
        demo.bad("the chain is broken")
    };
    demo.line(&format!("journal: {chain}"))?;
    let restored = end == start;
    let verdict = if restored {
        demo.ok("✓ state restored by the proxy")
    } else {
        demo.bad("✗ the proxy left the state changed")
    };
    demo.line(&verdict)?;
    Ok(restored && report.broken.is_none())
}
