//! Copies: a copy is undone by deleting the copy, so what the compensator acts on is bound
//! from the field naming the new thing (`new_name` of `copy_sheet`), never from the field of
//! the same name that names the original (`sheet`).

use serde_json::Value;

use super::fields::{fits, simple};
use super::identity::{described_identity, same_identity};
use super::lexicon::words;
use super::offered::Offered;
use super::types::Binding;

/// Words saying a field names what a copy makes.
pub(crate) const COPY_NAMES: &[&str] = &[
    "new",
    "added",
    "created",
    "target",
    "destination",
    "dest",
    "to",
    "copy",
];

/// A required field of a copying tool that names the copy, and what it identifies.
struct Named {
    binding: Binding,
    field: String,
    schema: Value,
    identity: (String, Option<String>),
}

/// The fields of a copying tool that name the copy.
pub(crate) struct Copied {
    named: Vec<Named>,
    noun: String,
}

impl Copied {
    /// The required fields (result or arguments) of the forward tool naming the copy; none
    /// leaves the pair out, as its compensator could only be pointed at the original.
    pub(crate) fn of(
        offered: &Offered,
        noun: &str,
        forward: &str,
        compensator: &str,
    ) -> Result<Self, String> {
        let mut named = Vec::new();
        for (required, properties, output) in [
            (&offered.out_required, &offered.out_properties, true),
            (&offered.in_required, &offered.in_properties, false),
        ] {
            for field in required {
                let parts = words(field);
                let Some(schema) = properties.get(field) else {
                    continue;
                };
                if !simple(field) || !parts.iter().any(|w| COPY_NAMES.contains(&w.as_str())) {
                    continue;
                }
                let rest: Vec<String> = parts
                    .into_iter()
                    .filter(|w| !COPY_NAMES.contains(&w.as_str()))
                    .collect();
                named.push(Named {
                    binding: Binding::of(field, output),
                    identity: described_identity(&rest.join("_"), schema, noun),
                    schema: schema.clone(),
                    field: field.clone(),
                });
            }
        }
        if named.is_empty() {
            return Err(format!(
                "'{forward}' makes a copy, and none of its required fields names the copy (a new name, a destination, a target): '{compensator}' could only be pointed at the original"
            ));
        }
        Ok(Self {
            named,
            noun: noun.to_owned(),
        })
    }

    /// Whether a compensator parameter identifies the copied thing: what the tool acts on, or
    /// what a field naming the copy identifies.
    pub(crate) fn about(&self, parameter: &str, target: &Value) -> bool {
        let (thing, _) = described_identity(parameter, target, &self.noun);
        thing == self.noun || self.named.iter().any(|n| n.identity.0 == thing)
    }

    /// Whether a field of the forward tool names the original: it is not a field naming the
    /// copy, yet identifies what one does.
    pub(crate) fn original(&self, field: &str, schema: &Value) -> bool {
        let (thing, _) = described_identity(field, schema, &self.noun);
        !self.named.iter().any(|n| n.field == field)
            && (thing == self.noun || self.named.iter().any(|n| n.identity.0 == thing))
    }

    /// The one field naming the copy that gives the parameter, with its name.
    pub(crate) fn bind(
        &self,
        parameter: &str,
        target: &Value,
        forward: &str,
    ) -> Result<(Binding, String), String> {
        let wanted = described_identity(parameter, target, &self.noun);
        let found: Vec<&Named> = self
            .named
            .iter()
            .filter(|n| fits(&n.schema, target) && same_identity(&n.identity, &wanted))
            .collect();
        match found.as_slice() {
            [one] => Ok((one.binding.clone(), one.field.clone())),
            [] => Err(format!(
                "'{parameter}' must name the copy '{forward}' makes, and no required field of '{forward}' naming the copy gives it"
            )),
            several => Err(format!(
                "'{parameter}' could name the copy from {} of '{forward}'; nothing says which",
                several
                    .iter()
                    .map(|n| format!("'{}'", n.field))
                    .collect::<Vec<_>>()
                    .join(" or ")
            )),
        }
    }
}
