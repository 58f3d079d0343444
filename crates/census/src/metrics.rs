//! The census itself: every metric of `spec/census.md`, as the JSON output writes it.

use std::collections::BTreeMap;

use mcp_recovery_adoption::profile::Profile;
use serde::Serialize;

use crate::examine::NotToolsReason;
use crate::signature::Signature;

/// Version of the JSON output format.
pub const FORMAT_VERSION: u32 = 1;

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
    pub(crate) fn of(count: u64, denominator: u64, of: &'static str) -> Self {
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
    /// Every file, once, in the order given: what the cli states as `sources`. Not part of the
    /// census's own JSON.
    #[serde(skip)]
    pub sources: Vec<FileSeen>,
}

/// What became of one file of a census.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSeen {
    /// The file as named.
    pub path: String,
    /// Why it could not be read (unreadable, larger than the cap); `None` when it was read.
    pub not_read: Option<String>,
    /// Tools it lists (0 when it is not a tools list, or was not read).
    pub tools: u64,
    /// Its lint findings, every severity; `None` with linting off or when it was not read.
    pub findings: Option<u64>,
}

/// How many servers and tools reach one guarantee profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileShare {
    /// The profile.
    pub profile: Profile,
    /// The anomalies it excludes (`A1-A3`).
    pub anomalies: &'static str,
    /// Servers listing at least one tool whose every tool reaches it (share of those servers).
    pub servers: Share,
    /// Tools reaching it (share of tools).
    pub tools: Share,
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
