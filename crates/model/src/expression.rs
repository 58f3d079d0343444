//! OpenAPI runtime expressions (`$response.body#/transactionId`).
//!
//! The grammar is the complete ABNF of the OpenAPI Specification's runtime expressions:
//!
//! ```text
//! expression = "$url" / "$method" / "$statusCode" / "$request." source / "$response." source
//! source     = "header." token / "query." name / "path." name / "body" [ "#" json-pointer ]
//! token      = 1*tchar              ; RFC 9110 token characters
//! name       = *CHAR                ; %x01-7F
//! ```

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use crate::pointer::{JsonPointer, PointerError};

/// A parsed runtime expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RuntimeExpression {
    /// `$url`
    Url,
    /// `$method`
    Method,
    /// `$statusCode`
    StatusCode,
    /// `$request.<source>`
    Request(Source),
    /// `$response.<source>`
    Response(Source),
}

/// The part of a request or response an expression reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    /// `header.<token>`
    Header(String),
    /// `query.<name>`
    Query(String),
    /// `path.<name>`
    Path(String),
    /// `body`, optionally followed by `#` and a JSON Pointer.
    Body(Option<JsonPointer>),
}

/// Which side of the original call a body expression reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BodySide {
    /// `$request.body`: the call's `arguments`.
    Request,
    /// `$response.body`: the result's `structuredContent`.
    Response,
}

/// A runtime expression that does not parse, with the byte offset of the fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at byte {offset}")]
pub struct ExpressionError {
    /// Byte offset into the parsed text.
    pub offset: usize,
    /// What was expected there, or what is wrong.
    pub message: String,
}

impl ExpressionError {
    fn expected(offset: usize, what: &str, rest: &str) -> Self {
        let found = match rest.chars().next() {
            Some(c) => format!("found {c:?}"),
            None => "found the end of the expression".to_owned(),
        };
        Self {
            offset,
            message: format!("expected {what}, {found}"),
        }
    }
}

const TCHAR_PUNCT: &str = "!#$%&'*+-.^_`|~";

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || TCHAR_PUNCT.contains(c)
}

fn is_name_char(c: char) -> bool {
    ('\u{1}'..='\u{7f}').contains(&c)
}

impl RuntimeExpression {
    /// Parses a complete runtime expression; trailing text is an error.
    pub fn parse(text: &str) -> Result<Self, ExpressionError> {
        let Some(rest) = text.strip_prefix('$') else {
            return Err(ExpressionError::expected(0, "'$'", text));
        };
        for (keyword, expression) in [
            ("url", Self::Url),
            ("method", Self::Method),
            ("statusCode", Self::StatusCode),
        ] {
            if rest == keyword {
                return Ok(expression);
            }
        }
        let (side, after) = if let Some(after) = rest.strip_prefix("request.") {
            (BodySide::Request, after)
        } else if let Some(after) = rest.strip_prefix("response.") {
            (BodySide::Response, after)
        } else {
            let known = ["url", "method", "statusCode"];
            if let Some(k) = known.iter().find(|k| rest.starts_with(**k)) {
                return Err(ExpressionError::expected(
                    1 + k.len(),
                    "the end of the expression",
                    &rest[k.len()..],
                ));
            }
            return Err(ExpressionError::expected(
                1,
                "'url', 'method', 'statusCode', 'request.' or 'response.'",
                rest,
            ));
        };
        let base = text.len() - after.len();
        let source = parse_source(after, base)?;
        Ok(match side {
            BodySide::Request => Self::Request(source),
            BodySide::Response => Self::Response(source),
        })
    }

    /// For a body expression, the side and the pointer it reads (`body` alone is the root).
    pub fn body_target(&self) -> Option<(BodySide, JsonPointer)> {
        match self {
            Self::Request(Source::Body(p)) => {
                Some((BodySide::Request, p.clone().unwrap_or_default()))
            }
            Self::Response(Source::Body(p)) => {
                Some((BodySide::Response, p.clone().unwrap_or_default()))
            }
            _ => None,
        }
    }

    /// A body expression reading `pointer` on `side`.
    pub fn body(side: BodySide, pointer: JsonPointer) -> Self {
        let source = Source::Body(Some(pointer));
        match side {
            BodySide::Request => Self::Request(source),
            BodySide::Response => Self::Response(source),
        }
    }
}

fn parse_source(text: &str, base: usize) -> Result<Source, ExpressionError> {
    if let Some(token) = text.strip_prefix("header.") {
        let offset = base + "header.".len();
        if token.is_empty() {
            return Err(ExpressionError::expected(offset, "a header name", token));
        }
        if let Some((i, _)) = token.char_indices().find(|(_, c)| !is_tchar(*c)) {
            return Err(ExpressionError::expected(
                offset + i,
                "a header name character (RFC 9110 token)",
                &token[i..],
            ));
        }
        return Ok(Source::Header(token.to_owned()));
    }
    for (prefix, make) in [
        ("query.", Source::Query as fn(String) -> Source),
        ("path.", Source::Path),
    ] {
        if let Some(name) = text.strip_prefix(prefix) {
            if let Some((i, _)) = name.char_indices().find(|(_, c)| !is_name_char(*c)) {
                return Err(ExpressionError::expected(
                    base + prefix.len() + i,
                    "an ASCII name character",
                    &name[i..],
                ));
            }
            return Ok(make(name.to_owned()));
        }
    }
    if let Some(after) = text.strip_prefix("body") {
        if after.is_empty() {
            return Ok(Source::Body(None));
        }
        let Some(pointer) = after.strip_prefix('#') else {
            return Err(ExpressionError::expected(
                base + 4,
                "'#' followed by a JSON Pointer, or the end of the expression",
                after,
            ));
        };
        let offset = base + 5;
        return JsonPointer::parse(pointer)
            .map(|p| Source::Body(Some(p)))
            .map_err(|e| pointer_error(e, pointer, offset));
    }
    Err(ExpressionError::expected(
        base,
        "'header.', 'query.', 'path.' or 'body'",
        text,
    ))
}

fn pointer_error(error: PointerError, pointer: &str, base: usize) -> ExpressionError {
    let offset = error.offset();
    let message = match error {
        PointerError::MissingSlash { .. } => {
            ExpressionError::expected(0, "'/' to start the JSON Pointer", pointer).message
        }
        PointerError::BadEscape { .. } => {
            "'~' in a JSON Pointer must be followed by '0' or '1'".to_owned()
        }
    };
    ExpressionError {
        offset: base + offset,
        message,
    }
}

impl fmt::Display for RuntimeExpression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (side, source) = match self {
            Self::Url => return f.write_str("$url"),
            Self::Method => return f.write_str("$method"),
            Self::StatusCode => return f.write_str("$statusCode"),
            Self::Request(s) => ("request", s),
            Self::Response(s) => ("response", s),
        };
        write!(f, "${side}.")?;
        match source {
            Source::Header(t) => write!(f, "header.{t}"),
            Source::Query(n) => write!(f, "query.{n}"),
            Source::Path(n) => write!(f, "path.{n}"),
            Source::Body(None) => f.write_str("body"),
            Source::Body(Some(p)) => write!(f, "body#{p}"),
        }
    }
}

impl std::str::FromStr for RuntimeExpression {
    type Err = ExpressionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The regular expression (ECMA-262 and Rust `regex` compatible, unanchored) matching exactly the
/// runtime expressions [`RuntimeExpression::parse`] accepts. With `in_template`, the characters may
/// not include `}`, which closes an embedded expression.
pub fn expression_pattern(in_template: bool) -> String {
    let (name, pointer_char) = if in_template {
        (r"[\x01-\x7C\x7E\x7F]", r"[^/~}]")
    } else {
        (r"[\x01-\x7F]", r"[^/~]")
    };
    format!(
        r"\$(?:url|method|statusCode|(?:request|response)\.(?:header\.[!#$%&'*+.^_`|~0-9A-Za-z-]+|(?:query|path)\.{name}*|body(?:#(?:/(?:{pointer_char}|~[01])*)*)?))"
    )
}

impl JsonSchema for RuntimeExpression {
    fn schema_name() -> Cow<'static, str> {
        "RuntimeExpression".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An OpenAPI runtime expression such as `$response.body#/transactionId`.",
            "type": "string",
            "pattern": format!("^{}$", expression_pattern(false)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(text: &str) -> RuntimeExpression {
        let parsed = RuntimeExpression::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(parsed.to_string(), text);
        parsed
    }

    /// The examples table of the OpenAPI Specification's runtime expression section.
    #[test]
    fn openapi_examples() {
        for text in [
            "$method",
            "$request.header.accept",
            "$request.path.id",
            "$request.body#/user/uuid",
            "$url",
            "$response.body#/status",
            "$response.header.Server",
            "$statusCode",
            "$request.query.queryUrl",
            "$response.body",
            "$request.body#",
            "$request.query.",
            "$response.body#/a~1b/~0c/",
        ] {
            round_trip(text);
        }
        assert_eq!(
            round_trip("$response.body#/transactionId").body_target(),
            Some((
                BodySide::Response,
                JsonPointer::from_tokens(["transactionId"])
            ))
        );
    }

    #[test]
    fn errors_point_at_the_fault() {
        let cases = [
            ("response.body", 0),
            ("$response.body#transactionId", 15),
            ("$response.bdy", 10),
            ("$resp", 1),
            ("$response.header.", 17),
            ("$response.header.a b", 18),
            ("$request.body#/a~2", 16),
            ("$urlx", 4),
            ("$request.query.é", 15),
            ("$", 1),
        ];
        for (text, offset) in cases {
            let error = RuntimeExpression::parse(text).unwrap_err();
            assert_eq!(error.offset, offset, "{text}: {error}");
        }
        let error = RuntimeExpression::parse("$response.body#transactionId").unwrap_err();
        assert_eq!(
            error.to_string(),
            "expected '/' to start the JSON Pointer, found 't' at byte 15"
        );
    }

    fn arb_expression() -> impl Strategy<Value = RuntimeExpression> {
        let side = prop_oneof![
            "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,8}".prop_map(Source::Header),
            "[\\x01-\\x7f]{0,8}".prop_map(Source::Query),
            "[\\x01-\\x7f]{0,8}".prop_map(Source::Path),
            proptest::option::of(proptest::collection::vec(".{0,4}", 0..4))
                .prop_map(|t| Source::Body(t.map(JsonPointer::from_tokens))),
        ];
        prop_oneof![
            Just(RuntimeExpression::Url),
            Just(RuntimeExpression::Method),
            Just(RuntimeExpression::StatusCode),
            side.clone().prop_map(RuntimeExpression::Request),
            side.prop_map(RuntimeExpression::Response),
        ]
    }

    proptest! {
        #[test]
        fn parse_display_round_trips(expression in arb_expression()) {
            prop_assert_eq!(RuntimeExpression::parse(&expression.to_string()).unwrap(), expression);
        }

        #[test]
        fn parse_never_panics(text in "\\$(request|response)?\\.?(body#?|header\\.|query\\.)?.{0,12}") {
            let _ = RuntimeExpression::parse(&text);
        }

        #[test]
        fn parse_never_panics_on_anything(text in ".*") {
            let _ = RuntimeExpression::parse(&text);
        }
    }
}
