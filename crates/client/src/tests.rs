use std::time::Duration;

use crate::target::redact_url;
use crate::{ClientError, Connection, Header, Options, Target};

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
    assert_eq!(http.to_string(), "https://u:***@example.test:8443/mcp?x=1");
    assert!(!format!("{http:?}").contains("s3cret"));
    assert_eq!(redact_url("http://h/p@q"), "http://h/p@q");
    assert_eq!(redact_url("http://user@h/"), "http://user@h/");
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
