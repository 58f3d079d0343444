//! The code table: every rule, its stable code and name, in one place.
//!
//! Codes are never reused. A rule's documentation is the doc comment of its `RULE` constant, in
//! the file of the rule under `rules/`.

use crate::rules;
use crate::{DefaultLevel, Severity};

/// The static description of a rule, declared next to its check.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleDef {
    pub code: &'static str,
    pub name: &'static str,
    pub default: DefaultLevel,
    pub summary: &'static str,
    /// The rule's doc comment, one leading space per line as rustc keeps it.
    pub raw_docs: &'static str,
}

/// Declares a rule's [`RuleDef`] from its doc comment, so the docs live with the rule.
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        code: $code:literal,
        name: $name:literal,
        default: $default:expr,
        summary: $summary:literal $(,)?
    ) => {
        $(#[doc = $doc])*
        pub(crate) const RULE: $crate::codes::RuleDef = $crate::codes::RuleDef {
            code: $code,
            name: $name,
            default: $default,
            summary: $summary,
            raw_docs: concat!($($doc, "\n"),*),
        };
    };
}
pub(crate) use declare_rule;

/// Shorthands for `declare_rule!` defaults.
pub(crate) const ERROR: DefaultLevel = DefaultLevel::On(Severity::Error);
pub(crate) const WARNING: DefaultLevel = DefaultLevel::On(Severity::Warning);
pub(crate) const INFO: DefaultLevel = DefaultLevel::On(Severity::Info);
pub(crate) const OFF: DefaultLevel = DefaultLevel::Off;

macro_rules! code_table {
    ($($variant:ident => $module:ident,)*) => {
        /// Every rule of the catalog, ordered by code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub(crate) enum Rule {
            $($variant,)*
        }

        impl Rule {
            /// All rules, ordered by code.
            pub(crate) const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// The rule's static description.
            pub(crate) fn def(self) -> &'static RuleDef {
                match self {
                    $(Rule::$variant => &rules::$module::RULE,)*
                }
            }
        }
    };
}

code_table! {
    InvalidJson => invalid_json,
    NotAToolsList => not_a_tools_list,
    SchemaViolation => schema_violation,
    DuplicateToolName => duplicate_tool_name,
    ToolNameFormat => tool_name_format,
    InvalidMetaKey => invalid_meta_key,
    DuplicateKey => duplicate_key,
    OverlayUnknownTool => overlay_unknown_tool,
    OverlayConflict => overlay_conflict,
    DanglingOperationId => dangling_operation_id,
    IdentityCompensation => identity_compensation,
    UnknownStrategy => unknown_strategy,
    InvalidExpression => invalid_expression,
    ExpressionSourceNotInMcp => expression_source_not_in_mcp,
    UnresolvablePointer => unresolvable_pointer,
    UnverifiableBinding => unverifiable_binding,
    OptionalSource => optional_source,
    MissingRequiredParameter => missing_required_parameter,
    UnknownParameter => unknown_parameter,
    TypeMismatch => type_mismatch,
    RecoveryOnReadOnlyTool => recovery_on_read_only_tool,
    ReadOnlyCompensator => read_only_compensator,
    NonIdempotentCompensator => non_idempotent_compensator,
    CarrierConflict => carrier_conflict,
    ReversibilityContradiction => reversibility_contradiction,
    HintContradiction => hint_contradiction,
    UnusableInputSchema => unusable_input_schema,
    UndeclaredReversibility => undeclared_reversibility,
    DestructiveWithoutRecovery => destructive_without_recovery,
    MissingTitle => missing_title,
    ReadOnlyHintOmitted => read_only_hint_omitted,
    DestructiveHintOmitted => destructive_hint_omitted,
    HintDisagreement => hint_disagreement,
}

impl Rule {
    /// Position in [`Rule::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }

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
        format!(
            "{}#{}",
            crate::RULES_DOC_URL,
            self.code().to_ascii_lowercase()
        )
    }
}

/// Removes the single leading space rustc keeps on each doc-comment line.
pub(crate) fn dedent(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for line in raw.lines() {
        out.push_str(line.strip_prefix(' ').unwrap_or(line));
        out.push('\n');
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push('\n');
    out
}
