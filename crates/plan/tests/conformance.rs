//! Runs the plan cases of the language-neutral conformance suite (`spec/conformance/plan/`)
//! against this implementation, one test case per directory (`plan::<case>`), and checks that
//! the suite's README indexes every case.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use common::{cases, read_json, suite};
use libtest_mimic::{Arguments, Failed, Trial};
use mcp_recovery_plan::{Status, build_plan, load_tools, parse_trace};

fn main() {
    let plain = |test: fn()| {
        move || {
            test();
            Ok(())
        }
    };
    let mut trials = vec![
        Trial::test("plan::at_least_thirty", plan_cases_are_at_least_thirty),
        Trial::test(
            "plan::cases_cover_every_status",
            plain(plan_cases_cover_every_status),
        ),
        Trial::test(
            "readme_indexes_every_case",
            plain(readme_indexes_every_case),
        ),
    ];
    for dir in cases("plan") {
        let name = format!("plan::{}", dir.file_name().unwrap().to_string_lossy());
        trials.push(Trial::test(name, move || {
            check_plan_case(&dir).map_err(Failed::from)
        }));
    }
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}

/// Compares one case; returns what differs.
fn check_plan_case(dir: &Path) -> Result<(), String> {
    let tools = load_tools(&read_json(&dir.join("tools.json"))).map_err(|e| e.to_string())?;
    let trace_text = fs::read_to_string(dir.join("trace.jsonl")).map_err(|e| e.to_string())?;
    let trace = parse_trace(&trace_text).map_err(|e| e.to_string())?;
    let plan = build_plan(&tools, &trace);
    // Written out and read back as the cli does: `to_value` would respell exponents.
    let written = serde_json::to_string(&plan).map_err(|e| e.to_string())?;
    let actual = mcp_recovery_model::json::from_str(&written).map_err(|e| e.to_string())?;
    let expected = read_json(&dir.join("expected-plan.json"));
    let (Some(expected_steps), Some(actual_steps)) =
        (expected["steps"].as_array(), actual["steps"].as_array())
    else {
        return Err("expected-plan.json has no \"steps\" array".to_owned());
    };
    if expected_steps.len() != actual_steps.len() {
        return Err(format!(
            "expected {} steps, got {}:\n{}",
            expected_steps.len(),
            actual_steps.len(),
            plan.render_table()
        ));
    }
    for (i, (want, got)) in expected_steps.iter().zip(actual_steps).enumerate() {
        for field in ["tool", "status", "call"] {
            if want[field] != got[field] {
                return Err(format!(
                    "step {}: {field} differs\n  expected: {}\n  actual:   {}\n  reason:   {}",
                    i + 1,
                    want[field],
                    got[field],
                    got["reason"]
                ));
            }
        }
        let reason = got["reason"].as_str().unwrap_or_default();
        if reason.is_empty() {
            return Err(format!("step {}: empty reason", i + 1));
        }
        for needle in want["reasonIncludes"].as_array().into_iter().flatten() {
            let needle = needle.as_str().unwrap_or_default();
            if !reason.contains(needle) {
                return Err(format!(
                    "step {}: reason {reason:?} does not mention {needle:?}",
                    i + 1
                ));
            }
        }
    }
    Ok(())
}

fn plan_cases_are_at_least_thirty() -> Result<(), Failed> {
    let count = cases("plan").len();
    if count < 30 {
        return Err(format!("only {count} plan cases").into());
    }
    Ok(())
}

fn plan_cases_cover_every_status() {
    let mut seen = BTreeSet::new();
    for dir in cases("plan") {
        for step in read_json(&dir.join("expected-plan.json"))["steps"]
            .as_array()
            .into_iter()
            .flatten()
        {
            seen.insert(step["status"].as_str().unwrap_or_default().to_owned());
        }
    }
    for status in Status::ALL {
        assert!(
            seen.contains(status.as_str()),
            "no plan case expects {status}"
        );
    }
}

fn readme_indexes_every_case() {
    let readme = fs::read_to_string(suite().join("README.md")).unwrap();
    for kind in ["plan", "lint"] {
        for dir in cases(kind) {
            let entry = format!("`{kind}/{}`", dir.file_name().unwrap().to_string_lossy());
            assert!(readme.contains(&entry), "README.md does not list {entry}");
        }
    }
}
