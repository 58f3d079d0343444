//! The ground floor of the workspace: what every crate needs and none of it is about recovery.
//!
//! - [`text`]: the one escape every printer of input uses, and excerpts of input for messages.
//! - [`read`]: reading a named file under the size cap and file policy every command applies.
//! - [`walk`]: the directory walk behind every command that takes a directory.
//! - [`ordered`]: work over many inputs on several threads, handed on in the inputs' order.
//!
//! Nothing here depends on another crate of the workspace, so every crate may use it.

pub mod ordered;
pub mod read;
pub mod text;
pub mod walk;
