//! Validation of MCP `tools/list` documents and their recovery metadata.
//!
//! One call turns the bytes of a document into [`Diagnostic`]s: parse (R001), shape (R002),
//! schema (R003), then the semantic rules of the catalog ([`rules`]).

mod diagnostic;
pub mod resolve;

pub use diagnostic::{Diagnostic, Report, Severity, Span};
