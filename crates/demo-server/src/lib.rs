//! A checkout-workflow MCP server that declares recovery metadata in both carriers.
//!
//! Tools: `reserve_inventory`/`release_inventory`, `charge_payment`/`refund_payment`,
//! `create_shipment`/`cancel_shipment` (fails on demand with `simulateFailure: true`) and the
//! read-only `get_state`, over in-memory state. [`tools`] is the exact list put on the wire.
//!
//! The protocol is written by hand with `serde_json` rather than with an SDK: typed SDK tool
//! structs (rmcp's `ToolAnnotations`, for one) have no place for `annotations.recovery` and
//! drop it, so a server built on them cannot declare SEP-3172 recovery.
//!
//! Transports: newline-delimited JSON-RPC on stdio ([`stdio::serve`]) and Streamable HTTP on a
//! loopback address ([`http::HttpServer`]). [`stdio::Hostile`] modes misbehave on purpose, to
//! test clients.

pub mod checkout;
pub mod http;
pub mod server;
pub mod stdio;
mod tools;

pub use checkout::Checkout;
pub use server::{Config, Revisions, Server};
pub use tools::tools;
