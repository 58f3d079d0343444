//! Live servers (`--stdio -- CMD ARGS...`, `--url URL [--header 'K: V']...`, or the servers of an
//! MCP client config with `--config FILE --server NAME` / `--all-servers`): fetch the merged
//! tools/list exactly as sent, through `mcp-recovery-client`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_client::{ClientError, Connection, Header, Options, Target};
use serde_json::Value;

use crate::Failure;
use crate::allowed_hosts::AllowedHosts;
use crate::args::server::ServerArgs;
use crate::client_config::{self, ClientConfig, ConfigFileError, SSE_NOT_SUPPORTED};
use crate::sources::{Kind, SourceReport, Status};

/// A server named by the flags, ready to be fetched.
#[derive(Debug, Clone)]
pub struct Server {
    target: Target,
    options: Options,
    /// How it is named in output, made inert.
    name: String,
    /// Where it was named (the flags, a client config, a registry entry).
    kind: Kind,
    /// What `--save` names its file after, when not its name (see [`Server::save_stem`]).
    stem: Option<String>,
}

/// What a fetch brought back.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The complete tools/list result, all pages merged.
    pub tools: Value,
    /// The name the server gives itself (`serverInfo.name`), if any.
    pub server_name: Option<String>,
    /// The protocol revision spoken.
    pub protocol: String,
}

/// The client options of the flags: limits and the `--env` of a stdio server.
pub fn options(args: &ServerArgs) -> Result<Options, Failure> {
    let env = args
        .env
        .iter()
        .map(|spec| parse_pair(spec, "--env", "K=V"))
        .collect::<Result<_, _>>()?;
    Ok(Options {
        timeout: Duration::from_secs(args.timeout),
        total_timeout: Duration::from_secs(args.total_timeout),
        env,
        ..Options::default()
    })
}

/// `NAME=VALUE`; the error never repeats the value (it may be a secret).
pub fn parse_pair(spec: &str, flag: &str, shape: &str) -> Result<(String, String), Failure> {
    let invalid = |reason: &str| {
        Failure::Usage(format!(
            "{flag} expects {shape}: {reason} (the text is not shown, as it may hold a secret)"
        ))
    };
    let Some((name, value)) = spec.split_once('=') else {
        return Err(invalid("there is no `=`"));
    };
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    if !valid {
        return Err(invalid(
            "the name before `=` may use only letters, digits, `_`, `-` and `.`",
        ));
    }
    Ok((name.to_owned(), value.to_owned()))
}

impl Server {
    /// A server named by its target, shown as [`default_name`].
    pub fn new(target: Target, options: Options) -> Self {
        let name = escape_controls(&default_name(&target)).into_owned();
        let kind = Kind::of_target(&target);
        Self {
            target,
            options,
            name,
            kind,
            stem: None,
        }
    }

    /// The server of the flags, or `None` when no server is named (lint files instead).
    pub fn from_args(args: &ServerArgs) -> Result<Option<Self>, Failure> {
        let target = if args.stdio {
            let Some((program, rest)) = args.command.split_first() else {
                return Ok(None);
            };
            Target::Stdio {
                program: program.clone(),
                args: rest.to_vec(),
            }
        } else if let Some(url) = &args.url {
            let headers = args
                .headers
                .iter()
                .map(|spec| Header::parse(spec))
                .collect::<Result<_, _>>()
                .map_err(Failure::ServerArgs)?;
            Target::Http {
                url: url.clone(),
                headers,
            }
        } else {
            return Ok(None);
        };
        let name = args.name.clone().unwrap_or_else(|| default_name(&target));
        Ok(Some(Self {
            kind: Kind::of_target(&target),
            target,
            options: options(args)?,
            name: escape_controls(&name).into_owned(),
            stem: None,
        }))
    }

    /// How the server is named in output (`file` of its diagnostics, the subject of its errors),
    /// made inert: `--name`, the config's `FILE#NAME`, else [`default_name`].
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// A server named `name` (made inert here), found in a source of `kind`.
    pub fn named(target: Target, options: Options, name: &str, kind: Kind) -> Self {
        Self {
            target,
            options,
            name: escape_controls(name).into_owned(),
            kind,
            stem: None,
        }
    }

    /// The server, its `--save` file named after `stem` rather than its name.
    pub fn saved_as(self, stem: &str) -> Self {
        Self {
            stem: Some(stem.to_owned()),
            ..self
        }
    }

    /// What a save of several servers names this one's file after (made a file name by
    /// `save::save_paths`): the config's name of the entry, the server.json's file and the
    /// entry's pointer, else the name after any `#`.
    pub fn save_stem(&self) -> String {
        match &self.stem {
            Some(stem) => stem.clone(),
            None => self
                .name
                .rsplit('#')
                .next()
                .unwrap_or(&self.name)
                .to_owned(),
        }
    }

    /// Where the server was named.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Where the server is.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The connection limits and environment of the flags.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The complete tools/list result, all pages merged, every field as the server sent it
    /// (secrets we were given replaced by `***`). With `verbose`, says on stderr which
    /// protocol revision was spoken.
    pub fn fetch(&self, verbose: bool) -> Result<Value, ClientError> {
        self.fetch_named(verbose).map(|(tools, _)| tools)
    }

    /// [`Self::fetch`], with the name the server gives itself (`serverInfo.name`), if any.
    pub fn fetch_named(&self, verbose: bool) -> Result<(Value, Option<String>), ClientError> {
        self.fetch_full(verbose)
            .map(|fetched| (fetched.tools, fetched.server_name))
    }

    /// [`Self::fetch_named`], with the protocol revision spoken.
    pub fn fetch_full(&self, verbose: bool) -> Result<Fetched, ClientError> {
        let mut connection = Connection::open(&self.target, &self.options)?;
        if verbose {
            eprintln!(
                "server {}: protocol {} ({})",
                self.name(),
                connection.protocol_version(),
                connection.negotiation().describe()
            );
        }
        let tools = connection.list_tools();
        // A 2026-07-28 server names itself in every result, its tools/list included.
        let server_name = connection
            .server_name()
            .or_else(|| {
                tools
                    .as_ref()
                    .ok()
                    .and_then(mcp_recovery_model::server_name)
            })
            .map(str::to_owned);
        let protocol = connection.protocol_version().to_owned();
        connection.close();
        Ok(Fetched {
            tools: tools?,
            server_name,
            protocol,
        })
    }
}

/// Whether the flags name servers of a client config (`--server`/`--all-servers`): then
/// `--config` is that file, not `mcp-recovery.toml`.
pub fn names_config_servers(args: &ServerArgs) -> bool {
    !args.servers.is_empty() || args.all_servers
}

/// The servers the flags name: one from `--stdio`/`--url`, or those of the client config
/// `config` picked by `--server`/`--all-servers`. `None`: no server (lint files instead). An
/// entry of the config that cannot be used fails the whole run.
pub fn servers(args: &ServerArgs, config: Option<&Path>) -> Result<Option<Vec<Server>>, Failure> {
    if !names_config_servers(args) {
        return Ok(Server::from_args(args)?.map(|server| vec![server]));
    }
    let file = client_config_of(config)?;
    let allowed = AllowedHosts::new(&args.allow_hosts);
    configured(file, &args.inputs, &allowed, &args.servers, &options(args)?).map(Some)
}

/// The one server a command that reads one tools/list (`profile`, `suggest`) is given: that of
/// `--stdio`/`--url`, or the one `--server NAME` (or `--all-servers` of a config that has one)
/// picks in the client config `config`. `None`: no server (read a file instead).
pub fn one_server(
    args: &ServerArgs,
    config: Option<&Path>,
    command: &str,
) -> Result<Option<Server>, Failure> {
    if config.is_some() && !names_config_servers(args) {
        return Err(Failure::Usage(
            "--config names the MCP client config of --server NAME or --all-servers: add one"
                .to_owned(),
        ));
    }
    let Some(mut servers) = servers(args, config)? else {
        return Ok(None);
    };
    if servers.len() > 1 {
        return Err(Failure::Usage(format!(
            "{command} reads one server, and {} were named: name one with --server NAME",
            servers.len()
        )));
    }
    Ok(servers.pop())
}

/// The servers to run, and a report for each server skipped or that cannot be used.
pub type Servers = (Vec<Server>, Vec<SourceReport>);

/// [`servers`], with a report for each server skipped and for each entry of the config that
/// cannot be used (an `unreadable` source, its error said on stderr): the other servers still
/// run.
pub fn server_sources(
    args: &ServerArgs,
    config: Option<&Path>,
) -> Result<Option<Servers>, Failure> {
    if !names_config_servers(args) {
        let server = Server::from_args(args)?;
        return Ok(server.map(|s| (vec![s], Vec::new())));
    }
    let file = client_config_of(config)?;
    let base = options(args)?;
    let allowed = AllowedHosts::new(&args.allow_hosts);
    configured_sources(file, &args.inputs, &allowed, &args.servers, &base).map(Some)
}

/// The client config `--server`/`--all-servers` need.
fn client_config_of(config: Option<&Path>) -> Result<&Path, Failure> {
    config.ok_or_else(|| {
        Failure::Usage(
            "--server and --all-servers need --config FILE, the MCP client config".to_owned(),
        )
    })
}

/// One entry of a client config, as a run takes it.
enum Entry {
    /// Ready to be fetched.
    Run(Server),
    /// Disabled in the config.
    Skipped(SourceReport),
    /// The entry cannot be used (its command, a placeholder, its `envFile`, …).
    Broken(ConfigFileError),
}

/// The servers of the client config `file`: those named, or all enabled ones when `names` is
/// empty. An entry that cannot be used fails the whole run. `allowed`: the hosts an HTTP
/// entry may send values of the environment to.
pub fn configured(
    file: &Path,
    inputs: &[String],
    allowed: &AllowedHosts,
    names: &[String],
    base: &Options,
) -> Result<Vec<Server>, Failure> {
    let mut servers = Vec::new();
    for entry in entries(file, inputs, allowed, names, base)? {
        match entry {
            Entry::Run(server) => servers.push(server),
            Entry::Skipped(_) => {}
            Entry::Broken(error) => return Err(Failure::ClientConfig(error)),
        }
    }
    if servers.is_empty() {
        return Err(no_server_to_run(file));
    }
    Ok(servers)
}

/// [`configured`], with a report for each server skipped (disabled in the config, or SSE) and
/// for each entry that cannot be used: that entry is an `unreadable` source, its error said on
/// stderr, and the other servers still run. A config whose every server is skipped gives the
/// skipped reports and no server (the run then lints nothing, and exits 2).
pub fn configured_sources(
    file: &Path,
    inputs: &[String],
    allowed: &AllowedHosts,
    names: &[String],
    base: &Options,
) -> Result<Servers, Failure> {
    let mut servers = Vec::new();
    let mut reports = Vec::new();
    for entry in entries(file, inputs, allowed, names, base)? {
        match entry {
            Entry::Run(server) => servers.push(server),
            Entry::Skipped(report) => reports.push(report),
            Entry::Broken(error) => {
                let name = error.server.clone().unwrap_or_default();
                let failure = Failure::ClientConfig(error);
                crate::errors::report(&failure);
                reports.push(SourceReport::not_linted(
                    &entry_name(file, &name),
                    Kind::Config,
                    Status::Unreadable,
                    &failure.to_string(),
                ));
            }
        }
    }
    // A config whose every server is skipped is still reported, each one stated; one that
    // names no server at all has nothing to report.
    if servers.is_empty() && reports.is_empty() {
        return Err(no_server_to_run(file));
    }
    Ok((servers, reports))
}

/// The failure of a config none of whose servers is to run.
fn no_server_to_run(file: &Path) -> Failure {
    Failure::Usage(format!(
        "{}: the config names no server to run",
        file.display()
    ))
}

/// How the server `name` of the client config `file` is named in output, made inert.
fn entry_name(file: &Path, name: &str) -> String {
    escape_controls(&format!("{}#{name}", file.display())).into_owned()
}

/// Every entry of the client config `file` that `names` picks (all of them when empty, the
/// disabled ones skipped), resolved. The file that cannot be read or parsed, and a name it does
/// not have, fail the whole run.
fn entries(
    file: &Path,
    inputs: &[String],
    allowed: &AllowedHosts,
    names: &[String],
    base: &Options,
) -> Result<Vec<Entry>, Failure> {
    let inputs: BTreeMap<String, String> = inputs
        .iter()
        .map(|spec| parse_pair(spec, "--input", "ID=VALUE"))
        .collect::<Result<_, _>>()?;
    let text = crate::client_config::read_config_text(file).map_err(|source| Failure::Read {
        path: file.display().to_string(),
        source,
    })?;
    let config = ClientConfig::parse(file, &text, inputs)
        .map_err(Failure::ClientConfig)?
        .allowing(allowed.clone());
    let wanted: Vec<String> = if names.is_empty() {
        config.names().into_iter().map(str::to_owned).collect()
    } else {
        names.to_vec()
    };
    let mut entries = Vec::new();
    for name in &wanted {
        if names.is_empty() && config.is_disabled(name) {
            let shown = entry_name(file, name);
            eprintln!("note: server {shown} is disabled in the config; skipped");
            entries.push(Entry::Skipped(SourceReport::not_linted(
                &shown,
                Kind::Config,
                Status::Skipped,
                "disabled in the config",
            )));
            continue;
        }
        if let Some(pointer) = config.sse_pointer(name) {
            let shown = entry_name(file, name);
            let reason = format!("{}: {pointer}: {SSE_NOT_SUPPORTED}", file.display());
            let report = SourceReport::not_linted(&shown, Kind::Config, Status::Skipped, &reason);
            tell(&report);
            entries.push(Entry::Skipped(report));
            continue;
        }
        let server = match config.server(name) {
            Ok(server) => server,
            // The entry is there, and wrong.
            Err(error) if error.server.is_some() => {
                entries.push(Entry::Broken(error));
                continue;
            }
            Err(error) => return Err(Failure::ClientConfig(error)),
        };
        entries.push(Entry::Run(Server {
            options: client_config::options_for(&server, base),
            target: server.target,
            name: entry_name(file, &server.name),
            kind: Kind::Config,
            stem: Some(server.name),
        }));
    }
    Ok(entries)
}

/// Pretty JSON text of a fetched document, ending in a newline: what live lint reads (so that
/// findings have lines) and what `--save` writes.
pub fn document_text(document: &Value) -> Result<String, Failure> {
    Ok(format!("{}\n", crate::pretty(document, "the tools/list")?))
}

/// Prints why a server could not be linted (its stderr tail under the message), on stderr, and
/// returns the same as the server's report for the machine formats.
pub fn report(server: &Server, error: ClientError) -> SourceReport {
    let report = SourceReport::not_linted(
        &server.name,
        server.kind,
        Status::of_error(&error),
        &error.to_string(),
    );
    crate::errors::report(&Failure::server(server.name())(error));
    report
}

/// Says on stderr, in one line, that a source was not linted and why (`error:` when it failed,
/// `note:` when it was skipped): for the output that does not list sources itself.
pub fn tell(report: &SourceReport) {
    let level = if report.status.failed() {
        "error"
    } else {
        "note"
    };
    eprintln!(
        "{level}: {} {} was not linted ({}): {}",
        report.kind.as_str(),
        report.name,
        report.status.as_str(),
        report.reason()
    );
}

/// The name of a server without anything that may be secret: `stdio:PROGRAM` (the arguments and
/// any `VAR=value` are left out), or the URL reduced to scheme, host, port and path (no user,
/// password, query or fragment).
pub fn default_name(target: &Target) -> String {
    match target {
        Target::Stdio { program, .. } => format!("stdio:{program}"),
        Target::Http { url, .. } => mcp_recovery_client::shown_url(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_hold_no_arguments_or_credentials() {
        let stdio = Target::Stdio {
            program: "server".into(),
            args: vec!["--access-token=SECRET123".into(), "TOKEN=x".into()],
        };
        assert_eq!(default_name(&stdio), "stdio:server");
        let http = Target::Http {
            url: "https://u:pw@h.example:8443/mcp?key=SECRET#frag".into(),
            headers: Vec::new(),
        };
        assert_eq!(default_name(&http), "https://h.example:8443/mcp");
    }
}
