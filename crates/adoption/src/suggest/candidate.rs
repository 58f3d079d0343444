//! One tool as the drafting sees it: its name's words, whether it only reads, whether it
//! declares recovery already.

use std::collections::HashMap;
use std::sync::OnceLock;

use mcp_recovery_model::{Hint, Tool};

use super::identity::singular;
use super::lexicon::{READ_VERBS, partners, verb_of};

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

/// Pairs of a read and a write (their indices) by the noun they act on.
type ByNoun = HashMap<Vec<String>, Vec<(usize, usize)>>;

/// The candidates indexed by the words of their names, so that drafting for a list of thousands
/// of tools takes time in proportion to it, not to its square: every tool's partners, reads and
/// writes are looked up by name.
pub(crate) struct ByWords<'a> {
    candidates: &'a [Candidate<'a>],
    index: HashMap<&'a [String], Vec<usize>>,
    read_writes: OnceLock<ByNoun>,
}

impl<'a> ByWords<'a> {
    pub(crate) fn index(candidates: &'a [Candidate<'a>]) -> Self {
        let mut index: HashMap<&[String], Vec<usize>> = HashMap::new();
        for (at, candidate) in candidates.iter().enumerate() {
            index.entry(&candidate.words).or_default().push(at);
        }
        Self {
            candidates,
            index,
            read_writes: OnceLock::new(),
        }
    }

    /// The candidates, in list order, whose names differ from `forward`'s (the candidate at
    /// `index`) in one word that is replaced by one of its [`partners`]: the only ones a
    /// relation can pair it with.
    pub(crate) fn alike(
        &self,
        index: usize,
        forward: &Candidate<'_>,
    ) -> impl Iterator<Item = &'a Candidate<'a>> {
        let mut found = Vec::new();
        for (at, word) in forward.words.iter().enumerate() {
            found.extend(self.replaced(forward, at, partners(word)));
        }
        found.retain(|&other| other != index);
        self.in_order(found)
    }

    /// The candidates, in list order, whose names are `forward`'s with the word at `at`
    /// replaced by one of `others`.
    pub(crate) fn with_word(
        &self,
        forward: &Candidate<'_>,
        at: usize,
        others: impl IntoIterator<Item = String>,
    ) -> impl Iterator<Item = &'a Candidate<'a>> {
        self.in_order(self.replaced(forward, at, others).collect())
    }

    /// Every read annotated read-only whose name has the verb `read` and the rest of its words
    /// (singular) are `noun`, with the one tool that is not read-only named alike with `write`
    /// in its place (`read_file`, `write_file` for the noun `file`). Indexed when first asked for.
    pub(crate) fn read_writes(
        &self,
        noun: &[String],
    ) -> impl Iterator<Item = (&'a Candidate<'a>, &'a Candidate<'a>)> {
        let candidates = self.candidates;
        let by_noun = self.read_writes.get_or_init(|| {
            let mut by_noun = ByNoun::new();
            for (at, read) in candidates.iter().enumerate() {
                let Some(verb) = read.words.iter().position(|w| w == "read") else {
                    continue;
                };
                if read.tool.hint(Hint::ReadOnly) != Some(true) {
                    continue;
                }
                let writes: Vec<usize> = self
                    .replaced(read, verb, ["write".to_owned()])
                    .filter(|&w| !candidates[w].read_only())
                    .collect();
                if let [write] = writes[..] {
                    let noun = (read.words.iter().enumerate())
                        .filter(|(i, _)| *i != verb)
                        .map(|(_, w)| singular(w))
                        .collect();
                    by_noun.entry(noun).or_default().push((at, write));
                }
            }
            by_noun
        });
        let pairs = by_noun.get(noun).map_or(&[][..], Vec::as_slice);
        pairs
            .iter()
            .map(move |&(read, write)| (&candidates[read], &candidates[write]))
    }

    fn replaced(
        &self,
        forward: &Candidate<'_>,
        at: usize,
        others: impl IntoIterator<Item = String>,
    ) -> impl Iterator<Item = usize> {
        let mut words = forward.words.clone();
        others.into_iter().flat_map(move |other| {
            words[at] = other;
            self.index
                .get(words.as_slice())
                .into_iter()
                .flatten()
                .copied()
        })
    }

    fn in_order(&self, mut found: Vec<usize>) -> impl Iterator<Item = &'a Candidate<'a>> {
        let candidates = self.candidates;
        found.sort_unstable();
        found.dedup();
        found.into_iter().map(move |at| &candidates[at])
    }
}
