//! Running one workflow: the overlay linted, the set-up, the state before and after the
//! rollback, the rollback's report and the journal.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::case::{ANSWER_TIMEOUT, Case, Observe, text};
use super::session::Session;
use crate::live;

/// Runs one case: lint, set-up, the state before, the workflow, the state after, the journal.
pub(super) fn run_case(root: &Path, binary: &Path, tmp: &Path, case: &Case) -> Result<(), String> {
    let overlay = root.join("overlays").join(format!("{}.toml", case.overlay));
    let at = |what: &str| format!("{} ({}): {what}", case.label, case.overlay);
    lint(binary, &overlay, case).map_err(|e| at(&e))?;
    if !case.setup.is_empty() {
        let mut plain = Session::start(binary, &[], case)?;
        for (name, arguments) in &case.setup {
            let answer = plain.call(name, arguments)?;
            if failed(&answer) {
                return Err(at(&format!("set-up call '{name}' failed: {answer}")));
            }
        }
        plain.finish()?;
    }
    let before = observe(binary, case)?;
    let journal = tmp.join(format!("{}.journal.jsonl", case.label.replace(' ', "-")));
    let flags = [
        "--overlay".to_owned(),
        text(&overlay),
        "--journal".to_owned(),
        text(&journal),
        "--on-failure".to_owned(),
        "rollback".to_owned(),
    ];
    let mut session = Session::start(binary, &flags, case)?;
    let last = case.workflow.len() - 1;
    for (index, (name, arguments)) in case.workflow.iter().enumerate() {
        let answer = session.call(name, arguments)?;
        match (index == last, failed(&answer)) {
            (false, true) => return Err(at(&format!("call '{name}' failed: {answer}"))),
            (true, false) => return Err(at(&format!("the last call '{name}' succeeded"))),
            (true, true) => check_report(&answer, case).map_err(|e| at(&e))?,
            (false, false) => {}
        }
    }
    session.finish()?;
    let mut after = observe(binary, case)?;
    for path in &case.set_aside {
        if after
            .as_object_mut()
            .and_then(|seen| seen.remove(*path))
            .is_none()
        {
            return Err(at(&format!(
                "the undo did not move '{path}' out of the way"
            )));
        }
    }
    if before != after {
        return Err(at(&format!(
            "the state is not what it was before the workflow\n  before: {before}\n  after:  {after}"
        )));
    }
    let mut verify = Command::new(binary);
    verify.args(["audit", "verify"]).arg(&journal);
    let verified = live::run(verify, ANSWER_TIMEOUT, "audit verify")?;
    if !verified.status.success() {
        return Err(at(&verified.failure("audit verify")));
    }
    Ok(())
}

/// The overlay lints clean (no error, no warning) on the live server's `tools/list`.
fn lint(binary: &Path, overlay: &Path, case: &Case) -> Result<(), String> {
    let mut command = Command::new(binary);
    command
        .args(["lint", "--format", "json", "--overlay"])
        .arg(overlay)
        .args(["--stdio", "--"])
        .args(&case.server)
        .envs(case.env.iter().map(|(k, v)| (k, v)));
    let output = live::run(command, ANSWER_TIMEOUT, "lint")?;
    let report: Value = serde_json::from_str(&output.stdout)
        .map_err(|e| output.failure(&format!("lint printed no JSON report ({e})")))?;
    let findings: Vec<&Value> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["severity"] == "error" || f["severity"] == "warning")
        .collect();
    if !output.status.success() || !findings.is_empty() {
        return Err(format!(
            "the overlay does not lint clean: {}",
            Value::from(findings.into_iter().cloned().collect::<Vec<_>>())
        ));
    }
    Ok(())
}

/// The rollback report of the failed answer counts the case's compensations and nothing failed;
/// nothing is left in place but, when the case says so, the failing call of unknown outcome.
fn check_report(answer: &Value, case: &Case) -> Result<(), String> {
    let report = &answer["result"]["_meta"]["dev.mcp-recovery/rollback"];
    let report = if report.is_null() {
        &answer["error"]["data"]["dev.mcp-recovery/rollback"]
    } else {
        report
    };
    let skipped = usize::from(case.unknown_failure);
    let expected =
        json!({"compensated": case.undone, "already": 0, "failed": 0, "skipped": skipped});
    let left: Vec<&str> = report["notUndone"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let left_as_expected = match left.as_slice() {
        [] => !case.unknown_failure,
        [one] => case.unknown_failure && one.contains("(unknown-outcome)"),
        _ => false,
    };
    if report["counts"] != expected || !left_as_expected {
        return Err(format!("the rollback reported {report}, not {expected}"));
    }
    // Every compensating call is named: the first of each undo, and those of its `then`.
    let named: usize = report["undone"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|undone| 1 + undone["then"].as_array().map_or(0, Vec::len))
        .sum();
    if named != case.undo_calls {
        return Err(format!(
            "the rollback named {named} compensating calls, not {}: {report}",
            case.undo_calls
        ));
    }
    Ok(())
}

/// Whether an answer is a failure: a JSON-RPC error or a result with `isError`.
fn failed(answer: &Value) -> bool {
    answer.get("error").is_some() || answer["result"]["isError"] == true
}

/// The state of a case, read from outside the workflow.
fn observe(binary: &Path, case: &Case) -> Result<Value, String> {
    match &case.observe {
        Observe::Reads(reads) => {
            let mut session = Session::start(binary, &[], case)?;
            let mut seen = Vec::new();
            for (name, arguments) in reads {
                let answer = session.call(name, arguments)?;
                if failed(&answer) {
                    return Err(format!(
                        "{}: the read '{name}' failed: {answer}",
                        case.label
                    ));
                }
                seen.push(result_value(&answer["result"]));
            }
            session.finish()?;
            Ok(Value::from(seen))
        }
        Observe::Tree(dir) => tree(dir),
        Observe::Commands(dir, commands) => {
            let mut seen = serde_json::Map::new();
            for argv in commands {
                let mut command = Command::new(argv[0]);
                command.args(&argv[1..]).current_dir(dir);
                let output = live::run(command, ANSWER_TIMEOUT, &argv.join(" "))?;
                if !output.status.success() {
                    return Err(output.failure(&argv.join(" ")));
                }
                seen.insert(argv.join(" "), Value::from(output.stdout));
            }
            Ok(Value::Object(seen))
        }
    }
}

/// What a read returned: its `structuredContent`, else the JSON its text holds, else the text.
fn result_value(result: &Value) -> Value {
    if let Some(structured) = result.get("structuredContent") {
        return structured.clone();
    }
    let texts: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["text"].as_str())
        .collect();
    match texts.as_slice() {
        [one] => serde_json::from_str(one).unwrap_or_else(|_| Value::from(*one)),
        many => Value::from(many.to_vec()),
    }
}

/// Every path below `dir` (relative, sorted) with a file's contents or `null` for a directory.
fn tree(dir: &Path) -> Result<Value, String> {
    let mut seen = serde_json::Map::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let entries = std::fs::read_dir(&at).map_err(|e| format!("{}: {e}", at.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", at.display()))?.path();
            let relative = text(path.strip_prefix(dir).unwrap_or(&path));
            if path.is_dir() {
                seen.insert(relative, Value::Null);
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                seen.insert(relative, Value::from(String::from_utf8_lossy(&bytes)));
            }
        }
    }
    seen.sort_keys();
    Ok(Value::Object(seen))
}
