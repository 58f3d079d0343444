//! Live servers (`--stdio -- CMD`, `--url URL`): fetch the merged tools/list as raw JSON.

use serde_json::Value;

use crate::cli::ServerArgs;

/// A server that could not be reached or did not answer properly.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ServerError(pub String);

/// How the server is named in output: the command line or the URL.
pub fn source_name(server: &ServerArgs) -> Option<String> {
    if server.stdio {
        Some(server.command.join(" "))
    } else {
        server.url.clone()
    }
}

/// Fetches the complete tools/list result of the server.
pub fn fetch(server: &ServerArgs) -> Result<Value, ServerError> {
    let _ = server;
    Err(ServerError(
        "live servers are not supported by this build yet; lint a saved tools/list file instead"
            .to_owned(),
    ))
}
