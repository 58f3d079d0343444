//! What a tool says of what was there before its call: that the call replaces it, or that it
//! leaves it as it is when it already holds. Either way an inverse does not undo the call
//! exactly: it cannot bring back what the call replaced (`delete_sparklines` after an
//! `add_sparklines` that replaced the sparklines of its range), and it would undo what held
//! before (`remove_label` after an `add_label` that found the label there). Read from the tool's
//! description and from each parameter's name, values and description (`replace`, a
//! `dropTarget` that "drops the target collection if it exists").

use serde_json::Value;

use super::candidate::Candidate;
use super::identity::singular;
use super::lexicon::{verb_of, words};

/// Words saying the call puts something in the place of what is there.
pub(crate) const REPLACES: &[&str] = &[
    "replace",
    "replaces",
    "replacing",
    "replaced",
    "overwrite",
    "overwrites",
    "overwriting",
    "overwritten",
    "supersede",
    "supersedes",
    "superseding",
    "clobber",
    "clobbers",
    "clobbering",
    "upsert",
    "upserts",
];

/// Words that, after `or`, say the call changes what is there when it does not make it
/// (`Creates or updates a label`, `Create a table, or change one`).
pub(crate) const OR_CHANGES: &[&str] = &[
    "update", "updates", "updating", "change", "changes", "changing", "modify", "modifies",
];

/// Words that remove what is there: with a word saying it is there, the call replaces it
/// (`drops the target collection if it exists`).
pub(crate) const REMOVES: &[&str] = &[
    "drop", "drops", "delete", "deletes", "remove", "removes", "discard", "discards", "clear",
    "clears", "erase", "erases",
];

/// Words saying a thing is there before the call.
pub(crate) const THERE: &[&str] = &["already", "exist", "exists", "existing", "present"];

/// Words saying the call leaves what it finds there as it is.
pub(crate) const AS_IT_IS: &[&str] = &[
    "unchanged",
    "nothing",
    "noop",
    "ignored",
    "ignores",
    "ignore",
    "skipped",
    "skips",
    "skip",
    "silently",
    "succeeds",
    "succeed",
    "reused",
    "reuses",
    "reuse",
];

/// Two words saying the same (`no-op`, `has no effect`, `is not changed`).
pub(crate) const AS_IT_IS_PAIRS: &[(&str, &str)] = &[
    ("no", "op"),
    ("no", "effect"),
    ("no", "change"),
    ("no", "changes"),
    ("not", "changed"),
    ("not", "modified"),
];

/// Words saying the same only beside `already` (`a label it already has is not added again`):
/// beside `existing` they may speak of other things (`existing labels are kept`).
pub(crate) const AS_IT_WAS: &[&str] = &["again", "kept", "stays", "remains"];

/// Words saying a repeated call changes nothing more, so the first may have changed nothing.
pub(crate) const IDEMPOTENT: &[&str] = &["idempotent", "idempotently"];

/// Words making the call's effect depend on what it finds missing (`Creates the directory if it
/// does not exist`, `Create a new directory or ensure a directory exists`), with `exist`.
pub(crate) const UNLESS_THERE: &[&str] = &["unless", "ensure", "ensures", "ensuring"];

/// Words saying a thing is missing (`if missing`).
pub(crate) const MISSING: &[&str] = &["missing", "absent"];

/// Words that, a few words before a signal, deny it (`does not replace`, `never overwrites`,
/// `without replacing`, `rather than overwriting`); `t` is what `doesn't` leaves.
pub(crate) const DENIALS: &[&str] = &[
    "not", "never", "without", "t", "cannot", "rather", "instead", "nor",
];

/// Words saying the call fails in the case spoken of: a sentence with one says nothing of what
/// the call does to what is there (`Fails if the sheet already exists`).
pub(crate) const FAILS: &[&str] = &[
    "fail", "fails", "failed", "failing", "error", "errors", "raise", "raises", "reject",
    "rejects", "rejected", "refuse", "refuses", "refused", "throw", "throws", "abort", "aborts",
];

/// How many words before a signal a denial reaches.
const DENIAL_REACH: usize = 3;

/// What the call may do to what was there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prior {
    /// It may replace it: an inverse cannot bring it back.
    Replaced,
    /// It may leave it as it is, having found it already there: an inverse would undo it.
    Held,
}

/// What a tool says of what was there before its call, and where it says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Said {
    pub(crate) prior: Prior,
    /// Where it says so, in words (`'replaces' in its description`).
    source: String,
}

impl Said {
    /// Why `inverse` is not drafted as the undo of `forward`.
    pub(crate) fn reason(&self, forward: &str, inverse: &str) -> String {
        let source = &self.source;
        match self.prior {
            Prior::Replaced => format!(
                "'{forward}' may replace what is there ({source}): '{inverse}' cannot bring back what the call replaced, so it does not undo the call exactly"
            ),
            Prior::Held => format!(
                "'{forward}' may leave what is already there as it is ({source}): '{inverse}' would then undo what held before the call, so it does not undo the call exactly"
            ),
        }
    }
}

/// What the tool says of what was there before its call: its description first, then each
/// parameter's name, the names among its values (an `if_exists` of `replace`) and description.
pub(crate) fn said(tool: &Candidate<'_>) -> Option<Said> {
    let noun = noun(tool);
    let description = tool.tool.description.as_deref().unwrap_or_default();
    if let Some((prior, words)) = in_text(description, &noun) {
        return Some(Said {
            prior,
            source: format!("'{words}' in its description"),
        });
    }
    let properties = tool.tool.input_schema.get("properties")?.as_object()?;
    properties
        .iter()
        .find_map(|(name, schema)| in_parameter(name, schema, &noun))
}

/// What the tool acts on, as singular words: its name's words but its verb.
fn noun(tool: &Candidate<'_>) -> Vec<String> {
    let at = verb_of(&tool.words).map(|(at, _)| at);
    tool.words
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != at)
        .map(|(_, w)| singular(w))
        .collect()
}

/// What a parameter says: its name (`replace`, `overwrite_existing`, `exist_ok`), a value among
/// its `enum` (`replace`), or its description.
fn in_parameter(name: &str, schema: &Value, noun: &[String]) -> Option<Said> {
    let named = words(name);
    let has = |set: &[&str]| named.iter().any(|w| set.contains(&w.as_str()));
    let source = format!("its parameter '{name}'");
    if has(REPLACES) {
        return Some(Said {
            prior: Prior::Replaced,
            source,
        });
    }
    if has(&["exist", "exists", "existing"]) && has(&["ok", "ignore", "skip", "keep"]) {
        return Some(Said {
            prior: Prior::Held,
            source,
        });
    }
    let values = schema.get("enum").and_then(Value::as_array);
    let value = values
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find_map(|v| {
            words(v)
                .into_iter()
                .find(|w| REPLACES.contains(&w.as_str()))
        });
    if let Some(word) = value {
        return Some(Said {
            prior: Prior::Replaced,
            source: format!("'{word}' among the values of its parameter '{name}'"),
        });
    }
    let description = schema.get("description").and_then(Value::as_str)?;
    let (prior, words) = in_text(description, noun)?;
    Some(Said {
        prior,
        source: format!("'{words}' in the description of its parameter '{name}'"),
    })
}

/// What a text says, sentence by sentence: the first sentence that says the call replaces what
/// is there or leaves it as it is.
pub(crate) fn in_text(text: &str, noun: &[String]) -> Option<(Prior, String)> {
    sentences(text)
        .iter()
        .find_map(|s| in_sentence(&words(s), noun))
}

/// The sentences of a text: ended by `.`, `;`, `!` or `?`, or by a line break before a blank
/// line, a list item or a capital (a line wrapped within a sentence goes on with the next).
fn sentences(text: &str) -> Vec<String> {
    let mut joined = String::new();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    for (i, line) in lines.iter().enumerate() {
        joined.push_str(line);
        let next = lines.get(i + 1).and_then(|l| l.chars().next());
        let ends = next.is_none_or(|c| c.is_uppercase() || "-*•#0123456789".contains(c));
        joined.push(if ends { '.' } else { ' ' });
    }
    joined
        .split(['.', ';', '!', '?'])
        .map(str::to_owned)
        .collect()
}

/// What one sentence, as words, says.
fn in_sentence(sentence: &[String], noun: &[String]) -> Option<(Prior, String)> {
    let has = |set: &[&str]| sentence.iter().any(|w| set.contains(&w.as_str()));
    let first = |set: &[&str]| sentence.iter().find(|w| set.contains(&w.as_str())).cloned();
    if has(FAILS) {
        return None;
    }
    // The signal word, unless a denial stands a few words before it.
    let asserted = |set: &[&str]| {
        sentence.iter().enumerate().find_map(|(i, w)| {
            let denied = sentence[i.saturating_sub(DENIAL_REACH)..i]
                .iter()
                .any(|d| DENIALS.contains(&d.as_str()));
            (set.contains(&w.as_str()) && !denied).then(|| w.clone())
        })
    };
    let pair = |first: &str, set: &[&str]| {
        sentence
            .windows(2)
            .find(|w| w[0] == first && set.contains(&w[1].as_str()))
            .map(|w| w.join(" "))
    };
    if let Some(word) = asserted(REPLACES).or_else(|| pair("or", OR_CHANGES)) {
        return Some((Prior::Replaced, word));
    }
    if has(THERE)
        && let Some(word) = asserted(REMOVES)
    {
        return Some((Prior::Replaced, word));
    }
    if let Some(word) = asserted(IDEMPOTENT) {
        return Some((Prior::Held, word));
    }
    if has(THERE) {
        let as_it_is = first(AS_IT_IS)
            .or_else(|| {
                AS_IT_IS_PAIRS
                    .iter()
                    .find_map(|(first, second)| pair(first, &[*second]))
            })
            .or_else(|| first(AS_IT_WAS).filter(|_| has(&["already"])));
        if let Some(word) = as_it_is {
            return Some((Prior::Held, word));
        }
    }
    // Made only when missing: the sentence speaks of the tool's own noun (a database created
    // along with a collection is not the collection).
    let exist = first(&["exist", "exists", "present"]);
    let denied = first(&["not", "t", "never"]);
    let conditional = match (has(&["if"]), exist, denied) {
        (true, Some(exist), Some(denied)) => Some(format!("if … {denied} … {exist}")),
        (true, _, _) if has(MISSING) => first(MISSING).map(|word| format!("if … {word}")),
        (_, Some(exist), _) => first(UNLESS_THERE).map(|word| format!("{word} … {exist}")),
        _ => None,
    };
    let own = sentence.iter().any(|w| noun.contains(&singular(w)));
    conditional
        .filter(|_| own)
        .map(|words| (Prior::Held, words))
}
