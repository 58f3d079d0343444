//! Drafting an overlay from a tools/list: pairs of tools that undo each other, found from a verb
//! lexicon, with bindings from the forward tool's result or arguments (by name, by what a field
//! names, or per element of an array the result holds); moves and renames that undo themselves;
//! before-images for writes without an inverse; tools whose verb cannot be undone declared
//! irreversible. Recorded calls of a proxy journal confirm, contradict or teach bindings.
//! Anything uncertain is left out.

use std::collections::BTreeMap;

use mcp_recovery_model::{COMPENSATE_META_KEY, Hint, Tool};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// How sure a suggestion is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// The names differ only by a verb and its inverse from the lexicon, or by `un`; a parameter
    /// is bound by a documented equivalence rather than its name, or an inverse that undoes more
    /// than the call; or a before-image.
    Medium,
    /// The names match exactly apart from the verb, from the lexicon, and every parameter is
    /// bound from a field of the same name.
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

/// Where a compensator parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "lowercase")]
pub enum Binding {
    /// A top-level field of the forward call's result (`structuredContent`, or the value a
    /// drafted text reader reads).
    Output {
        /// The field.
        field: String,
    },
    /// A top-level argument of the forward call.
    Input {
        /// The argument.
        field: String,
    },
    /// One entry per element of an array field of the result (section 12.2 of the spec).
    Map {
        /// The array field of the result.
        field: String,
        /// What each element becomes: `$item#/…` references, or a shape of them.
        each: Value,
    },
}

impl Binding {
    /// The JSONPath of the mcp-compensate carrier, when the subset can write it.
    fn path(&self) -> Option<String> {
        match self {
            Self::Output { field } => Some(format!("$.output.structuredContent.{field}")),
            Self::Input { field } => Some(format!("$.input.{field}")),
            Self::Map { .. } => None,
        }
    }

    /// The SEP-3172 binding (with the overlay's map form).
    fn expression(&self) -> Value {
        match self {
            Self::Output { field } => Value::String(format!("$response.body#/{field}")),
            Self::Input { field } => Value::String(format!("$request.body#/{field}")),
            Self::Map { field, each } => {
                json!({"$map": format!("$response.body#/{field}"), "$each": each})
            }
        }
    }
}

/// A drafted text reader: the forward tool's result holds its JSON in text (section 12.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reader {
    /// `text` or `fastmcp-result`.
    pub from: &'static str,
    /// The JSON Schema of the value read, as the tool documents it.
    pub schema: Value,
}

/// What a suggestion declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Proposal {
    /// A compensating call.
    Compensable {
        /// The compensating tool.
        compensator: String,
        /// Its parameters → where their values come from.
        mapping: BTreeMap<String, Binding>,
        /// How the forward result is read from text, when it is.
        reader: Option<Reader>,
    },
    /// An undo from a before-image (section 12.4 of the spec): a read run before the call,
    /// and a write putting back what it found.
    Before {
        /// The read tool.
        read: String,
        /// The forward arguments it is called with (same names).
        arguments: Vec<String>,
        /// The tool writing the before-image back.
        write: String,
        /// Its parameter that takes the before-image's text.
        content: String,
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

impl Suggestion {
    /// The compensating tool, or the tool writing a before-image back.
    pub fn compensator(&self) -> Option<&str> {
        match &self.proposal {
            Proposal::Compensable { compensator, .. } => Some(compensator),
            Proposal::Before { write, .. } => Some(write),
            Proposal::Irreversible => None,
        }
    }

    /// What the notes of the drafted entry say.
    pub fn notes(&self) -> String {
        format!(
            "drafted by mcp-recovery suggest ({} confidence): {}",
            self.confidence.as_str(),
            self.reason
        )
    }
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
/// other; the others undo only forward (a delete is not undone by an empty create). A `broad`
/// inverse undoes more than the call did (`git_reset` unstages everything `git_add` staged and
/// what was staged before), so its drafts are never more than medium.
struct Pair {
    forward: &'static str,
    inverse: &'static str,
    symmetric: bool,
    broad: bool,
}

const fn pair(forward: &'static str, inverse: &'static str, symmetric: bool) -> Pair {
    Pair {
        forward,
        inverse,
        symmetric,
        broad: false,
    }
}

const fn broad(forward: &'static str, inverse: &'static str) -> Pair {
    Pair {
        forward,
        inverse,
        symmetric: false,
        broad: true,
    }
}

const PAIRS: &[Pair] = &[
    pair("create", "delete", false),
    pair("create", "remove", false),
    pair("create", "drop", false),
    pair("create", "close", false),
    pair("new", "close", false),
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
    pair("start", "end", false),
    pair("start", "kill", false),
    pair("connect", "disconnect", false),
    broad("add", "reset"),
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

/// How `forward` and `inverse` names relate, when one undoes the other: the confidence, the
/// reason, and where the verbs stand.
fn relation(forward: &[String], inverse: &[String]) -> Option<(Confidence, String, usize)> {
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
    let listed = PAIRS.iter().find(|p| {
        (p.forward == f && p.inverse == i) || (p.symmetric && p.forward == i && p.inverse == f)
    });
    if let Some(p) = listed {
        if p.broad {
            return Some((
                Confidence::Medium,
                format!("'{i}' undoes '{f}' (verb lexicon), and may undo more than the call did"),
                *at,
            ));
        }
        return Some((
            Confidence::High,
            format!("'{i}' undoes '{f}' (verb lexicon)"),
            *at,
        ));
    }
    if i.strip_prefix("un") == Some(f) || f.strip_prefix("un") == Some(i) {
        return Some((
            Confidence::Medium,
            format!("'{i}' and '{f}' differ by 'un'"),
            *at,
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

/// Words that qualify what a field names without changing it: `new_name` of `create_sheet` is
/// the name of the sheet it creates.
const QUALIFIERS: &[&str] = &["new", "added", "created", "target"];

/// Words that say a field identifies a thing, and how.
const IDENTITIES: &[&str] = &["name", "id", "key", "title", "slug", "uuid"];

/// A word without its plural ending (`entities` → `entity`, `names` → `name`).
fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies").filter(|s| s.len() > 1) {
        return format!("{stem}y");
    }
    match word.strip_suffix('s') {
        Some(stem) if stem.len() > 2 && !stem.ends_with('s') => stem.to_owned(),
        _ => word.to_owned(),
    }
}

/// What a field identifies: the thing, and how when its name says (`name`, `id`). A name made
/// only of qualifiers and an identity word identifies what the tool acts on, `noun`.
fn identity(field: &str, noun: &str) -> (String, Option<String>) {
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
    let thing = if parts.is_empty() {
        noun.to_owned()
    } else {
        parts.join("_")
    };
    (thing, kind)
}

/// [`identity`], with the way taken from the field's description when its name does not say:
/// `sheet` described as "the ID of the sheet" is an id, and never meets a name.
fn described_identity(field: &str, schema: &Value, noun: &str) -> (String, Option<String>) {
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
fn same_identity(a: &(String, Option<String>), b: &(String, Option<String>)) -> bool {
    !a.0.is_empty() && a.0 == b.0 && (a.1.is_none() || b.1.is_none() || a.1 == b.1)
}

/// The first JSON object in a tool's description that is a JSON Schema of an object (it has
/// `"type": "object"` and `properties`): the documented shape of what the tool returns.
fn documented_schema(description: &str) -> Option<Value> {
    description.match_indices('{').find_map(|(at, _)| {
        let mut values =
            serde_json::Deserializer::from_str(&description[at..]).into_iter::<Value>();
        let value = values.next()?.ok()?;
        (value.get("type") == Some(&json!("object"))
            && value.get("properties").is_some_and(Value::is_object))
        .then_some(value)
    })
}

/// Whether an `outputSchema` is FastMCP's wrapper of a plain return value: a single string
/// property `result`.
fn fastmcp_wrapper(schema: &Value) -> bool {
    let (_, properties) = object_fields(Some(schema));
    properties.len() == 1
        && properties
            .get("result")
            .is_some_and(|r| types(r) == ["string"])
}

/// The schema of the forward tool's result and, when the result holds it as text, the reader
/// to draft. Without an `outputSchema` (or with FastMCP's string wrapper) the value's schema
/// must be documented in the description; nothing is guessed.
fn result_schema(tool: &Tool) -> (Option<Value>, Option<Reader>) {
    let documented = || documented_schema(tool.description.as_deref().unwrap_or_default());
    match &tool.output_schema {
        Some(schema) if fastmcp_wrapper(schema) => match documented() {
            Some(schema) => (
                Some(schema.clone()),
                Some(Reader {
                    from: "fastmcp-result",
                    schema,
                }),
            ),
            None => (None, None),
        },
        Some(schema) => (Some(schema.clone()), None),
        None => match documented() {
            Some(schema) => (
                Some(schema.clone()),
                Some(Reader {
                    from: "text",
                    schema,
                }),
            ),
            None => (None, None),
        },
    }
}

/// The bindings drafted for a pair, and whether any of them rests on an equivalence rather
/// than a name.
struct Bound {
    mapping: BTreeMap<String, Binding>,
    reader: Option<Reader>,
    equivalences: Vec<String>,
}

/// What the forward tool offers a compensator parameter: its required result fields and its
/// required arguments.
struct Offered {
    out_required: Vec<String>,
    out_properties: Map<String, Value>,
    in_required: Vec<String>,
    in_properties: Map<String, Value>,
}

impl Offered {
    /// A required field of the result or the arguments with exactly this name and a fitting
    /// type, the result first.
    fn by_name(&self, parameter: &str, target: &Value) -> Option<Binding> {
        let has = |required: &[String], properties: &Map<String, Value>| {
            simple(parameter)
                && required.iter().any(|r| r == parameter)
                && properties.get(parameter).is_some_and(|s| fits(s, target))
        };
        if has(&self.out_required, &self.out_properties) {
            Some(Binding::Output {
                field: parameter.to_owned(),
            })
        } else if has(&self.in_required, &self.in_properties) {
            Some(Binding::Input {
                field: parameter.to_owned(),
            })
        } else {
            None
        }
    }

    /// Every required field of a fitting type that identifies what the parameter identifies.
    fn equivalents(&self, parameter: &str, target: &Value, noun: &str) -> Vec<(Binding, String)> {
        let wanted = described_identity(parameter, target, noun);
        let mut found = Vec::new();
        for (required, properties, output) in [
            (&self.out_required, &self.out_properties, true),
            (&self.in_required, &self.in_properties, false),
        ] {
            for field in required {
                let Some(schema) = properties.get(field) else {
                    continue;
                };
                if field == parameter
                    || !simple(field)
                    || !fits(schema, target)
                    || !same_identity(&described_identity(field, schema, noun), &wanted)
                {
                    continue;
                }
                let binding = if output {
                    Binding::Output {
                        field: field.clone(),
                    }
                } else {
                    Binding::Input {
                        field: field.clone(),
                    }
                };
                found.push((binding, field.clone()));
            }
        }
        found
    }

    /// Map bindings: an array result field whose items hold, per element, what the array
    /// parameter takes (`entityNames` from the `name` of each of `entities`).
    fn maps(&self, parameter: &str, target: &Value) -> Vec<(Binding, String)> {
        if !types(target).iter().any(|t| t == "array") {
            return Vec::new();
        }
        let Some(wanted_items) = target.get("items") else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for field in &self.out_required {
            let Some(source) = self.out_properties.get(field) else {
                continue;
            };
            let Some(items) = source.get("items") else {
                continue;
            };
            if !simple(field) || types(source) != ["array"] || types(items) != ["object"] {
                continue;
            }
            let element = singular(&words(field).join("_"));
            let each = if types(wanted_items) == ["object"] {
                shape(items, wanted_items)
            } else {
                element_reference(
                    items,
                    wanted_items,
                    &identity(parameter, &element),
                    &element,
                )
            };
            if let Some(each) = each {
                found.push((
                    Binding::Map {
                        field: field.clone(),
                        each,
                    },
                    format!("each of '{field}'"),
                ));
            }
        }
        found
    }
}

/// The one required member of `items` that says it identifies what the parameter identifies,
/// with a type fitting `wanted`.
fn element_reference(
    items: &Value,
    wanted: &Value,
    wanted_identity: &(String, Option<String>),
    element: &str,
) -> Option<Value> {
    let (required, properties) = object_fields(Some(items));
    let mut matches = required.iter().filter(|member| {
        let found = identity(member, element);
        properties.get(*member).is_some_and(|s| fits(s, wanted))
            && found.1.is_some()
            && same_identity(&found, wanted_identity)
    });
    let member = matches.next()?;
    if matches.next().is_some() {
        return None;
    }
    Some(Value::String(format!("$item#/{}", escape_pointer(member))))
}

/// A shape building each wanted object from an element: every required member of the wanted
/// items from the one required member of the element of the same name, or of the same name
/// once qualifiers are dropped (`observations` from `addedObservations`).
fn shape(items: &Value, wanted: &Value) -> Option<Value> {
    let (needed, wanted_properties) = object_fields(Some(wanted));
    let (offered, properties) = object_fields(Some(items));
    if needed.is_empty() {
        return None;
    }
    let mut each = Map::new();
    for member in &needed {
        let target = wanted_properties.get(member)?;
        let plain = |name: &str| identity(name, "");
        let mut matches = offered.iter().filter(|o| {
            properties.get(*o).is_some_and(|s| fits(s, target))
                && (*o == member || plain(o) == plain(member))
        });
        let source = matches.next()?;
        if matches.next().is_some() {
            return None;
        }
        each.insert(
            member.clone(),
            Value::String(format!("$item#/{}", escape_pointer(source))),
        );
    }
    Some(Value::Object(each))
}

/// A JSON Pointer token.
fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Binds every required parameter of the compensator: from a required result field or
/// argument of the same name (result first), else from the one field that identifies the same
/// thing (`sheet` from `new_name` when the forward tool creates a sheet), else from each
/// element of an array the result holds. Two candidates are never chosen between.
fn bind(forward: &Tool, compensator: &Tool, noun: &str) -> Result<Bound, String> {
    let (needed, wanted) = object_fields(Some(&compensator.input_schema));
    if needed.is_empty() {
        return Err(format!(
            "'{}' requires no parameter, so nothing ties it to the call it would undo",
            compensator.name
        ));
    }
    let (output, reader) = result_schema(forward);
    let (out_required, out_properties) = object_fields(output.as_ref());
    let (in_required, in_properties) = object_fields(Some(&forward.input_schema));
    let offered = Offered {
        out_required,
        out_properties,
        in_required,
        in_properties,
    };
    if let Some(open) = wanted
        .keys()
        .find(|p| !needed.contains(p) && SELECTORS.contains(&p.to_ascii_lowercase().as_str()))
    {
        return Err(format!(
            "'{}' would leave its optional '{open}' unbound and could act on more than the call it undoes",
            compensator.name
        ));
    }
    let mut bound = Bound {
        mapping: BTreeMap::new(),
        reader: None,
        equivalences: Vec::new(),
    };
    for parameter in &needed {
        let Some(target) = wanted.get(parameter) else {
            return Err(format!("'{parameter}' is required but not described"));
        };
        if let Some(binding) = offered.by_name(parameter, target) {
            bound.mapping.insert(parameter.clone(), binding);
            continue;
        }
        let mut candidates = offered.equivalents(parameter, target, noun);
        if candidates.is_empty() {
            candidates = offered.maps(parameter, target);
        }
        match candidates.as_slice() {
            [(binding, field)] => {
                bound
                    .equivalences
                    .push(format!("'{parameter}' from {}", quoted_field(field)));
                bound.mapping.insert(parameter.clone(), binding.clone());
            }
            [] => {
                return Err(format!(
                    "no required field of '{}' (result or arguments) gives '{parameter}': none has its name, or names the same thing with a fitting type",
                    forward.name
                ));
            }
            several => {
                let names: Vec<String> = several.iter().map(|(_, f)| quoted_field(f)).collect();
                return Err(format!(
                    "'{parameter}' could come from {} of '{}'; nothing says which",
                    names.join(" or "),
                    forward.name
                ));
            }
        }
    }
    // An optional parameter the forward call also takes says which things to undo
    // (`firewall-remove-rules` with the rules `firewall-add-rules` added): bind it, or give up.
    for (parameter, target) in &wanted {
        if needed.contains(parameter) || !offered.in_properties.contains_key(parameter) {
            continue;
        }
        let bound_input = offered.in_required.contains(parameter)
            && simple(parameter)
            && offered
                .in_properties
                .get(parameter)
                .is_some_and(|s| fits(s, target));
        if !bound_input {
            return Err(format!(
                "'{parameter}' of '{}' says what to undo, but '{}' may be called without it",
                compensator.name, forward.name
            ));
        }
        bound.mapping.insert(
            parameter.clone(),
            Binding::Input {
                field: parameter.clone(),
            },
        );
    }
    if bound
        .mapping
        .values()
        .any(|b| !matches!(b, Binding::Input { .. }))
    {
        bound.reader = reader;
    }
    Ok(bound)
}

/// `'name'`, or `each of 'name'` as given.
fn quoted_field(field: &str) -> String {
    if field.starts_with("each of ") {
        field.to_owned()
    } else {
        format!("'{field}'")
    }
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
    Some(Suggestion {
        tool: candidate.tool.name.clone(),
        proposal: Proposal::Compensable {
            compensator: candidate.tool.name.clone(),
            mapping,
            reader: None,
        },
        confidence: Confidence::High,
        reason: format!("a move undoes itself with '{a}' and '{b}' swapped"),
    })
}

/// A rename of a thing (`rename_sheet(path, sheet, new_name)`) undoes itself with the new name
/// and the one other required parameter naming the same thing swapped, and every other
/// required parameter passed again as it was.
fn renamed_back(
    candidate: &Candidate<'_>,
    required: &[String],
    properties: &Map<String, Value>,
) -> Option<Suggestion> {
    let at = candidate.words.iter().position(|w| w == "rename")?;
    let noun: String = candidate
        .words
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .map(|(_, w)| singular(w))
        .collect::<Vec<_>>()
        .join("_");
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
    Some(Suggestion {
        tool: candidate.tool.name.clone(),
        proposal: Proposal::Compensable {
            compensator: candidate.tool.name.clone(),
            mapping,
            reader: None,
        },
        confidence: Confidence::Medium,
        reason: format!(
            "a rename undoes itself with '{old}' and '{new}' swapped (they name the same {noun})"
        ),
    })
}

/// Verbs of tools that replace or change what is stored at a place: undone from a
/// before-image when no inverse is listed.
const OVERWRITES: &[&str] = &["write", "edit", "append", "overwrite", "replace", "patch"];

/// Parameter names that take the whole text written.
const CONTENTS: &[&str] = &["content", "contents", "text", "data", "body"];

/// An undo from a before-image: the forward tool changes what is stored at a place, a
/// `read_X` annotated read-only takes exactly the place, and `write_X` takes the place and its whole text
/// (`write_file` with `read_file`). The read runs before the call and the write puts back what
/// it found. Exactly one such read and one such write, or nothing.
fn before_image(forward: &Candidate<'_>, candidates: &[Candidate<'_>]) -> Option<Suggestion> {
    let at = forward
        .words
        .iter()
        .position(|w| OVERWRITES.contains(&w.as_str()))?;
    let with_verb = |verb: &str| {
        let mut words = forward.words.clone();
        words[at] = verb.to_owned();
        words
    };
    let (read_words, write_words) = (with_verb("read"), with_verb("write"));
    let reads: Vec<&Candidate<'_>> = candidates
        .iter()
        // A proxy runs only a read its server annotates read-only.
        .filter(|c| c.words == read_words && c.tool.hint(Hint::ReadOnly) == Some(true))
        .collect();
    let writes: Vec<&Candidate<'_>> = candidates
        .iter()
        .filter(|c| c.words == write_words && !c.read_only())
        .collect();
    let ([read], [write]) = (reads.as_slice(), writes.as_slice()) else {
        return None;
    };
    let (place, read_properties) = object_fields(Some(&read.tool.input_schema));
    let (write_required, write_properties) = object_fields(Some(&write.tool.input_schema));
    let (forward_required, forward_properties) = object_fields(Some(&forward.tool.input_schema));
    let fitting = |name: &String, properties: &Map<String, Value>| {
        simple(name)
            && read_properties
                .get(name)
                .zip(properties.get(name))
                .is_some_and(|(r, p)| fits(p, r))
    };
    if place.is_empty()
        || !place.iter().all(|p| {
            write_required.contains(p)
                && forward_required.contains(p)
                && fitting(p, &write_properties)
                && fitting(p, &forward_properties)
        })
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
    Some(Suggestion {
        tool: forward.tool.name.clone(),
        proposal: Proposal::Before {
            read: read.tool.name.clone(),
            arguments: place.clone(),
            write: write.tool.name.clone(),
            content: content.clone(),
        },
        confidence: Confidence::Medium,
        reason: format!(
            "no inverse is listed: '{}' reads the text before the call and '{}' writes it back as '{content}' (before-image); what did not exist before is not undone",
            read.tool.name, write.tool.name
        ),
    })
}

/// One call recorded in a proxy journal (a `call.outcome` record).
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The session it belongs to.
    pub session: String,
    /// The tool called.
    pub name: String,
    /// The arguments sent.
    pub arguments: Value,
    /// The `CallToolResult`, when one came back.
    pub result: Option<Value>,
}

impl Recorded {
    fn failed(&self) -> bool {
        self.result
            .as_ref()
            .is_none_or(|r| r.get("isError") == Some(&Value::Bool(true)))
    }

    /// What a binding selects in this call, when it selects something.
    fn select(&self, binding: &Binding) -> Option<Value> {
        let structured = || self.result.as_ref()?.get("structuredContent");
        match binding {
            Binding::Output { field } => structured()?.get(field).cloned(),
            Binding::Input { field } => self.arguments.get(field).cloned(),
            Binding::Map { field, each } => structured()?
                .get(field)?
                .as_array()?
                .iter()
                .map(|element| build(each, element))
                .collect::<Option<Vec<Value>>>()
                .map(Value::Array),
        }
    }
}

/// One entry of a map binding built from one element.
fn build(each: &Value, element: &Value) -> Option<Value> {
    match each {
        Value::String(reference) if reference == "$item" => Some(element.clone()),
        Value::String(reference) => element.pointer(reference.strip_prefix("$item#")?).cloned(),
        Value::Object(shape) => shape
            .iter()
            .map(|(k, v)| Some((k.clone(), build(v, element)?)))
            .collect::<Option<Map<String, Value>>>()
            .map(Value::Object),
        constant => Some(constant.clone()),
    }
}

/// What a journal shows about one binding: in how many sessions a call of the inverse took the
/// value it selects from the forward call before it, and whether one ever took another value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Seen {
    sessions: usize,
    contradicted: bool,
}

/// The calls of an inverse paired with the forward call before it, per session: in each
/// session every successful call of `inverse` is paired with the latest successful call of
/// `forward` not paired yet.
fn pairings<'a>(
    calls: &'a [Recorded],
    forward: &str,
    inverse: &str,
) -> BTreeMap<&'a str, Vec<(&'a Recorded, &'a Recorded)>> {
    let mut open: BTreeMap<&str, &Recorded> = BTreeMap::new();
    let mut out: BTreeMap<&str, Vec<(&Recorded, &Recorded)>> = BTreeMap::new();
    for call in calls {
        if call.name == forward && !call.failed() {
            open.insert(&call.session, call);
        } else if call.name == inverse
            && !call.failed()
            && let Some(before) = open.remove(call.session.as_str())
        {
            out.entry(&call.session).or_default().push((before, call));
        }
    }
    out
}

/// How a binding of `parameter` fared over the pairings.
fn seen(
    pairs: &BTreeMap<&str, Vec<(&Recorded, &Recorded)>>,
    parameter: &str,
    binding: &Binding,
) -> Seen {
    let mut out = Seen::default();
    for calls in pairs.values() {
        let mut agreed = false;
        for (before, after) in calls {
            let taken = after.arguments.get(parameter);
            if taken.is_some() && before.select(binding).as_ref() == taken {
                agreed = true;
            } else {
                out.contradicted = true;
            }
        }
        out.sessions += usize::from(agreed);
    }
    out
}

/// Bindings a journal teaches for a pair the names found but the schemas could not bind: each
/// required parameter of the inverse from the one top-level result field or argument of the
/// forward call that held the value the inverse took, never contradicted (a result field wins
/// over an argument holding the same value, as in [`bind`]).
fn learn(
    pairs: &BTreeMap<&str, Vec<(&Recorded, &Recorded)>>,
    compensator: &Tool,
) -> Option<(BTreeMap<String, Binding>, String)> {
    let (needed, _) = object_fields(Some(&compensator.input_schema));
    let sessions = pairs.len();
    if needed.is_empty() || sessions == 0 {
        return None;
    }
    let (first_before, _) = pairs.values().next()?.first()?;
    let mut mapping = BTreeMap::new();
    let mut said = Vec::new();
    for parameter in &needed {
        let structured = first_before
            .result
            .as_ref()
            .and_then(|r| r.get("structuredContent"))
            .and_then(Value::as_object);
        let outputs = structured
            .into_iter()
            .flat_map(|o| o.keys())
            .map(|field| Binding::Output {
                field: field.clone(),
            });
        let inputs = first_before
            .arguments
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys())
            .map(|field| Binding::Input {
                field: field.clone(),
            });
        let held: Vec<(Binding, Seen)> = outputs
            .chain(inputs)
            .filter(|b| match b {
                Binding::Output { field } | Binding::Input { field } => simple(field),
                Binding::Map { .. } => false,
            })
            .map(|b| {
                let s = seen(pairs, parameter, &b);
                (b, s)
            })
            .filter(|(_, s)| !s.contradicted && s.sessions > 0)
            .collect();
        let from_output: Vec<&(Binding, Seen)> = held
            .iter()
            .filter(|(b, _)| matches!(b, Binding::Output { .. }))
            .collect();
        let chosen: &(Binding, Seen) = match (from_output.as_slice(), held.as_slice()) {
            ([one], _) => one,
            ([], [one]) => one,
            _ => return None,
        };
        said.push(format!(
            "'{parameter}' ← {} seen in {} of {sessions} session(s)",
            chosen.0.path().unwrap_or_default(),
            chosen.1.sessions
        ));
        mapping.insert(parameter.clone(), chosen.0.clone());
    }
    Some((
        mapping,
        format!("learned from the journal: {}", said.join(", ")),
    ))
}

/// Drafts suggestions for every tool that declares no recovery and is not read-only, checked
/// against and taught by recorded calls (none: the names and schemas alone): a drafted binding a journal
/// contradicts is left out, one it confirms says so in its reason, and a pair the schemas
/// could not bind is drafted from what the journal shows, when it shows one binding for every
/// parameter and never another.
pub fn suggest_with(tools: &[Tool], calls: &[Recorded]) -> Suggestions {
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
        let mut skipped = Vec::new();
        for inverse in &candidates {
            if std::ptr::eq(forward, inverse) || inverse.tool.hint(Hint::ReadOnly) == Some(true) {
                continue;
            }
            let Some((confidence, why, at)) = relation(&forward.words, &inverse.words) else {
                continue;
            };
            let noun = forward
                .words
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != at)
                .map(|(_, w)| singular(w))
                .collect::<Vec<_>>()
                .join("_");
            let pairs = pairings(calls, &forward.tool.name, &inverse.tool.name);
            let drafted = match bind(forward.tool, inverse.tool, &noun) {
                Ok(bound) => confirm(bound, &pairs, confidence, why),
                Err(reason) => match learn(&pairs, inverse.tool) {
                    Some((mapping, learned)) => Ok((
                        Bound {
                            mapping,
                            reader: None,
                            equivalences: Vec::new(),
                        },
                        Confidence::Medium,
                        format!("{why}; {learned}"),
                    )),
                    None => Err(reason),
                },
            };
            match drafted {
                Ok((bound, confidence, reason)) => {
                    let suggestion = Suggestion {
                        tool: forward.tool.name.clone(),
                        proposal: Proposal::Compensable {
                            compensator: inverse.tool.name.clone(),
                            mapping: bound.mapping,
                            reader: bound.reader,
                        },
                        confidence,
                        reason,
                    };
                    if best.as_ref().is_none_or(|b| b.confidence < confidence) {
                        best = Some(suggestion);
                    }
                }
                Err(reason) => skipped.push(Skipped {
                    tool: forward.tool.name.clone(),
                    compensator: inverse.tool.name.clone(),
                    reason,
                }),
            }
        }
        let best = best
            .or_else(|| self_inverse(forward))
            .or_else(|| before_image(forward, &candidates))
            .or_else(|| irreversible(forward));
        match best {
            // A pair found for the tool makes the skipped candidates for it moot.
            Some(suggestion) => out.suggestions.push(suggestion),
            None => out.skipped.extend(skipped),
        }
    }
    out
}

/// A pair's bindings checked against the journal: left out when a call of the inverse took
/// another value than one of them selects, else with what the journal confirms in the reason.
fn confirm(
    bound: Bound,
    pairs: &BTreeMap<&str, Vec<(&Recorded, &Recorded)>>,
    confidence: Confidence,
    why: String,
) -> Result<(Bound, Confidence, String), String> {
    let confidence = if bound.equivalences.is_empty() {
        confidence
    } else {
        Confidence::Medium
    };
    let mut reason = why;
    if !bound.equivalences.is_empty() {
        reason = format!(
            "{reason}; {} (they name the same thing)",
            bound.equivalences.join(", ")
        );
    }
    if pairs.is_empty() || bound.reader.is_some() {
        return Ok((bound, confidence, reason));
    }
    let mut least = usize::MAX;
    for (parameter, binding) in &bound.mapping {
        let s = seen(pairs, parameter, binding);
        if s.contradicted {
            return Err(format!(
                "the journal shows a call that took another '{parameter}' than the drafted binding selects"
            ));
        }
        least = least.min(s.sessions);
    }
    Ok((
        bound,
        confidence,
        format!(
            "{reason}; the journal agrees: seen in {least} of {} session(s)",
            pairs.len()
        ),
    ))
}

/// `irreversible` for a tool named with a verb whose effect cannot be taken back.
fn irreversible(forward: &Candidate<'_>) -> Option<Suggestion> {
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
        reason: format!("'{verb}' cannot be taken back once done, and no inverse tool is listed"),
    })
}

impl Suggestion {
    /// The overlay entry of this suggestion: the mcp-compensate carrier when its bindings are
    /// paths of the subset, else the SEP-3172 carrier with the overlay's forms (map bindings, a
    /// text reader), or a before-image.
    pub fn entry(&self) -> Value {
        let notes = self.notes();
        match &self.proposal {
            Proposal::Compensable {
                compensator,
                mapping,
                reader,
            } => {
                let paths: Option<BTreeMap<&String, String>> =
                    mapping.iter().map(|(k, b)| Some((k, b.path()?))).collect();
                match (paths, reader) {
                    (Some(paths), None) => json!({"_meta": {COMPENSATE_META_KEY: {
                        "reversibility": "compensable",
                        "compensation": {"toolName": compensator, "parameterMapping": paths},
                        "notes": notes,
                    }}}),
                    _ => {
                        let parameters: Map<String, Value> = mapping
                            .iter()
                            .map(|(k, b)| (k.clone(), b.expression()))
                            .collect();
                        let mut entry = json!({"annotations": {"recovery": {
                            "strategy": "compensation",
                            "compensatingOperation": {
                                "operationId": compensator,
                                "parameters": parameters,
                            },
                            "notes": notes,
                        }}});
                        if let Some(reader) = reader {
                            entry["result"] = json!({"from": reader.from, "schema": reader.schema});
                        }
                        entry
                    }
                }
            }
            Proposal::Before {
                read,
                arguments,
                write,
                content,
            } => {
                let place: Map<String, Value> = arguments
                    .iter()
                    .map(|a| (a.clone(), Value::String(format!("$request.body#/{a}"))))
                    .collect();
                let mut parameters = place.clone();
                parameters.insert(content.clone(), Value::String("$before.text".to_owned()));
                json!({"before": {
                    "read": read,
                    "arguments": place,
                    "found": {"operationId": write, "parameters": parameters},
                }})
            }
            Proposal::Irreversible => json!({"_meta": {COMPENSATE_META_KEY: {
                "reversibility": "irreversible",
                "notes": notes,
            }}}),
        }
    }
}

impl Suggestions {
    /// The overlay document declaring every suggestion, with the confidence and reason in
    /// `notes` where the carrier has them.
    pub fn overlay(&self, server: Option<&str>) -> Value {
        let tools: Map<String, Value> = self
            .suggestions
            .iter()
            .map(|s| (s.tool.clone(), s.entry()))
            .collect();
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

    fn suggest(tools: &[Tool]) -> Suggestions {
        suggest_with(tools, &[])
    }

    fn output(field: &str) -> Binding {
        Binding::Output {
            field: field.to_owned(),
        }
    }

    fn input(field: &str) -> Binding {
        Binding::Input {
            field: field.to_owned(),
        }
    }

    fn by_tool(found: &Suggestions) -> BTreeMap<&str, &Suggestion> {
        found
            .suggestions
            .iter()
            .map(|s| (s.tool.as_str(), s))
            .collect()
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
                mapping: BTreeMap::from([("ticketId".into(), output("ticketId"))]),
                reader: None,
            }
        );
        assert!(matches!(&by_tool["add-label"].proposal,
            Proposal::Compensable { compensator, mapping, .. } if compensator == "remove-label"
                && mapping["issue"] == input("issue")));
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
                    ("destination".into(), input("source")),
                    ("source".into(), input("destination")),
                ]),
                reader: None,
            }
        );
    }

    #[test]
    fn parameters_pair_by_what_they_name() {
        let list = tools(json!([
            {"name": "create_sheet", "inputSchema": {"type": "object",
                "properties": {"path": {"type": "string"}, "new_name": {"type": "string"},
                    "position": {"type": "integer"}},
                "required": ["path", "new_name"]}},
            {"name": "delete_sheet", "inputSchema": {"type": "object",
                "properties": {"path": {"type": "string"}, "sheet": {"type": "string"}},
                "required": ["path", "sheet"]}},
            // Two arguments name a board: nothing says which one the compensator takes.
            {"name": "create_board", "inputSchema": {"type": "object",
                "properties": {"board_name": {"type": "string"}, "new_name": {"type": "string"}},
                "required": ["board_name", "new_name"]}},
            {"name": "delete_board", "inputSchema": {"type": "object",
                "properties": {"board": {"type": "string"}}, "required": ["board"]}},
            // An id is not a name, whether the name or the description says it.
            {"name": "create_team", "inputSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"]}},
            {"name": "create_site", "inputSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"]}},
            {"name": "delete_site", "inputSchema": {"type": "object",
                "properties": {"site": {"type": "string", "description": "The ID of the site."}},
                "required": ["site"]}},
            {"name": "delete_team", "inputSchema": {"type": "object",
                "properties": {"team_id": {"type": "string"}}, "required": ["team_id"]}}
        ]));
        let found = suggest(&list);
        let by_tool = by_tool(&found);
        let sheet = by_tool["create_sheet"];
        assert_eq!(
            sheet.proposal,
            Proposal::Compensable {
                compensator: "delete_sheet".into(),
                mapping: BTreeMap::from([
                    ("path".into(), input("path")),
                    ("sheet".into(), input("new_name")),
                ]),
                reader: None,
            }
        );
        assert_eq!(sheet.confidence, Confidence::Medium);
        assert!(
            sheet.reason.contains("'sheet' from 'new_name'"),
            "{sheet:?}"
        );
        assert_eq!(by_tool.len(), 1, "{found:#?}");
        let reasons: Vec<&str> = found.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert!(
            reasons[0].contains("'board_name' or 'new_name'"),
            "{reasons:?}"
        );
        assert!(reasons[1].contains("gives 'team_id'"), "{reasons:?}");
        assert!(reasons[2].contains("gives 'site'"), "{reasons:?}");
    }

    #[test]
    fn renames_swap_the_old_and_new_names() {
        let name = json!({"type": "string"});
        let list = tools(json!([
            {"name": "rename_sheet", "inputSchema": {"type": "object",
                "properties": {"path": name, "sheet": name, "new_name": name},
                "required": ["path", "sheet", "new_name"]}},
            // Two parameters could be the old name: nothing is swapped.
            {"name": "rename_tab", "inputSchema": {"type": "object",
                "properties": {"tab": name, "tab_name": name, "new_name": name},
                "required": ["tab", "tab_name", "new_name"]}}
        ]));
        let found = suggest(&list);
        assert_eq!(found.suggestions.len(), 1, "{found:#?}");
        assert_eq!(
            found.suggestions[0].proposal,
            Proposal::Compensable {
                compensator: "rename_sheet".into(),
                mapping: BTreeMap::from([
                    ("path".into(), input("path")),
                    ("sheet".into(), input("new_name")),
                    ("new_name".into(), input("sheet")),
                ]),
                reader: None,
            }
        );
    }

    #[test]
    fn new_inverse_verbs() {
        let session = json!({"type": "object",
            "properties": {"session_id": {"type": "string"}}, "required": ["session_id"]});
        let with_output = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}, "outputSchema": session});
        let taking = |name: &str| json!({"name": name, "inputSchema": session});
        let list = tools(json!([
            with_output("new_page"), taking("close_page"),
            with_output("start_codegen_session"), taking("end_codegen_session"),
            with_output("start_process"), taking("kill_process"),
            with_output("create-collection"), taking("drop-collection"),
            with_output("connect"), taking("disconnect"),
            {"name": "git_add", "inputSchema": {"type": "object",
                "properties": {"repo_path": {"type": "string"}, "files": {"type": "array"}},
                "required": ["repo_path", "files"]}},
            {"name": "git_reset", "inputSchema": {"type": "object",
                "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"]}}
        ]));
        let found = suggest(&list);
        let by_tool = by_tool(&found);
        for (forward, inverse) in [
            ("new_page", "close_page"),
            ("start_codegen_session", "end_codegen_session"),
            ("start_process", "kill_process"),
            ("create-collection", "drop-collection"),
            ("connect", "disconnect"),
            ("git_add", "git_reset"),
        ] {
            assert_eq!(by_tool[forward].compensator(), Some(inverse), "{found:#?}");
        }
        // Undone in one direction only; a reset undoes more than the add.
        assert_eq!(by_tool.len(), 6, "{found:#?}");
        assert_eq!(by_tool["git_add"].confidence, Confidence::Medium);
        assert!(by_tool["git_add"].reason.contains("more than the call"));
    }

    #[test]
    fn arrays_of_created_things_map_to_arrays_of_names() {
        let list = tools(json!([
            {"name": "create_entities", "inputSchema": {"type": "object",
                "properties": {"entities": {"type": "array", "items": {"type": "object"}}},
                "required": ["entities"]},
             "outputSchema": {"type": "object", "required": ["entities"], "properties": {
                "entities": {"type": "array", "items": {"type": "object",
                    "required": ["name", "entityType"],
                    "properties": {"name": {"type": "string"}, "entityType": {"type": "string"}}}}}}},
            {"name": "delete_entities", "inputSchema": {"type": "object",
                "properties": {"entityNames": {"type": "array", "items": {"type": "string"}}},
                "required": ["entityNames"]}},
            {"name": "add_observations", "inputSchema": {"type": "object",
                "properties": {"observations": {"type": "array"}}, "required": ["observations"]},
             "outputSchema": {"type": "object", "required": ["results"], "properties": {
                "results": {"type": "array", "items": {"type": "object",
                    "required": ["entityName", "addedObservations"],
                    "properties": {"entityName": {"type": "string"},
                        "addedObservations": {"type": "array", "items": {"type": "string"}}}}}}}},
            {"name": "delete_observations", "inputSchema": {"type": "object",
                "properties": {"deletions": {"type": "array", "items": {"type": "object",
                    "required": ["entityName", "observations"],
                    "properties": {"entityName": {"type": "string"},
                        "observations": {"type": "array", "items": {"type": "string"}}}}}},
                "required": ["deletions"]}}
        ]));
        let found = suggest(&list);
        let by_tool = by_tool(&found);
        let Proposal::Compensable { mapping, .. } = &by_tool["create_entities"].proposal else {
            panic!("{found:#?}");
        };
        assert_eq!(
            mapping["entityNames"],
            Binding::Map {
                field: "entities".into(),
                each: json!("$item#/name")
            }
        );
        let Proposal::Compensable { mapping, .. } = &by_tool["add_observations"].proposal else {
            panic!("{found:#?}");
        };
        assert_eq!(
            mapping["deletions"],
            Binding::Map {
                field: "results".into(),
                each: json!({"entityName": "$item#/entityName",
                    "observations": "$item#/addedObservations"})
            }
        );
        // The SEP-3172 carrier of the overlay holds map bindings, with the notes.
        let entry = by_tool["create_entities"].entry();
        let recovery = &entry["annotations"]["recovery"];
        assert_eq!(
            recovery["compensatingOperation"]["parameters"]["entityNames"],
            json!({"$map": "$response.body#/entities", "$each": "$item#/name"})
        );
        assert!(
            recovery["notes"]
                .as_str()
                .unwrap()
                .contains("each of 'entities'")
        );
    }

    #[test]
    fn text_results_are_read_only_with_a_documented_schema() {
        let taking_id = json!({"type": "object",
            "properties": {"noteId": {"type": "string"}}, "required": ["noteId"]});
        let list = tools(json!([
            {"name": "create_note", "inputSchema": {"type": "object"},
             "description": "Creates a note. Returns JSON text matching {\"type\": \"object\", \"required\": [\"noteId\"], \"properties\": {\"noteId\": {\"type\": \"string\"}}}."},
            {"name": "delete_note", "inputSchema": taking_id},
            {"name": "create_memo", "inputSchema": {"type": "object"},
             "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}},
                "required": ["result"]},
             "description": "Result schema: {\"type\": \"object\", \"required\": [\"noteId\"], \"properties\": {\"noteId\": {\"type\": \"string\"}}}"},
            {"name": "delete_memo", "inputSchema": taking_id},
            // Its description shows an example value, not a schema: nothing is guessed.
            {"name": "create_page", "inputSchema": {"type": "object"},
             "description": "Returns {\"noteId\": \"n-1\"}."},
            {"name": "delete_page", "inputSchema": taking_id}
        ]));
        let found = suggest(&list);
        let by_tool = by_tool(&found);
        let reader = |tool: &str| match &by_tool[tool].proposal {
            Proposal::Compensable { reader, .. } => reader.clone().map(|r| r.from),
            _ => None,
        };
        assert_eq!(reader("create_note"), Some("text"));
        assert_eq!(reader("create_memo"), Some("fastmcp-result"));
        assert!(!by_tool.contains_key("create_page"), "{found:#?}");
        let entry = by_tool["create_note"].entry();
        assert_eq!(entry["result"]["schema"]["required"], json!(["noteId"]));
        assert_eq!(
            entry["annotations"]["recovery"]["compensatingOperation"]["parameters"]["noteId"],
            "$response.body#/noteId"
        );
    }

    #[test]
    fn writes_are_undone_from_a_before_image() {
        let place = json!({"type": "string"});
        let list = tools(json!([
            {"name": "read_file", "annotations": {"readOnlyHint": true},
             "inputSchema": {"type": "object", "properties": {"path": place},
                "required": ["path"]}},
            {"name": "write_file", "inputSchema": {"type": "object",
                "properties": {"path": place, "content": {"type": "string"}},
                "required": ["path", "content"]}},
            {"name": "edit_file", "inputSchema": {"type": "object",
                "properties": {"path": place, "edits": {"type": "array"}},
                "required": ["path", "edits"]}},
            // A record's value is no text the write takes back.
            {"name": "read_record", "annotations": {"readOnlyHint": true},
             "inputSchema": {"type": "object", "properties": {"key": place},
                "required": ["key"]}},
            {"name": "write_record", "inputSchema": {"type": "object",
                "properties": {"key": place, "value": {"type": "object"}},
                "required": ["key", "value"]}},
            // A read that its server does not annotate read-only is never run by a proxy.
            {"name": "read_note", "inputSchema": {"type": "object", "properties": {"id": place},
                "required": ["id"]}},
            {"name": "write_note", "inputSchema": {"type": "object",
                "properties": {"id": place, "text": {"type": "string"}},
                "required": ["id", "text"]}}
        ]));
        let found = suggest(&list);
        let by_tool = by_tool(&found);
        assert!(!by_tool.contains_key("write_note"), "{found:#?}");
        let write = by_tool["write_file"];
        assert_eq!(
            write.proposal,
            Proposal::Before {
                read: "read_file".into(),
                arguments: vec!["path".into()],
                write: "write_file".into(),
                content: "content".into(),
            }
        );
        assert_eq!(write.confidence, Confidence::Medium);
        assert_eq!(by_tool["edit_file"].compensator(), Some("write_file"));
        assert!(!by_tool.contains_key("write_record"), "{found:#?}");
        assert!(!by_tool.contains_key("read_file"));
        assert_eq!(
            write.entry(),
            json!({"before": {"read": "read_file", "arguments": {"path": "$request.body#/path"},
                "found": {"operationId": "write_file",
                    "parameters": {"path": "$request.body#/path", "content": "$before.text"}}}})
        );
    }

    fn recorded(session: &str, name: &str, arguments: Value, structured: Value) -> Recorded {
        Recorded {
            session: session.to_owned(),
            name: name.to_owned(),
            arguments,
            result: Some(json!({"content": [], "structuredContent": structured})),
        }
    }

    #[test]
    fn a_journal_confirms_teaches_and_contradicts() {
        let list = tools(json!([
            {"name": "reserve_stock", "inputSchema": {"type": "object",
                "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
             "outputSchema": {"type": "object", "required": ["reservationId"],
                "properties": {"reservationId": {"type": "string"}}}},
            {"name": "release_stock", "inputSchema": {"type": "object",
                "properties": {"reservationId": {"type": "string"}},
                "required": ["reservationId"]}},
            {"name": "start_job", "inputSchema": {"type": "object",
                "properties": {"spec": {"type": "string"}}, "required": ["spec"]}},
            {"name": "stop_job", "inputSchema": {"type": "object",
                "properties": {"handle": {"type": "string"}}, "required": ["handle"]}}
        ]));
        let mut calls = Vec::new();
        for session in ["a", "b", "c"] {
            let id = format!("r-{session}");
            calls.push(recorded(
                session,
                "reserve_stock",
                json!({"sku": "w"}),
                json!({"reservationId": id}),
            ));
            calls.push(recorded(
                session,
                "release_stock",
                json!({"reservationId": id}),
                json!({}),
            ));
            calls.push(recorded(
                session,
                "start_job",
                json!({"spec": "x"}),
                json!({"jobId": format!("j-{session}")}),
            ));
            calls.push(recorded(
                session,
                "stop_job",
                json!({"handle": format!("j-{session}")}),
                json!({}),
            ));
        }
        // A session without the pair counts for nothing.
        calls.push(recorded(
            "d",
            "start_job",
            json!({"spec": "x"}),
            json!({"jobId": "j"}),
        ));
        let without = suggest(&list);
        assert!(!by_tool(&without).contains_key("start_job"));
        let found = suggest_with(&list, &calls);
        let by_tool_found = by_tool(&found);
        assert!(
            by_tool_found["reserve_stock"]
                .reason
                .contains("seen in 3 of 3 session(s)"),
            "{found:#?}"
        );
        let job = by_tool_found["start_job"];
        assert_eq!(
            job.proposal,
            Proposal::Compensable {
                compensator: "stop_job".into(),
                mapping: BTreeMap::from([("handle".into(), output("jobId"))]),
                reader: None,
            }
        );
        assert!(job.reason.contains("seen in 3 of 3 session(s)"), "{job:?}");
        assert_eq!(job.confidence, Confidence::Medium);
        // One call releasing another reservation than the one just made: not drafted.
        calls.push(recorded(
            "e",
            "reserve_stock",
            json!({"sku": "w"}),
            json!({"reservationId": "r-e"}),
        ));
        calls.push(recorded(
            "e",
            "release_stock",
            json!({"reservationId": "r-a"}),
            json!({}),
        ));
        calls.push(recorded(
            "e",
            "start_job",
            json!({"spec": "x"}),
            json!({"jobId": "j-e"}),
        ));
        calls.push(recorded(
            "e",
            "stop_job",
            json!({"handle": "j-a"}),
            json!({}),
        ));
        let contradicted = suggest_with(&list, &calls);
        assert!(contradicted.suggestions.is_empty(), "{contradicted:#?}");
        assert!(
            contradicted.skipped[0].reason.contains("the journal shows"),
            "{contradicted:#?}"
        );
    }
}
