//! Serde helper shared by the tool and recovery types.

use serde::Deserialize;

/// An optional field that, when present, holds a `T` (never `null`: MCP omits absent fields).
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}
