//! The workflows, one per published server the catalog covers, with the state each sets up.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use super::case::{ANSWER_TIMEOUT, Case, Observe, text};
use crate::live;

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// server-filesystem: a file overwritten gets its text back, a file moved goes back, and a
/// directory and a file created are moved out of the way (the server has no delete).
pub(super) fn filesystem_case(script: &Path, root: &Path) -> Result<Case, String> {
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
pub(super) fn excel_case(program: &Path, root: &Path) -> Result<Case, String> {
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
pub(super) fn git_case(program: &Path, repo: &Path) -> Result<Case, String> {
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
pub(super) fn memory_case(
    version: &str,
    script: &Path,
    file: &Path,
    unknown_failure: bool,
) -> Case {
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
