use super::*;

fn places(text: &str, wanted: &[&str]) -> HashMap<String, Place> {
    locate(text.as_bytes(), &wanted.iter().copied().collect())
}

#[test]
fn finds_values_and_keys() {
    let text = r#"{"a": [1, {"b~c/d": "x"}], "e": {}, "f": true}"#;
    let found = places(
        text,
        &["", "/a", "/a/0", "/a/1/b~0c~1d", "/e", "/f", "/zzz"],
    );
    let slice = |r: &Range<usize>| &text[r.clone()];
    assert_eq!(slice(&found[""].value), text);
    assert_eq!(slice(&found["/a"].value), r#"[1, {"b~c/d": "x"}]"#);
    assert_eq!(slice(found["/a"].key.as_ref().unwrap()), r#""a""#);
    assert_eq!(slice(&found["/a/0"].value), "1");
    assert_eq!(found["/a/0"].key, None);
    assert_eq!(slice(&found["/a/1/b~0c~1d"].value), r#""x""#);
    assert_eq!(slice(&found["/e"].value), "{}");
    assert_eq!(slice(&found["/f"].value), "true");
    assert!(!found.contains_key("/zzz"));
}

#[test]
fn spans_carry_both_ends() {
    let text = "ab\n\u{e9}z\n{\n}";
    let lines = LineIndex::new(text.as_bytes());
    let span = lines.span(1..6);
    assert_eq!((span.line, span.column), (1, 2));
    // After the two-byte é and the z: column 3 of line 2.
    assert_eq!((span.end_line, span.end_column), (2, 3));
    let whole = lines.span(0..text.len());
    assert_eq!((whole.end_line, whole.end_column), (4, 2));
    // Ranges past the text are clamped.
    let past = lines.span(99..120);
    assert_eq!((past.line, past.end_line, past.end_column), (4, 4, 2));
}

#[test]
fn escaped_keys_are_decoded() {
    let text = r#"{"\u00e9\n": 1}"#;
    let found = places(text, &["/é\n"]);
    assert_eq!(&text[found["/é\n"].value.clone()], "1");
}

#[test]
fn deep_text_is_scanned_in_linear_time() {
    let depth = 1_000_000;
    let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let found = places(&text, &["", "/0"]);
    assert_eq!(found[""].value, 0..text.len());
    assert_eq!(found["/0"].value, 1..text.len() - 1);
}

fn duplicates(text: &str) -> Vec<(String, String, usize)> {
    duplicate_keys(text.as_bytes())
        .into_iter()
        .map(|d| (d.pointer, d.key, d.count))
        .collect()
}

#[test]
fn finds_duplicate_keys_with_their_pointers() {
    let text = r#"{"tools": [{"a": 1}, {"annotations": {"d": true, "x": [{"k/~": 1, "k\u002f~": 2}], "d": false, "d": 0}}], "tools": 3}"#;
    assert_eq!(
        duplicates(text),
        [
            (
                "/tools/1/annotations/x/0/k~1~0".to_owned(),
                "k/~".to_owned(),
                2
            ),
            ("/tools/1/annotations/d".to_owned(), "d".to_owned(), 3),
            ("/tools".to_owned(), "tools".to_owned(), 2),
        ]
    );
    assert!(duplicates(r#"{"a": {"b": 1}, "b": {"a": 1}, "c": [{"a": 1}, {"a": 2}]}"#).is_empty());
    // Past the linear threshold, names are found through the hash set.
    let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
    let text = format!("{{{}, \"k3\": 0, \"k39\": 1}}", many.join(", "));
    assert_eq!(
        duplicates(&text),
        [
            ("/k3".to_owned(), "k3".to_owned(), 2),
            ("/k39".to_owned(), "k39".to_owned(), 2)
        ]
    );
    for text in ["", "{", r#"{"a": 1, "a""#, "}}}", r#"[{"a":1,"a"#] {
        let _ = duplicates(text);
    }
}

#[test]
fn garbage_never_loops() {
    for text in ["", "{", "[1,", r#"{"a""#, "}}}", "@@@", r#"{"a":}"#, "[,]"] {
        let _ = places(text, &["", "/a", "/0"]);
    }
}

#[test]
fn characters_inside_strings() {
    let text = r#"["a\"bé\u00e9\ud83d\ude00z"]"#;
    let literal = 1..text.len() - 1;
    let at = |offset| &text[char_in_string(text.as_bytes(), literal.clone(), offset).unwrap()];
    assert_eq!(at(0), "a");
    assert_eq!(at(1), "\\\"");
    assert_eq!(at(2), "b");
    assert_eq!(at(3), "é");
    assert_eq!(at(5), "\\u00e9");
    assert_eq!(at(7), "\\ud83d\\ude00");
    assert_eq!(at(11), "z");
    assert_eq!(at(12), "\"");
}

#[test]
fn columns_count_code_points() {
    let text = "{\n  \"é\": 1 }";
    let index = LineIndex::new(text.as_bytes());
    let offset = text.find('1').unwrap();
    let span = index.span(offset..offset + 1);
    assert_eq!((span.line, span.column), (2, 8));
    assert_eq!(index.line_start(2), Some(2));
    assert_eq!(index.line_range(1), Some(0..1));
    assert_eq!(index.line_range(2), Some(2..text.len()));
    assert_eq!(index.line_range(3), None);
}

/// The checkpointed count agrees with a count from the line start at every offset, across
/// block boundaries, multi-byte characters, invalid UTF-8 and line breaks.
#[test]
fn positions_agree_with_a_naive_count() {
    let mut text = Vec::new();
    for i in 0..3000u32 {
        match i % 7 {
            0 => text.extend_from_slice("é".as_bytes()),
            1 => text.extend_from_slice("🦀".as_bytes()),
            2 if i % 91 == 2 => text.push(b'\n'),
            3 => text.push(0xFF),
            _ => text.push(b'a'),
        }
    }
    let index = LineIndex::new(&text);
    for offset in 0..=text.len() + 2 {
        let clamped = offset.min(text.len());
        let line_start = text[..clamped]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = text[..clamped].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = text[line_start..clamped]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count()
            + 1;
        assert_eq!(index.position(offset), (line, column), "offset {offset}");
    }
}
