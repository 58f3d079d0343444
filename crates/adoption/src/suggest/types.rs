//! What a draft is made of: a suggestion per tool (a compensating call, a before-image, or
//! irreversible), with its confidence and reason, and the candidate pairs left out.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

/// How sure a suggestion is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// The names differ only by a verb and its inverse from the lexicon, or by `un`; a parameter
    /// is bound by a documented equivalence rather than its name; or a before-image.
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
    /// A field of the forward call's result (`structuredContent`, or the value a drafted text
    /// reader reads): a top-level member, or one nested below it when learned from a journal.
    Output {
        /// The field: its name, or a JSON Pointer tail of simple names (`issue/key`).
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
    /// The binding of a top-level field of the result (`output`) or of the arguments.
    pub(crate) fn of(field: &str, output: bool) -> Self {
        let field = field.to_owned();
        if output {
            Self::Output { field }
        } else {
            Self::Input { field }
        }
    }

    /// The JSONPath of the mcp-compensate carrier, when the subset can write it.
    pub(crate) fn path(&self) -> Option<String> {
        match self {
            Self::Output { field } => Some(format!(
                "$.output.structuredContent.{}",
                field.replace('/', ".")
            )),
            Self::Input { field } => Some(format!("$.input.{field}")),
            Self::Map { .. } => None,
        }
    }

    /// The SEP-3172 binding (with the overlay's map form).
    pub(crate) fn expression(&self) -> Value {
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
        /// Its parameters, which the write takes too, → the forward arguments giving them.
        arguments: BTreeMap<String, String>,
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

/// The outcome of `suggest_with`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Suggestions {
    /// What the overlay declares.
    pub suggestions: Vec<Suggestion>,
    /// Candidate pairs left out.
    pub skipped: Vec<Skipped>,
}
