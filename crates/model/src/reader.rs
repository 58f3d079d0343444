//! Results read from text: an overlay may declare that a tool's result holds its JSON value in
//! its text content, or in a FastMCP `{"result": "<JSON string>"}`, or values a pattern finds in
//! that text, with the JSON Schema of the value read (`spec/recovery-metadata.md` §12.3). Only a
//! declared reader ever reads text.

use serde_json::{Map, Value};

mod names;

/// The texts of a `CallToolResult`'s `text` content items, in order.
pub fn text_items(result: &Map<String, Value>) -> Vec<&str> {
    result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|item| item.get("text").and_then(Value::as_str))
        .collect()
}

/// Where a declared reader finds the JSON text of a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultSource {
    /// The text of the result's only `text` item of `content`.
    Text,
    /// The string `structuredContent.result` (FastMCP wraps a returned string this way).
    FastMcpResult,
}

impl ResultSource {
    /// The names an overlay writes in `from`.
    pub const NAMES: [&'static str; 2] = ["text", "fastmcp-result"];

    /// The source an overlay's `from` names.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "text" => Some(Self::Text),
            "fastmcp-result" => Some(Self::FastMcpResult),
            _ => None,
        }
    }

    /// Its name in an overlay.
    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::FastMcpResult => "fastmcp-result",
        }
    }
}

/// A declared reader: where the text is, how it is read, and the schema of the value read.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultReader {
    /// Where the text is.
    pub from: ResultSource,
    /// When declared, the text is matched with it instead of parsed as JSON.
    pub pattern: Option<TextPattern>,
    /// With a pattern: true (`"matches": "all"`) when the value read is an array with an object
    /// for every match, false (`"first"`, the default) when it is the object of the first.
    pub all_matches: bool,
    /// The JSON Schema the value read must match.
    pub schema: Value,
}

/// A reader's pattern: a regular expression with named groups, each of which becomes a member
/// of the value read.
#[derive(Debug, Clone)]
pub struct TextPattern {
    regex: regex::Regex,
    /// The pattern as the overlay wrote it (the one compiled numbers repeated group names).
    written: String,
}

impl PartialEq for TextPattern {
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written
    }
}

/// The most memory a compiled pattern may take.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// The most matches a pattern with `matches = "all"` reads from one text.
pub const MAX_MATCHES: usize = 10_000;

impl TextPattern {
    /// Compiles a pattern; it must name at least one group.
    pub fn parse(pattern: &str) -> Result<Self, String> {
        let compiled = Self::matcher(pattern)?;
        if compiled.regex.capture_names().flatten().next().is_none() {
            return Err(
                "a pattern names at least one group, `(?<name>…)`: each becomes a member of the value read"
                    .to_owned(),
            );
        }
        Ok(compiled)
    }

    /// Compiles a pattern that is only matched, never read: it need name no group.
    pub fn matcher(pattern: &str) -> Result<Self, String> {
        let regex = regex::RegexBuilder::new(&names::distinct(pattern)?)
            .size_limit(PATTERN_SIZE_LIMIT)
            .build()
            .map_err(|e| format!("not a regular expression: {e}"))?;
        Ok(Self {
            regex,
            written: pattern.to_owned(),
        })
    }

    /// Whether the pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.written
    }

    /// An object with the text of each named group that took part in the first match; with
    /// `all`, an array of such objects, one per match (empty when nothing matches; more than
    /// [`MAX_MATCHES`] is an error, so a server's text cannot make it arbitrarily large).
    fn read(&self, text: &str, all: bool) -> Result<Value, String> {
        let object = |captures: regex::Captures<'_>| {
            Value::Object(
                self.regex
                    .capture_names()
                    .flatten()
                    .filter_map(|name| {
                        let text = captures.name(name)?.as_str();
                        Some((names::written(name).to_owned(), text.into()))
                    })
                    .collect(),
            )
        };
        if all {
            let mut found = Vec::new();
            for captures in self.regex.captures_iter(text) {
                if found.len() == MAX_MATCHES {
                    return Err(format!(
                        "the pattern the overlay declares matches the text more than {MAX_MATCHES} times"
                    ));
                }
                found.push(object(captures));
            }
            return Ok(Value::Array(found));
        }
        let captures = self
            .regex
            .captures(text)
            .ok_or("the text does not match the pattern the overlay declares")?;
        Ok(object(captures))
    }
}

impl ResultReader {
    /// Reads the declaration an overlay made (`{"from": …, "schema": …}`); `Err` says what is
    /// wrong and at which member (a JSON Pointer relative to the declaration).
    pub fn from_declaration(value: &Value) -> Result<Self, (String, String)> {
        let Value::Object(members) = value else {
            return Err((
                String::new(),
                format!(
                    "'result' is an object with \"from\" and \"schema\", not {}",
                    crate::json_type::json_type_name(value)
                ),
            ));
        };
        if let Some(other) = members
            .keys()
            .find(|k| !["from", "pattern", "matches", "schema"].contains(&k.as_str()))
        {
            return Err((
                format!("/{}", crate::pointer::escape_token(other)),
                format!(
                    "unknown key '{other}' (a result reader has \"from\", \"schema\", and an optional \"pattern\" with its \"matches\")"
                ),
            ));
        }
        let pattern = match members.get("pattern") {
            None => None,
            Some(Value::String(pattern)) => {
                Some(TextPattern::parse(pattern).map_err(|why| ("/pattern".to_owned(), why))?)
            }
            Some(other) => {
                return Err((
                    "/pattern".to_owned(),
                    format!(
                        "'pattern' is a regular expression, not {}",
                        crate::json_type::json_type_name(other)
                    ),
                ));
            }
        };
        let all_matches = match members.get("matches") {
            None => false,
            Some(_) if pattern.is_none() => {
                return Err((
                    "/matches".to_owned(),
                    "'matches' says which matches of a \"pattern\" are read, and there is none"
                        .to_owned(),
                ));
            }
            Some(Value::String(which)) if which == "first" => false,
            Some(Value::String(which)) if which == "all" => true,
            Some(other) => {
                return Err((
                    "/matches".to_owned(),
                    format!("'matches' is \"first\" or \"all\", not {other}"),
                ));
            }
        };
        let from = match members.get("from") {
            Some(Value::String(name)) => ResultSource::from_name(name).ok_or_else(|| {
                (
                    "/from".to_owned(),
                    format!("unknown source '{name}' (expected \"text\" or \"fastmcp-result\")"),
                )
            })?,
            Some(other) => {
                return Err((
                    "/from".to_owned(),
                    format!(
                        "'from' is \"text\" or \"fastmcp-result\", not {}",
                        crate::json_type::json_type_name(other)
                    ),
                ));
            }
            None => {
                return Err((
                    String::new(),
                    "a result reader needs \"from\" (\"text\" or \"fastmcp-result\")".to_owned(),
                ));
            }
        };
        let schema = match members.get("schema") {
            Some(schema @ (Value::Object(_) | Value::Bool(_))) => schema.clone(),
            Some(other) => {
                return Err((
                    "/schema".to_owned(),
                    format!(
                        "'schema' is a JSON Schema (an object or a boolean), not {}",
                        crate::json_type::json_type_name(other)
                    ),
                ));
            }
            None => {
                return Err((
                    String::new(),
                    "a result reader needs \"schema\", the JSON Schema of the value it reads (a value is never read unchecked)".to_owned(),
                ));
            }
        };
        if let Err(why) = crate::input_schema::compile_input_schema(&schema) {
            return Err((
                "/schema".to_owned(),
                format!("the schema cannot be used: {why}"),
            ));
        }
        Ok(Self {
            from,
            pattern,
            all_matches,
            schema,
        })
    }

    /// The declaration's JSON form.
    pub fn to_value(&self) -> Value {
        let mut members = Map::new();
        members.insert(
            "from".to_owned(),
            Value::String(self.from.name().to_owned()),
        );
        if let Some(pattern) = &self.pattern {
            members.insert(
                "pattern".to_owned(),
                Value::String(pattern.as_str().to_owned()),
            );
            if self.all_matches {
                members.insert("matches".to_owned(), Value::from("all"));
            }
        }
        members.insert("schema".to_owned(), self.schema.clone());
        Value::Object(members)
    }

    /// The value read from the result's text (the JSON it holds, or what the pattern found), or
    /// why there is none. The value is not yet checked against [`ResultReader::schema`]; the
    /// caller validates it.
    pub fn read(&self, result: &Map<String, Value>) -> Result<Value, String> {
        let text = match self.from {
            ResultSource::Text => match text_items(result).as_slice() {
                [one] => *one,
                [] => return Err("the result has no text content to read".to_owned()),
                more => {
                    return Err(format!(
                        "the result has {} text items; the reader reads exactly one",
                        more.len()
                    ));
                }
            },
            ResultSource::FastMcpResult => {
                match result
                    .get("structuredContent")
                    .and_then(|content| content.get("result"))
                {
                    Some(Value::String(text)) => text,
                    Some(other) => {
                        return Err(format!(
                            "structuredContent.result is {}, not a string of JSON",
                            crate::json_type::json_type_name(other)
                        ));
                    }
                    None => {
                        return Err("the result has no structuredContent.result to read".to_owned());
                    }
                }
            }
        };
        if let Some(pattern) = &self.pattern {
            return pattern.read(text, self.all_matches);
        }
        let what = match self.from {
            ResultSource::Text => "text content",
            ResultSource::FastMcpResult => "structuredContent.result string",
        };
        match crate::json::from_str_noting_repeats(text) {
            Ok((_, true)) => Err(format!(
                "the {what} writes a member name twice in one object: which value it means is not known"
            )),
            Ok((value, false)) => Ok(value),
            Err(e) => Err(format!(
                "the {what} is not JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            )),
        }
    }
}

impl crate::tool::Tool {
    /// The result reader an overlay declared for this tool, if any (and well formed: the overlay
    /// was checked when it was read).
    pub fn result_reader(&self) -> Option<ResultReader> {
        ResultReader::from_declaration(self.overlay_meta()?.get("result")?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn reads_only_what_is_declared() {
        let text = ResultReader::from_declaration(&json!({"from": "text", "schema": {}})).unwrap();
        let fastmcp =
            ResultReader::from_declaration(&json!({"from": "fastmcp-result", "schema": true}))
                .unwrap();
        let r = result(json!({"content": [{"type": "text", "text": "{\"id\": 1e2}"}]}));
        assert_eq!(text.read(&r).unwrap().to_string(), "{\"id\":1e2}");
        assert!(
            fastmcp
                .read(&r)
                .unwrap_err()
                .contains("no structuredContent.result")
        );
        let r = result(json!({"structuredContent": {"result": "[1, 2]"}}));
        assert_eq!(fastmcp.read(&r).unwrap(), json!([1, 2]));
        assert!(text.read(&r).unwrap_err().contains("no text content"));
        let two = result(
            json!({"content": [{"type": "text", "text": "1"}, {"type": "text", "text": "2"}]}),
        );
        assert!(text.read(&two).unwrap_err().contains("2 text items"));
        let prose = result(json!({"content": [{"type": "text", "text": "Created issue PROJ-1"}]}));
        assert!(text.read(&prose).unwrap_err().contains("not JSON (line 1"));
        // A name written twice, at any depth and however it is spelled, is not guessed at.
        for twice in [
            r#"[{"name": "a", "name": "evil"}]"#,
            r#"{"e": {"id": 1, "i\u0064": 2}}"#,
        ] {
            let r = result(json!({"content": [{"type": "text", "text": twice}]}));
            assert!(
                text.read(&r).unwrap_err().contains("member name twice"),
                "{twice}"
            );
        }
    }

    #[test]
    fn patterns_read_named_groups_of_the_first_match() {
        let declaration = json!({"from": "text", "pattern": "(?m)^On branch (?<branch>\\S+)(?: ahead (?<ahead>\\d+))?$", "schema": {}});
        let reader = ResultReader::from_declaration(&declaration).unwrap();
        assert_eq!(reader.to_value(), declaration);
        let r = result(
            json!({"content": [{"type": "text", "text": "Repository status:\nOn branch main\nOn branch other"}]}),
        );
        // A group that took no part in the match is left out; no number is guessed.
        assert_eq!(reader.read(&r).unwrap(), json!({"branch": "main"}));
        let r = result(json!({"content": [{"type": "text", "text": "On branch x ahead 2"}]}));
        assert_eq!(
            reader.read(&r).unwrap(),
            json!({"branch": "x", "ahead": "2"})
        );
        let r = result(json!({"content": [{"type": "text", "text": "HEAD detached"}]}));
        assert!(reader.read(&r).unwrap_err().contains("does not match"));
        let fastmcp = ResultReader::from_declaration(
            &json!({"from": "fastmcp-result", "pattern": "PID (?<pid>\\d+)", "schema": {}}),
        )
        .unwrap();
        let r = result(json!({"structuredContent": {"result": "Started with PID 4242"}}));
        assert_eq!(fastmcp.read(&r).unwrap(), json!({"pid": "4242"}));
    }

    #[test]
    fn all_matches_read_an_array() {
        let declaration = json!({"from": "text", "pattern": "(?m)^diff --git a/(?<path>.+?) b/",
            "matches": "all", "schema": {}});
        let reader = ResultReader::from_declaration(&declaration).unwrap();
        assert_eq!(reader.to_value(), declaration);
        let r = result(json!({"content": [{"type": "text",
            "text": "Staged changes:\ndiff --git a/a.txt b/a.txt\n+x\ndiff --git a/d/c.txt b/d/c.txt\n"}]}));
        assert_eq!(
            reader.read(&r).unwrap(),
            json!([{"path": "a.txt"}, {"path": "d/c.txt"}])
        );
        // Nothing matching is an empty array, not a failure.
        let r = result(json!({"content": [{"type": "text", "text": "Staged changes:\n"}]}));
        assert_eq!(reader.read(&r).unwrap(), json!([]));
        // "first" is the default, and is left out of the JSON form.
        let first = json!({"from": "text", "pattern": "(?<p>x)", "matches": "first", "schema": {}});
        let reader = ResultReader::from_declaration(&first).unwrap();
        assert!(!reader.all_matches);
        assert!(reader.to_value().get("matches").is_none());
        // A text with more matches than the cap is refused, not read into memory.
        let lines = json!({"from": "text", "pattern": "(?m)^(?<l>.*)$", "matches": "all",
            "schema": {}});
        let reader = ResultReader::from_declaration(&lines).unwrap();
        let text =
            |n: usize| result(json!({"content": [{"type": "text", "text": "x\n".repeat(n)}]}));
        let read = reader.read(&text(MAX_MATCHES - 1)).unwrap();
        assert_eq!(read.as_array().unwrap().len(), MAX_MATCHES);
        let error = reader.read(&text(MAX_MATCHES)).unwrap_err();
        assert!(error.contains("more than 10000 times"), "{error}");
    }

    #[test]
    fn declarations_say_what_is_wrong_and_where() {
        let cases = [
            (json!("text"), ""),
            (json!({"from": "html", "schema": {}}), "/from"),
            (json!({"from": 1, "schema": {}}), "/from"),
            (json!({"schema": {}}), ""),
            (json!({"from": "text"}), ""),
            (json!({"from": "text", "schema": 3}), "/schema"),
            (
                json!({"from": "text", "schema": {"type": "nope"}}),
                "/schema",
            ),
            (json!({"from": "text", "schema": {}, "extra": 1}), "/extra"),
            (
                json!({"from": "text", "schema": {}, "pattern": 1}),
                "/pattern",
            ),
            (
                json!({"from": "text", "schema": {}, "matches": "all"}),
                "/matches",
            ),
            (
                json!({"from": "text", "schema": {}, "pattern": "(?<a>x)", "matches": "every"}),
                "/matches",
            ),
            (
                json!({"from": "text", "schema": {}, "pattern": "("}),
                "/pattern",
            ),
            (
                json!({"from": "text", "schema": {}, "pattern": "On (\\S+)"}),
                "/pattern",
            ),
            (
                json!({"from": "text", "schema": {}, "pattern": "(?<a>x{1000}){1000}"}),
                "/pattern",
            ),
        ];
        for (declaration, at) in cases {
            let (pointer, message) = ResultReader::from_declaration(&declaration).unwrap_err();
            assert_eq!(pointer, at, "{declaration}: {message}");
        }
    }
}
