//! Why the proxy stops, and the random session ids it draws.

use mcp_recovery_journal::JournalError;

/// Why the proxy stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The server could not be started.
    #[error("cannot start the server {command}: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The journal failed; the proxy stops rather than forward unjournaled calls.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The downstream HTTP endpoint could not be opened.
    #[error("cannot listen on {address}: {reason}")]
    Listen {
        /// The address asked for.
        address: String,
        /// Why.
        reason: String,
    },
    /// The operating system's random source failed.
    #[error("cannot draw a random session id: {0}")]
    Random(String),
}

/// A fresh session id: 128 bits from the operating system's random source, in hex.
pub fn new_session_id() -> Result<String, ProxyError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| ProxyError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
