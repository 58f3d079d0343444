//! The three-valued answer of every question the crate answers.

/// A three-valued answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knowledge {
    /// Certainly yes.
    Yes,
    /// Certainly no.
    No,
    /// Cannot be judged statically.
    Unknown,
}
