//! `cargo xtask gen-corpus`: a deterministic, registry-like corpus of `tools/list` files with
//! hint signatures drawn to match the census paper's marginals, recovery declared by about a tenth
//! of the servers, and defects planted at known rates. `OUT/manifest.json` records what was
//! planted and the census numbers the corpus must yield.
//!
//! All randomness comes from one splitmix64 stream and integer arithmetic (probabilities in parts
//! per million), so the same seed gives the same bytes on every machine.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// Generator settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusConfig {
    /// Tools-list files (servers).
    pub servers: usize,
    /// PRNG seed.
    pub seed: u64,
    /// Probability (ppm) that a SEP-3172-only declaration carries a planted defect (kinds rotate).
    pub defect_ppm: u32,
    /// Probability (ppm) that a multi-tool server without recovery lists a tool twice.
    pub duplicate_ppm: u32,
    /// Probability (ppm) per server of each kind of file that is not a tools list.
    pub junk_ppm: u32,
}

impl Default for CorpusConfig {
    fn default() -> Self {
        Self {
            servers: 5_000,
            seed: 20_260_727,
            defect_ppm: 200_000,
            duplicate_ppm: 10_000,
            junk_ppm: 4_000,
        }
    }
}

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

/// splitmix64: tiny, fast, good enough for test data, and identical everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    fn range(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    fn chance(&mut self, ppm: u32) -> bool {
        self.below(1_000_000) < ppm as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Index drawn with integer weights.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let mut x = ((u128::from(self.next()) * u128::from(total.max(1))) >> 64) as u64;
        for (i, &w) in weights.iter().enumerate() {
            if x < u64::from(w) {
                return i;
            }
            x -= u64::from(w);
        }
        weights.len() - 1
    }
}

/// Tool-level signature weights (ppm), labels `readOnly destructive idempotent openWorld`.
/// Chosen so the corpus reproduces the paper's marginals: ≥1 hint 74.0 %, all four 61.7 %,
/// `TFTT` 39.9 %, none 26.0 %, `TFTF` third, destructiveHint set 65.7 %, set where applicable
/// 12.9 %, true where applicable 3.1 %.
const SIGNATURE_WEIGHTS: &[(&str, u32)] = &[
    ("TFTT", 399_000),
    ("----", 260_000),
    ("TFTF", 99_000),
    ("TFFT", 13_000),
    ("TFFF", 5_000),
    ("TTTT", 500),
    ("TTFT", 300),
    ("TTTF", 200),
    ("FFFT", 40_000),
    ("FFTT", 20_000),
    ("FTFT", 15_000),
    ("FFFF", 10_000),
    ("FTTT", 6_000),
    ("FFTF", 5_000),
    ("FTFF", 3_000),
    ("FTTF", 1_000),
    ("TF-T", 4_000),
    ("TFT-", 3_000),
    ("TF--", 2_000),
    ("TF-F", 1_000),
    ("TT--", 500),
    ("TFF-", 500),
    ("-F--", 5_000),
    ("-T--", 2_500),
    ("FF--", 4_000),
    ("FT--", 1_500),
    ("-FTT", 3_000),
    ("-F-T", 3_000),
    ("FF-T", 4_000),
    ("-TFT", 1_000),
    ("-FF-", 2_000),
    ("FFT-", 2_000),
    ("FT-T", 1_000),
    ("T---", 25_000),
    ("T-T-", 8_000),
    ("T--T", 10_000),
    ("T-TT", 7_000),
    ("---T", 6_000),
    ("F---", 6_000),
    ("--T-", 4_000),
    ("F-FT", 4_000),
    ("T-TF", 3_000),
    ("T--F", 2_000),
    ("F-F-", 1_500),
    ("--TT", 1_500),
    ("F--T", 1_500),
    ("---F", 1_000),
    ("F-TT", 1_000),
    ("--FT", 500),
    ("F-TF", 500),
    ("--F-", 300),
    ("T-F-", 200),
];

/// Rare signatures added to the table (100 ppm each, taken from `TFTT`), so about 66 of the 81
/// occur at registry scale.
const TAIL_SIGNATURES: usize = 14;
const TAIL_PPM: u32 = 100;

fn signature_table() -> Vec<(String, u32)> {
    let mut table: Vec<(String, u32)> = SIGNATURE_WEIGHTS
        .iter()
        .map(|&(l, w)| (l.to_owned(), w))
        .collect();
    let known: BTreeSet<String> = table.iter().map(|(l, _)| l.clone()).collect();
    let states = ['-', 'F', 'T'];
    let mut added = 0;
    'outer: for a in states {
        for b in states {
            for c in states {
                for d in states {
                    let label: String = [a, b, c, d].iter().collect();
                    if !known.contains(&label) {
                        table.push((label, TAIL_PPM));
                        added += 1;
                        if added == TAIL_SIGNATURES {
                            break 'outer;
                        }
                    }
                }
            }
        }
    }
    table[0].1 -= TAIL_PPM * added as u32;
    table
}

/// Tool counts per server: median about 11, mean about 20 (paper: median 11).
const TOOL_COUNT_BUCKETS: &[(usize, usize, u32)] = &[
    (1, 1, 70_000),
    (2, 3, 90_000),
    (4, 6, 120_000),
    (7, 10, 200_000),
    (11, 15, 170_000),
    (16, 25, 150_000),
    (26, 40, 100_000),
    (41, 70, 60_000),
    (71, 150, 32_000),
    (151, 500, 8_000),
];

const VERBS_READ: &[&str] = &[
    "get", "list", "search", "read", "find", "describe", "fetch", "query", "count", "show",
];
const VERBS_WRITE: &[&str] = &[
    "create", "update", "add", "set", "send", "upload", "assign", "publish", "schedule", "start",
];
const NOUNS: &[&str] = &[
    "issue",
    "ticket",
    "file",
    "document",
    "page",
    "user",
    "team",
    "project",
    "invoice",
    "payment",
    "order",
    "customer",
    "event",
    "calendar_entry",
    "message",
    "channel",
    "repository",
    "branch",
    "pull_request",
    "comment",
    "label",
    "dataset",
    "table",
    "record",
    "report",
    "dashboard",
    "alert",
    "incident",
    "deployment",
    "secret",
    "bucket",
    "object",
    "note",
    "task",
    "contact",
    "lead",
    "campaign",
    "subscription",
    "product",
    "shipment",
];
const FIELDS: &[&str] = &[
    "title",
    "body",
    "owner",
    "status",
    "priority",
    "due_date",
    "tags",
    "email",
    "url",
    "path",
    "query",
    "limit",
    "cursor",
    "region",
    "currency",
    "amount",
    "language",
    "timezone",
    "format",
    "visibility",
    "parent_id",
    "workspace",
    "notes",
    "color",
    "count",
];
const DESCRIPTIONS: &[&str] = &[
    "Returns the matching items, newest first.",
    "Use this tool when the user asks about the current state of their account.",
    "Creates the item and returns its identifier.",
    "Updates only the fields that are given; other fields keep their values.",
    "Results are paginated; pass the cursor from the previous response to continue.",
    "Requires the caller to have write access to the workspace.",
    "The operation is applied immediately and notifies subscribers.",
    "Searches by full text over titles and bodies.",
];

/// What the generator knows about one tool, for the expected census numbers.
#[derive(Debug, Clone)]
struct ToolFacts {
    signature: String,
    sep: bool,
    compensate: bool,
    classes: BTreeSet<&'static str>,
}

/// Expected census numbers, computed from the generator's own records.
#[derive(Debug, Default)]
struct Expected {
    servers: u64,
    tools: u64,
    tool_counts: Vec<u64>,
    signatures: BTreeMap<String, u64>,
    spread_dominant: Vec<f64>,
    multi_tool_emitting: u64,
    more_than_one: u64,
    sep_only: u64,
    compensate_only: u64,
    both: u64,
    mutating: u64,
    mutating_declared: u64,
    mutating_compensable: u64,
    mutating_irreversible: u64,
}

impl Expected {
    fn add_server(&mut self, tools: &[ToolFacts]) {
        self.servers += 1;
        self.tools += tools.len() as u64;
        self.tool_counts.push(tools.len() as u64);
        let mut local: BTreeMap<&str, u64> = BTreeMap::new();
        for t in tools {
            *self.signatures.entry(t.signature.clone()).or_insert(0) += 1;
            *local.entry(&t.signature).or_insert(0) += 1;
            match (t.sep, t.compensate) {
                (true, true) => self.both += 1,
                (true, false) => self.sep_only += 1,
                (false, true) => self.compensate_only += 1,
                (false, false) => {}
            }
            if !t.signature.starts_with('T') {
                self.mutating += 1;
                if !t.classes.is_empty() {
                    self.mutating_declared += 1;
                }
                if t.classes.len() == 1 && t.classes.contains("compensable") {
                    self.mutating_compensable += 1;
                }
                if t.classes.len() == 1 && t.classes.contains("irreversible") {
                    self.mutating_irreversible += 1;
                }
            }
        }
        let emits = tools.iter().any(|t| t.signature != "----");
        if tools.len() >= 2 && emits {
            self.multi_tool_emitting += 1;
            if local.len() > 1 {
                self.more_than_one += 1;
            }
            let dominant = local.values().copied().max().unwrap_or(0);
            self.spread_dominant
                .push(dominant as f64 / tools.len() as f64);
        }
    }

    fn to_json(&self, not_tools_lists: u64) -> Value {
        let count = |pred: &dyn Fn(&str) -> bool| -> u64 {
            self.signatures
                .iter()
                .filter(|(l, _)| pred(l))
                .map(|(_, n)| n)
                .sum()
        };
        let at = |l: &str, i: usize| l.as_bytes()[i];
        let mut tool_counts = self.tool_counts.clone();
        let mut dominant = self.spread_dominant.clone();
        json!({
            "servers": self.servers,
            "tools": self.tools,
            "not_tools_lists": not_tools_lists,
            "median_tools_per_server": mcp_recovery_census::median_u64(&mut tool_counts),
            "hints_any": count(&|l| l != "----"),
            "hints_all_four": count(&|l| !l.contains('-')),
            "no_hint": count(&|l| l == "----"),
            "signatures_occurring": self.signatures.len(),
            "signatures": self.signatures,
            "multi_tool_emitting": self.multi_tool_emitting,
            "more_than_one_signature": self.more_than_one,
            "median_dominant_share": mcp_recovery_census::median_f64(&mut dominant),
            "destructive_set": count(&|l| at(l, 1) != b'-'),
            "destructive_set_where_applicable": count(&|l| at(l, 0) != b'T' && at(l, 1) != b'-'),
            "destructive_true_where_applicable": count(&|l| at(l, 0) != b'T' && at(l, 1) == b'T'),
            "destructive_set_on_read_only": count(&|l| at(l, 0) == b'T' && at(l, 1) != b'-'),
            "recovery_sep3172_only": self.sep_only,
            "recovery_compensate_only": self.compensate_only,
            "recovery_both": self.both,
            "mutating": self.mutating,
            "mutating_declared": self.mutating_declared,
            "mutating_compensable": self.mutating_compensable,
            "mutating_irreversible": self.mutating_irreversible,
        })
    }
}

/// One tool under construction.
struct Draft {
    name: String,
    signature: String,
    tool: Map<String, Value>,
    facts_sep: bool,
    facts_compensate: bool,
    classes: BTreeSet<&'static str>,
}

fn annotations_for(signature: &str, rng: &mut Rng) -> Option<Map<String, Value>> {
    let mut a = Map::new();
    if rng.chance(150_000) {
        a.insert("title".into(), json!("Tool"));
    }
    for (c, key) in signature.chars().zip([
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ]) {
        match c {
            'T' => {
                a.insert(key.into(), Value::Bool(true));
            }
            'F' => {
                a.insert(key.into(), Value::Bool(false));
            }
            _ => {}
        }
    }
    (!a.is_empty()).then_some(a)
}

fn schema_header(rng: &mut Rng) -> (Option<&'static str>, &'static str) {
    match rng.below(3) {
        0 => (
            Some("http://json-schema.org/draft-07/schema#"),
            "definitions",
        ),
        1 => (
            Some("https://json-schema.org/draft/2020-12/schema"),
            "$defs",
        ),
        _ => (None, "$defs"),
    }
}

fn leaf_schema(rng: &mut Rng, field: &str) -> Value {
    match rng.below(7) {
        0 => json!({"type": "string", "description": format!("The {}.", field.replace('_', " "))}),
        1 => json!({"type": "string", "format": *rng.pick(&["uri", "date-time", "email", "uuid"])}),
        2 => json!({"type": "string", "enum": ["low", "medium", "high"], "default": "medium"}),
        3 => {
            json!({"type": "integer", "minimum": 1, "maximum": 100 + rng.below(900), "default": 20})
        }
        4 => json!({"type": "number", "minimum": 0}),
        5 => json!({"type": "boolean", "default": false}),
        _ => json!({"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 50}),
    }
}

/// A realistic object schema: leaves, a nested object, sometimes a `$ref` into `$defs`
/// (2020-12) or `definitions` (draft-07).
fn object_schema(rng: &mut Rng, fields: usize) -> Value {
    let (dialect, defs_key) = schema_header(rng);
    let mut schema = Map::new();
    if let Some(d) = dialect {
        schema.insert("$schema".into(), json!(d));
    }
    schema.insert("type".into(), json!("object"));
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut defs = Map::new();
    for _ in 0..fields {
        let field = *rng.pick(FIELDS);
        if properties.contains_key(field) {
            continue;
        }
        let value = match rng.below(8) {
            0 => {
                let inner = *rng.pick(FIELDS);
                json!({"type": "object", "properties": {inner: leaf_schema(rng, inner), "id": {"type": "string"}},
                       "required": ["id"], "additionalProperties": false})
            }
            1 => {
                defs.insert(
                    "reference".into(),
                    json!({"type": "object", "properties": {"id": {"type": "string"}, "kind": {"type": "string"}},
                           "required": ["id"]}),
                );
                json!({"$ref": format!("#/{defs_key}/reference")})
            }
            _ => leaf_schema(rng, field),
        };
        if rng.chance(450_000) {
            required.push(json!(field));
        }
        properties.insert(field.into(), value);
    }
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    if !defs.is_empty() {
        schema.insert(defs_key.into(), Value::Object(defs));
    }
    if rng.chance(300_000) {
        schema.insert("additionalProperties".into(), json!(false));
    }
    Value::Object(schema)
}

fn plain_tool(rng: &mut Rng, name: &str, signature: &str) -> Map<String, Value> {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(name));
    if rng.chance(300_000) {
        tool.insert("title".into(), json!(name.replace('_', " ")));
    }
    tool.insert(
        "description".into(),
        json!(format!(
            "{} {}",
            rng.pick(DESCRIPTIONS),
            rng.pick(DESCRIPTIONS)
        )),
    );
    let fields = rng.below(7);
    tool.insert("inputSchema".into(), object_schema(rng, fields));
    if rng.chance(350_000) {
        let fields = rng.range(1, 5);
        tool.insert("outputSchema".into(), object_schema(rng, fields));
    }
    if let Some(a) = annotations_for(signature, rng) {
        tool.insert("annotations".into(), Value::Object(a));
    }
    if rng.chance(50_000) {
        tool.insert("execution".into(), json!({"taskSupport": "optional"}));
    }
    tool
}

fn draw_tool_count(rng: &mut Rng) -> usize {
    let weights: Vec<u32> = TOOL_COUNT_BUCKETS.iter().map(|b| b.2).collect();
    let (low, high, _) = TOOL_COUNT_BUCKETS[rng.weighted(&weights)];
    rng.range(low, high)
}

/// Defect kinds planted into SEP-3172 declarations, by the code the linter must report.
const DEFECTS: [&str; 4] = ["R101", "R104", "R106", "R109"];

/// Writes a forward/compensator pair's schemas and their declaration onto two drafts.
/// Returns the code of the planted defect, if any.
fn declare_pair(
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
fn declare_self_inverse(drafts: &mut [Draft], tool: usize) {
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

fn declare_irreversible(drafts: &mut [Draft], tool: usize) {
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

fn unique_name(rng: &mut Rng, used: &mut BTreeSet<String>, read_only: bool) -> String {
    let verb = if read_only {
        rng.pick(VERBS_READ)
    } else {
        rng.pick(VERBS_WRITE)
    };
    let base = format!("{verb}_{}", rng.pick(NOUNS));
    let mut name = base.clone();
    let mut n = 2;
    while used.contains(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    used.insert(name.clone());
    name
}

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

    // Files that are not tools lists.
    let mut junk = 0u64;
    let mut r001 = 0u64;
    let mut r002 = 0u64;
    for i in 0..config.servers {
        if rng.chance(config.junk_ppm) {
            let path = out.join(format!("misc-{i:05}-truncated.json"));
            let text = br#"{"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "partial", "inputSchema": {"type": "obj"#;
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            junk += 1;
            r001 += 1;
        }
        if rng.chance(config.junk_ppm) {
            let doc = json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found: tools/list"}});
            write_json(&out.join(format!("misc-{i:05}-error.json")), &doc)?;
            junk += 1;
            r002 += 1;
        }
        if rng.chance(config.junk_ppm) {
            let doc = json!({"name": format!("server-{i}"), "version": "1.0.0", "description": "package metadata"});
            write_json(&out.join(format!("misc-{i:05}-package.json")), &doc)?;
            junk += 1;
            r002 += 1;
        }
    }
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

/// The census numbers of `census` under the manifest's `expected` keys.
fn actual_numbers(census: &mcp_recovery_census::Census) -> Value {
    let signatures: BTreeMap<String, u64> = census
        .signatures
        .all
        .iter()
        .map(|s| (s.signature.label(), s.tools.count))
        .collect();
    json!({
        "servers": census.servers,
        "tools": census.tools,
        // manifest.json is a file of the corpus too, and not a tools list.
        "not_tools_lists": census.files.not_tools_lists.saturating_sub(1),
        "median_tools_per_server": census.median_tools_per_server,
        "hints_any": census.hints.any.count,
        "hints_all_four": census.hints.all_four.count,
        "no_hint": census.signatures.no_hint.count,
        "signatures_occurring": census.signatures.occurring,
        "signatures": signatures,
        "multi_tool_emitting": census.servers_spread.multi_tool_emitting,
        "more_than_one_signature": census.servers_spread.more_than_one_signature.count,
        "median_dominant_share": census.servers_spread.median_dominant_share,
        "destructive_set": census.destructive.set.count,
        "destructive_set_where_applicable": census.destructive.set_where_applicable.count,
        "destructive_true_where_applicable": census.destructive.true_where_applicable.count,
        "destructive_set_on_read_only": census.destructive.set_on_read_only.count,
        "recovery_sep3172_only": census.recovery.sep3172_only.count,
        "recovery_compensate_only": census.recovery.compensate_only.count,
        "recovery_both": census.recovery.both.count,
        "mutating": census.recovery.mutating.count,
        "mutating_declared": census.recovery.mutating_declared.count,
        "mutating_compensable": census.recovery.mutating_by_class.compensable.count,
        "mutating_irreversible": census.recovery.mutating_by_class.irreversible.count,
    })
}

/// Runs the census (with lint) over a generated corpus and checks it against the manifest:
/// every expected census number, and lint errors by code exactly equal to the planted ones.
pub fn verify(dir: &Path, manifest: &Value) -> Result<mcp_recovery_census::Census, String> {
    let census = mcp_recovery_census::census_paths(
        &[dir.to_path_buf()],
        &mcp_recovery_census::CensusOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    let actual = actual_numbers(&census);
    let mut mismatches = Vec::new();
    let expected = manifest["expected"]
        .as_object()
        .ok_or("manifest has no `expected`")?;
    for (key, want) in expected {
        if actual.get(key) != Some(want) {
            mismatches.push(format!("{key}: census {} != manifest {want}", actual[key]));
        }
    }
    let mut found: BTreeMap<String, u64> = census
        .lint
        .as_ref()
        .map(|l| l.errors_by_code())
        .unwrap_or_default()
        .into_iter()
        .map(|(code, n)| (code.to_owned(), n))
        .collect();
    // manifest.json itself is not a tools list (R002).
    if let Some(n) = found.get_mut("R002") {
        *n -= 1;
    }
    found.retain(|_, n| *n > 0);
    let planted: BTreeMap<String, u64> = manifest["planted_errors"]
        .as_object()
        .ok_or("manifest has no `planted_errors`")?
        .iter()
        .map(|(code, n)| (code.clone(), n.as_u64().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect();
    if found != planted {
        mismatches.push(format!(
            "lint errors by code {found:?} != planted {planted:?}"
        ));
    }
    if mismatches.is_empty() {
        Ok(census)
    } else {
        Err(format!(
            "census of {} disagrees with its manifest:\n  {}",
            dir.display(),
            mismatches.join("\n  ")
        ))
    }
}

fn write_json(path: &Path, value: &Value) -> Result<(), String> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `cargo xtask gen-corpus [--servers N] [--seed S] OUT`.
pub fn gen_corpus_command(args: &[&str]) -> Result<(), String> {
    let mut config = CorpusConfig::default();
    let mut out = None;
    let mut check = false;
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        match arg {
            "--servers" => config.servers = parse_number(it.next(), "--servers")?,
            "--seed" => config.seed = parse_number(it.next(), "--seed")?,
            "--verify" => check = true,
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ if out.is_none() => out = Some(PathBuf::from(arg)),
            _ => return Err(format!("unexpected argument {arg}")),
        }
    }
    let out = out.ok_or("usage: cargo xtask gen-corpus [--servers N] [--seed S] [--verify] OUT")?;
    let generated = generate(&out, &config)?;
    let m = &generated.manifest;
    println!(
        "wrote {} files ({} servers, {} tools) to {}; planted errors {}",
        m["files"]["total"],
        m["expected"]["servers"],
        m["expected"]["tools"],
        out.display(),
        m["planted_errors"]
    );
    if check {
        let census = verify(&out, m)?;
        println!(
            "verified: census and lint of {} agree with the manifest ({} lint errors)",
            out.display(),
            census.lint.map_or(0, |l| l.errors)
        );
    }
    Ok(())
}

fn parse_number<T: std::str::FromStr>(value: Option<&&str>, option: &str) -> Result<T, String> {
    value
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{option} needs a number"))
}

/// Census of `../shared/data/real-servers/`: fails loudly when the folder is missing, or when
/// the real servers are anything but clean tools lists.
pub fn census_shared(root: &Path) -> Result<(), String> {
    let dir = root.join("../shared/data/real-servers");
    if !dir.is_dir() {
        return Err(format!(
            "{} is missing: the census check needs the shared reference data beside the repository",
            dir.display()
        ));
    }
    let census = mcp_recovery_census::census_paths(
        std::slice::from_ref(&dir),
        &mcp_recovery_census::CensusOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    print!("{}", census.render_table());
    if census.servers == 0 || census.files.not_tools_lists > 0 {
        return Err(format!(
            "census of {}: expected only tools lists, got {:?}",
            dir.display(),
            census.not_tools_lists
        ));
    }
    let errors = census.lint.as_ref().map_or(0, |l| l.errors);
    if errors > 0 {
        return Err(format!(
            "census of {}: the linter reports {errors} error(s) on real servers",
            dir.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("xtask-corpus-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            Self(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn small() -> CorpusConfig {
        CorpusConfig {
            servers: 400,
            seed: 7,
            defect_ppm: 800_000,
            duplicate_ppm: 60_000,
            junk_ppm: 15_000,
        }
    }

    fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            out.insert(
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&path).unwrap(),
            );
        }
        out
    }

    #[test]
    fn same_seed_gives_the_same_bytes() {
        let (a, b, c) = (TempDir::new("a"), TempDir::new("b"), TempDir::new("c"));
        let config = CorpusConfig {
            servers: 60,
            ..small()
        };
        generate(&a.0, &config).unwrap();
        generate(&b.0, &config).unwrap();
        generate(&c.0, &CorpusConfig { seed: 8, ..config }).unwrap();
        let (fa, fb, fc) = (files_of(&a.0), files_of(&b.0), files_of(&c.0));
        assert!(fa.len() > 60);
        assert_eq!(fa, fb);
        assert_ne!(fa, fc);
    }

    #[test]
    fn the_signature_table_sums_to_one_million() {
        let table = signature_table();
        assert_eq!(
            table.iter().map(|(_, w)| u64::from(*w)).sum::<u64>(),
            1_000_000
        );
        let labels: BTreeSet<&str> = table.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels.len(), table.len(), "no label twice");
        assert_eq!(table.len(), 66);
    }

    #[test]
    fn census_recovers_the_planted_counts() {
        let dir = TempDir::new("planted");
        let generated = generate(&dir.0, &small()).unwrap();
        let m = &generated.manifest;
        let planted = m["planted_errors"].as_object().unwrap();
        assert!(
            planted.values().all(|v| v.as_u64() > Some(0)),
            "{planted:?}"
        );
        assert!(m["expected"]["recovery_both"].as_u64() > Some(0));
        assert!(m["expected"]["mutating_irreversible"].as_u64() > Some(0));
        let census = verify(&dir.0, m).unwrap();
        assert_eq!(census.servers, 400);

        // A manifest that says one more defect was planted than lint finds is caught.
        let mut wrong = m.clone();
        wrong["planted_errors"]["R106"] = json!(planted["R106"].as_u64().unwrap() + 1);
        let err = verify(&dir.0, &wrong).unwrap_err();
        assert!(err.contains("R106"), "{err}");
        let mut wrong = m.clone();
        wrong["expected"]["hints_all_four"] = json!(0);
        assert!(
            verify(&dir.0, &wrong)
                .unwrap_err()
                .contains("hints_all_four")
        );
    }
}
