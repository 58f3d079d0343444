//! What one file contributes to a census: counters that add up across files, plus a small
//! per-server summary for the medians.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use mcp_recovery_adoption::profile::{Profile, profile_tool};
use mcp_recovery_base::read::{ReadError, ReadPolicy, read_file};
use mcp_recovery_model::{
    COMPENSATE_META_KEY, COMPENSATION_STRATEGY, Hint, LocateError, ToolList, locate_tools,
};
use mcp_recovery_validator::{Linter, READ_IN_PARTS_FROM, Report, Severity};
use serde::Serialize;
use serde_json::Value;

use crate::signature::{HintState, Signature};

/// Why a file is not counted as a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NotToolsReason {
    /// The file could not be read.
    Unreadable {
        /// The I/O error.
        message: String,
    },
    /// The file is larger than the cap of [`crate::CensusOptions::read`].
    TooLarge {
        /// Its size in bytes (0 when the file reports none, as those of `/proc` do).
        bytes: u64,
        /// The cap in bytes.
        limit: u64,
    },
    /// The bytes are not JSON.
    InvalidJson {
        /// serde_json's message, with line and column.
        message: String,
    },
    /// A JSON-RPC error response.
    JsonRpcError {
        /// The error's `message`, when it has one.
        message: String,
    },
    /// JSON of another shape.
    OtherShape {
        /// What the top level is.
        found: String,
    },
}

impl NotToolsReason {
    /// One line for humans.
    pub fn describe(&self) -> String {
        match self {
            Self::Unreadable { message } => format!("unreadable: {message}"),
            Self::TooLarge { limit, .. } => {
                mcp_recovery_base::read::ReadError::TooLarge { limit: *limit }.to_string()
            }
            Self::InvalidJson { message } => format!("invalid JSON: {message}"),
            Self::JsonRpcError { message } => format!("JSON-RPC error response: {message}"),
            Self::OtherShape { found } => format!("not a tools list: {found}"),
        }
    }
}

/// Which recovery classes a tool declares, over both carriers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Classes {
    compensable: bool,
    irreversible: bool,
    readonly: bool,
}

/// Counters that add up across files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tally {
    pub tools: u64,
    pub non_object_entries: u64,
    pub non_boolean_hints: u64,
    /// Tools serializing at least one hint member, whatever its value (the wire level).
    pub wire_any: u64,
    /// Tools serializing all four hint members, whatever their values.
    pub wire_all: u64,
    pub signatures: [u64; Signature::COUNT],
    pub read_only_destructive_set: u64,
    pub recovery_sep3172: u64,
    pub recovery_compensate: u64,
    pub recovery_both: u64,
    pub recovery_unknown_strategy: u64,
    pub mutating: u64,
    pub mutating_declared: u64,
    pub mutating_compensable: u64,
    pub mutating_irreversible: u64,
    pub mutating_readonly: u64,
    pub mutating_conflicting: u64,
}

impl Default for Tally {
    fn default() -> Self {
        Self {
            tools: 0,
            non_object_entries: 0,
            non_boolean_hints: 0,
            wire_any: 0,
            wire_all: 0,
            signatures: [0; Signature::COUNT],
            read_only_destructive_set: 0,
            recovery_sep3172: 0,
            recovery_compensate: 0,
            recovery_both: 0,
            recovery_unknown_strategy: 0,
            mutating: 0,
            mutating_declared: 0,
            mutating_compensable: 0,
            mutating_irreversible: 0,
            mutating_readonly: 0,
            mutating_conflicting: 0,
        }
    }
}

impl Tally {
    pub fn add(&mut self, other: &Tally) {
        self.tools += other.tools;
        self.non_object_entries += other.non_object_entries;
        self.non_boolean_hints += other.non_boolean_hints;
        self.wire_any += other.wire_any;
        self.wire_all += other.wire_all;
        for (a, b) in self.signatures.iter_mut().zip(other.signatures.iter()) {
            *a += b;
        }
        self.read_only_destructive_set += other.read_only_destructive_set;
        self.recovery_sep3172 += other.recovery_sep3172;
        self.recovery_compensate += other.recovery_compensate;
        self.recovery_both += other.recovery_both;
        self.recovery_unknown_strategy += other.recovery_unknown_strategy;
        self.mutating += other.mutating;
        self.mutating_declared += other.mutating_declared;
        self.mutating_compensable += other.mutating_compensable;
        self.mutating_irreversible += other.mutating_irreversible;
        self.mutating_readonly += other.mutating_readonly;
        self.mutating_conflicting += other.mutating_conflicting;
    }

    fn add_tool(&mut self, tool: &serde_json::Map<String, Value>) {
        let (signature, non_boolean) = Signature::of_tool(tool);
        self.tools += 1;
        self.non_boolean_hints += u64::from(non_boolean);
        // At the wire level a member is present whatever its value, `null` included.
        let present = tool
            .get("annotations")
            .and_then(Value::as_object)
            .map_or(0, |a| {
                Hint::ALL.iter().filter(|h| a.contains_key(h.key())).count()
            });
        self.wire_any += u64::from(present > 0);
        self.wire_all += u64::from(present == Hint::ALL.len());
        self.signatures[signature.index()] += 1;
        let read_only = signature.state(Hint::ReadOnly) == HintState::True;
        if read_only && signature.state(Hint::Destructive).is_set() {
            self.read_only_destructive_set += 1;
        }

        let annotations = tool.get("annotations").and_then(Value::as_object);
        let sep = annotations
            .and_then(|a| a.get("recovery"))
            .filter(|v| !v.is_null());
        let compensate = tool
            .get("_meta")
            .and_then(Value::as_object)
            .and_then(|m| m.get(COMPENSATE_META_KEY))
            .filter(|v| !v.is_null());
        match (sep.is_some(), compensate.is_some()) {
            (true, true) => self.recovery_both += 1,
            (true, false) => self.recovery_sep3172 += 1,
            (false, true) => self.recovery_compensate += 1,
            (false, false) => {}
        }

        let mut classes = Classes::default();
        if let Some(sep) = sep {
            match sep.get("strategy").and_then(Value::as_str) {
                Some(COMPENSATION_STRATEGY) => classes.compensable = true,
                _ => self.recovery_unknown_strategy += 1,
            }
        }
        match compensate
            .and_then(|c| c.get("reversibility"))
            .and_then(Value::as_str)
        {
            Some("compensable") => classes.compensable = true,
            Some("irreversible") => classes.irreversible = true,
            Some("readonly") => classes.readonly = true,
            _ => {}
        }
        if !read_only {
            self.mutating += 1;
            let declared = u8::from(classes.compensable)
                + u8::from(classes.irreversible)
                + u8::from(classes.readonly);
            if declared > 0 {
                self.mutating_declared += 1;
            }
            match (declared, classes) {
                (0, _) => {}
                (
                    1,
                    Classes {
                        compensable: true, ..
                    },
                ) => self.mutating_compensable += 1,
                (
                    1,
                    Classes {
                        irreversible: true, ..
                    },
                ) => self.mutating_irreversible += 1,
                (1, _) => self.mutating_readonly += 1,
                _ => self.mutating_conflicting += 1,
            }
        }
    }
}

/// Signature spread of one server, kept for the per-server medians.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServerSummary {
    pub tools: u64,
    /// Per profile, in catalog order: whether every tool reaches it, and how many tools do.
    pub profiles: [(bool, u64); 4],
    pub distinct_signatures: u32,
    pub dominant: u64,
    pub emits_hint: bool,
}

/// Lint findings of one file, by (code, severity).
pub(crate) type LintCounts = BTreeMap<(&'static str, Severity), (&'static str, u64)>;

/// Everything one file contributes.
#[derive(Debug, Clone)]
pub(crate) struct FileCensus {
    pub path: String,
    pub bytes: u64,
    pub outcome: Result<(Tally, ServerSummary), NotToolsReason>,
    pub lint: Option<LintCounts>,
}

pub(crate) fn lint_counts(report: &Report) -> LintCounts {
    let mut counts = LintCounts::new();
    for d in &report.diagnostics {
        counts.entry((d.code, d.severity)).or_insert((d.name, 0)).1 += 1;
    }
    counts
}

/// Finds the tools array with the locator every command shares.
pub(crate) fn tools_of(document: &Value) -> Result<&[Value], NotToolsReason> {
    match locate_tools(document) {
        Ok(location) => Ok(location.tools),
        Err(LocateError::JsonRpcError { error }) => Err(NotToolsReason::JsonRpcError {
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)")
                .to_owned(),
        }),
        Err(other) => Err(NotToolsReason::OtherShape {
            found: other.to_string(),
        }),
    }
}

/// What a server's tools add up to, one tool at a time.
struct Counter<'n> {
    /// The names of every tool of the list (a compensator must be one of them).
    names: HashSet<&'n str>,
    tally: Tally,
    /// Per profile, in catalog order: whether every tool so far reaches it, and how many do.
    profiles: [(bool, u64); 4],
}

impl<'n> Counter<'n> {
    fn new(names: HashSet<&'n str>) -> Self {
        Self {
            names,
            tally: Tally::default(),
            profiles: [(true, 0); 4],
        }
    }

    fn add(&mut self, entry: &Value) {
        match entry.as_object() {
            Some(tool) => self.tally.add_tool(tool),
            None => self.tally.non_object_entries += 1,
        }
        let reached = profile_tool(entry, &self.names).reached;
        for (profile, (every, tools)) in Profile::ALL.iter().zip(&mut self.profiles) {
            let reaches = reached.contains(profile);
            *every &= reaches;
            *tools += u64::from(reaches);
        }
    }

    fn finish(self) -> (Tally, ServerSummary) {
        let tally = self.tally;
        let summary = ServerSummary {
            profiles: self.profiles,
            tools: tally.tools,
            distinct_signatures: u32::try_from(tally.signatures.iter().filter(|&&n| n > 0).count())
                .unwrap_or(u32::MAX),
            dominant: tally.signatures.iter().copied().max().unwrap_or(0),
            emits_hint: tally.wire_any > 0,
        };
        (tally, summary)
    }
}

/// Examines one parsed document.
pub(crate) fn examine_document(document: &Value) -> Result<(Tally, ServerSummary), NotToolsReason> {
    let tools = tools_of(document)?;
    let names = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let mut counter = Counter::new(names);
    tools.iter().for_each(|tool| counter.add(tool));
    Ok(counter.finish())
}

/// Examines the bytes of one file: parse once, count, and lint the parsed value. A large file
/// is read a part of its tools at a time, as `lint` reads it.
pub(crate) fn examine_bytes(path: String, bytes: &[u8], linter: Option<&Linter>) -> FileCensus {
    let size = bytes.len() as u64;
    if bytes.len() >= READ_IN_PARTS_FROM
        && let Some((outcome, lint)) = examine_in_parts(bytes, linter)
    {
        return FileCensus {
            path,
            bytes: size,
            outcome: Ok(outcome),
            lint,
        };
    }
    match mcp_recovery_model::json::from_slice(bytes) {
        Ok(document) => FileCensus {
            path,
            bytes: size,
            outcome: examine_document(&document),
            lint: linter.map(|l| lint_counts(&l.lint_value_unordered(&document))),
        },
        Err(error) => FileCensus {
            path,
            bytes: size,
            outcome: Err(NotToolsReason::InvalidJson {
                message: error.to_string(),
            }),
            // Only the source text can say where the JSON breaks (R001).
            lint: linter.map(|l| lint_counts(&l.lint_source(bytes))),
        },
    }
}

/// [`examine_bytes`] on a tools list read a part of its tools at a time; `None` for a document
/// only the whole read judges.
pub(crate) fn examine_in_parts(
    bytes: &[u8],
    linter: Option<&Linter>,
) -> Option<((Tally, ServerSummary), Option<LintCounts>)> {
    let list = ToolList::skim(std::str::from_utf8(bytes).ok()?)?;
    let mut counter = Counter::new((0..list.len()).filter_map(|i| list.name(i)).collect());
    let lint = match linter {
        Some(linter) => {
            let report = linter.lint_tool_list(&list, |tool| counter.add(tool))?;
            Some(lint_counts(&report))
        }
        None => {
            for i in 0..list.len() {
                counter.add(&list.read(i)?.0);
            }
            None
        }
    };
    Some((counter.finish(), lint))
}

/// A file that could not be read at all.
pub(crate) fn unreadable(path: String, reason: NotToolsReason) -> FileCensus {
    FileCensus {
        path,
        bytes: 0,
        outcome: Err(reason),
        lint: None,
    }
}

/// Reads one file under `policy` and examines it; a file that cannot be read is listed with why.
pub(crate) fn read_and_examine(
    path: &Path,
    linter: Option<&Linter>,
    policy: ReadPolicy,
) -> FileCensus {
    let label = path.display().to_string();
    match read_file(path, Path::new("."), policy) {
        Ok(bytes) => examine_bytes(label, &bytes, linter),
        Err(ReadError::TooLarge { limit }) => {
            let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
            unreadable(label, NotToolsReason::TooLarge { bytes, limit })
        }
        Err(error) => unreadable(
            label,
            NotToolsReason::Unreadable {
                message: error.to_string(),
            },
        ),
    }
}
