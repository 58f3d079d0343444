use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::json;

use super::tables::signature_table;
use super::{CorpusConfig, generate, verify};

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn small() -> CorpusConfig {
    CorpusConfig {
        servers: 400,
        seed: 1,
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
    let (a, b, c) = (temp_dir(), temp_dir(), temp_dir());
    let config = CorpusConfig {
        servers: 60,
        ..small()
    };
    generate(a.path(), &config).unwrap();
    generate(b.path(), &config).unwrap();
    generate(c.path(), &CorpusConfig { seed: 8, ..config }).unwrap();
    let (fa, fb, fc) = (files_of(a.path()), files_of(b.path()), files_of(c.path()));
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
    let dir = temp_dir();
    let generated = generate(dir.path(), &small()).unwrap();
    let m = &generated.manifest;
    let planted = m["planted_errors"].as_object().unwrap();
    assert!(
        planted.values().all(|v| v.as_u64() > Some(0)),
        "{planted:?}"
    );
    assert!(m["expected"]["recovery_both"].as_u64() > Some(0));
    assert!(m["expected"]["mutating_irreversible"].as_u64() > Some(0));
    let census = verify(dir.path(), m).unwrap();
    assert_eq!(census.servers, 400);
    // Single-tool servers move the census's median over all emitting servers away from the
    // multi-tool median the manifest records, so the comparison tells the two apart.
    let spread = &census.servers_spread;
    assert_ne!(
        spread.median_dominant_share,
        spread.median_dominant_share_multi_tool
    );

    // A manifest that says one more defect was planted than lint finds is caught.
    let mut wrong = m.clone();
    wrong["planted_errors"]["R106"] = json!(planted["R106"].as_u64().unwrap() + 1);
    let err = verify(dir.path(), &wrong).unwrap_err();
    assert!(err.contains("R106"), "{err}");
    let mut wrong = m.clone();
    wrong["expected"]["hints_all_four"] = json!(0);
    assert!(
        verify(dir.path(), &wrong)
            .unwrap_err()
            .contains("hints_all_four")
    );
}
