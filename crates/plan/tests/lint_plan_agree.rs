//! Lint and plan agree: for a tool list with no lint errors and a trace whose results conform to
//! the tools' schemas, `plan` never answers `unavailable` for a reason the documents alone show.
//!
//! The generated lists are built so that nothing about the recorded values can make a binding
//! fail (every property is required, arrays have an item, the compensator never accepts less of a
//! type than the source can hold unless the two are disjoint): every `unavailable` left is then
//! one lint could have reported. The generator reaches the classes lint must catch: templates
//! embedding objects, arrays and `null`, compensate-carrier name selectors over arrays, and
//! compensator `inputSchema`s with a remote `$ref` or an unknown `$schema`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_recovery_plan::{Planner, Status, TracedCall, load_tools};
use mcp_recovery_validator::{LintOptions, Linter, Severity};
use proptest::prelude::*;
use serde_json::{Value, json};

/// The JSON type of one property of the traced tool's schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Str,
    Int,
    Num,
    Bool,
    Null,
    Obj,
    StrList,
    ObjList,
}

const KINDS: [Kind; 8] = [
    Kind::Str,
    Kind::Int,
    Kind::Num,
    Kind::Bool,
    Kind::Null,
    Kind::Obj,
    Kind::StrList,
    Kind::ObjList,
];

impl Kind {
    fn schema(self) -> Value {
        let object =
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]});
        match self {
            Self::Str => json!({"type": "string"}),
            Self::Int => json!({"type": "integer"}),
            Self::Num => json!({"type": "number"}),
            Self::Bool => json!({"type": "boolean"}),
            Self::Null => json!({"type": "null"}),
            Self::Obj => object,
            Self::StrList => json!({"type": "array", "items": {"type": "string"}, "minItems": 1}),
            Self::ObjList => json!({"type": "array", "items": object, "minItems": 1}),
        }
    }

    fn value(self, seed: u32) -> Value {
        match self {
            Self::Str => json!(format!("s{seed}")),
            Self::Int => json!(seed),
            Self::Num => json!(f64::from(seed) + 0.5),
            Self::Bool => json!(seed.is_multiple_of(2)),
            Self::Null => Value::Null,
            Self::Obj => json!({"id": format!("o{seed}")}),
            Self::StrList => json!([format!("l{seed}")]),
            Self::ObjList => json!([{"id": format!("i{seed}")}]),
        }
    }

    /// The kind at `/0` (and `/0/id`) below a list, for an indexing binding.
    fn item(self) -> Option<Self> {
        match self {
            Self::StrList => Some(Self::Str),
            // `/0/id` of a list of objects.
            Self::ObjList => Some(Self::Str),
            _ => None,
        }
    }
}

/// How one parameter of the compensating call is bound.
#[derive(Debug, Clone)]
struct Bound {
    /// Reads the response (else the request).
    response: bool,
    field: usize,
    /// Indexes the first item (`/0`, `/0/id`, `['0']`, `['0'].id`) when the field is a list.
    index: bool,
    /// SEP-3172 only: a template embedding the expression, or a constant instead.
    form: u8,
    /// What the compensator's parameter accepts: 0 anything, 1 the source's own schema, 2 a
    /// schema of another kind (never `number`, which would overlap an `integer` source).
    accepts: u8,
    other: Kind,
}

#[derive(Debug, Clone)]
struct Case {
    compensate_carrier: bool,
    input: Vec<Kind>,
    output: Vec<Kind>,
    bound: Vec<Bound>,
    /// 0 plain, 1 draft-07, 2 draft 2020-12, 3 unknown dialect, 4 remote `$ref`, 5 closed.
    schema_variant: u8,
    /// The compensator also requires a parameter nobody binds.
    unbound_required: bool,
    seed: u32,
}

fn kinds() -> impl Strategy<Value = Vec<Kind>> {
    proptest::collection::vec(proptest::sample::select(KINDS.to_vec()), 1..4)
}

fn case() -> impl Strategy<Value = Case> {
    let others = proptest::sample::select(
        KINDS
            .iter()
            .copied()
            .filter(|k| *k != Kind::Num)
            .collect::<Vec<_>>(),
    );
    let bound = (
        any::<bool>(),
        0usize..3,
        any::<bool>(),
        0u8..4,
        0u8..3,
        others,
    )
        .prop_map(|(response, field, index, form, accepts, other)| Bound {
            response,
            field,
            index,
            form,
            accepts,
            other,
        });
    (
        any::<bool>(),
        kinds(),
        kinds(),
        proptest::collection::vec(bound, 1..4),
        0u8..6,
        proptest::bool::weighted(0.1),
        any::<u32>(),
    )
        .prop_map(
            |(compensate_carrier, input, output, bound, schema_variant, unbound_required, seed)| {
                Case {
                    compensate_carrier,
                    input,
                    output,
                    bound,
                    schema_variant,
                    unbound_required,
                    seed,
                }
            },
        )
}

fn object_schema(kinds: &[Kind]) -> Value {
    let names: Vec<String> = (0..kinds.len()).map(|i| format!("f{i}")).collect();
    let properties: serde_json::Map<String, Value> = names
        .iter()
        .zip(kinds)
        .map(|(name, kind)| (name.clone(), kind.schema()))
        .collect();
    json!({"type": "object", "properties": properties, "required": names})
}

fn object_value(kinds: &[Kind], seed: u32) -> Value {
    Value::Object(
        kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| (format!("f{i}"), kind.value(seed.wrapping_add(i as u32))))
            .collect(),
    )
}

/// The tool list and the one-line trace of a case.
fn documents(case: &Case) -> (Value, TracedCall) {
    let mut bindings = serde_json::Map::new();
    let mut parameters = serde_json::Map::new();
    for (i, bound) in case.bound.iter().enumerate() {
        let kinds = if bound.response {
            &case.output
        } else {
            &case.input
        };
        let field = bound.field % kinds.len();
        let kind = kinds[field];
        let index = bound.index && kind.item().is_some();
        let produced = if index {
            kind.item().unwrap_or(kind)
        } else {
            kind
        };
        let parameter = format!("p{i}");
        // (root, separator, tail indexing the first item, tail reading its id) per carrier.
        let spelling = match (case.compensate_carrier, bound.response) {
            (true, true) => ("$.output.structuredContent", ".", "['0']", "['0'].id"),
            (true, false) => ("$.input", ".", "['0']", "['0'].id"),
            (false, true) => ("$response.body#", "/", "/0", "/0/id"),
            (false, false) => ("$request.body#", "/", "/0", "/0/id"),
        };
        let (root, separator, item, item_id) = spelling;
        let tail = match (index, kind) {
            (true, Kind::ObjList) => item_id,
            (true, _) => item,
            _ => "",
        };
        let (binding, produced) = if case.compensate_carrier {
            (
                json!(format!("{root}{separator}f{field}{tail}")),
                Some(produced),
            )
        } else {
            let expression = format!("{root}{separator}f{field}{tail}");
            match bound.form {
                0 | 1 => (json!(expression), Some(produced)),
                2 => (json!(format!("ref-{{{expression}}}")), Some(Kind::Str)),
                _ => (json!(case.seed % 7), None),
            }
        };
        let accepts = match (bound.accepts, produced) {
            (0, _) => json!({}),
            (1, Some(kind)) => kind.schema(),
            (1, None) => json!({"type": "integer"}),
            // An `integer` parameter accepts only some of what a `number` source holds.
            (_, Some(Kind::Num)) if bound.other == Kind::Int => Kind::Str.schema(),
            _ => bound.other.schema(),
        };
        bindings.insert(parameter.clone(), binding);
        parameters.insert(parameter, accepts);
    }
    let mut required: Vec<String> = parameters.keys().cloned().collect();
    if case.unbound_required {
        parameters.insert("unbound".into(), json!({"type": "string"}));
        required.push("unbound".into());
    }
    let mut compensator_schema =
        json!({"type": "object", "properties": parameters, "required": required});
    match case.schema_variant {
        1 => compensator_schema["$schema"] = json!("http://json-schema.org/draft-07/schema#"),
        2 => compensator_schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema"),
        3 => compensator_schema["$schema"] = json!("https://schemas.example.com/dialect/v1"),
        4 => {
            compensator_schema["properties"]["p0"] =
                json!({"$ref": "https://schemas.example.com/p0.json"});
        }
        5 => compensator_schema["additionalProperties"] = json!(false),
        _ => {}
    }
    let mut producer = json!({
        "name": "produce",
        "inputSchema": object_schema(&case.input),
        "outputSchema": object_schema(&case.output),
        "annotations": {"destructiveHint": false},
    });
    if case.compensate_carrier {
        producer["_meta"] = json!({"dev.chronomcp/compensate": {"reversibility": "compensable",
            "compensation": {"toolName": "undo", "parameterMapping": bindings}}});
    } else {
        producer["annotations"]["recovery"] = json!({"strategy": "compensation",
            "compensatingOperation": {"operationId": "undo", "parameters": bindings}});
    }
    let compensator = json!({"name": "undo", "inputSchema": compensator_schema,
        "annotations": {"destructiveHint": true, "idempotentHint": true}});
    let call = TracedCall::from_value(&json!({
        "name": "produce",
        "arguments": object_value(&case.input, case.seed),
        "result": {"content": [], "structuredContent": object_value(&case.output, case.seed ^ 0x55)},
    }))
    .unwrap();
    (json!({"tools": [producer, compensator]}), call)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn plan_is_never_unavailable_for_a_reason_lint_knows(case in case()) {
        let (document, call) = documents(&case);
        let linter = Linter::new(LintOptions::default()).unwrap();
        let report = linter.lint_source(document.to_string().as_bytes());
        let errors = report.diagnostics.iter().any(|d| d.severity == Severity::Error);
        if !errors {
            let tools = load_tools(&document).unwrap();
            let step = Planner::for_list(&tools).resolve_step(&call);
            prop_assert!(
                step.status != Status::Unavailable,
                "lint is clean, plan is unavailable: {}\ndocument: {document}\ncall: {call:?}",
                step.reason
            );
        }
    }
}
