//! The census numbers a corpus must yield: counted by the generator as it writes, and read
//! back from a census under the same keys.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

/// What the generator knows about one tool, for the expected census numbers.
#[derive(Debug, Clone)]
pub(super) struct ToolFacts {
    pub(super) signature: String,
    pub(super) sep: bool,
    pub(super) compensate: bool,
    pub(super) classes: BTreeSet<&'static str>,
}

/// Expected census numbers, computed from the generator's own records.
#[derive(Debug, Default)]
pub(super) struct Expected {
    servers: u64,
    tools: u64,
    tool_counts: Vec<u64>,
    signatures: BTreeMap<String, u64>,
    spread_dominant: Vec<f64>,
    multi_tool_emitting: u64,
    more_than_one: u64,
    sep_only: u64,
    compensate_only: u64,
    both: u64,
    mutating: u64,
    mutating_declared: u64,
    mutating_compensable: u64,
    mutating_irreversible: u64,
}

impl Expected {
    pub(super) fn add_server(&mut self, tools: &[ToolFacts]) {
        self.servers += 1;
        self.tools += tools.len() as u64;
        self.tool_counts.push(tools.len() as u64);
        let mut local: BTreeMap<&str, u64> = BTreeMap::new();
        for t in tools {
            *self.signatures.entry(t.signature.clone()).or_insert(0) += 1;
            *local.entry(&t.signature).or_insert(0) += 1;
            match (t.sep, t.compensate) {
                (true, true) => self.both += 1,
                (true, false) => self.sep_only += 1,
                (false, true) => self.compensate_only += 1,
                (false, false) => {}
            }
            if !t.signature.starts_with('T') {
                self.mutating += 1;
                if !t.classes.is_empty() {
                    self.mutating_declared += 1;
                }
                if t.classes.len() == 1 && t.classes.contains("compensable") {
                    self.mutating_compensable += 1;
                }
                if t.classes.len() == 1 && t.classes.contains("irreversible") {
                    self.mutating_irreversible += 1;
                }
            }
        }
        let emits = tools.iter().any(|t| t.signature != "----");
        if tools.len() >= 2 && emits {
            self.multi_tool_emitting += 1;
            if local.len() > 1 {
                self.more_than_one += 1;
            }
            let dominant = local.values().copied().max().unwrap_or(0);
            self.spread_dominant
                .push(dominant as f64 / tools.len() as f64);
        }
    }

    pub(super) fn to_json(&self, not_tools_lists: u64) -> Value {
        let count = |pred: &dyn Fn(&str) -> bool| -> u64 {
            self.signatures
                .iter()
                .filter(|(l, _)| pred(l))
                .map(|(_, n)| n)
                .sum()
        };
        let at = |l: &str, i: usize| l.as_bytes()[i];
        let mut tool_counts = self.tool_counts.clone();
        let mut dominant = self.spread_dominant.clone();
        json!({
            "servers": self.servers,
            "tools": self.tools,
            "not_tools_lists": not_tools_lists,
            "median_tools_per_server": mcp_recovery_census::median_u64(&mut tool_counts),
            "hints_any": count(&|l| l != "----"),
            "hints_all_four": count(&|l| !l.contains('-')),
            "no_hint": count(&|l| l == "----"),
            "signatures_occurring": self.signatures.len(),
            "signatures": self.signatures,
            "multi_tool_emitting": self.multi_tool_emitting,
            "more_than_one_signature": self.more_than_one,
            "median_dominant_share": mcp_recovery_census::median_f64(&mut dominant),
            "destructive_set": count(&|l| at(l, 1) != b'-'),
            "destructive_set_where_applicable": count(&|l| at(l, 0) != b'T' && at(l, 1) != b'-'),
            "destructive_true_where_applicable": count(&|l| at(l, 0) != b'T' && at(l, 1) == b'T'),
            "destructive_set_on_read_only": count(&|l| at(l, 0) == b'T' && at(l, 1) != b'-'),
            "recovery_sep3172_only": self.sep_only,
            "recovery_compensate_only": self.compensate_only,
            "recovery_both": self.both,
            "mutating": self.mutating,
            "mutating_declared": self.mutating_declared,
            "mutating_compensable": self.mutating_compensable,
            "mutating_irreversible": self.mutating_irreversible,
        })
    }
}

/// The census numbers of `census` under the manifest's `expected` keys.
pub(super) fn actual_numbers(census: &mcp_recovery_census::Census) -> Value {
    let signatures: BTreeMap<String, u64> = census
        .signatures
        .all
        .iter()
        .map(|s| (s.signature.label(), s.tools.count))
        .collect();
    json!({
        "servers": census.servers,
        "tools": census.tools,
        // manifest.json is a file of the corpus too, and not a tools list.
        "not_tools_lists": census.files.not_tools_lists.saturating_sub(1),
        "median_tools_per_server": census.median_tools_per_server,
        "hints_any": census.hints.any.count,
        "hints_all_four": census.hints.all_four.count,
        "no_hint": census.signatures.no_hint.count,
        "signatures_occurring": census.signatures.occurring,
        "signatures": signatures,
        "multi_tool_emitting": census.servers_spread.multi_tool_emitting,
        "more_than_one_signature": census.servers_spread.more_than_one_signature.count,
        // The generator counts multi-tool servers only (`Expected::add_server`).
        "median_dominant_share": census.servers_spread.median_dominant_share_multi_tool,
        "destructive_set": census.destructive.set.count,
        "destructive_set_where_applicable": census.destructive.set_where_applicable.count,
        "destructive_true_where_applicable": census.destructive.true_where_applicable.count,
        "destructive_set_on_read_only": census.destructive.set_on_read_only.count,
        "recovery_sep3172_only": census.recovery.sep3172_only.count,
        "recovery_compensate_only": census.recovery.compensate_only.count,
        "recovery_both": census.recovery.both.count,
        "mutating": census.recovery.mutating.count,
        "mutating_declared": census.recovery.mutating_declared.count,
        "mutating_compensable": census.recovery.mutating_by_class.compensable.count,
        "mutating_irreversible": census.recovery.mutating_by_class.irreversible.count,
    })
}
