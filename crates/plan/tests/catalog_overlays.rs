//! Undos the catalog's overlays (`overlays/`) make from before-images read from text: plans for
//! recorded calls of a knowledge-graph server whose reads answer with JSON text only, and of a
//! git server whose status is prose read with a pattern. The live check (`cargo xtask
//! check-catalog`) runs the same overlays against the published servers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_plan::{Plan, Status, build_plan, load_tools, parse_trace};
use serde_json::{Value, json};

fn overlay(name: &str) -> Overlay {
    let path = format!("{}/../../overlays/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    Overlay::parse(&std::fs::read_to_string(path).unwrap(), OverlayFormat::Toml).unwrap()
}

fn plan(overlay_name: &str, tools: Value, lines: &[Value]) -> Plan {
    let mut listed = json!({ "tools": tools });
    overlay(overlay_name).apply(&mut listed);
    let trace: String = lines.iter().map(|line| format!("{line}\n")).collect();
    build_plan(&load_tools(&listed).unwrap(), &parse_trace(&trace).unwrap())
}

/// The plan's calls, each tool with its arguments.
fn calls_of(plan: &Plan) -> Vec<(&str, Value)> {
    plan.calls()
        .map(|c| (c.name.as_str(), Value::Object(c.arguments.clone())))
        .collect()
}

fn text(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn tool(name: &str, properties: Value, required: &[&str]) -> Value {
    json!({"name": name, "inputSchema": {"type": "object", "properties": properties, "required": required}})
}

/// The knowledge-graph tools as the release without structured results lists them: no hints,
/// no output schemas.
fn graph_tools() -> Value {
    let names = json!({"type": "array", "items": {"type": "string"}});
    let any = json!({"type": "array", "items": {"type": "object"}});
    json!([
        tool("create_entities", json!({"entities": any}), &["entities"]),
        tool(
            "create_relations",
            json!({"relations": any}),
            &["relations"]
        ),
        tool(
            "add_observations",
            json!({"observations": any}),
            &["observations"]
        ),
        tool(
            "delete_entities",
            json!({"entityNames": names}),
            &["entityNames"]
        ),
        tool(
            "delete_observations",
            json!({"deletions": any}),
            &["deletions"]
        ),
        tool(
            "delete_relations",
            json!({"relations": any}),
            &["relations"]
        ),
        tool("read_graph", json!({}), &[]),
        tool(
            "search_nodes",
            json!({"query": {"type": "string"}}),
            &["query"]
        ),
        tool("open_nodes", json!({"names": names}), &["names"]),
    ])
}

#[test]
fn graph_deletes_are_undone_from_what_was_read_before_them() {
    let opened = json!({
        "entities": [{"name": "kept", "entityType": "person", "observations": ["met ada", "was here"]}],
        "relations": [{"from": "kept", "to": "other", "relationType": "lives_in"}]
    });
    let graph = json!({
        "entities": [{"name": "kept", "entityType": "person", "observations": []}],
        "relations": [{"from": "kept", "to": "other", "relationType": "lives_in"}]
    });
    let lines = [
        json!({"name": "delete_observations",
            "arguments": {"deletions": [{"entityName": "kept", "observations": ["was here", "never said"]}]},
            "result": text("Observations deleted successfully"),
            "before": {"name": "open_nodes", "arguments": {"names": ["kept"]},
                       "result": text(&opened.to_string())}}),
        json!({"name": "delete_relations",
            "arguments": {"relations": [{"from": "kept", "to": "other", "relationType": "lives_in"}]},
            "result": text("Relations deleted successfully"),
            "before": {"name": "read_graph", "arguments": {}, "result": text(&graph.to_string())}}),
        json!({"name": "delete_entities",
            "arguments": {"entityNames": ["kept", "ghost"]},
            "result": text("Entities deleted successfully"),
            "before": {"name": "read_graph", "arguments": {},
                       "result": text(&opened.to_string())}}),
    ];
    let plan = plan("memory-server", graph_tools(), &lines);
    // The entity comes back first, then its relations, in one step.
    assert_eq!(plan.steps[0].then.len(), 1, "{plan:#?}");
    let calls = calls_of(&plan);
    assert_eq!(
        calls,
        [
            (
                "create_entities",
                json!({"entities": [{"name": "kept", "entityType": "person", "observations": ["met ada", "was here"]}]})
            ),
            (
                "create_relations",
                json!({"relations": [{"from": "kept", "to": "other", "relationType": "lives_in"}]})
            ),
            (
                "create_relations",
                json!({"relations": [{"from": "kept", "to": "other", "relationType": "lives_in"}]})
            ),
            (
                "add_observations",
                json!({"observations": [{"entityName": "kept", "contents": ["met ada", "was here"]}]})
            ),
        ],
        "{plan:#?}"
    );
}

#[test]
fn a_read_whose_text_is_not_the_declared_value_leaves_the_undo_unavailable() {
    for (read, why) in [
        (text("Knowledge graph is empty"), "not JSON"),
        (text(r#"{"entities": "none"}"#), "does not match the schema"),
        (json!({"content": []}), "no text content"),
    ] {
        let line = json!({"name": "delete_relations",
            "arguments": {"relations": [{"from": "a", "to": "b", "relationType": "knows"}]},
            "result": text("Relations deleted successfully"),
            "before": {"name": "read_graph", "arguments": {}, "result": read}});
        let plan = plan("memory-server", graph_tools(), &[line]);
        let step = &plan.steps[0];
        assert_eq!(step.status, Status::Unavailable, "{step:#?}");
        assert!(step.reason.contains(why), "{why}: {}", step.reason);
    }
}

#[test]
fn a_checkout_is_undone_by_the_branch_the_status_named() {
    let repo = json!({"repo_path": {"type": "string"}});
    let tools = json!([
        tool("git_add", json!({"repo_path": {"type": "string"}, "files": {"type": "array"}}), &["repo_path", "files"]),
        tool("git_reset", repo.clone(), &["repo_path"]),
        tool("git_commit", json!({"repo_path": {"type": "string"}, "message": {"type": "string"}}), &["repo_path", "message"]),
        tool("git_create_branch", json!({"repo_path": {"type": "string"}, "branch_name": {"type": "string"}}), &["repo_path", "branch_name"]),
        tool("git_checkout", json!({"repo_path": {"type": "string"}, "branch_name": {"type": "string"}}), &["repo_path", "branch_name"]),
        {"name": "git_status", "inputSchema": {"type": "object", "properties": repo, "required": ["repo_path"]},
         "annotations": {"readOnlyHint": true}},
    ]);
    let checkout = |status: &str| {
        json!({"name": "git_checkout", "arguments": {"repo_path": "/r", "branch_name": "other"},
            "result": text("Switched to branch 'other'"),
            "before": {"name": "git_status", "arguments": {"repo_path": "/r"},
                       "result": text(status)}})
    };
    let on_main =
        "Repository status:\nOn branch main\nChanges to be committed:\n\tmodified:   a.txt";
    // Lines may end in CRLF (git on Windows): the branch is the same.
    for status in [on_main.to_owned(), on_main.replace('\n', "\r\n")] {
        let plan_on_main = plan("mcp-git", tools.clone(), &[checkout(&status)]);
        let calls = calls_of(&plan_on_main);
        assert_eq!(
            calls,
            [(
                "git_checkout",
                json!({"repo_path": "/r", "branch_name": "main"})
            )]
        );
    }
    // A detached HEAD names no branch: nothing is guessed.
    let detached = plan(
        "mcp-git",
        tools,
        &[checkout("Repository status:\nHEAD detached at 1a2b3c4")],
    );
    let step = &detached.steps[0];
    assert_eq!(step.status, Status::Unavailable, "{step:#?}");
    assert!(
        step.reason.contains("does not match the pattern"),
        "{}",
        step.reason
    );
}

/// `git diff --cached --unified=0` as git prints it: a change, a new binary file, names with
/// spaces (a tab ends their `---` and `+++` lines), names that end in ` differ`, and a file
/// whose text has lines that read as a file's header (`-- a/README.md`, `++ b/README.md` and
/// `++ b/other.txt`, each written with git's `-` or `+` in front).
const STAGED: &str = "Staged changes:
diff --git a/a.txt b/a.txt
index 7898192..4f8ac6b 100644
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-a
+a changed
diff --git a/bin2.dat b/bin2.dat
new file mode 100644
index 0000000..1d3c2d4
Binary files /dev/null and b/bin2.dat differ
diff --git a/new file.txt b/new file.txt
new file mode 100644
index 0000000..ea1a3b3
--- /dev/null
+++ b/new file.txt\t
@@ -0,0 +1 @@
+q
diff --git a/plan b b/plan b
index 587be6b..3e75765 100644
--- a/plan b\t
+++ b/plan b\t
@@ -1 +1 @@
-x
+new
diff --git a/x differ b/x differ
index 2e65efe..0000000 100644
--- a/x differ\t
+++ b/x differ\t
@@ -1 +1 @@
-a
+b
diff --git a/pic differ b/pic differ
index 1b2c3d4..5e6f7a8 100644
Binary files a/pic differ and b/pic differ differ
diff --git a/notes.txt b/notes.txt
index 1269488..a8b2a1b 100644
--- a/notes.txt
+++ b/notes.txt
@@ -2 +2 @@
--- a/README.md
+++ b/README.md
@@ -5,0 +6 @@
+++ b/other.txt
";

/// What `git_add` cannot stage again, or a diff not in git's default form, each added to
/// [`STAGED`]: a staged deletion (text and binary), a rename (its old name), a name git quotes,
/// the headers of `diff.noprefix` and `diff.mnemonicPrefix`, colour (`color.ui=always`) and the
/// output of a `diff.external` tool.
const UNREADABLE: [&str; 8] = [
    "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n",
    "diff --git a/old.bin b/old.bin\ndeleted file mode 100644\nindex 1b2c3d4..0000000\nBinary files a/old.bin and /dev/null differ\n",
    "diff --git a/plan b dir/x y.txt b/moved.txt\nsimilarity index 100%\nrename from plan b dir/x y.txt\nrename to moved.txt\n",
    "diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\n--- \"a/caf\\303\\251.txt\"\n+++ \"b/caf\\303\\251.txt\"\n",
    "diff --git c.txt c.txt\nindex 1..2 100644\n--- c.txt\n+++ c.txt\n@@ -1 +1 @@\n-c\n+d\n",
    "diff --git i/c.txt w/c.txt\nindex 1..2 100644\n--- i/c.txt\n+++ w/c.txt\n",
    "\u{1b}[1mdiff --git a/c.txt b/c.txt\u{1b}[m\n\u{1b}[1mindex 1..2 100644\u{1b}[m\n\u{1b}[1m--- a/c.txt\u{1b}[m\n\u{1b}[1m+++ b/c.txt\u{1b}[m\n",
    "c.txt --- Text\n1 c                 1 d\n",
];

#[test]
fn staging_is_undone_by_a_reset_and_a_restage_of_what_was_staged_before() {
    let repo = json!({"repo_path": {"type": "string"}});
    let files = json!({"repo_path": {"type": "string"}, "files": {"type": "array", "items": {"type": "string"}}});
    let tools = json!([
        tool("git_add", files, &["repo_path", "files"]),
        tool("git_reset", repo, &["repo_path"]),
        {"name": "git_diff_staged", "inputSchema": {"type": "object", "properties": {
            "repo_path": {"type": "string"}, "context_lines": {"type": "integer"}}},
         "annotations": {"readOnlyHint": true}},
    ]);
    let add = |staged: &str| {
        json!({"name": "git_add", "arguments": {"repo_path": "/r", "files": ["b.txt"]},
            "result": text("Files staged successfully"),
            "before": {"name": "git_diff_staged", "arguments": {"repo_path": "/r", "context_lines": 0},
                       "result": text(staged)}})
    };
    // Each path as it is now. Lines that end in CRLF name the same paths.
    for staged in [STAGED.to_owned(), STAGED.replace('\n', "\r\n")] {
        let restaged = plan("mcp-git", tools.clone(), &[add(&staged)]);
        let calls = calls_of(&restaged);
        assert_eq!(
            calls,
            [
                ("git_reset", json!({"repo_path": "/r"})),
                (
                    "git_add",
                    json!({"repo_path": "/r", "files": ["a.txt", "bin2.dat", "new file.txt",
                        "plan b", "x differ", "pic differ", "notes.txt"]})
                ),
            ]
        );
    }
    // What cannot be staged again, or read whole, leaves the undo unavailable: nothing is reset.
    for unreadable in UNREADABLE {
        let staged = format!("{STAGED}{unreadable}");
        let refused = plan("mcp-git", tools.clone(), &[add(&staged)]);
        assert_eq!(refused.calls().count(), 0, "{unreadable:?}: {refused:#?}");
        assert_eq!(
            refused.steps[0].status,
            Status::Unavailable,
            "{unreadable:?}"
        );
    }
    // Nothing staged before: the reset alone (the server refuses an empty list to stage).
    let clean = plan("mcp-git", tools, &[add("Staged changes:\n")]);
    let names: Vec<&str> = clean.calls().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["git_reset"], "{clean:#?}");
}

/// The file server's tools the filesystem overlay names.
fn file_tools() -> Value {
    let path = json!({"path": {"type": "string"}});
    json!([
        tool("write_file", json!({"path": {"type": "string"}, "content": {"type": "string"}}), &["path", "content"]),
        tool("move_file", json!({"source": {"type": "string"}, "destination": {"type": "string"}}), &["source", "destination"]),
        tool("edit_file", json!({"path": {"type": "string"}, "edits": {"type": "array"}}), &["path", "edits"]),
        tool("create_directory", path.clone(), &["path"]),
        {"name": "read_text_file", "inputSchema": {"type": "object", "properties": path, "required": ["path"]},
         "annotations": {"readOnlyHint": true}},
        {"name": "get_file_info", "inputSchema": {"type": "object", "properties": path, "required": ["path"]},
         "annotations": {"readOnlyHint": true}},
    ])
}

#[test]
fn only_a_read_that_failed_for_absence_moves_a_written_file_away() {
    let write = |read: &str| {
        json!({"name": "write_file", "arguments": {"path": "/d/ENOENT.txt", "content": "new"},
            "result": text("Successfully wrote to /d/ENOENT.txt"),
            "before": {"name": "read_text_file", "arguments": {"path": "/d/ENOENT.txt"},
                       "result": {"content": [{"type": "text", "text": read}], "isError": true}},
            "after": {"name": "read_text_file", "arguments": {"path": "/d/ENOENT.txt"},
                      "result": text("new")}})
    };
    let absent = plan(
        "secure-filesystem-server",
        file_tools(),
        &[write(
            "ENOENT: no such file or directory, open '/d/ENOENT.txt'",
        )],
    );
    assert_eq!(
        calls_of(&absent),
        [(
            "move_file",
            json!({"source": "/d/ENOENT.txt", "destination": "/d/ENOENT.txt.rolled-back"})
        )]
    );
    // A file it may not read, or one too large to read, may exist: moving it away would lose it.
    for why in [
        "EACCES: permission denied, open '/d/ENOENT.txt'",
        "Cannot create a string longer than 0x1fffffe8 characters",
    ] {
        let unknown = plan("secure-filesystem-server", file_tools(), &[write(why)]);
        let step = &unknown.steps[0];
        assert_eq!(step.status, Status::Unavailable, "{step:#?}");
        assert!(step.reason.contains("is unknown"), "{}", step.reason);
        assert!(step.reason.contains(&why[..20]), "{}", step.reason);
    }
}
