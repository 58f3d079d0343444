//! Drafting an overlay from a tools/list: pairs of tools that undo each other, found from a verb
//! lexicon, with bindings from the forward tool's result or arguments (by name, by what a field
//! names, or per element of an array the result holds); moves and renames that undo themselves;
//! before-images for writes without an inverse; tools whose verb cannot be undone declared
//! irreversible. Recorded calls of a proxy journal confirm, contradict or teach bindings.
//! Anything uncertain is left out, and so is an inverse that would not undo the call exactly:
//! the forward tool says it may replace what is there, or leave what is already there as it is.

mod before;
mod bind;
mod candidate;
mod copied;
mod draft;
mod entry;
mod fields;
mod identity;
mod lexicon;
mod offered;
mod prior;
mod reader;
mod recorded;
mod returned;
mod types;
mod unpaired;

pub use draft::suggest_with;
pub use lexicon::words;
pub use recorded::Recorded;
pub use types::{Binding, Confidence, Proposal, Reader, Skipped, Suggestion, Suggestions};

#[cfg(test)]
mod journal_tests;
#[cfg(test)]
mod naming_tests;
#[cfg(test)]
mod prior_tests;
#[cfg(test)]
mod returned_tests;
#[cfg(test)]
mod tests;
