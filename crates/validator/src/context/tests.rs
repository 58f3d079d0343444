use serde_json::{Value, json};

use mcp_recovery_model::Tool;

use super::{Read, element_pointer, read_through_serde};
use crate::test_tools::{fixture_tools, shapes, variants};

/// Reading a tool member by member gives what serde's derived reader gives, on every fixture
/// tool and thousands of variants of each, and declines only where that reader has an error.
#[test]
fn the_direct_read_is_the_derived_one() {
    let mut tools = fixture_tools();
    tools.extend(shapes());
    tools.push(json!({"name": "n", "inputSchema": {}, "annotations": {"readOnlyHint": 1}}));
    let (mut direct, mut checked) = (0usize, 0usize);
    for tool in &tools {
        let mut all = vec![tool.clone()];
        variants(tool, 3, &mut all);
        for value in all {
            let Value::Object(map) = &value else { continue };
            checked += 1;
            // `read` keeps no input schema of either.
            let derived = read_through_serde(map).map(|tool| Tool {
                input_schema: Value::Null,
                ..tool
            });
            match Read::of(map).directly() {
                Some(read) => {
                    direct += 1;
                    assert_eq!(Some(read), derived.ok(), "{value}");
                }
                None => assert!(
                    derived.is_err(),
                    "declined, but the derived reader reads it: {value}"
                ),
            }
        }
    }
    // Both answers occur.
    assert!(
        direct > 1000 && checked - direct > 1000,
        "{direct} of {checked}"
    );
}

#[test]
fn element_pointers_are_written_in_decimal() {
    for index in [0, 7, 10, 99, 1234, usize::MAX] {
        assert_eq!(
            element_pointer("/result/tools", index),
            format!("/result/tools/{index}")
        );
    }
}
