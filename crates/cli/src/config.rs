//! `mcp-recovery.toml`: found upward from the working directory, read with spans into
//! [`ConfigFile`] (the validator's type, from which the file's JSON Schema is derived), then
//! checked into [`Config`] so that every mistake points at its place in the file.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use mcp_recovery_validator::{ConfigFile, Preset, Severity, find_rule};
use toml::Spanned;

/// File name looked for in the working directory and its ancestors.
pub const CONFIG_FILE: &str = "mcp-recovery.toml";

/// Largest config file read: settings fit in a few hundred bytes.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Checked settings (empty when there is no config file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// The rule set named by `extends` (`None`: `recommended`).
    pub preset: Option<Preset>,
    /// Rules to run (empty: the defaults).
    pub select: Vec<String>,
    /// Rules never to run.
    pub ignore: Vec<String>,
    /// Whether warnings fail the run.
    pub deny_warnings: bool,
    /// Severity overrides by code or name.
    pub severity: BTreeMap<String, Severity>,
    /// Settings for some files or tools only, in file order (`[[overrides]]`).
    pub overrides: Vec<crate::overrides::Override>,
}

/// A config file that was read but cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file is read but wrong; `span` points into `text`.
    #[error("{path}{}: {message}", location(text, span.as_ref()))]
    Invalid {
        /// The file as shown to the user.
        path: String,
        /// Its text, for the excerpt.
        text: String,
        /// What is wrong.
        message: String,
        /// Where, in bytes.
        span: Option<Range<usize>>,
    },
}

/// `:line:column` (1-based, columns in code points) of a span's start, or nothing.
fn location(text: &str, span: Option<&Range<usize>>) -> String {
    let Some(span) = span else {
        return String::new();
    };
    let (line, column) =
        mcp_recovery_validator::LineIndex::new(text.as_bytes()).position(span.start);
    format!(":{line}:{column}")
}

/// Finds `mcp-recovery.toml` in `start` or its nearest ancestor that has one (of any kind: a
/// FIFO or a dangling link there is found, and then refused when read, never skipped).
pub fn discover(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(CONFIG_FILE))
        .find(|candidate| std::fs::symlink_metadata(candidate).is_ok())
}

/// How to show `path` to the user: relative to `cwd` when it lies in `cwd` or above it.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    if let Ok(relative) = path.strip_prefix(cwd) {
        return relative.display().to_string();
    }
    let Some(dir) = path.parent() else {
        return path.display().to_string();
    };
    let mut ups = PathBuf::new();
    for ancestor in cwd.ancestors() {
        if ancestor == dir {
            if let Some(name) = path.file_name() {
                return ups.join(name).display().to_string();
            }
            break;
        }
        ups.push("..");
    }
    path.display().to_string()
}

/// Parses and checks config text.
pub fn parse(text: &str, shown: &str) -> Result<Config, ConfigError> {
    let invalid = |message: String, span: Option<Range<usize>>| ConfigError::Invalid {
        path: shown.to_owned(),
        text: text.to_owned(),
        message,
        span,
    };
    let raw: ConfigFile = toml::from_str(text)
        .map_err(|error| invalid(error.message().trim_end().to_owned(), error.span()))?;

    let rule = |entry: &Spanned<String>| -> Result<String, ConfigError> {
        match find_rule(entry.get_ref()) {
            Some(_) => Ok(entry.get_ref().clone()),
            None => Err(invalid(
                format!(
                    "unknown rule `{}` (run `mcp-recovery rules` for the catalog)",
                    entry.get_ref()
                ),
                Some(entry.span()),
            )),
        }
    };

    let select = raw.select.iter().map(rule).collect::<Result<_, _>>()?;
    let ignore = raw.ignore.iter().map(rule).collect::<Result<_, _>>()?;

    let mut deny_warnings = false;
    for entry in &raw.deny {
        match entry.get_ref().as_str() {
            "warnings" => deny_warnings = true,
            other => {
                return Err(invalid(
                    format!("unknown deny level `{other}` (expected \"warnings\")"),
                    Some(entry.span()),
                ));
            }
        }
    }

    let levels = |table: &BTreeMap<Spanned<String>, Spanned<String>>| {
        let mut severity = BTreeMap::new();
        for (key, value) in table {
            let code = rule(key)?;
            let level = match value.get_ref().as_str() {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                "info" => Severity::Info,
                other => {
                    return Err(invalid(
                        format!(
                            "unknown severity `{other}` (expected \"error\", \"warning\" or \"info\")"
                        ),
                        Some(value.span()),
                    ));
                }
            };
            severity.insert(code, level);
        }
        Ok(severity)
    };
    let severity = levels(&raw.severity)?;

    let mut overrides = Vec::with_capacity(raw.overrides.len());
    for entry in &raw.overrides {
        let table = entry.get_ref();
        if table.files.is_empty() && table.tools.is_empty() {
            return Err(invalid(
                "an override needs `files` or `tools` (glob patterns)".to_owned(),
                Some(entry.span()),
            ));
        }
        if let Some(select) = &table.select
            && select.is_empty()
        {
            return Err(invalid(
                "`select = []` would run no rule; list rules, or use `ignore`".to_owned(),
                Some(entry.span()),
            ));
        }
        let patterns = |list: &[Spanned<String>]| {
            crate::overrides::Patterns::new(list.iter().map(|p| (p.get_ref().as_str(), p.span())))
                .map_err(|(message, span)| invalid(message, Some(span)))
        };
        let rules = |list: &[Spanned<String>]| list.iter().map(rule).collect::<Result<Vec<_>, _>>();
        overrides.push(crate::overrides::Override {
            files: patterns(&table.files)?,
            tools: patterns(&table.tools)?,
            select: table.select.as_deref().map(rules).transpose()?,
            ignore: rules(&table.ignore)?,
            severity: levels(&table.severity)?,
        });
    }

    let preset = match &raw.extends {
        None => None,
        Some(entry) => Some(Preset::named(entry.get_ref()).ok_or_else(|| {
            invalid(
                format!(
                    "unknown rule set `{}` (expected \"recommended\" or \"strict\")",
                    entry.get_ref()
                ),
                Some(entry.span()),
            )
        })?),
    };

    Ok(Config {
        preset,
        select,
        ignore,
        deny_warnings,
        severity,
        overrides,
    })
}

/// The config error as a miette diagnostic, for the excerpt under the one-line reason.
pub struct ConfigExcerpt<'a> {
    /// The file as shown.
    pub path: &'a str,
    /// Its text.
    pub text: &'a str,
    /// What is wrong (label text).
    pub message: &'a str,
    /// Where.
    pub span: Range<usize>,
}

impl std::fmt::Debug for ConfigExcerpt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigExcerpt")
            .field("path", &self.path)
            .field("span", &self.span)
            .finish()
    }
}

impl std::fmt::Display for ConfigExcerpt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message)
    }
}

impl std::error::Error for ConfigExcerpt<'_> {}

impl miette::Diagnostic for ConfigExcerpt<'_> {
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.text as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(miette::LabeledSpan::new(
            Some("here".to_owned()),
            self.span.start,
            self.span.end.saturating_sub(self.span.start),
        ))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_is_default() {
        assert_eq!(parse("", "c.toml").unwrap(), Config::default());
    }

    #[test]
    fn unknown_key_has_span() {
        let ConfigError::Invalid { message, span, .. } =
            parse("deny = []\nselct = []\n", "c.toml").unwrap_err();
        assert!(message.contains("selct"), "{message}");
        assert_eq!(span.map(|s| s.start), Some(10));
    }

    #[test]
    fn unknown_code_points_at_entry() {
        let text = "ignore = [\"R999\"]\n";
        let err = parse(text, "c.toml").unwrap_err();
        assert_eq!(
            err.to_string(),
            "c.toml:1:11: unknown rule `R999` (run `mcp-recovery rules` for the catalog)"
        );
    }

    #[test]
    fn extends_names_a_rule_set() {
        let config = parse("extends = \"strict\"\n", "c.toml").unwrap();
        assert_eq!(config.preset, Some(Preset::Strict));
        let err = parse("extends = \"pedantic\"\n", "c.toml").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("c.toml:1:11: unknown rule set `pedantic`"),
            "{err}"
        );
    }

    #[test]
    fn bad_deny_level() {
        let err = parse("deny = [\"errors\"]", "c.toml").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("c.toml:1:9: unknown deny level"),
            "{err}"
        );
    }

    #[test]
    fn display_path_relative_upward() {
        let cwd = Path::new("/a/b/c");
        assert_eq!(
            display_path(Path::new("/a/b/c/mcp-recovery.toml"), cwd),
            "mcp-recovery.toml"
        );
        assert_eq!(
            display_path(Path::new("/a/mcp-recovery.toml"), cwd),
            "../../mcp-recovery.toml"
        );
        assert_eq!(
            display_path(Path::new("/x/mcp-recovery.toml"), cwd),
            "/x/mcp-recovery.toml"
        );
    }
}
