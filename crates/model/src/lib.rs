//! Typed model of MCP tools and their recovery metadata.
//!
//! Two carriers declare how to undo a completed tool call:
//!
//! * SEP-3172 `annotations.recovery`, with OpenAPI runtime expressions
//!   ([`RuntimeExpression`]) such as `$response.body#/transactionId`;
//! * mcp-compensate `_meta["dev.chronomcp/compensate"]`, with a small JSONPath subset
//!   ([`JsonPath`]) such as `$.output.structuredContent.transactionId`.
//!
//! Both normalize to one [`DeclaredRecovery`]. The crate does no I/O.
//!
//! ```
//! use mcp_recovery_model::{Binding, RuntimeExpression, Tool};
//!
//! let tool: Tool = serde_json::from_str(r#"{
//!     "name": "charge_payment",
//!     "inputSchema": {"type": "object"},
//!     "annotations": {"recovery": {
//!         "strategy": "compensation",
//!         "compensatingOperation": {
//!             "operationId": "refund_payment",
//!             "parameters": {"transactionId": "$response.body#/transactionId"}
//!         }
//!     }}
//! }"#).unwrap();
//! let declared = &tool.declared_recovery()[0];
//! let compensation = declared.compensation.as_ref().unwrap();
//! assert_eq!(compensation.tool, "refund_payment");
//! let expected = RuntimeExpression::parse("$response.body#/transactionId").unwrap();
//! assert_eq!(compensation.bindings[0].binding, Ok(Binding::Expression(expected)));
//! ```

mod before;
mod binding;
mod convert;
mod document;
mod expression;
mod input_schema;
pub mod json;
mod json_type;
mod jsonpath;
mod overlay;
mod overlay_file;
mod pointer;
mod present;
mod reader;
mod recovery;
mod tool;
mod tool_list;

pub use before::{BEFORE_SECTION, BeforeImage, NOTHING, Outcome, THEN_MEMBER, Undo};
pub use binding::{
    BeforeRef, Binding, BindingError, EACH_KEY, Each, MAP_KEY, MapBinding, MapSource, Template,
    TemplatePart, item_reference, template_pattern,
};
pub use convert::{
    Conversion, ConversionNote, DocumentConversion, NoteKind, UnknownCarrier, convert_document,
    convert_tool,
};
pub use document::{
    DocumentShape, LocateError, SERVER_INFO_META_KEY, ToolsLocation, locate_tools, server_name,
};
pub use expression::{BodySide, ExpressionError, RuntimeExpression, Source, expression_pattern};
pub use input_schema::{
    BACKTRACK_LIMIT, PATTERN_BUDGET, PatternBudget, any_member, compile_input_schema, gave_up,
    has_pattern, without_patterns,
};
pub use json_type::{holds_text, json_type_name};
pub use jsonpath::{JsonPath, JsonPathError, jsonpath_pattern};
pub use overlay::{Applied, Origin, Overlay, OverlayError, OverlayIssue, OverlaySpan};
pub use overlay_file::{
    OVERLAY_ANNOTATIONS, OverlayAnnotations, OverlayBefore, OverlayDocument, OverlayFormat,
    OverlayMatches, OverlayMeta, OverlayNothing, OverlayOutcome, OverlayResult,
    OverlayResultSource, OverlayTool, OverlayUndo, OverlayUndoPart, RESULT_SECTION,
};
pub use pointer::{JsonPointer, PointerError, PointerReading, array_index, escape_token};
pub use reader::{ResultReader, ResultSource, text_items};
pub use recovery::{
    COMPENSATION_STRATEGY, Carrier, Compensate, CompensateCall, CompensatingOperation,
    Compensation, Count, DeclaredRecovery, ParameterBinding, Recovery, Reversibility,
};
pub use tool::{
    COMPENSATE_META_KEY, Hint, Icon, IconTheme, OVERLAY_META_KEY, TaskSupport, Tool,
    ToolAnnotations, ToolExecution, ToolMeta, ToolsList,
};
pub use tool_list::ToolList;
