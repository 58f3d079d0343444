//! The rules that decide each step's status, and the planner that applies them to a trace.

use std::collections::HashMap;

use jsonschema::Validator;
use mcp_recovery_base::text::{REDACTED, shorten};
use mcp_recovery_model::{
    COMPENSATE_META_KEY, Carrier, Compensation, Hint, PATTERN_BUDGET, PatternBudget, Reversibility,
    Tool, gave_up, has_pattern, holds_text, without_patterns,
};
use serde_json::{Map, Value};

use crate::plan::{Plan, PlannedCall, Status, Step};
use crate::resolve::{BeforeRead, Response, resolve_arguments};
use crate::tools::{ToolList, UnusableTool};
use crate::trace::{Completion, TracedCall};

mod before;

/// Builds steps against one tool list, compiling each compensator's `inputSchema` once.
///
/// Precedence, first match wins:
///
/// 1. `result` is null, a task's `CreateTaskResult` or of an unknown `resultType` →
///    `read-only` when the tool changes nothing (rule 5's `readonly` or rule 6's
///    `readOnlyHint`), else `unknown-outcome` (never compensated automatically);
/// 2. `result.isError` is true, or `resultType` is `input_required` → `failed` (nothing happened
///    to undo);
/// 3. the tool is not in the list → `not-declared`;
/// 4. both carriers declared and they disagree → `unavailable` ("carriers disagree");
/// 5. a declaration (either carrier) decides: `readonly` → `read-only`, `irreversible` →
///    `irreversible`, `compensable` → `compensate` when every binding resolves and the arguments
///    validate, else `unavailable`. An explicit declaration wins over `readOnlyHint`;
/// 6. no declaration: `readOnlyHint: true` → `read-only`, otherwise `not-declared`.
///
/// A tool the model cannot read (see [`ToolList::unusable`]) makes the steps that need it, as the
/// traced tool or as the compensator, `unavailable` with the reason; the other steps are planned
/// as usual.
#[derive(Debug)]
pub struct Planner<'t> {
    tools: HashMap<&'t str, Result<&'t Tool, &'t UnusableTool>>,
    validators: HashMap<String, InputValidator>,
    /// The schemas of results read from text, by tool.
    readers: HashMap<String, InputValidator>,
    patterns: PatternBudget,
}

/// A compensator's compiled `inputSchema`, compiled once per plan.
#[derive(Debug)]
struct InputValidator {
    full: Result<Validator, String>,
    has_pattern: bool,
    /// The schema without its patterns, compiled once the pattern budget is spent.
    without_patterns: Option<Result<Validator, String>>,
}

impl InputValidator {
    fn new(schema: &Value, patterns: &PatternBudget) -> Self {
        Self {
            full: patterns.compile_input_schema(schema),
            has_pattern: has_pattern(schema),
            without_patterns: None,
        }
    }

    /// The problems of `instance`, and a note when its patterns were left unchecked: the plan's
    /// pattern budget is spent (the schema without its patterns is checked), or a match gave up
    /// at the backtracking limit.
    fn check(
        &mut self,
        schema: &Value,
        instance: &Value,
        patterns: &mut PatternBudget,
    ) -> (Vec<String>, Option<String>) {
        let mut note = None;
        let validator = if !self.has_pattern || patterns.take() {
            &self.full
        } else {
            note = Some(format!(
                "its patterns were not checked: the plan's budget of {PATTERN_BUDGET} pattern checks is spent"
            ));
            self.without_patterns
                .get_or_insert_with(|| patterns.compile_input_schema(&without_patterns(schema)))
        };
        let validator = match validator {
            Ok(validator) => validator,
            Err(message) => {
                return (
                    vec![format!("its inputSchema cannot be used: {message}")],
                    None,
                );
            }
        };
        let mut problems = Vec::new();
        for error in validator.iter_errors(instance) {
            if gave_up(&error) {
                note = Some(
                    "a pattern was not checked: matching it took too many backtracking steps"
                        .to_owned(),
                );
                continue;
            }
            let at = error.instance_path().to_string();
            problems.push(if at.is_empty() {
                error.to_string()
            } else {
                format!("at {at}: {error}")
            });
        }
        (problems, note)
    }
}

impl<'t> Planner<'t> {
    /// A planner for these tools; when names repeat, the first tool wins.
    pub fn new(tools: &'t [Tool]) -> Self {
        Self::with_unusable(tools, &[])
    }

    /// A planner for a loaded tool list, its unreadable tools included (see [`load_tools`]).
    ///
    /// [`load_tools`]: crate::load_tools
    pub fn for_list(list: &'t ToolList) -> Self {
        Self::with_unusable(&list.tools, &list.unusable)
    }

    /// A planner for readable tools and the tools that could not be read; when names repeat, the
    /// first readable tool wins.
    pub fn with_unusable(tools: &'t [Tool], unusable: &'t [UnusableTool]) -> Self {
        let mut by_name = HashMap::new();
        for tool in tools {
            by_name.entry(tool.name.as_str()).or_insert(Ok(tool));
        }
        for unusable in unusable {
            if let Some(name) = &unusable.name {
                by_name.entry(name.as_str()).or_insert(Err(unusable));
            }
        }
        Self {
            tools: by_name,
            validators: HashMap::new(),
            readers: HashMap::new(),
            patterns: PatternBudget::new(),
        }
    }

    /// Validations against schemas with a `pattern` made so far: at most [`PATTERN_BUDGET`] per
    /// planner, each match cut off after [`mcp_recovery_model::BACKTRACK_LIMIT`] steps.
    pub fn pattern_checks(&self) -> usize {
        self.patterns.spent()
    }

    /// The plan for a whole trace (given in completion order).
    pub fn build_plan(&mut self, trace: &[TracedCall]) -> Plan {
        Plan {
            steps: trace
                .iter()
                .rev()
                .map(|call| self.resolve_step(call))
                .collect(),
        }
    }

    /// Whether the tool `name` changes nothing, as the plan of a completed call reads it:
    /// declared `readonly` (by every carrier that declares), or declaring nothing with
    /// `readOnlyHint: true`; never a tool whose undo comes from a before-image.
    fn read_only(&self, name: &str) -> bool {
        let Some(Ok(tool)) = self.tools.get(name).copied() else {
            return false;
        };
        if tool.before_image().is_some() {
            return false;
        }
        match tool.declared_recovery().as_slice() {
            [] => tool.hint(Hint::ReadOnly) == Some(true),
            [first, rest @ ..] => {
                first.reversibility == Reversibility::Readonly
                    && rest.iter().all(|other| first.agrees_with(other))
            }
        }
    }

    /// The step for one traced call.
    pub fn resolve_step(&mut self, call: &TracedCall) -> Step {
        let name = call.name.as_str();
        let completion = call.completion();
        if !matches!(completion, Completion::Complete | Completion::InputRequired)
            && self.read_only(name)
        {
            return Step::new(
                name,
                Status::ReadOnly,
                "its outcome is unknown, and the tool changes nothing: nothing to undo",
            );
        }
        match completion {
            Completion::Complete => {}
            Completion::Unknown => {
                return Step::new(
                    name,
                    Status::UnknownOutcome,
                    "no result was recorded: the call may or may not have taken effect, so it is not compensated automatically",
                );
            }
            Completion::InputRequired => {
                return Step::new(
                    name,
                    Status::Failed,
                    "the server asked for input (resultType input_required) instead of doing the call: nothing to undo; the client's retry with the input is a call of its own",
                );
            }
            Completion::Task(id) => {
                let task = id.map_or_else(String::new, |id| format!(" '{}'", shorten(id, 80)));
                return Step::new(
                    name,
                    Status::UnknownOutcome,
                    format!(
                        "the server runs the call as task{task} and its result (from tasks/result) was not recorded: the call may or may not have taken effect, so it is not compensated automatically"
                    ),
                );
            }
            Completion::UnknownType(kind) => {
                let kind = match kind {
                    Value::String(kind) => format!("'{}'", shorten(kind, 80)),
                    other => mcp_recovery_model::json_type_name(other).to_owned(),
                };
                return Step::new(
                    name,
                    Status::UnknownOutcome,
                    format!(
                        "the result's resultType {kind} is neither complete nor input_required: whether the call took effect is unknown, so it is not compensated automatically"
                    ),
                );
            }
        }
        if call.is_error() {
            return Step::new(
                name,
                Status::Failed,
                "the call returned isError: true; a failed call is not compensated",
            );
        }
        let tool = match self.tools.get(name).copied() {
            Some(Ok(tool)) => tool,
            Some(Err(unusable)) => {
                return Step::new(
                    name,
                    Status::Unavailable,
                    format!("{unusable}; its recovery metadata cannot be trusted"),
                );
            }
            None => {
                return Step::new(
                    name,
                    Status::NotDeclared,
                    format!("'{name}' is not in the tool list"),
                );
            }
        };
        if let Some(image) = tool.before_image() {
            return self.undo_from_before_image(name, tool, &image, call);
        }
        let declared = tool.declared_recovery();
        if let [first, second] = declared.as_slice()
            && !first.agrees_with(second)
        {
            return Step::new(
                name,
                Status::Unavailable,
                format!(
                    "carriers disagree: annotations.recovery and _meta[\"{COMPENSATE_META_KEY}\"] declare different recoveries"
                ),
            );
        }
        let Some(declaration) = declared.first() else {
            if tool.hint(Hint::ReadOnly) == Some(true) {
                return Step::new(
                    name,
                    Status::ReadOnly,
                    "readOnlyHint is true: nothing to undo",
                );
            }
            if let Some(recovery) = tool.sep_recovery() {
                return Step::new(
                    name,
                    Status::NotDeclared,
                    format!(
                        "annotations.recovery uses strategy '{}', which orchestrators ignore",
                        recovery.strategy
                    ),
                );
            }
            return Step::new(name, Status::NotDeclared, "the tool declares no recovery");
        };
        match (declaration.reversibility, &declaration.compensation) {
            (Reversibility::Readonly, _) => {
                Step::new(name, Status::ReadOnly, "declared readonly: nothing to undo")
            }
            (Reversibility::Irreversible, _) => Step::new(
                name,
                Status::Irreversible,
                "declared irreversible: the effect cannot be undone",
            ),
            (Reversibility::Compensable, None) => Step::new(
                name,
                Status::Unavailable,
                "declared compensable but names no compensating call",
            ),
            (Reversibility::Compensable, Some(compensation)) => {
                let response = self.response(tool, call);
                self.compensate(
                    name,
                    declaration.carrier,
                    compensation,
                    call,
                    &response,
                    None,
                )
            }
        }
    }

    /// What `$response.body` reads for this call: the result's `structuredContent`, or, when an
    /// overlay declares the tool's result is read from text, the value read and checked against
    /// the declared schema (or why there is none).
    fn response(&mut self, tool: &Tool, call: &TracedCall) -> Response {
        self.body(Some(tool), call.result.as_ref(), call.redacted)
    }

    /// What a body expression reads in a result of `tool` (see [`Planner::response`]). A reader
    /// never reads a record that lost a secret to `***` (`redacted`): a pattern may stop short of
    /// the `***` and read part of a value as if it were whole.
    fn body(
        &mut self,
        tool: Option<&Tool>,
        result: Option<&Map<String, Value>>,
        redacted: bool,
    ) -> Response {
        let Some((tool, reader)) = tool.and_then(|tool| Some((tool, tool.result_reader()?))) else {
            let content = result
                .and_then(|result| result.get("structuredContent"))
                .filter(|content| !content.is_null());
            return Response::Structured(content.cloned());
        };
        let Some(result) = result else {
            return Response::Read(Err("no result was recorded".to_owned()));
        };
        if redacted && result.values().any(|value| holds_text(value, REDACTED)) {
            return Response::Read(Err(format!(
                "the result holds `{REDACTED}` where the record lost a secret (it is marked `redacted`), so what the reader would read from it may not be what the server returned"
            )));
        }
        let value = match reader.read(result) {
            Ok(value) => value,
            Err(why) => return Response::Read(Err(why)),
        };
        let patterns = &mut self.patterns;
        let (problems, _) = self
            .readers
            .entry(tool.name.clone())
            .or_insert_with(|| InputValidator::new(&reader.schema, patterns))
            .check(&reader.schema, &value, patterns);
        if problems.is_empty() {
            Response::Read(Ok(value))
        } else {
            Response::Read(Err(format!(
                "the value read does not match the schema the overlay declares: {}",
                problems.join("; ")
            )))
        }
    }

    fn compensate(
        &mut self,
        name: &str,
        carrier: Carrier,
        compensation: &Compensation,
        call: &TracedCall,
        response: &Response,
        before: Option<&BeforeRead>,
    ) -> Step {
        let resolved = self.resolve(carrier, compensation, call, response, before);
        self.validated(name, compensation, resolved)
    }

    /// The compensating tool and the arguments its bindings resolve to, or why there are none
    /// (the step is then unavailable).
    fn resolve(
        &self,
        carrier: Carrier,
        compensation: &Compensation,
        call: &TracedCall,
        response: &Response,
        before: Option<&BeforeRead>,
    ) -> Result<(&'t Tool, Map<String, Value>), String> {
        let target = compensation.tool.as_str();
        let compensator = match self.tools.get(target).copied() {
            Some(Ok(compensator)) => compensator,
            Some(Err(unusable)) => {
                return Err(format!("the compensating tool cannot be used: {unusable}"));
            }
            None => {
                return Err(format!(
                    "the compensating tool '{target}' is not in the tool list"
                ));
            }
        };
        let arguments = resolve_arguments(carrier, compensation, call, response, before)
            .map_err(|failures| failures.join("; "))?;
        if call.redacted
            && let Some(parameter) = arguments
                .keys()
                .find(|p| holds_text(&arguments[*p], REDACTED))
        {
            return Err(format!(
                "parameter '{parameter}' would be sent with `{REDACTED}` in it: the record of the call had a secret replaced by `{REDACTED}` (it is marked `redacted`), so the value read from it is not the one the call used"
            ));
        }
        Ok((compensator, arguments))
    }

    /// The compensating call, once its arguments resolved and satisfy the compensator's
    /// `inputSchema`; else the unavailable step saying why.
    fn validated(
        &mut self,
        name: &str,
        compensation: &Compensation,
        resolved: Result<(&Tool, Map<String, Value>), String>,
    ) -> Step {
        let (compensator, arguments) = match resolved {
            Ok(resolved) => resolved,
            Err(reason) => return Step::new(name, Status::Unavailable, reason),
        };
        let target = compensation.tool.as_str();
        let schema = &compensator.input_schema;
        let patterns = &mut self.patterns;
        let (problems, note) = self
            .validators
            .entry(target.to_owned())
            .or_insert_with(|| InputValidator::new(schema, patterns))
            .check(schema, &Value::Object(arguments.clone()), patterns);
        if !problems.is_empty() {
            return Step::new(
                name,
                Status::Unavailable,
                format!(
                    "the resolved arguments do not satisfy the inputSchema of '{target}': {}",
                    problems.join("; ")
                ),
            );
        }
        Step {
            tool: name.to_owned(),
            status: Status::Compensate,
            call: Some(PlannedCall {
                name: target.to_owned(),
                arguments,
                timeout_ms: compensation.timeout_ms.clone(),
                max_retries: compensation.max_retries.clone(),
            }),
            then: Vec::new(),
            check: None,
            reason: match note {
                Some(note) => format!("call '{target}' to undo '{name}' ({note})"),
                None => format!("call '{target}' to undo '{name}'"),
            },
        }
    }
}

/// The step for one traced call against a tool list (see [`Planner`] for the rules).
pub fn resolve_step(tools: &ToolList, call: &TracedCall) -> Step {
    Planner::for_list(tools).resolve_step(call)
}

/// The compensation plan for a trace given in completion order (see [`Planner`]).
pub fn build_plan(tools: &ToolList, trace: &[TracedCall]) -> Plan {
    Planner::for_list(tools).build_plan(trace)
}
