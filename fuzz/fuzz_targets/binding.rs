//! `Binding::parse_sep` and `Binding::parse_compensate` on any JSON value (the input parsed as
//! JSON, and the input itself as a JSON string): they never panic, error offsets are character
//! boundaries of the string, and an accepted binding writes back to a value that parses the same.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_recovery_model::{Binding, Template};
use serde_json::Value;

fn check(value: &Value) {
    let text = value.as_str();
    match Binding::parse_sep(value) {
        Ok(binding) => {
            let written = binding.to_value();
            assert_eq!(
                &written, value,
                "to_value does not give back the parsed value"
            );
            assert_eq!(Binding::parse_sep(&written).as_ref(), Ok(&binding));
            for expression in binding.expressions() {
                let shown = expression.to_string();
                assert!(
                    text.is_some_and(|t| t.contains(&shown)),
                    "{shown} not in {value}"
                );
            }
        }
        Err(error) => {
            if let (Some(offset), Some(text)) = (error.offset(), text) {
                assert!(text.is_char_boundary(offset), "offset {offset} in {text:?}");
            }
        }
    }
    if let Ok(binding) = Binding::parse_compensate(value) {
        assert_eq!(binding.expressions().len(), 1);
    }
    if let Some(text) = text
        && let Ok(template) = Template::parse(text)
    {
        assert_eq!(template.to_string(), text);
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        check(&value);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        check(&Value::String(text.to_owned()));
    }
});
