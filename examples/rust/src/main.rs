//! A notes server on the official Rust SDK (rmcp) whose create/delete pair declares recovery:
//! `create_note` is compensated by `delete_note`, bound to the id the create returned.
//!
//! rmcp's typed `ToolAnnotations` has only the title and the four hints, so `annotations.recovery`
//! cannot be sent through it; the compensate carrier in the tool's `_meta` can.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// The key of the compensate carrier in a tool's `_meta`.
const COMPENSATE: &str = "dev.chronomcp/compensate";

/// A JSON object literal as rmcp's object type.
fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// A tool with its schemas, hints (title, read-only, destructive, idempotent; never open-world)
/// and compensate declaration.
fn tool(
    name: &'static str,
    title: &str,
    description: &'static str,
    [input, output]: [Value; 2],
    [read_only, destructive, idempotent]: [bool; 3],
    compensate: Value,
) -> Tool {
    let annotations = ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(false);
    Tool::new(name, description, Arc::new(object(input)))
        .with_title(title)
        .with_raw_output_schema(Arc::new(object(output)))
        .with_annotations(annotations)
        .with_meta(object(json!({ COMPENSATE: compensate })).into())
}

fn tools() -> Vec<Tool> {
    let note = json!({
        "type": "object",
        "properties": { "id": { "type": "string" }, "title": { "type": "string" } },
        "required": ["id", "title"]
    });
    vec![
        tool(
            "create_note",
            "Create note",
            "Stores a note and returns it with its id.",
            [
                json!({
                    "type": "object",
                    "properties": { "title": { "type": "string" }, "body": { "type": "string" } },
                    "required": ["title", "body"]
                }),
                // Every field the compensation binds is required, so the binding is provable.
                json!({ "type": "object", "properties": { "note": note }, "required": ["note"] }),
            ],
            [false, false, false],
            json!({
                "reversibility": "compensable",
                "compensation": {
                    "toolName": "delete_note",
                    "parameterMapping": { "id": "$.output.structuredContent.note.id" }
                },
                "sideEffectScope": ["storage"]
            }),
        ),
        tool(
            "delete_note",
            "Delete note",
            "Deletes a note by id.",
            [
                json!({
                    "type": "object",
                    "properties": { "id": { "type": "string" } },
                    "required": ["id"]
                }),
                json!({
                    "type": "object",
                    "properties": { "deleted": { "type": "string" } },
                    "required": ["deleted"]
                }),
            ],
            [false, true, true],
            json!({ "reversibility": "irreversible", "sideEffectScope": ["storage"] }),
        ),
        tool(
            "list_notes",
            "List notes",
            "Lists every note.",
            [
                json!({ "type": "object", "properties": {} }),
                json!({
                    "type": "object",
                    "properties": { "notes": { "type": "array", "items": note } },
                    "required": ["notes"]
                }),
            ],
            [true, false, true],
            json!({ "reversibility": "readonly" }),
        ),
    ]
}

/// The notes, by id (`note-1`, `note-2`, …), with the last id handed out.
#[derive(Default)]
struct Notes {
    notes: Mutex<(u64, BTreeMap<String, (String, String)>)>,
}

impl Notes {
    fn call(&self, name: &str, arguments: &JsonObject) -> CallToolResult {
        let text = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let Ok(mut guard) = self.notes.lock() else {
            return CallToolResult::error(vec![ContentBlock::text("the notes are unavailable")]);
        };
        let (last, notes) = &mut *guard;
        match (name, text("title"), text("body"), text("id")) {
            ("create_note", Some(title), Some(body), _) => {
                *last += 1;
                let id = format!("note-{last}");
                notes.insert(id.clone(), (title.clone(), body));
                CallToolResult::structured(json!({ "note": { "id": id, "title": title } }))
            }
            ("delete_note", _, _, Some(id)) => match notes.remove(&id) {
                Some(_) => CallToolResult::structured(json!({ "deleted": id })),
                None => CallToolResult::error(vec![ContentBlock::text(format!("no note {id}"))]),
            },
            ("list_notes", ..) => {
                let listed: Vec<Value> = notes
                    .iter()
                    .map(|(id, (title, _))| json!({ "id": id, "title": title }))
                    .collect();
                CallToolResult::structured(json!({ "notes": listed }))
            }
            _ => CallToolResult::error(vec![ContentBlock::text(format!(
                "unknown tool {name} or missing arguments"
            ))]),
        }
    }
}

impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        Ok(self.call(&request.name, &arguments).into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let running = Notes::default().serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
