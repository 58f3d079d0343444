//! The pointer walk: what a schema allows at a JSON Pointer.
//!
//! [`resolve`] walks the pointer's steps through the schema, combining at each schema node the
//! answers of its own keywords, its `$ref`, and its combinators with the presence algebra.
//! Recursion and total work are capped; past a cap the answer is unknown.

use mcp_recovery_model::{JsonPointer, PointerReading, array_index};
use serde_json::{Map, Value};

use crate::knowledge::Knowledge;
use crate::patterns::Patterns;
use crate::presence::{Out, bit, first_bit};
use crate::refs::{Refs, base_of};
use crate::types::TypeSet;

/// What a schema allows at a pointer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Resolution {
    /// Whether some valid instance has a value at the pointer.
    pub exists: Knowledge,
    /// JSON types the value may have; `None` when unknown or unconstrained.
    pub types: Option<TypeSet>,
    /// For arrays, the JSON types of the items; `None` when unknown or unconstrained (also when
    /// the value cannot be an array or no item can exist).
    pub item_types: Option<TypeSet>,
    /// Index of the first pointer token naming a property that is not `required`, when the
    /// value may be absent from a valid instance.
    pub optional_at: Option<usize>,
    /// When `exists` is [`Knowledge::No`]: index of the first pointer token that no valid
    /// instance can have; `None` when the schema admits no value at all.
    pub fails_at: Option<usize>,
}

/// Resolves `pointer` against `schema` (the root schema, used for local `$ref`s), reading its
/// tokens as RFC 6901 does: a token that is an index may select an array item.
pub fn resolve(schema: &Value, pointer: &JsonPointer) -> Resolution {
    resolve_as(schema, pointer, PointerReading::Pointer)
}

/// Resolves `pointer` against `schema` under `reading`: under [`PointerReading::Names`] every
/// token selects an object member only, as a compensate-carrier JSONPath of name selectors does,
/// so a path through an array selects nothing.
pub fn resolve_as(schema: &Value, pointer: &JsonPointer, reading: PointerReading) -> Resolution {
    resolve_steps(schema, steps_of(pointer, reading))
}

/// Resolves "`inner` inside any item of the array at `outer`" against `schema`: what the value
/// an element reference of a map binding selects may be. `outer` is read under `reading`,
/// `inner` as RFC 6901 reads it. `optional_at` and `fails_at` count the tokens of `outer`, then
/// one for the item, then those of `inner`.
pub fn resolve_each(
    schema: &Value,
    outer: &JsonPointer,
    reading: PointerReading,
    inner: &JsonPointer,
) -> Resolution {
    let mut steps = steps_of(outer, reading);
    steps.push(Step::AnyItem);
    steps.extend(steps_of(inner, PointerReading::Pointer));
    resolve_steps(schema, steps)
}

fn steps_of(pointer: &JsonPointer, reading: PointerReading) -> Vec<Step<'_>> {
    pointer
        .tokens()
        .iter()
        .map(|token| match reading {
            PointerReading::Pointer => Step::Key(token),
            PointerReading::Names => Step::Member(token),
        })
        .collect()
}

fn resolve_steps<'p>(schema: &Value, mut steps: Vec<Step<'p>>) -> Resolution {
    // The extra "any item" step, used only for the second walk, gives the item types.
    let len = steps.len();
    steps.push(Step::AnyItem);

    let mut walker = Walker::new(schema, steps.get(..len).unwrap_or(&[]));
    let out = walker.walk(schema, schema, 0, 0);
    if out.exists == Knowledge::No {
        return Resolution {
            exists: Knowledge::No,
            types: None,
            item_types: None,
            optional_at: None,
            fails_at: out.fails_at,
        };
    }

    let may_be_array = out.types.is_none_or(|t| t.intersects(TypeSet::ARRAY));
    let item_types = if may_be_array {
        walker.restart(&steps);
        let items = walker.walk(schema, schema, 0, 0);
        if items.exists == Knowledge::No {
            None
        } else {
            items.types
        }
    } else {
        None
    };

    Resolution {
        exists: out.exists,
        types: out.types,
        item_types,
        optional_at: first_bit(out.optional, len),
        fails_at: None,
    }
}

/// Resolves a pointer given in its RFC 6901 text form; a malformed pointer selects nothing.
pub fn resolve_str(schema: &Value, pointer: &str) -> Resolution {
    match JsonPointer::parse(pointer) {
        Ok(pointer) => resolve(schema, &pointer),
        Err(_) => Resolution {
            exists: Knowledge::No,
            types: None,
            item_types: None,
            optional_at: None,
            fails_at: None,
        },
    }
}

/// Recursion cap: deeper schemas (or `$ref` chains) make the answer unknown.
const MAX_DEPTH: usize = 128;
/// Work cap per walk, so that schemas that fan out (`allOf` of `$ref`s of `allOf`s…) stay cheap.
const MAX_VISITS: usize = 20_000;
/// Keywords that constrain sub-values in ways this crate does not model: where the walk passes
/// through them, existence is at best unknown.
pub(crate) const UNMODELED: [&str; 12] = [
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "$dynamicRef",
    "$recursiveRef",
];

/// Keywords that may make a property required conditionally.
pub(crate) const CONDITIONAL_REQUIRED: [&str; 6] = [
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
];

/// One pointer step: `Key` selects an object member or, when it is an index, an array item
/// (RFC 6901); `Member` selects an object member only (a JSONPath name selector); `AnyItem`
/// stands for every index of an array (used for item types).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'p> {
    Key(&'p str),
    Member(&'p str),
    AnyItem,
}

/// The state of one walk (or of the two walks of one [`resolve_as`]), shared by the pointer
/// walk, `object_shape` and `subschemas_at`.
pub(crate) struct Walker<'a, 'p> {
    pub(crate) steps: &'p [Step<'p>],
    /// Draft-04 to draft-07 ignore the siblings of `$ref`.
    pub(crate) ref_overrides_siblings: bool,
    /// `$ref` targets being followed, with the step they were entered at (cycle detection).
    active: Vec<(&'a Value, usize)>,
    visits: usize,
    pub(crate) patterns: Patterns<'a>,
    refs: Refs<'a>,
}

pub(crate) fn is_trivial(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

fn lists_string(value: Option<&Value>, name: &str) -> bool {
    value
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
}

/// The types a schema object allows by its own `type`, `const` and `enum`; `None` = any.
pub(crate) fn local_types(map: &Map<String, Value>) -> Option<TypeSet> {
    let mut types = map.get("type").and_then(TypeSet::from_type_keyword);
    let mut narrow = |set: TypeSet| types = Some(types.map_or(set, |t| t & set));
    if let Some(value) = map.get("const") {
        narrow(TypeSet::of_value(value));
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        narrow(
            values
                .iter()
                .fold(TypeSet::NONE, |set, v| set | TypeSet::of_value(v)),
        );
    }
    types
}

impl<'a, 'p> Walker<'a, 'p> {
    pub(crate) fn new(root: &'a Value, steps: &'p [Step<'p>]) -> Self {
        let dialect = root.get("$schema").and_then(Value::as_str).unwrap_or("");
        Self {
            steps,
            ref_overrides_siblings: ["draft-03", "draft-04", "draft-06", "draft-07"]
                .iter()
                .any(|d| dialect.contains(d)),
            active: Vec::new(),
            visits: 0,
            patterns: Patterns::new(),
            refs: Refs::new(root),
        }
    }

    /// Starts a new walk with other steps, keeping compiled patterns and the reference index.
    fn restart(&mut self, steps: &'p [Step<'p>]) {
        self.steps = steps;
        self.active.clear();
        self.visits = 0;
    }

    fn len(&self) -> usize {
        self.steps.len()
    }

    /// Counts one visit; false when the walk is too deep or too long to continue.
    pub(crate) fn enter(&mut self, depth: usize) -> bool {
        self.visits += 1;
        depth <= MAX_DEPTH && self.visits <= MAX_VISITS
    }

    /// Follows `$ref` at step `i`; cycles that consume no step, remote and dangling references
    /// are unknown.
    fn follow(&mut self, reference: &Value, base: &'a Value, i: usize, depth: usize) -> Out {
        self.through_ref(reference, base, i, |walker, target, target_base| {
            walker.walk(target, target_base, i, depth + 1)
        })
        .unwrap_or_else(Out::unknown)
    }

    /// `visit` applied to the target of `reference` at step `i`; `None` when the reference is
    /// remote or dangling, or when following it would repeat a cycle that consumed no step.
    pub(crate) fn through_ref<R>(
        &mut self,
        reference: &Value,
        base: &'a Value,
        i: usize,
        visit: impl FnOnce(&mut Self, &'a Value, &'a Value) -> R,
    ) -> Option<R> {
        let (target, target_base) = self.refs.target(reference, base)?;
        if self
            .active
            .iter()
            .any(|(node, at)| *at == i && std::ptr::eq(*node, target))
        {
            return None;
        }
        self.active.push((target, i));
        let out = visit(self, target, target_base);
        self.active.pop();
        Some(out)
    }

    /// The answer for steps `i..` given that the value at steps `..i` satisfies `node`.
    fn walk(&mut self, node: &'a Value, base: &'a Value, i: usize, depth: usize) -> Out {
        if !self.enter(depth) {
            return Out::unknown();
        }
        match node {
            Value::Bool(true) => Out::anything(i, self.len()),
            Value::Bool(false) => Out::unsatisfiable(),
            Value::Object(map) => self.walk_object(map, base_of(node, base), i, depth),
            // Not a schema: nothing can be judged.
            _ => Out::unknown(),
        }
    }

    fn walk_object(
        &mut self,
        map: &'a Map<String, Value>,
        base: &'a Value,
        i: usize,
        depth: usize,
    ) -> Out {
        let via_ref = map.get("$ref").map(|r| self.follow(r, base, i, depth));
        if let Some(out) = via_ref
            && self.ref_overrides_siblings
        {
            return out;
        }

        let mut out = self.local(map, base, i, depth);
        if let Some(via_ref) = via_ref {
            out = out.and(via_ref);
        }
        match map.get("allOf") {
            Some(Value::Array(parts)) if !parts.is_empty() => {
                for part in parts {
                    out = out.and(self.walk(part, base, i, depth + 1));
                }
            }
            Some(_) => out = out.and(Out::unknown()),
            None => {}
        }
        for keyword in ["anyOf", "oneOf"] {
            match map.get(keyword) {
                Some(Value::Array(branches)) if !branches.is_empty() => {
                    let mut union = Out::unsatisfiable();
                    for branch in branches {
                        union = union.or(self.walk(branch, base, i, depth + 1));
                    }
                    out = out.and(union);
                }
                Some(_) => out = out.and(Out::unknown()),
                None => {}
            }
        }

        let len = self.len();
        if i < len {
            let unmodeled = |k: &&str| map.get(*k).is_some_and(|v| !is_trivial(v));
            if UNMODELED.iter().any(unmodeled) {
                out = out.unsure();
            }
            if CONDITIONAL_REQUIRED.iter().any(unmodeled) {
                // A conditional `required` may make step `i` present after all.
                out.optional &= !bit(i);
            }
        }
        if out.exists != Knowledge::No && out.types.is_some_and(TypeSet::is_empty) {
            // The parts agree on no type for the final value.
            return if i == len {
                Out::unsatisfiable()
            } else {
                Out::absent(len - 1)
            };
        }
        out
    }

    /// The constraint of `map`'s own keywords (everything but `$ref` and the combinators).
    fn local(
        &mut self,
        map: &'a Map<String, Value>,
        base: &'a Value,
        i: usize,
        depth: usize,
    ) -> Out {
        let types = local_types(map);
        if types.is_some_and(TypeSet::is_empty) {
            return Out::unsatisfiable();
        }
        let values = self.fixed_values(map, i);
        let Some(&step) = self.steps.get(i) else {
            let out = Out::value(types);
            return values.map_or(out, |v| out.and(v));
        };

        let (key, index) = match step {
            Step::Key(token) => (Some(token), array_index(token).map(Some)),
            Step::Member(token) => (Some(token), None),
            Step::AnyItem => (None, Some(None)),
        };
        let can_object = key.is_some() && types.is_none_or(|t| t.intersects(TypeSet::OBJECT));
        let can_array = index.is_some() && types.is_none_or(|t| t.intersects(TypeSet::ARRAY));
        let out = match (key, index) {
            (Some(key), Some(index)) if can_object && can_array => self
                .object_step(map, base, key, i, depth)
                .or(self.array_step(map, base, index, i, depth)),
            (Some(key), _) if can_object => self.object_step(map, base, key, i, depth),
            (_, Some(index)) if can_array => self.array_step(map, base, index, i, depth),
            _ => Out::absent(i),
        };
        values.map_or(out, |v| out.and(v))
    }

    /// The constraint of `const`/`enum`: only paths through the listed values exist.
    fn fixed_values(&self, map: &'a Map<String, Value>, i: usize) -> Option<Out> {
        let walk = |value: &Value| self.walk_value(value, i);
        if let Some(value) = map.get("const") {
            return Some(walk(value));
        }
        match map.get("enum") {
            Some(Value::Array(values)) => Some(
                values
                    .iter()
                    .fold(Out::unsatisfiable(), |union, v| union.or(walk(v))),
            ),
            _ => None,
        }
    }

    /// Steps `i..` evaluated on a concrete value.
    fn walk_value(&self, value: &Value, i: usize) -> Out {
        let mut current = value;
        let mut present = 0;
        for (k, step) in self.steps.iter().enumerate().skip(i) {
            let next = match (*step, current) {
                (Step::Key(key) | Step::Member(key), Value::Object(map)) => map.get(key),
                (Step::Key(key), Value::Array(items)) => {
                    array_index(key).and_then(|n| items.get(n))
                }
                // A step inside the items of a fixed value: not modelled, so never a "no".
                (Step::AnyItem, Value::Array(_)) if k + 1 < self.steps.len() => {
                    return Out::unknown();
                }
                (Step::AnyItem, Value::Array(items)) if !items.is_empty() => {
                    let types = items
                        .iter()
                        .fold(TypeSet::NONE, |set, item| set | TypeSet::of_value(item));
                    return Out {
                        present: present | bit(k),
                        ..Out::value(Some(types))
                    };
                }
                _ => None,
            };
            let Some(next) = next else {
                let mut out = Out::absent(k);
                out.present |= present;
                return out;
            };
            present |= bit(k);
            current = next;
        }
        Out {
            present,
            ..Out::value(Some(TypeSet::of_value(current)))
        }
    }

    /// Step `i` names property `key` of an object satisfying `map`.
    fn object_step(
        &mut self,
        map: &'a Map<String, Value>,
        base: &'a Value,
        key: &str,
        i: usize,
        depth: usize,
    ) -> Out {
        if map.get("maxProperties").and_then(Value::as_u64) == Some(0) {
            return Out::absent(i);
        }
        let mut child: Option<Out> = None;
        let mut unsure = false;
        if let Some(schema) = map.get("properties").and_then(|p| p.get(key)) {
            child = Some(self.walk(schema, base, i + 1, depth + 1));
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            for (pattern, schema) in patterns {
                match self.patterns.matches(pattern, key) {
                    Some(true) => {
                        let out = self.walk(schema, base, i + 1, depth + 1);
                        child = Some(child.map_or(out, |c| c.and(out)));
                    }
                    Some(false) => {}
                    None => unsure = true,
                }
            }
        }
        let child = match child {
            // A pattern we cannot judge may apply, or may leave `additionalProperties` in force.
            Some(out) if unsure => out.and(Out::unknown()),
            Some(out) => out,
            None if unsure => Out::unknown(),
            None => match map.get("additionalProperties") {
                Some(schema) => self.walk(schema, base, i + 1, depth + 1),
                None => Out::anything(i + 1, self.len()),
            },
        };
        child
            .through(i)
            .with_presence(i, lists_string(map.get("required"), key))
    }

    /// Step `i` is index `index` (`None`: any index) of an array satisfying `map`.
    fn array_step(
        &mut self,
        map: &'a Map<String, Value>,
        base: &'a Value,
        index: Option<usize>,
        i: usize,
        depth: usize,
    ) -> Out {
        let Some((tuple, rest)) = array_parts(map) else {
            return Out::unknown();
        };
        let max_items = map
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX));
        let min_items = map
            .get("minItems")
            .and_then(Value::as_u64)
            .map_or(0, |m| usize::try_from(m).unwrap_or(usize::MAX));
        let len = self.len();
        let walk_at = |walker: &mut Self, position: usize| -> Out {
            match tuple.get(position).or(rest) {
                Some(schema) => walker.walk(schema, base, i + 1, depth + 1),
                None => Out::anything(i + 1, len),
            }
        };
        match index {
            Some(position) => {
                if position >= max_items {
                    return Out::absent(i);
                }
                walk_at(self, position)
                    .through(i)
                    .with_presence(i, position < min_items)
            }
            None => {
                // Every tuple position, then the rest (one more position stands for all).
                let positions = tuple.len().saturating_add(1).min(max_items);
                let mut union = Out::unsatisfiable();
                for position in 0..positions {
                    union = union.or(walk_at(self, position));
                }
                union.through(i)
            }
        }
    }
}

/// The schemas of an array's items: those of the leading positions (`prefixItems`, or `items`
/// as an array before 2020-12) and the one of every later position; `None` when the keywords
/// are malformed.
pub(crate) fn array_parts(map: &Map<String, Value>) -> Option<(&[Value], Option<&Value>)> {
    match (map.get("prefixItems"), map.get("items")) {
        (Some(Value::Array(prefix)), items @ (None | Some(Value::Bool(_) | Value::Object(_)))) => {
            Some((prefix, items))
        }
        (None, Some(Value::Array(tuple))) => Some((tuple, map.get("additionalItems"))),
        (None, items @ (None | Some(Value::Bool(_) | Value::Object(_)))) => Some((&[], items)),
        _ => None,
    }
}
