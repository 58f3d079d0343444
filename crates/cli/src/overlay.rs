//! `--overlay FILE` for every command that takes one (`lint`, `plan`, `convert`, `profile`,
//! `proxy`, `rollback`): reading the overlay, and applying it the same way for each.

use std::path::Path;

pub use mcp_recovery_adoption::LoadedOverlay;
use mcp_recovery_adoption::OverlayError;
use serde_json::Value;

use crate::Failure;
use crate::inputs::Input;

impl From<OverlayError> for Failure {
    fn from(error: OverlayError) -> Self {
        match error {
            OverlayError::Refused(message) => Self::Usage(message),
            OverlayError::Rules(unknown) => Self::UnknownRule(unknown),
            OverlayError::Write(error) => Self::Write(error),
        }
    }
}

/// An overlay named on the command line: read through the input policy (`-` for stdin), and
/// applied with its warnings on stderr.
pub trait OverlayArg: Sized {
    /// Reads and parses the overlay at `path` (TOML for `*.toml`, JSON otherwise).
    fn read(path: &Path) -> Result<Self, Failure>;

    /// Applies the overlay to `document`; see [`LoadedOverlay::apply_to`].
    fn apply(&self, document: &mut Value) -> Result<(), Failure>;
}

impl OverlayArg for LoadedOverlay {
    fn read(path: &Path) -> Result<Self, Failure> {
        let input = Input::named(path);
        let shown = input.display();
        let bytes = input.read()?;
        Ok(Self::parse(shown, bytes)?)
    }

    fn apply(&self, document: &mut Value) -> Result<(), Failure> {
        Ok(self.apply_to(document, &mut std::io::stderr().lock())?)
    }
}

/// Applies the overlay named by `--overlay`, when there is one.
pub fn apply_optional(path: Option<&Path>, document: &mut Value) -> Result<(), Failure> {
    match path {
        Some(path) => LoadedOverlay::read(path)?.apply(document),
        None => Ok(()),
    }
}
