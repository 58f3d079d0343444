//! Object shapes: the property names an object schema declares, merged across its `$ref`s and
//! combinators, for telling a misspelt argument from a declared one.

use serde_json::Value;

use crate::knowledge::Knowledge;
use crate::patterns::Patterns;
use crate::refs::base_of;
use crate::walk::{CONDITIONAL_REQUIRED, Walker};

/// The properties an object schema declares (for a tool's `inputSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ObjectShape<'a> {
    /// Declared property names, merged across `allOf`/`anyOf`/`oneOf`/`$ref`, in first-seen
    /// order without duplicates.
    pub properties: Vec<&'a str>,
    /// `patternProperties` patterns, merged the same way.
    pub patterns: Vec<&'a str>,
    /// Names every valid instance certainly has (`required` of the schema and of every
    /// `allOf`/`$ref` part; of `anyOf`/`oneOf` only when all branches require it).
    pub required: Vec<&'a str>,
    /// `additionalProperties: false` applies and no `patternProperties` admits other names.
    pub additional_forbidden: bool,
    /// False when some part could not be judged (remote `$ref`, cycle, `if`/`then`/`else`,
    /// `dependentSchemas`, depth cap): more names may be declared than listed.
    pub complete: bool,
}

impl<'a> ObjectShape<'a> {
    /// Whether `name` is declared by `properties` or matched by a pattern (ECMA-262, as
    /// `patternProperties` are); unknown when the shape is incomplete or a pattern cannot be
    /// judged.
    pub fn declares(&self, name: &str) -> Knowledge {
        if self.properties.contains(&name) {
            return Knowledge::Yes;
        }
        let mut unsure = !self.complete;
        let mut patterns = Patterns::new();
        for pattern in &self.patterns {
            match patterns.matches(pattern, name) {
                Some(true) => return Knowledge::Yes,
                Some(false) => {}
                None => unsure = true,
            }
        }
        if unsure {
            Knowledge::Unknown
        } else {
            Knowledge::No
        }
    }
}

/// The declared shape of the object schema `schema_at`, a node inside `root` (which local
/// `$ref`s refer to).
pub fn object_shape<'a>(root: &'a Value, schema_at: &'a Value) -> ObjectShape<'a> {
    let mut walker = Walker::new(root, &[]);
    let mut shape = walker.shape(schema_at, root, 0);
    shape.additional_forbidden &= shape.patterns.is_empty();
    shape
}

impl<'a> Walker<'a, '_> {
    /// Merges the declared shape of `node` and the parts it is intersected with.
    pub(crate) fn shape(
        &mut self,
        node: &'a Value,
        base: &'a Value,
        depth: usize,
    ) -> ObjectShape<'a> {
        let incomplete = ObjectShape {
            complete: false,
            ..ObjectShape::default()
        };
        if !self.enter(depth) {
            return incomplete;
        }
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(allowed) => {
                return ObjectShape {
                    additional_forbidden: !allowed,
                    complete: true,
                    ..ObjectShape::default()
                };
            }
            _ => return incomplete,
        };
        let base = base_of(node, base);
        let via_ref = map.get("$ref").map(|reference| {
            self.through_ref(reference, base, 0, |walker, target, target_base| {
                walker.shape(target, target_base, depth + 1)
            })
            .unwrap_or_else(|| incomplete.clone())
        });
        if let Some(shape) = via_ref.clone()
            && self.ref_overrides_siblings
        {
            return shape;
        }

        let mut shape = ObjectShape {
            complete: true,
            ..ObjectShape::default()
        };
        if let Some(Value::Object(props)) = map.get("properties") {
            shape.properties.extend(props.keys().map(String::as_str));
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            shape.patterns.extend(patterns.keys().map(String::as_str));
        }
        if let Some(Value::Array(names)) = map.get("required") {
            shape
                .required
                .extend(names.iter().filter_map(Value::as_str));
        }
        shape.additional_forbidden = map.get("additionalProperties") == Some(&Value::Bool(false));
        if CONDITIONAL_REQUIRED.iter().any(|k| map.contains_key(*k)) {
            shape.complete = false;
        }
        if let Some(other) = via_ref {
            merge_all(&mut shape, other);
        }
        match map.get("allOf") {
            Some(Value::Array(parts)) => {
                for part in parts {
                    let other = self.shape(part, base, depth + 1);
                    merge_all(&mut shape, other);
                }
            }
            Some(_) => shape.complete = false,
            None => {}
        }
        for keyword in ["anyOf", "oneOf"] {
            match map.get(keyword) {
                Some(Value::Array(branches)) if !branches.is_empty() => {
                    let mut union: Option<ObjectShape<'a>> = None;
                    for branch in branches {
                        let other = self.shape(branch, base, depth + 1);
                        union = Some(match union {
                            Some(mut u) => {
                                merge_any(&mut u, other);
                                u
                            }
                            None => other,
                        });
                    }
                    if let Some(union) = union {
                        merge_all(&mut shape, union);
                    }
                }
                Some(_) => shape.complete = false,
                None => {}
            }
        }
        shape
    }
}

/// Appends the names of `from` missing from `into`, keeping first-seen order.
fn add_new<'a>(into: &mut Vec<&'a str>, from: Vec<&'a str>) {
    for name in from {
        if !into.contains(&name) {
            into.push(name);
        }
    }
}

/// Both shapes apply (intersection of constraints): names and requirements add up.
fn merge_all<'a>(into: &mut ObjectShape<'a>, other: ObjectShape<'a>) {
    add_new(&mut into.properties, other.properties);
    add_new(&mut into.patterns, other.patterns);
    add_new(&mut into.required, other.required);
    into.additional_forbidden |= other.additional_forbidden;
    into.complete &= other.complete;
}

/// Either shape applies (union): names add up, only common requirements stay.
fn merge_any<'a>(into: &mut ObjectShape<'a>, other: ObjectShape<'a>) {
    into.required.retain(|name| other.required.contains(name));
    add_new(&mut into.properties, other.properties);
    add_new(&mut into.patterns, other.patterns);
    into.additional_forbidden &= other.additional_forbidden;
    into.complete &= other.complete;
}
