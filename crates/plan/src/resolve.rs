//! Evaluating bindings against a recorded call (`spec/recovery-metadata.md` §5.2 and §7).

use mcp_recovery_model::{
    BeforeRef, Binding, BodySide, Carrier, JsonPointer, MapSource, PointerReading as Reading,
    RuntimeExpression, Source, TemplatePart, item_reference, json_type_name,
};
use serde_json::{Map, Value};

use crate::trace::TracedCall;

/// What `$response.body` reads for one call.
#[derive(Debug, Clone)]
pub(crate) enum Response {
    /// The result's `structuredContent` (`None` when it has none, or it is `null`).
    Structured(Option<Value>),
    /// The value an overlay's reader read from the result's text and checked against its
    /// schema, or why there is none.
    Read(Result<Value, String>),
}

/// What a before-image undo reads: the result of the read run before the call, and the value
/// `$before.body` reads in it (its `structuredContent`, or, when the overlay declares a reader
/// for the read tool, the value read from its text and checked against the declared schema).
pub(crate) struct BeforeRead<'a> {
    pub result: &'a Map<String, Value>,
    pub body: Response,
}

impl BeforeRead<'_> {
    /// The value `pointer` selects in what `$before.body` reads, or why there is none.
    fn select(
        &self,
        reference: &dyn std::fmt::Display,
        pointer: &JsonPointer,
    ) -> Result<&Value, String> {
        let (body, place) = match &self.body {
            Response::Structured(Some(body)) => (body, "the read's structuredContent"),
            Response::Read(Ok(body)) => (body, "the value read from the read's text"),
            Response::Structured(None) => {
                return Err(format!(
                    "`{reference}` needs the read's structuredContent, which it did not return (text content is never parsed)"
                ));
            }
            Response::Read(Err(why)) => {
                return Err(format!(
                    "`{reference}` reads the read's text as the overlay declares, but {why}"
                ));
            }
        };
        pointer
            .evaluate(body)
            .ok_or_else(|| format!("`{reference}` selects nothing in {place}"))
    }
}

/// Why one expression yields no value; the text completes "… bound to X: <why>".
pub(crate) fn resolve_expression<'a>(
    reading: Reading,
    expression: &RuntimeExpression,
    response: &'a Response,
    arguments: &'a Value,
) -> Result<&'a Value, String> {
    let (side, pointer) = match expression {
        RuntimeExpression::Url | RuntimeExpression::Method | RuntimeExpression::StatusCode => {
            return Err(format!(
                "`{expression}` has no meaning in MCP (a tool call has no URL, method or status code)"
            ));
        }
        RuntimeExpression::Request(Source::Body(_))
        | RuntimeExpression::Response(Source::Body(_)) => match expression.body_target() {
            Some(target) => target,
            None => return Err(format!("`{expression}` selects no body")),
        },
        RuntimeExpression::Request(_) | RuntimeExpression::Response(_) => {
            return Err(format!(
                "`{expression}` has no meaning in MCP (a tool call has no headers, query or path parameters)"
            ));
        }
    };
    match (side, response) {
        (BodySide::Request, _) => reading
            .evaluate(&pointer, arguments)
            .ok_or_else(|| format!("`{expression}` selects nothing in the call's arguments")),
        (BodySide::Response, Response::Structured(None)) => Err(format!(
            "`{expression}` needs the result's structuredContent, which the call did not return (text content is never parsed)"
        )),
        (BodySide::Response, Response::Structured(Some(content))) => {
            reading.evaluate(&pointer, content).ok_or_else(|| {
                format!("`{expression}` selects nothing in the result's structuredContent")
            })
        }
        (BodySide::Response, Response::Read(Err(why))) => Err(format!(
            "`{expression}` reads the result's text as the overlay declares, but {why}"
        )),
        (BodySide::Response, Response::Read(Ok(value))) => {
            reading.evaluate(&pointer, value).ok_or_else(|| {
                format!("`{expression}` selects nothing in the value read from the result's text")
            })
        }
    }
}

/// The string `select` finds in the read result's only content item of type `kind`
/// (`$before.text`, `$before.blob`).
fn only_item(
    read: &Map<String, Value>,
    reference: &BeforeRef,
    kind: &str,
    select: impl Fn(&Value) -> Option<&Value>,
) -> Result<Value, String> {
    let found: Vec<&Value> = read
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some(kind))
        .filter_map(|item| select(item).filter(|value| value.is_string()))
        .collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        other => Err(format!(
            "`{reference}` needs exactly one {kind} item in the read's result, which has {}",
            other.len()
        )),
    }
}

/// The value of one binding, or why it has none.
pub(crate) fn resolve_binding(
    reading: Reading,
    binding: &Binding,
    response: &Response,
    arguments: &Value,
    before: Option<&BeforeRead>,
) -> Result<Value, String> {
    let before_image = |reference: &dyn std::fmt::Display| {
        before.ok_or_else(|| {
            format!("`{reference}` reads the before-image, which only a before-image undo has")
        })
    };
    match binding {
        Binding::Before(reference) => {
            let read = before_image(reference)?;
            match reference {
                BeforeRef::Text => {
                    let text = only_item(read.result, reference, "text", |item| item.get("text"))?;
                    // A server that reads bytes as UTF-8 puts U+FFFD where they were not:
                    // such a text written back would change what it stood for.
                    if text.as_str().is_some_and(|text| text.contains('\u{fffd}')) {
                        return Err(format!(
                            "`{reference}` holds U+FFFD, which a read puts in place of bytes that are not UTF-8: written back, it would not restore what was there"
                        ));
                    }
                    Ok(text)
                }
                BeforeRef::Blob => only_item(read.result, reference, "resource", |item| {
                    item.get("resource")?.get("blob")
                }),
                BeforeRef::Body(pointer) => read.select(reference, pointer).cloned(),
            }
        }
        Binding::Constant(value) => Ok(value.clone()),
        Binding::Expression(expression) => {
            resolve_expression(reading, expression, response, arguments).cloned()
        }
        Binding::Template(template) => {
            let mut text = String::new();
            for part in &template.parts {
                match part {
                    TemplatePart::Literal(literal) => text.push_str(literal),
                    TemplatePart::Expression(expression) => {
                        match resolve_expression(reading, expression, response, arguments)? {
                            Value::String(s) => text.push_str(s),
                            // The number's JSON text as written (`1e2` stays `1e2`).
                            Value::Number(n) => text.push_str(&n.to_string()),
                            Value::Bool(b) => text.push_str(if *b { "true" } else { "false" }),
                            other => {
                                return Err(format!(
                                    "`{{{expression}}}` resolved to {}; a template inserts only strings, numbers and booleans",
                                    json_type_name(other)
                                ));
                            }
                        }
                    }
                }
            }
            Ok(Value::String(text))
        }
        Binding::Map(map) => {
            let source = match &map.source {
                MapSource::Call(expression) => {
                    resolve_expression(reading, expression, response, arguments)?
                }
                MapSource::Before(pointer) => {
                    before_image(&map.source)?.select(&map.source, pointer)?
                }
            };
            let Value::Array(elements) = source else {
                return Err(format!(
                    "`{}` selected {}, but a map binding reads an array",
                    map.source,
                    json_type_name(source)
                ));
            };
            elements
                .iter()
                .enumerate()
                .map(|(index, element)| {
                    map.each.build(element).map_err(|item| {
                        format!(
                            "`{}` selects nothing in element {index} of `{}`",
                            item_reference(item),
                            map.source
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
    }
}

/// Every parameter resolved, or every reason one is not (never a partial call).
pub(crate) fn resolve_arguments(
    carrier: Carrier,
    declared: &mcp_recovery_model::Compensation,
    call: &TracedCall,
    response: &Response,
    before: Option<&BeforeRead>,
) -> Result<Map<String, Value>, Vec<String>> {
    let reading = carrier.reading();
    let request = Value::Object(call.arguments.clone());
    let mut arguments = Map::new();
    let mut failures = Vec::new();
    for parameter in &declared.bindings {
        let outcome = match &parameter.binding {
            Err(error) => Err(format!("malformed binding: {error}")),
            Ok(binding) => resolve_binding(reading, binding, response, &request, before),
        };
        match outcome {
            Ok(value) => {
                arguments.insert(parameter.parameter.clone(), value);
            }
            Err(why) => failures.push(format!(
                "parameter '{}' bound to {}: {why}",
                parameter.parameter, parameter.raw
            )),
        }
    }
    if failures.is_empty() {
        Ok(arguments)
    } else {
        Err(failures)
    }
}

/// The arguments of the read a before-image declares, resolved from the call's arguments (its
/// bindings read only `$request.body`), or every reason one is not.
pub fn read_arguments(
    image: &mcp_recovery_model::BeforeImage,
    arguments: &Map<String, Value>,
) -> Result<Map<String, Value>, Vec<String>> {
    let request = Value::Object(arguments.clone());
    let none = Response::Structured(None);
    let mut resolved = Map::new();
    let mut failures = Vec::new();
    for (parameter, raw) in &image.arguments {
        let outcome = Binding::parse_undo(raw)
            .map_err(|e| format!("malformed binding: {e}"))
            .and_then(|binding| resolve_binding(Reading::Pointer, &binding, &none, &request, None));
        match outcome {
            Ok(value) => {
                resolved.insert(parameter.clone(), value);
            }
            Err(why) => failures.push(format!("parameter '{parameter}' bound to {raw}: {why}")),
        }
    }
    if failures.is_empty() {
        Ok(resolved)
    } else {
        Err(failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(arguments: Value, result: Value) -> TracedCall {
        TracedCall::from_value(&json!({"name": "t", "arguments": arguments, "result": result}))
            .unwrap()
    }

    fn resolve(binding: Value, call: &TracedCall) -> Result<Value, String> {
        let binding = Binding::parse_sep(&binding).unwrap();
        resolve_binding(
            Reading::Pointer,
            &binding,
            &Response::Structured(call.structured_content().cloned()),
            &Value::Object(call.arguments.clone()),
            None,
        )
    }

    #[test]
    fn every_binding_form() {
        let c = call(
            json!({"a": {"b": 1}, "x/y": "slash", "m~n": "tilde"}),
            json!({"content": [], "structuredContent": {"id": "T-1", "n": 7, "ok": true, "obj": {}, "nil": null}}),
        );
        let cases = [
            (json!("$request.body#/a/b"), json!(1)),
            (json!("$request.body#/x~1y"), json!("slash")),
            (json!("$request.body#/m~0n"), json!("tilde")),
            (
                json!("$request.body"),
                json!({"a": {"b": 1}, "x/y": "slash", "m~n": "tilde"}),
            ),
            (json!("$response.body#/id"), json!("T-1")),
            (
                json!("$response.body"),
                json!({"id": "T-1", "n": 7, "ok": true, "obj": {}, "nil": null}),
            ),
            (json!("$response.body#/nil"), json!(null)),
            (
                json!("id={$response.body#/id}&n={$response.body#/n}&ok={$response.body#/ok}"),
                json!("id=T-1&n=7&ok=true"),
            ),
            (json!("plain text"), json!("plain text")),
            (json!(42), json!(42)),
            (json!({"k": [1]}), json!({"k": [1]})),
            (json!(null), json!(null)),
        ];
        for (binding, expected) in cases {
            assert_eq!(resolve(binding.clone(), &c), Ok(expected), "{binding}");
        }
    }

    #[test]
    fn unresolvable_bindings_say_why() {
        let c = call(
            json!({}),
            json!({"content": [{"type": "text", "text": "{\"id\": 1}"}]}),
        );
        let with_content = call(
            json!({}),
            json!({"structuredContent": {"obj": {"a": 1}, "nil": null}}),
        );
        let cases = [
            (json!("$url"), &c, "no meaning in MCP"),
            (json!("$method"), &c, "no meaning in MCP"),
            (json!("$statusCode"), &c, "no meaning in MCP"),
            (json!("$request.header.X-Id"), &c, "no headers"),
            (json!("$response.query.id"), &c, "no headers"),
            (json!("$request.path.id"), &c, "no headers"),
            (
                json!("$request.body#/missing"),
                &c,
                "nothing in the call's arguments",
            ),
            (
                json!("$response.body#/id"),
                &c,
                "text content is never parsed",
            ),
            (
                json!("$response.body#/id"),
                &with_content,
                "nothing in the result's structuredContent",
            ),
            (
                json!("x-{$response.body#/obj}"),
                &with_content,
                "resolved to object",
            ),
            (
                json!("x-{$response.body#/nil}"),
                &with_content,
                "resolved to null",
            ),
        ];
        for (binding, call, needle) in cases {
            let why = resolve(binding.clone(), call).unwrap_err();
            assert!(why.contains(needle), "{binding}: {why}");
        }
    }

    #[test]
    fn before_image_references() {
        let c = call(json!({}), json!({"content": []}));
        let resolve_before = |binding: &str, read: Option<Value>| {
            let binding = Binding::parse_undo(&json!(binding)).unwrap();
            let read = read.map(|r| r.as_object().unwrap().clone());
            let before = read.as_ref().map(|result| BeforeRead {
                result,
                body: Response::Structured(result.get("structuredContent").cloned()),
            });
            resolve_binding(
                Reading::Pointer,
                &binding,
                &Response::Structured(None),
                &Value::Object(c.arguments.clone()),
                before.as_ref(),
            )
        };
        // Read as the journal is read, so the number keeps its spelling.
        let read: Value = mcp_recovery_model::json::from_str(
            r#"{"content": [{"type": "text", "text": "old"},
                    {"type": "resource", "resource": {"uri": "file:///b.xlsx", "blob": "UEsD"}}],
                "structuredContent": {"size": 1E2, "meta": {"mode": "0644"}}}"#,
        )
        .unwrap();
        assert_eq!(
            resolve_before("$before.text", Some(read.clone())),
            Ok(json!("old"))
        );
        assert_eq!(
            resolve_before("$before.blob", Some(read.clone())),
            Ok(json!("UEsD"))
        );
        assert_eq!(
            resolve_before("$before.body#/size", Some(read.clone())).map(|v| v.to_string()),
            Ok("1E2".to_owned())
        );
        assert_eq!(
            resolve_before("$before.body", Some(read.clone())),
            Ok(read["structuredContent"].clone())
        );
        let cases = [
            (
                "$before.body#/gone",
                Some(read.clone()),
                "selects nothing in the read's structuredContent",
            ),
            ("$before.text", Some(json!({"content": []})), "has 0"),
            (
                "$before.blob",
                Some(json!({"content": []})),
                "one resource item",
            ),
            (
                "$before.text",
                Some(
                    json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
                ),
                "has 2",
            ),
            ("$before.text", None, "only a before-image undo has"),
            (
                "$before.text",
                Some(json!({"content": [{"type": "text", "text": "PNG\u{fffd}\u{fffd}"}]})),
                "holds U+FFFD",
            ),
        ];
        for (binding, read, needle) in cases {
            let why = resolve_before(binding, read).unwrap_err();
            assert!(why.contains(needle), "{binding}: {why}");
        }
    }

    #[test]
    fn map_bindings_over_the_before_image() {
        let c = call(json!({}), json!({"content": []}));
        let map = Binding::parse_undo(&json!({
            "$map": "$before.body#/entities",
            "$each": {"entityName": "$item#/name", "contents": "$item#/observations"}
        }))
        .unwrap();
        let result = Map::new();
        let resolve = |body: Response| {
            let before = BeforeRead {
                result: &result,
                body,
            };
            resolve_binding(
                Reading::Pointer,
                &map,
                &Response::Structured(None),
                &Value::Object(c.arguments.clone()),
                Some(&before),
            )
        };
        let graph = json!({"entities": [{"name": "ada", "observations": ["likes tea"]}]});
        let expected = json!([{"entityName": "ada", "contents": ["likes tea"]}]);
        assert_eq!(
            resolve(Response::Read(Ok(graph.clone()))),
            Ok(expected.clone())
        );
        assert_eq!(resolve(Response::Structured(Some(graph))), Ok(expected));
        let why = resolve(Response::Read(Err("the text is not JSON".into()))).unwrap_err();
        assert!(why.contains("the text is not JSON"), "{why}");
        let why = resolve(Response::Structured(None)).unwrap_err();
        assert!(why.contains("did not return"), "{why}");
        let why = resolve(Response::Read(Ok(json!({"entities": {}})))).unwrap_err();
        assert!(why.contains("a map binding reads an array"), "{why}");
        let without = resolve_binding(
            Reading::Pointer,
            &map,
            &Response::Structured(None),
            &Value::Object(c.arguments.clone()),
            None,
        )
        .unwrap_err();
        assert!(
            without.contains("only a before-image undo has"),
            "{without}"
        );
    }
}
