//! The rule table, what it is made of, and [`Rule`], the enum it declares.
//!
//! Codes are never reused. A rule's documentation is the doc comment of its `RULE` constant, in
//! the file of the rule under `rules/`.

use crate::diagnostic::Severity;
use crate::level::{DefaultLevel, Preset};

/// The static description of a rule: its row of the table and its documentation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleDef {
    pub code: &'static str,
    pub name: &'static str,
    pub default: DefaultLevel,
    /// The presets that run the rule when nothing is selected.
    pub presets: &'static [Preset],
    pub summary: &'static str,
    /// The rule's doc comment, one leading space per line as rustc keeps it.
    pub raw_docs: &'static str,
}

/// A rule's documentation, declared in the rule's file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleDocs {
    pub summary: &'static str,
    pub raw_docs: &'static str,
}

/// Declares a rule's [`RuleDocs`] from its doc comment, so the docs live with the rule.
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        summary: $summary:literal $(,)?
    ) => {
        $(#[doc = $doc])*
        pub(crate) const RULE: $crate::codes::RuleDocs = $crate::codes::RuleDocs {
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

/// The rule table: one row per rule, ordered by code: code, name, variant, module under
/// `rules/`, default level, the presets it belongs to, and `check` (the module's `check` runs over
/// the [`Context`]) or `stage` (a stage of the pipeline reports it).
///
/// The rows are handed to `$callback`, a macro that declares one thing from them: [`Rule`] here
/// ([`rule_enum!`]), the rule modules with their definitions and checks in `rules/mod.rs`
/// ([`rule_modules!`]). The catalog printed by `rules`/`explain`, `spec/rules.md` and the presets
/// all follow from it.
///
/// [`Context`]: crate::context::Context
macro_rules! rule_table {
    ($callback:ident) => {
        $callback! {
            "R001" "invalid-json"                 InvalidJson                invalid_json                 ERROR   [Recommended, Strict] stage;
            "R002" "not-a-tools-list"             NotAToolsList              not_a_tools_list             ERROR   [Recommended, Strict] stage;
            "R003" "schema-violation"             SchemaViolation            schema_violation             ERROR   [Recommended, Strict] stage;
            "R004" "duplicate-tool-name"          DuplicateToolName          duplicate_tool_name          ERROR   [Recommended, Strict] check;
            "R005" "tool-name-format"             ToolNameFormat             tool_name_format             WARNING [Recommended, Strict] check;
            "R006" "invalid-meta-key"             InvalidMetaKey             invalid_meta_key             WARNING [Recommended, Strict] check;
            "R007" "duplicate-key"                DuplicateKey               duplicate_key                ERROR   [Recommended, Strict] stage;
            "R008" "overlay-unknown-tool"         OverlayUnknownTool         overlay_unknown_tool         ERROR   [Recommended, Strict] stage;
            "R009" "overlay-conflict"             OverlayConflict            overlay_conflict             WARNING [Recommended, Strict] stage;
            "R101" "dangling-operation-id"        DanglingOperationId        dangling_operation_id        ERROR   [Recommended, Strict] check;
            "R102" "identity-compensation"        IdentityCompensation       identity_compensation        ERROR   [Recommended, Strict] check;
            "R103" "unknown-strategy"             UnknownStrategy            unknown_strategy             WARNING [Recommended, Strict] check;
            "R104" "invalid-expression"           InvalidExpression          invalid_expression           ERROR   [Recommended, Strict] check;
            "R105" "expression-source-not-in-mcp" ExpressionSourceNotInMcp   expression_source_not_in_mcp ERROR   [Recommended, Strict] check;
            "R106" "unresolvable-pointer"         UnresolvablePointer        unresolvable_pointer         ERROR   [Recommended, Strict] check;
            "R107" "unverifiable-binding"         UnverifiableBinding        unverifiable_binding         WARNING [Recommended, Strict] check;
            "R108" "optional-source"              OptionalSource             optional_source              WARNING [Recommended, Strict] check;
            "R109" "missing-required-parameter"   MissingRequiredParameter   missing_required_parameter   ERROR   [Recommended, Strict] check;
            "R110" "unknown-parameter"            UnknownParameter           unknown_parameter            ERROR   [Recommended, Strict] check;
            "R111" "type-mismatch"                TypeMismatch               type_mismatch                ERROR   [Recommended, Strict] check;
            "R112" "recovery-on-read-only-tool"   RecoveryOnReadOnlyTool     recovery_on_read_only_tool   WARNING [Recommended, Strict] check;
            "R113" "read-only-compensator"        ReadOnlyCompensator        read_only_compensator        ERROR   [Recommended, Strict] check;
            "R114" "non-idempotent-compensator"   NonIdempotentCompensator   non_idempotent_compensator   INFO    [Recommended, Strict] check;
            "R116" "carrier-conflict"             CarrierConflict            carrier_conflict             ERROR   [Recommended, Strict] check;
            "R117" "reversibility-contradiction"  ReversibilityContradiction reversibility_contradiction  ERROR   [Recommended, Strict] check;
            "R118" "hint-contradiction"           HintContradiction          hint_contradiction           WARNING [Recommended, Strict] check;
            "R119" "unusable-input-schema"        UnusableInputSchema        unusable_input_schema        ERROR   [Recommended, Strict] check;
            "R120" "effectful-before-read"        EffectfulBeforeRead        effectful_before_read        ERROR   [Recommended, Strict] check;
            "R201" "undeclared-reversibility"     UndeclaredReversibility    undeclared_reversibility     OFF     [Strict]              check;
            "R202" "destructive-without-recovery" DestructiveWithoutRecovery destructive_without_recovery OFF     [Strict]              check;
            "R301" "missing-title"                MissingTitle               missing_title                OFF     [Strict]              check;
            "R302" "read-only-hint-omitted"       ReadOnlyHintOmitted        read_only_hint_omitted       OFF     [Strict]              check;
            "R303" "destructive-hint-omitted"     DestructiveHintOmitted     destructive_hint_omitted     WARNING [Recommended, Strict] check;
            "R304" "hint-disagreement"            HintDisagreement           hint_disagreement            WARNING [Recommended, Strict] check;
        }
    };
}
pub(crate) use rule_table;

/// Declares [`Rule`] from the rows of [`rule_table!`].
macro_rules! rule_enum {
    ($(
        $code:literal $name:literal $variant:ident $module:ident $default:ident
        [$($preset:ident),*] $kind:ident;
    )*) => {
        /// Every rule of the catalog, ordered by code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub(crate) enum Rule {
            $($variant,)*
        }

        impl Rule {
            /// All rules, ordered by code.
            pub(crate) const ALL: &'static [Rule] = &[$(Rule::$variant,)*];
        }
    };
}

rule_table!(rule_enum);

/// Declares, from the rows of [`rule_table!`], the rule modules, each rule's [`RuleDef`] and its
/// check.
macro_rules! rule_modules {
    ($(
        $code:literal $name:literal $variant:ident $module:ident $default:ident
        [$($preset:ident),*] $kind:ident;
    )*) => {
        $(pub(crate) mod $module;)*

        /// The static descriptions, by [`Rule::index`].
        const DEFS: &[$crate::codes::RuleDef] = &[$(
            $crate::codes::RuleDef {
                code: $code,
                name: $name,
                default: $crate::codes::$default,
                presets: &[$($crate::level::Preset::$preset),*],
                summary: $module::RULE.summary,
                raw_docs: $module::RULE.raw_docs,
            },
        )*];

        /// The semantic checks, by [`Rule::index`].
        const CHECK_FNS: &[Option<Check>] = &[$($crate::codes::rule_check!($kind $module),)*];

        impl Rule {
            /// The rule's static description.
            pub(crate) fn def(self) -> &'static $crate::codes::RuleDef {
                &DEFS[self as usize]
            }

            /// The rule's semantic check; `None` for a stage of the pipeline.
            pub(crate) fn check(self) -> Option<Check> {
                CHECK_FNS[self as usize]
            }
        }
    };
}
pub(crate) use rule_modules;

/// The check column of [`rule_table!`].
macro_rules! rule_check {
    (check $module:ident) => {
        Some($module::check as Check)
    };
    (stage $module:ident) => {
        None
    };
}
pub(crate) use rule_check;

impl Rule {
    /// Position in [`Rule::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
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
