//! A small blocking MCP client that fetches a live server's complete `tools/list`.
//!
//! It exists for linting: the document handed to a validator must be exactly what the server
//! sent. So results are never read through typed structs — unknown fields of a tool, unknown
//! keys in `annotations` (such as SEP-3172's `recovery`) and `_meta` all survive as they were.
//!
//! Protocol revisions: the client asks `server/discover` under 2026-07-28 (the version and the
//! client's capabilities travel in each request's `params._meta`, and over HTTP in the
//! `MCP-Protocol-Version` header too). A server that does not know that method (a JSON-RPC error,
//! or an HTTP 400/404/405) gets the `initialize` handshake of 2025-11-25 and answers with the
//! version it speaks: 2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05. A server that names only
//! versions this client does not speak fails with [`ClientError::UnsupportedProtocolVersion`];
//! [`Connection::negotiation`] and [`Connection::protocol_version`] say what was settled.
//!
//! Two transports:
//!
//! * **stdio** ([`Connection::stdio`]): the command is started directly (no shell), with
//!   [`Options::env`] added to its environment and in [`Options::cwd`], and speaks
//!   newline-delimited JSON-RPC; its stderr is kept (the last [`Options::stderr_lines`] lines)
//!   and shown when it fails. It runs in a process group of its own, which never outlives the
//!   [`Connection`]: stdin is closed on close or drop, then the whole group is killed after
//!   [`Options::shutdown_grace`]. A child that exits while something it started still holds
//!   stdout is reported with its exit status at once.
//! * **Streamable HTTP** ([`Connection::http`]): JSON and `text/event-stream` answers, the
//!   `Mcp-Session-Id` session (ended with DELETE on close), `MCP-Protocol-Version`, extra
//!   [`Header`]s whose values may come from the environment (`${VAR}`), http and https.
//!
//! Limits: every request waits at most [`Options::timeout`] and the whole connection, from
//! start to the last page, at most [`Options::total_timeout`]; a message larger than
//! [`Options::max_message_bytes`] is an error, and so is a server that sends more than
//! [`Options::max_total_bytes`] in all; pagination stops with an error on a repeated cursor or
//! after [`Options::max_pages`] pages. Server requests that arrive while the client waits are
//! answered (`ping`) or declined; notifications are ignored. Every queue between the threads of
//! the stdio transport is bounded.
//!
//! Secrets: header values and the values of [`Options::env`] are replaced by `***` in every
//! error and in the fetched tool list (a server may echo them), see [`Secrets`].
//!
//! ```no_run
//! use mcp_recovery_client::{Options, Target, fetch_tools};
//!
//! let target = Target::Stdio { program: "node".into(), args: vec!["build/index.js".into()] };
//! let tools = fetch_tools(&target, &Options::default())?;
//! println!("{}", tools["tools"].as_array().map_or(0, Vec::len));
//! # Ok::<(), mcp_recovery_client::ClientError>(())
//! ```

mod connection;
mod error;
pub mod group;
mod header;
mod http;
mod jsonrpc;
mod lines;
mod options;
mod protocol;
mod secrets;
mod sse;
mod stdio;
mod target;
#[cfg(test)]
mod tests;
mod text;
mod versions;

pub use connection::{Connection, DISCOVER_PATIENCE, PROTOCOL_VERSION, fetch_tools};
pub use error::ClientError;
pub use header::Header;
pub use http::{header_value, media_type};
pub use options::Options;
pub use protocol::Negotiation;
pub use secrets::{MIN_SECRET_CHARS, REDACTED, Secrets};
pub use sse::{Event as StreamEvent, EventReader};
pub use target::{Target, shown_url};
pub use text::{EXCERPT_CHARS, StderrTail};
pub use versions::{HANDSHAKE_VERSIONS, LATEST_VERSION, SUPPORTED_VERSIONS};
