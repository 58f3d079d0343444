//! `[[overrides]]` in `mcp-recovery.toml`: rule selection and severities for the files and
//! tools that match glob patterns.
//!
//! The linter runs every rule once, and each finding is then kept, dropped or given another
//! severity by the top-level settings and every override that matches it, in file order: a
//! `select` replaces the rules that run, `ignore` removes some, `severity` sets levels.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use mcp_recovery_validator::{Diagnostic, LintOptions, Severity, UnknownRule, find_rule, rules};

/// Glob patterns (`*` stays within one path segment, `**` crosses them, `?`, `[...]`, `{a,b}`).
/// No pattern matches everything.
#[derive(Debug, Clone)]
pub struct Patterns {
    /// The patterns as written.
    pub written: Vec<String>,
    /// Their compiled form; patterns without `/` also match a file's name.
    set: GlobSet,
}

impl PartialEq for Patterns {
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written
    }
}

impl Eq for Patterns {}

impl Patterns {
    /// Compiles `(pattern, span)` pairs; the error carries the span of the bad pattern.
    pub fn new<'a>(
        patterns: impl IntoIterator<Item = (&'a str, Range<usize>)>,
    ) -> Result<Self, (String, Range<usize>)> {
        let mut builder = GlobSetBuilder::new();
        let mut written = Vec::new();
        for (pattern, span) in patterns {
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| {
                    (
                        format!("invalid glob `{}`: {}", pattern.escape_debug(), e.kind()),
                        span,
                    )
                })?;
            builder.add(glob);
            written.push(pattern.to_owned());
        }
        let set = builder
            .build()
            .map_err(|e| (format!("invalid globs: {e}"), 0..0))?;
        Ok(Self { written, set })
    }

    fn is_empty(&self) -> bool {
        self.written.is_empty()
    }

    /// Whether the (normalized) file matches: its whole path, or its name for patterns
    /// without a `/`.
    fn matches_file(&self, file: &str) -> bool {
        if self.set.is_match(file) {
            return true;
        }
        let Some(name) = Path::new(file).file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        self.set
            .matches(name)
            .into_iter()
            .any(|i| !self.written[i].contains('/'))
    }
}

/// One checked `[[overrides]]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// Files it applies to (empty: every file).
    pub files: Patterns,
    /// Tools it applies to (empty: every finding, with or without a tool).
    pub tools: Patterns,
    /// When set, only these rules run in its scope.
    pub select: Option<Vec<String>>,
    /// Rules that do not run in its scope.
    pub ignore: Vec<String>,
    /// Severities in its scope.
    pub severity: BTreeMap<String, Severity>,
}

impl Override {
    fn applies(&self, file: &str, tool: Option<&str>) -> bool {
        let file_ok = self.files.is_empty() || self.files.matches_file(file);
        let tool_ok = self.tools.is_empty() || tool.is_some_and(|t| self.tools.set.is_match(t));
        file_ok && tool_ok
    }
}

/// The code of a rule given by code or name (already checked against the catalog).
fn code(entry: &str) -> Option<&'static str> {
    find_rule(entry).map(|rule| rule.code)
}

fn codes(entries: &[String]) -> HashSet<&'static str> {
    entries.iter().filter_map(|e| code(e)).collect()
}

/// The top-level rule selection and the overrides, applied finding by finding.
#[derive(Debug)]
pub struct Scopes {
    /// Rules that run outside every override.
    base: HashSet<&'static str>,
    overrides: Vec<Override>,
}

impl Scopes {
    /// The scopes of `options` (the merged top-level settings) and `overrides`.
    pub fn new(options: &LintOptions, overrides: Vec<Override>) -> Self {
        let select = codes(&options.select);
        let ignore = codes(&options.ignore);
        let base = rules()
            .iter()
            .filter(|rule| {
                let on = if select.is_empty() {
                    options.preset.includes(rule)
                } else {
                    select.contains(rule.code)
                };
                on && !ignore.contains(rule.code)
            })
            .map(|rule| rule.code)
            .collect();
        Self { base, overrides }
    }

    /// Whether there is anything to do per finding.
    pub fn is_empty(&self) -> bool {
        self.overrides.is_empty()
    }

    /// What the linter must run so that every scope gets its findings: every rule, with the
    /// top-level severities. The top-level lists are checked as the linter would check them.
    pub fn linter_options(options: &LintOptions) -> Result<LintOptions, UnknownRule> {
        let named = options.select.iter().chain(&options.ignore);
        if let Some(unknown) = named
            .chain(options.severity.keys())
            .find(|entry| find_rule(entry).is_none())
        {
            return Err(UnknownRule(unknown.clone()));
        }
        Ok(LintOptions {
            select: rules().iter().map(|rule| rule.code.to_owned()).collect(),
            ignore: Vec::new(),
            severity: options.severity.clone(),
            preset: options.preset,
        })
    }

    /// Drops the findings of rules that do not run in their scope and sets the severities
    /// the overrides give.
    /// `view` gives each item's file, normalized as the baseline normalizes it, and its
    /// diagnostic.
    pub fn apply<T>(&self, items: &mut Vec<T>, view: impl Fn(&mut T) -> (String, &mut Diagnostic)) {
        items.retain_mut(|item| {
            let (file, d) = view(item);
            let mut on = self.base.contains(d.code);
            let mut severity = None;
            for o in self
                .overrides
                .iter()
                .filter(|o| o.applies(&file, d.tool.as_deref()))
            {
                if let Some(select) = &o.select {
                    on = select.iter().any(|s| code(s) == Some(d.code));
                }
                if o.ignore.iter().any(|s| code(s) == Some(d.code)) {
                    on = false;
                }
                if let Some((_, level)) = o.severity.iter().find(|(s, _)| code(s) == Some(d.code)) {
                    severity = Some(*level);
                }
            }
            if let Some(level) = severity {
                d.severity = level;
            }
            on
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(list: &[&str]) -> Patterns {
        Patterns::new(list.iter().map(|p| (*p, 0..0))).unwrap()
    }

    #[test]
    fn file_globs() {
        let p = patterns(&["*.tools.json"]);
        assert!(p.matches_file("a.tools.json"));
        assert!(
            p.matches_file("dir/sub/a.tools.json"),
            "a name pattern matches in any dir"
        );
        assert!(!p.matches_file("a.json"));
        let p = patterns(&["legacy/*.json"]);
        assert!(p.matches_file("legacy/a.json"));
        assert!(
            !p.matches_file("legacy/deep/a.json"),
            "* stays within a segment"
        );
        assert!(!p.matches_file("other/legacy/a.json"));
        let p = patterns(&["legacy/**"]);
        assert!(p.matches_file("legacy/deep/a.json"));
        let p = patterns(&["{a,b}.json", "c?.json"]);
        assert!(p.matches_file("b.json") && p.matches_file("c1.json"));
        assert!(Patterns::new([("a[", 3..5)]).unwrap_err().1 == (3..5));
    }

    #[test]
    fn tool_scope_needs_a_tool() {
        let o = Override {
            files: patterns(&[]),
            tools: patterns(&["admin_*"]),
            select: None,
            ignore: vec!["R101".into()],
            severity: BTreeMap::new(),
        };
        assert!(o.applies("x.json", Some("admin_delete")));
        assert!(!o.applies("x.json", Some("user_delete")));
        assert!(!o.applies("x.json", None));
    }
}
