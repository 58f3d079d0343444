//! The readers of the overlay catalog (`overlays/`) on text their servers print: each names
//! what it must and nothing else.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_recovery_model::{Overlay, OverlayFormat, Tool};
use serde_json::{Value, json};

/// What `name`'s reader in the catalog overlay `overlay` reads from `text`.
fn read(overlay: &str, name: &str, text: &str) -> Result<Value, String> {
    let mut list = json!({"tools": [{"name": name, "inputSchema": {"type": "object"}}]});
    Overlay::parse(overlay, OverlayFormat::Toml)
        .unwrap()
        .apply(&mut list);
    let tool: Tool = serde_json::from_value(list["tools"][0].clone()).unwrap();
    let result = json!({"content": [{"type": "text", "text": text}]});
    tool.result_reader()
        .unwrap()
        .read(result.as_object().unwrap())
}

/// `git diff --cached --unified=0` as git prints it: a new binary, a staged deletion, a rename,
/// names with spaces (followed by a tab on the `+++` line) and a name git quotes.
const STAGED: &str = "Staged changes:
diff --git a/bin2.dat b/bin2.dat
new file mode 100644
index 0000000..1d3c2d4
Binary files /dev/null and b/bin2.dat differ
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-z
diff --git a/plan b dir/x y.txt b/moved.txt
similarity index 100%
rename from plan b dir/x y.txt
rename to moved.txt
diff --git a/new file.txt b/new file.txt
new file mode 100644
--- /dev/null
+++ b/new file.txt\t
@@ -0,0 +1 @@
+q
diff --git a/plan b b/plan b
--- a/plan b\t
+++ b/plan b\t
@@ -1 +1 @@
-x
+new
diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"
--- \"a/caf\\303\\251.txt\"
+++ \"b/caf\\303\\251.txt\"
";

#[test]
fn mcp_git_reads_every_staged_path_as_it_is_now() {
    let overlay = include_str!("../../../overlays/mcp-git.toml");
    let paths = read(overlay, "git_diff_staged", STAGED).unwrap();
    assert_eq!(
        paths,
        json!([{"path": "bin2.dat"}, {"path": "moved.txt"}, {"path": "new file.txt"},
               {"path": "plan b"}])
    );
    assert_eq!(
        read(overlay, "git_diff_staged", "Staged changes:\n").unwrap(),
        json!([])
    );
}

#[test]
fn mcp_git_reads_the_branch_or_nothing() {
    let overlay = include_str!("../../../overlays/mcp-git.toml");
    let status = "Repository status:\nOn branch main\nnothing to commit, working tree clean\n";
    assert_eq!(
        read(overlay, "git_status", status).unwrap(),
        json!({"branch": "main"})
    );
    let detached = "Repository status:\nHEAD detached at 1a2b3c4\n";
    assert!(read(overlay, "git_status", detached).is_err());
}
