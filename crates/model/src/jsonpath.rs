//! The JSONPath subset of the `dev.chronomcp/compensate` carrier.
//!
//! Accepted: `$.input.<name>(.<name>)*` and `$.output.structuredContent(.<name>)*`, where each
//! `.name` may also be written in bracket notation (`['a b']`, `["a b"]`, RFC 9535 string
//! literals). Indices, wildcards, filters, slices and descendant segments are rejected. As in
//! RFC 9535, blank space (space, tab, line feed, carriage return) may precede each segment and
//! pad the inside of brackets, but may not follow the last segment or the `.` of a segment.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use crate::expression::{BodySide, RuntimeExpression};
use crate::pointer::JsonPointer;

/// A parsed path of the subset: which side of the call it reads, and the property names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JsonPath {
    /// `input` reads the call's arguments, `output` its `structuredContent`.
    pub side: BodySide,
    /// Property names below `$.input` or `$.output.structuredContent`.
    pub names: Vec<String>,
}

/// A path outside the subset, with the byte offset of the fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at byte {offset}")]
pub struct JsonPathError {
    /// Byte offset into the parsed text.
    pub offset: usize,
    /// What is wrong there.
    pub message: String,
}

fn fail<T>(offset: usize, message: impl Into<String>) -> Result<T, JsonPathError> {
    Err(JsonPathError {
        offset,
        message: message.into(),
    })
}

fn is_name_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

fn is_name_char(c: char) -> bool {
    is_name_first(c) || c.is_ascii_digit()
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_blank(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
    }

    /// Skips the blank space before a segment and reports whether one follows; blank space at the
    /// end of the path is an error (RFC 9535 allows it only between segments).
    fn before_segment(&mut self) -> Result<bool, JsonPathError> {
        let start = self.pos;
        self.skip_blank();
        match self.peek() {
            Some(_) => Ok(true),
            None if self.pos > start => fail(start, "blank space may not end a path"),
            None => Ok(false),
        }
    }

    /// Parses one `.name` or `['name']` segment.
    fn segment(&mut self) -> Result<(usize, String), JsonPathError> {
        let start = self.pos;
        match self.bump() {
            Some('.') => {
                if self.rest().starts_with('.') {
                    return fail(start, "descendant segments ('..') are not allowed");
                }
                let name_start = self.pos;
                match self.peek() {
                    Some('*') => return fail(self.pos, "wildcards are not allowed"),
                    Some(c) if is_name_first(c) => {}
                    _ => return fail(self.pos, "expected a property name after '.'"),
                }
                while self.peek().is_some_and(is_name_char) {
                    self.bump();
                }
                Ok((start, self.text[name_start..self.pos].to_owned()))
            }
            Some('[') => {
                self.skip_blank();
                let name = match self.peek() {
                    Some(q @ ('\'' | '"')) => {
                        self.bump();
                        self.string_literal(q)?
                    }
                    Some('*') => return fail(self.pos, "wildcards are not allowed"),
                    Some('?') => return fail(self.pos, "filters are not allowed"),
                    Some(c) if c == '-' || c == ':' || c.is_ascii_digit() => {
                        return fail(self.pos, "array indices and slices are not allowed");
                    }
                    _ => return fail(self.pos, "expected a quoted property name after '['"),
                };
                self.skip_blank();
                match self.peek() {
                    Some(']') => {
                        self.bump();
                        Ok((start, name))
                    }
                    Some(',') => fail(self.pos, "unions of several names are not allowed"),
                    _ => fail(self.pos, "expected ']'"),
                }
            }
            _ => fail(start, "expected '.' or '['"),
        }
    }

    /// Parses the rest of an RFC 9535 string literal opened by `quote`.
    fn string_literal(&mut self, quote: char) -> Result<String, JsonPathError> {
        let mut out = String::new();
        loop {
            let at = self.pos;
            match self.bump() {
                None => return fail(at, "unterminated string literal"),
                Some(c) if c == quote => return Ok(out),
                Some('\\') => out.push(self.escape(quote)?),
                Some(c) if c < ' ' => return fail(at, "control characters must be escaped"),
                Some(c) => out.push(c),
            }
        }
    }

    fn escape(&mut self, quote: char) -> Result<char, JsonPathError> {
        let at = self.pos;
        Ok(match self.bump() {
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some(c @ ('/' | '\\')) => c,
            Some(c) if c == quote => c,
            Some('u') => {
                let high = self.hex4()?;
                if (0xD800..0xDC00).contains(&high) {
                    if !self.rest().starts_with("\\u") {
                        return fail(self.pos, "expected the low half of a surrogate pair");
                    }
                    self.pos += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return fail(self.pos - 4, "expected the low half of a surrogate pair");
                    }
                    let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
                } else {
                    match char::from_u32(high) {
                        Some(c) => c,
                        None => return fail(at, "a lone low surrogate is not a character"),
                    }
                }
            }
            _ => return fail(at, "unknown escape sequence"),
        })
    }

    fn hex4(&mut self) -> Result<u32, JsonPathError> {
        let digits = self.rest().get(..4).unwrap_or("");
        match u32::from_str_radix(digits, 16) {
            Ok(v) if digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.pos += 4;
                Ok(v)
            }
            _ => fail(self.pos, "expected four hexadecimal digits"),
        }
    }
}

impl JsonPath {
    /// Parses a path of the subset.
    pub fn parse(text: &str) -> Result<Self, JsonPathError> {
        let mut parser = Parser { text, pos: 0 };
        if parser.bump() != Some('$') {
            return fail(0, "expected '$'");
        }
        // Check the root segments as soon as they are read, so that `$.output.content[0]`
        // is reported for reading `content`, not for the index after it.
        let mut side = None;
        let mut names = Vec::new();
        while parser.before_segment()? {
            let (at, name) = parser.segment()?;
            match side {
                None if name == "input" => side = Some(BodySide::Request),
                None if name == "output" => {
                    if !parser.before_segment()? {
                        return fail(text.len(), "expected '.structuredContent' after '$.output'");
                    }
                    match parser.segment()? {
                        (_, n) if n == "structuredContent" => side = Some(BodySide::Response),
                        (at, _) => {
                            return fail(
                                at,
                                "only 'structuredContent' may be read from '$.output'",
                            );
                        }
                    }
                }
                None => return fail(at, "a path must start with '$.input' or '$.output'"),
                Some(_) => names.push(name),
            }
        }
        let Some(side) = side else {
            return fail(1, "expected '.input' or '.output' after '$'");
        };
        if side == BodySide::Request && names.is_empty() {
            return fail(text.len(), "expected a parameter name after '$.input'");
        }
        Ok(Self { side, names })
    }

    /// The runtime expression this path is equivalent to (`$.input.a` ≡ `$request.body#/a`).
    pub fn to_expression(&self) -> RuntimeExpression {
        RuntimeExpression::body(
            self.side,
            JsonPointer::from_tokens(self.names.iter().cloned()),
        )
    }

    /// The path equivalent to a runtime expression, when the subset can express it.
    pub fn from_expression(expression: &RuntimeExpression) -> Option<Self> {
        let (side, pointer) = expression.body_target()?;
        if side == BodySide::Request && pointer.is_root() {
            return None;
        }
        Some(Self {
            side,
            names: pointer.tokens().to_vec(),
        })
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.side {
            BodySide::Request => "$.input",
            BodySide::Response => "$.output.structuredContent",
        })?;
        for name in &self.names {
            let shorthand =
                name.chars().next().is_some_and(is_name_first) && name.chars().all(is_name_char);
            if shorthand {
                write!(f, ".{name}")?;
            } else {
                f.write_str("['")?;
                for c in name.chars() {
                    match c {
                        '\'' => f.write_str("\\'")?,
                        '\\' => f.write_str("\\\\")?,
                        c if c < ' ' => write!(f, "\\u{:04x}", c as u32)?,
                        c => write!(f, "{c}")?,
                    }
                }
                f.write_str("']")?;
            }
        }
        Ok(())
    }
}

/// The regular expression (ECMA-262 and Rust `regex` compatible, anchored) for the subset.
///
/// Limits: a bracketed root segment is recognized only when spelled without escapes
/// (`['input']`, not `['\u0069nput']`), and a `\u` escape's surrogate pairing is not checked.
pub fn jsonpath_pattern() -> String {
    let blank = r"[ \t\n\r]*";
    let string =
        |q: &str| format!(r#"{q}(?:[^{q}\\\x00-\x1F]|\\(?:[bfnrt/\\{q}]|u[0-9A-Fa-f]{{4}}))*{q}"#);
    let segment = format!(
        r"(?:\.[^\x00-\x40\x5B-\x5E\x60\x7B-\x7F][^\x00-\x2F\x3A-\x40\x5B-\x5E\x60\x7B-\x7F]*|\[{blank}(?:{}|{}){blank}\])",
        string("'"),
        string("\"")
    );
    let fixed = |name: &str| format!(r#"(?:\.{name}|\[{blank}(?:'{name}'|"{name}"){blank}\])"#);
    format!(
        r"^\$(?:{blank}{input}(?:{blank}{segment})+|{blank}{output}{blank}{structured}(?:{blank}{segment})*)$",
        input = fixed("input"),
        output = fixed("output"),
        structured = fixed("structuredContent"),
    )
}

impl JsonSchema for JsonPath {
    fn schema_name() -> Cow<'static, str> {
        "CompensateJsonPath".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A path into the original call: `$.input.<name>…` (its arguments) or `$.output.structuredContent…` (its structured result); property names only.",
            "type": "string",
            "pattern": jsonpath_pattern(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn accepted_paths_map_to_expressions() {
        let cases = [
            ("$.input.id", "$request.body#/id"),
            ("$.input.a.b", "$request.body#/a/b"),
            ("$.output.structuredContent", "$response.body#"),
            ("$.output.structuredContent.id", "$response.body#/id"),
            ("$['input']['a b']", "$request.body#/a b"),
            ("$.input[\"x/y\"]", "$request.body#/x~1y"),
            ("$.input[ 'k\\'s' ]", "$request.body#/k's"),
            ("$.input['\\u00e9\\ud83d\\ude00']", "$request.body#/é😀"),
            ("$.input.café", "$request.body#/café"),
            // RFC 9535 §2.3: blank space may precede every segment.
            ("$ .input .id", "$request.body#/id"),
            ("$.input\n\t['a']\r .b", "$request.body#/a/b"),
            ("$ .output\t.structuredContent .id", "$response.body#/id"),
        ];
        for (path, expression) in cases {
            let parsed = JsonPath::parse(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            assert_eq!(parsed.to_expression().to_string(), expression, "{path}");
        }
    }

    #[test]
    fn rejected_paths_say_why() {
        let cases = [
            ("$.output.content[0].text", 8, "only 'structuredContent'"),
            ("$.input.items[0]", 14, "array indices"),
            ("$.input.*", 8, "wildcards"),
            ("$..id", 1, "descendant"),
            ("$.input[?@.a]", 8, "filters"),
            ("$.input", 7, "parameter name"),
            ("$.output", 8, "structuredContent"),
            ("$.state.x", 1, "must start with"),
            ("input.id", 0, "expected '$'"),
            ("$.input.1a", 8, "property name"),
            ("$.input['a'", 11, "expected ']'"),
            ("$.input['a", 10, "unterminated"),
            ("$.input['a','b']", 11, "unions"),
            ("$", 1, "'.input'"),
            ("$.input.id ", 10, "blank space may not end"),
            ("$.input. id", 8, "property name"),
            ("$.output ", 8, "blank space may not end"),
        ];
        for (path, offset, needle) in cases {
            let error = JsonPath::parse(path).unwrap_err();
            assert_eq!(error.offset, offset, "{path}: {error}");
            assert!(error.message.contains(needle), "{path}: {error}");
        }
    }

    #[test]
    fn display_uses_brackets_only_when_needed() {
        let path = JsonPath {
            side: BodySide::Request,
            names: vec!["plain".into(), "a b".into(), "it's".into(), "1st".into()],
        };
        assert_eq!(path.to_string(), r"$.input.plain['a b']['it\'s']['1st']");
    }

    proptest! {
        #[test]
        fn display_round_trips(names in proptest::collection::vec(".{0,6}", 1..4), output in any::<bool>()) {
            let side = if output { BodySide::Response } else { BodySide::Request };
            let path = JsonPath { side, names };
            prop_assert_eq!(JsonPath::parse(&path.to_string()).unwrap(), path);
        }

        #[test]
        fn parse_never_panics(text in "\\$(\\.input|\\.output)?[.\\['\"a-z\\\\u0-9*?]{0,16}") {
            let _ = JsonPath::parse(&text);
        }
    }
}
