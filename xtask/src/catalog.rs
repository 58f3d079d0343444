//! `cargo xtask check-catalog`: every overlay of `overlays/` against the published server it
//! names, installed pinned into a temporary directory.
//!
//! For each server: the overlay must lint clean on the live server's `tools/list`; state the
//! workflow must not touch is set up first; a workflow runs through `mcp-recovery proxy
//! --overlay … --on-failure rollback` one call at a time, every call but the last succeeding and
//! the last failing; the failed answer must report every compensation done and none failed or
//! skipped; and the state, observed from outside (the server's own read tools or the file
//! system), must be exactly what it was before the workflow, the set-up state included. The
//! journal must pass `audit verify`. Every step that cannot run fails the check naming it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{Value, json};

use crate::live::{self, timed};

/// The npm packages the catalog covers, pinned (`server-memory` twice: its 2025 release returns
/// JSON only as text, and one overlay serves both).
const NPM_PACKAGES: &[(&str, &str)] = &[
    ("@modelcontextprotocol/server-memory", "2026.8.31"),
    ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
];
const NPM_OLD_MEMORY: (&str, &str) = ("@modelcontextprotocol/server-memory", "2025.4.25");

/// The PyPI packages, pinned.
const PYPI_PACKAGES: &[&str] = &["mcp-server-git==2026.10.19", "excel-mcp-server==2.2.2"];

/// How long one answer may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// One tool call of a workflow or an observation.
type Call = (&'static str, Value);

/// One workflow against one server.
struct Case {
    /// What the messages call it.
    label: String,
    /// `overlays/{overlay}.toml`: the server's `serverInfo.name`.
    overlay: &'static str,
    /// The server command line.
    server: Vec<String>,
    /// Its extra environment.
    env: Vec<(String, String)>,
    /// Calls run through a plain proxy first: state the workflow must leave as it is.
    setup: Vec<Call>,
    /// The workflow: every call but the last succeeds, the last fails.
    workflow: Vec<Call>,
    /// How many compensations the rollback must run.
    undone: usize,
    /// How many compensating calls the client must be told they made (more than `undone` when
    /// an undo makes several).
    undo_calls: usize,
    /// Whether the failing call's outcome is unknown: a server whose every failure is a
    /// JSON-RPC internal error may have acted before it failed, so the rollback must report
    /// that call as not undone (and the state check shows it did not act).
    unknown_failure: bool,
    /// The state, observed from outside.
    observe: Observe,
    /// Paths a tree observation finds after the rollback and not before: what an undo moved
    /// out of the way because the server cannot delete it.
    set_aside: Vec<&'static str>,
}

/// Where a case's state is read from.
enum Observe {
    /// The results of the server's own read tools.
    Reads(Vec<Call>),
    /// Every file and directory below a directory, with the files' contents.
    Tree(PathBuf),
    /// The output of commands run in a directory (`git status`, …).
    Commands(PathBuf, Vec<Vec<&'static str>>),
}

/// Runs the whole check, or only the workflows of one overlay (`only`, its file stem); the error
/// names the step and the server that failed.
pub fn check(root: &Path, only: Option<&str>) -> Result<(), String> {
    let binary = timed("build mcp-recovery", || {
        live::build_binary(root, "mcp-recovery", "mcp-recovery")
    })?;
    let tmp_dir = crate::workspace::temp_dir("mcp-recovery-catalog")?;
    let tmp = tmp_dir.path();
    println!("temporary directory: {}", tmp.display());
    let npm = tmp.join("npm");
    let npm_old = tmp.join("npm-old");
    timed("npm install", || live::npm_install(&npm, NPM_PACKAGES))?;
    timed("npm install (old server-memory)", || {
        live::npm_install(&npm_old, &[NPM_OLD_MEMORY])
    })?;
    let venv = tmp.join("venv");
    let mut cases = cases(tmp, &npm, &npm_old, &venv)?;
    untested_overlays(root, &cases)?;
    if let Some(only) = only {
        cases.retain(|case| case.overlay == only);
        if cases.is_empty() {
            return Err(format!(
                "check-catalog: no workflow tests overlays/{only}.toml"
            ));
        }
    }
    if cases
        .iter()
        .any(|case| case.server[0].starts_with(&text(&venv)))
    {
        timed("pip install", || live::venv(&venv, PYPI_PACKAGES))?;
    }
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = timed(&case.label, || run_case(root, &binary, tmp, case)) {
            println!("{e}");
            failures.push(e);
        }
    }
    if failures.is_empty() {
        println!("check-catalog: {} workflows rolled back", cases.len());
        Ok(())
    } else {
        Err(format!(
            "check-catalog: {} of {} failed",
            failures.len(),
            cases.len()
        ))
    }
}

/// Every overlay of `overlays/` must have a workflow here: the catalog holds only tested overlays.
fn untested_overlays(root: &Path, cases: &[Case]) -> Result<(), String> {
    let dir = root.join("overlays");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut untested = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        if let Some(stem) = stem
            && !cases.iter().any(|case| case.overlay == stem)
        {
            untested.push(stem);
        }
    }
    if untested.is_empty() {
        Ok(())
    } else {
        untested.sort();
        Err(format!(
            "check-catalog: overlays/ holds overlays no workflow here tests: {}",
            untested.join(", ")
        ))
    }
}

fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The workflows, with their state directories created under `tmp`.
fn cases(tmp: &Path, npm: &Path, npm_old: &Path, venv: &Path) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    for (version, prefix, unknown_failure) in [
        (NPM_PACKAGES[0].1, npm, false),
        (NPM_OLD_MEMORY.1, npm_old, true),
    ] {
        let script = prefix.join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
        let file = tmp.join(format!("memory-{version}.jsonl"));
        cases.push(memory_case(version, &script, &file, unknown_failure));
    }
    let script = npm.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    cases.push(filesystem_case(&script, &tmp.join("filesystem"))?);
    cases.push(excel_case(
        &venv.join("bin/excel-mcp-server"),
        &tmp.join("excel"),
    )?);
    cases.push(git_case(
        &venv.join("bin/mcp-server-git"),
        &tmp.join("git"),
    )?);
    Ok(cases)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// server-filesystem: a file overwritten gets its text back, a file moved goes back, and a
/// directory and a file created are moved out of the way (the server has no delete).
fn filesystem_case(script: &Path, root: &Path) -> Result<Case, String> {
    write(&root.join("d/a.txt"), "old text\nsecond line\n")?;
    let at = |relative: &str| text(&root.join(relative));
    Ok(Case {
        label: "server-filesystem".to_owned(),
        overlay: "secure-filesystem-server",
        server: vec!["node".to_owned(), text(script), text(root)],
        env: Vec::new(),
        setup: Vec::new(),
        workflow: vec![
            (
                "write_file",
                json!({"path": at("d/a.txt"), "content": "new text"}),
            ),
            ("create_directory", json!({"path": at("d/new")})),
            (
                "write_file",
                json!({"path": at("d/new/b.txt"), "content": "b"}),
            ),
            (
                "move_file",
                json!({"source": at("d/a.txt"), "destination": at("d/c.txt")}),
            ),
            (
                "write_file",
                json!({"path": "/outside/the/allowed/directory", "content": ""}),
            ),
        ],
        undone: 4,
        undo_calls: 4,
        unknown_failure: false,
        observe: Observe::Tree(root.to_path_buf()),
        set_aside: vec!["d/new.rolled-back", "d/new.rolled-back/b.txt.rolled-back"],
    })
}

/// excel-mcp-server: cells written and a sheet deleted come back from the workbook as it was
/// before each call; sheets created, copied and renamed are undone by the sheet tools.
fn excel_case(program: &Path, root: &Path) -> Result<Case, String> {
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let book = "book.xlsx";
    Ok(Case {
        label: "excel-mcp-server".to_owned(),
        overlay: "excel-mcp-server",
        server: vec![
            text(program),
            "stdio".to_owned(),
            "--allow-dir".to_owned(),
            text(root),
        ],
        env: Vec::new(),
        setup: vec![
            (
                "create_workbook",
                json!({"path": book, "sheets": ["Data", "Old"]}),
            ),
            (
                "write_range",
                json!({"path": book, "sheet": "Data", "at": "A1", "rows": [["item", "count"], ["tea", 3]]}),
            ),
        ],
        workflow: vec![
            (
                "write_range",
                json!({"path": book, "sheet": "Data", "at": "B2", "rows": [[7], [8]]}),
            ),
            ("create_sheet", json!({"path": book, "new_name": "New"})),
            (
                "rename_sheet",
                json!({"path": book, "sheet": "Old", "new_name": "Renamed"}),
            ),
            (
                "copy_sheet",
                json!({"path": book, "sheet": "Data", "new_name": "Copy"}),
            ),
            ("delete_sheet", json!({"path": book, "sheet": "Renamed"})),
            (
                "delete_sheet",
                json!({"path": book, "sheet": "No such sheet"}),
            ),
        ],
        undone: 5,
        undo_calls: 5,
        unknown_failure: false,
        observe: Observe::Reads(vec![
            ("describe_workbook", json!({"path": book})),
            ("read_range", json!({"path": book, "sheet": "Data"})),
        ]),
        set_aside: Vec::new(),
    })
}

/// mcp-server-git: files staged by the workflow are unstaged again, a file staged before the
/// workflow is staged again after each reset, the changes in the work tree stay, and the branch
/// checked out before the workflow is checked out again.
fn git_case(program: &Path, repo: &Path) -> Result<Case, String> {
    write(&repo.join("a.txt"), "a\n")?;
    write(&repo.join("b.txt"), "b\n")?;
    let git = |args: &[&str]| -> Result<(), String> {
        let mut command = Command::new("git");
        command
            .args([
                "-c",
                "user.name=catalog",
                "-c",
                "user.email=catalog@example.invalid",
            ])
            .args(args)
            .current_dir(repo);
        let output = live::run(command, ANSWER_TIMEOUT, &format!("git {}", args.join(" ")))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(output.failure(&format!("git {}", args.join(" "))))
        }
    };
    git(&["init", "--quiet", "--initial-branch", "main"])?;
    git(&["add", "a.txt", "b.txt"])?;
    git(&["commit", "--quiet", "--message", "first"])?;
    git(&["branch", "other"])?;
    write(&repo.join("a.txt"), "a changed\n")?;
    write(&repo.join("b.txt"), "b changed\n")?;
    write(&repo.join("d/c.txt"), "c\n")?;
    // Staged before the workflow too: a name with a space and a binary file.
    write(&repo.join("e f.txt"), "e\n")?;
    write(&repo.join("g.bin"), "\u{0}\u{1}")?;
    let path = text(repo);
    Ok(Case {
        label: "mcp-server-git".to_owned(),
        overlay: "mcp-git",
        server: vec![text(program)],
        env: Vec::new(),
        setup: vec![(
            "git_add",
            json!({"repo_path": path, "files": ["d/c.txt", "e f.txt", "g.bin"]}),
        )],
        workflow: vec![
            ("git_add", json!({"repo_path": path, "files": ["a.txt"]})),
            (
                "git_checkout",
                json!({"repo_path": path, "branch_name": "other"}),
            ),
            ("git_add", json!({"repo_path": path, "files": ["b.txt"]})),
            (
                "git_add",
                json!({"repo_path": path, "files": ["no-such-file.txt"]}),
            ),
        ],
        undone: 3,
        undo_calls: 5,
        unknown_failure: false,
        observe: Observe::Commands(
            repo.to_path_buf(),
            vec![
                vec!["git", "branch", "--show-current"],
                vec!["git", "status", "--porcelain=v1"],
                vec!["git", "diff"],
                vec!["git", "log", "--format=%H %s"],
            ],
        ),
        set_aside: Vec::new(),
    })
}

/// server-memory: entities, relations and observations created by the workflow go; an entity
/// and an observation that existed before stay, though the workflow named them again; an
/// observation, a relation and an entity the workflow deleted come back from what was read before
/// each delete, and names it asked to delete that did not exist are not created. The entity
/// deleted has relations from and to an entity not named in the delete, which only the second
/// call of its undo brings back (`open_nodes` of the 2025 release does not return them, and the
/// relation delete comes after the entity delete, so its undo, which runs first, does not bring
/// them back either). Entities and relations are set up in the order the undos append them, so
/// the graph read after the rollback lists them as before. The 2025
/// release answers every failure with a JSON-RPC internal error, whose outcome is unknown.
fn memory_case(version: &str, script: &Path, file: &Path, unknown_failure: bool) -> Case {
    Case {
        label: format!("server-memory {version}"),
        overlay: "memory-server",
        server: vec!["node".to_owned(), text(script)],
        env: vec![("MEMORY_FILE_PATH".to_owned(), text(file))],
        setup: vec![
            (
                "create_entities",
                json!({"entities": [
                    {"name": "kept", "entityType": "person", "observations": ["was here"]},
                    {"name": "third", "entityType": "place", "observations": []},
                    {"name": "other", "entityType": "place", "observations": ["by the sea"]}
                ]}),
            ),
            (
                "create_relations",
                json!({"relations": [
                    {"from": "kept", "to": "third", "relationType": "visits"},
                    {"from": "other", "to": "kept", "relationType": "is_home_of"},
                    {"from": "kept", "to": "other", "relationType": "lives_in"}
                ]}),
            ),
        ],
        workflow: vec![
            (
                "create_entities",
                json!({"entities": [
                    {"name": "ada", "entityType": "person", "observations": ["writes programs"]},
                    {"name": "kept", "entityType": "person", "observations": ["was here"]},
                    {"name": "bob", "entityType": "person", "observations": []}
                ]}),
            ),
            (
                "create_relations",
                json!({"relations": [{"from": "ada", "to": "kept", "relationType": "knows"}]}),
            ),
            (
                "add_observations",
                json!({"observations": [
                    {"entityName": "kept", "contents": ["was here", "met ada"]},
                    {"entityName": "ada", "contents": ["likes tea"]}
                ]}),
            ),
            (
                "delete_observations",
                json!({"deletions": [{"entityName": "kept", "observations": ["was here", "never said"]}]}),
            ),
            (
                "delete_entities",
                json!({"entityNames": ["other", "ghost"]}),
            ),
            (
                "delete_relations",
                json!({"relations": [
                    {"from": "kept", "to": "third", "relationType": "visits"},
                    {"from": "kept", "to": "nobody", "relationType": "knows"}
                ]}),
            ),
            ("create_entities", json!({"entities": "not an array"})),
        ],
        undone: 6,
        undo_calls: 7,
        unknown_failure,
        observe: Observe::Reads(vec![("read_graph", json!({}))]),
        set_aside: Vec::new(),
    }
}

/// Runs one case: lint, set-up, the state before, the workflow, the state after, the journal.
fn run_case(root: &Path, binary: &Path, tmp: &Path, case: &Case) -> Result<(), String> {
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

/// One MCP client session through `mcp-recovery proxy`, one request at a time.
struct Session {
    label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next: u64,
}

impl Session {
    /// Starts the proxy with `flags` in front of the case's server and initializes.
    fn start(binary: &Path, flags: &[String], case: &Case) -> Result<Session, String> {
        use std::os::unix::process::CommandExt as _;
        let mut command = Command::new(binary);
        command
            .arg("proxy")
            .args(flags)
            .arg("--")
            .args(&case.server)
            .envs(case.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        let mut child = command
            .spawn()
            .map_err(|e| format!("{}: cannot start the proxy: {e}", case.label))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut session = Session {
            label: case.label.clone(),
            stdin: child.stdin.take(),
            child,
            lines,
            next: 0,
        };
        session.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "mcp-recovery-catalog", "version": "1"}}),
        )?;
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(session)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("{}: writing to the proxy: {e}", self.label))
    }

    /// Sends one request and waits for its answer (the whole message).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let line = self.lines.recv_timeout(ANSWER_TIMEOUT).map_err(|_| {
                format!(
                    "{}: no answer to {method} within {ANSWER_TIMEOUT:?}",
                    self.label
                )
            })?;
            let message: Value = serde_json::from_str(&line).map_err(|e| {
                format!(
                    "{}: the proxy wrote a line that is not JSON: {e}",
                    self.label
                )
            })?;
            if message["id"] == id && message.get("method").is_none() {
                return Ok(message);
            }
        }
    }

    fn call(&mut self, name: &str, arguments: &Value) -> Result<Value, String> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Closes stdin and waits for the proxy to end (killing it after the answer timeout).
    fn finish(mut self) -> Result<(), String> {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + ANSWER_TIMEOUT;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!("{}: the proxy exited with {status}", self.label));
                }
                Ok(None) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(format!("{}: the proxy did not end", self.label));
                }
            }
        }
    }
}
