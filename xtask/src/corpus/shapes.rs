//! Corpora of one shape each, for `cargo xtask bench shapes`: `lint` and `census` must keep their
//! targets on every shape a registry holds, not only on the default corpus's mix. A shape is the
//! size of its tools (minimal, small as most registry tools are, rich) and how many a file holds
//! (one, the registry's spread with a median of 11, thousands). Half the files are JSON-RPC
//! answers written compactly, half bare results written with indentation, as captures come.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::rng::Rng;
use super::tables::{DESCRIPTIONS, FIELDS};
use super::tools::{draw_tool_count, unique_name};

/// How big a shape's tools are.
#[derive(Clone, Copy)]
enum Size {
    /// `{"name", "inputSchema": {"type": "object"}}`.
    Minimal,
    /// A short description, one to four plain parameters, hints on three tools in four.
    Small,
    /// A title, a long description, nested parameters, an output schema and all four hints.
    Rich,
}

/// How many tools a shape's files hold.
#[derive(Clone, Copy)]
enum Count {
    Fixed(usize),
    /// The registry's spread (median 11), as the default corpus draws it.
    Registry,
}

/// One shape: its name in the bench's table, its files, their tools.
pub struct Shape {
    pub name: &'static str,
    files: usize,
    count: Count,
    size: Size,
}

/// The shapes the bench sweeps.
pub const SHAPES: [Shape; 5] = [
    Shape {
        name: "minimal tools, 11 a file",
        files: 5_000,
        count: Count::Fixed(11),
        size: Size::Minimal,
    },
    Shape {
        name: "small tools, the registry's spread",
        files: 5_000,
        count: Count::Registry,
        size: Size::Small,
    },
    Shape {
        name: "one small tool a file",
        files: 20_000,
        count: Count::Fixed(1),
        size: Size::Small,
    },
    Shape {
        name: "3,000 small tools a file",
        files: 20,
        count: Count::Fixed(3_000),
        size: Size::Small,
    },
    Shape {
        name: "rich tools, 20 a file",
        files: 1_500,
        count: Count::Fixed(20),
        size: Size::Rich,
    },
];

impl Shape {
    /// Writes the shape's files into `dir` (emptied first); the same bytes on every run.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("{}: {e}", dir.display());
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(fail)?;
        }
        std::fs::create_dir_all(dir).map_err(fail)?;
        let mut rng = Rng(0x5EED_0000 + self.files as u64);
        for file in 0..self.files {
            let count = match self.count {
                Count::Fixed(n) => n,
                Count::Registry => draw_tool_count(&mut rng),
            };
            let mut used = BTreeSet::new();
            let tools: Vec<Value> = (0..count)
                .map(|_| tool(&mut rng, &mut used, self.size))
                .collect();
            let text = if file % 2 == 0 {
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}).to_string()
            } else {
                serde_json::to_string_pretty(&json!({ "tools": tools }))
                    .map_err(|e| e.to_string())?
            };
            let path = dir.join(format!("server-{file:05}.json"));
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }
}

fn tool(rng: &mut Rng, used: &mut BTreeSet<String>, size: Size) -> Value {
    let read_only = rng.chance(500_000);
    let name = unique_name(rng, used, read_only);
    let mut tool = Map::new();
    tool.insert("name".into(), json!(name));
    match size {
        Size::Minimal => {
            tool.insert("inputSchema".into(), json!({"type": "object"}));
            return Value::Object(tool);
        }
        Size::Small => {
            tool.insert("description".into(), json!(*rng.pick(DESCRIPTIONS)));
            tool.insert("inputSchema".into(), parameters(rng, (1, 4), false));
            if rng.chance(750_000) {
                tool.insert("annotations".into(), hints(rng, read_only));
            }
        }
        Size::Rich => {
            tool.insert("title".into(), json!(name.replace('_', " ")));
            let sentences: Vec<&str> = (0..rng.range(3, 8))
                .map(|_| *rng.pick(DESCRIPTIONS))
                .collect();
            tool.insert("description".into(), json!(sentences.join(" ")));
            tool.insert("inputSchema".into(), parameters(rng, (3, 8), true));
            tool.insert("outputSchema".into(), parameters(rng, (2, 5), true));
            tool.insert("annotations".into(), hints(rng, read_only));
        }
    }
    Value::Object(tool)
}

/// An object schema of between `fields.0` and `fields.1` parameters; `nested` adds an object
/// parameter of its own.
fn parameters(rng: &mut Rng, fields: (usize, usize), nested: bool) -> Value {
    let mut properties = Map::new();
    for i in 0..rng.range(fields.0, fields.1) {
        let field = format!("{}_{i}", rng.pick(FIELDS));
        let schema = match rng.below(4) {
            0 => json!({"type": "string", "description": format!("The {field}.")}),
            1 => json!({"type": "integer", "minimum": 1, "maximum": 100}),
            2 => json!({"type": "boolean", "default": false}),
            _ => json!({"type": "array", "items": {"type": "string"}}),
        };
        properties.insert(field, schema);
    }
    if nested {
        properties.insert(
            "options".into(),
            json!({"type": "object", "properties": {"limit": {"type": "integer"},
                "cursor": {"type": "string"}}, "additionalProperties": false}),
        );
    }
    let first = properties.keys().next().cloned();
    json!({"type": "object", "properties": properties, "required": first.into_iter().collect::<Vec<_>>()})
}

fn hints(rng: &mut Rng, read_only: bool) -> Value {
    json!({"readOnlyHint": read_only, "destructiveHint": !read_only && rng.chance(200_000),
        "idempotentHint": read_only, "openWorldHint": rng.chance(500_000)})
}

/// The two shapes of one large file: many minimal tools, and fewer tools each with a
/// description, an input schema and all four hints. Same bytes on every run.
pub fn large_file_text(rich: bool) -> String {
    let mut text = String::from("{\"tools\":[");
    let count = if rich { 120_000 } else { 300_000 };
    for i in 0..count {
        if i > 0 {
            text.push(',');
        }
        if rich {
            let read_only = i % 3 == 0;
            text.push_str(&format!(
                concat!(
                    r#"{{"name":"tool_{i:06}","title":"Tool {i}","#,
                    r#""description":"Looks up record {i} in the widget store and returns its current state, "#,
                    r#"owner and kind.","#,
                    r#""inputSchema":{{"type":"object","properties":{{"#,
                    r#""id":{{"type":"string","description":"The record's identifier."}},"#,
                    r#""limit":{{"type":"integer","minimum":1,"maximum":{max}}},"#,
                    r#""verbose":{{"type":"boolean","default":false}}}},"required":["id"]}},"#,
                    r#""annotations":{{"readOnlyHint":{read_only},"destructiveHint":false,"#,
                    r#""idempotentHint":true,"openWorldHint":{open}}}}}"#
                ),
                i = i,
                max = 100 + i % 900,
                read_only = read_only,
                open = i % 2 == 0,
            ));
        } else {
            text.push_str(&format!(
                r#"{{"name":"tool_{i:06}","inputSchema":{{"type":"object"}}}}"#
            ));
        }
    }
    text.push_str("]}");
    text
}
