//! The presence algebra: what the walk knows about the rest of a pointer from one schema node.
//!
//! An [`Out`] carries three things: whether a value can exist at the pointer (three-valued),
//! an over-approximation of its types, and two bit masks over the pointer's steps — steps
//! certainly present when their parent is, and steps known to be optional. `and` combines
//! constraints that all apply (a schema's keywords, `$ref`, `allOf`); `or` combines
//! alternatives (`anyOf`/`oneOf`, `enum` values). Both only ever move an unsure answer towards
//! [`Knowledge::Unknown`], never to a false [`Knowledge::No`].

use crate::knowledge::Knowledge;
use crate::types::TypeSet;

/// Pointer positions tracked for presence; beyond this, presence is unknown.
const MASK_BITS: usize = 128;

/// The answer for the rest of the pointer from one schema node.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Out {
    pub(crate) exists: Knowledge,
    /// Over-approximation of the final value's types; `None` = any.
    pub(crate) types: Option<TypeSet>,
    /// For `No`: first step that cannot exist; `None` = this schema admits no value at all.
    pub(crate) fails_at: Option<usize>,
    /// Bit `k`: step `k` is certainly present when its parent is.
    pub(crate) present: u128,
    /// Bit `k`: step `k` may be absent although its parent is present (known, not guessed).
    pub(crate) optional: u128,
}

pub(crate) fn bit(k: usize) -> u128 {
    if k < MASK_BITS { 1 << k } else { 0 }
}

/// Bits `k` and above.
pub(crate) fn bits_from(k: usize) -> u128 {
    if k < MASK_BITS { u128::MAX << k } else { 0 }
}

pub(crate) fn first_bit(mask: u128, len: usize) -> Option<usize> {
    let index = mask.trailing_zeros() as usize;
    (index < len.min(MASK_BITS)).then_some(index)
}

impl Out {
    /// Cannot be judged.
    pub(crate) fn unknown() -> Self {
        Self {
            exists: Knowledge::Unknown,
            types: None,
            fails_at: None,
            present: 0,
            optional: 0,
        }
    }

    /// The schema admits no value (the `false` schema).
    pub(crate) fn unsatisfiable() -> Self {
        Self {
            exists: Knowledge::No,
            types: Some(TypeSet::NONE),
            fails_at: None,
            present: u128::MAX,
            optional: 0,
        }
    }

    /// Step `k` can never be present; later steps are vacuously present.
    pub(crate) fn absent(k: usize) -> Self {
        Self {
            exists: Knowledge::No,
            types: Some(TypeSet::NONE),
            fails_at: Some(k),
            present: bits_from(k + 1),
            optional: bit(k),
        }
    }

    /// Anything goes from step `i` to the end (the `true` schema).
    pub(crate) fn anything(i: usize, len: usize) -> Self {
        Self {
            exists: Knowledge::Yes,
            types: None,
            fails_at: None,
            present: 0,
            optional: bits_from(i) & !bits_from(len),
        }
    }

    /// The value at the pointer exists with these types.
    pub(crate) fn value(types: Option<TypeSet>) -> Self {
        Self {
            exists: Knowledge::Yes,
            types,
            fails_at: None,
            present: 0,
            optional: 0,
        }
    }

    /// Both constraints apply.
    pub(crate) fn and(self, other: Self) -> Self {
        use Knowledge::{No, Unknown, Yes};
        let exists = match (self.exists, other.exists) {
            (No, _) | (_, No) => No,
            (Unknown, _) | (_, Unknown) => Unknown,
            (Yes, Yes) => Yes,
        };
        let fails_at = match (self.exists, other.exists) {
            (No, No) => self.fails_at.zip(other.fails_at).map(|(a, b)| a.min(b)),
            (No, _) => self.fails_at,
            (_, No) => other.fails_at,
            _ => None,
        };
        let types = match (self.types, other.types) {
            (Some(a), Some(b)) => Some(a & b),
            (a, b) => a.or(b),
        };
        let present = self.present | other.present;
        Self {
            exists,
            types,
            fails_at,
            present,
            optional: self.optional & other.optional & !present,
        }
    }

    /// Either constraint applies.
    pub(crate) fn or(self, other: Self) -> Self {
        use Knowledge::{No, Unknown, Yes};
        let exists = match (self.exists, other.exists) {
            (Yes, _) | (_, Yes) => Yes,
            (Unknown, _) | (_, Unknown) => Unknown,
            (No, No) => No,
        };
        let fails_at = match (self.fails_at, other.fails_at) {
            _ if exists != No => None,
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let types = match (self.types, other.types) {
            (Some(a), Some(b)) => Some(a | b),
            _ => None,
        };
        let present = self.present & other.present;
        Self {
            exists,
            types,
            fails_at,
            present,
            optional: (self.optional | other.optional) & !present,
        }
    }

    /// Existence at best unknown (an unmodeled keyword may forbid the path).
    pub(crate) fn unsure(mut self) -> Self {
        if self.exists == Knowledge::Yes {
            self.exists = Knowledge::Unknown;
        }
        self
    }

    /// Marks step `k` present (required) or known-optional, unless the answer is already `No`.
    pub(crate) fn with_presence(mut self, k: usize, present: bool) -> Self {
        if self.exists != Knowledge::No {
            if present {
                self.present |= bit(k);
                self.optional &= !bit(k);
            } else {
                self.optional |= bit(k);
                self.present &= !bit(k);
            }
        }
        self
    }

    /// A child answer seen from its parent at step `i`: a child that admits nothing means the
    /// step itself cannot be present.
    pub(crate) fn through(self, i: usize) -> Self {
        if self.exists == Knowledge::No && self.fails_at.is_none() {
            Self::absent(i)
        } else {
            self
        }
    }
}
