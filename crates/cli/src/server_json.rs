//! The MCP Registry's `server.json` (schema: `docs/reference/server-json/server.schema.json` of
//! the `modelcontextprotocol/registry` repository) as an input: each `packages[]` entry is
//! started the way its `registryType`/`runtimeHint` says (npm with `npx`, PyPI with `uvx`, OCI
//! with `docker run`), with its declared arguments and environment; each `remotes[]` entry is
//! reached over Streamable HTTP. An entry that cannot be run here (SSE, a registry type without
//! a runner, `npx` or `uvx` not installed, OCI without a Docker daemon) is a skipped source with
//! the reason; a required variable that is not set is a failed source naming it.
//!
//! Values come, in order, from the entry's own `value` (its `{VARIABLE}`s filled from
//! `variables`), the environment of `mcp-recovery` under the same name (for a header or an
//! argument, the name [`env_name`] derives: `MCP_HEADER_X_API_KEY` for `X-Api-Key`), then
//! `default`. Every value taken from the environment or marked `isSecret` is a secret: never
//! printed. A remote that takes a value from the environment is run only when its host is
//! allowed (`--allow-host`): the file chooses the names, and must not choose where our values go.

use std::path::Path;

use mcp_recovery_base::text::escape_controls;
use mcp_recovery_client::{Header, Options, Target};
use serde_json::Value;

use crate::Failure;
use crate::allowed_hosts;
use crate::live::Server;
use crate::sources::{Kind, SourceReport, Status};

/// The entries of `path` (a `server.json`, or a directory of them), as servers to fetch, and
/// a report for each entry that is not run (skipped, or a required value is missing) or file
/// that cannot be read or is not a `server.json` (unreadable, `path` itself too).
pub fn load(path: &Path, base: &Options, host: &Host<'_>) -> Result<crate::live::Servers, Failure> {
    let files = if path.is_dir() {
        let walk = mcp_recovery_base::walk::json_documents(path);
        if let Some(error) = walk.errors.into_iter().next() {
            return Err(Failure::Usage(format!(
                "cannot walk {}: {error}",
                escape_controls(&path.display().to_string())
            )));
        }
        walk.documents
    } else {
        vec![path.to_path_buf()]
    };
    let mut servers = Vec::new();
    let mut reports = Vec::new();
    for file in files {
        let shown = escape_controls(&file.display().to_string()).into_owned();
        match read(&file, &shown) {
            Ok(entry) => entries(&entry, &shown, base, host, &mut servers, &mut reports),
            // Given alone or found in a directory, a file that is no server.json is a source
            // that could not be read, stated in every report.
            Err(problem) => reports.push(SourceReport::not_linted(
                &shown,
                Kind::ServerJson,
                Status::Unreadable,
                &problem,
            )),
        }
    }
    if servers.is_empty() && reports.is_empty() {
        return Err(Failure::Usage(format!(
            "{}: no server.json found",
            escape_controls(&path.display().to_string())
        )));
    }
    Ok((servers, reports))
}

/// Reads one `server.json` (or a registry API answer `{"server": {...}}`); the error names the
/// file and the JSON pointer.
fn read(file: &Path, shown: &str) -> Result<Value, String> {
    let input = crate::inputs::Input::File(file.to_path_buf());
    let bytes = input.read().map_err(|failure| failure.to_string())?;
    let value: Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("{shown}: not JSON: {e}"))?;
    if let Some((pointer, why)) = mcp_recovery_validator::repeated_member(&bytes) {
        return Err(format!("{shown} at {pointer}: {why}"));
    }
    let entry = match value.get("server") {
        Some(server) if value.get("name").is_none() => server.clone(),
        _ => value,
    };
    if !entry.is_object() {
        return Err(format!("{shown}: expected a server.json object"));
    }
    match entry.get("name") {
        Some(Value::String(_)) => {}
        _ => {
            return Err(format!(
                "{shown}: /name: expected the server's name (a string)"
            ));
        }
    }
    for list in ["packages", "remotes"] {
        if entry.get(list).is_some_and(|v| !v.is_array()) {
            return Err(format!("{shown}: /{list}: expected an array"));
        }
    }
    Ok(entry)
}

/// Adds the servers (or the reports) of every package and remote of `entry`.
fn entries(
    entry: &Value,
    shown: &str,
    base: &Options,
    host: &Host<'_>,
    servers: &mut Vec<Server>,
    reports: &mut Vec<SourceReport>,
) {
    let lists = ["packages", "remotes"].map(|list| {
        let items = entry.get(list).and_then(Value::as_array);
        (list, items.map_or(&[][..], Vec::as_slice))
    });
    if lists.iter().all(|(_, items)| items.is_empty()) {
        let name = format!("{shown}#");
        let reason = "the entry lists no packages and no remotes: nothing to start";
        reports.push(SourceReport::not_linted(
            &name,
            Kind::ServerJson,
            Status::Skipped,
            reason,
        ));
    }
    for (list, items) in lists {
        for (i, item) in items.iter().enumerate() {
            let pointer = format!("/{list}/{i}");
            let name = format!("{shown}#{pointer}");
            let planned = match list {
                "packages" => package(item, &pointer, host),
                _ => remote(item, &pointer, host),
            };
            match planned {
                Ok(Planned {
                    target,
                    env,
                    secrets,
                }) => {
                    let mut options = base.clone();
                    options.env.extend(env);
                    options.secrets.extend(secrets);
                    // Saved as `FILE_packages_N.json`: the file and the entry, never the file alone.
                    let file = Path::new(shown).file_stem().unwrap_or_default();
                    let stem = format!("{}_{list}_{i}", file.to_string_lossy());
                    let server = Server::named(target, options, &name, Kind::ServerJson);
                    servers.push(server.saved_as(&stem));
                }
                Err((status, reason)) => reports.push(SourceReport::not_linted(
                    &name,
                    Kind::ServerJson,
                    status,
                    &format!("{shown}: {reason}"),
                )),
            }
        }
    }
}

/// How one entry is run.
#[derive(Debug)]
struct Planned {
    target: Target,
    env: Vec<(String, String)>,
    secrets: Vec<String>,
}

/// Why an entry is not run: skipped (the entry is fine, this machine cannot run it) or failed
/// (a required value is missing, the entry is malformed).
type NotRun = (Status, String);

fn malformed(pointer: &str, problem: &str) -> NotRun {
    (Status::FailedToStart, format!("{pointer}: {problem}"))
}

fn string<'v>(item: &'v Value, key: &str, pointer: &str) -> Result<&'v str, NotRun> {
    item.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| malformed(&format!("{pointer}/{key}"), "expected a string"))
}

fn array<'v>(item: &'v Value, key: &str, pointer: &str) -> Result<&'v [Value], NotRun> {
    match item.get(key) {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(malformed(&format!("{pointer}/{key}"), "expected an array")),
    }
}

/// Values resolved so far for one entry: what is secret, for the options, and what came from
/// the environment (where, and what).
#[derive(Default)]
struct Resolved {
    secrets: Vec<String>,
    from_env: Vec<(String, String)>,
}

impl Resolved {
    /// The value of an input (`value` with its variables filled, the environment under `name`
    /// when given, `default`); `Ok(None)` when it has none and is optional. The error names
    /// what is missing at `pointer`.
    fn input(
        &mut self,
        input: &Value,
        name: Option<&str>,
        what: &str,
        pointer: &str,
        host: &Host<'_>,
    ) -> Result<Option<String>, NotRun> {
        let flag = |key: &str| input.get(key).and_then(Value::as_bool).unwrap_or(false);
        let value = match input.get("value").and_then(Value::as_str) {
            Some(template) => Some(self.fill(template, input.get("variables"), pointer, host)?),
            None => None,
        };
        let from_env = match (&value, name) {
            (None, Some(name)) => (host.env)(name),
            _ => None,
        };
        if from_env.is_some() {
            self.from_env.push((pointer.to_owned(), what.to_owned()));
        }
        let secret = flag("isSecret") || from_env.is_some();
        let default = input
            .get("default")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let resolved = value.or(from_env).or(default);
        match resolved {
            Some(value) => {
                if secret {
                    self.secrets.push(value.clone());
                }
                Ok(Some(value))
            }
            None if flag("isRequired") => Err((
                Status::FailedToStart,
                format!(
                    "{pointer}: the required {what} is not set{}",
                    set_hint(name)
                ),
            )),
            None => Ok(None),
        }
    }

    /// `template` with each `{NAME}` replaced by the variable's value; a name `variables` does
    /// not declare stays as written (the registry's rule).
    fn fill(
        &mut self,
        template: &str,
        variables: Option<&Value>,
        pointer: &str,
        host: &Host<'_>,
    ) -> Result<String, NotRun> {
        let mut out = String::with_capacity(template.len());
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let close = after.find('}');
            let name = close.map(|c| &after[..c]).filter(|n| is_identifier(n));
            let declared = name.and_then(|n| variables.and_then(|v| v.get(n)).map(|v| (n, v)));
            match (declared, close) {
                (Some((name, variable)), Some(close)) => {
                    let at = format!("{pointer}/variables/{name}");
                    let what = format!("variable {name}");
                    let value = self.input(variable, Some(name), &what, &at, host)?;
                    out.push_str(&value.unwrap_or_default());
                    rest = &after[close + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The command-line words of `arguments` (`positional`: the value; `named`: `NAME=VALUE`,
    /// or `NAME` alone without a value). An argument without `value` is taken from the
    /// environment variable [`env_name`] derives from `prefix` and its name.
    fn arguments(
        &mut self,
        arguments: &[Value],
        pointer: &str,
        prefix: &str,
        host: &Host<'_>,
    ) -> Result<Vec<String>, NotRun> {
        let mut words = Vec::new();
        for (i, argument) in arguments.iter().enumerate() {
            let at = format!("{pointer}/{i}");
            match argument.get("type").and_then(Value::as_str) {
                Some("positional") => {
                    let hint = argument.get("valueHint").and_then(Value::as_str);
                    let what = format!("argument {}", hint.unwrap_or("(positional)"));
                    let variable = env_name(prefix, hint.unwrap_or_default(), i);
                    if let Some(value) = self.input(argument, Some(&variable), &what, &at, host)? {
                        words.push(value);
                    }
                }
                Some("named") => {
                    let name = string(argument, "name", &at)?;
                    let what = format!("argument {name}");
                    let variable = env_name(prefix, name, i);
                    match self.input(argument, Some(&variable), &what, &at, host)? {
                        Some(value) => words.push(format!("{name}={value}")),
                        None if argument.get("value").is_none()
                            && argument.get("default").is_none() =>
                        {
                            words.push(name.to_owned());
                        }
                        None => {}
                    }
                }
                _ => {
                    return Err(malformed(
                        &format!("{at}/type"),
                        "expected positional or named",
                    ));
                }
            }
        }
        Ok(words)
    }
}

/// The environment variable that supplies a header or an argument declaring no `value`:
/// `prefix` (`MCP_HEADER_`, `MCP_ARG_` for `packageArguments`, `MCP_RUNTIME_ARG_` for
/// `runtimeArguments`), then `name` (a header's or named argument's `name`, a positional
/// argument's `valueHint`) in upper case, each run of other characters than ASCII letters and
/// digits one `_`, none at either end; the argument's index when nothing is left.
/// `X-Api-Key` → `MCP_HEADER_X_API_KEY`, `--local-timezone` → `MCP_ARG_LOCAL_TIMEZONE`.
pub fn env_name(prefix: &str, name: &str, index: usize) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_');
    if out.is_empty() {
        format!("{prefix}{index}")
    } else {
        format!("{prefix}{out}")
    }
}

fn set_hint(name: Option<&str>) -> String {
    match name {
        Some(name) => format!(": set {name} in the environment"),
        None => String::new(),
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// How a package is started: the runner, its own arguments, then the package and its arguments.
fn package(item: &Value, pointer: &str, host: &Host<'_>) -> Result<Planned, NotRun> {
    let registry = string(item, "registryType", pointer)?;
    let identifier = string(item, "identifier", pointer)?;
    let version = item.get("version").and_then(Value::as_str);
    let transport = item
        .get("transport")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        .ok_or_else(|| malformed(&format!("{pointer}/transport/type"), "expected a string"))?;
    if transport != "stdio" {
        return Err((
            Status::Skipped,
            format!(
                "{pointer}: a package serving {transport} is not started: only packages \
                 speaking stdio are"
            ),
        ));
    }
    let runtime = item.get("runtimeHint").and_then(Value::as_str);
    let runner = match (runtime, registry) {
        (Some(hint), _) => hint,
        (None, "npm") => "npx",
        (None, "pypi") => "uvx",
        (None, "oci") => "docker",
        (None, other) => {
            return Err((
                Status::Skipped,
                format!("{pointer}: registry type {other} has no runner here (npm, pypi, oci do)"),
            ));
        }
    };
    let mut resolved = Resolved::default();
    let mut env = Vec::new();
    for (i, variable) in array(item, "environmentVariables", pointer)?
        .iter()
        .enumerate()
    {
        let at = format!("{pointer}/environmentVariables/{i}");
        let name = string(variable, "name", &at)?;
        let what = format!("environment variable {name}");
        if let Some(value) = resolved.input(variable, Some(name), &what, &at, host)? {
            env.push((name.to_owned(), value));
        }
    }
    let runtime_words = resolved.arguments(
        array(item, "runtimeArguments", pointer)?,
        &format!("{pointer}/runtimeArguments"),
        "MCP_RUNTIME_ARG_",
        host,
    )?;
    let package_words = resolved.arguments(
        array(item, "packageArguments", pointer)?,
        &format!("{pointer}/packageArguments"),
        "MCP_ARG_",
        host,
    )?;
    if matches!(runner, "npx" | "uvx") && !(host.installed)(runner) {
        // The entry is fine; this machine lacks what runs it.
        return Err((
            Status::Skipped,
            format!("{pointer}: runtime {runner} is not installed here (not found on the PATH)"),
        ));
    }
    let mut args = Vec::new();
    match runner {
        "npx" => {
            args.push("-y".to_owned());
            args.extend(runtime_words);
            args.push(match version {
                Some(version) => format!("{identifier}@{version}"),
                None => identifier.to_owned(),
            });
        }
        "uvx" => {
            args.extend(runtime_words);
            args.push(match version {
                Some(version) => format!("{identifier}@{version}"),
                None => identifier.to_owned(),
            });
        }
        "docker" => {
            if !(host.docker)() {
                return Err((
                    Status::Skipped,
                    format!("{pointer}: an OCI package needs Docker, and no Docker daemon answers"),
                ));
            }
            args.extend(["run", "-i", "--rm"].map(str::to_owned));
            // The container gets the variables by name; their values stay in our environment.
            for (name, _) in &env {
                args.extend(["-e".to_owned(), name.clone()]);
            }
            args.extend(runtime_words);
            let tagged = identifier
                .rsplit('/')
                .next()
                .is_some_and(|l| l.contains(':'));
            args.push(match version {
                Some(version) if !tagged && !identifier.contains('@') => {
                    format!("{identifier}:{version}")
                }
                _ => identifier.to_owned(),
            });
        }
        other => {
            return Err((
                Status::Skipped,
                format!("{pointer}: runtime {other} is not supported (npx, uvx, docker are)"),
            ));
        }
    }
    args.extend(package_words);
    Ok(Planned {
        target: Target::Stdio {
            program: runner.to_owned(),
            args,
        },
        env,
        secrets: resolved.secrets,
    })
}

/// How a remote is reached: Streamable HTTP with its headers; SSE is not supported.
fn remote(item: &Value, pointer: &str, host: &Host<'_>) -> Result<Planned, NotRun> {
    let transport = string(item, "type", pointer)?;
    if transport == "sse" {
        let reason = crate::client_config::SSE_NOT_SUPPORTED;
        return Err((Status::Skipped, format!("{pointer}: {reason}")));
    }
    if transport != "streamable-http" {
        return Err((
            Status::Skipped,
            format!(
                "{pointer}: the {transport} transport is not supported: only Streamable HTTP is"
            ),
        ));
    }
    let mut resolved = Resolved::default();
    let url = resolved.fill(
        string(item, "url", pointer)?,
        item.get("variables"),
        pointer,
        host,
    )?;
    let mut headers = Vec::new();
    for (i, header) in array(item, "headers", pointer)?.iter().enumerate() {
        let at = format!("{pointer}/headers/{i}");
        let name = string(header, "name", &at)?;
        let what = format!("header {name}");
        let variable = env_name("MCP_HEADER_", name, i);
        if let Some(value) = resolved.input(header, Some(&variable), &what, &at, host)? {
            headers.push(Header::new(name, &value).map_err(|e| malformed(&at, &e.to_string()))?);
        }
    }
    // A value of our environment leaves this machine only for a host the user allowed.
    if let Some((at, what)) = resolved.from_env.first()
        && !host.allowed.allows(&url)
    {
        let why = allowed_hosts::refusal(&format!("the {what}"), &url, &resolved.secrets);
        return Err((Status::FailedToStart, format!("{at}: {why}")));
    }
    Ok(Planned {
        target: Target::Http { url, headers },
        env: Vec::new(),
        secrets: resolved.secrets,
    })
}

mod host;

pub use host::{Host, with_real_host};

#[cfg(test)]
mod tests;
