//! Calls recorded in a proxy journal: pairs of a forward call and the inverse call after it,
//! which confirm, contradict or teach bindings.

use std::collections::BTreeMap;

use mcp_recovery_base::text::REDACTED;
use mcp_recovery_model::json::from_str_noting_repeats;
use mcp_recovery_model::{ResultSource, Tool, holds_text, json_type_name, text_items};
use serde_json::{Map, Value, json};

use super::bind::Bound;
use super::fields::{object_fields, simple};
use super::types::{Binding, Confidence, Reader};

/// How deep in a result's value a learned binding may select.
const MAX_DEPTH: usize = 4;

/// How many fields of one result are tried as a learned binding's source, in document order:
/// each is checked against every pairing, so a result of thousands of members costs no more.
const MAX_FIELDS: usize = 256;

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

    /// The value the result's bindings read, and the reader that reads it from text when it is
    /// not `structuredContent`: the JSON object in FastMCP's `result` string (when that string
    /// is the structured content's only member), or, with no structured content, in the
    /// result's only text item.
    fn body(&self) -> Option<(Value, Option<ResultSource>)> {
        let result = self.result.as_ref()?.as_object()?;
        let parse = |text: &str| match from_str_noting_repeats(text) {
            Ok((value @ Value::Object(_), false)) => Some(value),
            _ => None,
        };
        match result.get("structuredContent") {
            Some(Value::Object(structured)) => {
                let wrapped = match structured.get("result") {
                    Some(Value::String(text)) if structured.len() == 1 => parse(text),
                    _ => None,
                };
                Some(match wrapped {
                    Some(value) => (value, Some(ResultSource::FastMcpResult)),
                    None => (Value::Object(structured.clone()), None),
                })
            }
            None | Some(Value::Null) => match text_items(result).as_slice() {
                [text] => parse(text).map(|value| (value, Some(ResultSource::Text))),
                _ => None,
            },
            Some(_) => None,
        }
    }
}

/// A successful call of a forward tool, the value its result's bindings read (parsed once, with
/// the reader that reads it from text), and the successful call of its inverse after it.
pub(crate) struct Pairing<'a> {
    before: &'a Recorded,
    body: Option<(Value, Option<ResultSource>)>,
    after: &'a Recorded,
}

/// The pairings of one forward tool and its inverse, per session.
pub(crate) type Pairings<'a> = BTreeMap<&'a str, Vec<Pairing<'a>>>;

impl Pairing<'_> {
    /// What a binding selects in the forward call, when it selects something.
    fn select(&self, binding: &Binding) -> Option<Value> {
        let body = || self.body.as_ref().map(|(value, _)| value);
        match binding {
            Binding::Output { field } => body()?.pointer(&format!("/{field}")).cloned(),
            Binding::Input { field } => self.before.arguments.get(field).cloned(),
            Binding::Map { field, each } => body()?
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
pub(crate) fn pairings<'a>(calls: &'a [Recorded], forward: &str, inverse: &str) -> Pairings<'a> {
    let mut open: BTreeMap<&str, &Recorded> = BTreeMap::new();
    let mut out = Pairings::new();
    for call in calls {
        if call.name == forward && !call.failed() {
            open.insert(&call.session, call);
        } else if call.name == inverse
            && !call.failed()
            && let Some(before) = open.remove(call.session.as_str())
        {
            out.entry(&call.session).or_default().push(Pairing {
                before,
                body: before.body(),
                after: call,
            });
        }
    }
    out
}

/// How a binding of `parameter` fared over the pairings.
pub(crate) fn seen(pairs: &Pairings<'_>, parameter: &str, binding: &Binding) -> Seen {
    let mut out = Seen::default();
    for calls in pairs.values() {
        let mut agreed = false;
        for pairing in calls {
            let taken = pairing.after.arguments.get(parameter);
            let selected = pairing.select(binding);
            // A value that lost a secret is no evidence either way.
            if pairing.after.unknown(taken) || pairing.before.unknown(selected.as_ref()) {
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
/// required parameter of the inverse from the one result field or top-level argument of the
/// forward call that held the value the inverse took, never contradicted (a result field wins
/// over an argument holding the same value, as in [`bind`]). Result fields are the top-level
/// members of the value the result's bindings read and the numbers and strings nested in it
/// (at most [`MAX_DEPTH`] deep); when that value is JSON held as text, the reader that reads it
/// is drafted too, with a schema requiring what the bindings select, of the types seen.
pub(crate) fn learn(
    pairs: &Pairings<'_>,
    compensator: &Tool,
) -> Option<(BTreeMap<String, Binding>, Option<Reader>, String)> {
    let (needed, _) = object_fields(Some(&compensator.input_schema));
    let sessions = pairs.len();
    if needed.is_empty() || sessions == 0 {
        return None;
    }
    let first = pairs.values().next()?.first()?;
    let (body, source) = match &first.body {
        Some((body, source)) => (Some(body), *source),
        None => (None, None),
    };
    let mut fields = Vec::new();
    if let Some(Value::Object(members)) = body {
        result_fields(members, &mut Vec::new(), &mut fields);
    }
    let outputs = fields.into_iter().map(|field| Binding::Output { field });
    let inputs = first
        .before
        .arguments
        .as_object()
        .into_iter()
        .flat_map(|o| o.keys())
        .filter(|field| simple(field))
        .map(|field| Binding::Input {
            field: field.clone(),
        });
    let candidates: Vec<Binding> = outputs.chain(inputs).collect();
    let mut mapping = BTreeMap::new();
    let mut said = Vec::new();
    for parameter in &needed {
        let held: Vec<(&Binding, Seen)> = candidates
            .iter()
            .map(|b| (b, seen(pairs, parameter, b)))
            .filter(|(_, s)| !s.contradicted && s.sessions > 0)
            .collect();
        let from_output: Vec<&(&Binding, Seen)> = held
            .iter()
            .filter(|(b, _)| matches!(b, Binding::Output { .. }))
            .collect();
        let (chosen, seen_in) = match (from_output.as_slice(), held.as_slice()) {
            ([one], _) => *one,
            ([], [one]) => one,
            _ => return None,
        };
        let shown = match (chosen, source) {
            (Binding::Output { field }, Some(_)) => format!("$response.body#/{field}"),
            _ => chosen.path().unwrap_or_default(),
        };
        said.push(format!(
            "'{parameter}' ← {shown} seen in {} of {sessions} session(s)",
            seen_in.sessions
        ));
        mapping.insert(parameter.clone(), (*chosen).clone());
    }
    let reads_result = mapping
        .values()
        .any(|b| matches!(b, Binding::Output { .. }));
    let reader = match (source, body) {
        (Some(source), Some(body)) if reads_result => {
            let mut schema = json!({"type": "object"});
            for binding in mapping.values() {
                if let Binding::Output { field } = binding {
                    require(&mut schema, field, body);
                }
            }
            Some(Reader {
                from: source.name(),
                schema,
            })
        }
        _ => None,
    };
    let read = match reader.as_ref().map(|r| r.from) {
        Some("fastmcp-result") => ", read from the JSON in FastMCP's result string",
        Some(_) => ", read from the JSON of the result's text",
        None => "",
    };
    Some((
        mapping,
        reader,
        format!("learned from the journal: {}{read}", said.join(", ")),
    ))
}

/// The fields a learned binding may select in `members`: each simple top-level name, and the
/// strings and numbers below it, as JSON Pointer tails (`issue/key`); at most [`MAX_FIELDS`].
fn result_fields(members: &Map<String, Value>, at: &mut Vec<String>, out: &mut Vec<String>) {
    for (name, value) in members {
        if out.len() >= MAX_FIELDS {
            return;
        }
        if !simple(name) {
            continue;
        }
        at.push(name.clone());
        if at.len() == 1 || matches!(value, Value::String(_) | Value::Number(_)) {
            out.push(at.join("/"));
        }
        if let Value::Object(inner) = value
            && at.len() < MAX_DEPTH
        {
            result_fields(inner, at, out);
        }
        at.pop();
    }
}

/// Makes `schema` (of an object) also require the member `field` (a JSON Pointer tail of simple
/// names) selects in `body`, with the type it has there.
fn require(schema: &mut Value, field: &str, body: &Value) {
    let (name, rest) = match field.split_once('/') {
        Some((name, rest)) => (name, Some(rest)),
        None => (field, None),
    };
    let (Some(value), Some(members)) = (body.get(name), schema.as_object_mut()) else {
        return;
    };
    let required = members.entry("required").or_insert_with(|| json!([]));
    if let Some(list) = required.as_array_mut()
        && !list.iter().any(|n| n == name)
    {
        list.push(Value::from(name));
    }
    let properties = members.entry("properties").or_insert_with(|| json!({}));
    if let Some(properties) = properties.as_object_mut() {
        let inner = properties
            .entry(name)
            .or_insert_with(|| json!({"type": json_type_name(value)}));
        if let Some(rest) = rest {
            require(inner, rest, value);
        }
    }
}

/// A pair's bindings checked against the journal: left out when a call of the inverse took
/// another value than one of them selects, else with what the journal confirms in the reason.
pub(crate) fn confirm(
    bound: Bound,
    pairs: &Pairings<'_>,
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
