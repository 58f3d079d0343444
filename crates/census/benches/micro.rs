//! Microbenchmarks of the stages a lint or census run spends its time in.
//!
//! Run with `cargo bench -p mcp-recovery-census`; not run by CI.

use divan::{Bencher, black_box};
use mcp_recovery_census::{CensusBuilder, CensusOptions};
use mcp_recovery_model::{Binding, JsonPath, JsonPointer, RuntimeExpression};
use mcp_recovery_schema_reason::resolve;
use mcp_recovery_validator::{LintOptions, Linter};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

#[divan::bench(args = [
    "$response.body",
    "$response.body#/transactionId",
    "$request.body#/order/lines/0/sku~1code",
])]
fn expression_parse(text: &str) -> bool {
    RuntimeExpression::parse(black_box(text)).is_ok()
}

#[divan::bench]
fn template_parse(bencher: Bencher) {
    let raw = json!("refund {$response.body#/transactionId} for {$request.body#/customer/id}");
    bencher.bench(|| Binding::parse_sep(black_box(&raw)).is_ok());
}

#[divan::bench(args = ["$.input.id", "$.output.structuredContent.order.transactionId", "$['input']['file name']"])]
fn jsonpath_parse(text: &str) -> bool {
    JsonPath::parse(black_box(text)).is_ok()
}

fn output_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["order"],
        "properties": {
            "order": {"$ref": "#/$defs/order"},
            "meta": {"type": "object", "additionalProperties": {"type": "string"}}
        },
        "$defs": {
            "order": {
                "allOf": [
                    {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
                    {"properties": {"lines": {"type": "array", "items": {"$ref": "#/$defs/line"}}}}
                ]
            },
            "line": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}
        }
    })
}

#[divan::bench(args = ["/order/id", "/order/lines/3/qty", "/meta/anything", "/missing"])]
fn pointer_resolve(bencher: Bencher, pointer: &str) {
    let schema = output_schema();
    let pointer = JsonPointer::parse(pointer).unwrap_or_else(|_| JsonPointer::root());
    bencher.bench(|| resolve(black_box(&schema), black_box(&pointer)));
}

fn tools_document(tools: usize) -> Vec<u8> {
    let list: Vec<Value> = (0..tools)
        .map(|i| {
            let recovery = (i % 2 == 0 && i + 1 < tools).then(|| {
                json!({"strategy": "compensation", "compensatingOperation": {
                    "operationId": format!("cancel_{}", i + 1),
                    "parameters": {"orderId": "$response.body#/order/id", "reason": "rollback"}
                }})
            });
            let mut annotations = json!({"readOnlyHint": false, "destructiveHint": i % 2 == 1,
                "idempotentHint": i % 2 == 1, "openWorldHint": true});
            if let (Some(r), Some(a)) = (recovery, annotations.as_object_mut()) {
                a.insert("recovery".into(), r);
            }
            let name = if i % 2 == 0 { format!("create_{i}") } else { format!("cancel_{i}") };
            json!({
                "name": name,
                "description": "Creates or cancels an order in the shop backend.",
                "inputSchema": {"type": "object", "required": ["orderId", "reason"], "properties": {
                    "orderId": {"type": "string"}, "reason": {"type": "string", "enum": ["rollback", "user"]}
                }},
                "outputSchema": output_schema(),
                "annotations": annotations
            })
        })
        .collect();
    serde_json::to_vec_pretty(&json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": list}}))
        .unwrap_or_default()
}

/// The schema stage and the rules on one tool, and on a 20-tool server.
#[divan::bench(args = [1, 20])]
fn lint_source(bencher: Bencher, tools: usize) {
    let linter = Linter::new(LintOptions::default());
    let source = tools_document(tools);
    if let Ok(linter) = linter {
        bencher.bench(|| linter.lint_source(black_box(&source)).diagnostics.len());
    }
}

/// Building the linter (compiling the schema stage) — paid once per process.
#[divan::bench]
fn linter_new() -> bool {
    Linter::new(LintOptions::default()).is_ok()
}

/// serde_json alone on a 20-tool server: the floor for the two benches below.
#[divan::bench]
fn parse_floor_20_tools(bencher: Bencher) {
    let source = tools_document(20);
    bencher.bench(|| serde_json::from_slice::<Value>(black_box(&source)).is_ok());
}

/// Census of one 20-tool server, with and without lint (building the linter is not timed).
#[divan::bench(args = [false, true])]
fn census_20_tools(bencher: Bencher, lint: bool) {
    let source = tools_document(20);
    let options = CensusOptions {
        lint,
        threads: 1,
        ..CensusOptions::default()
    };
    bencher
        .with_inputs(|| CensusBuilder::new(&options).ok())
        .bench_local_values(|mut census| {
            if let Some(c) = census.as_mut() {
                c.add_bytes("s.json", black_box(&source));
            }
            census
        });
}
