//! Stage 1: bytes → JSON (R001) → the tools array (R002).

use mcp_recovery_model::{ToolsLocation, locate_tools};
use std::cell::Cell;
use std::sync::LazyLock;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

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
    let repeated = Cell::new(false);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    Compact {
        repeated: &repeated,
    }
    .deserialize(&mut deserializer)
    .and_then(|document| deserializer.end().map(|()| document))
    .map(|document| Parsed {
        document,
        repeats_a_name: repeated.get(),
    })
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
    })
}

/// Builds a JSON value with every object and array at the capacity of its length. The stock
/// parser grows each map as it reads it, which leaves about a third of a parsed document's
/// memory unused for the whole lint; collecting the members first and building the map at its
/// size keeps only the slack of the map being read. The same parser runs underneath, with its
/// errors, its nesting limit and its rule for repeated names (the last value, at the first
/// position); a repeated name is noted in `repeated`.
#[derive(Clone, Copy)]
struct Compact<'a> {
    repeated: &'a Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for Compact<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// The member name under which serde_json hands over a number it keeps as text (its
/// `arbitrary_precision` feature).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Whether serde_json keeps numbers as text (then a number arrives as a one-member map named
/// [`NUMBER_TOKEN`], and an object of that one name is read as a number, as serde_json's own
/// `Value` does).
static NUMBERS_AS_TEXT: LazyLock<bool> = LazyLock::new(|| {
    serde_json::from_str::<Value>("1.50")
        .and_then(|number| serde_json::to_string(&number))
        .is_ok_and(|text| text == "1.50")
});

impl<'de> Visitor<'de> for Compact<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
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
        while let Some(key) = access.next_key::<String>()? {
            if members.is_empty() && key == NUMBER_TOKEN && *NUMBERS_AS_TEXT {
                let text: String = access.next_value()?;
                return text
                    .parse()
                    .map(Value::Number)
                    .map_err(serde::de::Error::custom);
            }
            let value = access.next_value_seed(self)?;
            members.push((key, value));
        }
        let written = members.len();
        let mut map = Map::with_capacity(written);
        map.extend(members);
        if map.len() < written {
            self.repeated.set(true);
        }
        Ok(Value::Object(map))
    }
}

/// Finds the tools array of one of the accepted shapes, or explains why there is none (R002).
pub(crate) fn tools_of(document: &Value) -> Result<ToolsLocation<'_>, Box<Finding>> {
    locate_tools(document).map_err(|error| Box::new(not_a_tools_list::finding(&error)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Parsed {
        match parse(text.as_bytes()) {
            Ok(parsed) => parsed,
            Err(finding) => panic!("{text}: {finding:?}"),
        }
    }

    #[test]
    fn a_repeated_name_is_noticed_at_any_depth_and_however_it_is_written() {
        assert!(!parsed(r#"{"a": {"b": 1, "c": [{"d": 2}]}, "b": 3}"#).repeats_a_name);
        for text in [
            r#"{"a": 1, "a": 2}"#,
            r#"[{"x": {"b": 1, "b": 2}}]"#,
            r#"{"n\u0061me": 1, "name": 2}"#,
        ] {
            let parsed = parsed(text);
            assert!(parsed.repeats_a_name, "{text}");
        }
        // The last value, at the first position.
        let document = parsed(r#"{"a": 1, "b": 2, "a": 3}"#).document;
        assert_eq!(
            serde_json::to_string(&document).ok().as_deref(),
            Some(r#"{"a":3,"b":2}"#)
        );
    }

    /// The same value as serde_json's own, numbers included (kept as text or not, as the
    /// workspace's serde_json features say).
    #[test]
    fn parses_as_serde_json_does() {
        for text in [
            r#"{"$serde_json::private::Number": "1", "n": [1, -2, 2.5, 1e300, 0.10]}"#,
            r#"[18446744073709551615, -9223372036854775808, 1.0, {"a": null}]"#,
            r#""\ud83d\ude00""#,
        ] {
            let expected: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            assert_eq!(parsed(text).document, expected, "{text}");
        }
    }
}
