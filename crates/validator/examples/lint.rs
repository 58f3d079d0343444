//! Lints the files named on the command line and prints each diagnostic on one line.

use mcp_recovery_validator::{LintOptions, Linter};

fn main() -> std::process::ExitCode {
    let Ok(linter) = Linter::new(LintOptions::default()) else {
        return std::process::ExitCode::FAILURE;
    };
    let mut errors = 0;
    for path in std::env::args().skip(1) {
        let source = match std::fs::read(&path) {
            Ok(source) => source,
            Err(error) => {
                eprintln!("{path}: {error}");
                errors += 1;
                continue;
            }
        };
        let report = linter.lint_source(&source);
        println!(
            "{path}: {} tools, {} diagnostics",
            report.tools,
            report.diagnostics.len()
        );
        for d in &report.diagnostics {
            let at = d
                .span
                .map_or_else(String::new, |s| format!("{}:{}", s.line, s.column));
            println!(
                "  {} {} {} {at} {}",
                d.code, d.severity, d.pointer, d.message
            );
            if d.severity == mcp_recovery_validator::Severity::Error {
                errors += 1;
            }
        }
    }
    if errors == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
