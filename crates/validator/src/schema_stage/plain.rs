//! A check that a value surely satisfies the tool schema, without the compiled schema.
//!
//! Compiling the tool schema costs more than linting a small file; most tools use none of the
//! schema's harder keywords (recovery bindings with their patterns, alternatives, conditions).
//! This check reads the schema document once into a table of its plainest keywords, each
//! evaluated exactly as JSON Schema 2020-12 defines it: `type`, `properties`, `required`,
//! `additionalProperties`, `items`, `enum` and `const` of strings, booleans and null, and local
//! `$ref`s into `$defs`. It answers `true` only when every keyword it meets is one of these (or an
//! annotation that asserts nothing) and the value passes it; any other keyword, or a value it
//! cannot judge plainly, answers `false`, which says nothing: the compiled schema decides. So a
//! tool it accepts has no violation, and every other tool is checked as before.
//!
//! The table is built once per linter, so a tool costs a walk of its own members, never a
//! lookup of the schema's keywords or a resolution of its references.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// Deeper than any path through the tool schema; a cycle of references stops here.
const MAX_DEPTH: usize = 64;

/// Instances with at most this many members are searched in order rather than by hash.
const SCAN_MEMBERS: usize = 8;

/// The plain keywords of a schema document, read once.
#[derive(Debug)]
pub(crate) struct Plain {
    nodes: Vec<Node>,
}

/// One schema of the document: index 0 is the document itself.
#[derive(Debug, Default)]
struct Node {
    /// The schema `false`, a keyword the check does not evaluate, or one written in a shape it
    /// cannot judge: the schema never surely holds.
    never: bool,
    types: Option<Vec<Kind>>,
    options: Option<Vec<Value>>,
    constant: Option<Value>,
    reference: Option<usize>,
    /// By name, sorted, so an instance's members are found by binary search.
    properties: Option<Vec<(String, usize)>>,
    required: Vec<String>,
    additional: Option<usize>,
    items: Option<usize>,
}

/// A JSON Schema type name (`Other` for a name that is none, which nothing is of).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Boolean,
    Object,
    Array,
    String,
    Number,
    Integer,
    Other,
}

impl Plain {
    /// The table of `root`, a schema document.
    pub(crate) fn new(root: &Value) -> Self {
        let mut builder = Builder {
            root,
            nodes: Vec::new(),
            seen: HashMap::new(),
        };
        builder.node(root);
        Self {
            nodes: builder.nodes,
        }
    }

    /// Whether `instance` surely satisfies the document.
    pub(crate) fn surely_valid(&self, instance: &Value) -> bool {
        self.holds(0, instance, 0)
    }

    fn holds(&self, at: usize, instance: &Value, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let node = &self.nodes[at];
        if node.never {
            return false;
        }
        let next = depth + 1;
        if let Some(types) = &node.types
            && !types.iter().any(|kind| is_of(*kind, instance))
        {
            return false;
        }
        if let Some(options) = &node.options
            && !options.iter().any(|option| plainly_equal(option, instance))
        {
            return false;
        }
        if let Some(constant) = &node.constant
            && !plainly_equal(constant, instance)
        {
            return false;
        }
        if let Some(target) = node.reference
            && !self.holds(target, instance, next)
        {
            return false;
        }
        if let Value::Object(members) = instance {
            if !node.required.iter().all(|name| has_member(members, name)) {
                return false;
            }
            let declared = node.properties.as_deref().unwrap_or_default();
            for (name, member) in members {
                let schema = match declared.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
                    Ok(found) => Some(declared[found].1),
                    Err(_) => node.additional,
                };
                if schema.is_some_and(|schema| !self.holds(schema, member, next)) {
                    return false;
                }
            }
        }
        if let (Some(items), Value::Array(values)) = (node.items, instance) {
            return values.iter().all(|value| self.holds(items, value, next));
        }
        true
    }
}

/// Reads a document's schemas into nodes, each once (so cycles of references close).
struct Builder<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    seen: HashMap<*const Value, usize>,
}

impl<'a> Builder<'a> {
    fn node(&mut self, schema: &'a Value) -> usize {
        if let Some(at) = self.seen.get(&std::ptr::from_ref(schema)) {
            return *at;
        }
        let at = self.nodes.len();
        self.nodes.push(Node::default());
        self.seen.insert(std::ptr::from_ref(schema), at);
        let node = match schema {
            Value::Bool(true) => Node::default(),
            Value::Object(keywords) => self.keywords(schema, keywords),
            _ => NEVER,
        };
        self.nodes[at] = node;
        at
    }

    fn keywords(&mut self, schema: &'a Value, keywords: &'a Map<String, Value>) -> Node {
        let mut node = Node::default();
        for (keyword, value) in keywords {
            let plain = match keyword.as_str() {
                // Annotations: they assert nothing.
                "$comment" | "title" | "description" | "examples" | "default" | "deprecated"
                | "readOnly" | "writeOnly" | "$defs" => true,
                // The dialect and the base of references: only where the whole document says them.
                "$schema" | "$id" => std::ptr::eq(schema, self.root),
                "type" => {
                    node.types = match value {
                        Value::String(name) => Some(vec![kind(name)]),
                        Value::Array(names) => Some(
                            names
                                .iter()
                                .map(|name| name.as_str().map_or(Kind::Other, kind))
                                .collect(),
                        ),
                        _ => None,
                    };
                    node.types.is_some()
                }
                "enum" => {
                    node.options = value.as_array().cloned();
                    node.options.is_some()
                }
                "const" => {
                    node.constant = Some(value.clone());
                    true
                }
                "$ref" => {
                    let target = value.as_str().and_then(|r| self.local_definition(r));
                    node.reference = target.map(|target| self.node(target));
                    node.reference.is_some()
                }
                "properties" => {
                    let Value::Object(properties) = value else {
                        return NEVER;
                    };
                    let mut declared: Vec<(String, usize)> = properties
                        .iter()
                        .map(|(name, subschema)| (name.clone(), self.node(subschema)))
                        .collect();
                    declared.sort_by(|a, b| a.0.cmp(&b.0));
                    node.properties = Some(declared);
                    true
                }
                // A name that is not a string is left to the compiled schema.
                "required" => match value.as_array().map(|names| {
                    names
                        .iter()
                        .map(|n| n.as_str().map(str::to_owned))
                        .collect()
                }) {
                    Some(Some(names)) => {
                        node.required = names;
                        true
                    }
                    _ => false,
                },
                "additionalProperties" => {
                    node.additional = Some(self.node(value));
                    true
                }
                "items" => {
                    node.items = Some(self.node(value));
                    true
                }
                _ => false,
            };
            if !plain {
                return NEVER;
            }
        }
        node
    }

    /// The target of a reference `#/$defs/NAME` whose name needs no escaping.
    fn local_definition(&self, reference: &str) -> Option<&'a Value> {
        let name = reference.strip_prefix("#/$defs/")?;
        let plain = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !plain {
            return None;
        }
        self.root.get("$defs")?.get(name)
    }
}

const NEVER: Node = Node {
    never: true,
    types: None,
    options: None,
    constant: None,
    reference: None,
    properties: None,
    required: Vec::new(),
    additional: None,
    items: None,
};

fn kind(name: &str) -> Kind {
    match name {
        "null" => Kind::Null,
        "boolean" => Kind::Boolean,
        "object" => Kind::Object,
        "array" => Kind::Array,
        "string" => Kind::String,
        "number" => Kind::Number,
        "integer" => Kind::Integer,
        _ => Kind::Other,
    }
}

/// Whether `instance` is of the JSON Schema type `kind`. An integer is accepted only when it is
/// written as one; a number such as `1.0` is left to the compiled schema.
fn is_of(kind: Kind, instance: &Value) -> bool {
    match kind {
        Kind::Null => instance.is_null(),
        Kind::Boolean => instance.is_boolean(),
        Kind::Object => instance.is_object(),
        Kind::Array => instance.is_array(),
        Kind::String => instance.is_string(),
        Kind::Number => instance.is_number(),
        Kind::Integer => instance.is_i64() || instance.is_u64(),
        Kind::Other => false,
    }
}

fn has_member(members: &Map<String, Value>, name: &str) -> bool {
    if members.len() <= SCAN_MEMBERS {
        members.keys().any(|key| key == name)
    } else {
        members.contains_key(name)
    }
}

/// Equality of two strings, booleans or nulls; any other pair is left to the compiled schema.
fn plainly_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Null, Value::Null) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
