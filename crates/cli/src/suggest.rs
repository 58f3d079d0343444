//! Drafting an overlay from a tools/list: pairs of tools that undo each other, found from a verb
//! lexicon, with bindings from the forward tool's `outputSchema` or arguments; tools whose verb
//! cannot be undone are declared irreversible. Anything uncertain is left out.

use std::collections::BTreeMap;

use mcp_recovery_model::{COMPENSATE_META_KEY, Hint, Tool};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// How sure a suggestion is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// The names differ only by a verb and its inverse from the lexicon, or by `un`; every
    /// required parameter is bound from a field of the same name.
    Medium,
    /// As medium, and the names match exactly apart from the verb, from the lexicon.
    High,
}

impl Confidence {
    /// `high` or `medium`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::High => "high",
            Self::Medium => "medium",
        }
    }
}

/// What a suggestion declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Proposal {
    /// A compensating call.
    Compensable {
        /// The compensating tool.
        compensator: String,
        /// Its parameters → JSONPath bindings (mcp-compensate carrier).
        mapping: BTreeMap<String, String>,
    },
    /// No compensating call exists.
    Irreversible,
}

/// One drafted declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    /// The tool it is for.
    pub tool: String,
    /// What it declares.
    #[serde(flatten)]
    pub proposal: Proposal,
    /// How sure it is.
    pub confidence: Confidence,
    /// Why, in one sentence.
    pub reason: String,
}

/// A pair of tools that looks like forward and inverse, left out because it is uncertain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The forward tool.
    pub tool: String,
    /// The candidate compensator.
    pub compensator: String,
    /// Why it was left out.
    pub reason: String,
}

/// The outcome of [`suggest`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Suggestions {
    /// What the overlay declares.
    pub suggestions: Vec<Suggestion>,
    /// Candidate pairs left out.
    pub skipped: Vec<Skipped>,
}

/// A verb and the verb that undoes it. `symmetric` pairs toggle a state, so each undoes the
/// other; the others undo only forward (a delete is not undone by an empty create).
struct Pair {
    forward: &'static str,
    inverse: &'static str,
    symmetric: bool,
}

const fn pair(forward: &'static str, inverse: &'static str, symmetric: bool) -> Pair {
    Pair {
        forward,
        inverse,
        symmetric,
    }
}

const PAIRS: &[Pair] = &[
    pair("create", "delete", false),
    pair("create", "remove", false),
    pair("add", "remove", false),
    pair("add", "delete", false),
    pair("insert", "delete", false),
    pair("reserve", "release", false),
    pair("hold", "release", false),
    pair("charge", "refund", false),
    pair("book", "cancel", false),
    pair("schedule", "cancel", false),
    pair("upload", "delete", false),
    pair("install", "uninstall", false),
    pair("register", "unregister", false),
    pair("register", "deregister", false),
    pair("grant", "revoke", false),
    pair("open", "close", false),
    pair("close", "reopen", false),
    pair("set", "unset", false),
    pair("set", "clear", false),
    pair("lock", "unlock", true),
    pair("start", "stop", false),
    pair("enable", "disable", true),
    pair("attach", "detach", true),
    pair("follow", "unfollow", true),
    pair("star", "unstar", true),
    pair("subscribe", "unsubscribe", true),
    pair("archive", "unarchive", true),
    pair("pin", "unpin", true),
    pair("mute", "unmute", true),
    pair("block", "unblock", true),
    pair("assign", "unassign", true),
    pair("link", "unlink", true),
    pair("mount", "unmount", true),
    pair("pause", "resume", true),
    pair("suspend", "resume", true),
    pair("hide", "unhide", true),
    pair("watch", "unwatch", true),
    pair("like", "unlike", true),
    pair("tag", "untag", true),
    pair("label", "unlabel", true),
    pair("publish", "unpublish", true),
    pair("freeze", "unfreeze", true),
];

/// Verbs whose effect leaves the system (a message read, money paid out) or is destroyed for
/// good: no call can take it back.
const IRREVERSIBLE: &[&str] = &[
    "send",
    "post",
    "publish",
    "email",
    "mail",
    "notify",
    "pay",
    "payout",
    "broadcast",
    "tweet",
    "reply",
    "sms",
    "dispatch",
    "transfer",
    "invite",
    "announce",
    "purge",
    "wipe",
    "erase",
    "destroy",
];

/// Optional compensator parameters that narrow what it acts on: left unbound, the compensating
/// call could act on more than the original call touched (`delete_many` without its filter).
const SELECTORS: &[&str] = &[
    "filter", "query", "where", "selector", "match", "ids", "id", "key", "name", "names",
];

/// Verbs that only read: tools named with them get nothing.
const READ_VERBS: &[&str] = &[
    "get",
    "list",
    "read",
    "search",
    "fetch",
    "find",
    "query",
    "describe",
    "show",
    "view",
    "lookup",
    "check",
    "count",
    "inspect",
    "browse",
    "retrieve",
    "download",
    "explain",
    "preview",
    "validate",
    "analyze",
    "summarize",
    "export",
    "scan",
    "estimate",
    "quote",
    "diff",
    "status",
];

/// Words a tool name is made of: split at `_`, `-`, `.`, `/`, spaces and camel-case humps,
/// lowercased.
pub fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous = None;
            continue;
        }
        let hump = c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase() || p.is_numeric());
        if hump && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
        previous = Some(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The first word that is a known verb, with its position.
fn verb_of(words: &[String]) -> Option<(usize, &str)> {
    words.iter().enumerate().find_map(|(i, w)| {
        let known = READ_VERBS.contains(&w.as_str())
            || IRREVERSIBLE.contains(&w.as_str())
            || PAIRS
                .iter()
                .any(|p| p.forward == w.as_str() || p.inverse == w.as_str())
            || w.starts_with("un");
        known.then_some((i, w.as_str()))
    })
}

/// One tool as the heuristics see it.
struct Candidate<'a> {
    tool: &'a Tool,
    words: Vec<String>,
}

impl Candidate<'_> {
    fn read_only(&self) -> bool {
        if let Some(hint) = self.tool.hint(Hint::ReadOnly) {
            return hint;
        }
        matches!(verb_of(&self.words), Some((_, verb)) if READ_VERBS.contains(&verb))
    }

    /// Already declares recovery in either carrier: nothing to suggest.
    fn declared(&self) -> bool {
        self.tool.sep_recovery().is_some() || self.tool.compensate().is_some()
    }
}

/// How `forward` and `inverse` names relate, when one undoes the other.
fn relation(forward: &[String], inverse: &[String]) -> Option<(Confidence, String)> {
    if forward.len() != inverse.len() {
        return None;
    }
    let differing: Vec<usize> = (0..forward.len())
        .filter(|&i| forward[i] != inverse[i])
        .collect();
    let [at] = differing.as_slice() else {
        return None;
    };
    let (f, i) = (forward[*at].as_str(), inverse[*at].as_str());
    let listed = PAIRS.iter().any(|p| {
        (p.forward == f && p.inverse == i) || (p.symmetric && p.forward == i && p.inverse == f)
    });
    if listed {
        return Some((
            Confidence::High,
            format!("'{i}' undoes '{f}' (verb lexicon)"),
        ));
    }
    if i.strip_prefix("un") == Some(f) || f.strip_prefix("un") == Some(i) {
        return Some((
            Confidence::Medium,
            format!("'{i}' and '{f}' differ by 'un'"),
        ));
    }
    None
}

/// The `required` names and `properties` of an object schema.
fn object_fields(schema: Option<&Value>) -> (Vec<String>, Map<String, Value>) {
    let required = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    (required, properties)
}

/// The JSON types a property schema declares (`type` only; none when it does not say).
fn types(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether a value of schema `source` fits a parameter of schema `target`: both declare types
/// and they meet (`integer` fits `number`), and arrays have items of meeting types.
fn fits(source: &Value, target: &Value) -> bool {
    let (from, to) = (types(source), types(target));
    if from.is_empty() || to.is_empty() {
        return false;
    }
    let meets = from.iter().any(|f| {
        to.iter()
            .any(|t| f == t || (f == "integer" && t == "number"))
    });
    if !meets {
        return false;
    }
    // An object fits when it has every property the parameter requires.
    if from.iter().all(|t| t == "object") && to.iter().all(|t| t == "object") {
        let (needed, _) = object_fields(Some(target));
        let (_, offered) = object_fields(Some(source));
        if !needed.iter().all(|n| offered.contains_key(n)) {
            return false;
        }
    }
    if from.iter().any(|t| t == "array") && to.iter().any(|t| t == "array") {
        return match (source.get("items"), target.get("items")) {
            (Some(a), Some(b)) => fits(a, b) || (types(a).is_empty() && types(b).is_empty()),
            (None, None) => true,
            _ => false,
        };
    }
    true
}

/// Binds every required parameter of the compensator, from the forward tool's required
/// `outputSchema` fields first, then its required arguments, by exact name and fitting type.
fn bind(forward: &Tool, compensator: &Tool) -> Result<BTreeMap<String, String>, String> {
    let (needed, wanted) = object_fields(Some(&compensator.input_schema));
    if needed.is_empty() {
        return Err(format!(
            "'{}' requires no parameter, so nothing ties it to the call it would undo",
            compensator.name
        ));
    }
    let (out_required, out_properties) = object_fields(forward.output_schema.as_ref());
    let (in_required, in_properties) = object_fields(Some(&forward.input_schema));
    if let Some(open) = wanted
        .keys()
        .find(|p| !needed.contains(p) && SELECTORS.contains(&p.to_ascii_lowercase().as_str()))
    {
        return Err(format!(
            "'{}' would leave its optional '{open}' unbound and could act on more than the call it undoes",
            compensator.name
        ));
    }
    let mut mapping = BTreeMap::new();
    for parameter in &needed {
        let Some(target) = wanted.get(parameter) else {
            return Err(format!("'{parameter}' is required but not described"));
        };
        let from_output = out_required.contains(parameter)
            && out_properties
                .get(parameter)
                .is_some_and(|s| fits(s, target));
        let from_input = in_required.contains(parameter)
            && in_properties
                .get(parameter)
                .is_some_and(|s| fits(s, target));
        let path = if from_output && simple(parameter) {
            format!("$.output.structuredContent.{parameter}")
        } else if from_input && simple(parameter) {
            format!("$.input.{parameter}")
        } else {
            return Err(format!(
                "no required field of '{}' (output or arguments) named '{parameter}' with a fitting type",
                forward.name
            ));
        };
        mapping.insert(parameter.clone(), path);
    }
    // An optional parameter the forward call also takes says which things to undo
    // (`firewall-remove-rules` with the rules `firewall-add-rules` added): bind it, or give up.
    for (parameter, target) in &wanted {
        if needed.contains(parameter) || !in_properties.contains_key(parameter) {
            continue;
        }
        let bound = in_required.contains(parameter)
            && simple(parameter)
            && in_properties
                .get(parameter)
                .is_some_and(|s| fits(s, target));
        if !bound {
            return Err(format!(
                "'{parameter}' of '{}' says what to undo, but '{}' may be called without it",
                compensator.name, forward.name
            ));
        }
        mapping.insert(parameter.clone(), format!("$.input.{parameter}"));
    }
    Ok(mapping)
}

/// A name the JSONPath subset can write with dots.
fn simple(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Argument pairs a move or rename swaps to undo itself.
const SWAPS: &[(&str, &str)] = &[
    ("source", "destination"),
    ("from", "to"),
    ("oldPath", "newPath"),
    ("old_path", "new_path"),
    ("oldName", "newName"),
    ("old_name", "new_name"),
    ("src", "dst"),
];

/// A move or rename undoes itself with its two places swapped.
fn self_inverse(candidate: &Candidate<'_>) -> Option<Suggestion> {
    let (_, verb) = verb_of(&candidate.words).or_else(|| {
        candidate
            .words
            .iter()
            .enumerate()
            .find(|(_, w)| matches!(w.as_str(), "move" | "rename"))
            .map(|(i, w)| (i, w.as_str()))
    })?;
    if !matches!(verb, "move" | "rename")
        && !candidate.words.iter().any(|w| w == "move" || w == "rename")
    {
        return None;
    }
    let (required, properties) = object_fields(Some(&candidate.tool.input_schema));
    let (a, b) = SWAPS
        .iter()
        .find(|(a, b)| required.iter().any(|r| r == a) && required.iter().any(|r| r == b))?;
    let fits_both = match (properties.get(*a), properties.get(*b)) {
        (Some(x), Some(y)) => fits(x, y) && fits(y, x),
        _ => false,
    };
    if !fits_both || required.len() != 2 {
        return None;
    }
    let mapping = BTreeMap::from([
        ((*a).to_owned(), format!("$.input.{b}")),
        ((*b).to_owned(), format!("$.input.{a}")),
    ]);
    Some(Suggestion {
        tool: candidate.tool.name.clone(),
        proposal: Proposal::Compensable {
            compensator: candidate.tool.name.clone(),
            mapping,
        },
        confidence: Confidence::High,
        reason: format!("a move undoes itself with '{a}' and '{b}' swapped"),
    })
}

/// Drafts suggestions for every tool that declares no recovery and is not read-only.
pub fn suggest(tools: &[Tool]) -> Suggestions {
    let candidates: Vec<Candidate<'_>> = tools
        .iter()
        .map(|tool| Candidate {
            tool,
            words: words(&tool.name),
        })
        .collect();
    let mut out = Suggestions::default();
    for forward in &candidates {
        if forward.read_only() || forward.declared() {
            continue;
        }
        let mut best: Option<Suggestion> = None;
        for inverse in &candidates {
            if std::ptr::eq(forward, inverse) || inverse.tool.hint(Hint::ReadOnly) == Some(true) {
                continue;
            }
            let Some((confidence, why)) = relation(&forward.words, &inverse.words) else {
                continue;
            };
            match bind(forward.tool, inverse.tool) {
                Ok(mapping) => {
                    let suggestion = Suggestion {
                        tool: forward.tool.name.clone(),
                        proposal: Proposal::Compensable {
                            compensator: inverse.tool.name.clone(),
                            mapping,
                        },
                        confidence,
                        reason: why,
                    };
                    if best.as_ref().is_none_or(|b| b.confidence < confidence) {
                        best = Some(suggestion);
                    }
                }
                Err(reason) => out.skipped.push(Skipped {
                    tool: forward.tool.name.clone(),
                    compensator: inverse.tool.name.clone(),
                    reason,
                }),
            }
        }
        let best = best.or_else(|| self_inverse(forward)).or_else(|| {
            let (at, verb) = verb_of(&forward.words)?;
            // `post_search` names an HTTP method, not a message.
            let reads = forward
                .words
                .get(at + 1)
                .is_some_and(|next| READ_VERBS.contains(&next.as_str()));
            (IRREVERSIBLE.contains(&verb) && !reads).then(|| Suggestion {
                tool: forward.tool.name.clone(),
                proposal: Proposal::Irreversible,
                confidence: if forward.words.first().map(String::as_str) == Some(verb) {
                    Confidence::High
                } else {
                    Confidence::Medium
                },
                reason: format!(
                    "'{verb}' cannot be taken back once done, and no inverse tool is listed"
                ),
            })
        });
        if let Some(suggestion) = best {
            // A pair found for the tool makes the skipped candidates for it moot.
            out.skipped.retain(|s| s.tool != suggestion.tool);
            out.suggestions.push(suggestion);
        }
    }
    out
}

impl Suggestions {
    /// The overlay document declaring every suggestion in the mcp-compensate carrier, with the
    /// confidence and reason in `notes`.
    pub fn overlay(&self, server: Option<&str>) -> Value {
        let mut tools = Map::new();
        for s in &self.suggestions {
            let notes = format!(
                "drafted by mcp-recovery suggest ({} confidence): {}",
                s.confidence.as_str(),
                s.reason
            );
            let carrier = match &s.proposal {
                Proposal::Compensable {
                    compensator,
                    mapping,
                } => json!({
                    "reversibility": "compensable",
                    "compensation": {"toolName": compensator, "parameterMapping": mapping},
                    "notes": notes,
                }),
                Proposal::Irreversible => json!({"reversibility": "irreversible", "notes": notes}),
            };
            tools.insert(
                s.tool.clone(),
                json!({"_meta": {COMPENSATE_META_KEY: carrier}}),
            );
        }
        let mut document = Map::new();
        if let Some(server) = server {
            document.insert("server".to_owned(), Value::String(server.to_owned()));
        }
        document.insert("tools".to_owned(), Value::Object(tools));
        Value::Object(document)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(value: Value) -> Vec<Tool> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn words_in_every_case() {
        assert_eq!(words("create_entities"), ["create", "entities"]);
        assert_eq!(words("createEntities"), ["create", "entities"]);
        assert_eq!(words("create-entities"), ["create", "entities"]);
        assert_eq!(words("HTTPGet.v2"), ["httpget", "v2"]);
        assert_eq!(words("addLabel2Issue"), ["add", "label2", "issue"]);
    }

    #[test]
    fn pairs_bind_from_output_then_arguments() {
        let list = tools(json!([
            {"name": "createTicket", "inputSchema": {"type": "object",
                "properties": {"title": {"type": "string"}}, "required": ["title"]},
             "outputSchema": {"type": "object", "properties": {"ticketId": {"type": "string"}},
                "required": ["ticketId"]}},
            {"name": "deleteTicket", "inputSchema": {"type": "object",
                "properties": {"ticketId": {"type": "string"}}, "required": ["ticketId"]}},
            {"name": "add-label", "inputSchema": {"type": "object",
                "properties": {"issue": {"type": "integer"}, "label": {"type": "string"}},
                "required": ["issue", "label"]}},
            {"name": "remove-label", "inputSchema": {"type": "object",
                "properties": {"issue": {"type": "number"}, "label": {"type": "string"}},
                "required": ["issue", "label"]}},
            {"name": "lock_issue", "inputSchema": {"type": "object",
                "properties": {"issue": {"type": "string"}}, "required": ["issue"]}},
            {"name": "unlock_issue", "inputSchema": {"type": "object",
                "properties": {"issue": {"type": "string"}}, "required": ["issue"]}},
            {"name": "list_tickets", "inputSchema": {"type": "object"}},
            {"name": "send_email", "inputSchema": {"type": "object"}},
            {"name": "send_digest", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": true}}
        ]));
        let found = suggest(&list);
        let by_tool: BTreeMap<&str, &Suggestion> = found
            .suggestions
            .iter()
            .map(|s| (s.tool.as_str(), s))
            .collect();
        assert_eq!(
            by_tool["createTicket"].proposal,
            Proposal::Compensable {
                compensator: "deleteTicket".into(),
                mapping: BTreeMap::from([(
                    "ticketId".into(),
                    "$.output.structuredContent.ticketId".into()
                )]),
            }
        );
        assert!(matches!(&by_tool["add-label"].proposal,
            Proposal::Compensable { compensator, mapping } if compensator == "remove-label"
                && mapping["issue"] == "$.input.issue"));
        // A state toggle undoes itself both ways; a delete is not undone by a create.
        assert!(by_tool.contains_key("lock_issue"));
        assert!(by_tool.contains_key("unlock_issue"));
        assert!(!by_tool.contains_key("deleteTicket"));
        assert!(!by_tool.contains_key("remove-label"));
        assert_eq!(by_tool["send_email"].proposal, Proposal::Irreversible);
        assert!(!by_tool.contains_key("list_tickets"));
        assert!(!by_tool.contains_key("send_digest"));
        assert_eq!(found.suggestions.len(), 5, "{:#?}", found.suggestions);
    }

    #[test]
    fn uncertain_pairs_are_left_out() {
        let list = tools(json!([
            {"name": "create_entities", "inputSchema": {"type": "object",
                "properties": {"entities": {"type": "array", "items": {"type": "object"}}},
                "required": ["entities"]}},
            {"name": "delete_entities", "inputSchema": {"type": "object",
                "properties": {"entityNames": {"type": "array", "items": {"type": "string"}}},
                "required": ["entityNames"]}},
            {"name": "create_user", "inputSchema": {"type": "object",
                "properties": {"id": {"type": "string"}}}},
            {"name": "delete_user", "inputSchema": {"type": "object",
                "properties": {"id": {"type": "integer"}}, "required": ["id"]}}
        ]));
        let found = suggest(&list);
        assert!(found.suggestions.is_empty(), "{:#?}", found.suggestions);
        assert_eq!(found.skipped.len(), 2);
    }

    #[test]
    fn compensators_that_could_act_more_broadly_are_left_out() {
        let list = tools(json!([
            {"name": "add-rules", "inputSchema": {"type": "object",
                "properties": {"ID": {"type": "string"}, "Rules": {"type": "array"}},
                "required": ["ID"]}},
            {"name": "remove-rules", "inputSchema": {"type": "object",
                "properties": {"ID": {"type": "string"}, "Rules": {"type": "array"}},
                "required": ["ID"]}},
            {"name": "insert-many", "inputSchema": {"type": "object",
                "properties": {"collection": {"type": "string"}, "documents": {"type": "array"}},
                "required": ["collection", "documents"]}},
            {"name": "delete-many", "inputSchema": {"type": "object",
                "properties": {"collection": {"type": "string"}, "filter": {"type": "object"}},
                "required": ["collection"]}},
            {"name": "create_project", "inputSchema": {"type": "object",
                "properties": {"params": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "required": ["params"]}},
            {"name": "delete_project", "inputSchema": {"type": "object",
                "properties": {"params": {"type": "object", "properties": {"projectId": {"type": "string"}},
                    "required": ["projectId"]}},
                "required": ["params"]}},
            {"name": "API-post-search", "inputSchema": {"type": "object"}},
            {"name": "start_trace", "inputSchema": {"type": "object",
                "properties": {"session": {"type": "string"}}, "required": ["session"]}},
            {"name": "stop_trace", "inputSchema": {"type": "object",
                "properties": {"session": {"type": "string"}}, "required": ["session"]}}
        ]));
        let found = suggest(&list);
        let tools: Vec<&str> = found.suggestions.iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(tools, ["start_trace"], "{:#?}", found);
        assert_eq!(found.skipped.len(), 3, "{:#?}", found.skipped);
    }

    #[test]
    fn moves_swap_their_places() {
        let list = tools(json!([
            {"name": "move_file", "inputSchema": {"type": "object",
                "properties": {"source": {"type": "string"}, "destination": {"type": "string"}},
                "required": ["source", "destination"]}}
        ]));
        let found = suggest(&list);
        assert_eq!(
            found.suggestions[0].proposal,
            Proposal::Compensable {
                compensator: "move_file".into(),
                mapping: BTreeMap::from([
                    ("destination".into(), "$.input.source".into()),
                    ("source".into(), "$.input.destination".into()),
                ]),
            }
        );
    }
}
