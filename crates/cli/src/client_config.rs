//! MCP client config files: the servers a user has configured, as Claude Desktop
//! (`claude_desktop_config.json`, `mcpServers`), Cursor (`.cursor/mcp.json`, `mcpServers`) and
//! VS Code (`.vscode/mcp.json`, `servers` and `inputs`; or `settings.json` under `mcp`) write
//! them.
//!
//! Each server entry is either stdio (`command`, `args`, `env`, `envFile`, `cwd`) or HTTP
//! (`url`, `headers`; `type` `http` or `streamable-http`). Other members (`alwaysAllow`,
//! `disabled`, `description`, …) are ignored, except that `disabled: true` servers are left out
//! of `--all-servers`. Strings may hold the placeholders VS Code and Cursor expand:
//! `${env:NAME}`, `${input:ID}` (given with `--input ID=VALUE`, since a linter cannot prompt),
//! `${workspaceFolder}`, `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}` and
//! `${/}`. Comments and trailing commas (JSONC, as VS Code allows) are accepted.
//!
//! Every mistake names the file, the server and the JSON pointer of the value. An HTTP entry
//! whose URL or headers expand `${env:…}` is refused unless its host is allowed
//! (`--allow-host`): a config from someone else must not send our variables where it likes.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_recovery_client::{Header, Options, Target};
use serde_json::{Map, Value};

use crate::allowed_hosts::{self, AllowedHosts};

/// Why an entry of a client config (`"type": "sse"`) or a server.json remote (`"type": "sse"`)
/// is skipped: the same words from either.
pub const SSE_NOT_SUPPORTED: &str =
    "the HTTP+SSE transport of protocol 2024-11-05 is not supported: only Streamable HTTP is";

/// One configured server, ready to connect to.
#[derive(Debug, Clone)]
pub struct ConfiguredServer {
    /// Its name in the config (the key of its entry).
    pub name: String,
    /// How to reach it.
    pub target: Target,
    /// Its environment and working directory (stdio).
    pub env: Vec<(String, String)>,
    /// Its working directory (stdio).
    pub cwd: Option<PathBuf>,
    /// Every value substituted from `${env:…}` or `${input:…}` anywhere in the entry (command,
    /// arguments, URL, environment, headers): never shown.
    pub secrets: Vec<String>,
}

/// A server entry that cannot be used; the message names the file, the server and the pointer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}: {}{pointer}: {message}", server.as_ref().map(|s| format!("server {s:?} at ")).unwrap_or_default())]
pub struct ConfigFileError {
    /// The config file as given.
    pub file: String,
    /// The server whose entry is wrong, if one is.
    pub server: Option<String>,
    /// JSON pointer of the wrong value (`/mcpServers/memory/args/1`).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// The parsed file: its servers in file order, or the reason it is not a client config.
#[derive(Debug)]
pub struct ClientConfig {
    file: String,
    /// Where the server entries live (`/mcpServers`, `/servers`, `/mcp/servers`).
    servers_pointer: String,
    entries: Vec<(String, Value)>,
    inputs: BTreeMap<String, String>,
    /// The hosts an HTTP entry may send values of the environment to (`--allow-host`).
    allowed: AllowedHosts,
    workspace: PathBuf,
}

/// The text of a client config or of a file it names (`envFile`): a regular file (a FIFO or a
/// device is refused before it is opened; a link is followed, as configs often are links) of at
/// most the default input cap, in UTF-8.
pub fn read_config_text(path: &Path) -> Result<String, mcp_recovery_base::read::ReadError> {
    let policy = mcp_recovery_base::read::ReadPolicy {
        follow_links: true,
        ..mcp_recovery_base::read::ReadPolicy::default()
    };
    let bytes = mcp_recovery_base::read::read_file(path, Path::new("."), policy)?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text").into())
}

/// Whether `text` is an MCP client config: a JSON(C) object with `mcpServers` or `servers` (or
/// VS Code settings with `mcp.servers`) holding an object.
pub fn looks_like_client_config(text: &str) -> bool {
    serde_json::from_str::<Value>(&strip_jsonc(text))
        .ok()
        .is_some_and(|v| servers_member(&v).is_some())
}

fn servers_member(value: &Value) -> Option<(&'static str, &Map<String, Value>)> {
    for (pointer, found) in [
        ("/mcpServers", value.get("mcpServers")),
        ("/servers", value.get("servers")),
        ("/mcp/servers", value.pointer("/mcp/servers")),
    ] {
        if let Some(Value::Object(map)) = found {
            return Some((pointer, map));
        }
    }
    None
}

impl ClientConfig {
    /// Parses `text`, the content of `file`. `inputs` are the `--input ID=VALUE` pairs.
    pub fn parse(
        file: &Path,
        text: &str,
        inputs: BTreeMap<String, String>,
    ) -> Result<ClientConfig, ConfigFileError> {
        let shown = file.display().to_string();
        let error = |pointer: &str, message: String| ConfigFileError {
            file: shown.clone(),
            server: None,
            pointer: pointer.to_owned(),
            message,
        };
        let json = strip_jsonc(text);
        let value: Value = serde_json::from_str(&json).map_err(|e| {
            error(
                "",
                format!(
                    "not valid JSON (line {}, column {}): {e}",
                    e.line(),
                    e.column()
                ),
            )
        })?;
        // A reader sees the first of two members of one name, the parser keeps the last: a
        // server written twice would start a command nobody reviewed.
        if let Some((pointer, why)) = mcp_recovery_validator::repeated_member(json.as_bytes()) {
            return Err(error(&pointer, why));
        }
        let Some((servers_pointer, servers)) = servers_member(&value) else {
            return Err(error(
                "",
                "not an MCP client config: no `mcpServers` or `servers` object".to_owned(),
            ));
        };
        Ok(ClientConfig {
            file: shown.clone(),
            servers_pointer: servers_pointer.to_owned(),
            entries: servers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            inputs,
            allowed: AllowedHosts::default(),
            workspace: workspace_folder(file),
        })
    }

    /// The config, its HTTP entries allowed to send values of the environment to `allowed`.
    pub fn allowing(self, allowed: AllowedHosts) -> ClientConfig {
        ClientConfig { allowed, ..self }
    }

    /// The names of every server, in file order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// Whether the entry of `name` says `disabled: true`; read before the entry is resolved, so
    /// that a disabled entry is skipped whatever else it holds.
    pub fn is_disabled(&self, name: &str) -> bool {
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, entry)| entry.get("disabled"))
            .and_then(Value::as_bool)
            == Some(true)
    }

    /// Where the entry of `name` says `"type": "sse"` (the JSON pointer of that `type`), read
    /// before the entry is resolved: such an entry is skipped, as the transport is not supported.
    pub fn sse_pointer(&self, name: &str) -> Option<String> {
        let (_, entry) = self.entries.iter().find(|(n, _)| n == name)?;
        (entry.get("type").and_then(Value::as_str) == Some("sse"))
            .then(|| format!("{}/{}/type", self.servers_pointer, escape_pointer(name)))
    }

    /// The server called `name`, resolved.
    pub fn server(&self, name: &str) -> Result<ConfiguredServer, ConfigFileError> {
        let Some((_, entry)) = self.entries.iter().find(|(n, _)| n == name) else {
            let known = self.names().join(", ");
            return Err(ConfigFileError {
                file: self.file.clone(),
                server: None,
                pointer: self.servers_pointer.clone(),
                message: format!(
                    "no server named {name:?} (the config has: {})",
                    if known.is_empty() { "none" } else { &known }
                ),
            });
        };
        Resolver {
            config: self,
            server: name,
            base: format!("{}/{}", self.servers_pointer, escape_pointer(name)),
            substituted: RefCell::new(Vec::new()),
            from_env: RefCell::new(Vec::new()),
        }
        .resolve(entry)
    }
}

/// Resolves one entry, knowing where it is for error messages.
struct Resolver<'a> {
    config: &'a ClientConfig,
    server: &'a str,
    base: String,
    /// The values `${env:…}` and `${input:…}` expanded to so far.
    substituted: RefCell<Vec<String>>,
    /// Where each `${env:NAME}` was expanded so far, and its NAME.
    from_env: RefCell<Vec<(String, String)>>,
}

impl Resolver<'_> {
    fn error(&self, pointer: &str, message: impl Into<String>) -> ConfigFileError {
        ConfigFileError {
            file: self.config.file.clone(),
            server: Some(self.server.to_owned()),
            pointer: format!("{}{pointer}", self.base),
            message: message.into(),
        }
    }

    fn resolve(&self, entry: &Value) -> Result<ConfiguredServer, ConfigFileError> {
        let Value::Object(entry) = entry else {
            return Err(self.error("", "a server entry must be an object"));
        };
        let kind = match entry.get("type") {
            None => None,
            Some(Value::String(kind)) => Some(kind.as_str()),
            Some(_) => return Err(self.error("/type", "`type` must be a string")),
        };
        let has_url = entry.contains_key("url") || entry.contains_key("serverUrl");
        let target = match kind {
            Some("stdio") => self.stdio(entry)?,
            Some("http" | "streamable-http" | "streamableHttp") => self.http(entry)?,
            Some("sse") => return Err(self.error("/type", SSE_NOT_SUPPORTED)),
            Some(other) => {
                return Err(self.error(
                    "/type",
                    format!("unknown type {other:?} (stdio, http or streamable-http)"),
                ));
            }
            None if entry.contains_key("command") => self.stdio(entry)?,
            None if has_url => self.http(entry)?,
            None => {
                return Err(self.error("", "the entry has neither `command` nor `url`"));
            }
        };
        let (env, cwd) = match &target {
            Target::Stdio { .. } => (self.env(entry)?, self.cwd(entry)?),
            Target::Http { .. } => (Vec::new(), None),
        };
        Ok(ConfiguredServer {
            name: self.server.to_owned(),
            target,
            env,
            cwd,
            secrets: self.substituted.take(),
        })
    }

    fn stdio(&self, entry: &Map<String, Value>) -> Result<Target, ConfigFileError> {
        let program = match entry.get("command") {
            Some(Value::String(command)) if !command.trim().is_empty() => {
                self.expand("/command", command)?
            }
            Some(_) => return Err(self.error("/command", "`command` must be a non-empty string")),
            None => return Err(self.error("", "a stdio server needs `command`")),
        };
        let args = match entry.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(arg) => self.expand(&format!("/args/{i}"), arg),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err(self.error(&format!("/args/{i}"), "an argument must be a string")),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(self.error("/args", "`args` must be an array of strings")),
        };
        Ok(Target::Stdio { program, args })
    }

    fn http(&self, entry: &Map<String, Value>) -> Result<Target, ConfigFileError> {
        let (key, url) = match (entry.get("url"), entry.get("serverUrl")) {
            (Some(url), _) => ("url", url),
            (None, Some(url)) => ("serverUrl", url),
            (None, None) => return Err(self.error("", "an HTTP server needs `url`")),
        };
        let pointer = format!("/{key}");
        let Value::String(url) = url else {
            return Err(self.error(&pointer, "`url` must be a string"));
        };
        let url = self.expand(&pointer, url)?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(self.error(&pointer, "`url` must start with http:// or https://"));
        }
        let mut headers = Vec::new();
        for (name, value, pointer) in self.string_map(entry, "headers")? {
            let value = self.expand(&pointer, &value)?;
            let header =
                Header::new(&name, &value).map_err(|e| self.error(&pointer, e.to_string()))?;
            headers.push(header);
        }
        // A value of our environment leaves this machine only for a host the user allowed.
        if let Some((pointer, var)) = self.from_env.borrow().first()
            && !self.config.allowed.allows(&url)
        {
            let what = format!("`${{env:{var}}}`");
            let why = allowed_hosts::refusal(&what, &url, &self.substituted.borrow());
            return Err(self.error(pointer, why));
        }
        Ok(Target::Http { url, headers })
    }

    fn env(&self, entry: &Map<String, Value>) -> Result<Vec<(String, String)>, ConfigFileError> {
        let mut env = Vec::new();
        if let Some(file) = entry.get("envFile") {
            let Value::String(file) = file else {
                return Err(self.error("/envFile", "`envFile` must be a string"));
            };
            let path = self.path("/envFile", file)?;
            let text = read_config_text(&path).map_err(|e| {
                self.error("/envFile", format!("cannot read {}: {e}", path.display()))
            })?;
            env.extend(parse_env_file(&text));
        }
        for (name, value, pointer) in self.string_map(entry, "env")? {
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(self.error(&pointer, "not a valid environment variable name"));
            }
            env.push((name, self.expand(&pointer, &value)?));
        }
        Ok(env)
    }

    fn cwd(&self, entry: &Map<String, Value>) -> Result<Option<PathBuf>, ConfigFileError> {
        match entry.get("cwd") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(cwd)) => self.path("/cwd", cwd).map(Some),
            Some(_) => Err(self.error("/cwd", "`cwd` must be a string")),
        }
    }

    /// An expanded path; relative paths are relative to the workspace folder.
    fn path(&self, pointer: &str, text: &str) -> Result<PathBuf, ConfigFileError> {
        let path = PathBuf::from(self.expand(pointer, text)?);
        Ok(if path.is_relative() {
            self.config.workspace.join(path)
        } else {
            path
        })
    }

    /// The members of an object of strings (`env`, `headers`), with their pointers.
    fn string_map(
        &self,
        entry: &Map<String, Value>,
        key: &str,
    ) -> Result<Vec<(String, String, String)>, ConfigFileError> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, value)| {
                    let pointer = format!("/{key}/{}", escape_pointer(name));
                    match value {
                        Value::String(text) => Ok((name.clone(), text.clone(), pointer)),
                        Value::Number(_) | Value::Bool(_) => {
                            Ok((name.clone(), value.to_string(), pointer))
                        }
                        _ => Err(self.error(&pointer, "the value must be a string")),
                    }
                })
                .collect(),
            Some(_) => Err(self.error(&format!("/{key}"), format!("`{key}` must be an object"))),
        }
    }

    /// `text` with its `${…}` placeholders replaced.
    fn expand(&self, pointer: &str, text: &str) -> Result<String, ConfigFileError> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err(self.error(pointer, "`${` without a closing `}`"));
            };
            out.push_str(&self.placeholder(pointer, &after[..end])?);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn placeholder(&self, pointer: &str, name: &str) -> Result<String, ConfigFileError> {
        let workspace = &self.config.workspace;
        let secret = if let Some(var) = name.strip_prefix("env:") {
            let at = (pointer.to_owned(), var.to_owned());
            self.from_env.borrow_mut().push(at);
            Some(std::env::var(var).map_err(|_| {
                self.error(
                    pointer,
                    format!("the environment variable {var} is not set"),
                )
            })?)
        } else if let Some(id) = name.strip_prefix("input:") {
            Some(self.config.inputs.get(id).cloned().ok_or_else(|| {
                self.error(
                    pointer,
                    format!("`${{input:{id}}}` has no value: give it with --input {id}=VALUE"),
                )
            })?)
        } else {
            None
        };
        if let Some(value) = secret {
            self.substituted.borrow_mut().push(value.clone());
            return Ok(value);
        }
        match name {
            "workspaceFolder" | "workspaceRoot" => Ok(workspace.display().to_string()),
            "workspaceFolderBasename" => Ok(workspace
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()),
            "userHome" => std::env::var("HOME")
                .map_err(|_| self.error(pointer, "`${userHome}` needs HOME to be set")),
            "pathSeparator" | "/" => Ok(std::path::MAIN_SEPARATOR.to_string()),
            other => Err(self.error(
                pointer,
                format!(
                    "unknown placeholder `${{{other}}}` (env:NAME, input:ID, workspaceFolder, \
                     workspaceFolderBasename, userHome, pathSeparator)"
                ),
            )),
        }
    }
}

/// The folder a config belongs to: the parent of `.vscode/` or `.cursor/`, else the file's own
/// directory.
fn workspace_folder(file: &Path) -> PathBuf {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let dir = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
    match dir.file_name().and_then(|n| n.to_str()) {
        Some(".vscode" | ".cursor") => dir.parent().map(Path::to_path_buf).unwrap_or(dir),
        _ => dir,
    }
}

/// RFC 6901 escaping of one reference token.
fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `KEY=VALUE` lines; `#` comments, blank lines, `export ` and surrounding quotes allowed.
fn parse_env_file(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let line = line.strip_prefix("export ").unwrap_or(line);
            let (key, value) = line.split_once('=')?;
            let value = value.trim();
            let unquoted = [('"', '"'), ('\'', '\'')]
                .iter()
                .find_map(|(open, close)| {
                    value
                        .strip_prefix(*open)
                        .and_then(|v| v.strip_suffix(*close))
                })
                .unwrap_or(value);
            Some((key.trim().to_owned(), unquoted.to_owned()))
        })
        .collect()
}

/// JSONC to JSON: `//` and `/* */` comments and trailing commas removed, strings untouched.
/// Positions of what remains do not move on a line (comments become spaces), so a JSON error
/// still points at the right line and column.
fn strip_jsonc(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            out.push(b);
            if b == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1]);
                i += 1;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                out.push(b);
                i += 1;
            }
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                for &c in &bytes[i..end] {
                    out.push(if c == b'\n' { b'\n' } else { b' ' });
                }
                i = end;
            }
            (b',', _) => {
                let next = next_significant(bytes, i + 1);
                out.push(if matches!(next, Some(b'}' | b']')) {
                    b' '
                } else {
                    b','
                });
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes: the text is still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// The first byte at or after `i` that is neither blank nor inside a comment.
fn next_significant(bytes: &[u8], mut i: usize) -> Option<u8> {
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (c, _) if c.is_ascii_whitespace() => i += 1,
            (b'/', Some(b'/')) => {
                i = bytes[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(bytes.len(), |p| i + p);
            }
            (b'/', Some(b'*')) => {
                i = bytes[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(bytes.len(), |p| i + 2 + p + 2);
            }
            (c, _) => return Some(c),
        }
    }
    None
}

/// The `Options` of a configured server: `base` plus its environment and working directory.
pub fn options_for(server: &ConfiguredServer, base: &Options) -> Options {
    let mut options = base.clone();
    options.env.extend(server.env.iter().cloned());
    options.cwd = server.cwd.clone().or(options.cwd);
    options.secrets.extend(server.secrets.iter().cloned());
    options
}

#[cfg(test)]
mod tests;
