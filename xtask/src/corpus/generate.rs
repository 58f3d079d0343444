//! Writing the corpus files and the manifest.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Value, json};

use super::config::CorpusConfig;
use super::expected::{Expected, ToolFacts};
use super::recovery::{DEFECTS, declare_irreversible, declare_pair, declare_self_inverse};
use super::rng::Rng;
use super::tables::signature_table;
use super::tools::{Draft, draw_tool_count, plain_tool, unique_name};

/// Every server's mean tool count is at least this, so 5,000 servers hold ≥ 100,000 tools.
const MIN_MEAN_TOOLS: usize = 20;
/// Share (ppm) of servers that emit no hint at all.
const SILENT_SERVER_PPM: u32 = 210_000;
/// Share (ppm) of a hint-emitting server's tools that carry its dominant signature outright.
const DOMINANT_PPM: u32 = 640_000;
/// Share (ppm) of multi-tool servers declaring recovery.
const RECOVERY_SERVER_PPM: u32 = 180_000;
/// Share (ppm) of hint-emitting servers whose tools all carry one signature (a server template).
const UNIFORM_SERVER_PPM: u32 = 140_000;
/// The result of generating a corpus.
#[derive(Debug)]
pub struct Generated {
    /// The manifest, also written to `OUT/manifest.json`.
    pub manifest: Value,
}

/// Generates the corpus into `out` (created if needed; existing corpus files are overwritten).
pub fn generate(out: &Path, config: &CorpusConfig) -> Result<Generated, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut rng = Rng(config.seed);
    let table = signature_table();
    let labels: Vec<&str> = table.iter().map(|(l, _)| l.as_str()).collect();
    let weights: Vec<u32> = table.iter().map(|(_, w)| *w).collect();
    // Hint-emitting servers draw from the table without the share the silent servers take.
    let none_index = labels.iter().position(|&l| l == "----").unwrap_or(0);
    let mut emitting_weights = weights.clone();
    let silent = SILENT_SERVER_PPM;
    emitting_weights[none_index] = emitting_weights[none_index].saturating_sub(silent);

    // Tool counts first, topped up above the median so the corpus reaches its tool budget.
    let mut counts: Vec<usize> = (0..config.servers)
        .map(|_| draw_tool_count(&mut rng))
        .collect();
    let budget = config.servers * MIN_MEAN_TOOLS;
    let mut total: usize = counts.iter().sum();
    let large: Vec<usize> = (0..counts.len()).filter(|&i| counts[i] >= 16).collect();
    while total < budget && !large.is_empty() {
        let i = *rng.pick(&large);
        counts[i] += 1;
        total += 1;
    }

    let mut expected = Expected::default();
    let mut planted: BTreeMap<&'static str, u64> = DEFECTS.iter().map(|&c| (c, 0)).collect();
    planted.insert("R004", 0);
    let mut recovery_servers = 0u64;
    let mut declarations = 0u64;
    let mut defects_so_far = 0usize;

    for (server, &count) in counts.iter().enumerate() {
        let is_silent = rng.chance(silent);
        let is_uniform = rng.chance(UNIFORM_SERVER_PPM);
        let dominant = labels[rng.weighted(&emitting_weights)];
        let mut used = BTreeSet::new();
        let mut drafts: Vec<Draft> = (0..count)
            .map(|_| {
                let signature = if is_silent {
                    "----"
                } else if is_uniform || rng.chance(DOMINANT_PPM) {
                    dominant
                } else {
                    labels[rng.weighted(&emitting_weights)]
                };
                let name = unique_name(&mut rng, &mut used, signature.starts_with('T'));
                let tool = plain_tool(&mut rng, &name, signature);
                Draft {
                    name,
                    signature: signature.to_owned(),
                    tool,
                    facts_sep: false,
                    facts_compensate: false,
                    classes: BTreeSet::new(),
                }
            })
            .collect();

        let mut duplicate = None;
        if count >= 2 && rng.chance(RECOVERY_SERVER_PPM) {
            let mutating: Vec<usize> = (0..count)
                .filter(|&i| !drafts[i].signature.starts_with('T'))
                .collect();
            let mut declared_here = 0;
            let pairs = rng.range(1, 3).min(mutating.len() / 2);
            for pair in mutating[..2 * pairs].chunks_exact(2) {
                if let Some(code) = declare_pair(
                    &mut rng,
                    config,
                    &mut drafts,
                    pair[0],
                    pair[1],
                    &mut defects_so_far,
                ) {
                    *planted.entry(code).or_insert(0) += 1;
                }
                declared_here += 1;
            }
            let rest = &mutating[2 * pairs..];
            if let Some(&t) = rest.first()
                && rng.chance(400_000)
            {
                declare_self_inverse(&mut drafts, t);
                declared_here += 1;
            }
            if let Some(&t) = rest.get(1)
                && rng.chance(400_000)
            {
                declare_irreversible(&mut drafts, t);
                declared_here += 1;
            }
            if declared_here > 0 {
                recovery_servers += 1;
                declarations += declared_here;
            }
        } else if count >= 2 && rng.chance(config.duplicate_ppm) {
            duplicate = Some(rng.below(count));
        }

        let mut tools: Vec<Value> = Vec::with_capacity(count + 1);
        let mut facts: Vec<ToolFacts> = Vec::with_capacity(count + 1);
        for d in &drafts {
            tools.push(Value::Object(d.tool.clone()));
            facts.push(ToolFacts {
                signature: d.signature.clone(),
                sep: d.facts_sep,
                compensate: d.facts_compensate,
                classes: d.classes.clone(),
            });
        }
        if let Some(i) = duplicate {
            // The same tool listed twice, as a merge of pages sometimes does.
            tools.push(Value::Object(drafts[i].tool.clone()));
            facts.push(facts[i].clone());
            *planted.entry("R004").or_insert(0) += 1;
        }
        expected.add_server(&facts);

        let document = match rng.below(10) {
            0 => json!({"tools": tools}),
            1 => Value::Array(tools),
            _ => json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}}),
        };
        write_json(&out.join(format!("server-{server:05}.json")), &document)?;
    }

    let (r001, r002) = write_not_tools_lists(out, config, &mut rng)?;
    let junk = r001 + r002;
    planted.insert("R001", r001);
    planted.insert("R002", r002);

    let manifest = json!({
        "generator": "cargo xtask gen-corpus",
        "format": 1,
        "seed": config.seed,
        "config": {
            "servers": config.servers,
            "defect_ppm": config.defect_ppm,
            "duplicate_ppm": config.duplicate_ppm,
            "junk_ppm": config.junk_ppm,
        },
        "files": {"total": config.servers as u64 + junk, "tools_lists": config.servers, "not_tools_lists": junk},
        "recovery": {"servers": recovery_servers, "declarations": declarations},
        "planted_errors": planted,
        "expected": expected.to_json(junk),
    });
    write_json(&out.join("manifest.json"), &manifest)?;
    Ok(Generated { manifest })
}

/// Files that are not tools lists, each kind with probability `junk_ppm` per server: a truncated
/// response (R001), a JSON-RPC error and a package manifest (both R002). Returns how many files
/// of each code were written.
fn write_not_tools_lists(
    out: &Path,
    config: &CorpusConfig,
    rng: &mut Rng,
) -> Result<(u64, u64), String> {
    let mut r001 = 0u64;
    let mut r002 = 0u64;
    for i in 0..config.servers {
        if rng.chance(config.junk_ppm) {
            let path = out.join(format!("misc-{i:05}-truncated.json"));
            let text = br#"{"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "partial", "inputSchema": {"type": "obj"#;
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            r001 += 1;
        }
        if rng.chance(config.junk_ppm) {
            let doc = json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found: tools/list"}});
            write_json(&out.join(format!("misc-{i:05}-error.json")), &doc)?;
            r002 += 1;
        }
        if rng.chance(config.junk_ppm) {
            let doc = json!({"name": format!("server-{i}"), "version": "1.0.0", "description": "package metadata"});
            write_json(&out.join(format!("misc-{i:05}-package.json")), &doc)?;
            r002 += 1;
        }
    }
    Ok((r001, r002))
}

fn write_json(path: &Path, value: &Value) -> Result<(), String> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
