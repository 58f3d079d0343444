//! The tools read a part at a time give the report the whole document gives.

use std::fmt::Write as _;

use super::*;

fn linters() -> Vec<Linter> {
    let all = Rule::ALL.iter().map(|r| r.def().code.to_owned()).collect();
    [
        LintOptions::default(),
        LintOptions {
            preset: Preset::Strict,
            ..LintOptions::default()
        },
        LintOptions {
            select: all,
            ..LintOptions::default()
        },
    ]
    .into_iter()
    .map(|options| Linter::new(options).unwrap())
    .collect()
}

/// Both reads of `source` under every linter; whether the parts read it.
fn same_report(source: &[u8]) -> bool {
    let mut read = false;
    for linter in linters() {
        let whole = linter.lint_source_whole(source);
        if let Some(parts) = linter.lint_source_in_parts(source) {
            assert_eq!(parts, whole, "{}", String::from_utf8_lossy(source));
            read = true;
        }
    }
    read
}

#[test]
fn every_fixture_reads_alike_in_parts() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures"));
    let mut read = 0;
    for path in mcp_recovery_base::walk::json_documents(root).documents {
        read += usize::from(same_report(&std::fs::read(&path).unwrap()));
    }
    assert!(read > 50, "{read}");
}

/// A tool of the generated list: `i` names a compensator `to`, with a constant `c` checked
/// against the compensator's pattern.
fn tool(out: &mut String, name: &str, to: Option<&str>, constant: &str, extra: &str) {
    let recovery = to.map_or(String::new(), |to| {
        format!(
            r#","annotations":{{"destructiveHint":true,"recovery":{{"strategy":"compensation","compensatingOperation":{{"operationId":"{to}","parameters":{{"id":"$response.body#/id","code":"{constant}"}}}}}}}}"#
        )
    });
    write!(
        out,
        r#"{{"name":"{name}","inputSchema":{{"type":"object","properties":{{"id":{{"type":"string"}},"code":{{"type":"string","pattern":"^[0-9]+$"}}}},"required":["id"]}},"outputSchema":{{"type":"object","properties":{{"id":{{"type":"string"}}}}}}{recovery}{extra}}},"#
    )
    .unwrap();
}

#[test]
fn lists_longer_than_a_part_read_alike() {
    let count = 3 * PART + 7;
    let mut text = String::from(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":["#);
    for i in 0..count {
        let name = match i {
            // Names written again in later parts.
            _ if i % 700 == 699 => format!("t{}", i - 600),
            _ => format!("t{i}"),
        };
        // Compensators before, after and inside the part; some missing, some near a name.
        let to = match i % 9 {
            0 => Some(format!("t{}", (i + PART + 3) % count)),
            1 => Some(format!("t{}", i.saturating_sub(PART + 1))),
            2 => Some(format!("t{}", i + 1)),
            3 => Some(format!("missing{i}")),
            4 => Some(format!("t{i}x")),
            5 => Some("remote".to_owned()),
            _ => None,
        };
        // Constants that fail the pattern, more than the file's budget of validations.
        let constant = if i % 2 == 0 { "12x" } else { "123" };
        let extra = if i % 97 == 0 {
            format!(
                r#","_meta":{{"{OVERLAY_META}":{{"before":{{"read":"t{}","arguments":{{"id":"$request.body#/id"}}}}}}}}"#,
                (i + 2 * PART) % count
            )
        } else {
            String::new()
        };
        tool(&mut text, &name, to.as_deref(), constant, &extra);
    }
    // A compensator whose schema cannot be compiled, named from every part.
    text.push_str(
        r#"{"name":"remote","inputSchema":{"type":"object","properties":{"id":{"$ref":"https://example.com/id.json"}}},"annotations":{"readOnlyHint":false,"idempotentHint":true}},"#,
    );
    text.push_str(r#"3,{"inputSchema":{}}]}}"#);
    assert!(same_report(text.as_bytes()));
    let report = linters()[0].lint_source_in_parts(text.as_bytes()).unwrap();
    for code in ["R004", "R101", "R111", "R119"] {
        assert!(
            report.diagnostics.iter().any(|d| d.code == code),
            "{code} in {:?}",
            report
                .diagnostics
                .iter()
                .map(|d| d.code)
                .collect::<Vec<_>>()
        );
    }
    let r119: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == "R119")
        .collect();
    assert_eq!(r119.len(), 1);
    assert!(
        r119[0].message.contains("'t5', 't14'"),
        "{}",
        r119[0].message
    );
}

const OVERLAY_META: &str = mcp_recovery_model::OVERLAY_META_KEY;

#[test]
fn what_the_parts_cannot_place_is_left_to_the_whole_read() {
    let linter = Linter::new(LintOptions::default()).unwrap();
    for text in [
        r#"{"tools": [{"name": "a", "name": "b", "inputSchema": {"type": "object"}}]}"#,
        r#"{"tools": [], "tools": []}"#,
        r#"{"tools": [{"name": "a"},]}"#,
        "\u{feff}{\"tools\": []}",
        r#"{"error": {"code": 1, "message": "no"}}"#,
    ] {
        assert_eq!(linter.lint_source_in_parts(text.as_bytes()), None, "{text}");
    }
}
