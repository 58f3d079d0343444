use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus};

declare_rule! {
    /// ## What it does
    /// Reports a document that is not strict JSON (RFC 8259) encoded as UTF-8, at the first
    /// offending character: a syntax error, a comment, a trailing comma, an invalid byte sequence,
    /// or nesting deeper than the parser accepts (128 levels).
    ///
    /// ## Why is this bad?
    /// MCP messages are JSON. A document that is not JSON cannot be a `tools/list` response, and
    /// nothing else in it can be checked.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [{"name": "get_weather", "inputSchema": {"type": "object"},}]}
    /// ```
    ///
    /// Use instead:
    /// ```json
    /// {"tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}
    /// ```
    summary: "the document is not JSON (span at the fault)",
}

/// The bytes are not UTF-8.
pub(crate) fn not_utf8(offset: usize, len: usize, byte: Option<u8>) -> Finding {
    let found = byte.map_or_else(String::new, |b| format!(" (byte 0x{b:02X})"));
    Finding::new(
        Rule::InvalidJson,
        "",
        format!("the document is not valid UTF-8: invalid byte sequence at byte {offset}{found}"),
    )
    .help("save the document as UTF-8")
    .focus(Focus::Bytes {
        start: offset,
        end: offset + len,
    })
}

/// The text is not JSON.
pub(crate) fn not_json(error: &serde_json::Error, start: usize, end: usize) -> Finding {
    let text = error.to_string();
    // serde_json appends " at line L column C"; the span carries that already.
    let reason = text
        .rfind(" at line ")
        .map_or(text.as_str(), |cut| &text[..cut]);
    let help = if reason.contains("recursion limit") {
        "nesting deeper than 128 levels is not accepted; flatten the document"
    } else {
        "the document must be strict JSON: no comments, no trailing commas, double-quoted strings"
    };
    Finding::new(
        Rule::InvalidJson,
        "",
        format!("the document is not valid JSON: {reason}"),
    )
    .help(help)
    .focus(Focus::Bytes { start, end })
}

/// The text starts with a byte order mark, which strict JSON (RFC 8259 §8.1) does not allow.
pub(crate) fn byte_order_mark() -> Finding {
    Finding::new(
        Rule::InvalidJson,
        "",
        "the document starts with a UTF-8 byte order mark, which JSON text must not have",
    )
    .help("save the document as UTF-8 without a byte order mark")
    .focus(Focus::Bytes { start: 0, end: 3 })
}
