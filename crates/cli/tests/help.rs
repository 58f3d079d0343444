//! `--help` of the binary and of each subcommand, as the user sees it.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::bin;
use insta_cmd::assert_cmd_snapshot;

#[test]
fn main_help() {
    assert_cmd_snapshot!(bin().arg("--help"));
}

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

#[test]
fn census_help() {
    assert_cmd_snapshot!(bin().args(["census", "--help"]));
}

#[test]
fn demo_help() {
    assert_cmd_snapshot!(bin().args(["demo", "--help"]));
}

#[test]
fn proxy_help() {
    assert_cmd_snapshot!(bin().args(["proxy", "--help"]));
}

#[test]
fn audit_verify_help() {
    assert_cmd_snapshot!(bin().args(["audit", "verify", "--help"]));
}

#[test]
fn rollback_help() {
    assert_cmd_snapshot!(bin().args(["rollback", "--help"]));
}
