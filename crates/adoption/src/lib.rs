//! Adoption: what a server that declares no recovery can be given and what it reaches. The
//! guarantee profiles a tool list reaches from its declarations alone, and the gaps; overlays
//! (recovery declared beside a server rather than by it) read, checked and applied; and the
//! drafting of an overlay from the tool names and schemas, checked against recorded calls.

mod loaded_overlay;
pub mod profile;
pub mod suggest;

pub use loaded_overlay::{LoadedOverlay, OverlayError};
