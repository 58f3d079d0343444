//! `mcp-recovery plan`: the compensation plan for a recorded trace.

use std::io::Write;
use std::process::ExitCode;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_plan::{Plan, Status, build_plan, load_tools, parse_session_trace, parse_trace};

use crate::args::documents::{PlanArgs, PlanFormat};
use crate::color::{BAD, DIM, GOOD, WARN, paint, stdout_color};
use crate::inputs::{Input, not_a_tools_list, read_json};
use crate::{Failure, pretty};

/// The style of a plan status.
pub fn status_color(status: Status) -> anstyle::Style {
    match status {
        Status::Compensate => GOOD,
        Status::ReadOnly | Status::Unchanged | Status::Failed => DIM,
        Status::Unavailable | Status::UnknownOutcome => BAD,
        Status::Irreversible | Status::NotDeclared => WARN,
    }
}

/// Renders a plan as a table, colored when `color` is on.
pub fn render_plan(plan: &Plan, color: bool) -> String {
    plan.render_table_with(|status, cell| paint(color, status_color(status), cell))
}

/// Runs `plan`.
pub fn run(args: &PlanArgs) -> Result<ExitCode, Failure> {
    if args.tools.as_os_str() == "-" && args.trace.as_os_str() == "-" {
        return Err(Failure::Usage(
            "--tools and --trace cannot both read stdin".to_owned(),
        ));
    }
    let mut document = read_json(&args.tools)?;
    crate::overlay::apply_optional(args.overlay.as_deref(), &mut document)?;
    let tools = load_tools(&document).map_err(|e| not_a_tools_list(&args.tools, &e))?;
    // A tool the model cannot read only makes the steps that need it unavailable; say which.
    let mut stderr = std::io::stderr().lock();
    let shown = Input::named(&args.tools).display();
    for unusable in &tools.unusable {
        // The reason quotes the tool's name and the model's message: one inert line.
        let unusable = escape_controls(&unusable.to_string()).into_owned();
        writeln!(stderr, "warning: {shown}: {unusable}")?;
    }
    drop(stderr);
    let trace_bytes = Input::named(&args.trace).read()?;
    let trace_text = String::from_utf8(trace_bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
        Failure::Usage(format!(
            "{}: line {line}: not UTF-8 text",
            Input::named(&args.trace).display()
        ))
    })?;
    // A journal whose last line a crash cut is read without it.
    let report = mcp_recovery_journal::verify(&trace_text);
    let trace_text = match report.torn {
        Some(torn) if report.records > 0 => {
            let shown = Input::named(&args.trace).display();
            crate::torn::whole_lines(&trace_text, &shown, &torn).to_owned()
        }
        _ => trace_text,
    };
    // A journal keeps big results beside it; the plan binds from them.
    let trace_text = if args.trace.as_os_str() == "-" {
        trace_text
    } else {
        crate::read_back::inline(&trace_text, &args.trace, args.session.as_deref(), &tools)
            .map_err(|e| Failure::Usage(format!("{}: {e}", args.trace.display())))?
    };
    let trace = match &args.session {
        Some(session) => parse_session_trace(&trace_text, session),
        None => parse_trace(&trace_text),
    }
    .map_err(|e| Failure::Usage(format!("{}: {e}", args.trace.display())))?;
    let plan = build_plan(&tools, &trace);
    let mut out = anstream::stdout().lock();
    match args.format {
        PlanFormat::Json => writeln!(out, "{}", pretty(&plan, "the plan")?)?,
        PlanFormat::Human => write!(out, "{}", render_plan(&plan, stdout_color()))?,
    }
    Ok(ExitCode::SUCCESS)
}
