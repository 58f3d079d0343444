//! End to end: the client fetches the demo server's tools over stdio and Streamable HTTP (JSON
//! and SSE answers), runs the checkout to a failure and undoes it with the declared
//! compensations.

// Helpers shared by the tests fail loudly, like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use mcp_recovery_client::{ClientError, Connection, Header, Options, Target, fetch_tools};
use mcp_recovery_demo_server::tools;
use serde_json::{Value, json};
use support::{HttpChild, SERVER, alive, args, quick};

fn stdio(extra: &[&str]) -> Connection {
    Connection::stdio(SERVER, &args(extra), &quick()).expect("connect over stdio")
}

fn http(server: &HttpChild) -> Connection {
    Connection::http(&server.url, Vec::new(), &quick()).expect("connect over HTTP")
}

#[test]
fn stdio_fetch_equals_the_declared_list() {
    let mut connection = stdio(&[]);
    assert_eq!(connection.protocol_version(), "2025-11-25");
    assert_eq!(
        connection.initialize_result()["serverInfo"]["name"],
        "mcp-recovery-demo-server"
    );
    assert_eq!(connection.list_tools().unwrap(), tools());
    let pid = connection.pid().unwrap();
    connection.close();
    assert!(!alive(pid), "the server outlived the connection");
}

#[test]
fn pages_are_merged_in_order() {
    for page_size in ["1", "2", "3"] {
        let fetched = stdio(&["--page-size", page_size]).list_tools().unwrap();
        // Same text, not only the same value: key order survives too.
        assert_eq!(
            fetched.to_string(),
            tools().to_string(),
            "page size {page_size}"
        );
    }
}

#[test]
fn http_fetch_equals_the_declared_list_with_json_and_sse_answers() {
    for extra in [&[][..], &["--sse"][..], &["--sse", "--page-size", "2"][..]] {
        let server = HttpChild::start(extra);
        let mut connection = http(&server);
        assert_eq!(connection.list_tools().unwrap(), tools(), "{extra:?}");
        connection.close();
    }
}

#[test]
fn fetch_tools_opens_lists_and_closes() {
    let target = Target::Stdio {
        program: SERVER.to_string(),
        args: Vec::new(),
    };
    assert_eq!(fetch_tools(&target, &quick()).unwrap(), tools());
    let server = HttpChild::start(&[]);
    let header = Header::parse_with("Authorization: Bearer ${DEMO_TOKEN}", |_| {
        Some("t0k".into())
    })
    .unwrap();
    let target = Target::Http {
        url: server.url.clone(),
        headers: vec![header],
    };
    assert_eq!(fetch_tools(&target, &quick()).unwrap(), tools());
    assert_eq!(target.to_string(), server.url);
}

#[test]
fn negotiates_down_to_the_servers_version() {
    let connection = stdio(&["--protocol-version", "2025-03-26"]);
    assert_eq!(connection.protocol_version(), "2025-03-26");
    let server = HttpChild::start(&["--protocol-version", "2025-06-18"]);
    let mut connection = http(&server);
    assert_eq!(connection.protocol_version(), "2025-06-18");
    // Later requests carry MCP-Protocol-Version, which the server checks.
    assert_eq!(connection.list_tools().unwrap(), tools());
}

fn call(connection: &mut Connection, name: &str, arguments: Value) -> Value {
    let result = connection.call_tool(name, arguments).unwrap();
    assert_ne!(result["isError"], true, "{name} failed: {result}");
    result["structuredContent"].clone()
}

/// reserve → charge → create_shipment (fails) → compensate in reverse order, driven only by
/// the declared bindings of each tool.
fn checkout_then_roll_back(connection: &mut Connection) {
    let start = call(connection, "get_state", json!({}));
    let declared = tools();
    let reserve_args = json!({"sku": "sku-widget", "quantity": 2});
    let reserved = call(connection, "reserve_inventory", reserve_args);
    let charged = call(
        connection,
        "charge_payment",
        json!({"customerId": "cust-7", "amount": 59.97, "currency": "EUR"}),
    );
    let failed = connection
        .call_tool("create_shipment", json!({"reservationId": reserved["reservationId"], "address": "1 Main St", "simulateFailure": true}))
        .unwrap();
    assert_eq!(failed["isError"], true);
    assert_ne!(call(connection, "get_state", json!({})), start);

    // charge_payment: SEP-3172 `$response.body#/…` bindings.
    let sep = &declared["tools"][2]["annotations"]["recovery"]["compensatingOperation"];
    let mut refund = serde_json::Map::new();
    for (parameter, expression) in sep["parameters"].as_object().unwrap() {
        let pointer = expression
            .as_str()
            .unwrap()
            .strip_prefix("$response.body#")
            .unwrap();
        refund.insert(parameter.clone(), charged.pointer(pointer).unwrap().clone());
    }
    call(
        connection,
        sep["operationId"].as_str().unwrap(),
        Value::Object(refund),
    );

    // reserve_inventory: compensate carrier `$.output.structuredContent.…` mappings.
    let compensation = &declared["tools"][0]["_meta"]["dev.chronomcp/compensate"]["compensation"];
    let mut release = serde_json::Map::new();
    for (parameter, path) in compensation["parameterMapping"].as_object().unwrap() {
        let field = path
            .as_str()
            .unwrap()
            .strip_prefix("$.output.structuredContent.")
            .unwrap();
        release.insert(parameter.clone(), reserved[field].clone());
    }
    let tool = compensation["toolName"].as_str().unwrap();
    let released = call(connection, tool, Value::Object(release.clone()));
    // Idempotent: a retried compensation answers the same and changes nothing.
    assert_eq!(call(connection, tool, Value::Object(release)), released);

    assert_eq!(call(connection, "get_state", json!({})), start);
}

#[test]
fn failed_checkout_rolls_back_over_stdio() {
    checkout_then_roll_back(&mut stdio(&[]));
}

#[test]
fn failed_checkout_rolls_back_over_http() {
    let server = HttpChild::start(&[]);
    checkout_then_roll_back(&mut http(&server));
    let server = HttpChild::start(&["--sse"]);
    checkout_then_roll_back(&mut http(&server));
}

#[test]
fn unknown_tools_are_json_rpc_errors() {
    let error = stdio(&[]).call_tool("teleport", json!({})).unwrap_err();
    assert!(
        matches!(error, ClientError::Rpc { code: -32602, .. }),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "the server answered `tools/call` with JSON-RPC error -32602: unknown tool: teleport"
    );
}

#[test]
fn http_sessions_end_with_delete() {
    let server = HttpChild::start(&[]);
    let connection = http(&server);
    connection.close();
    // A second session still works after the first was deleted.
    let mut connection = http(&server);
    assert_eq!(connection.list_tools().unwrap(), tools());
}

#[test]
fn http_errors_are_clear() {
    let server = HttpChild::start(&[]);
    let wrong_path = server.url.replace("/mcp", "/nope");
    let error = Connection::http(&wrong_path, Vec::new(), &quick()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "HTTP status 404 in answer to `initialize`: not found; the endpoint is /mcp"
    );
    let header = Header::new("Origin", "http://evil.test").unwrap();
    let error = Connection::http(&server.url, vec![header], &quick()).unwrap_err();
    assert!(
        matches!(error, ClientError::HttpStatus { status: 403, .. }),
        "{error}"
    );
    let options = Options {
        timeout: std::time::Duration::from_secs(1),
        ..quick()
    };
    drop(server);
    let error = Connection::http("http://127.0.0.1:9/mcp", Vec::new(), &options).unwrap_err();
    assert!(
        matches!(
            error,
            ClientError::Http { .. } | ClientError::Timeout { .. }
        ),
        "{error}"
    );
}
