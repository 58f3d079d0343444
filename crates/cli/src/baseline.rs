//! Baselines: the findings a project has accepted for now. A finding is keyed by its file, tool,
//! code and pointer (never its line, which moves with every edit above it). Baselined findings do
//! not fail a run; an entry that matches no finding any more fails it, so a baseline only
//! shrinks.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path};

use mcp_recovery_base::text::escape_controls;
use serde_json::{Value, json};

use crate::Failure;
use crate::render::types::Finding;

/// Version of the baseline file format.
const VERSION: u64 = 1;

/// What identifies a finding across runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// The file, normalized with [`normalize_file`].
    pub file: String,
    /// The tool's name, if the finding concerns one.
    pub tool: Option<String>,
    /// The rule code.
    pub code: String,
    /// The RFC 6901 pointer.
    pub pointer: String,
}

impl Key {
    /// The key of a finding.
    pub fn of(finding: &Finding) -> Self {
        let d = &finding.diagnostic;
        Self {
            file: normalize_file(&finding.file),
            tool: d.tool.clone(),
            code: d.code.to_owned(),
            pointer: d.pointer.clone(),
        }
    }

    /// A stable 64-bit hash of the key (FNV-1a over its fields, each ended by a NUL), as 16 hex
    /// digits: the fingerprint SARIF and GitLab consumers track a finding by. `occurrence`
    /// tells apart findings that share a key.
    pub fn fingerprint(&self, occurrence: usize) -> String {
        const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
        const PRIME: u64 = 0x0000_0100_0000_01b3;
        let occurrence = occurrence.to_string();
        let fields = [
            self.file.as_str(),
            self.tool.as_deref().unwrap_or(""),
            self.code.as_str(),
            self.pointer.as_str(),
            occurrence.as_str(),
        ];
        let mut hash = OFFSET;
        for field in fields {
            for byte in field.bytes().chain([0]) {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(PRIME);
            }
        }
        format!("{hash:016x}")
    }

    fn to_json(&self) -> Value {
        json!({
            "file": self.file,
            "tool": self.tool,
            "code": self.code,
            "pointer": self.pointer,
        })
    }
}

/// Numbers findings that share a key in the order they come (0 for the first), so that each
/// gets a distinct fingerprint.
#[derive(Debug, Default)]
pub struct Occurrences(HashMap<Key, usize>);

impl Occurrences {
    /// The fingerprint of the next finding with this key.
    pub fn fingerprint(&mut self, finding: &Finding) -> String {
        let key = Key::of(finding);
        let slot = self.0.entry(key.clone()).or_insert(0);
        let fingerprint = key.fingerprint(*slot);
        *slot += 1;
        fingerprint
    }
}

/// A file as the same text however it was spelt on the command line: `./a/b.json`, `a//b.json`
/// and `a/b.json` are one file; separators become `/`. URLs and `-` are kept.
pub fn normalize_file(file: &str) -> String {
    if file == "-" || file.contains("://") {
        return file.to_owned();
    }
    let path = Path::new(file);
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::ParentDir => parts.push("..".to_owned()),
            Component::CurDir => {}
            Component::RootDir => parts.push(String::new()),
            Component::Prefix(prefix) => {
                parts.push(prefix.as_os_str().to_string_lossy().into_owned());
            }
        }
    }
    match parts.as_slice() {
        [] => ".".to_owned(),
        [root] if root.is_empty() => "/".to_owned(),
        _ => parts.join("/"),
    }
}

/// The accepted findings, as a multiset of keys.
#[derive(Debug, Default)]
pub struct Baseline {
    /// How many findings of each key are accepted.
    entries: HashMap<Key, usize>,
    /// The files linted so far: their entries can be stale (a run over some files says
    /// nothing about the others).
    linted: HashSet<String>,
    /// The sources the run named but could not lint (a server that did not start, a file that
    /// could not be read): nothing is known of their findings, so none of their entries is stale.
    unknown: HashSet<String>,
    /// What the run covers as a whole (directories walked, `FILE#` of a client config whose
    /// servers all ran): an entry under one of them whose file was not linted is stale too,
    /// since the file is gone (deleted, renamed, no longer a document of the walk).
    scopes: Vec<Scope>,
}

/// A part of the tree (or of a client config) the run covers entirely.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    /// A directory walked, normalized.
    Dir(String),
    /// `FILE#`: every server of a client config.
    Prefix(String),
}

impl Scope {
    /// Whether the normalized `file` lies in this scope.
    fn covers(&self, file: &str) -> bool {
        match self {
            Self::Prefix(prefix) => file.starts_with(prefix.as_str()),
            // Every relative path that does not climb out of the working directory.
            Self::Dir(dir) if dir == "." => {
                !(file == "-"
                    || file.contains("://")
                    || file.starts_with('/')
                    || file == ".."
                    || file.starts_with("../"))
            }
            Self::Dir(dir) if dir == "/" => file.starts_with('/'),
            Self::Dir(dir) => file
                .strip_prefix(dir.as_str())
                .is_some_and(|rest| rest.starts_with('/')),
        }
    }
}

/// Baseline entries that matched no finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale(pub Vec<Key>);

impl Baseline {
    /// Reads a baseline file; a malformed one is an error naming the file and the pointer.
    pub fn load(path: &Path) -> Result<Self, Failure> {
        let shown = escape_controls(&path.display().to_string()).into_owned();
        // Read as a named config is: capped, and a link must resolve inside the working
        // directory.
        let cwd = std::env::current_dir().map_err(|source| Failure::Read {
            path: ".".to_owned(),
            source: source.into(),
        })?;
        let text =
            crate::inputs::read_file(path, &cwd, crate::inputs::policy()).map_err(|source| {
                Failure::Read {
                    path: shown.clone(),
                    source,
                }
            })?;
        let value: Value = serde_json::from_slice(&text)
            .map_err(|e| Failure::Usage(format!("baseline {shown}: not JSON: {e}")))?;
        Self::from_json(&value).map_err(|(pointer, problem)| {
            Failure::Usage(format!("baseline {shown}: {pointer}: {problem}"))
        })
    }

    /// Checks the document; the error is (pointer, what is wrong).
    fn from_json(value: &Value) -> Result<Self, (String, String)> {
        let object = value
            .as_object()
            .ok_or_else(|| (String::new(), "expected an object".to_owned()))?;
        match object.get("version").and_then(Value::as_u64) {
            Some(VERSION) => {}
            _ => {
                return Err(("/version".to_owned(), format!("expected version {VERSION}")));
            }
        }
        if let Some(key) = object
            .keys()
            .find(|k| !["version", "findings"].contains(&k.as_str()))
        {
            return Err((format!("/{}", pointer_token(key)), "unknown key".to_owned()));
        }
        let findings = object
            .get("findings")
            .and_then(Value::as_array)
            .ok_or_else(|| ("/findings".to_owned(), "expected an array".to_owned()))?;
        let mut entries = HashMap::new();
        for (i, entry) in findings.iter().enumerate() {
            let at = format!("/findings/{i}");
            let key = key_of(entry).map_err(|(field, problem)| {
                let pointer = match field {
                    Some(field) => format!("{at}/{field}"),
                    None => at.clone(),
                };
                (pointer, problem)
            })?;
            *entries.entry(key).or_insert(0) += 1;
        }
        Ok(Self {
            entries,
            linted: HashSet::new(),
            unknown: HashSet::new(),
            scopes: Vec::new(),
        })
    }

    /// Says the run walks the directory `dir`: entries of files under it that are not linted
    /// are stale.
    pub fn cover_dir(&mut self, dir: &str) {
        self.scopes.push(Scope::Dir(normalize_file(dir)));
    }

    /// Says the run lints every server of the client config `file` (named `FILE#NAME`): entries
    /// of servers that are not linted are stale.
    pub fn cover_servers_of(&mut self, file: &str) {
        self.scopes
            .push(Scope::Prefix(format!("{}#", normalize_file(file))));
    }

    /// Says the run could not lint the source `file`: its entries stay as they are.
    pub fn not_linted(&mut self, file: &str) {
        self.unknown.insert(normalize_file(file));
    }

    /// Marks the findings of the document `file` that the baseline accepts as suppressed (each
    /// entry accepts one finding).
    pub fn suppress(&mut self, file: &str, findings: &mut [Finding]) {
        self.linted.insert(normalize_file(file));
        for finding in findings {
            if let Some(left) = self.entries.get_mut(&Key::of(finding))
                && *left > 0
            {
                *left -= 1;
                finding.suppressed = true;
            }
        }
    }

    /// The entries no finding used, sorted; call after every finding went through
    /// [`Baseline::suppress`]. An entry counts when its file was linted, lies in what the run
    /// covers, or is gone (see [`file_is_gone`]): a deleted file's entries are stale whatever
    /// the run names.
    pub fn stale(&self) -> Stale {
        self.stale_where(file_is_gone)
    }

    /// [`Baseline::stale`], with `gone` telling whether an entry's file no longer exists.
    fn stale_where(&self, gone: impl Fn(&str) -> bool) -> Stale {
        let mut keys: Vec<Key> = self
            .entries
            .iter()
            .filter(|(key, _)| !self.unknown.contains(&key.file))
            .filter(|(key, _)| {
                self.linted.contains(&key.file)
                    || self.scopes.iter().any(|scope| scope.covers(&key.file))
                    || gone(&key.file)
            })
            .flat_map(|(key, left)| std::iter::repeat_n(key.clone(), *left))
            .collect();
        keys.sort();
        Stale(keys)
    }
}

impl Baseline {
    /// Whether the baseline names files and none of them exists here: it was written in another
    /// working directory (its paths are relative to the one `lint` ran in), or every file went.
    pub fn names_nothing_here(&self) -> bool {
        let files: HashSet<&str> = self.entries.keys().map(|k| k.file.as_str()).collect();
        let documents: Vec<&str> = files.into_iter().filter(|f| names_a_path(f)).collect();
        !documents.is_empty() && documents.into_iter().all(file_is_gone)
    }
}

/// Whether an entry's file (as normalized) names a path rather than stdin, a URL or a server
/// started by its program (`stdio:PROGRAM`).
fn names_a_path(file: &str) -> bool {
    !(file == "-" || file.contains("://") || file.starts_with("stdio:"))
}

/// Whether the file of an entry no longer exists: a path (relative to the working directory, as
/// every path of a baseline is) that is not there. `FILE#NAME` (a server of a client config, an
/// entry of a `server.json`) is gone when FILE is. Stdin, URLs and `stdio:PROGRAM` never are:
/// whether they are still there is not a question of files.
pub fn file_is_gone(file: &str) -> bool {
    if !names_a_path(file) || Path::new(file).exists() {
        return false;
    }
    match file.split_once('#') {
        Some((document, _)) => !document.is_empty() && !Path::new(document).exists(),
        None => true,
    }
}

/// One entry's key; the error is (field, what is wrong).
fn key_of(entry: &Value) -> Result<Key, (Option<&'static str>, String)> {
    let object = entry
        .as_object()
        .ok_or_else(|| (None, "expected an object".to_owned()))?;
    if let Some(key) = object
        .keys()
        .find(|k| !["file", "tool", "code", "pointer"].contains(&k.as_str()))
    {
        return Err((None, format!("unknown key '{}'", key.escape_debug())));
    }
    let string = |field: &'static str| -> Result<String, (Option<&'static str>, String)> {
        object
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| (Some(field), "expected a string".to_owned()))
    };
    let tool = match object.get("tool") {
        None | Some(Value::Null) => None,
        Some(Value::String(tool)) => Some(tool.clone()),
        Some(_) => return Err((Some("tool"), "expected a string or null".to_owned())),
    };
    Ok(Key {
        file: normalize_file(&string("file")?),
        tool,
        code: string("code")?,
        pointer: string("pointer")?,
    })
}

/// Escapes a key as an RFC 6901 reference token.
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The baseline document accepting exactly `findings`, sorted so that it diffs well.
pub fn document(findings: &[Finding]) -> Value {
    let mut keys: Vec<Key> = findings.iter().map(Key::of).collect();
    keys.sort();
    json!({
        "version": VERSION,
        "findings": keys.iter().map(Key::to_json).collect::<Vec<_>>(),
    })
}

impl Stale {
    /// One line per stale entry, every part escaped (a tool name cannot forge a line).
    pub fn lines(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|key| {
                format!(
                    "{} {} {} {}",
                    escape_controls(&key.file),
                    escape_controls(key.tool.as_deref().unwrap_or("-")),
                    escape_controls(&key.code),
                    escape_controls(&key.pointer),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_recovery_validator::{Diagnostic, Severity};

    fn finding(file: &str, tool: Option<&str>, code: &'static str, pointer: &str) -> Finding {
        Finding {
            file: file.to_owned(),
            diagnostic: Diagnostic {
                code,
                name: "n",
                severity: Severity::Error,
                message: "m".to_owned(),
                help: None,
                tool: tool.map(str::to_owned),
                pointer: pointer.to_owned(),
                span: None,
                url: String::new(),
            },
            region: None,
            suppressed: false,
            live: false,
        }
    }

    #[test]
    fn files_normalize() {
        assert_eq!(normalize_file("./a//b.json"), "a/b.json");
        assert_eq!(normalize_file("a/./b.json"), "a/b.json");
        assert_eq!(normalize_file("../a.json"), "../a.json");
        assert_eq!(normalize_file("/x/a.json"), "/x/a.json");
        assert_eq!(normalize_file("-"), "-");
        assert_eq!(
            normalize_file("http://127.0.0.1:1/mcp"),
            "http://127.0.0.1:1/mcp"
        );
    }

    #[test]
    fn round_trip_suppresses_each_entry_once() {
        let findings = vec![
            finding("./t.json", Some("a"), "R101", "/tools/0"),
            finding("t.json", Some("a"), "R101", "/tools/0"),
            finding("t.json", None, "R001", ""),
        ];
        let doc = document(&findings);
        let mut baseline = Baseline::from_json(&doc).unwrap();
        let mut again = findings.clone();
        again.push(finding("t.json", Some("a"), "R101", "/tools/0"));
        baseline.suppress("t.json", &mut again);
        let suppressed: Vec<bool> = again.iter().map(|f| f.suppressed).collect();
        assert_eq!(suppressed, [true, true, true, false]);
        assert_eq!(baseline.stale_where(|_| false), Stale(vec![]));
    }

    #[test]
    fn entries_of_sources_not_linted_are_never_stale() {
        let doc = document(&[
            finding("c.json#down", Some("a"), "R101", "/tools/0"),
            finding("d/unread.json", Some("a"), "R101", "/tools/0"),
        ]);
        let mut baseline = Baseline::from_json(&doc).unwrap();
        baseline.cover_servers_of("c.json");
        baseline.cover_dir("d");
        baseline.not_linted("c.json#down");
        baseline.not_linted("./d/unread.json");
        assert_eq!(baseline.stale_where(|_| true), Stale(vec![]));
    }

    #[test]
    fn unmatched_entries_are_stale() {
        let doc = document(&[
            finding("t.json", Some("a\nb"), "R101", "/tools/0"),
            finding("t.json", Some("b"), "R108", "/tools/1"),
        ]);
        let mut baseline = Baseline::from_json(&doc).unwrap();
        let mut now = vec![finding("t.json", Some("b"), "R108", "/tools/1")];
        assert_eq!(
            baseline.stale_where(|_| false),
            Stale(vec![]),
            "t.json not linted yet"
        );
        baseline.suppress("./t.json", &mut now);
        assert!(now[0].suppressed);
        let stale = baseline.stale_where(|_| false);
        assert_eq!(stale.lines(), ["t.json a\\nb R101 /tools/0"]);
    }

    #[test]
    fn entries_of_files_gone_from_a_covered_scope_are_stale() {
        let doc = document(&[
            finding("dir/kept.json", None, "R001", ""),
            finding("dir/sub/gone.json", Some("a"), "R101", "/tools/0"),
            finding("elsewhere/other.json", None, "R001", ""),
            finding("../up.json", None, "R001", ""),
            finding("cfg.json#gone", None, "R001", ""),
            finding("cfg.json.bak#x", None, "R001", ""),
        ]);
        let mut baseline = Baseline::from_json(&doc).unwrap();
        baseline.cover_dir("./dir/");
        baseline.cover_servers_of("./cfg.json");
        let mut kept = vec![finding("dir/kept.json", None, "R001", "")];
        baseline.suppress("dir/kept.json", &mut kept);
        assert_eq!(
            baseline.stale_where(|_| false).lines(),
            ["cfg.json#gone - R001 ", "dir/sub/gone.json a R101 /tools/0"]
        );
        // The working directory covers every relative path inside it, and nothing outside.
        baseline.cover_dir(".");
        let lines = baseline.stale_where(|_| false).lines();
        assert!(lines.contains(&"elsewhere/other.json - R001 ".to_owned()));
        assert!(!lines.iter().any(|l| l.starts_with("../")), "{lines:?}");
        assert!(Scope::Dir("/".into()).covers("/x/a.json"));
        assert!(!Scope::Dir("dir".into()).covers("dirt/a.json"));
    }

    #[test]
    fn entries_of_files_that_are_gone_are_stale_whatever_the_run_names() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept.json");
        std::fs::write(&kept, "{}").unwrap();
        let kept = kept.display().to_string();
        let gone = dir.path().join("gone.json").display().to_string();
        let doc = document(&[
            finding(&kept, None, "R001", ""),
            finding(&gone, None, "R001", ""),
            finding(&format!("{kept}#server"), None, "R001", ""),
            finding(&format!("{gone}#server"), None, "R001", ""),
            finding("-", None, "R001", ""),
            finding("https://h.example/mcp", None, "R001", ""),
            finding("stdio:npx", None, "R001", ""),
        ]);
        let baseline = Baseline::from_json(&doc).unwrap();
        let stale: Vec<String> = baseline.stale().0.into_iter().map(|k| k.file).collect();
        assert_eq!(stale, [gone.clone(), format!("{gone}#server")]);
        assert!(!baseline.names_nothing_here());
        let only_gone = Baseline::from_json(&document(&[
            finding(&gone, None, "R001", ""),
            finding("stdio:npx", None, "R001", ""),
        ]))
        .unwrap();
        assert!(only_gone.names_nothing_here());
    }

    #[test]
    fn malformed_documents_name_the_pointer() {
        let cases = [
            (json!([]), "", "expected an object"),
            (
                json!({"version": 2, "findings": []}),
                "/version",
                "expected version 1",
            ),
            (json!({"version": 1}), "/findings", "expected an array"),
            (
                json!({"version": 1, "findings": [], "extra/x": 1}),
                "/extra~1x",
                "unknown key",
            ),
            (
                json!({"version": 1, "findings": [{"file": "a", "code": "R1", "pointer": 3}]}),
                "/findings/0/pointer",
                "expected a string",
            ),
            (
                json!({"version": 1, "findings": [{"file": "a", "code": "R1", "pointer": "", "tool": 1}]}),
                "/findings/0/tool",
                "expected a string or null",
            ),
            (
                json!({"version": 1, "findings": [{"file": "a", "code": "R1", "pointer": "", "line": 1}]}),
                "/findings/0",
                "unknown key 'line'",
            ),
        ];
        for (doc, pointer, problem) in cases {
            let (at, what) = Baseline::from_json(&doc).unwrap_err();
            assert_eq!((at.as_str(), what.as_str()), (pointer, problem), "{doc}");
        }
    }

    #[test]
    fn fingerprints_are_stable_and_distinct() {
        let key = Key::of(&finding("t.json", Some("a"), "R101", "/tools/0"));
        assert_eq!(key.fingerprint(0), key.fingerprint(0));
        assert_ne!(key.fingerprint(0), key.fingerprint(1));
        assert_eq!(key.fingerprint(0).len(), 16);
        let mut other = key.clone();
        other.tool = None;
        assert_ne!(key.fingerprint(0), other.fingerprint(0));
    }
}
