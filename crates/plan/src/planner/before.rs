//! The step of a tool whose overlay undoes it from a before-image (`spec/recovery-metadata.md`
//! §12.4): the undo for what the read before the call found, and, when the overlay declares
//! `unchanged`, the check that the read still returns what it returned after the call.

use mcp_recovery_base::text::REDACTED;
use mcp_recovery_model::{
    BeforeImage, Binding, Carrier, Compensation, Outcome, ParameterBinding, Tool, holds_text,
};
use serde_json::Value;

use super::Planner;
use crate::plan::{Check, PlannedCall, Status, Step};
use crate::resolve::BeforeRead;
use crate::trace::TracedCall;

impl Planner<'_> {
    /// The step of a tool whose overlay declares a before-image: the undo for what the read
    /// run before the call found (`found` when it succeeded, `missing` when it returned
    /// `isError: true`), fed with the read's result.
    pub(super) fn undo_from_before_image(
        &mut self,
        name: &str,
        tool: &Tool,
        image: &BeforeImage,
        call: &TracedCall,
    ) -> Step {
        let unavailable = |reason: String| Step::new(name, Status::Unavailable, reason);
        let Some(before) = &call.before else {
            return unavailable(format!(
                "the overlay undoes '{name}' from a before-image ('{}' run before the call), and none was recorded for this call",
                image.read
            ));
        };
        let Some(Value::Object(read)) = before.get("result") else {
            let why = before
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("no result");
            return unavailable(format!(
                "the read '{}' run before the call got no result ({why}), so what the call replaced is unknown",
                image.read
            ));
        };
        let found = read.get("isError").and_then(Value::as_bool) != Some(true);
        if !found && !image.says_absent(read) {
            return unavailable(format!(
                "the read '{}' run before the call failed, and not as the overlay says a read of an absent target fails ({}), so what the call replaced is unknown: {}",
                image.read,
                image.absent.as_ref().map_or("", |p| p.as_str()),
                failure_text(read)
            ));
        }
        let (undo, outcome) = if found {
            (&image.found, "found")
        } else {
            (&image.missing, "missing")
        };
        let undo = match undo {
            Some(Outcome::Undo(undo)) => undo,
            Some(Outcome::Nothing) => {
                return Step::new(
                    name,
                    Status::Unchanged,
                    format!(
                        "the read '{}' before the call says the target was {outcome}, and the overlay declares that the call then changes nothing",
                        image.read
                    ),
                );
            }
            None => {
                return Step::new(
                    name,
                    Status::Irreversible,
                    format!(
                        "the read '{}' before the call says the target was {outcome}, and the overlay declares no undo for that",
                        image.read
                    ),
                );
            }
        };
        let response = self.response(tool, call);
        // `$before.body` reads the read's result as `$response.body` reads the read tool's own.
        let read_tool = self.tools.get(image.read.as_str()).and_then(|t| t.ok());
        let before = BeforeRead {
            result: read,
            body: self.body(read_tool, Some(read), call.redacted),
        };
        let parts = undo.parts().count();
        let mut planned: Vec<PlannedCall> = Vec::new();
        let mut reasons: Vec<String> = Vec::new();
        let mut nothing = Vec::new();
        for (index, (_, part)) in undo.parts().enumerate() {
            let compensation = Compensation {
                tool: part.operation_id.clone(),
                bindings: part
                    .parameters
                    .iter()
                    .map(|(parameter, raw)| ParameterBinding {
                        parameter: parameter.clone(),
                        raw: raw.clone(),
                        binding: Binding::parse_undo(raw),
                    })
                    .collect(),
                timeout_ms: None,
                max_retries: None,
            };
            let resolved = self.resolve(
                Carrier::Sep3172,
                &compensation,
                call,
                &response,
                Some(&before),
            );
            // A further call fed by a map binding that found nothing has nothing to put back
            // (before its schema is asked: some refuse an empty list).
            if index > 0
                && let Ok((_, arguments)) = &resolved
                && compensation.bindings.iter().any(|b| {
                    matches!(b.binding, Ok(Binding::Map(_)))
                        && arguments.get(&b.parameter) == Some(&Value::Array(Vec::new()))
                })
            {
                nothing.push(part.operation_id.as_str());
                continue;
            }
            let step = self.validated(name, &compensation, resolved);
            if step.status != Status::Compensate {
                // One call of several that cannot be made makes the whole undo unavailable.
                let reason = if parts == 1 {
                    step.reason
                } else {
                    format!(
                        "call {} of {parts} of the undo ('{}'): {}",
                        index + 1,
                        part.operation_id,
                        step.reason
                    )
                };
                return Step {
                    reason: format!("{reason} (the read before the call: {outcome})"),
                    ..step
                };
            }
            if let Some(call) = step.call {
                planned.push(call);
                reasons.push(step.reason);
            }
        }
        let mut reason = reasons.join(", then ");
        if !nothing.is_empty() {
            reason.push_str(&format!(
                "; not '{}': a `$map` found nothing to put back",
                nothing.join("', '")
            ));
        }
        let mut reason = format!("{reason} (the read before the call: {outcome})");
        let check = if image.unchanged {
            match after_check(name, image, call) {
                Ok(check) => {
                    reason.push_str(&format!(
                        "; made only while '{}' returns what it did after the call",
                        image.read
                    ));
                    Some(check)
                }
                Err(why) => return unavailable(why),
            }
        } else {
            None
        };
        let mut calls = planned.into_iter();
        Step {
            tool: name.to_owned(),
            status: Status::Compensate,
            call: calls.next(),
            then: calls.collect(),
            check,
            reason,
        }
    }
}

/// The check of an undo whose overlay declares `unchanged`: the read and the after-image it
/// must still return; or why there is none, which makes the step unavailable (a later change
/// cannot be told from the call's own, so the before-image is not put back).
fn after_check(name: &str, image: &BeforeImage, call: &TracedCall) -> Result<Check, String> {
    let read = &image.read;
    let Some(after) = &call.after else {
        return Err(format!(
            "the overlay undoes '{name}' only while '{read}' returns what it did after the call, and no after-image was recorded for this call"
        ));
    };
    let Some(Value::Object(result)) = after.get("result") else {
        let why = after
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("no result");
        return Err(format!(
            "the read '{read}' run after the call got no result ({why}), so whether its target changed since cannot be told"
        ));
    };
    if call.redacted && holds_text(&Value::Object(after.clone()), REDACTED) {
        return Err(format!(
            "the after-image holds `{REDACTED}` where the record lost a secret (it is marked `redacted`), so it cannot be compared with what '{read}' returns"
        ));
    }
    let arguments = match after.get("arguments") {
        Some(Value::Object(arguments)) => arguments.clone(),
        _ => serde_json::Map::new(),
    };
    Ok(Check {
        name: read.clone(),
        arguments,
        expected: Check::compared(result),
    })
}

/// The text a failed read answered, shortened: what a reason quotes of it.
fn failure_text(result: &serde_json::Map<String, Value>) -> String {
    let text = mcp_recovery_model::text_items(result);
    if text.is_empty() {
        "it answered no text".to_owned()
    } else {
        format!(
            "'{}'",
            mcp_recovery_base::text::excerpt(&text.join(" "), 200)
        )
    }
}
