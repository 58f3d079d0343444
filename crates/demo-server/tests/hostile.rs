//! Hostile servers: every misbehaviour ends in a clear error within the timeout, and the server
//! process never outlives the connection. Plus fidelity: unknown fields survive a live fetch.

// Helpers shared by the tests fail loudly, like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use mcp_recovery_client::{ClientError, Connection, Options};
use serde_json::Value;
use support::{SERVER, alive, args, fixture, quick};

/// Connects (the handshake always succeeds: hostility starts at `tools/list`), lists the tools,
/// closes, and checks the process is gone and the whole thing stayed within bounds.
fn list_hostile(mode: &str, options: &Options) -> ClientError {
    let started = Instant::now();
    let mut connection =
        Connection::stdio(SERVER, &args(&["--hostile", mode]), options).expect("handshake");
    let pid = connection.pid().unwrap();
    let error = connection
        .list_tools()
        .expect_err("a hostile server must fail");
    connection.close();
    assert!(!alive(pid), "{mode}: the server outlived the connection");
    // Generous bound: the point is that nothing waits for the 30 s default or forever.
    let bound = options.timeout + options.shutdown_grace + Duration::from_secs(8);
    assert!(
        started.elapsed() < bound,
        "{mode}: took {:?}",
        started.elapsed()
    );
    error
}

#[test]
fn hang_times_out_and_the_server_is_killed() {
    let error = list_hostile("hang", &quick());
    assert!(matches!(error, ClientError::Timeout { ref method, .. } if method == "tools/list"));
    assert!(
        error
            .to_string()
            .starts_with("no answer to `tools/list` within 2s"),
        "{error}"
    );
}

#[test]
fn crash_reports_status_and_stderr() {
    let error = list_hostile("crash", &quick());
    let message = error.to_string();
    assert!(
        message.starts_with("the server exited (exit status: 3) before it answered `tools/list`"),
        "{message}"
    );
    assert!(
        message.ends_with("| fatal: catalog database is locked"),
        "{message}"
    );
}

#[test]
fn garbage_on_stdout_is_quoted() {
    let error = list_hostile("garbage", &quick());
    assert!(matches!(error, ClientError::Protocol { .. }), "{error}");
    let first_line = error
        .to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        first_line.starts_with(
            "protocol error while waiting for `tools/list`: line 3 of stdout is not JSON: \
             `Server listening on port 8080`"
        ),
        "{first_line}"
    );
}

/// A member written twice means nothing for sure: the list is refused, never read one way.
#[test]
fn a_member_written_twice_is_a_protocol_error() {
    let error = list_hostile("repeated-name", &quick());
    assert!(matches!(error, ClientError::Protocol { .. }), "{error}");
    assert!(
        error.to_string().starts_with(
            "protocol error while waiting for `tools/list`: line 3 of stdout: some object in it \
             writes a member name twice"
        ),
        "{error}"
    );
}

#[test]
fn endless_pagination_stops_at_the_page_limit() {
    let options = Options {
        max_pages: 50,
        ..quick()
    };
    let error = list_hostile("endless-pages", &options);
    assert!(
        matches!(error, ClientError::TooManyPages { limit: 50 }),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "`tools/list` still had a next cursor after 50 pages"
    );
}

#[test]
fn endless_pagination_stops_at_the_default_limit() {
    let options = Options {
        max_pages: Options::default().max_pages,
        ..quick()
    };
    let error = list_hostile("endless-pages", &options);
    assert!(
        matches!(error, ClientError::TooManyPages { limit: 10_000 }),
        "{error}"
    );
}

#[test]
fn a_repeated_cursor_is_a_loop() {
    let error = list_hostile("repeat-cursor", &quick());
    assert_eq!(
        error.to_string(),
        "pagination loop: `tools/list` returned the cursor \"again\" a second time (page 2)"
    );
}

#[test]
fn huge_answers_hit_the_size_cap() {
    let options = Options {
        max_message_bytes: 1024 * 1024,
        ..quick()
    };
    let error = list_hostile("huge", &options);
    assert!(
        matches!(
            error,
            ClientError::TooLarge {
                limit: 1_048_576,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().starts_with(
            "line 3 of the server's stdout while waiting for `tools/list` is larger than the limit of 1048576 bytes"
        ),
        "{error}"
    );
}

#[test]
fn server_requests_and_notifications_do_not_confuse_the_client() {
    // The chatty server answers only after the client answered its ping.
    let mut connection =
        Connection::stdio(SERVER, &args(&["--hostile", "chatty"]), &quick()).unwrap();
    assert_eq!(
        connection.list_tools().unwrap(),
        mcp_recovery_demo_server::tools()
    );
    let state = connection
        .call_tool("get_state", serde_json::json!({}))
        .unwrap();
    assert_eq!(state["structuredContent"]["inventory"]["sku-widget"], 10);
}

#[test]
fn later_requests_after_a_crash_fail_the_same_way() {
    let mut connection =
        Connection::stdio(SERVER, &args(&["--hostile", "crash"]), &quick()).unwrap();
    let first = connection.list_tools().unwrap_err();
    let second = connection
        .call_tool("get_state", serde_json::json!({}))
        .unwrap_err();
    assert!(matches!(first, ClientError::Exited { .. }));
    assert!(
        matches!(second, ClientError::Exited { ref method, .. } if method == "tools/call"),
        "{second}"
    );
}

#[test]
fn unknown_fields_survive_a_live_fetch() {
    let path = fixture("fidelity-tools.json");
    let declared: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for page_size in ["0", "1"] {
        let mut connection = Connection::stdio(
            SERVER,
            &args(&["--tools-file", &path, "--page-size", page_size]),
            &quick(),
        )
        .unwrap();
        let fetched = connection.list_tools().unwrap();
        assert_eq!(fetched, declared);
        // Same text too: member order and number forms survive.
        assert_eq!(fetched.to_string(), declared.to_string());
        assert_eq!(
            fetched["tools"][0]["annotations"]["recovery"]["x-note"],
            "unknown key inside recovery"
        );
        assert_eq!(fetched["tools"][0]["x-vendor-category"], "facilities");
    }
}
