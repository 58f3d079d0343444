//! `--overlay FILE` for `lint`, `plan` and `convert`: reading the overlay, and applying it the
//! same way for every command.

use std::io::Write;
use std::path::Path;

use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_validator::{LintOptions, Linter, Severity};
use serde_json::Value;

use crate::Failure;
use crate::inputs::Input;

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
    /// Reads and parses the overlay at `path` (TOML for `*.toml`, JSON otherwise; `-` for stdin).
    pub fn read(path: &Path) -> Result<Self, Failure> {
        let input = Input::named(path);
        let shown = input.display();
        let bytes = input.read()?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Failure::Usage(format!("{shown}: the overlay is not UTF-8 text")))?;
        let format = OverlayFormat::from_file_name(&shown);
        let overlay = Overlay::parse(&text, format).map_err(|error| {
            let at = error.span.as_ref().map_or_else(String::new, |span| {
                let (line, column) =
                    mcp_recovery_validator::LineIndex::new(text.as_bytes()).position(span.start);
                format!(":{line}:{column}")
            });
            Failure::Usage(format!("{shown}{at}: {error}"))
        })?;
        Ok(Self {
            shown,
            text,
            overlay,
        })
    }

    /// Fails when the overlay names a server other than `server_name` (the live server's
    /// `serverInfo.name`).
    pub fn check_server(&self, server_name: Option<&str>) -> Result<(), Failure> {
        match (self.overlay.server(), server_name) {
            (Some(expected), Some(actual)) if expected != actual => Err(Failure::Usage(format!(
                "{}: the overlay is for server '{}', but the server names itself '{}'",
                self.shown,
                escape(expected),
                escape(actual)
            ))),
            _ => Ok(()),
        }
    }

    /// Applies the overlay to `document` for a command that reads the merged list (`plan`,
    /// `convert`): a tool the server does not list fails the command, a conflict is a warning on
    /// stderr. Both name the overlay file, line and column.
    pub fn apply(&self, document: &mut Value) -> Result<(), Failure> {
        let linter = Linter::new(LintOptions {
            select: vec!["R008".to_owned(), "R009".to_owned()],
            ..LintOptions::default()
        })?;
        let report = linter.lint_value_with_overlay(document, &self.overlay, &self.text);
        let mut stderr = std::io::stderr().lock();
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
                escape(&d.message)
            );
            if d.severity == Severity::Error {
                errors.push(line);
            } else {
                writeln!(stderr, "warning: {line}")?;
            }
        }
        if !errors.is_empty() {
            return Err(Failure::Usage(errors.join("; ")));
        }
        self.overlay.apply(document);
        Ok(())
    }
}

/// Text from input (names, messages) as one inert line.
pub fn escape(text: &str) -> String {
    mcp_recovery_validator::escape_controls(text).into_owned()
}

/// Applies the overlay named by `--overlay`, when there is one.
pub fn apply_optional(path: Option<&Path>, document: &mut Value) -> Result<(), Failure> {
    match path {
        Some(path) => LoadedOverlay::read(path)?.apply(document),
        None => Ok(()),
    }
}
