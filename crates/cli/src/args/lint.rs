//! Arguments of `lint`: inputs, rule selection, output formats and files, baselines.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::args::server::ServerArgs;
use crate::args::values::written_path;

/// Arguments of `lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Files, directories (walked for *.json, .gitignore respected) or `-` for stdin.
    /// Default: the current directory.
    #[arg(value_name = "PATH", conflicts_with_all = ["stdio", "url", "servers", "all_servers"])]
    pub paths: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Run only these rules (codes or names; repeatable or comma-separated). Replaces `select`
    /// from the config file.
    #[arg(long, value_name = "CODE|NAME", value_delimiter = ',')]
    pub select: Vec<String>,

    /// Never run these rules (codes or names; repeatable or comma-separated). Replaces `ignore`
    /// from the config file.
    #[arg(long, value_name = "CODE|NAME", value_delimiter = ',')]
    pub ignore: Vec<String>,

    /// Also fail the run on warnings.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Vec<Deny>,

    /// Read settings from this file instead of the `mcp-recovery.toml` found upward from the
    /// working directory. With --server or --all-servers, FILE is an MCP client config instead
    /// (its servers are linted; settings are then found as without --config).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Also write a report in FORMAT to PATH (repeatable): one run, several formats (never
    /// coloured).
    #[arg(long = "output-file", value_name = "FORMAT=PATH")]
    pub output_files: Vec<OutputFile>,

    /// Findings listed in this baseline file do not fail the run; a listed finding that no
    /// longer occurs does.
    #[arg(long, value_name = "FILE", conflicts_with = "write_baseline")]
    pub baseline: Option<PathBuf>,

    /// Write every finding of this run to a baseline file (and do not fail on them).
    #[arg(long, value_name = "FILE", value_parser = written_path)]
    pub write_baseline: Option<PathBuf>,
    /// The rule set to run when no rule is selected: `recommended` (the default) or `strict`.
    /// Replaces `extends` from the config file.
    #[arg(long, value_enum, value_name = "SET")]
    pub preset: Option<PresetArg>,

    /// Apply this overlay (JSON or TOML) before linting: declarations for a server that does
    /// not make them itself. Findings about them point into the overlay file.
    #[arg(long, value_name = "FILE")]
    pub overlay: Option<PathBuf>,

    /// Ignore every config file: only the flags and the defaults apply. For CI on pull requests,
    /// where the repository (and so its `mcp-recovery.toml`) is the contributor's.
    #[arg(long, conflicts_with = "config")]
    pub isolated: bool,

    /// Show no progress on stderr (it is only ever drawn on a terminal).
    #[arg(long, short)]
    pub quiet: bool,

    /// Lint the servers an MCP Registry `server.json` declares (or every one in a directory):
    /// each package started with npx, uvx or docker, each remote over Streamable HTTP. Values
    /// come from the entry, then the environment, then the default.
    #[arg(long, value_name = "FILE|DIR",
          conflicts_with_all = ["paths", "stdio", "url", "servers", "all_servers"])]
    pub server_json: Option<PathBuf>,

    /// A live server to lint instead of files.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Output formats of `lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Diagnostics with source excerpts, for people.
    Human,
    /// One JSON object (stable, versioned).
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// A Markdown report, for `$GITHUB_STEP_SUMMARY` or a pull-request comment.
    Markdown,
    /// GitLab Code Quality (a Code Climate issue array).
    Gitlab,
    /// JUnit XML, one test suite per document.
    Junit,
}

/// `--output-file FORMAT=PATH`: one more report of the same run, written to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// Its format.
    pub format: Format,
    /// Where it goes.
    pub path: PathBuf,
}

impl std::str::FromStr for OutputFile {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (format, path) = text
            .split_once('=')
            .ok_or_else(|| format!("expected FORMAT=PATH, got '{text}'"))?;
        let format = Format::from_str(format, false).map_err(|_| {
            let names: Vec<String> = Format::value_variants()
                .iter()
                .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_owned()))
                .collect();
            format!("unknown format '{format}' (one of: {})", names.join(", "))
        })?;
        Ok(Self {
            format,
            path: written_path(path)?,
        })
    }
}

/// What `--deny` can make fail a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Deny {
    /// Warnings fail the run like errors.
    Warnings,
}

/// The rule sets of `--preset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PresetArg {
    /// True findings worth acting on for any server (the default).
    Recommended,
    /// Every rule: also titles, explicit hints and a reversibility class on every tool.
    Strict,
}

impl PresetArg {
    /// The validator's preset.
    pub fn preset(self) -> mcp_recovery_validator::Preset {
        match self {
            Self::Recommended => mcp_recovery_validator::Preset::Recommended,
            Self::Strict => mcp_recovery_validator::Preset::Strict,
        }
    }
}
