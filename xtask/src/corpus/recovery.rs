//! Recovery declarations written onto drafted tools, some with a planted defect.

use serde_json::{Map, Value, json};

use super::config::CorpusConfig;
use super::rng::Rng;
use super::tools::{Draft, schema_header};

/// Defect kinds planted into SEP-3172 declarations, by the code the linter must report.
pub(super) const DEFECTS: [&str; 4] = ["R101", "R104", "R106", "R109"];

/// Writes a forward/compensator pair's schemas and their declaration onto two drafts.
/// Returns the code of the planted defect, if any.
pub(super) fn declare_pair(
    rng: &mut Rng,
    config: &CorpusConfig,
    drafts: &mut [Draft],
    fwd: usize,
    comp: usize,
    defects_so_far: &mut usize,
) -> Option<&'static str> {
    let noun = drafts[fwd].name.clone();
    let comp_name = drafts[comp].name.clone();
    let (dialect, _) = schema_header(rng);
    let mut output = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "Identifier of the created item."},
            "status": {"type": "string", "enum": ["created", "pending"]},
            "createdAt": {"type": "string", "format": "date-time"}
        },
        "required": ["id", "status"],
        "additionalProperties": false
    });
    if let (Some(d), Some(o)) = (dialect, output.as_object_mut()) {
        o.insert("$schema".into(), json!(d));
    }
    drafts[fwd].tool.insert("outputSchema".into(), output);

    // Carrier: SEP-3172 only, compensate only, or both (agreeing).
    let carrier = rng.weighted(&[450, 350, 200]);
    // Kinds rotate, so every kind is planted as soon as a few defects are.
    let defect = if carrier == 0 && rng.chance(config.defect_ppm) {
        let kind = DEFECTS[*defects_so_far % DEFECTS.len()];
        *defects_so_far += 1;
        Some(kind)
    } else {
        None
    };
    let mut required = vec![json!("id")];
    if defect == Some("R109") {
        required.push(json!("reason"));
    }
    drafts[comp].tool.insert(
        "inputSchema".into(),
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": format!("Identifier returned by {noun}.")},
                "reason": {"type": "string", "enum": ["rollback", "user_request"]},
                "note": {"type": "string"}
            },
            "required": required
        }),
    );

    let pointer = match defect {
        Some("R104") => "$response.body#id",
        Some("R106") => "$response.body#/identifier",
        _ => "$response.body#/id",
    };
    let target = if defect == Some("R101") {
        format!("undo_{noun}")
    } else {
        comp_name.clone()
    };
    if carrier == 0 || carrier == 2 {
        let mut parameters = Map::new();
        parameters.insert("id".into(), json!(pointer));
        if carrier == 0 && defect.is_none() {
            match rng.below(3) {
                0 => {
                    parameters.insert("reason".into(), json!("rollback"));
                }
                1 => {
                    parameters.insert("note".into(), json!("rollback of {$response.body#/id}"));
                }
                _ => {}
            }
        }
        let recovery = json!({"strategy": "compensation",
            "compensatingOperation": {"operationId": target, "parameters": parameters}});
        let annotations = drafts[fwd]
            .tool
            .entry("annotations")
            .or_insert_with(|| json!({}));
        if let Some(a) = annotations.as_object_mut() {
            a.insert("recovery".into(), recovery);
        }
        drafts[fwd].facts_sep = true;
    }
    if carrier == 1 || carrier == 2 {
        let mut compensation = json!({"toolName": comp_name,
            "parameterMapping": {"id": "$.output.structuredContent.id"}});
        if rng.chance(500_000)
            && let Some(c) = compensation.as_object_mut()
        {
            c.insert("timeoutMs".into(), json!(30_000));
            c.insert("maxRetries".into(), json!(3));
        }
        let mut meta = Map::new();
        meta.insert(
            mcp_recovery_model::COMPENSATE_META_KEY.into(),
            json!({"reversibility": "compensable", "compensation": compensation, "sideEffectScope": ["storage"]}),
        );
        drafts[fwd].tool.insert("_meta".into(), Value::Object(meta));
        drafts[fwd].facts_compensate = true;
    }
    drafts[fwd].classes.insert("compensable");
    defect
}

/// A self-inverse move: the compensator is the tool itself with its two paths swapped.
pub(super) fn declare_self_inverse(drafts: &mut [Draft], tool: usize) {
    let d = &mut drafts[tool];
    d.tool.insert(
        "inputSchema".into(),
        json!({"type": "object", "properties": {
            "source": {"type": "string", "description": "Current path."},
            "destination": {"type": "string", "description": "New path."}
        }, "required": ["source", "destination"], "additionalProperties": false}),
    );
    let recovery = json!({"strategy": "compensation", "compensatingOperation": {
        "operationId": d.name, "parameters": {
            "source": "$request.body#/destination", "destination": "$request.body#/source"}}});
    let annotations = d.tool.entry("annotations").or_insert_with(|| json!({}));
    if let Some(a) = annotations.as_object_mut() {
        a.insert("recovery".into(), recovery);
    }
    d.facts_sep = true;
    d.classes.insert("compensable");
}

pub(super) fn declare_irreversible(drafts: &mut [Draft], tool: usize) {
    let d = &mut drafts[tool];
    let mut meta = Map::new();
    meta.insert(
        mcp_recovery_model::COMPENSATE_META_KEY.into(),
        json!({"reversibility": "irreversible", "notes": "Sent messages cannot be recalled."}),
    );
    d.tool.insert("_meta".into(), Value::Object(meta));
    d.facts_compensate = true;
    d.classes.insert("irreversible");
}
