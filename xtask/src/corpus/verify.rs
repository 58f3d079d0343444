//! Census runs checked against what they must give.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::expected::actual_numbers;

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
