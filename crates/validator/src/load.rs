//! Stage 1: bytes → JSON (R001) → the tools array (R002).

use mcp_recovery_model::{ToolsLocation, locate_tools};
use serde_json::Value;

use crate::finding::Finding;
use crate::rules::{invalid_json, not_a_tools_list};
use crate::span::LineIndex;

const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// A parsed document.
pub(crate) struct Parsed {
    pub document: Value,
    /// Whether some object writes a member name more than once (the parser kept the last value),
    /// so that the R007 scan of the text runs only when it has something to find.
    pub repeats_a_name: bool,
}

/// Parses strict JSON; a fault becomes an R001 finding placed at the offending byte.
pub(crate) fn parse(source: &[u8]) -> Result<Parsed, Box<Finding>> {
    if source.starts_with(BYTE_ORDER_MARK) {
        return Err(Box::new(invalid_json::byte_order_mark()));
    }
    let text = match std::str::from_utf8(source) {
        Ok(text) => text,
        Err(error) => {
            let offset = error.valid_up_to();
            let len = error.error_len().unwrap_or(source.len() - offset).max(1);
            return Err(Box::new(invalid_json::not_utf8(
                offset,
                len,
                source.get(offset).copied(),
            )));
        }
    };
    let (document, repeats_a_name) = mcp_recovery_model::json::from_str_noting_repeats(text)
        .map_err(|error| {
            let lines = LineIndex::new(source);
            // serde_json counts columns in bytes from 1; a column of 0 means "at the line break".
            let offset = lines
                .line_start(error.line())
                .map_or(source.len(), |start| {
                    start + error.column().saturating_sub(1)
                })
                .min(source.len());
            let mut start = offset;
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let end = text[start..]
                .chars()
                .next()
                .map_or(start, |c| start + c.len_utf8());
            Box::new(invalid_json::not_json(&error, start, end))
        })?;
    Ok(Parsed {
        document,
        repeats_a_name,
    })
}

/// Finds the tools array of one of the accepted shapes, or explains why there is none (R002).
pub(crate) fn tools_of(document: &Value) -> Result<ToolsLocation<'_>, Box<Finding>> {
    locate_tools(document).map_err(|error| Box::new(not_a_tools_list::finding(&error)))
}
