//! Where `--save` writes the tools/list of each live server: the path itself for one server, else
//! one file per source inside the directory, named after the source and never shared by two.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::Failure;
use crate::live::Server;

/// The file of each of `servers` (in order) under `save`: `save` itself for a single server
/// when `several` is false, else `save/STEM.json`, `STEM` the source's [`Server::save_stem`]
/// with every character but ASCII letters, digits, `-`, `_` and `.` written as `_`. Two sources
/// whose stems would name the same file (letter case aside, for file systems that ignore it)
/// get `-2`, `-3`, … in source order, so no save overwrites another.
pub fn save_paths(save: &Path, servers: &[Server], several: bool) -> Vec<PathBuf> {
    if !several {
        return servers.iter().map(|_| save.to_path_buf()).collect();
    }
    let mut taken = BTreeSet::new();
    servers
        .iter()
        .map(|server| save.join(unique(&sanitize(&server.save_stem()), &mut taken)))
        .collect()
}

/// `stem` made a file name: the characters a file name may hold everywhere, no leading dot.
fn sanitize(stem: &str) -> String {
    let file: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let file = file.trim_start_matches('.');
    if file.is_empty() {
        "server".to_owned()
    } else {
        file.to_owned()
    }
}

/// `STEM.json`, or the first `STEM-N.json` (N from 2) that no earlier source took.
fn unique(stem: &str, taken: &mut BTreeSet<String>) -> String {
    let mut n = 1;
    loop {
        let file = match n {
            1 => format!("{stem}.json"),
            _ => format!("{stem}-{n}.json"),
        };
        if taken.insert(file.to_ascii_lowercase()) {
            return file;
        }
        n += 1;
    }
}

/// Writes `text` to `path` (creating the directory of a multi-server save).
pub fn save(path: &Path, text: &str) -> Result<(), Failure> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Failure::WriteFile {
            path: path.display().to_string(),
            source,
        })?;
    }
    crate::written::write(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::Kind;
    use mcp_recovery_client::{Options, Target};

    fn server(name: &str, stem: &str) -> Server {
        let target = Target::Stdio {
            program: "x".into(),
            args: Vec::new(),
        };
        Server::named(target, Options::default(), name, Kind::Config).saved_as(stem)
    }

    #[test]
    fn every_source_gets_its_own_file() {
        let servers = [
            server("c.json#a b", "a b"),
            server("c.json#a_b", "a_b"),
            server("c.json#A_B", "A_B"),
            server("one.json#/packages/0", "one_packages_0"),
            server("sub/one.json#/packages/0", "one_packages_0"),
            server("c.json#..", ".."),
        ];
        let paths = save_paths(Path::new("d"), &servers, true);
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "a_b.json",
                "a_b-2.json",
                "A_B-3.json",
                "one_packages_0.json",
                "one_packages_0-2.json",
                "server.json",
            ]
        );
        assert!(paths.iter().all(|p| p.parent() == Some(Path::new("d"))));
        let one = save_paths(Path::new("f.json"), &servers[..1], false);
        assert_eq!(one, [PathBuf::from("f.json")]);
    }
}
