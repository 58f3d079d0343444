//! Metric definitions checked on tiny hand-written documents.

use std::path::PathBuf;

use mcp_recovery_model::Hint;
use serde_json::{Value, json};

use super::*;

fn tool(name: &str, annotations: Value) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}, "annotations": annotations})
}

fn bare(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

fn census_of(files: &[(&str, Value)]) -> Census {
    let options = CensusOptions {
        lint: false,
        ..CensusOptions::default()
    };
    let mut builder = CensusBuilder::new(&options).unwrap();
    for (path, document) in files {
        builder.add_bytes(*path, &serde_json::to_vec(document).unwrap());
    }
    builder.finish()
}

fn rpc(tools: Vec<Value>) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}})
}

#[test]
fn explicit_false_is_a_serialized_hint_and_omitted_is_not() {
    let c = census_of(&[(
        "s.json",
        rpc(vec![
            tool("a", json!({"readOnlyHint": false})),
            tool("b", json!({})),
            bare("c"),
            tool("d", json!({"readOnlyHint": null})),
        ]),
    )]);
    assert_eq!(c.tools, 4);
    // At the wire level a `null` hint is present; as a boolean it is not.
    assert_eq!(c.hints.any.count, 2);
    assert_eq!(c.hints.any.share, 0.5);
    assert_eq!((c.hints.any.denominator, c.hints.any.of), (4, "tools"));
    assert_eq!(c.hints.any_boolean.count, 1);
    assert_eq!(c.hints.any_boolean.share, 0.25);
    assert_eq!(c.hints.all_four.count, 0);
    assert_eq!(c.signatures.no_hint.count, 3);
    assert_eq!(c.signatures.occurring, 2);
    let read_only = &c.hints.per_hint[0];
    assert_eq!(
        (
            read_only.hint,
            read_only.true_,
            read_only.false_,
            read_only.omitted
        ),
        ("readOnlyHint", 0, 1, 3)
    );
}

#[test]
fn all_four_requires_four_booleans() {
    let full = json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false});
    let three = json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": "no"});
    let c = census_of(&[(
        "s.json",
        json!({"tools": [tool("a", full), tool("b", three)]}),
    )]);
    assert_eq!(c.hints.any.count, 2);
    assert_eq!(c.hints.all_four.count, 2);
    assert_eq!(c.hints.all_four_boolean.count, 1);
    assert_eq!(c.hints.non_boolean_values, 1);
    let labels: Vec<String> = c
        .signatures
        .all
        .iter()
        .map(|s| s.signature.label())
        .collect();
    assert_eq!(labels, ["TFT-", "TFTF"]);
}

#[test]
fn all_81_signatures_are_counted_apart() {
    let mut tools = Vec::new();
    for index in 0..Signature::COUNT {
        let sig = Signature::from_index(index).unwrap();
        let mut annotations = serde_json::Map::new();
        for (hint, state) in Hint::ALL.iter().zip(sig.states()) {
            match state {
                HintState::True => annotations.insert(hint.key().into(), Value::Bool(true)),
                HintState::False => annotations.insert(hint.key().into(), Value::Bool(false)),
                HintState::Omitted => None,
            };
        }
        tools.push(tool(&format!("t{index}"), Value::Object(annotations)));
    }
    let c = census_of(&[("s.json", Value::Array(tools))]);
    assert_eq!(c.signatures.possible, 81);
    assert_eq!(c.signatures.occurring, 81);
    assert!(c.signatures.all.iter().all(|s| s.tools.count == 1));
    // 2^4 signatures have all four set; 81 - 1 have at least one.
    assert_eq!(c.hints.all_four.count, 16);
    assert_eq!(c.hints.any.count, 80);
}

#[test]
fn medians_take_the_mean_of_the_two_middle_values() {
    assert_eq!(median_u64(&mut []), None);
    assert_eq!(median_u64(&mut [7]), Some(7.0));
    assert_eq!(median_u64(&mut [10, 1, 3, 2]), Some(2.5));
    assert_eq!(median_f64(&mut [0.5, 1.0]), Some(0.75));

    let t = |n: &str| tool(n, json!({"readOnlyHint": true}));
    let u = |n: &str| tool(n, json!({"readOnlyHint": false}));
    let c = census_of(&[
        ("a.json", rpc(vec![t("x")])),
        ("b.json", rpc(vec![t("x"), u("y")])),
        ("c.json", rpc(vec![t("x"), t("y"), u("z")])),
        ("d.json", rpc(vec![t("a"), t("b"), t("c"), t("d")])),
    ]);
    assert_eq!(c.median_tools_per_server, Some(2.5));
    // Multi-tool emitting servers: b (1/2), c (2/3), d (4/4); a has one tool.
    assert_eq!(c.servers_spread.multi_tool_emitting, 3);
    assert_eq!(c.servers_spread.more_than_one_signature.count, 2);
    // Emitting servers, as the paper counts them: a (1), b (1/2), c (2/3), d (1).
    assert_eq!(c.servers_spread.emitting, 4);
    assert_eq!(
        c.servers_spread.median_dominant_share,
        Some((2.0 / 3.0 + 1.0) / 2.0)
    );
    assert_eq!(
        c.servers_spread.median_dominant_share_multi_tool,
        Some(2.0 / 3.0)
    );

    let even = census_of(&[
        ("b.json", rpc(vec![t("x"), u("y")])),
        ("d.json", rpc(vec![t("a"), t("b"), t("c"), t("d")])),
    ]);
    assert_eq!(even.servers_spread.median_dominant_share, Some(0.75));
}

#[test]
fn servers_that_emit_no_hint_are_left_out_of_the_spread() {
    let c = census_of(&[
        ("quiet.json", rpc(vec![bare("a"), bare("b")])),
        ("empty.json", rpc(vec![])),
    ]);
    assert_eq!(c.servers, 2);
    assert_eq!(c.empty_servers, 1);
    // Over servers that returned tools, as the paper counts them.
    assert_eq!(c.median_tools_per_server, Some(2.0));
    assert_eq!(c.servers_spread.multi_tool_emitting, 0);
    assert_eq!(c.servers_spread.median_dominant_share, None);
    assert_eq!(c.servers_spread.more_than_one_signature.share, 0.0);
}

#[test]
fn every_accepted_shape_is_a_server_and_others_are_listed() {
    let options = CensusOptions {
        lint: false,
        ..CensusOptions::default()
    };
    let mut b = CensusBuilder::new(&options).unwrap();
    b.add_bytes("rpc.json", br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}"#);
    b.add_bytes(
        "object.json",
        br#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}"#,
    );
    b.add_bytes(
        "array.json",
        br#"[{"name":"a","inputSchema":{"type":"object"}}, 42]"#,
    );
    b.add_bytes(
        "z-error.json",
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
    );
    b.add_bytes("y-broken.json", br#"{"tools": ["#);
    b.add_bytes("x-package.json", br#"{"name":"pkg","version":"1.0.0"}"#);
    b.add_bytes("w-number.json", b"42");
    b.add_bytes("v-result.json", br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let c = b.finish();
    assert_eq!(c.files.total, 8);
    assert_eq!(c.servers, 3);
    assert_eq!(c.files.tools_lists, 3);
    assert_eq!(c.tools, 3);
    assert_eq!(c.non_object_entries, 1);
    assert_eq!(c.files.not_tools_lists, 5);
    let listed: Vec<(&str, String)> = c
        .not_tools_lists
        .iter()
        .map(|f| (f.path.as_str(), f.reason.describe()))
        .collect();
    assert_eq!(
        listed[0],
        (
            "v-result.json",
            "not a tools list: the JSON-RPC result has no `tools` array (found an empty object)"
                .to_owned()
        )
    );
    assert_eq!(
        listed[1],
        (
            "w-number.json",
            "not a tools list: the document is a JSON integer, not a tools list".to_owned()
        )
    );
    assert_eq!(
        listed[2],
        (
            "x-package.json",
            "not a tools list: the object has no `tools` array and is not a JSON-RPC response (found members \"name\", \"version\")".to_owned()
        )
    );
    assert!(
        listed[3].1.starts_with("invalid JSON: EOF while parsing"),
        "{}",
        listed[3].1
    );
    assert_eq!(
        listed[4],
        (
            "z-error.json",
            "JSON-RPC error response: Method not found".to_owned()
        )
    );
}

#[test]
fn destructive_hint_is_applicable_only_where_not_read_only() {
    let c = census_of(&[(
        "s.json",
        rpc(vec![
            tool(
                "ro",
                json!({"readOnlyHint": true, "destructiveHint": false}),
            ),
            tool(
                "ro_true",
                json!({"readOnlyHint": true, "destructiveHint": true}),
            ),
            tool(
                "rw",
                json!({"readOnlyHint": false, "destructiveHint": true}),
            ),
            tool("implicit", json!({"destructiveHint": true})),
            tool("safe", json!({"destructiveHint": false})),
            tool("unset", json!({"readOnlyHint": false})),
        ]),
    )]);
    assert_eq!(c.destructive.set.count, 5);
    assert_eq!(c.destructive.set_on_read_only.count, 2);
    assert_eq!(c.destructive.set_where_applicable.count, 3);
    assert_eq!(c.destructive.true_where_applicable.count, 2);
    assert_eq!(c.recovery.mutating.count, 4);
}

#[test]
fn recovery_is_counted_per_carrier_and_by_class() {
    let sep = json!({"strategy": "compensation", "compensatingOperation": {"operationId": "undo", "parameters": {}}});
    let compensable = json!({"reversibility": "compensable", "compensation": {"toolName": "undo", "parameterMapping": {}}});
    let c = census_of(&[(
        "s.json",
        rpc(vec![
            tool("a", json!({"recovery": sep})),
            json!({"name": "b", "inputSchema": {"type": "object"}, "_meta": {"dev.chronomcp/compensate": compensable}}),
            json!({"name": "c", "inputSchema": {"type": "object"}, "annotations": {"recovery": sep},
                   "_meta": {"dev.chronomcp/compensate": compensable}}),
            json!({"name": "d", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": false},
                   "_meta": {"dev.chronomcp/compensate": {"reversibility": "irreversible"}}}),
            json!({"name": "e", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true},
                   "_meta": {"dev.chronomcp/compensate": {"reversibility": "readonly"}}}),
            json!({"name": "f", "inputSchema": {"type": "object"}, "annotations": {"recovery": sep},
                   "_meta": {"dev.chronomcp/compensate": {"reversibility": "irreversible"}}}),
            tool(
                "g",
                json!({"recovery": {"strategy": "manual", "compensatingOperation": {"operationId": "x", "parameters": {}}}}),
            ),
            tool("h", json!({"recovery": null})),
            bare("undo"),
        ]),
    )]);
    let r = &c.recovery;
    assert_eq!(r.sep3172_only.count, 2); // a, g
    assert_eq!(r.compensate_only.count, 3); // b, d, e
    assert_eq!(r.both.count, 2); // c, f
    assert_eq!(r.any.count, 7);
    assert_eq!(r.unknown_strategy, 1);
    assert_eq!(r.mutating.count, 8); // all but e
    assert_eq!(r.mutating_declared.count, 5); // a, b, c, d, f
    assert_eq!(r.mutating_by_class.compensable.count, 3);
    assert_eq!(r.mutating_by_class.irreversible.count, 1);
    assert_eq!(r.mutating_by_class.readonly.count, 0);
    assert_eq!(r.mutating_by_class.conflicting.count, 1);
    assert_eq!(r.mutating_declared.share, 5.0 / 8.0);
}

#[test]
fn top_signatures_are_ordered_by_count_then_label() {
    let t = |n: &str, a: Value| tool(n, a);
    let c = census_of(&[(
        "s.json",
        rpc(vec![
            t("a", json!({"openWorldHint": true})),
            t("b", json!({"readOnlyHint": true})),
            t("c", json!({"readOnlyHint": true})),
            bare("d"),
            t("e", json!({"openWorldHint": false})),
        ]),
    )]);
    let top: Vec<(String, u64)> = c
        .signatures
        .top
        .iter()
        .map(|s| (s.signature.label(), s.tools.count))
        .collect();
    assert_eq!(
        top,
        [
            ("T---".into(), 2),
            ("----".into(), 1),
            ("---F".into(), 1),
            ("---T".into(), 1)
        ]
    );
    assert_eq!(c.signatures.top_cover.count, 5);
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("mcp-recovery-census-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn census_paths_walks_json_files_and_matches_the_builder() {
    let dir = TempDir::new("walk");
    std::fs::create_dir_all(dir.0.join("nested")).unwrap();
    let docs = [
        (
            "a.json",
            rpc(vec![tool("x", json!({"readOnlyHint": true})), bare("y")]),
        ),
        (
            "nested/b.json",
            json!({"tools": [tool("x", json!({"destructiveHint": true}))]}),
        ),
        ("nested/c.json", json!({"error": {"message": "nope"}})),
    ];
    for (name, doc) in &docs {
        std::fs::write(dir.0.join(name), serde_json::to_vec_pretty(doc).unwrap()).unwrap();
    }
    std::fs::write(dir.0.join("README.md"), "not json").unwrap();
    std::fs::write(dir.0.join("nested/broken.json"), "{").unwrap();

    for threads in [1, 2, 3] {
        let options = CensusOptions {
            lint: false,
            threads,
            ..CensusOptions::default()
        };
        let c = census_paths(std::slice::from_ref(&dir.0), &options).unwrap();
        assert_eq!(c.files.total, 4, "README.md is not walked");
        assert_eq!(c.servers, 2);
        assert_eq!(c.tools, 3);
        assert_eq!(c.files.not_tools_lists, 2);
        assert!(c.not_tools_lists[0].path.ends_with("broken.json"));
        assert!(c.not_tools_lists[1].path.ends_with("c.json"));

        let mut builder = CensusBuilder::new(&options).unwrap();
        for path in collect_files(std::slice::from_ref(&dir.0)).unwrap() {
            builder.add_path(&path);
        }
        assert_eq!(builder.finish(), c);

        // The observer sees the total first, then each file once, and the same census.
        let mut seen = Vec::new();
        let observed = census_paths_observed(std::slice::from_ref(&dir.0), &options, |d, t| {
            seen.push((d, t));
        })
        .unwrap();
        assert_eq!(seen, [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]);
        assert_eq!(observed, c);
    }

    // A file given by name is read whatever its extension.
    let options = CensusOptions {
        lint: false,
        ..CensusOptions::default()
    };
    let c = census_paths(&[dir.0.join("README.md")], &options).unwrap();
    assert_eq!(c.files.not_tools_lists, 1);
}

/// More files than the workers hand on at once, and a last batch that is not full: every file
/// is counted once, whatever the number of workers, and the observer sees each count once.
#[test]
fn files_handed_on_in_batches_are_each_counted_once() {
    let dir = TempDir::new("batches");
    let files = 3 * super::paths::BATCH + 5;
    for i in 0..files {
        let hint = json!({"readOnlyHint": i % 3 == 0});
        let doc = rpc(vec![tool(&format!("t{i}"), hint), bare("u")]);
        std::fs::write(dir.0.join(format!("s{i:03}.json")), doc.to_string()).unwrap();
    }
    let mut censuses = Vec::new();
    for threads in [1, 2, 3] {
        let options = CensusOptions {
            threads,
            ..CensusOptions::default()
        };
        let mut seen = Vec::new();
        let c = census_paths_observed(std::slice::from_ref(&dir.0), &options, |done, total| {
            seen.push((done, total));
        })
        .unwrap();
        assert_eq!(c.servers, files as u64);
        assert_eq!(c.tools, 2 * files as u64);
        assert_eq!(seen, (0..=files).map(|d| (d, files)).collect::<Vec<_>>());
        censuses.push(c);
    }
    assert!(censuses.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn oversized_files_are_listed_not_read() {
    let dir = TempDir::new("large");
    std::fs::write(
        dir.0.join("big.json"),
        serde_json::to_vec(&rpc(vec![bare("a")])).unwrap(),
    )
    .unwrap();
    let options = CensusOptions {
        lint: false,
        read: mcp_recovery_base::read::ReadPolicy {
            max_bytes: 10,
            follow_links: false,
        },
        ..CensusOptions::default()
    };
    let c = census_paths(std::slice::from_ref(&dir.0), &options).unwrap();
    assert_eq!(c.servers, 0);
    assert!(matches!(
        c.not_tools_lists[0].reason,
        NotToolsReason::TooLarge { .. }
    ));
}

#[test]
fn a_missing_input_path_is_an_error() {
    let missing = std::env::temp_dir().join("mcp-recovery-census-does-not-exist");
    let err = census_paths(std::slice::from_ref(&missing), &CensusOptions::default()).unwrap_err();
    assert!(matches!(err, CensusError::Input { .. }));
    // Kept, the census lists it as not read, beside the error.
    let (files, missing_paths) = collect_files_listing_missing(std::slice::from_ref(&missing));
    assert_eq!(files, [missing]);
    assert!(matches!(missing_paths[..], [CensusError::Input { .. }]));
    let c = census_files_observed(&files, &CensusOptions::default(), |_, _| {}).unwrap();
    assert_eq!(c.files.total, 1);
    assert!(matches!(
        c.not_tools_lists[0].reason,
        NotToolsReason::Unreadable { .. }
    ));
}

#[test]
fn lint_can_be_turned_off() {
    let c = census_of(&[("s.json", rpc(vec![bare("a")]))]);
    assert_eq!(c.lint, None);
    let mut b = CensusBuilder::new(&CensusOptions::default()).unwrap();
    b.add_bytes(
        "s.json",
        br#"[{"name":"a","inputSchema":{"type":"object"}}]"#,
    );
    let linted = b.finish();
    assert_eq!(linted.lint.as_ref().map(|l| l.files), Some(1));
}

fn sample() -> Census {
    let full = |ro: bool, d: bool| json!({"readOnlyHint": ro, "destructiveHint": d, "idempotentHint": true, "openWorldHint": true});
    census_of(&[
        (
            "files.json",
            rpc(vec![
                tool("read", full(true, false)),
                tool("list", full(true, false)),
                tool("delete", full(false, true)),
            ]),
        ),
        ("quiet.json", json!({"tools": [bare("ping"), bare("echo")]})),
        ("notes.json", json!({"title": "a | b"})),
    ])
}

#[test]
fn table_rendering() {
    insta::assert_snapshot!(sample().render_table());
}

#[test]
fn markdown_rendering() {
    insta::assert_snapshot!(sample().render_markdown());
}

#[test]
fn svg_rendering() {
    let svg = sample().render_svg();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    insta::assert_snapshot!(svg);
}

#[test]
fn json_rendering() {
    insta::assert_json_snapshot!(sample());
}

/// A large file is counted and linted a part of its tools at a time: the same census and the
/// same findings as the whole document gives, on every fixture and on lists longer than a part.
#[test]
fn reading_in_parts_counts_as_the_whole_read() {
    use crate::examine::{examine_document, examine_in_parts};
    use mcp_recovery_validator::{LintOptions, Linter};
    let linter = Linter::new(LintOptions::default()).unwrap();
    let fixtures = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures"));
    let mut sources: Vec<Vec<u8>> = mcp_recovery_base::walk::json_documents(&fixtures)
        .documents
        .iter()
        .map(|path| std::fs::read(path).unwrap())
        .collect();
    let many: Vec<Value> = (0..1500)
        .map(|i| match i % 4 {
            0 => tool(&format!("t{i}"), json!({"readOnlyHint": true})),
            1 => json!({"name": format!("t{i}"), "inputSchema": {"type": "object"},
                "_meta": {"dev.chronomcp/compensate": {"reversibility": "compensable",
                    "compensation": {"tool": format!("t{}", (i + 700) % 1500), "args": {}}}}}),
            2 => bare(&format!("t{}", i / 8)),
            _ => json!(i),
        })
        .collect();
    sources.push(serde_json::to_vec(&rpc(many)).unwrap());
    let mut read = 0;
    for source in sources {
        let Some((counted, lint)) = examine_in_parts(&source, Some(&linter)) else {
            continue;
        };
        let document = mcp_recovery_model::json::from_slice(&source).unwrap();
        assert_eq!(Ok(counted.clone()), examine_document(&document));
        let whole = crate::examine::lint_counts(&linter.lint_value_unordered(&document));
        assert_eq!(lint, Some(whole));
        assert_eq!(examine_in_parts(&source, None).unwrap().0, counted);
        read += 1;
    }
    assert!(read > 50, "{read}");
}
