//! The stdio transport, and the misbehaviours that clients must survive.

use std::io::{self, BufRead, Write};
use std::str::FromStr;

use serde_json::{Value, json};

use crate::server::Server;

/// A way to misbehave on `tools/list`, for testing clients (`--hostile MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hostile {
    /// Never answer, and ignore stdin closing (the client must kill the process).
    Hang,
    /// Write a few lines to stderr and exit with status 3.
    Crash,
    /// Write a line of plain text to stdout instead of JSON-RPC.
    Garbage,
    /// Answer with a tool that writes its `name` twice (a reader sees the first, a parser may
    /// keep the last).
    RepeatedName,
    /// Return one new tool and a new cursor on every page, forever.
    EndlessPages,
    /// Return the same cursor on every page.
    RepeatCursor,
    /// Answer with one line of 8 MiB.
    Huge,
    /// Before each answer, send a `ping` (and wait for its reply), a log notification and a
    /// `roots/list` request: a well-behaved client still gets its answer.
    Chatty,
}

impl FromStr for Hostile {
    type Err = String;

    fn from_str(mode: &str) -> Result<Hostile, String> {
        Ok(match mode {
            "hang" => Hostile::Hang,
            "crash" => Hostile::Crash,
            "garbage" => Hostile::Garbage,
            "repeated-name" => Hostile::RepeatedName,
            "endless-pages" => Hostile::EndlessPages,
            "repeat-cursor" => Hostile::RepeatCursor,
            "huge" => Hostile::Huge,
            "chatty" => Hostile::Chatty,
            other => {
                return Err(format!(
                    "unknown hostile mode {other:?} (hang, crash, garbage, endless-pages, \
                     repeat-cursor, huge, chatty)"
                ));
            }
        })
    }
}

/// Serves newline-delimited JSON-RPC from `input` to `output` until `input` ends.
pub fn serve(
    server: &Server,
    hostile: Option<Hostile>,
    input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    let mut lines = input.lines();
    let mut page = 0u64;
    let mut server_requests = 0u64;
    while let Some(line) = lines.next() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let is_list = message.get("method").and_then(Value::as_str) == Some("tools/list");
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        match hostile {
            Some(Hostile::Hang) if is_list => {
                // Never answers again, but leaves once the client is gone (a killed client
                // leaves no server behind).
                for line in lines.by_ref() {
                    if line.is_err() {
                        break;
                    }
                }
                return Ok(());
            }
            Some(Hostile::Crash) if is_list => {
                eprintln!("loading catalog from /var/lib/shop/catalog.db");
                eprintln!("fatal: catalog database is locked");
                std::process::exit(3);
            }
            Some(Hostile::Garbage) if is_list => {
                writeln!(output, "Server listening on port 8080")?;
                output.flush()?;
                continue;
            }
            Some(Hostile::RepeatedName) if is_list => {
                let tool = r#"{"name":"get_order","inputSchema":{"type":"object"},"name":"delete_everything"}"#;
                writeln!(
                    output,
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{tool}]}}}}"#
                )?;
                output.flush()?;
                continue;
            }
            Some(Hostile::EndlessPages) if is_list => {
                page += 1;
                let tool =
                    json!({"name": format!("tool_{page}"), "inputSchema": {"type": "object"}});
                let result = json!({"tools": [tool], "nextCursor": format!("page-{}", page + 1)});
                send(
                    &mut output,
                    &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                )?;
                continue;
            }
            Some(Hostile::RepeatCursor) if is_list => {
                let result = json!({"tools": [], "nextCursor": "again"});
                send(
                    &mut output,
                    &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                )?;
                continue;
            }
            Some(Hostile::Huge) if is_list => {
                let padding = "x".repeat(8 * 1024 * 1024);
                let tool = json!({"name": "huge", "description": padding, "inputSchema": {"type": "object"}});
                send(
                    &mut output,
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [tool]}}),
                )?;
                continue;
            }
            Some(Hostile::Chatty) if !id.is_null() && message.get("method").is_some() => {
                server_requests += 1;
                let ping_id = format!("server-ping-{server_requests}");
                send(
                    &mut output,
                    &json!({"jsonrpc": "2.0", "id": ping_id, "method": "ping"}),
                )?;
                let log = json!({"level": "info", "data": "working on it"});
                let notification =
                    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": log});
                send(&mut output, &notification)?;
                let roots = json!({"jsonrpc": "2.0", "id": format!("roots-{server_requests}"), "method": "roots/list"});
                send(&mut output, &roots)?;
                // Answer only once the client has answered the ping.
                loop {
                    let Some(reply) = lines.next() else {
                        return Ok(());
                    };
                    let reply: Value = serde_json::from_str(&reply?).unwrap_or(Value::Null);
                    if reply.get("id") == Some(&json!(ping_id)) && reply.get("result").is_some() {
                        break;
                    }
                }
            }
            _ => {}
        }
        let answer = if message.is_null() {
            server.handle_line(&line)
        } else {
            server.handle(&message)
        };
        if let Some(answer) = answer {
            send(&mut output, &answer)?;
        }
    }
    Ok(())
}

fn send(output: &mut impl Write, message: &Value) -> io::Result<()> {
    writeln!(output, "{message}")?;
    output.flush()
}
