//! Live servers (`--stdio -- CMD ARGS...`, `--url URL [--header 'K: V']...`): fetch the merged
//! tools/list exactly as sent, through `mcp-recovery-client`.

use std::time::Duration;

use mcp_recovery_client::{ClientError, Connection, Header, Options, Target, fetch_tools};
use serde_json::Value;

use crate::cli::ServerArgs;

/// A server named by the flags, ready to be fetched.
#[derive(Debug, Clone)]
pub struct Server {
    target: Target,
    options: Options,
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
        Ok(Some(Self { target, options }))
    }

    /// How the server is named in output (`file` of its diagnostics): the shell-quoted command
    /// line or the URL without its password.
    pub fn name(&self) -> String {
        self.target.to_string()
    }

    /// The complete tools/list result, all pages merged, every field as the server sent it.
    pub fn fetch(&self) -> Result<Value, ClientError> {
        fetch_tools(&self.target, &self.options)
    }

    /// [`Self::fetch`], with the name the server gives itself (`serverInfo.name`), if any.
    pub fn fetch_named(&self) -> Result<(Value, Option<String>), ClientError> {
        let mut connection = Connection::open(&self.target, &self.options)?;
        let tools = connection.list_tools();
        let name = connection
            .initialize_result()
            .pointer("/serverInfo/name")
            .and_then(Value::as_str)
            .map(str::to_owned);
        connection.close();
        Ok((tools?, name))
    }
}
