use std::time::Duration;

use crate::{ClientError, Connection, Header, Options, Target, shown_url};

#[test]
fn targets_display_without_secrets() {
    let stdio = Target::Stdio {
        program: "npx".into(),
        args: vec![
            "-y".into(),
            "@scope/server".into(),
            "it's here".into(),
            String::new(),
        ],
    };
    assert_eq!(stdio.to_string(), r"npx -y @scope/server 'it'\''s here' ''");
    let header = Header::new("Authorization", "Bearer s3cret").unwrap();
    let http = Target::Http {
        url: "https://u:pw@example.test:8443/mcp?x=1".into(),
        headers: vec![header],
    };
    assert_eq!(http.to_string(), "https://example.test:8443/mcp");
    assert!(!format!("{http:?}").contains("s3cret"));
    for (url, shown) in [
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
        ("http://h.example#x?y", "http://h.example"),
    ] {
        assert_eq!(shown_url(url), shown, "{url}");
    }
}

#[test]
fn spawn_failure_names_the_program() {
    let error = Connection::stdio("/nonexistent/mcp-server", &[], &Options::default()).unwrap_err();
    assert!(matches!(error, ClientError::Spawn { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("could not start `/nonexistent/mcp-server`: ")
    );
}

#[test]
fn a_silent_server_times_out_and_is_killed() {
    let options = Options {
        timeout: Duration::from_secs(1),
        shutdown_grace: Duration::from_millis(100),
        ..Options::default()
    };
    let args = [
        "-c".to_string(),
        "echo starting >&2; exec sleep 30".to_string(),
    ];
    let error = Connection::stdio("sh", &args, &options).unwrap_err();
    assert_eq!(
        error.to_string(),
        "no answer to `initialize` within 1s\n  last lines of the server's stderr:\n  | starting"
    );
}

#[test]
fn a_server_that_exits_at_once_reports_status_and_stderr() {
    let args = [
        "-c".to_string(),
        "echo 'config file missing' >&2; exit 3".to_string(),
    ];
    let error = Connection::stdio("sh", &args, &Options::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the server exited (exit status: 3) before it answered `server/discover`\n  \
         last lines of the server's stderr:\n  | config file missing"
    );
}
