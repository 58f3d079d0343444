//! The rule catalog is a public contract: codes, names, docs, fixtures and configuration.

// Test helpers fail loudly by design.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use mcp_recovery_validator::{
    DefaultLevel, LintOptions, Linter, Severity, UnknownRule, find_rule, rules, rules_markdown,
};

#[test]
fn codes_and_names_are_unique_and_well_formed() {
    let mut codes = HashSet::new();
    let mut names = HashSet::new();
    for rule in rules() {
        assert!(codes.insert(rule.code), "duplicate code {}", rule.code);
        assert!(names.insert(rule.name), "duplicate name {}", rule.name);
        assert!(
            rule.code.len() == 4
                && rule.code.starts_with('R')
                && rule.code[1..].bytes().all(|b| b.is_ascii_digit()),
            "{}",
            rule.code
        );
        assert!(
            rule.name
                .split('-')
                .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())),
            "{}",
            rule.name
        );
    }
    let ordered: Vec<&str> = rules().iter().map(|r| r.code).collect();
    let mut sorted = ordered.clone();
    sorted.sort_unstable();
    assert_eq!(ordered, sorted, "the catalog is ordered by code");
}

#[test]
fn code_list_snapshot() {
    let list: String = rules()
        .iter()
        .map(|r| format!("{} {} {}\n", r.code, r.name, r.default.as_str()))
        .collect();
    insta::assert_snapshot!("codes", list);
}

#[test]
fn every_rule_has_its_doc_headings() {
    for rule in rules() {
        for heading in ["## What it does\n", "## Why is this bad?\n", "## Example\n"] {
            assert!(
                rule.docs.contains(heading),
                "{} lacks {heading:?}",
                rule.code
            );
        }
        assert!(
            !rule
                .docs
                .lines()
                .any(|l| l.starts_with(' ') && l.trim_start().starts_with('#'))
        );
        assert!(!rule.summary.is_empty(), "{}", rule.code);
    }
}

#[test]
fn every_rule_has_invalid_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid");
    for rule in rules() {
        let dir = root.join(rule.code);
        let count = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .count();
        let wanted = if matches!(rule.code, "R104" | "R106" | "R111") {
            2
        } else {
            1
        };
        assert!(
            count >= wanted,
            "{} has {count} fixtures, wants {wanted}",
            rule.code
        );
    }
}

#[test]
fn rules_markdown_has_an_anchor_per_rule() {
    let markdown = rules_markdown();
    for rule in rules() {
        let anchor = format!("<a id=\"{}\"></a>", rule.code.to_ascii_lowercase());
        assert!(markdown.contains(&anchor), "{anchor}");
        assert!(
            rule.url()
                .ends_with(&format!("spec/rules.md#{}", rule.code.to_ascii_lowercase()))
        );
        assert!(markdown.contains(&format!("## {} `{}`", rule.code, rule.name)));
    }
    assert!(markdown.contains("### What it does"));
}

#[test]
fn find_rule_by_code_or_name() {
    assert_eq!(
        find_rule("r101").map(|r| r.name),
        Some("dangling-operation-id")
    );
    assert_eq!(find_rule("type-mismatch").map(|r| r.code), Some("R111"));
    assert_eq!(find_rule("R999"), None);
}

const DESTRUCTIVE: &[u8] = br#"{"tools": [{"name": "drop_table", "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": false, "destructiveHint": true}}]}"#;

fn codes(options: LintOptions, source: &[u8]) -> Vec<(&'static str, Severity)> {
    Linter::new(options)
        .unwrap()
        .lint_source(source)
        .diagnostics
        .iter()
        .map(|d| (d.code, d.severity))
        .collect()
}

#[test]
fn advisory_rules_fire_only_when_selected() {
    for rule in rules() {
        assert_eq!(
            rule.default == DefaultLevel::Off,
            matches!(rule.code, "R201" | "R202" | "R301" | "R302"),
            "{}",
            rule.code
        );
    }
    assert!(codes(LintOptions::default(), DESTRUCTIVE).is_empty());
    let selected = LintOptions {
        select: vec!["R201".into(), "destructive-without-recovery".into()],
        ..LintOptions::default()
    };
    assert_eq!(
        codes(selected, DESTRUCTIVE),
        [("R201", Severity::Warning), ("R202", Severity::Warning)]
    );
}

#[test]
fn ignore_and_severity_overrides() {
    let source = br#"[{"name": "a b", "inputSchema": {"type": "object"}}, {"name": "a b", "inputSchema": {"type": "object"}}]"#;
    assert_eq!(
        codes(LintOptions::default(), source),
        [
            ("R005", Severity::Warning),
            ("R004", Severity::Error),
            ("R005", Severity::Warning)
        ]
    );
    let options = LintOptions {
        ignore: vec!["duplicate-tool-name".into()],
        severity: BTreeMap::from([("R005".to_owned(), Severity::Error)]),
        ..LintOptions::default()
    };
    assert_eq!(
        codes(options, source),
        [("R005", Severity::Error), ("R005", Severity::Error)]
    );
}

#[test]
fn unknown_rules_are_rejected() {
    for options in [
        LintOptions {
            select: vec!["R999".into()],
            ..LintOptions::default()
        },
        LintOptions {
            ignore: vec!["no-such-rule".into()],
            ..LintOptions::default()
        },
        LintOptions {
            severity: BTreeMap::from([("R00".to_owned(), Severity::Info)]),
            ..LintOptions::default()
        },
    ] {
        assert!(matches!(Linter::new(options), Err(UnknownRule(_))));
    }
}

#[test]
fn diagnostics_carry_their_docs_url() {
    let report = Linter::new(LintOptions::default())
        .unwrap()
        .lint_source(b"nope");
    let d = &report.diagnostics[0];
    assert_eq!((d.code, d.name), ("R001", "invalid-json"));
    assert_eq!(
        d.url,
        "https://github.com/mcp-recovery/mcp-recovery/blob/main/spec/rules.md#r001"
    );
    let span = d.span.unwrap();
    // `n` may start `null`; the fault is the `o`.
    assert_eq!((span.start, span.line, span.column), (1, 1, 2));
}

#[test]
fn presets_follow_the_default_levels() {
    use mcp_recovery_validator::Preset;
    for rule in rules() {
        assert!(Preset::Strict.includes(rule), "{} not strict", rule.code);
        assert_eq!(
            Preset::Recommended.includes(rule),
            matches!(rule.default, DefaultLevel::On(_)),
            "{}: recommended runs exactly the rules on by default",
            rule.code
        );
    }
}
