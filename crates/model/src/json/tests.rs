//! The one-pass reader against serde_json's, and numbers kept as written.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::*;

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
    let Some(skimmed) = skim(&list) else {
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
    let (_, elements) = skimmed
        .arrays
        .iter()
        .find(|(at, _)| *at == "/result/tools")
        .unwrap();
    prop_assert_eq!(elements.len(), 2);
    for (i, element) in elements.iter().enumerate() {
        let (tool, _) = from_str_noting_repeats(&list[element.start..element.end]).unwrap();
        prop_assert_eq!(tool.to_string(), tools[i].to_string());
        prop_assert_eq!(
            element.name.as_deref(),
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
