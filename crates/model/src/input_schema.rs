//! Compiling a compensator's `inputSchema`, the one way every consumer does it.

use jsonschema::Validator;
use serde_json::Value;

/// A validator for an `inputSchema`: the draft comes from `$schema` (2020-12 when absent);
/// remote references are never fetched, so a schema that needs one cannot be used, and neither can
/// a schema naming a `$schema` dialect the validator does not know. The linter reports exactly
/// what this refuses, so a plan never meets an unusable schema lint could have flagged.
pub fn compile_input_schema(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .build(schema)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unusable_schemas_say_why() {
        assert!(compile_input_schema(&json!({"type": "object"})).is_ok());
        assert!(
            compile_input_schema(
                &json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"})
            )
            .is_ok()
        );
        for schema in [
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.invalid/a.json"}}}),
            json!({"$schema": "https://example.invalid/dialect", "type": "object"}),
            json!({"type": "object", "properties": {"a": {"type": 5}}}),
        ] {
            let error = compile_input_schema(&schema).err();
            assert!(error.is_some(), "{schema}");
        }
    }
}
