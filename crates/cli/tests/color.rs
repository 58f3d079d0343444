//! `--color` and the colour conventions of the environment, end to end. The tests run without a
//! terminal, so `auto` means no colour unless `CLICOLOR_FORCE` says otherwise; what a terminal
//! changes is covered by the decision's unit tests.
// Test code: a failed expectation is a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Command;

use common::{bin, root};

const BROKEN: &str = "fixtures/invalid/R101/typo-in-operation-id.json";

/// The binary with none of the colour variables set.
fn plain() -> Command {
    let mut command = bin();
    command.env_remove("NO_COLOR").env_remove("TERM");
    command
}

/// Whether `lint` of a broken fixture prints ANSI escapes with `args` and `env`.
fn lint_colours(args: &[&str], env: &[(&str, &str)]) -> bool {
    let mut command = plain();
    command
        .arg("lint")
        .args(args)
        .arg(BROKEN)
        .envs(env.iter().copied());
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{args:?} {env:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("R101"), "{stdout}");
    stdout.contains('\u{1b}')
}

#[test]
fn auto_off_a_terminal_has_no_colour() {
    assert!(!lint_colours(&[], &[]));
    assert!(!lint_colours(&["--color", "auto"], &[("CLICOLOR", "1")]));
}

#[test]
fn clicolor_force_colours_off_a_terminal() {
    assert!(lint_colours(&[], &[("CLICOLOR_FORCE", "1")]));
    assert!(!lint_colours(&[], &[("CLICOLOR_FORCE", "0")]));
    // CLICOLOR=0 only turns off what a terminal would turn on; the force wins.
    assert!(lint_colours(
        &[],
        &[("CLICOLOR_FORCE", "1"), ("CLICOLOR", "0")]
    ));
}

#[test]
fn no_color_wins_over_clicolor_force() {
    assert!(!lint_colours(
        &[],
        &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]
    ));
    // An empty NO_COLOR does not count.
    assert!(lint_colours(
        &[],
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")]
    ));
}

#[test]
fn the_flag_wins_over_the_environment() {
    assert!(lint_colours(&["--color", "always"], &[("NO_COLOR", "1")]));
    assert!(lint_colours(&["--color=always"], &[("TERM", "dumb")]));
    assert!(!lint_colours(
        &["--color", "never"],
        &[("CLICOLOR_FORCE", "1")]
    ));
}

#[test]
fn machine_formats_and_files_never_colour() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let output = plain()
        .args([
            "lint",
            "--color",
            "always",
            "--format",
            "github",
            "--output-file",
        ])
        .arg(format!("json={}", report.display()))
        .arg(BROKEN)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(!output.stdout.contains(&0x1b));
    let json = std::fs::read(&report).unwrap();
    assert!(!json.is_empty() && !json.contains(&0x1b));
}

#[test]
fn plan_table_follows_the_same_decision() {
    let case = root().join("spec/conformance/plan/041-lifo-checkout");
    let plan = |args: &[&str], env: &[(&str, &str)]| {
        let output = plain()
            .arg("plan")
            .args(args)
            .arg("--tools")
            .arg(case.join("tools.json"))
            .arg("--trace")
            .arg(case.join("trace.jsonl"))
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    let coloured = plan(&[], &[("CLICOLOR_FORCE", "1")]);
    assert!(coloured.contains("\u{1b}[32m"), "{coloured}");
    let plain_table = plan(&[], &[]);
    assert!(!plain_table.contains('\u{1b}'), "{plain_table}");
    let never = plan(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]);
    assert_eq!(never, plain_table);
}

#[test]
fn an_unknown_choice_is_a_usage_error() {
    let output = plain()
        .args(["lint", "--color", "sometimes", BROKEN])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--color") && stderr.contains("always"),
        "{stderr}"
    );
}

/// clap's own help and usage errors follow `--color` too.
#[test]
fn help_and_usage_errors_follow_the_flag() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let output = plain()
            .args(args)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.code(), text.contains('\u{1b}'))
    };
    assert_eq!(run(&["--color", "always", "--help"], &[]), (Some(0), true));
    assert_eq!(
        run(&["proxy", "--help", "--color=always"], &[]),
        (Some(0), true)
    );
    assert_eq!(
        run(&["--color", "never", "--help"], &[("CLICOLOR_FORCE", "1")]),
        (Some(0), false)
    );
    assert_eq!(run(&["--help"], &[]), (Some(0), false));
    assert_eq!(
        run(&["lint", "--bogus", "--color", "always"], &[]),
        (Some(2), true)
    );
    assert_eq!(
        run(
            &["lint", "--bogus", "--color", "never"],
            &[("CLICOLOR_FORCE", "1")]
        ),
        (Some(2), false)
    );
    // Errors found once the arguments are parsed are clap's errors too.
    for (command, args) in [
        ("lint", &["--header", "A: b", "x.json"][..]),
        ("profile", &["x.json", "--", "server"][..]),
        ("fetch", &["--", "server"][..]),
    ] {
        for (when, coloured) in [("always", true), ("never", false)] {
            let output = plain()
                .arg(command)
                .args(["--color", when])
                .args(args)
                .env("CLICOLOR_FORCE", "1")
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(2), "{command} {args:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(stderr.contains('\u{1b}'), coloured, "{stderr}");
            // Under the subcommand's own usage line.
            let plain_text = stderr.replace("\u{1b}[1m", "").replace("\u{1b}[0m", "");
            assert!(
                plain_text.contains(&format!("Usage: mcp-recovery {command} ")),
                "{stderr}"
            );
        }
    }
}
