//! Stage 1: bytes → JSON (R001) → the tools array (R002).

use mcp_recovery_model::{ToolsLocation, locate_tools};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::finding::Finding;
use crate::rules::{invalid_json, not_a_tools_list};
use crate::span::LineIndex;

const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// Parses strict JSON; a fault becomes an R001 finding placed at the offending byte.
pub(crate) fn parse(source: &[u8]) -> Result<Value, Box<Finding>> {
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
    serde_json::from_str::<Compact>(text)
        .map(|Compact(document)| document)
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

/// A JSON value parsed with every object and array at the capacity of its length. The stock
/// parser grows each map as it reads it, which leaves about a third of a parsed document's
/// memory unused for the whole lint; collecting the members first and building the map at its
/// size keeps only the slack of the map being read. The same parser runs underneath, with its
/// errors, its nesting limit and its rule for repeated names (the last value, at the first
/// position).
struct Compact(Value);

impl<'de> Deserialize<'de> for Compact {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CompactVisitor).map(Compact)
    }
}

struct CompactVisitor;

impl<'de> Visitor<'de> for CompactVisitor {
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
        while let Some(Compact(item)) = seq.next_element()? {
            items.push(item);
        }
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut members: Vec<(String, Value)> = Vec::new();
        while let Some((key, Compact(value))) = access.next_entry()? {
            members.push((key, value));
        }
        let mut map = Map::with_capacity(members.len());
        map.extend(members);
        Ok(Value::Object(map))
    }
}

/// Finds the tools array of one of the accepted shapes, or explains why there is none (R002).
pub(crate) fn tools_of(document: &Value) -> Result<ToolsLocation<'_>, Box<Finding>> {
    locate_tools(document).map_err(|error| Box::new(not_a_tools_list::finding(&error)))
}
