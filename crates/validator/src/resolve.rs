//! Static resolution of JSON Pointers against JSON Schemas (draft-07 and 2020-12).
//!
//! Answers, without any instance: can a value exist at this pointer, which JSON types can it have,
//! and is it always present. Anything the resolver cannot judge (remote `$ref`, unsupported
//! keywords) yields [`Knowledge::Unknown`], never a false "no".

use mcp_recovery_model::JsonPointer;
use serde_json::Value;

/// A three-valued answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knowledge {
    /// Certainly yes.
    Yes,
    /// Certainly no.
    No,
    /// Cannot be judged statically.
    Unknown,
}

/// A set of JSON Schema types (`integer` is a subset of `number`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TypeSet(u8);

impl TypeSet {
    /// The empty set.
    pub const NONE: Self = Self(0);
}

/// What a schema allows at a pointer.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// Whether some valid instance has a value at the pointer.
    pub exists: Knowledge,
    /// JSON types the value may have; `None` when unknown or unconstrained.
    pub types: Option<TypeSet>,
    /// For arrays, the JSON types of the items; `None` when unknown or unconstrained.
    pub item_types: Option<TypeSet>,
    /// Index of the first pointer token naming a property that is not `required`, when the
    /// value may be absent from a valid instance.
    pub optional_at: Option<usize>,
}

/// Resolves `pointer` against `schema` (the root schema, used for local `$ref`s).
pub fn resolve(schema: &Value, pointer: &JsonPointer) -> Resolution {
    let _ = (schema, pointer);
    Resolution {
        exists: Knowledge::Unknown,
        types: None,
        item_types: None,
        optional_at: None,
    }
}
