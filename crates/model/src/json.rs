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
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn values_put_in_with_or_to_value_keep_their_numbers() {
        let input = from_str(r#"{"a": 1.2E1, "b": 1e400, "c": [-0, 1.50]}"#).unwrap();
        let expected = r#"{"a":1.2E1,"b":1e400,"c":[-0,1.50]}"#;
        // What the helpers exist for: serde_json's own embedding respells.
        assert_ne!(
            serde_json::json!({ "x": input }).to_string(),
            format!(r#"{{"x":{expected}}}"#)
        );
        let built = with(serde_json::json!({"id": 1}), [("x", input.clone())]);
        assert_eq!(built.to_string(), format!(r#"{{"id":1,"x":{expected}}}"#));
        let wrapped = to_value(&vec![input]).unwrap();
        assert_eq!(wrapped.to_string(), format!("[{expected}]"));
    }

    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    use super::*;

    #[test]
    fn numbers_keep_their_text() {
        for text in [
            "0",
            "-0",
            "1E2",
            "1e2",
            "1e+2",
            "1E-2",
            "1.50",
            "-0.0e0",
            "1e400",
            "-1e-400",
            "123456789012345678901234",
            "-123456789012345678901234",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
        ] {
            let document = format!(r#"{{"a":"1e2 \" 7","b":[{text},"x",{text}],"{text}":{text}}}"#);
            let value = from_str(&document).unwrap();
            assert_eq!(value.to_string(), document, "{text}");
            assert_eq!(from_slice(document.as_bytes()).unwrap(), value);
        }
    }

    #[test]
    fn a_member_named_like_the_parsers_number_wrapping_stays_a_member() {
        for document in [
            r#"{"$serde_json::private::Number":"1e+2"}"#,
            r#"{"$serde_json::private::Number":"1e+2","x":1E2}"#,
            r#"[{"$serde_json::private::Number":2},3e0]"#,
        ] {
            assert_eq!(from_str(document).unwrap().to_string(), document);
        }
    }

    #[test]
    fn errors_are_the_parsers() {
        for document in [
            "",
            "[1,]",
            "{\"a\":1",
            "01",
            "1e",
            "-",
            "[1] x",
            "\"\\ud800\"",
        ] {
            let ours = from_str(document).unwrap_err().to_string();
            let theirs = serde_json::from_str::<Value>(document)
                .unwrap_err()
                .to_string();
            assert_eq!(ours, theirs, "{document}");
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(from_str(&deep).is_err());
    }

    #[test]
    fn repeated_names_keep_the_last_value_at_the_first_position() {
        let value = from_str(r#"{"a":1e0,"b":2,"a":3E0}"#).unwrap();
        assert_eq!(value.to_string(), r#"{"a":3E0,"b":2}"#);
    }

    #[test]
    fn a_repeated_name_is_noticed_at_any_depth_and_however_it_is_written() {
        let repeats = |text: &str| from_str_noting_repeats(text).unwrap().1;
        assert!(!repeats(r#"{"a": {"b": 1, "c": [{"d": 2}]}, "b": 3}"#));
        for text in [
            r#"{"a": 1, "a": 2}"#,
            r#"[{"x": {"b": 1, "b": 2}}]"#,
            r#"{"n\u0061me": 1, "name": 2}"#,
            r#"{"$serde_json::private::Number": "1", "$serde_json::private::Number": "2"}"#,
        ] {
            assert!(repeats(text), "{text}");
        }
    }

    /// What serde_json's parser underneath reads, for comparison with the one-pass reader.
    fn through_serde(text: &str) -> Result<(Value, bool), serde_json::Error> {
        read(serde_json::Deserializer::from_str(text), text.as_bytes())
    }

    /// A JSON text with varied spacing, escapes, number spellings and repeated names.
    fn json_text() -> impl Strategy<Value = String> {
        let space = prop::sample::select(vec!["", " ", "\n  ", "\t", "\r\n"]);
        let number = prop_oneof![
            "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,4})?",
            Just("-0".to_owned()),
        ];
        let quote = |s: String| {
            let mut out = String::from('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        };
        let quoted = prop_oneof![
            "[a-z ]{0,12}".prop_map(quote),
            "[\u{0}-\u{10FFFF}]{0,8}".prop_map(quote),
            // Written escapes, pairs of surrogates among them.
            r#"([a-z]|\\[\"\\/bfnrt]|\\u[0-9a-cA-CeEfF][0-9a-fA-F]{3}|\\ud83d\\ude00|é|😀){0,10}"#
                .prop_map(|s| format!("\"{s}\"")),
        ];
        let leaf = prop_oneof![
            number,
            quoted.clone(),
            Just("true".to_owned()),
            Just("false".to_owned()),
            Just("null".to_owned()),
        ];
        leaf.prop_recursive(6, 64, 6, move |inner| {
            let member = (quoted.clone(), inner.clone(), space.clone())
                .prop_map(|(name, value, gap)| format!("{gap}{name}{gap}:{gap}{value}{gap}"));
            prop_oneof![
                prop::collection::vec((inner, space.clone()), 0..6).prop_map(|items| {
                    let items: Vec<String> = items
                        .into_iter()
                        .map(|(v, gap)| format!("{gap}{v}{gap}"))
                        .collect();
                    format!("[{}]", items.join(","))
                }),
                (prop::collection::vec(member, 0..6), any::<bool>()).prop_map(
                    |(mut members, repeat)| {
                        if repeat && !members.is_empty() {
                            members.push(members[0].clone());
                        }
                        format!("{{{}}}", members.join(","))
                    }
                ),
            ]
        })
    }

    /// Agreement of the two readers on `text`: the one-pass reader may decline anything, but what
    /// it reads, serde_json's reads to the same value.
    fn agree(text: &str) -> Result<bool, TestCaseError> {
        skim_agrees(text)?;
        let Some((value, repeated)) = direct::parse(text) else {
            return Ok(false);
        };
        let (theirs, their_repeat) = through_serde(text)
            .map_err(|error| TestCaseError::fail(format!("{text:?} read, but {error}")))?;
        prop_assert_eq!(value.to_string(), theirs.to_string(), "{:?}", text);
        prop_assert_eq!(repeated, their_repeat, "{:?}", text);
        Ok(true)
    }

    /// `text` as the tools of a list: skimmed only when the one-pass reader reads the list
    /// without a repeated name, and then each tool read alone is the element read whole.
    fn skim_agrees(text: &str) -> Result<(), TestCaseError> {
        let list = format!(r#"{{"result": {{"tools": [{text}, {{"name": {text}}}]}}}}"#);
        let whole = direct::parse(&list);
        let Some(skimmed) = crate::ToolList::skim(&list) else {
            prop_assert!(
                whole.is_none() || whole.unwrap().1,
                "not skimmed: {:?}",
                list
            );
            return Ok(());
        };
        let Some((Value::Object(whole), _)) = whole else {
            return Err(TestCaseError::fail(format!("skimmed, not read: {list:?}")));
        };
        let tools = &whole["result"]["tools"];
        for i in 0..2 {
            let (tool, _) = skimmed.read(i).unwrap();
            prop_assert_eq!(tool.to_string(), tools[i].to_string());
            prop_assert_eq!(
                skimmed.name(i),
                tools[i].get("name").and_then(Value::as_str)
            );
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_one_pass_reader_reads_json_as_serde_json_does(text in json_text()) {
            prop_assert!(agree(&text)?, "declined {:?}", text);
        }

        #[test]
        fn the_one_pass_reader_declines_what_serde_json_refuses(
            text in json_text(),
            at in any::<prop::sample::Index>(),
            cut in 0usize..3,
            insert in prop::sample::select(vec!["", ",", "]", "}", "\"", "\\", "\u{1}", "e", ".", "-", "0", ":", " ", "\\u", "\\ud800", "é"]),
        ) {
            // One edit: cut up to two characters at a place and write another text there.
            let chars: Vec<char> = text.chars().collect();
            let at = at.index(chars.len() + 1);
            let end = (at + cut).min(chars.len());
            let edited: String = chars[..at].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(&chars[end..]).collect();
            agree(&edited)?;
            if direct::parse(&edited).is_none() {
                // Declined: the public reader still answers exactly as serde_json's parser.
                prop_assert_eq!(
                    from_str(&edited).map(|v| v.to_string()).map_err(|e| e.to_string()),
                    through_serde(&edited).map(|(v, _)| v.to_string()).map_err(|e| e.to_string())
                );
            }
        }
    }

    #[test]
    fn every_json_file_of_the_repository_reads_alike_through_both_readers() {
        fn visit(dir: &std::path::Path, read: &mut usize) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() && !path.ends_with("target") && !path.ends_with(".git") {
                    visit(&path, read);
                } else if path.extension().is_some_and(|e| e == "json") {
                    let Ok(text) = std::fs::read_to_string(&path) else {
                        continue;
                    };
                    match (direct::parse(&text), through_serde(&text)) {
                        (Some((value, repeated)), Ok((theirs, their_repeat))) => {
                            assert_eq!(value.to_string(), theirs.to_string(), "{path:?}");
                            assert_eq!(repeated, their_repeat, "{path:?}");
                            *read += 1;
                        }
                        // Declined (an error, or nesting deeper than the one-pass reader goes).
                        (None, _) => {}
                        (Some(_), Err(error)) => panic!("{path:?} read, but {error}"),
                    }
                }
            }
        }
        let mut read = 0;
        visit(
            std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")),
            &mut read,
        );
        assert!(read > 200, "{read}");
    }

    #[test]
    fn the_one_pass_reader_leaves_deep_nesting_to_serde_json() {
        for depth in [99, 100, 101, 126, 127, 128, 200] {
            let text = "[".repeat(depth) + &"]".repeat(depth);
            assert_eq!(direct::parse(&text).is_some(), depth <= 100, "{depth}");
            assert_eq!(from_str(&text).is_ok(), depth <= 127, "{depth}");
        }
    }

    #[test]
    fn lone_surrogates_and_invalid_utf8_are_the_parsers_errors() {
        for text in [
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\ud800x""#,
        ] {
            assert!(direct::parse(text).is_none(), "{text}");
            assert_eq!(
                from_str(text).unwrap_err().to_string(),
                serde_json::from_str::<Value>(text).unwrap_err().to_string()
            );
        }
        let bytes = b"[\"\xff\"]";
        assert_eq!(
            from_slice(bytes).unwrap_err().to_string(),
            serde_json::from_slice::<Value>(bytes)
                .unwrap_err()
                .to_string()
        );
    }

    #[test]
    fn containers_are_allocated_at_their_length() {
        let value = from_str("[[1,2,3],{\"a\":[]}]").unwrap();
        let Value::Array(items) = &value else {
            unreachable!()
        };
        assert_eq!(items.capacity(), 2);
    }
}
