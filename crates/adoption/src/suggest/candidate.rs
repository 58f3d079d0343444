//! One tool as the drafting sees it: its name's words, whether it only reads, whether it
//! declares recovery already.

use mcp_recovery_model::{Hint, Tool};

use super::identity::singular;
use super::lexicon::{READ_VERBS, verb_of};

/// One tool as the heuristics see it.
pub(crate) struct Candidate<'a> {
    pub(crate) tool: &'a Tool,
    pub(crate) words: Vec<String>,
}

impl Candidate<'_> {
    pub(crate) fn read_only(&self) -> bool {
        if let Some(hint) = self.tool.hint(Hint::ReadOnly) {
            return hint;
        }
        matches!(verb_of(&self.words), Some((_, verb)) if READ_VERBS.contains(&verb))
    }

    /// What the tool acts on: its words but the verb at `verb_at`, singular, joined by `_`
    /// (`create_sheets` acts on a `sheet`).
    pub(crate) fn noun(&self, verb_at: usize) -> String {
        self.words
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != verb_at)
            .map(|(_, w)| singular(w))
            .collect::<Vec<_>>()
            .join("_")
    }

    /// Already declares recovery in either carrier: nothing to suggest.
    pub(crate) fn declared(&self) -> bool {
        self.tool.sep_recovery().is_some() || self.tool.compensate().is_some()
    }
}
