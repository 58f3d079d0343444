//! `--format sarif`: SARIF 2.1.0 (OASIS), one run, the rules that fired as `tool.driver.rules`,
//! every source as an `analysisTarget` of `run.artifacts`, physical locations with code-point
//! regions, the tool name and JSON pointer as a logical location. GitHub code scanning reads it
//! as is.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use mcp_recovery_validator::{DefaultLevel, Severity, find_rule};
use serde_json::{Map, Value, json};

use super::json::{pretty, write_array};
use crate::render::types::{Finding, Renderer, Source, Summary};
use crate::sources::{SourceReport, Status};

/// Schema of the OASIS standard (errata 01), the document we validate against.
const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Keeps every result, already rendered, and the descriptor of each rule that fired (in order
/// of first appearance, which `ruleIndex` points into); prints the log at the end.
#[derive(Debug)]
pub struct Sarif {
    rules: Vec<Value>,
    rule_index: HashMap<&'static str, usize>,
    results: Vec<String>,
    cwd: Option<PathBuf>,
    occurrences: crate::baseline::Occurrences,
    /// One `toolExecutionNotification` per source that was not linted.
    notifications: Vec<Value>,
    /// The notification descriptors used (`tool.driver.notifications`), by status.
    statuses: Vec<Status>,
    /// Whether a source failed (`executionSuccessful` is then false).
    failed: bool,
    /// Whether a source was skipped (`executionSuccessful` is false when nothing was linted).
    skipped: bool,
    /// `run.artifacts`: every URI a result or a notification names, in order of first
    /// appearance (which each `artifactLocation.index` points into), and whether it is a source
    /// of the run (role `analysisTarget`).
    artifacts: Vec<(String, bool, bool)>,
    artifact_index: HashMap<String, usize>,
}

impl Default for Sarif {
    fn default() -> Self {
        Self {
            rules: Vec::new(),
            rule_index: HashMap::new(),
            results: Vec::new(),
            // Absolute inputs under the working directory become relative URIs, which code
            // scanning resolves against the checkout.
            cwd: std::env::current_dir().ok(),
            occurrences: crate::baseline::Occurrences::default(),
            notifications: Vec::new(),
            statuses: Vec::new(),
            failed: false,
            skipped: false,
            artifacts: Vec::new(),
            artifact_index: HashMap::new(),
        }
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// Percent-encodes everything but unreserved characters and `/`.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The artifact URI of a file as given: relative paths stay relative (with `/`), absolute ones
/// under the working directory are made relative, other absolute ones become `file://` URIs.
/// A live server keeps its name: a URL as is, `stdio:PROGRAM` as a `stdio:` URI, a `--name` as
/// a relative reference.
fn artifact_uri(file: &str, cwd: Option<&Path>, live: bool) -> String {
    if live {
        if file.starts_with("http://") || file.starts_with("https://") {
            return file.to_owned();
        }
        if let Some(program) = file.strip_prefix("stdio:") {
            return format!("stdio:{}", encode_path(program));
        }
        return encode_path(file);
    }
    let path = Path::new(file);
    let path = match cwd.and_then(|cwd| path.strip_prefix(cwd).ok()) {
        Some(relative) => relative,
        None => path,
    };
    let absolute = path.is_absolute();
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_owned()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    let joined = encode_path(&parts.join("/"));
    if absolute {
        format!("file:///{joined}")
    } else {
        joined
    }
}

/// The rule descriptor of `code`, from the catalog (or from the diagnostic, for a code the
/// catalog does not list).
fn rule_descriptor(finding: &Finding) -> Value {
    let d = &finding.diagnostic;
    let mut rule = Map::new();
    rule.insert("id".into(), json!(d.code));
    rule.insert("name".into(), json!(d.name));
    let (summary, docs, configuration) = match find_rule(d.code) {
        Some(info) => {
            let configuration = match info.default {
                DefaultLevel::On(severity) => json!({ "level": level(severity) }),
                DefaultLevel::Off => json!({ "level": "warning", "enabled": false }),
            };
            (info.summary, Some(info.docs), configuration)
        }
        None => (d.name, None, json!({ "level": level(d.severity) })),
    };
    rule.insert("shortDescription".into(), json!({ "text": summary }));
    if let Some(docs) = docs.filter(|docs| !docs.is_empty()) {
        rule.insert("help".into(), json!({ "text": docs, "markdown": docs }));
    }
    rule.insert("helpUri".into(), json!(d.url));
    rule.insert("defaultConfiguration".into(), configuration);
    Value::Object(rule)
}

/// The `artifactLocation` of `uri`, the artifact at `index` of `run.artifacts` (`None`: the
/// location of that artifact itself); a live server's says what it is.
fn artifact_location(uri: &str, index: Option<usize>, live: bool) -> Map<String, Value> {
    let mut artifact = Map::new();
    artifact.insert("uri".into(), json!(uri));
    if let Some(index) = index {
        artifact.insert("index".into(), json!(index));
    }
    if live {
        artifact.insert(
            "description".into(),
            json!({ "text": "the tools/list of a live MCP server" }),
        );
    }
    artifact
}

fn result(
    finding: &Finding,
    rule_index: usize,
    artifact: Map<String, Value>,
    fingerprint: String,
) -> Value {
    let d = &finding.diagnostic;
    let mut text = d.message.clone();
    if let Some(help) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    let mut physical = Map::new();
    physical.insert("artifactLocation".into(), Value::Object(artifact));
    if let Some(r) = finding.region {
        physical.insert(
            "region".into(),
            json!({
                "startLine": r.start_line,
                "startColumn": r.start_column,
                "endLine": r.end_line,
                "endColumn": r.end_column,
            }),
        );
    }
    let mut location = Map::new();
    location.insert("physicalLocation".into(), Value::Object(physical));
    if d.tool.is_some() || !d.pointer.is_empty() {
        let mut logical = Map::new();
        if let Some(tool) = &d.tool {
            logical.insert("name".into(), json!(tool));
        }
        logical.insert("fullyQualifiedName".into(), json!(d.pointer));
        logical.insert("kind".into(), json!("object"));
        location.insert("logicalLocations".into(), json!([logical]));
    }
    let mut result = json!({
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": level(d.severity),
        "message": { "text": text },
        "locations": [location],
        // File, tool, code and pointer: stable when lines move, unlike a line hash.
        "partialFingerprints": { "mcpRecoveryFinding/v1": fingerprint },
    });
    if let (true, Some(object)) = (finding.suppressed, result.as_object_mut()) {
        object.insert(
            "suppressions".into(),
            json!([{ "kind": "external", "justification": "accepted in the baseline file" }]),
        );
    }
    result
}

/// The descriptor of the notification for a source with `status`.
fn notification_descriptor(status: Status) -> Value {
    let text = match status {
        Status::FailedToStart => "The server could not be started or reached.",
        Status::TimedOut => "The server did not answer in time.",
        Status::ProtocolError => "The server did not speak the protocol as required.",
        Status::Unreadable => {
            "The source (a file, or an entry of a config or server.json) could not be read."
        }
        Status::Skipped => "The source was not tried.",
        Status::Linted => "The source was linted.",
    };
    json!({ "id": status.as_str(), "shortDescription": { "text": text } })
}

impl Sarif {
    /// The index in `run.artifacts` of the artifact named `name`, added on first sight; a
    /// source of the run (`target`) has the role `analysisTarget`.
    fn artifact(&mut self, name: &str, live: bool, target: bool) -> Map<String, Value> {
        let uri = artifact_uri(name, self.cwd.as_deref(), live);
        let index = match self.artifact_index.get(&uri) {
            Some(&index) => index,
            None => {
                self.artifact_index
                    .insert(uri.clone(), self.artifacts.len());
                self.artifacts.push((uri.clone(), live, false));
                self.artifacts.len() - 1
            }
        };
        self.artifacts[index].2 |= target;
        artifact_location(&uri, Some(index), live)
    }

    /// The notification of a source that was not linted: its status, the reason and where.
    fn notification(&mut self, source: &SourceReport) -> Value {
        let index = match self.statuses.iter().position(|s| *s == source.status) {
            Some(index) => index,
            None => {
                self.statuses.push(source.status);
                self.statuses.len() - 1
            }
        };
        let artifact = self.artifact(&source.name, source.kind.live(), true);
        json!({
            "level": if source.status.failed() { "error" } else { "note" },
            "message": {
                "text": format!(
                    "{} {} was not linted ({}): {}",
                    source.kind.as_str(),
                    source.name,
                    source.status.as_str(),
                    source.error.as_deref().unwrap_or(""),
                )
            },
            "descriptor": { "id": source.status.as_str(), "index": index },
            "locations": [{ "physicalLocation": { "artifactLocation": artifact } }],
        })
    }
}

impl Renderer for Sarif {
    fn source(&mut self, _out: &mut dyn Write, source: &SourceReport) -> io::Result<()> {
        // Every source is listed in `run.artifacts`, linted clean or not.
        self.artifact(&source.name, source.kind.live(), true);
        if source.status != Status::Linted {
            self.failed |= source.status.failed();
            self.skipped |= source.status == Status::Skipped;
            let notification = self.notification(source);
            self.notifications.push(notification);
        }
        Ok(())
    }

    fn finding(
        &mut self,
        _out: &mut dyn Write,
        _source: Option<&Source<'_>>,
        finding: &Finding,
    ) -> io::Result<()> {
        let code = finding.diagnostic.code;
        let rules = &mut self.rules;
        let index = *self.rule_index.entry(code).or_insert_with(|| {
            rules.push(rule_descriptor(finding));
            rules.len() - 1
        });
        let fingerprint = self.occurrences.fingerprint(finding);
        let artifact = self.artifact(&finding.file, finding.live, false);
        let result = result(finding, index, artifact, fingerprint);
        self.results.push(pretty(&result, "        ", true)?);
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
        // A run whose every source was skipped checked nothing: it exits 2, and says so here.
        let nothing_linted = self.skipped && summary.files + summary.servers == 0;
        let successful = !self.failed && !nothing_linted;
        let mut tool = json!({
            "driver": {
                "name": "mcp-recovery",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_HOMEPAGE"),
                "rules": std::mem::take(&mut self.rules),
            }
        });
        if let (false, Some(driver)) = (
            self.statuses.is_empty(),
            tool.get_mut("driver").and_then(Value::as_object_mut),
        ) {
            let descriptors = self.statuses.iter().map(|s| notification_descriptor(*s));
            driver.insert("notifications".into(), descriptors.collect());
        }
        let tool = pretty(&tool, "      ", false)?;
        // The layout of `serde_json::to_writer_pretty` for the whole log.
        write!(
            out,
            "{{\n  \"$schema\": {},\n  \"version\": \"2.1.0\",\n  \"runs\": [\n    {{\n      \
             \"tool\": {tool},\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": ",
            Value::from(SARIF_SCHEMA),
        )?;
        write_array(out, &std::mem::take(&mut self.results), "      ")?;
        let artifacts: Vec<Value> = self
            .artifacts
            .iter()
            .map(|(uri, live, target)| {
                let mut artifact = Map::new();
                let location = artifact_location(uri, None, *live);
                artifact.insert("location".into(), Value::Object(location));
                if *target {
                    artifact.insert("roles".into(), json!(["analysisTarget"]));
                }
                Value::Object(artifact)
            })
            .collect();
        let artifacts = pretty(&Value::Array(artifacts), "      ", false)?;
        write!(out, ",\n      \"artifacts\": {artifacts}")?;
        // Whether every source was linted, and a notification for each that was not.
        let mut invocation = json!({ "executionSuccessful": successful });
        if let (false, Some(object)) = (self.notifications.is_empty(), invocation.as_object_mut()) {
            object.insert(
                "toolExecutionNotifications".into(),
                Value::Array(std::mem::take(&mut self.notifications)),
            );
        }
        let invocations = pretty(&json!([invocation]), "      ", false)?;
        write!(out, ",\n      \"invocations\": {invocations}")?;
        writeln!(
            out,
            ",\n      \"automationDetails\": {{\n        \"id\": \"mcp-recovery/lint/\"\n      }}\n    }}\n  ]\n}}"
        )
    }

    fn shows_suppressed(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        let cwd = Path::new("/repo");
        let file = |file| artifact_uri(file, Some(cwd), false);
        assert_eq!(file("fixtures/a b.json"), "fixtures/a%20b.json");
        assert_eq!(file("./x/y.json"), "x/y.json");
        assert_eq!(file("/repo/x/y.json"), "x/y.json");
        assert_eq!(file("/elsewhere/y.json"), "file:///elsewhere/y.json");
        assert_eq!(file("../up.json"), "../up.json");
        assert_eq!(file("https://h.example/mcp"), "https%3A/h.example/mcp");
        assert_eq!(
            artifact_uri("a:b#c?.json", None, false),
            "a%3Ab%23c%3F.json"
        );
        let live = |name| artifact_uri(name, Some(cwd), true);
        assert_eq!(live("https://h.example/mcp"), "https://h.example/mcp");
        assert_eq!(live("stdio:./build/server.js"), "stdio:./build/server.js");
        assert_eq!(live("stdio:my server"), "stdio:my%20server");
        assert_eq!(live("checkout"), "checkout");
    }
}
