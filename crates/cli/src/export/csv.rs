//! Sessions as CSV for a spreadsheet: one row per call and per compensation, RFC 4180 quoting,
//! and no cell a spreadsheet would read as a formula.

use std::io::{self, Write};

use super::model::{OpKind, Session};

/// The header row.
pub const COLUMNS: [&str; 11] = [
    "session",
    "seq",
    "time",
    "kind",
    "tool",
    "class",
    "decision",
    "outcome",
    "duration_ms",
    "request",
    "hash",
];

/// Writes the header and one row per operation, in journal order within each session.
pub fn write(sessions: &[Session], out: &mut impl Write) -> io::Result<u64> {
    row(out, COLUMNS.iter().map(|c| (*c).to_owned()))?;
    let mut rows = 0;
    for session in sessions {
        for op in &session.ops {
            let kind = match op.kind {
                OpKind::Call => "call",
                OpKind::Compensation => "compensation",
            };
            let decision: Vec<String> = op.approvals.iter().map(|a| a.label()).collect();
            row(
                out,
                [
                    session.id.clone(),
                    op.start.seq.to_string(),
                    op.start.time_text.clone(),
                    kind.to_owned(),
                    op.tool.clone(),
                    op.class.clone().unwrap_or_default(),
                    decision.join("; "),
                    op.outcome.label(),
                    op.duration_ms().map(|d| d.to_string()).unwrap_or_default(),
                    op.request.clone().unwrap_or_default(),
                    op.start.hash.clone(),
                ]
                .into_iter(),
            )?;
            rows += 1;
        }
    }
    Ok(rows)
}

fn row(out: &mut impl Write, cells: impl Iterator<Item = String>) -> io::Result<()> {
    let cells: Vec<String> = cells.map(|c| cell(&c)).collect();
    out.write_all(cells.join(",").as_bytes())?;
    out.write_all(b"\r\n")
}

/// One cell: a text a spreadsheet would take for a formula (starting with `=`, `+`, `-`, `@`,
/// tab or CR) gets a leading `'`; a cell holding a comma, quote or line break is quoted, its
/// quotes doubled (RFC 4180).
pub fn cell(text: &str) -> String {
    let guarded = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if guarded.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn cells_are_quoted_and_never_formulas() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("=1+1"), "'=1+1");
        assert_eq!(cell("-2"), "'-2");
        assert_eq!(cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(cell("\rx"), "\"'\rx\"");
        assert_eq!(cell("+1,\"2\""), "\"'+1,\"\"2\"\"\"");
    }
}
