//! Binding a compensator's parameters from the forward call: by name, by what a field names,
//! or per element of an array the result holds; never by a choice between two candidates.

use std::collections::BTreeMap;

use mcp_recovery_model::Tool;
use serde_json::{Map, Value};

use super::copied::Copied;
use super::fields::{fits, object_fields, simple, types};
use super::identity::{described_identity, identity, same_identity, singular};
use super::lexicon::{SELECTORS, words};
use super::offered::Offered;
use super::reader::result_schema;
use super::returned::described_result;
use super::types::{Binding, Reader};

/// The bindings drafted for a pair, and whether any of them rests on an equivalence rather
/// than a name.
pub(crate) struct Bound {
    pub(crate) mapping: BTreeMap<String, Binding>,
    pub(crate) reader: Option<Reader>,
    pub(crate) equivalences: Vec<String>,
    /// Bindings whose values the compensator's enum may not accept.
    pub(crate) narrower: Vec<String>,
    /// Parameters read from a result the forward tool's description says it returns.
    pub(crate) described: Vec<String>,
}

impl Offered {
    /// A required field of the result or the arguments with exactly this name and a fitting
    /// type, the result first.
    fn by_name(&self, parameter: &str, target: &Value) -> Option<Binding> {
        let has = |required: &[String], properties: &Map<String, Value>| {
            simple(parameter)
                && required.iter().any(|r| r == parameter)
                && properties.get(parameter).is_some_and(|s| fits(s, target))
        };
        if has(&self.out_required, &self.out_properties) {
            Some(Binding::Output {
                field: parameter.to_owned(),
            })
        } else if has(&self.in_required, &self.in_properties) {
            Some(Binding::Input {
                field: parameter.to_owned(),
            })
        } else {
            None
        }
    }

    /// Every required field of a fitting type that identifies what the parameter identifies.
    fn equivalents(&self, parameter: &str, target: &Value, noun: &str) -> Vec<(Binding, String)> {
        let wanted = described_identity(parameter, target, noun);
        let mut found = Vec::new();
        for (required, properties, output) in [
            (&self.out_required, &self.out_properties, true),
            (&self.in_required, &self.in_properties, false),
        ] {
            for field in required {
                let Some(schema) = properties.get(field) else {
                    continue;
                };
                if field == parameter
                    || !simple(field)
                    || !fits(schema, target)
                    || !same_identity(&described_identity(field, schema, noun), &wanted)
                {
                    continue;
                }
                found.push((Binding::of(field, output), field.clone()));
            }
        }
        found
    }

    /// Map bindings: an array result field whose items hold, per element, what the array
    /// parameter takes (`entityNames` from the `name` of each of `entities`).
    fn maps(&self, parameter: &str, target: &Value) -> Vec<(Binding, String)> {
        if !types(target).iter().any(|t| t == "array") {
            return Vec::new();
        }
        let Some(wanted_items) = target.get("items") else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for field in &self.out_required {
            let Some(source) = self.out_properties.get(field) else {
                continue;
            };
            let Some(items) = source.get("items") else {
                continue;
            };
            if !simple(field) || types(source) != ["array"] || types(items) != ["object"] {
                continue;
            }
            let element = singular(&words(field).join("_"));
            let each = if types(wanted_items) == ["object"] {
                shape(items, wanted_items)
            } else {
                element_reference(
                    items,
                    wanted_items,
                    &identity(parameter, &element),
                    &element,
                )
            };
            if let Some(each) = each {
                found.push((
                    Binding::Map {
                        field: field.clone(),
                        each,
                    },
                    format!("each of '{field}'"),
                ));
            }
        }
        found
    }
}

/// The one required member of `items` that says it identifies what the parameter identifies,
/// with a type fitting `wanted`.
pub(crate) fn element_reference(
    items: &Value,
    wanted: &Value,
    wanted_identity: &(String, Option<String>),
    element: &str,
) -> Option<Value> {
    let (required, properties) = object_fields(Some(items));
    let mut matches = required.iter().filter(|member| {
        let found = identity(member, element);
        properties.get(*member).is_some_and(|s| fits(s, wanted))
            && found.1.is_some()
            && same_identity(&found, wanted_identity)
    });
    let member = matches.next()?;
    if matches.next().is_some() {
        return None;
    }
    Some(Value::String(format!("$item#/{}", escape_pointer(member))))
}

/// A shape building each wanted object from an element: every required member of the wanted
/// items from the one required member of the element of the same name, or of the same name
/// once qualifiers are dropped (`observations` from `addedObservations`).
pub(crate) fn shape(items: &Value, wanted: &Value) -> Option<Value> {
    let (needed, wanted_properties) = object_fields(Some(wanted));
    let (offered, properties) = object_fields(Some(items));
    if needed.is_empty() {
        return None;
    }
    let mut each = Map::new();
    for member in &needed {
        let target = wanted_properties.get(member)?;
        let plain = |name: &str| identity(name, "");
        let mut matches = offered.iter().filter(|o| {
            properties.get(*o).is_some_and(|s| fits(s, target))
                && (*o == member || plain(o) == plain(member))
        });
        let source = matches.next()?;
        if matches.next().is_some() {
            return None;
        }
        each.insert(
            member.clone(),
            Value::String(format!("$item#/{}", escape_pointer(source))),
        );
    }
    Some(Value::Object(each))
}

/// A JSON Pointer token.
pub(crate) fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Binds every required parameter of the compensator: from a required result field or
/// argument of the same name (result first), else from the one field that identifies the same
/// thing (`sheet` from `new_name` when the forward tool creates a sheet), else from each
/// element of an array the result holds. A forward tool without a schema of its result gives the
/// parameters its description says it returns from its text, through a drafted reader. Two
/// candidates are never chosen between. For a `copy`
/// what the compensator acts on comes only from a field naming the copy, and nothing comes from
/// a field naming the original.
pub(crate) fn bind(
    forward: &Tool,
    compensator: &Tool,
    noun: &str,
    copy: bool,
) -> Result<Bound, String> {
    let (needed, wanted) = object_fields(Some(&compensator.input_schema));
    if needed.is_empty() {
        return Err(format!(
            "'{}' requires no parameter, so nothing ties it to the call it would undo",
            compensator.name
        ));
    }
    let (mut output, mut reader) = result_schema(forward);
    let mut described = Vec::new();
    if output.is_none()
        && !copy
        && let Some((schema, drafted, fields)) = described_result(forward, &needed, &wanted)
    {
        (output, reader, described) = (Some(schema), Some(drafted), fields);
    }
    // A result with no schema of its own may still hold the value: recorded calls can tell.
    let undeclared = if output.is_none() {
        "; the result declares no fields (no outputSchema, or only FastMCP's result string): \
         `suggest --journal` learns a binding from recorded calls"
    } else {
        ""
    };
    let (out_required, out_properties) = object_fields(output.as_ref());
    let (in_required, in_properties) = object_fields(Some(&forward.input_schema));
    let offered = Offered {
        out_required,
        out_properties,
        in_required,
        in_properties,
    };
    if let Some(open) = wanted
        .keys()
        .find(|p| !needed.contains(p) && SELECTORS.contains(&p.to_ascii_lowercase().as_str()))
    {
        return Err(format!(
            "'{}' would leave its optional '{open}' unbound and could act on more than the call it undoes",
            compensator.name
        ));
    }
    let copied = if copy {
        Some(Copied::of(
            &offered,
            noun,
            &forward.name,
            &compensator.name,
        )?)
    } else {
        None
    };
    let mut bound = Bound {
        mapping: BTreeMap::new(),
        reader: None,
        equivalences: Vec::new(),
        narrower: Vec::new(),
        described,
    };
    for parameter in &needed {
        let Some(target) = wanted.get(parameter) else {
            return Err(format!("'{parameter}' is required but not described"));
        };
        if let Some(copied) = copied.as_ref().filter(|c| c.about(parameter, target)) {
            let (binding, field) = copied.bind(parameter, target, &forward.name)?;
            bound
                .equivalences
                .push(format!("'{parameter}' from '{field}'"));
            bound.mapping.insert(parameter.clone(), binding);
            continue;
        }
        if let Some(binding) = offered.by_name(parameter, target) {
            bound.mapping.insert(parameter.clone(), binding);
            continue;
        }
        let mut candidates = offered.equivalents(parameter, target, noun);
        if candidates.is_empty() {
            candidates = offered.maps(parameter, target);
        }
        match candidates.as_slice() {
            [(binding, field)] => {
                bound
                    .equivalences
                    .push(format!("'{parameter}' from {}", quoted_field(field)));
                bound.mapping.insert(parameter.clone(), binding.clone());
            }
            [] => {
                return Err(format!(
                    "no required field of '{}' (result or arguments) gives '{parameter}': none has its name, or names the same thing with a fitting type{undeclared}",
                    forward.name
                ));
            }
            several => {
                let names: Vec<String> = several.iter().map(|(_, f)| quoted_field(f)).collect();
                return Err(format!(
                    "'{parameter}' could come from {} of '{}'; nothing says which",
                    names.join(" or "),
                    forward.name
                ));
            }
        }
    }
    // An optional parameter the forward call also takes says which things to undo
    // (`firewall-remove-rules` with the rules `firewall-add-rules` added): bind it, or give up.
    for (parameter, target) in &wanted {
        if needed.contains(parameter) || !offered.in_properties.contains_key(parameter) {
            continue;
        }
        let bound_input = offered.in_required.contains(parameter)
            && simple(parameter)
            && offered
                .in_properties
                .get(parameter)
                .is_some_and(|s| fits(s, target));
        if !bound_input {
            return Err(format!(
                "'{parameter}' of '{}' says what to undo, but '{}' may be called without it",
                compensator.name, forward.name
            ));
        }
        bound.mapping.insert(
            parameter.clone(),
            Binding::Input {
                field: parameter.clone(),
            },
        );
    }
    if let Some(copied) = &copied {
        for (parameter, binding) in &bound.mapping {
            let (field, schema) = offered.source(binding);
            if copied.original(field, schema) {
                return Err(format!(
                    "'{parameter}' would come from '{field}', which names what '{}' copies, not the copy",
                    forward.name
                ));
            }
        }
    }
    for (parameter, binding) in &bound.mapping {
        if let Some(target) = wanted.get(parameter) {
            let (field, schema) = offered.source(binding);
            bound
                .narrower
                .extend(narrower(field, schema, parameter, target));
        }
    }
    if bound
        .mapping
        .values()
        .any(|b| !matches!(b, Binding::Input { .. }))
    {
        bound.reader = reader;
    }
    Ok(bound)
}

/// When the parameter takes only the values of an `enum` and the field may hold others: what
/// the reason says of it (such a value fails the compensator's `inputSchema`, so the
/// compensation is unavailable, never wrong).
pub(crate) fn narrower(
    field: &str,
    source: &Value,
    parameter: &str,
    target: &Value,
) -> Option<String> {
    let accepted = target.get("enum")?.as_array()?;
    let outside = match source.get("enum").and_then(Value::as_array) {
        Some(values) => {
            let outside: Vec<String> = values
                .iter()
                .filter(|v| !accepted.contains(v))
                .map(Value::to_string)
                .collect();
            if outside.is_empty() {
                return None;
            }
            format!(" ({})", outside.join(", "))
        }
        None => String::new(),
    };
    Some(format!(
        "a value of '{field}' outside the enum of '{parameter}'{outside} makes the compensation unavailable at run time, never wrong"
    ))
}

/// `'name'`, or `each of 'name'` as given.
pub(crate) fn quoted_field(field: &str) -> String {
    if field.starts_with("each of ") {
        field.to_owned()
    } else {
        format!("'{field}'")
    }
}
