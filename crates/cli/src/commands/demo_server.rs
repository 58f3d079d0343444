//! `demo-server` (hidden): the demo's checkout MCP server, which `demo` starts as its child.

use std::io::Write;
use std::process::ExitCode;

use serde_json::Value;

use crate::Failure;
use crate::args::demo::DemoServerArgs;

/// Runs the demo server on stdio or Streamable HTTP (the hidden `demo-server` subcommand).
pub fn run(args: &DemoServerArgs) -> Result<ExitCode, Failure> {
    let mut config = mcp_recovery_demo_server::Config {
        call_log: args.call_log.clone(),
        slow: args.slow.clone(),
        revisions: args.revisions,
        ..mcp_recovery_demo_server::Config::default()
    };
    if args.undeclared {
        for tool in &mut config.tools {
            if let Value::Object(tool) = tool {
                tool.remove("_meta");
                if let Some(Value::Object(annotations)) = tool.get_mut("annotations") {
                    annotations.remove("recovery");
                }
            }
        }
    }
    let server = mcp_recovery_demo_server::Server::new(config);
    if let Some(address) = args.http {
        use mcp_recovery_demo_server::http::HttpServer;
        let listener = HttpServer::bind(address)?;
        // The URL alone on the first line, for scripts and tests.
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "http://{}/mcp", listener.local_addr()?)?;
        stdout.flush()?;
        drop(stdout);
        std::sync::Arc::new(HttpServer::new(server, args.sse)).serve(&listener)?;
        return Ok(ExitCode::SUCCESS);
    }
    mcp_recovery_demo_server::stdio::serve(
        &server,
        args.hostile,
        std::io::stdin().lock(),
        std::io::stdout().lock(),
    )?;
    Ok(ExitCode::SUCCESS)
}
