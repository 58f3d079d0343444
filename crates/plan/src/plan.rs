//! Steps and plans: what the planner decides for each traced call, and how a plan is told.

use std::fmt;

use mcp_recovery_model::Count;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What an orchestrator should do about one completed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Run the step's compensating call.
    Compensate,
    /// Recovery is declared but cannot be carried out for this call; the reason says why.
    Unavailable,
    /// The call returned `isError: true`, or asked for input instead of running
    /// (`resultType: input_required`); there is nothing to undo.
    Failed,
    /// No result of the call was recorded (nothing, a task's `CreateTaskResult`, or a result of
    /// an unknown `resultType`); the call may or may not have taken effect.
    UnknownOutcome,
    /// The tool changes nothing.
    ReadOnly,
    /// What the read before the call found means the call changed nothing (an overlay's
    /// before-image declares the outcome `"nothing"`).
    Unchanged,
    /// The tool declares that its effect cannot be undone.
    Irreversible,
    /// The tool declares no recovery (or is not in the tool list).
    NotDeclared,
}

impl Status {
    /// Every status, in the order the documentation lists them.
    pub const ALL: [Status; 8] = [
        Self::Compensate,
        Self::Unavailable,
        Self::Failed,
        Self::UnknownOutcome,
        Self::ReadOnly,
        Self::Unchanged,
        Self::Irreversible,
        Self::NotDeclared,
    ];

    /// The JSON spelling (`unknown-outcome`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Compensate => "compensate",
            Self::Unavailable => "unavailable",
            Self::Failed => "failed",
            Self::UnknownOutcome => "unknown-outcome",
            Self::ReadOnly => "read-only",
            Self::Unchanged => "unchanged",
            Self::Irreversible => "irreversible",
            Self::NotDeclared => "not-declared",
        }
    }

    /// True when the step leaves an effect in place that nobody will undo automatically.
    pub fn needs_attention(self) -> bool {
        matches!(
            self,
            Self::Unavailable | Self::UnknownOutcome | Self::Irreversible | Self::NotDeclared
        )
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool call to make.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedCall {
    /// The tool to call.
    pub name: String,
    /// Its arguments, resolved and validated against the tool's `inputSchema`.
    pub arguments: Map<String, Value>,
    /// The declared time limit of the call in milliseconds (`timeoutMs`, compensate carrier),
    /// as written.
    #[serde(default, rename = "timeoutMs", skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<Count>,
    /// The declared number of retries after a failed attempt (`maxRetries`, compensate
    /// carrier), as written.
    #[serde(
        default,
        rename = "maxRetries",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_retries: Option<Count>,
}

impl PlannedCall {
    /// A call without a declared time limit or retry budget.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        Self {
            name: name.into(),
            arguments,
            timeout_ms: None,
            max_retries: None,
        }
    }

    /// One line: the tool, its arguments, and the declared limits when there are any.
    pub fn summary(&self) -> String {
        let mut text = format!("{} {}", self.name, Value::Object(self.arguments.clone()));
        let limits: Vec<String> = [
            self.timeout_ms
                .as_ref()
                .map(|ms| format!("timeout {} ms", ms.number())),
            self.max_retries.as_ref().map(|n| {
                let one = n.saturating_u64() == 1;
                format!("{} {}", n.number(), if one { "retry" } else { "retries" })
            }),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !limits.is_empty() {
            text.push_str(&format!(" ({})", limits.join(", ")));
        }
        text
    }
}

/// A read made just before a step's first call, whose answer must still be the after-image
/// (what the read returned right after the call): an undo from a before-image whose overlay
/// declares `unchanged`. When the answer differs, the step is not made: the target changed
/// since the call, and putting the before-image back would destroy that change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The read.
    pub name: String,
    /// Its arguments, as the after-image's read was made with them.
    pub arguments: Map<String, Value>,
    /// The after-image's `content`, `structuredContent` and `isError`, as [`Check::compared`]
    /// keeps them.
    pub expected: Map<String, Value>,
}

impl Check {
    /// What of a read's result the check compares: `content`, `structuredContent` (left out
    /// when `null`) and `isError` (left out when not `true`); `_meta` and the rest are not.
    pub fn compared(result: &Map<String, Value>) -> Map<String, Value> {
        let mut kept = Map::new();
        if let Some(content) = result.get("content") {
            kept.insert("content".to_owned(), content.clone());
        }
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
            kept.insert("structuredContent".to_owned(), structured.clone());
        }
        if result.get("isError") == Some(&Value::Bool(true)) {
            kept.insert("isError".to_owned(), Value::Bool(true));
        }
        kept
    }

    /// True when `result` (a read's `CallToolResult`) is the after-image (JSON equality of what
    /// [`Check::compared`] keeps).
    pub fn unchanged(&self, result: &Value) -> bool {
        result
            .as_object()
            .is_some_and(|result| Self::compared(result) == self.expected)
    }
}

/// The verdict for one traced call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The tool of the traced call.
    pub tool: String,
    /// What to do.
    pub status: Status,
    /// The compensating call, exactly when `status` is `compensate`.
    pub call: Option<PlannedCall>,
    /// The calls made after `call`, in order, when an overlay's before-image undo needs more
    /// than one (its `then`); empty otherwise, and then left out of the JSON.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<PlannedCall>,
    /// The read made before `call`, whose answer must be the after-image for the step to be
    /// made (see [`Check`]); absent otherwise, and then left out of the JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<Check>,
    /// Why, in words (names the parameter and binding when one cannot be resolved).
    pub reason: String,
}

impl Step {
    pub(crate) fn new(tool: &str, status: Status, reason: impl Into<String>) -> Self {
        Self {
            tool: tool.to_owned(),
            status,
            call: None,
            then: Vec::new(),
            check: None,
            reason: reason.into(),
        }
    }

    /// Every compensating call of the step, in the order they are made: `call`, then `then`.
    pub fn calls(&self) -> impl Iterator<Item = &PlannedCall> {
        self.call
            .iter()
            .chain(self.call.iter().flat_map(|_| &self.then))
    }

    /// The compensating calls in one line (`a {…}; then b {…}`), or `-` when there are none.
    pub fn calls_summary(&self) -> String {
        let calls: Vec<String> = self.calls().map(PlannedCall::summary).collect();
        if calls.is_empty() {
            "-".to_owned()
        } else {
            calls.join("; then ")
        }
    }
}

/// The compensation plan: one step per traced call, in execution order (reverse completion
/// order, LIFO).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The steps, first to execute first.
    pub steps: Vec<Step>,
}

impl Plan {
    /// The calls to make, in order (every call of a step that makes several).
    pub fn calls(&self) -> impl Iterator<Item = &PlannedCall> {
        self.steps.iter().flat_map(Step::calls)
    }

    /// How many steps have each status, in [`Status::ALL`] order, leaving out zeros.
    pub fn counts(&self) -> Vec<(Status, usize)> {
        Status::ALL
            .iter()
            .map(|&status| {
                (
                    status,
                    self.steps.iter().filter(|s| s.status == status).count(),
                )
            })
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// An aligned plain-text table: step number, tool, status, compensating call, reason.
    pub fn render_table(&self) -> String {
        self.render_table_with(|_, cell| cell.to_owned())
    }

    /// [`Plan::render_table`] with a styling hook for the (already padded) status cell, so a
    /// terminal front end can color it without breaking the alignment.
    pub fn render_table_with(&self, style_status: impl Fn(Status, &str) -> String) -> String {
        if self.steps.is_empty() {
            return "the trace has no calls: nothing to compensate\n".to_owned();
        }
        let rows: Vec<[String; 5]> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                let call = step.calls_summary();
                [
                    (i + 1).to_string(),
                    one_line(&step.tool),
                    step.status.to_string(),
                    one_line(&call),
                    one_line(&step.reason),
                ]
            })
            .collect();
        let header = ["#", "tool", "status", "compensating call", "reason"].map(str::to_owned);
        let mut widths = [0usize; 5];
        for row in std::iter::once(&header).chain(&rows) {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let mut line = |row: &[String; 5], status: Option<Status>| {
            let mut text = String::new();
            for (column, cell) in row.iter().enumerate() {
                if column == 4 {
                    text.push_str(cell);
                    break;
                }
                let padded = format!(
                    "{cell}{}  ",
                    " ".repeat(widths[column] - cell.chars().count())
                );
                match (column, status) {
                    (2, Some(status)) => text.push_str(&style_status(status, &padded)),
                    _ => text.push_str(&padded),
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(&header, None);
        for (row, step) in rows.iter().zip(&self.steps) {
            line(row, Some(step.status));
        }
        out
    }
}

/// Text from the trace or tool list with every character that must not reach a terminal raw
/// written as its visible escape (the workspace's one escape), which keeps the table's columns.
fn one_line(text: &str) -> String {
    mcp_recovery_base::text::escape_controls(text).into_owned()
}
