//! A tools list read one tool at a time.
//!
//! A large document is not held as one tree: [`ToolList::skim`] checks the whole text and notes
//! where each tool is written and its name, and [`ToolList::read`] builds one tool from its text
//! when it is wanted. Every tool read so gives the value the whole document's reader gives it.

use std::ops::Range;

use serde_json::Value;

use crate::document::{DocumentShape, locate_tools};
use crate::json::{self, Element};

/// The tools of a `tools/list` document, unbuilt.
#[derive(Debug)]
pub struct ToolList<'t> {
    text: &'t str,
    shape: DocumentShape,
    tools: Vec<Element>,
}

impl<'t> ToolList<'t> {
    /// Reads `text` as a tools list without building its tools. `None` when the text is not
    /// one of the accepted shapes with a tools array, or when it is anything the whole
    /// document's reader should judge: a syntax error, a member name written twice, nesting
    /// near the reader's limit.
    pub fn skim(text: &'t str) -> Option<Self> {
        let skimmed = json::skim(text)?;
        let shape = locate_tools(&skimmed.document).ok()?.shape;
        let pointer = shape.tools_pointer();
        let tools = skimmed
            .arrays
            .into_iter()
            .find_map(|(at, tools)| (at == pointer).then_some(tools))?;
        Some(Self { text, shape, tools })
    }

    /// The document's shape.
    pub fn shape(&self) -> DocumentShape {
        self.shape
    }

    /// How many tools the list has.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the list has no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The `name` of the tool at `index`, when it is an object whose `name` is a string.
    pub fn name(&self, index: usize) -> Option<&str> {
        self.tools.get(index)?.name.as_deref()
    }

    /// Where the tool at `index` is written in the text.
    pub fn range(&self, index: usize) -> Option<Range<usize>> {
        let tool = self.tools.get(index)?;
        Some(tool.start..tool.end)
    }

    /// Builds the tool at `index`, and tells whether some object in it writes a member name
    /// more than once (the value keeps the last). `None` only for an index out of range.
    pub fn read(&self, index: usize) -> Option<(Value, bool)> {
        json::from_str_noting_repeats(self.text.get(self.range(index)?)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each tool read alone is the element the whole document's reader gives.
    fn same_as_whole(text: &str) {
        let list = ToolList::skim(text).unwrap_or_else(|| panic!("not skimmed: {text}"));
        let whole = json::from_str(text).unwrap();
        let location = locate_tools(&whole).unwrap();
        assert_eq!(list.shape(), location.shape, "{text}");
        assert_eq!(list.len(), location.tools.len(), "{text}");
        for (i, expected) in location.tools.iter().enumerate() {
            let (tool, repeats) = list.read(i).unwrap();
            assert_eq!(&tool, expected, "{text}");
            assert!(!repeats);
            assert_eq!(
                list.name(i),
                expected.get("name").and_then(Value::as_str),
                "{text}"
            );
        }
    }

    #[test]
    fn every_shape_reads_each_tool_as_the_whole_reader_does() {
        let tools = r#"[{"name": "a", "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "default": 1.50}}}},
            {"inputSchema": {}, "name": "b\u00e9\"q", "title": "x"}, 3, "name", null, [{"name": "inner"}],
            {"name": 7}, {"annotations": {"name": "not it"}}, {"n\u0061me": "escaped key"}, {}]"#;
        same_as_whole(tools);
        same_as_whole(&format!(r#"{{"tools": {tools}, "nextCursor": "c"}}"#));
        same_as_whole(&format!(
            r#"{{"jsonrpc": "2.0", "id": 1, "result": {{"tools": {tools}}}}}"#
        ));
        // A `tools` member beside `result` is not the list.
        same_as_whole(&format!(
            r#"{{"tools": [1], "result": {{"_meta": {{}}, "tools": {tools}}}}}"#
        ));
        same_as_whole(" [ ] ");
        same_as_whole(r#"{"result": {"tools": []}}"#);
    }

    #[test]
    fn what_the_whole_reader_should_judge_is_not_skimmed() {
        let deep = format!("[{}{}]", "[".repeat(120), "]".repeat(120));
        let cases = [
            // Syntax errors, inside and outside the tools.
            r#"{"tools": [{"name": "a",}]}"#,
            r#"{"tools": [{"name": "a"}], }"#,
            r#"{"tools": [{"name": "a\x"}]}"#,
            r#"{"tools": [01]}"#,
            r#"{"tools": [{"name": "\ud800"}]}"#,
            r#"{"tools": [] "#,
            // A member name written twice, inside a tool and around the list.
            r#"{"tools": [{"name": "a", "name": "b"}]}"#,
            r#"{"tools": [{"name": "a"}], "tools": []}"#,
            // Not a tools list.
            r#"{"error": {"code": 1}}"#,
            r#"{"result": {"resources": []}}"#,
            r#"{"tools": {}}"#,
            r#""tools""#,
            deep.as_str(),
        ];
        for text in cases {
            let skimmed = ToolList::skim(text);
            // A repeat inside a tool shows only when the tool is read.
            match skimmed {
                Some(list) if text.contains(r#""name": "a", "name""#) => {
                    assert!(list.read(0).unwrap().1, "{text}");
                }
                Some(list) => panic!("skimmed {text}: {list:?}"),
                None => {}
            }
        }
    }
}
