//! Static reasoning over JSON Schemas (draft-07 and 2020-12): without any instance, can a value
//! exist at a JSON Pointer, which JSON types can it have, is it always present, which property
//! names does an object schema declare, and which subschemas all apply at a pointer.
//!
//! The walk treats every schema as a constraint on the value at the pointer: the keywords of one
//! schema object, `$ref` and `allOf` are intersected, `anyOf`/`oneOf` branches are united. Type
//! sets are over-approximations (a keyword the walk ignores can only narrow them), so two type
//! sets that do not intersect really cannot meet.
//!
//! # The one invariant
//!
//! No answer is a false "no". Whatever cannot be judged — a remote `$ref`, a reference cycle, an
//! unmodelled keyword, a pattern the engine rejects or gives up on, a schema too deep or too
//! wide for the work caps — yields [`Knowledge::Unknown`] (or `None` for the functions that
//! return an option), and callers fire no rule on an unknown answer. `docs/architecture.md`
//! lists it among the project's invariants.
//!
//! # Modules
//!
//! * `knowledge` — [`Knowledge`], the three-valued answer.
//! * `types` — [`TypeSet`], the JSON types a value may have.
//! * `presence` — the three-valued algebra of the walk: existence, types and which pointer
//!   steps are certainly present or known to be optional.
//! * `refs` — `$ref` resolution inside the document: JSON Pointer fragments, `$id` resources
//!   and `$anchor`s (through the `referencing` crate); nothing remote is ever fetched.
//! * `patterns` — `patternProperties` matching with an ECMA-262 engine under a work budget.
//! * `walk` — the pointer walk behind [`resolve`].
//! * `shape` — [`object_shape`], the declared property names of an object schema.
//! * `collect` — [`subschemas_at`], the schemas that all apply at a pointer.

mod collect;
mod knowledge;
mod patterns;
mod presence;
mod refs;
mod shape;
mod types;
mod walk;

pub use collect::subschemas_at;
pub use knowledge::Knowledge;
pub use shape::{ObjectShape, object_shape};
pub use types::TypeSet;
pub use walk::{Resolution, resolve, resolve_as, resolve_each, resolve_str};
