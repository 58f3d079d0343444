//! Undo from a before-image: `plan` picks the undo by what the read before the call found, and a
//! malformed before-image declaration stops the command naming the file and the pointer.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{assert_overlay_refused, lint_json, plan_json, root};
use serde_json::{Value, json};

const TOOLS: &str = "fixtures/overlays/files.tools.json";
const OVERLAY: &str = "fixtures/overlays/files.overlay.toml";
const TRACE: &str = "fixtures/overlays/files.trace.jsonl";

#[test]
fn the_undo_follows_what_the_read_found() {
    let (status, report) = lint_json(&root(), &["--overlay", OVERLAY, TOOLS]);
    assert_eq!(status, 0, "{report:#}");
    let plan = plan_json(TOOLS, Some(OVERLAY), TRACE);
    let steps: Vec<(&str, &Value, &str)> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["status"].as_str().unwrap(),
                &s["call"],
                s["reason"].as_str().unwrap(),
            )
        })
        .collect();
    // Newest first: a read that got no answer, no before-image at all, a file that did not
    // exist (moved out of the way), a file that did (its old text written back).
    assert_eq!(steps[0].0, "unavailable");
    assert!(
        steps[0]
            .2
            .contains("got no result (no answer within 30000 ms)"),
        "{plan:#}"
    );
    assert_eq!(steps[1].0, "unavailable");
    assert!(
        steps[1].2.contains("none was recorded for this call"),
        "{plan:#}"
    );
    assert_eq!(
        steps[2].1,
        &json!({"name": "move_file", "arguments": {"source": "b.txt", "destination": "b.txt.rolled-back"}})
    );
    assert!(
        steps[2].2.ends_with("(the read before the call: missing)"),
        "{plan:#}"
    );
    assert_eq!(
        steps[3].1,
        &json!({"name": "write_file", "arguments": {"path": "a.txt", "content": "old text"}})
    );
    assert!(
        steps[3].2.ends_with("(the read before the call: found)"),
        "{plan:#}"
    );

    // Without a declared undo for what the read found, the effect stays and the step says so.
    let dir = tempfile::tempdir().unwrap();
    let only_found = dir.path().join("o.toml");
    let text = fs::read_to_string(root().join(OVERLAY)).unwrap();
    let cut = text.find("[tools.write_file.before.missing]").unwrap();
    fs::write(&only_found, &text[..cut]).unwrap();
    let plan = plan_json(TOOLS, Some(only_found.to_str().unwrap()), TRACE);
    assert_eq!(plan["steps"][2]["status"], "irreversible", "{plan:#}");
    assert!(
        plan["steps"][2]["reason"]
            .as_str()
            .unwrap()
            .contains("the target was missing, and the overlay declares no undo for that"),
        "{plan:#}"
    );
}

#[test]
fn malformed_before_images_name_the_file_and_the_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.toml");
    let cases = [
        ("read = \"read_file\"\n", "/tools/write_file/before"),
        (
            "read = \"read_file\"\narguments = { path = \"$response.body#/path\" }\nfound = { operationId = \"write_file\" }\n",
            "/tools/write_file/before/arguments/path",
        ),
        (
            "read = \"read_file\"\nfound = { operationId = \"write_file\", parameters = { content = \"$before.txt\" } }\n",
            "/tools/write_file/before/found/parameters/content",
        ),
        (
            "read = \"read_file\"\nwhen = \"found\"\nfound = { operationId = \"write_file\" }\n",
            "/tools/write_file/before/when",
        ),
    ];
    for (declaration, pointer) in cases {
        let text = format!("[tools.write_file.before]\n{declaration}");
        assert_overlay_refused(&path, &text, TOOLS, pointer);
    }
}

/// A before-image undo is a declared recovery: at `strict`, `write_file` (which has one) draws
/// neither R201 nor R202, while `move_file` (which the overlay leaves undeclared) still does.
#[test]
fn a_before_image_counts_as_a_declared_recovery() {
    let (_, report) = lint_json(
        &root(),
        &["--preset", "strict", "--overlay", OVERLAY, TOOLS],
    );
    let undeclared: Vec<(&str, &str)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| matches!(d["code"].as_str(), Some("R201" | "R202")))
        .map(|d| (d["code"].as_str().unwrap(), d["tool"].as_str().unwrap()))
        .collect();
    assert_eq!(undeclared, [("R201", "move_file")], "{report:#}");
}

/// The tools a before-image names must be listed: each one that is not is R101 at its place in
/// the overlay, a further call of an undo (`then`) included.
#[test]
fn tools_a_before_image_names_must_be_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.toml");
    fs::write(
        &path,
        "[tools.write_file.before]\nread = \"read_fil\"\nfound = { operationId = \"write_file\", then = [{ operationId = \"write_file\" }, { operationId = \"remove_file\" }] }\nmissing = { operationId = \"delete_file\" }\n",
    )
    .unwrap();
    let (status, report) = lint_json(&root(), &["--overlay", path.to_str().unwrap(), TOOLS]);
    assert_eq!(status, 1, "{report:#}");
    let found: Vec<(&str, &str, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["pointer"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("R101", "/tools/write_file/before/read", 2),
            (
                "R101",
                "/tools/write_file/before/found/then/1/operationId",
                3
            ),
            ("R101", "/tools/write_file/before/missing/operationId", 4),
        ],
        "{report:#}"
    );
    assert_eq!(
        report["diagnostics"][0]["help"],
        "did you mean 'read_file'?"
    );
}

/// Only a before-image's undo has a before-image: a carrier's compensation that reads one (as a
/// reference or as a map binding's array) is R104 at its place, never a compensation that is
/// unavailable only when it is needed.
#[test]
fn a_carrier_never_reads_a_before_image() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.toml");
    fs::write(
        &path,
        "[tools.write_file.annotations.recovery]\nstrategy = \"compensation\"\ncompensatingOperation.operationId = \"write_file\"\ncompensatingOperation.parameters = { path = \"$request.body#/path\", content = \"$before.text\" }\n\n[tools.move_file.annotations.recovery]\nstrategy = \"compensation\"\ncompensatingOperation.operationId = \"move_file\"\ncompensatingOperation.parameters.source = { \"$map\" = \"$before.body#/paths\", \"$each\" = \"$item\" }\n",
    )
    .unwrap();
    let (status, report) = lint_json(&root(), &["--overlay", path.to_str().unwrap(), TOOLS]);
    assert_eq!(status, 1, "{report:#}");
    let found: Vec<(&str, &str, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "R104")
        .map(|d| {
            (
                d["tool"].as_str().unwrap(),
                d["pointer"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "write_file",
                "/tools/write_file/annotations/recovery/compensatingOperation/parameters/content",
                4
            ),
            (
                "move_file",
                "/tools/move_file/annotations/recovery/compensatingOperation/parameters/source",
                9
            ),
        ],
        "{report:#}"
    );
}
