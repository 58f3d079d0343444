//! stdio servers scripted in POSIX sh: one per protocol revision, and servers that misbehave in
//! the ways a process can (grandchildren holding the pipes, exiting early, slow pagination,
//! echoing the environment).

// Helpers shared by the tests fail loudly, like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::{Duration, Instant};

use mcp_recovery_client::{ClientError, Connection, Negotiation, Options};

/// Reads one request per line; `$id` is the request id (empty for notifications). The sourcing
/// script defines `answer`, which prints the response.
const LOOP: &str = r#"
reply() { printf '{"jsonrpc":"2.0","id":%s,%s}\n' "$id" "$1"; }
fail() { reply "\"error\":{\"code\":$1,\"message\":\"$2\"}"; }
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  [ -n "$id" ] || continue
  answer
done
"#;

const TOOLS: &str = r#"{"tools":[{"name":"only","inputSchema":{"type":"object"}}]}"#;

/// Only 2026-07-28: `server/discover`, and every request must name the version in `_meta`.
const SPEAKS_2026: &str = r#"
answer() {
  case "$line" in
    *'"io.modelcontextprotocol/protocolVersion":"2026-07-28"'*) ;;
    *) fail -32602 "params._meta must name protocol version 2026-07-28"; return ;;
  esac
  case "$line" in
    *'"method":"server/discover"'*)
      reply '"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"cacheScope":"public","ttlMs":0,"resultType":"complete"}' ;;
    *'"method":"tools/list"'*) reply "\"result\":$(cat tools.json)" ;;
    *) fail -32601 "method not found" ;;
  esac
}
"#;

/// Only 2025-11-25: `server/discover` is an unknown method; no `_meta` version is expected.
const SPEAKS_2025_11_25: &str = r#"
answer() {
  case "$line" in
    *'"method":"initialize"'*)
      reply '"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}' ;;
    *'io.modelcontextprotocol/protocolVersion'*) fail -32602 "unexpected _meta" ;;
    *'"method":"tools/list"'*) reply "\"result\":$(cat tools.json)" ;;
    *) fail -32601 "method not found" ;;
  esac
}
"#;

/// Only 2025-03-26: anything before `initialize` is an invalid request; it answers with its
/// own version whatever the client asks.
const SPEAKS_2025_03_26: &str = r#"
ready=
answer() {
  case "$line" in
    *'"method":"initialize"'*) ready=1
      reply '"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}' ;;
    *) [ -n "$ready" ] || { fail -32600 "received request before initialization was complete"; return; }
       case "$line" in
         *'"method":"tools/list"'*) reply "\"result\":$(cat tools.json)" ;;
         *) fail -32601 "method not found" ;;
       esac ;;
  esac
}
"#;

/// A directory holding `server.sh` (the `answer` function `script`, then the loop) and
/// `tools.json`.
fn server(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.sh"), format!("{script}\n{LOOP}")).unwrap();
    std::fs::write(dir.path().join("tools.json"), TOOLS).unwrap();
    dir
}

fn in_dir(dir: &Path) -> Options {
    Options {
        timeout: Duration::from_secs(5),
        shutdown_grace: Duration::from_millis(200),
        cwd: Some(dir.to_path_buf()),
        ..Options::default()
    }
}

fn sh(script: &str, options: &Options) -> Result<Connection, ClientError> {
    Connection::stdio("sh", &["-c".to_string(), script.to_string()], options)
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        // A zombie has exited; only its parent's bookkeeping is left.
        .is_ok_and(|stat| !stat.contains(") Z "))
}

#[test]
fn each_revision_is_spoken_as_the_server_speaks_it() {
    for (script, version, negotiation) in [
        (SPEAKS_2026, "2026-07-28", Negotiation::Discover),
        (SPEAKS_2025_11_25, "2025-11-25", Negotiation::Initialize),
        (SPEAKS_2025_03_26, "2025-03-26", Negotiation::Initialize),
    ] {
        let dir = server(script);
        let mut connection =
            Connection::stdio("sh", &["server.sh".to_string()], &in_dir(dir.path()))
                .unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(connection.protocol_version(), version);
        assert_eq!(connection.negotiation(), negotiation);
        let tools = connection
            .list_tools()
            .unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(tools["tools"][0]["name"], "only", "{version}");
        connection.close();
    }
}

#[test]
fn env_and_cwd_reach_the_server_and_env_values_are_never_shown() {
    let dir = server(SPEAKS_2025_11_25);
    // The server prints its secret to stderr and into a tool description, then dies.
    let echo = r#"{"tools":[{"name":"t","description":"token TOKEN_VALUE","inputSchema":{"type":"object"}}]}"#
        .replace("TOKEN_VALUE", "${API_TOKEN}");
    let script = format!(
        "echo \"starting with $API_TOKEN in $(basename \"$PWD\")\" >&2\n\
         printf '%s' \"{}\" > tools.json\n. ./server.sh",
        echo.replace('"', "\\\"")
    );
    let options = Options {
        env: vec![("API_TOKEN".into(), "tok-9f8e7d".into())],
        ..in_dir(dir.path())
    };
    let mut connection = sh(&script, &options).unwrap();
    let tools = connection.list_tools().unwrap();
    assert_eq!(tools["tools"][0]["description"], "token ***");
    let tail = connection.stderr_tail();
    let name = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert_eq!(tail.lines(), [format!("starting with *** in {name}")]);

    let crash = "echo \"config: API_TOKEN=$API_TOKEN is invalid\" >&2; exit 4";
    let error = sh(crash, &options).unwrap_err();
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("tok-9f8e7d"), "{shown}");
    assert!(shown.contains("API_TOKEN=*** is invalid"), "{shown}");

    let missing = Options {
        cwd: Some(dir.path().join("nowhere")),
        ..in_dir(dir.path())
    };
    let error = sh("exit 0", &missing).unwrap_err();
    assert!(
        error.to_string().contains("the working directory")
            && error.to_string().contains("nowhere"),
        "{error}"
    );
}

#[test]
fn a_grandchild_holding_stdout_does_not_outlive_the_connection() {
    let dir = server(SPEAKS_2025_11_25);
    // The server starts a helper that keeps the inherited stdout and stderr open and runs on.
    let script = "sleep 300 & echo $! > helper.pid\n. ./server.sh";
    let mut connection = sh(script, &in_dir(dir.path())).unwrap();
    connection.list_tools().unwrap();
    let helper = helper_pid(dir.path());
    assert!(alive(helper));
    let started = Instant::now();
    connection.close();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_ends(helper);
}

/// The pid the script wrote to `helper.pid`.
fn helper_pid(dir: &Path) -> u32 {
    let text = std::fs::read_to_string(dir.join("helper.pid")).unwrap();
    text.trim().parse().unwrap()
}

/// Waits up to 2 s for `pid` to end.
fn assert_ends(pid: u32) {
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !alive(pid)
    });
    assert!(gone, "the server's helper {pid} outlived the connection");
}

#[test]
fn a_child_that_exits_while_a_grandchild_holds_the_pipe_is_reported_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        timeout: Duration::from_secs(30),
        ..in_dir(dir.path())
    };
    let started = Instant::now();
    let error = sh(
        "sleep 300 & echo $! > helper.pid; echo 'bad config' >&2; exit 3",
        &options,
    )
    .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert!(matches!(error, ClientError::Exited { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("the server exited (exit status: 3) before it answered `server/discover`"),
        "{error}"
    );
    assert!(error.to_string().contains("| bad config"), "{error}");
    assert_ends(helper_pid(dir.path()));
}

#[test]
fn slow_pagination_stops_at_the_total_deadline() {
    // Each page takes 300 ms, well under the per-request limit, and there is always another.
    let endless = r#"
answer() {
  case "$line" in
    *'"method":"initialize"'*)
      reply '"result":{"protocolVersion":"2025-11-25","capabilities":{}}' ;;
    *'"method":"tools/list"'*) sleep 0.3
      reply "\"result\":{\"tools\":[],\"nextCursor\":\"c$id\"}" ;;
    *) fail -32601 "method not found" ;;
  esac
}
"#;
    let dir = server(endless);
    let options = Options {
        timeout: Duration::from_secs(2),
        total_timeout: Duration::from_secs(2),
        ..in_dir(dir.path())
    };
    let started = Instant::now();
    let mut connection = Connection::stdio("sh", &["server.sh".to_string()], &options).unwrap();
    let error = connection.list_tools().unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(error, ClientError::DeadlineExceeded { .. }),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "the total time limit of 2s ran out while waiting for `tools/list`"
    );
}

#[test]
fn the_total_size_is_capped_across_pages() {
    // Every page is small, but there is always another one.
    let endless = r#"
pad=$(printf '%01000d' 0)
answer() {
  case "$line" in
    *'"method":"initialize"'*)
      reply '"result":{"protocolVersion":"2025-11-25","capabilities":{}}' ;;
    *'"method":"tools/list"'*)
      reply "\"result\":{\"tools\":[{\"name\":\"t$id\",\"description\":\"$pad\"}],\"nextCursor\":\"c$id\"}" ;;
    *) fail -32601 "method not found" ;;
  esac
}
"#;
    let dir = server(endless);
    let options = Options {
        max_total_bytes: 20_000,
        ..in_dir(dir.path())
    };
    let mut connection = Connection::stdio("sh", &["server.sh".to_string()], &options).unwrap();
    let error = connection.list_tools().unwrap_err();
    assert!(
        matches!(error, ClientError::TooLarge { limit: 20_000, .. }),
        "{error}"
    );
    assert!(
        error.to_string().starts_with(
            "everything the server wrote to stdout while waiting for `tools/list` is larger \
             than the limit of 20000 bytes"
        ),
        "{error}"
    );
}
