//! Hint signatures: each of the four hints read as true, false or omitted.

use std::fmt;

use mcp_recovery_model::Hint;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// How one hint appears on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HintState {
    /// The field is absent, `null`, or not a boolean.
    Omitted,
    /// The field is the JSON literal `false`.
    False,
    /// The field is the JSON literal `true`.
    True,
}

impl HintState {
    /// All three states, in signature-digit order.
    pub const ALL: [HintState; 3] = [Self::Omitted, Self::False, Self::True];

    /// One character: `T`, `F` or `-`.
    pub fn symbol(self) -> char {
        match self {
            Self::Omitted => '-',
            Self::False => 'F',
            Self::True => 'T',
        }
    }

    /// True when the field is serialized as a boolean.
    pub fn is_set(self) -> bool {
        self != Self::Omitted
    }

    fn digit(self) -> u8 {
        match self {
            Self::Omitted => 0,
            Self::False => 1,
            Self::True => 2,
        }
    }
}

/// The states of the four hints of one tool, in the order of [`Hint::ALL`]
/// (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`).
///
/// Encoded as a base-3 number below [`Signature::COUNT`], so a table of 81 counters holds a corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Signature(u8);

impl Signature {
    /// Number of distinct signatures: 3⁴.
    pub const COUNT: usize = 81;

    /// The signature of a tool that serializes no hint.
    pub const NONE: Signature = Signature(0);

    /// Builds a signature from the four states.
    pub fn from_states(states: [HintState; 4]) -> Self {
        Self(states.iter().rev().fold(0, |acc, s| acc * 3 + s.digit()))
    }

    /// The signature with index `index` (`< 81`), `None` beyond.
    pub fn from_index(index: usize) -> Option<Self> {
        u8::try_from(index)
            .ok()
            .filter(|&i| usize::from(i) < Self::COUNT)
            .map(Self)
    }

    /// Its index in `0..81`.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The four states, in the order of [`Hint::ALL`].
    pub fn states(self) -> [HintState; 4] {
        let mut rest = self.0;
        let mut out = [HintState::Omitted; 4];
        for slot in &mut out {
            *slot = HintState::ALL[usize::from(rest % 3)];
            rest /= 3;
        }
        out
    }

    /// The state of one hint.
    pub fn state(self, hint: Hint) -> HintState {
        let position = Hint::ALL.iter().position(|&h| h == hint).unwrap_or(0);
        self.states()[position]
    }

    /// Four characters, one per hint in the order of [`Hint::ALL`]: `T`, `F` or `-`
    /// (`TFTT` = read-only, not destructive, idempotent, open world).
    pub fn label(self) -> String {
        self.states().iter().map(|s| s.symbol()).collect()
    }

    /// True when at least one hint is serialized.
    pub fn any_set(self) -> bool {
        self != Self::NONE
    }

    /// True when all four hints are serialized.
    pub fn all_set(self) -> bool {
        self.states().iter().all(|s| s.is_set())
    }

    /// Reads a tool object: each hint from `annotations.<key>`.
    ///
    /// Returns the signature and how many hints were present but not booleans (those count as
    /// omitted in the signature).
    pub fn of_tool(tool: &Map<String, Value>) -> (Self, u32) {
        let annotations = tool.get("annotations").and_then(Value::as_object);
        let mut non_boolean = 0;
        let mut states = [HintState::Omitted; 4];
        for (slot, hint) in states.iter_mut().zip(Hint::ALL) {
            *slot = match annotations.and_then(|a| a.get(hint.key())) {
                Some(Value::Bool(true)) => HintState::True,
                Some(Value::Bool(false)) => HintState::False,
                None | Some(Value::Null) => HintState::Omitted,
                Some(_) => {
                    non_boolean += 1;
                    HintState::Omitted
                }
            };
        }
        (Self::from_states(states), non_boolean)
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl Serialize for Signature {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn all_81_signatures_round_trip_and_are_distinct() {
        let mut labels = std::collections::BTreeSet::new();
        for a in HintState::ALL {
            for b in HintState::ALL {
                for c in HintState::ALL {
                    for d in HintState::ALL {
                        let sig = Signature::from_states([a, b, c, d]);
                        assert!(sig.index() < Signature::COUNT);
                        assert_eq!(sig.states(), [a, b, c, d]);
                        assert_eq!(Signature::from_index(sig.index()), Some(sig));
                        labels.insert(sig.label());
                    }
                }
            }
        }
        assert_eq!(labels.len(), 81);
        assert_eq!(Signature::from_index(81), None);
    }

    #[test]
    fn explicit_false_differs_from_omitted() {
        let with_false = json!({"annotations": {"readOnlyHint": false}});
        let omitted = json!({"annotations": {}});
        let (a, _) = Signature::of_tool(with_false.as_object().unwrap());
        let (b, _) = Signature::of_tool(omitted.as_object().unwrap());
        assert_eq!(a.label(), "F---");
        assert_eq!(b, Signature::NONE);
        assert!(a.any_set());
        assert!(!b.any_set());
    }

    #[test]
    fn non_boolean_hint_counts_as_omitted_and_is_reported() {
        let tool = json!({"annotations": {"readOnlyHint": "true", "openWorldHint": null, "idempotentHint": true}});
        let (sig, non_boolean) = Signature::of_tool(tool.as_object().unwrap());
        assert_eq!(sig.label(), "--T-");
        assert_eq!(non_boolean, 1);
    }

    #[test]
    fn label_follows_hint_order() {
        let tool = json!({"annotations": {
            "openWorldHint": true, "idempotentHint": true, "destructiveHint": false, "readOnlyHint": true
        }});
        let (sig, _) = Signature::of_tool(tool.as_object().unwrap());
        assert_eq!(sig.label(), "TFTT");
        assert!(sig.all_set());
        assert_eq!(sig.state(Hint::Destructive), HintState::False);
    }
}
