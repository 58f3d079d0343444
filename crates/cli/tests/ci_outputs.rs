//! The CI-facing outputs: `--output-file`, the Markdown, GitLab Code Quality and JUnit formats,
//! SARIF fingerprints and suppressions, baselines and per-file/per-tool overrides.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;
use std::path::Path;

use common::{bin, bin_in, code, lint_json, root, run_in};
use insta_cmd::assert_cmd_snapshot;
use serde_json::Value;

/// One error, one warning and one info rule, a document that is not JSON, and a file whose
/// tool names are built to break every format.
const SAMPLE: [&str; 5] = [
    "fixtures/invalid/R001",
    "fixtures/invalid/R101",
    "fixtures/invalid/R107",
    "fixtures/invalid/R114",
    "fixtures/ci/hostile-names.json",
];

fn stdout_of(args: &[&str]) -> String {
    let output = bin().args(args).output().unwrap();
    String::from_utf8(output.stdout).unwrap()
}

fn lint_stdout(format: &str) -> String {
    let mut args = vec!["lint", "--format", format];
    args.extend_from_slice(&SAMPLE);
    stdout_of(&args)
}

#[test]
fn markdown() {
    assert_cmd_snapshot!(bin().args(["lint", "--format", "markdown"]).args(SAMPLE));
}

#[test]
fn gitlab() {
    assert_cmd_snapshot!(bin().args(["lint", "--format", "gitlab"]).args(SAMPLE));
}

#[test]
fn junit() {
    assert_cmd_snapshot!(bin().args(["lint", "--format", "junit"]).args(SAMPLE));
}

#[test]
fn one_run_writes_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let formats = [
        "human", "json", "sarif", "github", "markdown", "gitlab", "junit",
    ];
    let mut args: Vec<String> = ["lint", "--format", "json"].map(String::from).to_vec();
    for format in formats {
        let path = dir.path().join(format!("report.{format}"));
        args.push("--output-file".into());
        args.push(format!("{format}={}", path.display()));
    }
    args.extend(SAMPLE.map(String::from));
    let output = bin().args(&args).output().unwrap();
    assert_eq!(code(&output), 1);
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        lint_stdout("json")
    );
    for format in formats {
        let written = std::fs::read_to_string(dir.path().join(format!("report.{format}"))).unwrap();
        assert_eq!(written, lint_stdout(format), "{format}");
    }
}

#[test]
fn bad_output_files_fail_before_linting() {
    for (arg, expected) in [
        (
            "xml=out.xml",
            "unknown format 'xml' (one of: human, json, sarif",
        ),
        ("markdown=", "the path is empty"),
        ("out.md", "expected FORMAT=PATH"),
    ] {
        let output = bin()
            .args(["lint", "--output-file", arg, "fixtures/valid"])
            .output()
            .unwrap();
        assert_eq!(code(&output), 2, "{arg}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains(expected), "{arg}: {stderr}");
    }
    let output = bin()
        .args([
            "lint",
            "--output-file",
            "markdown=/nonexistent-dir/x/summary.md",
            "fixtures/valid",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("cannot write /nonexistent-dir/x/summary.md"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

/// Every issue passes the schema GitLab's own parser validates each issue with, uses one of
/// GitLab's severities, and has a fingerprint no other issue has.
#[test]
fn gitlab_issues_pass_gitlabs_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("crates/cli/tests/schemas/gitlab-codeclimate.json"))
            .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let report: Value = serde_json::from_str(&lint_stdout("gitlab")).unwrap();
    let issues = report.as_array().unwrap();
    let (_, json) = lint_json(&root(), &SAMPLE);
    assert_eq!(issues.len(), json["diagnostics"].as_array().unwrap().len());
    let mut fingerprints = HashSet::new();
    for issue in issues {
        let errors: Vec<String> = validator
            .iter_errors(issue)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{issue}: {errors:?}");
        let severity = issue["severity"].as_str().unwrap();
        assert!(
            ["info", "minor", "major", "critical", "blocker"].contains(&severity),
            "{issue}"
        );
        assert!(fingerprints.insert(issue["fingerprint"].as_str().unwrap().to_owned()));
        assert!(issue["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        assert!(
            issue["location"]["path"]
                .as_str()
                .unwrap()
                .starts_with("fixtures/")
        );
    }
}

/// Input text never becomes markup: the hostile tool name stays inside one table cell, and
/// no raw `<`, `|` or line break from input reaches the report.
#[test]
fn markdown_escapes_input() {
    let text = stdout_of(&[
        "lint",
        "--format",
        "markdown",
        "fixtures/ci/hostile-names.json",
    ]);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| ")).collect();
    // The header row and two findings (R005 on the name, R101 on the operation id).
    assert_eq!(rows.len(), 3, "{text}");
    let unescaped_pipes = |row: &str| {
        let bytes = row.as_bytes();
        (0..bytes.len())
            .filter(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\'))
            .count()
    };
    for row in &rows[1..] {
        assert_eq!(unescaped_pipes(row), 6, "{row}");
        assert!(!row.contains("<script>") && !row.contains("</failure>"));
    }
    assert!(!text.contains('\u{7}') && !text.contains('\u{1b}'));
}

/// The JUnit report of the hostile names has exactly the elements we wrote.
#[test]
fn junit_escapes_input() {
    let text = stdout_of(&[
        "lint",
        "--format",
        "junit",
        "fixtures/ci/hostile-names.json",
    ]);
    assert_eq!(text.matches("<testcase ").count(), 2, "{text}");
    assert_eq!(text.matches("<failure ").count(), 2, "{text}");
    assert_eq!(text.matches("</testcase>").count(), 2, "{text}");
    assert!(!text.contains("<script>") && !text.contains("]]>"));
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
}

#[test]
fn sarif_fingerprints_and_automation_details() {
    let log: Value = serde_json::from_str(&lint_stdout("sarif")).unwrap();
    let run = &log["runs"][0];
    assert_eq!(run["automationDetails"]["id"], "mcp-recovery/lint/");
    let mut seen = HashSet::new();
    for result in run["results"].as_array().unwrap() {
        let fingerprint = result["partialFingerprints"]["mcpRecoveryFinding/v1"]
            .as_str()
            .unwrap();
        assert_eq!(fingerprint.len(), 16);
        assert!(seen.insert(fingerprint.to_owned()), "{result}");
        assert!(result.get("suppressions").is_none());
    }
    // Stable across runs.
    assert_eq!(lint_stdout("sarif"), lint_stdout("sarif"));
}

/// SARIF lists every source in `run.artifacts` as an analysis target, as the JSON report's
/// `sources` does: one linted clean, one with a finding, one that could not be read; each
/// result and notification points at its artifact by index.
#[test]
fn sarif_lists_every_source_as_an_analysis_target() {
    let dir = tempfile::tempdir().unwrap();
    let copy = |fixture: &str, name: &str| {
        std::fs::copy(root().join(fixture), dir.path().join(name)).unwrap();
    };
    copy("fixtures/valid/both-carriers-agree.json", "clean.json");
    copy(
        "fixtures/invalid/R101/typo-in-operation-id.json",
        "finding.json",
    );
    let files = ["clean.json", "finding.json", "missing.json"];
    let output = run_in(
        dir.path(),
        &[&["lint", "--format", "sarif"][..], &files].concat(),
    );
    assert_eq!(code(&output), 2);
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    common::assert_sarif(&log);
    let run = &log["runs"][0];
    let artifacts = run["artifacts"].as_array().unwrap();
    let targets: Vec<&str> = artifacts
        .iter()
        .filter(|a| a["roles"] == serde_json::json!(["analysisTarget"]))
        .map(|a| a["location"]["uri"].as_str().unwrap())
        .collect();
    assert_eq!(targets, files, "{run}");
    let notifications = &run["invocations"][0]["toolExecutionNotifications"];
    let located = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .chain(notifications.as_array().unwrap());
    let mut pointed = Vec::new();
    for item in located {
        let location = &item["locations"][0]["physicalLocation"]["artifactLocation"];
        let index = usize::try_from(location["index"].as_u64().unwrap()).unwrap();
        assert_eq!(
            artifacts[index]["location"]["uri"], location["uri"],
            "{item}"
        );
        pointed.push(location["uri"].as_str().unwrap());
    }
    assert_eq!(pointed, ["finding.json", "missing.json"]);
}

/// A scratch project holding a copy of one fixture as `tools.json`.
fn project(fixture: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join(fixture), dir.path().join("tools.json")).unwrap();
    dir
}

#[test]
fn baseline_accepts_known_findings_and_fails_on_stale_ones() {
    let dir = project("fixtures/invalid/R101/typo-in-operation-id.json");
    let output = run_in(
        dir.path(),
        &["lint", "--write-baseline", "baseline.json", "tools.json"],
    );
    assert_eq!(code(&output), 0, "{output:?}");
    let baseline: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("baseline.json")).unwrap())
            .unwrap();
    assert_eq!(baseline["version"], 1);
    let entries = baseline["findings"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["file"], "tools.json");
    assert_eq!(entries[0]["tool"], "create_invoice");
    assert_eq!(entries[0]["code"], "R101");

    // The accepted finding does not fail, whatever the spelling of the path.
    for path in ["tools.json", "./tools.json"] {
        let output = run_in(dir.path(), &["lint", "--baseline", "baseline.json", path]);
        assert_eq!(code(&output), 0, "{output:?}");
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(stdout.contains("(1 baselined)"), "{stdout}");
    }
    let (status, report) = lint_json(dir.path(), &["--baseline", "baseline.json", "tools.json"]);
    assert_eq!(status, 0);
    assert_eq!(report["summary"]["errors"], 0);
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 0);

    // SARIF keeps it, marked as suppressed.
    let output = run_in(
        dir.path(),
        &[
            "lint",
            "--format",
            "sarif",
            "--baseline",
            "baseline.json",
            "tools.json",
        ],
    );
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["suppressions"][0]["kind"], "external");

    // A new finding still fails: the same fault in another file is not in the baseline.
    std::fs::copy(
        dir.path().join("tools.json"),
        dir.path().join("second.json"),
    )
    .unwrap();
    let output = run_in(
        dir.path(),
        &[
            "lint",
            "--baseline",
            "baseline.json",
            "tools.json",
            "second.json",
        ],
    );
    assert_eq!(code(&output), 1);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("1 error, 0 warnings, 0 infos (1 baselined)"),
        "{stdout}"
    );
    std::fs::remove_file(dir.path().join("second.json")).unwrap();

    // Fixing the finding makes its entry stale, which fails until the entry goes.
    std::fs::copy(
        root().join("fixtures/invalid/R101/typo-in-operation-id.json"),
        dir.path().join("tools.json"),
    )
    .unwrap();
    let fixed = std::fs::read_to_string(dir.path().join("tools.json"))
        .unwrap()
        .replace("void_invoce", "void_invoice");
    std::fs::write(dir.path().join("tools.json"), fixed).unwrap();
    let output = run_in(
        dir.path(),
        &["lint", "--baseline", "baseline.json", "tools.json"],
    );
    assert_eq!(code(&output), 1);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("1 entry of baseline.json no longer matches a finding"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tools.json create_invoice R101 /tools/0/annotations/recovery"),
        "{stderr}"
    );

    // A run over other files says nothing about this one's entries.
    std::fs::copy(
        root().join("fixtures/valid/compensate-record-store.json"),
        dir.path().join("other.json"),
    )
    .unwrap();
    let output = run_in(
        dir.path(),
        &["lint", "--baseline", "baseline.json", "other.json"],
    );
    assert_eq!(code(&output), 0, "{output:?}");
}

/// A file that is gone from a directory the run walks (deleted, renamed, no longer JSON) leaves
/// its entries unmatched: they are stale like any other, so the baseline shrinks.
#[test]
fn entries_of_a_deleted_file_are_stale() {
    let dir = tempfile::tempdir().unwrap();
    let servers = dir.path().join("servers");
    std::fs::create_dir(&servers).unwrap();
    let broken = root().join("fixtures/invalid/R101/typo-in-operation-id.json");
    for name in ["a.json", "b.json"] {
        std::fs::copy(&broken, servers.join(name)).unwrap();
    }
    let output = run_in(
        dir.path(),
        &["lint", "--write-baseline", "baseline.json", "servers"],
    );
    assert_eq!(code(&output), 0, "{output:?}");
    let lint = |args: &[&str]| {
        let mut full = vec!["lint", "--baseline", "baseline.json"];
        full.extend_from_slice(args);
        let output = run_in(dir.path(), &full);
        (code(&output), String::from_utf8(output.stderr).unwrap())
    };
    assert_eq!(lint(&["servers"]).0, 0);
    std::fs::remove_file(servers.join("b.json")).unwrap();
    for walked in ["servers", "./servers/"] {
        let (status, stderr) = lint(&[walked]);
        assert_eq!(status, 1, "{walked}: {stderr}");
        assert!(
            stderr.contains("1 entry of baseline.json no longer matches a finding")
                && stderr.contains("servers/b.json create_invoice R101"),
            "{stderr}"
        );
    }
    // Renamed: the old name's entry is stale, the new name's finding is new.
    std::fs::rename(servers.join("a.json"), servers.join("c.json")).unwrap();
    let (status, stderr) = lint(&["servers"]);
    assert_eq!(status, 1);
    assert!(stderr.contains("2 entries of baseline.json"), "{stderr}");
    // A run naming one file says nothing about the others that are there, but the entries of a
    // file that is gone are stale whatever the run names.
    std::fs::rename(servers.join("c.json"), servers.join("a.json")).unwrap();
    for named in ["servers/a.json", "./servers/a.json"] {
        let (status, stderr) = lint(&[named]);
        assert_eq!(status, 1, "{named}: {stderr}");
        assert!(
            stderr.contains("1 entry of baseline.json no longer matches a finding")
                && stderr.contains("servers/b.json create_invoice R101"),
            "{stderr}"
        );
        assert!(!stderr.contains("note: none of the files"), "{stderr}");
    }
    std::fs::copy(&broken, servers.join("b.json")).unwrap();
    assert_eq!(lint(&["servers/a.json"]).0, 0);

    // From another working directory none of the baseline's files exists: every entry is stale,
    // and the run says why.
    let elsewhere = servers.join("sub");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::copy(&broken, elsewhere.join("a.json")).unwrap();
    let baseline = dir.path().join("baseline.json");
    let output = run_in(
        &elsewhere,
        &["lint", "--baseline", baseline.to_str().unwrap(), "a.json"],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(code(&output), 1, "{stderr}");
    assert!(
        stderr.contains("2 entries of") && stderr.contains("note: none of the files"),
        "{stderr}"
    );
}

#[test]
fn bad_baselines_are_errors_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("not json", "baseline bad.json: not JSON"),
        (
            "{\"version\": 1, \"findings\": {}}",
            "baseline bad.json: /findings: expected an array",
        ),
        (
            "{\"version\": 1, \"findings\": [{\"file\": \"a\", \"code\": 1, \"pointer\": \"\"}]}",
            "baseline bad.json: /findings/0/code: expected a string",
        ),
    ];
    for (text, expected) in cases {
        std::fs::write(dir.path().join("bad.json"), text).unwrap();
        let valid = root().join("fixtures/valid");
        let output = run_in(
            dir.path(),
            &["lint", "--baseline", "bad.json", valid.to_str().unwrap()],
        );
        assert_eq!(code(&output), 2, "{text}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains(expected), "{stderr}");
    }
    let output = run_in(dir.path(), &["lint", "--baseline", "missing.json", "."]);
    assert_eq!(code(&output), 2);
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("cannot read missing.json")
    );
    let output = run_in(
        dir.path(),
        &[
            "lint",
            "--baseline",
            "a.json",
            "--write-baseline",
            "b.json",
            ".",
        ],
    );
    assert_eq!(code(&output), 2);
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// Codes reported for each file of a directory linted with its own config.
fn codes_by_file(dir: &Path) -> Vec<(String, String, String)> {
    let (_, report) = lint_json(dir, &["."]);
    let mut found: Vec<(String, String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("./")
                    .to_owned(),
                d["code"].as_str().unwrap().to_owned(),
                d["severity"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

#[test]
fn overrides_scope_rules_and_severities() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = root().join("fixtures/invalid/R108/optional-fields.json");
    std::fs::create_dir(dir.path().join("legacy")).unwrap();
    for name in ["legacy/old.tools.json", "new.tools.json", "other.json"] {
        std::fs::copy(&fixture, dir.path().join(name)).unwrap();
    }
    let base = codes_by_file(dir.path());
    assert!(
        base.iter()
            .all(|(_, code, level)| code == "R108" && level == "warning")
    );
    assert_eq!(base.len(), 3);

    write(
        dir.path(),
        "mcp-recovery.toml",
        r#"
[[overrides]]
files = ["legacy/**"]
ignore = ["optional-source"]

[[overrides]]
files = ["*.tools.json"]
tools = ["open_*"]
severity = { R108 = "error" }

[[overrides]]
files = ["other.json"]
select = ["R201", "R108"]
severity = { optional-source = "info" }
"#,
    );
    let scoped = codes_by_file(dir.path());
    let expected: Vec<(String, String, String)> = [
        ("new.tools.json", "R108", "error"),
        ("other.json", "R108", "info"),
    ]
    .iter()
    .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
    .collect();
    let without_advisory: Vec<_> = scoped
        .iter()
        .filter(|(_, c, _)| c != "R201")
        .cloned()
        .collect();
    assert_eq!(without_advisory, expected);
    // The advisory rule runs only where it is selected.
    assert!(
        scoped
            .iter()
            .filter(|(_, c, _)| c == "R201")
            .all(|(f, _, _)| f == "other.json")
    );

    // A tool glob that matches nothing leaves the severity alone.
    write(
        dir.path(),
        "mcp-recovery.toml",
        "[[overrides]]\ntools = [\"close_*\"]\nseverity = { R108 = \"error\" }\n",
    );
    assert!(
        codes_by_file(dir.path())
            .iter()
            .all(|(_, _, level)| level == "warning")
    );
}

#[test]
fn bad_overrides_point_at_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    for (text, expected) in [
        (
            "[[overrides]]\nfiles = [\"a[\"]\n",
            "mcp-recovery.toml:2:10: invalid glob `a[`",
        ),
        (
            "[[overrides]]\nignore = [\"R101\"]\n",
            "mcp-recovery.toml:1:1: an override needs `files` or `tools`",
        ),
        (
            "[[overrides]]\nfiles = [\"*\"]\nselect = []\n",
            "mcp-recovery.toml:1:1: `select = []` would run no rule",
        ),
        (
            "[[overrides]]\nfiles = [\"*\"]\nignore = [\"R999\"]\n",
            "mcp-recovery.toml:3:11: unknown rule `R999`",
        ),
        (
            "[[overrides]]\nfiles = [\"*\"]\nseverity = { R101 = \"fatal\" }\n",
            "mcp-recovery.toml:3:21: unknown severity `fatal`",
        ),
        (
            "[[overrides]]\nfile = [\"*\"]\n",
            "mcp-recovery.toml:2:1: unknown field `file`",
        ),
    ] {
        write(dir.path(), "mcp-recovery.toml", text);
        let output = bin_in(dir.path()).args(["lint", "."]).output().unwrap();
        assert_eq!(code(&output), 2, "{text}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.starts_with(&format!("error: {expected}")),
            "{stderr}"
        );
    }
}

/// The committed config schema accepts what the linter accepts and rejects what it rejects.
#[test]
fn config_schema_agrees_with_the_parser() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("spec/schema/mcp-recovery-toml.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let good = [
        "",
        "select = [\"R101\", \"optional-source\"]\nignore = [\"R114\"]\ndeny = [\"warnings\"]\n",
        "[severity]\nR108 = \"error\"\nnon-idempotent-compensator = \"warning\"\n",
        "[[overrides]]\nfiles = [\"legacy/**\"]\nignore = [\"R107\"]\n\n[[overrides]]\ntools = [\"admin_*\"]\nselect = [\"R201\"]\nseverity = { R201 = \"error\" }\n",
    ];
    let bad = [
        "selct = []\n",
        "ignore = [\"R999\"]\n",
        "deny = [\"errors\"]\n",
        "[severity]\nR108 = \"fatal\"\n",
        "[[overrides]]\nignore = [\"R101\"]\n",
        "[[overrides]]\nfiles = [\"*\"]\nselect = []\n",
        "[[overrides]]\nfiles = [\"*\"]\nextra = 1\n",
    ];
    let dir = tempfile::tempdir().unwrap();
    let valid = root().join("fixtures/valid");
    for (texts, accepted) in [(&good[..], true), (&bad[..], false)] {
        for text in texts {
            let document: toml::Value = toml::from_str(text).unwrap();
            let instance = serde_json::to_value(document).unwrap();
            assert_eq!(
                validator.is_valid(&instance),
                accepted,
                "schema on {text:?}"
            );
            write(dir.path(), "c.toml", text);
            let output = run_in(
                dir.path(),
                &["lint", "--config", "c.toml", valid.to_str().unwrap()],
            );
            let status = code(&output);
            assert_eq!(status != 2, accepted, "linter on {text:?}: {output:?}");
        }
    }
}
