//! The chain's hashing: the canonical form records are hashed and signed over, and the hash
//! each record carries.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The `prev` of the first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The journal's canonical form of `value` (spec/journal.md: RFC 8785, numbers as written): the
/// bytes records are hashed over and signed statements are signed over.
pub fn canonical(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    crate::canonical::write(value, &mut out);
    out
}

/// The `hash` a record must carry: sha256 over the canonical form of the record without `hash`
/// (RFC 8785, each number written as the JSON text it was read as; see `spec/journal.md`).
pub(crate) fn record_hash(record: &Map<String, Value>) -> String {
    let mut canonical = Vec::new();
    crate::canonical::write_object(record, Some("hash"), &mut canonical);
    hex(&Sha256::digest(&canonical))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    out
}
