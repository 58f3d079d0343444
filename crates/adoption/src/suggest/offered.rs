//! What a forward tool offers the parameters of a compensator: its required result fields and
//! arguments.

use serde_json::{Map, Value};

use super::types::Binding;

/// What the forward tool offers a compensator parameter: its required result fields and its
/// required arguments.
pub(crate) struct Offered {
    pub(crate) out_required: Vec<String>,
    pub(crate) out_properties: Map<String, Value>,
    pub(crate) in_required: Vec<String>,
    pub(crate) in_properties: Map<String, Value>,
}

impl Offered {
    /// The field a binding selects from, and its schema.
    pub(crate) fn source<'a>(&'a self, binding: &'a Binding) -> (&'a str, &'a Value) {
        static UNDESCRIBED: Value = Value::Null;
        let (field, properties) = match binding {
            Binding::Output { field } | Binding::Map { field, .. } => (field, &self.out_properties),
            Binding::Input { field } => (field, &self.in_properties),
        };
        (field, properties.get(field).unwrap_or(&UNDESCRIBED))
    }
}
