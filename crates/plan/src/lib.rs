//! Compensation plans for MCP workflows.
//!
//! Given a server's tool list and a trace of the calls a workflow completed, this crate decides,
//! call by call and newest first, what an orchestrator should do to roll the workflow back: run a
//! compensating call (with arguments resolved from the recorded call and validated against the
//! compensator's `inputSchema`), or leave the step alone and say why. It reads recovery metadata
//! from both carriers (SEP-3172 `annotations.recovery` and `_meta["dev.chronomcp/compensate"]`)
//! and gives the same plan for either. No I/O: the caller reads the files or talks to the server.
//!
//! ```
//! use mcp_recovery_plan::{Status, build_plan, load_tools, parse_trace};
//!
//! let tools = load_tools(&serde_json::json!([
//!     {"name": "charge_payment", "inputSchema": {"type": "object"},
//!      "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
//!          "operationId": "refund_payment",
//!          "parameters": {"transactionId": "$response.body#/transactionId"}}}}},
//!     {"name": "refund_payment", "inputSchema": {"type": "object",
//!      "properties": {"transactionId": {"type": "string"}}, "required": ["transactionId"]}}
//! ])).unwrap();
//! let trace = parse_trace(concat!(
//!     r#"{"name": "charge_payment", "arguments": {"amount": 5}, "#,
//!     r#""result": {"content": [], "structuredContent": {"transactionId": "T-1"}}}"#,
//! )).unwrap();
//! let plan = build_plan(&tools, &trace);
//! assert_eq!(plan.steps[0].status, Status::Compensate);
//! let call = plan.steps[0].call.as_ref().unwrap();
//! assert_eq!(call.name, "refund_payment");
//! assert_eq!(call.arguments["transactionId"], "T-1");
//! ```

mod plan;
mod planner;
mod resolve;
mod tools;
mod trace;

pub use plan::{Check, Plan, PlannedCall, Status, Step};
pub use planner::{Planner, build_plan, resolve_step};
pub use resolve::read_arguments;
pub use tools::{LoadError, ToolList, UnusableTool, load_tools};
pub use trace::{
    Completion, REDACTED_MEMBER, TraceError, TraceLineError, TracedCall, parse_session_calls,
    parse_session_trace, parse_trace, trace_sessions,
};
