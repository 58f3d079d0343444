//! The canonical form of a record: RFC 8785 (JSON Canonicalization Scheme) with numbers as
//! written.
//!
//! RFC 8785 writes no whitespace, sorts object members by the UTF-16 code units of their names
//! and writes strings with only the mandatory escapes; all of that is kept. It would also rewrite
//! every number as the shortest ECMAScript form of the nearest IEEE double, which changes the
//! digits of an integer beyond 2^53 (`123456789012345678901234`) and has no form at all for
//! `1e400`: a journal is the record of what a client sent, and `rollback` replays its arguments,
//! so a number is written, and hashed, as the JSON text it arrived as. For every number already
//! in ECMAScript form (all the journal writes itself, and every integer below 2^53 written
//! plainly) the two forms are the same bytes.

use serde_json::{Map, Value};

/// Appends the canonical form of `value` to `out`.
pub(crate) fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => out.extend_from_slice(number.as_str().as_bytes()),
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        Value::Object(members) => write_object(members, None, out),
    }
}

/// Appends the canonical form of an object to `out`, leaving out the member named `without`.
pub(crate) fn write_object(members: &Map<String, Value>, without: Option<&str>, out: &mut Vec<u8>) {
    let mut sorted: Vec<(&String, &Value)> = members
        .iter()
        .filter(|(name, _)| Some(name.as_str()) != without)
        .collect();
    sorted.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    out.push(b'{');
    for (i, (name, value)) in sorted.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(name, out);
        out.push(b':');
        write(value, out);
    }
    out.push(b'}');
}

/// RFC 8785 §3.2.2.2: `"` and `\` escaped, the short escapes for backspace, tab, line feed, form
/// feed and carriage return, `\u00xx` (lowercase) for the other controls, everything else as is.
fn write_string(text: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for byte in text.bytes() {
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x00..=0x1f => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(byte >> 4)]);
                out.push(HEX[usize::from(byte & 0xf)]);
            }
            _ => out.push(byte),
        }
    }
    out.push(b'"');
}
