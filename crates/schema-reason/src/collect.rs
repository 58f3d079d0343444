//! Subschema collection: the schemas that all apply at a pointer, for validating a constant
//! against them.

use mcp_recovery_model::{JsonPointer, array_index};
use serde_json::Value;

use crate::refs::base_of;
use crate::types::TypeSet;
use crate::walk::{Step, UNMODELED, Walker, array_parts, is_trivial, local_types};

/// The schemas that all apply to the value at `pointer` (intersected), for validating a
/// constant against them; `None` when the pointer passes through a union (`anyOf`/`oneOf`), a
/// remote or cyclic `$ref`, or anything else that makes the set unsure. An empty list means
/// the value is unconstrained; a `false` entry means no value is allowed there.
///
/// Local `$ref` targets and `allOf` parts are listed as well, before the schema holding them,
/// so that parts free of `$ref` can be compiled alone; `$ref`s inside the returned schemas still
/// refer to `root`.
pub fn subschemas_at<'a>(root: &'a Value, pointer: &JsonPointer) -> Option<Vec<&'a Value>> {
    let steps: Vec<Step<'_>> = pointer.tokens().iter().map(|t| Step::Key(t)).collect();
    let mut walker = Walker::new(root, &steps);
    let mut found = Vec::new();
    walker
        .collect(root, root, 0, 0, &mut found)
        .then_some(found)
}

impl<'a> Walker<'a, '_> {
    /// Collects the schemas applying at steps `i..` (see [`subschemas_at`]); false when unsure.
    pub(crate) fn collect(
        &mut self,
        node: &'a Value,
        base: &'a Value,
        i: usize,
        depth: usize,
        found: &mut Vec<&'a Value>,
    ) -> bool {
        if !self.enter(depth) {
            return false;
        }
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => return true,
            Value::Bool(false) => {
                found.push(node);
                return true;
            }
            _ => return false,
        };
        let base = base_of(node, base);
        let step = self.steps.get(i).copied();
        if let Some(reference) = map.get("$ref") {
            let collected = self.through_ref(reference, base, i, |walker, target, target_base| {
                walker.collect(target, target_base, i, depth + 1, found)
            });
            if collected != Some(true) {
                return false;
            }
            if self.ref_overrides_siblings {
                return true;
            }
        }
        let Some(step) = step else {
            // At the pointer, the node applies whole; its `allOf` parts are listed as well so
            // that parts free of `$ref` can be checked on their own.
            if let Some(Value::Array(parts)) = map.get("allOf") {
                for part in parts {
                    if !self.collect(part, base, i, depth + 1, found) {
                        return false;
                    }
                }
            }
            found.push(node);
            return true;
        };
        if ["anyOf", "oneOf", "const", "enum"]
            .iter()
            .chain(UNMODELED.iter())
            .any(|k| map.get(*k).is_some_and(|v| !is_trivial(v)))
        {
            return false;
        }
        if let Some(parts) = map.get("allOf") {
            let Value::Array(parts) = parts else {
                return false;
            };
            for part in parts {
                if !self.collect(part, base, i, depth + 1, found) {
                    return false;
                }
            }
        }
        let (key, may_index) = match step {
            Step::Key(key) => (key, true),
            Step::Member(key) => (key, false),
            Step::AnyItem => return false,
        };
        let types = local_types(map);
        let can_object = types.is_none_or(|t| t.intersects(TypeSet::OBJECT));
        let can_array = may_index
            && array_index(key).is_some()
            && types.is_none_or(|t| t.intersects(TypeSet::ARRAY));
        match (can_object, can_array) {
            (true, false) => {
                let mut matched = false;
                if let Some(schema) = map.get("properties").and_then(|p| p.get(key)) {
                    matched = true;
                    if !self.collect(schema, base, i + 1, depth + 1, found) {
                        return false;
                    }
                }
                if let Some(Value::Object(patterns)) = map.get("patternProperties") {
                    for (pattern, schema) in patterns {
                        match self.patterns.matches(pattern, key) {
                            Some(true) => {
                                matched = true;
                                if !self.collect(schema, base, i + 1, depth + 1, found) {
                                    return false;
                                }
                            }
                            Some(false) => {}
                            None => return false,
                        }
                    }
                }
                match map.get("additionalProperties") {
                    Some(schema) if !matched => self.collect(schema, base, i + 1, depth + 1, found),
                    _ => true,
                }
            }
            (false, true) => {
                let Some(position) = array_index(key) else {
                    return false;
                };
                let Some((tuple, rest)) = array_parts(map) else {
                    return false;
                };
                let schema = tuple.get(position).or(rest);
                schema.is_none_or(|s| self.collect(s, base, i + 1, depth + 1, found))
            }
            // Both an object and an array could be there, or neither: not one conjunction.
            _ => false,
        }
    }
}
