//! Every output format on the repository's fixtures: snapshots of the rendered output, and the
//! contracts that must hold whatever the fixtures hold (the output contract in the README).
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;

use common::{bin, code, codes, lint_json, root};
use insta_cmd::assert_cmd_snapshot;
use mcp_recovery_validator::find_rule;
use serde_json::Value;

/// One error, one warning and one info rule, and a document that is not JSON.
const SAMPLE: [&str; 4] = [
    "fixtures/invalid/R001",
    "fixtures/invalid/R101",
    "fixtures/invalid/R107",
    "fixtures/invalid/R114",
];

#[test]
fn human() {
    assert_cmd_snapshot!(bin().arg("lint").args(SAMPLE));
}

#[test]
fn json() {
    assert_cmd_snapshot!(bin().args(["lint", "--format", "json"]).args(SAMPLE));
}

#[test]
fn sarif() {
    assert_cmd_snapshot!(bin().args(["lint", "--format", "sarif"]).args(SAMPLE));
}

#[test]
fn github() {
    assert_cmd_snapshot!(bin().args(["lint", "--format", "github"]).args(SAMPLE));
}

#[test]
fn valid_fixtures_are_clean() {
    assert_cmd_snapshot!(bin().args(["lint", "fixtures/valid"]));
    let (status, report) = lint_json(&root(), &["fixtures/valid"]);
    assert_eq!(status, 0, "{report}");
    assert!(report["summary"]["files"].as_u64().unwrap() > 0);
    assert_eq!(report["summary"]["errors"], 0, "{report}");
    assert_eq!(report["summary"]["warnings"], 0, "{report}");
}

fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn json_contract() {
    let (status, report) = lint_json(&root(), &["fixtures/invalid", "fixtures/valid"]);
    assert_eq!(status, 1);
    common::assert_lint_report(&report);
    assert_eq!(
        keys(&report),
        BTreeSet::from(["version", "summary", "diagnostics", "sources"])
    );
    assert_eq!(report["version"], 1);
    let summary = &report["summary"];
    assert_eq!(
        keys(summary),
        BTreeSet::from(["files", "servers", "tools", "errors", "warnings", "infos"])
    );
    for key in ["files", "servers", "tools", "errors", "warnings", "infos"] {
        assert!(summary[key].is_u64(), "{key}");
    }
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert!(!diagnostics.is_empty());
    let mut counts = [0u64; 3];
    for d in diagnostics {
        assert_eq!(
            keys(d),
            BTreeSet::from([
                "code", "name", "severity", "message", "file", "tool", "pointer", "line", "column",
                "help", "url"
            ]),
            "{d}"
        );
        let code = d["code"].as_str().unwrap();
        assert!(code.len() == 4 && code.starts_with('R'), "{d}");
        let rule = find_rule(code).unwrap();
        assert_eq!(d["name"], rule.name);
        match d["severity"].as_str().unwrap() {
            "error" => counts[0] += 1,
            "warning" => counts[1] += 1,
            "info" => counts[2] += 1,
            other => panic!("severity {other}"),
        }
        assert!(!d["message"].as_str().unwrap().is_empty());
        assert!(d["file"].as_str().unwrap().starts_with("fixtures/"), "{d}");
        assert!(d["tool"].is_null() || d["tool"].is_string());
        let pointer = d["pointer"].as_str().unwrap();
        assert!(pointer.is_empty() || pointer.starts_with('/'), "{d}");
        // Files have source text: positions are there, 1-based.
        assert!(d["line"].as_u64().unwrap() >= 1, "{d}");
        assert!(d["column"].as_u64().unwrap() >= 1, "{d}");
        assert!(d["help"].is_null() || d["help"].is_string());
        assert!(d["url"].as_str().unwrap().starts_with("https://"));
    }
    assert_eq!(summary["errors"], counts[0]);
    assert_eq!(summary["warnings"], counts[1]);
    assert_eq!(summary["infos"], counts[2]);
    // One source per file, in order, each linted with its tools and findings counted.
    let sources = report["sources"].as_array().unwrap();
    assert_eq!(sources.len() as u64, summary["files"].as_u64().unwrap());
    let mut tools = 0;
    for source in sources {
        assert_eq!(
            keys(source),
            BTreeSet::from([
                "name", "kind", "status", "error", "protocol", "tools", "findings"
            ]),
            "{source}"
        );
        assert_eq!(source["kind"], "file");
        assert_eq!(source["status"], "linted");
        assert!(source["error"].is_null() && source["protocol"].is_null());
        let name = source["name"].as_str().unwrap();
        let findings = diagnostics.iter().filter(|d| d["file"] == name).count();
        assert_eq!(source["findings"], findings, "{source}");
        tools += source["tools"].as_u64().unwrap();
    }
    assert_eq!(summary["tools"], tools);
}

#[test]
fn sarif_structure() {
    let output = bin()
        .args(["lint", "--format", "sarif", "fixtures/invalid"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 1);
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    let (_, report) = lint_json(&root(), &["fixtures/invalid"]);
    assert_eq!(log["version"], "2.1.0");
    assert!(
        log["$schema"]
            .as_str()
            .unwrap()
            .contains("sarif-schema-2.1.0")
    );
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "mcp-recovery");
    assert!(
        driver["informationUri"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    let rules = driver["rules"].as_array().unwrap();
    for rule in rules {
        let info = find_rule(rule["id"].as_str().unwrap()).unwrap();
        assert_eq!(rule["name"], info.name);
        assert_eq!(rule["shortDescription"]["text"], info.summary);
        assert!(rule["helpUri"].as_str().unwrap().starts_with("https://"));
        let level = rule["defaultConfiguration"]["level"].as_str().unwrap();
        assert!(["error", "warning", "note"].contains(&level));
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        report["diagnostics"].as_array().unwrap().len()
    );
    assert_eq!(
        results
            .iter()
            .map(|r| r["ruleId"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>(),
        codes(&report)
    );
    for (result, diagnostic) in results
        .iter()
        .zip(report["diagnostics"].as_array().unwrap())
    {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
        let level = match diagnostic["severity"].as_str().unwrap() {
            "info" => "note",
            other => other,
        };
        assert_eq!(result["level"], level);
        let location = &result["locations"][0];
        let physical = &location["physicalLocation"];
        let uri = physical["artifactLocation"]["uri"].as_str().unwrap();
        assert!(uri.starts_with("fixtures/invalid/"), "{uri}");
        let region = &physical["region"];
        assert_eq!(region["startLine"], diagnostic["line"]);
        assert_eq!(region["startColumn"], diagnostic["column"]);
        let start = (region["startLine"].as_u64(), region["startColumn"].as_u64());
        let end = (region["endLine"].as_u64(), region["endColumn"].as_u64());
        assert!(end >= start, "{result}");
        if let Some(logical) = location["logicalLocations"].get(0) {
            assert_eq!(logical["fullyQualifiedName"], diagnostic["pointer"]);
            if let Some(tool) = diagnostic["tool"].as_str() {
                assert_eq!(logical["name"], tool);
            }
        }
    }
}

#[test]
fn github_lines_are_one_command_per_diagnostic() {
    let output = bin()
        .args(["lint", "--format", "github", "fixtures/invalid"])
        .output()
        .unwrap();
    assert_eq!(code(&output), 1);
    let (_, report) = lint_json(&root(), &["fixtures/invalid"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), report["diagnostics"].as_array().unwrap().len());
    for (line, d) in lines.iter().zip(report["diagnostics"].as_array().unwrap()) {
        let command = match d["severity"].as_str().unwrap() {
            "error" => "::error ",
            "warning" => "::warning ",
            _ => "::notice ",
        };
        assert!(line.starts_with(command), "{line}");
        let title = format!(
            "title={} {}::",
            d["code"].as_str().unwrap(),
            d["name"].as_str().unwrap()
        );
        assert!(line.contains(&title), "{line}");
    }
    // The summary goes to the log, not among the commands.
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains(" files, "), "{stderr}");
}
