//! The input reader on any bytes: `mcp_recovery_model::json::from_slice` accepts exactly what
//! serde_json accepts, refuses with serde_json's very error, and reads the same value, numbers
//! equal by value; the text it writes back reads again to the same text.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// Equal trees, members in the same order, numbers equal by value.
fn same(ours: &Value, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        (a, b) => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    let ours = mcp_recovery_model::json::from_slice(data);
    match (&ours, serde_json::from_slice::<Value>(data)) {
        (Ok(ours), Ok(theirs)) => assert!(same(ours, &theirs), "{ours} against {theirs}"),
        (Err(ours), Err(theirs)) => assert_eq!(ours.to_string(), theirs.to_string()),
        (ours, theirs) => panic!("{ours:?} against {theirs:?}"),
    }
    if let Ok(value) = ours {
        let text = value.to_string();
        let again = mcp_recovery_model::json::from_str(&text)
            .unwrap_or_else(|e| panic!("{text:?} does not read again: {e}"));
        assert_eq!(again.to_string(), text);
    }
});
