//! Tests of `client_config`.

use super::*;

fn parse(text: &str) -> ClientConfig {
    let inputs = [("api-key".to_owned(), "k-123456".to_owned())].into();
    ClientConfig::parse(Path::new("/work/proj/.vscode/mcp.json"), text, inputs).unwrap()
}

#[test]
fn claude_cursor_and_vscode_shapes() {
    let claude = parse(
        r#"{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@m/server"],
            "env": {"DEBUG": "1"}}, "remote": {"url": "https://h/mcp",
            "headers": {"Authorization": "Bearer ${input:api-key}"}}}}"#,
    );
    assert_eq!(claude.names(), ["memory", "remote"]);
    let memory = claude.server("memory").unwrap();
    assert!(matches!(&memory.target, Target::Stdio { program, args }
        if program == "npx" && args == &["-y", "@m/server"]));
    assert_eq!(memory.env, [("DEBUG".to_owned(), "1".to_owned())]);
    let remote = claude.server("remote").unwrap();
    let Target::Http { url, headers } = &remote.target else {
        panic!("not http")
    };
    assert_eq!(url, "https://h/mcp");
    assert_eq!(headers[0].value(), "Bearer k-123456");

    let vscode = parse(
        r#"{
          // VS Code writes JSONC
          "inputs": [{"type": "promptString", "id": "api-key", "password": true}],
          "servers": {
            "fs": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/s.js"],
                   "cwd": "sub", /* relative to the workspace */},
          },
        }"#,
    );
    let fs = vscode.server("fs").unwrap();
    assert!(matches!(&fs.target, Target::Stdio { args, .. } if args == &["/work/proj/s.js"]));
    assert_eq!(fs.cwd, Some(PathBuf::from("/work/proj/sub")));
}

#[test]
fn mistakes_name_file_server_and_pointer() {
    let config = parse(
        r#"{"mcpServers": {"a/b": {"command": "x", "args": ["ok", {}]},
            "c": {"url": "ftp://x"}, "d": {"command": "x", "env": {"K": "${input:nope}"}},
            "e": {"type": "sse", "url": "http://h/sse"}, "f": {"command": "${bogus}"}}}"#,
    );
    let message = |name: &str| config.server(name).unwrap_err().to_string();
    assert_eq!(
        message("a/b"),
        "/work/proj/.vscode/mcp.json: server \"a/b\" at /mcpServers/a~1b/args/1: an \
         argument must be a string"
    );
    assert!(message("c").contains("at /mcpServers/c/url: `url` must start with http"));
    assert!(message("d").contains("/mcpServers/d/env/K: `${input:nope}` has no value"));
    assert!(message("e").contains("/mcpServers/e/type: the HTTP+SSE transport"));
    assert!(message("f").contains("unknown placeholder `${bogus}`"));
    assert!(
        config
            .server("zzz")
            .unwrap_err()
            .to_string()
            .contains("no server named \"zzz\" (the config has: a/b, c, d, e, f)")
    );
}

#[test]
fn detection_and_jsonc() {
    assert!(looks_like_client_config(r#"{"mcpServers": {}}"#));
    assert!(looks_like_client_config(
        "{\"mcp\": {\"servers\": {}}, // x\n}"
    ));
    assert!(!looks_like_client_config("ignore = [\"R101\"]"));
    assert!(!looks_like_client_config(r#"{"tools": []}"#));
    assert_eq!(
        strip_jsonc(r#"{"a": "// not a comment", }"#),
        r#"{"a": "// not a comment"  }"#
    );
    assert_eq!(
        parse_env_file("# c\nexport A=\"1 2\"\nB='x'\nC=plain\n\nbad"),
        [
            ("A".into(), "1 2".into()),
            ("B".into(), "x".into()),
            ("C".into(), "plain".into())
        ]
    );
}
