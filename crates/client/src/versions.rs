//! The protocol revisions this client speaks.

/// The newest revision, spoken without `initialize`.
pub const LATEST_VERSION: &str = "2026-07-28";

/// Revisions that use the `initialize` handshake, newest first.
pub const HANDSHAKE_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Every revision this client speaks, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &[
    LATEST_VERSION,
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];
