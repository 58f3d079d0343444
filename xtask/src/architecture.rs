//! The crate map of `docs/architecture.md` against the dependency graph `cargo metadata` reports
//! (a test: `cargo test -p xtask crate_map`).

use std::collections::BTreeMap;
use std::path::Path;

/// Prefix of every published crate's name; the map names crates without it.
const PREFIX: &str = "mcp-recovery-";

/// A crate's workspace dependencies: name → whether it is optional.
type Deps = BTreeMap<String, bool>;

/// The normal (not dev, not build) workspace dependencies of every workspace package.
pub fn metadata_graph(root: &Path) -> Result<BTreeMap<String, Deps>, String> {
    let metadata = crate::workspace::cargo_metadata(root)?;
    let packages = metadata["packages"]
        .as_array()
        .ok_or("cargo metadata: no `packages` array")?;
    let mut graph = BTreeMap::new();
    for package in packages {
        let name = package["name"]
            .as_str()
            .ok_or("cargo metadata: a package without a name")?;
        let mut deps = Deps::new();
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            if dep.get("path").is_some() && dep["kind"].is_null() {
                let dep_name = dep["name"]
                    .as_str()
                    .ok_or("cargo metadata: a nameless dependency")?;
                deps.insert(dep_name.to_owned(), dep["optional"] == true);
            }
        }
        graph.insert(name.to_owned(), deps);
    }
    Ok(graph)
}

/// The crate map table of `docs/architecture.md`, in table order: every row
/// `| `crate` … | dep, dep (optional: …) |`.
pub fn documented_graph(text: &str) -> Result<Vec<(String, Deps)>, String> {
    let start = text
        .find("| crate | depends on (workspace crates) |")
        .ok_or("docs/architecture.md has no crate map table")?;
    let mut rows: Vec<(String, Deps)> = Vec::new();
    for line in text[start..].lines().skip(2) {
        let Some(row) = line.strip_prefix('|') else {
            break;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let [name, deps, ..] = cells.as_slice() else {
            return Err(format!(
                "docs/architecture.md: a crate map row without two cells: {line}"
            ));
        };
        let name = name.split('`').nth(1).ok_or_else(|| {
            format!("docs/architecture.md: a crate map row names no `crate`: {line}")
        })?;
        let mut parsed = Deps::new();
        if *deps != "—" {
            for item in deps.split(", ") {
                let (short, optional) = match item.split_once(" (") {
                    Some((short, note)) => (short, note.starts_with("optional")),
                    None => (item, false),
                };
                parsed.insert(format!("{PREFIX}{short}"), optional);
            }
        }
        if rows.iter().any(|(seen, _)| seen == name) {
            return Err(format!("docs/architecture.md: `{name}` has two rows"));
        }
        rows.push((name.to_owned(), parsed));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_map_matches_cargo_metadata() {
        let root = crate::workspace::repo_root();
        let text = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
        let rows = documented_graph(&text).unwrap();
        let documented: BTreeMap<String, Deps> = rows.iter().cloned().collect();
        let actual = metadata_graph(&root).unwrap();
        assert_eq!(
            documented, actual,
            "docs/architecture.md's crate map (left) differs from cargo metadata (right)"
        );
        // Dependencies point up the table: each crate's are listed before it.
        for (position, (name, deps)) in rows.iter().enumerate() {
            for dep in deps.keys() {
                let at = rows.iter().position(|(n, _)| n == dep).unwrap();
                assert!(at < position, "{name} depends on {dep}, listed after it");
            }
        }
    }

    #[test]
    fn the_table_reader_sees_what_is_written() {
        let text = "| crate | depends on (workspace crates) |\n|---|---|\n\
                    | `mcp-recovery-a` | — |\n| `mcp-recovery` (cli) | a, b (optional: x) |\n\nafter\n";
        let rows = documented_graph(text).unwrap();
        assert_eq!(
            rows,
            [
                ("mcp-recovery-a".to_owned(), Deps::new()),
                (
                    "mcp-recovery".to_owned(),
                    Deps::from([
                        ("mcp-recovery-a".to_owned(), false),
                        ("mcp-recovery-b".to_owned(), true)
                    ])
                )
            ]
        );
        assert!(documented_graph("no table").is_err());
    }
}
