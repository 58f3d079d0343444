//! Tests of `server_json`.

use super::*;
use serde_json::json;

use crate::allowed_hosts::{AllowedHosts, allowed_host};

fn plan(item: Value, env: &[(&str, &str)], docker: bool) -> Result<Planned, NotRun> {
    let lookup = |name: &str| {
        env.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    };
    let docker_fn = || docker;
    let hosts = ["acme.example.com", "h"].map(|h| allowed_host(h).unwrap());
    let allowed = AllowedHosts::new(&hosts);
    let host = Host {
        env: &lookup,
        docker: &docker_fn,
        installed: &|_| true,
        allowed: &allowed,
    };
    match item.get("registryType") {
        Some(_) => package(&item, "/packages/0", &host),
        None => remote(&item, "/remotes/0", &host),
    }
}

fn stdio(planned: &Planned) -> (String, Vec<String>) {
    match &planned.target {
        Target::Stdio { program, args } => (program.clone(), args.clone()),
        Target::Http { .. } => panic!("not stdio"),
    }
}

#[test]
fn npm_and_pypi_packages_run_with_npx_and_uvx() {
    let npm = plan(
        json!({"registryType": "npm", "identifier": "@scope/server", "version": "1.2.3",
               "transport": {"type": "stdio"},
               "packageArguments": [
                   {"type": "positional", "valueHint": "dir", "default": "/tmp"},
                   {"type": "named", "name": "--port", "value": "{port}",
                    "variables": {"port": {"default": "8080"}}},
                   {"type": "named", "name": "--verbose"}]}),
        &[],
        false,
    )
    .unwrap();
    assert_eq!(
        stdio(&npm),
        (
            "npx".into(),
            [
                "-y",
                "@scope/server@1.2.3",
                "/tmp",
                "--port=8080",
                "--verbose"
            ]
            .map(str::to_owned)
            .to_vec()
        )
    );
    let pypi = plan(
        json!({"registryType": "pypi", "identifier": "mcp-server-time", "version": "1.0",
               "transport": {"type": "stdio"},
               "packageArguments": [{"type": "named", "name": "--local-timezone",
                                     "value": "UTC"}]}),
        &[],
        false,
    )
    .unwrap();
    assert_eq!(
        stdio(&pypi),
        (
            "uvx".into(),
            ["mcp-server-time@1.0", "--local-timezone=UTC"]
                .map(str::to_owned)
                .to_vec()
        )
    );
}

#[test]
fn environment_values_are_secrets_and_a_missing_required_one_is_named() {
    let item = json!({"registryType": "npm", "identifier": "s", "transport": {"type": "stdio"},
        "environmentVariables": [
            {"name": "API_KEY", "isRequired": true, "isSecret": true},
            {"name": "REGION", "default": "eu"},
            {"name": "OPTIONAL"}]});
    let planned = plan(item.clone(), &[("API_KEY", "k-0123456789")], false).unwrap();
    assert_eq!(
        planned.env,
        [
            ("API_KEY".to_owned(), "k-0123456789".to_owned()),
            ("REGION".to_owned(), "eu".to_owned())
        ]
    );
    assert_eq!(planned.secrets, ["k-0123456789"]);
    let (status, reason) = plan(item, &[], false).unwrap_err();
    assert_eq!(status, Status::FailedToStart);
    assert_eq!(
        reason,
        "/packages/0/environmentVariables/0: the required environment variable API_KEY is \
         not set: set API_KEY in the environment"
    );
}

#[test]
fn oci_runs_with_docker_when_a_daemon_answers_and_is_skipped_otherwise() {
    let item = json!({"registryType": "oci", "identifier": "docker.io/mcp/time",
        "version": "1.0", "transport": {"type": "stdio"},
        "environmentVariables": [{"name": "TZ", "value": "UTC"}]});
    let planned = plan(item.clone(), &[], true).unwrap();
    assert_eq!(
        stdio(&planned),
        (
            "docker".into(),
            ["run", "-i", "--rm", "-e", "TZ", "docker.io/mcp/time:1.0"]
                .map(str::to_owned)
                .to_vec()
        )
    );
    let (status, reason) = plan(item, &[], false).unwrap_err();
    assert_eq!(status, Status::Skipped);
    assert!(reason.contains("no Docker daemon answers"), "{reason}");
    let nuget = json!({"registryType": "nuget", "identifier": "x",
                       "transport": {"type": "stdio"}});
    assert_eq!(plan(nuget, &[], true).unwrap_err().0, Status::Skipped);
}

#[test]
fn remotes_speak_streamable_http_and_sse_is_skipped() {
    let item = json!({"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
        "variables": {"tenant": {"isRequired": true}},
        "headers": [{"name": "Authorization", "value": "Bearer {token}", "isSecret": true,
                     "variables": {"token": {"isRequired": true, "isSecret": true}}}]});
    let planned = plan(
        item.clone(),
        &[("tenant", "acme"), ("token", "t-0123456789")],
        false,
    )
    .unwrap();
    let Target::Http { url, headers } = &planned.target else {
        panic!("not http")
    };
    assert_eq!(url, "https://acme.example.com/mcp");
    assert_eq!(headers[0].value(), "Bearer t-0123456789");
    assert!(planned.secrets.contains(&"t-0123456789".to_owned()));
    let (_, reason) = plan(item, &[("tenant", "acme")], false).unwrap_err();
    assert!(
        reason.contains("/remotes/0/headers/0/variables/token: the required variable token"),
        "{reason}"
    );
    let sse = json!({"type": "sse", "url": "https://h.example/sse"});
    let (status, reason) = plan(sse, &[], false).unwrap_err();
    assert_eq!(status, Status::Skipped);
    assert!(
        reason.contains(crate::client_config::SSE_NOT_SUPPORTED),
        "{reason}"
    );
    // An undeclared `{name}` stays as written.
    let plain = json!({"type": "streamable-http", "url": "https://h.example/{x}/mcp"});
    let Target::Http { url, .. } = plan(plain, &[], false).unwrap().target else {
        panic!("not http")
    };
    assert_eq!(url, "https://h.example/{x}/mcp");
}

#[test]
fn a_runtime_this_machine_lacks_is_skipped() {
    let lookup = |_: &str| None;
    let docker = || false;
    let only_npx = |program: &str| program == "npx";
    let host = Host {
        env: &lookup,
        docker: &docker,
        installed: &only_npx,
        allowed: &AllowedHosts::default(),
    };
    let npm = json!({"registryType": "npm", "identifier": "x", "transport": {"type": "stdio"}});
    assert!(package(&npm, "/packages/0", &host).is_ok());
    let pypi = json!({"registryType": "pypi", "identifier": "x", "transport": {"type": "stdio"}});
    let (status, reason) = package(&pypi, "/packages/0", &host).unwrap_err();
    assert_eq!(status, Status::Skipped);
    assert_eq!(
        reason,
        "/packages/0: runtime uvx is not installed here (not found on the PATH)"
    );
    // A required value that is missing still fails the entry first.
    let needs = json!({"registryType": "pypi", "identifier": "x", "transport": {"type": "stdio"},
        "environmentVariables": [{"name": "K", "isRequired": true}]});
    assert_eq!(
        package(&needs, "/packages/0", &host).unwrap_err().0,
        Status::FailedToStart
    );
}

#[test]
fn values_no_entry_gives_come_from_derived_variables() {
    assert_eq!(
        env_name("MCP_HEADER_", "X-Api-Key", 0),
        "MCP_HEADER_X_API_KEY"
    );
    assert_eq!(
        env_name("MCP_ARG_", "--local-timezone", 1),
        "MCP_ARG_LOCAL_TIMEZONE"
    );
    assert_eq!(env_name("MCP_ARG_", "--", 3), "MCP_ARG_3");
    assert_eq!(env_name("MCP_RUNTIME_ARG_", "", 0), "MCP_RUNTIME_ARG_0");
    let remote = json!({"type": "streamable-http", "url": "https://h/mcp",
        "headers": [{"name": "X-Api-Key", "isRequired": true}]});
    let (_, reason) = plan(remote.clone(), &[], false).unwrap_err();
    assert!(
        reason.contains("set MCP_HEADER_X_API_KEY in the environment"),
        "{reason}"
    );
    let planned = plan(remote, &[("MCP_HEADER_X_API_KEY", "k-123")], false).unwrap();
    assert_eq!(planned.secrets, ["k-123"]);
    // To a host not allowed, no value of the environment is sent: the entry is not run.
    let remote = json!({"type": "streamable-http", "url": "https://other.example/mcp/{T}",
        "variables": {"T": {}}, "headers": [{"name": "X-Api-Key"}]});
    let (status, reason) = plan(remote.clone(), &[("T", "t-1")], false).unwrap_err();
    assert_eq!(status, Status::FailedToStart);
    assert!(
        reason.starts_with("/remotes/0/variables/T: the variable T would take its value from")
            && reason.contains("other.example:443, which --allow-host does not name")
            && !reason.contains("t-1"),
        "{reason}"
    );
    let (_, reason) = plan(remote.clone(), &[("MCP_HEADER_X_API_KEY", "k")], false).unwrap_err();
    assert!(
        reason.starts_with("/remotes/0/headers/0: the header X-Api-Key"),
        "{reason}"
    );
    assert!(plan(remote, &[], false).is_ok());
    let package = json!({"registryType": "npm", "identifier": "s", "transport": {"type": "stdio"},
        "packageArguments": [{"type": "positional", "valueHint": "root dir", "isRequired": true},
                             {"type": "positional", "isRequired": true}]});
    let (_, reason) = plan(package.clone(), &[], false).unwrap_err();
    assert!(
        reason.contains("set MCP_ARG_ROOT_DIR in the environment"),
        "{reason}"
    );
    let env = [("MCP_ARG_ROOT_DIR", "/srv"), ("MCP_ARG_1", "x")];
    let (_, args) = stdio(&plan(package, &env, false).unwrap());
    assert_eq!(args, ["-y", "s", "/srv", "x"]);
}
