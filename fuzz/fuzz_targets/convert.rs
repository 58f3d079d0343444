//! The carrier converter on any JSON document: `convert_document` to either carrier, and back
//! from the result, never panics, and every note points into the converted document's tools.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_recovery_model::{Carrier, convert_document};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(document) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for (there, back) in [
        (Carrier::Compensate, Carrier::Sep3172),
        (Carrier::Sep3172, Carrier::Compensate),
    ] {
        let Ok(converted) = convert_document(&document, there) else {
            continue;
        };
        for note in &converted.notes {
            assert!(
                note.pointer.is_empty() || note.pointer.starts_with('/'),
                "note pointer {:?}",
                note.pointer
            );
        }
        let _ = convert_document(&converted.document, back);
    }
});
