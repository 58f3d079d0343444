//! An overlay file read and checked, and applied the same way for every command that reads the
//! merged list: a tool the server does not list refuses the overlay, a conflict is a warning.

use std::io::Write;

use mcp_recovery_base::text::escape_controls;

use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_validator::{LintOptions, Linter, Severity, UnknownRule};
use serde_json::Value;

/// Why an overlay cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OverlayError {
    /// The file is not an overlay, names another server, or does not fit the list; the message
    /// names the file, and the line and column where there is one.
    #[error("{0}")]
    Refused(String),
    /// The rules the overlay is checked with could not be selected.
    #[error(transparent)]
    Rules(#[from] UnknownRule),
    /// A warning could not be written.
    #[error(transparent)]
    Write(#[from] std::io::Error),
}

/// An overlay file, read and checked.
#[derive(Debug, Clone)]
pub struct LoadedOverlay {
    /// The path as given.
    pub shown: String,
    /// Its text, for positions.
    pub text: String,
    /// The parsed overlay.
    pub overlay: Overlay,
}

impl LoadedOverlay {
    /// Parses the bytes of the overlay file shown as `shown` (TOML for `*.toml`, JSON otherwise).
    pub fn parse(shown: String, bytes: Vec<u8>) -> Result<Self, OverlayError> {
        let text = String::from_utf8(bytes).map_err(|_| {
            OverlayError::Refused(format!("{shown}: the overlay is not UTF-8 text"))
        })?;
        let format = OverlayFormat::from_file_name(&shown);
        let overlay = Overlay::parse(&text, format).map_err(|error| {
            let span = match (&error.span, format) {
                (None, OverlayFormat::Json) if !error.pointer.is_empty() => {
                    mcp_recovery_validator::json_place(text.as_bytes(), &error.pointer)
                }
                (span, _) => span.clone(),
            };
            let at = span.as_ref().map_or_else(String::new, |span| {
                let (line, column) =
                    mcp_recovery_validator::LineIndex::new(text.as_bytes()).position(span.start);
                format!(":{line}:{column}")
            });
            OverlayError::Refused(format!("{shown}{at}: {error}"))
        })?;
        Ok(Self {
            shown,
            text,
            overlay,
        })
    }

    /// Fails when the overlay names a server other than `server_name` (the live server's
    /// `serverInfo.name`).
    pub fn check_server(&self, server_name: Option<&str>) -> Result<(), OverlayError> {
        match (self.overlay.server(), server_name) {
            (Some(expected), Some(actual)) if expected != actual => {
                Err(OverlayError::Refused(format!(
                    "{}: the overlay is for server '{}', but the server names itself '{}'",
                    self.shown,
                    escape_controls(expected),
                    escape_controls(actual)
                )))
            }
            _ => Ok(()),
        }
    }

    /// Fails when the overlay names a server other than the one a saved `tools/list` names
    /// (a 2026-07-28 result's `_meta`, of the response or of the result alone).
    pub fn check_document(&self, document: &Value) -> Result<(), OverlayError> {
        let result = document.get("result").unwrap_or(document);
        self.check_server(mcp_recovery_model::server_name(result))
    }

    /// Applies the overlay to `document` for a command that reads the merged list (`plan`,
    /// `convert`): a list that names another server, or a tool the server does not list,
    /// refuses the overlay; a conflict is a warning line on `warnings`. Each names the overlay
    /// file (and line and column where there is one).
    pub fn apply_to(
        &self,
        document: &mut Value,
        warnings: &mut dyn Write,
    ) -> Result<(), OverlayError> {
        self.check_document(document)?;
        let linter = Linter::new(LintOptions {
            select: vec!["R008".to_owned(), "R009".to_owned()],
            ..LintOptions::default()
        })?;
        let report = linter.lint_value_with_overlay(document, &self.overlay, &self.text);
        let mut errors = Vec::new();
        for d in &report.overlay.diagnostics {
            let at = d
                .span
                .map_or_else(String::new, |s| format!(":{}:{}", s.line, s.column));
            let line = format!(
                "{}{at}: {} [{}] {}",
                self.shown,
                d.severity,
                d.code,
                escape_controls(&d.message)
            );
            if d.severity == Severity::Error {
                errors.push(line);
            } else {
                writeln!(warnings, "warning: {line}")?;
            }
        }
        if !errors.is_empty() {
            return Err(OverlayError::Refused(errors.join("; ")));
        }
        self.overlay.apply(document);
        Ok(())
    }
}
