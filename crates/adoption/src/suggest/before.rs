//! Before-images: a tool changing what is stored at a place, with no inverse listed, undone by
//! reading the place before the call and writing what was read back after it (section 12.4 of
//! the spec).

use std::collections::BTreeMap;

use mcp_recovery_model::Hint;
use serde_json::{Map, Value};

use super::candidate::{ByWords, Candidate};
use super::fields::{fits, object_fields, simple, types};
use super::identity::singular;
use super::lexicon::{IRREVERSIBLE, READ_VERBS, verb_of, words};
use super::types::{Confidence, Proposal, Suggestion};

/// Verbs of tools that replace or change what is stored at a place: undone from a
/// before-image when no inverse is listed.
pub(crate) const OVERWRITES: &[&str] =
    &["write", "edit", "append", "overwrite", "replace", "patch"];

/// Verbs that change part of what is stored, so what they change is already there in the form
/// the read returns: their tool may be named for another noun than the read and the write
/// (`edit_block` of a `file_path`, with `read_file` and `write_file` of a `path`).
pub(crate) const EDITS: &[&str] = &["edit", "append", "replace", "patch"];

/// Parameter names that take the whole text written.
pub(crate) const CONTENTS: &[&str] = &["content", "contents", "text", "data", "body"];

/// An undo from a before-image: the forward tool changes what is stored at a place, a
/// `read_X` annotated read-only takes exactly the place, and `write_X` takes the place and its
/// whole text (`write_file` with `read_file`). The read runs before the call and the write puts
/// back what it found. The read and write of the tool's own noun take the place under the same
/// names; an edit named for another noun is paired with the one read and write whose place
/// its arguments name with their noun as a qualifier (`file_path` for `path` of `read_file`).
/// A tool that `replaces` what is there by its own word (`set_config`, "replacing the value
/// stored") is taken for a write with its verb, unless the verb only reads or cannot be taken
/// back. Exactly one read and one write, or nothing.
pub(crate) fn before_image(
    forward: &Candidate<'_>,
    by_words: &ByWords<'_>,
    replaces: bool,
) -> Option<Suggestion> {
    let writes_by_verb = forward
        .words
        .iter()
        .position(|w| OVERWRITES.contains(&w.as_str()));
    let at = writes_by_verb.or_else(|| {
        let (at, verb) = verb_of(&forward.words).filter(|_| replaces)?;
        (!READ_VERBS.contains(&verb) && !IRREVERSIBLE.contains(&verb)).then_some(at)
    })?;
    // What the reason says first: why the call is undone from a before-image.
    let lead = if writes_by_verb.is_some() {
        "no inverse is listed"
    } else {
        "the call may replace what is there, which no inverse brings back"
    };
    let with_verb = |verb: &str| by_words.with_word(forward, at, [verb.to_owned()]);
    let reads: Vec<&Candidate<'_>> = with_verb("read")
        // A proxy runs only a read its server annotates read-only.
        .filter(|c| c.tool.hint(Hint::ReadOnly) == Some(true))
        .collect();
    let writes: Vec<&Candidate<'_>> = with_verb("write").filter(|c| !c.read_only()).collect();
    if !reads.is_empty() || !writes.is_empty() {
        let ([read], [write]) = (reads.as_slice(), writes.as_slice()) else {
            return None;
        };
        let (place, _) = object_fields(Some(&read.tool.input_schema));
        let same = place.iter().map(|p| (p.clone(), p.clone())).collect();
        return restore(forward, (read, write), same, "", lead);
    }
    if !EDITS.contains(&forward.words[at].as_str()) {
        return None;
    }
    // The read's noun qualifies a required argument naming its place (`file` of `file_path`).
    let (forward_required, _) = object_fields(Some(&forward.tool.input_schema));
    let mut nouns: Vec<Vec<String>> = forward_required
        .iter()
        .flat_map(|field| {
            let given = plain(field);
            (1..=given.len()).map(move |end| given[..end].to_vec())
        })
        .collect();
    nouns.sort_unstable();
    nouns.dedup();
    let fitting: Vec<Suggestion> = nouns
        .iter()
        .flat_map(|noun| by_words.read_writes(noun).map(move |pair| (noun, pair)))
        .filter_map(|(noun, (read, write))| {
            let arguments = qualified_place(forward, read, noun)?;
            restore(forward, (read, write), arguments, &noun.join("_"), lead)
        })
        .collect();
    let [one] = <[Suggestion; 1]>::try_from(fitting).ok()?;
    Some(one)
}

/// A parameter's name as words in the singular, to compare names by.
fn plain(name: &str) -> Vec<String> {
    words(name).iter().map(|w| singular(w)).collect()
}

/// The forward arguments giving the read's place, when each parameter of the place is given
/// by exactly one required argument named like it or like it qualified by the read's noun,
/// and at least one is so qualified (`file_path` gives `path` of `read_file`).
fn qualified_place(
    forward: &Candidate<'_>,
    read: &Candidate<'_>,
    noun: &[String],
) -> Option<BTreeMap<String, String>> {
    let (place, _) = object_fields(Some(&read.tool.input_schema));
    let (forward_required, _) = object_fields(Some(&forward.tool.input_schema));
    let mut arguments = BTreeMap::new();
    let mut qualified = false;
    for parameter in &place {
        let wanted = plain(parameter);
        let mut named = forward_required.iter().filter_map(|field| {
            let given = plain(field);
            if given == wanted {
                Some((field, false))
            } else {
                let rest = given.strip_prefix(noun)?;
                (rest == wanted.as_slice()).then_some((field, true))
            }
        });
        let (field, by_noun) = named.next()?;
        if named.next().is_some() {
            return None;
        }
        qualified |= by_noun;
        arguments.insert(parameter.clone(), field.clone());
    }
    (qualified && !noun.is_empty()).then_some(arguments)
}

/// The before-image drafted from `read` and `write` when the read takes exactly the place (and
/// no option with a default),
/// `arguments` gives each of its parameters from a required forward argument of a fitting
/// type, the write takes the place under the same names and one more parameter that takes the
/// whole text.
fn restore(
    forward: &Candidate<'_>,
    (read, write): (&Candidate<'_>, &Candidate<'_>),
    arguments: BTreeMap<String, String>,
    noun: &str,
    lead: &str,
) -> Option<Suggestion> {
    let (place, read_properties) = object_fields(Some(&read.tool.input_schema));
    let (write_required, write_properties) = object_fields(Some(&write.tool.input_schema));
    let (forward_required, forward_properties) = object_fields(Some(&forward.tool.input_schema));
    let fitting = |name: &String, given: &String, properties: &Map<String, Value>| {
        simple(name)
            && simple(given)
            && read_properties
                .get(name)
                .zip(properties.get(given))
                .is_some_and(|(r, p)| fits(p, r))
    };
    let placed = place.iter().all(|p| {
        arguments.get(p).is_some_and(|given| {
            write_required.contains(p)
                && forward_required.contains(given)
                && fitting(p, p, &write_properties)
                && fitting(p, given, &forward_properties)
        })
    });
    if place.is_empty() || !placed || arguments.len() != place.len() {
        return None;
    }
    // A read with a defaulted option (`length` 1000, `offset` 0) pages or converts even when the
    // call leaves it out, so its text need not be what is stored: writing it back would lose data.
    if read_properties
        .iter()
        .any(|(name, schema)| !place.contains(name) && schema.get("default").is_some())
    {
        return None;
    }
    let [content] = write_required
        .iter()
        .filter(|p| !place.contains(p))
        .collect::<Vec<_>>()[..]
    else {
        return None;
    };
    let text = write_properties
        .get(content)
        .is_some_and(|s| types(s) == ["string"]);
    if !text || !CONTENTS.contains(&content.to_ascii_lowercase().as_str()) || !simple(content) {
        return None;
    }
    let renamed: Vec<String> = arguments
        .iter()
        .filter(|(p, given)| p != given)
        .map(|(p, given)| format!("'{p}' from '{given}'"))
        .collect();
    let renamed = if renamed.is_empty() {
        String::new()
    } else {
        format!(", with {} (they name the same {noun})", renamed.join(", "))
    };
    Some(Suggestion {
        tool: forward.tool.name.clone(),
        proposal: Proposal::Before {
            read: read.tool.name.clone(),
            arguments,
            write: write.tool.name.clone(),
            content: content.clone(),
        },
        confidence: Confidence::Medium,
        reason: format!(
            "{lead}: '{}' reads the text before the call and '{}' writes it back as '{content}' (before-image){renamed}; what did not exist before is not undone",
            read.tool.name, write.tool.name
        ),
    })
}
