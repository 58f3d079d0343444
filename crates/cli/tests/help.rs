//! `--help` of the binary and of each subcommand, as the user sees it.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::bin;
use insta_cmd::assert_cmd_snapshot;

#[cfg(feature = "demo")]
#[test]
fn main_help() {
    assert_cmd_snapshot!(bin().arg("--help"));
}

// The snapshot is of the default build: clap lists the live-server flags in another order
// when the demo's arguments (which share their names) are not compiled in.
#[cfg(feature = "demo")]
#[test]
fn lint_help() {
    assert_cmd_snapshot!(bin().args(["lint", "--help"]));
}

#[test]
fn rules_help() {
    assert_cmd_snapshot!(bin().args(["rules", "--help"]));
}

#[test]
fn explain_help() {
    assert_cmd_snapshot!(bin().args(["explain", "--help"]));
}

#[test]
fn schema_help() {
    assert_cmd_snapshot!(bin().args(["schema", "--help"]));
}

#[test]
fn fetch_help() {
    assert_cmd_snapshot!(bin().args(["fetch", "--help"]));
}

#[test]
fn plan_help() {
    assert_cmd_snapshot!(bin().args(["plan", "--help"]));
}

#[test]
fn convert_help() {
    assert_cmd_snapshot!(bin().args(["convert", "--help"]));
}

// Of the default build, as `lint_help` is: the live-server flags come in another order
// without the demo.
#[cfg(feature = "demo")]
#[test]
fn suggest_help() {
    assert_cmd_snapshot!(bin().args(["suggest", "--help"]));
}

#[test]
fn census_help() {
    assert_cmd_snapshot!(bin().args(["census", "--help"]));
}

#[cfg(feature = "demo")]
#[test]
fn demo_help() {
    assert_cmd_snapshot!(bin().args(["demo", "--help"]));
}

/// `--no-default-features` builds the linter and toolkit without the demo and its server.
#[cfg(not(feature = "demo"))]
#[test]
fn without_the_demo_feature_there_is_no_demo() {
    for command in ["demo", "demo-server"] {
        let output = bin().arg(command).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("unrecognized subcommand"), "{stderr}");
    }
    let help = bin().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("  lint ") && !help.contains("  demo "),
        "{help}"
    );
}

// The snapshot is of the default build, for the reason `lint_help` gives.
#[cfg(feature = "demo")]
#[test]
fn proxy_help() {
    assert_cmd_snapshot!(bin().args(["proxy", "--help"]));
}

#[test]
fn audit_verify_help() {
    assert_cmd_snapshot!(bin().args(["audit", "verify", "--help"]));
}

#[test]
fn audit_export_help() {
    assert_cmd_snapshot!(bin().args(["audit", "export", "--help"]));
}

// The snapshot is of the default build: clap lists the live-server flags in another order
// when the demo's arguments (which share their names) are not compiled in.
#[cfg(feature = "demo")]
#[test]
fn rollback_help() {
    assert_cmd_snapshot!(bin().args(["rollback", "--help"]));
}
