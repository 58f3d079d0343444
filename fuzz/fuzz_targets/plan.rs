//! The planner on any trace text against a fixed tool list (the checkout example and two
//! fixtures, covering both carriers, templates and constants): `parse_trace`, `build_plan` and
//! the table rendering never panic, and the plan has one step per traced call.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_recovery_model::Tool;
use mcp_recovery_plan::{ToolList, build_plan, load_tools, parse_trace};
use serde_json::Value;

const TOOL_LISTS: [&str; 3] = [
    include_str!("../../spec/examples/checkout.tools-list.json"),
    include_str!("../../fixtures/valid/templates-and-constants.json"),
    include_str!("../../fixtures/valid/compensate-record-store.json"),
];

static TOOLS: LazyLock<ToolList> = LazyLock::new(|| {
    let tools: Vec<Tool> = TOOL_LISTS
        .iter()
        .flat_map(|text| {
            let document: Value = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("a fixed tool list is not JSON: {e}"));
            let list = load_tools(&document)
                .unwrap_or_else(|e| panic!("a fixed tool list does not load: {e}"));
            assert!(list.unusable.is_empty(), "a fixed tool list has unusable tools");
            list.tools
        })
        .collect();
    ToolList::from(tools)
});

fuzz_target!(|text: &str| {
    if let Ok(trace) = parse_trace(text) {
        let plan = build_plan(&TOOLS, &trace);
        assert_eq!(plan.steps.len(), trace.len());
        let _ = plan.render_table();
        let _ = plan.counts();
    }
});
