//! `mcp-recovery-demo-server`: the checkout demo over stdio (default) or Streamable HTTP.

use std::io::{self, BufReader, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use mcp_recovery_demo_server::http::HttpServer;
use mcp_recovery_demo_server::stdio::{self, Hostile};
use mcp_recovery_demo_server::{Config, Server};
use serde_json::Value;

const USAGE: &str = "\
usage: mcp-recovery-demo-server [OPTIONS]

Serves the checkout demo over stdio (newline-delimited JSON-RPC) unless --http is given.

options:
  --http ADDR               serve Streamable HTTP at http://ADDR/mcp (loopback only, e.g.
                            127.0.0.1:0 picks a free port); the URL is the first stdout line
  --sse                     with --http: answer as text/event-stream instead of JSON
  --page-size N             tools per tools/list page (default: all on one page)
  --tools-file PATH         announce the tools of this JSON file ({\"tools\": [...]} or [...])
  --protocol-version V      answer initialize with V whatever the client asks
  --revisions R             2025-11-25 (default: initialize), 2026-07-28 (per-request
                            versions and server/discover, no initialize) or both
  --call-log PATH           append each tools/call (name, arguments) to PATH as a JSON line
  --slow TOOL=MS            wait MS milliseconds before answering calls to TOOL (repeatable)
  --hostile MODE            stdio only: misbehave on tools/list (hang, crash, garbage,
                            repeated-name, endless-pages, repeat-cursor, huge, chatty)
  -h, --help                show this help";

struct Args {
    http: Option<SocketAddr>,
    sse: bool,
    hostile: Option<Hostile>,
    config: Config,
}

fn parse_args(mut argv: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut args = Args {
        http: None,
        sse: false,
        hostile: None,
        config: Config::default(),
    };
    while let Some(flag) = argv.next() {
        let mut value = |name: &str| argv.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--http" => {
                let address = value("--http")?;
                let parsed = address
                    .parse()
                    .map_err(|_| format!("--http: {address:?} is not IP:PORT"))?;
                args.http = Some(parsed);
            }
            "--sse" => args.sse = true,
            "--page-size" => {
                let n = value("--page-size")?;
                args.config.page_size = n
                    .parse()
                    .map_err(|_| format!("--page-size: {n:?} is not a number"))?;
            }
            "--tools-file" => args.config.tools = read_tools(&value("--tools-file")?)?,
            "--protocol-version" => {
                args.config.protocol_version = Some(value("--protocol-version")?)
            }
            "--revisions" => args.config.revisions = value("--revisions")?.parse()?,
            "--hostile" => args.hostile = Some(value("--hostile")?.parse()?),
            "--call-log" => args.config.call_log = Some(value("--call-log")?.into()),
            "--slow" => {
                let spec = value("--slow")?;
                let parsed = spec
                    .split_once('=')
                    .and_then(|(tool, ms)| Some((tool.to_owned(), ms.parse().ok()?)));
                let Some(slow) = parsed else {
                    return Err(format!("--slow: {spec:?} is not TOOL=MILLISECONDS"));
                };
                args.config.slow.push(slow);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.hostile.is_some() && args.http.is_some() {
        return Err("--hostile works on stdio only".into());
    }
    Ok(Some(args))
}

fn read_tools(path: &str) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    match serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))? {
        Value::Array(tools) => Ok(tools),
        Value::Object(mut map) => match map.remove("tools") {
            Some(Value::Array(tools)) => Ok(tools),
            _ => Err(format!(
                "{path}: expected {{\"tools\": [...]}} or an array of tools"
            )),
        },
        _ => Err(format!(
            "{path}: expected {{\"tools\": [...]}} or an array of tools"
        )),
    }
}

fn run(args: Args) -> io::Result<()> {
    let server = Server::new(args.config);
    let Some(address) = args.http else {
        eprintln!("mcp-recovery-demo-server: serving on stdio");
        let stdin = io::stdin().lock();
        return stdio::serve(
            &server,
            args.hostile,
            BufReader::new(stdin),
            io::stdout().lock(),
        );
    };
    let listener = HttpServer::bind(address)?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    // The URL first, alone on its line, so that scripts and tests can read it.
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{url}")?;
    stdout.flush()?;
    drop(stdout);
    eprintln!("mcp-recovery-demo-server: serving Streamable HTTP at {url}");
    Arc::new(HttpServer::new(server, args.sse)).serve(&listener)
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("mcp-recovery-demo-server: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-recovery-demo-server: {e}");
            ExitCode::from(1)
        }
    }
}
