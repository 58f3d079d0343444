//! JSON types as JSON Schema names them, the exact meaning of a number's text, and text held
//! anywhere inside a value.

use serde_json::Value;

/// The JSON type name of a value, as JSON Schema spells it: a number without a fractional part
/// (`1`, `1.0`, `1e2`) is an `integer`.
pub fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() || number_is_integer(&n.to_string()) => {
            "integer"
        }
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a string or an object member name anywhere inside `value` contains `needle`.
pub fn holds_text(value: &Value, needle: &str) -> bool {
    match value {
        Value::String(text) => text.contains(needle),
        Value::Array(items) => items.iter().any(|item| holds_text(item, needle)),
        Value::Object(members) => members
            .iter()
            .any(|(name, item)| name.contains(needle) || holds_text(item, needle)),
        _ => false,
    }
}

/// Splits the JSON text of a number into its significant digits and the position of the decimal
/// point among them (which may lie outside them, as in `1e5` or `1e-5`).
fn digits_and_point(text: &str) -> Option<(Vec<u8>, i128)> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], &unsigned[at + 1..]),
        None => (unsigned, "0"),
    };
    let exponent = exponent.strip_prefix('+').unwrap_or(exponent);
    // An exponent too long for i128 is far outside every digit position either way.
    let exponent: i128 = match exponent.parse() {
        Ok(e) => e,
        Err(_) if exponent.starts_with('-') => i128::MIN / 2,
        Err(_) => i128::MAX / 2,
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
    Some((digits, whole.len() as i128 + exponent))
}

/// True when the JSON text of a number has no fractional part (`3`, `3.0`, `3e0`, `1e400`).
pub(crate) fn number_is_integer(text: &str) -> bool {
    digits_and_point(text).is_some_and(|(digits, point)| {
        let first_fractional = point.clamp(0, digits.len() as i128) as usize;
        digits[first_fractional..].iter().all(|&d| d == b'0')
    })
}

/// True when the JSON text of a number is zero (`0`, `-0.0`, `0e5`).
pub(crate) fn number_is_zero(text: &str) -> bool {
    digits_and_point(text).is_some_and(|(digits, _)| digits.iter().all(|&d| d == b'0'))
}
