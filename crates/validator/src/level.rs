//! The levels, presets and catalog entry of a rule: the vocabulary the rule table is written in.

use crate::diagnostic::Severity;

/// Where the rule documentation is published; each rule has an anchor named after its code.
pub const RULES_DOC_URL: &str =
    "https://github.com/mcp-recovery/mcp-recovery/blob/main/spec/rules.md";

/// A rule's level when nothing configures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultLevel {
    /// Reported at this severity.
    On(Severity),
    /// Advisory: reported (as a warning) only when selected.
    Off,
}

/// Catalog entry of one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuleInfo {
    /// Stable code (`R101`).
    pub code: &'static str,
    /// Stable kebab-case name (`dangling-operation-id`).
    pub name: &'static str,
    /// Level without configuration.
    pub default: DefaultLevel,
    /// The presets that run the rule when nothing is selected.
    pub presets: &'static [Preset],
    /// One-line summary.
    pub summary: &'static str,
    /// Markdown documentation (`## What it does`, `## Why is this bad?`, `## Example`, …).
    pub docs: &'static str,
}

/// A named rule set: the rules that run when `select` is empty.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Preset {
    /// The rules that are on by default: true findings, quiet on well-kept servers.
    #[default]
    Recommended,
    /// Every rule, the advisory ones included (they report warnings).
    Strict,
}

impl Preset {
    /// Every preset, in order of strictness.
    pub const ALL: [Preset; 2] = [Self::Recommended, Self::Strict];

    /// `recommended` or `strict`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Recommended => "recommended",
            Self::Strict => "strict",
        }
    }

    /// The preset of this name.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// Whether the rule belongs to the set.
    pub fn includes(self, rule: &RuleInfo) -> bool {
        rule.presets.contains(&self)
    }
}

impl DefaultLevel {
    /// `error`, `warning`, `info`, or `off` for advisory rules.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::On(severity) => severity.as_str(),
            Self::Off => "off",
        }
    }
}

impl RuleInfo {
    /// The documentation URL of the rule (an anchor of `spec/rules.md`).
    pub fn url(&self) -> String {
        format!("{RULES_DOC_URL}#{}", self.code.to_ascii_lowercase())
    }
}
