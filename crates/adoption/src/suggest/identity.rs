//! What a field identifies (a sheet, an entity) and how (by name, by id), from its name or its
//! description: two fields bind to each other only when they identify the same thing.

use serde_json::Value;

use super::lexicon::words;

/// Words that qualify what a field names without changing it: `new_name` of `create_sheet` is
/// the name of the sheet it creates.
pub(crate) const QUALIFIERS: &[&str] = &["new", "added", "created", "target"];

/// Words that say a field identifies a thing, and how.
pub(crate) const IDENTITIES: &[&str] = &["name", "id", "key", "title", "slug", "uuid"];

/// A word without its plural ending (`entities` → `entity`, `names` → `name`).
pub(crate) fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies").filter(|s| s.len() > 1) {
        return format!("{stem}y");
    }
    match word.strip_suffix('s') {
        Some(stem) if stem.len() > 2 && !stem.ends_with('s') => stem.to_owned(),
        _ => word.to_owned(),
    }
}

/// What a field identifies: the thing, and how when its name says (`name`, `id`). A name made
/// only of qualifiers and an identity word identifies what the tool acts on, `noun`; a name
/// qualified by the noun names what the unqualified name does (`indexType` of an index is its
/// `type`).
pub(crate) fn identity(field: &str, noun: &str) -> (String, Option<String>) {
    let mut parts: Vec<String> = words(field)
        .iter()
        .map(|w| singular(w))
        .filter(|w| !QUALIFIERS.contains(&w.as_str()))
        .collect();
    let kind = parts
        .last()
        .filter(|w| IDENTITIES.contains(&w.as_str()))
        .cloned();
    if kind.is_some() {
        parts.pop();
    }
    let own: Vec<&str> = noun.split('_').filter(|w| !w.is_empty()).collect();
    if !own.is_empty() && parts.len() > own.len() && parts.iter().zip(&own).all(|(p, o)| p == o) {
        parts.drain(..own.len());
    }
    let thing = if parts.is_empty() {
        noun.to_owned()
    } else {
        parts.join("_")
    };
    (thing, kind)
}

/// [`identity`], with the way taken from the field's description when its name does not say:
/// `sheet` described as "the ID of the sheet" is an id, and never meets a name.
pub(crate) fn described_identity(
    field: &str,
    schema: &Value,
    noun: &str,
) -> (String, Option<String>) {
    let (thing, kind) = identity(field, noun);
    if kind.is_some() {
        return (thing, kind);
    }
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let said: Vec<String> = words(description)
        .iter()
        .map(|w| singular(w))
        .filter(|w| IDENTITIES.contains(&w.as_str()))
        .collect();
    match said.as_slice() {
        [first, rest @ ..] if rest.iter().all(|w| w == first) => (thing, Some(first.clone())),
        _ => (thing, None),
    }
}

/// Whether two fields identify the same thing the same way (a field that does not say how
/// meets any way).
pub(crate) fn same_identity(a: &(String, Option<String>), b: &(String, Option<String>)) -> bool {
    !a.0.is_empty() && a.0 == b.0 && (a.1.is_none() || b.1.is_none() || a.1 == b.1)
}
