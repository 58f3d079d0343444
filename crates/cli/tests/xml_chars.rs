//! Characters XML 1.0 cannot carry — the noncharacters `U+FFFE`, `U+FFFF` and their kind in every
//! plane, C0 controls — in a tool name, a file name and a server's stderr: the JUnit report holds
//! their visible escape and stays a well-formed document.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::Output;

use common::run_in;
use serde_json::json;

/// The `Char` production of XML 1.0: any other character makes the document ill-formed.
fn is_xml_char(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..
    )
}

/// The report on stdout, after checking that every character of it is an XML `Char`, that it
/// is UTF-8, and that each element opened is closed (attribute values hold no raw `<` or `"`).
fn junit_of(what: &str, output: &Output) -> String {
    let text = String::from_utf8(output.stdout.clone()).expect("the report is UTF-8");
    let bad: Vec<char> = text.chars().filter(|&c| !is_xml_char(c)).collect();
    assert!(bad.is_empty(), "{what}: {bad:?} in {text}");
    assert!(
        text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"),
        "{what}: {text}"
    );
    for tag in ["testsuites", "testsuite", "testcase"] {
        let opened = text.matches(&format!("<{tag} ")).count();
        let closed = text.matches(&format!("</{tag}>")).count();
        let empty = text
            .split(&format!("<{tag} "))
            .skip(1)
            .filter(|rest| rest.split('>').next().unwrap().ends_with('/'))
            .count();
        assert_eq!(opened, closed + empty, "{what}: <{tag}> in {text}");
    }
    for line in text.lines() {
        // Outside attribute values a line holds an even number of quotes.
        assert_eq!(line.matches('"').count() % 2, 0, "{what}: {line}");
    }
    text
}

fn lint_junit(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["lint", "--format", "junit"];
    all.extend_from_slice(args);
    run_in(dir, &all)
}

#[test]
fn noncharacters_in_a_tool_name_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let tools = json!({"tools": [
        {"name": "a\u{fffe}b\u{ffff}", "inputSchema": {"type": "object"}},
        {
            "name": "c\u{fdd0}d\u{1fffe}e\u{10ffff}",
            "description": "nul \u{0} esc \u{1b} vt \u{b} \u{fdef}",
            "inputSchema": {"type": "object"},
        },
    ]});
    std::fs::write(dir.path().join("t.json"), tools.to_string()).unwrap();
    let output = lint_junit(dir.path(), &["t.json"]);
    let text = junit_of("tool names", &output);
    assert!(
        text.contains(r"(a\u{fffe}b\u{ffff}) at /tools/0/name"),
        "{text}"
    );
    assert!(text.contains(r"c\u{fdd0}d\u{1fffe}e\u{10ffff}"), "{text}");
    assert!(
        text.contains(r#"message="tool name &apos;a\u{fffe}b\u{ffff}&apos;"#),
        "{text}"
    );
}

#[test]
fn noncharacters_in_file_names_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let tools = json!({"tools": [{"name": "ok", "inputSchema": {"type": "object"}}]});
    std::fs::write(dir.path().join("t\u{fffe}.json"), tools.to_string()).unwrap();
    let output = lint_junit(
        dir.path(),
        &["t\u{fffe}.json", "missing\u{ffff}\u{1b}.json"],
    );
    let text = junit_of("file names", &output);
    assert!(
        text.contains(r#"<testsuite name="t\u{fffe}.json""#),
        "{text}"
    );
    assert!(
        text.contains(r#"<testsuite name="missing\u{ffff}\u{1b}.json""#),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn noncharacters_on_a_server_stderr_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let script = "printf 'boom \\357\\277\\276 \\357\\277\\277 \\001 x\\n' >&2; exit 3";
    let output = lint_junit(dir.path(), &["--stdio", "--", "sh", "-c", script]);
    let text = junit_of("server stderr", &output);
    assert!(text.contains("<error "), "{text}");
    assert!(text.contains(r"boom \u{fffe} \u{ffff} \u{1} x"), "{text}");
}
