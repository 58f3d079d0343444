//! Drafts for a tool no listed inverse undoes: a move or rename undoing itself, or
//! irreversible for a verb whose effect cannot be taken back.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::candidate::{ByWords, Candidate};
use super::fields::{fits, object_fields, simple};
use super::identity::{identity, same_identity};
use super::lexicon::{DESTROYS, IRREVERSIBLE, READ_VERBS, TAKE_BACK, verb_of, words};
use super::types::{Binding, Confidence, Proposal, Suggestion};

/// Argument pairs a move or rename swaps to undo itself.
pub(crate) const SWAPS: &[(&str, &str)] = &[
    ("source", "destination"),
    ("from", "to"),
    ("oldPath", "newPath"),
    ("old_path", "new_path"),
    ("oldName", "newName"),
    ("old_name", "new_name"),
    ("src", "dst"),
];

/// A move or rename undoes itself with its two places swapped.
pub(crate) fn self_inverse(candidate: &Candidate<'_>) -> Option<Suggestion> {
    if candidate.words.first().is_some_and(|w| w == "toggle") {
        return toggled_back(candidate);
    }
    if !candidate.words.iter().any(|w| w == "move" || w == "rename") {
        return None;
    }
    let (required, properties) = object_fields(Some(&candidate.tool.input_schema));
    let input = |field: &str| Binding::Input {
        field: field.to_owned(),
    };
    let swapped = SWAPS
        .iter()
        .find(|(a, b)| required.iter().any(|r| r == a) && required.iter().any(|r| r == b));
    let Some((a, b)) = swapped else {
        return renamed_back(candidate, &required, &properties);
    };
    let fits_both = match (properties.get(*a), properties.get(*b)) {
        (Some(x), Some(y)) => fits(x, y) && fits(y, x),
        _ => false,
    };
    if !fits_both || required.len() != 2 {
        return None;
    }
    let mapping = BTreeMap::from([((*a).to_owned(), input(b)), ((*b).to_owned(), input(a))]);
    Some(undone_by_itself(
        candidate,
        mapping,
        Confidence::High,
        format!("a move undoes itself with '{a}' and '{b}' swapped"),
    ))
}

/// A toggle without parameters (`toggle-simulated-logging`) undoes itself: called again, it
/// switches back. One with parameters is left alone: a parameter may name the state to set (a
/// setter, which a second call repeats), and a compensation passing every argument again is
/// what R102 refuses.
fn toggled_back(candidate: &Candidate<'_>) -> Option<Suggestion> {
    let (_, properties) = object_fields(Some(&candidate.tool.input_schema));
    properties.is_empty().then(|| {
        undone_by_itself(
            candidate,
            BTreeMap::new(),
            Confidence::High,
            "a toggle without parameters undoes itself: called again, it switches back".to_owned(),
        )
    })
}

/// A rename of a thing (`rename_sheet(path, sheet, new_name)`) undoes itself with the new name
/// and the one other required parameter naming the same thing swapped, and every other
/// required parameter passed again as it was.
pub(crate) fn renamed_back(
    candidate: &Candidate<'_>,
    required: &[String],
    properties: &Map<String, Value>,
) -> Option<Suggestion> {
    let at = candidate.words.iter().position(|w| w == "rename")?;
    let noun = candidate.noun(at);
    let [new] = required
        .iter()
        .filter(|r| words(r).first().map(String::as_str) == Some("new"))
        .collect::<Vec<_>>()[..]
    else {
        return None;
    };
    let named = identity(new, &noun);
    let [old] = required
        .iter()
        .filter(|r| *r != new && same_identity(&identity(r, &noun), &named))
        .collect::<Vec<_>>()[..]
    else {
        return None;
    };
    let both = properties.get(new).zip(properties.get(old));
    if !both.is_some_and(|(n, o)| fits(n, o) && fits(o, n)) || !required.iter().all(|r| simple(r)) {
        return None;
    }
    let mapping = required
        .iter()
        .map(|r| {
            let from = if r == new {
                old
            } else if r == old {
                new
            } else {
                r
            };
            (
                r.clone(),
                Binding::Input {
                    field: from.clone(),
                },
            )
        })
        .collect();
    Some(undone_by_itself(
        candidate,
        mapping,
        Confidence::Medium,
        format!(
            "a rename undoes itself with '{old}' and '{new}' swapped (they name the same {noun})"
        ),
    ))
}

/// A suggestion compensating the tool with a call of itself.
fn undone_by_itself(
    candidate: &Candidate<'_>,
    mapping: BTreeMap<String, Binding>,
    confidence: Confidence,
    reason: String,
) -> Suggestion {
    Suggestion {
        tool: candidate.tool.name.clone(),
        proposal: Proposal::Compensable {
            compensator: candidate.tool.name.clone(),
            mapping,
            reader: None,
        },
        confidence,
        reason,
    }
}

/// `irreversible` for a tool named with a verb whose effect cannot be taken back. The reason
/// names the listed tools that would read as taking it back (`delete_message` beside
/// `send_message`) and says why they do not.
pub(crate) fn irreversible(forward: &Candidate<'_>, by_words: &ByWords<'_>) -> Option<Suggestion> {
    let (at, verb) = verb_of(&forward.words)?;
    // `post_search` names an HTTP method, not a message.
    let reads = forward
        .words
        .get(at + 1)
        .is_some_and(|next| READ_VERBS.contains(&next.as_str()));
    if !IRREVERSIBLE.contains(&verb) || reads {
        return None;
    }
    let undoing = TAKE_BACK
        .iter()
        .map(|&word| word.to_owned())
        .chain([format!("un{verb}")]);
    let named: Vec<String> = by_words
        .with_word(forward, at, undoing)
        .map(|c| format!("'{}'", c.tool.name))
        .collect();
    let reason = match named.split_last() {
        None => format!("'{verb}' cannot be taken back once done, and no inverse tool is listed"),
        Some((last, rest)) => {
            let gone = if DESTROYS.contains(&verb) {
                "what the call destroyed is gone for good"
            } else {
                "what the call sent has already left the system"
            };
            let (listed, is, does) = if rest.is_empty() {
                (last.clone(), "is", "does")
            } else {
                (format!("{} and {last}", rest.join(", ")), "are", "do")
            };
            format!(
                "'{verb}' cannot be taken back once done: {listed} {is} listed but {does} not undo a '{verb}', as {gone}"
            )
        }
    };
    Some(Suggestion {
        tool: forward.tool.name.clone(),
        proposal: Proposal::Irreversible,
        confidence: if forward.words.first().map(String::as_str) == Some(verb) {
            Confidence::High
        } else {
            Confidence::Medium
        },
        reason,
    })
}
