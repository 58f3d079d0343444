use crate::codes::{Rule, declare_rule};
use crate::finding::{Finding, excerpt};

declare_rule! {
    /// ## What it does
    /// Reports an overlay field that the server declares itself, with a different value. The
    /// server's value is kept; the finding points at the overlay's.
    ///
    /// ## Why is this bad?
    /// The overlay was written when the server declared nothing. Now the server speaks for
    /// itself and says something else, so one of them is wrong: either the overlay is stale, or
    /// the server's declaration has a mistake worth reporting upstream. Carriers are compared
    /// after normalization, so the same declaration spelt differently is no conflict.
    ///
    /// ## Example
    /// The server sends `"annotations": {"destructiveHint": true}` and the overlay says
    /// ```toml
    /// [tools.delete_entities.annotations]
    /// destructiveHint = false
    /// ```
    ///
    /// Use instead: remove the overlay's field once the server declares it, or ask the server's
    /// authors to fix theirs.
    summary: "an overlay field differs from the server's own declaration (the server's wins)",
}

pub(crate) fn conflict(pointer: &str, tool: &str, field: &str, document_pointer: &str) -> Finding {
    Finding::new(
        Rule::OverlayConflict,
        pointer,
        format!(
            "'{}' already declares {field} (at {document_pointer}) differently; the server's declaration is used",
            excerpt(tool, 80)
        ),
    )
    .tool(Some(tool))
    .help("remove this field from the overlay, or report the server's declaration upstream")
}

/// Whether two tool names differ only in case, separators, or one edit.
pub(crate) fn similar(a: &str, b: &str) -> bool {
    let fold = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| !matches!(c, '_' | '-' | '.'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (a, b) = (fold(a), fold(b));
    if a == b {
        return true;
    }
    if a.len().abs_diff(b.len()) > 1 || a.len().min(b.len()) < 4 {
        return false;
    }
    // One insertion, deletion or substitution.
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    let prefix = short
        .iter()
        .zip(long.iter())
        .take_while(|(x, y)| x == y)
        .count();
    let skipped = if short.len() == long.len() {
        prefix + 1
    } else {
        prefix
    };
    short.get(skipped..) == long.get(prefix + 1..)
}

#[cfg(test)]
mod tests {
    use super::similar;

    #[test]
    fn near_names() {
        assert!(similar("create_entities", "createEntities"));
        assert!(similar("create_entities", "create_entitie"));
        assert!(similar("create_entity", "create_entily"));
        assert!(!similar("create_entity", "create_entities"));
        assert!(!similar("add", "adx"));
        assert!(!similar("delete_file", "create_file"));
    }
}
