//! Census of MCP `tools/list` corpora: what servers declare about their tools.
//!
//! One file is one server. The census reads each file once, counts hint usage (the four
//! `ToolAnnotations` hints, keeping an explicit `false` apart from an omitted field), hint
//! signatures, `destructiveHint` applicability and declared recovery in both carriers, and lints
//! the parsed document with [`mcp_recovery_validator::Linter`]. Every metric is defined in
//! `spec/census.md`.
//!
//! Files are processed in a bounded window (one file per worker thread at a time), so memory is
//! bounded by the largest files, not by the corpus.
//!
//! ```
//! use mcp_recovery_census::{CensusBuilder, CensusOptions};
//!
//! let mut census = CensusBuilder::new(&CensusOptions::default()).unwrap();
//! census.add_bytes("a.json", br#"{"tools": [
//!     {"name": "get", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
//!     {"name": "put", "inputSchema": {"type": "object"}}
//! ]}"#);
//! census.add_bytes("notes.json", br#"{"title": "not a server"}"#);
//! let census = census.finish();
//! assert_eq!(census.servers, 1);
//! assert_eq!(census.tools, 2);
//! assert_eq!(census.hints.any.count, 1);
//! assert_eq!(census.files.not_tools_lists, 1);
//! ```

mod examine;
pub mod profile;
mod render;
mod signature;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use mcp_recovery_model::Hint;
use mcp_recovery_validator::read::{ReadError, ReadPolicy, read_file};
use mcp_recovery_validator::{LintOptions, Linter, Severity, UnknownRule};
use serde::Serialize;

pub use examine::NotToolsReason;
use examine::{FileCensus, LintCounts, ServerSummary, Tally};
pub use signature::{HintState, Signature};

/// Version of the JSON output format.
pub const FORMAT_VERSION: u32 = 1;

/// How a census runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CensusOptions {
    /// How many signatures to list by name (the rest are summed as "other").
    pub top_signatures: usize,
    /// Lint every document and count findings per rule.
    pub lint: bool,
    /// Worker threads; each holds at most one file at a time.
    pub threads: usize,
    /// How files are read: larger than the cap, not regular, or behind a link that leaves the
    /// working directory, they are listed as not read, never loaded (the limits of `lint`).
    pub read: ReadPolicy,
}

impl Default for CensusOptions {
    fn default() -> Self {
        Self {
            top_signatures: 10,
            lint: true,
            threads: 2,
            read: ReadPolicy::default(),
        }
    }
}

/// Why a census could not run at all (bad input files never cause this).
#[derive(Debug, thiserror::Error)]
pub enum CensusError {
    /// A path given on the command line cannot be read.
    #[error("cannot read {path}: {source}")]
    Input {
        /// The path as given.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The lint configuration names an unknown rule.
    #[error(transparent)]
    Lint(#[from] UnknownRule),
}

/// A count and its share of a stated denominator, named in the output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Share {
    /// How many.
    pub count: u64,
    /// `count / denominator`, in `0..=1`; 0 when the denominator is 0.
    pub share: f64,
    /// The denominator.
    pub denominator: u64,
    /// What the denominator counts (`tools`, `mutating tools`, …).
    pub of: &'static str,
}

impl Share {
    fn of(count: u64, denominator: u64, of: &'static str) -> Self {
        let share = if denominator == 0 {
            0.0
        } else {
            count as f64 / denominator as f64
        };
        Self {
            count,
            share,
            denominator,
            of,
        }
    }
}

/// File-level accounting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileCounts {
    /// Every file examined.
    pub total: u64,
    /// Files read as a tools list (one server each).
    pub tools_lists: u64,
    /// Files that are not a tools list, listed in [`Census::not_tools_lists`].
    pub not_tools_lists: u64,
    /// Bytes read.
    pub bytes: u64,
}

/// A file that is not a tools list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotToolsFile {
    /// The path.
    pub path: String,
    /// Why.
    pub reason: NotToolsReason,
}

/// How often each hint is serialized.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HintCounts {
    /// The JSON key.
    pub hint: &'static str,
    /// Tools with the literal `true`.
    #[serde(rename = "true")]
    pub true_: u64,
    /// Tools with the literal `false`.
    #[serde(rename = "false")]
    pub false_: u64,
    /// Tools without a boolean value.
    pub omitted: u64,
}

/// Hint usage across tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HintUsage {
    /// Tools serializing at least one hint member, whatever its value (share of tools): "present
    /// at the wire level".
    pub any: Share,
    /// Tools serializing all four hint members, whatever their values (share of tools).
    pub all_four: Share,
    /// Tools serializing at least one hint as a boolean (share of tools); [`HintUsage::any`]
    /// also counts `null` and other values, as the wire level does.
    pub any_boolean: Share,
    /// Tools serializing all four hints as booleans (share of tools).
    pub all_four_boolean: Share,
    /// Hint fields present with a value that is not a boolean (counted as omitted).
    pub non_boolean_values: u64,
    /// Per hint, in the order MCP lists them.
    pub per_hint: Vec<HintCounts>,
}

/// One signature and its share of tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignatureShare {
    /// The label (`TFTT`: readOnly, destructive, idempotent, openWorld; `T`, `F` or `-`).
    pub signature: Signature,
    /// Tools with this signature, and their share of all tools.
    #[serde(flatten)]
    pub tools: Share,
}

/// Signature distribution across tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signatures {
    /// 81.
    pub possible: usize,
    /// Signatures carried by at least one tool.
    pub occurring: usize,
    /// The most common signatures, most common first (ties by label).
    pub top: Vec<SignatureShare>,
    /// Share of tools covered by [`Signatures::top`].
    pub top_cover: Share,
    /// Tools with no hint at all (signature `----`).
    pub no_hint: Share,
    /// Every occurring signature, most common first.
    pub all: Vec<SignatureShare>,
}

/// Per-server signature spread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerSpread {
    /// Servers with at least two tools of which at least one serializes a hint.
    pub multi_tool_emitting: u64,
    /// Of those, servers whose tools carry more than one signature.
    pub more_than_one_signature: Share,
    /// Servers serializing at least one hint member on some tool.
    pub emitting: u64,
    /// Median, over emitting servers, of the share of a server's tools carrying its most common
    /// signature; `null` when there is no such server.
    pub median_dominant_share: Option<f64>,
    /// The same median over multi-tool emitting servers only.
    pub median_dominant_share_multi_tool: Option<f64>,
}

/// `destructiveHint` and its applicability.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Destructive {
    /// Tools with `destructiveHint` serialized (share of tools).
    pub set: Share,
    /// Tools with `destructiveHint` serialized and `readOnlyHint` not `true` (share of tools).
    pub set_where_applicable: Share,
    /// Tools with `destructiveHint: true` and `readOnlyHint` not `true` (share of tools).
    pub true_where_applicable: Share,
    /// Tools with `destructiveHint` serialized and `readOnlyHint: true` (share of tools).
    pub set_on_read_only: Share,
}

/// Declared recovery.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecoveryUsage {
    /// Tools declaring it only in `annotations.recovery` (SEP-3172).
    pub sep3172_only: Share,
    /// Tools declaring it only in `_meta["dev.chronomcp/compensate"]`.
    pub compensate_only: Share,
    /// Tools declaring it in both carriers.
    pub both: Share,
    /// Tools declaring it in either carrier.
    pub any: Share,
    /// SEP-3172 declarations whose strategy is not `"compensation"`.
    pub unknown_strategy: u64,
    /// Tools whose `readOnlyHint` is not `true` (share of tools).
    pub mutating: Share,
    /// Mutating tools declaring a reversibility class (share of mutating tools).
    pub mutating_declared: Share,
    /// Mutating tools by declared class (shares of mutating tools).
    pub mutating_by_class: ReversibilityCounts,
}

/// Mutating tools by declared reversibility class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReversibilityCounts {
    /// `compensable` (compensate carrier) or a SEP-3172 compensation.
    pub compensable: Share,
    /// `irreversible`.
    pub irreversible: Share,
    /// `readonly`.
    pub readonly: Share,
    /// More than one class across the two carriers.
    pub conflicting: Share,
}

/// Findings of one rule at one severity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleFindings {
    /// Rule code.
    pub code: &'static str,
    /// Rule name.
    pub name: &'static str,
    /// Effective severity.
    pub severity: &'static str,
    /// Findings.
    pub count: u64,
}

/// Lint findings across the corpus.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LintSummary {
    /// Files linted.
    pub files: u64,
    /// Files with at least one error.
    pub files_with_errors: u64,
    /// Errors.
    pub errors: u64,
    /// Warnings.
    pub warnings: u64,
    /// Infos.
    pub infos: u64,
    /// Per rule and severity, ordered by code.
    pub by_rule: Vec<RuleFindings>,
}

/// The result of a census.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Census {
    /// Output format version.
    pub version: u32,
    /// File accounting.
    pub files: FileCounts,
    /// Servers: files read as a tools list.
    pub servers: u64,
    /// Tools: JSON objects in the tools arrays.
    pub tools: u64,
    /// Entries of tools arrays that are not objects (not tools).
    pub non_object_entries: u64,
    /// Servers listing no tool.
    pub empty_servers: u64,
    /// Median tools per server, over servers that list at least one tool; `null` without such.
    pub median_tools_per_server: Option<f64>,
    /// Hint usage.
    pub hints: HintUsage,
    /// Signature distribution.
    pub signatures: Signatures,
    /// Per-server signature spread.
    pub servers_spread: ServerSpread,
    /// `destructiveHint`.
    pub destructive: Destructive,
    /// Declared recovery.
    pub recovery: RecoveryUsage,
    /// Guarantee profiles reached from the declarations alone (`spec/profiles.md`), in
    /// catalog order.
    pub profiles: Vec<ProfileShare>,
    /// Lint findings; `null` when linting was off.
    pub lint: Option<LintSummary>,
    /// Files that are not tools lists, by path.
    pub not_tools_lists: Vec<NotToolsFile>,
}

/// How many servers and tools reach one guarantee profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileShare {
    /// The profile.
    pub profile: profile::Profile,
    /// The anomalies it excludes (`A1-A3`).
    pub anomalies: &'static str,
    /// Servers listing at least one tool whose every tool reaches it (share of those servers).
    pub servers: Share,
    /// Tools reaching it (share of tools).
    pub tools: Share,
}

/// Accumulates files into a census; [`census_paths`] drives it over directories.
#[derive(Debug)]
pub struct CensusBuilder {
    options: CensusOptions,
    linter: Option<Linter>,
    tally: Tally,
    files: FileCounts,
    servers: Vec<ServerSummary>,
    not_tools: Vec<NotToolsFile>,
    lint_files: u64,
    lint_files_with_errors: u64,
    lint: LintCounts,
}

impl CensusBuilder {
    /// An empty census; builds the linter once when linting is on.
    pub fn new(options: &CensusOptions) -> Result<Self, CensusError> {
        let linter = if options.lint {
            Some(Linter::new(LintOptions::default())?)
        } else {
            None
        };
        Ok(Self {
            options: options.clone(),
            linter,
            tally: Tally::default(),
            files: FileCounts {
                total: 0,
                tools_lists: 0,
                not_tools_lists: 0,
                bytes: 0,
            },
            servers: Vec::new(),
            not_tools: Vec::new(),
            lint_files: 0,
            lint_files_with_errors: 0,
            lint: LintCounts::new(),
        })
    }

    /// Adds one file's bytes (one server).
    pub fn add_bytes(&mut self, path: impl Into<String>, bytes: &[u8]) {
        let file = examine::examine_bytes(path.into(), bytes, self.linter.as_ref());
        self.add_file(file);
    }

    fn add_file(&mut self, file: FileCensus) {
        self.files.total += 1;
        self.files.bytes += file.bytes;
        match file.outcome {
            Ok((tally, summary)) => {
                self.files.tools_lists += 1;
                self.tally.add(&tally);
                self.servers.push(summary);
            }
            Err(reason) => {
                self.files.not_tools_lists += 1;
                self.not_tools.push(NotToolsFile {
                    path: file.path,
                    reason,
                });
            }
        }
        if let Some(counts) = file.lint {
            self.lint_files += 1;
            if counts
                .keys()
                .any(|(_, severity)| *severity == Severity::Error)
            {
                self.lint_files_with_errors += 1;
            }
            for ((code, severity), (name, n)) in counts {
                self.lint.entry((code, severity)).or_insert((name, 0)).1 += n;
            }
        }
    }

    /// Reads and adds one file from disk; unreadable or oversized files are listed, not fatal.
    pub fn add_path(&mut self, path: &Path) {
        let file = read_and_examine(path, self.linter.as_ref(), self.options.read);
        self.add_file(file);
    }

    /// Computes the metrics.
    pub fn finish(mut self) -> Census {
        let t = &self.tally;
        let tools = t.tools;
        let servers = self.servers.len() as u64;
        let sig_count = |pred: &dyn Fn(Signature) -> bool| -> u64 {
            (0..Signature::COUNT)
                .filter_map(Signature::from_index)
                .filter(|&s| pred(s))
                .map(|s| t.signatures[s.index()])
                .sum()
        };

        let per_hint = Hint::ALL
            .iter()
            .map(|&hint| HintCounts {
                hint: hint.key(),
                true_: sig_count(&|s| s.state(hint) == HintState::True),
                false_: sig_count(&|s| s.state(hint) == HintState::False),
                omitted: sig_count(&|s| s.state(hint) == HintState::Omitted),
            })
            .collect();

        let mut all: Vec<SignatureShare> = (0..Signature::COUNT)
            .filter_map(Signature::from_index)
            .filter(|s| t.signatures[s.index()] > 0)
            .map(|s| SignatureShare {
                signature: s,
                tools: Share::of(t.signatures[s.index()], tools, "tools"),
            })
            .collect();
        all.sort_by(|a, b| {
            b.tools
                .count
                .cmp(&a.tools.count)
                .then_with(|| a.signature.label().cmp(&b.signature.label()))
        });
        let top: Vec<SignatureShare> = all
            .iter()
            .take(self.options.top_signatures)
            .cloned()
            .collect();
        let top_cover = Share::of(top.iter().map(|s| s.tools.count).sum(), tools, "tools");

        let mut tool_counts: Vec<u64> = self
            .servers
            .iter()
            .map(|s| s.tools)
            .filter(|&n| n > 0)
            .collect();
        let dominant_share = |s: &&ServerSummary| s.dominant as f64 / s.tools as f64;
        let emitting: Vec<&ServerSummary> = self
            .servers
            .iter()
            .filter(|s| s.tools >= 1 && s.emits_hint)
            .collect();
        let mut dominant_emitting: Vec<f64> = emitting.iter().map(dominant_share).collect();
        let spread: Vec<&ServerSummary> = self
            .servers
            .iter()
            .filter(|s| s.tools >= 2 && s.emits_hint)
            .collect();
        let multi = spread.len() as u64;
        let more_than_one = spread.iter().filter(|s| s.distinct_signatures > 1).count() as u64;
        let mut dominant: Vec<f64> = spread.iter().map(dominant_share).collect();

        let applicable = |s: Signature| s.state(Hint::ReadOnly) != HintState::True;
        let destructive = Destructive {
            set: Share::of(
                sig_count(&|s| s.state(Hint::Destructive).is_set()),
                tools,
                "tools",
            ),
            set_where_applicable: Share::of(
                sig_count(&|s| applicable(s) && s.state(Hint::Destructive).is_set()),
                tools,
                "tools",
            ),
            true_where_applicable: Share::of(
                sig_count(&|s| applicable(s) && s.state(Hint::Destructive) == HintState::True),
                tools,
                "tools",
            ),
            set_on_read_only: Share::of(t.read_only_destructive_set, tools, "tools"),
        };

        let mutating = t.mutating;
        let recovery = RecoveryUsage {
            sep3172_only: Share::of(t.recovery_sep3172, tools, "tools"),
            compensate_only: Share::of(t.recovery_compensate, tools, "tools"),
            both: Share::of(t.recovery_both, tools, "tools"),
            any: Share::of(
                t.recovery_sep3172 + t.recovery_compensate + t.recovery_both,
                tools,
                "tools",
            ),
            unknown_strategy: t.recovery_unknown_strategy,
            mutating: Share::of(mutating, tools, "tools"),
            mutating_declared: Share::of(t.mutating_declared, mutating, "mutating tools"),
            mutating_by_class: ReversibilityCounts {
                compensable: Share::of(t.mutating_compensable, mutating, "mutating tools"),
                irreversible: Share::of(t.mutating_irreversible, mutating, "mutating tools"),
                readonly: Share::of(t.mutating_readonly, mutating, "mutating tools"),
                conflicting: Share::of(t.mutating_conflicting, mutating, "mutating tools"),
            },
        };

        let lint = self.linter.is_some().then(|| {
            let mut summary = LintSummary {
                files: self.lint_files,
                files_with_errors: self.lint_files_with_errors,
                errors: 0,
                warnings: 0,
                infos: 0,
                by_rule: Vec::new(),
            };
            for (&(code, severity), &(name, count)) in &self.lint {
                match severity {
                    Severity::Error => summary.errors += count,
                    Severity::Warning => summary.warnings += count,
                    Severity::Info => summary.infos += count,
                }
                summary.by_rule.push(RuleFindings {
                    code,
                    name,
                    severity: severity.as_str(),
                    count,
                });
            }
            summary
        });

        let listing: Vec<&ServerSummary> = self.servers.iter().filter(|s| s.tools > 0).collect();
        let profiles = profile::Profile::ALL
            .iter()
            .enumerate()
            .map(|(i, &p)| ProfileShare {
                profile: p,
                anomalies: p.anomalies(),
                servers: Share::of(
                    listing.iter().filter(|s| s.profiles[i].0).count() as u64,
                    listing.len() as u64,
                    "servers listing a tool",
                ),
                tools: Share::of(
                    self.servers.iter().map(|s| s.profiles[i].1).sum(),
                    tools,
                    "tools",
                ),
            })
            .collect();
        self.not_tools.sort_by(|a, b| a.path.cmp(&b.path));
        Census {
            profiles,
            version: FORMAT_VERSION,
            files: self.files.clone(),
            servers,
            tools,
            non_object_entries: t.non_object_entries,
            empty_servers: self.servers.iter().filter(|s| s.tools == 0).count() as u64,
            median_tools_per_server: median_u64(&mut tool_counts),
            hints: HintUsage {
                any: Share::of(t.wire_any, tools, "tools"),
                all_four: Share::of(t.wire_all, tools, "tools"),
                any_boolean: Share::of(sig_count(&|s| s.any_set()), tools, "tools"),
                all_four_boolean: Share::of(sig_count(&|s| s.all_set()), tools, "tools"),
                non_boolean_values: t.non_boolean_hints,
                per_hint,
            },
            signatures: Signatures {
                possible: Signature::COUNT,
                occurring: all.len(),
                top,
                top_cover,
                no_hint: Share::of(t.signatures[Signature::NONE.index()], tools, "tools"),
                all,
            },
            servers_spread: ServerSpread {
                multi_tool_emitting: multi,
                more_than_one_signature: Share::of(
                    more_than_one,
                    multi,
                    "multi-tool emitting servers",
                ),
                emitting: emitting.len() as u64,
                median_dominant_share: median_f64(&mut dominant_emitting),
                median_dominant_share_multi_tool: median_f64(&mut dominant),
            },
            destructive,
            recovery,
            lint,
            not_tools_lists: self.not_tools,
        }
    }
}

/// The median: the middle value, or the mean of the two middle values for an even count.
pub fn median_u64(values: &mut [u64]) -> Option<f64> {
    values.sort_unstable();
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2] as f64),
        _ => Some((values[n / 2 - 1] as f64 + values[n / 2] as f64) / 2.0),
    }
}

/// The median of finite floats (same rule as [`median_u64`]).
pub fn median_f64(values: &mut [f64]) -> Option<f64> {
    values.sort_unstable_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

fn read_and_examine(path: &Path, linter: Option<&Linter>, policy: ReadPolicy) -> FileCensus {
    let label = path.display().to_string();
    match read_file(path, Path::new("."), policy) {
        Ok(bytes) => examine::examine_bytes(label, &bytes, linter),
        Err(ReadError::TooLarge { limit }) => {
            let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
            examine::unreadable(label, NotToolsReason::TooLarge { bytes, limit })
        }
        Err(error) => examine::unreadable(
            label,
            NotToolsReason::Unreadable {
                message: error.to_string(),
            },
        ),
    }
}

/// Expands the given paths: files as given, directories walked for documents by the rule of
/// [`mcp_recovery_validator::walk`], the one `lint DIR` uses too.
///
/// A given path that does not exist is an error; unreadable entries inside a directory are
/// returned so the census lists them.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CensusError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| CensusError::Input {
            path: path.clone(),
            source,
        })?;
        if !meta.is_dir() {
            files.push(path.clone());
            continue;
        }
        let walk = mcp_recovery_validator::walk::json_documents(path);
        files.extend(walk.documents);
        // An entry the walker could not name is reported as the directory itself.
        files.extend(
            walk.errors
                .into_iter()
                .map(|e| e.path.unwrap_or_else(|| path.clone())),
        );
    }
    files.dedup();
    Ok(files)
}

/// Runs a census over files and directories (walked for `*.json`, one file per server).
///
/// Up to [`CensusOptions::threads`] workers each read, parse and lint one file at a time and send
/// back only counters, so memory stays bounded by the largest files.
pub fn census_paths(paths: &[PathBuf], options: &CensusOptions) -> Result<Census, CensusError> {
    census_paths_observed(paths, options, |_, _| {})
}

/// [`census_paths`], calling `observe(done, total)` once the files are found (`done` 0) and
/// after each file is counted: for a progress display.
pub fn census_paths_observed(
    paths: &[PathBuf],
    options: &CensusOptions,
    mut observe: impl FnMut(usize, usize),
) -> Result<Census, CensusError> {
    let files = collect_files(paths)?;
    observe(0, files.len());
    let mut builder = CensusBuilder::new(options)?;
    let threads = options.threads.clamp(1, files.len().max(1));
    let next = AtomicUsize::new(0);
    // The workers borrow the linter while this thread merges into the builder.
    let linter = builder.linter.take();
    let policy = options.read;
    let (sender, receiver) = mpsc::sync_channel::<FileCensus>(2 * threads);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let sender = sender.clone();
            let (files, next, linter) = (&files, &next, linter.as_ref());
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else { break };
                    if sender.send(read_and_examine(path, linter, policy)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for (done, file) in receiver.into_iter().enumerate() {
            builder.add_file(file);
            observe(done + 1, files.len());
        }
    });
    builder.linter = linter;
    Ok(builder.finish())
}

/// Findings per rule code (all severities summed), for comparisons.
impl LintSummary {
    /// Errors per code.
    pub fn errors_by_code(&self) -> BTreeMap<&'static str, u64> {
        let mut out = BTreeMap::new();
        for r in self.by_rule.iter().filter(|r| r.severity == "error") {
            *out.entry(r.code).or_insert(0) += r.count;
        }
        out
    }
}

#[cfg(test)]
mod tests;
