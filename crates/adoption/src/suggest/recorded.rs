//! Calls recorded in a proxy journal: pairs of a forward call and the inverse call after it,
//! which confirm, contradict or teach bindings.

use std::collections::BTreeMap;

use mcp_recovery_base::text::REDACTED;
use mcp_recovery_model::{Tool, holds_text};
use serde_json::{Map, Value};

use super::bind::Bound;
use super::fields::{object_fields, simple};
use super::types::{Binding, Confidence};

/// One call recorded in a proxy journal (a `call.outcome` record).
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The session it belongs to.
    pub session: String,
    /// The tool called.
    pub name: String,
    /// The arguments sent.
    pub arguments: Value,
    /// The `CallToolResult`, when one came back.
    pub result: Option<Value>,
    /// True when the journal replaced a secret in the record with `***` (its `redacted`
    /// member): a value holding `***` is then not the one sent or returned.
    pub redacted: bool,
}

impl Recorded {
    fn failed(&self) -> bool {
        self.result
            .as_ref()
            .is_none_or(|r| r.get("isError") == Some(&Value::Bool(true)))
    }

    /// Whether `value`, read from this call, may have lost a secret to `***`.
    fn unknown(&self, value: Option<&Value>) -> bool {
        self.redacted && value.is_some_and(|v| holds_text(v, REDACTED))
    }

    /// What a binding selects in this call, when it selects something.
    fn select(&self, binding: &Binding) -> Option<Value> {
        let structured = || self.result.as_ref()?.get("structuredContent");
        match binding {
            Binding::Output { field } => structured()?.get(field).cloned(),
            Binding::Input { field } => self.arguments.get(field).cloned(),
            Binding::Map { field, each } => structured()?
                .get(field)?
                .as_array()?
                .iter()
                .map(|element| build(each, element))
                .collect::<Option<Vec<Value>>>()
                .map(Value::Array),
        }
    }
}

/// One entry of a map binding built from one element.
pub(crate) fn build(each: &Value, element: &Value) -> Option<Value> {
    match each {
        Value::String(reference) if reference == "$item" => Some(element.clone()),
        Value::String(reference) => element.pointer(reference.strip_prefix("$item#")?).cloned(),
        Value::Object(shape) => shape
            .iter()
            .map(|(k, v)| Some((k.clone(), build(v, element)?)))
            .collect::<Option<Map<String, Value>>>()
            .map(Value::Object),
        constant => Some(constant.clone()),
    }
}

/// What a journal shows about one binding: in how many sessions a call of the inverse took the
/// value it selects from the forward call before it, and whether one ever took another value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    sessions: usize,
    contradicted: bool,
}

/// The calls of an inverse paired with the forward call before it, per session: in each
/// session every successful call of `inverse` is paired with the latest successful call of
/// `forward` not paired yet.
pub(crate) fn pairings<'a>(
    calls: &'a [Recorded],
    forward: &str,
    inverse: &str,
) -> BTreeMap<&'a str, Vec<(&'a Recorded, &'a Recorded)>> {
    let mut open: BTreeMap<&str, &Recorded> = BTreeMap::new();
    let mut out: BTreeMap<&str, Vec<(&Recorded, &Recorded)>> = BTreeMap::new();
    for call in calls {
        if call.name == forward && !call.failed() {
            open.insert(&call.session, call);
        } else if call.name == inverse
            && !call.failed()
            && let Some(before) = open.remove(call.session.as_str())
        {
            out.entry(&call.session).or_default().push((before, call));
        }
    }
    out
}

/// How a binding of `parameter` fared over the pairings.
pub(crate) fn seen(
    pairs: &BTreeMap<&str, Vec<(&Recorded, &Recorded)>>,
    parameter: &str,
    binding: &Binding,
) -> Seen {
    let mut out = Seen::default();
    for calls in pairs.values() {
        let mut agreed = false;
        for (before, after) in calls {
            let taken = after.arguments.get(parameter);
            let selected = before.select(binding);
            // A value that lost a secret is no evidence either way.
            if after.unknown(taken) || before.unknown(selected.as_ref()) {
                continue;
            }
            if taken.is_some() && selected.as_ref() == taken {
                agreed = true;
            } else {
                out.contradicted = true;
            }
        }
        out.sessions += usize::from(agreed);
    }
    out
}

/// Bindings a journal teaches for a pair the names found but the schemas could not bind: each
/// required parameter of the inverse from the one top-level result field or argument of the
/// forward call that held the value the inverse took, never contradicted (a result field wins
/// over an argument holding the same value, as in [`bind`]).
pub(crate) fn learn(
    pairs: &BTreeMap<&str, Vec<(&Recorded, &Recorded)>>,
    compensator: &Tool,
) -> Option<(BTreeMap<String, Binding>, String)> {
    let (needed, _) = object_fields(Some(&compensator.input_schema));
    let sessions = pairs.len();
    if needed.is_empty() || sessions == 0 {
        return None;
    }
    let (first_before, _) = pairs.values().next()?.first()?;
    let mut mapping = BTreeMap::new();
    let mut said = Vec::new();
    for parameter in &needed {
        let structured = first_before
            .result
            .as_ref()
            .and_then(|r| r.get("structuredContent"))
            .and_then(Value::as_object);
        let outputs = structured
            .into_iter()
            .flat_map(|o| o.keys())
            .map(|field| Binding::Output {
                field: field.clone(),
            });
        let inputs = first_before
            .arguments
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys())
            .map(|field| Binding::Input {
                field: field.clone(),
            });
        let held: Vec<(Binding, Seen)> = outputs
            .chain(inputs)
            .filter(|b| match b {
                Binding::Output { field } | Binding::Input { field } => simple(field),
                Binding::Map { .. } => false,
            })
            .map(|b| {
                let s = seen(pairs, parameter, &b);
                (b, s)
            })
            .filter(|(_, s)| !s.contradicted && s.sessions > 0)
            .collect();
        let from_output: Vec<&(Binding, Seen)> = held
            .iter()
            .filter(|(b, _)| matches!(b, Binding::Output { .. }))
            .collect();
        let chosen: &(Binding, Seen) = match (from_output.as_slice(), held.as_slice()) {
            ([one], _) => one,
            ([], [one]) => one,
            _ => return None,
        };
        said.push(format!(
            "'{parameter}' ← {} seen in {} of {sessions} session(s)",
            chosen.0.path().unwrap_or_default(),
            chosen.1.sessions
        ));
        mapping.insert(parameter.clone(), chosen.0.clone());
    }
    Some((
        mapping,
        format!("learned from the journal: {}", said.join(", ")),
    ))
}

/// A pair's bindings checked against the journal: left out when a call of the inverse took
/// another value than one of them selects, else with what the journal confirms in the reason.
pub(crate) fn confirm(
    bound: Bound,
    pairs: &BTreeMap<&str, Vec<(&Recorded, &Recorded)>>,
    confidence: Confidence,
    why: String,
) -> Result<(Bound, Confidence, String), String> {
    let confidence = if bound.equivalences.is_empty() && bound.described.is_empty() {
        confidence
    } else {
        Confidence::Medium
    };
    let mut reason = why;
    if !bound.equivalences.is_empty() {
        reason = format!(
            "{reason}; {} (they name the same thing)",
            bound.equivalences.join(", ")
        );
    }
    if !bound.described.is_empty() {
        let names: Vec<String> = bound.described.iter().map(|p| format!("'{p}'")).collect();
        reason = format!(
            "{reason}; {} read from the JSON text of the result, which the description says returns it (a text without it leaves the compensation unavailable)",
            names.join(", ")
        );
    }
    if !bound.narrower.is_empty() {
        reason = format!("{reason}; {}", bound.narrower.join("; "));
    }
    if pairs.is_empty() || bound.reader.is_some() {
        return Ok((bound, confidence, reason));
    }
    let mut least = usize::MAX;
    for (parameter, binding) in &bound.mapping {
        let s = seen(pairs, parameter, binding);
        if s.contradicted {
            return Err(format!(
                "the journal shows a call that took another '{parameter}' than the drafted binding selects"
            ));
        }
        least = least.min(s.sessions);
    }
    Ok((
        bound,
        confidence,
        format!(
            "{reason}; the journal agrees: seen in {least} of {} session(s)",
            pairs.len()
        ),
    ))
}
