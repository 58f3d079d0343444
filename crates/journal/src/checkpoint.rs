//! Signed checkpoints: a `checkpoint` record signs the hash of the record before it with the
//! journal key, so a journal rewritten and rehashed no longer verifies against the public key.
//! `spec/journal.md` ("Signed checkpoints") defines the record and the signed statement.

use serde_json::{Map, Value};

use crate::canonical;
use crate::keys::{PublicKey, SecretKey};

/// The `type` of the signed statement.
pub const CHECKPOINT_TYPE: &str = "mcp-recovery/checkpoint";

/// The bytes a checkpoint signs: the canonical form of
/// `{"type":"mcp-recovery/checkpoint","seq":SEQ,"head":HEAD}`, i.e.
/// `{"head":HEAD,"seq":SEQ,"type":"mcp-recovery/checkpoint"}`.
pub fn statement(seq: u64, head: &str) -> Vec<u8> {
    let mut object = Map::new();
    object.insert("type".into(), Value::from(CHECKPOINT_TYPE));
    object.insert("seq".into(), Value::from(seq));
    object.insert("head".into(), Value::from(head));
    let mut out = Vec::new();
    canonical::write_object(&object, None, &mut out);
    out
}

/// The members of the checkpoint signing record `seq`, whose hash is `head`.
pub(crate) fn fields(key: &SecretKey, seq: u64, head: &str) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("covers".into(), Value::from(seq));
    fields.insert("head".into(), Value::from(head));
    fields.insert("key".into(), Value::from(key.public().id()));
    fields.insert(
        "signature".into(),
        Value::from(key.sign(&statement(seq, head))),
    );
    fields
}

/// Checks a `checkpoint` record (already verified in the chain) against the keys: it must sign
/// the record just before it (`covers` = its `seq` − 1, `head` = its `prev`), with one of
/// `keys`, and the signature must verify. The fault, in words.
pub(crate) fn check(record: &Map<String, Value>, keys: &[PublicKey]) -> Result<(), String> {
    let seq = record.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let covers = record.get("covers").and_then(Value::as_u64);
    let head = record.get("head").and_then(Value::as_str);
    let prev = record.get("prev").and_then(Value::as_str);
    let (Some(covers), Some(head)) = (covers, head) else {
        return Err(format!(
            "checkpoint seq {seq}: no \"covers\" number or \"head\" string"
        ));
    };
    if covers + 1 != seq || Some(head) != prev {
        return Err(format!(
            "checkpoint seq {seq}: it does not sign the record just before it (covers {covers})"
        ));
    }
    let Some(id) = record.get("key").and_then(Value::as_str) else {
        return Err(format!("checkpoint seq {seq}: no \"key\" string"));
    };
    let Some(key) = keys.iter().find(|k| k.id() == id) else {
        return Err(format!(
            "checkpoint seq {seq}: signed with key {}, which is not a key given",
            crate::broken::shown(id)
        ));
    };
    let signature = record
        .get("signature")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !key.verify(&statement(covers, head), signature) {
        return Err(format!(
            "checkpoint seq {seq}: the signature does not verify with key {id} (the journal \
             was rewritten, or signed by another key)"
        ));
    }
    Ok(())
}

/// A checkpoint kept elsewhere (a line `--checkpoint-to` was handed): its `seq` and `hash`,
/// once its hash is checked against its content.
pub fn kept(line: &str) -> Result<(u64, String), String> {
    let record = match mcp_recovery_model::json::from_str(line) {
        Ok(Value::Object(record)) => record,
        Ok(_) => return Err("not a JSON object".into()),
        Err(e) => return Err(format!("not JSON ({e})")),
    };
    if record.get("kind").and_then(Value::as_str) != Some("checkpoint") {
        return Err("not a checkpoint record".into());
    }
    let Some(seq) = record
        .get("seq")
        .and_then(Value::as_u64)
        .filter(|&seq| seq > 0)
    else {
        return Err("no \"seq\" number from 1 to 2^64 - 1".into());
    };
    let Some(hash) = record.get("hash").and_then(Value::as_str) else {
        return Err("no \"hash\" string".into());
    };
    if crate::hash::record_hash(&record) != hash {
        return Err(format!("checkpoint seq {seq} does not match its hash"));
    }
    Ok((seq, hash.to_owned()))
}
