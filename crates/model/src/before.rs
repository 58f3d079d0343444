//! Undo from a before-image: for a tool with no inverse, an overlay declares a read to run
//! before each call, whose result is journaled, and the compensation to make depending on what
//! the read found (`spec/recovery-metadata.md` §12.4).

use serde_json::{Map, Value};

use crate::binding::Binding;
use crate::expression::BodySide;
use crate::json_type::json_type_name;
use crate::pointer::escape_token;
use crate::reader::TextPattern;

/// The member of an overlay's tool entry declaring a before-image.
pub const BEFORE_SECTION: &str = "before";

/// A before-image declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct BeforeImage {
    /// The tool to call before the call (a read of the same server).
    pub read: String,
    /// Its arguments: bindings reading only the call's arguments (`$request.body…`), templates
    /// and map bindings of them, and constants.
    pub arguments: Map<String, Value>,
    /// What to do when the read succeeded (the target existed).
    pub found: Option<Outcome>,
    /// What to do when the read returned `isError: true` (the target did not exist).
    pub missing: Option<Outcome>,
    /// True when the undo is made only while the read still returns what it returned right
    /// after the call (the after-image): a later change is never overwritten.
    pub unchanged: bool,
    /// With it, a read that returned `isError: true` found the target absent only when a text
    /// item of its result matches this pattern (`ENOENT`); any other failure leaves what the
    /// call changed unknown.
    pub absent: Option<TextPattern>,
}

/// The member of a before-image asking for the after-image check.
const UNCHANGED_MEMBER: &str = "unchanged";

/// The member of a before-image telling absence from other failures of the read.
const ABSENT_MEMBER: &str = "absent";

/// What a before-image declares for one outcome of its read.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The compensation to make.
    Undo(Undo),
    /// `"nothing"`: with this outcome the call changes nothing (a directory created where one
    /// exists), so there is nothing to undo.
    Nothing,
}

/// The spelling of [`Outcome::Nothing`].
pub const NOTHING: &str = "nothing";

impl Outcome {
    fn parse(value: &Value, at: &str) -> Result<Self, Fault> {
        match value {
            Value::String(text) if text == NOTHING => Ok(Self::Nothing),
            Value::String(_) => Err(fault(
                at,
                format!("an outcome is an undo (an object) or \"{NOTHING}\""),
            )),
            _ => Undo::parse(value, at, false).map(Self::Undo),
        }
    }

    /// The compensation, unless the outcome changes nothing.
    pub fn undo(&self) -> Option<&Undo> {
        match self {
            Self::Undo(undo) => Some(undo),
            Self::Nothing => None,
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Self::Undo(undo) => undo.to_value(),
            Self::Nothing => Value::String(NOTHING.to_owned()),
        }
    }
}

/// One outcome-conditioned compensation: a call, and the further calls (`then`) made after it,
/// in order, when one call cannot undo the tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Undo {
    /// The compensating tool.
    pub operation_id: String,
    /// Its parameters: overlay bindings, `$before` included.
    pub parameters: Map<String, Value>,
    /// The calls made after this one, in order; each has no `then` of its own.
    pub then: Vec<Undo>,
}

/// The member of an undo listing the calls made after its first.
pub const THEN_MEMBER: &str = "then";

type Fault = (String, String);

fn fault(at: &str, message: impl Into<String>) -> Fault {
    (at.to_owned(), message.into())
}

fn object<'a>(value: &'a Value, at: &str, what: &str) -> Result<&'a Map<String, Value>, Fault> {
    value.as_object().ok_or_else(|| {
        fault(
            at,
            format!("{what} is an object, not {}", json_type_name(value)),
        )
    })
}

fn only(members: &Map<String, Value>, at: &str, allowed: &[&str]) -> Result<(), Fault> {
    match members.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(other) => Err(fault(
            &format!("{at}/{}", escape_token(other)),
            format!("unknown key '{other}' (expected {})", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}

fn name(members: &Map<String, Value>, key: &str, at: &str) -> Result<String, Fault> {
    match members.get(key) {
        Some(Value::String(name)) => Ok(name.clone()),
        Some(other) => Err(fault(
            &format!("{at}/{key}"),
            format!("'{key}' is a tool name, not {}", json_type_name(other)),
        )),
        None => Err(fault(at, format!("'{key}' (a tool name) is required"))),
    }
}

fn bindings(
    members: &Map<String, Value>,
    key: &str,
    at: &str,
    parse: fn(&Value) -> Result<Binding, crate::BindingError>,
    before_call: bool,
) -> Result<Map<String, Value>, Fault> {
    let Some(value) = members.get(key) else {
        return Ok(Map::new());
    };
    let map = object(value, &format!("{at}/{key}"), &format!("'{key}'"))?;
    for (parameter, raw) in map {
        let here = format!("{at}/{key}/{}", escape_token(parameter));
        let binding = parse(raw).map_err(|e| fault(&here, e.to_string()))?;
        if before_call
            && (binding.reads_before()
                || binding
                    .expressions()
                    .iter()
                    .any(|e| e.body_target().map(|(side, _)| side) != Some(BodySide::Request)))
        {
            return Err(fault(
                &here,
                "the read runs before the call, so its arguments read only `$request.body`",
            ));
        }
    }
    Ok(map.clone())
}

impl Undo {
    /// Reads an undo at `at`; `part` is true for an element of another undo's `then`, which has
    /// no `then` of its own.
    fn parse(value: &Value, at: &str, part: bool) -> Result<Self, Fault> {
        let members = object(value, at, "an undo")?;
        let allowed: &[&str] = if part {
            &["operationId", "parameters"]
        } else {
            &["operationId", "parameters", THEN_MEMBER]
        };
        only(members, at, allowed)?;
        let operation_id = name(members, "operationId", at)?;
        let parameters = bindings(members, "parameters", at, Binding::parse_undo, false)?;
        let then = match members.get(THEN_MEMBER) {
            None => Vec::new(),
            Some(Value::Array(parts)) => parts
                .iter()
                .enumerate()
                .map(|(i, part)| Self::parse(part, &format!("{at}/{THEN_MEMBER}/{i}"), true))
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(fault(
                    &format!("{at}/{THEN_MEMBER}"),
                    format!(
                        "'{THEN_MEMBER}' is an array of further calls, not {}",
                        json_type_name(other)
                    ),
                ));
            }
        };
        Ok(Self {
            operation_id,
            parameters,
            then,
        })
    }

    /// Every call of the undo, in the order they are made, with each one's JSON Pointer
    /// relative to the undo (empty for the first, `/then/0` for the second, …).
    pub fn parts(&self) -> impl Iterator<Item = (String, &Undo)> {
        std::iter::once((String::new(), self)).chain(
            self.then
                .iter()
                .enumerate()
                .map(|(i, part)| (format!("/{THEN_MEMBER}/{i}"), part)),
        )
    }

    fn to_value(&self) -> Value {
        let mut members = Map::new();
        members.insert(
            "operationId".to_owned(),
            Value::String(self.operation_id.clone()),
        );
        members.insert(
            "parameters".to_owned(),
            Value::Object(self.parameters.clone()),
        );
        if !self.then.is_empty() {
            members.insert(
                THEN_MEMBER.to_owned(),
                Value::Array(self.then.iter().map(Self::to_value).collect()),
            );
        }
        Value::Object(members)
    }
}

impl BeforeImage {
    /// Reads an overlay's `before` entry; `Err` holds the JSON Pointer (relative to the entry)
    /// and what is wrong there.
    pub fn from_declaration(value: &Value) -> Result<Self, Fault> {
        let members = object(value, "", "'before'")?;
        only(
            members,
            "",
            &[
                "read",
                "arguments",
                "found",
                "missing",
                UNCHANGED_MEMBER,
                ABSENT_MEMBER,
            ],
        )?;
        let read = name(members, "read", "")?;
        let unchanged = match members.get(UNCHANGED_MEMBER) {
            None => false,
            Some(Value::Bool(flag)) => *flag,
            Some(other) => {
                return Err(fault(
                    &format!("/{UNCHANGED_MEMBER}"),
                    format!(
                        "'{UNCHANGED_MEMBER}' is a boolean, not {}",
                        json_type_name(other)
                    ),
                ));
            }
        };
        let absent = match members.get(ABSENT_MEMBER) {
            None => None,
            Some(Value::String(pattern)) => Some(
                TextPattern::matcher(pattern)
                    .map_err(|why| fault(&format!("/{ABSENT_MEMBER}"), why))?,
            ),
            Some(other) => {
                return Err(fault(
                    &format!("/{ABSENT_MEMBER}"),
                    format!(
                        "'{ABSENT_MEMBER}' is a regular expression, not {}",
                        json_type_name(other)
                    ),
                ));
            }
        };
        let arguments = bindings(members, "arguments", "", Binding::parse_undo, true)?;
        let found = members
            .get("found")
            .map(|v| Outcome::parse(v, "/found"))
            .transpose()?;
        let missing = members
            .get("missing")
            .map(|v| Outcome::parse(v, "/missing"))
            .transpose()?;
        if found.is_none() && missing.is_none() {
            return Err(fault(
                "",
                "a before-image declares an undo for \"found\", \"missing\" or both",
            ));
        }
        Ok(Self {
            read,
            arguments,
            found,
            missing,
            unchanged,
            absent,
        })
    }

    /// Whether a read result with `isError: true` says the target was absent: always, unless
    /// the declaration has `absent`, which one of the result's text items must then match.
    pub fn says_absent(&self, result: &Map<String, Value>) -> bool {
        let Some(pattern) = &self.absent else {
            return true;
        };
        crate::reader::text_items(result)
            .into_iter()
            .any(|text| pattern.is_match(text))
    }

    /// The declaration's JSON form.
    pub fn to_value(&self) -> Value {
        let mut members = Map::new();
        members.insert("read".to_owned(), Value::String(self.read.clone()));
        members.insert(
            "arguments".to_owned(),
            Value::Object(self.arguments.clone()),
        );
        if let Some(found) = &self.found {
            members.insert("found".to_owned(), found.to_value());
        }
        if let Some(missing) = &self.missing {
            members.insert("missing".to_owned(), missing.to_value());
        }
        if self.unchanged {
            members.insert(UNCHANGED_MEMBER.to_owned(), Value::Bool(true));
        }
        if let Some(pattern) = &self.absent {
            members.insert(ABSENT_MEMBER.to_owned(), pattern.as_str().into());
        }
        Value::Object(members)
    }
}

impl crate::tool::Tool {
    /// The before-image an overlay declared for this tool, if any.
    pub fn before_image(&self) -> Option<BeforeImage> {
        BeforeImage::from_declaration(self.overlay_meta()?.get(BEFORE_SECTION)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declarations_parse_and_say_where_they_are_wrong() {
        let good = json!({"read": "read_file", "arguments": {"path": "$request.body#/path"},
            "found": {"operationId": "write_file",
                      "parameters": {"path": "$request.body#/path", "content": "$before.text"}},
            "missing": {"operationId": "move_file",
                        "parameters": {"source": "$request.body#/path",
                                       "destination": "{$request.body#/path}.undone"}}});
        let image = BeforeImage::from_declaration(&good).unwrap();
        assert_eq!(image.read, "read_file");
        assert!(!image.unchanged);
        assert_eq!(image.to_value(), good);
        // The after-image check is asked for with a boolean.
        let mut checked = good.clone();
        checked["unchanged"] = json!(true);
        let image = BeforeImage::from_declaration(&checked).unwrap();
        assert!(image.unchanged);
        assert_eq!(image.to_value(), checked);
        checked["unchanged"] = json!(false);
        assert!(!BeforeImage::from_declaration(&checked).unwrap().unchanged);
        // Absence told from other failures of the read by the text it answered.
        let mut told = good.clone();
        told["absent"] = json!("^ENOENT: ");
        let image = BeforeImage::from_declaration(&told).unwrap();
        assert_eq!(image.to_value(), told);
        let failed = |text: &str| {
            json!({"content": [{"type": "text", "text": text}], "isError": true})
                .as_object()
                .unwrap()
                .clone()
        };
        assert!(image.says_absent(&failed("ENOENT: no such file, open 'x'")));
        assert!(!image.says_absent(&failed("EACCES: permission denied, open 'ENOENT: '")));
        assert!(!image.says_absent(&json!({"isError": true}).as_object().unwrap().clone()));
        // Without it, every failed read counts as absence.
        let plain = BeforeImage::from_declaration(&good).unwrap();
        assert!(plain.says_absent(&failed("EACCES: permission denied")));
        for (bad, at) in [(json!(true), "/absent"), (json!("(unclosed"), "/absent")] {
            told["absent"] = bad;
            assert_eq!(BeforeImage::from_declaration(&told).unwrap_err().0, at);
        }
        // The read's arguments may map over the call's arrays; the undo may map over the image.
        let graph = json!({"read": "open_nodes",
            "arguments": {"names": {"$map": "$request.body#/deletions", "$each": "$item#/entityName"}},
            "found": {"operationId": "add_observations", "parameters": {"observations":
                {"$map": "$before.body#/entities", "$each": {"entityName": "$item#/name"}}}}});
        assert!(BeforeImage::from_declaration(&graph).is_ok());
        // An undo may make further calls after its first, in order.
        let several = json!({"read": "read_graph", "arguments": {},
            "found": {"operationId": "create_entities", "parameters": {"entities": "$before.body#/entities"},
                      "then": [{"operationId": "create_relations",
                                "parameters": {"relations": "$before.body#/relations"}}]}});
        let image = BeforeImage::from_declaration(&several).unwrap();
        assert_eq!(image.to_value(), several);
        let parts: Vec<(String, &str)> = image
            .found
            .as_ref()
            .and_then(Outcome::undo)
            .unwrap()
            .parts()
            .map(|(at, undo)| (at, undo.operation_id.as_str()))
            .collect();
        assert_eq!(
            parts,
            [
                (String::new(), "create_entities"),
                ("/then/0".to_owned(), "create_relations")
            ]
        );
        // An outcome may say that the call then changes nothing.
        let nothing = json!({"read": "stat", "arguments": {}, "found": "nothing",
            "missing": {"operationId": "move", "parameters": {}}});
        let image = BeforeImage::from_declaration(&nothing).unwrap();
        assert_eq!(image.found, Some(Outcome::Nothing));
        assert_eq!(image.to_value(), nothing);
        let cases = [
            (json!({"read": "r", "found": "none"}), "/found"),
            (json!([]), ""),
            (json!({"read": "r"}), ""),
            (json!({"found": {"operationId": "w"}}), ""),
            (json!({"read": 1, "found": {"operationId": "w"}}), "/read"),
            (
                json!({"read": "r", "found": {"operationId": "w"}, "when": 1}),
                "/when",
            ),
            (
                json!({"read": "r", "found": {"operationId": "w"}, "unchanged": "yes"}),
                "/unchanged",
            ),
            (
                json!({"read": "r", "arguments": {"p": "$response.body#/x"}, "found": {"operationId": "w"}}),
                "/arguments/p",
            ),
            (
                json!({"read": "r", "found": {"operationId": "w", "parameters": {"c": "$before.txt"}}}),
                "/found/parameters/c",
            ),
            (
                json!({"read": "r", "arguments": {"p": "$before.text"}, "found": {"operationId": "w"}}),
                "/arguments/p",
            ),
            (
                json!({"read": "r", "arguments": {"p": {"$map": "$before.body", "$each": "$item"}}, "found": {"operationId": "w"}}),
                "/arguments/p",
            ),
            (
                json!({"read": "r", "arguments": {"p": {"$map": "$response.body", "$each": "$item"}}, "found": {"operationId": "w"}}),
                "/arguments/p",
            ),
            (
                json!({"read": "r", "found": {"operationId": "w", "parameters": {"c": {"$map": "$before.text", "$each": "$item"}}}}),
                "/found/parameters/c",
            ),
            (
                json!({"read": "r", "missing": {"parameters": {}}}),
                "/missing",
            ),
            (
                json!({"read": "r", "found": {"operationId": "w", "then": {"operationId": "x"}}}),
                "/found/then",
            ),
            (
                json!({"read": "r", "found": {"operationId": "w", "then": [{"operationId": "x"}, {"parameters": {}}]}}),
                "/found/then/1",
            ),
            (
                json!({"read": "r", "missing": {"operationId": "w", "then": [{"operationId": "x", "parameters": {"c": "$before.txt"}}]}}),
                "/missing/then/0/parameters/c",
            ),
            (
                json!({"read": "r", "found": {"operationId": "w", "then": [{"operationId": "x", "then": []}]}}),
                "/found/then/0/then",
            ),
            (
                json!({"read": "r", "found": {"operationId": "w", "then": ["x"]}}),
                "/found/then/0",
            ),
        ];
        for (declaration, at) in cases {
            let (pointer, message) = BeforeImage::from_declaration(&declaration).unwrap_err();
            assert_eq!(pointer, at, "{declaration}: {message}");
        }
    }
}
