//! `cargo xtask suggest-recall [--binary PATH]`: how many of the undo pairs a careful reader
//! finds (`xtask/suggest-pairs.json`) `mcp-recovery suggest` drafts, on the live `tools/list`
//! of each server installed pinned into a temporary directory, and which drafts are wrong.
//!
//! A draft is found when its tool and compensator are a listed pair; it is wrong when its tool
//! has a listed pair with another compensator, when its tool has no listed pair at all, or when
//! it declares a tool irreversible that the list does not. The check fails on a wrong draft.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::live::{self, timed};
use crate::workspace::read_json;

/// Time limit of one `suggest` run against one live server, start to shutdown.
const SUGGEST_TIMEOUT: Duration = Duration::from_secs(120);

/// One server of the list.
struct Server {
    name: String,
    npm: Option<(String, String)>,
    pypi: Option<String>,
    run: Vec<String>,
    /// Tool → the tool that undoes it.
    pairs: BTreeMap<String, String>,
    irreversible: Vec<String>,
}

/// What one draft is judged.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// A listed pair.
    Found,
    /// A listed irreversible tool: right, but not a pair.
    Irreversible,
    Wrong(String),
}

/// The figures of one server.
#[derive(Default)]
struct Tally {
    found: usize,
    wrong: Vec<String>,
    missed: Vec<String>,
}

/// Runs the measurement; `args` may name the binary to measure instead of building it.
pub fn check(root: &Path, args: &[&str]) -> Result<(), String> {
    let binary = match args {
        [] => timed("build mcp-recovery", || {
            live::build_binary(root, "mcp-recovery", "mcp-recovery")
        })?,
        ["--binary", path] => PathBuf::from(path),
        _ => return Err("usage: cargo xtask suggest-recall [--binary PATH]".to_owned()),
    };
    let list_path = root.join("xtask/suggest-pairs.json");
    let servers =
        servers(&read_json(&list_path)?).map_err(|e| format!("{}: {e}", list_path.display()))?;
    let tmp_dir = crate::workspace::temp_dir("mcp-recovery-suggest-recall")?;
    let tmp = tmp_dir.path();
    println!("temporary directory: {}", tmp.display());
    let npm: Vec<(&str, &str)> = servers
        .iter()
        .filter_map(|s| s.npm.as_ref())
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let pypi: Vec<&str> = servers.iter().filter_map(|s| s.pypi.as_deref()).collect();
    timed("npm install", || npm_install(&tmp.join("npm"), &npm))?;
    timed("pip install", || live::venv(&tmp.join("venv"), &pypi))?;
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;

    println!(
        "\n| server | tools | curated pairs | found | wrong drafts | drafts |\n|---|---:|---:|---:|---:|---:|"
    );
    let (mut curated, mut found, mut wrong) = (0, 0, Vec::new());
    let mut missed = Vec::new();
    for server in &servers {
        let (tools, overlay) = draft(&binary, tmp, &home, server)?;
        let tally = judge(server, &overlay);
        println!(
            "| `{}` | {tools} | {} | {} | {} | {} |",
            server.name,
            server.pairs.len(),
            tally.found,
            tally.wrong.len(),
            overlay.len()
        );
        curated += server.pairs.len();
        found += tally.found;
        wrong.extend(tally.wrong.iter().map(|w| format!("{}: {w}", server.name)));
        missed.extend(tally.missed.iter().map(|m| format!("{}: {m}", server.name)));
    }
    let recall = if curated == 0 {
        0.0
    } else {
        100.0 * found as f64 / curated as f64
    };
    println!(
        "| **all {}** | | **{curated}** | **{found}** | **{}** | |",
        servers.len(),
        wrong.len()
    );
    println!("\nrecall: {found} of {curated} curated pairs ({recall:.0}%)");
    for line in &missed {
        println!("missed  {line}");
    }
    for line in &wrong {
        println!("WRONG   {line}");
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("suggest-recall: {} wrong draft(s)", wrong.len()))
    }
}

/// The servers of the list, every member checked.
fn servers(document: &Value) -> Result<Vec<Server>, String> {
    let list = document["servers"]
        .as_array()
        .ok_or("/servers must be an array")?;
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            let at = format!("/servers/{i}");
            let text = |v: &Value, what: &str| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{at}/{what} must be a string"))
            };
            let npm = match &s["npm"] {
                Value::Null => None,
                Value::Array(p) if p.len() == 2 => {
                    Some((text(&p[0], "npm/0")?, text(&p[1], "npm/1")?))
                }
                _ => return Err(format!("{at}/npm must be [name, version]")),
            };
            let pypi = match &s["pypi"] {
                Value::Null => None,
                v => Some(text(v, "pypi")?),
            };
            let run = s["run"]
                .as_array()
                .ok_or_else(|| format!("{at}/run must be an array"))?
                .iter()
                .map(|a| text(a, "run"))
                .collect::<Result<Vec<_>, _>>()?;
            let mut pairs = BTreeMap::new();
            for (j, p) in s["pairs"].as_array().into_iter().flatten().enumerate() {
                let tool = text(&p["tool"], &format!("pairs/{j}/tool"))?;
                let undo = text(&p["undo"], &format!("pairs/{j}/undo"))?;
                text(&p["why"], &format!("pairs/{j}/why"))?;
                if pairs.insert(tool.clone(), undo).is_some() {
                    return Err(format!("{at}/pairs/{j}: '{tool}' is listed twice"));
                }
            }
            let irreversible = s["irreversible"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(j, p)| {
                    text(&p["why"], &format!("irreversible/{j}/why"))?;
                    text(&p["tool"], &format!("irreversible/{j}/tool"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if npm.is_some() == pypi.is_some() {
                return Err(format!("{at}: exactly one of npm and pypi"));
            }
            Ok(Server {
                name: text(&s["name"], "name")?,
                npm,
                pypi,
                run,
                pairs,
                irreversible,
            })
        })
        .collect()
}

/// Installs pinned npm packages without running their install scripts (none of these servers
/// needs one to list its tools, and some would download browsers).
fn npm_install(prefix: &Path, packages: &[(&str, &str)]) -> Result<(), String> {
    let step = "step `npm install`";
    live::probe("npm", step)?;
    let mut command = Command::new("npm");
    command
        .arg("install")
        .arg("--prefix")
        .arg(prefix)
        .args([
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .args(packages.iter().map(|(n, v)| format!("{n}@{v}")))
        .env("npm_config_update_notifier", "false");
    let output = live::run(command, live::INSTALL_TIMEOUT * 2, step)?;
    if !output.status.success() {
        return Err(output.failure(step));
    }
    for (name, version) in packages {
        let manifest = prefix.join("node_modules").join(name).join("package.json");
        let installed = read_json(&manifest)?;
        if installed["version"] != *version {
            return Err(format!(
                "{step}: {name} installed as {}, not the pinned {version}",
                installed["version"]
            ));
        }
    }
    Ok(())
}

/// Runs `mcp-recovery suggest` against the live server: the number of tools it listed and,
/// per drafted tool, its compensator (`None` for irreversible).
fn draft(
    binary: &Path,
    tmp: &Path,
    home: &Path,
    server: &Server,
) -> Result<(usize, BTreeMap<String, Option<String>>), String> {
    let dir = tmp.join("dirs").join(&server.name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let argv: Vec<String> = server
        .run
        .iter()
        .map(|a| {
            a.replace("{npm}", &path(&tmp.join("npm/node_modules")))
                .replace("{venv}", &path(&tmp.join("venv/bin")))
                .replace("{dir}", &path(&dir))
        })
        .collect();
    let step = format!("step `suggest {}`", server.name);
    let mut command = Command::new(binary);
    command
        .args(["suggest", "--quiet", "--format", "json", "--stdio", "--"])
        .args(&argv)
        .current_dir(&dir)
        // Servers that keep settings in the home directory keep them here.
        .env("HOME", home);
    let output = live::run(command, SUGGEST_TIMEOUT, &step)?;
    if !output.status.success() {
        return Err(output.failure(&step));
    }
    let overlay: Value = serde_json::from_str(&output.stdout)
        .map_err(|e| format!("{step}: the overlay is not JSON: {e}"))?;
    let tools = output
        .stderr
        .lines()
        .rev()
        .find_map(|l| l.split(" suggestion(s) for ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("{step}: no summary line on stderr"))?;
    let drafts = overlay["tools"]
        .as_object()
        .ok_or_else(|| format!("{step}: the overlay has no tools"))?
        .iter()
        .map(|(tool, entry)| (tool.clone(), compensator(entry)))
        .collect();
    Ok((tools, drafts))
}

/// The tool a drafted entry compensates with: either carrier, or the write of a before-image;
/// `None` for an irreversible declaration.
fn compensator(entry: &Value) -> Option<String> {
    [
        "/_meta/dev.chronomcp~1compensate/compensation/toolName",
        "/annotations/recovery/compensatingOperation/operationId",
        "/before/found/operationId",
        "/before/missing/operationId",
    ]
    .iter()
    .find_map(|p| entry.pointer(p).and_then(Value::as_str))
    .map(str::to_owned)
}

/// Each draft against the list.
fn judge(server: &Server, drafts: &BTreeMap<String, Option<String>>) -> Tally {
    let mut tally = Tally::default();
    for (tool, undo) in drafts {
        match verdict(server, tool, undo.as_deref()) {
            Verdict::Found => tally.found += 1,
            Verdict::Irreversible => {}
            Verdict::Wrong(why) => tally.wrong.push(why),
        }
    }
    for (tool, undo) in &server.pairs {
        if !drafts.contains_key(tool) {
            tally.missed.push(format!("{tool} → {undo}"));
        }
    }
    tally
}

fn verdict(server: &Server, tool: &str, undo: Option<&str>) -> Verdict {
    match (server.pairs.get(tool), undo) {
        (Some(listed), Some(drafted)) if listed == drafted => Verdict::Found,
        (Some(listed), drafted) => Verdict::Wrong(format!(
            "{tool} drafted with {}, but {listed} undoes it",
            drafted.unwrap_or("irreversible")
        )),
        (None, None) if server.irreversible.iter().any(|t| t == tool) => Verdict::Irreversible,
        (None, None) => Verdict::Wrong(format!("{tool} drafted irreversible, not so listed")),
        (None, Some(drafted)) => Verdict::Wrong(format!(
            "{tool} drafted with {drafted}, a pair not in the list"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drafts_are_judged_against_the_list() {
        let document: Value = serde_json::from_str(
            r#"{"servers": [{"name": "s", "npm": ["p", "1"], "run": ["x"],
                "pairs": [{"tool": "create_a", "undo": "delete_a", "why": "w"}],
                "irreversible": [{"tool": "send_b", "why": "w"}]}]}"#,
        )
        .unwrap();
        let server = &servers(&document).unwrap()[0];
        assert_eq!(
            verdict(server, "create_a", Some("delete_a")),
            Verdict::Found
        );
        assert_eq!(verdict(server, "send_b", None), Verdict::Irreversible);
        assert!(matches!(
            verdict(server, "create_a", Some("drop_a")),
            Verdict::Wrong(_)
        ));
        assert!(matches!(
            verdict(server, "create_a", None),
            Verdict::Wrong(_)
        ));
        assert!(matches!(verdict(server, "send_c", None), Verdict::Wrong(_)));
        assert!(matches!(
            verdict(server, "add_c", Some("remove_c")),
            Verdict::Wrong(_)
        ));
        let drafts = BTreeMap::from([
            ("create_a".to_owned(), Some("delete_a".to_owned())),
            ("send_b".to_owned(), None),
        ]);
        let tally = judge(server, &drafts);
        assert_eq!(
            (tally.found, tally.wrong.len(), tally.missed.len()),
            (1, 0, 0)
        );
        assert!(servers(&serde_json::json!({"servers": [{"name": "s", "run": []}]})).is_err());
    }
}
