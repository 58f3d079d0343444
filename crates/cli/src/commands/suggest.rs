//! `mcp-recovery suggest`: draft an overlay for a server that declares no recovery, and keep only
//! what lints clean.

use mcp_recovery_base::text::escape_controls;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use mcp_recovery_model::{Overlay, OverlayFormat, escape_token};
use mcp_recovery_plan::{REDACTED_MEMBER, load_tools};
use mcp_recovery_validator::{LintOptions, Linter, Severity};
use serde_json::Value;

mod toml_text;

use crate::args::server::ServerArgs;
use crate::inputs::read_json;
use crate::live;
use crate::progress::{self, Progress};
use crate::{Failure, pretty};
use mcp_recovery_adoption::suggest::{
    Confidence, Proposal, Recorded, Skipped, Suggestions, suggest_with,
};

/// Arguments of `suggest`.
#[derive(Debug, Args)]
pub struct SuggestArgs {
    /// The tools/list document (`-` for stdin); or name a live server with `--stdio`/`--url`.
    #[arg(value_name = "FILE", conflicts_with_all = ["stdio", "url", "servers", "all_servers"])]
    pub input: Option<PathBuf>,
    /// Write the overlay here instead of stdout (TOML for `*.toml`, JSON otherwise).
    #[arg(long, value_name = "FILE", value_parser = crate::args::values::written_path)]
    pub out: Option<PathBuf>,
    /// Overlay format on stdout.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<OverlayFormatArg>,
    /// Leave out suggestions below this confidence.
    #[arg(long, value_enum, default_value_t = ConfidenceArg::Medium)]
    pub min_confidence: ConfidenceArg,
    /// A journal of `mcp-recovery proxy --journal` (repeatable): bindings its recorded calls show
    /// between a tool and its inverse are checked, counted and learned.
    #[arg(long, value_name = "FILE")]
    pub journal: Vec<PathBuf>,
    /// Show no progress on stderr (it is only ever drawn on a terminal).
    #[arg(long, short)]
    pub quiet: bool,
    /// A live server to draft the overlay for.
    #[command(flatten)]
    pub server: ServerArgs,
    /// The MCP client config (Claude Desktop, Cursor, VS Code) whose --server NAME to draft the
    /// overlay for.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input", "stdio", "url"])]
    pub config: Option<PathBuf>,
}

/// Formats of the drafted overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OverlayFormatArg {
    /// JSON.
    Json,
    /// TOML.
    Toml,
}

/// `--min-confidence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConfidenceArg {
    /// Everything the heuristics are willing to say.
    Medium,
    /// Only exact lexicon matches.
    High,
}

/// Runs `suggest`: the overlay on stdout (or `--out`), one line per suggestion and per pair left
/// out on stderr.
pub fn run(args: &SuggestArgs) -> Result<ExitCode, Failure> {
    let progress = Progress::spinner(progress::wanted(args.quiet));
    let server = live::one_server(&args.server, args.config.as_deref(), "suggest")?;
    let (document, server_name, shown) = match server {
        Some(server) => {
            let shown = server.name();
            progress.say(format!("starting {shown}"));
            let (document, name) = server
                .fetch_named(args.server.verbose)
                .map_err(Failure::server(shown.clone()))?;
            (document, name, shown)
        }
        None => {
            let Some(path) = &args.input else {
                return Err(Failure::Usage(
                    "suggest needs a tools/list file, or a server: --stdio -- CMD ARGS..., \
                         --url URL or --config FILE --server NAME"
                        .to_owned(),
                ));
            };
            (read_json(path)?, None, path.display().to_string())
        }
    };
    let tools = load_tools(&document)
        .map_err(|e| Failure::Usage(format!("{shown}: {e}")))?
        .tools;
    let minimum = match args.min_confidence {
        ConfidenceArg::Medium => Confidence::Medium,
        ConfidenceArg::High => Confidence::High,
    };
    let mut calls = Vec::new();
    for path in &args.journal {
        calls.extend(recorded_calls(path)?);
    }
    progress.say(format!("drafting recovery for {} tool(s)", tools.len()));
    let mut found = suggest_with(&tools, &calls);
    found.suggestions.retain(|s| s.confidence >= minimum);
    progress.say(format!(
        "linting the draft of {} suggestion(s)",
        found.suggestions.len()
    ));
    keep_clean(&mut found, &document, server_name.as_deref())?;
    drop(progress);

    let asked = args.format.map(|format| match format {
        OverlayFormatArg::Toml => OverlayFormat::Toml,
        OverlayFormatArg::Json => OverlayFormat::Json,
    });
    // A file is read back by its name: its content must be what the name says.
    let named = args
        .out
        .as_ref()
        .map(|path| OverlayFormat::from_file_name(&path.display().to_string()));
    let format = match (asked, named) {
        (Some(asked), Some(named)) if asked != named => {
            return Err(Failure::Usage(format!(
                "--format {} and --out {}: an overlay file is read as TOML when its name ends \
                 in .toml and as JSON otherwise",
                if asked == OverlayFormat::Toml { "toml" } else { "json" },
                args.out.as_deref().unwrap_or(std::path::Path::new("")).display()
            )));
        }
        (Some(format), _) | (None, Some(format)) => format,
        (None, None) => OverlayFormat::Json,
    };
    let text = render(&found, server_name.as_deref(), format)?;
    match &args.out {
        Some(path) => crate::written::write(path, text.as_bytes())?,
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    let mut stderr = std::io::stderr().lock();
    for s in &found.suggestions {
        let what = match &s.proposal {
            Proposal::Compensable { compensator, .. } => {
                format!("compensated by {}", escape_controls(compensator))
            }
            Proposal::Before { read, write, .. } => {
                format!(
                    "undone from a before-image ({} then {})",
                    escape_controls(read),
                    escape_controls(write)
                )
            }
            Proposal::Irreversible => "irreversible".to_owned(),
        };
        writeln!(
            stderr,
            "{:<6}  {}: {what} — {}",
            s.confidence.as_str(),
            escape_controls(&s.tool),
            escape_controls(&s.reason)
        )?;
    }
    for s in &found.skipped {
        writeln!(
            stderr,
            "left out  {} → {}: {}",
            escape_controls(&s.tool),
            escape_controls(&s.compensator),
            escape_controls(&s.reason)
        )?;
    }
    writeln!(
        stderr,
        "{} suggestion(s) for {} tool(s); {} candidate pair(s) left out",
        found.suggestions.len(),
        tools.len(),
        found.skipped.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The overlay as text. TOML carries each entry's notes as a comment above it too, since a
/// before-image has no member for them.
fn render(
    found: &Suggestions,
    server: Option<&str>,
    format: OverlayFormat,
) -> Result<String, Failure> {
    let toml_error =
        |e: toml::ser::Error| Failure::Usage(format!("cannot write the overlay as TOML: {e}"));
    match format {
        OverlayFormat::Json => Ok(format!(
            "{}\n",
            pretty(&found.overlay(server), "the overlay")?
        )),
        OverlayFormat::Toml => {
            let mut text = match server {
                Some(server) => {
                    toml::to_string(&serde_json::json!({ "server": server })).map_err(toml_error)?
                }
                None => String::new(),
            };
            if found.suggestions.is_empty() {
                text.push_str("[tools]\n");
            }
            for s in &found.suggestions {
                let entry = serde_json::json!({"tools": {s.tool.as_str(): s.entry()}});
                // One inert comment line, whatever the names hold.
                text.push_str(&format!(
                    "\n# {}: {}\n",
                    escape_controls(&s.tool),
                    escape_controls(&s.notes())
                ));
                text.push_str(&toml::to_string(&entry).map_err(toml_error)?);
            }
            Ok(toml_text::inert(&text))
        }
    }
}

/// The calls a proxy journal recorded: its `call.outcome` records, in order.
fn recorded_calls(path: &std::path::Path) -> Result<Vec<Recorded>, Failure> {
    let input = crate::inputs::Input::named(path);
    let shown = input.display().to_string();
    let bytes = input.read()?;
    let mut calls = Vec::new();
    for (at, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let refused = |why: String| Failure::Usage(format!("{shown}: line {}: {why}", at + 1));
        let text = std::str::from_utf8(line)
            .map_err(|_| refused("not a journal record: not UTF-8 text".to_owned()))?;
        let (record, repeated) = mcp_recovery_model::json::from_str_noting_repeats(text)
            .map_err(|e| refused(format!("not a journal record: {e}")))?;
        if repeated {
            return Err(refused(
                "a member name is written twice in one object, so which value is meant is not \
                 known"
                    .to_owned(),
            ));
        }
        // Every record of a journal has its kind and hash; a line without them is no record.
        if !["kind", "hash"]
            .iter()
            .all(|member| record.get(member).is_some_and(Value::is_string))
        {
            return Err(refused(
                "not a journal record: a record of the proxy's journal has a string `kind` and \
                 `hash`"
                    .to_owned(),
            ));
        }
        if record.get("kind").and_then(Value::as_str) != Some("call.outcome") {
            continue;
        }
        let field = |name: &str| {
            record.get(name).ok_or_else(|| {
                Failure::Usage(format!(
                    "{shown}: line {}: a call.outcome record without /{name}",
                    at + 1
                ))
            })
        };
        let (Some(session), Some(name)) = (field("session")?.as_str(), field("name")?.as_str())
        else {
            return Err(Failure::Usage(format!(
                "{shown}: line {}: /session and /name of a call.outcome record must be strings",
                at + 1
            )));
        };
        calls.push(Recorded {
            session: session.to_owned(),
            name: name.to_owned(),
            arguments: record.get("arguments").cloned().unwrap_or(Value::Null),
            result: record.get("result").filter(|r| r.is_object()).cloned(),
            redacted: record.get(REDACTED_MEMBER) == Some(&Value::Bool(true)),
        });
    }
    Ok(calls)
}

/// Lints the drafted overlay against the list and drops every suggestion the recommended rules
/// find a warning or error in, until the overlay lints clean.
fn keep_clean(
    found: &mut Suggestions,
    document: &Value,
    server: Option<&str>,
) -> Result<(), Failure> {
    let linter = Linter::new(LintOptions::default())?;
    // Each round drops at least one suggestion, so this ends.
    for _ in 0..=found.suggestions.len() {
        let overlay_value = found.overlay(server);
        let text = pretty(&overlay_value, "the overlay")?;
        let overlay = Overlay::parse(&text, OverlayFormat::Json)
            .map_err(|e| Failure::Usage(format!("the drafted overlay does not parse: {e}")))?;
        let report = linter.lint_value_with_overlay(document, &overlay, &text);
        let loud: Vec<_> = report
            .overlay
            .diagnostics
            .iter()
            .filter(|d| d.severity >= Severity::Warning)
            .collect();
        if loud.is_empty() {
            return Ok(());
        }
        let before = found.suggestions.len();
        let mut dropped = Vec::new();
        found.suggestions.retain(|s| {
            let prefix = format!("/tools/{}", escape_token(&s.tool));
            let finding = loud
                .iter()
                .find(|d| d.pointer == prefix || d.pointer.starts_with(&format!("{prefix}/")));
            match finding {
                Some(d) => {
                    dropped.push(Skipped {
                        tool: s.tool.clone(),
                        compensator: s.compensator().unwrap_or("-").to_owned(),
                        reason: format!("the draft does not lint clean: {} {}", d.code, d.message),
                    });
                    false
                }
                None => true,
            }
        });
        found.skipped.extend(dropped);
        if found.suggestions.len() == before {
            return Err(Failure::Usage(format!(
                "the drafted overlay has findings outside its tools: {}",
                loud[0].message
            )));
        }
    }
    Ok(())
}
