//! RFC 6901 JSON Pointers.

use std::fmt;

use serde_json::Value;

/// A parsed RFC 6901 JSON Pointer: a list of unescaped reference tokens.
///
/// The empty pointer (`""`) selects the whole document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct JsonPointer {
    tokens: Vec<String>,
}

/// Why a string is not a JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointerError {
    /// A non-empty pointer must start with `/`.
    #[error("a JSON Pointer must be empty or start with '/' (byte {offset})")]
    MissingSlash {
        /// Byte offset of the fault.
        offset: usize,
    },
    /// `~` must be followed by `0` or `1`.
    #[error("'~' must be followed by '0' or '1' (byte {offset})")]
    BadEscape {
        /// Byte offset of the `~`.
        offset: usize,
    },
}

impl PointerError {
    /// Byte offset of the fault in the parsed text.
    pub fn offset(&self) -> usize {
        match self {
            Self::MissingSlash { offset } | Self::BadEscape { offset } => *offset,
        }
    }
}

impl JsonPointer {
    /// The empty pointer, which selects the whole document.
    pub fn root() -> Self {
        Self::default()
    }

    /// Builds a pointer from unescaped reference tokens.
    pub fn from_tokens<I, S>(tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            tokens: tokens.into_iter().map(Into::into).collect(),
        }
    }

    /// Parses the RFC 6901 string form (`/a/b~1c`).
    pub fn parse(text: &str) -> Result<Self, PointerError> {
        if text.is_empty() {
            return Ok(Self::root());
        }
        if !text.starts_with('/') {
            return Err(PointerError::MissingSlash { offset: 0 });
        }
        let mut tokens = Vec::new();
        let mut start = 1;
        for segment in text[1..].split('/') {
            tokens.push(unescape(segment, start)?);
            start += segment.len() + 1;
        }
        Ok(Self { tokens })
    }

    /// The unescaped reference tokens.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// True for the empty pointer.
    pub fn is_root(&self) -> bool {
        self.tokens.is_empty()
    }

    /// A new pointer with `token` appended.
    pub fn join(&self, token: impl Into<String>) -> Self {
        let mut tokens = self.tokens.clone();
        tokens.push(token.into());
        Self { tokens }
    }

    /// Appends a token in place.
    pub fn push(&mut self, token: impl Into<String>) {
        self.tokens.push(token.into());
    }

    /// Evaluates the pointer against `document` (RFC 6901 §4).
    ///
    /// Array indices must be `0` or a number without leading zeros; `-` selects nothing.
    pub fn evaluate<'a>(&self, document: &'a Value) -> Option<&'a Value> {
        self.tokens
            .iter()
            .try_fold(document, |value, token| match value {
                Value::Object(map) => map.get(token),
                Value::Array(items) => array_index(token).and_then(|i| items.get(i)),
                _ => None,
            })
    }

    /// Evaluates the pointer as a JSONPath of name selectors reads it (RFC 9535 §2.3.1.2): every
    /// token selects an object member, and an array selects nothing, whatever the token.
    pub fn evaluate_members<'a>(&self, document: &'a Value) -> Option<&'a Value> {
        self.tokens
            .iter()
            .try_fold(document, |value, token| value.as_object()?.get(token))
    }

    /// The first token that would index an array under RFC 6901 (`0`, `12`, `-`), if any: where
    /// one appears, the pointer and a name-selector path may select different things.
    pub fn array_like_token(&self) -> Option<&str> {
        self.tokens
            .iter()
            .map(String::as_str)
            .find(|token| *token == "-" || array_index(token).is_some())
    }
}

/// How the tokens of a body pointer select values: as RFC 6901 says (SEP-3172 runtime
/// expressions), or as the name selectors of the mcp-compensate JSONPath subset, which select
/// object members only (RFC 9535 §2.3.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointerReading {
    /// A token selects an object member or, when it is an index, an array item.
    Pointer,
    /// A token selects an object member; an array selects nothing.
    Names,
}

impl PointerReading {
    /// Evaluates `pointer` against `document` under this reading.
    pub fn evaluate<'a>(self, pointer: &JsonPointer, document: &'a Value) -> Option<&'a Value> {
        match self {
            Self::Pointer => pointer.evaluate(document),
            Self::Names => pointer.evaluate_members(document),
        }
    }
}

/// Parses an RFC 6901 array index: `0` or a decimal without a leading zero.
pub fn array_index(token: &str) -> Option<usize> {
    let valid = token == "0"
        || (!token.is_empty()
            && !token.starts_with('0')
            && token.bytes().all(|b| b.is_ascii_digit()));
    if valid { token.parse().ok() } else { None }
}

fn unescape(segment: &str, base: usize) -> Result<String, PointerError> {
    if !segment.contains('~') {
        return Ok(segment.to_owned());
    }
    let mut out = String::with_capacity(segment.len());
    let mut chars = segment.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some((_, '0')) => out.push('~'),
                Some((_, '1')) => out.push('/'),
                _ => return Err(PointerError::BadEscape { offset: base + i }),
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// Escapes one reference token (`~` → `~0`, `/` → `~1`).
pub fn escape_token(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1").into()
    } else {
        token.into()
    }
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for token in &self.tokens {
            write!(f, "/{}", escape_token(token))?;
        }
        Ok(())
    }
}

impl std::str::FromStr for JsonPointer {
    type Err = PointerError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The document and every example of RFC 6901 §5.
    #[test]
    fn rfc6901_section5() {
        let doc = json!({
            "foo": ["bar", "baz"],
            "": 0,
            "a/b": 1,
            "c%d": 2,
            "e^f": 3,
            "g|h": 4,
            "i\\j": 5,
            "k\"l": 6,
            " ": 7,
            "m~n": 8
        });
        let cases = [
            ("", doc.clone()),
            ("/foo", json!(["bar", "baz"])),
            ("/foo/0", json!("bar")),
            ("/", json!(0)),
            ("/a~1b", json!(1)),
            ("/c%d", json!(2)),
            ("/e^f", json!(3)),
            ("/g|h", json!(4)),
            ("/i\\j", json!(5)),
            ("/k\"l", json!(6)),
            ("/ ", json!(7)),
            ("/m~0n", json!(8)),
        ];
        for (text, expected) in cases {
            let pointer = JsonPointer::parse(text).unwrap();
            assert_eq!(pointer.evaluate(&doc), Some(&expected), "{text}");
            assert_eq!(pointer.to_string(), text, "display of {text}");
        }
    }

    #[test]
    fn escapes_decode_in_order() {
        // "~01" is "~1" after decoding, never "/".
        assert_eq!(JsonPointer::parse("/~01").unwrap().tokens(), ["~1"]);
    }

    #[test]
    fn errors_carry_offsets() {
        assert_eq!(
            JsonPointer::parse("a/b"),
            Err(PointerError::MissingSlash { offset: 0 })
        );
        assert_eq!(
            JsonPointer::parse("/ab/c~2"),
            Err(PointerError::BadEscape { offset: 5 })
        );
        assert_eq!(
            JsonPointer::parse("/x~"),
            Err(PointerError::BadEscape { offset: 2 })
        );
    }

    #[test]
    fn array_indices_are_strict() {
        let doc = json!([10, 20]);
        assert_eq!(
            JsonPointer::parse("/1").unwrap().evaluate(&doc),
            Some(&json!(20))
        );
        assert_eq!(JsonPointer::parse("/01").unwrap().evaluate(&doc), None);
        assert_eq!(JsonPointer::parse("/-").unwrap().evaluate(&doc), None);
        assert_eq!(JsonPointer::parse("/2").unwrap().evaluate(&doc), None);
        assert_eq!(JsonPointer::parse("/0/x").unwrap().evaluate(&doc), None);
    }

    proptest::proptest! {
        #[test]
        fn display_round_trips(tokens in proptest::collection::vec(".*", 0..5)) {
            let pointer = JsonPointer::from_tokens(tokens);
            proptest::prop_assert_eq!(JsonPointer::parse(&pointer.to_string()).unwrap(), pointer);
        }

        #[test]
        fn parse_never_panics(text in ".*") {
            let _ = JsonPointer::parse(&text);
        }
    }
}
