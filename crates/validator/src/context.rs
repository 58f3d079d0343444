//! What the semantic rules read: every tool of the document, typed and raw, with the lookups
//! they share (tools by name, bindings, where a binding reads its value from). Message wording
//! lives in the rules' own files.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use mcp_recovery_model::{
    Binding, BodySide, Compensation, DeclaredRecovery, JsonPointer, MapBinding, ParameterBinding,
    PatternBudget, RuntimeExpression, Tool, ToolAnnotations, ToolMeta, escape_token,
    item_reference,
};
use serde::Deserialize;
use serde::de::value::MapDeserializer;

use mcp_recovery_schema_reason::{Resolution, resolve_as, resolve_each};
use serde_json::{Map, Value};

use crate::finding::{Finding, Focus};

/// A semantic check.
pub(crate) type Check = fn(&Context<'_>, &mut Vec<Finding>);

/// Where an applied overlay puts the schema of a result read from text, inside a tool.
const READER_SCHEMA: &str = "/_meta/dev.mcp-recovery~1overlay/result/schema";

/// Pointer of a tool's `annotations`, or of its name when it has none (the place to add them).
pub(crate) fn annotations_pointer(tool: &ToolRef<'_>) -> String {
    if tool.raw.get("annotations").is_some() {
        tool.at("/annotations")
    } else {
        tool.at("/name")
    }
}

/// One entry of the tools array.
#[derive(Debug)]
pub(crate) struct ToolRef<'a> {
    /// Its index in the tools array.
    pub index: usize,
    /// Pointer of the tool in the document (`/result/tools/3`).
    pub pointer: String,
    /// The tool as written.
    pub raw: &'a Value,
    /// Its `name`, when that is a string.
    pub name: Option<&'a str>,
    /// The typed tool; `None` when the tool does not deserialize (R003 says why).
    pub typed: Option<Tool>,
    /// Its recovery declarations, normalized, SEP-3172 first.
    pub declared: Vec<DeclaredRecovery>,
}

/// The members of a tool the typed view reads, found in one pass over its few members.
#[derive(Default)]
struct Read<'a> {
    name: Option<&'a Value>,
    input_schema: Option<&'a Value>,
    annotations: Option<&'a Value>,
    meta: Option<&'a Value>,
}

impl<'a> Read<'a> {
    fn of(map: &'a Map<String, Value>) -> Self {
        let mut read = Self::default();
        for (key, value) in map {
            let slot = match key.as_str() {
                "name" => &mut read.name,
                "inputSchema" => &mut read.input_schema,
                "annotations" => &mut read.annotations,
                "_meta" => &mut read.meta,
                _ => continue,
            };
            *slot = Some(value);
        }
        read
    }

    /// The typed tool the view of [`read_through_serde`] gives, read member by member: serde's
    /// derived reader buffers every member for the tool's catch-all `extra`, which costs more
    /// than the rest of a small tool's lint. `None` where that reader must speak: a member
    /// missing or of another type, or annotations or `_meta` it reads with an error.
    fn directly(&self) -> Option<Tool> {
        let name = self.name?.as_str()?;
        self.input_schema?;
        let annotations = self.annotations.map(ToolAnnotations::deserialize);
        let meta = self.meta.map(ToolMeta::deserialize);
        Some(Tool {
            name: name.to_owned(),
            title: None,
            description: None,
            input_schema: Value::Null,
            output_schema: None,
            annotations: annotations.transpose().ok()?,
            meta: meta.transpose().ok()?,
            icons: None,
            execution: None,
            extra: Map::new(),
        })
    }
}

/// The typed tool read by serde's derived reader from a view of `map` holding only `name`,
/// `annotations` and `_meta`, with a placeholder `inputSchema`.
fn read_through_serde(map: &Map<String, Value>) -> Result<Tool, serde_json::Error> {
    static PLACEHOLDER: LazyLock<Value> = LazyLock::new(|| serde_json::json!({"type": "object"}));
    Tool::deserialize(MapDeserializer::new(map.iter().filter_map(
        |(key, value)| match key.as_str() {
            "name" | "annotations" | "_meta" => Some((key.as_str(), value)),
            // The schema stage checks the real one.
            "inputSchema" => Some((key.as_str(), &*PLACEHOLDER)),
            _ => None,
        },
    )))
}

/// A typed tool without the placeholder schema of its read (the rules read the raw one, and a
/// lint holds every tool at once), or the error of its read.
fn without_schema(
    read: Result<Tool, serde_json::Error>,
) -> (Option<Tool>, Option<serde_json::Error>) {
    match read {
        Ok(tool) => (
            Some(Tool {
                input_schema: Value::Null,
                ..tool
            }),
            None,
        ),
        Err(error) => (None, Some(error)),
    }
}

impl<'a> ToolRef<'a> {
    /// Reads one tool; the typed error is returned for the schema stage to report.
    ///
    /// The typed tool is read from a view of the raw one holding only `name`, `annotations` and
    /// `_meta`, with a placeholder `inputSchema`: reading every schema into the typed tool
    /// dominated the cost of linting. The rules read schemas from the raw tool
    /// ([`ToolRef::input_schema`], [`ToolRef::output_schema`]); the fields left out are checked
    /// by the schema stage.
    pub(crate) fn read(
        index: usize,
        pointer: String,
        raw: &'a Value,
    ) -> (Self, Option<serde_json::Error>) {
        let (name, (typed, error)) = match raw {
            Value::Object(map) => {
                let read = Read::of(map);
                let typed = match read.directly() {
                    Some(tool) => (Some(tool), None),
                    None => without_schema(read_through_serde(map)),
                };
                (read.name.and_then(Value::as_str), typed)
            }
            other => (None, without_schema(Tool::deserialize(other))),
        };
        let declared = typed
            .as_ref()
            .map(Tool::declared_recovery)
            .unwrap_or_default();
        let tool = Self {
            index,
            pointer,
            raw,
            name,
            typed,
            declared,
        };
        (tool, error)
    }

    /// The tool's `inputSchema` as written.
    pub(crate) fn input_schema(&self) -> Option<&'a Value> {
        self.raw.get("inputSchema")
    }

    /// The schema `$response.body` reads: the one of the value an overlay's reader reads from
    /// the result's text when one is declared, else the tool's `outputSchema` as written.
    pub(crate) fn output_schema(&self) -> Option<&'a Value> {
        self.raw
            .pointer(READER_SCHEMA)
            .or_else(|| self.raw.get("outputSchema"))
    }

    /// The name of the schema a body expression reads, for messages.
    pub(crate) fn schema_name(&self, side: BodySide) -> &'static str {
        match side {
            BodySide::Request => "inputSchema",
            BodySide::Response if self.raw.pointer(READER_SCHEMA).is_some() => {
                "result schema the overlay declares"
            }
            BodySide::Response => "outputSchema",
        }
    }

    /// Pointer of a place inside this tool, given relative to it.
    pub(crate) fn at(&self, relative: &str) -> String {
        format!("{}{relative}", self.pointer)
    }

    /// The names of the other tools this one names: its compensators, and the read and undos
    /// of its before-image.
    pub(crate) fn names_used(&self) -> Vec<String> {
        let mut used: Vec<String> = self
            .declared
            .iter()
            .filter_map(|d| Some(d.compensation.as_ref()?.tool.clone()))
            .collect();
        if let Some(image) = self.typed.as_ref().and_then(Tool::before_image) {
            used.push(image.read);
            let outcomes = image.found.iter().chain(&image.missing);
            for undo in outcomes.filter_map(mcp_recovery_model::Outcome::undo) {
                used.extend(undo.parts().map(|(_, part)| part.operation_id.clone()));
            }
        }
        used
    }
}

/// What the rules know of the whole tools array, however much of it they read at once, and what
/// they keep across it.
#[derive(Debug)]
pub(crate) struct List<'a> {
    /// Pointer of the tools array.
    pointer: &'static str,
    /// Each tool's name, in order.
    names: Vec<Option<&'a str>>,
    /// The first tool of each name.
    first: HashMap<&'a str, usize>,
    /// One budget for the patterns the rules evaluate in the file.
    pub patterns: RefCell<PatternBudget>,
    /// Compensators by index, with what R119 reports of them once the whole list is read.
    pub compensators: RefCell<BTreeMap<usize, CompensatorUse>>,
}

impl<'a> List<'a> {
    pub(crate) fn new(pointer: &'static str, names: Vec<Option<&'a str>>) -> Self {
        let mut first = HashMap::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            if let Some(name) = name {
                first.entry(*name).or_insert(i);
            }
        }
        Self {
            pointer,
            names,
            first,
            patterns: RefCell::new(PatternBudget::new()),
            compensators: RefCell::default(),
        }
    }

    /// How many tools the list has.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Every tool's name, in order (tools without one left out).
    pub(crate) fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.names.iter().flatten().copied()
    }

    /// The index of the first tool with this name.
    pub(crate) fn first(&self, name: &str) -> Option<usize> {
        self.first.get(name).copied()
    }

    /// Pointer of the tool at `index`.
    pub(crate) fn tool_pointer(&self, index: usize) -> String {
        element_pointer(self.pointer, index)
    }
}

/// The pointer of element `index` of the array at `array`, written without the formatting
/// machinery, which costs more than the rest of a minimal tool's typed read.
pub(crate) fn element_pointer(array: &str, index: usize) -> String {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = index;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut pointer = String::with_capacity(array.len() + 1 + digits.len() - at);
    pointer.push_str(array);
    pointer.push('/');
    pointer.extend(digits[at..].iter().map(|d| char::from(*d)));
    pointer
}

/// A compensator as the whole list uses it.
#[derive(Debug)]
pub(crate) struct CompensatorUse {
    pub name: Option<String>,
    pub pointer: String,
    /// Why its `inputSchema` cannot be compiled; `None` when it can.
    pub why: Option<String>,
    /// The tools it compensates, in the order they are written.
    pub compensated: Vec<String>,
}

/// What the semantic rules see: the tools they report on (consecutive entries of the list), the
/// tools outside them that those name, and the whole list's names.
#[derive(Debug)]
pub(crate) struct Context<'a> {
    pub tools: Vec<ToolRef<'a>>,
    others: HashMap<usize, ToolRef<'a>>,
    pub list: &'a List<'a>,
}

impl<'a> Context<'a> {
    pub(crate) fn new(
        tools: Vec<ToolRef<'a>>,
        others: HashMap<usize, ToolRef<'a>>,
        list: &'a List<'a>,
    ) -> Self {
        Self {
            tools,
            others,
            list,
        }
    }

    /// The first tool of the list with this name.
    pub(crate) fn tool_named(&self, name: &str) -> Option<&ToolRef<'a>> {
        let index = self.list.first(name)?;
        let offset = index.wrapping_sub(self.tools.first()?.index);
        self.tools.get(offset).or_else(|| self.others.get(&index))
    }

    /// Every declared compensating call, with the tools on both ends.
    pub(crate) fn sites(&self) -> impl Iterator<Item = Site<'_, 'a>> {
        self.tools.iter().flat_map(move |tool| {
            tool.typed.iter().flat_map(move |typed| {
                tool.declared.iter().filter_map(move |declared| {
                    let compensation = declared.compensation.as_ref()?;
                    Some(Site {
                        tool,
                        typed,
                        declared,
                        compensation,
                        compensator: self.tool_named(&compensation.tool),
                    })
                })
            })
        })
    }

    /// Every body expression of every well-formed binding, with the schema it reads.
    pub(crate) fn body_reads(&self) -> impl Iterator<Item = BodyRead<'_, 'a>> {
        self.sites().flat_map(|site| {
            site.compensation.bindings.iter().flat_map(move |binding| {
                let expressions = match &binding.binding {
                    Ok(parsed) => parsed.expressions(),
                    Err(_) => Vec::new(),
                };
                expressions.into_iter().filter_map(move |expression| {
                    let (side, pointer) = expression.body_target()?;
                    let schema = match side {
                        BodySide::Request => site.tool.input_schema(),
                        BodySide::Response => site.tool.output_schema(),
                    };
                    Some(BodyRead {
                        site,
                        binding,
                        expression,
                        side,
                        pointer,
                        schema,
                    })
                })
            })
        })
    }
}

impl<'a> Context<'a> {
    /// Every element reference (`$item#/…`) of every map binding, with the array it reads.
    pub(crate) fn item_reads(&self) -> impl Iterator<Item = ItemRead<'_, 'a>> {
        self.sites().flat_map(|site| {
            site.compensation.bindings.iter().flat_map(move |binding| {
                let map = match &binding.binding {
                    Ok(Binding::Map(map)) => Some(map),
                    _ => None,
                };
                map.into_iter().flat_map(move |map| {
                    let target = map.source.expression().and_then(|e| e.body_target());
                    map.each
                        .items()
                        .into_iter()
                        .filter_map(move |(members, item)| {
                            let (side, outer) = target.clone()?;
                            let schema = match side {
                                BodySide::Request => site.tool.input_schema(),
                                BodySide::Response => site.tool.output_schema(),
                            };
                            Some(ItemRead {
                                site,
                                binding,
                                map,
                                members,
                                item,
                                side,
                                outer,
                                schema,
                            })
                        })
                })
            })
        })
    }
}

/// One element reference of a map binding: `item` inside each element of the array `outer`
/// selects, landing at `members` inside each element of the built array.
#[derive(Debug, Clone)]
pub(crate) struct ItemRead<'c, 'a> {
    pub site: Site<'c, 'a>,
    pub binding: &'c ParameterBinding,
    pub map: &'c MapBinding,
    pub members: Vec<&'c str>,
    pub item: &'c JsonPointer,
    pub side: BodySide,
    pub outer: JsonPointer,
    pub schema: Option<&'c Value>,
}

impl ItemRead<'_, '_> {
    /// What the source schema allows at the element reference, in any element; `None` when
    /// there is no schema to read.
    pub(crate) fn resolution(&self) -> Option<Resolution> {
        let reading = self.site.declared.carrier.reading();
        Some(resolve_each(self.schema?, &self.outer, reading, self.item))
    }

    /// The index, in a resolution's tokens, of the element reference's first token.
    pub(crate) fn first_item_token(&self) -> usize {
        self.outer.tokens().len() + 1
    }

    /// Where the value lands in the compensator's arguments: the parameter, an element, the
    /// members.
    pub(crate) fn target(&self) -> JsonPointer {
        JsonPointer::from_tokens(
            [self.binding.parameter.as_str(), "0"]
                .into_iter()
                .chain(self.members.iter().copied()),
        )
    }

    /// The element reference and the array it reads, for messages.
    pub(crate) fn written(&self) -> String {
        format!(
            "`{}` in each element of `{}`",
            item_reference(self.item),
            self.map.source
        )
    }

    /// The schema read, for messages.
    pub(crate) fn schema_name(&self) -> &'static str {
        self.site.tool.schema_name(self.side)
    }

    /// Pointer of the element reference in the document (inside the binding's `$each`).
    pub(crate) fn binding_pointer(&self) -> String {
        let mut pointer = format!(
            "{}/{}",
            self.site.binding_pointer(&self.binding.parameter),
            escape_token(mcp_recovery_model::EACH_KEY)
        );
        for member in &self.members {
            pointer.push('/');
            pointer.push_str(&escape_token(member));
        }
        pointer
    }
}

/// One compensating call declared by one carrier of one tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Site<'c, 'a> {
    pub tool: &'c ToolRef<'a>,
    pub typed: &'c Tool,
    pub declared: &'c DeclaredRecovery,
    pub compensation: &'c Compensation,
    /// The tool named as compensator, when it is in the list.
    pub compensator: Option<&'c ToolRef<'a>>,
}

impl Site<'_, '_> {
    /// Pointer of the carrier object.
    pub(crate) fn carrier_pointer(&self) -> String {
        self.tool.at(self.declared.carrier.pointer())
    }

    /// Pointer of the compensating tool's name.
    pub(crate) fn target_pointer(&self) -> String {
        format!(
            "{}{}",
            self.carrier_pointer(),
            self.declared.carrier.target_pointer()
        )
    }

    /// Pointer of the parameter → binding object.
    pub(crate) fn bindings_pointer(&self) -> String {
        format!(
            "{}{}",
            self.carrier_pointer(),
            self.declared.carrier.bindings_pointer()
        )
    }

    /// Pointer of one parameter's binding.
    pub(crate) fn binding_pointer(&self, parameter: &str) -> String {
        format!("{}/{}", self.bindings_pointer(), escape_token(parameter))
    }

    /// The name of the tool declaring the compensation.
    pub(crate) fn tool_name(&self) -> Option<&str> {
        Some(self.typed.name.as_str())
    }

    /// The typed compensator, when it is in the list and well formed.
    pub(crate) fn compensator_tool(&self) -> Option<&Tool> {
        self.compensator?.typed.as_ref()
    }

    /// The `inputSchema` of the compensator, when it is in the list and well formed.
    pub(crate) fn compensator_input_schema(&self) -> Option<&Value> {
        self.compensator_tool()?;
        self.compensator?.input_schema()
    }
}

/// One body expression read by a binding.
#[derive(Debug, Clone)]
pub(crate) struct BodyRead<'c, 'a> {
    pub site: Site<'c, 'a>,
    pub binding: &'c ParameterBinding,
    pub expression: &'c RuntimeExpression,
    pub side: BodySide,
    pub pointer: JsonPointer,
    /// `inputSchema` for `$request.body`, `outputSchema` (if any) for `$response.body`.
    pub schema: Option<&'c Value>,
}

impl BodyRead<'_, '_> {
    /// Pointer of the binding in the document.
    pub(crate) fn binding_pointer(&self) -> String {
        self.site.binding_pointer(&self.binding.parameter)
    }

    /// The expression as the author wrote it (a JSONPath stays a JSONPath), for messages.
    pub(crate) fn written(&self) -> String {
        match (&self.binding.binding, &self.binding.raw) {
            (Ok(Binding::Expression(_)), Value::String(text)) => crate::finding::excerpt(text, 120),
            _ => self.expression.to_string(),
        }
    }

    /// What the source schema allows at the pointer, read as the binding's carrier reads it;
    /// `None` when there is no schema to read.
    pub(crate) fn resolution(&self) -> Option<Resolution> {
        let reading = self.site.declared.carrier.reading();
        Some(resolve_as(self.schema?, &self.pointer, reading))
    }

    /// The schema read, for messages.
    pub(crate) fn schema_name(&self) -> &'static str {
        self.site.tool.schema_name(self.side)
    }
}

/// Where an expression sits inside its binding: the `{$…}` of a template, else the whole value.
pub(crate) fn expression_focus(
    raw: &Value,
    binding: &Binding,
    expression: &RuntimeExpression,
) -> Focus {
    match (binding, raw) {
        (Binding::Template(_), Value::String(text)) => text
            .find(&format!("{{{expression}}}"))
            .map_or(Focus::Value, |at| Focus::InString(at + 1)),
        _ => Focus::Value,
    }
}

#[cfg(test)]
mod tests;
