//! What the rule table is made of; the table itself is in `rules/mod.rs`.
//!
//! Codes are never reused. A rule's documentation is the doc comment of its `RULE` constant, in
//! the file of the rule under `rules/`.

pub(crate) use crate::rules::Rule;
use crate::{DefaultLevel, Preset, Severity};

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

/// Declares the rule table: the rule modules, [`Rule`], each rule's [`RuleDef`] and check.
///
/// One row per rule, ordered by code: code, name, variant, module under `rules/`, default level,
/// the presets it belongs to, and `check` (the module's `check` runs over the [`Context`]) or
/// `stage` (a stage of the pipeline reports it). The module list, the check list, the catalog
/// printed by `rules`/`explain`, `spec/rules.md` and the presets all follow from it.
///
/// [`Context`]: crate::rules::Context
macro_rules! rule_table {
    ($(
        $code:literal $name:literal $variant:ident $module:ident $default:ident
        [$($preset:ident),*] $kind:ident;
    )*) => {
        $(pub(crate) mod $module;)*

        /// Every rule of the catalog, ordered by code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub(crate) enum Rule {
            $($variant,)*
        }

        /// The static descriptions, by [`Rule::index`].
        const DEFS: &[$crate::codes::RuleDef] = &[$(
            $crate::codes::RuleDef {
                code: $code,
                name: $name,
                default: $crate::codes::$default,
                presets: &[$($crate::Preset::$preset),*],
                summary: $module::RULE.summary,
                raw_docs: $module::RULE.raw_docs,
            },
        )*];

        /// The semantic checks, by [`Rule::index`].
        const CHECK_FNS: &[Option<Check>] = &[$($crate::codes::rule_check!($kind $module),)*];

        impl Rule {
            /// All rules, ordered by code.
            pub(crate) const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

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
pub(crate) use rule_table;

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
