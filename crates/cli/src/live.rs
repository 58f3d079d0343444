//! Live servers (`--stdio -- CMD ARGS...`, `--url URL [--header 'K: V']...`): fetch the merged
//! tools/list exactly as sent, through `mcp-recovery-client`.

use std::time::Duration;

use mcp_recovery_client::{ClientError, Header, Options, Target, fetch_tools};
use serde_json::Value;

use mcp_recovery_validator::escape_controls;

use crate::cli::ServerArgs;

/// A server named by the flags, ready to be fetched.
#[derive(Debug, Clone)]
pub struct Server {
    target: Target,
    options: Options,
    name: String,
}

impl Server {
    /// The server of the flags, or `None` when no server is named (lint files instead).
    pub fn from_args(args: &ServerArgs) -> Result<Option<Self>, ClientError> {
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
                .collect::<Result<_, _>>()?;
            Target::Http {
                url: url.clone(),
                headers,
            }
        } else {
            return Ok(None);
        };
        let options = Options {
            timeout: Duration::from_secs(args.timeout),
            ..Options::default()
        };
        let name = args.name.clone().unwrap_or_else(|| default_name(&target));
        let name = escape_controls(&name).into_owned();
        Ok(Some(Self {
            target,
            options,
            name,
        }))
    }

    /// How the server is named in output (`file` of its diagnostics, the subject of its errors),
    /// made inert.
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// Where the server is.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The connection limits of the flags.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The complete tools/list result, all pages merged, every field as the server sent it.
    pub fn fetch(&self) -> Result<Value, ClientError> {
        fetch_tools(&self.target, &self.options)
    }
}

/// The name of a server without anything that may be secret: `stdio:PROGRAM` (the arguments and
/// any `VAR=value` are left out), or the URL reduced to scheme, host, port and path (no user,
/// password, query or fragment).
pub fn default_name(target: &Target) -> String {
    match target {
        Target::Stdio { program, .. } => format!("stdio:{program}"),
        Target::Http { url, .. } => url_name(url),
    }
}

fn url_name(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let rest = &rest[..end];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if scheme.is_empty() {
        format!("{host}{path}")
    } else {
        format!("{scheme}://{host}{path}")
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
        for (url, name) in [
            (
                "https://u:pw@h.example:8443/mcp?key=SECRET#frag",
                "https://h.example:8443/mcp",
            ),
            (
                "http://h.example/mcp/?token=SECRET",
                "http://h.example/mcp/",
            ),
            ("http://tok@h.example", "http://h.example"),
            ("https://h.example/p@q", "https://h.example/p@q"),
        ] {
            let target = Target::Http {
                url: url.into(),
                headers: Vec::new(),
            };
            assert_eq!(default_name(&target), name, "{url}");
        }
    }
}
