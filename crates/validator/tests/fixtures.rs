//! Data-driven tests over `fixtures/`: outcomes are asserted, rendered diagnostics snapshotted.
//!
//! Every fixture is its own test case, named after its place (`invalid::R106::typo-in-output-field`,
//! `valid::…`, `adversarial::…`), so `cargo test -p mcp-recovery-validator R106` runs one rule's
//! fixtures and a failure names the file.

// Test helpers fail loudly by design.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_validator::{DefaultLevel, LintOptions, Linter, Report, Severity, rules};

fn main() {
    let mut trials = vec![
        Trial::test("valid::at_least_ten", valid_fixtures_are_at_least_ten),
        Trial::test(
            "invalid::every_directory_names_a_rule",
            invalid_directories_name_rules,
        ),
        Trial::test(
            "adversarial::every_file_has_an_expectation",
            adversarial_fixtures_have_expectations,
        ),
        Trial::test("forty_thousand_tools", plain(forty_thousand_tools)),
        Trial::test("huge_strings", plain(huge_strings)),
        Trial::test(
            "nesting_at_any_depth_ends_with_a_diagnostic",
            plain(nesting_at_any_depth_ends_with_a_diagnostic),
        ),
        Trial::test(
            "lint_value_orders_like_the_source_without_spans",
            plain(lint_value_orders_like_the_source_without_spans),
        ),
    ];
    for path in files(&fixtures().join("valid")) {
        let name = format!("valid::{}", stem(&path));
        trials.push(Trial::test(name, move || valid_fixture(&path)));
    }
    for dir in invalid_dirs() {
        let code = file_name(&dir);
        for path in files(&dir) {
            let name = format!("invalid::{code}::{}", stem(&path));
            let code = code.clone();
            trials.push(Trial::test(name, move || invalid_fixture(&code, &path)));
        }
    }
    for (name, codes) in ADVERSARIAL {
        let trial = format!("adversarial::{}", name.trim_end_matches(".json"));
        trials.push(Trial::test(trial, move || adversarial_fixture(name, codes)));
    }
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}

/// A test that reports by panicking.
fn plain(test: fn()) -> impl FnOnce() -> Result<(), Failed> + Send + 'static {
    move || {
        test();
        Ok(())
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_str().unwrap().to_owned()
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_str().unwrap().to_owned()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// The documents of a fixture directory, sorted (overlays are read beside their document).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file() && !path.to_string_lossy().contains(".overlay."))
        .collect();
    files.sort();
    files
}

/// One line per diagnostic: code, severity, pointer, line:column, message, then the help.
fn render(report: &Report) -> String {
    let mut out = format!("tools: {}\n", report.tools);
    for d in &report.diagnostics {
        let at = d
            .span
            .map_or_else(|| "-".to_owned(), |s| format!("{}:{}", s.line, s.column));
        let pointer = if d.pointer.is_empty() {
            "\"\""
        } else {
            &d.pointer
        };
        writeln!(
            out,
            "{} {} {pointer} {at} {}",
            d.code, d.severity, d.message
        )
        .unwrap();
        if let Some(help) = &d.help {
            writeln!(out, "    help: {help}").unwrap();
        }
    }
    out
}

fn default_linter() -> Linter {
    Linter::new(LintOptions::default()).unwrap()
}

/// The default rules plus `code`, so that advisory rules are seen in their own fixtures.
fn linter_for(code: &str) -> Linter {
    let mut select: Vec<String> = rules()
        .iter()
        .filter(|r| matches!(r.default, DefaultLevel::On(_)))
        .map(|r| r.code.to_owned())
        .collect();
    select.push(code.to_owned());
    Linter::new(LintOptions {
        select,
        ..LintOptions::default()
    })
    .unwrap()
}

fn valid_fixtures_are_at_least_ten() -> Result<(), Failed> {
    let count = files(&fixtures().join("valid")).len();
    if count < 10 {
        return Err(format!("at least 10 valid fixtures, found {count}").into());
    }
    Ok(())
}

fn valid_fixture(path: &Path) -> Result<(), Failed> {
    let report = default_linter().lint_source(&std::fs::read(path).unwrap());
    if report.tools == 0 {
        return Err(format!("{}: no tools", path.display()).into());
    }
    if report
        .diagnostics
        .iter()
        .any(|d| d.severity > Severity::Info)
    {
        return Err(format!("{}:\n{}", path.display(), render(&report)).into());
    }
    Ok(())
}

/// The rule directories under `fixtures/invalid`, sorted.
fn invalid_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures().join("invalid"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    dirs
}

fn invalid_directories_name_rules() -> Result<(), Failed> {
    let dirs = invalid_dirs();
    if dirs.is_empty() {
        return Err("fixtures/invalid is empty".into());
    }
    let strays: Vec<String> = dirs
        .iter()
        .map(|dir| file_name(dir))
        .filter(|code| !rules().iter().any(|r| r.code == code))
        .collect();
    if strays.is_empty() {
        Ok(())
    } else {
        Err(format!("fixtures/invalid/{strays:?} name no rule").into())
    }
}

fn invalid_fixture(code: &str, path: &Path) -> Result<(), Failed> {
    let linter = linter_for(code);
    let source = std::fs::read(path).unwrap();
    let (report, rendered) = match overlay_of(path) {
        Some((overlay, text)) => {
            let both = linter.lint_source_with_overlay(&source, &overlay, &text);
            let rendered = format!(
                "document\n{}overlay\n{}",
                render(&both.document),
                render(&both.overlay)
            );
            let mut report = both.document;
            report.diagnostics.extend(both.overlay.diagnostics);
            (report, rendered)
        }
        None => {
            let report = linter.lint_source(&source);
            let rendered = render(&report);
            (report, rendered)
        }
    };
    insta::assert_snapshot!(format!("{code}_{}", stem(path)), rendered);
    if !report.diagnostics.iter().any(|d| d.code == code) {
        return Err(format!("{} does not yield {code}:\n{rendered}", path.display()).into());
    }
    Ok(())
}

/// The overlay beside a fixture (`NAME.overlay.toml` or `NAME.overlay.json`), parsed, and its text.
fn overlay_of(path: &Path) -> Option<(Overlay, String)> {
    let stem = path.file_stem()?.to_str()?;
    ["toml", "json"].iter().find_map(|ext| {
        let overlay = path.with_file_name(format!("{stem}.overlay.{ext}"));
        let text = std::fs::read_to_string(&overlay).ok()?;
        let format = OverlayFormat::from_file_name(&overlay.to_string_lossy());
        Some((Overlay::parse(&text, format).unwrap(), text))
    })
}

/// Expected outcome of each committed adversarial document.
const ADVERSARIAL: &[(&str, &[&str])] = &[
    ("byte-order-mark.json", &["R001"]),
    ("cyclic-ref.json", &[]),
    ("deep-nesting.json", &["R001"]),
    ("deep-schema.json", &["R106"]),
    ("lone-surrogate.json", &["R001"]),
    ("non-utf8.json", &["R001"]),
    // Schema reasoning cannot judge remote references; the compensator's schema cannot be compiled.
    ("remote-ref.json", &["R119"]),
];

fn adversarial_fixtures_have_expectations() -> Result<(), Failed> {
    let committed: Vec<String> = files(&fixtures().join("adversarial"))
        .iter()
        .map(|path| file_name(path))
        .collect();
    let expected: Vec<String> = ADVERSARIAL.iter().map(|(n, _)| (*n).to_owned()).collect();
    if committed == expected {
        Ok(())
    } else {
        Err(format!("committed {committed:?}, with expectations {expected:?}").into())
    }
}

fn adversarial_fixture(name: &str, codes: &[&str]) -> Result<(), Failed> {
    let path = fixtures().join("adversarial").join(name);
    let report = default_linter().lint_source(&std::fs::read(&path).unwrap());
    let rendered = render(&report);
    for code in codes {
        if !report.diagnostics.iter().any(|d| d.code == *code) {
            return Err(format!("{name} lacks {code}:\n{rendered}").into());
        }
    }
    // What schema reasoning cannot judge (cycles, remote references) is never an error: the only
    // errors are the expected ones.
    if report
        .diagnostics
        .iter()
        .any(|d| d.severity >= Severity::Error && !codes.contains(&d.code))
    {
        return Err(format!("{name}:\n{rendered}").into());
    }
    for d in &report.diagnostics {
        if d.message.chars().count() >= 400 {
            return Err(format!("{name}: message too long: {}", d.message).into());
        }
        if d.span.is_none() {
            return Err(format!("{name}: {} has no span", d.code).into());
        }
    }
    insta::assert_snapshot!(
        format!("adversarial_{}", name.trim_end_matches(".json")),
        rendered
    );
    Ok(())
}

fn forty_thousand_tools() {
    let count = 40_000;
    let mut text = String::from("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[");
    text.push_str(
        r#"{"name":"undo","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}},"annotations":{"idempotentHint":true,"destructiveHint":true}}"#,
    );
    for i in 0..count {
        // Every 1000th tool repeats a name; every 5000th names a compensator that is not listed.
        let name = if i % 1000 == 999 {
            format!("tool_{}", i - 1)
        } else {
            format!("tool_{i}")
        };
        let target = if i % 5000 == 0 {
            format!("missing_{i}")
        } else {
            "undo".to_owned()
        };
        write!(
            text,
            r#",{{"name":"{name}","inputSchema":{{"type":"object","properties":{{"id":{{"type":"string"}}}},"required":["id"]}},"annotations":{{"recovery":{{"strategy":"compensation","compensatingOperation":{{"operationId":"{target}","parameters":{{"id":"$request.body#/id"}}}}}}}}}}"#
        )
        .unwrap();
    }
    text.push_str("]}}");
    let report = default_linter().lint_source(text.as_bytes());
    assert_eq!(report.tools, count + 1);
    let of = |code: &str| report.diagnostics.iter().filter(|d| d.code == code).count();
    assert_eq!(of("R004"), count / 1000);
    assert_eq!(of("R101"), count / 5000);
    assert_eq!(
        report.diagnostics.len(),
        of("R004") + of("R101"),
        "{:?}",
        report.diagnostics.first()
    );
    let last = report.diagnostics.last().unwrap();
    assert_eq!(last.pointer, "/result/tools/40000/name");
    assert_eq!(last.span.unwrap().line, 1);
}

fn huge_strings() {
    let long = "x".repeat(4 << 20);
    let document = serde_json::json!({"tools": [
        {"name": format!("n{long}"), "description": long, "inputSchema": {"type": "object"}},
        {"name": "t", "inputSchema": {"type": "object", "properties": {"p": {"type": "string"}}},
         "annotations": {"recovery": {"strategy": "compensation", "compensatingOperation": {
            "operationId": "t", "parameters": {"p": format!("$request.body#/{long}~2")}}}}}
    ]});
    let text = serde_json::to_vec(&document).unwrap();
    let report = default_linter().lint_source(&text);
    let codes: Vec<&str> = report.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.contains(&"R005"), "{codes:?}");
    assert!(codes.contains(&"R104"), "{codes:?}");
    for d in &report.diagnostics {
        assert!(d.message.chars().count() < 400, "{}", d.message);
    }
    // The invalid escape is at the very end of the binding: the span points there.
    let r104 = report
        .diagnostics
        .iter()
        .find(|d| d.code == "R104")
        .unwrap();
    let span = r104.span.unwrap();
    assert_eq!(&text[span.start..span.end], b"~");
}

fn nesting_at_any_depth_ends_with_a_diagnostic() {
    let linter = default_linter();
    for depth in [1, 64, 127, 128, 129, 10_000, 1_000_000] {
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let report = linter.lint_source(text.as_bytes());
        assert_eq!(
            report.diagnostics.len(),
            if depth == 1 { 0 } else { 1 },
            "depth {depth}"
        );
    }
}

fn lint_value_orders_like_the_source_without_spans() {
    let path = fixtures().join("invalid/R005/bad-names.json");
    let source = std::fs::read(&path).unwrap();
    let value: serde_json::Value = serde_json::from_slice(&source).unwrap();
    let linter = default_linter();
    let from_source = linter.lint_source(&source);
    let from_value = linter.lint_value(&value);
    assert!(from_value.diagnostics.iter().all(|d| d.span.is_none()));
    let strip = |r: &Report| -> Vec<(String, String)> {
        r.diagnostics
            .iter()
            .map(|d| (d.code.to_owned(), d.pointer.clone()))
            .collect()
    };
    assert_eq!(strip(&from_source), strip(&from_value));
}
