//! The settings of a `lint` run: the config file (named, discovered or none), then the flags over
//! it, and the linter they make.

use std::path::Path;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_validator::{LintOptions, Linter};

use crate::Failure;
use crate::args::lint::{Deny, LintArgs, PresetArg};
use crate::config::{self, Config};
use crate::inputs::{self, ReadError, ReadPolicy};
use crate::live;
use crate::overrides::{Override, Scopes};

/// Settings of one run after merging the config file and the flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Validator options.
    pub options: LintOptions,
    /// Whether warnings fail the run.
    pub deny_warnings: bool,
}

/// The settings of the run and the config's per-file overrides.
pub fn resolve(args: &LintArgs) -> Result<(Settings, Vec<Override>), Failure> {
    let config = load_config(args)?;
    let overrides = config.overrides.clone();
    Ok((merge(config, args), overrides))
}

/// The linter of the run: with overrides every rule runs, and the scopes keep what each file and
/// tool asks for.
pub fn linter(settings: &Settings, scopes: &Scopes) -> Result<Linter, Failure> {
    Ok(if scopes.is_empty() {
        Linter::new(settings.options.clone())?
    } else {
        Linter::new(Scopes::linter_options(&settings.options)?)?
    })
}

/// Flags override the config: a list given on the command line replaces the config's list.
pub fn merge(config: Config, args: &LintArgs) -> Settings {
    let select = if args.select.is_empty() {
        config.select
    } else {
        args.select.clone()
    };
    let ignore = if args.ignore.is_empty() {
        config.ignore
    } else {
        args.ignore.clone()
    };
    Settings {
        options: LintOptions {
            preset: args
                .preset
                .map(PresetArg::preset)
                .or(config.preset)
                .unwrap_or_default(),
            select,
            ignore,
            severity: config.severity,
        },
        deny_warnings: config.deny_warnings || args.deny.contains(&Deny::Warnings),
    }
}

/// Reads the config named by `--config`, or the one found upward from the working directory;
/// none under `--isolated`.
fn load_config(args: &LintArgs) -> Result<Config, Failure> {
    if args.isolated {
        return Ok(Config::default());
    }
    let cwd = std::env::current_dir().map_err(|source| Failure::Read {
        path: ".".to_owned(),
        source: source.into(),
    })?;
    // With --server/--all-servers, --config is the MCP client config, not settings.
    let settings = args
        .config
        .as_ref()
        .filter(|_| !live::names_config_servers(&args.server));
    let (path, root, shown) = match settings {
        Some(path) => (path.clone(), cwd, path.display().to_string()),
        None => match config::discover(&cwd) {
            Some(path) => {
                let shown = config::display_path(&path, &cwd);
                let root = path.parent().map_or_else(|| cwd.clone(), Path::to_owned);
                (path, root, shown)
            }
            None => return Ok(Config::default()),
        },
    };
    let shown = escape_controls(&shown).into_owned();
    // A symbolic link must resolve inside `root` (the config's own directory when discovered,
    // the working directory when named); the file must be a small regular file of UTF-8 text.
    let policy = ReadPolicy {
        max_bytes: config::MAX_CONFIG_BYTES,
        ..inputs::policy()
    };
    let unreadable = |source| Failure::Read {
        path: shown.clone(),
        source,
    };
    let bytes = inputs::read_file(&path, &root, policy).map_err(unreadable)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        unreadable(ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "it is not UTF-8 text",
        )))
    })?;
    if settings.is_some() && crate::client_config::looks_like_client_config(&text) {
        return Err(Failure::Usage(format!(
            "{shown} is an MCP client config, not mcp-recovery.toml settings: add --server NAME \
             or --all-servers to lint its servers"
        )));
    }
    Ok(config::parse(&text, &shown)?)
}
