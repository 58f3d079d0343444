//! Prints a live server's merged `tools/list`.
//!
//! ```sh
//! cargo run -p mcp-recovery-client --example fetch -- npx -y @modelcontextprotocol/server-memory
//! cargo run -p mcp-recovery-client --example fetch -- --url http://127.0.0.1:8808/mcp
//! ```

use std::process::ExitCode;

use mcp_recovery_client::{Options, Target, fetch_tools};

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let target = match args.first().map(String::as_str) {
        None => {
            eprintln!("usage: fetch CMD [ARGS...] | fetch --url URL");
            return ExitCode::from(2);
        }
        Some("--url") => Target::Http {
            url: args.get(1).cloned().unwrap_or_default(),
            headers: Vec::new(),
        },
        Some(_) => {
            let program = args.remove(0);
            Target::Stdio { program, args }
        }
    };
    match fetch_tools(&target, &Options::default()) {
        Ok(tools) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&tools).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{target}: {error}");
            ExitCode::from(2)
        }
    }
}
