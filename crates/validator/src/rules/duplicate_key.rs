use serde_json::Value;

use crate::Severity;
use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, Focus, excerpt, show};

declare_rule! {
    /// ## What it does
    /// Reports a member name that appears more than once in the same JSON object. It is an
    /// error inside a tool definition and a warning elsewhere in the document (the JSON-RPC
    /// envelope, the result object).
    ///
    /// ## Why is this bad?
    /// RFC 8259 leaves the meaning of duplicate names open: most parsers keep the last value,
    /// some the first, some reject the document. A reviewer reads the first occurrence while the
    /// linter, the client and the orchestrator may act on another one, so a pull request can
    /// show `"destructiveHint": true` and ship `false`.
    ///
    /// ## Example
    /// ```json
    /// {"tools": [{
    ///   "name": "delete_repo",
    ///   "inputSchema": {"type": "object"},
    ///   "annotations": {"destructiveHint": true, "destructiveHint": false}
    /// }]}
    /// ```
    ///
    /// Use instead: write each member once, with the value meant.
    ///
    /// ## References
    /// - [RFC 8259 §4](https://www.rfc-editor.org/rfc/rfc8259#section-4): "The names within an
    ///   object SHOULD be unique."
    summary: "an object has the same member name twice (an error inside a tool, else a warning)",
}

/// A finding for `key`, written `count` times in one object; `pointer` selects the member, whose
/// last occurrence is the value a JSON parser keeps (`kept`). `in_tool` when the object is part
/// of a tool definition (`tool` names it, when it has a name).
pub(crate) fn duplicate(
    pointer: String,
    key: &str,
    count: usize,
    kept: Option<&Value>,
    in_tool: bool,
    tool: Option<&str>,
) -> Finding {
    let kept = kept.map_or_else(String::new, |value| {
        format!("; the value kept is {}", show(value))
    });
    let finding = Finding::new(
        Rule::DuplicateKey,
        pointer,
        format!(
            "member `{}` appears {count} times in this object{kept}",
            excerpt(key, 80)
        ),
    )
    .focus(Focus::Key)
    .help("write each member once; readers and parsers disagree on which duplicate counts");
    if in_tool {
        finding.tool(tool)
    } else {
        finding.severity(Severity::Warning)
    }
}
