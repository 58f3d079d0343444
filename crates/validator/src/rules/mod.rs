//! The rules of the catalog, one per file. Each file declares its `RULE` (summary and docs) and,
//! for semantic rules, a `check` over the [`Context`]; message wording lives in the file's
//! constructors. Code, name, default level and presets are the table's (`codes.rs`).
//!
//! [`Context`]: crate::context::Context

use crate::codes::{Rule, rule_modules, rule_table};
use crate::context::Check;
use crate::level::RULES_DOC_URL;

rule_table!(rule_modules);

impl Rule {
    /// The stable code.
    pub(crate) fn code(self) -> &'static str {
        self.def().code
    }

    /// Looks a rule up by code (case-insensitive) or name.
    pub(crate) fn find(code_or_name: &str) -> Option<Rule> {
        Self::ALL.iter().copied().find(|r| {
            r.def().code.eq_ignore_ascii_case(code_or_name) || r.def().name == code_or_name
        })
    }

    /// The documentation URL of the rule.
    pub(crate) fn url(self) -> String {
        format!("{}#{}", RULES_DOC_URL, self.code().to_ascii_lowercase())
    }
}
