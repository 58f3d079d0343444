//! `patternProperties` matching with ECMA-262 semantics, under a work budget.
//!
//! A pattern is translated from ECMA-262 to the Rust regex dialect (`\d` and `\w` stay ASCII,
//! ECMA-262 escapes are rewritten) by `jsonschema-regex`, then compiled by `fancy-regex`, the
//! backtracking engine that compensators' input schemas are validated with, so look-around
//! (`(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`) and back-references are judged too. Work stays bounded:
//! compiled programs are capped in size, each match stops after [`BACKTRACK_LIMIT`] steps, and
//! one [`Patterns`] makes at most [`PATTERN_BUDGET`] matches. A pattern that does not
//! compile, a match that gives up and a match past the budget are all "cannot judge" (`None`).

use std::collections::HashMap;

use fancy_regex::{Regex, RegexBuilder};
use mcp_recovery_model::{BACKTRACK_LIMIT, PATTERN_BUDGET};

/// Size cap of a compiled program (and of its lazy DFA), so hostile patterns stay cheap.
const SIZE_LIMIT: usize = 1 << 20;

/// Compiled patterns and the match budget of one walk.
#[derive(Debug)]
pub(crate) struct Patterns<'a> {
    compiled: HashMap<&'a str, Option<Regex>>,
    /// Matches left.
    left: usize,
}

impl<'a> Patterns<'a> {
    pub(crate) fn new() -> Self {
        Self {
            compiled: HashMap::new(),
            left: PATTERN_BUDGET,
        }
    }

    /// Whether `pattern` matches somewhere in `name` (JSON Schema patterns are not anchored);
    /// `None` when that cannot be judged.
    pub(crate) fn matches(&mut self, pattern: &'a str, name: &str) -> Option<bool> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.compiled
            .entry(pattern)
            .or_insert_with(|| compile(pattern))
            .as_ref()?
            .is_match(name)
            .ok()
    }
}

/// Compiles an ECMA-262 pattern; `None` when it is not one the engine accepts.
fn compile(pattern: &str) -> Option<Regex> {
    let translated = jsonschema_regex::to_rust_regex(pattern).ok()?;
    RegexBuilder::new(&translated)
        .backtrack_limit(BACKTRACK_LIMIT)
        .delegate_size_limit(SIZE_LIMIT)
        .delegate_dfa_size_limit(SIZE_LIMIT)
        .build()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(pattern: &str, name: &str) -> Option<bool> {
        Patterns::new().matches(pattern, name)
    }

    #[test]
    fn look_around_and_back_references_are_judged() {
        assert_eq!(judge("^(?=a)", "abc"), Some(true));
        assert_eq!(judge("^(?=a)", "zzz"), Some(false));
        assert_eq!(judge("^(?!x-)", "x-trace"), Some(false));
        assert_eq!(judge("^(?!x-)", "name"), Some(true));
        assert_eq!(judge("(?<=_)id$", "user_id"), Some(true));
        assert_eq!(judge("(?<!_)id$", "user_id"), Some(false));
        assert_eq!(judge(r"^(a)\1$", "aa"), Some(true));
        assert_eq!(judge(r"^(a)\1$", "ab"), Some(false));
    }

    #[test]
    fn ecma_262_classes_are_ascii() {
        // `\d` and `\w` are ASCII in ECMA-262 (without the `u` flag).
        assert_eq!(judge(r"^\d+$", "١٢"), Some(false));
        assert_eq!(judge(r"^\d+$", "12"), Some(true));
        assert_eq!(judge(r"^\w+$", "é"), Some(false));
    }

    #[test]
    fn unjudgeable_patterns_are_none() {
        assert_eq!(judge("(", "a"), None);
        assert_eq!(judge("[z-a]", "a"), None);
        // Catastrophic backtracking stops at the step limit.
        let name = format!("{}!", "a".repeat(64));
        assert_eq!(judge(r"^(a|a)*\1$", &name), None);
    }

    #[test]
    fn the_budget_bounds_the_matches_of_one_walk() {
        let mut patterns = Patterns::new();
        for _ in 0..PATTERN_BUDGET {
            assert_eq!(patterns.matches("^a", "a"), Some(true));
        }
        assert_eq!(patterns.matches("^a", "a"), None);
    }
}
