//! The one JSON reader for input.
//!
//! Every document, trace, journal line and protocol message is read here, so every command sees
//! the same values. The grammar, the error messages, the nesting limit and the rule for repeated
//! member names (the last value, at the first position) are serde_json's. Two things differ from
//! `serde_json::from_str`:
//!
//! * a number keeps its JSON text exactly as written (`1E2`, `1.50`, `-0`, `1e400`,
//!   `123456789012345678901234`), so whatever is written out again is the same text. serde_json's
//!   own parser spells exponents its way (`1E2` becomes `1e+2`);
//! * every object and array is allocated at its length. The stock parser grows each map as it
//!   reads it, which leaves about a third of a large document's memory unused.
//!
//! Text is read in one pass that builds the value directly (`direct`). Whatever that pass does not
//! read — a syntax error above all — is read again through serde_json's parser, which then gives
//! the error with its line and column, or the value. That second reader takes each number's text
//! from the source, found by a scan that moves forward with the parser, and collects each
//! container's members before allocating it. The two give the same value for every text both
//! read (tested against each other).

mod direct;

pub(crate) use direct::{Element, skim};

use std::cell::Cell;

use memchr::memchr2;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses strict JSON text, keeping every number's text.
///
/// # Errors
///
/// The parser's error (with its line and column) when `text` is not one JSON value.
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    from_str_noting_repeats(text).map(|(value, _)| value)
}

/// [`from_str`], also telling whether some object writes a member name more than once (the
/// value keeps the last one, at the first position).
///
/// # Errors
///
/// The parser's error (with its line and column) when `text` is not one JSON value.
pub fn from_str_noting_repeats(text: &str) -> Result<(Value, bool), serde_json::Error> {
    match direct::parse(text) {
        Some(parsed) => Ok(parsed),
        None => read(serde_json::Deserializer::from_str(text), text.as_bytes()),
    }
}

/// Parses strict JSON bytes (UTF-8), keeping every number's text.
///
/// # Errors
///
/// The parser's error (with its line and column) when `bytes` are not one JSON value.
pub fn from_slice(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => from_str(text),
        Err(_) => read(serde_json::Deserializer::from_slice(bytes), bytes).map(|(value, _)| value),
    }
}

fn read<'de, R: serde_json::de::Read<'de>>(
    mut deserializer: serde_json::Deserializer<R>,
    source: &[u8],
) -> Result<(Value, bool), serde_json::Error> {
    let numbers = Numbers {
        source,
        at: Cell::new(0),
        owned_string: Cell::new(false),
        repeated: Cell::new(false),
    };
    let value = Exact(&numbers).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, numbers.repeated.get()))
}

/// A cursor over the number tokens of the source, outside strings, in document order. The parser
/// meets numbers in the same order, so the next token is always the number it has just read.
struct Numbers<'s> {
    source: &'s [u8],
    at: Cell<usize>,
    /// Whether the last string came as an owned `String`, as only a number's text does.
    owned_string: Cell<bool>,
    /// Whether some object has written a member name more than once.
    repeated: Cell<bool>,
}

impl Numbers<'_> {
    /// The text of the next number in the source, moving past it.
    fn next(&self) -> Option<&str> {
        let bytes = self.source;
        let mut i = self.at.get();
        while let Some(&byte) = bytes.get(i) {
            match byte {
                b'"' => {
                    // Jump to the closing quote, over escaped characters.
                    i += 1;
                    while let Some(at) = bytes.get(i..).and_then(|rest| memchr2(b'"', b'\\', rest))
                    {
                        i += at;
                        if bytes[i] == b'"' {
                            break;
                        }
                        i += 2;
                    }
                    i += 1;
                }
                b'-' | b'0'..=b'9' => {
                    let start = i;
                    while bytes.get(i).is_some_and(|b| {
                        matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                    }) {
                        i += 1;
                    }
                    self.at.set(i);
                    return std::str::from_utf8(&bytes[start..i]).ok();
                }
                _ => i += 1,
            }
        }
        self.at.set(i);
        None
    }

    /// The number whose text serde_json gives as `parsed` (its spelling of the exponent), with
    /// the text of the source.
    fn number(&self, parsed: String) -> Number {
        match self.next() {
            Some(raw) if same_number_text(raw, &parsed) => {
                // The written text is never longer than the parser's: reuse its buffer.
                let mut text = parsed;
                text.clear();
                text.push_str(raw);
                Number::from_string_unchecked(text)
            }
            _ => Number::from_string_unchecked(parsed),
        }
    }
}

/// Whether `parsed` is serde_json's spelling of the number written `raw`: the same text except
/// that the exponent marker is a lowercase `e` and always carries a sign.
fn same_number_text(raw: &str, parsed: &str) -> bool {
    match raw.find(['e', 'E']) {
        None => raw == parsed,
        Some(at) => {
            let (mantissa, exponent) = (&raw[..at], &raw[at + 1..]);
            let Some(rest) = parsed
                .strip_prefix(mantissa)
                .and_then(|p| p.strip_prefix('e'))
            else {
                return false;
            };
            if exponent.starts_with(['+', '-']) {
                rest == exponent
            } else {
                rest.strip_prefix('+') == Some(exponent)
            }
        }
    }
}

/// Reads one value.
#[derive(Clone, Copy)]
struct Exact<'a, 's>(&'a Numbers<'s>);

impl<'de> DeserializeSeed<'de> for Exact<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Exact<'_, '_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    // An integer that fits 64 bits arrives as such: its text is the one written (JSON has no
    // leading zeros or plus signs, and `-0` arrives as text).
    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Value, E> {
        self.0.next();
        Ok(Value::from(value))
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Value, E> {
        self.0.next();
        Ok(Value::from(value))
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Value, E> {
        self.0.next();
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, value: String) -> Result<Value, E> {
        self.0.owned_string.set(true);
        Ok(Value::String(value))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut members: Vec<(String, Value)> = Vec::new();
        if let Some(key) = access.next_key::<String>()? {
            // serde_json hands over a number that is not a 64-bit integer as a one-member map
            // whose value is its text as an owned string; its parser never gives a JSON string
            // that way, so a document's own member of the same name stays a member.
            self.0.owned_string.set(false);
            let value = access.next_value_seed(self)?;
            match value {
                Value::String(text) if key == NUMBER_TOKEN && self.0.owned_string.get() => {
                    return Ok(Value::Number(self.0.number(text)));
                }
                value => members.push((key, value)),
            }
        }
        while let Some((key, value)) = access.next_entry_seed(std::marker::PhantomData, self)? {
            members.push((key, value));
        }
        let written = members.len();
        let mut map = Map::with_capacity(written);
        map.extend(members);
        if map.len() < written {
            self.0.repeated.set(true);
        }
        Ok(Value::Object(map))
    }
}

/// `object` (a JSON object; anything else counts as an empty one) with `members` moved in as they
/// are.
///
/// `serde_json::json!` and `serde_json::to_value` serialize every value they embed and read its
/// numbers back, which respells them (`1.2E1` becomes `1.2e+1`, `1e400` becomes `1e+400`). A value
/// that came from input goes into a message or a record through here, or through [`to_value`].
pub fn with<const N: usize>(object: Value, members: [(&str, Value); N]) -> Value {
    let mut map = match object {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    for (key, value) in members {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

/// `value` as a JSON value, every number with its text (see [`with`]).
///
/// # Errors
///
/// When `value` cannot be written as JSON (a map with keys that are not strings).
pub fn to_value<T: serde::Serialize + ?Sized>(value: &T) -> Result<Value, serde_json::Error> {
    from_str(&serde_json::to_string(value)?)
}

/// The member name serde_json gives the text of a number that is not a 64-bit integer.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

#[cfg(test)]
mod tests;
