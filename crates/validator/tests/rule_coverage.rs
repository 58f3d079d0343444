//! Every rule directory of `fixtures/invalid/` is covered: each of its documents, linted as a
//! user would lint it (the default rules, or an advisory rule selected alone), reports its code.

// Test helpers fail loudly by design.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};

use mcp_recovery_model::{Overlay, OverlayFormat};
use mcp_recovery_validator::{DefaultLevel, LintOptions, Linter, Report, find_rule};

/// The fixture directories `fixtures/invalid/<CODE>/`, sorted.
fn invalid_fixture_dirs() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid");
    let mut dirs: Vec<(String, PathBuf)> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    dirs.sort();
    dirs
}

fn has(report: &Report, code: &str) -> bool {
    report.diagnostics.iter().any(|d| d.code == code)
}

#[test]
fn every_invalid_fixture_reports_its_code() {
    let dirs = invalid_fixture_dirs();
    assert!(!dirs.is_empty(), "fixtures/invalid/<CODE>/ directories");
    for (code_dir, dir) in dirs {
        let rule = find_rule(&code_dir).unwrap_or_else(|| panic!("{code_dir} is no rule"));
        let select = if rule.default == DefaultLevel::Off {
            vec![rule.code.to_owned()]
        } else {
            vec![]
        };
        let linter = Linter::new(LintOptions {
            select,
            ..LintOptions::default()
        })
        .unwrap();
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        // A document with an overlay beside it (`NAME.overlay.toml`) is linted with it.
        let overlaid: Vec<(PathBuf, PathBuf)> = entries
            .iter()
            .filter_map(|overlay| {
                let name = overlay.to_string_lossy();
                let document = name.strip_suffix(".overlay.toml")?.to_owned() + ".json";
                Some((PathBuf::from(document), overlay.clone()))
            })
            .collect();
        for (document, overlay) in &overlaid {
            let text = std::fs::read_to_string(overlay).unwrap();
            let format = OverlayFormat::from_file_name(&overlay.to_string_lossy());
            let parsed = Overlay::parse(&text, format)
                .unwrap_or_else(|e| panic!("{}: {e}", overlay.display()));
            let source =
                std::fs::read(document).unwrap_or_else(|e| panic!("{}: {e}", document.display()));
            let both = linter.lint_source_with_overlay(&source, &parsed, &text);
            assert!(
                has(&both.document, rule.code) || has(&both.overlay, rule.code),
                "{} with {} reports {code_dir}: {:?} {:?}",
                document.display(),
                overlay.display(),
                both.document.diagnostics,
                both.overlay.diagnostics
            );
        }
        for path in entries.iter().filter(|p| {
            p.extension().is_some_and(|e| e == "json") && !overlaid.iter().any(|(d, _)| d == *p)
        }) {
            let report = linter.lint_source(&std::fs::read(path).unwrap());
            assert!(
                has(&report, rule.code),
                "every file under {code_dir} reports {code_dir}: {} {:?}",
                path.display(),
                report.diagnostics
            );
        }
    }
}
