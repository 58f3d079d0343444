use serde_json::Value;

use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus, excerpt};
use crate::context::Context;

declare_rule! {
    /// ## What it does
    /// Checks the keys of a tool's `_meta` against MCP's naming rules: an optional prefix of
    /// dot-separated labels followed by `/` (each label starts with a letter, ends with a letter
    /// or digit, and has only letters, digits and hyphens inside), then a name that, unless empty,
    /// starts and ends with a letter or digit and has only letters, digits, `-`, `_` and `.`
    /// inside. A prefix whose second label is `modelcontextprotocol` or `mcp` (such as
    /// `io.modelcontextprotocol/`) is reserved for MCP itself.
    ///
    /// ## Why is this bad?
    /// `_meta` keys from different vendors share one namespace; the prefix rules keep them apart.
    /// A key under a reserved prefix may collide with a future protocol key and be misread.
    ///
    /// ## Example
    /// ```json
    /// {"_meta": {"io.modelcontextprotocol/undo": true, "my tool/x": 1}}
    /// ```
    ///
    /// Use instead:
    /// ```json
    /// {"_meta": {"com.example/undo": true, "com.example.tools/x": 1}}
    /// ```
    summary: "a `_meta` key breaks MCP's key rules or uses a reserved prefix it does not own",
}

const RESERVED_LABELS: [&str; 2] = ["modelcontextprotocol", "mcp"];

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for tool in &ctx.tools {
        let Some(Value::Object(meta)) = tool.raw.get("_meta") else {
            continue;
        };
        for key in meta.keys() {
            let pointer = || tool.at(&format!("/_meta/{}", mcp_recovery_model::escape_token(key)));
            if let Some(problem) = key_problem(key) {
                out.push(malformed(pointer(), tool.name, key, &problem));
            } else if is_reserved(key) {
                out.push(reserved(pointer(), tool.name, key));
            }
        }
    }
}

/// Why `key` breaks the naming rules, if it does.
fn key_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        for label in prefix.split('.') {
            if let Some(problem) = label_problem(label) {
                return Some(format!("its prefix '{}' {problem}", excerpt(prefix, 60)));
            }
        }
    }
    name_problem(name).map(|problem| format!("its name '{}' {problem}", excerpt(name, 60)))
}

fn label_problem(label: &str) -> Option<&'static str> {
    let first = label.chars().next();
    let last = label.chars().last();
    if label.is_empty() {
        Some("has an empty label")
    } else if !first.is_some_and(|c| c.is_ascii_alphabetic()) {
        Some("has a label that does not start with a letter")
    } else if !last.is_some_and(|c| c.is_ascii_alphanumeric()) {
        Some("has a label that does not end with a letter or digit")
    } else if !label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        Some("has a label with a character other than letters, digits and '-'")
    } else {
        None
    }
}

fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return None;
    }
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !edge(name.chars().next()) || !edge(name.chars().last()) {
        Some("does not start and end with a letter or digit")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        Some("contains a character other than letters, digits, '-', '_' and '.'")
    } else {
        None
    }
}

fn is_reserved(key: &str) -> bool {
    key.split_once('/')
        .and_then(|(prefix, _)| prefix.split('.').nth(1))
        .is_some_and(|label| RESERVED_LABELS.contains(&label))
}

fn malformed(pointer: String, tool: Option<&str>, key: &str, problem: &str) -> Finding {
    Finding::new(
        Rule::InvalidMetaKey,
        pointer,
        format!("`_meta` key '{}' is malformed: {problem}", excerpt(key, 80)),
    )
    .tool(tool)
    .focus(Focus::Key)
    .help("use a key such as `com.example/feature`: a reverse-DNS prefix, '/', then a name")
}

fn reserved(pointer: String, tool: Option<&str>, key: &str) -> Finding {
    Finding::new(
        Rule::InvalidMetaKey,
        pointer,
        format!(
            "`_meta` key '{}' uses a prefix reserved for MCP",
            excerpt(key, 80)
        ),
    )
    .tool(tool)
    .focus(Focus::Key)
    .help("use a prefix your organization owns, in reverse-DNS form (`com.example/`)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_rules() {
        for good in [
            "dev.chronomcp/compensate",
            "progressToken",
            "",
            "com.example/",
            "a/b.c-d_e",
            "com.example.mcp/x",
        ] {
            assert_eq!(key_problem(good), None, "{good}");
        }
        for bad in [
            "-x",
            "x-",
            "1abc/x",
            "a..b/x",
            "a/b/c",
            "a b",
            "ex_ample/x",
            "a/-x",
        ] {
            assert!(key_problem(bad).is_some(), "{bad}");
        }
        assert!(is_reserved("io.modelcontextprotocol/related-task"));
        assert!(is_reserved("dev.mcp/x"));
        assert!(!is_reserved("com.example.mcp/x"));
        assert!(!is_reserved("mcp/x"));
    }
}
